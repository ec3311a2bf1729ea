"""Inputs far from 1 (and far from float32's range) through the dense solves, A D² Aᵀ, the sparse
products and CG: a GPU flushes float32's subnormal numbers (below 1.2e-38) to zero, so the numpy
front ends scale by powers of two (exact) and undo it in float64, and what cannot be represented
is an error, never zeros, inf or NaN. The hand counts of ``SparseStream.fetches()`` too.
References: numpy and scipy in float64, or counted by hand.
"""
import numpy as np
import pytest
import scipy.sparse as sp

import gpgpu
from gpgpu import SparseStream, Stream
from gpgpu.adat import pair_records, pair_table, form_points

U32 = 2.0 ** -24
FORMATS = ["ellpack", "tell", "corrigan", "packed", "split"]


def _system(n=10, seed=0):
    rng = np.random.default_rng(seed)
    B = rng.random((n, n))
    return B @ B.T + n * np.eye(n), rng.standard_normal(n)


def _solve_by(path, A, b):
    """x with A x = b by one of the GPU's dense solves (numpy A and b)."""
    if path == "lu":
        return gpgpu.lu_solve(A, b)
    if path == "lu full, gpu pivots":
        with gpgpu.lu_factor(A, pivoting="full", pivots="gpu") as f:
            return gpgpu.lu_solve(f, b)
    if path == "lu blocked":
        with gpgpu.lu_factor(A, variant="blocked") as f:
            return gpgpu.lu_solve(f, b)
    if path == "gauss_jordan":
        return gpgpu.gauss_jordan(A, b)
    return gpgpu.cho_solve(np.linalg.cholesky(A), b, storage="packed" if path == "cho packed" else "full")


PATHS = ["lu", "lu full, gpu pivots", "lu blocked", "gauss_jordan", "cho", "cho packed"]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("a_scale, b_scale", [(1.0, 1e-46), (1.0, 1e-200), (2.0 ** 100, 1e45), (2.0 ** -100, 1e-70)])
def test_dense_solves_keep_right_hand_sides_outside_float32s_range(path, a_scale, b_scale, ctx):
    """b of 1e45 (A of 1e30, x of 1e15) was refused ("b: values overflow float32") though the
    solution fits float32; b of 1e-46 and 1e-200 gave zeros. Every solve scales b by a power of
    two before the upload and x back in float64."""
    A, b = _system()
    A, b = A * a_scale, b * b_scale
    ref = np.linalg.solve(A, b)
    x = _solve_by(path, A, b)
    assert x.dtype == np.float64
    np.testing.assert_allclose(x, ref, rtol=0, atol=2e-6 * np.abs(ref).max())


@pytest.mark.parametrize("path", ["lu", "gauss_jordan", "cho"])
def test_right_hand_side_columns_of_different_scales(path, ctx):
    """Two right-hand sides, 1e-46 and 1e45 (with A of 1e30): each column scaled on its own."""
    A, b = _system()
    A = A * 2.0 ** 100
    B = np.stack([b * 1e-46, b[::-1] * 1e45], axis=1)
    ref = np.linalg.solve(A, B)
    X = _solve_by(path, A, B)
    for j in range(2):
        np.testing.assert_allclose(X[:, j], ref[:, j], rtol=0, atol=2e-6 * np.abs(ref[:, j]).max())


def test_an_overflowing_float32_solution_is_an_error_not_nan(ctx):
    """A triangular matrix of pivots 1e-5 and ones above: x grows like 1e5^k, beyond float32 on
    the GPU, and lu_solve and gauss_jordan answered NaN (inf - inf) without a word."""
    n = 12
    U = np.eye(n) * 1e-5 + np.triu(np.ones((n, n)), 1)
    assert np.abs(np.linalg.solve(U, np.ones(n))).max() > 1e50
    for solve in (gpgpu.lu_solve, gpgpu.gauss_jordan):
        with pytest.raises(FloatingPointError, match="overflows float32"):
            solve(U, np.ones(n))


# --------------------------------------------------------------------------- A D² Aᵀ
ADAT_FORMS = [dict(), dict(domain="square"), dict(storage="packed"), dict(product="inner"),
              dict(product="inner", domain="square"), dict(product="inner4")]


@pytest.mark.parametrize("form", ADAT_FORMS, ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()) or "outer")
@pytest.mark.parametrize("a_scale, d_scale", [(1e-20, 1.0), (1e40, 1e-70), (1.0, 1e-45)])
def test_adat_every_form_far_from_float32s_range(form, a_scale, d_scale, ctx):
    """Every form of adat goes through the scaling: A of 1e-20 (C of 1e-40) gave zeros, and A of
    1e40 (C of 1e10 with d of 1e-70) was refused as overflowing float32."""
    rng = np.random.default_rng(2)
    A, d = rng.random((7, 9)) * a_scale, (rng.random(9) + 0.1) * d_scale
    ref = (A * d) @ A.T
    C = gpgpu.adat(A, d, **form)
    assert C.dtype == np.float64
    if form.get("domain") != "square":
        ref = np.tril(ref)
        C = np.tril(C)
    np.testing.assert_allclose(C, ref, rtol=0, atol=1e-6 * np.abs(ref).max())


def test_adat_of_a_stream_with_a_numpy_d_is_not_scaled(ctx):
    """A Stream A with a numpy d = 3: d was uploaded as 3/4 (its power-of-two scaling) and the
    Stream C, which nothing scales back, came out 4 times too small."""
    A = np.arange(1.0, 7.0).reshape(2, 3)
    d = np.full(3, 3.0)
    with Stream.from_array(A) as As:
        C = gpgpu.adat(As, d)
        got = C.to_array()
        C.release()
    np.testing.assert_allclose(np.tril(got), np.tril((A * d) @ A.T), rtol=1e-6)


def test_adat_refuses_a_tiny_negative_weight(ctx):
    """d = -3e-40 is negative, but float32's subnormal number is flushed to zero on the GPU,
    whose min reduction then said d >= 0; the sign is checked on the host."""
    A = np.ones((2, 3))
    d = np.array([1.0, -3e-40, 1.0])
    with pytest.raises(ValueError, match="non-negative.*-3e-40"):
        gpgpu.adat(A, d)
    with Stream.from_array(A) as As, pytest.raises(ValueError, match="non-negative"):
        gpgpu.adat(As, d)


def test_pair_table_refuses_products_below_float32s_normal_range(ctx):
    """A of 1e-20: every product A(i, k) A(j, k) is about 1e-40, which the GPU flushes, and C
    came out zero. Products negligible beside the largest (a row of 1e-25 among ones) are kept."""
    A = sp.random(6, 9, density=0.5, random_state=1, format="csr")
    with pytest.raises(ValueError, match="below float32's normal range"):
        pair_records(A * 1e-20)
    B = A.toarray() + np.eye(6, 9)
    B[1] *= 1e-25                                        # products 1e-50 beside products of 1
    d = np.linspace(0.5, 1.5, 9)
    with pair_table(B) as t, Stream.from_array(d) as ds, form_points(t, ds) as C:
        got = C.to_array().astype(np.float64)
    ref = np.tril((B * d) @ B.T)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-6 * np.abs(ref).max())


# --------------------------------------------------------------------------- sparse products
def _within(got, ref, absref, k, what):
    """|got - ref| <= 2 (k + 2) u (|A| |x|) entry by entry, no absolute slack."""
    err = np.abs(np.asarray(got, dtype=np.float64) - ref)
    assert np.all(err <= 2 * (k + 2) * U32 * absref), (what, float(np.max(err / np.maximum(absref, 1e-300))))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("a_scale, v_scale", [(1e-30, 1e-10), (1.0, 1e-40), (1e30, 1e-60)])
def test_sparse_products_far_from_float32s_range(fmt, a_scale, v_scale, ctx):
    """A of 1e-30 times x of 1e-10 (products of 1e-40) gave zeros; so did x of 1e-40. A numpy
    vector is uploaded scaled by a power of two and the product scaled back in float64."""
    A = sp.random(9, 12, density=0.4, random_state=5, format="csr") * a_scale
    rng = np.random.default_rng(3)
    x, y, theta = rng.standard_normal(12) * v_scale, rng.standard_normal(9) * v_scale, rng.random(12) + 0.1
    k = 12
    with SparseStream.from_scipy(A, format=fmt) as S:
        got = S.matvec(x)
        assert got.dtype == np.float64
        _within(got, A @ x, abs(A) @ np.abs(x), k, "A x")
        _within(S.rmatvec(y), A.T @ y, abs(A.T) @ np.abs(y), k, "A^T y")
        z = S.normal_matvec(theta * v_scale, y)
        _within(z, A @ (theta * v_scale * (A.T @ y)), abs(A) @ (theta * v_scale * (abs(A.T) @ np.abs(y))),
                2 * k + 2, "A theta A^T y")


def test_sparse_product_beyond_float32_is_an_error_not_inf(ctx):
    A = sp.csr_matrix(np.array([[1e20, 0.0], [2e20, 1e20]]))
    with SparseStream.from_scipy(A) as S, pytest.raises(FloatingPointError, match="overflows float32"):
        S.matvec(np.array([1e20, 1e20]))


def test_sparse_refuses_entries_the_gpu_flushes(ctx):
    """Entries of 1e-45 are float32 subnormal numbers: every product dropped them. An entry
    negligible beside the largest (1e-45 beside 1) is kept, as float32 rounding would."""
    A = sp.csr_matrix(np.array([[1e-45, 0.0], [3e-45, 2e-45]]))
    with pytest.raises(ValueError, match=r"below float32's normal range.*scale A up"):
        SparseStream.from_scipy(A)
    B = sp.csr_matrix(np.array([[1.0, 1e-45], [0.0, 2.0]]))
    with SparseStream.from_scipy(B) as S:
        np.testing.assert_allclose(S.matvec(np.ones(2)), [1.0, 2.0], rtol=1e-7)


# --------------------------------------------------------------------------- fetches, by hand
def _rows_matrix(lengths, n=9):
    rows = np.repeat(np.arange(len(lengths)), lengths)
    cols = np.concatenate([np.arange(k) for k in lengths])
    return sp.csr_matrix((np.arange(1.0, rows.size + 1), (rows, cols)), shape=(len(lengths), n))


@pytest.mark.parametrize("fmt, lengths, fetches, entries", [
    # rows of 5, 1, 3 in segments of 2: 3 + 1 + 2 = 6 segments; unequal: pass 2 reads m = 3 meta
    # texels and 6 partials. packed: 1 texel + 2 gathers a segment; split: 3 a slot
    ("packed", [5, 1, 3], 6 * 3 + 6 + 3, 12),
    ("split", [5, 1, 3], 6 * 6 + 6 + 3, 12),
    # rows of 4, 4, 4: 2 segments each, uniform: no meta texels, pass 2 reads the 6 partials
    ("packed", [4, 4, 4], 6 * 3 + 6, 12),
    ("split", [4, 4, 4], 6 * 6 + 6, 12),
    # rows of 2, 1, 2: one segment each, one pass writes y: no pass 2
    ("packed", [2, 1, 2], 3 * 3, 6),
    ("split", [2, 1, 2], 3 * 6, 6),
    # TELL: K = 5 slots a row, padding included, 3 fetches a slot (value, column, x); ELLPACK:
    # 3 an entry and the column where a row shorter than K stops (rows of 1 and 3)
    ("ellpack", [5, 1, 3], 3 * 9 + 2, 15),
    ("tell", [5, 1, 3], 3 * 15, 15),
    # corrigan: only the 9 non-zeros, 3 fetches each
    ("corrigan", [5, 1, 3], 3 * 9, 9),
])
def test_fetches_counted_by_hand(fmt, lengths, fetches, entries, ctx):
    A = _rows_matrix(lengths)
    kw = dict(segment=2) if fmt in ("packed", "split") else dict(dense=False)
    with SparseStream.from_scipy(A, format=fmt, **kw) as S:
        f = S.fetches()
        assert (f["fetches"], f["entries"]) == (fetches, entries)
        assert f["per_nonzero"] == fetches / sum(lengths)
        np.testing.assert_allclose(S.matvec(np.ones(9)), A @ np.ones(9), rtol=1e-6)


# --------------------------------------------------------------------------- CG's small A
def _poisson(k):
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(k, k))
    return (sp.kron(sp.eye(k), T) + sp.kron(T, sp.eye(k))).tocsr()


@pytest.mark.parametrize("kind", ["sparse", "dense"])
def test_cg_scales_a_tiny_user_matrix_on_the_gpu(kind, ctx):
    """A SparseStream (or Stream) A of 1e-30, which cg scales up on the GPU (d scaled before each
    product): without that, d^T A d of 1e-30 d's fell below float32's range and cg broke down
    ("not positive definite") at iteration 14."""
    A = _poisson(6) * 1e-30
    b = np.random.default_rng(3).standard_normal(36)
    ref = np.linalg.solve(A.toarray(), b)
    S = SparseStream.from_scipy(A) if kind == "sparse" else Stream.from_array(A.toarray())
    with S:
        x, info = gpgpu.cg(S, b, rtol=1e-6)
    assert info == 0
    np.testing.assert_allclose(x, ref, rtol=0, atol=1e-4 * np.abs(ref).max())
