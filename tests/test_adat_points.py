"""A D² Aᵀ from the non-zeros of A, one pass of points with additive blending (beyond the papers):
:func:`gpgpu.adat.pair_table` and :func:`gpgpu.adat.form_points`.

Tolerance. Entry (i, j) of C is the sum of the N = N_ij terms t_k = a_ik a_jk d_k over the columns
k where both a_ik and a_jk are non-zero. The GPU forms each term with three float32 roundings (the
coefficient a_ik a_jk, formed in float64 on the host and rounded once into the pair table; d_k
rounded on upload; the product in the vertex program) and the blender adds the N terms one after
the other in float32 (N - 1 roundings). With u = 2^-24 and gamma_k = k u / (1 - k u), the standard
bound for recursive summation (Higham, Accuracy and Stability, (4.4)) gives

    |C_ij - sum_k t_k| <= gamma_{N+2} S_ij,    S_ij = sum_k |a_ik a_jk d_k|.

The tests allow twice that, 2 gamma_{N+2} S_ij (a blender that truncated instead of rounding to
nearest has u = 2^-23), plus 2^-50 S_ij for numpy's float64 reference. Entries with no term
(S_ij = 0, and the whole upper triangle) must be exactly 0. On llvmpipe the result is moreover
bit-for-bit the float32 emulation of the same sum in the order of k (test_bitwise_...).
"""
import numpy as np
import pytest
import scipy.sparse as sp

from gpgpu import Stream, counters, stream
from gpgpu.adat import INDEX_LIMIT, KERNELS, AdatPoints, form, form_points, pair_records, pair_table
from gpgpu.blas1 import KERNELS as L1, whole
from gpgpu.passes import NotReplayable, RecordedPlan, recording

U = 2.0 ** -24


def reference(A, d):
    """float64 C = A diag(d) Aᵀ (lower triangle), S = |A| diag(|d|) |A|ᵀ and the term counts N."""
    A = sp.csc_matrix(A, dtype=np.float64)
    D = sp.diags(np.asarray(d, np.float64))
    C = (A @ D @ A.T).toarray()
    S = (abs(A) @ abs(D) @ abs(A).T).toarray()
    P = (A != 0).astype(np.float64)
    N = (P @ P.T).toarray()
    return np.tril(C), np.tril(S), np.tril(N)


def check(C, A, d, shift=0.0):
    """Assert that C (m x m, from the GPU) is A diag(d) Aᵀ (+ shift I) within the bound of the
    module docstring, its upper triangle exactly 0."""
    ref, S, N = reference(A, d)
    m = ref.shape[0]
    if shift:
        ref = ref + shift * np.eye(m)
        S = S + abs(shift) * np.eye(m)
        N = N + np.eye(m)                       # one more float32 add on the diagonal
    C = np.asarray(C, np.float64)
    assert C.shape == (m, m)
    assert not np.triu(C, 1).any(), "the upper triangle was written"
    k = N + 2
    tol = 2 * (k * U / (1 - k * U)) * S + 2.0 ** -50 * S
    err = abs(C - ref)
    bad = err > tol
    assert not bad.any(), (f"{bad.sum()} entries off, e.g. at {tuple(np.argwhere(bad)[0])}: "
                           f"{C[bad][0]!r} vs {ref[bad][0]!r} (tol {tol[bad][0]:.3g})")


def run(A, d, **kw):
    """form_points of A and d (numpy) as a float64 array."""
    with pair_table(A) as t, Stream.vector_of(len(d), data=np.asarray(d)) as ds:
        C = form_points(t, ds, **kw)
        out = C.to_array().astype(np.float64)
        C.release()
    return out


def wide_d(rng, n):
    """d positive over 12 decades, 1e-6 .. 1e6."""
    return 10.0 ** rng.uniform(-6, 6, n)


def random_sparse(rng, m, n, density, fmt):
    A = sp.random(m, n, density=density, format=fmt, random_state=rng,
                  data_rvs=lambda k: rng.standard_normal(k))
    return A


# ---------------------------------------------------------------------- the pair table
def test_pair_table_hand_worked_3x3():
    """A = [[1, 0, 2], [3, 4, 0], [0, 5, 6]]: column 0 has rows 0, 1; column 1 rows 1, 2; column 2
    rows 0, 2. Pairs (i >= j) by k, then i, then j, as (j, i, a_ik a_jk, k):"""
    A = np.array([[1., 0., 2.], [3., 4., 0.], [0., 5., 6.]])
    hand = np.array([
        [0, 0, 1 * 1, 0],     # k = 0: (i, j) = (0, 0)
        [0, 1, 3 * 1, 0],     #        (1, 0)
        [1, 1, 3 * 3, 0],     #        (1, 1)
        [1, 1, 4 * 4, 1],     # k = 1: (1, 1)
        [1, 2, 5 * 4, 1],     #        (2, 1)
        [2, 2, 5 * 5, 1],     #        (2, 2)
        [0, 0, 2 * 2, 2],     # k = 2: (0, 0)
        [0, 2, 6 * 2, 2],     #        (2, 0)
        [2, 2, 6 * 6, 2],     #        (2, 2)
    ], np.float32)
    independent = np.array([[j, i, A[i, k] * A[j, k], k]
                            for k in range(3) for i in range(3) for j in range(i + 1)
                            if A[i, k] != 0 and A[j, k] != 0], np.float32)
    np.testing.assert_array_equal(independent, hand)
    for inp in (A, sp.csc_matrix(A), sp.csr_matrix(A), sp.coo_matrix(A)):
        records, m, n = pair_records(inp)
        assert (m, n) == (3, 3)
        np.testing.assert_array_equal(records, hand)
    # on the GPU, folded 2 texels a row: pair p at texel (p % 2, p // 2), padding zero
    with pair_table(sp.csr_matrix(A), width=2) as t:
        assert (t.count, t.m, t.n, t.width) == (9, 3, 3, 2)
        assert t.stream.shape == (5, 2) and t.stream.components == 4
        tex = t.stream.to_array()
        for p in range(9):
            np.testing.assert_array_equal(tex[p // 2, p % 2], hand[p])
        np.testing.assert_array_equal(tex[4, 1], np.zeros(4, np.float32))
        np.testing.assert_array_equal(t.records(), hand)
        # which texel each point lands on: (x = j, y = i), and what it carries
        d = np.array([1., 10., 100.])
        with Stream.vector_of(3, data=d) as ds, form_points(t, ds) as C:
            np.testing.assert_array_equal(C.to_array(), np.array([
                [1 + 400, 0, 0],
                [3, 9 + 160, 0],
                [1200, 200, 250 + 3600]], np.float32))


def test_pair_table_order_and_contents_random(rng):
    """Sorted by k, then i, then j; one record per pair of non-zeros of a column with i >= j."""
    A = random_sparse(rng, 40, 60, 0.15, "coo")
    records, m, n = pair_records(A)
    Ad = A.toarray()
    independent = [(j, i, np.float32(Ad[i, k] * Ad[j, k]), k)
                   for k in range(n) for i in range(m) for j in range(i + 1)
                   if Ad[i, k] != 0 and Ad[j, k] != 0]
    np.testing.assert_array_equal(records, np.array(independent, np.float32))
    keys = records[:, 3] * m * m + records[:, 1] * m + records[:, 0]
    assert np.all(np.diff(keys) > 0)


def test_pair_table_drops_explicit_zeros_and_sums_duplicates():
    A = sp.coo_matrix(([1.0, 2.0, 0.0, 5.0], ([0, 0, 1, 2], [0, 0, 0, 1])), shape=(3, 2))
    records, _, _ = pair_records(A)            # a_00 = 3 (summed), a_10 = 0 (dropped), a_21 = 5
    np.testing.assert_array_equal(records, np.array([[0, 0, 9, 0], [2, 2, 25, 1]], np.float32))


def test_refuses_indexes_beyond_float32_exact_range():
    big = INDEX_LIMIT + 1
    assert INDEX_LIMIT == 2 ** 24
    for shape in ((1, big), (big, 1)):
        A = sp.coo_matrix(([1.0], ([0], [0])), shape=shape)
        with pytest.raises(ValueError, match=r"2\^24 = 16777216"):
            pair_table(A)
    with pytest.raises(ValueError, match="NaN or infinity"):
        pair_table(np.array([[np.nan]]))
    with pytest.raises(ValueError, match="overflows float32"):
        pair_table(np.array([[1e20]]))
    with pytest.raises(TypeError, match="not a Stream"):
        with Stream(2, 2) as s:
            pair_table(s)


# ---------------------------------------------------------------------- C against float64
@pytest.mark.parametrize("m, n, density, fmt", [
    (1, 1, 1.0, "csc"),
    (3, 5, 0.5, "csr"),
    (3, 5, 1.0, "coo"),
    (37, 80, 0.05, "csc"),
    (37, 80, 0.3, "csr"),
    (200, 300, 0.02, "coo"),
    (200, 300, 0.05, "csc"),
])
def test_matches_float64(m, n, density, fmt, rng):
    A = random_sparse(rng, m, n, density, fmt)
    d = wide_d(rng, n)
    check(run(A, d), A, d)


def test_structures(rng):
    """An empty column, an empty row, a dense column, a column with one non-zero."""
    m, n = 30, 12
    A = random_sparse(rng, m, n, 0.2, "lil")
    A[:, 3] = 0                                  # empty column
    A[:, 5] = rng.standard_normal((m, 1))        # dense column (but for the empty row)
    A[7, :] = 0                                  # empty row
    A[:, 8] = 0
    A[11, 8] = 2.5                               # one non-zero
    A = A.tocsr()
    d = wide_d(rng, n)
    C = run(A, d)
    check(C, A, d)
    assert not C[7, :].any() and not C[:, 7].any()


def test_dense_numpy_input_and_no_pairs(rng):
    A = rng.standard_normal((9, 4))
    d = wide_d(rng, 4)
    check(run(A, d), A, d)
    Z = sp.csc_matrix((5, 6))                    # no non-zero at all: C = 0, then the shift alone
    with pair_table(Z) as t:
        assert t.count == 0
    np.testing.assert_array_equal(run(Z, np.ones(6)), np.zeros((5, 5)))
    np.testing.assert_array_equal(run(Z, np.ones(6), shift=0.25), 0.25 * np.eye(5))


def test_bitwise_float32_sum_in_order_of_k(ctx, rng):
    """The blender adds one texel's points in primitive order, i.e. by k: the result is the
    float32 recursive sum of fl(fl(a_ik a_jk) fl(d_k)) in the order of k, bit for bit (exact
    float32 adds; checked on llvmpipe, where CI runs)."""
    if "llvmpipe" not in ctx.info.get("GL_RENDERER", ""):
        pytest.skip("the blender's float32 adds are checked bit for bit on llvmpipe only")
    m, n = 60, 90
    A = random_sparse(rng, m, n, 0.1, "csc")
    d = wide_d(rng, n)
    records, _, _ = pair_records(A)
    contrib = records[:, 2] * d.astype(np.float32)[records[:, 3].astype(int)]
    E = np.zeros((m, m), np.float32)
    for k in range(n):                           # the pairs of one column hit distinct texels
        sel = records[:, 3] == k
        i, j = records[sel, 1].astype(int), records[sel, 0].astype(int)
        E[i, j] = E[i, j] + contrib[sel]
    np.testing.assert_array_equal(run(A, d).astype(np.float32), E)


# ---------------------------------------------------------------------- shift, reuse, out, folding
def test_shift(rng):
    A = random_sparse(rng, 37, 80, 0.1, "csc")
    A = A.tolil()
    A[4, :] = 0                                  # a row with no term: its diagonal is the shift alone
    d = wide_d(rng, 80)
    for shift in (1e-3, -0.5, 1e4):
        C = run(A, d, shift=shift)
        check(C, A, d, shift=shift)
        assert C[4, 4] == np.float32(shift)


def test_reuse_table_two_d_and_out(rng):
    A = random_sparse(rng, 50, 70, 0.08, "csr")
    d1, d2 = wide_d(rng, 70), wide_d(rng, 70)
    with pair_table(A) as t:
        with Stream.vector_of(70, data=d1) as s1, Stream.vector_of(70, data=d2) as s2:
            C1 = form_points(t, s1)
            check(C1.to_array(), A, d1)
            C1.write(np.full((50, 50), 7.0))     # garbage: out is cleared first
            C2 = form_points(t, s2, out=C1, shift=2.0)
            assert C2 is C1
            check(C2.to_array(), A, d2, shift=2.0)
            C3 = form_points(t, s1)
            check(C3.to_array(), A, d1)
            C1.release(), C3.release()


def test_folded_table_and_d(monkeypatch, rng):
    """The pair table folded 7 texels a row and d folded 16 a row (rows of a real GPU's width)."""
    monkeypatch.setattr(stream, "FOLD_WIDTH", 16)
    A = random_sparse(rng, 25, 100, 0.1, "csc")
    d = wide_d(rng, 100)
    with pair_table(A, width=7) as t, Stream.vector_of(100, data=d) as ds:
        assert ds.folded and t.stream.rows > 1
        with form_points(t, ds) as C:
            check(C.to_array(), A, d)


def test_argument_errors(rng):
    A = random_sparse(rng, 6, 8, 0.5, "csc")
    with pair_table(A) as t:
        with Stream.vector_of(7) as bad, pytest.raises(ValueError, match="length 8"):
            form_points(t, bad)
        with Stream.vector_of(8) as ds:
            with Stream(6, 5) as o, pytest.raises(ValueError, match="6 x 6"):
                form_points(t, ds, out=o)
            with pytest.raises(ValueError, match="finite"):
                form_points(t, ds, shift=np.inf)
            with pytest.raises(TypeError):
                form_points(A, ds)
    with Stream.vector_of(8) as ds, pytest.raises(ValueError, match="released"):
        form_points(t, ds)


# ---------------------------------------------------------------------- a texel off is seen
def _forged(records, m, n):
    """An AdatPoints from hand-made records (to draw a wrong table with the real kernel)."""
    return AdatPoints(Stream(1, len(records), components=4, data=records), len(records), m, n)


@pytest.mark.parametrize("forgery", ["swap i and j", "x one texel right", "y one texel down"])
def test_a_texel_off_fails_the_check(forgery, rng):
    """The check is sharp: the same kernel drawing a table whose points land one texel off, or on
    (x = i, y = j) (the upper triangle), fails it."""
    A = random_sparse(rng, 20, 30, 0.15, "csc")
    d = wide_d(rng, 30)
    records, m, n = pair_records(A)
    wrong = records.copy()
    if forgery == "swap i and j":
        wrong[:, [0, 1]] = records[:, [1, 0]]
    elif forgery == "x one texel right":
        wrong[:, 0] += 1
    else:
        wrong[:, 1] += 1
    with _forged(records, m, n) as good, _forged(wrong, m, n) as bad, Stream.vector_of(n, data=d) as ds:
        with form_points(good, ds) as C:
            check(C.to_array(), A, d)
        with form_points(bad, ds) as C:
            with pytest.raises(AssertionError):
                check(C.to_array(), A, d)


# ---------------------------------------------------------------------- passes
def test_one_pass_counted_and_not_replayable(rng):
    """One pass of count points (the counters' occlusion query sees every point shade one
    fragment), blending off afterwards; a recorded plan refuses the pass (additive blending)."""
    A = random_sparse(rng, 30, 40, 0.1, "csc")
    d = wide_d(rng, 40)
    with pair_table(A) as t, Stream.vector_of(40, data=d) as ds:
        with counters.count() as c:
            C = form_points(t, ds)
        assert c.passes(KERNELS["points"].label) == 1
        assert c.fragments(KERNELS["points"].label) == t.count
        trace = [p for p in c.trace if p.kernel == KERNELS["points"].label]
        assert trace[0].primitive == "points" and trace[0].vertices == t.count
        # the blend state is restored: an ordinary pass now replaces instead of adding
        with Stream(2, 2, data=np.ones((2, 2))) as s:
            L1["fill"].draw(s, whole(s), uniforms={"value": 3.0})
            np.testing.assert_array_equal(s.to_array(), np.full((2, 2), 3.0, np.float32))
        C2 = Stream(30, 30)
        form_points(t, ds, out=C2)
        np.testing.assert_array_equal(C2.to_array(), C.to_array())
        with recording() as noted:
            C3 = form_points(t, ds)
        assert any(n is not None and n[0] is KERNELS["points"] and n[6] for n in noted)
        with pytest.raises(NotReplayable, match="additive blending"):
            RecordedPlan(noted)
        for s in (C, C2, C3):
            s.release()


def test_agrees_with_dense_inner4(rng):
    """The same C as the dense inner-product form (to float32 accuracy)."""
    A = random_sparse(rng, 40, 64, 0.1, "csc")
    d = wide_d(rng, 64)
    with Stream.from_array(A.toarray()) as As, Stream.vector_of(64, data=d) as ds:
        with form(As, ds, product="inner4") as C4:
            dense = C4.to_array().astype(np.float64)
    check(dense, A, d)
    check(run(A, d), A, d)
