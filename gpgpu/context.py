"""One OpenGL context per thread: headless EGL by default, a GLFW window on request.

The papers ran on a GeForce 6800/7800 through BrookGPU or the OpenGL API. Here the same
pipeline is reached through moderngl: a core-profile context (3.3 or newer) in which a
float32 single-channel texture (R32F) can be a render target.

``GPGPU_BACKEND`` selects the context: ``egl`` (default, headless, works without a
display: Mesa's llvmpipe on a CPU, NVIDIA's driver on a GPU) or ``glfw`` (a hidden window,
for machines with a display but no EGL).

Threads: an OpenGL context is current in one thread at a time, so each thread that calls
gpgpu gets its own EGL context (created on first use, released when the thread ends or by
``release_context``). Numpy-in, numpy-out calls work from any thread, concurrently; a Stream
belongs to the thread that made it, and using it from another raises ``WrongThreadError``
instead of reading or writing another context's textures. The GLFW backend has one window,
hence one context, usable from the thread that opened it only.
"""
from __future__ import annotations

import os
import threading

import moderngl
import numpy as np

from .errors import ContextError, WrongThreadError

__all__ = ["get_context", "release_context", "ContextError", "WrongThreadError", "capabilities",
           "BACKENDS", "current_context", "check_owner", "collect_garbage", "on_release"]

BACKENDS = ("egl", "glfw")

#: Debian/Ubuntu packages that provide headless EGL with Mesa's software renderer.
SYSTEM_PACKAGES = "libegl1 libgl1 libegl-mesa0 libgl1-mesa-dri"

#: Beyond the papers (host cost per pass): NVIDIA's OpenGL driver can run the GL calls
#: on a worker thread of its own ("threaded optimizations", ``__GL_THREADED_OPTIMIZATIONS=1``),
#: so that Python issues a pass and goes on. Measured on an NVIDIA H200 through EGL: a ping-pong
#: pass drawn by ``Kernel.draw_range`` costs 6.4 us of host time without, 1.5 us with, and the
#: same 10.3 us of host + GPU time. Read-backs wait for the worker as they wait for the GPU; no
#: result changes. On by default: ``GPGPU_THREADED_GL=0`` (or an explicit
#: ``__GL_THREADED_OPTIMIZATIONS``) before the first context leaves the driver's own choice.
#: Other drivers ignore the variable. It is read when the driver starts, i.e. when the first
#: context is made, so it is set here, when gpgpu is imported.
THREADED_GL_VARIABLE = "__GL_THREADED_OPTIMIZATIONS"
#: True when gpgpu set the variable (it was not in the environment before): a subprocess that
#: runs code without this setting (experiments.table3's --baseline) takes it out again
THREADED_GL_SET_HERE = False
if os.environ.get("GPGPU_THREADED_GL", "1").strip() not in ("0", "false", "no", "off") \
        and THREADED_GL_VARIABLE not in os.environ:
    os.environ[THREADED_GL_VARIABLE] = "1"
    THREADED_GL_SET_HERE = True

_local = threading.local()          # this thread's context (see get_context)
_create_lock = threading.Lock()     # EGL display set-up is not safe to race
_glfw_owner: int | None = None      # the thread that owns the GLFW window, when GPGPU_BACKEND=glfw
_window = None                      # the GLFW window that owns that context


#: what modules caching per-context objects ask to run, in the owning thread, when a context is
#: released (registered by :func:`on_release` at their import: kernel's programs, stream's pool)
_RELEASE_HOOKS: list = []


def on_release(hook) -> None:
    """Register ``hook(ctx)``, called in the owning thread when ``ctx`` is released, before the
    context itself; the modules above this one register theirs, so none is imported here."""
    if hook not in _RELEASE_HOOKS:
        _RELEASE_HOOKS.append(hook)


def _create_egl() -> moderngl.Context:
    try:
        return moderngl.create_context(standalone=True, backend="egl", require=330)
    except Exception as exc:  # moderngl raises plain Exception from glcontext
        raise ContextError(
            f"could not create a headless OpenGL 3.3 context through EGL ({exc}). "
            f"On Debian/Ubuntu install the system packages: sudo apt-get install {SYSTEM_PACKAGES}; "
            "on a machine with a display you can also try GPGPU_BACKEND=glfw."
        ) from exc


def _create_glfw() -> moderngl.Context:
    global _window, _glfw_owner
    if _glfw_owner is not None and _glfw_owner != threading.get_ident():
        raise ContextError(
            "GPGPU_BACKEND=glfw gives the process one context, owned by the thread that made it "
            f"(thread id {_glfw_owner}); call gpgpu from that thread, or unset GPGPU_BACKEND to "
            "use headless EGL, which gives every thread its own context")
    try:
        import glfw
    except ImportError as exc:  # pragma: no cover - glfw is a dependency
        raise ContextError("GPGPU_BACKEND=glfw needs the glfw package: pip install glfw") from exc
    if not glfw.init():
        raise ContextError(
            "GPGPU_BACKEND=glfw: glfw.init() failed (no display?). Unset GPGPU_BACKEND to use "
            f"headless EGL (Debian/Ubuntu packages: {SYSTEM_PACKAGES})."
        )
    glfw.window_hint(glfw.VISIBLE, glfw.FALSE)
    glfw.window_hint(glfw.CONTEXT_VERSION_MAJOR, 3)
    glfw.window_hint(glfw.CONTEXT_VERSION_MINOR, 3)
    glfw.window_hint(glfw.OPENGL_PROFILE, glfw.OPENGL_CORE_PROFILE)
    glfw.window_hint(glfw.OPENGL_FORWARD_COMPAT, glfw.TRUE)
    _window = glfw.create_window(16, 16, "gpgpu", None, None)
    if not _window:
        glfw.terminate()
        raise ContextError("GPGPU_BACKEND=glfw: could not open an OpenGL 3.3 core window")
    glfw.make_context_current(_window)
    _glfw_owner = threading.get_ident()
    return moderngl.create_context(require=330)


class _ContextInfo:
    """What the library keeps per context (in ``ctx.extra``): the owning thread, the parking
    framebuffer, whether timer queries work, whether the context has been released, and the
    kernels' compiled programs and vertex buffer."""

    __slots__ = ("thread", "thread_name", "park", "timer_query", "released", "backend", "kernel_state")

    def __init__(self, park_fbo, backend: str):
        self.thread = threading.get_ident()
        self.thread_name = threading.current_thread().name
        self.park = park_fbo
        self.timer_query = None
        self.released = False
        self.backend = backend
        self.kernel_state = None  # kernel.ContextState: programs, vertex buffer, scratch streams


def park(ctx: moderngl.Context | None = None) -> None:
    """Bind the context's own 1 x 1 framebuffer. Done before a framebuffer is released: moderngl
    rebinds the previously bound framebuffer after creating one, and a deleted name there
    would raise GL_INVALID_OPERATION."""
    ctx = ctx or current_context()
    if ctx is not None and ctx.extra is not None and ctx.extra.park is not None:
        ctx.extra.park.use()


def _check_float_render_target(ctx: moderngl.Context):
    """Render a value that 8-bit or clamped targets cannot hold into an R32F texture.

    Returns the 1 x 1 framebuffer, kept as the parking framebuffer (see ``park``)."""
    tex = ctx.texture((1, 1), 1, dtype="f4")
    fbo = ctx.framebuffer(color_attachments=[tex])
    fbo.use()
    fbo.clear(-1234.5625)
    value = np.frombuffer(fbo.read(components=1, dtype="f4"), dtype="f4")[0]
    if value != np.float32(-1234.5625):
        raise ContextError(
            f"the OpenGL driver ({ctx.info['GL_RENDERER']}) cannot render float32 values into "
            f"an R32F texture (read back {value!r}); gpgpu needs unclamped float render targets"
        )
    return fbo


class _ThreadContext:
    """Held in the thread-local storage: when the thread ends, Python drops it in that same
    thread, where the context is current, and the context is released with it."""

    __slots__ = ("ctx", "thread")

    def __init__(self, ctx):
        self.ctx = ctx
        self.thread = threading.get_ident()

    def __del__(self):
        if self.ctx is not None and threading.get_ident() == self.thread:
            try:
                _release(self.ctx)
            except Exception:  # interpreter shutdown: nothing left to free
                pass


def current_context() -> moderngl.Context | None:
    """This thread's context if it has one (never creates one)."""
    holder = getattr(_local, "holder", None)
    return None if holder is None else holder.ctx


def get_context() -> moderngl.Context:
    """This thread's moderngl context, created on its first use in the thread.

    The papers ran on a GeForce 6800/7800 through BrookGPU or OpenGL; here the same pipeline
    is an OpenGL 3.3 core context in which an R32F texture can be a render target (checked
    when the context is made): headless EGL by default, a hidden GLFW window with
    ``GPGPU_BACKEND=glfw``. OpenGL contexts are current in one thread at a time, so every
    thread gets its own (headless EGL allows any number); GL objects such as Streams belong to
    the context, hence to the thread, that made them, and using one from another thread raises
    ``WrongThreadError``. Numpy-in, numpy-out calls work from any thread. A thread's context is
    released when the thread ends, or by ``release_context()``.

    Returns
    -------
    moderngl.Context
        The calling thread's context (the same object on every call until it is released).

    Raises
    ------
    ContextError
        When no context can be made (naming the packages to install), when
        ``GPGPU_BACKEND`` names an unknown backend, when R32F textures are not renderable, or
        when ``GPGPU_BACKEND=glfw`` and another thread owns the one window context.

    See Also
    --------
    release_context, capabilities

    Examples
    --------
    >>> import gpgpu
    >>> ctx = gpgpu.get_context()
    >>> ctx is gpgpu.get_context(), ctx.version_code >= 330
    (True, True)
    """
    holder = getattr(_local, "holder", None)
    if holder is not None:
        return holder.ctx
    return _create()


def _create() -> moderngl.Context:
    backend = os.environ.get("GPGPU_BACKEND", "egl").strip().lower() or "egl"
    if backend not in BACKENDS:
        raise ContextError(f"GPGPU_BACKEND={backend!r} is not a known backend; use one of {BACKENDS} "
                           "(or unset it for headless EGL)")
    with _create_lock:
        ctx = _create_egl() if backend == "egl" else _create_glfw()
        park_fbo = _check_float_render_target(ctx)
    # GL objects dropped without release() are queued on their context and freed by the
    # owning thread (collect_garbage); freeing them from the garbage collector's thread would
    # delete names in whatever context is current there.
    ctx.gc_mode = "context_gc"
    ctx.extra = _ContextInfo(park_fbo, backend)
    _local.holder = _ThreadContext(ctx)
    return ctx


#: ids of the GL objects that the stream pool keeps for reuse in a context (set by
#: gpgpu.stream): moderngl queues a texture for deletion when its Python object is finalized,
#: which the cyclic garbage collector does even to a texture that a collected Stream has just
#: handed to the pool (Stream.__del__); those must not be deleted.
pooled_objects = lambda ctx: ()  # noqa: E731


def collect_garbage(ctx: moderngl.Context | None = None) -> int:
    """Free the GL objects of this thread's context that were dropped without ``release()``."""
    ctx = ctx or current_context()
    if ctx is None:
        return 0
    objects, count = ctx.objects, 0
    while objects:
        obj = objects.popleft()
        if id(obj) in pooled_objects(ctx):   # asked each time: a collection may pool more meanwhile
            continue
        # moderngl queues objects that were released explicitly too (as InvalidObject)
        release = getattr(obj, "release", None)
        if release is not None:
            release()
            count += 1
    return count


def check_owner(ctx: moderngl.Context, what: str = "this Stream") -> None:
    """Raise ``WrongThreadError`` unless ``ctx`` is the calling thread's context."""
    if ctx is current_context():
        return
    inf = ctx.extra
    if inf is not None and inf.released:
        raise WrongThreadError(f"{what} belongs to an OpenGL context that has been released "
                               "(release_context() was called, or its thread ended); its data is gone")
    owner = f"thread {inf.thread_name!r}" if inf is not None else "another thread"
    raise WrongThreadError(
        f"{what} belongs to the OpenGL context of {owner}, not to the calling thread "
        f"{threading.current_thread().name!r}. Every thread has its own context and GL objects "
        "cannot cross between them: use it in the thread that made it, or pass numpy arrays "
        "(to_array() there, from_array() here).")


def _release(ctx: moderngl.Context) -> None:
    global _window, _glfw_owner
    inf = ctx.extra
    if inf is None or inf.released:
        return
    for hook in _RELEASE_HOOKS:
        hook(ctx)
    collect_garbage(ctx)
    if inf.park is not None:
        inf.park.release()
        inf.park = None
    inf.released = True
    if inf.backend == "egl":
        # unbind first: EGL destroys a context that is current only when it is unbound, and
        # glcontext's release does not unbind it (about 2 MB lost per context otherwise)
        ctx.__exit__(None, None, None)
    ctx.release()
    if inf.backend == "glfw" and _window is not None:
        import glfw

        glfw.destroy_window(_window)
        glfw.terminate()
        _window = None
        _glfw_owner = None


def release_context() -> None:
    """Release the calling thread's context and everything made on it.

    The streams, compiled kernels, vertex buffers and pooled temporaries of the calling
    thread's context are freed with it (its streams' data is gone: using one raises
    ``WrongThreadError``); the next gpgpu call in the thread makes a new context. Other
    threads' contexts are not touched. A thread's context is also released when the thread
    ends; without a context, this does nothing.

    See Also
    --------
    get_context

    Examples
    --------
    >>> import threading
    >>> import gpgpu
    >>> def work(out):
    ...     first = gpgpu.get_context()
    ...     gpgpu.release_context()
    ...     out.append(gpgpu.get_context() is first)   # a new context
    ...     gpgpu.release_context()
    >>> out = []
    >>> t = threading.Thread(target=work, args=(out,)); t.start(); t.join()
    >>> out
    [False]
    """
    holder = getattr(_local, "holder", None)
    if holder is None:
        return
    _local.holder = None
    ctx, holder.ctx = holder.ctx, None
    _release(ctx)


def has_timer_query() -> bool:
    """Whether GL_TIME_ELAPSED queries work on this thread's context (checked once per context)."""
    ctx = get_context()
    inf = ctx.extra
    if inf.timer_query is None:
        try:
            q = ctx.query(time=True)
            with q:
                pass
            ctx.finish()
            _ = q.elapsed
            inf.timer_query = True
        except Exception:
            inf.timer_query = False
    return inf.timer_query


def capabilities(ctx: moderngl.Context | None = None) -> dict:
    """What the context can do: renderer, vendor, version, limits, float targets, timer queries.

    The papers name their GPU (GeForce 6800/7800) and rely on float render targets; this
    answers the same for the machine at hand: the driver's names, GL_MAX_TEXTURE_SIZE (the
    largest matrix one texture holds, and the width of a folded vector's rows), whether R32F
    targets render float32 values, and whether GL_TIME_ELAPSED queries work (for the
    counters' GPU times).

    Parameters
    ----------
    ctx : moderngl.Context, optional
        The context to describe; default this thread's (made if it has none).

    Returns
    -------
    dict
        ``renderer``, ``vendor``, ``version``, ``glsl``, ``max_texture_size``,
        ``max_viewport_dims``, ``float_render_target``, ``timer_query``, ``backend`` and
        ``threaded_gl``.

    Raises
    ------
    ContextError
        If no context can be made (see ``get_context``).

    Examples
    --------
    >>> import gpgpu
    >>> caps = gpgpu.capabilities()
    >>> caps["float_render_target"], caps["max_texture_size"] >= 1024, caps["backend"] in ("egl", "glfw")
    (True, True, True)
    """
    ctx = ctx or get_context()
    info = ctx.info
    timer = has_timer_query()
    return {
        "renderer": info.get("GL_RENDERER"),
        "vendor": info.get("GL_VENDOR"),
        "version": info.get("GL_VERSION"),
        "glsl": ctx.version_code,
        "max_texture_size": info.get("GL_MAX_TEXTURE_SIZE"),
        "max_viewport_dims": info.get("GL_MAX_VIEWPORT_DIMS"),
        "float_render_target": True,  # checked when the context was made
        "timer_query": timer,
        "backend": ctx.extra.backend if ctx.extra is not None else "egl",
        "threaded_gl": os.environ.get(THREADED_GL_VARIABLE, "unset") + " (" + THREADED_GL_VARIABLE
                       + ", NVIDIA's driver only)",
    }


def max_texture_size() -> int:
    """GL_MAX_TEXTURE_SIZE of this thread's context."""
    return int(get_context().info["GL_MAX_TEXTURE_SIZE"])


def is_software_renderer() -> bool:
    """True on a CPU rasterizer (llvmpipe, softpipe, SwiftShader)."""
    name = str(get_context().info.get("GL_RENDERER", "")).lower()
    return any(s in name for s in ("llvmpipe", "softpipe", "swiftshader", "software"))
