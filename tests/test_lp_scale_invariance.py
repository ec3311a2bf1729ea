"""The LP's answer does not depend on the units it is written in.

Multiplying c, A or b of an LP by a power of ten in 1e-10 .. 1e10 maps its solution exactly
(c: the same x; A: x / f, with the bounds divided by f too; b: f x, with the bounds times f), so
every back end and method must return that map of the unscaled LP's answer. The reference is
HiGHS (scipy.optimize.linprog) on the unscaled LP, whose solutions are unique (generic costs).
Before the normalisation (:class:`gpgpu.lp.scaling.Units`) c = 1e-6 (1, 1) ended "optimal" at
x = (1.837, 1.189) instead of (1.6, 1.2): the tests (6.1)-(6.3) were absolute at that scale.
"""
import numpy as np
import pytest

pytest.importorskip("scipy")
from scipy.optimize import linprog as highs  # noqa: E402

from gpgpu.lp import linprog  # noqa: E402


def _covering(seed, m=8, n=12, bounded=False):
    rng = np.random.default_rng(seed)
    A = rng.random((m, n))
    A[A < 0.5] = 0.0
    A[np.arange(m), rng.integers(0, n, m)] = 1.0 + rng.random(m)
    lp = dict(c=rng.random(n) + 0.1, A_ub=-A, b_ub=-(1.0 + rng.random(m)))
    if bounded:
        lp["bounds"] = [(0.0, 0.5 + rng.random()) for _ in range(n)]
    return lp


def _packing(seed, m=6, n=10):
    rng = np.random.default_rng(seed)
    A = rng.random((m, n)) + 0.05
    return dict(c=-(rng.random(n) + 0.2), A_ub=A, b_ub=1.0 + rng.random(m),
                bounds=[(0.0, 0.3 + rng.random()) for _ in range(n)])


def _equality(seed, m=4, n=9):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, n))
    x = rng.random(n) + 0.5
    return dict(c=rng.random(n) + 0.3 * np.sign(rng.standard_normal(n)), A_eq=A, b_eq=A @ x,
                bounds=[(-1.0, 3.0)] * (n - 2) + [(None, None), (0.0, None)],
                A_ub=np.vstack([np.eye(n)[-2:], -np.eye(n)[-2]]), b_ub=[4.0, 4.0, 4.0])


#: a dozen LPs: the issue's example, coverings, bounded coverings, packings with upper bounds,
#: equality LPs with a free column
LPS = {"two variables": dict(c=[1.0, 1.0], A_ub=[[-1.0, -2.0], [-3.0, -1.0]], b_ub=[-4.0, -6.0]),
       **{f"covering {s}": _covering(s) for s in (0, 1, 2)},
       **{f"bounded covering {s}": _covering(s, bounded=True) for s in (3, 4)},
       **{f"packing {s}": _packing(s) for s in (5, 6, 7)},
       **{f"equality {s}": _equality(s) for s in (8, 9, 10)}}


def _scaled(lp, what, f):
    """(the scaled LP, the map of x, the factor of the objective)."""
    out = dict(lp)
    bounds = lp.get("bounds")

    def bound_times(g):
        if bounds is None:
            return None
        return [tuple(None if v is None else v * g for v in pair) for pair in bounds]

    if what == "c":
        out["c"] = np.asarray(lp["c"]) * f
        return out, 1.0, f
    if what == "A":
        for key in ("A_ub", "A_eq"):
            if key in lp:
                out[key] = np.asarray(lp[key]) * f
        out["bounds"] = bound_times(1.0 / f) if bounds is not None else None
        return out, 1.0 / f, 1.0 / f
    for key in ("b_ub", "b_eq"):
        if key in lp:
            out[key] = np.asarray(lp[key]) * f
    out["bounds"] = bound_times(f) if bounds is not None else None
    return out, f, f


_REFERENCE = {}


def _reference(name):
    if name not in _REFERENCE:
        lp = LPS[name]
        r = highs(lp["c"], A_ub=lp.get("A_ub"), b_ub=lp.get("b_ub"), A_eq=lp.get("A_eq"), b_eq=lp.get("b_eq"),
                  bounds=lp.get("bounds", (0, None)), method="highs")
        assert r.status == 0
        _REFERENCE[name] = r
    return _REFERENCE[name]


def _check(name, what, f, backend, method):
    ref = _reference(name)
    lp, xmap, fmap = _scaled(LPS[name], what, f)
    r = linprog(lp["c"], A_ub=lp.get("A_ub"), b_ub=lp.get("b_ub"), A_eq=lp.get("A_eq"), b_eq=lp.get("b_eq"),
                bounds=lp.get("bounds", (0, None)), method=method, options=dict(backend=backend, eps=1e-8))
    where = f"{name}, {what} x {f:g}, {backend}, {method}: {r.message}"
    assert r.status == 0, where
    x = r.x / xmap
    # eps = 1e-8 relative tests: the objective to about 1e-8 of its size, x to 1e-6 of max |x|
    # (a unique but not strongly unique vertex moves by up to sqrt-level of the residuals)
    assert r.fun / fmap == pytest.approx(ref.fun, rel=1e-6, abs=1e-6 * np.abs(ref.x).max()), where
    np.testing.assert_allclose(x, ref.x, atol=1e-5 * np.abs(ref.x).max(), err_msg=where)


FACTORS = (1e-10, 1e-5, 1e5, 1e10)


@pytest.mark.parametrize("method", ["mehrotra", "matrix-free"])
@pytest.mark.parametrize("what", ["c", "A", "b"])
@pytest.mark.parametrize("name", list(LPS))
def test_numpy64_answer_is_the_same_in_every_unit(name, what, method):
    for f in FACTORS:
        _check(name, what, f, "numpy64", method)


#: each LP with one scaling, cycling through c, A, b and the factors, on the float32 back ends
ROUND = [(name, "cAb"[k % 3], FACTORS[k % 4]) for k, name in enumerate(LPS)]


@pytest.mark.parametrize("name, what, f", ROUND)
@pytest.mark.parametrize("backend, method", [("gpu", "mehrotra"), ("gpu", "matrix-free"), ("numpy32", "mehrotra")])
def test_float32_back_ends_answer_the_same_in_every_unit(name, what, f, backend, method, ctx):
    _check(name, what, f, backend, method)


# --------------------------------------------------------------------------- everything the user gets
from gpgpu.lp import Problem, solve  # noqa: E402
from random_lps import Units as OtherUnits, case, judge  # noqa: E402

#: the objective constant of the LPs below (c0 != 0: the history's and the result's objectives
#: carry it through every map of units)
C0 = 0.75


def _alternating(size, f):
    """f, 1/f, f, ... (rows or columns scaled apart from each other by f^2)."""
    return f ** np.where(np.arange(size) % 2, -1.0, 1.0)


def _other_units(lp, what, f) -> OtherUnits:
    m_ub, m_eq, n = lp.A_ub.shape[0], lp.A_eq.shape[0], lp.c.size
    one = {"R_ub": np.ones(m_ub), "R_eq": np.ones(m_eq), "E": np.ones(n), "fb": 1.0, "fc": 1.0}
    change = {"rows": {"R_ub": _alternating(m_ub, f), "R_eq": _alternating(m_eq, 1.0 / f)},
              "columns": {"E": _alternating(n, f)}, "b": {"fb": f}, "c": {"fc": f}}[what]
    return OtherUnits(**dict(one, **change))


def _everything_checked(lp, ref, units, backend, method):
    """The LP in ``units`` with c0 = C0 (times the objective's factor) solved with a callback: x
    (mapped back) and the objective against HiGHS on the LP as first written; y and s as the
    standard form's dual point (A^T y + s = c, s >= 0, b^T y + c0 = the objective, each to 1e-7
    of its terms' sizes: invariant in any units); the history's objectives are the callback's,
    its last entry the answer's objective."""
    q = units.apply(lp)
    c0 = C0 * units.fb * units.fc
    P = Problem.from_inequalities(**q.call(), c0=c0)
    seen = []
    r = solve(P, backend=backend, method=method, eps=1e-9, callback=seen.append)
    where = f"{backend} {method}: {r.message}"
    assert r.status == "optimal", where
    assert judge(lp, ref, units.x_back(r.x), units.objective_back(r.objective - c0)) == "", where
    A, b, c = P.A, P.b, P.c
    terms = np.abs(A.T) @ np.abs(r.y) + np.abs(c)
    assert (np.abs(A.T @ r.y + r.s - c) <= 1e-7 * terms.max()).all(), where
    assert r.s.min() >= -1e-7 * terms.max(), where
    size = np.abs(b * r.y).sum() + np.abs(c * r.x_std).sum() + abs(P.c0)
    assert abs(float(b @ r.y) + P.c0 - r.objective) <= 1e-7 * size, where      # (standard form's constant)
    assert abs(float(c @ r.x_std) + P.c0 - r.objective) <= 1e-12 * size, where
    assert [e["primal_objective"] for e in seen] == [e["primal_objective"] for e in r.history], where
    assert [e["dual_objective"] for e in seen] == [e["dual_objective"] for e in r.history], where
    last = r.history[-1]
    assert last["primal_objective"] == pytest.approx(r.objective, rel=1e-7, abs=1e-9 * size), where
    assert last["dual_objective"] == pytest.approx(r.objective, rel=1e-6, abs=1e-7 * size), where
    return r


EVERYTHING = [("numpy64", "mehrotra"), ("numpy64", "matrix-free"), ("gpu", "mehrotra"), ("gpu", "matrix-free")]


@pytest.mark.parametrize("backend, method", EVERYTHING)
@pytest.mark.parametrize("what", ["rows", "columns", "b", "c"])
def test_everything_the_user_gets_is_the_same_in_any_units(what, backend, method, ctx):
    """Rows (alternately times f and 1/f), columns (x_j = f^+-1 y_j), b (|b| < 1 for f < 1) and
    c, f = 1e-10 .. 1e10, with c0 != 0: x, y, s, the objective, the history and the callback.
    (y unscaled without the rows' factors, s without the columns', or the history's objectives
    in the normalised units each fail here.)"""
    lp = case(7)[0]
    ref = highs(**lp.call(), method="highs")
    factors = FACTORS if backend == "numpy64" else (1e-10, 1e10)
    for f in factors:
        _everything_checked(lp, ref, _other_units(lp, what, f), backend, method)


@pytest.mark.parametrize("what, f", [("rows", 1e6), ("columns", 1e6), ("b", 1e6), ("c", 1e6), ("b", 1e-3),
                                     ("c", 1e-3)])
def test_a_resumed_matrix_free_run_goes_on_from_where_it_stopped_in_any_units(what, f):
    """start= a result in other units (the solve's units map it in: the LP's own units for rows and
    columns far from unit size, the bands' for b and c below 1): the resumed run's first history
    entry is the stopped run's last (the same point, in the user's units), and it ends optimal
    with the right answer."""
    lp = case(8)[0]
    ref = highs(**lp.call(), method="highs")
    units = _other_units(lp, what, f)
    q = units.apply(lp)
    P = Problem.from_inequalities(**q.call())
    first = solve(P, backend="numpy64", method="matrix-free", eps=1e-9, max_iter=4)
    assert first.status == "iteration_limit"
    rest = solve(P, backend="numpy64", method="matrix-free", eps=1e-9, start=first)
    assert rest.status == "optimal", rest.message
    stopped, resumed = first.history[-1], rest.history[0]
    for key in ("primal_residual", "dual_residual", "gap", "primal_objective", "dual_objective"):
        assert resumed[key] == pytest.approx(stopped[key], rel=1e-9, abs=1e-12), key
    assert judge(lp, ref, units.x_back(rest.x), units.objective_back(rest.objective)) == ""
