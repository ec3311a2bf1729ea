"""Every status checked on the user's own problem, in any units (gpgpu.lp.units, gpgpu.lp.certificate).

The references are independent of the code under test: HiGHS (scipy.optimize.linprog) on the LP
as first written, hand-worked LPs, and feasibility recomputed here in float64 on the LP as first
written (tests/random_lps.py's judge). Each case below was answered wrongly before the check and
the LP's own units (the seeds' old answers are in the comments)."""
import importlib

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog as highs

from gpgpu.lp import MESSAGES, Problem, linprog, solve, standardize
from gpgpu.lp import certificate, get_backend
from gpgpu.lp.mehrotra import mehrotra
from gpgpu.lp.mps import read_mps
from gpgpu.lp.netlib import netlib_path
from gpgpu.lp.numpy_backend import NumpyBackend
from gpgpu.lp.units import Lines

from random_lps import Units as OtherUnits, case, judge

api = importlib.import_module("gpgpu.lp.api")


def _rescaled_columns(problem, E):
    """``problem``'s general form with x = E y (columns and costs times E, bounds over E)."""
    src = problem.source
    return standardize(src["c"] * E, sp.csc_matrix(src["A"]) @ sp.diags(E), src["row_lower"], src["row_upper"],
                       col_lower=src["col_lower"] / E, col_upper=src["col_upper"] / E, offset=src["offset"],
                       sense=src["sense"],
                       name=problem.name + " in other units")


# --------------------------------------------------------------------------- the reproducers
@pytest.mark.parametrize("backend", ["numpy64", "gpu"])
def test_sc50b_with_its_columns_in_other_units(backend, ctx):
    """NETLIB sc50b with x_j = E_j y_j, E_j = 10^k, k in -8..8: the optimum is -70 (HiGHS, and
    sc50b's own). It was "optimal" with objective 0 ("HiGHS's presolve decided every variable")."""
    p = read_mps(netlib_path("sc50b"))
    E = 10.0 ** np.random.default_rng(1).integers(-8, 9, p.source["A"].shape[1])
    q = _rescaled_columns(p, E)
    for presolve in (True, False):
        r = solve(q, backend=backend, eps=1e-8, presolve=presolve)
        assert r.status == "optimal" and r.objective == pytest.approx(-70.0, rel=1e-7), (presolve, r.message)
        assert r.check.holds and max(r.check.primal, r.check.dual, r.check.gap) <= 1e-8
        x = r.x * E                                    # sc50b's own variables
        A = p.source["A"]
        act = A @ x
        assert (act >= p.source["row_lower"] - 1e-6 * (1 + np.abs(A) @ np.abs(x))).all()
        assert (act <= p.source["row_upper"] + 1e-6 * (1 + np.abs(A) @ np.abs(x))).all()
        assert x.min() >= -1e-6 * np.abs(x).max()


#: (backend, method, cases): 200 on numpy64, 50 on the GPU, each LP with its rows, columns, b
#: and c in units 10^k, k in -8..8 (tests/random_lps.py)
SWEEPS = [("numpy64", "mehrotra", range(200)), ("numpy64", "matrix-free", range(200, 250)),
          ("gpu", "mehrotra", range(250, 300)), ("gpu", "matrix-free", range(300, 325))]


@pytest.mark.parametrize("backend, method, seeds", SWEEPS, ids=[f"{b}-{m}" for b, m, _ in SWEEPS])
def test_no_silent_wrong_answer_in_any_units(backend, method, seeds, ctx):
    """Random feasible, bounded LPs (mixed bounds, inequality and equality rows) in other units:
    no answer "optimal" that is not, judged on the LP as first written against HiGHS (objective
    and rows to 1e-6 of their sizes), and all of them solved. (At the commit before the check,
    41 of the first 100 on numpy64 were "optimal" and wrong, 32 ended in numerical trouble.)"""
    wrong, unsolved = [], []
    for seed in seeds:
        lp, units = case(seed)
        ref = highs(**lp.call(), method="highs")
        r = linprog(**units.apply(lp).call(), method=method, options={"backend": backend})
        if r.status != 0:
            unsolved.append((seed, r.status))
            continue
        why = judge(lp, ref, units.x_back(r.x), units.objective_back(r.fun))
        if why:
            wrong.append((seed, why))
    assert wrong == []
    assert unsolved == []


@pytest.mark.parametrize("seed", [22, 77, 99])
def test_a_feasible_lp_is_not_called_infeasible(seed):
    """HiGHS's presolve found these LPs (rows and columns in units 1e-8 .. 1e8) infeasible ("HiGHS's
    presolve proved it"); they are feasible, and solved."""
    lp, units = case(seed)
    ref = highs(**lp.call(), method="highs")
    r = linprog(**units.apply(lp).call(), options={"backend": "numpy64"})
    assert r.status == 0, r.message
    assert judge(lp, ref, units.x_back(r.x), units.objective_back(r.fun)) == ""


def test_a_feasible_bounded_lp_is_not_called_unbounded():
    """Case 35 was "unbounded" (a primal ray at c^T x = -2.6e19) in those units."""
    lp, units = case(35)
    ref = highs(**lp.call(), method="highs")
    r = linprog(**units.apply(lp).call(), options={"backend": "numpy64"})
    assert r.status == 0 and judge(lp, ref, units.x_back(r.x), units.objective_back(r.fun)) == "", r.message


#: x1 - x2 <= -1 and -x1 + x2 <= -1 (x >= 0): no x meets both, and min -x1 - x2 has no dual point
BOTH_WAYS = dict(c=[-1.0, -1.0], A_ub=[[1.0, -1.0], [-1.0, 1.0]], b_ub=[-1.0, -1.0])


@pytest.mark.parametrize("backend, method", [("numpy64", "mehrotra"), ("numpy32", "mehrotra"), ("gpu", "mehrotra"),
                                             ("numpy64", "matrix-free"), ("gpu", "matrix-free")])
def test_an_lp_infeasible_both_ways_is_infeasible(backend, method, ctx):
    """As HiGHS says (and scipy: status 2). Mehrotra's iteration ran off along the primal ray
    and ended in numerical trouble at iteration 0 (NaN at iteration 13)."""
    assert highs(**BOTH_WAYS).status == 2
    r = linprog(**BOTH_WAYS, method=method, options={"backend": backend, "presolve": False} if method == "mehrotra"
                else {"backend": backend})
    assert r.status == 2 and r.x is None and r.fun is None, r.lp.message
    assert r.lp.check is not None and r.lp.check.kind == "farkas" and r.lp.check.holds
    assert r.lp.history and all(np.isfinite(h["primal_residual"]) for h in r.lp.history)


def test_mehrotra_tells_a_dual_ray_without_a_feasible_point_from_an_unbounded_lp():
    """The iteration itself (no check after it): a ray of the primal while the primal residual
    stays is 'infeasible' with evidence 'dual ray', not 'unbounded' (with primal_settled forced
    True it said unbounded); a ray at a feasible point is 'unbounded' with evidence 'primal ray'."""
    p = Problem.from_inequalities(**BOTH_WAYS)
    r = mehrotra(NumpyBackend(p, dtype=np.float64), p, eps=1e-8)
    assert r.status == "infeasible" and r.evidence == "dual ray"
    assert "while the primal residual (6.1) stayed at" in r.message
    assert r.stop_point is not None and r.iterations < 10
    q = Problem.from_inequalities(c=[-1.0, -1.0], A_ub=[[1.0, -1.0]], b_ub=[1.0])     # x1 - x2 <= 1: unbounded
    u = mehrotra(NumpyBackend(q, dtype=np.float64), q, eps=1e-8)
    assert u.status == "unbounded" and u.evidence == "primal ray"
    ray = certificate.primal_ray(q, u.stop_point, 1e-8)
    assert ray.bound > certificate.RAY_RATIO * ray.iterates
    # its point meets (6.1) to 4e-8 only: solve confirms the primal's feasibility on the
    # feasibility problem
    v = solve(q, backend="numpy64", eps=1e-8, presolve=False)
    assert v.status == "unbounded" and "Confirmed: the feasibility problem (min 0 over the same constraints) " \
                                      "found a feasible point" in v.message and v.check.holds


def test_a_bound_of_1e30_is_named_as_no_bound():
    """b_ub = [1e30, 1] reads 1e30 as +inf (MPS files' and HiGHS's convention; scipy's HiGHS reads
    1e20 so): the LP is unbounded, as scipy answers, and the answer says why."""
    r = linprog([-1, -1], A_ub=[[1, 1], [0, 1]], b_ub=[1e30, 1], options={"backend": "numpy64"})
    assert r.status == 3 == highs([-1, -1], A_ub=[[1, 1], [0, 1]], b_ub=[1e30, 1]).status
    words = "the row upper bound of row 0, 1e+30, counts as infinite (bounds beyond +-1e30 are no bound"
    assert words in r.message and any(words in w for w in r.lp.warnings)
    finite = linprog([-1, -1], A_ub=[[1, 1], [0, 1]], b_ub=[1e29, 1], options={"backend": "numpy64"})
    assert finite.status == 0 and finite.fun == pytest.approx(-1e29, rel=1e-9) and not finite.lp.warnings


@pytest.mark.parametrize("seed", [98, 135])
def test_the_matrix_free_gpu_solves_what_its_float32_pcg_broke_down_on(seed, ctx):
    """PCG broke down (p^T G_R p not positive in float32) from iteration 4 on and the solve ended
    in numerical trouble; a breakdown now raises the regularisation floor as a PCG limit does."""
    lp, units = case(seed)
    ref = highs(**lp.call(), method="highs")
    r = linprog(**units.apply(lp).call(), method="matrix-free", options={"backend": "gpu"})
    assert r.status == 0, r.message
    assert judge(lp, ref, units.x_back(r.x), units.objective_back(r.fun)) == ""


def test_history_and_callback_agree_when_the_reduced_problem_is_infeasible():
    """An infeasible LP that HiGHS's presolve reduces (not decides), with b and c below 1 (the
    normalisation scales them): the history's objectives are the callback's, the user's (they
    stayed in the normalised units, 1024 times the callback's)."""
    rng = np.random.default_rng(22)
    A = rng.standard_normal((6, 10)) * (rng.random((6, 10)) < 0.6)
    b, c = rng.standard_normal(6), (rng.random(10) + 0.1) * 1e-5
    p = Problem.from_inequalities(c * 1.0, A_ub=A * 1e-3, b_ub=b * 1e-3)
    seen = []
    r = solve(p, backend="numpy64", eps=1e-8, callback=seen.append)
    assert r.status == "infeasible" and r.presolve["status"] == "Reduced" and r.iterations > 0
    assert [h["primal_objective"] for h in r.history] == [h["primal_objective"] for h in seen]
    assert [h["dual_objective"] for h in r.history] == [h["dual_objective"] for h in seen]
    assert highs(c, A_ub=A * 1e-3, b_ub=b * 1e-3).status == 2


@pytest.mark.parametrize("method", ["mehrotra", "matrix-free"])
def test_a_subnormal_cost_is_no_overflow(method, ctx):
    """c = (-1e-310, 0) on x <= 1: OverflowError in the normalisation's power of two. By hand the
    optimum is x1 = 1 (x2 anywhere in [0, 1]), objective -1e-310."""
    r = linprog([-1e-310, 0], A_ub=np.eye(2), b_ub=[1, 1], method=method, options={"presolve": False}
                if method == "mehrotra" else None)
    assert r.status == 0 and r.x[0] == pytest.approx(1.0, rel=1e-8) and 0 <= r.x[1] <= 1
    assert r.fun == pytest.approx(-1e-310, rel=1e-6)


def test_subnormal_rows_are_no_infinity():
    """A_eq = [[1e-310, 1e-310]], b_eq = [1e-310], c = (1, 2): HiGHS refused the LP with a
    coefficient inf the normalisation had made. By hand x = (1, 0), objective 1; the row's dual,
    1 / 1e-310, is beyond float64, and the message says so."""
    r = linprog([1, 2], A_eq=[[1e-310, 1e-310]], b_eq=[1e-310], options={"backend": "numpy64"})
    assert r.status == 0 and r.fun == pytest.approx(1.0, rel=1e-8) and r.x == pytest.approx([1.0, 0.0], abs=1e-8)
    assert "y holds values beyond float64's range" in r.message


# --------------------------------------------------------------------------- the check itself
def _optimum(seed):
    """A random LP's standard form and its optimum (numpy64, eps 1e-10), checked here in float64:
    A x = b, x >= 0, A^T y + s = c, s >= 0, c x = b y to 1e-9."""
    lp, _ = case(seed)
    p = Problem.from_inequalities(**lp.call())
    r = solve(p, backend="numpy64", eps=1e-10)
    A, b, c = p.A, p.b, p.c
    scale = 1 + np.abs(b).max()
    assert np.abs(A @ r.x_std - b).max() <= 1e-9 * scale and r.x_std.min() >= 0
    assert np.abs(A.T @ r.y + r.s - c).max() <= 1e-9 * (1 + np.abs(c).max()) and r.s.min() >= 0
    return p, r


def test_the_check_holds_at_an_optimum_and_catches_each_planted_error():
    p, r = _optimum(5)
    ok = certificate.optimality(p, r.x_std, r.y, r.s, 1e-8)
    assert ok.holds
    x, y, s = r.x_std.copy(), r.y.copy(), r.s.copy()
    j = int(np.argmax(x))
    moved = x.copy()
    moved[j] *= 1 + 1e-4                                   # a column's value off by 1e-4
    assert certificate.optimality(p, moved, y, s, 1e-8).primal > 1e-6
    below = x.copy()
    below[j] = -1e-3 * x[j]                               # a bound violated: the projection sees it
    assert not certificate.optimality(p, below, y, s, 1e-8).holds
    assert certificate.optimality(p, x, y * (1 + 1e-4), s, 1e-8).dual > 1e-6
    negative = s.copy()
    k = int(np.argmax(s))
    negative[k] = -s[k]                                    # a dual slack of the wrong sign
    assert not certificate.optimality(p, x, y, negative, 1e-8).holds
    assert certificate.optimality(p, x, y, s + 1e-3 * np.abs(s).max(), 1e-8).dual > 1e-6


@pytest.mark.parametrize("seed", [5, 6, 7])
def test_the_check_says_the_same_in_any_units(seed):
    """The optimum of an LP and its image in other units pass; a point off by 1e-4 in one
    column fails in both: the check does not depend on the units (the normalisation's powers
    of two aside)."""
    lp, units = case(seed)
    p = Problem.from_inequalities(**lp.call())
    q = Problem.from_inequalities(**units.apply(lp).call())
    r = solve(q, backend="numpy64", eps=1e-10)
    assert certificate.optimality(q, r.x_std, r.y, r.s, 1e-8).holds
    x = units.x_back(r.x)
    # the same point in p's units: its general-form values, mapped to p's standard form
    assert certificate.optimality(p, p.from_original(x), *_duals(p, x, lp), 1e-8).holds
    moved = r.x.copy()
    j = int(np.argmax(np.abs(moved) * (np.abs(moved) > 0)))
    moved[j] *= 1 + 1e-4
    checks = [certificate.optimality(q, q.from_original(moved), r.y, r.s, 1e-8),
              certificate.optimality(p, p.from_original(units.x_back(moved)), *_duals(p, x, lp), 1e-8)]
    assert not checks[0].holds and not checks[1].holds


def _duals(p, x, lp):
    """p's (y, s) at its optimum (numpy64 on p itself, whose x equals ``x`` to 1e-6)."""
    r = solve(p, backend="numpy64", eps=1e-10)
    assert np.abs(r.x - x).max() <= 1e-5 * (1 + np.abs(x).max())
    return r.y, r.s


def test_a_farkas_ray_is_checked_on_the_problem():
    """x1 + x2 = -1 (x >= 0): y = -1 has b^T y = 1 and A^T y = (-1, -1) <= 0, a ray of any
    length; y = +1 (b^T y < 0) and y = 0 are none."""
    p = Problem.from_arrays(np.array([[1.0, 1.0]]), np.array([-1.0]), np.array([1.0, 1.0]))
    x = np.array([0.5, 0.5])
    ray = certificate.farkas(p, (x, np.array([-1.0]), np.ones(2)))
    assert ray.holds and ray.bound == np.inf
    for y in (np.array([1.0]), np.array([0.0])):
        assert not certificate.farkas(p, (x, y, np.ones(2))).holds
    # A^T y slightly positive: the bound is b^T y / max(A^T y) = 1 / 1e-3 = 1000, not 1e4 (1 + |x|)
    q = Problem.from_arrays(np.array([[1.0, -0.001]]), np.array([-1.0]), np.array([1.0, 1.0]))
    weak = certificate.farkas(q, (x, np.array([-1.0]), np.ones(2)))
    assert weak.bound == pytest.approx(1.0 / 0.001, rel=1e-9) and not weak.holds


def test_the_feasibility_problem_keeps_the_constraints_and_drops_the_objective():
    lp, _ = case(3)
    p = Problem.from_inequalities(**lp.call())
    f = certificate.feasibility_problem(p)
    assert (f.A != p.A).nnz == 0 and np.array_equal(f.b, p.b) and not f.c.any() and f.c0 == 0.0
    assert f.source["c"].shape == p.source["c"].shape and not f.source["c"].any()


# --------------------------------------------------------------------------- what solve does with a failed check
def _wrong_by(factor):
    """A wrapper of gpgpu.lp.presolve.presolve_and_solve whose answers have x times ``factor``."""
    real = api.presolve_module.presolve_and_solve

    def wrapped(problem, run, **kw):
        res = real(problem, run, **kw)
        if res.x_std is not None:
            res.x_std = res.x_std * factor
            res.x = problem.to_original(res.x_std)
            res.objective = problem.original_objective(res.x_std)
        return res
    return wrapped


def test_a_presolved_answer_that_fails_is_solved_again_without_the_presolve(monkeypatch):
    p = read_mps(netlib_path("afiro"))
    monkeypatch.setattr(api.presolve_module, "presolve_and_solve", _wrong_by(1.01))
    seen = []
    r = solve(p, backend="numpy64", eps=1e-8, callback=seen.append)
    assert r.status == "optimal" and r.objective == pytest.approx(-464.7531428571, rel=1e-8)
    assert r.check.holds and r.presolve is None
    assert "so it was solved again without the presolve" in r.message
    # the history holds both solves, as the callback saw them
    assert [h["iteration"] for h in r.history] == [h["iteration"] for h in seen]
    assert [h["iteration"] for h in r.history].count(0) == 2


def test_an_answer_that_fails_everywhere_is_numerical_trouble(monkeypatch):
    """The method's "optimal" with x off by 1 % (planted): numerical trouble, the residual named,
    the point kept (as scipy keeps it for status 4)."""
    real = api._solve_mehrotra

    def off(problem, run, options):
        res = real(problem, run, options)
        res.x_std = res.x_std * 1.01
        res.x = problem.to_original(res.x_std)
        return res

    monkeypatch.setattr(api, "_solve_mehrotra", off)
    r = solve("afiro", backend="numpy64", eps=1e-8)
    assert r.status == "numerical_trouble" and r.status_code == 4 and not r.check.holds
    assert r.message.startswith("Numerical trouble: the point meets (6.1)-(6.3) on the problem the method solved "
                                "but not on the problem as given")
    assert f"primal residual (6.1) {r.check.primal:.2e} > eps = 1e-08" in r.message
    assert r.x is not None and r.objective == pytest.approx(-464.7531428571 * 1.01, rel=1e-3)


# --------------------------------------------------------------------------- the LP's own units
def test_lines_leave_an_lp_in_unit_sized_units_alone():
    """The 42 NETLIB problems of gpgpu/data are solved as written (their answers do not move)."""
    for name in ("afiro", "sc50b", "agg2", "perold", "fffff800"):
        assert Lines.of(read_mps(netlib_path(name))) is None


def test_lines_map_back_entry_by_entry():
    """The scaled LP's optimum, mapped back, is the LP's own optimum (numpy64 on both), x, y, s
    and the objective; the map is exact (powers of two)."""
    lp, units = case(11)
    q = Problem.from_inequalities(**units.apply(lp).call())
    lines = Lines.of(q)
    assert lines is not None and lines.rows.any() and lines.columns.any()
    scaled = lines.problem(q)
    assert scaled.A.shape == q.A.shape
    r = solve(scaled, backend="numpy64", eps=1e-10, normalize=False)
    back = lines.result(r, scaled, q)
    A, b, c = q.A, q.b, q.c
    assert np.abs(A @ back.x_std - b).max() <= 1e-8 * (np.abs(A) @ np.abs(back.x_std) + np.abs(b)).max()
    assert np.abs(A.T @ back.y + back.s - c).max() <= 1e-8 * (np.abs(A.T) @ np.abs(back.y) + np.abs(c)).max()
    assert back.objective == pytest.approx(float(c @ back.x_std) + q.c0, rel=1e-12)
    assert back.objective == pytest.approx(float(b @ back.y) + q.c0, rel=1e-7)
    ex, ey = lines.exponents(q)
    np.testing.assert_array_equal(np.ldexp(back.x_std, -ex + lines.bounds), r.x_std)


def test_an_lp_no_scaling_makes_unit_sized_is_left_as_written():
    """x1 + x2 <= 4, x1 + 1e39 x2 <= 6: the 2 x 2 matrix's cross ratio 1e39 stays whatever the
    diagonal scaling; the geometric one spreads it to 2^+-33, worse for HiGHS's absolute
    tolerances than as written."""
    assert Lines.of(Problem.from_inequalities([-1, -2], A_ub=[[1, 1], [1, 1e39]], b_ub=[4, 6])) is None


def test_postsolved_duals_that_fail_are_solved_on_to_a_tighter_eps(monkeypatch):
    """HiGHS's postsolve maps an interior point's duals with errors of the order of its
    complementarity (ganges: 7.7e-8 at eps 1e-8, numpy64): where only the duals fail, the
    iteration goes on from its last point to eps 1e-12 before the presolve is dropped: one
    history, its iterations counted on, the message saying so. Planted here: the first
    postsolved y off by 1e-5."""
    real = api.presolve_module.presolve_and_solve
    calls = []

    def wrapped(problem, run, **kw):
        res = real(problem, run, **kw)
        calls.append(run)
        if len(calls) == 1 and res.y is not None:
            res.y = res.y * (1 + 1e-5)
            res.s = problem.c - problem.A.T @ res.y
        return res

    monkeypatch.setattr(api.presolve_module, "presolve_and_solve", wrapped)
    seen = []
    r = solve("afiro", backend="numpy64", eps=1e-8, callback=lambda e: seen.append(e["iteration"]))
    assert r.status == "optimal" and r.check.holds and r.presolve is not None
    assert seen == list(range(r.resumed_from + 1)) + list(range(r.resumed_from, r.iterations + 1))
    assert len(calls) == 2
    k = r.resumed_from
    assert f"so the iteration went on from its last point (iteration {k}) to eps = 1e-12" in r.message
    assert r.objective == pytest.approx(-464.7531428571, rel=1e-9)
    assert [h["iteration"] for h in r.history] == list(range(r.iterations + 1))
    assert 0 < r.iterations - k <= 4 and f"({r.iterations} iterations, eps = 1e-12)" in r.message
    alone = solve("afiro", backend="numpy64", eps=1e-8)
    same = {key for key in alone.history[0] if key != "time"}
    assert k == alone.iterations and all(r.history[i][key] == alone.history[i][key]     # the first part as it ran
                                         for i in range(k) for key in same)
    assert r.history[-1]["mu"] < 1e-3 * alone.history[-1]["mu"]


@pytest.mark.parametrize("raise_message", [
    " The iteration stalled at iteration 9 and went on from its best point near the central path (iteration 7) "
    "with a float-float factor.",
    " At iteration 9 the factor replaced 30 pivots, 0 before (378 normal rows): the iteration went on from the "
    "same point with a float-float factor."])
def test_a_continuation_says_the_first_parts_raise(raise_message):
    """_continued: the continuation's iterations, point and history are counted on from the first
    part's, and the first part's raise of the precision (either kind: after a stall, or before
    a step at a jump in replaced pivots) is said in the message, once, after the iteration count."""
    from types import SimpleNamespace

    from gpgpu.lp.api import _continued

    first = SimpleNamespace(iterations=12, message="Optimal: ... (12 iterations, eps = 1e-08)" + raise_message,
                            history=[{"iteration": i} for i in range(13)])
    then = SimpleNamespace(iterations=3, point_iteration=3, message="Optimal: ... (3 iterations, eps = 1e-12)",
                           history=[{"iteration": i} for i in range(4)])
    r = _continued(first, then)
    assert r.iterations == 15 and r.point_iteration == 15 and r.resumed_from == 12
    assert [h["iteration"] for h in r.history] == list(range(16))
    assert r.message == "Optimal: ... (15 iterations, eps = 1e-12)" + raise_message
    assert r.message.count("factor.") == 1


def test_a_resume_goes_on_from_its_point_with_its_precision_and_only_for_its_shape():
    """mehrotra(resume=...): filled at the end of an optimal solve (the point, the raises), the
    next solve of a problem of that shape starts at that point (its iteration 0 is the first's
    last point) with the factor raised as often (numpy32 raises float32 to float64); a problem
    of another shape starts at Mehrotra's point."""
    from gpgpu.lp.mehrotra import Resume, mehrotra

    p = read_mps(netlib_path("afiro"))
    kept = Resume()
    first = mehrotra(get_backend("numpy64", p), p, eps=1e-6, resume=kept)
    assert first.status == "optimal" and kept.fits(p) and kept.raises == 0 and not kept.resumed
    np.testing.assert_array_equal(kept.point[0], first.x_std)
    assert kept.first["mu"] == first.history[0]["mu"]          # iteration 0's measures, for the tests
    then = mehrotra(get_backend("numpy64", p), p, eps=1e-12, resume=kept)
    assert kept.resumed and then.status == "optimal" and then.iterations <= 4
    assert kept.first["mu"] == first.history[0]["mu"]          # the continuation measured from them too
    assert then.history[0]["mu"] == pytest.approx(first.history[-1]["mu"], rel=1e-12)
    assert then.history[-1]["gap"] < 1e-12 < first.history[-1]["gap"]
    kept.raises = 1
    be = get_backend("numpy32", p, refine=True)
    mehrotra(be, p, eps=1e-12, resume=kept)
    assert be.fdtype == np.float64                         # raised once, as the kept solve had been
    other = Problem.from_arrays(np.ones((1, 2)), np.ones(1), np.ones(2))
    fresh = Resume(point=kept.point, shape=kept.shape)
    assert not fresh.fits(other)
    assert mehrotra(get_backend("numpy64", other), other, eps=1e-8, resume=fresh).status == "optimal"
    assert not fresh.resumed


def test_a_primal_rays_bound_is_compared_with_the_dual_iterates():
    """x1 - x2 = 1, min -x1 - x2: the ray (1, 1) at x = (1e6 + 1, 1e6) bounds every dual-feasible
    y by ||y||_1 >= 2e6 + 1; with the iterates' y = 1e3 that is not 1e4 times 1 + m ||y||
    (1001): no certificate (it is with y = 1e-3)."""
    p = Problem.from_arrays(np.array([[1.0, -1.0]]), np.array([1.0]), np.array([-1.0, -1.0]))
    x = np.array([1e6 + 1.0, 1e6])
    weak = certificate.primal_ray(p, (x, np.array([1e3]), np.zeros(2)), 1e-8)
    assert weak.bound == pytest.approx(2e6 + 1.0) and weak.iterates == pytest.approx(1001.0) and not weak.holds
    assert certificate.primal_ray(p, (x, np.array([1e-3]), np.zeros(2)), 1e-8).holds


def test_lines_that_spread_too_far_are_scaled():
    """Rows whose largest |a_ij| lie within the band but spread over 27 octaves (2^-15 and 2^12):
    the LP is not unit-sized, and the scaling brings it within the bands."""
    from gpgpu.lp.units import unit_sized

    A = np.array([[2.0 ** -15, 2.0 ** -16, 0.0], [0.0, 2.0 ** 12, 2.0 ** 11]])
    p = Problem.from_inequalities([1.0, 1.0, 1.0], A_ub=-A, b_ub=[-1.0, -1.0])
    assert not unit_sized(sp.csr_matrix(A))
    lines = Lines.of(p)
    assert lines is not None and unit_sized(lines.problem(p).source["A"])
    r = solve(p, backend="numpy64", eps=1e-9)
    ref = highs([1.0, 1.0, 1.0], A_ub=-A, b_ub=[-1.0, -1.0])
    assert r.status == "optimal" and r.objective == pytest.approx(ref.fun, rel=1e-8)


def test_a_scaling_that_would_change_the_structure_is_not_taken():
    """A ranged row 1e-320 <= x1 + x2 <= 2e-320 beside a bound of 1e20 (brought down by 2^-42):
    scaled, the two subnormal bounds would both round to 0, an equality row (another standard
    form), so the LP is solved as written. By hand: x1 = x2 = 0 up to 1e-320, objective 0."""
    A = sp.csc_matrix(np.array([[1.0, 1.0], [1.0, -1.0]]))
    p = standardize(np.array([1.0, 1.0]), A, np.array([1e-320, -np.inf]), np.array([2e-320, 1e20]),
                    col_lower=np.zeros(2), col_upper=np.full(2, np.inf))
    lines = Lines.of(p)
    assert lines is not None and lines.bounds < -40
    assert lines.problem(p) is None
    r = solve(p, backend="numpy64", eps=1e-9)
    assert r.status == "optimal" and abs(r.objective) <= 1e-300


def test_bounds_and_costs_in_other_units_together_reach_the_callback_in_the_users():
    """b times 1e12 (above 2^24: brought down) and c times 1e-40 (below 2^-100: brought up) at
    once: the callback's objectives are the history's, in the user's units."""
    lp = case(9)[0]
    units = OtherUnits(np.ones(lp.A_ub.shape[0]), np.ones(lp.A_eq.shape[0]), np.ones(lp.c.size), 1e12, 1e-40)
    P = Problem.from_inequalities(**units.apply(lp).call())
    lines = Lines.of(P)
    assert lines.bounds < 0 < lines.costs
    seen = []
    r = solve(P, backend="numpy64", eps=1e-9, callback=seen.append)
    assert r.status == "optimal"
    assert [e["primal_objective"] for e in seen] == [e["primal_objective"] for e in r.history]
    assert r.history[-1]["primal_objective"] == pytest.approx(r.objective, rel=1e-7)
    ref = highs(**lp.call(), method="highs")
    assert judge(lp, ref, units.x_back(r.x), units.objective_back(r.objective)) == ""


@pytest.mark.parametrize("backend", ["numpy64", "gpu"])
def test_the_iterations_own_farkas_ray_is_checked_without_another_solve(backend, ctx):
    """x1 + x2 <= 1, -x1 - x2 <= -2 without the presolve: the iteration's Farkas ray holds on the
    problem as given (its bound far above the iterates' ||x||_1), so no feasibility problem is
    solved; the check is that ray."""
    r = solve(Problem.from_inequalities([1.0, 1.0], A_ub=[[1.0, 1.0], [-1.0, -1.0]], b_ub=[1.0, -2.0]),
              backend=backend, eps=1e-8, presolve=False)
    assert r.status == "infeasible" and r.evidence == "farkas" and r.stop_point is not None
    assert r.check.kind == "farkas" and r.check.holds and r.check.bound > certificate.RAY_RATIO * r.check.iterates
    assert "feasibility problem" not in r.message


def test_a_resume_on_the_gpu_goes_on_with_float_float_factors(ctx):
    """The GPU back end resumed from a solve that raised its precision once starts with
    float-float factors (A uploaded as float-float before the first factor) and ends optimal at
    the tighter eps."""
    from gpgpu import float_float
    from gpgpu.lp.mehrotra import Resume, mehrotra

    if not float_float.available():
        pytest.skip("no float-float on this context")
    p = read_mps(netlib_path("afiro"))
    kept = Resume()
    first = mehrotra(get_backend("numpy64", p), p, eps=1e-6, resume=kept)
    kept.raises = 1
    be = get_backend("gpu", p, refine=True)
    try:
        then = mehrotra(be, p, eps=1e-10, resume=kept)
        assert be.Aff is not None and then.status == "optimal" and then.iterations <= 6
        assert then.objective == pytest.approx(first.objective, rel=1e-6)
    finally:
        be.release()


def test_going_on_that_does_not_end_optimal_gives_way_to_a_solve_from_the_start(monkeypatch):
    """A continuation to the tighter eps whose answer does not pass (planted: its postsolved y
    off too; or one not optimal within RESUME_ITERATIONS, the continuation's max_iter) is dropped
    for the presolved problem solved from the start at that eps (finnis's last point was too
    near the boundary to go on from)."""
    real = api.presolve_module.presolve_and_solve
    calls = []

    def wrapped(problem, run, **kw):
        res = real(problem, run, **kw)
        calls.append(res)
        if len(calls) <= spoilt and res.y is not None:
            res.y = res.y * (1 + 1e-5)
            res.s = problem.c - problem.A.T @ res.y
        return res

    monkeypatch.setattr(api.presolve_module, "presolve_and_solve", wrapped)
    spoilt = 2
    r = solve("afiro", backend="numpy64", eps=1e-8)
    assert len(calls) == 3 and calls[1].resumed_from is not None and calls[1].status == "optimal"
    assert r.status == "optimal" and r.check.holds and r.resumed_from is None
    assert "so the presolved problem was solved again at eps = 1e-12" in r.message
    assert [h["iteration"] for h in r.history].count(0) == 2          # the first solve's and the fresh one's
    assert r.objective == pytest.approx(-464.7531428571, rel=1e-9)
    calls.clear()
    spoilt, runs, real_mehrotra = 1, [], api._solve_mehrotra
    monkeypatch.setattr(api, "_solve_mehrotra", lambda p, run, o: runs.append(run) or real_mehrotra(p, run, o))
    r = solve("afiro", backend="numpy64", eps=1e-8, max_iter=50)
    assert [(run.max_iter, run.eps, run.resume is not None) for run in runs] == [(50, 1e-8, True),
                                                                                 (api.RESUME_ITERATIONS, 1e-12, True)]
    assert r.resumed_from is not None and r.status == "optimal"
