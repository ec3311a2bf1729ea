"""Sparse matrices as textures, and the sparse products of papers 002 and 003.

Paper 003 (Corrigan), Figs. 4-7: "only nonzero values are stored (Figure 4) ... which column
each entry is stored in ... is also stored (Figure 5). The number of nonzero entries is hard
coded into each fragment program" (Fig. 6); rows are sorted by their number of non-zeros "to
allow for as many rows to be drawn at once", and the columns with them so that a symmetric
positive definite matrix stays one (Fig. 7). Paper 002 (Smith, Gondzio, Hall), section 3:
FSAX y = A x, FSATY x = Aᵀ y and FSAAT z = A Θ Aᵀ y (9) with A in ELLPACK ("full coalescing at
one thread per row"), transposed ELLPACK for large problems, and "the dense rows extracted to
be treated separately" (the HYB idea).

``SparseStream.from_scipy(A, format=...)`` puts a ``scipy.sparse`` matrix on the GPU:

``format="corrigan"`` (003)
    The non-zeros row after row in one texture (values) and their column indexes in another,
    ``store_width`` texels wide. Rows are grouped into runs of consecutive rows with the same
    non-zero count; each run is one rectangle over its part of y, drawn with the program for
    its count (``glsl/sparse_corrigan.frag`` with ``NNZ`` defined). ``sort=True`` permutes
    rows and columns by count (a square matrix only), so each count is one run.
``format="ellpack"`` (002)
    Values and column indexes in m x K textures (K the longest row, shorter rows padded with
    zeros): row i's entries along texture row i. One rectangle, one program, one fragment per
    row (``glsl/sparse_ellpack.frag``).
``format="tell"`` (002, transposed ELLPACK)
    The same entries in K x m textures: row i's entries down texture column i, so that
    neighbouring rows read neighbouring texels (``glsl/sparse_tell.frag``).
``format="packed"`` (beyond papers 002 and 003)
    A storage of this project, not the papers': each entry's value and column index share one
    RGBA32F texel, two entries a texel, (value, column, value, column), so a fragment fetches
    one texel for two entries (ELLPACK and TELL fetch a value texel and a column texel for
    each): 1.5 fetches a non-zero with the gather of x, against 3. Rows are cut into segments
    of ``segment`` = L entries (default: about 8, from the rows' median count, or the longest
    row when that pads little, see ``_auto_segment``); one fragment sums one segment
    (``glsl/sparse_packed.frag``, L compiled in, its loop unrolled), the segments' texels down
    a texture column as T-ELL's. Where every row is one segment, that one pass writes y. Else a
    row's segments are consecutive partial sums in a folded vector P (``fold`` wide, default
    ``PACKED_FOLD`` = 4096, so that P is not a strip of a few texel rows), and a second pass
    sums each row's partials into y (``glsl/sparse_packed_sum.frag``; every row the same
    number of segments: computed places, else each row's (first, count) from an RGBA texel laid
    out like y). Long rows thus become many short fragments (nug30's rows of 30: four
    fragments of 8), and uneven rows pad only their last segment (nug30's A^T, rows of 4 or
    60: one segment of 4 or fifteen, not every row padded to 60). Column indexes are stored as
    float32, exact up to 2^24 = 16777216: a matrix with more columns (rmatvec's copy: more
    rows) is refused with a ValueError; so are more than 2^24 segments. Its dense part: only
    rows of more than ``PACKED_DENSE_ROW`` non-zeros by default (no padding to save, a long row
    only makes one fragment's second-pass loop long); ``dense=`` as for the other formats.
``format="split"`` (beyond papers 002 and 003)
    The packed format's segments and second pass without the packing: values and column
    indexes in two float textures, one entry a texel each (``glsl/sparse_split.frag``, 3
    fetches a non-zero as ELLPACK's), so that a measurement can tell the row splitting's gain
    from the packing's. Everything else (``segment``, ``fold``, the limits) as "packed".

Dense rows and columns (``dense``): a row or column with more non-zeros than the threshold
leaves the sparse part. A dense column is stored as a full column (a plane of its own) and
added by one pass; a dense row is stored as a full row (a plane folded like x) and its product
is an inner product (003's component-wise product, then sums) written into its texel. The
inner products of all dense rows are done together (``_plane_dots``): one product pass over
every plane and halving sums, a number of passes that does not grow with the dense rows. By
default (ELLPACK, TELL) the threshold is the one that stores the fewest texels (and at least 32): rows of up to t non-zeros pad
every row of the layout to t texels, a row moved out costs a full row (n texels; a column m),
so a row goes dense only where it is long beside the others *and* the full row is cheaper than
the padding it would cause (a measured case: nug30's 900 columns of 60 non-zeros, among
columns of 4, stay sparse; as dense columns they took 2 s a product on llvmpipe, 100 x nug20's).
The corrigan format pads nothing; its threshold is ``max(32, 10 x`` the median count), at most
the longest row one of its programs unrolls (``CORRIGAN_MAX_NNZ``). For the corrigan format
the dense part is *beyond paper 003*: it is 003's future work 4 ("use of a dense representation
and operations for dense rows": "the Cg compiler simply fails when compiling the corresponding
fragment programs for those rows"), on by default (``dense_split=True``). ``dense_split=False``
is 003 as printed: every row in the values and columns textures, one program per count, and a
row longer than one program unrolls (``CORRIGAN_MAX_NNZ``) refused, as 003's compiler refused
it. (For ELLPACK and TELL the dense part is paper 002's own "dense rows extracted";
``dense_split=False`` keeps every row in their layout too.) The automatic threshold of
the ELLPACK layouts is also at most the longest row their texture can hold (the R blocks of K
texels side by side must fit GL_MAX_TEXTURE_SIZE): a single full row of more non-zeros than a
texture is wide goes dense instead of failing.

The corrigan format compiles one fragment program per distinct non-zero count (003, Fig. 6),
all of them before the first product returns, the longer the rows the slower: a matrix with
more distinct counts than ``max_programs`` (default ``CORRIGAN_MAX_PROGRAMS`` = 64; the NETLIB
matrices have at most 51, their columns at most 24) is refused by ``from_scipy`` with a ValueError that names
``format="ellpack"`` (one program) and ``max_programs`` (to compile them anyway). A first
product that compiles more than ``LOG_PROGRAMS`` (32) programs says so first, once per matrix:
a line on stderr (how many programs, their counts, the matrix; llvmpipe compiles a program of
a few hundred fetches in about a second) and the same on the ``gpgpu.sparse`` logger (INFO).

Input: anything ``scipy.sparse.csr_matrix`` takes, or a dense 2-D array. A matrix that stores
an entry (i, j) more than once (a non-canonical CSR or COO) means their sum, as in scipy's own
``A @ x``; the sum is taken on a copy (the caller's matrix is not changed).

Vectors longer than the widest texture are folded into rows (see ``gpgpu.stream``); ELLPACK
layouts fold the same way: the m rows are cut into R = ceil(m / W) blocks of W, block r in
texture columns r K .. r K + K - 1 (TELL: texture rows).

Products (``matvec``, ``rmatvec``, ``normal_matvec``) take numpy vectors (and answer numpy) or
vector Streams (and answer Streams). ``out=`` is of the answer's kind: for numpy input a 1-D
float numpy array of the answer's length, written in place and returned (as numpy's ``out=``);
for Stream input a vector Stream of that length (``Stream.vector_of(length)``), other than the
input. Anything else is a TypeError or ValueError naming the expected shape and type. A
released SparseStream raises ValueError. ``rmatvec`` (FSATY) works from a second, row-wise copy of
Aᵀ (``transpose="copy"``, the default: built on first use, doubling the memory, as 002 says a
GPU code must; built from a host copy of A, 8 bytes a non-zero kept until then, not from a
read-back: ``SparseStream.transposed``), or from the one copy of A (``transpose="scatter"``: a
point per stored entry, placed on its column by the vertex program and summed by additive
blending; ELLPACK and TELL).
"""
from __future__ import annotations

import logging
import sys

import numpy as np

from .blas1 import KERNELS as L1, whole
from .context import max_texture_size
from .dense_common import power_of_two_exponent, scaled_back
from .geometry import Rect, Triangle
from .kernel import Kernel, _state as _kernel_state, additive_blending
from .reduce import reduce_region
from .stream import Stream, borrow, check_array, check_shape, fold_width, give_back, vector_regions, vector_shape

__all__ = ["SparseStream", "FORMATS", "TRANSPOSES", "corrigan_kernel", "CORRIGAN_MAX_NNZ",
           "CORRIGAN_MAX_PROGRAMS"]

log = logging.getLogger(__name__)

FORMATS = ("corrigan", "ellpack", "tell", "packed", "split")
SEGMENTED = ("packed", "split")
TRANSPOSES = ("copy", "scatter")

#: The longest row the corrigan format unrolls into one program (003: "the Cg compiler simply
#: fails when compiling the corresponding fragment programs for those rows"); longer rows must
#: go to the dense part.
CORRIGAN_MAX_NNZ = 1024

#: The default ``max_programs`` of the corrigan format: distinct non-zero counts (one fragment
#: program each, compiled by the first product) beyond which ``from_scipy`` refuses the matrix
#: and names ``format="ellpack"``; every NETLIB matrix has at most 51.
CORRIGAN_MAX_PROGRAMS = 64

#: The packed format (beyond the papers): about this many entries a fragment sums, where rows
#: are split (``segment=None``).
PACKED_SEGMENT = 8

#: The packed format: the width of the folded partial sums of split rows (``fold=None``),
#: narrower than a texture row so that a few hundred thousand partials are a block of rows,
#: not a strip two texels tall.
PACKED_FOLD = 4096

#: The packed format with ``dense=None``: rows of more non-zeros than this go to the dense part
#: (003's inner products in a pyramid); shorter ones are split into segments. Columns stay.
PACKED_DENSE_ROW = 8192

#: The packed format: the longest segment (entries a fragment, one program each, unrolled).
PACKED_MAX_SEGMENT = 64

#: Column indexes (and the packed format's partial-sum indexes) are float32 in every format:
#: exact up to this; a matrix with more columns is refused.
FLOAT_INDEX_LIMIT = 2 ** 24

#: A first product that compiles more corrigan programs than this ("a few dozen") says so first,
#: on stderr and on the ``gpgpu.sparse`` logger (INFO).
LOG_PROGRAMS = 32

KERNELS = {
    "ellpack": Kernel("sparse_ellpack", texels=3, doc="002 section 3.2 ELLPACK, one fragment per row"),
    "tell": Kernel("sparse_tell", texels=3, doc="002 section 3.2 transposed ELLPACK"),
    "dense_part": Kernel("sparse_dense_part", texels=4, doc="002 section 3.2 dense rows and columns"),
    "gather": Kernel("gather_vector", texels=3, doc="003 Fig. 7: permutation of a vector"),
    "scatter": Kernel("sparse_scatter", texels=4, doc="FSATY from one copy: points, additive blending",
                      vertex="sparse_scatter"),
    "row_add": Kernel("scaled_rows", texels=4, doc="the dense rows of A times their y(i), added into x"),
    "plane_product": Kernel("plane_product", texels=3, doc="planes of dense rows or columns times a vector"),
}

_CORRIGAN: dict = {}
_PACKED: dict = {}


def packed_kernel(L: int) -> Kernel:
    """The packed format's fragment program for segments of ``L`` entries (L compiled in)."""
    k = _PACKED.get(L)
    if k is None:
        k = _PACKED[L] = Kernel("sparse_packed", texels=-(-L // 2) + L + 1, defines={"L": L},
                                doc=f"beyond 002: segments of {L} entries, two a RGBA texel")
    return k


def split_kernel(L: int) -> Kernel:
    """The split format's fragment program for segments of ``L`` entries (no packing)."""
    key = ("split", L)
    k = _PACKED.get(key)
    if k is None:
        k = _PACKED[key] = Kernel("sparse_split", texels=3 * L + 1, defines={"L": L},
                                  doc=f"beyond 002: segments of {L} entries, value and column apart")
    return k


def _packed_sum_kernel(segments: int | None) -> Kernel:
    """The second pass of the packed format: each row's partial sums into y (``segments``: every
    row has that many, else a (first, count) texel per row)."""
    key = ("sum", segments)
    k = _PACKED.get(key)
    if k is None:
        defines = {} if segments is None else {"SEGMENTS": segments}
        k = _PACKED[key] = Kernel("sparse_packed_sum", texels=2 + (segments or 1), defines=defines,
                                  doc="beyond 002: a split row's partial sums")
    return k


def _auto_segment(counts: np.ndarray) -> int:
    """The packed format's entries a fragment: the longest row when it is at most
    ``PACKED_SEGMENT`` and padding every row to it at most doubles the texels (one pass, no
    split: Poisson's rows of 3 .. 5 give 5); else the median row (of those not empty) cut into
    pieces of at most ``PACKED_SEGMENT``, as even as can be (rows of 30: 4 segments of 8; rows
    of 4 or 60: 4, the rows of 60 in 15 segments)."""
    nz = counts[counts > 0]
    if nz.size == 0:
        return 1
    K = int(nz.max())
    if K <= PACKED_SEGMENT and counts.size * K <= 2 * int(nz.sum()):
        return K
    med = int(np.ceil(np.median(nz)))
    pieces = -(-med // PACKED_SEGMENT)
    return max(1, -(-med // pieces))


def _index_type(*sizes):
    """int32 when every index (entries, places) fits it, else int64: the build's integer work
    on int32 is half the memory traffic."""
    return np.int32 if max(sizes) < 2 ** 31 else np.int64


def _first_of(counts: np.ndarray) -> np.ndarray:
    """The exclusive running sum of ``counts`` (int64): where each row's first entry is."""
    first = np.zeros(counts.size, dtype=np.int64)
    np.cumsum(counts[:-1], out=first[1:])
    return first


def _packed_positions(counts: np.ndarray, L: int):
    """For rows of ``counts`` entries cut into segments of L: segments a row (at least 1), the
    first segment of each row, and for every entry (row-major) its segment and its slot in it."""
    seg = np.maximum(1, -(-counts // L))
    first = _first_of(seg)
    nnz = int(counts.sum())
    it = _index_type(nnz, int(seg.sum()))
    pos = np.arange(nnz, dtype=it) - np.repeat(_first_of(counts).astype(it), counts)
    whole = pos // L
    return seg, first, np.repeat(first.astype(it), counts) + whole, pos - whole * L


def _places(counts: np.ndarray, base: np.ndarray, L: int, P: int, nnz: int, total: int) -> np.ndarray:
    """Where each entry (row-major, rows of ``counts``) goes among ``total`` places: row i's
    k-th entry at base[i] + (k // L) P + k % L (segments of P places, L entries each; P >= L: a
    packed segment of odd L has a spare place). That is the entry's own number plus one
    offset a row (base[i] - its first entry's number), plus (k // L)(P - L) where a row spans
    several segments with spare places. Integer arithmetic on rows and one np.repeat, int32
    where it fits."""
    it = _index_type(nnz, total)
    starts = _first_of(counts)
    q = np.arange(nnz, dtype=it)
    q += np.repeat((base - starts).astype(it), counts)
    if P != L and counts.size and int(counts.max()) > L:
        pos = np.arange(nnz, dtype=it) - np.repeat(starts.astype(it), counts)
        q += (pos // L) * (P - L)
    return q


def _pairs(vals: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Each entry's (value, column) as float32 side by side, seen as one 8-byte item an entry
    (one scatter moves both)."""
    pv = np.empty((vals.size, 2), dtype=np.float32)
    pv[:, 0] = vals
    pv[:, 1] = cols
    return pv.view(np.uint64).reshape(vals.size)


def _scatter_pairs(vals, cols, counts, base, L, P, total):
    """The entries' (value, column) pairs among ``total`` places (a uint64 array, zero where no
    entry is), row i's k-th entry at base[i] + (k // L) P + k % L (``_places``). Rows all of one
    count c, each ``step`` places after the one before (base = i step, c <= L or P = L), are a
    reshape; else one scatter."""
    nnz = vals.size
    buf = np.zeros(total, dtype=np.uint64)
    if not nnz:
        return buf
    pairs = _pairs(vals, cols)
    m, c = counts.size, int(counts[0])
    step = int(base[1] - base[0]) if m > 1 else max(c, 1)
    if c and (c <= L or P == L) and step >= -(-c // L) * P and m * step <= total and bool(np.all(counts == c)) \
            and int(base[0]) == 0 and bool(np.all(np.diff(base) == step)):
        buf[:m * step].reshape(m, step)[:, :c] = pairs.reshape(m, c)
    else:
        buf[_places(counts, base, L, P, nnz, total)] = pairs
    return buf


def _deinterleave(buf: np.ndarray):
    """The values and the columns of (value, column) pairs ``buf`` (uint64), each a contiguous
    float32 array of buf's length."""
    p = buf.view(np.float32).reshape(buf.size, 2)
    return np.ascontiguousarray(p[:, 0]), np.ascontiguousarray(p[:, 1])


def _blocks_down(buf: np.ndarray, blocks: int, width: int, depth: int, texel) -> np.ndarray:
    """``buf`` as blocks x width items of ``depth`` texels each (item-major), laid out as a
    texture of blocks x depth rows of ``width``: item b W + x's texel k at (x, b depth + k)
    (T-ELL's and the packed segments' layout). One transposing copy; ``texel`` the numpy
    type of one texel (np.float32, or "V16" for RGBA32F)."""
    t = buf.view(texel).reshape(blocks, width, depth)
    if depth == 1:
        return t.reshape(blocks, width)
    return np.ascontiguousarray(t.transpose(0, 2, 1)).reshape(blocks * depth, width)


def corrigan_kernel(nnz: int) -> Kernel:
    """The fragment program for rows of ``nnz`` non-zeros (003: hard-coded count), one per count."""
    k = _CORRIGAN.get(nnz)
    if k is None:
        k = _CORRIGAN[nnz] = Kernel("sparse_corrigan", texels=2 * nnz + 1,
                                    doc=f"003 Fig. 6: rows of {nnz} non-zeros", defines={"NNZ": nnz})
    return k


def _as_csr(A, name="A"):
    """A real, finite scipy CSR matrix (float64, sorted indices, explicit zeros removed), always
    a copy. Duplicate entries (a CSR or COO matrix may store (i, j) more than once) are summed,
    as scipy's own products do; the caller's matrix is left as it was."""
    import scipy.sparse as sp

    if sp.issparse(A):
        M = sp.csr_matrix(A)
    else:
        arr = np.asarray(A)
        if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
            module = type(A).__module__.split(".")[0]
            what = (f"dtype {arr.dtype}" if arr.dtype != object or arr.ndim else
                    f"{'' if module == 'builtins' else module + '.'}{type(A).__name__}, not an array of numbers")
            raise ValueError(f"{name}: expected a real matrix (a scipy.sparse matrix or array, or a 2-D numeric "
                             f"array: its entries go into textures, so a LinearOperator or a function will not "
                             f"do), got {what}")
        if arr.ndim != 2:
            raise ValueError(f"{name}: expected a 2-D matrix, got shape {arr.shape}")
        M = sp.csr_matrix(arr)
    if np.iscomplexobj(M.data):
        raise ValueError(f"{name}: complex values are not supported (streams are real float32)")
    if M.shape[0] < 1 or M.shape[1] < 1:
        raise ValueError(f"{name}: empty matrix (shape {M.shape})")
    M = sp.csr_matrix(M, dtype=np.float64, copy=True)     # never the caller's arrays
    M.sum_duplicates()                # scipy's meaning of a repeated (i, j): their sum
    if M.nnz and not np.all(np.isfinite(M.data)):
        bad = np.flatnonzero(~np.isfinite(M.data))[0]
        row = int(np.searchsorted(M.indptr, bad, side="right") - 1)
        raise ValueError(f"{name}: contains NaN or infinity (row {row}, column {int(M.indices[bad])})")
    with np.errstate(over="ignore"):
        if M.nnz and not np.all(np.isfinite(M.data.astype(np.float32))):
            raise ValueError(f"{name}: values overflow float32 (|a| > 3.4e38)")
    if M.nnz and not M.data.all():    # (a scan is cheaper than eliminate_zeros' pass)
        M.eliminate_zeros()
    M.sort_indices()
    return M


#: float32's smallest normal number, 2^-126: a GPU flushes anything smaller to zero
FLOAT32_TINY = float(np.finfo(np.float32).tiny)


def _check_normal_range(data: np.ndarray) -> None:
    """Refuse non-zeros below float32's normal range (2^-126) that are not negligible beside the
    largest (above 2^-24, float32's unit roundoff, times it): a GPU flushes them to zero when it
    reads the texture, and every product would drop them."""
    a = np.abs(data)
    if not a.size:
        return
    top = float(a.max())
    lost = a[(a < FLOAT32_TINY) & (a > 2.0 ** -24 * top)]
    if lost.size:
        raise ValueError(f"A: entries down to {float(lost.min()):.3g} are below float32's normal range (1.2e-38), "
                         f"where the GPU flushes them to zero, and not negligible beside the largest ({top:.3g}); "
                         "scale A up by a power of two (exact) and the products down by it")


def _auto_threshold(counts: np.ndarray, length: int, padded: bool = True, most: int | None = None) -> int:
    """The non-zeros above which a row (a column) goes to the dense part, by texels: keeping
    rows of up to t non-zeros makes every row of the padded layout t texels long (count x t),
    moving a longer one makes it a full row of ``length`` texels. Answers the t of least
    count x t + (rows above t) x length (the largest such t on a tie, fewer dense passes),
    and never less than 32: a row that short is cheaper in the layout than as a dense pass.

    A row of 60 non-zeros among rows of 4 (nug30's columns) stays sparse when the full row
    would hold 52260 texels; a full row among rows of sqrt(N) (a Gruca-like LP) goes dense.
    The corrigan format pads nothing (a program per row length): there the threshold is
    max(32, 10 x the median count).

    ``most``: the largest threshold the layout can take (the longest row its texture holds, or
    that one corrigan program unrolls). Only the thresholds up to it compete; 32 is one of them
    (every row above it dense), and when even 32 is too long the answer is ``most``. A single
    full row wider than a texture thus goes dense rather than failing.
    """
    if counts.size == 0:
        return 0
    if not padded:
        t = int(max(32, 10 * float(np.median(counts))))
        return t if most is None else min(t, int(most))
    # 32 as a candidate changes no unconstrained choice: with rows of up to 32 it costs no less
    # than the longest of them, without, more than keeping every row (a row is at most `length`)
    # the distinct counts and 32, and how many rows are above each: from a histogram of the
    # counts (small integers), not a sort
    hist = np.bincount(counts, minlength=33)
    hist_32 = hist[32]
    hist[32] = max(hist_32, 1)
    t = np.flatnonzero(hist)
    hist[32] = hist_32
    above = counts.size - np.cumsum(hist)[t]
    cost = counts.size * t.astype(np.float64) + above * float(length)
    if most is not None:
        fits = np.maximum(t, 32) <= most
        if not fits.any():
            return int(most)
        t, cost = t[fits], cost[fits]
    return int(max(32, t[len(t) - 1 - int(np.argmin(cost[::-1]))]))


class SparseStream:
    """A sparse m x n matrix on the GPU (see the module notes for the formats).

    Use ``SparseStream.from_scipy(A, format=..., sort=..., dense=..., transpose=...)``;
    ``release()`` (or ``with``) frees the textures; a released one raises ValueError when used
    again. Attributes: ``shape``, ``nnz``,
    ``format``, ``dense_rows`` and ``dense_cols`` (indexes moved to the dense part), ``perm``
    (the sort permutation, new -> old, or None), ``programs`` (distinct fragment programs of
    one product) and ``rectangles`` (passes of the sparse part of one product). The packed
    format also has ``segment`` (entries a fragment), ``split`` (the most segments of a row),
    ``segments`` (all of them), ``single`` (one pass writes y), ``uniform`` (every row the same
    number of segments) and ``p_shape`` (the folded partials, or the segments' layout when
    single). ``fetches()`` counts the sparse part's texel fetches a product; ``max_abs()`` is
    max |a_ij| (every format).
    """

    def __init__(self):  # use from_scipy
        self.format = None
        self.shape = (0, 0)
        self.nnz = 0
        self._streams: dict = {}
        self._T = None
        self._host = None              # (float32 values, indices, indptr) of A, for transposed()
        self._released = False
        self._of_transpose = False     # rmatvec's transposed copy: its rows are A's columns
        self._announced = False        # the first corrigan product has said what it compiles

    def _alive(self) -> None:
        """Refuse a released (or never built) SparseStream with a sentence, not a KeyError."""
        if self._released:
            raise ValueError(f"this SparseStream ({self.format}, {self.shape[0]} x {self.shape[1]}) was "
                             "released (release() or the end of its with block): its textures are gone; "
                             "build a new one with SparseStream.from_scipy(A)")
        if self.format is None:
            raise ValueError("this SparseStream holds no matrix: build one with SparseStream.from_scipy(A)")

    def _line(self, i: int) -> str:
        """Row i of the stored layout, in the user's words: a column of A in rmatvec's copy, the
        original index of a sorted matrix."""
        i = int(self.perm[i]) if getattr(self, "perm", None) is not None else int(i)
        return f"column {i} of A" if self._of_transpose else f"row {i}"

    def _lines(self) -> str:
        return "A's columns" if self._of_transpose else "A's rows"

    def _where(self) -> str:
        """The start of an error of the layout: which copy of A it is about."""
        return "rmatvec's transposed copy of A (its rows are A's columns): " if self._of_transpose else ""

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_scipy(cls, A, format: str = "ellpack", sort: bool = False, dense=None,
                   transpose: str = "copy", sums: str = "pingpong",
                   max_programs: int | None = None, dense_split: bool = True,
                   segment: int | None = None, fold: int | None = None) -> "SparseStream":
        """Upload ``A`` (any scipy.sparse matrix, or a dense 2-D array).

        Parameters
        ----------
        format : {"ellpack", "tell", "corrigan", "packed", "split"}
            "packed" and "split" are beyond the papers (module notes): long rows split into
            segments; "packed" also two entries a texel.
        sort : bool
            Corrigan format: permute rows and columns by non-zero count (003, Fig. 7); A must
            be square. Products still take and answer vectors in the original order. True or
            False: anything else (a str "no" is true in Python) is a ValueError.
        dense : None, False or int
            Rows and columns with more non-zeros than this go to the dense part; None picks
            the threshold of fewest texels (module notes), False keeps everything sparse.
        transpose : {"copy", "scatter"}
            How ``rmatvec`` computes Aᵀ y (module notes).
        sums : {"pingpong", "fan"}
            The reduction strategy of the dense part's inner products (:mod:`gpgpu.reduce`:
            000's halving sums, or the fan sums beyond the papers, fewer passes).
        max_programs : int or None
            Corrigan format: the most distinct non-zero counts (fragment programs, compiled by
            the first product) accepted; None: ``CORRIGAN_MAX_PROGRAMS`` (64). A matrix with
            more raises ValueError (use ``format="ellpack"``, or raise this). Also holds for
            the transposed copy of ``rmatvec`` (A's columns).
        dense_split : bool
            The dense part at all (default True). For the corrigan format it is beyond paper
            003 (its future work 4, module notes); ``dense_split=False`` is 003's storage as
            printed: every row in the sparse textures, a row of more than ``CORRIGAN_MAX_NNZ``
            non-zeros refused. For ELLPACK and TELL, False keeps every row in the layout (as
            ``dense=False``). ``dense_split=False`` with an int ``dense`` is a ValueError.
        segment : int or None
            Packed and split formats only: the entries one fragment sums (1 .. ``PACKED_MAX_SEGMENT``); a
            longer row is split into segments summed by a second pass. None: ``_auto_segment``
            (about ``PACKED_SEGMENT``). The transposed copy of ``rmatvec`` takes the same value
            (None: chosen from A's columns).
        fold : int or None
            Packed and split formats only: the width the split rows' partial sums are folded to (None:
            ``PACKED_FOLD``, at most ``gpgpu.stream.FOLD_WIDTH``; y's own width when no row is
            split: then one pass writes y). A
            given width always takes the second pass (it re-folds into y).

        Notes
        -----
        Duplicate entries of ``A`` are summed (on a copy), as scipy's ``A @ x`` does. Entries
        below float32's normal range (1.2e-38), which a GPU flushes to zero, are refused
        (ValueError) unless negligible beside the largest (below 2^-24 times it): scale such an A
        up by a power of two.
        """
        if not isinstance(dense_split, (bool, np.bool_)):
            raise ValueError(f"dense_split must be True or False, got {dense_split!r}")
        if not isinstance(sort, (bool, np.bool_)):     # sort="no" sorted: a str is true
            raise ValueError(f"sort must be True or False, got {sort!r}")
        if not dense_split:
            if not (dense is None or dense is False):
                raise ValueError(f"dense_split=False keeps every row sparse (paper 003's storage as printed), "
                                 f"so it takes no dense threshold; got dense={dense!r}: drop one of the two")
            dense = False
        return cls._build(A, format, sort, dense, transpose, sums, max_programs, of_transpose=False,
                          segment=segment, fold=fold)

    @classmethod
    def _build(cls, A, format, sort, dense, transpose, sums, max_programs, of_transpose,
               segment=None, fold=None) -> "SparseStream":
        if format not in FORMATS:
            raise ValueError(f"format must be one of {FORMATS}, got {format!r}")
        for name, value, most in (("segment", segment, PACKED_MAX_SEGMENT), ("fold", fold, None)):
            if value is None:
                continue
            if format not in SEGMENTED:
                raise ValueError(f"{name}= is an option of format='packed' and 'split' (beyond the papers); "
                                 f"format={format!r} takes none: drop {name}= or use format='packed'")
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1 or (
                    most is not None and value > most):
                span = f"1 .. {most}" if most is not None else "a positive int"
                raise ValueError(f"{name} must be {span} (or None: chosen from the rows), got {value!r}")
        if sums not in ("pingpong", "fan"):
            raise ValueError(f"sums must be 'pingpong' or 'fan', got {sums!r}")
        if transpose not in TRANSPOSES:
            raise ValueError(f"transpose must be one of {TRANSPOSES}, got {transpose!r}")
        if transpose == "scatter" and format in ("corrigan",) + SEGMENTED:
            raise ValueError(f"transpose='scatter' walks the ELLPACK layouts; the {format} format "
                             "computes A^T y from a transposed copy (transpose='copy')")
        if max_programs is None:
            max_programs = CORRIGAN_MAX_PROGRAMS
        if isinstance(max_programs, bool) or not isinstance(max_programs, (int, np.integer)) or max_programs < 1:
            raise ValueError(f"max_programs must be a positive int (fragment programs), got {max_programs!r}")
        if not (dense is None or dense is False) and (
                isinstance(dense, bool) or not isinstance(dense, (int, np.integer)) or dense < 1):
            raise ValueError(f"dense must be None, False or a positive int (non-zeros), got {dense!r}")
        M = _as_csr(A)
        m, n = M.shape
        _check_normal_range(M.data)
        check_shape((m,), "A's rows (as a vector)")
        check_shape((n,), "A's columns (as a vector)")
        if n > FLOAT_INDEX_LIMIT:                 # every format's column indexes are float32
            what = ("rmatvec's transposed copy of A has A's rows as its columns: A has"
                    if of_transpose else "A has")
            raise ValueError(f"format={format!r} stores column indexes as float32, exact only up to 2^24 = "
                             f"{FLOAT_INDEX_LIMIT} columns; {what} {n}. Split A into column blocks of at most "
                             f"{FLOAT_INDEX_LIMIT} (a product per block)")
        self = cls()
        self.format, self.shape, self.nnz, self.transpose = format, (m, n), int(M.nnz), transpose
        self.sums = sums
        self._source_dense, self._sort, self._max_programs = dense, sort, int(max_programs)
        self._of_transpose = of_transpose
        self._segment_arg, self._fold_arg = segment, fold
        # max |a_ij| of what the textures hold (float32, rounded as the upload rounds): max_abs()
        data32 = M.data.astype(np.float32)
        self._max_abs = float(np.abs(data32).max()) if M.nnz else 0.0
        # rmatvec's transposed copy is built from a host copy of A as the textures hold it (its
        # structure and float32 values, original order), not from the textures read back
        if transpose == "copy" and not of_transpose:
            self._host = (data32, M.indices, M.indptr)
        perm = None
        if sort:
            if format != "corrigan":
                raise ValueError("sort=True is the row and column sorting of the corrigan format "
                                 "(paper 003, Fig. 7); the ELLPACK formats draw every row in one pass")
            if m != n:
                raise ValueError(f"sort=True permutes rows and columns alike (paper 003, Fig. 7), so "
                                 f"A must be square; it is {m} x {n}")
            counts = np.diff(M.indptr)
            perm = np.argsort(counts, kind="stable")          # new position -> old index
            M = M[perm][:, perm].tocsr()
            M.sort_indices()
        self.perm = perm
        # --- the dense part
        row_nnz = np.diff(M.indptr)
        # the columns' counts only where a column may go dense (not dense=False, not the
        # segmented formats' default, which keeps every column)
        col_nnz = None if dense is False or (dense is None and format in SEGMENTED) else \
            np.bincount(M.indices, minlength=n)
        if dense is False:
            rows_t = cols_t = None
        elif dense is None and format in SEGMENTED:
            # nothing is padded: only rows too long for one fragment's second-pass loop go
            rows_t, cols_t = PACKED_DENSE_ROW, max(m, n) + 1
        elif dense is None:
            padded = format != "corrigan"
            # the longest row the layout holds: K texels a block, R blocks side by side in one
            # texture (ELLPACK, TELL), or one corrigan program's unrolled row
            most = max_texture_size() // vector_shape(m)[0] if padded else CORRIGAN_MAX_NNZ
            rows_t, cols_t = _auto_threshold(row_nnz, n, padded, most), _auto_threshold(col_nnz, m, padded)
        else:
            rows_t = cols_t = int(dense)
        if rows_t is None:
            dense_rows = dense_cols = np.zeros(0, dtype=np.int64)
        else:
            dense_rows = np.flatnonzero(row_nnz > rows_t)
            dense_cols = np.flatnonzero(col_nnz > cols_t) if col_nnz is not None else np.zeros(0, dtype=np.int64)
        self.dense_rows, self.dense_cols = dense_rows, dense_cols
        # M is a canonical CSR (sorted columns, no duplicates): its entries are row-major in
        # order, and so is any subset of them
        if dense_rows.size or dense_cols.size:
            coo = M.tocoo()
            dense_row, dense_col = np.zeros(m, dtype=bool), np.zeros(n, dtype=bool)
            dense_row[dense_rows], dense_col[dense_cols] = True, True
            in_row = dense_row[coo.row]
            in_col = dense_col[coo.col] & ~in_row      # a dense row keeps its whole row
            sparse = ~(in_row | in_col)
            rows = coo.row[sparse]
            self._upload_sparse(rows, coo.col[sparse], coo.data[sparse], np.bincount(rows, minlength=m),
                                ordered=True)
            self._upload_dense(M, coo, in_row, in_col)
        else:
            self._upload_sparse(None, M.indices, M.data, row_nnz, ordered=True)
            self._upload_dense(M, None, None, None)
        if perm is not None:
            self._streams["perm"] = Stream.vector_of(m, data=perm.astype(np.float32))
            inverse = np.empty_like(perm)
            inverse[perm] = np.arange(m)
            self._streams["inverse"] = Stream.vector_of(m, data=inverse.astype(np.float32))
        return self

    def _upload_sparse(self, rows, cols, vals, counts=None, ordered: bool = False) -> None:
        """The sparse part's entries (``rows``, ``cols``, ``vals``) into the format's textures.
        ``ordered``: the entries are already row-major with increasing columns (a canonical
        CSR's, as ``_build`` passes them), so no lexsort; then ``counts`` (entries a row) may
        stand for ``rows`` (None)."""
        m, n = self.shape
        if not ordered:
            order = np.lexsort((cols, rows))
            rows, cols, vals = rows[order], cols[order], vals[order]
        if counts is None or not ordered:
            counts = np.bincount(rows, minlength=m)
        self.row_counts = counts
        limit = max_texture_size()
        noun = "columns" if self._of_transpose else "rows"
        if self.format in SEGMENTED:
            self._upload_packed(cols, vals, counts)
            return
        if self.format == "corrigan":
            big = np.flatnonzero(counts > CORRIGAN_MAX_NNZ)
            if big.size:
                raise ValueError(f"{self._where()}{self._line(big[0])} has {int(counts[big[0]])} non-zeros, "
                                 f"more than one fragment program of the corrigan format unrolls ({CORRIGAN_MAX_NNZ}); "
                                 f"(paper 003: \"the Cg compiler simply fails\" on such rows); leave dense=None and "
                                 f"dense_split=True (the defaults, beyond 003: such {noun} go to the dense part) or "
                                 f"set dense= at most {CORRIGAN_MAX_NNZ} (got dense={self._source_dense!r}), or use "
                                 f"format='ellpack'")
            distinct = np.unique(counts[counts > 0]).size
            if distinct > self._max_programs:
                raise ValueError(
                    f"{self._where()}the corrigan format compiles one fragment program per distinct non-zero "
                    f"count (paper 003, Fig. 6), and {self._lines()} have {distinct} distinct counts, more than "
                    f"max_programs={self._max_programs}: the first product would compile {distinct} programs "
                    "(slow: seconds to minutes). Use format='ellpack' (one program for every row), or pass "
                    f"max_programs={distinct} (or more) to compile them all")
            nnz = vals.size
            if nnz >= 2 ** 24:
                raise ValueError(f"{nnz} non-zeros: the storage index is not exact in float32 beyond 2^24")
            width = max(1, min(nnz, fold_width()))
            height = max(1, -(-nnz // width))
            if height > limit:
                raise ValueError(f"{nnz} non-zeros do not fit a {width} x {limit} texture "
                                 f"(GL_MAX_TEXTURE_SIZE = {limit})")
            store = np.zeros(width * height, dtype=np.float32)
            store[:nnz] = vals
            index = np.zeros(width * height, dtype=np.float32)
            index[:nnz] = cols
            self._streams["values"] = Stream(height, width, data=store)
            self._streams["columns"] = Stream(height, width, data=index)
            self.store_width = width
            # runs of consecutive rows with the same count: one rectangle (or a few, where the
            # run wraps to the next texture row of the folded y) per run
            starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
            change = np.flatnonzero(np.diff(counts)) + 1
            bounds = np.concatenate([[0], change, [m]])
            self.runs = [(int(counts[a]), int(a), int(b), int(starts[a]))
                         for a, b in zip(bounds[:-1], bounds[1:]) if counts[a] > 0]
            self.programs = len({c for c, *_ in self.runs})
            self.rectangles = len(self.runs)
            self.empty_rows = int(np.count_nonzero(counts == 0))
            self.K = None
            return
        # ELLPACK / TELL
        K = int(counts.max()) if counts.size and counts.max() > 0 else 1
        rows_y, W = vector_shape(m)                          # y folded: R blocks of W rows
        if rows_y * K > limit:
            longest = int(np.argmax(counts))
            along = "row" if self.format == "ellpack" else "column"
            span = (f"{K} texels" if rows_y == 1 else f"{rows_y} blocks of them side by side (the folded "
                                                      f"vector's), {rows_y} x {K} = {rows_y * K} texels")
            fix = (f"set dense= at most {limit // rows_y} (dense=None chooses a threshold that fits; "
                   f"got dense={self._source_dense!r}) to move longer {noun} to the dense part")
            if self._of_transpose:
                fix += ", or transpose='scatter' (A^T y from the one copy of A, no transposed copy)"
            raise ValueError(f"{self._where()}{self.format.upper()} stores each of {self._lines()} as K texels "
                             f"along a texture {along}, K the most non-zeros of any ({self._line(longest)} has "
                             f"{K}): {span}, more than GL_MAX_TEXTURE_SIZE = {limit}; {fix}")
        # block r of W rows -> texture columns r K .. r K + K - 1 (ELLPACK: entry k of row
        # r W + x at texel (r K + k, x)); TELL transposes each block (texel (x, r K + k)). The
        # (value, column) pairs in one scatter (a reshape where it can), then apart.
        i = np.arange(m, dtype=np.int64)
        if self.format == "ellpack":     # W x (R K): row i's K places contiguous, at (x R + r) K
            buf = _scatter_pairs(vals, cols, counts, ((i % W) * rows_y + i // W) * K, K, K, W * rows_y * K)
            tex_v, tex_i = (t.reshape(W, rows_y * K) for t in _deinterleave(buf))
        else:                            # (R K) x W: row-major R W x K, each block transposed
            buf = _scatter_pairs(vals, cols, counts, i * K, K, K, rows_y * W * K)
            tex_v, tex_i = (_blocks_down(t, rows_y, W, K, np.float32) for t in _deinterleave(buf))
        self._streams["values"] = Stream(*tex_v.shape, data=tex_v)
        self._streams["columns"] = Stream(*tex_i.shape, data=tex_i)
        self.K = K
        self.programs = 1
        self.rectangles = 1
        self.empty_rows = int(np.count_nonzero(counts == 0))
        self.runs = None

    def _upload_packed(self, cols, vals, counts) -> None:
        """The packed format (beyond the papers, module notes): entries (row-major, sorted) into
        RGBA texels two at a time, segments of L entries down texture columns (the split
        format: one a texel, values and columns apart)."""
        m, n = self.shape
        limit = max_texture_size()
        L = int(self._segment_arg) if self._segment_arg is not None else _auto_segment(counts)
        H = -(-L // 2) if self.format == "packed" else L     # texels a segment
        seg = np.maximum(1, -(-counts // L))                  # segments a row (an empty row: 1)
        first = _first_of(seg)
        S = int(seg.sum())
        if S >= FLOAT_INDEX_LIMIT:
            raise ValueError(f"{self._where()}format={self.format!r}: {S} segments of {L} entries, more than float32 "
                             f"indexes them exactly (2^24 = {FLOAT_INDEX_LIMIT}); pass a larger segment= "
                             f"(at most {PACKED_MAX_SEGMENT})")
        split = int(seg.max())
        self.single = split == 1 and self._fold_arg is None   # one pass writes y
        if self.single:
            Ws = vector_shape(m)[1]
        else:
            Ws = min(int(self._fold_arg), limit) if self._fold_arg else min(PACKED_FOLD, fold_width())
            Ws = max(Ws, -(-S // max(1, limit // H)))        # the segments' texels must fit the texture
            if Ws > limit or (self._fold_arg is not None and Ws > self._fold_arg):
                raise ValueError(f"{self._where()}format={self.format!r}: {S} segments of {H} texels do not fit "
                                 f"{'fold=%d x ' % self._fold_arg if self._fold_arg else ''}GL_MAX_TEXTURE_SIZE "
                                 f"= {limit}; pass a larger fold= (or None) or a larger segment=")
            Ws = min(Ws, S)
        Rs = -(-S // Ws)
        if Rs * H > limit:
            raise ValueError(f"{self._where()}format={self.format!r}: {S} segments of {H} texels need "
                             f"{Rs * H} texture rows, more than GL_MAX_TEXTURE_SIZE = {limit}; pass a larger "
                             f"segment=")
        # the segments end to end, P places of (value, column) each (packed: 2 a texel, so an
        # odd L leaves a spare place; split: one a texel), then segment s's texels down texture
        # column s % Ws from row (s // Ws) H: one transposing copy
        P = 2 * H if self.format == "packed" else L
        buf = _scatter_pairs(vals, cols, counts, first * P, L, P, Rs * Ws * P)
        if self.format == "packed":
            tex = _blocks_down(buf, Rs, Ws, H, "V16").view(np.float32).reshape(Rs * H, Ws, 4)
            self._streams["entries"] = Stream(Rs * H, Ws, components=4, data=tex)
        else:
            tv, ti = (_blocks_down(t, Rs, Ws, L, np.float32) for t in _deinterleave(buf))
            self._streams["values"] = Stream(Rs * H, Ws, data=tv)
            self._streams["columns"] = Stream(Rs * H, Ws, data=ti)
        self.uniform = bool(np.all(seg == split))
        if not self.single and not self.uniform:
            rows_y, W = vector_shape(m)
            meta = np.zeros((rows_y * W, 4), dtype=np.float32)
            meta[:m, 0], meta[:m, 1] = first, seg
            self._streams["meta"] = Stream(rows_y, W, components=4, data=meta)
        self.segment, self.segments, self.split = L, S, split
        self.p_shape = (Rs, Ws)
        self.K = int(counts.max()) if counts.size and counts.max() > 0 else 1
        self.programs = 1 if self.single else 2
        self.rectangles = self.programs
        self.empty_rows = int(np.count_nonzero(counts == 0))
        self.runs = None
        self._prims = {}

    def fetches(self) -> dict:
        """Texel fetches of one product of the sparse part (dense part not included), counted
        from the kernels' sources: the packed format's pass 1 fetches ceil(L / 2) texels and L
        gathers of x a segment; its pass 2 a (first, count) texel (rows of unequal splits) and
        the row's partials. ELLPACK and TELL: 3 a stored entry, padding included.
        Answers {"fetches", "entries" (stored, padding included), "per_nonzero"}."""
        self._alive()
        m = self.shape[0]
        if self.format in SEGMENTED:
            L = self.segment
            n1 = self.segments * ((-(-L // 2) + L) if self.format == "packed" else 3 * L)
            n2 = 0 if self.single else self.segments + (0 if self.uniform else m)
            total, stored = n1 + n2, self.segments * L
        elif self.format == "corrigan":
            stored = int(self.row_counts.sum())
            total = 3 * stored
        else:
            stored = m * self.K
            total = 3 * stored
        return {"fetches": total, "entries": stored, "per_nonzero": total / max(1, int(self.row_counts.sum()))}

    def _packed_product(self, xs: Stream, y: Stream) -> None:
        """y = A x, packed format: pass 1 over the segments (into y itself when no row is split,
        else into the partials P), pass 2 summing each row's partials into y."""
        m = self.shape[0]
        L = self.segment
        H = -(-L // 2) if self.format == "packed" else L
        inputs = ({"entries": self._streams["entries"]} if self.format == "packed" else
                  {"values": self._streams["values"], "columns": self._streams["columns"]})
        key = (xs.cols, y.cols)
        prims = self._prims.get(key)
        if prims is None:
            T0 = lambda X, Y: (X, (Y - 0.5) * H + 0.5)       # noqa: E731  (x + .5, r H + .5)
            if self.single:
                prims = (_rows_primitive(vector_regions(m, y.cols), T0), None)
            else:
                prims = (_rows_primitive(vector_regions(self.segments, self.p_shape[1]), T0),
                         _rows_primitive(vector_regions(m, y.cols), lambda X, Y: (X, Y)))
            self._prims[key] = prims
        kernel = packed_kernel(L) if self.format == "packed" else split_kernel(L)
        if self.single:
            kernel.draw(y, prims[0], {**inputs, "X": xs}, {"x_width": xs.cols})
            return
        P = borrow(*self.p_shape)
        kernel.draw(P, prims[0], {**inputs, "X": xs}, {"x_width": xs.cols})
        if self.uniform:
            _packed_sum_kernel(self.split).draw(y, prims[1], {"P": P},
                                                {"p_width": self.p_shape[1], "y_width": y.cols})
        else:
            _packed_sum_kernel(None).draw(y, prims[1], {"P": P, "meta": self._streams["meta"]},
                                          {"p_width": self.p_shape[1]},
                                          texels=2 + -(-self.segments // m))
        give_back(P)

    def _upload_dense(self, M, coo, in_row, in_col) -> None:
        m, n = self.shape
        kc, kr = self.dense_cols.size, self.dense_rows.size
        self.kc, self.kr = kc, kr
        if not kc and not kr:
            return
        rows_y, W = vector_shape(m)
        # dense columns: one folded plane each, stacked down the texture
        C = np.zeros((max(kc, 1) * rows_y, W), dtype=np.float32)
        if kc:
            where = {int(j): c for c, j in enumerate(self.dense_cols)}
            cc = np.array([where[int(j)] for j in coo.col[in_col]], dtype=np.int64)
            flat = coo.row[in_col]
            C[cc * rows_y + flat // W, flat % W] = coo.data[in_col]
        self._streams["C"] = Stream(*C.shape, data=C)
        self._streams["J"] = Stream(1, max(kc, 1), data=np.resize(self.dense_cols.astype(np.float32), max(kc, 1)))
        # dense rows: one folded plane each (folded like x), stacked down the texture; their
        # inner products with x land in a kr x 1 column V; slot maps y's entries to them
        rows_x, Wx = vector_shape(n)
        R = np.zeros((max(kr, 1), rows_x * Wx), dtype=np.float32)
        if kr:
            R[:, :n] = M[self.dense_rows].toarray()
        self._streams["R"] = Stream(max(kr, 1) * rows_x, Wx, data=R.reshape(-1, Wx))
        self._streams["I"] = Stream(1, max(kr, 1), data=np.resize(self.dense_rows.astype(np.float32), max(kr, 1)))
        slot = np.zeros(m, dtype=np.float32)
        slot[self.dense_rows] = np.arange(1, kr + 1, dtype=np.float32)
        self._streams["slot"] = Stream.vector_of(m, data=slot)
        self._streams["no_rows"] = Stream(1, 1)   # bound as V when there are no dense rows

    # ------------------------------------------------------------------ memory
    @property
    def nbytes(self) -> int:
        """Texture memory of this matrix (its transposed copy not included)."""
        return sum(s.nbytes for s in self._streams.values())

    @property
    def nbytes_with_transpose(self) -> int:
        """Texture memory including the transposed copy, when ``rmatvec`` has built one."""
        return self.nbytes + (self._T.nbytes if self._T is not None else 0)

    def max_abs(self) -> float:
        """max |a_ij| over the stored matrix (sparse and dense parts, every format): the float32
        values the textures hold, so 0.0 for a matrix of zeros. Taken once on the host when
        ``from_scipy`` uploads A (the textures never change after), so no pass and no read-back;
        ``gpgpu.cg`` scales a SparseStream A by it. A released SparseStream raises ValueError."""
        self._alive()
        return self._max_abs

    # ------------------------------------------------------------------ products
    def _check(self, s: Stream, length: int, what: str) -> None:
        if s.released:
            raise ValueError(f"{what}: got a released Stream; pass a live vector Stream of length {length}")
        if not s.vector or s.length != length or s.shape != vector_shape(length) or s.components != 1:
            raise ValueError(f"{what}: expected a vector Stream of length {length} "
                             f"(Stream.vector_of({length}) or Stream.from_array), got {s!r}")

    def _check_out(self, out, length: int, what: str, numpy: bool, source=None) -> None:
        """``out`` is of the answer's kind: a 1-D float numpy array of ``length`` for numpy
        input (written in place, as numpy's out=), a vector Stream of ``length`` other than the
        input ``source`` for Stream input."""
        if out is None:
            return
        if numpy:
            if isinstance(out, Stream):
                raise TypeError(f"{what}: the input is a numpy array, so the answer is one: pass out= a numpy "
                                f"array of shape ({length},), or the input as a Stream to get a Stream")
            if not isinstance(out, np.ndarray):
                raise TypeError(f"{what}: out must be a numpy array of shape ({length},) or None, "
                                f"got {type(out).__name__}")
            if out.shape != (length,):
                raise ValueError(f"{what}: out must have shape ({length},), got {out.shape}")
            if not np.issubdtype(out.dtype, np.floating):
                raise TypeError(f"{what}: out must be a float array (float32 or float64), got dtype {out.dtype}")
            if not out.flags.writeable:
                raise ValueError(f"{what}: out is read-only")
            return
        if not isinstance(out, Stream):
            raise TypeError(f"{what}: the input is a Stream, so the answer is one: out must be a vector Stream "
                            f"of length {length} (Stream.vector_of({length})) or None, got {type(out).__name__}")
        self._check(out, length, f"{what} out")
        if out is source:
            raise ValueError(f"{what}: out must not be the input Stream (a pass cannot read and render one "
                             f"texture); pass another Stream.vector_of({length})")

    def _product(self, xs: Stream, out: Stream | None = None, permuted: bool = False) -> Stream:
        """y = A x on the GPU for vector streams; with a sorted matrix, x and y are permuted
        in and out (two gathers) unless ``permuted`` (CG works on the sorted system)."""
        self._alive()
        m, n = self.shape
        S = self._streams
        if self.perm is not None and not permuted:
            xp = _gather(xs, S["perm"])
            y = self._product(xp, permuted=True)
            xp.release()
            res = _gather(y, S["inverse"], out)
            y.release()
            return res
        has_dense = self.kc or self.kr
        # with a dense part the sparse part's product is a pooled temporary (no allocation)
        y = borrow(*vector_shape(m)) if has_dense else (out if out is not None else Stream.vector_of(m))
        rows_y, W = y.rows, y.cols
        xw = xs.cols
        if self.format in SEGMENTED:
            self._packed_product(xs, y)
        elif self.format == "corrigan":
            if not self._announced:
                self._announce()
            if (y is out or has_dense) and self.empty_rows:  # rows without a run must read zero
                L1["fill"].draw(y, whole(y), uniforms={"value": 0.0})
            for count, r0, r1, first in self.runs:
                prim = _run_rectangles(r0, r1, W)
                corrigan_kernel(count).draw(y, prim, {"values": S["values"], "columns": S["columns"], "X": xs},
                                            {"first": first, "store_width": self.store_width, "x_width": xw})
        else:
            K = self.K
            kernel = KERNELS[self.format]
            # T0 at the row's first entry, affine in the window position (X, Y) so that the
            # rasterizer interpolates it: (r K + .5, x + .5) at the centre of texel (x, r)
            # for ELLPACK, (x + .5, r K + .5) for TELL
            if self.format == "ellpack":
                T0 = lambda X, Y: ((Y - 0.5) * K + 0.5, X)          # noqa: E731
            else:
                T0 = lambda X, Y: (X, (Y - 0.5) * K + 0.5)          # noqa: E731
            prim = _rows_primitive(vector_regions(m), T0)
            kernel.draw(y, prim, {"values": S["values"], "columns": S["columns"], "X": xs},
                        {"K": K, "x_width": xw})
        if not has_dense:
            return y
        # dense rows: their inner products with x, all at once, into the kr x 1 column V
        V = _plane_dots(S["R"], self.kr, xs, self.sums) if self.kr else S["no_rows"]
        target = out if out is not None else Stream.vector_of(m)
        KERNELS["dense_part"].draw(target, whole(target),
                                   {"S": y, "C": S["C"], "J": S["J"], "V": V, "slot": S["slot"], "X": xs},
                                   {"kc": int(self.kc), "plane_rows": rows_y, "x_width": xw})
        give_back(y)
        if self.kr:
            give_back(V)
        return target

    def _announce(self) -> None:
        """Before the first corrigan product: say how many programs it compiles, when more than
        ``LOG_PROGRAMS``: one line on stderr and the same on the logger (INFO), once per matrix."""
        self._announced = True
        programs = _kernel_state().programs
        new = sorted({c for c, *_ in self.runs if corrigan_kernel(c)._key not in programs})
        if len(new) > LOG_PROGRAMS:
            m, n = self.shape
            text = ("compiling %d fragment programs of the corrigan format (one per non-zero count, "
                    "%d .. %d; paper 003) for the first product of this %d x %d matrix%s; "
                    "format='ellpack' compiles one" % (len(new), new[0], new[-1], m, n,
                                                       " (rmatvec's transposed copy)" if self._of_transpose else ""))
            print(f"gpgpu.sparse: {text}", file=sys.stderr, flush=True)
            log.info(text)

    #: numpy's operators leave a SparseStream to its own (``x @ S`` reaches ``__rmatmul__``)
    __array_ufunc__ = None

    def __matmul__(self, other):
        raise TypeError("a SparseStream has no @ operator (each product is a GPU pass with its own "
                        "options): use S.matvec(x) for A x and S.rmatvec(y) for Aᵀ y")

    __rmatmul__ = __matmul__

    def matvec(self, x, out=None):
        """FSAX: y = A x (002 (9)). Numpy in, float64 numpy out; a vector Stream in, a Stream out.

        A numpy x is uploaded as 2^k x, the power of two that brings max|2^k x| max|A| near 1,
        and y scaled back by 2^-k in float64, both exact: a GPU flushes float32's subnormal
        numbers (below 1.2e-38) to zero, so A of 1e-30 times x of 1e-10 would give zeros. A y
        beyond float32's range (3.4e38) raises FloatingPointError. A Stream x is taken as it is.

        ``out``: where the answer goes, of its kind: a float numpy array of shape (m,) for a
        numpy x (written in place and returned), a vector Stream of length m, not x, for a
        Stream x. Another shape or type raises ValueError or TypeError."""
        return self._apply(x, self.shape[1], "matvec x", lambda xs, o: self._product(xs, o), out, self.shape[0])

    def rmatvec(self, y, out=None):
        """FSATY: x = Aᵀ y (002 (9)), from the transposed copy or by scattering (``transpose``).
        A numpy y scaled as :meth:`matvec`'s x; ``out`` as :meth:`matvec`'s, of length n."""
        def run(ys, o):
            if self.transpose == "scatter":
                return self._scatter_transpose(ys, o)
            return self.transposed()._product(ys, o)
        return self._apply(y, self.shape[0], "rmatvec y", run, out, self.shape[1])

    def normal_matvec(self, theta, y, out=None):
        """FSAAT: z = A Θ Aᵀ y (002 (9)), as the compound the paper uses on the GPU: FSATY, the
        scaling by Θ's diagonal (an element-wise product pass), FSAX; all on the GPU. The
        answer is of y's kind; ``out`` as :meth:`matvec`'s, of length m (it may be y). A numpy y
        and a numpy theta with it are scaled by powers of two as :meth:`matvec`'s x, and z back
        in float64 (with a Stream y, a numpy theta is uploaded as it is)."""
        self._alive()
        m, n = self.shape
        numpy = not isinstance(y, Stream)
        self._check_out(out, m, "normal_matvec", numpy)
        # a numpy y (and then a numpy theta) is uploaded scaled by a power of two (_exponent)
        # and z scaled back in float64; with a Stream y, z is a Stream and nothing is scaled
        ky = kt = 0
        t64 = None
        if not isinstance(theta, Stream):    # checked before anything is uploaded
            t64 = check_array(theta, "theta", ndim=(1, 2), texture=False, dtype=np.float64 if numpy else np.float32)
        if numpy:
            y64 = check_array(y, "y", ndim=(1, 2), texture=False, dtype=np.float64)
            ky = self._exponent(y64)
            ys = Stream.from_array(np.ldexp(y64, ky).astype(np.float32), "y")
        else:
            ys = y
        ts = theta
        try:
            if t64 is not None:
                kt = self._exponent(t64) if numpy else 0
                ts = Stream.from_array(np.ldexp(t64, kt).astype(np.float32) if numpy else t64, "theta")
            self._check(ys, m, "normal_matvec y")
            self._check(ts, n, "normal_matvec theta")
            t = self.rmatvec(ys)
            scaled = Stream.like(t)
            L1["elementwise_product"].draw(scaled, whole(scaled), {"X": t, "Y": ts})
            t.release()
            z = self._product(scaled, None if numpy else out)
            scaled.release()
        finally:
            if numpy:
                ys.release()
            if ts is not theta:
                ts.release()
        if numpy:
            return self._download(z, out, -(ky + kt), "normal_matvec")
        return z

    def _exponent(self, v64: np.ndarray) -> int:
        """k for the upload of a numpy vector as 2^k v (exact): max|2^k v| max|A| in [0.25, 1)
        (for max|A| within 2^-100 .. 2^100, beyond it as near as 2^k v allows), so the products a_ij 2^k v_j stay far from float32's underflow (a GPU flushes its
        subnormal numbers, below 1.2e-38, to zero) and overflow whatever the scales of A and v
        (2^k v within [2^-101, 2^100])."""
        ea = max(-100, min(100, power_of_two_exponent(self._max_abs)))
        return power_of_two_exponent(float(np.abs(v64).max())) + ea

    @staticmethod
    def _download(res: Stream, out, e: int = 0, what: str = "the product"):
        """A product's stream as float64 numpy, scaled by 2^e (exact; the inverse of the
        input's scaling), into ``out`` when given; released. FloatingPointError when it is
        beyond float32's range."""
        arr = res.to_array()
        res.release()
        y = scaled_back(arr, e, f"{what}: the product")
        if out is None:
            return y
        out[...] = y
        return out

    def _apply(self, v, length, what, fn, out, out_length):
        self._alive()
        if isinstance(v, Stream):
            self._check(v, length, what)
            self._check_out(out, out_length, what.split()[0], False, v)
            return fn(v, out)
        self._check_out(out, out_length, what.split()[0], True)
        import scipy.sparse as sp

        if sp.issparse(v):
            raise TypeError(f"{what}: expected a numpy vector of length {length} or a vector Stream, got a "
                            f"scipy.sparse {type(v).__name__} of shape {v.shape}: pass v.toarray().ravel()")
        arr = np.asarray(v)
        if arr.dtype == object or arr.dtype.kind in "SUV":
            raise TypeError(f"{what}: expected a numpy vector of length {length} or a vector Stream, got "
                            f"{type(v).__name__}")
        if arr.ndim != 1 or arr.shape[0] != length:
            hint = ": pass it 1-D (v.ravel())" if arr.size == length and arr.ndim == 2 else ""
            raise ValueError(f"{what}: expected a vector of length {length}, got shape {arr.shape}{hint}")
        # uploaded as 2^k v (exact) and the answer scaled back in float64: neither a tiny A and v
        # (products below float32's normal range) nor a huge one (beyond 3.4e38) is lost
        v64 = check_array(arr, what, ndim=(1,), texture=False, dtype=np.float64)
        k = self._exponent(v64)
        with Stream.from_array(np.ldexp(v64, k).astype(np.float32), what) as vs:
            res = fn(vs, None)
        return self._download(res, out, -k, what.split()[0])

    def transposed(self) -> "SparseStream":
        """The second, row-wise copy of Aᵀ (002 section 3.1), built on first use in the same
        format; ``release()`` frees both. Its errors (a column too long for the layout, too
        many distinct column counts) speak of A's columns.

        It is built from a host copy of A that ``from_scipy`` keeps with ``transpose="copy"``
        (the default): A's column indexes and values rounded to float32 as the textures hold
        them, about 8 bytes a non-zero and 4 (8 beyond 2^31 non-zeros) a row of host memory,
        freed once the copy is built or on ``release()``. The copy's textures are those a
        build from the textures read back gives (an entry float32 rounds to zero is none),
        without the read-back. With ``transpose="scatter"`` (no host copy kept) it is built
        from the textures read back (``to_scipy``)."""
        self._alive()
        if self._T is None:
            if self._host is not None:
                import scipy.sparse as sp

                # an entry float32 rounds to zero is an explicit zero here; _as_csr drops it
                H = sp.csr_matrix(self._host, shape=self.shape)
            else:
                H = self.to_scipy()
            self._T = SparseStream._build(H.T, self.format, False, self._source_dense, "copy",
                                          self.sums, self._max_programs, of_transpose=True,
                                          segment=self._segment_arg, fold=self._fold_arg)
            self._host = None
        return self._T

    def _scatter_transpose(self, ys: Stream, out: Stream | None) -> Stream:
        """x = Aᵀ y from the one ELLPACK/TELL copy: points scatter-add a(i,k) y(i) into x."""
        m, n = self.shape
        S = self._streams
        x = out if out is not None else Stream.vector_of(n)
        L1["fill"].draw(x, whole(x), uniforms={"value": 0.0})
        rows_y, W = vector_shape(m)
        with additive_blending():
            KERNELS["scatter"].draw_points(
                x, rows_y * W * self.K, {"values": S["values"], "columns": S["columns"], "Y": ys},
                {"K": self.K, "fold": W, "y_width": ys.cols, "x_width": x.cols,
                 "transposed": self.format == "tell"})
            if self.kr:   # dense rows: x += y(i_r) a_r for every dense row r, one pass
                KERNELS["row_add"].draw(x, whole(x), {"R": S["R"], "I": S["I"], "Y": ys},
                                        {"kr": int(self.kr), "plane_rows": x.rows, "y_width": ys.cols})
        if self.kc:  # dense columns: x(j_c) += a_c^T y, their inner products all at once
            dots = _plane_dots(S["C"], self.kc, ys, self.sums)
            texels = Triangle.join(*(Triangle.from_rects([(j % x.cols, j // x.cols, j % x.cols + 1, j // x.cols + 1)],
                                                         T0=(0.5, c + 0.5))
                                     for c, j in enumerate(int(j) for j in self.dense_cols)))
            with additive_blending():
                L1["copy"].draw(x, texels, {"A": dots})
            give_back(dots)
        return x

    # ------------------------------------------------------------------ back to scipy
    def to_scipy(self):
        """The matrix as scipy.sparse CSR (float32 values, original row and column order), read
        back from the textures."""
        import scipy.sparse as sp

        self._alive()
        m, n = self.shape
        S = self._streams
        rows, cols, vals = [], [], []
        if self.format == "corrigan":
            nnz = int(self.row_counts.sum())
            v = S["values"].to_array().reshape(-1)[:nnz]
            c = S["columns"].to_array().reshape(-1)[:nnz]
            r = np.repeat(np.arange(m), self.row_counts)
            rows.append(r), cols.append(c.astype(np.int64)), vals.append(v)
        elif self.format in SEGMENTED:
            _, _, at, slot = _packed_positions(self.row_counts, self.segment)
            Ws, r = self.p_shape[1], np.repeat(np.arange(m), self.row_counts)
            if self.format == "packed":
                tex, H = S["entries"].to_array(), -(-self.segment // 2)
                ty, tx, comp = (at // Ws) * H + slot // 2, at % Ws, 2 * (slot % 2)
                c, v = tex[ty, tx, comp + 1], tex[ty, tx, comp]
            else:
                ty, tx = (at // Ws) * self.segment + slot, at % Ws
                c, v = S["columns"].to_array()[ty, tx], S["values"].to_array()[ty, tx]
            rows.append(r), cols.append(c.astype(np.int64)), vals.append(v)
        else:
            K = self.K
            rows_y, W = vector_shape(m)
            tv, ti = S["values"].to_array(), S["columns"].to_array()
            if self.format == "ellpack":
                bv = tv.reshape(W, rows_y, K).transpose(1, 0, 2).reshape(-1, K)[:m]
                bi = ti.reshape(W, rows_y, K).transpose(1, 0, 2).reshape(-1, K)[:m]
            else:
                bv = tv.reshape(rows_y, K, W).transpose(0, 2, 1).reshape(-1, K)[:m]
                bi = ti.reshape(rows_y, K, W).transpose(0, 2, 1).reshape(-1, K)[:m]
            keep = np.arange(K)[None, :] < self.row_counts[:, None]
            r = np.repeat(np.arange(m)[:, None], K, axis=1)[keep]
            rows.append(r), cols.append(bi[keep].astype(np.int64)), vals.append(bv[keep])
        if self.kc:
            rows_y, W = vector_shape(m)
            C = S["C"].to_array().reshape(-1, rows_y * W)[:, :m]
            for c, j in enumerate(self.dense_cols):
                nz = np.flatnonzero(C[c])
                rows.append(nz), cols.append(np.full(nz.size, j)), vals.append(C[c][nz])
        if self.kr:
            Rd = S["R"].to_array().reshape(self.kr, -1)[:, :n]
            for i, a in zip(self.dense_rows, Rd):
                nz = np.flatnonzero(a)
                rows.append(np.full(nz.size, i)), cols.append(nz), vals.append(a[nz])
        r, c, v = (np.concatenate(a) if a else np.zeros(0) for a in (rows, cols, vals))
        M = sp.csr_matrix((v.astype(np.float32), (r.astype(np.int64), c.astype(np.int64))), shape=(m, n))
        if self.perm is not None:
            inverse = np.empty_like(self.perm)
            inverse[self.perm] = np.arange(m)
            M = M[inverse][:, inverse].tocsr()
        M.sort_indices()
        return M

    # ------------------------------------------------------------------ lifetime
    def release(self) -> None:
        """Free the textures (and the transposed copy's); a later product raises ValueError."""
        for s in self._streams.values():
            s.release()
        self._streams.clear()
        self._host = None
        if self._T is not None:
            self._T.release()
            self._T = None
        self._released = self.format is not None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

    def __repr__(self) -> str:
        m, n = self.shape
        if self._released:
            return f"<SparseStream {self.format} {m}x{n}, released>"
        kr, kc = getattr(self, "kr", 0), getattr(self, "kc", 0)
        extra = f", {kr} dense rows, {kc} dense columns" if (kr or kc) else ""
        return f"<SparseStream {self.format} {m}x{n}, {self.nnz} non-zeros{extra}>"


# ---------------------------------------------------------------------- geometry
def _plane_dots(P: Stream, k: int, v: Stream, sums: str = "pingpong") -> Stream:
    """The inner products of the k planes of P with the vector stream v, as a k x 1 stream.

    Plane r is a vector folded like v (v.rows x v.cols) at texture rows r v.rows .. of P (the
    dense rows or columns of a SparseStream). 003's dot product (Fig. 1: a component-wise
    product, then sums) for all planes at once: one pass of rectangles, one per plane and region
    of v, whose T0 is v's texel (the plane's rows shifted up by r v.rows, interpolated by the
    rasterizer); then each texture row is summed by halving along x (000's level-1 sum), and for
    a folded v each plane's row sums are moved into one row of a k x v.rows texture (T0 affine
    in the window position) and summed the same way. About log2(v.cols) + log2(v.rows) + 2
    passes, whatever k (``sums="fan"``: the fan sums of :mod:`gpgpu.reduce`, about
    log32(v.cols) + log32(v.rows) + 2). The result is a pooled temporary: give_back() it."""
    h, W = v.rows, v.cols
    regions = v.regions()
    prod = borrow(k * h, W)
    if h > 1 and len(regions) > 1:        # the unused tail of a folded vector's last row reads 0
        L1["fill"].draw(prod, Rect.covering(0, 0, W, k * h), uniforms={"value": 0.0})
    planes = [Triangle.from_rects([(x0, y0 + r * h, x1, y1 + r * h) for x0, y0, x1, y1 in regions],
                                  T0=lambda X, Y, o=r * h: (X, Y - o)) for r in range(k)]
    KERNELS["plane_product"].draw(prod, Triangle.join(*planes), {"P": P, "Y": v})
    width = regions[0][2] if h == 1 else W
    row_sums = reduce_region(prod, "sum", (0, 0, width, k * h), axis=1, strategy=sums, out=borrow(k * h, 1))
    give_back(prod)
    if h == 1:
        return row_sums
    by_plane = borrow(k, h)        # texel (i, r) <- row sum r h + i: (0.5, (Y - .5) h + X)
    L1["copy"].draw(by_plane, Rect.covering(0, 0, h, k, T0=lambda X, Y: (0.5, (Y - 0.5) * h + X)),
                    {"A": row_sums})
    give_back(row_sums)
    dots = reduce_region(by_plane, "sum", (0, 0, h, k), axis=1, strategy=sums, out=borrow(k, 1))
    give_back(by_plane)
    return dots


def _rows_primitive(regions: list, T0):
    """The rectangles over the entries of a (folded) vector, with T0 generated per corner."""
    if len(regions) == 1:
        return Rect.covering(*regions[0], T0=T0)
    return Triangle.from_rects(regions, T0=T0)


def _run_rectangles(r0: int, r1: int, W: int):
    """The rectangles over entries r0 .. r1-1 of a y folded W wide (one when they share a
    texture row, else up to three), with T0.x interpolated to the row's index in the run:
    index + .5 at the fragment's centre."""
    rects = []
    i = r0
    while i < r1:
        y, x = divmod(i, W)
        if x == 0 and r1 - i >= W:                       # whole texture rows
            full = (r1 - i) // W
            rects.append((0, y, W, y + full))
            i += full * W
        else:
            end = min(r1, (y + 1) * W)
            rects.append((x, y, x + end - i, y + 1))
            i = end
    # T0.x = (Y - .5) W + (X - .5) - r0 + .5, affine in the window position
    T0 = lambda X, Y: ((Y - 0.5) * W + X - r0, 0.0)     # noqa: E731
    if len(rects) == 1:
        return Rect.covering(*rects[0], T0=T0)
    return Triangle.from_rects(rects, T0=T0)


def _gather(v: Stream, index: Stream, out: Stream | None = None) -> Stream:
    """out(i) = v(index(i)) for folded vectors (003: the sort permutation and its undoing)."""
    res = out if out is not None else Stream.like(index)
    KERNELS["gather"].draw(res, whole(res), {"B": v, "P": index}, {"b_width": v.cols})
    return res



# ---------------------------------------------------------------------- 002's DHTELL2, as near as a fragment gets
def tell_dense_part(A, dense=None, transpose: str = "copy", sums: str = "pingpong") -> SparseStream:
    """A on the GPU as the nearest this pipeline draws to paper 002's DHTELL2 kernel (Table 3):
    transposed ELLPACK (T-ELL) for the regular rows plus the dense rows and columns apart.

    002 section 3.3: DHTELL2 "consists of one block to handle any dense rows separately, then a
    half warp (sixteen threads) per row using a transposed ELLPACK format to store the remainder
    of the matrix". A fragment program cannot do either split: each fragment computes the one
    output texel it was rasterized for and can neither read nor add to what another fragment
    computes in the same pass (no shared memory, no atomics, no synchronisation between
    fragments), so a row's sum cannot be shared out over several threads, and a dense row
    cannot get a block of its own. What it can draw:

    * T-ELL: the ELLPACK arrays stored column-major (``format="tell"``: entry k of row i at
      texel row k of texture column i, blocks of W rows stacked for a folded y), one fragment a
      row; at every step of a fragment's loop, neighbouring fragments (rows) read neighbouring
      texels, the access pattern T-ELL gives DHTELL2's threads;
    * the dense part in place of the block per dense row (``dense=None``: the threshold of
      fewest texels, module notes): each dense row an inner product, all of them in one
      product pass and a few reduction passes (a tree sum over many fragments, the GPU's
      counterpart of the block's reduction); a dense column one full column added by one
      pass.

    This is ``SparseStream.from_scipy(A, format="tell", dense=dense, transpose=transpose,
    sums=sums)``; the matrix-free back end uses it with ``format="tell"``
    (``solve(..., method="matrix-free", backend="gpu", format="tell")``). Errors are
    ``from_scipy``'s.
    """
    return SparseStream.from_scipy(A, format="tell", dense=dense, transpose=transpose, sums=sums)


__all__ += ["tell_dense_part"]
