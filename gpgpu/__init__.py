"""gpgpu: the classic GPGPU linear-algebra papers, rebuilt in Python and OpenGL fragment shaders.

A matrix is a float32 texture (``Stream``), a kernel is a GLSL fragment shader in ``glsl/``
(``Kernel``), and a kernel runs by rasterizing a rectangle or an oversized triangle whose
vertices carry texture coordinates (``gpgpu.geometry``). See docs/papers.md for the map from
the papers to the modules.

Examples
--------
A pass drawn by hand: the copy kernel over a rectangle (``gpgpu.geometry``), counted by
``gpgpu.counters``; and the packed format of paper 001 (``gpgpu.packed``).

>>> import numpy as np
>>> import gpgpu
>>> from gpgpu.geometry import Rect
>>> A = np.arange(6.0).reshape(2, 3)
>>> with gpgpu.Stream.from_array(A) as S, gpgpu.Stream(2, 3) as T:
...     with gpgpu.counters.count(time=False, trace=False) as c:
...         gpgpu.Kernel("copy").draw(T, Rect.covering(0, 0, 3, 2, T0=lambda x, y: (x, y)), {"A": S})
...     print(np.array_equal(T.to_array(), A), c.passes())
True 1
>>> L = np.tril(np.arange(1.0, 17.0).reshape(4, 4))
>>> P = gpgpu.packed.pack(L)
>>> P.shape, np.array_equal(gpgpu.packed.unpack(P, 4), L)
((5, 2), True)
"""
from . import counters, geometry, packed
from .adat import adat
from .blas1 import add_scalar, copy, divide, dot, fill, max_step, multiply, norm_inf, saxpy, scale
from .blas2 import gemv, trsv
from .cg import Float32ToleranceWarning, cg
from .cholesky import NotPositiveDefiniteError, cho_solve, cholesky
from .errors import CGBreakdownError
from .context import ContextError, WrongThreadError, capabilities, get_context, release_context
from .kernel import Kernel, KernelCompileError
from .lsq import lstsq_weighted
from .lu import SingularMatrixError, gauss_jordan, lu, lu_factor, lu_solve
from .reduce import argmax, reduce
from .sparse import SparseStream
from .stream import PingPong, Stream, free_temporaries, set_pool_limit

__version__ = "0.1.0"

__all__ = [
    "Stream", "PingPong", "Kernel", "KernelCompileError", "ContextError", "WrongThreadError",
    "get_context", "release_context", "capabilities", "counters", "geometry", "free_temporaries",
    "set_pool_limit",
    "copy", "fill", "saxpy", "scale", "add_scalar", "multiply", "divide", "dot", "norm_inf",
    "max_step", "reduce", "argmax", "gemv", "trsv",
    "cholesky", "cho_solve", "NotPositiveDefiniteError", "lu", "lu_factor", "lu_solve", "gauss_jordan",
    "SingularMatrixError", "adat", "packed", "lstsq_weighted", "SparseStream", "cg", "CGBreakdownError",
    "Float32ToleranceWarning",
]
