"""solve(..., presolve=True): HiGHS's presolve, the interior point method on the reduced LP,
HiGHS's postsolve (gpgpu.lp.presolve). The references are scipy's linprog (HiGHS's own
solvers, not this project's IPM) and hand-worked optima; the duals are checked against
linprog's marginals, which the postsolved row duals must equal where the optimum is unique."""
import numpy as np
import pytest

highspy = pytest.importorskip("highspy")
from scipy.optimize import linprog  # noqa: E402

from gpgpu.lp import Problem, solve  # noqa: E402
from gpgpu.lp.mehrotra import LPResult  # noqa: E402
from gpgpu.lp.matrix_free_numpy import NumpyMatrixFree  # noqa: E402

from test_lp_mehrotra import INFEASIBLE, UNBOUNDED, netlib, netlib_more, rel  # noqa: E402


def general_lp(seed):
    """A random LP with what a presolve removes (a singleton row, a doubleton equation, a
    duplicate row) and what the standard form must carry (a free variable, upper bounds that
    are active at the optimum, a maximisation): unique optimum for these seeds."""
    rng = np.random.default_rng(seed)
    n = 8
    A_ub = rng.uniform(0.2, 2.0, (5, n)) * (rng.random((5, n)) < 0.7)
    A_ub[1] = 0.0
    A_ub[1, 2] = 1.0                                    # singleton row: x2 <= 3
    A_ub[4] = A_ub[3] * 2.0                             # a duplicate of row 3, scaled
    b_ub = np.array([20.0, 3.0, 15.0, 12.0, 24.0])
    A_eq = np.zeros((1, n))
    A_eq[0, 0], A_eq[0, 1] = 1.0, -1.0                  # doubleton: x0 = x1 + 0.5
    b_eq = np.array([0.5])
    bounds = [(0, None)] * n
    bounds[5] = (None, None)
    A_ub[0, 5] = 1.0
    A_ub[2, 5] = -1.0
    bounds[6] = (0.0, 1.5)
    bounds[7] = (-1.0, 2.0)
    c = rng.uniform(0.5, 3.0, n)                        # maximised: the upper bounds bind
    return dict(c=c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=bounds), rng


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("backend", ["numpy64", "gpu"])
def test_presolved_solve_equals_linprog_primal_and_dual(seed, backend):
    data, _ = general_lp(seed)
    ref = linprog(-data["c"], data["A_ub"], data["b_ub"], data["A_eq"], data["b_eq"], bounds=data["bounds"],
                  method="highs")
    assert ref.status == 0
    p = Problem.from_inequalities(**data, maximize=True)
    r = solve(p, backend=backend, eps=1e-8, presolve=True)
    assert r.status == "optimal", r.message
    assert r.presolve["status"] == "Reduced"
    assert r.presolve["rows"][1] < r.presolve["rows"][0]        # the singleton and the duplicate went
    assert "on the presolved problem" in r.message
    tol = 1e-6 if backend == "numpy64" else 2e-5
    assert rel(r.objective, -ref.fun) <= tol
    np.testing.assert_allclose(r.x, ref.x, atol=tol * 10)
    # the user's standard form: feasible point, dual slacks >= 0, complementary
    x, y, s = r.x_std, r.y, r.s
    assert np.abs(p.A @ x - p.b).max() <= tol * (1 + np.abs(p.b).max())
    assert x.min() >= -tol and s.min() >= -tol * 10
    assert abs(x @ s) <= tol * 10 * (1 + abs(r.objective))
    # the row duals of the source rows are linprog's marginals (min sense, maximisation flipped)
    m_ub = data["A_ub"].shape[0]
    np.testing.assert_allclose(y[:m_ub + 1], np.concatenate([ref.ineqlin.marginals, ref.eqlin.marginals]),
                               atol=tol * 100)


def test_presolve_of_a_standard_form_problem():
    """from_arrays (no general form): the rows are A x = b and the columns x >= 0; the
    duals are linprog's equality marginals."""
    rng = np.random.default_rng(5)
    A = rng.uniform(-1, 2, (6, 14))
    A[2] = 0.0
    A[2, 3] = 2.0                                       # a singleton equation fixes x3 = 1
    x0 = rng.uniform(0.5, 2, 14)
    x0[3] = 1.0
    b = A @ x0
    c = rng.uniform(0.1, 2.0, 14)
    ref = linprog(c, A_eq=A, b_eq=b, method="highs")
    p = Problem.from_arrays(A, b, c)
    r = solve(p, backend="numpy64", eps=1e-9, presolve=True)
    assert r.status == "optimal" and r.presolve["columns"][1] < 14
    assert rel(r.objective, ref.fun) <= 1e-8
    np.testing.assert_allclose(r.x, ref.x, atol=1e-7)
    np.testing.assert_allclose(r.y, ref.eqlin.marginals, atol=1e-6)
    np.testing.assert_allclose(r.s, c - A.T @ r.y, atol=1e-12)
    assert r.x[3] == pytest.approx(1.0)


def test_presolve_that_decides_everything():
    """min x0 + 2 x1, x0 >= 1, x0 = x1: HiGHS's presolve leaves nothing; by hand x = (1, 1),
    objective 3, row duals -3 (the bound -x0 <= -1) and -2 (x0 - x1 = 0)."""
    p = Problem.from_inequalities([1, 2], A_ub=[[-1, 0]], b_ub=[-1], A_eq=[[1, -1]], b_eq=[0])
    r = solve(p, backend="numpy64", eps=1e-10, presolve=True)
    assert r.status == "optimal" and r.iterations == 0
    assert r.presolve["status"] == "ReducedToEmpty" and "decided every variable" in r.message
    np.testing.assert_allclose(r.x, [1.0, 1.0])
    assert r.objective == pytest.approx(3.0)
    np.testing.assert_allclose(r.y, [-3.0, -2.0])
    assert r.s.min() >= 0 and abs(r.x_std @ r.s) < 1e-12


@pytest.mark.parametrize("case", sorted(INFEASIBLE))
def test_presolve_infeasible(case):
    r = solve(Problem.from_inequalities(**INFEASIBLE[case]), backend="numpy64", eps=1e-8, presolve=True)
    assert r.status == "infeasible" and r.x is None and r.presolve is not None


@pytest.mark.parametrize("case", sorted(UNBOUNDED))
def test_presolve_unbounded(case):
    """HiGHS's presolve says "infeasible or unbounded" (or reduces): the IPM tells which."""
    r = solve(Problem.from_inequalities(**UNBOUNDED[case]), backend="numpy64", eps=1e-8, presolve=True)
    assert r.status == "unbounded", r.message
    assert isinstance(r, LPResult) and r.presolve is not None


def test_presolve_solves_stair_which_the_unreduced_problem_does_not():
    """Measured: stair (netlib-more) ends in numerical trouble at eps = 1e-8 on numpy64, and is
    optimal in 14 iterations after HiGHS's presolve (356 x 467 -> 245 x 273)."""
    p, ref = netlib_more("stair")
    r = solve(p, backend="numpy64", eps=1e-8, presolve=True)
    assert r.status == "optimal", r.message
    assert rel(r.objective, ref) <= 1e-6
    assert r.presolve["rows"] == (356, 245)


@pytest.mark.parametrize("method, backend", [("mehrotra", "gpu"), ("matrix-free", "numpy64"), ("matrix-free", "gpu")])
def test_presolve_with_every_method_and_back_end(method, backend):
    p, ref = netlib("afiro")
    r = solve(p, backend=backend, method=method, eps=1e-8, presolve=True)
    assert r.status == "optimal" and rel(r.objective, ref) <= 1e-6
    assert r.presolve["columns"] == (32, 10)
    if method == "matrix-free":
        assert r.method == "matrix-free" and r.pcg_iterations > 0      # the method's own fields kept


def test_presolve_options_are_checked():
    p, _ = netlib("afiro")
    with pytest.raises(TypeError, match="presolve must be True or False"):
        solve(p, backend="numpy64", presolve="yes")
    with pytest.raises(ValueError, match="needs a back end by name"):
        solve(p, backend=NumpyMatrixFree(p), method="matrix-free", presolve=True)


@pytest.mark.parametrize("side", ["upper", "lower"])
def test_presolve_with_a_ranged_row_active_at_either_side(side):
    """A ranged row 1 <= x0 + x1 + x2 <= 4 (a slack with both bounds: the standard form adds
    a bound row for it) binding at its upper side (maximise) or its lower side (minimise), and a
    redundant singleton row x2 <= 5 that the presolve removes: the row duals are linprog's
    marginals (the ranged row's of its binding side), and the user's standard form is
    complementary (a wrong multiplier of the slack's bound row leaves s < 0 or x^T s > 0)."""
    from gpgpu.lp import standardize

    A = np.array([[1.0, 1.0, 1.0], [1.0, -1.0, 0.0], [0.0, 1.0, -2.0], [0.0, 0.0, 1.0]])
    rl, ru = np.array([1.0, -np.inf, -np.inf, -np.inf]), np.array([4.0, 3.0, 0.5, 5.0])
    c = np.array([1.0, 2.0, 1.5]) * (1 if side == "lower" else -1)
    ref = linprog(c, A_ub=np.vstack([A, -A[:1]]), b_ub=np.concatenate([ru, [-1.0]]), method="highs")
    p = standardize(c, A, rl, ru, col_lower=np.zeros(3), col_upper=np.full(3, np.inf))
    r = solve(p, backend="numpy64", eps=1e-10, presolve=True)
    assert r.status == "optimal", r.message
    assert r.presolve["status"] == "Reduced" and r.presolve["rows"] == (4, 3)
    assert r.objective == pytest.approx(ref.fun, rel=1e-8)
    marg = ref.ineqlin.marginals
    ranged = marg[0] if side == "upper" else -marg[4]
    assert ranged != 0.0                                  # the ranged row binds
    np.testing.assert_allclose(r.y[:4], [ranged, marg[1], marg[2], marg[3]], atol=1e-7)
    assert r.s.min() >= -1e-9 and abs(r.x_std @ r.s) <= 1e-8


def test_cli_presolve(capsys):
    from gpgpu.lp.__main__ import main as cli_main

    netlib("afiro")
    assert cli_main(["afiro", "--backend", "numpy64", "--presolve", "--correct-primal", "--eps", "1e-8",
                     "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "status: optimal" in out and "presolve (HiGHS): Reduced, 27 x 32 -> 7 x 10" in out
    assert "objective: -464.75314" in out
    assert cli_main(["afiro", "--backend", "numpy64", "--method", "matrix-free", "--correct-primal"]) == 2
    assert "correct_primal is an option of method='mehrotra'" in capsys.readouterr().err


# --------------------------------------------------------------------------- the defaults
def _spy(monkeypatch):
    """The options each solve hands the Mehrotra iteration and whether it presolved."""
    import gpgpu.lp.api as lp_module
    import gpgpu.lp.presolve as presolve_module

    seen = []
    mehrotra, presolve_and_solve = lp_module.mehrotra, presolve_module.presolve_and_solve

    def spy_mehrotra(*a, **kw):
        seen.append({"correct_primal": kw["correct_primal"], "free_safeguard": kw["free_safeguard"]})
        return mehrotra(*a, **kw)

    def spy_presolve(*a, **kw):
        seen.append({"presolve": True})
        return presolve_and_solve(*a, **kw)

    monkeypatch.setattr(lp_module, "mehrotra", spy_mehrotra)
    monkeypatch.setattr(presolve_module, "presolve_and_solve", spy_presolve)
    return seen


@pytest.mark.parametrize("backend", ["numpy64", "numpy32", "gpu"])
def test_robust_options_default_on_below_3e5_and_off_at_the_papers_eps(monkeypatch, backend):
    """presolve, correct_primal and free_safeguard default to None: on where refinement's
    default is (Mehrotra's method, eps < 3e-5, a back end by name), off at Table 3's
    tolerances (the paper's algorithm), off when set, off for a back-end instance."""
    from gpgpu.lp import get_backend

    p, ref = netlib("afiro")
    seen = _spy(monkeypatch)
    r = solve(p, backend=backend, eps=1e-8)
    assert seen == [{"presolve": True}, {"correct_primal": True, "free_safeguard": True}]
    assert r.status == "optimal" and rel(r.objective, ref) <= 1e-6 and r.presolve is not None
    seen.clear()
    r = solve(p, backend=backend, eps=3e-5)                           # the tightest of Table 3
    assert seen == [{"correct_primal": False, "free_safeguard": False}] and r.presolve is None
    seen.clear()
    solve(p, backend=backend, eps=1e-8, presolve=False, correct_primal=False)
    assert seen == [{"correct_primal": False, "free_safeguard": True}]
    seen.clear()
    be = get_backend(backend, p, refine=backend != "numpy64")
    solve(p, backend=be, eps=1e-8)
    assert seen == [{"correct_primal": False, "free_safeguard": False}]
    getattr(be, "release", lambda: None)()


def test_without_highspy_the_default_skips_only_the_presolve(monkeypatch):
    """The presolve needs highspy (the optional "lp" extra): without it the default eps = 1e-6
    solves without the presolve, with the correction and the safeguard, instead of failing on
    the import."""
    import gpgpu.lp.api as lp_module

    monkeypatch.setattr(lp_module, "_has_highspy", lambda: False)
    seen = _spy(monkeypatch)
    p = Problem.from_arrays(np.array([[1.0, 1.0, 1.0]]), np.array([2.0]), np.array([1.0, 2.0, 3.0]))
    r = solve(p, backend="numpy64")
    assert seen == [{"correct_primal": True, "free_safeguard": True}] and r.presolve is None
    assert r.status == "optimal" and r.objective == pytest.approx(2.0, rel=1e-6)


def test_matrix_free_method_keeps_its_defaults(monkeypatch):
    p, ref = netlib("afiro")
    seen = _spy(monkeypatch)
    r = solve(p, backend="numpy64", method="matrix-free", eps=1e-8)
    assert seen == [] and r.presolve is None and r.status == "optimal"


def test_matrix_free_trouble_without_the_presolve_says_to_try_it(monkeypatch):
    """A matrix-free solve of the LP as given that ends in numerical trouble (here PCG held to 2
    iterations with k = 1) says that HiGHS's presolve may solve it; not with the presolve on, not
    when it ends optimal, not for a back-end instance (bound to the LP as given) and not where
    highspy is missing."""
    from gpgpu.lp import api

    p, _ = netlib("afiro")
    starved = dict(method="matrix-free", eps=1e-6, rank=1, pcg_maxiter=2)
    r = solve(p, backend="numpy64", **starved)
    assert r.status == "numerical_trouble" and r.message.endswith(api.PRESOLVE_HINT)
    assert r.message.count("presolve=True") == 1
    r = solve(p, backend="numpy64", presolve=True, **starved)
    assert r.status == "numerical_trouble" and "presolve=True" not in r.message and r.presolve is not None
    r = solve(p, backend="numpy64", method="matrix-free", eps=1e-6)
    assert r.status == "optimal" and "presolve=True" not in r.message
    r = solve(p, backend=NumpyMatrixFree(p), **starved)
    assert r.status == "numerical_trouble" and "presolve=True" not in r.message
    monkeypatch.setattr(api, "_has_highspy", lambda: False)
    r = solve(p, backend="numpy64", **starved)
    assert r.status == "numerical_trouble" and "presolve=True" not in r.message


def test_matrix_free_trouble_on_the_gpu_names_the_float64_back_end(monkeypatch):
    """A matrix-free solve on the GPU (float32 PCG) that ends in numerical trouble names numpy64,
    the same method with a float64 PCG, after the presolve's hint; with the presolve on or without
    highspy it names numpy64 alone; a numpy64 solve's trouble does not name it, nor does an optimum."""
    from gpgpu.lp import api

    p, _ = netlib("afiro")
    starved = dict(method="matrix-free", eps=1e-6, rank=1, pcg_maxiter=2)
    r = solve(p, backend="gpu", **starved)
    assert r.status == "numerical_trouble" and r.method == "matrix-free"
    assert r.message.endswith(api.PRESOLVE_HINT + api.FLOAT64_HINT)
    assert r.message.count('backend="numpy64"') == 1
    r = solve(p, backend="gpu", presolve=True, **starved)
    assert r.status == "numerical_trouble" and r.message.endswith(api.FLOAT64_HINT)
    assert "presolve=True" not in r.message
    r = solve(p, backend="numpy64", **starved)
    assert r.status == "numerical_trouble" and "numpy64" not in r.message
    r = solve(p, backend="gpu", method="matrix-free", eps=1e-6)
    assert r.status == "optimal" and "numpy64" not in r.message
    monkeypatch.setattr(api, "_has_highspy", lambda: False)
    r = solve(p, backend="gpu", **starved)
    assert r.status == "numerical_trouble" and r.message.endswith(api.FLOAT64_HINT)
    assert "presolve=True" not in r.message


def test_backend_options_are_checked_before_a_presolve_that_decides_the_problem():
    """A 2 x 2 identity LP is decided by HiGHS's presolve alone (no back end built): a wrong
    back-end option is still refused, as without the presolve."""
    p = Problem.from_arrays(np.eye(2), np.ones(2), np.ones(2))
    r = solve(p, backend="numpy64", eps=1e-8)
    assert r.status == "optimal" and r.iterations == 0 and r.backend == "numpy64"
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        solve(p, backend="numpy64", eps=1e-8, colour="blue")
    with pytest.raises(ValueError, match="adat must be 'outer'"):
        solve(p, backend="gpu", eps=1e-8, adat="diagonal")


def test_cli_robust_options_default_and_can_be_turned_off(capsys):
    from gpgpu.lp.__main__ import main as cli_main

    netlib("afiro")
    assert cli_main(["afiro", "--backend", "numpy64", "--eps", "1e-8", "--quiet"]) == 0
    assert "presolve (HiGHS): Reduced, 27 x 32 -> 7 x 10" in capsys.readouterr().out
    assert cli_main(["afiro", "--backend", "numpy64", "--eps", "1e-8", "--no-presolve", "--no-correct-primal",
                     "--no-free-safeguard", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "status: optimal" in out and "presolve (HiGHS)" not in out


# --------------------------------------------------------------------------- correct_primal
def test_correct_primal_puts_the_direction_on_a_dx_equal_rb():
    """_correct_primal against an independent reference: the smallest D^-1-norm correction
    that makes A dx = r_b is D z with z the minimum-norm solution of (A D) z = r_b - A dx
    (numpy's SVD least squares), here with D^2 spanning 1e-10 .. 1e10 as near an optimum."""
    from gpgpu.lp import mehrotra as _  # noqa: F401  (the package exports the function)
    import sys

    M = sys.modules["gpgpu.lp.mehrotra"]
    from gpgpu.lp.numpy_backend import NumpyBackend

    rng = np.random.default_rng(3)
    m, n = 8, 20
    A = rng.standard_normal((m, n))
    p = Problem.from_arrays(A, rng.standard_normal(m), rng.standard_normal(n))
    be = NumpyBackend(p, dtype=np.float64)
    d = 10.0 ** rng.uniform(-10, 10, n)
    be.factor_normal(d)
    Dh = np.sqrt(d)
    for rb in (rng.standard_normal(m), None):            # the predictor's r_b; the corrector's 0
        target = np.zeros(m) if rb is None else rb
        dx = rng.standard_normal(n) * Dh
        dlam, ds = rng.standard_normal(m), rng.standard_normal(n)
        for carry in (False, True):
            out, dlam_out, ds_out = M._correct_primal(be, d, rb, dx.copy(), dlam.copy(), ds.copy(), carry_dual=carry)
            assert np.abs(A @ out - target).max() <= 1e-8 * np.abs(A).max() * np.abs(out).max() + 1e-10
            z = np.linalg.lstsq(A * Dh, target - A @ dx, rcond=None)[0]
            np.testing.assert_allclose(out - dx, Dh * z, rtol=1e-6, atol=1e-9 * np.abs(Dh * z).max())
            if not carry:              # dlam and ds as given
                assert np.array_equal(dlam_out, dlam) and np.array_equal(ds_out, ds)
                continue
            # carried: dlam + w with (A D^2 A^T) w = r_b - A dx, ds - A^T w (float64 references)
            w = np.linalg.lstsq((A * d) @ A.T, target - A @ dx, rcond=None)[0]
            np.testing.assert_allclose(dlam_out - dlam, w, rtol=1e-6, atol=1e-9 * np.abs(w).max())
            np.testing.assert_allclose(ds_out - ds, -A.T @ w, rtol=1e-6, atol=1e-9 * np.abs(A.T @ w).max())


def test_correct_primal_solves_scfxm2_which_algorithm_3_does_not():
    """Measured (numpy64, eps = 1e-8, after HiGHS's presolve): without the correction scfxm2
    stalls with its primal residual at 8e-6 (numerical trouble); with it, optimal."""
    p, ref = netlib_more("scfxm2")
    r = solve(p, backend="numpy64", eps=1e-8, presolve=True, correct_primal=False, free_safeguard=False)
    assert r.status == "numerical_trouble"
    r = solve(p, backend="numpy64", eps=1e-8, presolve=True, correct_primal=True, free_safeguard=False)
    assert r.status == "optimal", r.message
    assert rel(r.objective, ref) <= 1e-6


def test_correct_primal_is_an_option_of_mehrotra_only():
    p, _ = netlib("afiro")
    with pytest.raises(ValueError, match="correct_primal is an option of method='mehrotra'"):
        solve(p, backend="numpy64", method="matrix-free", correct_primal=True)
    with pytest.raises(TypeError, match="correct_primal must be True or False"):
        solve(p, backend="numpy64", correct_primal=1)


# --------------------------------------------------------------------------- free_safeguard
def test_free_split_safeguard_on_both_back_ends():
    """bound_free_splits against values worked by hand: the pair (5, 3) (v = 2) keeps min <= 1 +
    |v| = 3, so both drop by 0; (10, 9) (v = 1): min 9 > 2, both drop by 7 to (3, 2); (0.5,
    4) is below its bound; an unsplit entry never moves. The GPU kernel gives the same."""
    from gpgpu.lp.gpu_backend import GPUBackend
    from gpgpu.lp.numpy_backend import NumpyBackend

    x = np.array([5.0, 3.0, 7.0, 10.0, 9.0, 0.5, 4.0, 100.0])
    partner = np.array([1, 0, -1, 4, 3, 6, 5, -1])
    want = np.array([5.0, 3.0, 7.0, 3.0, 2.0, 0.5, 4.0, 100.0])
    p = Problem.from_arrays(np.ones((1, 8)), [1.0], np.ones(8))
    np.testing.assert_array_equal(NumpyBackend(p, dtype=np.float64).bound_free_splits(x, partner), want)
    # with the centring floor 2 and s = 0.5 (centred value floor / s = 4): (10, 9) drops by
    # min(7, 10 - 4, 9 - 4) = 5 to (5, 4); (5, 3) still by 0; s = 4 on the pair (0.5, 4) changes nothing
    s = np.array([1.0, 1.0, 1.0, 0.5, 0.5, 4.0, 4.0, 1.0])
    want_c = np.array([5.0, 3.0, 7.0, 5.0, 4.0, 0.5, 4.0, 100.0])
    np.testing.assert_array_equal(NumpyBackend(p, dtype=np.float64).bound_free_splits(x, partner, 1.0, s, 2.0),
                                  want_c)
    be = GPUBackend(p)
    try:
        got = be.to_numpy(be.bound_free_splits(be.vector(x), partner))
        got_c = be.to_numpy(be.bound_free_splits(be.vector(x), partner, 1.0, be.vector(s), 2.0))
    finally:
        be.release()
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got_c, want_c)


def test_split_partners_pair_the_halves_of_each_free_variable():
    import sys

    M = sys.modules["gpgpu.lp.mehrotra"]
    p = Problem.from_inequalities([1, -1, 2], A_ub=[[1, 1, 1]], b_ub=[4],
                                  bounds=[(None, None), (0, None), (None, 3)])
    partner = M._split_partners(p)
    # the free x0 is split into columns 0 and 1; x1 and x2 (reflected) and the slack are not
    assert partner.tolist()[:2] == [1, 0] and (partner[2:] == -1).all()
    x = np.zeros(p.n)
    x[0], x[1] = 2.5, 1.0
    assert p.to_original(x)[0] == 1.5                     # v = x+ - x-
    assert M._split_partners(Problem.from_arrays(np.ones((1, 2)), [1.0], [1.0, 1.0])) is None


def test_free_safeguard_solves_pilot4():
    """Measured (numpy64, eps = 1e-8, presolve and correction): pilot4 (88 free variables
    split) loses centrality from iteration 10 on and ends in numerical trouble 0.28 from
    HiGHS's objective; with the safeguard it is optimal (60 iterations)."""
    p, ref = netlib_more("pilot4")
    r = solve(p, backend="numpy64", eps=1e-8, presolve=True, correct_primal=True, free_safeguard=False)
    assert r.status == "numerical_trouble"
    r = solve(p, backend="numpy64", eps=1e-8, presolve=True, correct_primal=True, free_safeguard=True)
    assert r.status == "optimal", r.message
    assert rel(r.objective, ref) <= 1e-6
    # the default at eps = 1e-8 is these three options: the same solve (where the presolved
    # answer fails its check, both solve again without the presolve, the same way)
    default = solve(p, backend="numpy64", eps=1e-8)
    assert default.status == "optimal" and rel(default.objective, ref) <= 1e-6
    assert (default.iterations, default.objective, default.presolve is None) == (r.iterations, r.objective,
                                                                                 r.presolve is None)


@pytest.mark.parametrize("case", sorted(UNBOUNDED))
def test_free_safeguard_keeps_unbounded_and_infeasible_statuses(case):
    r = solve(Problem.from_inequalities(**UNBOUNDED[case]), backend="numpy64", eps=1e-8, free_safeguard=True)
    assert r.status == "unbounded"
    r = solve(Problem.from_inequalities(**INFEASIBLE["mixed"]), backend="numpy64", eps=1e-8, free_safeguard=True)
    assert r.status == "infeasible"


def test_free_safeguard_is_an_option_of_mehrotra_only():
    p, _ = netlib("afiro")
    with pytest.raises(ValueError, match="free_safeguard is an option of method='mehrotra'"):
        solve(p, backend="numpy64", method="matrix-free", free_safeguard=True)


def test_free_safeguard_in_the_gpu_iteration():
    """The safeguard drawn inside the GPU back end's iteration (no refinement: x is a stream):
    the random LP with a free variable, every option on, at a float32 eps."""
    from gpgpu import counters

    data, _ = general_lp(2)
    ref = linprog(-data["c"], data["A_ub"], data["b_ub"], data["A_eq"], data["b_eq"], bounds=data["bounds"],
                  method="highs")
    p = Problem.from_inequalities(**data, maximize=True)
    with counters.count() as c:
        r = solve(p, backend="gpu", eps=1e-4, refine=False, free_safeguard=True, correct_primal=True)
    assert r.status == "optimal", r.message
    assert rel(r.objective, -ref.fun) <= 1e-4
    assert c.passes("free_split_safeguard") == r.iterations


# --------------------------------------------------------------------------- scale
def badly_scaled_lp(seed):
    """A standard-form LP whose rows and columns span twelve orders of magnitude (a zero row
    and column included), feasible and bounded by construction."""
    rng = np.random.default_rng(seed)
    m, n = 5, 9
    A = rng.uniform(0.5, 2.0, (m, n)) * (rng.random((m, n)) < 0.8)
    A *= np.array([1e5, 1e-4, 1.0, 30.0, 1e-6])[:, None]
    A *= np.array([1.0, 1e3, 1e-3, 1.0, 1.0, 1e2, 1.0, 1e-5, 1.0])[None, :]
    A[:, 8] = 0.0                                       # an empty column (c_8 > 0: x_8 = 0)
    x0 = rng.uniform(0.5, 2.0, n)
    y0 = rng.standard_normal(m)
    c = A.T @ y0 + rng.uniform(0.1, 1.0, n)             # dual feasible: bounded
    return A, A @ x0, c


def test_geometric_scaling_is_powers_of_two_and_narrows_every_line():
    from gpgpu.lp.scaling import geometric_scaling

    A, _, _ = badly_scaled_lp(0)
    r, c = geometric_scaling(A)
    assert np.all(np.log2(r) == np.round(np.log2(r))) and np.all(np.log2(c) == np.round(np.log2(c)))
    assert c[8] == 1.0                                   # the empty column stays
    S = np.abs(r[:, None] * A * c[None, :])

    def spread(M):
        return max(v[v > 0].max() / v[v > 0].min() for v in M if np.any(v > 0))

    assert spread(S) < spread(np.abs(A)) / 1e4 and spread(S.T) < spread(np.abs(A).T) / 1e4
    assert S[S > 0].max() / S[S > 0].min() < 1e3        # was 1e12
    Z = np.zeros((3, 4))
    Z[1, 2] = 8.0
    r, c = geometric_scaling(Z)                          # empty rows and columns: factor 1
    assert list(r[[0, 2]]) == [1.0, 1.0] and list(c[[0, 1, 3]]) == [1.0, 1.0, 1.0]
    assert r[1] * 8.0 * c[2] == 1.0


@pytest.mark.parametrize("backend,eps,tol,method", [("numpy64", 1e-9, 1e-7, "mehrotra"),
                                                    ("numpy64", 1e-9, 1e-7, "matrix-free"),
                                                    ("gpu", 1e-6, 1e-5, "mehrotra")])
def test_scaled_solve_answers_in_the_problems_own_units(backend, eps, tol, method):
    """scale=True: the scaled problem is solved and the answer mapped back -- x_std, y, s satisfy
    the unscaled A x = b, A^T y + s = c, and the objective is linprog's. (The matrix-free
    method's float32 PCG on the GPU ends this problem in numerical trouble with and without
    scaling: measured, not tested.)"""
    A, b, c = badly_scaled_lp(3)
    ref = linprog(c, A_eq=A, b_eq=b, bounds=(0, None), method="highs")
    assert ref.status == 0
    p = Problem.from_arrays(A, b, c)
    r = solve(p, backend=backend, eps=eps, scale=True, method=method)
    assert r.status == "optimal", r.message
    assert rel(r.objective, ref.fun) <= tol
    assert np.abs(A @ r.x_std - b).max() <= 10 * tol * np.abs(b).max()
    assert np.abs(A.T @ r.y + r.s - c).max() <= 10 * tol * np.abs(c).max()
    assert r.x_std.min() >= -tol and r.s.min() >= -tol * np.abs(c).max()
    np.testing.assert_array_equal(r.x, r.x_std)          # from_arrays: the identity map


@pytest.mark.parametrize("seed", [1, 3])
def test_scaling_solves_what_the_unscaled_matrix_free_method_cannot(seed):
    """Measured on these problems: paper 002's method in float64 with its fixed regularisation
    schedule (``adaptive=False``) ends in numerical trouble on the problem as written
    (``normalize=False``: its PCG stalls on twelve orders of magnitude) and is optimal, with
    linprog's objective, on the scaled one, and with the defaults, which give it the LP in units
    of its own (gpgpu.lp.units: its lines span more than LINE_SPREAD octaves)."""
    A, b, c = badly_scaled_lp(seed)
    ref = linprog(c, A_eq=A, b_eq=b, bounds=(0, None), method="highs")
    p = Problem.from_arrays(A, b, c)
    plain = solve(p, backend="numpy64", eps=1e-9, method="matrix-free", adaptive=False, normalize=False)
    assert plain.status == "numerical_trouble"
    for options in (dict(scale=True), {}):
        r = solve(p, backend="numpy64", eps=1e-9, method="matrix-free", adaptive=False, **options)
        assert r.status == "optimal" and rel(r.objective, ref.fun) <= 1e-8, (options, r.message)


def test_scale_with_presolve_and_the_source_variables():
    """scale=True after the presolve (a general-form LP: free, bounded and maximised
    variables): the user's variables and objective as without scaling, and linprog's."""
    data, _ = general_lp(2)
    ref = linprog(-data["c"], data["A_ub"], data["b_ub"], data["A_eq"], data["b_eq"], bounds=data["bounds"],
                  method="highs")
    p = Problem.from_inequalities(**data, maximize=True)
    for presolve in (False, True):
        r = solve(p, backend="numpy64", eps=1e-9, presolve=presolve, scale=True)
        assert r.status == "optimal", r.message
        assert rel(r.objective, -ref.fun) <= 1e-7
        np.testing.assert_allclose(r.x, ref.x, atol=1e-6)


def test_scale_option_is_checked_and_on_the_cli(capsys):
    from gpgpu.lp.__main__ import main as cli_main
    from gpgpu.lp.numpy_backend import NumpyBackend

    A, b, c = badly_scaled_lp(1)
    p = Problem.from_arrays(A, b, c)
    with pytest.raises(TypeError, match="scale must be True or False"):
        solve(p, backend="numpy64", scale=1)
    with pytest.raises(ValueError, match="needs a back end by name"):
        solve(p, backend=NumpyBackend(p, dtype=np.float64), scale=True)
    netlib("afiro")
    assert cli_main(["afiro", "--backend", "numpy64", "--scale", "--eps", "1e-8", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "status: optimal" in out and "objective: -464.75314" in out
