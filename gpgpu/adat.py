"""Forming A D² Aᵀ by rasterization (paper 001, section 3: Algorithms 2-3, Kernels 1-2, Figs. 1-4;
paper 000, section 5.2 and Fig. 10).

C = A D² Aᵀ = sum_k d_k a_k a_kᵀ, with a_k the k-th column of A and d the diagonal of D².
Per column k (Algorithm 3 of 001):

    column scaling          b(i) = A(i, k) d(k), a rectangle over the m x 1 stream b (Fig. 2(a))
    outer product addition  C(i, j) += A(i, k) b(j) over the lower triangle (Fig. 2(b)),
                            the square (``domain="square"``, the BrookGPU way, Fig. 10 of 000),
                            or the two triangles of the packed format (Fig. 4)
    swap C_S and C_T

A is the m x n stream (x = column k, y = row i); d and b are 1-row streams.

Beyond the papers, :func:`form_points` draws the same outer-product form restricted to the
non-zeros of each column of a sparse A: one pass of points, one per pair (i, j, k) with i >= j
and A(i, k) A(j, k) != 0, each adding A(i, k) A(j, k) d(k) into texel (j, i) of C by additive
blending, from a pair table built once per matrix (:func:`pair_table`).
"""
from __future__ import annotations

import numpy as np

from . import packed as pk
from .blas1 import KERNELS as L1, whole
from .dense_common import scaled_back, scaled_float64
from .geometry import Rect, Triangle, vertex
from .kernel import Kernel, additive_blending
from .reduce import reduce_region
from .stream import Operands, PingPong, Stream, check_array, vector_shape

__all__ = ["adat", "pack_4x1", "column_scaling_rect", "outer_product_addition_triangle",
           "outer_product_addition_square", "outer_product_addition_packed", "inner_product_triangle",
           "inner_product_square", "shift_diagonal", "KERNELS", "PRODUCTS", "AdatPoints", "pair_records",
           "pair_table", "form_points", "INDEX_LIMIT", "equilibration", "scale_symmetric",
           "EQUILIBRATION_EXPONENT"]

KERNELS = {
    "column_scaling": Kernel("column_scaling", texels=3, doc="001 Kernel 1"),
    "outer_product_addition": Kernel("outer_product_addition", texels=4, doc="001 Kernel 2"),
    "inner_product": Kernel("adat_inner_product", texels=3, doc="000 level 3 adat, singlepass inner product"),
    "inner_product_4x1": Kernel("adat_inner_product_4x1", texels=3,
                                doc="000 level 3 adat, singlepass inner product over 4 x 1 packed texels (beyond)"),
    "pack_4x1": Kernel("pack_4x1", texels=5, doc="four elements of a row in one RGBA texel (beyond the papers)"),
    "diagonal_shift": Kernel("diagonal_shift", texels=2, vertex="diagonal_points",
                             doc="002 (6): + delta I, points on the diagonal with additive blending (beyond 000)"),
    "symmetric_scaling": Kernel("symmetric_scaling", texels=3,
                                doc="C(i, j) s(i) s(j), s powers of two: the normal matrix equilibrated (beyond the papers)"),
    "symmetric_scaling_ff": Kernel("symmetric_scaling", texels=3, defines={"FLOAT_FLOAT": 1},
                                   doc="the same for a float-float matrix (beyond the papers)"),
    # texels: the pair's RGBA record (4), d(k) (1), the texel of C written (1)
    "points": Kernel("adat_points", texels=6, vertex="adat_points",
                     doc="001 Algorithm 3's outer-product form (column scaling + outer product addition) "
                         "over the non-zeros of A: one pass of points, one per pair (i, j, k), summed by "
                         "additive blending in the order of k (beyond the papers)"),
}

DOMAINS = ("triangle", "square")
PRODUCTS = ("outer", "inner", "inner4")


def column_scaling_rect(k: int, m: int) -> Rect:
    """Fig. 2(a) of 001: the rectangle over b (m x 1) for the k-th column scaling, with the
    texture-coordinate triad (x, k+.5, .5) at each corner."""
    return Rect([
        vertex((0, 0), T0=(0, k + .5, .5)),   # 1
        vertex((0, 1), T0=(0, k + .5, .5)),   # 2
        vertex((m, 1), T0=(m, k + .5, .5)),   # 3
        vertex((m, 0), T0=(m, k + .5, .5)),   # 4
    ])


def outer_product_addition_triangle(k: int, m: int) -> Triangle:
    """Fig. 2(b) of 001: the isosceles right triangle over the lower triangle of C; a fragment at
    (j, i) gets T0 = (k+.5, i) in A and T1 = (j, .5) in b."""
    return Triangle([
        vertex((0, -.5),    T0=(k + .5, -.5), T1=(0, .5)),        # 1
        vertex((0, m),      T0=(k + .5, m),   T1=(0, .5)),        # 2
        vertex((m + .5, m), T0=(k + .5, m),   T1=(m + .5, .5)),   # 3
    ])


def outer_product_addition_square(k: int, m: int) -> Rect:
    """The whole m x m square (what BrookGPU could draw), same texture coordinates."""
    return Rect.covering(0, 0, m, m, T0=lambda x, y: (k + .5, y), T1=lambda x, y: (x, .5))


def outer_product_addition_packed(k: int, m: int) -> Triangle:
    """Fig. 4 of 001: two triangles in one pass over the packed w x h texture.

    Vertices 1-3 cover the left trapezoid with the full-format coordinates; 4-6 cover the
    rotated upper triangle with the coordinates of their original positions. The text of
    Fig. 4(b) (odd m) gives vertex 4 T1 = (m, .5); but vertices 4 and 5 share V.x = w, so they
    must share T1.x, and the packed index map (j = m - x in the rotated part, so T1.x =
    m + 1 - V.x) gives T1 = (w, .5) for both, as Fig. 4(a) has for even m. We use (w, .5).
    """
    h, w = pk.packed_shape(m)
    if m % 2 == 0:  # Fig. 4(a): h = m + 1, w = m / 2
        return Triangle([
            vertex((0, .5),      T0=(k + .5, -.5),    T1=(0, .5)),        # 1
            vertex((0, h),       T0=(k + .5, m),      T1=(0, .5)),        # 2
            vertex((m + .5, h),  T0=(k + .5, m),      T1=(m + .5, .5)),   # 3
            vertex((w, w + .5),  T0=(k + .5, w - .5), T1=(w, .5)),        # 4
            vertex((w, 0),       T0=(k + .5, m),      T1=(w, .5)),        # 5
            vertex((-.5, 0),     T0=(k + .5, m),      T1=(m + .5, .5)),   # 6
        ])
    return Triangle([  # Fig. 4(b): h = m, w = (m + 1) / 2
        vertex((0, -.5),     T0=(k + .5, -.5),    T1=(0, .5)),            # 1
        vertex((0, m),       T0=(k + .5, m),      T1=(0, .5)),            # 2
        vertex((m + .5, m),  T0=(k + .5, m),      T1=(m + .5, .5)),       # 3
        vertex((w, w - .5),  T0=(k + .5, w - .5), T1=(w, .5)),            # 4 (text: T1(m, .5))
        vertex((w, 0),       T0=(k + .5, m),      T1=(w, .5)),            # 5
        vertex((.5, 0),      T0=(k + .5, m),      T1=(m + .5, .5)),       # 6
    ])


def inner_product_triangle(m: int) -> Triangle:
    """The triangle of Fig. 2(b) of 001 over the lower triangle of C, for the singlepass
    inner-product adat of 000: a fragment at (j, i) gets T0 = (.5, i) (row i of A) and
    T1 = (.5, j) (row j of A)."""
    return Triangle([
        vertex((0, -.5),    T0=(.5, -.5), T1=(.5, 0)),         # 1
        vertex((0, m),      T0=(.5, m),   T1=(.5, 0)),         # 2
        vertex((m + .5, m), T0=(.5, m),   T1=(.5, m + .5)),    # 3
    ])


def inner_product_square(m: int) -> Rect:
    """The whole m x m square for the singlepass inner-product adat (both triangles of C)."""
    return Rect.covering(0, 0, m, m, T0=lambda x, y: (.5, y), T1=lambda x, y: (.5, x))


def pack_4x1(A: Stream, out: Stream | None = None) -> Stream:
    """A (m x n, R32F) packed four columns a texel: an m x ceil(n / 4) RGBA stream whose texel
    (q, i) holds A(i, 4q .. 4q+3), zeros past column n (beyond the papers; kernel
    ``pack_4x1``, one pass). A vector (1 x n) packs the same way."""
    if A.components != 1 or (A.vector and A.folded):
        raise ValueError("pack_4x1 packs an R32F matrix or one-row vector")
    m, n = A.shape
    n4 = -(-n // 4)
    if out is None:
        out = Stream(m, n4, components=4)
    elif out.shape != (m, n4) or out.components != 4:
        raise ValueError(f"pack_4x1: out must be an RGBA {m} x {n4} stream, got {out.shape}")
    KERNELS["pack_4x1"].draw(out, Rect.covering(0, 0, n4, m), {"A": A}, {"n": int(n)})
    return out


def form(A: Stream, d: Stream, storage: str = "full", domain: str = "triangle",
         transfer: str = "rtt", product: str = "outer") -> Stream:
    """A D² Aᵀ on streams: returns a new stream with C (lower triangle, full or packed).

    ``product="outer"``: Algorithm 3 of 001, two passes per column of A (column scaling,
    outer product addition). ``product="inner"``: the singlepass inner-product form that 000
    lists for aat and adat (section 4.2, level 3): one pass, each fragment an inner product
    of two rows of A weighted by d (full storage). ``product="inner4"`` (beyond the papers):
    the same inner products over A and d packed four columns a texel (:func:`pack_4x1`), a
    quarter of the fetches; ``A`` may then be given already packed (an RGBA stream of
    ceil(n / 4) texels a row, the caller keeping n's multiple of 4 in ``d``'s length).
    """
    if storage not in ("full", "packed"):
        raise ValueError(f"storage must be 'full' or 'packed', got {storage!r}")
    if domain not in DOMAINS:
        raise ValueError(f"domain must be one of {DOMAINS}, got {domain!r}")
    if product not in PRODUCTS:
        raise ValueError(f"product must be one of {PRODUCTS}, got {product!r}")
    if storage == "packed" and domain != "triangle":
        raise ValueError("storage='packed' draws the two triangles of Fig. 4 of paper 001; "
                         "use domain='triangle'")
    if storage == "packed" and product == "inner":
        raise ValueError("product='inner' forms the full m x m texture; the packed format is "
                         "built by the outer-product passes of 001 (product='outer')")
    m, n = A.shape
    if product == "inner4":
        if storage == "packed":
            raise ValueError("product='inner4' forms the full m x m texture; the packed format is "
                             "built by the outer-product passes of 001 (product='outer')")
        n4 = -(-d.shape[1] // 4)
        if A.components == 4:      # A packed already: n texels of four columns
            if d.shape[0] != 1 or n4 != n:
                raise ValueError(f"adat: d must be a vector of {4 * n - 3} .. {4 * n} entries (the columns "
                                 f"of the packed A, {n} texels a row), got shape {d.shape}")
        elif d.shape != (1, n):
            raise ValueError(f"adat: d must be a vector of length {n} (the columns of A), got shape {d.shape}")
        A4 = A if A.components == 4 else pack_4x1(A)
        d4 = pack_4x1(d)
        try:
            C = Stream(m, m)                          # cleared: the upper triangle stays 0
            prim = inner_product_triangle(m) if domain == "triangle" else inner_product_square(m)
            KERNELS["inner_product_4x1"].draw(C, prim, {"A": A4, "d": d4}, {"n4": int(n4)}, transfer=transfer)
        finally:
            d4.release()
            if A4 is not A:
                A4.release()
        return C
    if d.shape != (1, n):
        raise ValueError(f"adat: d must be a vector of length {n} (the columns of A), got shape {d.shape}")
    if product == "inner":
        C = Stream(m, m)                              # cleared: the upper triangle stays 0
        prim = inner_product_triangle(m) if domain == "triangle" else inner_product_square(m)
        KERNELS["inner_product"].draw(C, prim, {"A": A, "d": d}, {"n": int(n)}, transfer=transfer)
        return C
    shape = pk.packed_shape(m) if storage == "packed" else (m, m)
    K = KERNELS
    b = Stream(1, m)
    pp = PingPong(Stream(*shape), Stream(*shape))  # both cleared to zero
    try:
        for k in range(n):
            # scale the k-th column of A into b
            K["column_scaling"].draw(b, column_scaling_rect(k, m), {"A": A, "d": d}, transfer=transfer)
            # add the k-th outer product to C_T
            if storage == "packed":
                prim = outer_product_addition_packed(k, m)
            elif domain == "triangle":
                prim = outer_product_addition_triangle(k, m)
            else:
                prim = outer_product_addition_square(k, m)
            K["outer_product_addition"].draw(pp.T, prim, {"C": pp.S, "A": A, "b": b}, transfer=transfer)
            pp.swap()
    finally:
        b.release()
        pp.T.release()
    return pp.S


def adat(A, d=None, storage: str = "full", domain: str = "triangle", transfer: str = "rtt",
         product: str = "outer"):
    """Form C = A D² Aᵀ on the GPU.

    Paper 001's Algorithm 3 (section 3, Kernels 1-2, Figs. 1-4): per column k of A the column
    scaling b = A(:, k) d(k) (Fig. 2(a)) and the outer product addition C += A(:, k) bᵀ over
    the lower triangle (Fig. 2(b)), the square (BrookGPU's, Fig. 10 of 000) or the two triangles
    of the packed format (Fig. 4); or 000's singlepass inner products (section 4.2). d is the
    diagonal of D², so C = A diag(d) Aᵀ. A numpy A and d are scaled by exact powers of two
    before the upload and C scaled back in float64, so that C may lie below float32's range.

    Parameters
    ----------
    A : (m, n) array_like or Stream
        The matrix.
    d : (n,) array_like or Stream, optional
        The diagonal of D² (the stream d of Fig. 1 of 001), non-negative; None gives A Aᵀ.
    storage : {"full", "packed"}, optional
        m x m texture or 001's rectangular packed format (Fig. 4).
    domain : {"triangle", "square"}, optional
        Rasterize the lower triangle (Fig. 2(b) of 001) or the whole square (Fig. 10 of 000).
    transfer : {"rtt", "ctt"}, optional
        Render to texture or copy to texture (section 6.1.1 of 000).
    product : {"outer", "inner", "inner4"}, optional
        001's outer products, 000's singlepass inner products, or those four columns a texel (beyond).

    Returns
    -------
    C : (m, m) ndarray or Stream
        float64 array with C's lower triangle (both for ``domain="square"``); a Stream for a Stream A.

    Raises
    ------
    ValueError
        d has a negative entry (it is the diagonal of D², a square), or shapes disagree.
    FloatingPointError
        An entry of A D² Aᵀ overflows float32 (checked on the GPU).

    See Also
    --------
    gpgpu.lstsq_weighted : Weighted least squares by these normal equations.

    Examples
    --------
    >>> import numpy as np
    >>> import gpgpu
    >>> A = np.arange(6.0).reshape(2, 3)
    >>> d = np.array([1.0, 2.0, 3.0])
    >>> C = gpgpu.adat(A, d)
    >>> round(float(C[1, 0]), 3)
    38.0
    >>> np.allclose(np.tril(C), np.tril(A @ np.diag(d) @ A.T), atol=1e-4)
    True
    """
    with Operands(A) as ops:
        ea = ed = 0                    # numpy A and d uploaded as 2^ea A, 2^ed d (scaled_float64)
        if not isinstance(A, Stream):     # float64: only the scaled 2^ea A must fit float32
            arr, ea = scaled_float64(check_array(A, "A", ndim=(2,), dtype=np.float64))
            As = ops.stream(arr, "A")
        else:
            As = ops.stream(A, "A")
        if As.vector:
            raise ValueError("adat: A must be a 2-D matrix")
        n = As.cols
        if d is None:
            ds = ops.stream(np.ones(n, np.float32), "d")
        else:
            if not isinstance(d, Stream):
                # a numpy C is scaled back on the CPU, so d is scaled too (only 2^ed d must fit
                # float32); a Stream C is not, and d is uploaded as it is
                darr = check_array(d, "d", ndim=(1,), dtype=np.float64 if ops.numpy else np.float32)
                if darr.shape[0] != n:
                    raise ValueError(f"adat: d must have length {n} (the columns of A), got {darr.shape[0]}")
                dmin = float(darr.min())       # on the host: a tiny negative entry the GPU would flush
                if ops.numpy:
                    darr, ed = scaled_float64(darr)
                ds = ops.stream(darr, "d")
            else:
                ds = ops.stream(d, "d")
                smallest = reduce_region(ds, "min")             # d >= 0, checked on the GPU
                dmin = smallest.item()
                smallest.release()
            if dmin < 0:
                raise ValueError(f"adat: d is the diagonal of D², a square, so it must be non-negative; "
                                 f"its smallest entry is {dmin:g}")
        C = form(As, ds, storage, domain, transfer, product)
        largest = reduce_region(C, "absmax")
        cmax = largest.item()
        largest.release()
        if not np.isfinite(cmax):
            C.release()
            raise FloatingPointError("adat: A D² Aᵀ overflows float32 (an entry beyond 3.4e38); "
                                     "scale A or d down")
        if ops.numpy:                                # numpy in, float64 out (float32's values)
            out = C.to_array()
            C.release()
            # (2^ea A) (2^ed D²) (2^ea A)ᵀ = 2^(2 ea + ed) A D² Aᵀ, undone exactly in float64: a
            # product below float32's range (A = 1e-20) is neither flushed to zero nor rounded
            out = scaled_back(out, -(2 * ea + ed), "adat: A D² Aᵀ")
            return pk.unpack(out, As.rows) if storage == "packed" else out
        return C


def shift_diagonal(C: Stream, delta: float) -> Stream:
    """C += delta I in place for the square full-storage C (m x m), one pass: m points on the
    diagonal, added by the blender (kernel ``diagonal_shift``). The dual regularisation R_d =
    delta I of paper 002's G_R (6), beyond 000's normal matrix (``mehrotra(...,
    regularize=True)``)."""
    if C.rows != C.cols or C.components != 1:
        raise ValueError(f"shift_diagonal: expected a square one-component matrix, got {C.rows} x {C.cols} "
                         f"with {C.components} components")
    delta = float(delta)
    if not np.isfinite(delta):
        raise ValueError(f"shift_diagonal: delta must be finite, got {delta}")
    with additive_blending():
        KERNELS["diagonal_shift"].draw_points(C, C.rows, uniforms={"delta": delta})
    return C


#: the exponents of :func:`equilibration`'s powers of two stay within +-EQUILIBRATION_EXPONENT,
#: so that s(i) s(j) is a normal float32 number (a diagonal entry beyond 2^-126 .. 2^126 is
#: one that float32 flushes or overflows anyway)
EQUILIBRATION_EXPONENT = 63


def equilibration(diagonal) -> np.ndarray:
    """The powers of two s(i) nearest 1 / sqrt(diagonal(i)), so that s(i)² diagonal(i) lies in
    [1/2, 2] (1 where the entry is 0 or not finite; exponents within +-63): the symmetric
    scaling of :func:`scale_symmetric` (beyond the papers). Powers of two scale exactly."""
    diagonal = np.asarray(diagonal, dtype=np.float64)
    out = np.ones_like(diagonal)
    ok = np.isfinite(diagonal) & (diagonal > 0)
    k = np.clip(np.round(np.log2(diagonal[ok]) / 2), -EQUILIBRATION_EXPONENT, EQUILIBRATION_EXPONENT)
    out[ok] = np.ldexp(1.0, -k.astype(int))
    return out


def scale_symmetric(C: Stream, s: np.ndarray) -> Stream:
    """A new stream holding C(i, j) s(i) s(j) for the square full-storage C (m x m, float32 or
    float-float RG32F) and the float64 vector s of powers of two from :func:`equilibration`
    (one pass, kernel ``symmetric_scaling``; beyond the papers). With D = diag(s), the factor of
    D C D is D L for C's factor L, rounding for rounding, wherever float32's range holds both:
    the LP's float-float factor is of the scaled matrix, so that C's entries far from 1 (near
    an LP's optimum they span 1e-4 to 1e21 and more) neither overflow float32's range in the
    factor nor flush its low parts to zero."""
    m = C.rows
    s = np.asarray(s, dtype=np.float64)
    if C.cols != m or C.components not in (1, 2):
        raise ValueError(f"scale_symmetric: expected a square float32 or float-float matrix, got {C!r}")
    if s.shape != (m,) or not np.all(np.isfinite(s) & (s > 0)) or np.any(np.frexp(s)[0] != 0.5):
        raise ValueError(f"scale_symmetric: s must be {m} positive powers of two (gpgpu.adat.equilibration)")
    out = Stream(m, m, components=C.components, zero=False)
    kernel = KERNELS["symmetric_scaling_ff" if C.components == 2 else "symmetric_scaling"]
    with Stream(1, m, vector=True, data=s.astype(np.float32).reshape(1, m)) as scale:
        kernel.draw(out, whole(out), {"C": C, "s": scale})
    return out


# ---------------------------------------------------------------------- A D² Aᵀ by points
#: float32's smallest normal number, 2^-126: a GPU flushes anything smaller to zero
FLOAT32_TINY = float(np.finfo(np.float32).tiny)

#: The pair table holds row and column indexes as float32, which is exact for integers below
#: 2^24: m and n may be at most INDEX_LIMIT (the largest index is then 2^24 - 1).
INDEX_LIMIT = 1 << 24


def pair_records(A):
    """The pairs of A's non-zeros, host side (numpy): ``(records, m, n)`` with ``records`` a
    float32 array of shape (count, 4), row p = (j, i, A(i, k) A(j, k), k) for the pairs i >= j of
    stored non-zeros of column k, sorted by k, then i, then j (the order of 001's sum over the
    columns). The coefficient is formed in float64 and rounded once to float32.

    ``A`` is a scipy.sparse matrix (any format; duplicates are summed, explicit zeros dropped)
    or a 2-D numpy array. Raises ValueError for m or n above :data:`INDEX_LIMIT` (2^24), before
    anything the size of n is allocated, for values that are not finite or a product that
    overflows float32, and for products below float32's normal range (2^-126, which a GPU
    flushes to zero) that are not negligible (above 2^-24 times the largest): scale such an A up
    by a power of two."""
    import scipy.sparse as sp

    if isinstance(A, Stream):
        raise TypeError("pair_table: A must be a scipy.sparse matrix or a numpy array (the table is built on "
                        "the host), not a Stream")
    shape = tuple(int(v) for v in np.shape(A))
    if len(shape) != 2:
        raise ValueError(f"pair_table: A must be a 2-D matrix, got shape {shape}")
    m, n = shape
    if m < 1 or n < 1:
        raise ValueError(f"pair_table: A must be at least 1 x 1, got {m} x {n}")
    if m > INDEX_LIMIT or n > INDEX_LIMIT:
        raise ValueError(f"pair_table: A is {m} x {n}, but the pair table holds row and column indexes as "
                         f"float32, exact only below 2^24: m and n must be at most 2^24 = {INDEX_LIMIT}")
    if sp.issparse(A):
        if np.issubdtype(A.dtype, np.complexfloating) or not (np.issubdtype(A.dtype, np.number)
                                                               or A.dtype == bool):
            raise ValueError(f"pair_table: A must be real, got dtype {A.dtype}")
        C = sp.csc_matrix(A, dtype=np.float64, copy=True)
    else:
        arr = np.asarray(A)
        if arr.dtype == object or np.iscomplexobj(arr) or not (np.issubdtype(arr.dtype, np.number)
                                                               or arr.dtype == bool):
            raise ValueError(f"pair_table: A must be a real numeric matrix, got dtype {arr.dtype}")
        C = sp.csc_matrix(arr.astype(np.float64))
    C.sum_duplicates()
    C.eliminate_zeros()
    C.sort_indices()
    if not np.all(np.isfinite(C.data)):
        raise ValueError("pair_table: A contains NaN or infinity")
    indptr = C.indptr.astype(np.int64)
    rows, vals = C.indices.astype(np.int64), C.data
    nnz = rows.size
    col = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))       # column k of each entry
    local = np.arange(nnz, dtype=np.int64) - indptr[col]                  # its place in the column
    reps = local + 1                                                      # pairs (i, j <= i) it starts
    count = int(reps.sum())
    e = np.repeat(np.arange(nnz, dtype=np.int64), reps)                   # the entry of i
    first = np.cumsum(reps) - reps
    f = indptr[col[e]] + (np.arange(count, dtype=np.int64) - first[e])   # the entry of j
    records = np.empty((count, 4), np.float32)
    records[:, 0] = rows[f]
    records[:, 1] = rows[e]
    with np.errstate(over="ignore"):
        records[:, 2] = vals[e] * vals[f]
    records[:, 3] = col[e]
    if not np.all(np.isfinite(records[:, 2])):
        raise ValueError("pair_table: a product A(i, k) A(j, k) overflows float32 (beyond 3.4e38); scale A down")
    if count:
        # a GPU flushes float32's subnormal numbers to zero: a product below 2^-126 is lost, which
        # matters when it is not negligible (2^-24, float32's unit roundoff) beside the largest
        p = np.abs(vals[e] * vals[f])
        top = float(p.max())
        lost = p[(p < FLOAT32_TINY) & (p > 2.0 ** -24 * top)]
        if lost.size:
            raise ValueError(f"pair_table: products A(i, k) A(j, k) down to {float(lost.min()):.3g} are below "
                             f"float32's normal range (1.2e-38), where the GPU flushes them to zero, and not "
                             f"negligible beside the largest ({top:.3g}): C would lose them; scale A up by a "
                             "power of two (C = A D² Aᵀ scales by its square)")
    return records, m, n


class AdatPoints:
    """The pair table of a matrix A (m x n) for :func:`form_points`, built once per matrix by
    :func:`pair_table`: ``stream`` (RGBA32F, ``width`` texels a row; pair p at texel
    (p % width, p // width) holds (j, i, A(i, k) A(j, k), k)), ``count`` pairs, ``m``, ``n``.
    ``release()`` frees the texture (also as a context manager)."""

    __slots__ = ("stream", "count", "m", "n", "width")

    def __init__(self, stream: Stream, count: int, m: int, n: int):
        self.stream, self.count, self.m, self.n = stream, int(count), int(m), int(n)
        self.width = stream.cols

    @property
    def released(self) -> bool:
        return self.stream.released

    def records(self) -> np.ndarray:
        """The table read back: a (count, 4) float32 array, row p = (j, i, A(i, k) A(j, k), k)."""
        return self.stream.to_array().reshape(-1, 4)[:self.count].copy()

    def release(self) -> None:
        self.stream.release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

    def __repr__(self) -> str:
        state = " released" if self.released else ""
        return f"<AdatPoints {self.m}x{self.n}, {self.count} pairs{state}>"


def pair_table(A, width: int | None = None) -> AdatPoints:
    """The pair table of a sparse A (m x n) on the GPU, for :func:`form_points` (beyond the
    papers): one RGBA32F texel per pair (i, j, k), i >= j, of stored non-zeros of column k,
    holding (j, i, A(i, k) A(j, k), k), sorted by k, then i, then j (:func:`pair_records`),
    folded ``width`` texels a row (default: one row up to GL_MAX_TEXTURE_SIZE pairs, then rows
    of that width). Build it once per matrix; :func:`form_points` reuses it for every d."""
    records, m, n = pair_records(A)
    count = len(records)
    if width is None:
        try:
            rows, W = vector_shape(max(count, 1))
        except ValueError as exc:
            raise ValueError(f"pair_table: {count} pairs do not fit one texture: {exc}") from None
    else:
        W = int(width)
        if W < 1:
            raise ValueError(f"pair_table: width must be at least 1, got {width}")
        rows = max(-(-count // W), 1)
    data = np.zeros((rows * W, 4), np.float32)
    data[:count] = records
    return AdatPoints(Stream(rows, W, components=4, data=data), count, m, n)


def form_points(table: AdatPoints, d: Stream, out: Stream | None = None, shift: float = 0.0) -> Stream:
    """C = A D² Aᵀ (+ shift I) from the pair table of A (beyond the papers): 001's Algorithm 3
    in outer-product form over the non-zeros of A, ONE pass of ``table.count`` points with
    additive blending (kernel ``points``), pair (i, j, k) adding A(i, k) A(j, k) d(k) into texel
    (x = j, y = i) of C; the blender sums one texel's points in the order of k. The lower
    triangle is formed; the upper triangle stays 0.

    ``d`` is the diagonal of D², a vector stream of length n (folded or not, or a 1 x n
    stream). ``out`` (an m x m R32F stream) is cleared and drawn into instead of a new stream.
    ``shift`` != 0 adds shift I afterwards (:func:`shift_diagonal`, one more pass of points).
    """
    if not isinstance(table, AdatPoints):
        raise TypeError(f"form_points: table must be the AdatPoints of pair_table(A), got {type(table).__name__}")
    if table.released:
        raise ValueError("form_points: the pair table has been released")
    m, n = table.m, table.n
    if not isinstance(d, Stream):
        raise TypeError(f"form_points: d must be a vector Stream of length {n}, got {type(d).__name__}")
    d_ok = d.components == 1 and ((d.vector and d.length == n) or (not d.vector and d.shape == (1, n)))
    if not d_ok:
        got = f"a vector of length {d.length}" if d.vector else f"shape {d.shape}"
        raise ValueError(f"form_points: d must be a one-component vector of length {n} (the columns of A), "
                         f"got {got} with {d.components} component(s)")
    shift = float(shift)
    if not np.isfinite(shift):
        raise ValueError(f"form_points: shift must be finite, got {shift}")
    if out is None:
        C = Stream(m, m)                              # cleared: the upper triangle stays 0
    else:
        if not isinstance(out, Stream) or out.shape != (m, m) or out.components != 1 or out.vector:
            what = f"{out.shape} with {out.components} component(s)" if isinstance(out, Stream) else type(out).__name__
            raise ValueError(f"form_points: out must be an R32F {m} x {m} stream, got {what}")
        C = out
        L1["fill"].draw(C, whole(C), uniforms={"value": 0.0})
    try:
        if table.count:
            with additive_blending():
                KERNELS["points"].draw_points(C, table.count, {"pairs": table.stream, "d": d},
                                              {"W": table.width, "d_width": d.cols})
        if shift != 0.0:
            shift_diagonal(C, shift)
    except Exception:
        if out is None:
            C.release()
        raise
    return C
