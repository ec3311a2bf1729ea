"""The LP's back ends by name: one table (:data:`REGISTRY`) from which :func:`get_backend`
(Mehrotra's method), :func:`get_matrix_free_backend` (the matrix-free method) and
:func:`backend_class` (whose keyword arguments are a back end's options) are read, above the
back-end modules, so that none of them imports another's factory. "gpu" is imported on first
use."""
from __future__ import annotations

import numpy as np

from .backend import BACKENDS, Backend
from .matrix_free_backend import MF_BACKENDS, MatrixFreeBackend
from .matrix_free_numpy import NumpyMatrixFree
from .numpy_backend import NumpyBackend

__all__ = ["get_backend", "get_matrix_free_backend", "backend_class", "BACKENDS", "MF_BACKENDS", "REGISTRY"]


def _gpu_backend():
    from .gpu_backend import GPUBackend

    return GPUBackend


def _gpu_matrix_free():
    from .matrix_free_gpu import GPUMatrixFree

    return GPUMatrixFree


#: (method, back end name) -> (the class, or a function that imports it, and fixed keyword
#: arguments): the one table from which the back ends are built and their options read. The GPU
#: classes are imported on first use, so that gpgpu.lp with a numpy back end needs no OpenGL.
REGISTRY = {
    ("mehrotra", "numpy32"): (NumpyBackend, {"dtype": np.float32}),
    ("mehrotra", "numpy64"): (NumpyBackend, {"dtype": np.float64}),
    ("mehrotra", "gpu"): (_gpu_backend, {}),
    ("matrix-free", "numpy64"): (NumpyMatrixFree, {}),
    ("matrix-free", "gpu"): (_gpu_matrix_free, {}),
}


def _entry(method: str, name) -> tuple | None:
    """(class, fixed keyword arguments) of the back end ``name`` of ``method``, or None."""
    row = REGISTRY.get((method, name)) if isinstance(name, str) else None
    if row is None:
        return None
    cls, fixed = row
    return (cls if isinstance(cls, type) else cls()), fixed


def get_backend(name, problem, cholesky="outer", refine=False, **kw) -> Backend:
    """The back end of Mehrotra's method called ``name``, built for ``problem``.

    Builds the GPU back end (paper 000's kernels, float32 on the GPU) or the numpy back end (the same
    Algorithm 3 in numpy: float32 for "numpy32", the paper's "MATLAB version", or float64 for
    "numpy64") from the table :data:`~gpgpu.lp.backends.REGISTRY`; a :class:`Backend` instance
    passes through unchanged. :func:`solve` calls it; the back ends' options are tabled in
    docs/reference/lp-options.md.

    Parameters
    ----------
    name : {"gpu", "numpy32", "numpy64"} or Backend
        The back end's name, or a back end (answered as it is).
    problem : Problem
        The standard-form LP (4.1)-(4.3) the back end holds.
    cholesky : {"outer", "inner"}
        Algorithm 2 (outer product) or Algorithm 1 (inner product) of paper 000.
    refine : bool
        Mixed-precision iterative refinement of the normal-equation solves (beyond the paper).
    **kw
        The back end's own options (``pivot_tol``, ``adat``, ``factorization``, ...).

    Returns
    -------
    Backend
        The back end, ready for :func:`~gpgpu.lp.mehrotra.mehrotra`.

    Raises
    ------
    ValueError
        An unknown name, or an option value the back end refuses.
    TypeError
        An option the back end does not take.

    Examples
    --------
    >>> import numpy as np
    >>> from gpgpu import lp
    >>> p = lp.Problem.from_arrays(np.eye(2), [1.0, 2.0], [1.0, 1.0])
    >>> be = lp.get_backend("numpy64", p, cholesky="inner", factorization="loop")
    >>> be.name, be.cholesky, be.m
    ('numpy64', 'inner', 2)
    """
    if isinstance(name, Backend):
        return name
    entry = _entry("mehrotra", name)
    if entry is None:
        raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
    cls, fixed = entry
    return cls(problem, cholesky=cholesky, refine=refine, **fixed, **kw)


def get_matrix_free_backend(name, problem, **kw) -> MatrixFreeBackend:
    """The matrix-free back end called ``name`` ("gpu" or "numpy64", :data:`REGISTRY`); an
    instance passes."""
    if isinstance(name, MatrixFreeBackend):
        return name
    entry = _entry("matrix-free", name)
    if entry is None:
        raise ValueError(f"unknown matrix-free backend {name!r}; choose one of {', '.join(MF_BACKENDS)}")
    cls, fixed = entry
    return cls(problem, **fixed, **kw)


def backend_class(method: str, backend):
    """The class whose keyword arguments are the back-end options (:data:`REGISTRY`), or None
    (an instance, or a name that solve refuses with its own words)."""
    entry = _entry(method, backend)
    return None if entry is None else entry[0]
