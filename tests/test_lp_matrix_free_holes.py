"""The matrix-free method's restart after a stall and its adaptive PCG limit, observed through
spies on the iteration's own hooks (numpy64 back end, a small random LP; each test well under a
second): how many restarts a run is allowed, that the PCG limit doubles after a solve stopped at
it, and that a restart goes on from the starting point."""
import numpy as np
import pytest
import scipy.sparse as sp

from gpgpu.lp import Problem
from gpgpu.lp import matrix_free as mf
from gpgpu.lp.matrix_free_numpy import NumpyMatrixFree


def small_lp(m=30, n=70):
    """A feasible, bounded standard-form LP: x0 > 0 gives b = A x0, and c > 0 bounds it."""
    rng = np.random.default_rng(7)
    A = sp.random(m, n, density=0.15, random_state=np.random.RandomState(1), format="csr")
    A = (A + sp.eye(m, n, format="csr")).tocsr()            # full row rank
    x0 = rng.uniform(0.5, 1.5, n)
    return Problem.from_arrays(A, A @ x0, rng.uniform(0.5, 2.0, n), name="small")


def run(p, **kw):
    return mf.matrix_free(NumpyMatrixFree(p), p, **kw)


@pytest.mark.parametrize("allowed", [1, 3])
def test_a_stalled_iteration_restarts_exactly_restarts_times(monkeypatch, allowed):
    """Guards the restart count: a stalled iteration goes on from its starting point at most
    ``RESTARTS`` times (the comparison is ``restarts < RESTARTS``); the stall after the last
    restart ends the run in numerical trouble. The stall test is made to fire at every
    iteration, so the history is RESTARTS restart entries and one final entry."""
    monkeypatch.setattr(mf, "RESTARTS", allowed)
    monkeypatch.setattr(mf, "stop_code", lambda point, *a, **kw: 4)      # always stalled
    monkeypatch.setattr(mf, "diverged", lambda *a, **kw: None)            # no ray decides it
    hist = []
    r = run(small_lp(), eps=1e-8, max_iter=20, callback=hist.append)
    restarts = [h for h in hist if "restart_iteration" in h]
    assert len(restarts) == allowed
    assert len(hist) == allowed + 1 and "restart_iteration" not in hist[-1]
    assert r.status_code == 4 and r.status == "numerical_trouble"
    # each restart lowers the ceiling RESTART_REG_CUT = 1e4 times (reg_max = 1e-2 to start)
    ceilings = [h["regularisation_ceiling"] for h in restarts]
    assert ceilings == pytest.approx([1e-2 * 1e-4 ** (i + 1) for i in range(allowed)], rel=1e-12)


def test_pcg_limit_doubles_after_a_solve_stopped_at_it(monkeypatch):
    """Guards the adaptive rule's PCG limit: after an iteration whose PCG stopped at its limit,
    the default limit (max(200, min(4 m, 2000)) = 200 for m = 30) doubles for the next
    iteration's solves, up to PCG_LIMIT_GROWTH = 4 times its start. The spy runs the real PCG
    and reports every solve as stopped at its limit; it records the limit each solve is given.
    The predictor's solve (the first after the iteration's set_weights) gets the current limit:
    200, 400, 800, 800."""
    limits = []                                   # one list per set_weights: start, iterations 0, 1, ...
    real_pcg, real_weights = mf.pcg, mf._Solver.set_weights

    def spy_pcg(be, b, target, maxiter, soft=None):
        out = real_pcg(be, b, target, maxiter, soft=soft)
        limits[-1].append(maxiter)
        out.update(converged=False, breakdown=False, iterations=maxiter)   # "limit"
        return out

    def spy_weights(self, theta, delta, rank):
        limits.append([])
        return real_weights(self, theta, delta, rank)

    monkeypatch.setattr(mf, "pcg", spy_pcg)
    monkeypatch.setattr(mf._Solver, "set_weights", spy_weights)
    hist = []
    r = run(small_lp(), eps=1e-12, max_iter=4, callback=hist.append)
    steps = [h for h in hist if h["pcg_stop"] is not None]
    assert len(steps) == 4 and all(h["pcg_stop"] == ("limit", "limit") for h in steps)
    assert [it[0] for it in limits[1:]] == [200, 400, 800, 800]
    assert r.adaptive_state[1] == 800


def test_a_stall_restarts_from_the_starting_point(monkeypatch):
    """Guards the point a stall's restart goes on from: the starting point (iteration 0), not
    the best point seen nor the best point near the central path. The stall test is made to fire
    at iteration 3, after three steps that lowered the residuals (so the best point is not the
    start); the iteration after the restart then has iteration 0's residuals and mu, and the
    restart entry names iteration 0."""
    real = mf.stop_code
    at = 3

    def stall_at(point, settings, k, *a, **kw):
        if k == at:
            return 4
        return real(point, settings, k, *a, **kw)

    monkeypatch.setattr(mf, "stop_code", stall_at)
    hist = []
    run(small_lp(), eps=1e-8, max_iter=at + 2, callback=hist.append)
    assert hist[at]["iteration"] == at and hist[at]["restart_iteration"] == 0
    keys = ("primal_residual", "dual_residual", "mu", "primal_objective", "dual_objective")
    worst = [max(h["primal_residual"], h["dual_residual"], h["gap"]) for h in hist]
    assert min(worst[1:at + 1]) < 0.5 * worst[0]      # the steps moved: the best point is not the start
    after, start = hist[at + 1], hist[0]
    for key in keys:
        assert after[key] == pytest.approx(start[key], rel=1e-12, abs=0.0), key
    assert after[keys[0]] != pytest.approx(hist[at][keys[0]], rel=1e-3)
