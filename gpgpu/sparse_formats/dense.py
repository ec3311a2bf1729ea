"""The dense part of a sparse matrix on the GPU, shared by every storage format: paper 002
section 3.2's "dense rows extracted to be treated separately" (the HYB idea; for the corrigan
format 003's future work 4, "use of a dense representation and operations for dense rows").

Rows and columns with more non-zeros than the threshold (``Format.auto_dense``, or ``dense=``)
leave the format's layout. A dense column is stored as a full column (a plane folded like y,
texture ``C``; its index in ``J``) and added by one pass; a dense row as a full row (a plane
folded like x, texture ``R``; its index in ``I``, y's entries mapped to it by ``slot``) whose
product is an inner product (003's component-wise product, then sums) written into its texel.
The inner products of all dense rows are done together (``plane_dots``): one product pass over
every plane and halving sums, a number of passes that does not grow with the dense rows. The
fused PCG iteration's products and the products of a stack of planes (beyond 002) take them
in chunks instead (``sparse_dense_rows_chunks``, one pass for every dense row and plane), and
add them in the pass that adds the dense part: two passes more than the sparse part's.

The functions take the ``SparseStream`` they serve (duck-typed: ``shape``, ``_streams``,
``dense_rows``, ``dense_cols``, ``kr``, ``kc``, ``sums``); nothing here imports
:mod:`gpgpu.sparse`.
"""
from __future__ import annotations

import numpy as np

from ..blas1 import KERNELS as L1, whole
from ..context import max_texture_size
from ..geometry import Rect, Triangle
from ..kernel import Kernel, additive_blending
from ..reduce import chunk_length, reduce_region
from ..stream import Stream, borrow, give_back, vector_shape

KERNELS = {
    "dense_part": Kernel("sparse_dense_part", texels=4, doc="002 section 3.2 dense rows and columns"),
    "row_add": Kernel("scaled_rows", texels=4, doc="the dense rows of A times their y(i), added into x"),
    "plane_product": Kernel("plane_product", texels=3, doc="planes of dense rows or columns times a vector"),
    "rows_chunks": Kernel("sparse_dense_rows_chunks", texels=3, doc="002 section 3.2 dense rows times x, in chunks"),
    "rows_chunks_weighted": Kernel("sparse_dense_rows_chunks", texels=4, defines={"WEIGHTED": 1},
                                   doc="002 section 3.2 dense rows times diag(w) x, in chunks"),
}


def upload(S, M, coo, in_row, in_col) -> None:
    """The dense rows ``S.dense_rows`` and columns ``S.dense_cols`` of ``M`` (the canonical CSR;
    ``coo`` its entries, ``in_row`` and ``in_col`` which of them are in a dense row or column)
    into ``S``'s textures C, J, R, I, slot and no_rows; ``S.kr`` and ``S.kc`` their numbers.
    Nothing is uploaded when there are none (``coo`` may then be None)."""
    m, n = S.shape
    kc, kr = S.dense_cols.size, S.dense_rows.size
    S.kc, S.kr = kc, kr
    if not kc and not kr:
        return
    rows_y, W = vector_shape(m)
    # dense columns: one folded plane each, stacked down the texture
    C = np.zeros((max(kc, 1) * rows_y, W), dtype=np.float32)
    if kc:
        where = {int(j): c for c, j in enumerate(S.dense_cols)}
        cc = np.array([where[int(j)] for j in coo.col[in_col]], dtype=np.int64)
        flat = coo.row[in_col]
        C[cc * rows_y + flat // W, flat % W] = coo.data[in_col]
    S._streams["C"] = Stream(*C.shape, data=C)
    S._streams["J"] = Stream(1, max(kc, 1), data=np.resize(S.dense_cols.astype(np.float32), max(kc, 1)))
    # dense rows: one folded plane each (folded like x), stacked down the texture; their
    # inner products with x land in a kr x 1 column V; slot maps y's entries to them
    rows_x, Wx = vector_shape(n)
    R = np.zeros((max(kr, 1), rows_x * Wx), dtype=np.float32)
    if kr:
        R[:, :n] = M[S.dense_rows].toarray()
    S._streams["R"] = Stream(max(kr, 1) * rows_x, Wx, data=R.reshape(-1, Wx))
    S._streams["I"] = Stream(1, max(kr, 1), data=np.resize(S.dense_rows.astype(np.float32), max(kr, 1)))
    slot = np.zeros(m, dtype=np.float32)
    slot[S.dense_rows] = np.arange(1, kr + 1, dtype=np.float32)
    S._streams["slot"] = Stream.vector_of(m, data=slot)
    S._streams["no_rows"] = Stream(1, 1)   # bound as V when there are no dense rows


def add(S, xs: Stream, y: Stream, out: Stream | None) -> Stream:
    """y (the sparse part's A x, a pooled temporary, given back here) plus the dense part's
    products: the dense rows' inner products with x, all at once, into a kr x 1 column V, then
    one pass that adds the dense columns and writes V's entries into their rows. Answers the
    result (``out`` when given, else a new vector stream)."""
    st = S._streams
    m = S.shape[0]
    V = plane_dots(st["R"], S.kr, xs, S.sums) if S.kr else st["no_rows"]
    target = out if out is not None else Stream.vector_of(m)
    KERNELS["dense_part"].draw(target, whole(target),
                               {"S": y, "C": st["C"], "J": st["J"], "V": V, "slot": st["slot"], "X": xs},
                               {"kc": int(S.kc), "plane_rows": y.rows, "x_width": xs.cols})
    give_back(y)
    if S.kr:
        give_back(V)
    return target


def fused_part(S, xs: Stream, weights: Stream | None = None) -> tuple:
    """What ``sparse_ellpack_four`` with DENSE needs to add the dense part in the sparse part's
    own pass (beyond 002: the fused PCG iteration's products): the dense rows times x (times
    ``weights``) in chunks, drawn here (:func:`_rows_chunks`, one pass; none without dense
    rows), and the dense columns, their indexes and the rows' slots. Answers (inputs,
    uniforms, the chunks' pooled table to give back after the pass, or None without dense
    rows). :func:`add` reduces the dense rows' inner products by 003's dot product instead
    (about 2 log2 of the length passes) and adds the dense part in a pass of its own."""
    st = S._streams
    V, chunks, fold = _rows_chunks(S, xs, 1, weights)
    inputs = {"C": st["C"], "J": st["J"], "V": V, "slot": st["slot"]}
    uniforms = {"kc": int(S.kc), "plane_rows": vector_shape(S.shape[0])[0], "chunks": chunks, "fold": fold}
    return inputs, uniforms, (V if S.kr else None)


def add_planes(S, X: Stream, planes: int, out: Stream, weights: Stream | None) -> Stream:
    """``out`` = A X (A diag(weights) X with ``weights``) for ``planes`` vectors stacked in X,
    where A has a dense part: the dense rows' inner products with every plane in chunks
    (:func:`_rows_chunks`, one pass; none without dense rows), then the sparse part's product
    of every plane with the dense columns and each dense row's chunks added in the same pass
    (the format's ``product_planes`` with ``dense``: ``sparse_ellpack_planes`` with DENSE),
    plane by plane (beyond 002)."""
    st = S._streams
    V, chunks, fold = _rows_chunks(S, X, planes, weights)
    dense = ({"C": st["C"], "J": st["J"], "V": V, "slot": st["slot"]},
             {"kc": int(S.kc), "planes": int(planes), "chunks": chunks, "fold": fold})
    S._storage.product_planes(S, X, planes, out, weights, dense=dense)
    if S.kr:
        give_back(V)
    return out


def _rows_chunks(S, X: Stream, planes: int, weights: Stream | None) -> tuple:
    """The dense rows' inner products with each of the ``planes`` planes of X (times
    ``weights`` entry by entry) as partial sums of chunks of :func:`gpgpu.reduce.chunk_length`
    (n) entries, one pass (``sparse_dense_rows_chunks``): answers (the table, a pooled
    temporary, chunks a sum, fold). The sums q = r planes + c (dense row r, plane c) lie in
    a table ``fold`` rows high, sum q's chunks from texel (chunks (q // fold), q % fold), so
    that kr x planes sums fit the largest texture; without dense rows, the placeholder
    ``no_rows`` (nothing drawn)."""
    n = S.shape[1]
    L = chunk_length(n)
    chunks = -(-n // L)
    if not S.kr:
        return S._streams["no_rows"], chunks, 1
    rows_x, x_width = vector_shape(n)
    sums = int(S.kr) * int(planes)
    fold = min(sums, max_texture_size())
    V = borrow(fold, chunks * -(-sums // fold))
    inputs = {"R": S._streams["R"], "X": X}
    if weights is not None:
        inputs["Weights"] = weights
    KERNELS["rows_chunks" if weights is None else "rows_chunks_weighted"].draw(
        V, whole(V), inputs, {"n": n, "chunk": L, "chunks": chunks, "kr": int(S.kr), "planes": int(planes),
                              "fold": fold, "x_width": x_width, "x_plane_rows": rows_x})
    return V, chunks, fold


def scatter_rows(S, ys: Stream, x: Stream) -> None:
    """x += y(i_r) a_r for every dense row r, one pass (inside the caller's additive blending:
    ``transpose="scatter"``)."""
    st = S._streams
    KERNELS["row_add"].draw(x, whole(x), {"R": st["R"], "I": st["I"], "Y": ys},
                            {"kr": int(S.kr), "plane_rows": x.rows, "y_width": ys.cols})


def scatter_columns(S, ys: Stream, x: Stream) -> None:
    """x(j_c) += a_c^T y for every dense column c, their inner products all at once, each added
    into its texel of x by additive blending (``transpose="scatter"``)."""
    dots = plane_dots(S._streams["C"], S.kc, ys, S.sums)
    texels = Triangle.join(*(Triangle.from_rects([(j % x.cols, j // x.cols, j % x.cols + 1, j // x.cols + 1)],
                                                 T0=(0.5, c + 0.5))
                             for c, j in enumerate(int(j) for j in S.dense_cols)))
    with additive_blending():
        L1["copy"].draw(x, texels, {"A": dots})
    give_back(dots)


def to_scipy(S, rows: list, cols: list, vals: list) -> None:
    """The dense part read back, appended to the (rows, columns, values) lists: the dense
    columns' non-zeros, then the dense rows'."""
    m, n = S.shape
    st = S._streams
    if S.kc:
        rows_y, W = vector_shape(m)
        C = st["C"].to_array().reshape(-1, rows_y * W)[:, :m]
        for c, j in enumerate(S.dense_cols):
            nz = np.flatnonzero(C[c])
            rows.append(nz), cols.append(np.full(nz.size, j)), vals.append(C[c][nz])
    if S.kr:
        Rd = st["R"].to_array().reshape(S.kr, -1)[:, :n]
        for i, a in zip(S.dense_rows, Rd):
            nz = np.flatnonzero(a)
            rows.append(np.full(nz.size, i)), cols.append(nz), vals.append(a[nz])


def plane_dots(P: Stream, k: int, v: Stream, sums: str = "pingpong") -> Stream:
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
