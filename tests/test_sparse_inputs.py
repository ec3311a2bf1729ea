"""SparseStream against a hostile user: duplicate entries, out= of the wrong kind, a released
matrix, rows and columns wider than a texture, the corrigan format's many programs, and both
sides of the dense-row threshold (explicit and automatic). References are scipy's own float64
products."""
import logging

import numpy as np
import pytest
import scipy.sparse as sp

from gpgpu import SparseStream, Stream, counters
from gpgpu import sparse as sparse_module
from gpgpu.context import max_texture_size

U32 = 2.0 ** -24
VARIANTS = [("ellpack", "copy"), ("ellpack", "scatter"), ("tell", "copy"), ("tell", "scatter"),
            ("corrigan", "copy")]


def within(got, A, x, k, what, ref=None):
    """|got - A x| <= 2 (k + 2) u (|A| |x|), A canonical (duplicates summed), A x in float64
    (or ``ref``, scipy's product of the matrix as the user gave it)."""
    ref = A @ x if ref is None else ref
    bound = 2 * (k + 2) * U32 * (abs(A) @ np.abs(x)) + 1e-30
    err = np.abs(np.asarray(got, dtype=np.float64) - ref)
    assert np.all(err <= bound), (what, float((err / bound).max()))


# --------------------------------------------------------------------------- duplicate entries
def with_duplicates():
    """A 40 x 30 CSR that stores some (i, j) more than once (scipy: their sum): in column 3, a
    full column (dense for dense=8 and for the automatic threshold), three times in row 0 (1 + 2
    + 3 = 6); in row 5, a full row, column 7 twice; ordinary entries twice (0.5 + 0.25); and a
    pair that cancels (1.5 - 1.5 = 0, no entry at all)."""
    m, n = 40, 30
    rng = np.random.default_rng(3)
    indptr, indices, data = [0], [], []
    for i in range(m):
        cols, vals = [3], [float(rng.integers(1, 5))]
        if i == 0:
            cols, vals = [3, 3, 3, 11], [1.0, 2.0, 3.0, -2.0]
        elif i == 5:
            cols = list(range(n)) + [7]
            vals = list(rng.integers(1, 9, n).astype(float)) + [10.0]
        elif i % 4 == 1:
            j = int(rng.integers(4, n))
            cols += [j, j, (j + 5) % n]
            vals += [0.5, 0.25, 1.0]
        elif i % 4 == 2:
            cols += [20, 20]
            vals += [1.5, -1.5]
        indices += cols
        data += vals
        indptr.append(len(indices))
    return sp.csr_matrix((np.array(data), np.array(indices), np.array(indptr)), shape=(m, n))


@pytest.mark.parametrize("fmt, transpose", VARIANTS)
def test_duplicate_entries_are_summed_in_every_format_and_part(fmt, transpose, rng):
    """Duplicates of an entry count as their sum (scipy's A @ x), in the ELLPACK slots, in a
    dense column and in a dense row; the user's non-canonical matrix is left as it was."""
    A = with_duplicates()
    assert not A.has_canonical_format
    before = (A.data.copy(), A.indices.copy(), A.indptr.copy())
    B = A.copy()
    B.sum_duplicates()
    B.eliminate_zeros()                          # canonical: for the bounds (scipy's A @ x the reference)
    assert B[0, 3] == 6.0 and B[5, 7] > 10.0
    x, y = rng.standard_normal(30), rng.standard_normal(40)
    for dense in (8, None, False):
        with SparseStream.from_scipy(A, format=fmt, transpose=transpose, dense=dense) as S:
            within(S.matvec(x), B, x, 31, (fmt, dense, "A x"), ref=A @ x)
            within(S.rmatvec(y), B.T.tocsr(), y, 40, (fmt, dense, "A^T y"), ref=A.T @ y)
            assert abs(S.to_scipy() - B.astype(np.float32)).max() == 0 and S.nnz == B.nnz
            if dense == 8:       # the paths taken: column 3 and row 5 dense (column 20 empty)
                assert list(S.dense_cols) == [3] and list(S.dense_rows) == [5]
    assert not A.has_canonical_format
    for a, b in zip(before, (A.data, A.indices, A.indptr)):
        np.testing.assert_array_equal(a, b)


# --------------------------------------------------------------------------- out=
def test_out_is_of_the_answers_kind_and_length(rng):
    """out= for a Stream input: a vector Stream of the answer's length (too short, 2-D or the
    input itself is a ValueError naming the length); for a numpy input: a float numpy array of
    the answer's shape, written in place and returned (as numpy's out=); the wrong kind is a
    TypeError. A Stream out given with a numpy input is neither used nor released."""
    A = sp.random(20, 15, density=0.3, random_state=12, format="csr")
    x, y = rng.standard_normal(15), rng.standard_normal(20)
    with SparseStream.from_scipy(A) as S, Stream.from_array(x) as xs:
        for bad in (Stream.vector_of(19), Stream(2, 20), Stream(1, 20), Stream.vector_of(21)):
            with pytest.raises(ValueError, match="vector Stream of length 20"):
                S.matvec(xs, out=bad)
            bad.release()
        with pytest.raises(TypeError, match=r"numpy array of shape \(20,\)"):
            S.matvec(x, out=Stream.vector_of(20))
        with pytest.raises(TypeError, match=r"vector Stream of length 20"):
            S.matvec(xs, out=np.zeros(20))
        with pytest.raises(ValueError, match=r"shape \(20,\), got \(19,\)"):
            S.matvec(x, out=np.zeros(19))
        with pytest.raises(ValueError, match=r"shape \(20,\), got \(20, 1\)"):
            S.matvec(x, out=np.zeros((20, 1)))
        with pytest.raises(TypeError, match="float array"):
            S.matvec(x, out=np.zeros(20, dtype=int))
        with pytest.raises(ValueError, match=r"shape \(15,\)"):
            S.rmatvec(y, out=np.zeros(20))
        out = np.full(20, np.nan)
        assert S.matvec(x, out=out) is out
        within(out, A, x, 15, "A x into numpy out")
        back = np.zeros(15, dtype=np.float32)
        assert S.rmatvec(y, out=back) is back
        within(back, A.T.tocsr(), y, 20, "A^T y into numpy out")
        z = np.zeros(20)
        assert S.normal_matvec(np.ones(15), y, out=z) is z
        bound = 2 * (20 + 15 + 4) * U32 * (abs(A) @ (abs(A.T) @ np.abs(y)))
        assert np.all(np.abs(z - A @ (A.T @ y)) <= bound)
        with Stream.vector_of(20) as ys, pytest.raises(ValueError, match="vector Stream of length 20"):
            S.normal_matvec(np.ones(15), ys, out=Stream.vector_of(15))
        with Stream.vector_of(20) as good:
            assert S.matvec(xs, out=good) is good
            within(good.to_array(), A, x, 15, "A x into a Stream out")
    B = sp.random(15, 15, density=0.3, random_state=14, format="csr")
    with SparseStream.from_scipy(B) as S, Stream.from_array(x) as xs:
        with pytest.raises(ValueError, match="must not be the input"):
            S.matvec(xs, out=xs)


# --------------------------------------------------------------------------- released
def test_a_released_sparse_stream_says_so():
    A = sp.random(6, 8, density=0.5, random_state=13, format="csr")
    with SparseStream.from_scipy(A, format="corrigan") as S:
        S.rmatvec(np.ones(6))                  # with a transposed copy, released with it
    for use in (lambda: S.matvec(np.ones(8)), lambda: S.rmatvec(np.ones(6)),
                lambda: S.normal_matvec(np.ones(8), np.ones(6)), S.to_scipy, S.transposed,
                lambda: S._product(Stream.vector_of(8))):
        with pytest.raises(ValueError, match="this SparseStream .* was released"):
            use()
    assert "released" in repr(S)


# --------------------------------------------------------------------------- wider than a texture
@pytest.mark.parametrize("fmt", ["ellpack", "tell", "corrigan"])
def test_a_full_row_wider_than_a_texture_goes_dense_by_itself(fmt, rng):
    """dense=None: a 1 x (GL_MAX_TEXTURE_SIZE + 100) full row (longer than one layout row can
    hold, or one corrigan program unrolls) goes to the dense part instead of failing; so do the
    columns of a (GL_MAX_TEXTURE_SIZE + 100) x 3 matrix in rmatvec's transposed copy."""
    n = max_texture_size() + 100
    A = sp.csr_matrix(rng.integers(1, 4, (1, n)).astype(float))
    x = rng.integers(-2, 3, n).astype(float)                  # exact sums in float32
    with SparseStream.from_scipy(A, format=fmt) as S:
        assert list(S.dense_rows) == [0]
        assert S.matvec(x)[0] == (A @ x)[0]
        np.testing.assert_array_equal(S.rmatvec(np.array([2.0])), 2.0 * A.toarray()[0])
    C = sp.csr_matrix(A.T @ np.array([[1.0, 2.0, -1.0]]))    # n x 3, full
    y = rng.integers(-2, 3, n).astype(float)
    with SparseStream.from_scipy(C, format=fmt) as S:
        np.testing.assert_array_equal(S.rmatvec(y), C.T @ y)
        assert list(S.transposed().dense_rows) == [0, 1, 2]


@pytest.mark.parametrize("fmt", ["ellpack", "tell", "corrigan"])
def test_too_long_for_the_layout_names_the_users_row_or_column(fmt):
    """dense=False keeps everything in the layout: the error names the user's row, and for
    rmatvec's transposed copy the user's column (never "rows" of the copy), with the fix."""
    n = max_texture_size() + 100
    with pytest.raises(ValueError, match=f"row 0 has {n}") as e:
        SparseStream.from_scipy(sp.csr_matrix(np.ones((1, n))), format=fmt, dense=False)
    assert "dense=" in str(e.value) and str(n) in str(e.value)
    with SparseStream.from_scipy(sp.csr_matrix(np.ones((n, 3))), format=fmt, dense=False) as S:
        with pytest.raises(ValueError, match="column 0 of A") as e:
            S.rmatvec(np.ones(n))
    msg = str(e.value)
    assert "A's columns" in msg and "rows of up to" not in msg and "dense=" in msg
    if fmt != "corrigan":
        assert "transpose='scatter'" in msg


# --------------------------------------------------------------------------- corrigan programs
def test_corrigan_refuses_many_programs_and_names_ellpack():
    """One program per distinct row length (003): a 100 x 100 lower triangle (100 counts) is
    refused before any compiling, naming format='ellpack' and max_programs; max_programs
    admits a matrix up to its limit; rmatvec's copy counts A's columns."""
    T = sp.csr_matrix(np.tril(np.ones((100, 100))))
    with counters.count() as c, pytest.raises(ValueError, match="100 distinct counts") as e:
        SparseStream.from_scipy(T, format="corrigan")
    assert "format='ellpack'" in str(e.value) and "max_programs=100" in str(e.value)
    assert c.passes() == 0
    with SparseStream.from_scipy(T, format="ellpack") as S:
        assert S.programs == 1
    F = sp.csr_matrix(np.tril(np.ones((5, 5))))             # 5 counts
    with pytest.raises(ValueError, match="max_programs=4"):
        SparseStream.from_scipy(F, format="corrigan", max_programs=4)
    with SparseStream.from_scipy(F, format="corrigan", max_programs=5) as S:
        assert S.programs == 5
        np.testing.assert_array_equal(S.matvec(np.ones(5)), [1, 2, 3, 4, 5])
    W = sp.csr_matrix((np.ones(10), [0, 1, 0, 1, 0, 2, 0, 2, 0, 3], np.arange(0, 11, 2)), shape=(5, 5))
    assert set(np.diff(W.indptr)) == {2} and set(np.bincount(W.indices)) == {5, 2, 1}
    with SparseStream.from_scipy(W, format="corrigan", max_programs=2) as S:
        with pytest.raises(ValueError, match="transposed copy of A .* A's columns have 3 distinct"):
            S.rmatvec(np.ones(5))
    with pytest.raises(ValueError, match="max_programs must be a positive int"):
        SparseStream.from_scipy(F, format="corrigan", max_programs=0)


def test_corrigan_logs_the_programs_its_first_product_compiles(caplog, monkeypatch):
    """More than LOG_PROGRAMS programs to compile: the first product says how many (INFO on
    the gpgpu.sparse logger); a second matrix of the same counts compiles none and says nothing."""
    from gpgpu.kernel import context_state

    monkeypatch.setattr(sparse_module, "LOG_PROGRAMS", 2)
    counts = [21, 22, 23, 25, 26]
    programs = context_state().programs
    for k in counts:                     # not compiled yet, whatever ran before in this context
        entry = programs.pop(sparse_module.corrigan_kernel(k).key, None)
        if entry is not None:
            entry[1].release()
            entry[0].release()
    A = sp.lil_matrix((5, 30))
    for i, k in enumerate(counts):
        A[i, :k] = 1.0
    with caplog.at_level(logging.INFO, logger="gpgpu.sparse"):
        with SparseStream.from_scipy(A.tocsr(), format="corrigan", dense=False) as S:
            np.testing.assert_array_equal(S.matvec(np.ones(30)), counts)
            S.matvec(np.ones(30))
        with SparseStream.from_scipy(A.tocsr(), format="corrigan", dense=False) as S:
            S.matvec(np.ones(30))
    said = [r.getMessage() for r in caplog.records if r.name == "gpgpu.sparse"]
    assert len(said) == 1 and "compiling 5 fragment programs of the corrigan format" in said[0], said
    assert "21 .. 26" in said[0] and "5 x 30" in said[0]


# --------------------------------------------------------------------------- the threshold
@pytest.mark.parametrize("fmt", ["ellpack", "tell", "corrigan"])
def test_dense_threshold_keeps_exactly_dense_non_zeros(fmt, rng):
    """dense=6: a row (a column) of exactly 6 non-zeros stays in the layout, one of 7 goes dense:
    one dense plane (plane_product shades one plane of 12), and the products are scipy's."""
    A = sp.lil_matrix((12, 12))
    for i in range(12):
        A[i, (i + 6) % 12] = 1.0 + i
    A[2, 0:6] = rng.integers(1, 5, 6)           # 6 non-zeros (cols 0..5; col 8 too: 7)
    A[2, 8] = 0.0
    A[4, 5:12] = rng.integers(1, 5, 7)          # 7 non-zeros (cols 5..11, col 10 its own)
    A = A.tocsr()
    A.eliminate_zeros()
    assert np.diff(A.indptr)[2] == 6 and np.diff(A.indptr)[4] == 7
    x, y = rng.standard_normal(12), rng.standard_normal(12)
    for M in (A, A.T.tocsr()):
        rows = M is A
        with SparseStream.from_scipy(M, format=fmt, dense=6, transpose="scatter" if fmt != "corrigan" else "copy") as S:
            assert list(S.dense_rows if rows else S.dense_cols) == [4]
            assert (S.dense_cols if rows else S.dense_rows).size == 0
            if fmt != "corrigan":
                assert S.K == (6 if rows else 2)       # A's row 4 out of the copy's rows: 2
            with counters.count() as c:
                got = S.matvec(x)
            within(got, M, x, 12, (fmt, rows, "A x"))
            if rows:                            # the dense rows' inner products: one plane
                assert c.fragments("plane_product") == 12
            with counters.count() as d:
                back = S.rmatvec(y)             # by scattering: the dense columns' products
            within(back, M.T.tocsr(), y, 12, (fmt, rows, "A^T y"))
            if fmt != "corrigan" and not rows:
                assert d.fragments("plane_product") == 12


def test_automatic_threshold_keeps_the_longer_rows_on_a_tie(rng):
    """8 rows of 40 and 2 full rows of 50: keeping every row (K = 50, 10 x 50 texels) costs as
    many texels as moving the 2 full rows out (10 x 40 + 2 x 50); the tie keeps them (no dense
    pass): K = 50, no plane_product pass."""
    A = np.zeros((10, 50))
    for i in range(8):
        A[i, rng.choice(50, 40, replace=False)] = rng.integers(1, 5, 40)
    A[8:] = rng.integers(1, 5, (2, 50))
    A = sp.csr_matrix(A)
    with SparseStream.from_scipy(A, format="ellpack") as S:
        assert S.dense_rows.size == 0 and S.dense_cols.size == 0 and S.K == 50
        x = rng.standard_normal(50)
        with counters.count() as c:
            got = S.matvec(x)
        within(got, A, x, 50, "A x")
        assert c.passes("plane_product") == 0 and c.passes() == 1


def test_what_is_not_a_vector_is_named_and_at_has_the_products_name():
    """``S @ x`` was numpy's "matmul: Input operand 0 does not have enough dimensions"; a scipy
    column, None or a string in matvec "expected a vector of length 7, got shape ()"; a column
    (7, 1) gave its shape without the fix."""
    A = sp.random(5, 7, density=0.4, format="csr", random_state=1)
    x = np.arange(1.0, 8.0)
    with SparseStream.from_scipy(A) as S:
        for expr in (lambda: S @ x, lambda: np.ones(5) @ S):
            with pytest.raises(TypeError, match=r"a SparseStream has no @ operator .*use S\.matvec\(x\) for A x "
                                                r"and S\.rmatvec\(y\) for Aᵀ y"):
                expr()
        with pytest.raises(TypeError, match=r"matvec x: expected a numpy vector of length 7 or a vector Stream, "
                                            r"got a scipy\.sparse csr_matrix of shape \(7, 1\): pass "
                                            r"v\.toarray\(\)\.ravel\(\)"):
            S.matvec(sp.csr_matrix(x[:, None]))
        for bad, kind in ((None, "NoneType"), ("abc", "str")):
            with pytest.raises(TypeError, match=f"rmatvec y: expected a numpy vector of length 5 or a vector "
                                                f"Stream, got {kind}$"):
                S.rmatvec(bad)
        with pytest.raises(ValueError, match=r"expected a vector of length 7, got shape \(7, 1\): pass it 1-D"):
            S.matvec(x[:, None])
        np.testing.assert_allclose(S.matvec(x), A @ x, rtol=4e-7)   # vectors pass (positive terms: (k + 1) u)


def test_what_is_not_a_matrix_is_named_by_its_type():
    """A LinearOperator or None was "A: expected a real matrix, got dtype object", which named
    numpy's view of it rather than what was passed."""
    import scipy.sparse.linalg as spl

    for bad, kind in ((spl.aslinearoperator(sp.eye(3)), "scipy.MatrixLinearOperator"), (None, "NoneType"),
                      (lambda v: v, "function")):
        with pytest.raises(ValueError, match=r"A: expected a real matrix \(a scipy\.sparse matrix or array, or a "
                                             r"2-D numeric array: .*a LinearOperator or a function will not do\), "
                                             f"got {kind}, not an array of numbers"):
            SparseStream.from_scipy(bad)
    with pytest.raises(ValueError, match=r"expected a real matrix .* got dtype <U1"):
        SparseStream.from_scipy([["a", "b"]])


@pytest.mark.parametrize("sort", ["no", 1, None])
def test_sort_must_be_a_flag(sort):
    """sort="no" was taken as true: the corrigan rows were sorted."""
    with pytest.raises(ValueError, match=f"sort must be True or False, got {sort!r}"):
        SparseStream.from_scipy(sp.eye(4, format="csr"), format="corrigan", sort=sort)
