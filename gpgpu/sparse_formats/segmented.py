"""What the segmented formats "packed" and "split" share (beyond papers 002 and 003, this
project's): rows cut into segments of L entries, one fragment a segment, and a second pass that
sums each row's partial sums into y. :mod:`.packed` and :mod:`.split` differ only in how a
segment's entries lie in texels (``Segmented``'s hooks).

Rows are cut into segments of ``segment`` = L entries (default: about ``PACKED_SEGMENT``, from
the rows' median count, or the longest row when that pads little, see ``_auto_segment``); the
segments' texels lie down a texture column as T-ELL's. Where every row is one segment, one pass
writes y. Else a row's segments are consecutive partial sums in a folded vector P (``fold``
wide, default ``PACKED_FOLD``, so that P is not a strip of a few texel rows), and a second pass
sums each row's partials into y (``glsl/sparse_packed_sum.frag``; every row the same number of
segments: computed places, else each row's (first, count) from an RGBA texel laid out like y).
Long rows thus become many short fragments (nug30's rows of 30: four fragments of 8), and
uneven rows pad only their last segment (nug30's A^T, rows of 4 or 60: one segment of 4 or
fifteen, not every row padded to 60). More than 2^24 segments are refused (their indexes are
float32). The dense part by default: only rows of more than ``gpgpu.sparse.PACKED_DENSE_ROW``
non-zeros (no padding to save; a long row only makes one fragment's second-pass loop long);
columns stay.
"""
from __future__ import annotations

import numpy as np

from ..context import max_texture_size
from ..kernel import Kernel
from ..stream import Stream, borrow, fold_width, give_back, vector_regions, vector_shape
from . import common
from .common import FLOAT_INDEX_LIMIT, Format, _first_of, _rows_primitive, _scatter_pairs

#: About this many entries a fragment sums, where rows are split (``segment=None``).
PACKED_SEGMENT = 8

#: The width of the folded partial sums of split rows (``fold=None``), narrower than a texture
#: row so that a few hundred thousand partials are a block of rows, not a strip two texels tall.
PACKED_FOLD = 4096

#: The longest segment (entries a fragment, one program each, unrolled).
PACKED_MAX_SEGMENT = 64

_SUMS: dict = {}


class Segmented(Format):
    """The segmented layout (beyond papers 002 and 003): rows cut into segments of L entries,
    a segment's H texels down texture column s % Ws from row (s // Ws) H, one fragment a
    segment (pass 1), each split row's partials summed into y (pass 2). A subclass says how a
    segment's entries lie in texels: ``texels(L)`` (H), ``places(L)`` (the (value, column)
    places of a segment, at least L), ``textures`` (the textures from the pairs), ``kernel(L)``
    and ``inputs`` (pass 1's program and textures), ``read`` (an entry's value and column back)
    and ``fetches_a_segment(L)``.

    Options of ``from_scipy``: ``segment`` (1 .. ``PACKED_MAX_SEGMENT``) and ``fold``. Layout
    attributes: ``segment`` (L), ``segments`` (all of them), ``split`` (the most of a row),
    ``single`` (one pass writes y), ``uniform`` (every row as many segments), ``p_shape`` (the
    partials' folded shape, or the segments' layout when single), ``K`` (the longest row),
    ``programs`` = ``rectangles`` (1 or 2)."""

    options = {"segment": PACKED_MAX_SEGMENT, "fold": None}

    @classmethod
    def auto_dense(cls, M, row_nnz: np.ndarray, long_row: int):
        """Nothing is padded: only rows of more than ``long_row`` non-zeros go dense; columns stay."""
        return long_row, None, None

    def upload(self, S, cols: np.ndarray, vals: np.ndarray, counts: np.ndarray) -> None:
        """Entries (row-major, sorted) into segments of L entries down texture columns."""
        m = S.shape[0]
        L = int(S._segment_arg) if S._segment_arg is not None else _auto_segment(counts)
        H = self.texels(L)                                     # texels a segment
        seg = np.maximum(1, -(-counts // L))                  # segments a row (an empty row: 1)
        first = _first_of(seg)
        segments = int(seg.sum())
        split = int(seg.max())
        self.single = split == 1 and S._fold_arg is None      # one pass writes y
        Rs, Ws = self._shape(S, segments, L, H)
        # the segments end to end, P places of (value, column) each, then segment s's texels
        # down texture column s % Ws from row (s // Ws) H: one transposing copy
        P = self.places(L)
        buf = _scatter_pairs(vals, cols, counts, first * P, L, P, Rs * Ws * P)
        self.textures(S, buf, (Rs, Ws), L)
        self.uniform = bool(np.all(seg == split))
        if not self.single and not self.uniform:
            rows_y, W = vector_shape(m)
            meta = np.zeros((rows_y * W, 4), dtype=np.float32)
            meta[:m, 0], meta[:m, 1] = first, seg
            S._streams["meta"] = Stream(rows_y, W, components=4, data=meta)
        self.segment, self.segments, self.split = L, segments, split
        self.p_shape = (Rs, Ws)
        self.K = int(counts.max()) if counts.size and counts.max() > 0 else 1
        self.programs = 1 if self.single else 2
        self.rectangles = self.programs
        self.runs = None
        self._prims = {}

    def _shape(self, S, segments: int, L: int, H: int) -> tuple:
        """(Rs, Ws): the segments' layout, Ws segments a block of H texture rows (y's width when
        one pass writes y, else the partials' fold); the ValueErrors of what does not fit."""
        limit = max_texture_size()
        if segments >= FLOAT_INDEX_LIMIT:
            raise ValueError(f"{S._where()}format={S.format!r}: {segments} segments of {L} entries, more than "
                             f"float32 indexes them exactly (2^24 = {FLOAT_INDEX_LIMIT}); pass a larger segment= "
                             f"(at most {PACKED_MAX_SEGMENT})")
        fold = S._fold_arg
        if self.single:
            Ws = vector_shape(S.shape[0])[1]
        else:
            Ws = min(int(fold), limit) if fold else min(PACKED_FOLD, fold_width())
            Ws = max(Ws, -(-segments // max(1, limit // H)))   # the segments' texels must fit the texture
            if Ws > limit or (fold is not None and Ws > fold):
                raise ValueError(f"{S._where()}format={S.format!r}: {segments} segments of {H} texels do not fit "
                                 f"{'fold=%d x ' % fold if fold else ''}GL_MAX_TEXTURE_SIZE "
                                 f"= {limit}; pass a larger fold= (or None) or a larger segment=")
            Ws = min(Ws, segments)
        Rs = -(-segments // Ws)
        if Rs * H > limit:
            raise ValueError(f"{S._where()}format={S.format!r}: {segments} segments of {H} texels need "
                             f"{Rs * H} texture rows, more than GL_MAX_TEXTURE_SIZE = {limit}; pass a larger "
                             f"segment=")
        return Rs, Ws

    def product(self, S, xs: Stream, y: Stream) -> None:
        """y = A x: pass 1 over the segments (into y itself when no row is split, else into the
        partials P), pass 2 summing each row's partials into y."""
        m = S.shape[0]
        L = self.segment
        H = self.texels(L)
        inputs = self.inputs(S)
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
        kernel = self.kernel(L)
        if self.single:
            kernel.draw(y, prims[0], {**inputs, "X": xs}, {"x_width": xs.cols})
            return
        P = borrow(*self.p_shape)
        kernel.draw(P, prims[0], {**inputs, "X": xs}, {"x_width": xs.cols})
        if self.uniform:
            _packed_sum_kernel(self.split).draw(y, prims[1], {"P": P},
                                                {"p_width": self.p_shape[1], "y_width": y.cols})
        else:
            _packed_sum_kernel(None).draw(y, prims[1], {"P": P, "meta": S._streams["meta"]},
                                          {"p_width": self.p_shape[1]},
                                          texels=2 + -(-self.segments // m))
        give_back(P)

    def fetches(self, S) -> tuple:
        """Pass 1: ``fetches_a_segment(L)`` a segment (its texels and L gathers of x); pass 2: a
        (first, count) texel a row (rows of unequal splits) and the row's partials."""
        n1 = self.segments * self.fetches_a_segment(self.segment)
        n2 = 0 if self.single else self.segments + (0 if self.uniform else S.shape[0])
        return n1 + n2, self.segments * self.segment

    def to_scipy(self, S) -> tuple:
        """Each entry read back from its segment and place (``read``), row after row."""
        m = S.shape[0]
        _, _, at, slot = _packed_positions(S.row_counts, self.segment)
        c, v = self.read(S, at, slot)
        return np.repeat(np.arange(m), S.row_counts), c.astype(np.int64), v

    # ------------------------------------------------------------------ what a subclass says
    def texels(self, L: int) -> int:
        """Texels a segment of L entries takes (H)."""
        raise NotImplementedError

    def places(self, L: int) -> int:
        """(value, column) places a segment takes in the pairs laid end to end (P >= L)."""
        raise NotImplementedError

    def textures(self, S, buf: np.ndarray, layout: tuple, L: int) -> None:
        """The textures, from the pairs ``buf`` (uint64, P places a segment) and the layout
        (Rs, Ws), into ``S._streams``."""
        raise NotImplementedError

    def kernel(self, L: int) -> Kernel:
        """Pass 1's program for segments of L entries."""
        raise NotImplementedError

    def inputs(self, S) -> dict:
        """Pass 1's textures (its x is added as "X")."""
        raise NotImplementedError

    def read(self, S, at: np.ndarray, slot: np.ndarray) -> tuple:
        """The columns and values of the entries in segments ``at``, places ``slot``, read back."""
        raise NotImplementedError

    def fetches_a_segment(self, L: int) -> int:
        """Texel fetches of pass 1 a segment."""
        raise NotImplementedError


def _packed_sum_kernel(segments: int | None) -> Kernel:
    """The second pass of the segmented formats: each row's partial sums into y (``segments``:
    every row has that many, else a (first, count) texel per row)."""
    k = _SUMS.get(segments)
    if k is None:
        defines = {} if segments is None else {"SEGMENTS": segments}
        k = _SUMS[segments] = Kernel("sparse_packed_sum", texels=2 + (segments or 1), defines=defines,
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


def _packed_positions(counts: np.ndarray, L: int):
    """For rows of ``counts`` entries cut into segments of L: segments a row (at least 1), the
    first segment of each row, and for every entry (row-major) its segment and its slot in it."""
    seg = np.maximum(1, -(-counts // L))
    first = _first_of(seg)
    nnz = int(counts.sum())
    it = common._index_type(nnz, int(seg.sum()))     # looked up here, so a test may widen it
    pos = np.arange(nnz, dtype=it) - np.repeat(_first_of(counts).astype(it), counts)
    whole = pos // L
    return seg, first, np.repeat(first.astype(it), counts) + whole, pos - whole * L
