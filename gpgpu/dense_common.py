"""What the dense factorizations share: the floor below ``cholesky``, ``lu`` and ``blocked``.

The faithful factorizations (:mod:`gpgpu.cholesky`, :mod:`gpgpu.lu`) and their blocked variants
(:mod:`gpgpu.blocked`, whose panels are factored by the faithful passes) import from here and
not from each other, so the dense modules import in one direction:

    dense_common  <-  blocked  <-  cholesky, lu        (and dense_common <- blas2 <- cholesky, lu)

``blocked`` draws the faithful steps it reuses from here; ``cholesky`` and ``lu`` hold the
public entry points, whose ``variant="blocked"`` goes through the one dispatch,
:func:`gpgpu.blocked.dispatch`. ``tests/test_imports.py`` keeps it so.

Here: the kernels of the faithful steps (``CHOLESKY_KERNELS``, ``LU_KERNELS``; the modules'
``KERNELS`` are these very dicts), Algorithm 2's pivot steps (:func:`pivot_steps`), LU-GPU's
swap and elimination steps (:func:`swap_lines`, :func:`swap_lines_gpu`, :func:`eliminate`), the
breakdown checks on the GPU (:func:`first_bad_pivot`, :func:`singular_threshold`), the exact
power-of-two scaling of numpy inputs (:func:`scaled_input` and its inverses), the input checks
(:func:`validate_spd_input`, :func:`validate_square`) and :class:`LUFactor`.
"""
from __future__ import annotations

import numpy as np

from . import packed as pk
from .errors import UNIT_ROUNDOFF
from .geometry import Line, Rect, Texel
from .kernel import Kernel
from .passes import Draw
from .reduce import reduce_region
from .stream import PingPong, Stream, borrow, check_array, give_back
from .blas1 import scale

__all__ = ["WPOS", "CHOLESKY_KERNELS", "LU_KERNELS", "LU_PIVOTING", "LU_PIVOTS", "LUFactor", "column_below_diagonal",
           "diagonal_pieces", "pivot_steps", "sqrt_inputs", "first_bad_pivot", "singular_threshold", "swap_lines",
           "swap_lines_gpu", "eliminate", "power_of_two_exponent", "scaled_input", "scaled_float64", "scaled_back",
           "scaled_stream", "validate_spd_input", "validate_square"]


def WPOS(x, y):
    """Texture coordinates equal to the window position (a copy in place)."""
    return (x, y)

#: Kernels with their texels read + written per fragment (Table 1 of 000: bytes/frag / 4).
CHOLESKY_KERNELS = {
    "square_root": Kernel("square_root", texels=2, doc="001 Kernel 3; 000 Table 1 8 bytes/frag"),
    "square_root_guarded": Kernel("square_root_guarded", texels=3, doc="IPM safeguard, Wright ch. 11"),
    "copy": Kernel("copy", texels=2, doc="000 Algorithm 2 copy; Table 1 8 bytes/frag"),
    "normalization": Kernel("normalization", texels=3, doc="001 Kernel 4; 000 Table 1 12 bytes/frag"),
    "swizzle": Kernel("outer_product_subtraction", texels=4, doc="001 Kernel 5; 000 Table 1 16 bytes/frag"),
    "computed": Kernel("outer_product_subtraction_computed", texels=4, doc="000 section 6.1.3"),
    "triad": Kernel("outer_product_subtraction_triad", texels=4, doc="000 section 3.2 index triads"),
    "inner_product_subtraction": Kernel("inner_product_subtraction", texels=4,
                                        doc="000 Algorithm 1; Table 1(b) 4(2k+2) bytes/frag"),
    "pivot_column": Kernel("pivot_column", texels=3, doc="square root and normalization in one pass"),
    "lower_inverse_step": Kernel("lower_inverse_step", texels=5,
                                 doc="beyond the papers: step k of L^-1 by Gauss-Jordan, one pass"),
    "cholesky_step": Kernel("cholesky_step", texels=5,
                            doc="beyond the papers: a whole outer-product step in one pass (Fig. 5's triangle from column k)"),
    "cholesky_inverse_step": Kernel("cholesky_inverse_step", texels=5,
                                    doc="beyond the papers: cholesky_step and lower_inverse_step of step k in one pass"),
    "identity": Kernel("identity", texels=1, doc="beyond the papers: I drawn, not uploaded"),
    "pivot_check": Kernel("pivot_check", texels=2, doc="breakdown detection on the GPU"),
    "huge_pivot_flag": Kernel("huge_pivot_flag", texels=2, doc="counting replaced pivots"),
    "replaced_pivot_diagonal": Kernel("replaced_pivot_diagonal", texels=3,
                                      doc="beyond the papers: a replaced pivot becomes its diagonal entry"),
}


# ---------------------------------------------------------------------------- Cholesky's steps
def column_below_diagonal(K: int, m: int, storage: str) -> tuple:
    """((x0, y0, x1, y1) of the texels of L(K+1:m, K), centre of the pivot L(K, K)), full or packed."""
    if storage == "full":
        return (K, K + 1, K + 1, m), (K + .5, K + .5)
    h, w = pk.packed_shape(m)
    off = 1 - m % 2
    x, y = pk.position(K, K, m)
    if K < w:  # left part: rows K+1 .. m-1 at y = i + off, increasing
        return (x, K + 1 + off, x + 1, m + off), (x + .5, y + .5)
    return (x, 0, x + 1, m - 1 - K), (x + .5, y + .5)  # rotated part: y = m-1-i


def diagonal_pieces(m: int, storage: str) -> list:
    """Rects over a 1 x m vector whose T0 is interpolated to the diagonal texels L(k, k)."""
    if storage == "full":
        return [Rect.covering(0, 0, m, 1, T0=lambda x, y: (x, x))]
    h, w = pk.packed_shape(m)
    off = 1 - m % 2
    pieces = [Rect.covering(0, 0, w, 1, T0=lambda x, y: (x, x + off))]
    if m > w:  # L(K, K), K >= w, at (m-off-K, m-1-K)
        pieces.append(Rect.covering(w, 0, m, 1, T0=lambda x, y: (m - off + 1 - x, m - x)))
    return pieces


# ---------------------------------------------------------------------------- plans
def sqrt_inputs(sqrt: Kernel) -> dict:
    """The guarded square root also reads the matrix being factored ("M0") for its tolerance."""
    return {"L": "S", "M0": "M0"} if sqrt is CHOLESKY_KERNELS["square_root_guarded"] else {"L": "S"}


def pivot_steps(k: int, m: int, storage: str, sqrt: Kernel, pivot_mode: str = "separate") -> list:
    """Square root, copy back, normalization, copy back (Algorithm 2 of 000, steps 1-4); with
    ``pivot_mode="fused"`` (beyond the paper) one ``pivot_column`` pass over the pivot and the
    column below it, then one copy back of both."""
    K = CHOLESKY_KERNELS
    px, py = (k, k) if storage == "full" else pk.position(k, k, m)
    column, pivot = column_below_diagonal(k, m, storage)
    if pivot_mode == "fused":
        # the pivot and its column are one vertical run of texels in both storages
        x0, y0, x1, y1 = column
        run_ = (x0, min(y0, py), x1, max(y1, py + 1))
        guarded = sqrt is CHOLESKY_KERNELS["square_root_guarded"]
        return [
            Draw(K["pivot_column"], "T", Rect.covering(*run_, T0=pivot),
                 {"L": "S", "M0": "M0" if guarded else "S"}, {"guarded": guarded, "tolerance": 0.0, "huge": 0.0}),
            Draw(K["copy"], "S", Rect.covering(*run_, T0=WPOS), {"A": "T"}),
        ]
    return [
        Draw(sqrt, "T", Texel.at(px, py), sqrt_inputs(sqrt)),
        Draw(K["copy"], "S", Texel.at(px, py, T0=WPOS), {"A": "T"}),
        Draw(K["normalization"], "T", Rect.covering(*column, T0=pivot), {"L": "S"}),
        Draw(K["copy"], "S", Rect.covering(*column, T0=WPOS), {"A": "T"}),
    ]


def first_bad_pivot(L: Stream, m: int, storage: str, magnitude: bool = False,
                    threshold: float = 0.0) -> int | None:
    """On the GPU: the first k whose pivot L(k, k) is not above ``threshold`` (its magnitude,
    with ``magnitude``), or None. One value is read back."""
    flags = borrow(1, m)
    for piece in diagonal_pieces(m, storage):
        CHOLESKY_KERNELS["pivot_check"].draw(flags, piece, {"L": L}, {"magnitude": bool(magnitude),
                                                            "threshold": float(threshold)})
    res = reduce_region(flags, "min", out=borrow(1, 1))
    value = res.item()
    give_back(flags, res)
    return None if value > 1e38 else int(value)


# ---------------------------------------------------------------------------- LU-GPU's steps
LU_KERNELS = {
    "copy": Kernel("copy", texels=2, doc="004 copy; 000 Table 1(a) 8 bytes/frag"),
    "normalization": Kernel("normalization", texels=3, doc="004 normalization; 000 Table 1(a) 12 bytes/frag"),
    "elimination": Kernel("elimination", texels=4, doc="004 elimination; 000 Table 1(a) 16 bytes/frag"),
    "gather": Kernel("gather", texels=3, doc="row permutation of a right-hand side"),
    "swap_normalization": Kernel("swap_normalization", texels=4, vertex="swap_lines",
                                 doc="004 row swap and normalization in one pass, pivot on the GPU (beyond)"),
    "swap": Kernel("copy", texels=2, vertex="swap_lines", label="copy_swap_gpu",
                   doc="004 row/column swap, lines placed by the vertex program from the GPU's pivot"),
}

LU_PIVOTING = ("none", "partial", "full")
#: where the pivot's position goes: "readback", paper 004's (read back at every step to place
#: the swap lines), or "gpu" (beyond the papers: kept on the GPU, read once at the end)
LU_PIVOTS = ("readback", "gpu")


class LUFactor:
    """The result of ``lu_factor``: the combined L\\U stream (unit L below the diagonal, U on
    and above it) and the permutations, P A Q = L U with (P A)[i] = A[row_perm[i]] and
    (A Q)[:, j] = A[:, col_perm[j]]. ``exponent`` e: the stream holds the factor of 2^e A
    (a numpy A is scaled by a power of two before the upload, :func:`lu_factor`), so its U is
    2^e times A's; L and the permutations are A's."""

    def __init__(self, LU: Stream, row_perm, col_perm, pivoting, row_swaps, col_swaps, exponent: int = 0):
        self.LU, self.row_perm, self.col_perm, self.pivoting = LU, row_perm, col_perm, pivoting
        self.row_swaps, self.col_swaps = row_swaps, col_swaps
        self.exponent = exponent

    @property
    def n(self) -> int:
        return self.LU.rows

    def release(self) -> None:
        self.LU.release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()


def swap_lines(pp: PingPong, a: int, b: int, length: int, axis: str) -> None:
    """Swap rows (axis "row") or columns a and b of the ping-pong pair, ``length`` texels long.

    Two lines drawn into T in one pass, each reading the other's texels in S (the "parallel
    data transfer" of paper 004), then the two lines copied back into S.
    """
    line = Line.row if axis == "row" else Line.column
    if axis == "row":
        source = lambda other: (lambda x, y: (x, other + .5))  # noqa: E731
    else:
        source = lambda other: (lambda x, y: (other + .5, y))  # noqa: E731
    swap = Line.join(line(a, 0, length, T0=source(b)), line(b, 0, length, T0=source(a)))
    LU_KERNELS["copy"].draw(pp.T, swap, {"A": pp.S})
    back = Line.join(line(a, 0, length, T0=WPOS), line(b, 0, length, T0=WPOS))
    LU_KERNELS["copy"].draw(pp.S, back, {"A": pp.T})


def swap_lines_gpu(pp: PingPong, k: int, pivot: Stream, length: int, axis: str, shift: int = 0,
                   by: str | None = None, at: int = 0) -> None:
    """:func:`swap_lines` of row (or column) k with the one whose index is in texel (``at``, 0)
    of ``pivot`` (an argmax result, (value, x, y, 0)) plus ``shift``, without reading it back:
    ``glsl/swap_lines.vert`` places the two lines from it (beyond the papers). ``by`` ("row" or
    "column", default ``axis``) says which of the pivot's indexes: a row vector's entries are
    swapped as columns by the pivot's row."""
    u = {"k": k, "length": length, "rows": axis == "row", "shift": shift, "pivot_row": (by or axis) == "row",
         "at": at}
    LU_KERNELS["swap"].draw_lines(pp.T, 4, {"A": pp.S, "pivot": pivot}, dict(u, back=False))
    LU_KERNELS["swap"].draw_lines(pp.S, 4, {"A": pp.T, "pivot": pivot}, dict(u, back=True))


def eliminate(pp: PingPong, k: int, n: int, transfer: str, cols: int | None = None,
               row_copied: bool = False) -> None:
    """Step k after its pivoting, on an n-row matrix of ``cols`` columns (default n): the row
    of U, the normalized column, the elimination, and the swap of S and T. The square matrix's
    last step is its row of U only (T then holds L\\U); a tall panel's last column (``cols``
    < n, gpgpu.blocked) has its normalization and no elimination, and no swap: S holds it.
    ``row_copied``: row k of T already equals row k of S over columns k .. cols-1 (a row swap
    was just drawn: its first pass wrote the whole new row k into T), so its copy is skipped."""
    K = LU_KERNELS
    cols = n if cols is None else cols
    # copy the row of U: row k, columns k .. cols-1 (a line)
    if not row_copied:
        K["copy"].draw(pp.T, Line.row(k, k, cols, T0=WPOS), {"A": pp.S}, transfer=transfer)
    if k == n - 1:
        return
    column = (k, k + 1, k + 1, n)
    K["normalization"].draw(pp.T, Rect.covering(*column, T0=(k + .5, k + .5)), {"L": pp.S},
                            transfer=transfer)
    K["copy"].draw(pp.S, Rect.covering(*column, T0=WPOS), {"A": pp.T}, transfer=transfer)
    if k + 1 == cols:
        return
    # elimination over the trailing submatrix: T0 down column k, T1 along row k
    K["elimination"].draw(pp.T, Rect.covering(k + 1, k + 1, cols, n, T0=lambda x, y: (k + .5, y),
                                              T1=lambda x, y: (x, k + .5)),
                          {"A": pp.S}, transfer=transfer)
    pp.swap()


def singular_threshold(A: Stream, n: int, region=None) -> float:
    """n u max|A| (u = 2^-24), from an abs-max reduction on the GPU (one read-back): pivots
    not above it are taken as zero. LU's backward error is of this size (times the growth
    factor), so such a pivot cannot be told from an exact zero in float32."""
    res = reduce_region(A, "absmax", region)
    amax = res.item()
    res.release()
    return n * UNIT_ROUNDOFF * amax


def validate_square(a, what="A") -> np.ndarray:
    arr = check_array(a, what, ndim=(2,))
    if arr.shape[0] != arr.shape[1]:
        raise ValueError(f"{what} must be square, got shape {arr.shape}")
    return arr


# ---------------------------------------------------------------------------- scaling and checks
def power_of_two_exponent(amax: float, even: bool = False) -> int:
    """The e with 2^e amax in [0.5, 1) (in [0.5, 2) with e even, ``even=True``); 0 for amax = 0."""
    if not amax > 0.0:
        return 0
    e = -int(np.frexp(amax)[1])
    return e + 1 if even and e % 2 else e


def scaled_input(a, arr: np.ndarray, even: bool = False) -> tuple:
    """(2^e a as float32, e) for a numpy input ``a`` that ``check_array`` has passed as ``arr``:
    the power of two e that brings max|a| into [0.5, 1) ([0.5, 2) with e even, ``even=True``).

    A GPU flushes float32's subnormal numbers (below 2^-126 = 1.2e-38) to zero, in its
    arithmetic and when it reads a texture, so a matrix scaled by 1e-37 loses most of its
    digits there (the backward error of LU came out 8e-2). Scaling by a power of two is exact
    (taken from the float64 values, before their rounding to float32), and every float32
    operation of the factorizations commutes with it away from over- and underflow: the
    callers scale back exactly on the CPU (U by 2^-e, L of Cholesky by 2^(-e/2), solutions
    by the ratio of the two sides' powers). A matrix and the same matrix times 2^j (2^(2j) for
    Cholesky) give the same float32 upload, hence the same GPU results times that power."""
    a64 = np.asarray(a, dtype=np.float64)
    e = power_of_two_exponent(float(np.abs(a64).max()), even)
    return (arr, 0) if e == 0 else (np.ldexp(a64, e).astype(np.float32), e)


def scaled_float64(a64: np.ndarray, even: bool = False) -> tuple:
    """(2^e a as float32, e) for the float64 values ``a64`` of ``check_array(..., dtype=np.float64)``:
    :func:`scaled_input`'s power of two, for an input that need not fit float32 itself (a
    right-hand side of 1e45 is uploaded as a vector of entries below 1; only the solution
    must fit)."""
    e = power_of_two_exponent(float(np.abs(a64).max()), even)
    return np.ldexp(a64, e).astype(np.float32), e


#: float32's largest finite value
FLOAT32_MAX = float(np.finfo(np.float32).max)


def scaled_back(x, e, what: str) -> np.ndarray:
    """2^e x for a float32 result x read back from the GPU, as float64 (exact: a solution far
    below float32's range, 2^-200 b, is neither rounded to a subnormal nor flushed to zero; e an
    integer or an integer array that broadcasts against x); ``FloatingPointError`` when it is
    beyond float32's range above (|x| > 3.4e38), or when the GPU's x already overflowed (an
    inf, or the NaN that inf - inf leaves: an ill-conditioned matrix's solution)."""
    out = np.ldexp(np.asarray(x, dtype=np.float64), e)
    if not np.all(np.isfinite(out)):
        raise FloatingPointError(f"{what} overflows float32 on the GPU (an inf or NaN came back): the "
                                 "matrix is too ill-conditioned for float32, or the problem's scale is beyond "
                                 "float32's range; check the matrix's conditioning or solve it in float64")
    if np.any(np.abs(out) > FLOAT32_MAX):
        raise FloatingPointError(f"{what} overflows float32 (|x| > 3.4e38): the problem's scale "
                                 "is beyond float32's range; scale it")
    return out


def scaled_stream(x: Stream, e: int) -> Stream:
    """2^e x on the GPU (``blas1.scale`` passes of at most 2^100 each, so that no factor
    leaves float32's normal range); releases x unless e = 0."""
    while e:
        step = max(-100, min(100, e))
        x_old, x = x, scale(2.0 ** step, x)
        x_old.release()
        e -= step
    return x


def validate_spd_input(a) -> np.ndarray:
    arr = check_array(a, "A", ndim=(2,))
    n, n2 = arr.shape
    if n != n2:
        raise ValueError(f"cholesky: A must be square, got shape {arr.shape}")
    scale = float(np.abs(arr).max()) or 1.0
    asym = float(np.abs(arr - arr.T).max())
    if asym > 1e-5 * scale:
        raise ValueError(f"cholesky: A is not symmetric (max |A - A^T| = {asym:.3g}); Cholesky needs a "
                         "symmetric positive definite matrix (only its lower triangle is read)")
    return arr
