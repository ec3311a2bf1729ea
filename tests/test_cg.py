"""Conjugate gradients on the GPU (paper 003): scipy's answer and iteration counts, the scalars
kept on the GPU, breakdown and bad input named."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spl

import gpgpu
from gpgpu import CGBreakdownError, SparseStream, Stream, stream
from gpgpu.cg import FLOAT32_REACH, Float32ToleranceWarning


def poisson2d(k):
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(k, k))
    return (sp.kron(sp.eye(k), T) + sp.kron(T, sp.eye(k))).tocsr()


def scipy_cg32(A, b, **kw):
    """scipy's cg in float32, its iteration count from the callback."""
    its = []
    x, info = spl.cg(A.astype(np.float32), b.astype(np.float32), callback=lambda xk: its.append(1), **kw)
    return x, info, len(its)


@pytest.fixture(scope="module")
def poisson64():
    A = poisson2d(64)
    b = np.random.default_rng(0).standard_normal(A.shape[0])
    return A, b, spl.spsolve(A.tocsc(), b)


@pytest.mark.parametrize("variant", [dict(), dict(reduction="pingpong"), dict(check_every=7),
                                     dict(fmt="tell"), dict(fmt="corrigan", sort=True)])
def test_poisson_64x64_matches_scipy(poisson64, variant):
    A, b, x_ref = poisson64
    variant = dict(variant)
    fmt, sort = variant.pop("fmt", None), variant.pop("sort", False)
    S = SparseStream.from_scipy(A, format=fmt, sort=sort) if fmt else A
    try:
        res = gpgpu.cg(S, b, rtol=1e-5, **variant)
    finally:
        if fmt:
            S.release()
    x, info = res
    assert info == 0
    # the recursive residual drifts from b - A x in float32: scipy's float32 cg stops at a true
    # relative residual of 1.106e-5 here, ours at 1.098e-5; hold ours to scipy's, with 5% slack
    x32, _, its32 = scipy_cg32(A, b, rtol=1e-5)
    theirs = max(1e-5 * np.linalg.norm(b), np.linalg.norm(b - A @ x32.astype(np.float64)))
    assert np.linalg.norm(b - A @ x) <= 1.05 * theirs
    assert abs(res.iterations - its32) <= 0.1 * its32 + variant.get("check_every", 1)
    assert np.linalg.norm(x - x_ref) / np.linalg.norm(x_ref) < 1e-4


def test_readbacks_are_one_per_check_plus_the_verification(poisson64, readbacks):
    A, b, _ = poisson64
    readbacks.n = 0
    every = gpgpu.cg(A, b, rtol=1e-3)
    assert readbacks.n == every.readbacks + 1          # and the download of x
    sparse = gpgpu.cg(A, b, rtol=1e-3, check_every=10)
    # ||b|| comes from the host (a numpy b) and r0 = b; then one read-back (||r||^2 with the
    # breakdown and convergence watches) per check, and two for ||b - A x|| at the end (its
    # float32 norm, and x for the float64 one on the host: A and b are numpy)
    assert every.readbacks == every.iterations + 2
    assert sparse.readbacks == -(-sparse.iterations // 10) + 2
    # the watch froze x at the converging iteration: the same count, whatever check_every
    assert sparse.iterations == every.iterations and every.restarts == sparse.restarts == 0
    assert len(every.residuals) == every.iterations + 1


def test_jacobi_preconditioner_on_a_badly_scaled_matrix(rng):
    """Poisson scaled by D = 10^U(-1/2, 1/2): Jacobi undoes the scaling (35 iterations here
    against 143 without), as scipy's float32 PCG does, to the same true residual."""
    A = poisson2d(16)
    D = sp.diags(10.0 ** rng.uniform(-0.5, 0.5, A.shape[0]))
    B = (D @ A @ D).tocsr()
    b = rng.standard_normal(B.shape[0])
    plain = gpgpu.cg(B, b, rtol=1e-4, maxiter=1000)
    jacobi = gpgpu.cg(B, b, rtol=1e-4, M=1.0 / B.diagonal(), maxiter=1000)
    x32, info, its_ref = scipy_cg32(B, b, rtol=1e-4, M=sp.diags(1.0 / B.diagonal()), maxiter=1000)
    assert jacobi[1] == 0 and 2 * jacobi.iterations < plain.iterations
    assert abs(jacobi.iterations - its_ref) <= 0.1 * its_ref + 1
    ours = np.linalg.norm(b - B @ jacobi[0]) / np.linalg.norm(b)
    theirs = np.linalg.norm(b - B @ x32) / np.linalg.norm(b)
    assert ours <= 1.05e-4 and ours <= 1.1 * theirs


def test_x0_callback_and_stream_answer(rng):
    A = poisson2d(8)
    b = rng.standard_normal(64)
    x_ref = spl.spsolve(A.tocsc(), b)
    seen = []
    x, info = gpgpu.cg(A, b, x0=x_ref + 1e-3, callback=seen.append, rtol=1e-6)
    assert info == 0 and len(seen) >= 1 and seen[-1].shape == (64,)
    np.testing.assert_allclose(seen[-1], x, rtol=0, atol=0)
    with Stream.from_array(b) as bs, SparseStream.from_scipy(A) as S:
        res = gpgpu.cg(S, bs, rtol=1e-6)
        assert isinstance(res[0], Stream)
        np.testing.assert_allclose(res[0].to_array(), x_ref, rtol=1e-4, atol=1e-4)
        res[0].release()


def test_dense_array_and_stream_matrices(rng):
    B = rng.standard_normal((30, 30))
    A = B @ B.T + 30 * np.eye(30)
    b = rng.standard_normal(30)
    x, info = gpgpu.cg(A, b, rtol=1e-6)
    assert info == 0 and np.linalg.norm(A @ x - b) <= 1.05e-6 * np.linalg.norm(b)
    with Stream.from_array(A) as As:
        x2, info2 = gpgpu.cg(As, b, rtol=1e-6)
    np.testing.assert_allclose(x2, x, rtol=1e-5, atol=1e-6)


def test_maxiter_reports_the_iterations_as_scipy(poisson64):
    A, b, _ = poisson64
    x, info = gpgpu.cg(A, b, maxiter=20)
    assert info == 20
    assert np.linalg.norm(b - A @ x) > 1e-5 * np.linalg.norm(b)


def test_zero_right_hand_side_is_zero():
    x, info = gpgpu.cg(poisson2d(4), np.zeros(16))
    assert info == 0 and np.all(x == 0)


def test_breakdown_is_named_with_its_iteration():
    """A = diag(1, -1), b = (1, 1): d0 = b and d0^T A d0 = 0 at the first iteration."""
    A = sp.diags([1.0, -1.0]).tocsr()
    with pytest.raises(CGBreakdownError, match="iteration 0") as e:
        gpgpu.cg(A, np.ones(2))
    assert e.value.iteration == 0
    # an indefinite Poisson-like matrix breaks down later, and check_every still names the step
    B = poisson2d(8).tolil()
    B[10, 10] = -30.0
    B = B.tocsr()
    with pytest.raises(CGBreakdownError) as first:
        gpgpu.cg(B, np.ones(64))
    with pytest.raises(CGBreakdownError) as later:
        gpgpu.cg(B, np.ones(64), check_every=50)
    assert first.value.iteration == later.value.iteration


def test_overflow_is_named_as_divergence_not_as_an_indefinite_matrix():
    """A = J + I (64 x 64, J all ones), b = 1, x0 = 3e16: ||r0||^2 = 6e37 fits float32, but
    d0^T A d0 = 16 ||r0||^2 (in cg's scaling, A / 4) overflows at iteration 0. That is a diverged
    (overflowed) iteration, not a non-positive d^T A d, and the error says so."""
    A = np.ones((64, 64)) + np.eye(64)
    with pytest.raises(CGBreakdownError, match="overflowed") as e:
        gpgpu.cg(A, np.ones(64), x0=np.full(64, 3e16))
    assert e.value.iteration == 0 and e.value.diverged
    with pytest.raises(CGBreakdownError, match="not positive definite") as e:
        gpgpu.cg(sp.diags([1.0, -1.0]).tocsr(), np.ones(2))
    assert not e.value.diverged


def test_shewchuks_residual_restart_is_optional_and_runs_when_asked(poisson64):
    """recompute_every=5 adds one product r = b - A x every 5 iterations (default: none, as
    scipy), and still reaches the solution on a well-conditioned system."""
    from gpgpu import counters

    A, b, x_ref = poisson64
    with counters.count(time=False, trace=False) as plain:
        gpgpu.cg(A, b, maxiter=20)
    with counters.count(time=False, trace=False) as restarted:
        gpgpu.cg(A, b, maxiter=20, recompute_every=5)
    assert plain.passes("sparse_ellpack") == 20 + 1            # q = A d, then b - A x at the end
    assert restarted.passes("sparse_ellpack") == 20 + 4 + 1     # and at iterations 5, 10, 15, 20
    x, info = gpgpu.cg(A, b, rtol=1e-5, recompute_every=50)
    assert info == 0
    assert np.linalg.norm(x - x_ref) / np.linalg.norm(x_ref) < 1e-4
    with pytest.raises(ValueError, match="recompute_every"):
        gpgpu.cg(A, b, recompute_every=0)


def test_folded_vectors(monkeypatch, rng):
    monkeypatch.setattr(stream, "FOLD_WIDTH", 16)          # 100 unknowns in rows of 16
    A = poisson2d(10)
    b = rng.standard_normal(100)
    x, info = gpgpu.cg(A, b, rtol=1e-6)
    assert info == 0
    np.testing.assert_allclose(x, spl.spsolve(A.tocsc(), b), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("A, b, match", [
    (sp.random(4, 5, density=0.5, random_state=0), np.ones(4), "square"),
    (sp.csr_matrix(np.array([[1.0, 2.0], [0.0, 1.0]])), np.ones(2), "not symmetric"),
    (sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 0.0]])), np.ones(2), "row 1 of A is empty"),
    (sp.eye(3, format="csr"), np.ones(4), "length 3"),
    (sp.eye(3, format="csr"), np.array([1.0, np.nan, 1.0]), "NaN"),
    (sp.eye(3, format="csr"), np.ones(3) * 1j, "complex"),
])
def test_bad_input_is_named_before_any_work(A, b, match):
    with pytest.raises(ValueError, match=match):
        gpgpu.cg(A, b)


@pytest.mark.parametrize("kw, match", [(dict(rtol=-1.0), "rtol"), (dict(maxiter=-1), "maxiter"),
                                       (dict(check_every=0), "check_every"),
                                       (dict(reduction="tree"), "reduction"),
                                       (dict(M=np.ones((3, 3))), "diagonal")])
def test_bad_options(kw, match):
    with pytest.raises(ValueError, match=match):
        gpgpu.cg(sp.eye(3, format="csr"), np.ones(3), **kw)


# ---------------------------------------------------------------- float32's range and honesty

U = 2.0 ** -24     # float32's unit roundoff


def residual_rounding(A, x, b):
    """A bound on the rounding error of b - A x computed in float32 with k terms a row (k - 1
    products and sums, then the subtraction; A's own rounding to float32 one more): k u || |A| |x| + |b| ||.
    cg's ``residual_norm`` is that float32 ||b - A x||, so it is within this of the exact one."""
    A = sp.csr_matrix(A)
    k = int(np.diff(A.indptr).max()) + 2
    return k * U * np.linalg.norm(abs(A) @ abs(x) + abs(b))


def assert_verified(res, A, b, target):
    """info 0 means ||b - A x|| <= target, to the rounding of the float32 residual."""
    x, info = res
    exact = np.linalg.norm(b - A @ x)
    slack = residual_rounding(A, x, b)
    assert info == 0
    assert res.residual_norm <= target
    assert exact <= target + slack
    assert abs(res.residual_norm - exact) <= slack


@pytest.fixture(scope="module")
def poisson16():
    A = poisson2d(16)
    b = np.random.default_rng(16).standard_normal(256)
    return A, b


@pytest.mark.parametrize("scale", [2.0 ** -60, 2.0 ** -70, 2.0 ** 70])
def test_a_tiny_or_huge_b_gives_the_scaled_answer_exactly(poisson16, scale):
    """||b||^2 leaves float32's range (||b|| ~ 1e-18: ||r||^2 underflowed to 0 and cg answered
    info 0 early, or at once with x = 0; ||b|| ~ 1e21: ||b||^2 overflowed). cg scales b by a power
    of two, which is exact: the answer for 2^k b is 2^k times the answer for b, bit for bit."""
    A, b = poisson16
    ref = gpgpu.cg(A, b)
    res = gpgpu.cg(A, scale * b)
    assert res[1] == ref[1] == 0 and res.iterations == ref.iterations > 0
    np.testing.assert_array_equal(res[0], scale * ref[0])
    assert res.residual_norm == scale * ref.residual_norm


@pytest.mark.parametrize("scale", [1e-17, 1e-20, 1e-30, 1e30])
def test_a_tiny_or_huge_b_converges_for_real(poisson16, scale):
    A, b = poisson16
    b = scale * b
    assert_verified(gpgpu.cg(A, b, rtol=1e-5), A, b, 1e-5 * np.linalg.norm(b))


@pytest.mark.parametrize("scale", [2.0 ** 113, 2.0 ** 120, 2.0 ** -100])
def test_a_huge_or_tiny_matrix_gives_the_scaled_answer_exactly(poisson16, scale):
    """A ~ 1e34 or 1e36: d^T A d overflowed float32 (info 0 at a true relative residual of 3e-4
    and 3e-2); A ~ 1e-30: d^T A d underflowed to 0 and cg said "not positive definite". cg
    solves (2^-e A) x' = b with max |2^-e A| in [0.5, 1): the answer for 2^k A is 2^-k times
    the answer for A, bit for bit."""
    A, b = poisson16
    ref = gpgpu.cg(A, b)
    res = gpgpu.cg(scale * A, b)
    assert res[1] == 0 and res.iterations == ref.iterations
    np.testing.assert_array_equal(res[0], ref[0] / scale)


@pytest.mark.parametrize("scale", [1e34, 1e36, 1e-30])
def test_a_huge_or_tiny_matrix_converges_for_real(poisson16, scale):
    A, b = poisson16
    A = scale * A
    assert_verified(gpgpu.cg(A, b, rtol=1e-5), A, b, 1e-5 * np.linalg.norm(b))
    jacobi = gpgpu.cg(A, b, rtol=1e-5, M=1.0 / A.diagonal(), check_every=4)
    assert_verified(jacobi, A, b, 1e-5 * np.linalg.norm(b))


def test_tol_zero_claims_success_only_for_an_exact_zero_residual(poisson16):
    """rtol = atol = 0 asks for b - A x = 0. float32 CG's recurrence residual falls to 0 (it
    underflows) while b - A x stops near 1e-7 ||b||: that was info 0. Now info is the iteration
    count, CG having stopped when a restart from the true residual no longer lowered it."""
    A, b = poisson16
    with pytest.warns(Float32ToleranceWarning, match="below what float32 can reach"):
        res = gpgpu.cg(A, b, rtol=0)
    x, info = res
    assert info == res.iterations > 0 and res.stagnated and res.restarts >= 1
    exact = np.linalg.norm(b - A @ x)
    assert 0 < exact and abs(res.residual_norm - exact) <= residual_rounding(A, x, b)
    # 2 I, b = (+-4): alpha = 2 exactly (powers of two throughout, so also where a GPU divides
    # by a reciprocal), x1 = b / 2 and r1 = 0 exactly: converged, at iteration 1
    b8 = 4.0 * np.array([1.0, -1.0, 1.0, 1.0, -1.0, -1.0, 1.0, 1.0])
    with pytest.warns(Float32ToleranceWarning):
        two = gpgpu.cg(sp.diags(np.full(8, 2.0)).tocsr(), b8, rtol=0)
    assert two[1] == 0 and two.iterations == 1 and two.residual_norm == 0.0
    np.testing.assert_array_equal(two[0], b8 / 2)


def test_maxiter_zero_only_tests_x0(poisson16):
    """scipy answers info 0 for maxiter=0 whatever x0 is; cg answers 1 unless x0 meets the target."""
    A, b = poisson16
    res = gpgpu.cg(A, b, maxiter=0)
    assert res[1] == 1 and res.iterations == 0 and np.all(res[0] == 0)
    assert res.residual_norm == pytest.approx(np.linalg.norm(b), rel=1e-7)
    x_ref = np.linalg.solve(A.toarray(), b)
    good = gpgpu.cg(A, b, x0=x_ref, maxiter=0)
    assert good[1] == 0 and good.iterations == 0
    np.testing.assert_array_equal(good[0], x_ref.astype(np.float32))
    assert_verified(good, A, b, 1e-5 * np.linalg.norm(b))


def spd(n, rng):
    B = rng.standard_normal((n, n))
    return B @ B.T / n + 2 * np.eye(n)


@pytest.mark.parametrize("n", [2, 5, 30])
@pytest.mark.parametrize("jacobi", [False, True])
def test_iterations_past_convergence_in_a_window_change_nothing(n, jacobi):
    """check_every=16 on a well-conditioned system converging in fewer than 16 iterations: the
    iterations run on to the read-back used to reach r = 0, then 0 / 0 (CGBreakdownError). The
    convergence watch freezes x on the GPU: the answer is the one of check_every=1, bit for bit."""
    rng = np.random.default_rng(n)
    A = spd(n, rng)
    b = rng.standard_normal(n)
    M = 1.0 / np.diag(A) if jacobi else None
    every = gpgpu.cg(A, b, rtol=1e-6, M=M)
    sparse = gpgpu.cg(A, b, rtol=1e-6, M=M, check_every=16)
    assert every[1] == sparse[1] == 0 and sparse.iterations == every.iterations < 16
    np.testing.assert_array_equal(sparse[0], every[0])
    assert sparse.residual_norm == every.residual_norm
    assert_verified(sparse, A, b, 1e-6 * np.linalg.norm(b))
    seen = []
    called = gpgpu.cg(A, b, rtol=1e-6, M=M, check_every=16, callback=seen.append)
    assert len(seen) == called.iterations == every.iterations
    np.testing.assert_array_equal(seen[-1], every[0])


def test_sorted_corrigan_callback_sees_x_in_the_order_of_A():
    """The sorted system (003, Fig. 7) is solved in its own order; the callback's x and the
    answer are in A's order: the last callback x is the answer, and both solve A x = b."""
    A = poisson2d(10)           # rows of 3, 4 and 5 non-zeros: the sort moves the border first
    b = np.random.default_rng(10).standard_normal(100)
    x_ref = np.linalg.solve(A.toarray(), b)
    seen = []
    with SparseStream.from_scipy(A, format="corrigan", sort=True) as S:
        assert np.any(S.perm != np.arange(100))
        res = gpgpu.cg(S, b, rtol=1e-6, callback=seen.append)
    x, info = res
    assert info == 0 and len(seen) == res.iterations
    np.testing.assert_array_equal(seen[-1], x)
    # ||x - x_ref|| / ||x_ref|| <= cond(A) ||b - A x|| / ||b||
    assert np.linalg.norm(x - x_ref) <= np.linalg.cond(A.toarray()) * res.residual_norm / np.linalg.norm(b) \
        * np.linalg.norm(x_ref)
    assert np.linalg.norm(seen[0] - x_ref) > 0.1 * np.linalg.norm(x_ref)   # the first is not yet


def test_sorted_corrigan_permutes_the_preconditioner_too(rng):
    """Jacobi on a sorted corrigan A: M's diagonal must be sorted with A (as b is), or each row
    is scaled by another row's 1 / a_ii (that took 2000 iterations, unconverged, against 44).
    The same iterations as ELLPACK's unsorted PCG."""
    A = poisson2d(16)
    D = sp.diags(10.0 ** rng.uniform(-1, 1, A.shape[0]))
    B = (D @ A @ D).tocsr()
    b = rng.standard_normal(B.shape[0])
    M = 1.0 / B.diagonal()
    plain = gpgpu.cg(B, b, rtol=1e-5, M=M, maxiter=2000)
    with SparseStream.from_scipy(B, format="corrigan", sort=True) as S:
        res = gpgpu.cg(S, b, rtol=1e-5, M=M, maxiter=2000)
    assert abs(res.iterations - plain.iterations) <= 0.1 * plain.iterations + 1
    assert_verified(res, B, b, 1e-5 * np.linalg.norm(b))


def test_maxiter_reads_the_last_window(poisson16):
    """maxiter = 20, check_every = 7: ||r|| is read at r0 and iterations 7, 14 and 20 (the
    last window's residual and breakdown flag are read at maxiter), and the reported residual
    is the answer's ||b - A x||."""
    A, b = poisson16
    res = gpgpu.cg(A, b, maxiter=20, check_every=7)
    x, info = res
    assert info == 20 and res.iterations == 20 and len(res.residuals) == 4
    exact = np.linalg.norm(b - A @ x)
    assert abs(res.residual_norm - exact) <= residual_rounding(A, x, b)
    assert exact > 1e-5 * np.linalg.norm(b)
    # a breakdown inside the last window, before maxiter, is read there
    B = poisson2d(8).tolil()
    B[10, 10] = -30.0
    B = B.tocsr()
    with pytest.raises(CGBreakdownError) as first:
        gpgpu.cg(B, np.ones(64))
    k = first.value.iteration
    with pytest.raises(CGBreakdownError) as last:
        gpgpu.cg(B, np.ones(64), maxiter=k + 1, check_every=100)
    assert last.value.iteration == k


def test_atol_alone_sets_the_target(poisson16):
    """rtol = 0, atol = 1e-2 ||b||: converged (verified) to atol, in fewer iterations than rtol=1e-6."""
    A, b = poisson16
    atol = 1e-2 * np.linalg.norm(b)
    loose = gpgpu.cg(A, b, rtol=0, atol=atol)
    tight = gpgpu.cg(A, b, rtol=1e-6)
    assert_verified(loose, A, b, atol)
    assert tight[1] == 0 and loose.iterations < tight.iterations
    assert np.linalg.norm(b - A @ loose[0]) > 1e-6 * np.linalg.norm(b)


def test_streams_far_from_one_are_scaled_on_the_gpu(poisson16):
    """A SparseStream A ~ 2^60 and Stream b ~ 2^-20 and M ~ 2^-60 are scaled on the GPU (A at
    each product): the answer is the numpy path's; an x that float32 cannot hold is an error."""
    A, b = poisson16
    A2, b2 = A * 2.0 ** 60, b * 2.0 ** -20
    ref = gpgpu.cg(A2, b2, rtol=1e-5)
    M = 1.0 / A2.diagonal()
    with SparseStream.from_scipy(A2) as S, Stream.from_array(b2) as bs, Stream.from_array(M) as Ms:
        res = gpgpu.cg(S, bs, rtol=1e-5)
        x = res[0].to_array().astype(np.float64)
        res[0].release()
        assert res[1] == 0 and abs(res.iterations - ref.iterations) <= 1
        np.testing.assert_allclose(x, ref[0], rtol=0, atol=1e-5 * np.abs(ref[0]).max())
        pcg = gpgpu.cg(S, bs, rtol=1e-5, M=Ms)
        xp = pcg[0].to_array().astype(np.float64)
        pcg[0].release()
        assert pcg[1] == 0 and np.linalg.norm(b2 - A2 @ xp) <= 1.1e-5 * np.linalg.norm(b2)
    with SparseStream.from_scipy(A * 1e30) as S, Stream.from_array(b * 1e-30) as bs:
        with pytest.raises(ValueError, match="underflow.*numpy"):
            gpgpu.cg(S, bs)


def test_info_zero_is_verified_on_b_minus_a_x(poisson16, rng):
    """x0 far from the solution (x_ref + 1e4 N(0, 1)): the recurrence's r carries rounding
    errors of the size u ||r0|| ~ 1e-3 ||b||, so it reaches tol = 1e-5 while b - A x is 3e-3
    ||b|| (that was info 0). info 0 is decided by b - A x: cg restarts from the true residual."""
    A, b = poisson16
    x_ref = np.linalg.solve(A.toarray(), b)
    res = gpgpu.cg(A, b, x0=x_ref + 1e4 * rng.standard_normal(256), rtol=1e-5)
    assert_verified(res, A, b, 1e-5 * np.linalg.norm(b))
    assert res.restarts >= 1


# ---------------------------------------------------------------- scipy's conventions (scipy >= 1.14)

def test_rtol_is_the_tolerance_and_tol_its_deprecated_alias(poisson16):
    """scipy >= 1.14 has rtol (keyword-only) and no tol: tol still works here, with a
    DeprecationWarning, and means rtol; tol and rtol with different values is an error."""
    A, b = poisson16
    ref = gpgpu.cg(A, b, rtol=1e-6)
    with pytest.warns(DeprecationWarning, match="tol is deprecated.*use rtol"):
        old = gpgpu.cg(A, b, tol=1e-6)
    assert ref[1] == old[1] == 0 and old.iterations == ref.iterations
    np.testing.assert_array_equal(old[0], ref[0])
    assert np.linalg.norm(b - A @ ref[0]) <= 1e-6 * np.linalg.norm(b) + residual_rounding(A, ref[0], b)
    with pytest.warns(DeprecationWarning):
        same = gpgpu.cg(A, b, tol=1e-6, rtol=1e-6)
    np.testing.assert_array_equal(same[0], ref[0])
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="tol=1e-06 and rtol=0.0001 disagree"):
        gpgpu.cg(A, b, tol=1e-6, rtol=1e-4)
    # the default is scipy's rtol = 1e-5, and what follows x0 is keyword-only, as in scipy
    default = gpgpu.cg(A, b)
    np.testing.assert_array_equal(default[0], gpgpu.cg(A, b, rtol=1e-5)[0])
    assert np.linalg.norm(b - A @ default[0]) > 1e-6 * np.linalg.norm(b)
    with pytest.raises(TypeError):
        gpgpu.cg(A, b, None, 1e-5)


def test_b_of_shape_n_by_1_answers_x_of_shape_n_as_scipy(poisson16):
    A, b = poisson16
    ref = gpgpu.cg(A, b, rtol=1e-6)
    col = gpgpu.cg(A, b[:, None], rtol=1e-6, x0=np.zeros((256, 1)))
    assert col[0].shape == spl.cg(A, b[:, None], rtol=1e-6)[0].shape == (256,)
    np.testing.assert_array_equal(col[0], ref[0])
    assert col[1] == 0 and col.iterations == ref.iterations
    with pytest.raises(ValueError, match=r"b must have shape \(n,\) or \(n, 1\), got \(256, 2\)"):
        gpgpu.cg(A, np.stack([b, b], axis=1))
    with pytest.raises(ValueError, match="length 256"):
        gpgpu.cg(A, b[:1, None])


@pytest.mark.parametrize("as_matrix", [
    lambda d: sp.diags(d),                            # dia_matrix, scipy's usual Jacobi M
    lambda d: sp.diags_array(d).tocsr(),              # a sparse array in CSR
    lambda d: sp.csr_matrix(np.diag(d)),
    lambda d: np.diag(d),                             # dense
], ids=["diags", "csr_array", "csr_matrix", "dense"])
def test_a_diagonal_matrix_preconditioner_is_its_diagonal(as_matrix, rng):
    """M given as scipy's Jacobi preconditioner sp.diags(1 / d): the GPU applies its diagonal,
    the same PCG as M given as the vector 1 / d, bit for bit (the same upload)."""
    A = poisson2d(8)
    D = sp.diags(10.0 ** rng.uniform(-1, 1, 64))
    B = (D @ A @ D).tocsr()
    b = rng.standard_normal(64)
    vec = gpgpu.cg(B, b, rtol=1e-5, M=1.0 / B.diagonal())
    mat = gpgpu.cg(B, b, rtol=1e-5, M=as_matrix(1.0 / B.diagonal()))
    assert mat[1] == vec[1] == 0 and mat.iterations == vec.iterations
    np.testing.assert_array_equal(mat[0], vec[0])
    assert_verified(mat, B, b, 1e-5 * np.linalg.norm(b))


@pytest.mark.parametrize("entry, as_matrix", [(0.0, False), (-0.25, False), (0.0, True)],
                         ids=["zero", "negative", "zero-in-diags"])
def test_a_preconditioner_with_an_entry_not_positive_is_named(entry, as_matrix):
    """A Jacobi M with a zero (a forgotten entry) or a negative entry is not positive definite:
    PCG broke down and the CGBreakdownError said that A is not positive definite (A is: the
    1-D Laplacian); now M's entry is named, before the iterations."""
    A = sp.diags([-1.0, 2.5, -1.0], [-1, 0, 1], shape=(6, 6)).tocsr()
    d = 1.0 / A.diagonal()
    d[3] = entry
    with pytest.raises(ValueError, match=rf"cg: M\[3\] = {entry:g} \(and 1 entries <= 0 or not finite in all\): the "
                                         r"preconditioner M ~ A\^-1 must be positive definite"):
        gpgpu.cg(A, np.arange(1.0, 7.0), M=sp.diags(d) if as_matrix else d)


@pytest.mark.parametrize("entry", [0.0, -0.25, np.inf], ids=["zero", "negative", "inf"])
def test_a_stream_preconditioner_with_an_entry_not_positive_is_named(entry):
    """The same M as a vector Stream (a Jacobi diagonal kept on the GPU): a zero entry was
    reported as a breakdown of an A "not positive definite" (A is: the 1-D Laplacian), a negative
    one was taken silently. Its entries are read back once and checked as a numpy M's."""
    A = sp.diags([-1.0, 2.5, -1.0], [-1, 0, 1], shape=(6, 6)).tocsr()
    d = 1.0 / A.diagonal()
    d[3] = entry
    with Stream.vector_of(6, data=d.astype(np.float32)) as Ms:
        with pytest.raises(ValueError, match=rf"cg: M\[3\] = {entry:g} \(and 1 entries <= 0 or not finite in "
                                             r"all\): the preconditioner M ~ A\^-1 must be positive definite.*"
                                             r"for Jacobi pass 1 / A.diagonal\(\)"):
            gpgpu.cg(A, np.arange(1.0, 7.0), M=Ms)
    with Stream.vector_of(6) as zero, pytest.raises(ValueError, match="cg: M is zero"):
        gpgpu.cg(A, np.arange(1.0, 7.0), M=zero)


@pytest.mark.parametrize("fmt, sort", [("ellpack", False), ("packed", False), ("corrigan", True)])
def test_a_non_symmetric_sparse_stream_is_refused_as_a_scipy_matrix_is(fmt, sort):
    """A SparseStream A that is not symmetric was solved (CG then converges by chance, breaks
    down or stalls); the scipy path's check now runs on the host copy from_scipy keeps."""
    A = sp.diags([-1.0, 2.5, -1.0], [-1, 0, 1], shape=(6, 6)).tolil()
    A[0, 1] = -0.5
    A = A.tocsr()
    b = np.arange(1.0, 7.0)
    with pytest.raises(ValueError, match=r"cg: A is not symmetric \(max \|A - A\^T\| = 0.5\)") as scipy_error:
        gpgpu.cg(A, b)
    with SparseStream.from_scipy(A, format=fmt, sort=sort) as S:
        with pytest.raises(ValueError) as stream_error:
            gpgpu.cg(S, b)
    assert str(stream_error.value) == str(scipy_error.value)
    A[0, 1] = -1.0                        # symmetric again: solved, as before
    with SparseStream.from_scipy(A, format=fmt, sort=sort) as S:
        x, info = gpgpu.cg(S, b, rtol=1e-6)
    assert info == 0 and np.linalg.norm(b - A @ x) <= 1e-6 * np.linalg.norm(b)


def test_what_the_gpu_cannot_apply_is_refused_with_the_reason():
    """A LinearOperator A (its product runs on the CPU; the GPU's product is a fragment program
    over A's texture), a preconditioner that is not a diagonal: refused, saying what to pass."""
    A = poisson2d(4)
    b = np.ones(16)
    for op in (spl.aslinearoperator(A), spl.LinearOperator(A.shape, matvec=lambda v: A @ v), lambda v: A @ v):
        with pytest.raises(TypeError, match="fragment program.*Pass the scipy.sparse matrix"):
            gpgpu.cg(op, b)
    diagonal = "only as a diagonal, by one element-wise product pass.*diags"
    with pytest.raises(ValueError, match=r"M is not diagonal \(M\[0, 1\] = -1.*" + diagonal):
        gpgpu.cg(A, b, M=A)
    with pytest.raises(ValueError, match="M is not diagonal"):
        gpgpu.cg(A, b, M=sp.diags([np.ones(16), np.full(15, 1e-3)], [0, 1]).tocsr())
    for M in (spl.aslinearoperator(sp.diags(np.ones(16))), lambda r: r):
        with pytest.raises(TypeError, match="cannot run on the GPU: .*" + diagonal):
            gpgpu.cg(A, b, M=M)
    with pytest.raises(ValueError, match="M must be square"):
        gpgpu.cg(A, b, M=sp.eye(16, 15))
    with pytest.raises(ValueError, match="length 16"):
        gpgpu.cg(A, b, M=sp.eye(8))


def test_a_target_below_float32s_reach_warns_once(poisson16):
    """float64 input is solved in float32: rtol = 1e-10 cannot be met (b - A x stops near
    1e-7 ||b||). cg warns once, runs, and answers info > 0 with .stagnated, not info 0."""
    A, b = poisson16
    with pytest.warns(Float32ToleranceWarning) as seen:
        res = gpgpu.cg(A, b, rtol=1e-10)
    assert len(seen) == 1 and "2^-23 ||b||" in str(seen[0].message) and "rtol = 1e-10" in str(seen[0].message)
    assert res[1] == res.iterations > 0 and res.stagnated
    assert np.linalg.norm(b - A @ res[0]) > 1e-10 * np.linalg.norm(b)
    with pytest.warns(Float32ToleranceWarning, match="atol = "):
        gpgpu.cg(A, b, rtol=0, atol=1e-9 * np.linalg.norm(b), maxiter=3)
    with pytest.warns(Float32ToleranceWarning):
        gpgpu.cg(A, b, rtol=FLOAT32_REACH / 2, maxiter=3)
    with Stream.from_array(b) as bs, pytest.warns(Float32ToleranceWarning):
        gpgpu.cg(A, bs, rtol=1e-9, maxiter=3)[0].release()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", Float32ToleranceWarning)
        gpgpu.cg(A, b, rtol=1.001 * FLOAT32_REACH, maxiter=3)
        gpgpu.cg(A, b, rtol=0, atol=1e-6 * np.linalg.norm(b), maxiter=3)
