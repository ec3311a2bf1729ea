"""Weighted least squares with mixed-precision iterative refinement (paper 001, section 2,
equation (3) and Algorithm 1).

    min_x || D (b - Aᵀ x) ||²   <=>   A D² Aᵀ x = A D² b                        (3)

A D² Aᵀ is formed and factored on the GPU in float32 (``adat``, ``cholesky``); the initial
x⁰_sgl comes from forward and backward substitution on the GPU. Algorithm 1 then refines it:

    r_k = A D² b - A D² Aᵀ x_k          in float64 on the CPU (A, D and b in double)
    solve L Lᵀ x_sgl = single(r_k)      on the GPU with the float32 factor
    x_{k+1} = x_k + double(x_sgl)
    until ||r_k||₂ / ||x_{k+1}|| <= ε or k >= the iteration limit

The paper's test ``||r|| / ||x||`` has the units of A D² Aᵀ: A times 1e10 would never meet it
and A times 1e-8 would meet it at once. By default (``criterion="scaled"``, beyond the paper)
the test divides by the largest diagonal entry of A D² Aᵀ as well, ``||r|| / (max_i (A D² Aᵀ)_ii
||x||) <= ε``, which is the paper's test for a matrix whose largest diagonal entry is 1 and
means the same in any units; ``criterion="paper"`` is the test as printed. A and d are
uploaded times the powers of two that bring their largest entries near 1, and each
right-hand side of a solve likewise (all exact), so that neither a tiny A (1e-20, whose
A D² Aᵀ float32 would flush to zero) nor a huge one loses its digits on the GPU.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from .adat import form
from .cholesky import FORMS, factor, solve_with_factor
from .dense_common import power_of_two_exponent
from .errors import NotPositiveDefiniteError
from .stream import Stream, check_array

#: the convergence tests of Algorithm 1: ``"scaled"`` (the default, beyond the paper) divides the
#: paper's ||r|| / ||x|| by the largest diagonal entry of A D² Aᵀ (the same test in any units)
CRITERIA = ("scaled", "paper")

__all__ = ["lstsq_weighted", "LstsqResult"]


@dataclass
class LstsqResult:
    """x (float64), the unrefined x0 (float32 solve), the refinement history (one dict per step:
    iteration, residual_norm, correction_norm, criterion: the number the test compares with
    ``tol``), ``converged`` and timings."""

    x: np.ndarray
    x0: np.ndarray
    history: list = field(default_factory=list)
    converged: bool = False
    gpu_seconds: float = 0.0
    refine_seconds: float = 0.0

    @property
    def iterations(self) -> int:
        return len(self.history)

    def __iter__(self):  # x, history = lstsq_weighted(...)
        return iter((self.x, self.history))


def lstsq_weighted(A, d, b, *, refine: bool = True, tol: float = 1e-10, maxiter: int = 100,
                   storage: str = "full", form_cholesky: str = "outer", criterion: str = "scaled") -> LstsqResult:
    """Weighted least squares on the GPU, with mixed-precision iterative refinement.

    Solves min_x ||D (b - Aᵀ x)||² by the normal equations A D² Aᵀ x = A D² b (equation (3) of
    001): A D² Aᵀ is formed (:func:`gpgpu.adat`) and factored (:func:`gpgpu.cholesky`) on the GPU in
    float32, and Algorithm 1 of 001 refines the float32 solution with residuals computed in
    float64 on the CPU. By default (``criterion="scaled"``, beyond the paper) its test
    ||r|| / ||x|| is divided by the largest diagonal entry of A D² Aᵀ, the same test in any units.

    Parameters
    ----------
    A : (m, n) array_like
        m <= n, full row rank: m unknowns, n observations.
    d : (n,) array_like
        The diagonal of D² (the stream d of 001), non-negative.
    b : (n,) array_like
        The observations.
    refine : bool, optional
        Apply Algorithm 1 (mixed-precision refinement); otherwise return the float32 solve x⁰.
    tol : float, optional
        Algorithm 1's ε.
    maxiter : int, optional
        Algorithm 1's iteration limit.
    storage : {"full", "packed"}, optional
        Format of A D² Aᵀ and its factor (001's packed format, section 3.3).
    form_cholesky : {"outer", "inner"}, optional
        The Cholesky form that factors A D² Aᵀ (000's two forms).
    criterion : {"scaled", "paper"}, optional
        ``||r|| / (max_i (A D² Aᵀ)_ii ||x||) <= tol``, or the paper's ``||r|| / ||x|| <= tol``.

    Returns
    -------
    result : LstsqResult
        ``x``, ``x0``, ``history``, ``converged``, ``iterations``; unpacks as ``x, history``.

    Raises
    ------
    ValueError
        More rows than columns, shapes that do not match, a negative weight, or a bad option.
    NotPositiveDefiniteError
        A D² Aᵀ is not positive definite in float32 (A, on its weighted columns, lacks rank m).

    See Also
    --------
    gpgpu.adat : Form A D² Aᵀ.
    gpgpu.cho_solve : Solve with a Cholesky factor.

    Examples
    --------
    >>> import numpy as np
    >>> import gpgpu
    >>> rng = np.random.default_rng(0)
    >>> A, d, b = rng.random((4, 8)), rng.random(8), rng.random(8)
    >>> result = gpgpu.lstsq_weighted(A, d, b)
    >>> result.converged
    True
    >>> np.allclose(result.x, np.linalg.solve(A @ np.diag(d) @ A.T, A @ (d * b)))
    True
    """
    if not (isinstance(tol, (int, float)) and np.isfinite(tol) and tol > 0):
        raise ValueError(f"lstsq_weighted: tol must be a positive finite number, got {tol!r}")
    if isinstance(maxiter, bool) or not isinstance(maxiter, (int, np.integer)) or maxiter < 0:
        raise ValueError(f"lstsq_weighted: maxiter must be a non-negative integer, got {maxiter!r}")
    if storage not in ("full", "packed"):
        raise ValueError(f"lstsq_weighted: storage must be 'full' or 'packed', got {storage!r}")
    if form_cholesky not in FORMS:
        raise ValueError(f"lstsq_weighted: form_cholesky must be one of {FORMS}, got {form_cholesky!r}")
    if criterion not in CRITERIA:
        raise ValueError(f"lstsq_weighted: criterion must be one of {CRITERIA}, got {criterion!r}")
    # validate the inputs as given (complex, NaN, shapes against the texture limit) before any
    # conversion: np.asarray(..., float64) would drop an imaginary part with only a warning
    A32 = check_array(A, "A", ndim=(2,))
    check_array(d, "d", ndim=(1,)), check_array(b, "b", ndim=(1,))
    A64 = np.asarray(A, dtype=np.float64)
    d64 = np.asarray(d, dtype=np.float64)
    b64 = np.asarray(b, dtype=np.float64)
    m, n = A64.shape
    if d64.shape != (n,) or b64.shape != (n,):
        raise ValueError(f"lstsq_weighted: A is {m} x {n}, so d and b need length {n}; got {d64.shape} and {b64.shape}")
    if m > n:
        raise ValueError(f"lstsq_weighted: A is {m} x {n}, more rows than columns, so the {m} x {m} "
                         f"matrix A D² Aᵀ has rank at most {n} and is singular. 001's A is m x n with "
                         f"m <= n: m unknowns, n observations (pass A.T if your observations are A's rows)")
    if np.any(d64 < 0):
        raise ValueError("lstsq_weighted: d is the diagonal of D², it must be non-negative")
    rhs = A64 @ (d64 * b64)  # A D² b in double precision
    # A and d uploaded times the powers of two that bring their largest entries near 1:
    # C_s = 2^(2 ea + ed) A D² Aᵀ (module notes)
    ea = power_of_two_exponent(float(np.abs(A64).max(initial=0.0)))
    ed = power_of_two_exponent(float(d64.max(initial=0.0)))
    t0 = time.perf_counter()
    with Stream.from_array(np.ldexp(A64, ea).astype(np.float32), "A") as As, \
            Stream.from_array(np.ldexp(d64, ed), "d") as ds:
        C = form(As, ds, storage=storage)
    try:
        L = factor(C, m, form=form_cholesky, storage=storage)
    except NotPositiveDefiniteError as exc:
        raise NotPositiveDefiniteError(exc.k, m, hint=(
            "A D² Aᵀ must be symmetric positive definite: A needs full row rank, and enough "
            "non-zero weights d that the columns of A they keep still have rank m.")) from None
    finally:
        C.release()
    try:
        return _refined(L, m, storage, NormalEquations(A64, d64, rhs, 2 * ea + ed),
                        Refinement(refine, tol, maxiter, criterion), t0)
    finally:
        L.release()


def _solve_scaled(L, m, storage, v: np.ndarray, e_c: int, what: str) -> np.ndarray:
    """(A D² Aᵀ)⁻¹ v in float64 with the factor L of C_s = 2^e_c A D² Aᵀ: v uploaded times the
    power of two that brings its largest entry near 1, the solution scaled back."""
    ev = power_of_two_exponent(float(np.abs(v).max(initial=0.0)))
    with Stream.from_array(np.ldexp(v, ev).astype(np.float32), what) as vs:
        zs = solve_with_factor(L, vs, m, storage)
    z = np.ldexp(zs.to_array().astype(np.float64), e_c - ev)
    zs.release()
    return z


@dataclass(frozen=True)
class NormalEquations:
    """A D² Aᵀ x = A D² b in float64 on the CPU: A, d (the diagonal of D²), the right-hand side
    ``rhs`` = A D² b, and ``e_c``, the power of two of the GPU's factor L: L Lᵀ = C_s = 2^e_c A D² Aᵀ."""

    A: np.ndarray
    d: np.ndarray
    rhs: np.ndarray
    e_c: int


@dataclass(frozen=True)
class Refinement:
    """Algorithm 1's settings: whether to refine, its ε (``tol``), its iteration limit and its
    test (``criterion``, one of :data:`CRITERIA`)."""

    refine: bool
    tol: float
    maxiter: int
    criterion: str


def _refined(L, m, storage, system: NormalEquations, settings: Refinement, t0) -> LstsqResult:
    """x⁰ from the factor, then Algorithm 1's refinement (its test by ``settings.criterion``)."""
    A64, d64, rhs, e_c = system.A, system.d, system.rhs, system.e_c
    refine, tol, maxiter, criterion = settings.refine, settings.tol, settings.maxiter, settings.criterion
    x0 = _solve_scaled(L, m, storage, rhs, e_c, "A D^2 b")
    t1 = time.perf_counter()
    result = LstsqResult(x=x0.copy(), x0=x0, gpu_seconds=t1 - t0)
    if not refine:
        return result
    size = float(np.max((A64 * A64) @ d64, initial=0.0)) if criterion == "scaled" else 1.0
    x = x0.copy()
    for k in range(maxiter):
        r = rhs - A64 @ (d64 * (A64.T @ x))  # Algorithm 1: residual in double on the CPU
        z = _solve_scaled(L, m, storage, r, e_c, "residual")
        x = x + z
        crit = np.linalg.norm(r) / max(size * np.linalg.norm(x), 1e-300)
        result.history.append({"iteration": k, "residual_norm": float(np.linalg.norm(r)),
                               "correction_norm": float(np.linalg.norm(z)), "criterion": float(crit)})
        if crit <= tol:
            result.converged = True
            break
    result.x = x
    result.refine_seconds = time.perf_counter() - t1
    return result
