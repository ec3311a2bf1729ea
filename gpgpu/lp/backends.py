"""The LP's back ends by name: :func:`get_backend` (the registry above the back-end modules, so
that none of them imports another's factory)."""
from __future__ import annotations

import numpy as np

from .backend import BACKENDS, Backend
from .numpy_backend import NumpyBackend

__all__ = ["get_backend", "BACKENDS"]


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
