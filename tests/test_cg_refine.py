"""cg's ``refine=True`` (beyond the papers): float64 iterative refinement around the float32 CG.

Each round computes r = b - A x in float64 on the host and solves A d = r by the GPU's CG; the
tests check against numpy float64 (the residual of the answer, measured here) what the rounds
reach, how they stop (the target, maxiter, a round that no longer halves ||r||, a breakdown in
a later round) and what they refuse. scipy's own tests through it: tests/test_scipy_cg.py.
"""
import warnings

import numpy as np
import pytest

import gpgpu
from gpgpu.cg import REFINE_RTOL


def _spd(cond_exponent, n=20, seed=3):
    """A symmetric positive definite matrix with eigenvalues 1 .. 10^cond_exponent, and b."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    A = Q @ np.diag(np.logspace(0, cond_exponent, n)) @ Q.T
    A = (A + A.T) / 2
    return A, A @ rng.standard_normal(n)


def _rel(A, x, b):
    return np.linalg.norm(b - A @ x) / np.linalg.norm(b)


def test_the_rounds_reach_a_target_float32_cannot():
    """cond 1e5, rtol 1e-10: the plain cg stops above it (info > 0, warned); with refine the
    float64 residual meets it after at least two rounds, with no warning."""
    A, b = _spd(-5)
    with pytest.warns(gpgpu.Float32ToleranceWarning):
        x, info = gpgpu.cg(A, b, rtol=1e-10, maxiter=5000)
    assert info > 0 and _rel(A, x, b) > 1e-10
    with warnings.catch_warnings():
        warnings.simplefilter("error", gpgpu.Float32ToleranceWarning)
        r = gpgpu.cg(A, b, rtol=1e-10, maxiter=5000, refine=True)
    x, info = r
    assert info == 0 and _rel(A, x, b) <= 1e-10
    assert r.refinements >= 2 and r.residual_norm == pytest.approx(np.linalg.norm(b - A @ x), rel=1e-12)
    assert len(r.residuals) == r.refinements + 1 and r.residuals[0] == pytest.approx(np.linalg.norm(b))
    assert all(later <= 0.5 * before for before, later in zip(r.residuals, r.residuals[1:]))
    assert not r.stagnated and r.iterations > 0 and r.readbacks > 0


def test_a_target_within_float32s_reach_takes_one_round():
    """rtol 1e-4 on a well-conditioned system: one round at REFINE_RTOL meets it."""
    A, b = _spd(-1)
    r = gpgpu.cg(A, b, rtol=1e-4, refine=True)
    assert r[1] == 0 and r.refinements == 1 and _rel(A, r[0], b) <= max(1e-4, REFINE_RTOL)


def test_maxiter_counts_every_rounds_iterations_and_is_no_stall():
    """maxiter bounds all rounds together; stopping there is info = the iterations, not a stall."""
    A, b = _spd(-5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gpgpu.Float32ToleranceWarning)
        r = gpgpu.cg(A, b, rtol=1e-12, maxiter=30, refine=True)
    assert r[1] == r.iterations == 30 and not r.stagnated


def test_a_system_float32_cannot_resolve_stops_with_a_warning_never_a_claim():
    """cond 1e11: the rounds stop above the target (a round no longer halves ||r||, or the next
    round's float32 CG breaks down) with info > 0, stagnated and a warning, keeping the best x."""
    A, b = _spd(-11)
    with pytest.warns(gpgpu.Float32ToleranceWarning, match="refine=True"):
        r = gpgpu.cg(A, b, rtol=1e-12, maxiter=5000, refine=True)
    x, info = r
    assert info > 0 and r.stagnated and _rel(A, x, b) > 1e-12
    assert np.linalg.norm(b - A @ x) == pytest.approx(r.residual_norm, rel=1e-12) and r.residual_norm < np.linalg.norm(b)


def test_the_callback_gets_the_float64_iterate_of_every_iteration():
    A, b = _spd(-5)
    seen = []
    r = gpgpu.cg(A, b, rtol=1e-10, maxiter=5000, refine=True, callback=lambda xk: seen.append(xk.copy()))
    assert len(seen) == r.iterations and seen[-1].dtype == np.float64
    np.testing.assert_allclose(seen[-1], r[0], rtol=0, atol=1e-6 * np.abs(r[0]).max())


def test_b_zero_and_an_exact_x0_answer_at_once():
    A, b = _spd(-2)
    x, info = gpgpu.cg(A, np.zeros(20), x0=np.ones(20), refine=True)
    assert info == 0 and not x.any()
    x_exact = np.linalg.solve(A, b)
    r = gpgpu.cg(A, A @ x_exact, x0=x_exact, rtol=1e-6, refine=True)
    assert r[1] == 0 and r.refinements == 0 and np.array_equal(r[0], x_exact)


def test_refine_refuses_what_it_cannot_take():
    A, b = _spd(-2)
    with pytest.raises(TypeError, match="refine must be True or False"):
        gpgpu.cg(A, b, refine=1)
    with gpgpu.Stream.from_array(A.astype(np.float32)) as S, pytest.raises(ValueError, match="on the host"):
        gpgpu.cg(S, b, refine=True)
