"""Conjugate gradients on the GPU (paper 003): scipy's answer and iteration counts, the scalars
kept on the GPU, breakdown and bad input named."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spl

import gpgpu
from gpgpu import CGBreakdownError, SparseStream, Stream, stream


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
        res = gpgpu.cg(S, b, tol=1e-5, **variant)
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
    every = gpgpu.cg(A, b, tol=1e-3)
    assert readbacks.n == every.readbacks + 1          # and the download of x
    sparse = gpgpu.cg(A, b, tol=1e-3, check_every=10)
    # ||b|| comes from the host (a numpy b) and r0 = b; then one read-back (||r||^2 with the
    # breakdown and convergence watches) per check, and one of ||b - A x|| at the end
    assert every.readbacks == every.iterations + 1
    assert sparse.readbacks == -(-sparse.iterations // 10) + 1
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
    plain = gpgpu.cg(B, b, tol=1e-4, maxiter=1000)
    jacobi = gpgpu.cg(B, b, tol=1e-4, M=1.0 / B.diagonal(), maxiter=1000)
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
    x, info = gpgpu.cg(A, b, x0=x_ref + 1e-3, callback=seen.append, tol=1e-6)
    assert info == 0 and len(seen) >= 1 and seen[-1].shape == (64,)
    np.testing.assert_allclose(seen[-1], x, rtol=0, atol=0)
    with Stream.from_array(b) as bs, SparseStream.from_scipy(A) as S:
        res = gpgpu.cg(S, bs, tol=1e-6)
        assert isinstance(res[0], Stream)
        np.testing.assert_allclose(res[0].to_array(), x_ref, rtol=1e-4, atol=1e-4)
        res[0].release()


def test_dense_array_and_stream_matrices(rng):
    B = rng.standard_normal((30, 30))
    A = B @ B.T + 30 * np.eye(30)
    b = rng.standard_normal(30)
    x, info = gpgpu.cg(A, b, tol=1e-6)
    assert info == 0 and np.linalg.norm(A @ x - b) <= 1.05e-6 * np.linalg.norm(b)
    with Stream.from_array(A) as As:
        x2, info2 = gpgpu.cg(As, b, tol=1e-6)
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
    x, info = gpgpu.cg(A, b, tol=1e-5, recompute_every=50)
    assert info == 0
    assert np.linalg.norm(x - x_ref) / np.linalg.norm(x_ref) < 1e-4
    with pytest.raises(ValueError, match="recompute_every"):
        gpgpu.cg(A, b, recompute_every=0)


def test_folded_vectors(monkeypatch, rng):
    monkeypatch.setattr(stream, "FOLD_WIDTH", 16)          # 100 unknowns in rows of 16
    A = poisson2d(10)
    b = rng.standard_normal(100)
    x, info = gpgpu.cg(A, b, tol=1e-6)
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


@pytest.mark.parametrize("kw, match", [(dict(tol=-1.0), "tol"), (dict(maxiter=-1), "maxiter"),
                                       (dict(check_every=0), "check_every"),
                                       (dict(reduction="tree"), "reduction"),
                                       (dict(M=np.ones((3, 3))), "diagonal")])
def test_bad_options(kw, match):
    with pytest.raises(ValueError, match=match):
        gpgpu.cg(sp.eye(3, format="csr"), np.ones(3), **kw)
