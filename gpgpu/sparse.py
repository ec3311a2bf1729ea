"""Sparse matrices as textures, and the sparse products of papers 002 and 003.

Paper 003 (Corrigan), Figs. 4-7: "only nonzero values are stored (Figure 4) ... which column
each entry is stored in ... is also stored (Figure 5). The number of nonzero entries is hard
coded into each fragment program" (Fig. 6); rows are sorted by their number of non-zeros "to
allow for as many rows to be drawn at once", and the columns with them so that a symmetric
positive definite matrix stays one (Fig. 7). Paper 002 (Smith, Gondzio, Hall), section 3:
FSAX y = A x, FSATY x = Aᵀ y and FSAAT z = A Θ Aᵀ y (9) with A in ELLPACK ("full coalescing at
one thread per row"), transposed ELLPACK for large problems, and "the dense rows extracted to
be treated separately" (the HYB idea).

``SparseStream.from_scipy(A, format=...)`` puts a ``scipy.sparse`` matrix on the GPU. Each
format is a class of :mod:`gpgpu.sparse_formats`, one module each, named in its registry
``FORMATS`` (``gpgpu.sparse.FORMATS`` is that registry); its docstring says what it stores:

``format="corrigan"`` (003, ``sparse_formats.corrigan.Corrigan``)
    The non-zeros row after row in one texture (values) and their column indexes in another,
    ``store_width`` texels wide. Rows are grouped into runs of consecutive rows with the same
    non-zero count; each run is one rectangle over its part of y, drawn with the program for
    its count (``glsl/sparse_corrigan.frag`` with ``NNZ`` defined). ``sort=True`` permutes
    rows and columns by count (a square matrix only), so each count is one run.
``format="ellpack"`` (002, ``sparse_formats.ellpack.Ellpack``)
    Values and column indexes in m x K textures (K the longest row, shorter rows padded with
    zeros): row i's entries along texture row i. One rectangle, one program, one fragment per
    row (``glsl/sparse_ellpack.frag``).
``format="tell"`` (002, transposed ELLPACK, ``sparse_formats.tell.Tell``)
    The same entries in K x m textures: row i's entries down texture column i, so that
    neighbouring rows read neighbouring texels (``glsl/sparse_tell.frag``).
``format="packed"`` (beyond papers 002 and 003, ``sparse_formats.packed.Packed``)
    A storage of this project, not the papers': each entry's value and column index share one
    RGBA32F texel, two entries a texel, so a fragment fetches one texel for two entries: 1.5
    fetches a non-zero with the gather of x, against ELLPACK's 3. Rows are cut into segments of
    ``segment`` = L entries (default: about 8, see ``_auto_segment``); one fragment sums one
    segment, and where rows are split a second pass sums each row's partials, folded ``fold``
    wide (default ``PACKED_FOLD`` = 4096), into y (:mod:`gpgpu.sparse_formats.segmented`).
    Column indexes are float32, exact up to 2^24 = 16777216: a matrix with more columns
    (rmatvec's copy: more rows) is refused with a ValueError; so are more than 2^24 segments.
    Its dense part: only rows of more than ``PACKED_DENSE_ROW`` non-zeros by default (no
    padding to save, a long row only makes one fragment's second-pass loop long); ``dense=``
    as for the other formats.
``format="split"`` (beyond papers 002 and 003, ``sparse_formats.split.Split``)
    The packed format's segments and second pass without the packing: values and column
    indexes in two float textures, one entry a texel each (``glsl/sparse_split.frag``, 3
    fetches a non-zero as ELLPACK's), so that a measurement can tell the row splitting's gain
    from the packing's. Everything else (``segment``, ``fold``, the limits) as "packed".

Dense rows and columns (``dense``): a row or column with more non-zeros than the threshold
leaves the sparse part. A dense column is stored as a full column (a plane of its own) and
added by one pass; a dense row is stored as a full row (a plane folded like x) and its product
is an inner product (003's component-wise product, then sums) written into its texel
(:mod:`gpgpu.sparse_formats.dense`). The inner products of all dense rows are done together
(``_plane_dots``): one product pass over every plane and halving sums, a number of passes that
does not grow with the dense rows. By default (ELLPACK, TELL) the threshold is the one that stores the fewest texels (and at least 32): rows of up to t non-zeros pad
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

from typing import NamedTuple

import numpy as np

from .blas1 import KERNELS as L1, whole
from .dense_common import power_of_two_exponent, scaled_back
from .kernel import Kernel, additive_blending
from .sparse_formats import FORMATS, dense as dense_part
from .sparse_formats.common import FLOAT_INDEX_LIMIT
from .sparse_formats.corrigan import CORRIGAN_MAX_NNZ, CORRIGAN_MAX_PROGRAMS, corrigan_kernel
# the formats' settings and helpers under the names gpgpu.sparse has always had (gpgpu.lp's
# matrix-free back end takes _plane_dots from here, tests the others); each lives in its module
from .sparse_formats.common import _auto_threshold, _index_type  # noqa: F401
from .sparse_formats.dense import plane_dots as _plane_dots  # noqa: F401
from .sparse_formats.packed import packed_kernel  # noqa: F401
from .sparse_formats.segmented import PACKED_FOLD, PACKED_MAX_SEGMENT, PACKED_SEGMENT, _auto_segment  # noqa: F401
from .sparse_formats.split import split_kernel  # noqa: F401
from .stream import Stream, borrow, check_array, check_shape, give_back, vector_shape

__all__ = ["SparseStream", "FORMATS", "TRANSPOSES", "corrigan_kernel", "CORRIGAN_MAX_NNZ",
           "CORRIGAN_MAX_PROGRAMS"]

TRANSPOSES = ("copy", "scatter")

#: The packed and split formats with ``dense=None``: rows of more non-zeros than this go to the
#: dense part (003's inner products in a pyramid); shorter ones are split into segments. Columns
#: stay. (Passed to each format's ``auto_dense`` as ``long_row``.)
PACKED_DENSE_ROW = 8192

#: A first product that compiles more programs than this ("a few dozen": the corrigan format's,
#: one per non-zero count) says so first, on stderr and on the ``gpgpu.sparse`` logger (INFO).
#: (Passed to each format's ``announce``.)
LOG_PROGRAMS = 32

KERNELS = {
    "gather": Kernel("gather_vector", texels=3, doc="003 Fig. 7: permutation of a vector"),
}


class StorageOptions(NamedTuple):
    """How ``SparseStream.from_scipy`` stores a matrix, its options as given (checked by
    ``_check_options``): the format, the corrigan sort, the dense threshold, how ``rmatvec``
    gets A^T, the dense part's sums, the corrigan program limit, and the segmented formats'
    ``segment`` and ``fold``."""
    format: str
    sort: bool
    dense: object
    transpose: str
    sums: str
    max_programs: int | None
    segment: int | None = None
    fold: int | None = None


def _check_options(options: StorageOptions):
    """Refuse an option ``from_scipy`` cannot use, with a sentence; answers the format's class
    (``FORMATS[format]``) and max_programs (None: ``CORRIGAN_MAX_PROGRAMS``)."""
    format, sort, dense, transpose, sums, max_programs, segment, fold = options
    if format not in FORMATS:
        raise ValueError(f"format must be one of {tuple(FORMATS)}, got {format!r}")
    storage = FORMATS[format]
    for name, value in (("segment", segment), ("fold", fold)):
        if value is None:
            continue
        if name not in storage.options:      # the formats that take it, from the registry
            takers = [k for k, c in FORMATS.items() if name in c.options]
            use = f" or use format={takers[0]!r}" if takers else ""
            raise ValueError(f"{name}= is an option of format={' and '.join(map(repr, takers))} (beyond the "
                             f"papers); format={format!r} takes none: drop {name}={use}")
        most = storage.options[name]
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1 or (
                most is not None and value > most):
            span = f"1 .. {most}" if most is not None else "a positive int"
            raise ValueError(f"{name} must be {span} (or None: chosen from the rows), got {value!r}")
    if sums not in ("pingpong", "fan"):
        raise ValueError(f"sums must be 'pingpong' or 'fan', got {sums!r}")
    if transpose not in TRANSPOSES:
        raise ValueError(f"transpose must be one of {TRANSPOSES}, got {transpose!r}")
    if transpose == "scatter" and not storage.scatters:
        raise ValueError(f"transpose='scatter' walks the ELLPACK layouts; the {format} format "
                         "computes A^T y from a transposed copy (transpose='copy')")
    if max_programs is None:
        max_programs = CORRIGAN_MAX_PROGRAMS
    if isinstance(max_programs, bool) or not isinstance(max_programs, (int, np.integer)) or max_programs < 1:
        raise ValueError(f"max_programs must be a positive int (fragment programs), got {max_programs!r}")
    if not (dense is None or dense is False) and (
            isinstance(dense, bool) or not isinstance(dense, (int, np.integer)) or dense < 1):
        raise ValueError(f"dense must be None, False or a positive int (non-zeros), got {dense!r}")
    return storage, max_programs


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


class SparseStream:
    """A sparse m x n matrix on the GPU, stored and multiplied as in papers 002 and 003.

    The matrix lives in float32 textures in one of the formats of the module notes: paper
    003's ``"corrigan"`` storage (values and column textures, one fragment program per
    non-zero count, rows optionally sorted by count: Figs. 4-7), paper 002's ``"ellpack"``
    and transposed ELLPACK ``"tell"`` (section 3), or, beyond the papers, ``"packed"`` and
    ``"split"`` (long rows cut into segments); rows and columns far longer than the others go
    to a dense part (002's "dense rows extracted", 003's future work 4). Its products are 002's
    FSAX y = A x (``matvec``, ``@``), FSATY x = A^T y (``rmatvec``) and FSAAT z = A diag(theta)
    A^T y (``normal_matvec``), on numpy vectors or vector Streams. Build one with
    ``from_scipy``; ``release()`` (or ``with``) frees its textures. ``fetches()`` counts the
    sparse part's texel fetches a product, ``max_abs()`` is max |a_ij|.

    Attributes
    ----------
    shape : tuple of int
        (m, n).
    nnz : int
        The stored non-zeros.
    format : str
        One of ``FORMATS``.
    dense_rows, dense_cols : ndarray of int
        The rows and columns moved to the dense part.
    perm : ndarray of int or None
        The corrigan sort's permutation, new -> old (None unsorted).
    programs : int
        The distinct fragment programs of one product.
    rectangles : int
        The passes of the sparse part of one product.
    segment, split, segments, single, uniform, p_shape
        Packed and split formats: entries a fragment, the most segments of a row, all segments,
        whether one pass writes y, whether every row has as many segments, the partials' layout.
    K, runs, store_width
        ELLPACK and TELL: the longest row (texels a row); corrigan: its runs and the width of
        its textures. These and the packed formats' are the storage format's own attributes
        (``_storage``, an instance of the format's class in :mod:`gpgpu.sparse_formats`),
        read through the SparseStream.

    Raises
    ------
    ValueError
        Used after ``release()`` (or the end of its ``with`` block).

    See Also
    --------
    SparseStream.from_scipy : the constructor, with every storage option.
    gpgpu.cg : conjugate gradients on a SparseStream (paper 003).

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> import gpgpu
    >>> A = sp.diags([1.0, 2.0, 3.0], [0, 1, 3], shape=(6, 8), format="csr")
    >>> with gpgpu.SparseStream.from_scipy(A, format="ellpack") as S:
    ...     print(S.shape, S.nnz, S.format)
    ...     print(np.allclose(S.matvec(np.ones(8)), A @ np.ones(8)))
    ...     print(np.allclose(S.rmatvec(np.ones(6)), A.T @ np.ones(6)))
    (6, 8) 17 ellpack
    True
    True
    """

    def __init__(self):  # use from_scipy
        self.format = None
        self.shape = (0, 0)
        self.nnz = 0
        self._storage = None           # the format's instance (gpgpu.sparse_formats): its layout
        self._streams: dict = {}
        self._T = None
        self._host = None              # (float32 values, indices, indptr) of A, for transposed()
        self._released = False
        self._of_transpose = False     # rmatvec's transposed copy: its rows are A's columns
        self._announced = False        # the first product has said what it compiles

    def __getattr__(self, name: str):
        """The storage format's layout attributes (``K``, ``programs``, ``rectangles``,
        ``runs``, ``segment``, ...: ``_storage``'s data, not its methods) read as the
        SparseStream's own, so that a new format's attributes need nothing here."""
        storage = self.__dict__.get("_storage")
        if storage is not None and not name.startswith("__") and hasattr(storage, name):
            value = getattr(storage, name)
            if not callable(value):
                return value
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

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
    def from_scipy(cls, A, format: str = "ellpack", *, sort: bool = False, dense=None,
                   transpose: str = "copy", sums: str = "pingpong",
                   max_programs: int | None = None, dense_split: bool = True,
                   segment: int | None = None, fold: int | None = None) -> "SparseStream":
        """Upload ``A`` (any scipy.sparse matrix, or a dense 2-D array).

        Parameters
        ----------
        format : {"ellpack", "tell", "corrigan", "packed", "split"}
            A name of the registry ``FORMATS`` (:mod:`gpgpu.sparse_formats`, a class each).
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
        return cls._build(A, StorageOptions(format, sort, dense, transpose, sums, max_programs, segment=segment,
                                            fold=fold), of_transpose=False)

    @classmethod
    def _build(cls, A, options: StorageOptions, of_transpose: bool) -> "SparseStream":
        storage, max_programs = _check_options(options)
        format, sort, dense, transpose, sums, _, segment, fold = options
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
        self._storage = storage()
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
            if not storage.sorts:
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
        self._upload(M, dense)
        if perm is not None:
            self._streams["perm"] = Stream.vector_of(m, data=perm.astype(np.float32))
            inverse = np.empty_like(perm)
            inverse[perm] = np.arange(m)
            self._streams["inverse"] = Stream.vector_of(m, data=inverse.astype(np.float32))
        return self

    def _upload(self, M, dense) -> None:
        """The dense part's rows and columns chosen (``dense``: False, None for the format's
        ``auto_dense``, or a threshold), then the rest into the format's textures and the dense
        part into its own (:mod:`gpgpu.sparse_formats.dense`)."""
        m, n = self.shape
        row_nnz = np.diff(M.indptr)
        # the columns' counts only where a column may go dense (not dense=False, not a format
        # whose default keeps every column: the segmented ones)
        if dense is False:
            rows_t = cols_t = col_nnz = None
        elif dense is None:
            rows_t, cols_t, col_nnz = self._storage.auto_dense(M, row_nnz, PACKED_DENSE_ROW)
        else:
            rows_t = cols_t = int(dense)
            col_nnz = np.bincount(M.indices, minlength=n)
        none = np.zeros(0, dtype=np.int64)
        dense_rows = np.flatnonzero(row_nnz > rows_t) if rows_t is not None else none
        dense_cols = np.flatnonzero(col_nnz > cols_t) if col_nnz is not None and cols_t is not None else none
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
            dense_part.upload(self, M, coo, in_row, in_col)
        else:
            self._upload_sparse(None, M.indices, M.data, row_nnz, ordered=True)
            dense_part.upload(self, M, None, None, None)

    def _upload_sparse(self, rows, cols, vals, counts=None, ordered: bool = False) -> None:
        """The sparse part's entries (``rows``, ``cols``, ``vals``) into the format's textures
        (``_storage.upload``). ``ordered``: the entries are already row-major with increasing
        columns (a canonical CSR's, as ``_build`` passes them), so no lexsort; then ``counts``
        (entries a row) may stand for ``rows`` (None)."""
        m = self.shape[0]
        if not ordered:
            order = np.lexsort((cols, rows))
            rows, cols, vals = rows[order], cols[order], vals[order]
        if counts is None or not ordered:
            counts = np.bincount(rows, minlength=m)
        self.row_counts = counts
        self.empty_rows = int(np.count_nonzero(counts == 0))
        self._storage.upload(self, cols, vals, counts)

    def fetches(self) -> dict:
        """Texel fetches of one product of the sparse part (dense part not included), counted
        from the kernels' sources: the packed format's pass 1 fetches ceil(L / 2) texels and L
        gathers of x a segment; its pass 2 a (first, count) texel (rows of unequal splits) and
        the row's partials. ELLPACK and TELL: 3 a stored entry, padding included; corrigan: 3 a
        non-zero (each format's ``fetches``).
        Answers {"fetches", "entries" (stored, padding included), "per_nonzero"}."""
        self._alive()
        total, stored = self._storage.fetches(self)
        return {"fetches": total, "entries": stored, "per_nonzero": total / max(1, int(self.row_counts.sum()))}

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
        in and out (two gathers) unless ``permuted`` (CG works on the sorted system). The
        format draws the sparse part (``_storage.product``), the dense part adds its own."""
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
        if not self._announced:
            self._announced = True
            self._storage.announce(self, LOG_PROGRAMS)
        if (y is out or has_dense) and self.empty_rows and not self._storage.draws_every_row:
            L1["fill"].draw(y, whole(y), uniforms={"value": 0.0})     # rows no pass draws read zero
        self._storage.product(self, xs, y)
        if not has_dense:
            return y
        return dense_part.add(self, xs, y, out)

    def plane_products(self) -> bool:
        """Whether :meth:`product_planes` draws this matrix: a format whose ``planes`` says so
        (ELLPACK; not transposed ELLPACK) and no sorting permutation."""
        return getattr(self._storage, "planes", False) and self.perm is None and self._storage.draws_every_row

    def product_planes(self, X: Stream, planes: int, out: Stream, weights: Stream | None = None) -> Stream:
        """``out`` = A X for ``planes`` vectors stacked in X (plane c at texture rows c h_x ..,
        each folded as a vector of length n), into the planes of ``out`` (length m each); with
        ``weights`` (a vector stream of length n) A diag(weights) X (beyond 002: a
        preconditioner's k column products at once). One pass; with a dense part, the sparse
        part's pass, the dense rows' inner products with every plane in chunks (one pass,
        :func:`gpgpu.sparse_formats.dense.add_planes`) and one pass that adds the dense part.
        Only where :meth:`plane_products` says so."""
        self._alive()
        if not self.plane_products():
            raise NotImplementedError(f"{self._where()}product_planes needs ELLPACK without sorting "
                                      f"(this matrix: {self.format}); draw the planes one by one")
        if self.kc or self.kr:
            return dense_part.add_planes(self, X, int(planes), out, weights)
        self._storage.product_planes(self, X, int(planes), out, weights)
        return out

    def carries_rows(self) -> bool:
        """Whether :meth:`draw_with_rows` draws this matrix: ELLPACK (a row's entries side by
        side) without sorting."""
        return getattr(self._storage, "fours", False) and self.perm is None

    def draw_with_rows(self, kernel, out: Stream, rect, inputs: dict, uniforms: dict) -> Stream:
        """Draw a caller's ``kernel`` that walks this matrix's rows as ``sparse_ellpack_four``
        does (samplers ``values`` and ``columns``, uniform ``K``, row i at texel (r K, x) of a
        y folded ``W`` wide, i = r W + x) over ``rect`` of ``out``, with the caller's other
        inputs and uniforms (beyond 002: the fused PCG iteration's product that also draws its
        curvature sums). The rows are the sparse part's (a dense row's are empty); where this
        matrix has a dense part, ``kernel`` must be compiled with DENSE, which adds it to each
        row's sum in the same pass (``sparse_ellpack_four``'s ``with_dense_part``) from x =
        ``inputs["X"]`` (times ``inputs["Weights"]`` where given), the dense rows' chunks drawn
        first (one pass where there are dense rows: :func:`gpgpu.sparse_formats.dense.fused_part`).
        Only where :meth:`carries_rows` says so."""
        self._alive()
        if not self.carries_rows():
            raise NotImplementedError(f"{self._where()}draw_with_rows needs ELLPACK without sorting "
                                      f"(this matrix: {self.format}); draw the product by product_fused")
        dense = bool(self.kc or self.kr)
        if dense != bool(kernel.defines.get("DENSE")):
            have = f"a dense part ({self.kr} dense rows, {self.kc} dense columns)" if dense else "no dense part"
            raise ValueError(f"{self._where()}draw_with_rows: this matrix has {have}, and the kernel "
                             f"{kernel.name!r} is{'' if not dense else ' not'} compiled with DENSE; pass "
                             f"the kernel {'with' if dense else 'without'} defines DENSE")
        table = None
        if dense:
            extra, more, table = dense_part.fused_part(self, inputs["X"], inputs.get("Weights"))
            inputs, uniforms = {**inputs, **extra}, {**uniforms, **more}
        self._storage.draw_with_rows(self, kernel, out, rect, inputs, uniforms)
        if table is not None:
            give_back(table)
        return out

    def product_fused(self, xs: Stream, out: Stream, weights: Stream | None = None) -> Stream:
        """``out`` = A x, or A diag(weights) x with x_j w_j rounded first (the float32 values of
        a scaling pass, ``elementwise_product``, followed by the product), for vector streams:
        the fused PCG iteration's products (beyond 002). On ELLPACK without sorting the sparse
        part fetches a row four entries at a time (``sparse_ellpack_four``, the sums of
        ``sparse_ellpack``) with the weights applied on the way, and adds a dense part in the
        same pass: one pass, two where A has dense rows (their inner products in chunks first,
        :func:`gpgpu.sparse_formats.dense.fused_part`); elsewhere the weights are a scaling pass
        of their own and the product is :meth:`_product`'s. ``out`` must not be ``xs``."""
        self._alive()
        if not self._announced:
            self._announced = True
            self._storage.announce(self, LOG_PROGRAMS)
        four = getattr(self._storage, "fours", False) and self.perm is None
        if weights is not None and not four:
            scaled = borrow(*vector_shape(self.shape[1]))
            L1["elementwise_product"].draw(scaled, whole(scaled), {"X": xs, "Y": weights})
            self.product_fused(scaled, out)
            give_back(scaled)
            return out
        if not four:
            return self._product(xs, out)
        if not (self.kc or self.kr):
            self._storage.product_four(self, xs, out, weights)
            return out
        inputs, uniforms, table = dense_part.fused_part(self, xs, weights)
        self._storage.product_four(self, xs, out, weights, dense=(inputs, uniforms))
        if table is not None:
            give_back(table)
        return out

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
            self._T = SparseStream._build(H.T, StorageOptions(self.format, False, self._source_dense, "copy",
                                                              self.sums, self._max_programs,
                                                              segment=self._segment_arg, fold=self._fold_arg),
                                          of_transpose=True)
            self._host = None
        return self._T

    def _scatter_transpose(self, ys: Stream, out: Stream | None) -> Stream:
        """x = Aᵀ y from the one copy of A (a format with ``scatters``: ELLPACK, TELL): x zeroed,
        then under additive blending the format's points scatter-add a(i,k) y(i) into x and the
        dense rows add y(i_r) a_r; the dense columns' inner products last."""
        n = self.shape[1]
        x = out if out is not None else Stream.vector_of(n)
        L1["fill"].draw(x, whole(x), uniforms={"value": 0.0})
        with additive_blending():
            self._storage.scatter_add(self, ys, x)
            if self.kr:   # dense rows: x += y(i_r) a_r for every dense row r, one pass
                dense_part.scatter_rows(self, ys, x)
        if self.kc:  # dense columns: x(j_c) += a_c^T y, their inner products all at once
            dense_part.scatter_columns(self, ys, x)
        return x

    # ------------------------------------------------------------------ back to scipy
    def to_scipy(self):
        """The matrix as scipy.sparse CSR (float32 values, original row and column order), read
        back from the textures."""
        import scipy.sparse as sp

        self._alive()
        m, n = self.shape
        rows, cols, vals = ([part] for part in self._storage.to_scipy(self))
        dense_part.to_scipy(self, rows, cols, vals)
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
