"""solve(..., regularize=True): paper 002's primal-dual proximal regularisation in the Mehrotra
solver (gpgpu.lp.regularisation, shared with the matrix-free method). References: the full
three-block Newton system solved densely in float64 (never the code's own normal equations),
numpy float32 for the diagonal shift, scipy's linprog for the optima."""
import numpy as np
import pytest
import scipy.sparse as sp

highspy = pytest.importorskip("highspy")
from scipy.optimize import linprog  # noqa: E402

from gpgpu.adat import shift_diagonal  # noqa: E402
from gpgpu.lp import Problem, solve  # noqa: E402
from gpgpu.lp.gpu_backend import GPUBackend  # noqa: E402
from gpgpu.lp.mehrotra import _newton  # noqa: E402
from gpgpu.lp.numpy_backend import NumpyBackend  # noqa: E402
from gpgpu.lp.regularisation import ProximalRegularisation  # noqa: E402
from gpgpu.stream import Stream  # noqa: E402

from test_lp_mehrotra import netlib, rel  # noqa: E402


# --------------------------------------------------------------------------- the kernel
@pytest.mark.parametrize("m", [1, 2, 17, 100])
def test_shift_diagonal_adds_delta_on_every_diagonal_texel_and_nowhere_else(m, rng):
    M = rng.standard_normal((m, m)).astype(np.float32)
    delta = np.float32(0.3710)
    with Stream.from_array(M, "M") as s:
        shift_diagonal(s, delta)
        out = s.to_array()
    want = M.copy()
    want[np.diag_indices(m)] += delta                    # float32 addition, as the blender's
    np.testing.assert_array_equal(out[~np.eye(m, dtype=bool)], M[~np.eye(m, dtype=bool)])
    np.testing.assert_allclose(np.diag(out), np.diag(want), rtol=2 ** -23, atol=0)


def test_shift_diagonal_refuses_what_it_cannot_shift():
    with Stream(3, 4) as s, pytest.raises(ValueError, match="square"):
        shift_diagonal(s, 1.0)
    with Stream(3, 3) as s, pytest.raises(ValueError, match="finite"):
        shift_diagonal(s, float("nan"))


# --------------------------------------------------------------------------- the Newton system
def _state(seed, m=6, n=11):
    rng = np.random.default_rng(seed)
    A = rng.uniform(-1.0, 2.0, (m, n)) * (rng.random((m, n)) < 0.7)
    A[:, :m] += 3.0 * np.eye(m)                          # full row rank
    x, s = rng.uniform(0.1, 3.0, n), rng.uniform(0.1, 3.0, n)
    b, c, lam = rng.standard_normal(m), rng.standard_normal(n), rng.standard_normal(m)
    return A, x, s, b - A @ x, c - A.T @ lam - s


def _reference(A, x, s, rb, rc, rxs, rho, delta):
    """The regularised Newton system in its three blocks, float64, dense:
    A dx + delta dlam = r_b, -rho dx + A^T dlam + ds = r_c, S dx + X ds = -r_xs."""
    m, n = A.shape
    K = np.block([[A, delta * np.eye(m), np.zeros((m, n))],
                  [-rho * np.eye(n), A.T, np.eye(n)],
                  [np.diag(s), np.zeros((n, m)), np.diag(x)]])
    sol = np.linalg.solve(K, np.concatenate([rb, rc, -rxs]))
    return sol[:n], sol[n:n + m], sol[n + m:]


@pytest.mark.parametrize("backend,tol", [("numpy64", 1e-10), ("gpu", 2e-4)])
@pytest.mark.parametrize("rho,delta", [(0.0, 0.0), (0.7, 0.0), (0.0, 0.5), (0.3, 1e-3)])
def test_regularised_newton_direction_solves_the_three_block_system(backend, tol, rho, delta):
    """What mehrotra() passes to _newton when regularised -- d = x / (s + rho x), the
    predictor's q = x s / (s + rho x), the factor of A d A^T + delta I -- gives the direction
    of the regularised system; the corrector's (r_b = r_c = 0, any r_xs) too."""
    A, x, s, rb, rc = _state(1)
    p = Problem.from_arrays(A, np.zeros(A.shape[0]), np.zeros(A.shape[1]))
    be = NumpyBackend(p, dtype=np.float64) if backend == "numpy64" else GPUBackend(p)
    try:
        st = s + rho * x
        d = be.vector(x / st)
        be.factor_normal(d, delta)
        got = _newton(be, d, be.vector(rb), be.vector(rc), be.vector(x * s / st), rho=rho)
        want = _reference(A, x, s, rb, rc, x * s, rho, delta)
        for g, w in zip(got, want):
            np.testing.assert_allclose(be.to_numpy(g), w, rtol=tol, atol=tol * np.abs(w).max())
        rxs = np.random.default_rng(2).standard_normal(A.shape[1])
        got = _newton(be, d, None, None, be.vector(rxs / st), rho=rho)
        want = _reference(A, x, s, 0 * rb, 0 * rc, rxs, rho, delta)
        for g, w in zip(got, want):
            np.testing.assert_allclose(be.to_numpy(g), w, rtol=tol, atol=tol * np.abs(w).max())
    finally:
        getattr(be, "release", lambda: None)()


@pytest.mark.parametrize("backend", ["numpy32", "gpu"])
def test_refinement_solves_the_shifted_matrix_in_float64(backend):
    """With refine=True the float64 residual is that of A d A^T + delta I: the answer meets it to
    float64 accuracy (without the shift in the refinement's product it would converge to the
    unshifted system's answer, 1e-2 away here)."""
    A, x, s, _, _ = _state(4)
    A = np.vstack([A, A[0]])                              # a repeated row: A d A^T is singular
    p = Problem.from_arrays(A, np.zeros(A.shape[0]), np.zeros(A.shape[1]))
    be = NumpyBackend(p, dtype=np.float32, refine=True) if backend == "numpy32" else GPUBackend(p, refine=True)
    try:
        d, delta = x / s, 1e-2
        r = np.random.default_rng(5).standard_normal(A.shape[0])
        be.factor_normal(be.vector(d), delta)
        z = be.to_numpy(be.solve_normal(be.vector(r)))
        M = A @ np.diag(d) @ A.T + delta * np.eye(A.shape[0])
        np.testing.assert_allclose(z, np.linalg.solve(M, r), rtol=1e-9, atol=1e-9 * np.abs(z).max())
    finally:
        getattr(be, "release", lambda: None)()


# --------------------------------------------------------------------------- the schedule
def test_schedule_follows_mu_between_its_bounds_and_cuts_ten_fold():
    reg = ProximalRegularisation(1e-6, 1e-2)
    assert reg.start == (1e-2, 1e-2)
    assert reg.current(5.0) == (1e-2, 1e-2)               # clipped above
    assert reg.current(3e-4) == (3e-4, 3e-4)              # mu between the bounds
    assert reg.current(1e-9) == (1e-6, 1e-6)              # clipped below
    rho, delta = reg.current(1.0)
    # rho's leak 1e-2 * 20 > 0.1 * max(1.0, 1e-9): cut; delta's 1e-2 * 1 <= 0.1 * 0.5: kept
    reg.after_step(rho, delta, 20.0, 1.0, 1.0, 0.5, 1e-9, 1e-9)
    assert reg.current(1.0) == (1e-3, 1e-2)
    reg.after_step(1e-3, 1e-2, 0.0, 1e3, 1.0, 1.0, 1e-9, 1e-9)
    assert reg.current(1.0) == (1e-3, 1e-3)
    for _ in range(5):                                    # never below reg_min
        reg.after_step(*reg.current(1.0), 1e9, 1e9, 0.0, 0.0, 1e-9, 1e-9)
    assert reg.current(1.0) == (1e-6, 1e-6)


def test_schedule_units_for_unnormalised_b_and_c():
    """rho has the units of c / x, delta those of b / y: with b scaled by 1e3 and c by 1e2
    the pair is (rho' 1e2 / 1e3, delta' 1e3 / 1e2), mu' = mu / 1e5."""
    reg = ProximalRegularisation(1e-8, 1e-2, b_scale=1e3, c_scale=1e2)
    rho, delta = reg.current(0.3)                         # mu' = 3e-6
    assert rho == pytest.approx(3e-6 * 0.1) and delta == pytest.approx(3e-6 * 10.0)
    with pytest.raises(ValueError, match="reg_min <= reg_max"):
        ProximalRegularisation(1e-2, 1e-3)


# --------------------------------------------------------------------------- solves
def duplicated_rows_lp(seed):
    """A standard-form LP whose A has two equal rows and a third that is their negative sum plus
    another row (rank m - 2), feasible and bounded by construction."""
    rng = np.random.default_rng(seed)
    m, n = 6, 14
    A = rng.uniform(0.2, 2.0, (m, n)) * (rng.random((m, n)) < 0.75)
    A[4] = A[0]
    A[5] = -(A[1] + A[2]) + A[3]
    x0 = rng.uniform(0.5, 2.0, n)
    c = A.T @ rng.standard_normal(m) + rng.uniform(0.1, 1.0, n)
    return A, A @ x0, c


@pytest.mark.parametrize("backend,eps,tol", [("numpy64", 1e-9, 1e-8), ("numpy32", 1e-8, 1e-7),
                                             ("gpu", 1e-8, 1e-7)])
@pytest.mark.parametrize("seed", [0, 1])
def test_regularised_solve_of_a_rank_deficient_lp_is_linprogs(backend, eps, tol, seed):
    A, b, c = duplicated_rows_lp(seed)
    ref = linprog(c, A_eq=A, b_eq=b, bounds=(0, None), method="highs")
    assert ref.status == 0
    r = solve(Problem.from_arrays(A, b, c), backend=backend, eps=eps, regularize=True)
    assert r.status == "optimal", r.message
    assert rel(r.objective, ref.fun) <= tol
    assert np.abs(A @ r.x_std - b).max() <= 10 * eps * (1 + np.abs(b).max())
    regs = [h["regularisation"] for h in r.history[:-1]]
    assert all(reg is not None and reg[0] > 0 and reg[1] > 0 for reg in regs)
    assert regs[-1][0] < regs[0][0] and regs[-1][1] < regs[0][1]      # it followed mu down


@pytest.mark.parametrize("backend", ["numpy64", "gpu"])
def test_regularised_solve_of_afiro_at_1e8(backend):
    p, ref = netlib("afiro")
    r = solve(p, backend=backend, eps=1e-8, regularize=True)
    assert r.status == "optimal", r.message
    assert rel(r.objective, ref) <= 1e-8


def test_regularise_options_are_checked_and_on_the_cli(capsys):
    from gpgpu.lp.__main__ import main as cli_main

    A, b, c = duplicated_rows_lp(0)
    p = Problem.from_arrays(A, b, c)
    with pytest.raises(TypeError, match="regularize must be True or False"):
        solve(p, backend="numpy64", regularize=1)
    with pytest.raises(ValueError, match="need regularize=True"):
        solve(p, backend="numpy64", reg_min=1e-6)
    with pytest.raises(ValueError, match="always regularised"):
        solve(p, backend="numpy64", method="matrix-free", regularize=False)
    with pytest.raises(ValueError, match="reg_min must not exceed reg_max"):
        solve(p, backend="numpy64", regularize=True, reg_min=1e-2, reg_max=1e-4)
    with pytest.raises(ValueError, match="reg_max must be a positive number"):
        solve(p, backend="numpy64", regularize=True, reg_max=-1.0)
    netlib("afiro")
    assert cli_main(["afiro", "--backend", "numpy64", "--regularize", "--reg-min", "1e-9", "--eps", "1e-8",
                     "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "status: optimal" in out and "objective: -464.75314" in out
    assert cli_main(["afiro", "--backend", "numpy64", "--reg-min", "1e-9", "--quiet"]) == 2
    assert "need --regularize" in capsys.readouterr().err
    assert cli_main(["afiro", "--backend", "numpy64", "--method", "matrix-free", "--regularize", "--quiet"]) == 2
    assert "always regularises" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli_main(["afiro", "--regularize", "--reg-max", "0"])


def test_mehrotra_passes_the_regularised_weights_to_both_newton_solves(monkeypatch):
    """Inside mehrotra(): the predictor gets d = x / s~ and q = x s / s~ (s~ = s + rho x), the
    corrector q = (dx_a ds_a - sigma mu) / s~ with the same s~ -- checked as an invariant
    that needs neither sigma nor mu: q_c s~ - dx_a ds_a is one constant (-sigma mu) in every
    entry. rho is held at 0.1 so that s and s~ differ."""
    import sys

    meh = sys.modules["gpgpu.lp.mehrotra"]               # the module (gpgpu.lp.mehrotra is also the function)

    calls = []
    newton = meh._newton

    def spy(be, d, rb, rc, q, correct_primal=False, rho=0.0):
        out = newton(be, d, rb, rc, q, correct_primal, rho)
        calls.append((np.array(d), np.array(q), rho, [np.array(v) for v in out]))
        return out

    monkeypatch.setattr(meh, "_newton", spy)
    A, b, c = duplicated_rows_lp(1)
    solve(Problem.from_arrays(A, b, c), backend="numpy64", eps=1e-9, regularize=True, reg_min=0.1,
          reg_max=0.1, max_iter=4)
    assert len(calls) == 8
    for (d, q_a, rho, (dx_a, _, ds_a)), (d_c, q_c, rho_c, _) in zip(calls[::2], calls[1::2]):
        s = q_a / d                                       # q_a = d s
        x = d * s / (1.0 - rho * d)                       # d = x / (s + rho x)
        assert rho == rho_c > 0 and np.all(x > 0) and np.all(d_c == d)
        shifted = q_c * (s + rho * x) - dx_a * ds_a
        np.testing.assert_allclose(shifted, shifted.mean(), rtol=1e-9, atol=1e-12 * np.abs(dx_a * ds_a).max())
