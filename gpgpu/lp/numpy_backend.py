"""The operation set of Algorithm 3 (paper 000) in numpy, in float32 or float64.

Paper 000 compares its GPU code with "a MATLAB version implementing exactly the same
algorithm using the dense constraint matrix with single precision" (section 6.2.2, Table 3).
:class:`NumpyBackend` with ``dtype=np.float32`` plays that part; ``np.float64`` is the
double-precision reference and the CPU baseline. Each operation mirrors one kernel of section
4.2. The Cholesky factorization is, with ``factorization="loop"`` (the paper preset), the
paper's own loops (Algorithm 1, inner product; Algorithm 2, outer product), vectorised per
column, with the small-pivot replacement of [Wri97] ch. 11; by default (beyond the paper)
LAPACK's blocked ``potrf`` on all cores with the same replacement (:mod:`gpgpu.lp.lapack`), and
A D² Aᵀ from the sparse A (``adat="sparse"``) or by a dense BLAS product (``adat="dense"``, the
paper's dense method).
"""
from __future__ import annotations

import functools
import os

import numpy as np
import scipy.sparse as sp

from .backend import REFINE_RTOL, Backend, default_pivot_tol, huge_pivot, refine_solve
from .lapack import guarded_cholesky, guarded_solve

#: the factorizations of :class:`NumpyBackend`: LAPACK's (beyond the paper) or the paper's loop
FACTORIZATIONS = ("lapack", "loop")
#: how :class:`NumpyBackend` forms A D² Aᵀ: from the sparse A, or by a dense BLAS product
NUMPY_ADATS = ("sparse", "dense")
#: BLAS threads of :class:`NumpyBackend` by default: one below THREADS_FROM rows of the normal
#: matrix, else up to THREADS_MAX (see NumpyBackend.blas_threads)
THREADS_FROM = 300
THREADS_MAX = 8

__all__ = ["NumpyBackend", "cholesky_outer", "cholesky_inner", "forward_backward",
           "default_pivot_tol", "huge_pivot", "FACTORIZATIONS", "NUMPY_ADATS"]


def _quiet(f):
    """Run ``f`` without numpy floating-point warnings (overflow is the algorithm's business:
    it reads back non-finite numbers and stops with ``numerical_trouble``)."""
    @functools.wraps(f)
    def g(*a, **kw):
        with np.errstate(all="ignore"):
            return f(*a, **kw)
    return g


def _bad(p, ref, tol):
    return not (np.isfinite(p) and p > tol * ref)


def cholesky_outer(M, pivot_tol=None, huge=None):
    """Outer-product (right-looking) Cholesky, Algorithm 2 of 000, in ``M``'s dtype.

    At step k: square root of the pivot, normalization of column k below it, then the
    update of the trailing square submatrix by the outer product of that column (the paper's
    "square update"). A pivot that is not finite or not above ``pivot_tol * M0[k, k]`` (the
    original diagonal) is replaced by ``huge`` ([Wri97] ch. 11).

    Returns
    -------
    L : ndarray
        Lower triangular factor (the strict upper triangle is zero).
    replaced : int
        Number of pivots replaced.
    """
    dt = M.dtype
    tol = default_pivot_tol(dt) if pivot_tol is None else pivot_tol
    big = dt.type(huge_pivot(dt) if huge is None else huge)
    S = np.array(M, dtype=dt, copy=True)
    diag0 = np.diagonal(S).copy()
    m = S.shape[0]
    replaced = 0
    for k in range(m):
        p = S[k, k]
        if _bad(p, diag0[k], tol):
            p = big
            replaced += 1
        lkk = np.sqrt(p)                                         # square root kernel
        S[k, k] = lkk
        col = S[k + 1:, k] / lkk                                 # normalization kernel
        S[k + 1:, k] = col
        S[k + 1:, k + 1:] -= np.multiply.outer(col, col)         # submatrix update kernel
    return np.tril(S), replaced


def cholesky_inner(M, pivot_tol=None, huge=None):
    """Inner-product (left-looking) Cholesky, Algorithm 1 of 000, in ``M``'s dtype.

    Column k is ``M[k:, k]`` minus the inner products of the rows of the finished columns
    ``L[k:, :k]`` with ``L[k, :k]``, then square root and normalization; same pivot rule
    and return values as :func:`cholesky_outer`.
    """
    dt = M.dtype
    tol = default_pivot_tol(dt) if pivot_tol is None else pivot_tol
    big = dt.type(huge_pivot(dt) if huge is None else huge)
    M = np.asarray(M, dtype=dt)
    m = M.shape[0]
    L = np.zeros_like(M)
    replaced = 0
    for k in range(m):
        v = M[k:, k] - L[k:, :k] @ L[k, :k]                     # inner product subtraction
        p = v[0]
        if _bad(p, M[k, k], tol):
            p = big
            replaced += 1
        lkk = np.sqrt(p)                                         # square root
        L[k, k] = lkk
        L[k + 1:, k] = v[1:] / lkk                               # normalization
    return L, replaced


def forward_backward(L, r):
    """Solve L L^T z = r by column-oriented forward then backward substitution in L's dtype."""
    z = np.array(r, dtype=L.dtype, copy=True)
    m = z.size
    for k in range(m):                                           # L y = r
        z[k] /= L[k, k]
        z[k + 1:] -= z[k] * L[k + 1:, k]
    for k in range(m - 1, -1, -1):                               # L^T z = y
        z[k] /= L[k, k]
        z[:k] -= z[k] * L[k, :k]
    return z


class NumpyBackend(Backend):
    """:class:`~gpgpu.lp.backend.Backend` on numpy arrays in one precision.

    Parameters
    ----------
    problem : Problem
    dtype : np.float32 or np.float64
        Precision of A, the vectors, M and L ("numpy32" / "numpy64"). With ``refine=True``
        only M and L are in ``dtype``; vectors and matvecs are float64 (see
        :mod:`gpgpu.lp.backend`).
    cholesky : {"outer", "inner"}
        The paper's loop with ``factorization="loop"``; LAPACK's factorization is
        right-looking ("outer") and refuses "inner".
    refine : bool
    pivot_tol : float, optional
        Relative pivot tolerance (default :func:`default_pivot_tol`).
    fast_solve : bool
        With ``factorization="loop"``: ``scipy.linalg.solve_triangular`` (same precision)
        instead of the explicit substitution loops; default True (the loops are slow in Python
        for m ~ 500).
    refine_method : {"cg", "richardson"}
        See :func:`~gpgpu.lp.backend.refine_solve`.
    bounds : {"implicit", "rows"}
        Upper bounds in the Newton system (default, :mod:`gpgpu.lp.bounds`) or as rows of the
        normal matrix (paper 000's standard form).
    factorization : {"lapack", "loop"}
        The normal matrix factored by LAPACK's ``potrf`` and solved by ``potrs`` on all cores,
        with the pivot replacement of the loop (default, beyond the paper:
        :func:`gpgpu.lp.lapack.guarded_cholesky`), or by the paper's Algorithm 1 or 2 loop
        (``cholesky``).
    adat : {"sparse", "dense"}
        A D² Aᵀ as a sparse product made dense (default) or as the dense BLAS product of the
        paper's dense method; the same sums in another order.
    threads : int, optional
        BLAS threads for the solve (:meth:`blas_threads`, through threadpoolctl where it is
        installed). None: one below :data:`THREADS_FROM` rows of the normal matrix, else up to
        :data:`THREADS_MAX` -- never more than a limit already set around the solve.

    Notes
    -----
    With ``refine=True`` and float32 factors, :meth:`raise_precision` answers "float64" (the
    factors of the remaining iterations in float64), as the GPU back end raises its factors to
    float-float: the float32 emulation of the GPU's default path.
    """

    def __init__(self, problem, dtype=np.float64, cholesky="outer", refine=False,
                 pivot_tol=None, fast_solve=True, refine_method="cg", bounds="implicit",
                 factorization="lapack", adat="sparse", threads=None):
        super().__init__(problem, cholesky=cholesky, refine=refine, bounds=bounds)
        self.fdtype = np.dtype(dtype)                 # factor (M, L) precision
        if self.fdtype not in (np.float32, np.float64):
            raise ValueError(f"dtype must be float32 or float64, got {dtype!r}")
        if factorization not in FACTORIZATIONS:
            raise ValueError(f"factorization must be 'lapack' (LAPACK's potrf with the pivot replacement) or "
                             f"'loop' (paper 000's Algorithm 1 or 2), got {factorization!r}")
        if factorization == "lapack" and cholesky != "outer":
            raise ValueError(f"cholesky={cholesky!r} is a form of the paper's loop: pass factorization='loop' "
                             "(LAPACK's potrf is right-looking, the outer-product form)")
        if adat not in NUMPY_ADATS:
            raise ValueError(f"adat must be 'sparse' (A D² Aᵀ from the sparse A) or 'dense' (a dense BLAS "
                             f"product), got {adat!r}")
        self.factorization, self.adat = factorization, adat
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
            raise ValueError(f"threads must be a positive integer (BLAS threads) or None, got {threads!r}")
        self.threads = threads
        self.vdtype = np.dtype(np.float64) if refine else self.fdtype
        bits = 32 if self.fdtype == np.float32 else 64
        self.name = f"numpy{bits}" + ("+refine" if refine else "")
        m, n = problem.A.shape
        mn = self.m_normal
        # the dense method of paper 000: A dense in each precision used, M and L (m x m)
        self.A64 = problem.dense_A(np.float64, copies=1, extra_bytes=3 * mn * mn * self.fdtype.itemsize
                                   + mn * n * (self.vdtype.itemsize + self.fdtype.itemsize),
                                   method=f"the {self.name} backend")
        self.A = self.A64 if self.vdtype == np.float64 else self.A64.astype(self.vdtype)
        self._set_normal_rows()
        self.pivot_tol = default_pivot_tol(self.fdtype) if pivot_tol is None else pivot_tol
        self.fast_solve = fast_solve
        self.L = None
        self.d64 = None
        self.refine_method = refine_method
        self.refine_stats = []

    def _set_normal_rows(self) -> None:
        """The rows whose normal matrix is formed (all, or the main rows with bounds="implicit"),
        in float64 for the refinement and in the factor's precision for adat."""
        mn = self.m_normal
        self.A_normal64 = self.A64[:mn]
        if self.adat == "sparse":
            self.A_f = sp.csr_matrix(self.A_normal, dtype=self.fdtype)
        else:
            self.A_f = self.A_normal64 if self.fdtype == np.float64 else self.A_normal64.astype(self.fdtype)

    def blas_threads(self):
        """A context in which BLAS and LAPACK run on :attr:`threads` threads (or the rule of the
        class notes): the solve runs inside it. Measured on an H200 machine's 16-core Xeon at
        eps = 1e-8: 16 threads took 8 to 14 times as long as 8 on the NETLIB problems of 400 to
        1000 rows (thread start-up on small matrices), and one thread was fastest at 280 rows."""
        from contextlib import nullcontext

        try:
            from threadpoolctl import threadpool_info, threadpool_limits
        except ImportError:                       # not installed: the BLAS's own choice
            return nullcontext()
        want = self.threads
        if want is None:
            want = 1 if self.m_normal < THREADS_FROM else min(THREADS_MAX, os.cpu_count() or 1)
            now = [p.get("num_threads", want) for p in threadpool_info() if p.get("user_api") == "blas"]
            want = min([want] + now)
        return threadpool_limits(limits=want, user_api="blas")

    @classmethod
    def vector_operations(cls, problem) -> "NumpyBackend":
        """The float64 vector operations alone (level 1 and 2 on the sparse A, no normal
        matrix): what the GPU back end runs on the CPU with ``refine=True``."""
        self = cls.__new__(cls)
        Backend.__init__(self, problem, bounds="rows")
        self.fdtype = self.vdtype = np.dtype(np.float64)
        self.name = "numpy64"
        self.A = sp.csr_matrix(problem.A, dtype=np.float64)
        return self

    # -------------------------------------------------------------- vectors
    def vector(self, arr):
        return np.array(arr, dtype=self.vdtype, copy=True).ravel()

    def to_numpy(self, x):
        self.readbacks += 1
        return np.asarray(x, dtype=np.float64).copy()

    # -------------------------------------------------------------- level 1
    @_quiet
    def dot(self, x, y):
        self.readbacks += 1
        return float(np.dot(x, y))

    @_quiet
    def norm_inf(self, x):
        self.readbacks += 1
        return float(np.max(np.abs(x))) if x.size else 0.0

    @_quiet
    def vmin(self, x):
        self.readbacks += 1
        return float(np.min(x)) if x.size else 0.0

    @_quiet
    def axpy(self, a, x, y):
        return (self.vdtype.type(a) * x + y).astype(self.vdtype, copy=False)

    @_quiet
    def scale(self, a, x):
        return (self.vdtype.type(a) * x).astype(self.vdtype, copy=False)

    @_quiet
    def mul(self, x, y):
        return x * y

    @_quiet
    def div(self, x, y):
        return x / y

    @_quiet
    def add_scalar(self, x, a):
        return x + self.vdtype.type(a)

    @_quiet
    def max_step(self, x, dx, index=False):
        self.readbacks += 1
        neg = dx < 0
        alpha, i = 1.0, -1
        if np.any(neg):
            ratio = np.where(neg, -x / np.where(neg, dx, 1), np.inf)
            j = int(np.argmin(ratio))
            if ratio[j] <= 1.0:
                alpha, i = max(float(ratio[j]), 0.0), j
        return (alpha, i) if index else alpha

    def entries(self, x, idx):
        idx = np.atleast_1d(np.asarray(idx, dtype=np.int64))
        self.readbacks += idx.size
        return np.asarray(x[idx], dtype=np.float64)

    # -------------------------------------------------------------- level 2
    @_quiet
    def matvec(self, x):
        return self.A @ x

    @_quiet
    def rmatvec(self, y):
        return self._transposed() @ y

    def _transposed(self):
        """Aᵀ: the view where A is dense; where it is sparse a CSR copy made once per A (scipy's
        ``A.T`` builds a new matrix at each call, which took much of a small LP's host time),
        whose products add the same terms in the same order."""
        if not sp.issparse(self.A):
            return self.A.T
        cached = self.__dict__.get("_A_transposed")
        if cached is None or cached[0] is not self.A:
            cached = self._A_transposed = (self.A, self.A.T.tocsr())
        return cached[1]

    # -------------------------------------------------------------- level 3
    @_quiet
    def _factor_normal(self, d, shift=0.0):
        self.readbacks += 1
        d_f = np.asarray(d, dtype=self.fdtype)
        if self.adat == "sparse":
            M = (self.A_f.multiply(d_f) @ self.A_f.T).toarray()            # adat
        else:
            M = (self.A_f * d_f) @ self.A_f.T
        self.shift = float(shift)
        if self.shift:
            M[np.diag_indices_from(M)] += M.dtype.type(self.shift)   # + delta I
        if self.factorization == "lapack":
            self.L, replaced = guarded_cholesky(M, pivot_tol=self.pivot_tol)
        else:
            chol = cholesky_outer if self.cholesky == "outer" else cholesky_inner
            self.L, replaced = chol(M, pivot_tol=self.pivot_tol)
        if self.refine:
            self.d64 = np.asarray(d, dtype=np.float64)
        return replaced

    def raise_precision(self):
        """Float64 factors from now on, where the factors are float32 and refined (module notes)."""
        if not self.refine or self.fdtype != np.float32 or self.shift:
            return None
        self.fdtype = np.dtype(np.float64)
        self.pivot_tol = default_pivot_tol(np.float64)
        self._set_normal_rows()
        return "float64"

    def _solve_f(self, r):
        """Forward and backward substitution in the factor precision."""
        if self.L is None:
            raise RuntimeError("solve_normal before factor_normal")
        rf = np.asarray(r, dtype=self.L.dtype)
        if self.factorization == "lapack":
            return guarded_solve(self.L, rf)
        if self.fast_solve:
            from scipy.linalg import solve_triangular

            y = solve_triangular(self.L, rf, lower=True, check_finite=False)
            return solve_triangular(self.L, y, lower=True, trans="T", check_finite=False)
        return forward_backward(self.L, rf)

    @_quiet
    def _solve_normal(self, r, rtol=REFINE_RTOL):
        if not self.refine:
            return self._solve_f(r).astype(self.vdtype, copy=False)
        d = self.d64

        def solve(rhs):
            self.readbacks += 1          # on the GPU each correction is read back
            return self._solve_f(rhs).astype(np.float64)

        stats = {}
        z = refine_solve(solve, lambda z: self.apply_normal(d, z, self.shift), np.asarray(r, np.float64),
                         method=self.refine_method, rtol=rtol, stats=stats)
        self.refine_stats.append(stats)
        return z


