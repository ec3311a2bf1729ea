"""Conjugate gradients on the GPU (paper 003, Corrigan, after Bolz et al. 2003 and Shewchuk 1994).

Shewchuk's listing ("An Introduction to the Conjugate Gradient Method Without the Agonizing
Pain", B2/B3), which paper 003 follows, with every vector operation a kernel of this project:

    r = b - A x;  d = M r;  delta = r^T d
    repeat:
        q = A d                          sparse (or dense) matrix-vector product
        alpha = delta / d^T q            dot product, then a 1 x 1 quotient kernel
        x = x + alpha d                  saxpy with the scalar read from its 1 x 1 stream
        r = r - alpha q                  (Shewchuk: every 50 iterations r = b - A x instead)
        s = M r;  delta_old = delta;  delta = r^T s
        d = s + (delta / delta_old) d

A dot product is 003's "component-wise multiplication into a temporary vector" (Fig. 1)
followed by a sum reduction over a pyramid of textures padded to a power of two (Figs. 2-3),
or the ping-pong reduction (``reduction="pingpong"``). The scalars alpha, beta and delta stay on
the GPU in 1 x 1 streams (as Vortex2D's CG keeps them); nothing is read back inside an
iteration. Every ``check_every`` iterations one read-back brings ||r||² and the breakdown flag
(the first iteration with dᵀAd <= 0, kept on the GPU), so the iteration count is known to within
``check_every`` - 1 and a breakdown is reported with the iteration it happened at.

One deliberate departure from Shewchuk's listing, measured: his restart of the residual,
r = b - A x every 50 iterations, is off by default (``recompute_every=None``, as scipy's cg) and
can be asked for with ``recompute_every=50``. In float32 the restart breaks the recurrence's
conjugacy on ill-conditioned systems: on the RBF torus system of ``experiments.cg.rbf_surface``
(5000 points, 15000 unknowns, condition number about 3700, tol 1e-6) float32 CG converges in 365
iterations without it, while with it the residual falls to 1e-5 by iteration 500 and then grows
without bound until it overflows (numpy float32 and this GPU code alike).

``gpgpu.cg(A, b, x0=None, tol=1e-5, maxiter=None, M=None, callback=None)`` answers ``(x, info)``
with scipy.sparse.linalg.cg's meaning: success when ||r|| <= max(tol ||b||, atol); ``info`` 0 on
success, the iteration count when ``maxiter`` is reached without it.
"""
from __future__ import annotations

import numbers

import numpy as np

from .blas1 import KERNELS as L1, whole
from .blas2 import gemv
from .errors import CGBreakdownError
from .geometry import Texel
from .kernel import Kernel
from .reduce import reduce_regions
from .sparse import SparseStream, _as_csr, _gather
from .stream import Stream, borrow, check_array, give_back

__all__ = ["cg", "CGResult", "KERNELS"]

KERNELS = {
    "quotient": Kernel("scalar_quotient", texels=3, doc="CG scalar alpha or beta, kept on the GPU"),
    "saxpy": Kernel("saxpy_gpu_scalar", texels=4, doc="003 scaled vector addition, scalar on the GPU"),
    "breakdown": Kernel("breakdown_flag", texels=3, doc="first iteration with d^T A d <= 0"),
}

REDUCTIONS = ("pyramid", "pingpong")


class CGResult(tuple):
    """``(x, info)`` like scipy's cg, with the run's figures as attributes: ``iterations``,
    ``residual_norm`` (the last ||r|| read back), ``readbacks``, ``residuals`` (each one read)."""

    def __new__(cls, x, info, **extra):
        self = super().__new__(cls, (x, info))
        for k, v in extra.items():
            setattr(self, k, v)
        return self


class _Operator:
    """What CG multiplies by: a SparseStream (sorted ones on the sorted system) or a dense
    Stream (the inner-product sgemv of paper 000)."""

    def __init__(self, A, owned: bool):
        self.A, self.owned = A, owned
        self.n = A.shape[0]

    def __call__(self, d: Stream, out: Stream) -> Stream:
        if isinstance(self.A, SparseStream):
            return self.A._product(d, out, permuted=True)
        return gemv(self.A, d, out=out)

    def release(self):
        if self.owned:
            self.A.release()


def _operator(A) -> _Operator:
    if isinstance(A, SparseStream):
        m, n = A.shape
        if m != n:
            raise ValueError(f"cg: A must be square, got a {m} x {n} SparseStream")
        return _Operator(A, owned=False)
    if isinstance(A, Stream):
        if A.vector or A.rows != A.cols:
            raise ValueError(f"cg: A must be a square matrix, got a stream of shape {A.shape}")
        return _Operator(A, owned=False)
    import scipy.sparse as sp

    if sp.issparse(A):
        M = _as_csr(A)
        _check_square_symmetric(M)
        return _Operator(SparseStream.from_scipy(M, format="ellpack"), owned=True)
    arr = check_array(A, "A", ndim=(2,))
    M = _as_csr(arr)
    _check_square_symmetric(M)
    return _Operator(Stream.from_array(arr, "A"), owned=True)


def _check_square_symmetric(M) -> None:
    m, n = M.shape
    if m != n:
        raise ValueError(f"cg: A must be square, got shape {M.shape}")
    empty = np.flatnonzero(np.diff(M.indptr) == 0)
    if empty.size:
        raise ValueError(f"cg: row {int(empty[0])} of A is empty, so A is singular; conjugate gradients "
                         "needs a symmetric positive definite matrix")
    scale = float(abs(M).max())
    asym = float(abs(M - M.T).max()) if M.nnz else 0.0
    if asym > 1e-6 * scale:
        raise ValueError(f"cg: A is not symmetric (max |A - A^T| = {asym:.3g}); conjugate gradients "
                         "needs a symmetric positive definite matrix")


def _dot(x: Stream, y: Stream, reduction: str) -> Stream:
    """x^T y as a 1 x 1 stream: the component-wise product (003 Fig. 1), then the sum
    reduction (Figs. 2-3, or ping-pong). The scalars of an iteration are pooled temporaries
    (give_back, not release): no texture is allocated inside the loop."""
    prod = borrow(x.rows, x.cols)
    L1["elementwise_product"].draw(prod, whole(x), {"X": x, "Y": y})
    res = reduce_regions(prod, "sum", x.regions(), strategy=reduction, out=borrow(1, 1))
    give_back(prod)
    return res


def _saxpy(x: Stream, y: Stream, s: Stream, sign: float, out: Stream) -> Stream:
    """out = y + sign * s x, s a 1 x 1 stream."""
    KERNELS["saxpy"].draw(out, whole(out), {"X": x, "Y": y, "s": s}, {"sign": float(sign)})
    return out


def _quotient(a: Stream, b: Stream) -> Stream:
    out = borrow(1, 1)
    KERNELS["quotient"].draw(out, Texel.at(0, 0), {"numerator": a, "denominator": b})
    return out


def _vector(v, n: int, name: str):
    """(stream, owned) for a vector argument of length n."""
    if isinstance(v, Stream):
        if not v.vector or v.length != n:
            raise ValueError(f"cg: {name} must be a vector of length {n}, got {v!r}")
        return v, False
    arr = check_array(v, name, ndim=(1,))
    if arr.shape[0] != n:
        raise ValueError(f"cg: {name} must have length {n}, got {arr.shape[0]}")
    return Stream.from_array(arr, name), True


def cg(A, b, x0=None, tol: float = 1e-5, maxiter: int | None = None, M=None, callback=None,
       atol: float = 0.0, rtol: float | None = None, check_every: int = 1,
       reduction: str = "pyramid", recompute_every: int | None = None) -> CGResult:
    """Solve A x = b for a symmetric positive definite A by conjugate gradients on the GPU.

    Parameters
    ----------
    A : SparseStream, scipy.sparse matrix, (n, n) array or Stream
        scipy matrices are put on the GPU in ELLPACK; a dense array or Stream is multiplied
        by the inner-product sgemv of paper 000. A sorted corrigan SparseStream (paper 003)
        is solved in its sorted order: b is permuted once and x unpermuted at the end.
    b : (n,) array or vector Stream
    x0 : (n,) array or vector Stream, optional (zeros)
    tol, rtol, atol : float
        scipy's meaning: stop when ||r|| <= max(tol ||b||, atol); ``rtol`` is scipy's newer
        name for ``tol``.
    maxiter : int, optional
        Default 10 n, as scipy.
    M : None or (n,) array or vector Stream
        A diagonal preconditioner given as the diagonal of M ~ A^-1 (Jacobi: 1 / diag(A)),
        applied by an element-wise product pass.
    callback : callable, optional
        ``callback(xk)`` after every iteration with x as a numpy array (one read-back of x per
        iteration; a Stream A gets numpy too).
    check_every : int
        Read ||r|| (and the breakdown flag) back every this many iterations.
    reduction : {"pyramid", "pingpong"}
        How the dot products sum (003's pyramid, or halving ping-pong passes).
    recompute_every : int, optional
        Shewchuk's restart of the residual, r = b - A x, every this many iterations (his
        listing uses 50). Off by default: in float32 it can stall or diverge an ill-conditioned
        solve (see the module docstring).

    Returns
    -------
    CGResult ``(x, info)``: x numpy for numpy b (a Stream for a Stream b); info 0 when
    converged, else the number of iterations done. ``.iterations``, ``.residual_norm``,
    ``.readbacks`` and ``.residuals`` tell the run.

    Raises
    ------
    CGBreakdownError
        dᵀAd <= 0 at some iteration: A is not positive definite (the iteration is named).
    ValueError, TypeError
        Bad shapes, non-square or non-symmetric A, NaN, complex, an empty row, bad options.
    """
    if rtol is not None:
        tol = rtol
    for name, v in (("tol", tol), ("atol", atol)):
        if not isinstance(v, numbers.Real) or not np.isfinite(v) or v < 0:
            raise ValueError(f"cg: {name} must be a finite number >= 0, got {v!r}")
    for name, v in (("check_every", check_every), ("recompute_every", recompute_every)):
        if name == "recompute_every" and v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
            raise ValueError(f"cg: {name} must be a positive integer, got {v!r}")
    if reduction not in REDUCTIONS:
        raise ValueError(f"cg: reduction must be one of {REDUCTIONS}, got {reduction!r}")
    if callback is not None and not callable(callback):
        raise TypeError("cg: callback must be callable")
    op = _operator(A)
    n = op.n
    if maxiter is None:
        maxiter = 10 * n
    if isinstance(maxiter, bool) or not isinstance(maxiter, numbers.Integral) or maxiter < 0:
        op.release()
        raise ValueError(f"cg: maxiter must be a non-negative integer, got {maxiter!r}")
    numpy_out = not isinstance(b, Stream)
    owned = []
    try:
        bs, o = _vector(b, n, "b")
        owned += [bs] if o else []
        xs, o = _vector(x0, n, "x0") if x0 is not None else (Stream.vector_of(n), True)
        owned += [xs] if o else []
        Ms = None
        if M is not None:
            if not isinstance(M, Stream):
                Marr = np.asarray(M)
                if Marr.ndim != 1:
                    raise ValueError("cg: M must be the diagonal of the preconditioner (a vector of "
                                     "length n, M ~ A^-1), e.g. 1 / A.diagonal() for Jacobi")
            Ms, o = _vector(M, n, "M")
            owned += [Ms] if o else []
        sorted_A = isinstance(op.A, SparseStream) and op.A.perm is not None
        if sorted_A:   # 003: solve the sorted system, unsort the solution at the end
            perm = op.A._streams["perm"]
            bs = _gather(bs, perm)
            xs = _gather(xs, perm)
            owned += [bs, xs]
        result = _iterate(op, bs, xs, Ms, tol, atol, maxiter, callback, check_every, reduction,
                          recompute_every, sorted_A)
        x_out, info, extra = result
        if sorted_A:
            unsorted = _gather(x_out, op.A._streams["inverse"])
            x_out.release()
            x_out = unsorted
        if numpy_out:
            x = x_out.to_array().astype(np.float64)
            x_out.release()
        else:
            x = x_out
        return CGResult(x, info, **extra)
    finally:
        for s in owned:
            s.release()
        op.release()


def _iterate(op, b, x0, Ms, tol, atol, maxiter, callback, check_every, reduction, recompute_every,
             sorted_A):
    n = op.n
    x = Stream.like(b)
    L1["copy"].draw(x, whole(x), {"A": x0})
    xn, r, rn, d, dn, q, s = (Stream.like(b) for _ in range(7))
    created = [x, xn, r, rn, d, dn, q, s]
    pair = Stream(1, 2)              # ||r||^2 and the breakdown flag, read back together
    created.append(pair)
    readbacks = 0
    residuals = []
    try:
        bnorm = _dot(b, b, reduction)
        readbacks += 1
        bb = bnorm.item()
        give_back(bnorm)
        target = max(tol * np.sqrt(bb), atol)
        # r = b - A x
        op(x, q)
        L1["saxpy"].draw(r, whole(r), {"X": q, "Y": b}, {"alpha": -1.0})
        # d = M r; delta = r^T d
        if Ms is not None:
            L1["elementwise_product"].draw(d, whole(d), {"X": Ms, "Y": r})
        else:
            L1["copy"].draw(d, whole(d), {"A": r})
        delta = _dot(r, d, reduction)
        flag = Stream(1, 1)
        L1["fill"].draw(flag, Texel.at(0, 0), uniforms={"value": -1.0})
        flag_next = Stream(1, 1)
        rr = _dot(r, r, reduction)
        readbacks += 1
        rnorm = float(np.sqrt(max(rr.item(), 0.0)))
        give_back(rr)
        residuals.append(rnorm)
        it, info = 0, 0
        if not np.isfinite(rnorm):
            raise ValueError("cg: the initial residual is not finite (overflow in A x0 or b)")
        while rnorm > target:
            if it >= maxiter:
                info = it
                break
            op(d, q)                                             # q = A d
            dq = _dot(d, q, reduction)
            KERNELS["breakdown"].draw(flag_next, Texel.at(0, 0), {"flag": flag, "dAd": dq},
                                      {"iteration": float(it)})
            flag, flag_next = flag_next, flag
            alpha = _quotient(delta, dq)                         # alpha = delta / d^T q
            _saxpy(d, x, alpha, +1.0, xn)                        # x = x + alpha d
            x, xn = xn, x
            it += 1
            if recompute_every and it % recompute_every == 0:    # r = b - A x
                op(x, q)
                L1["saxpy"].draw(rn, whole(rn), {"X": q, "Y": b}, {"alpha": -1.0})
            else:
                _saxpy(q, r, alpha, -1.0, rn)                    # r = r - alpha q
            r, rn = rn, r
            give_back(alpha, dq)
            if Ms is not None:                                   # s = M r
                L1["elementwise_product"].draw(s, whole(s), {"X": Ms, "Y": r})
                sv = s
            else:
                sv = r
            delta_old, delta = delta, _dot(r, sv, reduction)     # delta = r^T s
            beta = _quotient(delta, delta_old)
            give_back(delta_old)
            _saxpy(d, sv, beta, +1.0, dn)                        # d = s + beta d
            d, dn = dn, d
            give_back(beta)
            if callback is not None:
                readbacks += 1
                xk = x.to_array().astype(np.float64)
                if sorted_A:
                    xk = xk[np.argsort(op.A.perm)]
                callback(xk)
            if it % check_every == 0 or it >= maxiter:
                value = delta if Ms is None else _dot(r, r, reduction)
                L1["copy"].draw(pair, Texel.at(0, 0, T0=(0.5, 0.5)), {"A": value})
                L1["copy"].draw(pair, Texel.at(1, 0, T0=(0.5, 0.5)), {"A": flag})
                if Ms is not None:
                    give_back(value)
                readbacks += 1
                rr_value, first_bad = (float(v) for v in pair.to_array().reshape(-1))
                rnorm = float(np.sqrt(max(rr_value, 0.0))) if np.isfinite(rr_value) else float("inf")
                residuals.append(rnorm)
                if first_bad >= 0 and first_bad != int(first_bad):     # iteration + 0.5: overflow
                    raise CGBreakdownError(int(first_bad), n, detail=(
                        "d^T A d overflowed float32 (inf or NaN): the iteration diverged"), diverged=True)
                if first_bad >= 0:
                    raise CGBreakdownError(int(first_bad), n)
                if not np.isfinite(rnorm):
                    raise CGBreakdownError(it - 1, n, detail="the residual is no longer finite: the "
                                          "iteration diverged", diverged=True)
        give_back(delta)
        flag.release(), flag_next.release()
        return x, info, {"iterations": it, "residual_norm": rnorm, "readbacks": readbacks,
                         "residuals": residuals}
    except BaseException:
        x.release()
        raise
    finally:
        for t in created:
            if t is not x:
                t.release()
