"""Sparse matrices as textures (papers 002 and 003): every format's products against scipy in
float64, at awkward shapes, folded vectors, dense rows and columns, and every NETLIB matrix."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import gpgpu
from gpgpu import SparseStream, Stream, counters, stream
from gpgpu.sparse import corrigan_kernel

U32 = 2.0 ** -24
VARIANTS = [("ellpack", "copy"), ("ellpack", "scatter"), ("tell", "copy"), ("tell", "scatter"),
            ("corrigan", "copy")]


def close(got, A, x, what):
    """|got - A x| <= 2 k u (|A| |x|) entry by entry, k the most non-zeros summed into an entry
    (the standard bound for a float32 sum of products), A x in float64."""
    A = sp.csr_matrix(A)
    ref = A @ x
    k = max(1, int(np.diff(A.indptr).max()) if A.nnz else 1)
    bound = 2 * (k + 2) * U32 * (abs(A) @ np.abs(x)) + 1e-30
    err = np.abs(np.asarray(got, dtype=np.float64) - ref)
    assert np.all(err <= bound), (what, float((err / bound).max()))


def products(S, A, rng):
    m, n = A.shape
    x, y, theta = rng.standard_normal(n), rng.standard_normal(m), rng.random(n) + 0.1
    close(S.matvec(x), A, x, "A x")
    close(S.rmatvec(y), A.T, y, "A^T y")
    # FSAAT: the bound composes: A^T y first (float32), then theta, then A
    z = S.normal_matvec(theta, y)
    t = A.T @ y
    ref = A @ (theta * t)
    kA = max(1, int(np.diff(sp.csr_matrix(A).indptr).max()))
    kT = max(1, int(np.diff(sp.csr_matrix(A.T).indptr).max()))
    bound = 2 * (kA + kT + 4) * U32 * (abs(A) @ (theta * (abs(A.T) @ np.abs(y)))) + 1e-30
    assert np.all(np.abs(z - ref) <= bound), float((np.abs(z - ref) / bound).max())


def awkward(name, rng):
    """The shapes the issue names: 1 x 1, one row, one column, empty rows, one dense row and one
    dense column, m > n, m < n, non-powers of two."""
    if name == "1x1":
        return sp.csr_matrix([[2.5]])
    if name == "one row":
        return sp.random(1, 13, density=0.6, random_state=1, format="csr")
    if name == "one column":
        return sp.random(11, 1, density=0.7, random_state=2, format="csr")
    if name == "empty rows":
        A = sp.random(19, 23, density=0.2, random_state=3, format="lil")
        A[0, :] = 0
        A[7, :] = 0
        A[18, :] = 0
        return A.tocsr()
    if name == "dense row and column":
        A = sp.random(37, 37, density=0.08, random_state=4, format="lil")
        A[5, :] = rng.standard_normal(37)
        A[:, 11] = rng.standard_normal((37, 1))
        return A.tocsr()
    if name == "tall":
        return sp.random(45, 17, density=0.15, random_state=5, format="csr")
    if name == "wide":
        return sp.random(17, 45, density=0.15, random_state=6, format="csr")
    raise KeyError(name)


SHAPES = ["1x1", "one row", "one column", "empty rows", "dense row and column", "tall", "wide"]


@pytest.mark.parametrize("fold", [None, 5])
@pytest.mark.parametrize("name", SHAPES)
@pytest.mark.parametrize("fmt, transpose", VARIANTS)
def test_products_match_scipy(fmt, transpose, name, fold, rng, monkeypatch):
    """fold=5 folds every vector longer than 5 into rows of 5 texels, so row boundaries of the
    folded layouts fall inside every matrix."""
    monkeypatch.setattr(stream, "FOLD_WIDTH", fold)
    A = awkward(name, rng)
    for dense in (None, False, 3):
        with SparseStream.from_scipy(A, format=fmt, transpose=transpose, dense=dense) as S:
            products(S, A, rng)
            back = S.to_scipy()
            assert back.shape == A.shape and abs(back - A.astype(np.float32)).max() == 0


@pytest.mark.parametrize("fold", [None, 6])
def test_corrigan_sorted_products_and_round_trip(fold, rng, monkeypatch):
    monkeypatch.setattr(stream, "FOLD_WIDTH", fold)
    B = sp.random(41, 41, density=0.1, random_state=7, format="csr")
    A = (B + B.T + 41 * sp.eye(41)).tocsr()
    for dense in (None, False):
        with SparseStream.from_scipy(A, format="corrigan", sort=True, dense=dense) as S:
            assert sorted(S.perm) == list(range(41))
            products(S, A, rng)
            assert abs(S.to_scipy() - A.astype(np.float32)).max() == 0


def test_one_program_per_nonzero_count_and_one_rectangle_per_run():
    """003: "each row has a different fragment program based on its number of nonzero entries";
    sorting makes the rows of one count a single rectangle."""
    counts = [3, 1, 3, 3, 2, 1, 0, 2, 3]          # 3 distinct counts, 7 runs (row 6 empty)
    rows, cols = [], []
    for i, c in enumerate(counts):
        rows += [i] * c
        cols += list(range(c))
    A = sp.csr_matrix((np.arange(1.0, len(rows) + 1), (rows, cols)), shape=(9, 9))
    with SparseStream.from_scipy(A, format="corrigan", dense=False) as S:
        assert S.programs == 3 and S.rectangles == 7 and S.empty_rows == 1
        with counters.count() as c:
            y = S.matvec(np.ones(9))
        np.testing.assert_allclose(y, A @ np.ones(9))
        passes = [p for p in c.trace if p.kernel.startswith("sparse_corrigan")]
        assert len(passes) == 7 and len({p.kernel for p in passes}) == 3
        assert sum(p.fragments for p in passes) == 8          # every non-empty row once
        assert {corrigan_kernel(k).label for k in (1, 2, 3)} == {p.kernel for p in passes}
    with SparseStream.from_scipy(A, format="corrigan", sort=True, dense=False) as S:
        assert S.programs == 3 and S.rectangles == 3
        with counters.count() as c:
            S._product(Stream.from_array(np.ones(9)), permuted=True).release()
        assert c.passes() == 3 and c.fragments() == 8


@pytest.mark.parametrize("fmt", ["ellpack", "tell"])
def test_ellpack_shades_one_fragment_per_row(fmt):
    A = sp.random(23, 30, density=0.2, random_state=8, format="csr")
    with SparseStream.from_scipy(A, format=fmt, dense=False) as S, counters.count() as c:
        S.matvec(np.ones(30))
    (p,) = [p for p in c.trace if p.kernel.startswith("sparse_")]
    assert p.fragments == 23 and S.K == np.diff(A.indptr).max()


@pytest.mark.parametrize("fmt", ["ellpack", "tell"])
def test_scatter_draws_one_point_per_stored_entry(fmt):
    A = sp.random(12, 9, density=0.3, random_state=9, format="csr")
    with SparseStream.from_scipy(A, format=fmt, transpose="scatter", dense=False) as S:
        with counters.count() as c:
            y = S.rmatvec(np.arange(1.0, 13.0))
        (p,) = [p for p in c.trace if p.kernel == "sparse_scatter"]
        assert p.primitive == "points" and p.vertices == 12 * S.K
        # ELLPACK's padding (column -1) is placed outside the viewport; TELL's (column 0) adds zeros to x(0)
        assert p.fragments == (A.nnz if fmt == "ellpack" else 12 * S.K)
        np.testing.assert_allclose(y, A.T @ np.arange(1.0, 13.0), rtol=1e-6)


@pytest.mark.parametrize("fmt", ["ellpack", "tell"])
def test_ellpack_loops_stop_at_the_padding(fmt):
    """ELLPACK's padding texels hold column -1, where the loop stops: a row of 40 entries among
    rows of 2 costs 3 fetches an entry, not the longest row's 40 a row (TELL walks all K)."""
    rng = np.random.default_rng(3)
    counts = np.where(np.arange(50) == 17, 40, 2)
    rows = np.repeat(np.arange(50), counts)
    cols = np.concatenate([rng.choice(60, c, replace=False) for c in counts])
    A = sp.csr_matrix((rng.standard_normal(rows.size), (rows, cols)), shape=(50, 60))
    with SparseStream.from_scipy(A, format=fmt, dense=False) as S:
        assert S.K == 40
        x = rng.standard_normal(60)
        np.testing.assert_allclose(S.matvec(x), A @ x, rtol=2e-6, atol=1e-5)
        f = S.fetches()
        short = 49                                   # rows shorter than K: one column fetch where they stop
        assert f["entries"] == 50 * 40
        assert f["fetches"] == (3 * A.nnz + short if fmt == "ellpack" else 3 * 50 * 40)
        if fmt == "ellpack":
            cols_tex = S._storage.blocks(S._streams["columns"].to_array(), (1, 50), 40)
            assert (cols_tex[np.arange(40)[None, :] >= counts[:, None]] == -1).all()


def test_transposed_copy_doubles_the_memory():
    A = sp.random(50, 80, density=0.1, random_state=10, format="csr")
    with SparseStream.from_scipy(A, format="ellpack") as S:
        before = S.nbytes
        assert S.nbytes_with_transpose == before
        S.rmatvec(np.ones(50))
        assert S.nbytes_with_transpose > before and S.transposed().shape == (80, 50)
    with SparseStream.from_scipy(A, format="ellpack", transpose="scatter") as S:
        S.rmatvec(np.ones(50))
        assert S.nbytes_with_transpose == S.nbytes


def test_dense_threshold_moves_rows_and_columns():
    A = sp.random(40, 40, density=0.05, random_state=11, format="lil")
    A[3, :] = 1.0
    A[:, 17] = 2.0
    A = A.tocsr()
    with SparseStream.from_scipy(A, format="tell") as S:       # automatic threshold
        assert list(S.dense_rows) == [3] and list(S.dense_cols) == [17]
        assert S.K < 40
    with SparseStream.from_scipy(A, format="tell", dense=False) as S:
        assert S.dense_rows.size == 0 and S.K == 40


def test_automatic_threshold_counts_texels_not_ratios():
    """Columns of 60 non-zeros among columns of 4 in a 2000-row matrix (nug30's pattern) stay
    sparse in the padded layouts (as 12 full columns they would cost 12 x 2000 texels, more than
    the 300 x 56 of padding they cause; a third of them would go dense), while the corrigan format, which pads nothing, moves them out by
    its 10 x median rule; a full row among short rows goes dense in every format."""
    rng = np.random.default_rng(5)
    m, n, long_cols = 2000, 300, list(range(5, 300, 25))       # 12 long columns: 4 % of them
    rows, cols = [], []
    for j in range(n):
        k = 60 if j in long_cols else 4
        rows += list(rng.choice(m, k, replace=False))
        cols += [j] * k
    A = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(m, n))
    with SparseStream.from_scipy(A, format="ellpack") as S:
        assert S.dense_cols.size == 0 and S.dense_rows.size == 0
        x = rng.standard_normal(n)
        np.testing.assert_allclose(S.matvec(x), A @ x, rtol=1e-5, atol=1e-5)
    with SparseStream.from_scipy(A, format="corrigan") as S:
        assert list(S.dense_cols) == long_cols
    B = sp.lil_matrix(A[:300])
    B[11, :] = 1.0
    for fmt in ("ellpack", "tell", "corrigan"):
        with SparseStream.from_scipy(B.tocsr(), format=fmt) as S:
            assert list(S.dense_rows) == [11], fmt
    C = sp.csr_matrix(A[:, [j for j in range(n) if j not in long_cols[4:]]])
    with SparseStream.from_scipy(C, format="ellpack") as S:    # 4 long columns of 292: dense
        assert S.dense_cols.size == 4


def poison_pool(*shapes):
    """Leave NaN-filled temporaries of these shapes in the pool, so that a pass that forgets to
    fill a borrowed texture before reading it gives NaN (a fresh texture would read 0)."""
    from gpgpu.stream import give_back

    for rows, cols in shapes:
        give_back(*(Stream(rows, cols, data=np.full((rows, cols), np.nan, np.float32)) for _ in range(4)))


@pytest.mark.parametrize("fold", [None, 8])
def test_dense_rows_and_columns_take_the_same_passes_however_many(fold, rng, monkeypatch):
    """All dense rows' inner products (matvec) and all dense columns' (rmatvec by scattering)
    are done together: the passes do not grow with their number, and the product pass shades
    one fragment per entry of every plane (k planes x n)."""
    monkeypatch.setattr(stream, "FOLD_WIDTH", fold)
    passes = {}
    for k in (2, 9):
        A = sp.random(60, 50, density=0.04, random_state=13, format="lil")
        for r in range(k):
            A[4 * r + 1, :] = rng.standard_normal(50)
            A[:, 3 * r + 2] = rng.standard_normal((60, 1))
        A = A.tocsr()
        with SparseStream.from_scipy(A, format="ellpack", transpose="scatter", dense=20) as S:
            assert S.dense_rows.size == k and S.dense_cols.size == k
            x, y = rng.standard_normal(50), rng.standard_normal(60)
            (hx, wx), (hy, wy) = stream.vector_shape(50), stream.vector_shape(60)
            poison_pool((k * hx, wx), (k * hy, wy), (k * hx, 1), (k * hy, 1), (k, hx), (k, hy),
                        (hy, wy), (hx, wx))
            with counters.count() as c:
                got = S.matvec(x)
            assert np.all(np.abs(got - A @ x) <= 60 * U32 * (abs(A) @ np.abs(x)))
            assert c.fragments("plane_product") == k * 50
            with counters.count() as d:
                back = S.rmatvec(y)
            assert np.all(np.abs(back - A.T @ y) <= 60 * U32 * (abs(A.T) @ np.abs(y)))
            assert d.fragments("plane_product") == k * 60
            assert d.fragments("scaled_rows") == 50
            passes[k] = (c.passes(), d.passes())
    assert passes[2] == passes[9]


@pytest.mark.parametrize("fold", [None, 5])
def test_corrigan_with_dense_rows_zeroes_its_empty_rows(fold, rng, monkeypatch):
    """With a dense part, the sparse part's product goes to a pooled temporary: rows without a
    run (empty rows) must be filled with 0 there, not read as whatever the pool held."""
    monkeypatch.setattr(stream, "FOLD_WIDTH", fold)
    A = awkward("empty rows", rng).tolil()
    A[4, :] = rng.standard_normal(23)                     # a dense row beside the empty ones
    A = A.tocsr()
    with SparseStream.from_scipy(A, format="corrigan", dense=10) as S:
        assert S.dense_rows.tolist() == [4] and S.empty_rows
        poison_pool(stream.vector_shape(19))
        x = rng.standard_normal(23)
        got = S.matvec(x)
        assert np.all(np.abs(got - A @ x) <= 30 * U32 * (abs(A) @ np.abs(x)))
        assert np.all(got[[0, 7, 18]] == 0)


def test_stream_in_stream_out(rng):
    A = sp.random(20, 15, density=0.3, random_state=12, format="csr")
    x = rng.standard_normal(15)
    with SparseStream.from_scipy(A) as S, Stream.from_array(x) as xs:
        y = S.matvec(xs)
        assert isinstance(y, Stream) and y.vector and y.length == 20
        close(y.to_array(), A, x, "A x")
        t = S.rmatvec(y)
        assert isinstance(t, Stream) and t.length == 15
        y.release(), t.release()


@pytest.mark.parametrize("bad, match", [
    (sp.csr_matrix(np.array([[1.0, np.nan]])), "NaN or infinity"),
    (sp.csr_matrix(np.array([[1.0 + 2j, 0]])), "complex"),
    (np.zeros((0, 3)), "empty"),
    (np.ones((2, 2, 2)), "2-D"),
    (sp.csr_matrix(np.array([[1e39, 0.0]])), "overflow float32"),
])
def test_bad_matrices_are_named(bad, match):
    with pytest.raises(ValueError, match=match):
        SparseStream.from_scipy(bad)


def test_bad_options_and_vectors():
    A = sp.random(6, 8, density=0.5, random_state=13, format="csr")
    with pytest.raises(ValueError, match="format must be"):
        SparseStream.from_scipy(A, format="csr")
    with pytest.raises(ValueError, match="square"):
        SparseStream.from_scipy(A, format="corrigan", sort=True)
    with pytest.raises(ValueError, match="corrigan"):
        SparseStream.from_scipy(A, format="ellpack", sort=True)
    with pytest.raises(ValueError, match="transposed copy"):
        SparseStream.from_scipy(A, format="corrigan", transpose="scatter")
    long_row = sp.csr_matrix(np.ones((2, 1100)))
    with pytest.raises(ValueError, match="non-zeros, more than"):
        SparseStream.from_scipy(long_row, format="corrigan", dense=False)
    with SparseStream.from_scipy(A) as S:
        with pytest.raises(ValueError, match="length 8"):
            S.matvec(np.ones(6))
        with pytest.raises(ValueError, match="length 6"):
            S.rmatvec(np.ones(8))


def test_folded_vector_stream_round_trip(monkeypatch):
    monkeypatch.setattr(stream, "FOLD_WIDTH", 7)
    x = np.arange(1.0, 24.0)
    with Stream.from_array(x) as s:
        assert s.shape == (4, 7) and s.length == 23 and s.folded
        np.testing.assert_array_equal(s.to_array(), x)
        assert gpgpu.reduce(s, "min").item() == 1.0          # the zero tail is not a minimum
        y = gpgpu.add_scalar(s, 1.0)
        np.testing.assert_array_equal(y.to_array(), x + 1)
        assert gpgpu.dot(y, s, stream=False) == (x + 1) @ x
        assert gpgpu.reduce(s, "sum", strategy="pyramid").item() == x.sum()
        y.release()


# --------------------------------------------------------------------------- NETLIB
def netlib_problems():
    from gpgpu.lp.netlib import netlib_dir

    try:
        base = netlib_dir()
    except FileNotFoundError:
        return []
    more = base.parent / "netlib-more"
    files = sorted(base.glob("*.mps.gz")) + (sorted(more.glob("*.mps.gz")) if more.is_dir() else [])
    return files


@pytest.mark.parametrize("path", netlib_problems(), ids=lambda p: p.name.split(".")[0])
def test_every_netlib_matrix(path, rng):
    pytest.importorskip("highspy")
    from gpgpu.lp import read_mps

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        A = read_mps(path).A
    for fmt, transpose in (("ellpack", "scatter"), ("tell", "copy"), ("corrigan", "copy")):
        with SparseStream.from_scipy(A, format=fmt, transpose=transpose) as S:
            products(S, A, rng)


# --------------------------------------------------------------------------- 003 as printed, and beyond
def test_corrigan_dense_split_is_on_by_default_and_off_in_one_word(rng):
    """003's future work 4 (a dense part for dense rows) is beyond 003 and on by default: a row
    of 40 non-zeros among rows of 2 goes to the dense part; ``dense_split=False`` is 003 as
    printed: the row stays in the values/columns textures with a program of its own. Both
    products equal scipy's float64 within float32's bound. A row longer than one program
    unrolls (1100 > CORRIGAN_MAX_NNZ) is refused with dense_split=False (003's compiler
    failure), naming dense_split=True and format='ellpack'; the default splits it. A
    dense_split that ignored False (or True) fails here."""
    A = sp.lil_matrix((60, 60))
    A.setdiag(2.0)
    A.setdiag(-1.0, 1)
    A[7, :40] = rng.standard_normal(40)
    A = A.tocsr()
    x = rng.standard_normal(60)
    with SparseStream.from_scipy(A, format="corrigan") as S:
        assert list(S.dense_rows) == [7] and S.programs == 2          # counts 1 and 2 in the textures
        close(S.matvec(x), A, x, "split")
    with SparseStream.from_scipy(A, format="corrigan", dense_split=False) as S:
        assert S.dense_rows.size == 0 and S.dense_cols.size == 0 and S.programs == 3   # 1, 2 and 40
        close(S.matvec(x), A, x, "003 as printed")
    long_row = sp.csr_matrix(np.vstack([np.ones(1100), np.eye(1, 1100, 1)[0]]))
    with pytest.raises(ValueError, match="1100 non-zeros, more than") as e:
        SparseStream.from_scipy(long_row, format="corrigan", dense_split=False)
    assert "dense_split=True" in str(e.value) and "format='ellpack'" in str(e.value)
    with SparseStream.from_scipy(long_row, format="corrigan") as S:
        assert list(S.dense_rows) == [0]
        np.testing.assert_allclose(S.matvec(np.ones(1100)), [1100.0, 1.0], rtol=2 ** -20)
    with pytest.raises(ValueError, match="dense_split=False keeps every row sparse.*dense=5"):
        SparseStream.from_scipy(A, format="corrigan", dense_split=False, dense=5)
    with pytest.raises(ValueError, match="dense_split must be True or False"):
        SparseStream.from_scipy(A, format="corrigan", dense_split="no")


def test_corrigan_says_on_stderr_what_it_compiles_once_per_matrix(capsys, monkeypatch):
    """More than LOG_PROGRAMS ("a few dozen") corrigan programs to compile: the first product
    prints one line on stderr with how many and the counts; a second product of the same
    matrix, and a matrix whose programs are compiled, print nothing. (LOG_PROGRAMS is lowered
    here so that the test compiles 5 small programs, not 33.) A message only on the logger
    (invisible by default) fails here."""
    from gpgpu import sparse as sparse_module
    from gpgpu.kernel import context_state

    assert 24 <= sparse_module.LOG_PROGRAMS <= 48
    monkeypatch.setattr(sparse_module, "LOG_PROGRAMS", 3)
    counts = [17, 18, 19, 27, 29]
    programs = context_state().programs
    for k in counts:                     # not compiled yet, whatever ran before in this context
        entry = programs.pop(corrigan_kernel(k).key, None)
        if entry is not None:
            entry[1].release()
            entry[0].release()
    A = sp.lil_matrix((5, 30))
    for i, k in enumerate(counts):
        A[i, :k] = 1.0
    capsys.readouterr()
    with SparseStream.from_scipy(A.tocsr(), format="corrigan", dense_split=False) as S:
        np.testing.assert_array_equal(S.matvec(np.ones(30)), counts)
        S.matvec(np.ones(30))
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "compiling 5 fragment programs of the corrigan format" in err[0], err
    assert "17 .. 29" in err[0] and "5 x 30" in err[0] and "format='ellpack'" in err[0]
    with SparseStream.from_scipy(A.tocsr(), format="corrigan", dense_split=False) as S:
        S.matvec(np.ones(30))
    assert capsys.readouterr().err == ""


def test_corrigan_refuses_more_counts_than_the_default_limit_naming_ellpack():
    """A lower triangle of CORRIGAN_MAX_PROGRAMS + 1 rows has that many distinct counts: refused
    before anything is compiled, the error naming format='ellpack' and max_programs."""
    from gpgpu.sparse import CORRIGAN_MAX_PROGRAMS

    k = CORRIGAN_MAX_PROGRAMS + 1
    T = sp.csr_matrix(np.tril(np.ones((k, k))))
    with counters.count() as c, pytest.raises(ValueError, match=f"{k} distinct counts") as e:
        SparseStream.from_scipy(T, format="corrigan")
    assert "format='ellpack'" in str(e.value) and f"max_programs={k}" in str(e.value) and c.passes() == 0
