"""Linear programming by Mehrotra's predictor-corrector interior-point method on the GPU.

Section 4 and 6.2 of paper 000 (Jung & O'Leary): Algorithm 3 (:mod:`.mehrotra`) written
against a small set of kernels (:mod:`.backend`), run on the GPU (``gpu_backend``) or on numpy
in float32 / float64 (:mod:`.numpy_backend`, the paper's "MATLAB version"). Problems come from
MPS files (:mod:`.mps`, via HiGHS) in the standard form (4.1)-(4.3).

>>> from gpgpu.lp import solve
>>> r = solve("afiro.mps.gz", backend="numpy64", eps=1e-8)   # doctest: +SKIP
"""
from __future__ import annotations

from pathlib import Path

from .backend import BACKENDS, Backend, get_backend
from .mehrotra import MESSAGES, STATUS, STATUS_CODES, LPResult, mehrotra
from .mps import Problem, read_mps, standardize

__all__ = ["solve", "read_mps", "Problem", "standardize", "LPResult", "Backend",
           "get_backend", "BACKENDS", "STATUS", "STATUS_CODES", "MESSAGES"]


def solve(problem, backend="gpu", cholesky="outer", eps=1e-6, refine=False, max_iter=100,
          callback=None, **backend_options) -> LPResult:
    """Solve an LP with Algorithm 3 of paper 000 (Mehrotra's predictor-corrector method).

    Parameters
    ----------
    problem : Problem or str or Path
        A standard-form problem, or an MPS file (``.mps`` / ``.mps.gz``) to read.
    backend : {"gpu", "numpy32", "numpy64"} or Backend
    cholesky : {"outer", "inner"}
        Cholesky form for the normal equations (4.12) (Algorithm 2 / Algorithm 1 of 000).
    eps : float
        Tolerance of (6.1)-(6.3).
    refine : bool
        Mixed-precision iterative refinement of (4.12) (beyond the paper; see
        :mod:`gpgpu.lp.backend`).
    max_iter : int
    callback : callable, optional
        Gets each iteration's history entry (dict).
    **backend_options
        Passed to the backend (e.g. ``pivot_tol``).

    Returns
    -------
    LPResult
    """
    if isinstance(problem, (str, Path)):
        problem = read_mps(problem)
    if problem.status is not None:                      # decided by the presolve
        code = STATUS_CODES[problem.status]
        return LPResult(status=problem.status, status_code=code,
                        message=f"{MESSAGES[code]} (presolve: {problem.message})", x=None,
                        x_std=None, y=None, s=None, objective=float("nan"), iterations=0,
                        backend=str(backend))
    be = get_backend(backend, problem, cholesky=cholesky, refine=refine, **backend_options)
    return mehrotra(be, problem, eps=eps, max_iter=max_iter, callback=callback)
