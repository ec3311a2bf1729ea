"""Recording every pass of an algorithm, for pictures of the pipeline (the pipeline made visible).

Beyond the papers: a teaching tool. Around any block of the unchanged algorithms::

    with gpgpu.record.record() as rec:
        gpgpu.cholesky(A)                 # an 8 x 8 matrix
    for f in rec.frames:
        f.kernel, f.primitive, f.vertices, f.values, f.covered, f.fetches_at(x, y)

the recorder, a :class:`gpgpu.counters.Counter`, sees each pass as the counters do (kernel,
primitive, target, fragments from the occlusion query) and keeps for it a :class:`Frame`:

* the primitive as drawn: mode, and every vertex with its window position V and its texture
  coordinates T0 and T1;
* the target's and the inputs' values after the pass (snapshots, so only for small streams:
  ``max_texels``, 4096 by default, per stream; above it :class:`SnapshotTooLarge`);
* what the GPU's own rasterizer did, from a second pass of the same primitive with an
  *instrumented copy* of the same kernel, drawn into a scratch framebuffer with several
  colour attachments (multiple render targets), the counters suspended: for every fragment
  it shaded, a flag (so ``covered`` is the GPU's coverage, not a Python rule), the T0 and T1
  the rasterizer interpolated to it, and the texels its kernel fetched (the first
  ``MAX_FETCHES``, with their count). The instrumented copy is the kernel's own file with
  each fetch ``texRECT(S, c)`` (also ``texRECT4``, ``texVECTOR`` and ``texelFetch``)
  replaced by one that notes ``floor(c)`` and which sampler it read, then fetches as before;
  nothing else of the kernel changes, and it reads the same inputs (a pass never renders
  into its own inputs, so they are what the real pass read).

For a replay of the run elsewhere (the live page of :mod:`gpgpu.show.html`, which draws the same
passes through WebGL2), each frame also names its textures by a serial number of the recording
(``target_serial``, ``input_serials``: one number per stream, never reused), the kernel's program
(``defines``, ``library``, ``vertex``, ``extensions``), whether additive blending was on, and
``uploads``: the values of every stream of the pass whose contents the host set before it (an
upload, a write, a clear; found by comparing the stream's contents before the pass with what the
recorded passes left in it), so that replaying the uploads and the passes in order gives every
texture the run's contents.

Passes whose vertices a kernel's own vertex program places (the points of FSATY's scatter,
the swap lines of ``lu(..., pivots="gpu")``) and copy-to-texture passes are recorded with
their snapshot but without the instrumented pass (``covered`` is None): their vertex programs
read textures to place the primitive, and a copy shades nothing.
"""
from __future__ import annotations

import re
import sys
import weakref
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import NamedTuple

import moderngl
import numpy as np

from . import counters
from .context import park
from .kernel import Kernel, context_state

__all__ = ["record", "Recorder", "Frame", "SnapshotTooLarge", "MAX_FETCHES", "DEFAULT_MAX_TEXELS"]

DEFAULT_MAX_TEXELS = 4096
MAX_FETCHES = 5   # fetches noted per fragment (8 colour attachments: result, T0/T1, extra, 5 fetches)


class SnapshotTooLarge(ValueError):
    """A recorded pass's target or input is larger than the recorder's snapshot limit."""


class KernelNames(NamedTuple):
    """How a frame names the program that drew its pass: the counters' label, the file
    (``glsl/<name>.frag``, or ``glCopyTexSubImage2D`` for a copy) and the paper reference."""

    label: str
    file: str
    doc: str


@dataclass
class Frame:
    """One recorded pass (see the module docstring).

    ``values`` is the target after the pass, ``inputs`` maps each sampler to its stream's
    values, ``covered`` is a (rows, cols) bool array of the fragments the GPU shaded,
    ``T0``/``T1`` are (rows, cols, 3) arrays of the interpolated coordinates (zero where not
    covered), ``fetch_count`` the fetches each fragment made and ``fetch_texels`` (rows, cols,
    MAX_FETCHES, 2) / ``fetch_sites`` (rows, cols, MAX_FETCHES) the first of them: the texel
    and which fetch call of the kernel (``sites``) made it. ``context`` names the project's
    functions on the call stack when the pass was drawn, outermost first, as
    ``module.qualname`` (``("gpgpu.lu.lu", "gpgpu.lu.lu_factor", "gpgpu.lu.singular_threshold",
    "gpgpu.reduce.reduce_region", ...)``; the recorder's, counters' and kernel's own frames left
    out): what the pass is for, which the kernel alone does not say (an absmax reduction may be
    LU's pivot threshold or a scale)."""

    index: int
    kernel: str          # the label the counters use
    file: str            # glsl/<name>.frag
    doc: str             # the kernel's paper reference
    primitive: str       # the primitive's kind: rect, triangle, texel, line, points, lines (vertex program)
    mode: int
    vertices: tuple      # gpgpu.geometry.Vertex tuples (V, T0, T1)
    target: tuple        # (rows, cols)
    target_id: int       # id() of the target stream while recorded (same id: same texture)
    values: np.ndarray
    inputs: dict         # sampler -> values
    input_ids: dict      # sampler -> id() of the stream
    uniforms: dict
    covered: np.ndarray | None = None
    T0: np.ndarray | None = None
    T1: np.ndarray | None = None
    fetch_count: np.ndarray | None = None
    fetch_texels: np.ndarray | None = None
    fetch_sites: np.ndarray | None = None
    sites: tuple = ()     # the kernel's fetch calls: (sampler, call text), numbered as fetch_sites
    context: tuple = ()   # the gpgpu functions that drew the pass, outermost first ("gpgpu.lu.singular_threshold")
    pass_: counters.Pass | None = field(default=None, repr=False)
    # for a replay (see the module docstring)
    target_serial: int = -1       # the target stream's number in the recording (never reused)
    input_serials: dict = field(default_factory=dict)   # sampler -> the input stream's number
    components: int = 1           # the target's components (1: R32F, 4: RGBA32F)
    uploads: dict = field(default_factory=dict, repr=False)   # serial -> values the host set before the pass
    defines: dict = field(default_factory=dict)   # the kernel's compile-time constants
    library: str | None = None    # glsl/<library>.glsl after common.glsl
    vertex: str = "pass"          # glsl/<vertex>.vert
    extensions: tuple = ()
    blending: bool = False        # additive blending on (gpgpu.kernel.additive_blending)
    count: int = 0                # vertices drawn

    @property
    def fragments(self) -> int:
        """Fragments shaded, from the real pass's occlusion query (GL_SAMPLES_PASSED)."""
        return self.pass_.fragments

    @property
    def shaded_cells(self) -> int:
        return -1 if self.covered is None else int(self.covered.sum())

    def fetches_at(self, x: int, y: int) -> list:
        """The fetches of fragment (x, y) (column x, row y), in the order the kernel made them:
        [(sampler, (tx, ty), call), ...] with the texel (column tx, row ty) and the fetch call as
        the kernel's file writes it; at most MAX_FETCHES; [] where the pass did not shade it."""
        if not self.shades(x, y):
            return []
        out = []
        for i in range(min(int(self.fetch_count[y, x]), MAX_FETCHES)):
            sampler, call = self.sites[int(self.fetch_sites[y, x, i])]
            out.append((sampler, (int(self.fetch_texels[y, x, i, 0]), int(self.fetch_texels[y, x, i, 1])), call))
        return out

    def shades(self, x: int, y: int) -> bool:
        """Whether this pass shaded fragment (x, y) (False off the target or unrecorded)."""
        rows, cols = self.target
        return self.covered is not None and 0 <= x < cols and 0 <= y < rows and bool(self.covered[y, x])

    def chosen_fragment(self):
        """A fragment inside the covered region (the middle covered cell of the middle covered
        row), or None when the pass shaded nothing recordable."""
        if self.covered is None or not self.covered.any():
            return None
        ys, xs = np.nonzero(self.covered)
        rows = np.unique(ys)
        y = int(rows[len(rows) // 2])
        row = np.sort(xs[ys == y])
        return int(row[len(row) // 2]), y


# ---------------------------------------------------------------------------- instrumentation
_SAMPLER = re.compile(r"uniform\s+sampler2D\s+(\w+)\s*;")
_FETCH = re.compile(r"\b(texRECT4|texRECT|texVECTOR|texelFetch)\s*\(\s*(\w+)\s*,")
_OUT = re.compile(r"^\s*out\s+(\w+)\s+(\w+)\s*;", re.M)
_MAIN = re.compile(r"\bvoid\s+main\s*\(\s*\)")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)

_PRELUDE = """
// ---- recorder: the kernel below, with each fetch noted (gpgpu/record.py) ----
vec4 _rec_log[MAX_FETCHES];
int _rec_n = 0;
void _rec_note(vec2 texel, int site) {
    if (_rec_n < MAX_FETCHES) _rec_log[_rec_n] = vec4(texel, float(site), 1.0);
    _rec_n++;
}
float _rec_texRECT(sampler2D A, int id, vec2 c) { _rec_note(floor(c), id); return texRECT(A, c); }
vec4 _rec_texRECT4(sampler2D A, int id, vec2 c) { _rec_note(floor(c), id); return texRECT4(A, c); }
float _rec_texVECTOR(sampler2D X, int id, float i, int width) {
    int j = int(i);
    _rec_note(vec2(float(j % width), float(j / width)), id);
    return texVECTOR(X, i, width);
}
vec4 _rec_texelFetch(sampler2D A, int id, ivec2 c, int lod) { _rec_note(vec2(c), id); return texelFetch(A, c, lod); }
"""

_EPILOGUE = """
layout(location = 1) out vec4 _rec_coords;   // T0.xy, T1.xy as interpolated
layout(location = 2) out vec4 _rec_extra;    // T0.z, T1.z, fetches, 1 = shaded
""" + "".join(f"layout(location = {3 + i}) out vec4 _rec_fetch{i};\n" for i in range(MAX_FETCHES)) + """
void main() {
    for (int i = 0; i < MAX_FETCHES; i++) _rec_log[i] = vec4(0.0);
    _rec_kernel_main();
    _rec_coords = vec4(T0.xy, T1.xy);
    _rec_extra = vec4(T0.z, T1.z, float(_rec_n), 1.0);
""" + "".join(f"    _rec_fetch{i} = _rec_log[{i}];\n" for i in range(MAX_FETCHES)) + "}\n"


def _call_text(source: str, start: int) -> str:
    """The text of the call whose name starts at ``start`` (up to its closing parenthesis)."""
    depth, i = 0, source.index("(", start)
    for j in range(i, len(source)):
        depth += {"(": 1, ")": -1}.get(source[j], 0)
        if depth == 0:
            return " ".join(source[start:j + 1].split())
    raise ValueError(f"unbalanced parentheses after {source[start:start + 40]!r}")


_SLOT_EPILOGUE = """
uniform int _rec_slot;   // which of the 7 vectors of the multiple-render-target copy to write
out vec4 _rec_out;
void main() {
    for (int i = 0; i < MAX_FETCHES; i++) _rec_log[i] = vec4(0.0);
    _rec_kernel_main();
    if (_rec_slot == 0) _rec_out = vec4(T0.xy, T1.xy);
    else if (_rec_slot == 1) _rec_out = vec4(T0.z, T1.z, float(_rec_n), 1.0);
    else _rec_out = _rec_log[_rec_slot - 2];
}
"""


def instrument(kernel_source: str, slots: bool = False) -> tuple:
    """The instrumented copy of a kernel file's text, and its fetch sites: for each fetch call
    in the file, in the order of the text, (sampler name, the call as written).

    ``slots``: instead of 8 colour attachments, one RGBA output ``_rec_out`` that holds the
    vector the uniform ``_rec_slot`` names (0: T0.xy, T1.xy; 1: T0.z, T1.z, fetches, 1 = shaded;
    2 + i: fetch i), the kernel's own output made a plain variable: the same notes in 7 passes
    of one attachment each (for WebGL2, whose framebuffers may have as few as 4)."""
    kernel_source = _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), kernel_source)  # keep line numbers
    samplers = set(_SAMPLER.findall(kernel_source))
    sites = []

    def fetch(m):
        fn, name = m.group(1), m.group(2)
        if name not in samplers:
            raise ValueError(f"the recorder cannot tell which sampler {name!r} is (not a uniform sampler2D)")
        sites.append((name, _call_text(kernel_source, m.start())))
        return f"_rec_{fn}({name}, {len(sites) - 1},"

    body = _FETCH.sub(fetch, kernel_source)
    outs = _OUT.findall(body)
    if len(outs) != 1:
        raise ValueError(f"the recorder expects one fragment output, found {outs}")
    if slots:
        body = _OUT.sub(lambda m: f"{m.group(1)} {m.group(2)};", body)
    else:
        body = _OUT.sub(lambda m: f"layout(location = 0) out {m.group(1)} {m.group(2)};", body)
    body, n = _MAIN.subn("void _rec_kernel_main()", body)
    if n != 1:
        raise ValueError("the recorder expects one main()")
    return _PRELUDE + "\n#line 1\n" + body + (_SLOT_EPILOGUE if slots else _EPILOGUE), tuple(sites)


class _Instrumented(Kernel):
    """The instrumented copy of a kernel: compiled once per context like any kernel."""

    __slots__ = ("sites", "body")

    def __init__(self, kernel: Kernel):
        super().__init__(kernel.name, kernel.texels, kernel.doc, kernel.label,
                         dict(kernel.defines, MAX_FETCHES=MAX_FETCHES), kernel.vertex, kernel.extensions,
                         kernel.library)
        self.key = ("recorder",) + kernel.key
        self.body, self.sites = instrument(self.path.read_text())

    def text(self) -> str:
        return self.body


class _Targets:
    """The scratch framebuffer of the instrumented pass: the kernel's result and 7 RGBA32F
    attachments, all the target's shape. Quacks like a Stream for Kernel.draw."""

    def __init__(self, ctx, rows: int, cols: int, components: int):
        self.ctx, self.rows, self.cols = ctx, rows, cols
        self.shape = (rows, cols)
        self.textures = [ctx.texture((cols, rows), components, dtype="f4")]
        self.textures += [ctx.texture((cols, rows), 4, dtype="f4") for _ in range(2 + MAX_FETCHES)]
        for t in self.textures:
            t.filter = (moderngl.NEAREST, moderngl.NEAREST)
        self.texture = self.textures[0]
        self.fbo = ctx.framebuffer(color_attachments=self.textures)

    def read(self, i: int) -> np.ndarray:
        return np.frombuffer(self.textures[i].read(), dtype=np.float32).reshape(self.rows, self.cols, -1)

    def release(self) -> None:
        park(self.ctx)   # never release the bound framebuffer (see gpgpu.context.park)
        self.fbo.release()
        for t in self.textures:
            t.release()


def _values(stream) -> np.ndarray:
    a = stream.to_array()
    return a.reshape(stream.rows, stream.cols, -1)[..., 0] if stream.components == 1 else a


_PLUMBING = ("gpgpu.record", "gpgpu.counters", "gpgpu.kernel", "gpgpu.show")


def _context() -> tuple:
    """The gpgpu functions on the caller's stack, outermost first (see ``Frame.context``)."""
    names = []
    f = sys._getframe(1)
    while f is not None:
        module = f.f_globals.get("__name__", "")
        if module.startswith("gpgpu.") and not module.startswith(_PLUMBING):
            names.append(f"{module}.{f.f_code.co_qualname}")
        f = f.f_back
    return tuple(reversed(names))


class Recorder(counters.Counter):
    """A counter that also keeps a :class:`Frame` per pass (use :func:`record`)."""

    def __init__(self, max_texels: int = DEFAULT_MAX_TEXELS):
        super().__init__(time=False, keep_trace=True)
        self.max_texels = int(max_texels)
        self._frames: list = []
        self._instrumented: dict = {}
        self._serials = weakref.WeakKeyDictionary()   # stream -> its number in the recording
        self._held: dict = {}                           # serial -> the contents the recorded passes left
        self._streams_seen = 0

    @property
    def frames(self) -> list:
        """The frames so far, one per pass, their fragment counts read from the queries."""
        self._resolve()
        return list(self._frames)

    def _check(self, what: str, stream) -> None:
        if stream.rows * stream.cols > self.max_texels:
            raise SnapshotTooLarge(
                f"recording pass {len(self._frames)}: {what} is {stream.rows} x {stream.cols} = "
                f"{stream.rows * stream.cols} texels, above the snapshot limit of {self.max_texels} texels; "
                "record a smaller problem (python -m gpgpu.show ... --n 8), or raise max_texels")

    def _serial(self, stream) -> int:
        """The stream's number in the recording: 0, 1, ... in the order first seen, never reused."""
        s = self._serials.get(stream)
        if s is None:
            s = self._serials[stream] = self._streams_seen
            self._streams_seen += 1
        return s

    def _uploads(self, streams: dict) -> dict:
        """serial -> contents, of the streams (serial -> current contents) whose contents differ
        from what the recorded passes left in them: what the host set since (see the module
        docstring); they become what the recording holds."""
        out = {}
        for serial, values in streams.items():
            held = self._held.get(serial)
            if held is None or held.shape != values.shape or held.tobytes() != values.tobytes():
                out[serial] = self._held[serial] = values
        return out

    def measure(self, kernel, primitive, target, texels, render, inputs=None, uniforms=None):
        inputs = dict(inputs or {})
        self._check(f"the target of {kernel.label}", target)
        for name, s in inputs.items():
            self._check(f"input {name!r} of {kernel.label}", s)
        before = {self._serial(s): _values(s) for s in list(inputs.values()) + [target]}
        uploads = self._uploads(before)
        p = super().measure(kernel, primitive, target, texels, render, inputs, uniforms)
        frame = self._frame(KernelNames(kernel.label, kernel.path.name, kernel.doc), primitive, target, inputs,
                            uniforms, p, uploads)
        frame.defines, frame.library, frame.vertex = dict(kernel.defines), kernel.library, kernel.vertex
        frame.extensions, frame.blending = tuple(kernel.extensions), bool(context_state().blending)
        if kernel.rasterized:
            self._instrumented_pass(frame, kernel, primitive, target, inputs, uniforms)
        self._frames.append(frame)
        return p

    def measure_copy(self, label, primitive, target, copy):
        self._check(f"the target of {label}", target)
        uploads = self._uploads({self._serial(target): _values(target)})
        p = super().measure_copy(label, primitive, target, copy)
        names = KernelNames(label, "glCopyTexSubImage2D", "copy-to-texture, 000 section 6.1.1")
        self._frames.append(self._frame(names, primitive, target, {}, None, p, uploads))
        return p

    def _frame(self, names: KernelNames, primitive, target, inputs, uniforms, p, uploads) -> Frame:
        verts = tuple(primitive.vertices) if hasattr(primitive, "vertices") else ()
        values = _values(target)
        serial = self._serial(target)
        self._held[serial] = values
        return Frame(index=len(self._frames), kernel=names.label, file=names.file, doc=names.doc,
                     primitive=primitive.kind, mode=primitive.mode, vertices=verts, target=target.shape,
                     target_id=id(target),
                     values=values, inputs={k: _values(s) for k, s in inputs.items()},
                     input_ids={k: id(s) for k, s in inputs.items()}, uniforms=dict(uniforms or {}), pass_=p,
                     context=_context(), target_serial=serial,
                     input_serials={k: self._serial(s) for k, s in inputs.items()},
                     components=int(target.components), uploads=uploads, count=len(primitive))

    def _instrumented_pass(self, frame, kernel, primitive, target, inputs, uniforms) -> None:
        inst = self._instrumented.get(kernel.key)
        if inst is None:
            inst = self._instrumented[kernel.key] = _Instrumented(kernel)
        st = context_state()
        scratch = _Targets(st.ctx, target.rows, target.cols, target.components)
        try:
            with counters.suspended():
                scratch.fbo.use()
                scratch.fbo.clear(0.0, 0.0, 0.0, 0.0)
                inst.draw(scratch, primitive, inputs, uniforms)
            coords, extra = scratch.read(1), scratch.read(2)
            fetches = np.stack([scratch.read(3 + i) for i in range(MAX_FETCHES)], axis=2)
        finally:
            scratch.release()
        frame.covered = extra[..., 3] > 0.5
        frame.T0 = np.dstack([coords[..., 0], coords[..., 1], extra[..., 0]])
        frame.T1 = np.dstack([coords[..., 2], coords[..., 3], extra[..., 1]])
        frame.fetch_count = np.rint(extra[..., 2]).astype(int)
        frame.fetch_texels = np.floor(fetches[..., :2]).astype(int)
        frame.fetch_sites = np.rint(fetches[..., 2]).astype(int)
        frame.sites = inst.sites


@contextmanager
def record(max_texels: int = DEFAULT_MAX_TEXELS):
    """Record every pass drawn inside the block (see the module docstring); yields the
    :class:`Recorder`, whose ``frames`` line up with its ``trace``."""
    with counters.activated(Recorder(max_texels)) as rec:
        try:
            yield rec
        finally:
            rec._resolve()   # the occlusion queries' counts into every frame
