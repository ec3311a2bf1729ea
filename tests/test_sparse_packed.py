"""The packed sparse format (beyond papers 002 and 003, gpgpu.sparse, format="packed"): value and
column index two entries an RGBA texel, long rows split into segments whose partial sums a
second pass adds. Against scipy in float64 within float32's bound, on every path the layout
takes (one pass; split rows all alike; split rows of unequal lengths; partials re-folded), with
folded vectors, empty rows, dense rows and columns, and the float32 column-index limit."""
import re

import numpy as np
import pytest
import scipy.sparse as sp

from gpgpu import SparseStream, Stream, counters, sparse, stream
from gpgpu.kernel import GLSL_DIR

U32 = 2.0 ** -24


def within_float32(got, A, x, what):
    """|got - A x| <= gamma_(k+2) (|A| |x|) row by row, k the row's non-zeros (k - 1 additions
    in any order, whatever the split into partial sums; one product; a and x rounded to
    float32), A x in float64. A texel one off, a swapped swizzle (value for column), a segment
    summed twice or left out, or a wrong (first, count) is O(1) wrong and fails it."""
    A = sp.csr_matrix(A)
    k = np.maximum(np.diff(A.indptr), 1)
    g = (k + 2) * U32 / (1 - (k + 2) * U32)
    err = np.abs(np.asarray(got, dtype=np.float64) - A @ x)
    bound = g * (abs(A) @ np.abs(x)) + 1e-300
    assert np.all(err <= bound), (what, float((err / bound).max()), int(np.argmax(err / bound)))


def uneven(rng, m=37, n=29):
    """Rows of 0 .. 17 non-zeros with mixed signs: empty rows (5, 20), a row of every column
    (11, longer than any split), a full column (7): rows short and long, columns of 1 .. m."""
    counts = rng.integers(1, 6, size=m)
    counts[[3, 30]] = 17
    counts[[5, 20]] = 0
    rows = np.repeat(np.arange(m), counts)
    cols = np.concatenate([rng.choice(n, size=c, replace=False) for c in counts])
    vals = rng.uniform(0.5, 2.0, rows.size) * rng.choice([-1.0, 1.0], rows.size)
    A = sp.csr_matrix((vals, (rows, cols)), shape=(m, n)).tolil()
    A[11, :] = rng.standard_normal(n)
    A[[i for i in range(m) if i not in (5, 20)], 7] = rng.standard_normal((m - 2, 1))
    return A.tocsr()


def layout(S):
    return ("one pass" if S.single else "split, alike" if S.uniform else "split, unequal")


@pytest.mark.parametrize("fmt", ["packed", "split"])
@pytest.mark.parametrize("fold", [None, 6])
@pytest.mark.parametrize("opts, path", [
    ({}, "split, unequal"),                          # automatic segment: the long rows split
    ({"segment": 3}, "split, unequal"),              # odd segment: the last texel half used
    ({"segment": 29}, "one pass"),                   # every row one segment, y written at once
    ({"segment": 29, "fold": 5}, "split, alike"),    # a given fold: partials re-folded into y
])
def test_packed_products_against_scipy_float64(opts, path, fold, fmt, rng, monkeypatch):
    """format="split" is the same segments without the packing (two float textures).
    fold=6 folds x, y and (for the automatic fold) the partials into rows of 6 texels, so
    segments, rows and the (first, count) texels cross texture rows."""
    monkeypatch.setattr(stream, "FOLD_WIDTH", fold)
    A = uneven(rng)
    m, n = A.shape
    with SparseStream.from_scipy(A, format=fmt, dense=False, **opts) as S:
        assert layout(S) == path and S.format == fmt and S.empty_rows == 2
        if path != "one pass":
            assert S.split > 1 or "fold" in opts
            if fold or "fold" in opts:
                assert S.p_shape[0] > 1                # the partials folded over texture rows
        x, y = rng.standard_normal(n), rng.standard_normal(m)
        got = S.matvec(x)
        within_float32(got, A, x, f"A x {opts}")
        assert got[5] == 0 and got[20] == 0             # empty rows: zero, not a neighbour's sum
        within_float32(S.rmatvec(y), A.T, y, f"A^T y {opts}")
        # the transposed copy is packed too, chosen from A's columns (the full column splits)
        assert S.transposed().format == fmt
        assert (abs(S.to_scipy() - A.astype(np.float32).astype(np.float64)) > 0).nnz == 0


def test_packed_rows_all_split_alike_take_computed_places(rng):
    """nug30's shape in small: every row the same length, longer than a segment: each row's
    segments at computed places (no (first, count) texel), summed by the second pass."""
    m, n, k = 50, 90, 30
    rows = np.repeat(np.arange(m), k)
    cols = np.concatenate([rng.choice(n, size=k, replace=False) for _ in range(m)])
    A = sp.csr_matrix((rng.standard_normal(rows.size), (rows, cols)), shape=(m, n))
    with SparseStream.from_scipy(A, format="packed") as S:
        assert (S.segment, S.split, S.uniform, S.single) == (8, 4, True, False)
        assert "meta" not in S._streams
        x = rng.standard_normal(n)
        within_float32(S.matvec(x), A, x, "A x, rows of 30 in 4 segments of 8")


def test_packed_uneven_columns_no_padding_to_the_longest(rng):
    """nug30's A^T in small: columns of 2 among a few of 40. The transposed copy splits the
    long ones and pads none of the short ones to 40 (ELLPACK's K would be 40)."""
    m, n = 60, 300
    rows = np.concatenate([np.repeat(np.arange(m), 2)[:2 * m], np.repeat(np.arange(m), 4)])
    cols = np.concatenate([np.arange(2 * m) % n + 20, np.tile(np.arange(4) * 5, m)])
    A = sp.csr_matrix((rng.standard_normal(rows.size), (rows, cols)), shape=(m, n))
    A.sum_duplicates()
    with SparseStream.from_scipy(A, format="packed") as S:
        T = S.transposed()
        assert T.segment <= 4 and T.split > 1 and not T.uniform
        assert T.fetches()["entries"] < 2 * A.nnz            # ELLPACK would store n x 40
        y = rng.standard_normal(m)
        within_float32(S.rmatvec(y), A.T, y, "A^T y")


@pytest.mark.parametrize("fold", [None, 6])
def test_packed_with_dense_rows_and_columns(fold, rng, monkeypatch):
    """dense=8 moves the full row and the full column to the dense part (002's dense rows
    extracted); dense=None moves only rows longer than PACKED_DENSE_ROW (here 16)."""
    monkeypatch.setattr(stream, "FOLD_WIDTH", fold)
    A = uneven(rng)
    m, n = A.shape
    x, y = rng.standard_normal(n), rng.standard_normal(m)
    with SparseStream.from_scipy(A, format="packed", dense=8) as S:
        assert 11 in S.dense_rows and 7 in S.dense_cols
        within_float32(S.matvec(x), A, x, "A x, dense part")
        within_float32(S.rmatvec(y), A.T, y, "A^T y, dense part")
    monkeypatch.setattr(sparse, "PACKED_DENSE_ROW", 16)
    with SparseStream.from_scipy(A, format="packed") as S:
        assert sorted(S.dense_rows) == [3, 11, 30] and S.dense_cols.size == 0
        within_float32(S.matvec(x), A, x, "A x, automatic dense rows")


def test_packed_passes_and_fetches(rng):
    """One pass where no row is split, two where rows are (any number of segments), counted;
    and the kernel fetches one RGBA texel for two entries: 1.5 fetches a non-zero with x's
    gathers, against ELLPACK's 3 (value, column, x)."""
    src = (GLSL_DIR / "sparse_packed.frag").read_text()
    loop = src[src.index("for (int h"):src.index("#if")]
    assert loop.count("texRECT4(") == 1 and loop.count("texVECTOR(") == 2
    m, n = 40, 50
    for k, segment, passes in ((8, None, 1), (8, 3, 2), (24, None, 2)):
        rows = np.repeat(np.arange(m), k)
        cols = np.concatenate([rng.choice(n, size=k, replace=False) for _ in range(m)])
        A = sp.csr_matrix((rng.standard_normal(rows.size), (rows, cols)), shape=(m, n))
        with SparseStream.from_scipy(A, format="packed", segment=segment) as S, \
                Stream.vector_of(n, data=rng.standard_normal(n)) as xs, Stream.vector_of(m) as ys:
            S.matvec(xs, out=ys)                              # compile outside the count
            with counters.count(time=False) as c:
                S.matvec(xs, out=ys)
            assert c.passes() == passes, (k, segment, c.passes())
            if passes == 1:
                assert S.fetches()["per_nonzero"] == 1.5
    with SparseStream.from_scipy(A, format="ellpack") as E, SparseStream.from_scipy(A, format="split") as T:
        assert E.fetches()["per_nonzero"] == 3
        with counters.count(time=False) as c:
            T.matvec(rng.standard_normal(n))
        assert c.passes() == 2 and T.fetches()["per_nonzero"] > 3   # split: 3 a slot, plus pass 2


def test_packed_refuses_more_columns_than_float32_indexes():
    """Column indexes are float32 texels: exact up to 2^24. A matrix with 2^24 + 1 columns is
    refused when built, naming the limit and what to do, not answered wrongly."""
    n = 2 ** 24 + 1
    A = sp.csr_matrix(([1.0], ([0], [n - 1])), shape=(1, n))
    for fmt in ("packed", "split"):
        with pytest.raises(ValueError, match=re.escape("2^24 = 16777216") + ".*column blocks"):
            SparseStream.from_scipy(A, format=fmt)


def test_packed_options_are_checked(rng):
    A = uneven(rng)
    with pytest.raises(ValueError, match="segment= is an option of format='packed'"):
        SparseStream.from_scipy(A, format="ellpack", segment=4)
    with pytest.raises(ValueError, match="fold= is an option of format='packed'"):
        SparseStream.from_scipy(A, format="tell", fold=64)
    for bad in (0, 65, 2.5, True):
        with pytest.raises(ValueError, match="segment must be 1 .. 64"):
            SparseStream.from_scipy(A, format="packed", segment=bad)
    with pytest.raises(ValueError, match="transpose='scatter' walks the ELLPACK layouts"):
        SparseStream.from_scipy(A, format="packed", transpose="scatter")


def test_matrix_free_gpu_takes_the_packed_format():
    """The matrix-free GPU back end builds A, its transposed copy and A∘A by name
    (format='packed') and solves a Gruca-like LP to HiGHS's objective."""
    from experiments.mfipm.common import highs_objective
    from gpgpu.lp import gruca_like, solve

    p = gruca_like(16, seed=2, slack=True)
    ref, _ = highs_objective(p)
    res = solve(p, method="matrix-free", backend="gpu", eps=1e-8, format="packed")
    assert res.status == "optimal" and abs(res.objective - ref) <= 1e-6 * abs(ref)


def test_cg_takes_a_packed_sparse_stream():
    """CG on a SparseStream of the packed format: its scaling reads max |A| from the stream
    (here 4e6, outside [2^-16, 2^16], so A is scaled by a power of two). 2-D Poisson 16²
    against scipy's direct solve in float64; before the packed format kept max |A| in a texel,
    CG raised KeyError."""
    import scipy.sparse.linalg as spla

    from gpgpu.cg import cg

    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(16, 16))
    A = ((sp.kron(sp.eye(16), T) + sp.kron(T, sp.eye(16))) * 1e6).tocsr()
    b = np.random.default_rng(3).standard_normal(256)
    with SparseStream.from_scipy(A, format="packed") as S:
        x, info = cg(S, b, rtol=1e-5)
    assert info == 0
    assert np.linalg.norm(A @ x - b) <= 3e-5 * np.linalg.norm(b)
    want = spla.spsolve(A.tocsc(), b)
    assert np.linalg.norm(x - want) <= 1e-3 * np.linalg.norm(want)


@pytest.mark.parametrize("fmt", sparse.FORMATS)
def test_max_abs_every_format_with_its_dense_part(fmt, rng):
    """max_abs() is max |a_ij| over everything A stores, in float32, for every format: the
    largest magnitude negative (a plain max would miss it), in the sparse part, in a dense row
    or in a dense column (a max of the sparse texture alone would miss those), and values far
    below the column indexes (the packed texel holds both: a max over its four channels would
    answer a column index). Against numpy on the float32-rounded matrix; a released one raises."""
    A = uneven(rng) * 0.01                             # |a| <= 0.04 << the column indexes 0 .. 28
    for where in ("sparse", "dense row", "dense column"):
        B = A.tolil()
        i, j = {"sparse": (2, 4), "dense row": (11, 3), "dense column": (9, 7)}[where]
        B[i, j] = -1.0 / 3.0                           # rounds in float32
        B = B.tocsr()
        want = float(np.abs(B.data.astype(np.float32)).max())
        assert want == np.float32(1.0 / 3.0)
        with SparseStream.from_scipy(B, format=fmt, dense=8) as S:
            assert 11 in S.dense_rows and 7 in S.dense_cols
            got = S.max_abs()
            assert isinstance(got, float) and got == want, (fmt, where, got, want)
            assert S.transposed().max_abs() == want
    with SparseStream.from_scipy(sp.csr_matrix((3, 4)), format=fmt) as Z:
        assert Z.max_abs() == 0.0
    with pytest.raises(ValueError, match="released"):
        Z.max_abs()
