"""gpgpu.lp.linprog: scipy.optimize.linprog's call and answer in front of gpgpu.lp.solve, checked
against scipy's HiGHS on small LPs (inequalities, equalities, free variables, upper bounds,
negative lower bounds; infeasible and unbounded ones)."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import OptimizeResult
from scipy.optimize import linprog as scipy_linprog

from gpgpu.lp import LPResult, linprog


def random_lp(seed, m=4, n=7):
    """A feasible LP (x0 inside every constraint) of m equalities, 3 + 2n inequalities (a box
    |x| <= 5 that bounds it) and mixed bounds: free, negative lower, upper, both."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, n))
    x0 = rng.uniform(0.5, 1.5, n)
    G = rng.standard_normal((3, n))
    lb = np.where(rng.random(n) < 0.3, -np.inf, -rng.uniform(0, 2, n))
    ub = np.where(rng.random(n) < 0.4, np.inf, rng.uniform(2, 3, n))
    bounds = [(None if np.isinf(lo) else lo, None if np.isinf(up) else up) for lo, up in zip(lb, ub)]
    return dict(c=rng.standard_normal(n), A_ub=np.vstack([G, np.eye(n), -np.eye(n)]),
                b_ub=np.concatenate([G @ x0 + 1, np.full(2 * n, 5.0)]), A_eq=A, b_eq=A @ x0, bounds=bounds)


FEASIBLE = {
    "inequalities": dict(c=[-1, -2], A_ub=[[1, 1], [1, -1], [-1, 2]], b_ub=[4, 2, 4]),
    "equalities": dict(c=[1, 2, 3], A_eq=[[1, 1, 1], [1, -1, 0]], b_eq=[6, 1]),
    "mixed": dict(c=[2, -1, 1], A_ub=[[1, 2, 0], [0, 1, 1]], b_ub=[8, 5], A_eq=[[1, 1, 1]], b_eq=[4]),
    "free variables": dict(c=[1, 1], A_ub=[[-1, 1], [-1, -1]], b_ub=[2, 2], bounds=(None, None)),
    "upper bounds": dict(c=[-3, -1, -2], A_ub=[[1, 1, 1]], b_ub=[10], bounds=[(0, 4), (0, None), (0, 3)]),
    "negative lower bounds": dict(c=[1, 2], A_ub=[[-1, -1]], b_ub=[4], bounds=[(-3, 2), (-5, None)]),
    "upper bound alone": dict(c=[-1, 1], A_ub=[[1, -1]], b_ub=[3], bounds=[(None, 2), (-1, None)]),
    "random 1": random_lp(1),
    "random 2 (sparse)": {**random_lp(2), "A_ub": sp.csr_matrix(random_lp(2)["A_ub"]),
                          "A_eq": sp.csc_array(random_lp(2)["A_eq"])},
    "no constraints": dict(c=[1, 2], bounds=[(1, 3), (-2, 0)]),
}
INFEASIBLE_OR_UNBOUNDED = {
    "infeasible": dict(c=[1, 1], A_ub=[[1, 1]], b_ub=[-1]),
    "infeasible equalities": dict(c=[1, 1], A_eq=[[1, 1], [1, 1]], b_eq=[1, 2]),
    "infeasible bounds": dict(c=[1, 1], A_ub=[[1, 1]], b_ub=[3], bounds=[(2, 1), (0, None)]),
    "unbounded": dict(c=[-1, 0], A_ub=[[1, -1]], b_ub=[1]),
    "unbounded free variable": dict(c=[1, 0], A_eq=[[0, 1]], b_eq=[1], bounds=(None, None)),
}
NUMPY64 = {"backend": "numpy64", "eps": 1e-8}


def check_against_highs(res, lp):
    """Status equal to HiGHS's; an optimum's objective within 1e-6 relative (of max(1, |f|)), its x
    feasible (to 1e-7), and slack and con as scipy defines them, computed here from x."""
    ref = scipy_linprog(method="highs", **lp)
    assert isinstance(res, OptimizeResult) and isinstance(res.lp, LPResult)
    assert res.status == ref.status and res.success == ref.success and res.nit == res.lp.iterations
    assert isinstance(res.message, str) and res.message
    if ref.status != 0:
        assert res.x is None and res.fun is None and res.slack is None and res.con is None
        return ref
    x = res.x
    assert x.dtype == np.float64 and x.shape == ref.x.shape
    assert abs(res.fun - ref.fun) <= 1e-6 * max(1.0, abs(ref.fun))
    assert res.fun == pytest.approx(float(np.asarray(lp["c"], float) @ x), rel=1e-12, abs=1e-12)
    for A, b, got in ((lp.get("A_ub"), lp.get("b_ub"), res.slack), (lp.get("A_eq"), lp.get("b_eq"), res.con)):
        want = np.zeros(0) if A is None else np.asarray(b, float) - A @ x
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert np.all(res.slack >= -1e-7) and np.all(np.abs(res.con) <= 1e-7)
    # the bounds as scipy read them: its x minus (plus) its distance to the lower (upper) bound
    lb, ub = ref.x - ref.lower.residual, ref.x + ref.upper.residual
    assert np.all(x >= lb - 1e-7) and np.all(x <= ub + 1e-7)
    return ref


@pytest.mark.parametrize("presolve", [False, None], ids=["ipm", "default presolve"])
@pytest.mark.parametrize("name", FEASIBLE)
def test_feasible_lps_match_highs(name, presolve):
    check_against_highs(linprog(**FEASIBLE[name], options={**NUMPY64, "presolve": presolve}), FEASIBLE[name])


@pytest.mark.parametrize("presolve", [False, None], ids=["ipm", "default presolve"])
@pytest.mark.parametrize("name", INFEASIBLE_OR_UNBOUNDED)
def test_infeasible_and_unbounded_lps_match_highs(name, presolve):
    lp = INFEASIBLE_OR_UNBOUNDED[name]
    res = linprog(**lp, options={**NUMPY64, "presolve": presolve})
    check_against_highs(res, lp)
    assert res.status in (2, 3) and not res.success


@pytest.mark.parametrize("name", ["mixed", "random 1", "unbounded", "infeasible"])
def test_matrix_free_method(name):
    lp = {**FEASIBLE, **INFEASIBLE_OR_UNBOUNDED}[name]
    res = linprog(**lp, method="matrix-free", options=NUMPY64)
    check_against_highs(res, lp)
    assert res.nit > 0 and res.lp.backend.startswith("numpy64")


def test_the_default_gpu_back_end():
    """The default back end, the GPU (llvmpipe here): a feasible LP at eps = 1e-8, an unbounded
    one with every option at solve's defaults."""
    res = linprog(**FEASIBLE["random 1"], options={"eps": 1e-8})
    check_against_highs(res, FEASIBLE["random 1"])
    assert res.lp.backend.startswith("gpu") and res.nit > 0
    res = linprog(**INFEASIBLE_OR_UNBOUNDED["unbounded"])
    check_against_highs(res, INFEASIBLE_OR_UNBOUNDED["unbounded"])
    assert res.lp.backend.startswith("gpu")


@pytest.mark.parametrize("bounds, n", [
    ((-1, 2), 3), ([-1, None], 3), ([(-1, 2)], 3), (None, 3), ((None, None), 2),
    ([(0, 1), (None, 2)], 2), (np.array([[0, 1], [-1, 2]]), 2), ([[0, 1]], 1), ((0, np.inf), 2),
], ids=["pair", "list pair", "one pair in a list", "None", "free", "pairs", "array", "n = 1", "inf"])
def test_scipys_forms_of_bounds(bounds, n):
    """Every form scipy.optimize.linprog reads: one (min, max) for all, one per variable, None
    for no bound, bounds=None for (0, None); the same answer as HiGHS's with the same bounds."""
    lp = dict(c=[1.0, -1.0, 0.5][:n], A_ub=[[1.0, 1.0, 1.0][:n], [-1.0, -1.0, -1.0][:n]], b_ub=[3.0, 1.0],
              bounds=bounds)
    check_against_highs(linprog(**lp, options=NUMPY64), lp)


def test_options_reach_solve_and_status_one_is_the_iteration_limit():
    lp = FEASIBLE["random 1"]
    res = linprog(**lp, options={**NUMPY64, "presolve": False, "max_iter": 2})
    assert res.status == 1 and not res.success and res.nit == 2 and "Iteration limit" in res.message
    assert res.fun == pytest.approx(float(lp["c"] @ res.x), rel=1e-12)
    np.testing.assert_allclose(res.slack, lp["b_ub"] - lp["A_ub"] @ res.x, rtol=0, atol=1e-12)
    scaled = linprog(**lp, options={**NUMPY64, "presolve": False, "scale": True})
    check_against_highs(scaled, lp)


@pytest.mark.parametrize("kw, error, match", [
    (dict(options={"maxiter": 5}), ValueError, r"unknown option 'maxiter' \('maxiter' is 'max_iter' here\).*eps"),
    (dict(options={"tol": 1e-9, "foo": 1}), ValueError, r"unknown options 'foo', 'tol'.*'tol' is 'eps' here"),
    (dict(options={"rank": 3}), ValueError, "unknown option 'rank'; method='mehrotra' with backend='numpy64'"),
    (dict(options={"method": "matrix-free"}), ValueError, "method= argument"),
    (dict(options=[("eps", 1e-8)]), TypeError, "options must be a dict"),
    (dict(method="highs"), ValueError, "unknown method 'highs'; gpgpu's are 'mehrotra', 'matrix-free'"),
    (dict(A_ub=[[1, 1]]), ValueError, "A_ub is given without b_ub"),
    (dict(b_eq=[1]), ValueError, "b_eq is given without A_eq"),
    (dict(A_ub=[[1, 1]], b_ub=[1, 2]), ValueError, r"b_ub must be a vector with one entry per row of A_ub \(1\)"),
    (dict(A_eq=[[1, 1, 1]], b_eq=[1]), ValueError, r"A_eq must be a 2-D matrix with 2 columns"),
    (dict(bounds=[(0, 1)] * 3), ValueError, r"sequence of 2 such pairs.*shape \(3, 2\)"),
    (dict(bounds=[(0, "a"), (0, 1)]), ValueError, "bounds must be a"),
    (dict(c=[[1, 2], [3, 4]]), ValueError, "c must be a non-empty vector"),
    (dict(b_ub=[np.nan], A_ub=[[1, 1]]), ValueError, "b_ub: entry 0 is nan"),
])
def test_bad_input_is_named(kw, error, match):
    args = dict(c=[1.0, 1.0], options={"backend": "numpy64"})
    args.update(kw)
    if "options" in kw and isinstance(kw["options"], dict):
        args["options"] = {"backend": "numpy64", **kw["options"]}
    with pytest.raises(error, match=match):
        linprog(**args)


def test_matrix_free_options_are_its_own():
    """The matrix-free method takes its own options (rank, ...) and refuses Mehrotra's back-end's."""
    lp = FEASIBLE["mixed"]
    check_against_highs(linprog(**lp, method="matrix-free", options={**NUMPY64, "rank": 1}), lp)
    with pytest.raises(ValueError, match="unknown option 'pivot_tol'; method='matrix-free'"):
        linprog(**lp, method="matrix-free", options={**NUMPY64, "pivot_tol": 1e-3})
