"""The LP's back ends by name: :func:`get_backend` (Mehrotra's method) and
:func:`get_matrix_free_backend` (the matrix-free method), the registry above the back-end
modules, so that none of them imports another's factory. "gpu" is imported on first use."""
from __future__ import annotations

import numpy as np

from .backend import BACKENDS, Backend
from .matrix_free_backend import MF_BACKENDS, MatrixFreeBackend
from .matrix_free_numpy import NumpyMatrixFree
from .numpy_backend import NumpyBackend

__all__ = ["get_backend", "get_matrix_free_backend", "backend_class", "BACKENDS", "MF_BACKENDS"]


def get_backend(name, problem, cholesky="outer", refine=False, **kw) -> Backend:
    """The backend called ``name`` ("gpu", "numpy32" or "numpy64") for ``problem``.

    A :class:`Backend` instance passes through unchanged. "gpu" is imported on first use, so
    that ``gpgpu.lp`` with a numpy back end needs no OpenGL.
    """
    if isinstance(name, Backend):
        return name
    if name == "numpy32" or name == "numpy64":
        dtype = np.float32 if name == "numpy32" else np.float64
        return NumpyBackend(problem, dtype=dtype, cholesky=cholesky, refine=refine, **kw)
    if name == "gpu":
        from .gpu_backend import GPUBackend

        return GPUBackend(problem, cholesky=cholesky, refine=refine, **kw)
    raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")


def get_matrix_free_backend(name, problem, **kw) -> MatrixFreeBackend:
    """The matrix-free back end called ``name`` ("gpu" or "numpy64"); an instance passes."""
    if isinstance(name, MatrixFreeBackend):
        return name
    if name == "numpy64":
        return NumpyMatrixFree(problem, **kw)
    if name == "gpu":
        from .matrix_free_gpu import GPUMatrixFree

        return GPUMatrixFree(problem, **kw)
    raise ValueError(f"unknown matrix-free backend {name!r}; choose one of {', '.join(MF_BACKENDS)}")


def backend_class(method: str, backend):
    """The class whose keyword arguments are the back-end options, or None (an instance)."""
    if not isinstance(backend, str):
        return None
    if method == "matrix-free":
        if backend == "numpy64":
            return NumpyMatrixFree
        if backend == "gpu":
            from .matrix_free_gpu import GPUMatrixFree

            return GPUMatrixFree
        return None
    if backend in ("numpy32", "numpy64"):
        return NumpyBackend
    if backend == "gpu":
        from .gpu_backend import GPUBackend

        return GPUBackend
    return None                      # an unknown name: solve names it
