"""What the storage formats of :mod:`gpgpu.sparse_formats` share: the base class ``Format``
(the interface ``gpgpu.sparse.SparseStream`` calls), the float32 index limit, the host-side
arithmetic that lays (value, column) pairs out in textures (ELLPACK, TELL and the segmented
formats), the rectangles over a folded vector, and the automatic dense threshold (002 section
3.2's "dense rows extracted") that ELLPACK, TELL and corrigan choose from.

Nothing here imports :mod:`gpgpu.sparse`: a format gets the matrix it serves (a
``SparseStream``, duck-typed: its ``shape``, ``_streams``, ``row_counts``, options and error
wording) as an argument.
"""
from __future__ import annotations

import numpy as np

from ..geometry import Rect, Triangle

#: Column indexes (and the packed format's partial-sum indexes) are float32 in every format:
#: exact up to this; a matrix with more columns is refused.
FLOAT_INDEX_LIMIT = 2 ** 24


class Format:
    """A storage format of ``SparseStream``: how the sparse part of A lies in textures and how
    one product y = A x is drawn from them. ``gpgpu.sparse`` makes one instance per matrix
    (``SparseStream._storage``) and calls, in this order:

    ``auto_dense(M, row_nnz, long_row)`` (class method)
        The dense thresholds for ``dense=None``: (rows above which a row goes dense or None,
        columns above which a column goes dense, the columns' counts or None when no column
        may go dense). ``M``: the canonical CSR of A (float64); ``row_nnz``: its row counts;
        ``long_row``: ``gpgpu.sparse.PACKED_DENSE_ROW``, the longest row kept sparse by a
        layout that pads nothing. The default keeps everything sparse.
    ``upload(S, cols, vals, counts)``
        The sparse part's entries (row-major, increasing columns; ``counts`` entries a row)
        into textures ``S._streams[...]``; the layout's attributes (``K``, ``programs``,
        ``rectangles``, ``runs``, the format's own) on the instance, which ``S`` shows as its
        own (``S.K`` reads ``S._storage.K``).
    ``announce(S, most)``
        Before the first product: say on stderr and the ``gpgpu.sparse`` logger what it
        compiles, when more than ``most`` programs (``gpgpu.sparse.LOG_PROGRAMS``).
    ``product(S, xs, y)``
        Draw y = A_sparse x into the vector stream ``y``. A format whose passes leave the rows
        without non-zeros undrawn says so (``draws_every_row = False``): the caller then fills
        y with zeros first where y is not a new stream of zeros.
    ``scatter_add(S, ys, x)``
        Formats with ``scatters = True``: add A_sparse^T y into x by additive blending (the
        caller has zeroed x and turned blending on), for ``transpose="scatter"``.
    ``fetches(S)``
        (texel fetches of one product of the sparse part, stored entries padding included).
    ``to_scipy(S)``
        The sparse part read back: (rows, columns as int64, values).

    Class attributes: ``options`` (the options of ``from_scipy`` beyond the common ones that
    the format takes, name -> largest value or None), ``scatters`` (``transpose="scatter"``
    works), ``sorts`` (``sort=True`` works: 003's Fig. 7), ``draws_every_row`` (the product
    writes every row of y, empty ones included).
    """

    options: dict = {}
    scatters = False
    sorts = False
    draws_every_row = True
    K = None
    runs = None
    programs = 1
    rectangles = 1

    @classmethod
    def auto_dense(cls, M, row_nnz: np.ndarray, long_row: int):
        """dense=None: nothing dense (a format that says otherwise overrides this)."""
        return None, None, None

    def upload(self, S, cols: np.ndarray, vals: np.ndarray, counts: np.ndarray) -> None:
        raise NotImplementedError

    def announce(self, S, most: int) -> None:
        """Most formats compile one or two programs: nothing to say."""

    def product(self, S, xs, y) -> None:
        raise NotImplementedError

    def scatter_add(self, S, ys, x) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not scatter (scatters = False)")

    def fetches(self, S) -> tuple:
        raise NotImplementedError

    def to_scipy(self, S) -> tuple:
        raise NotImplementedError


def _index_type(*sizes):
    """int32 when every index (entries, places) fits it, else int64: the build's integer work
    on int32 is half the memory traffic."""
    return np.int32 if max(sizes) < 2 ** 31 else np.int64


def _first_of(counts: np.ndarray) -> np.ndarray:
    """The exclusive running sum of ``counts`` (int64): where each row's first entry is."""
    first = np.zeros(counts.size, dtype=np.int64)
    np.cumsum(counts[:-1], out=first[1:])
    return first


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


def _scatter_pairs(vals, cols, counts, base, L, P, total, pad_column: float = 0.0):
    """The entries' (value, column) pairs among ``total`` places (a uint64 array; where no
    entry is, value 0 and column ``pad_column``), row i's k-th entry at base[i] + (k // L) P +
    k % L (``_places``). Rows all of one count c, each ``step`` places after the one before
    (base = i step, c <= L or P = L), are a reshape; else one scatter."""
    nnz = vals.size
    buf = np.full(total, _pairs(np.zeros(1), np.full(1, pad_column))[0] if pad_column else 0, dtype=np.uint64)
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


def _rows_primitive(regions: list, T0):
    """The rectangles over the entries of a (folded) vector, with T0 generated per corner."""
    if len(regions) == 1:
        return Rect.covering(*regions[0], T0=T0)
    return Triangle.from_rects(regions, T0=T0)


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
