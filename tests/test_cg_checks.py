"""What cg answers is what it says: the verified residual in float64 where A and b are on the host,
the answer of an infinite target, and the paper preset's stop below float32's reach. References
are numpy's float64 b - A x and hand-worked cases."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import gpgpu


def anisotropic(k, eps=0.001, theta=np.pi / 8):
    """Rotated anisotropic diffusion, 9-point stencil (pyamg's diffusion_stencil_2d, type 'FD',
    written out): k^2 unknowns, eigenvalues down to about 1e-3 for k = 100."""
    C, S = np.cos(theta), np.sin(theta)
    CC, SS, CS = C * C, S * S, C * S
    a = (-eps - 1) * CC + (-eps - 1) * SS + (3 * eps - 3) * CS
    b = (2 * eps - 4) * CC + (-4 * eps + 2) * SS
    c = (-eps - 1) * CC + (-eps - 1) * SS + (-3 * eps + 3) * CS
    d = (-4 * eps + 2) * CC + (2 * eps - 4) * SS
    e = (8 * eps + 8) * CC + (8 * eps + 8) * SS
    stencil = np.array([[a, b, c], [d, e, d], [c, b, a]]) / 6.0
    idx = np.arange(k * k).reshape(k, k)
    rows, cols, vals = [], [], []
    for di in (-1, 0, 1):
        for dj in (-1, 0, 1):
            src = idx[max(0, -di):k - max(0, di), max(0, -dj):k - max(0, dj)].ravel()
            dst = idx[max(0, di):k - max(0, -di), max(0, dj):k - max(0, -dj)].ravel()
            rows.append(src), cols.append(dst), vals.append(np.full(src.size, stencil[di + 1, dj + 1]))
    A = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(k * k, k * k))
    return ((A + A.T) / 2).tocsr()


@pytest.mark.parametrize("preset", ["robust", "fast"])
def test_converged_means_the_float64_residual_meets_the_target(preset):
    """Anisotropic diffusion (k = 100, b normal), rtol 1e-5: info 0 only where ||b - A x|| in
    float64 meets the target, and residual_norm is that float64 norm. (The fast preset said
    info 0 at a float32 residual of 9.2e-6 where the float64 one was 1.02e-5.)"""
    A = anisotropic(100)
    b = np.random.default_rng(0).standard_normal(A.shape[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = gpgpu.cg(A, b, rtol=1e-5, preset=preset)
    x, info = r
    true = np.linalg.norm(b - A @ x)
    assert r.residual_norm == pytest.approx(true, rel=1e-12)
    if info == 0:
        assert true <= 1e-5 * np.linalg.norm(b)
    else:
        assert r.stagnated and true > 1e-5 * np.linalg.norm(b)
    assert preset != "robust" or info == 0           # robust reaches it (9.7e-6)


def test_an_infinite_target_answers_the_residual_of_its_start():
    """rtol = inf: x0 (zeros) at once, info 0, and residual_norm ||b|| (it was nan); with an x0,
    ||b - A x0|| measured."""
    A = sp.diags([2.0] * 5).tocsr()
    b = np.arange(1.0, 6.0)
    x, info = r = gpgpu.cg(A, b, rtol=np.inf)
    assert info == 0 and not x.any() and r.iterations == 0
    assert r.residual_norm == pytest.approx(np.linalg.norm(b), rel=1e-7)
    x0 = np.ones(5)
    r0 = gpgpu.cg(A, b, x0=x0, rtol=np.inf)
    assert r0[1] == 0 and np.array_equal(r0[0], x0)
    assert r0.residual_norm == pytest.approx(np.linalg.norm(b - A @ x0), rel=1e-7)


def test_the_paper_preset_stops_where_its_recurrence_stops_falling():
    """rtol 1e-9 is below float32's reach: the paper preset (no verification) ran to maxiter =
    10 n there (more than 100 s on Poisson 512²); it stops when its recurrence's ||r|| has not
    fallen for STALL_WINDOW iterations, stagnated, info > 0, residual_norm the float64 one."""
    from gpgpu.cg.api import STALL_WINDOW

    k = 32
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(k, k))
    A = (sp.kron(T, sp.eye(k)) + sp.kron(sp.eye(k), T)).tocsr()
    b = np.random.default_rng(3).standard_normal(k * k)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = gpgpu.cg(A, b, rtol=1e-9, preset="paper")
    x, info = r
    assert info == r.iterations > 0 and r.stagnated
    assert 2 * STALL_WINDOW <= r.iterations < 10 * k * k
    assert r.residual_norm == pytest.approx(np.linalg.norm(b - A @ x), rel=1e-12)
    assert r.residual_norm > 1e-9 * np.linalg.norm(b)


def test_the_stall_stop_leaves_a_falling_recurrence_alone():
    """The paper preset's stop (gpgpu.cg.api._stalled, STALL_WINDOW): a recurrence that keeps
    falling over 2500 iterations never stops; one flat since iteration 800 stops at 1300, the
    first read where the last window's smallest ||r|| is no lower than before it (planted: the
    test's 'and' as 'or', which stopped every run at 2 STALL_WINDOW)."""
    from gpgpu.cg.api import STALL_WINDOW, _stalled

    falling = [(k, 0.999 ** k) for k in range(2500)]
    assert not any(_stalled(falling[:k + 1], k) for k in range(2500))
    flat = [(k, 0.999 ** min(k, 800)) for k in range(2500)]
    stops = [k for k in range(2500) if _stalled(flat[:k + 1], k)]
    assert stops[0] == 800 + STALL_WINDOW and STALL_WINDOW == 500


def test_one_iteration_answers_its_own_residual():
    """maxiter = 1: the answer's residual_norm is ||b - A x|| of x after that iteration (planted:
    the initial ||b|| kept when the count is 1)."""
    A = sp.diags([-1.0, 2.5, -1.0], [-1, 0, 1], shape=(50, 50)).tocsr()
    b = np.ones(50)
    x, info = r = gpgpu.cg(A, b, rtol=1e-8, maxiter=1)
    assert info == 1 and r.iterations == 1
    assert r.residual_norm == pytest.approx(np.linalg.norm(b - A @ x), rel=1e-12)
    assert r.residual_norm < 0.9 * np.linalg.norm(b)
