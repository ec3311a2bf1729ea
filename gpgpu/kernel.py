"""Kernels: one GLSL fragment shader per file in ``glsl/``, launched by rasterizing a primitive.

Paper 000, section 2.2: "a kernel is initiated by drawing a shape, usually a triangle or a
quadrilateral ... The rasterizer is capable of interpolating texture coordinates linearly for
each fragment from the coordinates assigned at each vertex of the shape."

``Kernel("square_root", texels=2)`` names ``glsl/square_root.frag`` and declares how many
texels one fragment reads plus writes (the bytes/frag column of Table 1 of paper 000 divided
by 4). The program is compiled once per context, with ``glsl/common.glsl`` prepended, and
``draw(target, primitive, inputs, uniforms)`` runs one pass:

* binds the target stream's framebuffer (viewport = the whole stream, so vertex positions
  are texel units),
* binds each input stream to a texture unit and its sampler uniform,
* writes the primitive's vertices into the one dynamic vertex buffer and draws them.

The kernels are read from ``GLSL_DIR``: ``$GPGPU_GLSL_DIR`` when set, else the installed package's
``gpgpu/glsl`` (the wheel carries the repository's ``glsl/`` there as package data), else the
checkout's ``glsl/`` (an editable install, or the repository root as the current directory).
"""
from __future__ import annotations

import os
import threading
import weakref
from pathlib import Path
from typing import NamedTuple

import moderngl

from . import counters
from .context import get_context, on_release
from .gl import copy_tex_sub_image_2d
from .stream import Stream

__all__ = ["Kernel", "GLSL_DIR", "KernelCompileError", "RecordedPass", "Compiled", "ContextState", "context_state"]

_GLSL_ENV = "GPGPU_GLSL_DIR"


def _glsl_dir() -> Path:
    """The folder of the GLSL kernels: ``$GPGPU_GLSL_DIR`` when set; else ``gpgpu/glsl`` inside
    the installed package (a wheel carries the repository's ``glsl/`` there); else ``glsl/``
    beside the ``gpgpu`` folder (a checkout: an editable install, or the repository root as the
    current directory). The repository keeps the kernels only in its top-level ``glsl/``."""
    env = os.environ.get(_GLSL_ENV)
    if env:
        return Path(env).expanduser()
    here = Path(__file__).resolve().parent
    installed, checkout = here / "glsl", here.parent / "glsl"
    for folder in (installed, checkout):
        if (folder / "pass.vert").is_file():
            return folder
    return installed  # missing: _read_glsl names both places


#: Where the kernels are read from (see ``_glsl_dir``), fixed when ``gpgpu`` is imported.
GLSL_DIR = _glsl_dir()


def _read_glsl(path: Path) -> str:
    """The text of a file in ``GLSL_DIR``; a missing folder is a FileNotFoundError that says where
    the kernels were looked for and how to fix it (one missing file keeps the plain error)."""
    try:
        return path.read_text()
    except FileNotFoundError:
        if (GLSL_DIR / "pass.vert").is_file():
            raise
        here = Path(__file__).resolve().parent
        if os.environ.get(_GLSL_ENV):
            where = (f"${_GLSL_ENV} = {os.environ[_GLSL_ENV]} is not the folder of the GLSL kernels "
                     f"(no pass.vert there): point it at the repository's glsl/ folder, or unset it")
        else:
            where = (f"the GLSL kernels are in neither {here / 'glsl'} (an installed wheel) nor "
                     f"{here.parent / 'glsl'} (a checkout): reinstall gpgpu (pip install .), or set "
                     f"{_GLSL_ENV} to the repository's glsl/ folder")
        raise FileNotFoundError(f"{path}: {where}") from None

_HEADER = "#version 330\n"


#: a vertex program that declares this input takes pass.vert's vertices (V, T0, T1) and draws
#: rasterized primitives from vertex buffers; one without places its vertices itself
_PASS_INPUTS = "in vec2 V;"


class KernelCompileError(RuntimeError):
    """A kernel failed to compile or link; the message names the file and line.

    A kernel is compiled once per context, at its first draw (or ``program()``), with
    ``glsl/common.glsl`` and its defines before the file; the message carries the driver's log,
    whose line numbers count from the first line of the kernel's file (a ``#line 1`` precedes
    it).

    See Also
    --------
    Kernel

    Examples
    --------
    >>> import gpgpu
    >>> class Broken(gpgpu.Kernel):             # the text of glsl/copy.frag replaced
    ...     def text(self):
    ...         return "void main() { undeclared = 1.0; }"
    >>> try:
    ...     Broken("copy", defines={"BROKEN": 1}).program()
    ... except gpgpu.KernelCompileError as e:
    ...     print(str(e).startswith("kernel 'copy'"), "failed to compile" in str(e))
    True True
    """


#: library name -> function(ctx) giving text put before ``glsl/<library>.glsl`` in that context:
#: what a library learns of the renderer once (``gpgpu.float_float`` defines FF_FMA where the
#: renderer's fma() rounds once)
PRELUDES: dict = {}


class ContextState:
    """Per-context objects shared by all kernels: the compiled programs, the dynamic vertex buffer,
    scratch streams, the plans' vertex buffers and the recording (:func:`context_state`)."""

    def __init__(self, ctx: moderngl.Context):
        self.ctx = ctx
        self.capacity = 256  # vertices
        self.vbo = ctx.buffer(reserve=self.capacity * 32, dynamic=True)
        self.programs = {}  # kernel name -> (program, vao, uniform cache)
        self.scratch = {}  # shape -> Stream, for copy-to-texture
        self.plans = {}    # key -> passes.CompiledPlan (vertex buffers of whole plans), LRU order
        self.recording = None  # a list while passes.recording() notes the passes drawn
        self.shared_writes = weakref.WeakValueDictionary()   # passes.RecordedPlan: equal passes' writes
        self.blending = False  # additive_blending() is on
        self.vertex_source = _read_glsl(GLSL_DIR / "pass.vert")
        self.common = _read_glsl(GLSL_DIR / "common.glsl")
        self.libraries = {}  # library name -> its text in this context (PRELUDES' text first)
        ctx.disable(moderngl.DEPTH_TEST | moderngl.BLEND | moderngl.CULL_FACE)

    def library(self, name: str) -> str:
        """The text of ``glsl/<name>.glsl`` in this context: its :data:`PRELUDES` text (asked once
        a context), then the file."""
        text = self.libraries.get(name)
        if text is None:
            prelude = PRELUDES.get(name)
            text = self.libraries[name] = (prelude(self.ctx) if prelude else "") + _read_glsl(GLSL_DIR / f"{name}.glsl")
        return text

    def grow(self, vertices: int) -> None:
        while self.capacity < vertices:
            self.capacity *= 2
        self.vbo.orphan(self.capacity * 32)
        # every vertex array refers to the buffer object, which keeps its name: nothing to rebuild

    def release(self) -> None:
        for prog, vao, _ in self.programs.values():
            vao.release()
            prog.release()
        for s in self.scratch.values():
            s.release()
        for plan in self.plans.values():
            plan.release_buffer()
        self.vbo.release()
        self.programs.clear()
        self.scratch.clear()
        self.plans.clear()


_tls = threading.local()  # this thread's ContextState, the fast path of every draw


def context_state() -> ContextState:
    """The kernel state of this thread's context (kept in its ``extra`` record): what plans
    (:mod:`gpgpu.passes`) and the recorder share with the kernels."""
    st = getattr(_tls, "state", None)
    if st is not None:
        return st
    ctx = get_context()
    inf = ctx.extra
    st = inf.kernel_state
    if st is None:
        st = inf.kernel_state = ContextState(ctx)
    _tls.state = st
    return st


def _forget_context(ctx) -> None:
    """Called in the owning thread when its context is released."""
    inf = ctx.extra
    st, inf.kernel_state = inf.kernel_state, None
    if getattr(_tls, "state", None) is st:
        _tls.state = None
    if st is not None:
        st.release()


on_release(_forget_context)


class RecordedPass(NamedTuple):
    """One pass as :func:`gpgpu.passes.recording` notes it (drawn again by
    :class:`gpgpu.passes.RecordedPlan`)."""
    kernel: "Kernel"
    target: Stream
    primitive: object
    inputs: dict
    uniforms: dict
    texels: int | None
    blending: bool


class UniformCache(dict):
    """A program's uniform values as last written (name -> value; a write equal to it is
    skipped). ``owner``: the recorded plan's pass (:class:`gpgpu.passes.RecordedPlan`) whose
    whole set of values the program holds, so that the plan skips checking them one by one
    (host time a pass); any other write sets it back to None."""

    __slots__ = ("owner",)

    def __init__(self):
        super().__init__()
        self.owner = None

    def __setitem__(self, key, value):
        dict.__setitem__(self, key, value)
        self.owner = None


class Compiled(NamedTuple):
    """A kernel's program in one context, the vertex array it draws from the context's dynamic
    vertex buffer (or with no buffer), and the uniform values last written (skipped when equal)."""
    program: moderngl.Program
    vertex_array: object
    cache: UniformCache


class Kernel:
    """A fragment program from ``glsl/<name>.frag``, run by rasterizing a primitive.

    Paper 000, section 2.2: "a kernel is initiated by drawing a shape, usually a triangle or a
    quadrilateral ... The rasterizer is capable of interpolating texture coordinates linearly
    for each fragment from the coordinates assigned at each vertex of the shape." The program
    is compiled once per context, ``glsl/common.glsl`` prepended; ``draw(target, primitive,
    inputs, uniforms)`` runs one pass: it renders ``primitive`` (a ``gpgpu.geometry`` shape)
    into the stream ``target``, with ``inputs`` (sampler name -> Stream) bound to texture units.

    Parameters
    ----------
    name : str
        File name without ``.frag``, the paper's name for the kernel.
    texels : int, optional
        Texels each fragment reads plus writes (Table 1 of 000's bytes/frag / 4); default 2.
    doc : str, optional
        One line: which paper, kernel or figure it implements.
    label : str, optional
        The name the counters and the trace use; default ``name`` and its defines.
    defines : dict, optional
        Compile-time constants, ``#define NAME value`` before the file (and the vertex program).
    vertex : str, optional
        The vertex program ``glsl/<vertex>.vert``; default ``pass``.
    extensions : tuple of str, optional
        GLSL extensions the file needs, ``#extension NAME : require`` after ``#version``.
    library : str, optional
        A file of functions, ``glsl/<library>.glsl``, put after ``common.glsl``.

    Raises
    ------
    KernelCompileError
        At the first draw in a context, if the program does not compile or link.
    FileNotFoundError
        At the first draw, if ``glsl/<name>.frag`` is missing.

    See Also
    --------
    Stream : the streams a kernel reads and renders.
    gpgpu.geometry.Rect : the rectangle that launches a pass over a region.

    Notes
    -----
    ``label``: one file can serve two roles that a table counts apart, e.g. "Copy A to S" and
    the copies of each step. ``defines``: one template file makes a family of programs (each
    distinct ``defines`` is its own program, compiled once per context), as paper 003
    generates one fragment program per non-zero count. ``vertex``: ``pass`` (the default, the
    project's vertex program for rasterized primitives); a program that takes pass.vert's
    inputs (it declares ``in vec2 V;``) and draws the same primitives from vertex buffers,
    doing more per vertex (``cholesky_block_pivots``: the pass's pivots, handed to the
    fragments flat); or a program that places its vertices itself from ``gl_VertexID`` and
    textures (drawn with ``draw_points`` or ``draw_lines``, no vertex buffer).
    ``extensions``: beyond OpenGL 3.3's core, the float-float kernels need
    ``GL_ARB_gpu_shader5`` for ``fma`` and ``precise``. ``library``: e.g. ``float_float``.

    Examples
    --------
    The copy kernel of paper 000 (Algorithm 2) with T0 = (y, x) at the corners: the
    rasterizer's interpolation makes the copy a transpose.

    >>> import numpy as np
    >>> import gpgpu
    >>> from gpgpu.geometry import Rect
    >>> copy = gpgpu.Kernel("copy", doc="the copy kernel, 000 Algorithm 2")
    >>> A = np.arange(12.0).reshape(3, 4)
    >>> with gpgpu.Stream.from_array(A) as S, gpgpu.Stream(4, 3) as T:
    ...     copy.draw(T, Rect.covering(0, 0, 3, 4, T0=lambda x, y: (y, x)), {"A": S})
    ...     print(np.array_equal(T.to_array(), A.T))
    True
    """

    __slots__ = ("name", "texels", "doc", "path", "label", "defines", "vertex", "extensions", "library", "key")

    def __init__(self, name: str, texels: int = 2, doc: str = "", label: str | None = None,
                 defines: dict | None = None, vertex: str = "pass", extensions: tuple = (),
                 library: str | None = None):
        self.name = name
        self.texels = texels
        self.doc = doc
        self.defines = dict(defines or {})
        suffix = "".join(f"_{k}{v}" for k, v in sorted(self.defines.items()))
        self.label = label or name + suffix
        self.path = GLSL_DIR / f"{name}.frag"
        self.vertex = vertex
        self.extensions = tuple(extensions)
        self.library = library
        #: what identifies the compiled program (name, defines, vertex program, extensions, library)
        self.key = (name, tuple(sorted(self.defines.items())), vertex, self.extensions, library)

    def __repr__(self) -> str:
        extra = f", defines={self.defines}" if self.defines else ""
        return f"Kernel({self.name!r}, texels={self.texels}{extra})"

    # ------------------------------------------------------------------ compile
    def text(self) -> str:
        """The kernel's own text (its file; the recorder's instrumented copy overrides it)."""
        return _read_glsl(self.path)

    @property
    def rasterized(self) -> bool:
        """Whether the kernel draws rasterized primitives from vertex buffers (pass.vert's
        vertices, or a vertex program that takes the same inputs), not vertices it places itself."""
        return self.vertex == "pass" or _PASS_INPUTS in _read_glsl(GLSL_DIR / f"{self.vertex}.vert")

    def vertex_text(self, st: ContextState | None = None) -> str:
        """The text of a vertex program other than ``pass``, with this kernel's extensions,
        ``defines`` and ``library`` (as context ``st`` has it) after its ``#version`` line (a
        float-float vertex program calls the library's functions as its fragment program does)."""
        text = _read_glsl(GLSL_DIR / f"{self.vertex}.vert")
        if not (self.defines or self.library):
            return text
        first, _, rest = text.partition("\n")
        extensions = "".join(f"#extension {e} : require\n" for e in self.extensions) if self.library else ""
        defines = "".join(f"#define {k} {v}\n" for k, v in sorted(self.defines.items()))
        library = "" if self.library is None else (st or context_state()).library(self.library) + "\n"
        return f"{first}\n{extensions}{defines}{library}#line 2\n{rest}"

    def source(self, st: ContextState | None = None) -> str:
        st = context_state() if st is None else st
        extensions = "".join(f"#extension {e} : require\n" for e in self.extensions)
        defines = "".join(f"#define {k} {v}\n" for k, v in sorted(self.defines.items()))
        library = "" if self.library is None else st.library(self.library)
        return _HEADER + extensions + defines + st.common + library + "\n#line 1\n" + self.text()

    def compiled(self, st: ContextState | None = None) -> Compiled:
        """The program, vertex array and uniform cache of this kernel in this thread's context
        (``st``, :func:`context_state`), compiled on first use."""
        st = context_state() if st is None else st
        entry = st.programs.get(self.key)
        if entry is None:
            if not self.path.exists():
                raise FileNotFoundError(f"kernel {self.name!r}: no file {self.path}")
            vertex = st.vertex_source if self.vertex == "pass" else self.vertex_text(st)
            try:
                prog = st.ctx.program(vertex_shader=vertex, fragment_shader=self.source(st))
            except Exception as exc:  # moderngl.Error
                raise KernelCompileError(
                    f"kernel {self.name!r} ({self.path}, vertex program {self.vertex}.vert) failed to "
                    f"compile; driver line numbers count from the first line of the file:\n{exc}"
                ) from exc
            if self.rasterized:
                vao = st.ctx.vertex_array(prog, [(st.vbo, "2f 3f 3f", "V", "in_T0", "in_T1")],
                                          skip_errors=True)
            else:
                vao = st.ctx.vertex_array(prog, [])
            entry = st.programs[self.key] = Compiled(prog, vao, UniformCache())
        return entry

    def program(self) -> moderngl.Program:
        return self.compiled().program

    def sampler(self, program, name: str):
        """``program[name]`` for a sampler of this kernel, or a KeyError that names both."""
        try:
            return program[name]
        except KeyError:
            raise KeyError(f"kernel {self.name!r} has no sampler named {name!r}") from None

    def uniform(self, program, name: str):
        """``program[name]`` for a uniform of this kernel, or a KeyError that names both."""
        try:
            return program[name]
        except KeyError:
            raise KeyError(f"kernel {self.name!r} has no uniform named {name!r} "
                           "(or the compiler removed it as unused)") from None

    # ------------------------------------------------------------------ launch
    def draw(self, target: Stream, primitive, inputs: dict | None = None,
             uniforms: dict | None = None, texels: int | None = None,
             transfer: str = "rtt") -> None:
        """Run one pass: rasterize ``primitive`` into ``target`` with this kernel.

        ``inputs`` maps sampler names to streams, ``uniforms`` maps uniform names to values
        constant over the pass. Never pass the target as an input (paper 000, section 3.1).
        ``texels`` overrides the declared texels per fragment for this pass (the inner
        product subtraction reads more at each step). ``transfer="ctt"`` renders into a
        separate framebuffer (BrookGPU's p-buffer) and then copies the rendered region of it
        into ``target`` with ``glCopyTexSubImage2D`` (copy-to-texture, section 6.1.1 of 000)
        instead of rendering into the texture directly.
        """
        st = context_state()
        if transfer == "ctt":
            if st.recording is not None:
                st.recording.append(None)     # a copy to texture: not replayable (passes.recording)
            scratch = _scratch(st, target)
            self.draw(scratch, primitive, inputs, uniforms, texels)
            copy_to_texture(scratch, target, primitive)
            return
        if transfer != "rtt":
            raise ValueError(f"transfer must be 'rtt' (render to texture) or 'ctt' (copy to texture), got {transfer!r}")
        tally, t0 = self._begin_pass(st, target, primitive, inputs, uniforms, texels)
        prog, vao, cache = self.bind(target, inputs, uniforms, st=st)
        data = primitive.data()
        n = len(data) // 32
        if n > st.capacity:
            st.grow(n)
        st.vbo.write(data)
        self._render(target, primitive, vao, n, 0, inputs, uniforms, texels)
        _end_pass(tally, t0)

    def _begin_pass(self, st, target, primitive, inputs, uniforms, texels, note: bool = True):
        """A pass's bookkeeping before it draws, the same for every draw path: the note of the
        recording (:func:`gpgpu.passes.recording`; ``note=False`` for a plan's own passes) and
        the tally's clock. Answers (tally, start) for :func:`_end_pass`."""
        if note and st.recording is not None and isinstance(target, Stream):   # not the recorder's scratch
            st.recording.append(RecordedPass(self, target, primitive, dict(inputs or {}), dict(uniforms or {}),
                                             texels, st.blending))
        tally = counters.current_tally()
        return tally, (counters.clock() if tally is not None else 0.0)

    def _render(self, target, primitive, vao, count, first, inputs, uniforms, texels) -> None:
        """Draw, inside the counters' queries when a counter is active."""
        mode = primitive.mode
        counter = counters.current()
        if counter is None:
            vao.render(mode, vertices=count, first=first)
        else:
            counter.measure(self, primitive, target, texels, lambda: vao.render(mode, vertices=count, first=first),
                            inputs, uniforms)

    def draw_range(self, target: Stream, vao, primitive, first: int, inputs: dict | None = None,
                   uniforms: dict | None = None, texels: int | None = None) -> None:
        """Run one pass whose vertices are already in a buffer: ``primitive``'s vertices at
        ``first`` .. of the buffer behind ``vao`` (a vertex array of this kernel's program, made
        by :class:`gpgpu.passes.CompiledPlan`). The same pass as ``draw(target, primitive, ...)``
        without building and writing the vertices (beyond the papers: host cost)."""
        st = context_state()
        tally, t0 = self._begin_pass(st, target, primitive, inputs, uniforms, texels, note=False)
        self.bind(target, inputs, uniforms, st=st)
        self._render(target, primitive, vao, len(primitive), first, inputs, uniforms, texels)
        _end_pass(tally, t0)

    def vertex_array(self, buffer):
        """A vertex array of this kernel's program over ``buffer`` (vertices as ``draw`` writes them)."""
        st = context_state()
        prog = self.compiled(st)[0]
        return st.ctx.vertex_array(prog, [(buffer, "2f 3f 3f", "V", "in_T0", "in_T1")], skip_errors=True)

    def draw_points(self, target: Stream, count: int, inputs: dict | None = None,
                    uniforms: dict | None = None, texels: int | None = None) -> None:
        """Run one pass of ``count`` points placed by this kernel's own vertex program (no vertex
        buffer: each point computes its position from ``gl_VertexID``). With additive blending
        on (``additive_blending``) the points scatter-add into ``target``."""
        self.draw_generated(target, _Points(count), inputs, uniforms, texels)

    def draw_lines(self, target: Stream, count: int, inputs: dict | None = None,
                   uniforms: dict | None = None, texels: int | None = None) -> None:
        """Run one pass of ``count`` // 2 lines whose ``count`` vertices this kernel's own vertex
        program places from ``gl_VertexID`` and textures (e.g. a swap whose rows it reads on the
        GPU, ``glsl/swap_lines.vert``)."""
        self.draw_generated(target, _Generated(count), inputs, uniforms, texels)

    def draw_generated(self, target: Stream, primitive, inputs=None, uniforms=None, texels=None) -> None:
        """One pass of ``primitive`` (a :class:`_Points` or :class:`_Generated`: a mode and a
        vertex count) with no vertex buffer, placed by this kernel's own vertex program."""
        if self.vertex == "pass":
            raise ValueError(f"kernel {self.name!r} has no vertex program of its own to place its vertices")
        st = context_state()
        tally, t0 = self._begin_pass(st, target, primitive, inputs, uniforms, texels)
        prog, vao, cache = self.bind(target, inputs, uniforms, st=st)
        self._render(target, primitive, vao, len(primitive), 0, inputs, uniforms, texels)
        _end_pass(tally, t0)

    def bind(self, target: Stream, inputs=None, uniforms=None, bound: dict | None = None, st=None) -> Compiled:
        """Bind the program, the target's framebuffer, the input textures and the uniforms (``st``:
        :func:`context_state`, looked up when not given); answers :meth:`compiled`.

        ``bound`` (a dict kept by the caller over a sequence of passes in which nothing else
        binds framebuffers or textures: a pre-built plan's run) remembers the framebuffer and
        the texture of each unit bound by the previous pass, and skips binding them again."""
        st = context_state() if st is None else st
        compiled = self.compiled(st)
        prog, cache = compiled.program, compiled.cache
        ctx = st.ctx
        if target.ctx is not ctx or target.texture is None:
            target._check_alive()
        if bound is None:
            target.fbo.use()
        elif bound.get("target") is not target:
            target.fbo.use()
            bound["target"] = target
        size = (target.cols, target.rows)
        if cache.get("viewport") != size:
            prog["viewport"].value = size
            cache["viewport"] = size
        if inputs:
            for unit, (name, stream) in enumerate(inputs.items()):
                if stream is target:
                    raise ValueError(f"kernel {self.name!r}: stream {name!r} is both input and target; "
                                     "reading and rendering one texture in a pass is undefined")
                if stream.ctx is not ctx or stream.texture is None:
                    stream._check_alive()
                if bound is None:
                    stream.texture.use(unit)
                elif bound.get(unit) is not stream:
                    stream.texture.use(unit)
                    bound[unit] = stream
                if cache.get(name) != unit:
                    self.sampler(prog, name).value = unit
                    cache[name] = unit
        if uniforms:
            for name, value in uniforms.items():
                if cache.get(name) != value:
                    self.uniform(prog, name).value = value
                    cache[name] = value
        return compiled


def _end_pass(tally, t0: float) -> None:
    """A pass's bookkeeping after it draws: one pass and its host time on the tally."""
    if tally is not None:
        tally.passes += 1
        tally.seconds += counters.clock() - t0


class _Points:
    """What the counters and the trace see of a draw_points pass."""

    mode = moderngl.POINTS
    kind = "points"
    __slots__ = ("count",)

    def __init__(self, count: int):
        self.count = count

    def __len__(self) -> int:
        return self.count


class _Generated(_Points):
    """What the counters and the trace see of a draw_lines pass."""

    mode = moderngl.LINES
    kind = "lines (vertex program)"
    __slots__ = ()


class additive_blending:
    """``with additive_blending():`` every pass adds its fragments into the target (GL_FUNC_ADD,
    GL_ONE, GL_ONE) instead of replacing it: how points scatter-add (FSATY from one copy)."""

    def __enter__(self):
        st = context_state()
        ctx = st.ctx
        ctx.enable(moderngl.BLEND)
        ctx.blend_func = moderngl.ONE, moderngl.ONE
        ctx.blend_equation = moderngl.FUNC_ADD
        st.blending = True
        return self

    def __exit__(self, *exc):
        st = context_state()
        st.ctx.disable(moderngl.BLEND)
        st.blending = False


def _scratch(st: ContextState, target: Stream) -> Stream:
    """The framebuffer that copy-to-texture renders into first (one per shape, kept)."""
    key = (target.rows, target.cols, target.components)
    s = st.scratch.get(key)
    if s is None or s.released:
        s = st.scratch[key] = Stream(target.rows, target.cols, components=target.components)
    return s


def copy_to_texture(pbuffer: Stream, target: Stream, primitive) -> None:
    """The second half of a copy-to-texture pass: the region ``primitive`` rendered into the
    p-buffer is copied into ``target``'s texture by ``glCopyTexSubImage2D`` (one call per
    rectangle of the region: one for a rectangle, one per row for a triangle). The counters
    record it as a ``copy_to_texture`` pass whose fragments are the texels copied."""
    rects = primitive.covered_rects(target.cols, target.rows)
    counter = counters.current()

    def copy():
        return copy_tex_sub_image_2d(pbuffer.fbo, target.texture, rects)

    if counter is None:
        copy()
    else:
        counter.measure_copy("copy_to_texture", primitive, target, copy)
