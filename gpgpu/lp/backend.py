"""The operation set Algorithm 3 of paper 000 is written against.

Paper 000 (section 4.2) builds Mehrotra's predictor-corrector method from a handful of kernels:
level 1 (inner product, inf_norm, smin, saxpy and variants, line-search), level 2 (sgemv,
forward and backward substitution) and level 3 (adat, chol). :class:`Backend` is that set as
an abstract class; :mod:`gpgpu.lp.mehrotra` calls nothing else, so one algorithm runs on numpy
(:class:`~gpgpu.lp.numpy_backend.NumpyBackend`, float32 or float64) and on the GPU
(``gpgpu.lp.gpu_backend.GPUBackend``).

Vectors are opaque handles owned by the backend: the algorithm only passes them back in.
Every operation that answers with a number on the CPU (a "read-back", which on the GPU stalls
the pipeline, section 4.2 of 000) adds to :attr:`Backend.readbacks`.

Semantics of each operation (``V`` a vector handle, ``a`` a Python float):

============================  ==============================================================
``vector(arr) -> V``          upload a 1-D float64 numpy array
``to_numpy(V) -> ndarray``    download as float64 (1 read-back)
``free(V)``                   release a vector (a no-op where memory is garbage collected)
``dot(x, y) -> float``        x^T y (1 read-back)
``norm_inf(x) -> float``      max_i |x_i| (1 read-back)
``vmin(x) -> float``          min_i x_i, the smin kernel (1 read-back); only Mehrotra's
                              starting point uses it
``axpy(a, x, y) -> V``        a x + y, new vector
``scale(a, x) -> V``          a x
``mul(x, y) -> V``            x_i y_i
``div(x, y) -> V``            x_i / y_i
``add_scalar(x, a) -> V``     x_i + a
``matvec(x) -> V``            A x (length m)
``rmatvec(y) -> V``           A^T y (length n)
``matvec_add(x, y, a)``       a A x + y; ``rmatvec_add(v, z, a)``: a A^T v + z (sgemv with
                              beta = 1; by default matvec and axpy)
``mul_add(x, y, z, a, b)``    a (x .* y) + b z (by default mul, scale and axpy)
``mul_shift_div(x, y, c, z)`` (x .* y + c) ./ z (by default mul, add_scalar and div)
``stepped_dot(x, dx, a, s, ds, b)``  (x + a dx)^T (s + b ds), 1 read-back (by default two axpy
                              and dot)
``entries_many(vectors, idx)`` ``[entries(v, idx) for v in vectors]`` (by default; a back end
                              may gather them all into one read-back)
``scalars(requests)``         ``[dot(x, y) or norm_inf(x) for each ("dot", x, y) or
                              ("norm_inf", x)]`` (by default; a back end may read them back at
                              once)
``max_step(x, dx)``           largest alpha in [0, 1] with x + alpha dx >= 0, (4.15)-(4.16)
                              (1 read-back); with ``index=True`` answers ``(alpha, i)``, ``i``
                              the blocking index (the argmin of -x_i/dx_i over dx_i < 0) when
                              that ratio is <= 1, else ``-1`` (and alpha = 1)
``entries(x, idx)``           the entries ``x[idx]`` as a float64 array (1 read-back per entry);
                              Mehrotra's step-length heuristic reads x, dx, s, ds at the
                              blocking indexes
``factor_normal(d, shift=0) -> int``   form M = A diag(d) A^T (+ shift I) (adat) and factor M = L L^T (chol),
                              replacing tiny or negative pivots by a huge value; answers how
                              many were replaced (1 read-back)
``solve_normal(r) -> V``      z with M z = r by forward and backward substitution with L; with
                              ``refine=True``, mixed-precision iterative refinement
                              (:func:`refine_solve`)
============================  ==============================================================

Precision and ``refine``: without refinement everything (vectors, A, M, L) is in the backend's
precision -- float32 for the GPU, as in the paper. ``refine=True`` is the extension beyond the
paper that makes eps = 1e-8 reachable: the O(m^2 n) formation of M and its O(m^3) Cholesky factor
stay in float32 (the part the paper puts on the GPU), while the O(mn) vector work and the
refinement residual ``r - M z = r - A (d * (A^T z))`` are float64 on the CPU, as in the
combined CPU-GPU solvers the paper's conclusion points to ([GST05]). Iterates stored in float32
cannot satisfy (6.1)-(6.3) at 1e-8 (float32's unit roundoff is 6e-8), hence float64 vectors.
"""
from __future__ import annotations

import abc

import numpy as np
import scipy.sparse as sp

from .bounds import BOUNDS, BoundRows

__all__ = ["Backend", "refine_solve", "BACKENDS", "PrecisionExhausted", "REFINE_RTOL", "default_pivot_tol", "huge_pivot"]

BACKENDS = ("gpu", "numpy32", "numpy64")
#: the refinement's default target: ||r - M z||_inf <= REFINE_RTOL ||r||_inf
REFINE_RTOL = 1e-13
#: the largest finite float32
FLOAT32_MAX = float(np.finfo(np.float32).max)


class PrecisionExhausted(ArithmeticError):
    """A quantity the method needs does not fit the backend's precision (Theta = x/s beyond
    float32's range for the GPU's normal equations). The solver answers numerical trouble with
    the best point met and this message; it never lets the error out of ``solve``."""


class Backend(abc.ABC):
    """The operations that Algorithm 3 of paper 000 is written against, as an abstract back end.

    Mehrotra's method (:func:`~gpgpu.lp.mehrotra.mehrotra`) calls nothing else, so one algorithm
    runs on numpy (:class:`~gpgpu.lp.numpy_backend.NumpyBackend`, float32 or float64) and on the GPU
    (``gpgpu.lp.gpu_backend.GPUBackend``): the kernels of section 4.2 of paper 000, level 1 (inner
    product, inf_norm, smin, saxpy, line search), level 2 (sgemv, substitution) and level 3 (adat,
    chol: :meth:`factor_normal`, :meth:`solve_normal`), on vector handles the back end owns. Each
    operation that answers a number on the CPU is a read-back (a stall on the GPU) and is counted in
    :attr:`readbacks`; the module notes give each operation's meaning. :func:`get_backend` builds one
    by name.

    Parameters
    ----------
    problem : Problem
        The standard-form LP (4.1)-(4.3); the back end keeps A in its own storage.
    cholesky : {"outer", "inner"}
        Algorithm 2 (outer product) or Algorithm 1 (inner product) of paper 000 in :meth:`factor_normal`.
    refine : bool
        Mixed-precision iterative refinement in :meth:`solve_normal` (beyond the paper).
    bounds : {"implicit", "rows"}
        Upper-bound rows eliminated from the normal equations (:mod:`gpgpu.lp.bounds`), or factored.
    **kw
        A subclass's options; the base class takes none.

    Attributes
    ----------
    name : str
        The back end's name.
    readbacks : int
        Scalars or vectors read back to the CPU so far.
    m, n : int
        The standard form's size.
    m_normal : int
        The order of the normal matrix formed and factored.

    Raises
    ------
    ValueError
        An unknown ``cholesky`` or ``bounds``.
    TypeError
        An option the back end does not take.

    See Also
    --------
    get_backend : A back end by name.

    Examples
    --------
    >>> import numpy as np
    >>> from gpgpu import lp
    >>> p = lp.Problem.from_arrays(np.array([[1.0, 1.0]]), [1.0], [1.0, 2.0])
    >>> be = lp.get_backend("numpy64", p)
    >>> isinstance(be, lp.Backend), be.m, be.n
    (True, 1, 2)
    >>> x = be.vector(np.array([0.5, 0.5]))
    >>> be.dot(x, x), be.readbacks
    (0.5, 1)
    """

    name = "abstract"

    def __init__(self, problem, cholesky="outer", refine=False, bounds="implicit", **kw):
        if cholesky not in ("outer", "inner"):
            raise ValueError(f"cholesky must be 'outer' or 'inner', got {cholesky!r}")
        if bounds not in BOUNDS:
            raise ValueError(f"bounds must be 'implicit' (upper bounds in the Newton system's diagonal, the "
                             f"normal matrix of the problem's own rows) or 'rows' (paper 000's standard form: "
                             f"a row of the normal matrix for each bound), got {bounds!r}")
        if kw:
            raise TypeError(f"unexpected backend options: {sorted(kw)}")
        self.problem = problem
        self.cholesky = cholesky
        self.refine = bool(refine)
        self.shift = 0.0          # delta of the last factor_normal (M = A diag(d) A^T + delta I)
        self.m, self.n = problem.A.shape
        self.readbacks = 0
        #: the bound rows eliminated from the normal equations (:mod:`gpgpu.lp.bounds`), or None
        self.bounds = BoundRows.detect(problem.A) if bounds == "implicit" else None
        #: rows of the normal matrix that is formed and factored
        self.m_normal = self.m if self.bounds is None else self.bounds.m
        self._d = None            # the weights of the last factor_normal (for the bound rows' elimination)

    @property
    def A_normal(self):
        """The rows of A whose normal matrix is formed (scipy.sparse, float64): all of A, or its
        main rows when bound rows are eliminated."""
        return self.problem.A if self.bounds is None else self.bounds.A_main

    def apply_normal(self, d, v, shift: float = 0.0):
        """A_normal (d .* (A_normalᵀ v)) + shift v in float64 on the CPU: the refinement's
        product with the normal matrix (A_normal and its transpose kept as CSR, made once)."""
        if getattr(self, "_AT", None) is None:
            self._A = sp.csr_matrix(self.A_normal, dtype=np.float64)
            self._AT = self._A.T.tocsr()
        return shifted(self._A @ (d * (self._AT @ v)), shift, v)

    # -------------------------------------------------------------- vectors
    @abc.abstractmethod
    def vector(self, arr):
        """Upload the 1-D float64 array ``arr``; answers a handle."""

    @abc.abstractmethod
    def to_numpy(self, x) -> np.ndarray:
        """Download ``x`` as a float64 numpy array (1 read-back)."""

    def free(self, x) -> None:
        """Release ``x`` (default: nothing to do)."""

    # -------------------------------------------------------------- level 1
    @abc.abstractmethod
    def dot(self, x, y) -> float:
        """x^T y, the inner product kernel (1 read-back)."""

    @abc.abstractmethod
    def norm_inf(self, x) -> float:
        """||x||_inf, the inf_norm kernel (1 read-back)."""

    @abc.abstractmethod
    def vmin(self, x) -> float:
        """min_i x_i, the smin kernel (1 read-back)."""

    @abc.abstractmethod
    def axpy(self, a, x, y):
        """a x + y (saxpy), a new vector."""

    @abc.abstractmethod
    def scale(self, a, x):
        """a x."""

    @abc.abstractmethod
    def mul(self, x, y):
        """Element-wise x_i y_i."""

    @abc.abstractmethod
    def div(self, x, y):
        """Element-wise x_i / y_i."""

    @abc.abstractmethod
    def add_scalar(self, x, a):
        """x_i + a."""

    @abc.abstractmethod
    def max_step(self, x, dx, index=False):
        """Largest alpha in [0, 1] with x + alpha dx >= 0 ((4.15)-(4.16)); 1 read-back.

        With ``index=True`` answers ``(alpha, i)``: ``i`` is the blocking index, the argmin
        of ``-x_i / dx_i`` over ``dx_i < 0`` (first one on ties) when that minimum is <= 1
        (a full step would reach or cross zero there), else ``-1`` (and alpha = 1).
        """

    def bound_free_splits(self, x, partner: np.ndarray, bound: float = 1.0, s=None, floor: float = 0.0):
        """The free-split safeguard (beyond the paper): for each split free variable v = x+ -
        x- (``partner[j]``: the index of the other half of entry j's split, -1 if none), both
        halves lowered by max(min(x+, x-) - bound (1 + |x+ - x-|), 0), but neither below
        ``floor / s`` of its own (with ``s`` the dual slacks and ``floor`` a fraction of mu: a
        half kept far below its centred value mu / s blocks the dual step). v and A x are
        unchanged. This default works on numpy vectors; the GPU back end draws it (kernel
        ``free_split_safeguard``)."""
        x = np.asarray(x)
        j = np.flatnonzero(partner >= 0)
        out = x.copy()
        if j.size:
            xj, xo = x[j], x[partner[j]]
            lower = np.minimum(xj, xo) - bound * (1.0 + np.abs(xj - xo))
            if s is not None and floor > 0.0:
                s = np.asarray(s)
                with np.errstate(divide="ignore"):
                    lower = np.minimum(lower, np.minimum(xj - floor / s[j], xo - floor / s[partner[j]]))
            out[j] = xj - np.maximum(lower, 0.0)
        return out

    @abc.abstractmethod
    def entries(self, x, idx) -> np.ndarray:
        """``x[idx]`` for a short list of indexes, as float64 (1 read-back per entry)."""

    # -------------------------------------------------------------- level 2
    @abc.abstractmethod
    def matvec(self, x):
        """A x (sgemv), length m."""

    @abc.abstractmethod
    def rmatvec(self, y):
        """A^T y (sgemv on the transpose), length n."""

    # ------------------------------------------------- composites (defaults: the operations above)
    def matvec_add(self, x, y, alpha: float = 1.0):
        """alpha A x + y: the residuals and right-hand sides of (4.12)-(4.13). The default is
        ``axpy(alpha, matvec(x), y)``; a back end may do it in one operation (the GPU's sgemv
        with beta = 1, ``fuse=True``)."""
        ax = self.matvec(x)
        out = self.axpy(alpha, ax, y)
        self.free(ax)
        return out

    def rmatvec_add(self, v, z, alpha: float = 1.0):
        """alpha A^T v + z, as :meth:`matvec_add`."""
        atv = self.rmatvec(v)
        out = self.axpy(alpha, atv, z)
        self.free(atv)
        return out

    def mul_add(self, x, y, z, a: float = 1.0, b: float = 1.0):
        """a (x .* y) + b z, element-wise: the directions of (4.12)-(4.14). The default is
        ``axpy(a, mul(x, y), z)`` (z scaled by b first unless b = 1)."""
        xy = self.mul(x, y)
        bz = z if b == 1.0 else self.scale(b, z)
        out = self.axpy(a, xy, bz)
        self.free(xy)
        if bz is not z:
            self.free(bz)
        return out

    def mul_shift_div(self, x, y, c: float, z):
        """(x .* y + c) ./ z, element-wise: Mehrotra's corrector right-hand side S^-1 r_xs. The
        default is ``div(add_scalar(mul(x, y), c), z)``."""
        xy = self.mul(x, y)
        shifted = self.add_scalar(xy, c)
        out = self.div(shifted, z)
        self.free(xy)
        self.free(shifted)
        return out

    def stepped_dot(self, x, dx, a: float, s, ds, b: float) -> float:
        """(x + a dx)^T (s + b ds): the duality measure after a step (Mehrotra's mu_aff). The
        default is ``dot(axpy(a, dx, x), axpy(b, ds, s))`` (1 read-back)."""
        xa, sb = self.axpy(a, dx, x), self.axpy(b, ds, s)
        out = self.dot(xa, sb)
        self.free(xa)
        self.free(sb)
        return out

    def scalars(self, requests) -> list:
        """The values of several inner products ``("dot", x, y)`` and norms ``("norm_inf", x)``,
        in order: the objectives, residual norms and duality measure at the top of an iteration.
        The default calls :meth:`dot` and :meth:`norm_inf` (one read-back each)."""
        out = []
        for r in requests:
            if r[0] == "dot":
                out.append(self.dot(r[1], r[2]))
            elif r[0] == "norm_inf":
                out.append(self.norm_inf(r[1]))
            else:
                raise ValueError(f"scalars: requests are ('dot', x, y) or ('norm_inf', x), got {r[0]!r}")
        return out

    def entries_many(self, vectors, idx) -> list:
        """``[x[idx] for x in vectors]`` as float64 arrays: Mehrotra's step-length heuristic reads
        x, dx, s and ds at the blocking indexes. The default calls :meth:`entries` for each (one
        read-back per entry)."""
        return [self.entries(v, idx) for v in vectors]

    # -------------------------------------------------------------- level 3
    def factor_normal(self, d, shift: float = 0.0) -> int:
        """Form M = A diag(d) A^T + shift I (adat; the shift is the dual regularisation delta of
        ``mehrotra(..., regularize=True)``) and factor it, M = L L^T (chol).

        A pivot that is not larger than ``pivot_tol`` times the diagonal entry of M it came
        from (or is not finite) is replaced by a huge value, so that the matching component of
        the solution is ~0 ([Wri97] ch. 11); answers the number replaced (1 read-back).

        With bound rows eliminated (``bounds="implicit"``, :mod:`gpgpu.lp.bounds`) the matrix
        formed and factored is the Schur complement A_main diag(d~) A_mainᵀ + shift I of the
        main rows; :meth:`solve_normal` still solves with M.
        """
        self.shift = float(shift)
        if self.bounds is None:
            return self._factor_normal(d, shift)
        self._d = d
        weights = self._bound_weights(d, shift)
        try:
            return self._factor_normal(weights, shift)
        finally:
            self.free(weights)

    @abc.abstractmethod
    def _factor_normal(self, d, shift: float = 0.0) -> int:
        """:meth:`factor_normal` of the rows of :attr:`A_normal` with weights ``d`` (the back
        end's own)."""

    def _bound_weights(self, d, shift):
        """d~ of :meth:`gpgpu.lp.bounds.BoundRows.weights` (numpy vectors; the GPU back end
        draws it for its own)."""
        return self.bounds.weights(np.asarray(d), shift)

    def _eliminate_bounds(self, r):
        return self.bounds.eliminate(r, np.asarray(self._d), self.shift)

    def _back_substitute_bounds(self, z1, r):
        return self.bounds.back_substitute(z1, r, np.asarray(self._d), self.shift)

    def raise_precision(self) -> str | None:
        """Make the factors of the remaining iterations more precise, when this back end can;
        answers the new precision's name, or None (the default: it cannot). Called by the
        Mehrotra solver when its iteration stalls (:func:`~gpgpu.lp.mehrotra.mehrotra`)."""
        return None

    def solve_normal(self, r, rtol: float = REFINE_RTOL):
        """z with M z = r: forward then backward substitution with the current factor.

        With ``refine=True`` the answer is improved by :func:`refine_solve` until its residual
        is at most ``rtol`` times r's (in the max norm). With bound rows eliminated, the
        right-hand side of the Schur system first, then its solution, then the bound rows' part
        (:mod:`gpgpu.lp.bounds`).
        """
        if self.bounds is None:
            return self._solve_normal(r, rtol)
        rhs = self._eliminate_bounds(r)
        z1 = self._solve_normal(rhs, rtol)
        out = self._back_substitute_bounds(z1, r)
        self.free(rhs)
        self.free(z1)
        return out

    @abc.abstractmethod
    def _solve_normal(self, r, rtol: float = REFINE_RTOL):
        """:meth:`solve_normal` with the factor of the rows of :attr:`A_normal`."""


def shifted(Mz, shift: float, z):
    """``Mz + shift z`` (the refinement's product with A diag(d) A^T + delta I); ``Mz`` itself when
    there is no shift, so that an inf in z stays an inf (0 * inf would be NaN)."""
    return Mz + shift * z if shift else Mz


def refine_solve(solve, apply_M, r, method="cg", max_steps=None, rtol=REFINE_RTOL, stats=None):
    """Mixed-precision iterative refinement of ``M z = r``, residuals in float64.

    Classic refinement is ``z += solve(r - M z)`` (preconditioned Richardson iteration with the
    low-precision factor as preconditioner). It stalls once ``cond(M) * u_32 >~ 1``, which
    happens in the last iterations of an interior-point method and whenever a pivot was
    replaced (the factor then misses a direction of M). ``method="cg"`` (the default) runs
    conjugate gradients preconditioned by the same solve on the same float64 residuals
    (Polak-Ribiere form, which tolerates the slightly inexact float32 preconditioner): the
    first step equals the classic one, and the few eigenvalues of L^{-1} M L^{-T} that lie away
    from 1 are resolved in a few more steps. Each step costs one low-precision solve (forward
    and backward substitution) plus ``A (d * (A^T p))`` in float64.

    Parameters
    ----------
    solve : callable
        ``solve(rhs) -> z`` with a low-precision factor of ``M`` (float64 in and out).
    apply_M : callable
        ``apply_M(z) -> M z`` in float64 (``A (d * (A^T z))`` with float64 ``A`` and ``d``).
    r : ndarray, float64
    method : {"cg", "richardson"}
    max_steps : int, optional
        Most corrections (default 8 for "richardson", 50 for "cg").
    rtol : float
        Stop when ``||r - M z||_inf <= rtol * ||r||_inf``.
    stats : dict, optional
        Gets ``steps``, ``solves`` (the calls of ``solve``) and ``residual`` (final
        ``||r - M z||_inf``).

    Returns
    -------
    ndarray
        The iterate with the smallest residual. Richardson stops when a correction no longer
        halves the residual; CG when the best residual has not improved for 5 steps. A solve
        is made only where the steps go on: CG makes ``steps + 1`` solves at most (one for
        ``z``, one a step but the last), not one more whose answer no step would use.

    Raises
    ------
    PrecisionExhausted
        ``r`` is not finite, or the first solve's residual is not (the Mehrotra solver then
        goes on with a more precise factor, or ends in numerical trouble saying why).
    """
    if method not in ("cg", "richardson"):
        raise ValueError(f"refine method must be 'cg' or 'richardson', got {method!r}")
    if max_steps is None:
        max_steps = 8 if method == "richardson" else 50
    if not np.all(np.isfinite(r)):
        raise PrecisionExhausted("the right-hand side of the normal equations is no longer finite "
                                 "(the iterate overflowed)")
    z = solve(r)
    res = r - apply_M(z)
    rnorm = float(np.max(np.abs(res))) if res.size else 0.0
    if not np.isfinite(rnorm):
        raise PrecisionExhausted("the solve with the factor of the normal equations overflowed "
                                 "(the factor is too ill-conditioned for this iterate)")
    target = rtol * (float(np.max(np.abs(r))) if r.size else 0.0)
    steps, solves = 0, 1
    if method == "richardson":
        while steps < max_steps and rnorm > target:
            z_new = z + solve(res)
            solves += 1
            res_new = r - apply_M(z_new)
            rnorm_new = float(np.max(np.abs(res_new)))
            if not np.isfinite(rnorm_new) or rnorm_new >= rnorm:
                break
            z, res, steps = z_new, res_new, steps + 1
            shrink, rnorm = rnorm_new / rnorm, rnorm_new
            if shrink > 0.5:
                break
    else:
        # a solve that overflowed float32 (inf in w) ends the steps below by its NaN products;
        # numpy is told not to warn of them
        with np.errstate(invalid="ignore", over="ignore"):
            best_z, best_norm, since_best = z, rnorm, 0

            def going_on():                                 # tested before each solve, so that no
                return steps < max_steps and best_norm > target and since_best < 5   # solve goes unused
            if going_on():
                w = solve(res)                              # preconditioned residual
                solves += 1
                p = w.copy()
                rw = float(res @ w)
            while going_on() and rw > 0:
                Mp = apply_M(p)
                pMp = float(p @ Mp)
                if not (pMp > 0 and np.isfinite(pMp)):
                    break
                a = rw / pMp
                z = z + a * p
                res_new = res - a * Mp
                steps += 1
                rnorm = float(np.max(np.abs(res_new)))
                if not np.isfinite(rnorm):
                    break
                if rnorm < best_norm:
                    best_z, best_norm, since_best = z, rnorm, 0
                else:
                    since_best += 1
                if not going_on():
                    break
                w_new = solve(res_new)
                solves += 1
                rw_new = float(res_new @ w_new)
                beta = max(float(res_new @ (w_new - w)) / rw, 0.0)      # Polak-Ribiere
                p = w_new + beta * p
                res, w, rw = res_new, w_new, rw_new
        z, rnorm = best_z, best_norm
    if stats is not None:
        stats["steps"] = steps
        stats["solves"] = solves
        stats["residual"] = rnorm
    return z


def default_pivot_tol(dtype) -> float:
    """Relative pivot tolerance: a pivot <= tol * (its diagonal entry of M) is replaced.

    1e-13 in float64 and 1e-7 (about float32's unit roundoff) in float32. A larger float32
    tolerance (1e-6) also replaces pivots that are small but meaningful; the factor then
    misses a direction of M, which the refinement of ``refine=True`` cannot recover (agg3
    stalls at 5e-5 with the inner-product form); 1e-7 solves all ten NETLIB problems of
    Table 3 both at the paper's eps and, refined, at 1e-8.
    """
    return 1e-13 if np.dtype(dtype) == np.float64 else 1e-7


def huge_pivot(dtype) -> float:
    """The value a replaced pivot takes (its square root divides the column to ~0)."""
    return 1e64 if np.dtype(dtype) == np.float64 else 1e30
