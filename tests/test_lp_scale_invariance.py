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
