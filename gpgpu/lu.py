"""LU decomposition and Gauss-Jordan elimination by rasterization (LU-GPU, paper 004, Galoppo,
Govindaraju, Henson, Manocha, SC'05; Table 1(a) and 2(a) of paper 000).

Per step k of ``lu`` (ping-pong S -> T as in Algorithm 2 of 000):

    pivot search    partial: argmax |A(k:n, k)| by the column reduction; full: argmax over the
                    trailing submatrix (one value read back per step, the pivot's position)
    row/col swap    rows k and p drawn as two lines that read each other's texels, the papers'
                    "parallel data transfer" (S -> T), then copied back (T -> S); columns alike
    copy            row k, columns k .. n-1 (the row of U), S -> T              n - k fragments
    normalization   column k below the diagonal / pivot (Kernel 4 of 001)     n - k - 1
    copyback        the normalized column, T -> S                             n - k - 1
    elimination     the square trailing submatrix, with index-pair streaming  (n - k - 1)^2
    swap S and T

Summed: copy n(n+1)/2 and elimination (n-1)n(2n-1)/6 fragments, as Table 1(a) of 000; the
normalization and copyback shade (n-1)n/2 each (the table's n(n+1)/2 counts the diagonal too).

What they return: numpy in, float64 numpy out -- the GPU computes in float32, so the values
are float32 values (scaled back by exact powers of two), given the width that numpy code
expects; Streams in, Streams out (float32 textures, left on the GPU).
"""
from __future__ import annotations

import numpy as np

from .blas1 import copy as copy_stream, whole
from .blas2 import trsv
from .blocked import dispatch
from .dense_common import (LU_KERNELS, LU_PIVOTING, LU_PIVOTS, WPOS, LUFactor, eliminate,  # noqa: F401 (public here too)
                           first_bad_pivot, power_of_two_exponent, scaled_back, scaled_float64, scaled_input,
                           scaled_stream, singular_threshold, swap_lines, swap_lines_gpu, validate_square)
from .errors import SingularMatrixError
from .geometry import Line, Rect
from .reduce import argmax_region, argmax_stream
from .stream import Operands, PingPong, Stream, check_array

__all__ = ["lu", "lu_factor", "lu_solve", "gauss_jordan", "SingularMatrixError", "LUFactor", "KERNELS"]

KERNELS = LU_KERNELS
PIVOTING = LU_PIVOTING
#: where the pivot's position goes: "readback" (the project's reading of 004, whose text does not say: read back at every step to place
#: the swap lines), or "gpu" (beyond the papers: kept on the GPU, read once at the end)
PIVOTS = LU_PIVOTS

def _partial_step_gpu(pp: PingPong, k: int, n: int, record: Stream) -> None:
    """Step k of LU with partial pivoting, its pivot at texel k of ``record`` (beyond the
    papers): three passes where a swap and :func:`eliminate` draw six. One pass of three
    lines writes rows k and p of T from S, swapped -- row k whole is the row of U -- and column
    k below the diagonal normalized, read through the swap (``swap_normalization``); one pass
    of the same three lines copies them back into S (the swap's copy back and the column's copy
    joined); then the elimination. S and T end as after the separate passes, bit for bit."""
    u = {"k": k, "length": n, "rows": True, "shift": 0, "pivot_row": True, "at": k}
    if k == n - 1:      # the last row of U: the swap's first pass only
        KERNELS["swap"].draw_lines(pp.T, 4, {"A": pp.S, "pivot": record}, dict(u, back=False))
        return
    KERNELS["swap_normalization"].draw_lines(pp.T, 6, {"A": pp.S, "pivot": record}, dict(u, back=False))
    KERNELS["swap"].draw_lines(pp.S, 6, {"A": pp.T, "pivot": record}, dict(u, back=True))
    KERNELS["elimination"].draw(pp.T, Rect.covering(k + 1, k + 1, n, n, T0=lambda x, y: (k + .5, y),
                                                    T1=lambda x, y: (x, k + .5)), {"A": pp.S})
    pp.swap()


def _factor(A: Stream, pivoting: str, transfer: str = "rtt", check: bool = True,
            pivots: str = "readback") -> LUFactor:
    if pivoting not in PIVOTING:
        raise ValueError(f"pivoting must be one of {PIVOTING}, got {pivoting!r}")
    if pivots not in PIVOTS:
        raise ValueError(f"pivots must be one of {PIVOTS}, got {pivots!r}")
    n = A.rows
    if A.cols != n:
        raise ValueError(f"lu: A must be square, got shape {A.shape}")
    # a pivot not above n u max|A| is rounding noise: the matrix is singular to float32 precision
    threshold = singular_threshold(A, n) if check else 0.0
    if pivots == "gpu" and pivoting != "none":
        return _factor_gpu_pivots(A, pivoting, transfer, threshold)
    pp = PingPong(copy_stream(A, label="copy_input"), Stream.like(A))
    row_perm, col_perm = np.arange(n), np.arange(n)
    row_swaps, col_swaps = [], []
    try:
        for k in range(n):
            if pivoting != "none":
                region = (k, k, k + 1, n) if pivoting == "partial" else (k, k, n, n)
                value, q, p = argmax_region(pp.S, region, absolute=True)
                if not value > threshold:
                    raise SingularMatrixError(k, n, pivoting, value, threshold)
                row_swaps.append(p)
                if p != k:
                    swap_lines(pp, k, p, n, "row")
                    row_perm[[k, p]] = row_perm[[p, k]]
                if pivoting == "full":
                    col_swaps.append(q)
                    if q != k:
                        swap_lines(pp, k, q, n, "column")
                        col_perm[[k, q]] = col_perm[[q, k]]
            eliminate(pp, k, n, transfer)
    except BaseException:
        pp.release()
        raise
    LU, spare = pp.T, pp.S
    spare.release()
    if pivoting == "none" and check:
        k = first_bad_pivot(LU, n, "full", magnitude=True, threshold=threshold)
        if k is not None:
            pivot = float(abs(LU.read_texel(k, k)[0]))
            LU.release()
            raise SingularMatrixError(k, n, pivoting, pivot, threshold)
    return LUFactor(LU, row_perm, col_perm, pivoting, row_swaps, col_swaps)


def _factor_gpu_pivots(A: Stream, pivoting: str, transfer: str, threshold: float) -> LUFactor:
    """``_factor`` with ``pivots="gpu"``: the same passes, except that each step's argmax stays
    on the GPU (the argmax's last pass renders it into a 1 x n RGBA record) and the swap lines are
    placed by the vertex program from it, so no step waits for a read-back. The pivots are
    read once at the end: the permutations are replayed from them, and a pivot not above the
    singularity threshold raises SingularMatrixError for its step as the read-back path does
    (the steps after it ran on, on meaningless values)."""
    n = A.rows
    pp = PingPong(copy_stream(A, label="copy_input"), Stream.like(A))
    record = Stream(1, n, components=4)
    try:
        for k in range(n):
            region = (k, k, k + 1, n) if pivoting == "partial" else (k, k, n, n)
            # the search's last pass writes step k's pivot into the record, where the swap
            # lines read it (no copy pass of its own); the row swap's first pass writes the new
            # row k into T whole, which is the row of U (no copy of it)
            argmax_stream(pp.S, region, absolute=True, fan=True, out=record, at=k)
            if pivoting == "partial" and transfer == "rtt":
                _partial_step_gpu(pp, k, n, record)
                continue
            swap_lines_gpu(pp, k, record, n, "row", at=k)
            if pivoting == "full":
                swap_lines_gpu(pp, k, record, n, "column", at=k)
            eliminate(pp, k, n, transfer, row_copied=True)
        piv = record.to_array().reshape(n, 4)            # the one read-back of the pivots
    except BaseException:
        pp.release()
        raise
    finally:
        record.release()
    LU, spare = pp.T, pp.S
    spare.release()
    row_perm, col_perm = np.arange(n), np.arange(n)
    row_swaps, col_swaps = [], []
    for k in range(n):
        value, q, p = float(piv[k, 0]), int(piv[k, 1]), int(piv[k, 2])
        if not value > threshold:
            LU.release()
            raise SingularMatrixError(k, n, pivoting, value, threshold)
        row_swaps.append(p)
        row_perm[[k, p]] = row_perm[[p, k]]
        if pivoting == "full":
            col_swaps.append(q)
            col_perm[[k, q]] = col_perm[[q, k]]
    return LUFactor(LU, row_perm, col_perm, pivoting, row_swaps, col_swaps)


def lu_factor(A, pivoting: str = "partial", transfer: str = "rtt", check: bool = True,
              pivots: str = "readback", variant: str = "faithful", block: int = 8) -> LUFactor:
    """Factor A on the GPU and keep the factor there, for :func:`lu_solve`.

    The factorization of :func:`lu` (LU-GPU, paper 004) without the read-back of P, L and U: the
    combined L and U stay in one stream of the returned ``LUFactor`` with the row (and column)
    permutations. A numpy A is uploaded as 2^e A, the exact power of two that brings max|A| into
    [0.5, 1) (``LUFactor.exponent`` is e); a Stream is factored as it is (exponent 0).

    Parameters
    ----------
    A : (n, n) array_like or Stream
        The matrix.
    pivoting : {"partial", "none", "full"}, optional
        Partial (LAPACK getrf), no pivoting, or full pivoting (getc2).
    transfer : {"rtt", "ctt"}, optional
        Render to texture or copy to texture (section 6.1.1 of 000).
    check : bool, optional
        False skips the zero-pivot scan of ``pivoting="none"``, as the timings of the papers do.
    pivots : {"readback", "gpu"}, optional
        Read each pivot's position back, or keep it on the GPU (beyond the papers), as in :func:`lu`.
    variant : {"faithful", "blocked"}, optional
        004's passes, or the blocked LU of :mod:`gpgpu.blocked` (beyond the papers).
    block : {4, 8, 16, 32, 64}, optional
        Panel width of ``variant="blocked"``.

    Returns
    -------
    factor : LUFactor
        The factor on the GPU (``LU``, ``row_perm``, ``col_perm``, ``exponent``); release it when done.

    Raises
    ------
    SingularMatrixError
        A pivot not above n u max|A| (u = 2^-24): A is singular to float32 precision; names step k.

    See Also
    --------
    lu_solve : Solve with the factor.
    lu : P, L and U as numpy arrays.

    Examples
    --------
    >>> import numpy as np
    >>> import gpgpu
    >>> A = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]])
    >>> with gpgpu.lu_factor(A) as f:
    ...     x = gpgpu.lu_solve(f, np.array([1.0, 2.0, 3.0]))
    ...     print(f.row_perm.tolist())
    [2, 0, 1]
    >>> np.allclose(A @ x, [1.0, 2.0, 3.0], atol=1e-4)
    True
    """
    blocked = dispatch("lu", variant, {"transfer": transfer}, {"transfer": "rtt"})
    if blocked is not None:
        factor = lambda S: blocked(S, pivoting, block, check, pivots)  # noqa: E731
    else:
        factor = lambda S: _factor(S, pivoting, transfer, check, pivots)  # noqa: E731
    if isinstance(A, Stream):
        return factor(A)
    arr, e = scaled_input(A, validate_square(A))
    try:
        if blocked is not None:
            f = factor(arr)
        else:
            with Stream.from_array(arr, "A") as S:
                f = factor(S)
    except SingularMatrixError as err:      # its pivot and threshold in A's units, not 2^e A's
        if e == 0:
            raise
        raise _unscaled_error(err, arr.shape[0], pivoting, e) from None
    f.exponent = e
    return f


def _unscaled_error(err: SingularMatrixError, n: int, pivoting: str, e: int, what=None) -> SingularMatrixError:
    """``err`` of the factorization of 2^e A, with its pivot and threshold those of A."""
    unscale = lambda v: None if v is None else float(np.ldexp(v, -e))  # noqa: E731
    return SingularMatrixError(err.k, n, pivoting, unscale(err.pivot), unscale(err.threshold), what)


def lu(A, pivoting: str = "partial", transfer: str = "rtt", pivots: str = "readback",
       variant: str = "faithful", block: int = 8):
    """LU decomposition on the GPU, returned like ``scipy.linalg.lu``.

    Computes P, L and U with A = P L U by LU-GPU (paper 004; the passes of Table 1(a) of 000):
    per step the pivot search, the row (and column) swap drawn as lines, the copy of the row of
    U, the normalization and the elimination over the trailing square. Beyond the papers the
    pivot's position can stay on the GPU (``pivots="gpu"``) and the matrix can be factored by
    blocks (``variant="blocked"``, :func:`gpgpu.blocked.blocked_lu`). A numpy A is factored as
    2^e A (an exact power of two bringing max|A| into [0.5, 1)) and U scaled back.

    Parameters
    ----------
    A : (n, n) array_like or Stream
        The matrix; a Stream's P, L and U come back as numpy arrays too.
    pivoting : {"partial", "none", "full"}, optional
        Largest |A(i, k)| in column k (LAPACK getrf), no pivoting, or full pivoting (getc2).
    transfer : {"rtt", "ctt"}, optional
        Render to texture or copy to texture (section 6.1.1 of 000).
    pivots : {"readback", "gpu"}, optional
        Read each pivot's position back, or keep it on the GPU (beyond the papers; same factor).
    variant : {"faithful", "blocked"}, optional
        004's passes, or RGBA 2 x 2 blocks with one rank-b update a panel (partial or none).
    block : {4, 8, 16, 32, 64}, optional
        Panel width of ``variant="blocked"``.

    Returns
    -------
    P, L, U : (n, n) ndarray
        float64 arrays of the float32 factor, A = P L U.
    Q : (n, n) ndarray
        Only for ``pivoting="full"``: A = P L U Q.

    Raises
    ------
    SingularMatrixError
        A pivot not above n u max|A| (u = 2^-24): A is singular to float32 precision; names step k.

    See Also
    --------
    lu_factor : Keep the factor on the GPU for :func:`lu_solve`.
    scipy.linalg.lu : The float64 reference.

    Examples
    --------
    >>> import numpy as np
    >>> import gpgpu
    >>> A = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]])
    >>> P, L, U = gpgpu.lu(A)
    >>> np.allclose(P @ L @ U, A, atol=1e-5)
    True
    >>> int(np.argmax(P[:, 0]))      # the first pivot is A's row 2, the 7
    2
    """
    with lu_factor(A, pivoting, transfer, pivots=pivots, variant=variant, block=block) as f:
        LU = f.LU.to_array().astype(np.float64)
        n = f.n
        L = np.tril(LU, -1) + np.eye(n)
        U = np.ldexp(np.triu(LU), -f.exponent)
        P = np.zeros((n, n))
        P[f.row_perm, np.arange(n)] = 1.0
        if pivoting != "full":
            return P, L, U
        Q = np.zeros((n, n))
        Q[np.arange(n), f.col_perm] = 1.0
        return P, L, U, Q


def _gather(b: Stream, index: np.ndarray) -> Stream:
    """out[i] = b[index[i]] on the GPU (one pass)."""
    out = Stream(1, b.cols, vector=True)
    with Stream.from_array(index.astype(np.float32), "permutation") as P:
        KERNELS["gather"].draw(out, whole(out), {"B": b, "P": P})
    return out


def lu_solve(factor, b):
    """Solve A x = b with an LU factor, on the GPU.

    Paper 004's solve: the permutation of b by a gather kernel, then forward substitution with
    the unit lower L and backward substitution with U, all on the GPU. ``factor`` is an
    ``LUFactor`` from :func:`lu_factor`, or the matrix A itself, then factored here with partial
    pivoting. A numpy b (each column of an (n, r) b) is uploaded times an exact power of two and
    the solution scaled back in float64, so that b may be any finite float64 array whose
    solution fits float32 above.

    Parameters
    ----------
    factor : LUFactor, (n, n) array_like or Stream
        The factor of A from :func:`lu_factor`, or A.
    b : (n,) or (n, r) array_like, or Stream
        Right-hand side(s); a Stream is a vector of length n.

    Returns
    -------
    x : ndarray or Stream
        float64 array of the float32 solution for a numpy b; a Stream for a Stream b.

    Raises
    ------
    TypeError
        ``factor`` is the (P, L, U) of :func:`lu` instead of A or an ``LUFactor``.
    ValueError
        b's length is not A's order (checked before A is factored).
    SingularMatrixError
        A matrix given as ``factor`` is singular to float32 precision (:func:`lu_factor`).
    FloatingPointError
        A numpy solution beyond float32's range (|x| > 3.4e38).

    See Also
    --------
    lu_factor : Factor once, solve for many b.
    gauss_jordan : Solve A X = B by Gauss-Jordan elimination.

    Examples
    --------
    >>> import numpy as np
    >>> import gpgpu
    >>> A = np.array([[2.0, 1.0], [1.0, 3.0]])
    >>> x = gpgpu.lu_solve(A, np.array([3.0, 5.0]))
    >>> np.allclose(x, [0.8, 1.4], atol=1e-5)
    True
    """
    if (isinstance(factor, (tuple, list)) and len(factor) in (3, 4)
            and all(np.ndim(part) == 2 for part in factor)):
        raise TypeError("lu_solve takes A, or gpgpu.lu_factor(A), not the (P, L, U) arrays of gpgpu.lu: "
                        "call gpgpu.lu_solve(A, b), or f = gpgpu.lu_factor(A) once and gpgpu.lu_solve(f, b) "
                        "for each b")
    owned = not isinstance(factor, LUFactor)
    if owned and not isinstance(b, Stream) and np.ndim(factor) == 2:
        n = factor.rows if isinstance(factor, Stream) else np.shape(factor)[0]
        if np.ndim(b) in (1, 2) and np.shape(b)[0] != n:     # before A is factored
            raise ValueError(f"lu_solve: A is {n} x {n}, so b must have length {n} (or shape ({n}, r) for r "
                             f"right-hand sides), got shape {np.shape(b)}")
    f = lu_factor(factor) if owned else factor
    try:
        with Operands(b) as ops:
            if isinstance(b, Stream):
                bs, eb = b, 0
            else:
                b64 = check_array(b, "b", ndim=(1, 2), texture=False, dtype=np.float64)
                if b64.shape[0] != f.n:
                    raise ValueError(f"lu_solve: b must have length {f.n} (or shape ({f.n}, r) for r "
                                     f"right-hand sides), got shape {b64.shape}")
                if b64.ndim == 2:  # several right-hand sides: one column at a time
                    return np.stack([lu_solve(f, b64[:, j]) for j in range(b64.shape[1])], axis=1)
                arr, eb = scaled_float64(b64)
                bs = ops.stream(arr, "b")
            if bs.shape != (1, f.n):
                raise ValueError(f"lu_solve: b must have length {f.n}, got shape {bs.shape}")
            pb = _gather(bs, f.row_perm)
            y = trsv(f.LU, pb, lower=True, unit_diagonal=True)
            z = trsv(f.LU, y, lower=False)
            pb.release(), y.release()
            if f.pivoting == "full":
                x = _gather(z, np.argsort(f.col_perm))
                z.release()
            else:
                x = z
            # (2^e A) x_s = 2^j b: x = 2^(e - j) x_s
            if not ops.numpy:
                return scaled_stream(x, f.exponent)
            return scaled_back(ops.result(x), f.exponent - eb, "lu_solve: the solution").astype(np.float64)
    finally:
        if owned:
            f.release()


def gauss_jordan(A, B, transfer: str = "rtt"):
    """Solve A X = B by Gauss-Jordan elimination with partial pivoting, on the GPU.

    Paper 004's Gauss-Jordan elimination: the augmented stream [A | B] (n x (n + r)) is
    assembled on the GPU and reduced in place; per step k the pivot search and row swap as in
    :func:`lu`, the normalization of row k by the pivot (a line) and its copy back, and the
    elimination of column k from every other row (two rectangles, above and below row k). X is
    the right block. A numpy A and the columns of a numpy B are scaled by exact powers of two
    before the upload and X scaled back in float64.

    Parameters
    ----------
    A : (n, n) array_like or Stream
        The matrix.
    B : (n,) or (n, r) array_like, or Stream
        Right-hand side(s); a Stream is an n x r matrix.
    transfer : {"rtt", "ctt"}, optional
        Render to texture or copy to texture (section 6.1.1 of 000).

    Returns
    -------
    X : ndarray or Stream
        float64 array of the float32 X for a numpy A (a vector for a vector B); a Stream for a Stream A.

    Raises
    ------
    SingularMatrixError
        A pivot not above n u max|A| (u = 2^-24): A is singular to float32 precision.
    FloatingPointError
        A numpy X beyond float32's range (|x| > 3.4e38).
    ValueError
        A not square, B without n rows, or a bad ``transfer``.

    See Also
    --------
    lu_solve : The LU solve of paper 004.

    Examples
    --------
    >>> import numpy as np
    >>> import gpgpu
    >>> A = np.array([[2.0, 1.0], [1.0, 3.0]])
    >>> X = gpgpu.gauss_jordan(A, np.eye(2))
    >>> X.shape
    (2, 2)
    >>> np.allclose(A @ X, np.eye(2), atol=1e-5)
    True
    """
    if transfer not in ("rtt", "ctt"):
        raise ValueError(f"transfer must be 'rtt' or 'ctt', got {transfer!r}")
    with Operands(A) as ops:
        e = 0                                    # A uploaded as 2^e A
        if isinstance(A, Stream):
            As = ops.stream(A, "A")
        else:
            arr, e = scaled_input(A, validate_square(A))
            As = ops.stream(arr, "A")
        if As.rows != As.cols:
            raise ValueError(f"gauss_jordan: A must be square, got shape {As.shape}")
        n = As.rows
        eB = np.zeros(1, dtype=int)              # column j of B uploaded as 2^eB[j] B[:, j]
        if isinstance(B, Stream):
            vector = B.vector
            Bs = ops.stream(B, "B")
            if vector:
                raise ValueError("gauss_jordan: give B as an n x r stream (a vector stream is one "
                                 "row; B needs n rows)")
        else:
            # with a numpy A, B's columns are scaled first: only 2^eB B must fit float32
            Barr = check_array(B, "B", texture=False, dtype=np.float64 if ops.numpy else np.float32)
            vector = Barr.ndim == 1
            if vector:
                Barr = Barr.reshape(-1, 1)
            if ops.numpy:
                eB = np.array([power_of_two_exponent(float(np.abs(c).max())) for c in Barr.T])
                Barr = np.ldexp(Barr, eB[None, :]).astype(np.float32)
            Bs = ops.stream(Barr, "B")
        if Bs.rows != n:
            raise ValueError(f"gauss_jordan: B must have {n} rows, got shape {Bs.shape}")
        r = Bs.cols
        width = n + r
        K = KERNELS
        threshold = singular_threshold(As, n)
        pp = PingPong(Stream(n, width), Stream(n, width))
        try:
            # [A | B] assembled on the GPU: A into columns 0 .. n-1, B into n .. n+r-1
            K["copy"].draw(pp.S, Rect.covering(0, 0, n, n, T0=WPOS), {"A": As})
            K["copy"].draw(pp.S, Rect.covering(n, 0, width, n, T0=lambda x, y: (x - n, y)), {"A": Bs})
            for k in range(n):
                value, _, p = argmax_region(pp.S, (k, k, k + 1, n), absolute=True)
                if not value > threshold:        # (in A's units, not 2^e A's)
                    raise SingularMatrixError(k, n, "partial", float(np.ldexp(value, -e)),
                                              float(np.ldexp(threshold, -e)),
                                              what=f"Gauss-Jordan elimination of the {n} x {n} matrix")
                if p != k:
                    swap_lines(pp, k, p, width, "row")
                # normalization of row k (columns k .. end) by the pivot, and its copy back
                K["normalization"].draw(pp.T, Line.row(k, k, width, T0=(k + .5, k + .5)), {"L": pp.S},
                                        transfer=transfer)
                K["copy"].draw(pp.S, Line.row(k, k, width, T0=WPOS), {"A": pp.T}, transfer=transfer)
                # eliminate column k from the other rows: A(i, j) -= A(i, k) A(k, j), j > k
                for y0, y1 in ((0, k), (k + 1, n)):
                    if y1 > y0 and width > k + 1:
                        K["elimination"].draw(pp.T, Rect.covering(k + 1, y0, width, y1, T0=lambda x, y: (k + .5, y),
                                                                  T1=lambda x, y: (x, k + .5)),
                                              {"A": pp.S}, transfer=transfer)
                pp.swap()
            X = Stream(n, r)
            KERNELS["copy"].draw(X, Rect.covering(0, 0, r, n, T0=lambda x, y: (x + n, y)), {"A": pp.S})
        finally:
            pp.release()
        if ops.numpy:
            out = X.to_array()
            X.release()
            # (2^e A) X_s = B 2^diag(eB): X = 2^(e - eB) X_s, column by column
            out = scaled_back(out, (e - eB)[None, :] if eB.any() else e, "gauss_jordan: the solution")
            out = out.astype(np.float64)                              # the module's dtype rule
            return out[:, 0] if vector else out
        return X
