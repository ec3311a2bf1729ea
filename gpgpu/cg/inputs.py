"""The arguments of conjugate gradients checked and put on the GPU: b, x0 and M as numpy vectors
(validated, scaled by powers of two, rounded to float32 and uploaded) or vector Streams; A's
kind (a LinearOperator or a callable refused with the reason); M as a diagonal (Jacobi)
preconditioner, positive and finite; and float32's reach (``FLOAT32_REACH``), below which a
target is warned of (``Float32ToleranceWarning``)."""
from __future__ import annotations

import numpy as np

from ..reduce import reduce_regions
from ..sparse import SparseStream, _gather
from ..stream import Stream, borrow, check_array, give_back
from .kernels import _dot, _read
from .operator import _exponent, _scale_into

#: The smallest relative target float32 can be held to: 2^-23 = 1.19e-7, float32's machine
#: epsilon (two units of its roundoff u = 2^-24; see ``cg``'s docstring, "Precision").
FLOAT32_REACH = 2.0 ** -23
#: A Stream b, x0 or M is scaled on the GPU (one pass) only when its max|.| is outside
#: [2^-8, 2^8] (a matrix: ``gpgpu.cg.operator.MATRIX_RANGE``).
VECTOR_RANGE = 8


class Float32ToleranceWarning(RuntimeWarning):
    """Warned by :func:`gpgpu.cg` when its target is below what float32 can reach.

    A RuntimeWarning. The GPU iterates in float32 (paper 003's CG on float32 textures), which
    holds ||b - A x|| down to about 2^-23 ||b|| = 1.19e-7 ||b|| (``FLOAT32_REACH``, float32's
    machine epsilon; the Notes of ``cg``). cg warns once, before iterating, when max(rtol ||b||,
    atol) is below that, and again when the residual stagnated above a target it could reach
    (info > 0, ``.stagnated``). For a smaller residual refine the answer in float64 (e.g.
    scipy.sparse.linalg.cg from ``x0=x``); to silence it,
    ``warnings.simplefilter("ignore", gpgpu.Float32ToleranceWarning)``.

    See Also
    --------
    gpgpu.cg : the solver that warns it.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> import gpgpu
    >>> A = 2 * np.eye(8) - np.eye(8, k=1) - np.eye(8, k=-1)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     x, info = gpgpu.cg(A, np.ones(8), rtol=1e-9)
    >>> any(w.category is gpgpu.Float32ToleranceWarning for w in caught)
    True
    >>> issubclass(gpgpu.Float32ToleranceWarning, RuntimeWarning)
    True
    """


def _host_vector(v, n: int, name: str) -> np.ndarray:
    """A numpy vector argument of length n, validated, in float64."""
    check_array(v, name, ndim=(1,))
    arr = np.asarray(v, dtype=np.float64)
    if arr.shape[0] != n:
        raise ValueError(f"cg: {name} must have length {n}, got {arr.shape[0]}")
    return arr


def _upload(arr: np.ndarray, k: int, name: str) -> Stream:
    """2^k arr (exact, in float64) as a float32 vector stream."""
    with np.errstate(over="ignore"):
        scaled = np.ldexp(arr, k).astype(np.float32)
    if not np.all(np.isfinite(scaled)):
        raise ValueError(f"cg: {name} scaled to the system's scale (by 2^{k}) overflows float32: "
                         f"{name} is far from the scale of A^-1 b; pass a smaller {name} or none")
    return Stream.vector_of(arr.shape[0], data=scaled)


def _stream_vector(v: Stream, n: int, name: str) -> Stream:
    if not v.vector or v.length != n:
        raise ValueError(f"cg: {name} must be a vector of length {n}, got {v!r}")
    return v


def _module_class(obj, module: str, name: str) -> bool:
    """isinstance(obj, module.name) when that module is loaded (a user's object of that class
    means it is), without importing it here."""
    import sys

    mod = sys.modules.get(module)
    return mod is not None and isinstance(obj, getattr(mod, name))


def _check_matrix_kind(A) -> None:
    """A LinearOperator or a callable A refused, with why and what to pass instead."""
    if _module_class(A, "scipy.sparse.linalg", "LinearOperator") or \
            (callable(A) and not isinstance(A, (Stream, SparseStream, np.ndarray))):
        what = "a scipy LinearOperator" if _module_class(A, "scipy.sparse.linalg", "LinearOperator") \
            else f"a callable ({type(A).__name__})"
        raise TypeError(f"cg: A is {what}, whose product runs on the CPU; here the product A d runs on the "
                        "GPU as a fragment program over a texture holding A's entries, so cg needs the "
                        "matrix itself. Pass the scipy.sparse matrix, a dense (n, n) array, a "
                        "gpgpu.SparseStream or a gpgpu.Stream (for aslinearoperator(S), pass S)")


_PRECONDITIONER_HELP = ("the GPU applies a preconditioner only as a diagonal, by one element-wise "
                        "product pass (s = M r); pass the diagonal of M ~ A^-1 as a vector of length n "
                        "(Jacobi: 1 / A.diagonal()), or as a diagonal matrix (scipy.sparse.diags(1 / d))")


def _preconditioner(M):
    """M as cg applies it: None, a vector Stream, or the diagonal as a 1-D array. A diagonal
    scipy.sparse matrix or dense 2-D array gives its diagonal; anything else is refused."""
    if M is None or isinstance(M, Stream):
        return M
    if _module_class(M, "scipy.sparse.linalg", "LinearOperator") or callable(M):
        what = "a scipy LinearOperator" if _module_class(M, "scipy.sparse.linalg", "LinearOperator") \
            else f"a callable ({type(M).__name__})"
        raise TypeError(f"cg: M is {what}, which cannot run on the GPU: {_PRECONDITIONER_HELP}")
    import scipy.sparse as sp

    if sp.issparse(M):
        if M.ndim != 2 or M.shape[0] != M.shape[1]:
            raise ValueError(f"cg: M must be square, got a sparse matrix of shape {M.shape}: {_PRECONDITIONER_HELP}")
        C = sp.coo_array(M)
        off = (C.row != C.col) & (C.data != 0)
    else:
        arr = np.asarray(M)
        if arr.ndim == 1 or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
            return M                  # a vector (or something check_array names)
        if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
            raise ValueError(f"cg: M must be the diagonal of the preconditioner (a vector of length n) or "
                             f"a diagonal (n, n) matrix, got shape {arr.shape}: {_PRECONDITIONER_HELP}")
        C = sp.coo_array(arr)
        off = C.row != C.col
    if off.any():
        k = int(np.flatnonzero(off)[0])
        i, j = int(C.row[k]), int(C.col[k])
        raise ValueError(f"cg: M is not diagonal (M[{i}, {j}] = {C.data[k]:.6g}, and "
                         f"{int(off.sum())} entries off the diagonal in all): {_PRECONDITIONER_HELP}")
    return M.diagonal() if sp.issparse(M) else arr.diagonal()


def _check_preconditioner(M64: np.ndarray) -> float:
    """max |M| of a diagonal preconditioner (given as numpy, or a Stream's entries read back),
    after a ValueError naming its first entry that is not positive and finite: PCG needs M
    positive definite, as A is, and a zero or negative entry would break it down later, reported
    as an A that is not positive definite (or not at all)."""
    bad = np.flatnonzero(~(M64 > 0) | ~np.isfinite(M64))     # NaN is not > 0
    if not np.any(M64 != 0):
        raise ValueError("cg: M is zero; it must be the diagonal of a positive definite "
                         "preconditioner M ~ A^-1, e.g. 1 / A.diagonal() for Jacobi")
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"cg: M[{i}] = {M64[i]:.6g} (and {bad.size} entries <= 0 or not finite in all): the "
                         "preconditioner M ~ A^-1 must be positive definite, so its diagonal positive and "
                         "finite (a zero or negative entry breaks PCG down, which would be reported as an A "
                         "that is not positive definite); for Jacobi pass 1 / A.diagonal() of the positive "
                         "definite A, with no zero on A's diagonal")
    return float(np.abs(M64).max())


def _numpy_vector(v, name: str):
    """A numpy (n, 1) column given for a vector, as scipy's cg takes it: flattened."""
    if v is None or isinstance(v, Stream):
        return v
    arr = np.asarray(v)
    if arr.ndim == 2 and arr.shape[1] == 1 and arr.dtype != object:
        return arr[:, 0]
    if arr.ndim == 2:
        raise ValueError(f"cg: {name} must have shape (n,) or (n, 1), got {arr.shape}")
    return v


def _arguments(b, x0, M):
    """b, x0 and M as cg takes them: (n, 1) columns flattened, M's diagonal taken (or refused),
    scipy's x0="Mb" (M b, or b without M) computed."""
    if (M is not None and not isinstance(M, Stream) and not hasattr(M, "tocsr") and np.ndim(M) == 2
            and np.shape(M)[1] == 1):
        M = np.asarray(M)[:, 0]         # an (n, 1) column, as b may be (an (n, n) M is a matrix)
    M = _preconditioner(M)
    b = _numpy_vector(b, "b")
    if isinstance(x0, str):             # scipy's x0="Mb": M b, or b without M
        if x0 != "Mb" or isinstance(b, Stream) or isinstance(M, Stream):
            raise ValueError(f"cg: x0 must be a vector, None or 'Mb' (with numpy b and M), got {x0!r}")
        x0 = np.asarray(b, dtype=np.float64) * (1.0 if M is None else np.asarray(M, dtype=np.float64))
    return b, _numpy_vector(x0, "x0"), M


class _System:
    """The scaled (and, for a sorted SparseStream, permuted) system on the GPU that the
    iterations solve: (2^-e A) x' = 2^-k b with x = 2^(k - e) x' (``shift`` = e - k), b, x0 and
    M as float32 vector streams (``b``, ``x0``, ``M``; x0 and M None when not given), ``bnorm``
    = ||b|| of the b the GPU solves with, in A's units, ``bmax`` = max |b| (0: b = 0), and
    ``readbacks`` taken so far. Streams it made are released by :meth:`release`."""

    def __init__(self, op, b, reduction: str, readbacks: int):
        self.op, self.n, self.owned, self.readbacks = op, op.n, [], readbacks
        self.numpy_out = not isinstance(b, Stream)
        self.x0 = self.M = None
        self.sorted = isinstance(op.A, SparseStream) and op.A.perm is not None
        self.inverse = np.argsort(op.A.perm) if self.sorted else None
        self.shift = 0
        self._scale_b(b, reduction)

    def own(self, s: Stream) -> Stream:
        self.owned.append(s)
        return s

    def _scale_b(self, b, reduction: str) -> None:
        """b scaled to max |b'| in [0.5, 1) (a numpy b) or into [2^-8, 2^8] (a Stream b)."""
        n = self.n
        if self.numpy_out:
            b64 = _host_vector(b, n, "b")
            bmax = float(np.abs(b64).max())
            k = _exponent(bmax) if bmax > 0 else 0
            bs = self.own(_upload(b64, -k, "b")) if bmax > 0 else None
            # ||b|| of the b that the GPU solves with (2^-k b rounded to float32), in float64
            # (the norm of the scaled vector, scaled back: ||b||² of a b of 1e-170 underflows)
            bnorm = float(np.ldexp(np.linalg.norm(np.ldexp(b64, -k).astype(np.float32).astype(np.float64)), k))
        else:
            bs = _stream_vector(b, n, "b")
            am = reduce_regions(bs, "absmax", bs.regions(), strategy="pingpong", out=borrow(1, 1))
            bb = _dot(bs, bs, reduction)
            bmax, bb_value = _read(am, bb)
            give_back(am, bb)
            self.readbacks += 1
            k = 0
            if bmax > 0 and not 2.0 ** -VECTOR_RANGE <= bmax <= 2.0 ** VECTOR_RANGE:
                k = _exponent(bmax)
                bs = self.own(_scale_into(bs, -k, Stream.like(bs)))
                bb = _dot(bs, bs, reduction)
                bb_value = bb.item()
                give_back(bb)
                self.readbacks += 1
            bnorm = float(np.ldexp(np.sqrt(bb_value), k))
        self.b, self.bmax, self.k, self.bnorm = bs, bmax, k, bnorm
        self.b64 = b64 if self.numpy_out else None

    def upload(self, x0, M) -> None:
        """x0 and M on the GPU in the scaled system's units (M by its own power of two, which
        PCG does not notice), then b, x0 and M permuted for a sorted A (003: the sorted system is
        solved, its solution unsorted at the end)."""
        n, self.shift = self.n, self.op.exponent - self.k       # x' = 2^(e - k) x solves (2^-e A) x' = 2^-k b
        if x0 is not None:
            if isinstance(x0, Stream):
                self.x0 = _stream_vector(x0, n, "x0")
                if self.shift:
                    self.x0 = self.own(_scale_into(self.x0, self.shift, Stream.like(self.x0)))
            else:
                self.x0 = self.own(_upload(_host_vector(x0, n, "x0"), self.shift, "x0"))
        if M is not None:
            if isinstance(M, Stream):   # one read-back of M's entries, to check them as a numpy M's
                Ms = _stream_vector(M, n, "M")
                mmax = _check_preconditioner(Ms.to_array().astype(np.float64))
                self.readbacks += 1
                if not 2.0 ** -VECTOR_RANGE <= mmax <= 2.0 ** VECTOR_RANGE:
                    Ms = self.own(_scale_into(Ms, -_exponent(mmax), Stream.like(Ms)))
            else:               # PCG does not see a scalar factor of M
                M64 = _host_vector(M, n, "M")
                Ms = self.own(_upload(M64, -_exponent(_check_preconditioner(M64)), "M"))
            self.M = Ms
        if self.sorted:
            perm = self.op.A._streams["perm"]
            self.b = self.own(_gather(self.b, perm))
            if self.x0 is not None:
                self.x0 = self.own(_gather(self.x0, perm))
            if self.M is not None:
                self.M = self.own(_gather(self.M, perm))

    def to_user(self, xt: Stream) -> np.ndarray:
        """x of A x = b in A's order, float64, from the GPU's x' of the scaled (sorted) system."""
        xk = xt.to_array().astype(np.float64)
        if self.sorted:
            xk = xk[self.inverse]
        return np.ldexp(xk, -self.shift)

    def residual64(self):
        """x' -> ||2^-k b - 2^-e A x'|| in float64 on the host (the scaled system's units) for a
        numpy b and a scipy or numpy A (``_Operator.host``), else None: the verification's
        b - A x without float32's rounding of A x."""
        host = self.op.host
        if host is None or self.b64 is None:
            return None
        b = np.ldexp(self.b64, -self.k)

        def norm(xt: Stream) -> float:
            x = np.ldexp(self.to_user(xt), self.shift)          # x' in A's order
            return float(np.linalg.norm(b - host @ x))
        return norm

    def stream_answer(self, x_out: Stream) -> tuple:
        """(x, read-backs) for a Stream b: x_out (released) unsorted and scaled back into a new
        Stream, or a ValueError when float32 cannot hold it."""
        readbacks = 0
        if self.sorted:
            unsorted = _gather(x_out, self.op.A._streams["inverse"])
            x_out.release()
            x_out = unsorted
        if self.shift:
            top = reduce_regions(x_out, "absmax", x_out.regions(), strategy="pingpong", out=borrow(1, 1))
            xmax = top.item()
            give_back(top)
            readbacks += 1
            big = float(np.ldexp(xmax, -self.shift))
            if big > 0 and not 2.0 ** -102 <= big <= float(np.finfo(np.float32).max):
                x_out.release()
                why = "overflows float32" if big > 1 else "is too near float32's underflow (1.2e-38)"
                raise ValueError(f"cg: the solution's max |x| = {big:.3g} {why}, so it cannot be "
                                 "answered as a Stream; pass b as a numpy array to get x in float64")
            x = _scale_into(x_out, -self.shift, Stream.like(x_out))
            x_out.release()
            x_out = x
        return x_out, readbacks

    def release(self) -> None:
        for s in self.owned:
            s.release()
