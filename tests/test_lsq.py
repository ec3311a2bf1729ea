import numpy as np
import pytest

import gpgpu


def problem(m, ill, rng):
    """Section 5.3 of 001: uniform [0, 1] data, n = 2m; ill-conditioned D² = 10^(-4 + 8i/(n-1))."""
    n = 2 * m
    A = rng.random((m, n))
    b = rng.random(n)
    d = 10.0 ** (-4 + 8 * np.arange(n) / (n - 1)) if ill else rng.random(n)
    x = np.linalg.solve(A @ np.diag(d) @ A.T, A @ (d * b))
    return A, d, b, x


def err(x, ref):
    return np.linalg.norm(x - ref) / np.linalg.norm(ref)


@pytest.mark.parametrize("m", [64, 256])
def test_refinement_reaches_double_precision(m, rng):
    steps = {}
    for ill in (False, True):
        A, d, b, xref = problem(m, ill, rng)
        res = gpgpu.lstsq_weighted(A, d, b, refine=True, tol=1e-8, criterion="paper")
        e0, e = err(res.x0, xref), err(res.x, xref)
        assert 1e-7 < e0 < 1e-1, (ill, e0)  # single precision: far from double
        assert e <= 1e-10, (ill, e)
        M, rhs = A @ np.diag(d) @ A.T, A @ (d * b)
        assert res.converged
        # the returned x satisfies Algorithm 1's test, recomputed here in float64
        assert np.linalg.norm(rhs - M @ res.x) / np.linalg.norm(res.x) <= 1e-8
        steps[ill] = res.iterations
    assert steps[True] > steps[False]  # ill-conditioned problems need more refinement (Tables 1-2)


def test_unrefined_returns_x0_and_unpacks(rng):
    A, d, b, xref = problem(16, False, rng)
    x, history = gpgpu.lstsq_weighted(A, d, b, refine=False)
    M = A @ np.diag(d) @ A.T
    # a backward-stable float32 solve: forward error about cond(M) u (here 2e-5; measured 3e-6)
    assert history == [] and err(x, xref) < np.linalg.cond(M) * 2.0 ** -24


@pytest.mark.parametrize("scale", [1.0, 1e-3])
def test_refinement_stops_on_the_residual_as_algorithm_1_says(scale):
    """Algorithm 1 of 001 stops at the first k with ||r_k|| / ||x_{k+1}|| <= eps, r_k = A D² b -
    A D² Aᵀ x_k. With A scaled by 1e-3 the corrections are 1e6 times the residuals, so a rule
    that looked at the correction instead would stop several steps later. The iterates x_k
    come from runs with maxiter = k (the GPU is deterministic) and the residuals are
    recomputed here in float64."""
    A, d, b, _ = problem(32, True, np.random.default_rng(1))
    A = A * scale
    M, rhs = A @ np.diag(d) @ A.T, A @ (d * b)
    tol = 1e-10
    full = gpgpu.lstsq_weighted(A, d, b, tol=tol, criterion="paper")
    k = full.iterations
    assert full.converged and k >= 1

    def x_after(j):
        return full.x0 if j == 0 else gpgpu.lstsq_weighted(A, d, b, tol=tol, maxiter=j, criterion="paper").x

    def criterion(j):  # ||r_j|| / ||x_{j+1}||
        return np.linalg.norm(rhs - M @ x_after(j)) / np.linalg.norm(x_after(j + 1))

    np.testing.assert_array_equal(x_after(k), full.x)
    assert criterion(k - 1) <= tol
    if k >= 2:
        assert criterion(k - 2) > tol


def test_packed_storage_gives_the_same_answer(rng):
    A, d, b, xref = problem(17, False, rng)
    assert err(gpgpu.lstsq_weighted(A, d, b, storage="packed").x, xref) < 1e-10


def test_errors():
    with pytest.raises(ValueError, match="need length 4"):
        gpgpu.lstsq_weighted(np.ones((2, 4)), np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="non-negative"):
        gpgpu.lstsq_weighted(np.eye(2), -np.ones(2), np.ones(2))


@pytest.mark.parametrize("shape", [(9, 8), (128, 64)])
def test_more_rows_than_columns_is_refused_before_any_pass(shape, rng):
    # A D² Aᵀ (m x m) has rank at most n < m: singular. The 9 x 8 case used to return a finite
    # x (float32 rounding kept its pivots positive) and claim convergence.
    A = rng.standard_normal(shape)
    with gpgpu.counters.count(time=False) as c:
        with pytest.raises(ValueError, match=r"more rows than columns.*A\.T"):
            gpgpu.lstsq_weighted(A, np.ones(shape[1]), np.ones(shape[1]))
    assert c.passes() == 0


@pytest.mark.parametrize("option, value", [("form_cholesky", "left"), ("storage", "Packed")])
def test_options_are_checked_by_their_own_names_before_any_pass(option, value, rng):
    A = rng.standard_normal((4, 8))
    with gpgpu.counters.count(time=False) as c:
        with pytest.raises(ValueError, match=f"lstsq_weighted: {option} must be"):
            gpgpu.lstsq_weighted(A, np.ones(8), np.ones(8), **{option: value})
    assert c.passes() == 0


def test_zero_weights_name_a_d2_at_not_lu(rng):
    A = rng.standard_normal((4, 8))
    with pytest.raises(gpgpu.NotPositiveDefiniteError, match="A D² Aᵀ must be symmetric positive definite") as e:
        gpgpu.lstsq_weighted(A, np.zeros(8), np.ones(8))
    assert "gpgpu.lu" not in str(e.value)


@pytest.mark.parametrize("scale", [1e-20, 1e-8, 1.0, 1e10, 1e20])
def test_the_default_test_means_the_same_in_any_units(scale):
    """The default criterion divides ||r|| / ||x|| by the largest diagonal entry of A D² Aᵀ: A
    times 1e-8 or 1e10 takes the same steps (to one), converges, and the answer is as accurate (the
    paper's test converged after one step at 3.5e-4 for A times 1e-8 and never for A times 1e10).
    A times 1e-20 is uploaded times a power of two (its A D² Aᵀ, 1e-40, is below float32's
    normal range: it was refused as not positive definite)."""
    A, d, b, xref = problem(32, True, np.random.default_rng(1))
    plain = gpgpu.lstsq_weighted(A, d, b)
    res = gpgpu.lstsq_weighted(A * scale, d, b)
    # the same steps to one (A times 1e-20 rounds to float32 otherwise than A: measured 2 and 3 on
    # an H200, equal on llvmpipe)
    assert res.converged and abs(res.iterations - plain.iterations) <= 1, (res.iterations, plain.iterations)
    M = (A * scale) @ np.diag(d) @ (A * scale).T
    r = A @ (d * b) * scale - M @ res.x
    assert np.linalg.norm(r) / (np.max(np.diag(M)) * np.linalg.norm(res.x)) <= 1e-10
    # a backward error of 1e-10 on this ill-conditioned problem (D² = 10^-4 .. 10^4): x to 1e-8
    assert err(res.x * scale, xref) <= 1e-8 and err(plain.x, xref) <= 1e-8


def test_the_papers_test_is_one_word_away():
    """criterion="paper" is Algorithm 1's ||r|| / ||x|| <= tol as printed: in A's units, so A times
    1e10 never meets 1e-8 (100 steps, not converged) while the default does in a few."""
    A, d, b, _ = problem(16, False, np.random.default_rng(2))
    paper = gpgpu.lstsq_weighted(A * 1e10, d, b, tol=1e-8, criterion="paper")
    assert not paper.converged and paper.iterations == 100
    assert gpgpu.lstsq_weighted(A * 1e10, d, b, tol=1e-8).converged
    with pytest.raises(ValueError, match="criterion must be one of"):
        gpgpu.lstsq_weighted(A, d, b, criterion="relative")
