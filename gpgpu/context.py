"""One OpenGL context per process: headless EGL by default, a GLFW window on request.

The papers ran on a GeForce 6800/7800 through BrookGPU or the OpenGL API. Here the same
pipeline is reached through moderngl: a core-profile context (3.3 or newer) in which a
float32 single-channel texture (R32F) can be a render target.

``GPGPU_BACKEND`` selects the context: ``egl`` (default, headless, works without a
display: Mesa's llvmpipe on a CPU, NVIDIA's driver on a GPU) or ``glfw`` (a hidden window,
for machines with a display but no EGL).
"""
from __future__ import annotations

import os

import moderngl
import numpy as np

__all__ = ["get_context", "release_context", "ContextError", "capabilities", "BACKENDS"]

BACKENDS = ("egl", "glfw")

#: Debian/Ubuntu packages that provide headless EGL with Mesa's software renderer.
SYSTEM_PACKAGES = "libegl1 libgl1 libegl-mesa0 libgl1-mesa-dri"

_context: moderngl.Context | None = None
_window = None  # the GLFW window that owns the context, when GPGPU_BACKEND=glfw


class ContextError(RuntimeError):
    """No usable OpenGL context: no EGL, no display, no float render targets."""


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
    global _window
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
    return moderngl.create_context(require=330)


_park_fbo = None


def park() -> None:
    """Bind the context's own 1 x 1 framebuffer. Done before a framebuffer is released: moderngl
    rebinds the previously bound framebuffer after creating one, and a deleted name there
    would raise GL_INVALID_OPERATION."""
    if _park_fbo is not None:
        _park_fbo.use()


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


def get_context() -> moderngl.Context:
    """The process's moderngl context, created on first use.

    Raises
    ------
    ContextError
        When no context can be made (naming the packages to install), when
        ``GPGPU_BACKEND`` names an unknown backend, or when R32F textures are not renderable.
    """
    if _context is not None:
        return _context
    return _create()


def _create() -> moderngl.Context:
    global _context
    backend = os.environ.get("GPGPU_BACKEND", "egl").strip().lower() or "egl"
    if backend not in BACKENDS:
        raise ContextError(f"GPGPU_BACKEND={backend!r} is not a known backend; use one of {BACKENDS} "
                           "(or unset it for headless EGL)")
    ctx = _create_egl() if backend == "egl" else _create_glfw()
    global _park_fbo
    _park_fbo = _check_float_render_target(ctx)
    # GL objects that are dropped without release() are freed when garbage collected;
    # the library itself releases what it creates deterministically.
    ctx.gc_mode = "auto"
    _context = ctx
    return ctx


def release_context() -> None:
    """Release the process's context and everything cached on it (programs, buffers)."""
    global _context, _window, _timer_query, _park_fbo
    _timer_query = None
    _park_fbo = None
    if _context is None:
        return
    from . import kernel, stream  # local import: both cache per-context objects

    stream.clear_pool()
    kernel._forget_context(_context)
    _context.release()
    _context = None
    if _window is not None:
        import glfw

        glfw.destroy_window(_window)
        glfw.terminate()
        _window = None


_timer_query: bool | None = None


def has_timer_query() -> bool:
    """Whether GL_TIME_ELAPSED queries work on this context (checked once)."""
    global _timer_query
    if _timer_query is None:
        ctx = get_context()
        try:
            q = ctx.query(time=True)
            with q:
                pass
            ctx.finish()
            _ = q.elapsed
            _timer_query = True
        except Exception:
            _timer_query = False
    return _timer_query


def capabilities(ctx: moderngl.Context | None = None) -> dict:
    """What the context can do: renderer, vendor, version, limits, float targets, timer queries."""
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
        "backend": os.environ.get("GPGPU_BACKEND", "egl") or "egl",
    }


def max_texture_size() -> int:
    """GL_MAX_TEXTURE_SIZE of the process's context."""
    return int(get_context().info["GL_MAX_TEXTURE_SIZE"])


def is_software_renderer() -> bool:
    """True on a CPU rasterizer (llvmpipe, softpipe, SwiftShader)."""
    name = str(get_context().info.get("GL_RENDERER", "")).lower()
    return any(s in name for s in ("llvmpipe", "softpipe", "swiftshader", "software"))
