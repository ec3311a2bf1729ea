"""The LP's marginals (scipy's ``ineqlin``, ``eqlin``, ``lower``, ``upper``) against HiGHS's.

:meth:`gpgpu.lp.Problem.marginals` maps the standard form's duals (y, s) back to the source LP's
rows and bounds; :func:`gpgpu.lp.linprog` answers them as scipy's HiGHS methods do. The
reference is HiGHS itself (scipy's ``linprog(method="highs")``, and highspy's row and column
duals for what scipy cannot state: ranged rows, a maximisation), on LPs whose duals are unique
(random costs), built so that every kind of bound is active somewhere: a row of each kind, and
variables shifted with an upper bound, reflected (upper bound only), free, fixed.
"""
import numpy as np
import pytest

from gpgpu.lp import Problem, linprog, solve

scipy_optimize = pytest.importorskip("scipy.optimize")
highspy = pytest.importorskip("highspy")

BOUNDS = [(0, 2), (None, 3), (-1, None), (None, None), (0.5, 1.5), (0, None), (-2, 1)]
#: marginals agree to this, absolute (they are O(1) here); the duals are eps-accurate
TOL = {"numpy64": 1e-6, "gpu": 1e-5}


def _lp(seed):
    """A feasible, bounded LP with unique duals: random costs, 4 inequality rows, 2 equality rows
    through a point inside the bounds."""
    rng = np.random.default_rng(seed)
    n = len(BOUNDS)
    A_ub = rng.standard_normal((4, n))
    A_eq = rng.standard_normal((2, n))
    x0 = np.array([0.5, 0.0, 0.0, 0.0, 1.0, 0.5, 0.0])
    return dict(c=rng.standard_normal(n), A_ub=A_ub, b_ub=A_ub @ x0 + rng.random(4) + 0.1, A_eq=A_eq,
                b_eq=A_eq @ x0, bounds=BOUNDS)


def _highs(lp):
    h = scipy_optimize.linprog(lp["c"], lp["A_ub"], lp["b_ub"], lp["A_eq"], lp["b_eq"], lp["bounds"], method="highs")
    assert h.status == 0
    return h


SEEDS = range(6)


@pytest.mark.parametrize("method", ["mehrotra", "matrix-free"])
@pytest.mark.parametrize("backend", ["numpy64", "gpu"])
def test_linprog_marginals_and_residuals_are_highss(method, backend):
    seen = {k: 0.0 for k in ("ineqlin", "eqlin", "lower", "upper")}
    per_variable = {"lower": np.zeros(len(BOUNDS)), "upper": np.zeros(len(BOUNDS))}
    for seed in SEEDS:
        lp = _lp(seed)
        h = _highs(lp)
        r = linprog(lp["c"], lp["A_ub"], lp["b_ub"], lp["A_eq"], lp["b_eq"], lp["bounds"], method=method,
                    options={"backend": backend})
        assert r.status == 0, r.message
        for key in seen:
            np.testing.assert_allclose(r[key].marginals, h[key].marginals, rtol=0, atol=TOL[backend],
                                       err_msg=f"seed {seed}, {key}")
            finite = np.isfinite(h[key].residual)
            np.testing.assert_allclose(r[key].residual[finite], h[key].residual[finite], rtol=0, atol=1e-6)
            assert np.array_equal(np.isfinite(r[key].residual), finite)
            seen[key] = max(seen[key], float(np.abs(h[key].marginals).max()))
            if key in per_variable:
                per_variable[key] = np.maximum(per_variable[key], np.abs(h[key].marginals))
        assert (r.ineqlin.marginals <= TOL[backend]).all() and (r.lower.marginals >= -TOL[backend]).all()
        assert (r.upper.marginals <= TOL[backend]).all()
    # every kind was active somewhere (a marginal field left at 0 would fail above): the rows,
    # a lower bound alone (2), an upper bound on a shifted variable (0: its bound row) and on a
    # reflected one (1: its column)
    assert all(v > 0.1 for v in seen.values()), seen
    assert per_variable["lower"][2] > 0.1 and per_variable["upper"][0] > 0.1 and per_variable["upper"][1] > 0.1


def test_no_marginals_without_an_optimum():
    """An infeasible LP: no point, no residuals, no marginals (as scipy's HiGHS answers)."""
    r = linprog([1.0], A_ub=[[1.0]], b_ub=[-1.0], options={"backend": "numpy64"})
    assert r.status == 2
    for key in ("ineqlin", "eqlin", "lower", "upper"):
        assert r[key].marginals is None and r[key].residual is None


def _highs_general(c, A, rl, ru, cl, cu, sense):
    """highspy on the general form: (row duals, column duals), its objective's sense."""
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = len(c), len(rl)
    lp.col_cost_ = np.asarray(c, dtype=np.float64)
    lp.col_lower_ = np.where(np.isfinite(cl), cl, -inf)
    lp.col_upper_ = np.where(np.isfinite(cu), cu, inf)
    lp.row_lower_ = np.where(np.isfinite(rl), rl, -inf)
    lp.row_upper_ = np.where(np.isfinite(ru), ru, inf)
    lp.sense_ = highspy.ObjSense.kMaximize if sense < 0 else highspy.ObjSense.kMinimize
    csc = __import__("scipy.sparse").sparse.csc_matrix(A)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = csc.indptr, csc.indices, csc.data
    h.passModel(lp)
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    sol = h.getSolution()
    return np.array(sol.row_dual), np.array(sol.col_dual)


@pytest.mark.parametrize("sense", [1, -1])
def test_ranged_rows_fixed_columns_and_a_maximisation(sense):
    """What scipy's linprog cannot state, against highspy's duals: a ranged row (both sides
    finite), an equality, a free row (marginal 0), a fixed column (its reduced cost split by
    sign into lower and upper), a maximisation (marginals in its own sense). HiGHS's column
    dual is the reduced cost, lower + upper here."""
    from gpgpu.lp import standardize

    rng = np.random.default_rng(7)
    n = 6
    A = rng.standard_normal((4, n))
    x0 = np.array([0.5, 0.2, 0.0, 1.0, 0.3, 0.5])
    act = A @ x0
    rl = np.array([act[0] - 0.5, -np.inf, act[2], -np.inf])
    ru = np.array([act[0] + 0.2, act[1] + 0.3, act[2], np.inf])           # ranged, <=, =, free
    # column 2 free (bounded through the equality), 3 fixed at 1, 5 reflected (upper bound only)
    cl = np.array([0.0, -1.0, -np.inf, 1.0, 0.0, -np.inf])
    cu = np.array([1.0, 5.0, np.inf, 1.0, 0.6, 2.0])
    c = rng.standard_normal(n) * sense
    p = standardize(c, A, rl, ru, col_lower=cl, col_upper=cu, sense=sense)
    r = solve(p, backend="numpy64", eps=1e-10, presolve=False)
    assert r.status == "optimal", r.message
    mg = p.marginals(r.y, r.s)
    row_dual, col_dual = _highs_general(c, A, rl, ru, cl, cu, sense)
    np.testing.assert_allclose(mg["rows"], row_dual, rtol=0, atol=1e-7)
    np.testing.assert_allclose(mg["lower"] + mg["upper"], col_dual, rtol=0, atol=1e-7)
    assert mg["rows"][3] == 0.0                                             # the free row left
    assert p.presolve["fixed_columns"] == 1 and abs(col_dual[3]) > 1e-3    # the fixed column's reduced cost
    assert (mg["lower"] * sense >= -1e-7).all() and (mg["upper"] * sense <= 1e-7).all()
    assert np.abs(row_dual[[0, 2]]).min() > 1e-3                           # the ranged row and the equality bind


def test_marginals_refuse_duals_of_another_shape():
    p = Problem.from_inequalities(np.array([1.0, 2.0]), A_ub=[[1.0, 1.0]], b_ub=[4.0])
    with pytest.raises(ValueError, match="shapes"):
        p.marginals(np.zeros(p.m + 1), np.zeros(p.n))


@pytest.mark.parametrize("method, presolve", [("mehrotra", False), ("matrix-free", True)])
def test_the_marginals_with_the_presolve_the_other_way(method, presolve):
    """The defaults put HiGHS's presolve (and its postsolve's duals) before Mehrotra's method and
    none before the matrix-free one: the other way round, the same marginals."""
    for seed in SEEDS:
        lp = _lp(seed)
        h = _highs(lp)
        r = linprog(lp["c"], lp["A_ub"], lp["b_ub"], lp["A_eq"], lp["b_eq"], lp["bounds"], method=method,
                    options={"backend": "numpy64", "presolve": presolve})
        assert r.status == 0 and (r.lp.presolve is not None) is presolve
        for key in ("ineqlin", "eqlin", "lower", "upper"):
            np.testing.assert_allclose(r[key].marginals, h[key].marginals, rtol=0, atol=TOL["numpy64"])


@pytest.mark.parametrize("presolve", [False, True])
def test_fixed_variables_take_their_reduced_cost_as_highs_does(presolve):
    """scipy's test_bounds_fixed LPs (every variable fixed, or some): the reduced cost of a fixed
    variable goes to its lower marginal when positive, as HiGHS answers (and the equalities'
    marginals are HiGHS's)."""
    for lp in (dict(c=[1, 2, 3], bounds=[(5, 5), (-1, -1), (3, 3)]),
               dict(c=[1, -1, 2], A_eq=[[1, 0, 0], [0, 1, 0]], b_eq=[1, 7], bounds=[(-5, 5), (0, 10), (3.5, 3.5)])):
        h = scipy_optimize.linprog(**lp, method="highs")
        r = linprog(**lp, options={"backend": "numpy64", "presolve": presolve})
        assert r.status == 0 == h.status
        for key in ("eqlin", "lower", "upper"):
            np.testing.assert_allclose(r[key].marginals, h[key].marginals, rtol=0, atol=1e-8, err_msg=key)


def test_solve_answers_the_marginals_of_an_mps_problem_in_its_row_order():
    """solve's result carries the marginals of the LP as given (an MPS file's rows and columns):
    against HiGHS's row and column duals of the same file, read by highspy; None without an
    optimum. sc50b: 50 rows, every one an equality or an inequality of the file."""
    from gpgpu.lp.netlib import netlib_path

    path = str(netlib_path("sc50b"))
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(path)
    h.run()
    sol = h.getSolution()
    r = solve(path, backend="numpy64", eps=1e-9)
    assert r.status == "optimal" and set(r.marginals) == {"rows", "lower", "upper"}
    np.testing.assert_allclose(r.marginals["rows"], sol.row_dual, rtol=0, atol=1e-7)
    np.testing.assert_allclose(r.marginals["lower"] + r.marginals["upper"], sol.col_dual, rtol=0, atol=1e-7)
    assert np.abs(sol.row_dual).max() > 0.1
    stopped = solve(path, backend="numpy64", eps=1e-9, max_iter=1)
    assert stopped.status == "iteration_limit" and stopped.marginals is None
