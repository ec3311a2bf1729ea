"""The one OpenGL call moderngl does not expose with a region: glCopyTexSubImage2D.

Copy-to-texture (CTT, section 6.1.1 of paper 000) is how BrookGPU on Linux produced its
output streams: a kernel rendered into a p-buffer, and the rendered region of that
framebuffer was then copied into the stream's texture with ``glCopyTexSubImage2D``. moderngl's
``copy_framebuffer`` copies whole framebuffers only, so the call is made here through ctypes,
on the context current in the calling thread (libglvnd dispatches it there).
"""
from __future__ import annotations

import ctypes
import ctypes.util

from .errors import ContextError

__all__ = ["copy_tex_sub_image_2d", "GL_TEXTURE_2D"]

GL_TEXTURE_2D = 0x0DE1
_fn = None


def _load():
    global _fn
    if _fn is None:
        names = ["libGL.so.1", "libOpenGL.so.0", ctypes.util.find_library("GL"),
                 ctypes.util.find_library("OpenGL")]
        errors = []
        for name in filter(None, names):
            try:
                lib = ctypes.CDLL(name)
                fn = lib.glCopyTexSubImage2D
            except (OSError, AttributeError) as exc:
                errors.append(f"{name}: {exc}")
                continue
            fn.argtypes = [ctypes.c_uint, ctypes.c_int] + [ctypes.c_int] * 6
            fn.restype = None
            _fn = fn
            break
        else:
            raise ContextError("copy-to-texture needs glCopyTexSubImage2D from libGL.so.1 or "
                               f"libOpenGL.so.0 (libglvnd), which could not be loaded: {errors}")
    return _fn


def copy_tex_sub_image_2d(source_fbo, texture, rects) -> int:
    """Copy rectangles ``(x, y, w, h)`` of ``source_fbo`` into the same place of ``texture``.

    Binds the framebuffer for reading and the texture on unit 0, then one
    ``glCopyTexSubImage2D(GL_TEXTURE_2D, 0, x, y, x, y, w, h)`` per rectangle. Returns the
    texels copied.
    """
    fn = _load()
    source_fbo.use()
    texture.use(0)
    copied = 0
    for x, y, w, h in rects:
        if w > 0 and h > 0:
            fn(GL_TEXTURE_2D, 0, int(x), int(y), int(x), int(y), int(w), int(h))
            copied += w * h
    return copied
