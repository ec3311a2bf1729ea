"""What conjugate gradients multiplies by, and the power-of-two scaling that keeps its squares in
float32's range: a SparseStream (the storage of a scipy.sparse A chosen by ``format``: paper
003's sorted corrigan format, paper 002's ELLPACK, or the packed format beyond the papers) or a
dense Stream (paper 000's inner-product sgemv), A checked square and symmetric where its entries
are on the host, and scaled by 2^-e (exact) so that max |2^-e A| lies in [0.5, 1): on the host
for a matrix cg uploads, on the GPU (a pass a product) for the caller's Stream or SparseStream
outside [2^-16, 2^16]."""
from __future__ import annotations

import numpy as np

from ..blas1 import KERNELS as L1, whole
from ..blas2 import gemv
from ..reduce import reduce_region
from ..sparse import SparseStream, _as_csr
from ..stream import Stream, borrow, check_array, give_back

#: A Stream or SparseStream A is scaled on the GPU (a pass a product) only when max|A| is
#: outside [2^-16, 2^16] (a Stream b, x0 or M, one pass, outside [2^-8, 2^8]:
#: ``gpgpu.cg.inputs.VECTOR_RANGE``). Inside, the squares of CG stay far inside float32's
#: range: ||r||² >= 2^-76 down to the freeze floor, d^T A d >= 2^-92 / cond(A).
MATRIX_RANGE = 16


def _exponent(value: float) -> int:
    """e with value = m 2^e, 0.5 <= m < 1: scaling by 2^-e brings value into [0.5, 1)."""
    return int(np.frexp(value)[1])


def _scale_into(src: Stream, k: int, out: Stream) -> Stream:
    """out = 2^k src, exact (passes of at most 2^±100, each factor a float32 uniform)."""
    cur = src
    while True:
        step = max(-100, min(100, k))
        L1["scale"].draw(out, whole(out), {"X": cur}, {"alpha": float(2.0 ** step)})
        k -= step
        if k == 0:
            return out
        tmp = Stream.like(out)
        L1["copy"].draw(tmp, whole(tmp), {"A": out})
        if cur is not src:
            cur.release()
        cur = tmp


class _Operator:
    """What CG multiplies by: a SparseStream (sorted ones on the sorted system) or a dense
    Stream (the inner-product sgemv of paper 000), answering 2^-shift A d. ``exponent`` is the e
    of the solved system's 2^-e A (applied on the host before the upload for a matrix cg owns,
    on the GPU by ``shift`` for the user's Stream or SparseStream)."""

    def __init__(self, A, owned: bool, exponent: int = 0, shift: int = 0, host=None):
        self.A, self.owned = A, owned
        self.n = A.shape[0]
        self.exponent, self.shift = exponent, shift
        self._tmp = None
        #: 2^-e A in float64 CSR on the host (a scipy or numpy A): the verification's b - A x
        self.host = host

    def _product(self, d: Stream, out: Stream) -> Stream:
        if isinstance(self.A, SparseStream):
            return self.A._product(d, out, permuted=True)
        return gemv(self.A, d, out=out)

    def __call__(self, d: Stream, out: Stream) -> Stream:
        if self.shift == 0:
            return self._product(d, out)
        if self._tmp is None:
            self._tmp = Stream.like(d)
        if self.shift > 0:        # a large A: the product, then scaled down (no overflow of 2^-e A d)
            self._product(d, self._tmp)
            L1["scale"].draw(out, whole(out), {"X": self._tmp}, {"alpha": float(2.0 ** -self.shift)})
        else:                     # a small A: d scaled up first (no underflow of the product)
            L1["scale"].draw(self._tmp, whole(self._tmp), {"X": d}, {"alpha": float(2.0 ** -self.shift)})
            self._product(self._tmp, out)
        return out

    def release(self):
        if self._tmp is not None:
            self._tmp.release()
        if self.owned:
            self.A.release()


def _gpu_scale(A) -> int:
    """The shift of a user's Stream or SparseStream A: 0 inside [2^-16, 2^16], else the exponent
    of max|A| (a Stream: one read-back of max|A|, reduced on the GPU; a SparseStream: its
    ``max_abs()``, taken at the upload, every format)."""
    if isinstance(A, SparseStream):
        big = A.max_abs()
    else:
        top = reduce_region(A, "absmax", strategy="pingpong", out=borrow(1, 1))
        big = top.item()
        give_back(top)
    if not big > 0:
        raise ValueError("cg: A is zero, so singular; conjugate gradients needs a symmetric positive "
                         "definite matrix")
    if 2.0 ** -MATRIX_RANGE <= big <= 2.0 ** MATRIX_RANGE:
        return 0
    e = _exponent(big)
    if e < -100:
        raise ValueError(f"cg: max |A| = {big:.3g} is below float32's normal range (1.2e-38), where "
                         "the GPU flushes to zero; scale A (and b) up before the upload")
    return e


def _upload_sparse(M, format: str) -> SparseStream:
    """The scaled scipy matrix as a SparseStream of ``format``. "corrigan" is paper 003's storage
    as 003 used it: rows and columns sorted by non-zero count (``sort=True``, Fig. 7) and one
    fragment program per distinct count, every one of them compiled (003 generated them all; the
    ``max_programs`` guard of ``from_scipy`` does not apply, and a first product compiling more
    than ``gpgpu.sparse.LOG_PROGRAMS`` says so on stderr); rows far longer than the others go to
    the dense part (``from_scipy``'s default, beyond 003, whose compiler failed on them)."""
    if format == "corrigan":
        return SparseStream.from_scipy(M, format="corrigan", sort=True, max_programs=max(1, M.shape[0]))
    return SparseStream.from_scipy(M, format=format)


def _operator(A, format: str = "ellpack") -> _Operator:
    """The _Operator of cg's A: the caller's SparseStream or Stream (checked, scaled on the GPU
    when outside the safe range), or a scipy / numpy matrix scaled on the host and uploaded (a
    scipy.sparse one in ``format``, a dense one as a Stream)."""
    if isinstance(A, SparseStream):
        m, n = A.shape
        if m != n:
            raise ValueError(f"cg: A must be square, got a {m} x {n} SparseStream")
        host = A._host      # from_scipy's host copy (transpose="copy", until transposed() is built)
        if host is not None:
            import scipy.sparse as sp

            _check_square_symmetric(sp.csr_matrix(host, shape=A.shape))
        e = _gpu_scale(A)
        return _Operator(A, owned=False, exponent=e, shift=e)
    if isinstance(A, Stream):
        if A.vector or A.rows != A.cols:
            raise ValueError(f"cg: A must be a square matrix, got a stream of shape {A.shape}")
        e = _gpu_scale(A)
        return _Operator(A, owned=False, exponent=e, shift=e)
    import scipy.sparse as sp

    if sp.issparse(A):
        M = _as_csr(A)
        _check_square_symmetric(M)
        e = _exponent(float(abs(M.data).max()))
        M.data = np.ldexp(M.data, -e)                     # exact: 2^-e A, max |.| in [0.5, 1)
        return _Operator(_upload_sparse(M, format), owned=True, exponent=e, host=M)
    check_array(A, "A", ndim=(2,))
    M = _as_csr(A)
    _check_square_symmetric(M)
    e = _exponent(float(abs(M.data).max()))
    scaled = np.ldexp(np.asarray(A, dtype=np.float64), -e)
    M.data = np.ldexp(M.data, -e)
    return _Operator(Stream.from_array(scaled, "A"), owned=True, exponent=e, host=M)


def _check_square_symmetric(M) -> None:
    m, n = M.shape
    if m != n:
        raise ValueError(f"cg: A must be square, got shape {M.shape}")
    empty = np.flatnonzero(np.diff(M.indptr) == 0)
    if empty.size:
        raise ValueError(f"cg: row {int(empty[0])} of A is empty, so A is singular; conjugate gradients "
                         "needs a symmetric positive definite matrix")
    scale = float(np.abs(M.data).max()) if M.nnz else 0.0
    asym = float(abs(M - M.T).max()) if M.nnz else 0.0
    if asym > 1e-6 * scale:
        raise ValueError(f"cg: A is not symmetric (max |A - A^T| = {asym:.3g}); conjugate gradients "
                         "needs a symmetric positive definite matrix")
