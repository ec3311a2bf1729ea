"""The storage formats of SparseStream as classes (gpgpu.sparse_formats), one module each, named
in the registry FORMATS: the registry is exactly what from_scipy takes; each format's class
builds, multiplies (against scipy in float64, within float32's bound, on a matrix of rows of
unequal lengths, folded or not) and reads back; and a format that gpgpu.sparse has never heard
of, registered in FORMATS (as a new module would be), is taken by from_scipy and serves every
product: a new format is one file and one registry line."""
import inspect
import re

import numpy as np
import pytest
import scipy.sparse as sp

import gpgpu.sparse
from gpgpu import SparseStream, Stream, counters, stream
from gpgpu.blas1 import multiply
from gpgpu import sparse_formats
from gpgpu.sparse_formats import FORMATS, common
from gpgpu.sparse_formats.common import Format
from gpgpu.sparse_formats.ellpack import KERNELS as ELLPACK_KERNELS

U32 = 2.0 ** -24
NAMES = ["corrigan", "ellpack", "tell", "packed", "split"]


def within_float32(got, A, x, what):
    """|got - A x| <= gamma_(k+2) (|A| |x|) row by row (k the row's non-zeros), A x in float64."""
    A = sp.csr_matrix(A)
    k = np.maximum(np.diff(A.indptr), 1)
    g = (k + 2) * U32 / (1 - (k + 2) * U32)
    err = np.abs(np.asarray(got, dtype=np.float64) - A @ x)
    bound = g * (abs(A) @ np.abs(x)) + 1e-300
    assert np.all(err <= bound), (what, float((err / bound).max()), int(np.argmax(err / bound)))


def unequal(rng, m=23, n=19):
    """Rows of 0 .. 14 non-zeros (two empty, one of 14), mixed signs and magnitudes."""
    counts = rng.integers(1, 6, size=m)
    counts[[2, 15]] = 0
    counts[9] = 14
    rows = np.repeat(np.arange(m), counts)
    cols = np.concatenate([rng.choice(n, size=c, replace=False) for c in counts])
    vals = rng.uniform(0.5, 2.0, rows.size) * rng.choice([-1.0, 1.0], rows.size)
    return sp.csr_matrix((vals, (rows, cols)), shape=(m, n))


def same_entries(M, A, what):
    """M (read back, float32 values) holds exactly A's entries rounded to float32."""
    A32 = sp.csr_matrix(A, dtype=np.float32)
    A32.sort_indices()
    assert M.shape == A.shape, what
    assert np.array_equal(M.indptr, A32.indptr) and np.array_equal(M.indices, A32.indices), what
    assert np.array_equal(M.data, A32.data), what


# ---------------------------------------------------------------------- the registry
def test_the_registry_is_exactly_what_from_scipy_takes(rng):
    """gpgpu.sparse.FORMATS is the registry itself; from_scipy's docstring lists its names; each
    is taken (and builds an instance of its class), a name outside it is refused with the
    registry's names; each class is a Format in a module of its own."""
    assert gpgpu.sparse.FORMATS is FORMATS
    assert list(FORMATS) == NAMES
    listed = re.search(r"format : \{([^}]*)\}", inspect.getdoc(SparseStream.from_scipy)).group(1)
    assert set(re.findall(r'"(\w+)"', listed)) == set(FORMATS)
    A = unequal(rng)
    for name, cls in FORMATS.items():
        assert issubclass(cls, Format), name
        with SparseStream.from_scipy(A, format=name) as S:
            assert type(S._storage) is cls and S.format == name
    assert len({cls.__module__ for cls in FORMATS.values()}) == len(FORMATS)   # one module a format
    with pytest.raises(ValueError, match=re.escape(f"format must be one of {tuple(FORMATS)}")):
        SparseStream.from_scipy(A, format="coo")


def test_the_format_modules_do_not_import_gpgpu_sparse():
    """gpgpu.sparse imports the formats, never the other way (no import circle)."""
    from experiments import floors

    graph = floors.import_graph()
    modules = [m for m in graph if m.startswith("gpgpu.sparse_formats")]
    assert {"gpgpu.sparse_formats.common", "gpgpu.sparse_formats.dense"} <= set(modules)
    assert all(f"gpgpu.sparse_formats.{c.__module__.rsplit('.', 1)[1]}" in modules for c in FORMATS.values())
    assert [m for m in modules if "gpgpu.sparse" in graph[m]] == []
    assert "gpgpu.sparse_formats" in graph["gpgpu.sparse"]


def test_each_format_cites_its_paper_and_the_package_says_how_to_add_one():
    cites = {"corrigan": ("003", "Figs. 4-7"), "ellpack": ("002 section 3.2",),
             "tell": ("002 section 3.2", "DHTELL2", "Table 3"), "packed": ("beyond papers 002 and 003",),
             "split": ("beyond papers 002 and 003",)}
    for name, cls in FORMATS.items():
        doc = " ".join(inspect.getdoc(cls).split())
        assert all(c in doc for c in cites[name]), (name, cites[name])
        assert "stor" in doc or "texture" in doc, name                  # says what it stores
    doc = " ".join(sparse_formats.__doc__.split())
    assert "To add a format: one new module" in doc and "one line in ``FORMATS``" in doc


# ---------------------------------------------------------------------- each format's class
@pytest.mark.parametrize("fold", [None, 5])
@pytest.mark.parametrize("name", NAMES)
def test_each_format_builds_multiplies_and_reads_back(name, fold, rng, monkeypatch):
    """dense=False: the format's own textures hold every entry. A x and A^T y against scipy in
    float64; the format's to_scipy gives A's entries back (float32) and to_scipy (with the
    dense part, dense=None) the matrix; fetches at least 3 a stored entry for the unpacked
    layouts."""
    monkeypatch.setattr(stream, "FOLD_WIDTH", fold)
    A = unequal(rng)
    m, n = A.shape
    x, y = rng.standard_normal(n), rng.standard_normal(m)
    with SparseStream.from_scipy(A, format=name, dense=False) as S:
        assert isinstance(S._storage, FORMATS[name])
        within_float32(S.matvec(x), A, x, f"{name} A x")
        within_float32(S.rmatvec(y), A.T, y, f"{name} A^T y")
        r, c, v = S._storage.to_scipy(S)
        same_entries(sp.csr_matrix((v, (r, c)), shape=(m, n)), A, f"{name}: the format's read-back")
        same_entries(S.to_scipy(), A, f"{name}: to_scipy")
        total, stored = S._storage.fetches(S)
        assert stored >= A.nnz and total >= (1.5 if name == "packed" else 3) * A.nnz
        assert S.fetches() == {"fetches": total, "entries": stored, "per_nonzero": total / A.nnz}
    with SparseStream.from_scipy(A, format=name, dense=4) as S:      # the dense part beside it
        assert S.dense_rows.size and S.dense_cols.size
        within_float32(S.matvec(x), A, x, f"{name} A x, dense part")
        same_entries(S.to_scipy(), A, f"{name}: to_scipy with the dense part")


@pytest.mark.parametrize("name", [n for n in NAMES if FORMATS[n].sorts])
def test_a_sorting_format_sorts(name, rng):
    """sort=True (003, Fig. 7) where the class says it sorts; refused where it does not."""
    A = unequal(rng, 19, 19)
    A = (A + A.T).tocsr()
    x = rng.standard_normal(19)
    with SparseStream.from_scipy(A, format=name, sort=True) as S:
        assert S.perm is not None
        within_float32(S.matvec(x), A, x, f"{name} sorted")
        same_entries(S.to_scipy(), A, f"{name} sorted: to_scipy")
    for other in (n for n in NAMES if not FORMATS[n].sorts):
        with pytest.raises(ValueError, match="sort=True is the row and column sorting"):
            SparseStream.from_scipy(A, format=other, sort=True)


@pytest.mark.parametrize("name", NAMES)
def test_scatter_where_the_class_says_so(name, rng):
    """transpose="scatter" (A^T y from the one copy) works for the classes with scatters and
    is refused for the others."""
    A = unequal(rng)
    y = rng.standard_normal(A.shape[0])
    if not FORMATS[name].scatters:
        with pytest.raises(ValueError, match="transpose='scatter' walks the ELLPACK layouts"):
            SparseStream.from_scipy(A, format=name, transpose="scatter")
        return
    with SparseStream.from_scipy(A, format=name, transpose="scatter", dense=4) as S:
        within_float32(S.rmatvec(y), A.T, y, f"{name} scatter")
        assert S._T is None


def test_layout_attributes_read_through_the_sparse_stream(rng):
    """S.K, S.segment, ... are the format instance's; its methods are not the SparseStream's."""
    A = unequal(rng)
    with SparseStream.from_scipy(A, format="packed") as P, SparseStream.from_scipy(A, format="ellpack") as E:
        assert (P.segment, P.split, P.single, P.p_shape) == (P._storage.segment, P._storage.split,
                                                             P._storage.single, P._storage.p_shape)
        assert E.K == E._storage.K == 14 and E.runs is None and E.programs == 1
        with pytest.raises(AttributeError, match="'SparseStream' object has no attribute 'segment'"):
            E.segment
        with pytest.raises(AttributeError, match="'SparseStream' object has no attribute 'upload'"):
            E.upload


@pytest.mark.parametrize("name", ["packed", "split", "ellpack", "tell"])
def test_int64_index_arithmetic_gives_the_same_textures(name, rng, monkeypatch):
    """The layouts' index arithmetic in int64 (a matrix of 2^31 places or more) lays out the
    textures the int32 arithmetic does (common._index_type, where the helpers look it up)."""
    monkeypatch.setattr(stream, "FOLD_WIDTH", 7)
    A = unequal(rng)
    opts = {"segment": 3} if name in ("packed", "split") else {}
    with SparseStream.from_scipy(A, format=name, dense=False, **opts) as S:
        want = {k: s.to_array() for k, s in S._streams.items()}
    monkeypatch.setattr(common, "_index_type", lambda *sizes: np.int64)
    with SparseStream.from_scipy(A, format=name, dense=False, **opts) as S:
        got = {k: s.to_array() for k, s in S._streams.items()}
    assert want.keys() == got.keys()
    for k in want:
        assert np.array_equal(want[k].view(np.uint32), got[k].view(np.uint32)), (name, k)


# ---------------------------------------------------------------------- a new format: one file
class HostFormat(Format):
    """A format for this test only, that no module of gpgpu knows: the sparse part kept as a
    host CSR (and its values in a texture, so that it holds memory); its product computed on
    the host and written into y. What it proves: SparseStream needs nothing but the class."""

    calls: list = []

    @classmethod
    def auto_dense(cls, M, row_nnz, long_row):
        return 6, None, None                  # rows of more than 6 non-zeros dense; columns stay

    def upload(self, S, cols, vals, counts):
        m, n = S.shape
        indptr = np.concatenate([[0], np.cumsum(counts)])
        self.csr = sp.csr_matrix((vals.astype(np.float32), cols, indptr), shape=(m, n))
        self.stored = int(counts.sum())
        S._streams["values"] = Stream(1, max(1, vals.size), data=np.resize(vals.astype(np.float32),
                                                                           max(1, vals.size)))
        self.calls.append("upload")

    def product(self, S, xs, y):
        x = xs.to_array().reshape(-1)[:S.shape[1]].astype(np.float64)
        out = np.zeros(y.rows * y.cols, dtype=np.float32)
        out[:S.shape[0]] = self.csr @ x
        y.write(out.reshape(y.rows, y.cols))
        self.calls.append("product")

    def fetches(self, S):
        return 3 * self.stored, self.stored

    def to_scipy(self, S):
        coo = self.csr.tocoo()
        return coo.row, coo.col.astype(np.int64), coo.data


def test_a_new_format_is_one_class_and_one_registry_line(rng, monkeypatch):
    """HostFormat registered as "host" (what a new module and its FORMATS line do): from_scipy
    takes it with gpgpu.sparse untouched, and every product works through it: A x with its
    dense rows, A^T y from the transposed copy (built in the same format), A Θ Aᵀ y, to_scipy,
    fetches, its layout attribute through the SparseStream, and the error naming the formats."""
    source = inspect.getsource(gpgpu.sparse)
    monkeypatch.setitem(FORMATS, "host", HostFormat)
    monkeypatch.setattr(HostFormat, "calls", [])
    A = unequal(rng)
    m, n = A.shape
    x, y, theta = rng.standard_normal(n), rng.standard_normal(m), rng.uniform(0.5, 2.0, n)
    with SparseStream.from_scipy(A, format="host") as S:
        assert S.format == "host" and isinstance(S._storage, HostFormat)
        assert list(S.dense_rows) == [9] and S.dense_cols.size == 0        # its auto_dense: the row of 14
        assert S.stored == A.nnz - 14                                       # its attribute, through S
        within_float32(S.matvec(x), A, x, "host A x")
        within_float32(S.rmatvec(y), A.T, y, "host A^T y")
        assert S.transposed().format == "host"
        z = S.normal_matvec(theta, y)
        ref = A @ (theta * (A.T @ y))
        assert np.all(np.abs(z - ref) <= 1e-5 * (abs(A) @ (theta * (abs(A.T) @ np.abs(y)))))
        same_entries(S.to_scipy(), A, "host: to_scipy")
        assert S.fetches()["entries"] == A.nnz - 14 and S.nbytes > 0
        assert "host" in repr(S)
    assert HostFormat.calls.count("upload") == 2 and "product" in HostFormat.calls
    with pytest.raises(ValueError, match="'host'"):
        SparseStream.from_scipy(A, format="nope")
    with pytest.raises(ValueError, match="transpose='scatter' walks the ELLPACK layouts; the host format"):
        SparseStream.from_scipy(A, format="host", transpose="scatter")
    with pytest.raises(ValueError, match="segment= is an option of format='packed' and 'split'"):
        SparseStream.from_scipy(A, format="host", segment=4)
    assert inspect.getsource(gpgpu.sparse) == source


def products_of_planes(A, rng, dense, planes=3) -> tuple:
    """SparseStream.product_planes of A (ELLPACK, ``dense`` its dense-part threshold) on three
    random planes, plain and with weights: plane c of each result checked against scipy's float64
    A X_c and A diag(w) X_c within float32's bound; answers the dense rows and columns and the
    passes of one product."""
    m, n = A.shape
    X = rng.standard_normal((planes, n))
    w = np.exp(rng.uniform(-2, 2, n))
    rows_x, wx = stream.vector_shape(n)
    rows_y, wy = stream.vector_shape(m)
    stacked = np.zeros((planes * rows_x, wx), np.float32)
    for c, v in enumerate(X):
        stacked[c * rows_x:(c + 1) * rows_x].reshape(-1)[:n] = v
    with SparseStream.from_scipy(A, format="ellpack", dense=dense) as S, \
            Stream(planes * rows_x, wx, data=stacked) as Xs, Stream.vector_of(n, w) as ws, \
            Stream(planes * rows_y, wy) as Y, Stream(planes * rows_y, wy) as Yw:
        assert S.plane_products()
        with counters.tally() as t:
            S.product_planes(Xs, planes, Y)
        S.product_planes(Xs, planes, Yw, weights=ws)
        got, gotw = Y.to_array(), Yw.to_array()
        dense_rows, dense_cols = [int(i) for i in S.dense_rows], [int(j) for j in S.dense_cols]
    weighted = sp.csr_matrix(A) @ sp.diags(w)
    for c in range(planes):
        within_float32(got[c * rows_y:(c + 1) * rows_y].reshape(-1)[:m], A, X[c], f"plane {c}")
        within_float32(gotw[c * rows_y:(c + 1) * rows_y].reshape(-1)[:m], weighted, X[c], f"weighted {c}")
    return dense_rows, dense_cols, t.passes


@pytest.mark.parametrize("fold", [None, 7])
def test_product_planes_is_a_product_per_plane_for_ellpack_only(rng, monkeypatch, fold):
    """SparseStream.product_planes (the fused preconditioner's k column products in one pass):
    plane c of the result is A times plane c of X, and with weights A diag(w) X, within float32's
    bound, for ELLPACK (the only layout it reads; rows of unequal length, two empty; fold=7 folds
    the 23 rows and 19 columns into rows of 7 with tails, so a plane spans several texture rows).
    Transposed ELLPACK (entries down the columns) and the other formats (the sorted corrigan one
    too) say no and are refused."""
    if fold:
        monkeypatch.setattr(stream, "FOLD_WIDTH", fold)
    A = unequal(rng)
    m, n = A.shape
    planes = 3
    assert products_of_planes(A, rng, dense=False) == ([], [], 1)
    for fmt in ("tell", "corrigan", "packed", "split"):
        with SparseStream.from_scipy(A, format=fmt, dense=False) as S:
            assert not S.plane_products(), fmt
            with pytest.raises(NotImplementedError, match="product_planes needs ELLPACK"):
                S.product_planes(None, planes, None)
    square = (sp.csr_matrix(A).T @ sp.csr_matrix(A) + sp.eye(n)).tocsr()
    with SparseStream.from_scipy(square, format="corrigan", dense=False, sort=True) as S:
        assert S.perm is not None and not S.plane_products()


@pytest.mark.parametrize("n, table", [(19, None), (103, None), (103, 4)], ids=["one-chunk", "chunks", "table-folded"])
@pytest.mark.parametrize("fold", [None, 7])
def test_product_planes_with_a_dense_part_is_a_product_per_plane(rng, monkeypatch, fold, n, table):
    """product_planes where A has a dense part (three dense rows, the 14-entry one among them,
    and three dense columns, crossing them; ELLPACK holds the rest): plane c of the result is A
    times plane c of X, and with weights A diag(w) X, within float32's bound, against scipy's
    float64 product; the dense rows' inner products in one chunk (n = 19) or four (n = 103, the
    last of 7), and their table of 3 x 3 sums folded 4 rows high (table=4, as the largest
    texture folds it); two passes (the dense rows' chunks, then the sparse part with the dense
    part added), one with the dense columns alone. Each plane's own entries, weights and
    dense-row inner products count: X's plane offset left out, the weights left out of the dense
    columns or rows, a dense row read from R's first plane, a sum's plane and row swapped, or the
    table's fold left out each fail."""
    if fold:
        monkeypatch.setattr(stream, "FOLD_WIDTH", fold)
    if table:
        monkeypatch.setattr(sparse_formats.dense, "max_texture_size", lambda: table)
    A = unequal(rng, n=n).tolil()
    m, n = A.shape
    for i in (4, 17):                                     # dense rows
        A[i, :] = rng.uniform(0.5, 2.0, n) * rng.choice([-1.0, 1.0], n)
    for j in (2, 9, 15):                                  # dense columns (rows 4 and 17 have them too)
        A[:, j] = (rng.uniform(0.5, 2.0, m) * rng.choice([-1.0, 1.0], m)).reshape(-1, 1)
    columns = A.copy()
    assert products_of_planes(A.tocsr(), rng, dense=12) == ([4, 9, 17], [2, 9, 15], 2)
    for i in (4, 9, 17):                                  # the dense rows thinned: columns alone
        columns[i, :] = 0.0
        columns[i, [2, 9, 15]] = 1.0
    assert products_of_planes(columns.tocsr(), rng, dense=12) == ([], [2, 9, 15], 1)


@pytest.mark.parametrize("table", [None, 2])
@pytest.mark.parametrize("fold", [None, 16])
def test_product_fused_with_a_dense_part_adds_its_rows_in_chunks(rng, monkeypatch, fold, table):
    """product_fused where A has a dense part, the dense rows' inner products in chunks of 32
    entries (n = 103: three whole chunks and a last one of 7) and the dense part added in the
    sparse part's pass (two passes in all): A x and A diag(w) x within float32's bound against scipy's float64 product, for
    three dense rows (one of them in a dense column too) and two dense columns, folded 16 wide
    (the chunks cross the folded rows) or not, the table of chunks folded 2 rows high or not
    (table=2, as the largest texture folds it). A chunk's first entry one off, the last partial
    chunk or a row's last chunk left out, a dense row read from another row's plane, the chunk
    table read transposed, or the weights left out of the dense rows or columns each fail."""
    if fold:
        monkeypatch.setattr(stream, "FOLD_WIDTH", fold)
    m, n = 41, 103
    A = sp.random(m, n, density=0.04, random_state=np.random.RandomState(5), format="lil")
    for i in (3, 20, 38):                                 # dense rows
        A[i, :] = rng.uniform(0.5, 2.0, n) * rng.choice([-1.0, 1.0], n)
    for j in (0, 57):                                     # dense columns (row 20 has them too)
        A[:, j] = (rng.uniform(0.5, 2.0, m) * rng.choice([-1.0, 1.0], m)).reshape(-1, 1)
    A = A.tocsr()
    x = rng.standard_normal(n)
    w = np.exp(rng.uniform(-2, 2, n))
    if table:
        monkeypatch.setattr(sparse_formats.dense, "max_texture_size", lambda: table)
    with SparseStream.from_scipy(A, format="ellpack", dense=12) as S, Stream.vector_of(n, x) as xs, \
            Stream.vector_of(n, w) as ws, Stream.vector_of(m) as y, Stream.vector_of(m) as yw:
        assert [int(i) for i in S.dense_rows] == [3, 20, 38] and [int(j) for j in S.dense_cols] == [0, 57]
        with counters.tally() as t:
            S.product_fused(xs, y)
        assert t.passes == 2                              # the rows' chunks, then the rest
        S.product_fused(xs, yw, weights=ws)
        got, gotw = y.to_array().astype(np.float64), yw.to_array().astype(np.float64)
    within_float32(got, A, x, "A x")
    within_float32(gotw, A @ sp.diags(w), x, "A diag(w) x")


@pytest.mark.parametrize("fold", [None, 16])
def test_product_fused_with_dense_columns_only_is_one_pass(rng, monkeypatch, fold):
    """product_fused where A's dense part is three columns and no row (A^T's where A has dense
    rows): the columns added in the sparse part's own pass, one pass in all, A x and A diag(w) x
    within float32's bound against scipy's float64 product. A column's plane read one row off,
    its index or its weight not its own, or a column left out each fail."""
    if fold:
        monkeypatch.setattr(stream, "FOLD_WIDTH", fold)
    m, n = 57, 40
    A = sp.random(m, n, density=0.05, random_state=np.random.RandomState(8), format="lil")
    for j in (2, 21, 39):
        A[:, j] = (rng.uniform(0.5, 2.0, m) * rng.choice([-1.0, 1.0], m)).reshape(-1, 1)
    A = A.tocsr()
    x = rng.standard_normal(n)
    w = np.exp(rng.uniform(-2, 2, n))
    with SparseStream.from_scipy(A, format="ellpack", dense=12) as S, Stream.vector_of(n, x) as xs, \
            Stream.vector_of(n, w) as ws, Stream.vector_of(m) as y, Stream.vector_of(m) as yw:
        assert S.kr == 0 and [int(j) for j in S.dense_cols] == [2, 21, 39]
        with counters.tally() as t:
            S.product_fused(xs, y)
            S.product_fused(xs, yw, weights=ws)
        assert t.passes == 2                              # one a product
        got, gotw = y.to_array().astype(np.float64), yw.to_array().astype(np.float64)
    within_float32(got, A, x, "A x")
    within_float32(gotw, A @ sp.diags(w), x, "A diag(w) x")


def four_entry_rows(rng, n=19):
    """Rows of every length 0 .. 13 (twice each, shuffled): each place a row can end in a group
    of four, K = 13 leaves a remainder of one after three groups."""
    counts = rng.permutation(np.repeat(np.arange(14), 2))
    rows = np.repeat(np.arange(counts.size), counts)
    cols = np.concatenate([rng.choice(n, size=c, replace=False) for c in counts])
    vals = rng.uniform(0.5, 2.0, rows.size) * rng.choice([-1.0, 1.0], rows.size)
    return sp.csr_matrix((vals, (rows, cols)), shape=(counts.size, n))


@pytest.mark.parametrize("fold", [None, 7])
def test_product_fused_is_the_product_for_every_format(rng, ctx, monkeypatch, fold):
    """SparseStream.product_fused (the fused PCG iteration's products): A x, and A diag(w) x,
    within float32's bound against scipy, for rows of every length from 0 to 13 (ELLPACK fetches
    four entries at a time: a row ending in each place of a group, and a remainder), folded or
    not; with a dense part (the sparse part four at a time, the dense part added); and for the
    other formats (their own product). On llvmpipe the ELLPACK results without a dense part are
    bit for bit those of 002's kernel (sparse_ellpack) after a scaling pass (elementwise_product):
    the same additions in the same order, x_j w_j rounded first."""
    if fold:
        monkeypatch.setattr(stream, "FOLD_WIDTH", fold)
    A = four_entry_rows(rng)
    m, n = A.shape
    x = rng.standard_normal(n)
    w = np.exp(rng.uniform(-2, 2, n))
    wide = sp.vstack([sp.hstack([A, sp.csr_matrix(rng.standard_normal((m, 1)))]),
                      sp.csr_matrix(np.ones((1, n + 1)))]).tocsr()
    xw, ww = np.append(x, 0.5), np.append(w, 2.0)
    cases = [(A, x, w, fmt, False) for fmt in NAMES] + [(wide, xw, ww, "ellpack", 5)]
    exact = "llvmpipe" in ctx.info.get("GL_RENDERER", "")
    for M, xv, wv, fmt, dense in cases:
        mm, nn = M.shape
        with SparseStream.from_scipy(M, format=fmt, dense=dense) as S, Stream.vector_of(nn, xv) as xs, \
                Stream.vector_of(nn, wv) as ws, Stream.vector_of(mm) as y, Stream.vector_of(mm) as yw:
            if dense:
                assert S.kr and S.kc
            # only ELLPACK lets a caller's kernel walk its (sparse part's) rows; the kernel
            # adds a dense part where it is compiled with DENSE, and must be where A has one
            assert S.carries_rows() == (fmt == "ellpack")
            if not S.carries_rows():
                with pytest.raises(NotImplementedError, match="draw_with_rows needs ELLPACK"):
                    S.draw_with_rows(None, y, None, {}, {})
            else:
                wrong = ELLPACK_KERNELS["four_dense" if not dense else "four"]
                with pytest.raises(ValueError, match=("no dense part" if not dense else "a dense part")
                                   + ".*" + ("is compiled with DENSE" if not dense else "is not compiled")):
                    S.draw_with_rows(wrong, y, None, {"X": xs}, {})
            S.product_fused(xs, y)
            S.product_fused(xs, yw, weights=ws)
            got, gotw = y.to_array().astype(np.float64), yw.to_array().astype(np.float64)
            within_float32(got, M, xv, (fmt, dense, "A x"))
            within_float32(gotw, sp.csr_matrix(M) @ sp.diags(wv), xv, (fmt, dense, "A diag(w) x"))
            if exact and fmt == "ellpack" and not dense:
                ref = S._product(xs)
                scaled = multiply(xs, ws)
                refw = S._product(scaled)
                np.testing.assert_array_equal(got, ref.to_array())
                np.testing.assert_array_equal(gotw, refw.to_array())
                for s in (ref, scaled, refw):
                    s.release()
