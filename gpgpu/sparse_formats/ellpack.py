"""ELLPACK (paper 002 section 3.2): ``SparseStream.from_scipy(A, format="ellpack")``, the default.

002 section 3.2: FSAX y = A x with A in ELLPACK, "full coalescing at one thread per row"; here
one fragment per row. Also the scatter of ``transpose="scatter"`` (x = Aᵀ y from this one copy
of A: a point per stored entry, placed on its column by the vertex program and summed by
additive blending), which transposed ELLPACK (:mod:`.tell`) shares.
"""
from __future__ import annotations

import numpy as np

from ..context import max_texture_size
from ..geometry import Rect
from ..kernel import Kernel
from ..stream import Stream, vector_regions, vector_shape
from .common import Format, _auto_threshold, _deinterleave, _rows_primitive, _scatter_pairs

KERNELS = {
    "ellpack": Kernel("sparse_ellpack", texels=3, doc="002 section 3.2 ELLPACK, one fragment per row"),
    "scatter": Kernel("sparse_scatter", texels=4, doc="FSATY from one copy: points, additive blending",
                      vertex="sparse_scatter"),
    "planes": Kernel("sparse_ellpack_planes", texels=3, doc="ELLPACK on every plane of a stack, one pass"),
    "planes_weighted": Kernel("sparse_ellpack_planes", texels=4, defines={"WEIGHTED": 1},
                              doc="ELLPACK times column weights on every plane of a stack, one pass"),
    "planes_dense": Kernel("sparse_ellpack_planes", texels=5, defines={"DENSE": 1},
                           doc="ELLPACK on every plane of a stack, the dense part added in the same pass"),
    "planes_weighted_dense": Kernel("sparse_ellpack_planes", texels=6, defines={"WEIGHTED": 1, "DENSE": 1},
                                    doc="ELLPACK times column weights on every plane, the dense part added"),
    "four": Kernel("sparse_ellpack_four", texels=3, doc="ELLPACK, a row's fetches four entries at a time"),
    "four_weighted": Kernel("sparse_ellpack_four", texels=4, defines={"WEIGHTED": 1},
                            doc="ELLPACK times column weights (x w rounded first), four entries at a time"),
    "four_dense": Kernel("sparse_ellpack_four", texels=5, defines={"DENSE": 1},
                         doc="ELLPACK four entries at a time, the dense part added in the same pass"),
    "four_weighted_dense": Kernel("sparse_ellpack_four", texels=6, defines={"WEIGHTED": 1, "DENSE": 1},
                                  doc="ELLPACK times column weights, the dense part added in the same pass"),
}


class Ellpack(Format):
    """Paper 002 section 3.2's ELLPACK: values and column indexes in two float32 textures of m x
    K texels (K the longest row, shorter rows padded), row i's entries along texture row i; one
    rectangle, one program, one fragment per row (``glsl/sparse_ellpack.frag``).

    A padding texel holds the value 0 and the column ``END`` (-1), where a fragment's loop
    stops (beyond 002, whose rows run all K texels): a row costs its own entries, not the
    longest row's (a few long rows among many short ones no longer pad every fragment's loop).

    A y longer than a texture row is folded (W wide, R = ceil(m / W) blocks of W rows): block r
    lies in texture columns r K .. r K + K - 1, so the R blocks of K texels side by side must
    fit GL_MAX_TEXTURE_SIZE (the automatic dense threshold keeps K within it). Column indexes
    are float32 (exact up to 2^24). Layout attributes: ``K``, ``programs`` = ``rectangles`` = 1.
    ``transpose="scatter"`` works from this one copy (``scatter_add``)."""

    kernel = KERNELS["ellpack"]
    scatters = True
    #: the column index of a padding texel: the kernels' loops stop there
    END = -1.0
    #: ``product_planes`` reads this layout (row i's entries along texture row x at r K ..);
    #: transposed ELLPACK's entries lie down the columns, so :class:`.tell.Tell` says False
    planes = True
    #: ``product_four`` reads this layout (a row's entries side by side); :class:`.tell.Tell`
    #: says False
    fours = True
    #: the scatter kernel's ``transposed`` uniform: entries down texture columns (TELL)
    down = False
    #: where a row's K texels lie, for the error that says they do not fit
    along = "row"

    @classmethod
    def auto_dense(cls, M, row_nnz: np.ndarray, long_row: int):
        """The threshold of fewest texels (``_auto_threshold``, at least 32) for rows and for
        columns; a row at most as long as the texture holds R blocks of (``most``)."""
        m, n = M.shape
        col_nnz = np.bincount(M.indices, minlength=n)
        most = max_texture_size() // vector_shape(m)[0]
        return _auto_threshold(row_nnz, n, True, most), _auto_threshold(col_nnz, m, True), col_nnz

    def upload(self, S, cols: np.ndarray, vals: np.ndarray, counts: np.ndarray) -> None:
        """The entries into the values and columns textures of the layout (``layout``), every
        row padded to the longest, K (value 0, column ``END``)."""
        m = S.shape[0]
        limit = max_texture_size()
        K = int(counts.max()) if counts.size and counts.max() > 0 else 1
        rows_y, W = vector_shape(m)                          # y folded: R blocks of W rows
        if rows_y * K > limit:
            self._refuse(S, counts, K, rows_y, limit)
        # the (value, column) pairs in one scatter (a reshape where it can), then apart
        tex_v, tex_i = self.layout(vals, cols, counts, K, (rows_y, W))
        S._streams["values"] = Stream(*tex_v.shape, data=tex_v)
        S._streams["columns"] = Stream(*tex_i.shape, data=tex_i)
        self.K = K
        self.programs = 1
        self.rectangles = 1
        self.runs = None

    def _refuse(self, S, counts, K: int, rows_y: int, limit: int) -> None:
        """The ValueError of a longest row (K texels, R blocks side by side) wider than a texture."""
        noun = "columns" if S._of_transpose else "rows"
        longest = int(np.argmax(counts))
        span = (f"{K} texels" if rows_y == 1 else f"{rows_y} blocks of them side by side (the folded "
                                                  f"vector's), {rows_y} x {K} = {rows_y * K} texels")
        fix = (f"set dense= at most {limit // rows_y} (dense=None chooses a threshold that fits; "
               f"got dense={S._source_dense!r}) to move longer {noun} to the dense part")
        if S._of_transpose:
            fix += ", or transpose='scatter' (A^T y from the one copy of A, no transposed copy)"
        raise ValueError(f"{S._where()}{S.format.upper()} stores each of {S._lines()} as K texels "
                         f"along a texture {self.along}, K the most non-zeros of any ({S._line(longest)} has "
                         f"{K}): {span}, more than GL_MAX_TEXTURE_SIZE = {limit}; {fix}")

    @classmethod
    def layout(cls, vals, cols, counts, K: int, fold: tuple):
        """The values and columns textures, W x (R K) (``fold`` = (R, W)): row i's K places
        contiguous at (x R + r) K, i = r W + x, i.e. entry k of row r W + x at texel (r K + k, x);
        a place without an entry holds (0, ``END``)."""
        rows_y, W = fold
        i = np.arange(counts.size, dtype=np.int64)
        buf = _scatter_pairs(vals, cols, counts, ((i % W) * rows_y + i // W) * K, K, K, W * rows_y * K,
                             pad_column=cls.END)
        return tuple(t.reshape(W, rows_y * K) for t in _deinterleave(buf))

    @staticmethod
    def origin(K: int):
        """T0 at the row's first entry, affine in the window position (X, Y) so that the
        rasterizer interpolates it: (r K + .5, x + .5) at the centre of texel (x, r)."""
        return lambda X, Y: ((Y - 0.5) * K + 0.5, X)

    @staticmethod
    def blocks(t: np.ndarray, fold: tuple, K: int) -> np.ndarray:
        """A texture of the layout read back as one row of K texels per (padded) row of A."""
        rows_y, W = fold
        return t.reshape(W, rows_y, K).transpose(1, 0, 2).reshape(-1, K)

    def product(self, S, xs: Stream, y: Stream) -> None:
        """y = A x: one rectangle over y, one fragment a row."""
        st = S._streams
        prim = _rows_primitive(vector_regions(S.shape[0]), self.origin(self.K))
        self.kernel.draw(y, prim, {"values": st["values"], "columns": st["columns"], "X": xs},
                         {"K": self.K, "x_width": xs.cols})

    def product_four(self, S, xs: Stream, y: Stream, weights: Stream | None = None, dense=None) -> None:
        """y = A x as :meth:`product`, a row's fetches issued four entries at a time
        (``sparse_ellpack_four``, the same sums); with ``weights`` (a vector of length n)
        y = A diag(weights) x, x_j w_j rounded first. ``dense``: the dense part's (inputs,
        uniforms) (:func:`.dense.fused_part`), added to each row in the same pass (DENSE)."""
        st = S._streams
        inputs = {"values": st["values"], "columns": st["columns"], "X": xs}
        uniforms = {"K": self.K, "x_width": xs.cols}
        if weights is not None:
            inputs["Weights"] = weights
        name = "four" if weights is None else "four_weighted"
        if dense is not None:
            inputs.update(dense[0])
            uniforms.update(dense[1])
            name += "_dense"
        prim = _rows_primitive(vector_regions(S.shape[0]), self.origin(self.K))
        KERNELS[name].draw(y, prim, inputs, uniforms)

    def draw_with_rows(self, S, kernel, out: Stream, rect, inputs: dict, uniforms: dict) -> None:
        """Draw ``kernel`` over ``rect`` of ``out`` with this layout's textures (``values``,
        ``columns``) and ``K`` beside the caller's inputs and uniforms."""
        st = S._streams
        kernel.draw(out, rect, {"values": st["values"], "columns": st["columns"], **inputs}, {"K": self.K, **uniforms})

    def product_planes(self, S, X: Stream, planes: int, Y: Stream, weights: Stream | None = None,
                       dense=None) -> None:
        """Y = A X plane by plane in one pass (``sparse_ellpack_planes``): ``planes`` planes of
        vectors stacked in X (length n each) and Y (length m each), each folded as its vector;
        with ``weights`` (a vector of length n) Y = A diag(weights) X. ``dense``: the dense
        part's (inputs, uniforms) (:func:`.dense.add_planes`), added to each plane's rows in the
        same pass (DENSE)."""
        m, n = S.shape
        rows_y, W = vector_shape(m)
        rows_x, x_width = vector_shape(n)
        name = "planes" if weights is None else "planes_weighted"
        inputs = {"values": S._streams["values"], "columns": S._streams["columns"], "X": X}
        uniforms = {"K": self.K, "x_width": x_width, "x_plane_rows": rows_x, "y_plane_rows": rows_y}
        if weights is not None:
            inputs["Weights"] = weights
        if dense is not None:
            inputs.update(dense[0])
            uniforms.update(dense[1])
            name += "_dense"
        KERNELS[name].draw(Y, Rect.covering(0, 0, W, planes * rows_y), inputs, uniforms)

    def scatter_add(self, S, ys: Stream, x: Stream) -> None:
        """x += A_sparse^T y: a point a stored entry (padding included), a(i,k) y(i) added into
        x at its column."""
        st = S._streams
        rows_y, W = vector_shape(S.shape[0])
        KERNELS["scatter"].draw_points(
            x, rows_y * W * self.K, {"values": st["values"], "columns": st["columns"], "Y": ys},
            {"K": self.K, "fold": W, "y_width": ys.cols, "x_width": x.cols, "transposed": self.down})

    def fetches(self, S) -> tuple:
        """3 an entry (column, value, x) and 1 for a row shorter than K (the column where its
        loop stops); the texels stored, padding included."""
        counts = np.asarray(S.row_counts)
        return 3 * int(counts.sum()) + int(np.count_nonzero(counts < self.K)), S.shape[0] * self.K

    def to_scipy(self, S) -> tuple:
        """The stored entries read back, the padding left out (row i's first row_counts[i])."""
        m = S.shape[0]
        K = self.K
        fold = vector_shape(m)
        bv = self.blocks(S._streams["values"].to_array(), fold, K)[:m]
        bi = self.blocks(S._streams["columns"].to_array(), fold, K)[:m]
        keep = np.arange(K)[None, :] < S.row_counts[:, None]
        r = np.repeat(np.arange(m)[:, None], K, axis=1)[keep]
        return r, bi[keep].astype(np.int64), bv[keep]
