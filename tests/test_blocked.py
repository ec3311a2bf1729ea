"""The blocked Cholesky (beyond the papers, issue 13): RGBA 2 x 2 blocks, faithful panels,
one rank-b pass per panel. Checked against float64 numpy, against float32 LAPACK's backward
error, and the fragment counts of its update passes against a brute-force count."""
import numpy as np
import pytest
import scipy.linalg
from scipy.linalg import lapack

import gpgpu
from gpgpu import NotPositiveDefiniteError, SingularMatrixError, Stream, counters
from gpgpu.blocked import BLOCKS, KERNELS, blocked_cholesky, padded_order
from gpgpu.geometry import Rect


def spd(n, seed=0, shift=1.0):
    B = np.random.default_rng(seed).standard_normal((n, n))
    return B @ B.T / n + shift * np.eye(n)


@pytest.mark.parametrize("panel", ["faithful", "onepass"])
@pytest.mark.parametrize("b", BLOCKS)
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 9, 17, 33, 64, 100])
def test_blocked_factor_within_float32_lapack_backward_error(n, b, panel):
    A = spd(n, n, shift=0.01)
    L = gpgpu.cholesky(A, variant="blocked", block=b, panel=panel).astype(np.float64)
    assert np.array_equal(L, np.tril(L))
    c, info = lapack.spotrf(A.astype(np.float32), lower=1)
    Lc = np.tril(c).astype(np.float64)
    err = np.linalg.norm(L @ L.T - A) / np.linalg.norm(A)
    lapack_err = np.linalg.norm(Lc @ Lc.T - A) / np.linalg.norm(A)
    assert err <= max(2.5 * lapack_err, 2 * n * 2 ** -24), (err, lapack_err)
    Lr = np.linalg.cholesky(A)
    assert np.abs(L - Lr).max() <= 200 * n * 2 ** -24 * np.abs(Lr).max() * np.linalg.cond(A) ** 0.5


def test_pack_and_unpack_2x2_blocks_with_identity_padding():
    n, M = 5, 4                                  # 5 x 5 padded to 8 x 8: 4 x 4 blocks
    A = np.arange(1.0, 26.0).reshape(n, n)
    with Stream.from_array(A) as S, Stream(M, M, components=4) as P, Stream(n, n) as back, Stream(3, 3) as part:
        KERNELS["pack"].draw(P, Rect.covering(0, 0, M, M), {"A": S}, {"n": n})
        got = P.to_array()
        full = np.eye(8)
        full[:n, :n] = A
        for Y in range(M):
            for X in range(M):
                block = full[2 * Y:2 * Y + 2, 2 * X:2 * X + 2]
                assert list(got[Y, X]) == [block[0, 0], block[0, 1], block[1, 0], block[1, 1]], (X, Y)
        KERNELS["unpack"].draw(back, Rect.covering(0, 0, n, n), {"P": P}, {"origin": (0, 0)})
        assert np.array_equal(back.to_array(), A)
        KERNELS["unpack"].draw(part, Rect.covering(0, 0, 3, 3), {"P": P}, {"origin": (2, 2)})
        assert np.array_equal(part.to_array(), full[2:5, 2:5])
        KERNELS["unpack"].draw(part, Rect.covering(0, 0, 3, 3), {"P": P}, {"origin": (4, 2)})
        assert np.array_equal(part.to_array(), full[2:5, 4:7])          # columns 4.., rows 2..


@pytest.mark.parametrize("n,b", [(8, 4), (21, 4), (40, 8), (33, 16)])
def test_update_passes_shade_the_lower_block_triangle_of_each_trailing_matrix(n, b):
    with counters.count(time=False) as c:
        gpgpu.cholesky(spd(n), variant="blocked", block=b)
    updates = [p for p in c.trace if p.kernel == f"blocked_update_BLOCK{b}"]
    N = padded_order(n, b)
    want = []
    for c0 in range(0, N, b):
        first = (c0 + b) // 2
        blocks = [(X, Y) for Y in range(N // 2) for X in range(N // 2) if first <= X <= Y]
        if blocks:
            want.append(len(blocks))
    assert [p.fragments for p in updates] == want
    assert len(updates) == N // b - 1
    # fewer fragments than the faithful triangle updates, (n-1)n(n+1)/6 of them
    assert sum(want) < (n - 1) * n * (n + 1) // 6 or n < 16


@pytest.mark.parametrize("panel", ["faithful", "onepass"])
@pytest.mark.parametrize("k", [0, 3, 4, 9])
def test_not_positive_definite_names_the_step(k, panel):
    n = 12
    A = spd(n, 1)
    A[k, k] = -50.0                               # the leading minor of order k + 1 fails
    with pytest.raises(NotPositiveDefiniteError, match=f"step k = {k}|pivot {k}") as e:
        gpgpu.cholesky(A, variant="blocked", block=4, panel=panel)
    assert e.value.k == k


@pytest.mark.parametrize("n,b", [(8, 4), (21, 8), (33, 16)])
def test_onepass_panels_draw_one_pass_a_column(n, b):
    """panel="onepass": each of the N padded columns is one cholesky_step pass over its panel,
    no pivot passes of Algorithm 2; the factor as the faithful panels' to float32 rounding."""
    A = spd(n, 3)
    with counters.count(time=False) as c:
        L = gpgpu.cholesky(A, variant="blocked", block=b, panel="onepass")
    assert c.passes("cholesky_step") == padded_order(n, b)
    assert c.passes("square_root") == c.passes("normalization") == c.passes("outer_product_subtraction") == 0
    L0 = gpgpu.cholesky(A, variant="blocked", block=b)
    np.testing.assert_allclose(L, L0, rtol=0, atol=8 * 2 ** -24 * n * np.abs(L0).max())


@pytest.mark.parametrize("panel", ["faithful", "onepass"])
def test_blocked_cholesky_is_one_pre_built_plan(panel):
    """The passes up to the factor's unpacking are one plan, compiled once per order, block and
    panel kind: a second factorization of the order builds no primitive but the unpacking's."""
    from gpgpu import geometry
    from gpgpu.blocked import cholesky_plan
    from gpgpu.passes import SWAP

    n, b = 21, 8
    A = spd(n, 4)
    with Stream.from_array(np.tril(A)) as S:
        with counters.count(time=False) as c:
            blocked_cholesky(S, b, check=False, panel=panel).release()
        assert c.passes() == sum(d is not SWAP for d in cholesky_plan(n, b, panel)) + 1
        built = []
        covering = geometry.Rect.covering.__func__
        geometry.Rect.covering = classmethod(lambda cls, *a, **k: built.append(a) or covering(cls, *a, **k))
        try:
            L = blocked_cholesky(S, b, check=False, panel=panel)
        finally:
            geometry.Rect.covering = classmethod(covering)
        assert len(built) == 1
        np.testing.assert_allclose(np.tril(L.to_array()), np.linalg.cholesky(A), atol=4e-6)
        L.release()


def test_stream_input_and_argument_errors():
    A = spd(10, 2)
    with Stream.from_array(np.tril(A)) as S:
        L = blocked_cholesky(S, 8)
        assert isinstance(L, Stream) and L.shape == (10, 10)
        np.testing.assert_allclose(np.tril(L.to_array()), np.linalg.cholesky(A), atol=2e-6)
        L.release()
    with pytest.raises(ValueError, match="block must be one of"):
        gpgpu.cholesky(A, variant="blocked", block=6)
    with pytest.raises(ValueError, match="panel must be 'faithful'"):
        gpgpu.cholesky(A, variant="blocked", panel="fast")
    with pytest.raises(ValueError, match="leave it at 'faithful'"):
        gpgpu.cholesky(A, panel="onepass")
    with pytest.raises(ValueError, match="variant must be"):
        gpgpu.cholesky(A, variant="fast")
    with pytest.raises(ValueError, match="leave form, update, index"):
        gpgpu.cholesky(A, variant="blocked", form="inner")
    with pytest.raises(ValueError, match="not symmetric"):
        gpgpu.cholesky(np.triu(A), variant="blocked")


# ---------------------------------------------------------------- blocked LU
@pytest.mark.parametrize("b", BLOCKS)
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 9, 17, 33, 64, 100])
def test_blocked_lu_chooses_lapacks_rows_within_its_backward_error(n, b):
    A = np.random.default_rng(n + b).standard_normal((n, n))
    A32 = A.astype(np.float32)
    P, L, U = gpgpu.lu(A, variant="blocked", block=b)
    Ps, Ls, Us = scipy.linalg.lu(A32)
    assert np.array_equal(P, Ps)                      # the same pivot rows as LAPACK's getrf
    assert np.array_equal(L, np.tril(L)) and np.all(np.diag(L) == 1) and np.array_equal(U, np.triu(U))
    lu, piv, info = lapack.sgetrf(A32)
    Lc, Uc = np.tril(lu, -1).astype(np.float64) + np.eye(n), np.triu(lu).astype(np.float64)
    err = np.linalg.norm(P @ L @ U - A) / np.linalg.norm(A)
    lapack_err = np.linalg.norm(Ps @ Lc @ Uc - A) / np.linalg.norm(A)
    assert err <= max(2.5 * lapack_err, 2 * n * 2 ** -24), (err, lapack_err)


def test_blocked_lu_without_pivoting_and_solve():
    n = 23
    A = np.random.default_rng(5).standard_normal((n, n)) + n * np.eye(n)
    P, L, U = gpgpu.lu(A, pivoting="none", variant="blocked", block=8)
    assert np.array_equal(P, np.eye(n))
    P2, L2, U2 = gpgpu.lu(A, pivoting="none")
    np.testing.assert_allclose(L, L2, atol=1e-6)
    np.testing.assert_allclose(U, U2, rtol=1e-6, atol=1e-5)
    b = np.arange(float(n))
    with gpgpu.lu_factor(np.random.default_rng(6).standard_normal((n, n)), variant="blocked", block=4) as f:
        x = gpgpu.lu_solve(f, b)
    np.testing.assert_allclose(np.random.default_rng(6).standard_normal((n, n)) @ x, b, atol=5e-4)


@pytest.mark.parametrize("n,b", [(8, 4), (21, 4), (40, 8)])
def test_blocked_lu_update_passes_shade_each_trailing_square(n, b):
    with counters.count(time=False) as c:
        gpgpu.lu(np.random.default_rng(n).standard_normal((n, n)), variant="blocked", block=b)
    updates = [p.fragments for p in c.trace if p.kernel == f"lu_blocked_update_gather_BLOCK{b}"]
    N = padded_order(n, b)
    assert updates == [((N - c0 - b) // 2) ** 2 for c0 in range(0, N - b, b)]


@pytest.mark.parametrize("singular_step", [2, 6])
def test_blocked_lu_singular_names_the_step(singular_step):
    rng = np.random.default_rng(1)
    A = rng.integers(-3, 4, (10, 10)).astype(float) + 8 * np.eye(10)
    A[:, singular_step] = A[:, :singular_step] @ rng.integers(-2, 3, singular_step)   # dependent column
    with pytest.raises(SingularMatrixError, match=f"step k = {singular_step}") as e:
        gpgpu.lu(A, variant="blocked", block=4)
    assert e.value.k == singular_step
    with pytest.raises(SingularMatrixError, match="step k = 0"):
        gpgpu.lu(np.array([[0.0, 1.0], [1.0, 0.0]]), pivoting="none", variant="blocked", block=4)


def test_blocked_lu_argument_errors():
    A = np.eye(4)
    with pytest.raises(ValueError, match="pivoting must be 'partial' or 'none'"):
        gpgpu.lu(A, pivoting="full", variant="blocked")
    with pytest.raises(ValueError, match="leave transfer at its default"):
        gpgpu.lu(A, transfer="ctt", variant="blocked")
    with pytest.raises(ValueError, match="pivots must be one of"):
        gpgpu.lu(A, pivots="cpu", variant="blocked")
    with pytest.raises(ValueError, match="variant must be"):
        gpgpu.lu(A, variant="tiled")
    with pytest.raises(ValueError, match="block must be one of"):
        gpgpu.lu(A, variant="blocked", block=12)


def _chained(n, seed):
    """Q D: D diagonally dominant, Q a permutation, so that partial pivoting swaps row after
    row through the permutation's cycles (chains of swaps within a panel, and p == k too)."""
    rng = np.random.default_rng(seed)
    D = rng.standard_normal((n, n)) + 4 * n * np.diag(1.0 + rng.random(n))
    return D[rng.permutation(n)]


@pytest.mark.parametrize("b", BLOCKS + (64,))
def test_blocked_lu_with_gpu_pivots_chooses_lapacks_rows_read_back_once(b, readbacks):
    for n, A in [(n, np.random.default_rng(n).standard_normal((n, n))) for n in (1, 5, 17, 64, 100)] \
            + [(n, _chained(n, n)) for n in (9, 40)]:
        A32 = A.astype(np.float32)
        want = gpgpu.lu(A, variant="blocked", block=b)
        with Stream.from_array(A) as S:
            readbacks.n = 0
            f = gpgpu.lu_factor(S, variant="blocked", block=b, pivots="gpu")
            assert readbacks.n == 2          # the singularity threshold and the pivots, once
        LU = f.LU.to_array().astype(np.float64)
        f.release()
        L, U = np.tril(LU, -1) + np.eye(n), np.triu(LU)
        P = np.zeros((n, n))
        P[f.row_perm, np.arange(n)] = 1.0
        assert np.array_equal(P, scipy.linalg.lu(A32)[0]), (n, b)          # LAPACK's rows
        assert np.array_equal(P, want[0]), (n, b)                          # and the read-back path's
        # the same float32 operations as the faithful panel passes: equal up to a compiler's
        # contraction of a multiply-add into an fma (a rounding per operation, grown over n steps)
        tol = 4 * n * 2 ** -24
        assert np.abs(L - want[1]).max() <= tol, (n, b)
        assert np.abs(U - want[2]).max() <= tol * np.abs(want[2]).max(), (n, b)
        err = np.linalg.norm(P @ L @ U - A32) / np.linalg.norm(A32)
        lu, piv, info = lapack.sgetrf(A32)
        Lc, Uc = np.tril(lu, -1).astype(np.float64) + np.eye(n), np.triu(lu).astype(np.float64)
        lapack_err = np.linalg.norm(P @ Lc @ Uc - A32) / np.linalg.norm(A32)
        assert err <= max(2.5 * lapack_err, 2 * n * 2 ** -24), (n, b, err, lapack_err)


def test_blocked_lu_gpu_pivots_passes_and_read_backs(readbacks):
    """Two passes a panel column: the step with the next column's pivot search drawn in it
    (lu_panel_step_search) and the search's second stage into the record (lu_pivot_pick); a
    panel's first column is searched by the fan (argmax_reduction_fan_first, then one
    argmax_reduction_fan where more than 32 rows remain); ten passes a panel besides. The
    faithful panel passes drew nine a column, the previous plan three or four."""
    n, b = 64, 8
    N, P = n, n // b
    A = np.random.default_rng(3).standard_normal((n, n))
    with Stream.from_array(A) as S:
        readbacks.n = 0
        with counters.count(time=False) as c:
            gpgpu.lu_factor(S, variant="blocked", block=b, pivots="gpu", check=False).release()
        assert readbacks.n == 1                        # the record of pivots, at the end
    assert c.passes(f"lu_panel_step_search_BLOCK{b}_FAN132") == N
    assert c.passes(f"lu_pivot_pick_BLOCK{b}") == N - P          # all but each panel's column 0
    assert c.passes("argmax_reduction_fan_first") == P
    assert c.passes("argmax_reduction_fan") == sum(R > 32 for R in range(N, 0, -b)) == 4
    assert c.passes(f"row_panel_solve_BLOCK{b}") == P - 1 and c.passes("lu_panel_gather") == P - 1
    assert c.passes(f"lu_blocked_update_gather_BLOCK{b}") == P - 1
    assert c.passes("permute_rows_2x2") == P                # the b rows of U12 a panel, the L columns once
    assert c.passes("copy_swap_gpu") == c.passes("elimination") == 0
    # pack; per panel unpack, column 0's search, b steps, b - 1 picks, pack_panel; eight more
    # a panel but the last; the final permute and unpack
    assert c.passes() == 1 + P * (1 + b + (b - 1) + 1) + P + 4 + 8 * (P - 1) + 2 == 207
    from gpgpu.blocked import lu_plan
    from gpgpu.passes import SWAP

    # the docstring's count, 2N + 10P - 5 + the panels over 32 rows + those over 2048 (a
    # third fan pass), at n = 4096, b = 64 too (the plan built, not drawn)
    for n_, b_ in [(n, b), (4096, 64)]:
        P_ = n_ // b_
        want = 2 * n_ + 10 * P_ - 5 + sum(R > 32 for R in range(n_, 0, -b_)) + sum(R > 2048 for R in range(n_, 0, -b_))
        assert sum(d is not SWAP for d in lu_plan(n_, b_)) + 2 == want, (n_, b_)
    # each step shades the panel's rows k-1 .. R-1 and (but the last column) the partials of
    # the next column's search, 32 rows each, in its two columns
    steps = [p.fragments for p in c.trace if p.kernel.startswith("lu_panel_step_search")]
    assert steps == [b * (R - max(k - 1, 0)) + (2 * (-(-(R - k - 1) // 32)) if k < b - 1 else 0)
                     for R in range(N, 0, -b) for k in range(b)]
    # the permute pass of each panel covers only the panel's b / 2 block rows right of it
    strips = [p.fragments for p in c.trace if p.kernel == "permute_rows_2x2"][:-1]
    assert strips == [(b // 2) * ((N - c0 - b) // 2) for c0 in range(0, N - b, b)]
    # drawn from one pre-built plan: its passes, then the final gather and unpack, and a second
    # factorization of the order builds no primitive but those two
    from gpgpu import geometry
    from gpgpu.blocked import lu_plan
    from gpgpu.passes import SWAP

    assert c.passes() == sum(d is not SWAP for d in lu_plan(n, b)) + 2
    built = []
    covering = geometry.Rect.covering.__func__

    def counting(cls, *a, **k):
        built.append(a)
        return covering(cls, *a, **k)

    geometry.Rect.covering = classmethod(counting)
    try:
        with Stream.from_array(A) as S:
            gpgpu.lu_factor(S, variant="blocked", block=b, pivots="gpu", check=False).release()
    finally:
        geometry.Rect.covering = classmethod(covering)
    assert len(built) == 2


@pytest.mark.parametrize("singular_step", [2, 6])
def test_blocked_lu_gpu_pivots_singular_names_the_step(singular_step):
    rng = np.random.default_rng(1)
    A = rng.integers(-3, 4, (10, 10)).astype(float) + 8 * np.eye(10)
    A[:, singular_step] = A[:, :singular_step] @ rng.integers(-2, 3, singular_step)
    with pytest.raises(SingularMatrixError, match=f"step k = {singular_step}"):
        gpgpu.lu(A, variant="blocked", block=4, pivots="gpu")


def test_panel_step_search_kernel_steps_and_searches_the_next_column():
    """lu_panel_step_search on a 70 x (8 + 2) panel at step k = 2, pivot row p = 41 from the
    record: the step's columns against numpy's swap and elimination, and the first stage of
    column 3's search (rows 3 .. 69, 32 a fragment: 3 partials) against numpy's largest |v| and
    its row, v the column after the step. The largest of each partial is planted clear of the
    rest, so the rows compare exactly (a texel off or a row index off by one fails)."""
    from gpgpu.blocked import _pick_kernel, _step_kernel
    from gpgpu.geometry import Triangle

    R, b, k, p = 70, 8, 2, 41
    rng = np.random.default_rng(7)
    X = rng.uniform(-1, 1, (R, b + 2)).astype(np.float32)
    X[p, k] = 3.0
    # after the step, column k + 1 at row i is X[i', k+1] - X[i', k] / X[p, k] * X[p, k+1]:
    # plant the largest of rows 3..34 at 34 (a partial's last row), of 35..66 at 41 (swapped
    # with row k's source), of 67..69 at 69 (the panel's last row)
    for i, big in [(34, 9.0), (41, -8.0), (69, 7.0)]:
        src = k if i == p else i
        X[src, k + 1] = big + X[src, k] / X[p, k] * X[p, k + 1]
    rec = np.zeros((1, 60, 4), np.float32)
    rec[0, 33] = [3.0, k, p, 0]
    want = X.astype(np.float64)
    want[[k, p]] = want[[p, k]]
    lcol = want[k + 1:, k] / want[k, k]
    want[k + 1:, k] = lcol
    want[k + 1:, k + 1:b] -= np.outer(lcol, want[k, k + 1:b])
    m = -(-(R - k - 1) // 32)
    with Stream.from_array(X) as S, Stream(1, 60, components=4, data=rec) as RC, Stream(R, b + 2) as T:
        step = _step_kernel(b)
        step.draw(T, Triangle.from_rects([(0, k - 1, b, R), (b, 0, b + 2, m)]), {"A": S, "record": RC},
                  {"k": k, "at": 33, "rows": R})
        got = T.to_array().astype(np.float64)
        np.testing.assert_allclose(got[k - 1:, :b], want[k - 1:, :b], rtol=4 * 2 ** -24, atol=4 * 2 ** -24)
        assert np.array_equal(got[k:, :k], want[k:, :k])                  # swapped L columns: copies
        v = np.abs(want[k + 1:, k + 1])
        parts = [slice(q * 32, min((q + 1) * 32, R - k - 1)) for q in range(m)]
        assert [k + 1 + s.start + int(np.argmax(v[s])) for s in parts] == [34, 41, 69]
        assert list(got[:m, b + 1]) == [34, 41, 69]
        np.testing.assert_allclose(got[:m, b], [v[s].max() for s in parts], rtol=4 * 2 ** -24)
        # the second stage: the largest of the three into texel `at` of the record, and the
        # first of equal partials wins (LAPACK's isamax)
        pick = _pick_kernel(b)
        pick.draw(RC, Rect.covering(34, 0, 35, 1), {"S": T}, {"count": m, "k": k + 1})
        out = RC.to_array().reshape(60, 4)
        assert list(out[34]) == [got[0, b], k + 1, 34.0, 0.0]             # |9|, row 34
        assert list(out[33]) == [3.0, k, p, 0]                              # the rest untouched
        # the first of equal partials wins (LAPACK's isamax), and only `count` are read
        parts = np.zeros((R, b + 2), np.float32)
        parts[:5, b] = [2.0, 9.0, 9.0, 1.0, 50.0]
        parts[:5, b + 1] = [5, 11, 12, 13, 14]
        T.write(parts)
        pick.draw(RC, Rect.covering(35, 0, 36, 1), {"S": T}, {"count": 4, "k": 7})
        assert list(RC.to_array().reshape(60, 4)[35]) == [9.0, 7.0, 11.0, 0.0]
