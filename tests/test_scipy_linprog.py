"""scipy's own linprog tests, run through :func:`gpgpu.lp.linprog`.

The tests are scipy's ``LinprogCommonTests`` from the installed scipy (not copied): the class is
subclassed here and the ``linprog`` its methods call is replaced by :func:`gpgpu.lp.linprog`
with scipy's option names mapped to this solver's (``maxiter`` -> ``max_iter``, ``tol`` ->
``eps``, ``autoscale`` -> ``scale``; ``disp`` has no counterpart and is dropped) and scipy's
method names (the classes' ``method``) replaced by Mehrotra's method on the chosen back end.

Exclusions (:data:`EXCLUDED`), each for a documented difference of the interface, not of the
answer:

- ``test_callback``: scipy's callback receives an ``OptimizeResult`` of the simplex phase
  (``phase``, ``complete``, ``slack``, ``con``); this solver's callback receives each interior
  point iteration's history entry (docs/guide/lp.md).
- ``test_unknown_options``: scipy warns about an unknown option and goes on; this linprog
  refuses it with a ValueError that lists the options it takes (docs/guide/lp.md).
- ``test_unbounded_no_nontrivial_constraints_1`` and ``_2``: for scipy's legacy methods they
  expect an unbounded result to carry x with +-inf and the message "The problem is (trivially)
  unbounded"; this linprog answers as scipy's HiGHS methods do (x None, status 3), which the
  tests check first and which is checked here.
- ``test_optimize_result``: for the legacy methods it expects the message "Optimization
  terminated successfully."; this solver's messages are its own (the fields, status, nit and
  the residuals the test checks next hold).
- ``test_zero_column_2``: after checking status 3 it expects the legacy presolve to have
  decided without iterating (nit 0); an empty column whose cost pulls it to an infinite bound
  makes the LP unbounded only if the rest is feasible, so this solver decides it by solving the
  rest (``test_enzo_example_c_with_infeasibility``, both primal and dual infeasible, needs that).
- ``test_integrality_without_highs``: integrality is a HiGHS-MIP feature; the interior point
  methods solve the LP relaxation and ``linprog`` has no ``integrality`` argument.

The numpy64 back end runs in every suite; the GPU back end (float32 with refinement) is a long
test on llvmpipe (about 80 s), run on the GPU with ``GPGPU_LONG_TESTS=1``.

The same tests run through the matrix-free method of paper 002 (``method="matrix-free"``), on
numpy64 and on the GPU (its float32 PCG; about 10 s on llvmpipe), with the method's default
``presolve=False`` passed as scipy's option, so that the tests that check a presolve's
``nit == 0`` when ``presolve`` is on do not ask it of a method that solves the LP as given.
One more exclusion there (:data:`EXCLUDED_MATRIX_FREE`): ``test_bug_8973_2`` wants x = -2 of an
LP whose optimal set is every x <= -2 (c = 0), the vertex scipy's HiGHS returns; an interior
point method without a presolve returns a point of that set's interior (as Mehrotra's method
with ``presolve=False`` does); :func:`test_an_lp_with_a_ray_of_optima_answers_a_point_of_it`
checks that point.

The marginals (``ineqlin``, ``eqlin``, ``lower``, ``upper``) go through two of scipy's
HiGHS-only tests, dual feasibility and complementary slackness (:data:`HIGHS_MARGINAL_TESTS`),
for both methods on numpy64 and the GPU.
"""
import os

import pytest

scipy_tests = pytest.importorskip("scipy.optimize.tests.test_linprog",
                                  reason="scipy's test files are not installed")

from gpgpu.lp import linprog as gpgpu_linprog  # noqa: E402

#: scipy's tests that test scipy's interface where this one differs (module notes)
EXCLUDED = {
    "test_callback": "the callback gets this solver's history entries, not scipy's simplex OptimizeResult",
    "test_unknown_options": "scipy warns about an unknown option; this linprog refuses it (ValueError)",
    "test_unbounded_no_nontrivial_constraints_1": "the legacy methods' x with +-inf; this linprog answers as HiGHS",
    "test_unbounded_no_nontrivial_constraints_2": "the legacy methods' x with +-inf; this linprog answers as HiGHS",
    "test_optimize_result": "the legacy methods' message text; this solver's messages are its own",
    "test_zero_column_2": "nit 0 of the legacy presolve; the rest is solved to tell unbounded from infeasible",
    "test_integrality_without_highs": "integrality is HiGHS-MIP's; the interior point methods solve LPs",
}

#: scipy's option names and this solver's
SCIPY_OPTIONS = {"maxiter": "max_iter", "tol": "eps", "autoscale": "scale"}


#: scipy's tests that also differ for the matrix-free method (module notes)
EXCLUDED_MATRIX_FREE = {
    "test_bug_8973_2": "x = -2, HiGHS's vertex of the optimal set x <= -2; an interior point method "
                       "without a presolve answers another point of it (checked below)",
}


def _through_gpgpu(backend, lp_method="mehrotra"):
    def linprog(c, A_ub=None, b_ub=None, A_eq=None, b_eq=None, bounds=(0, None), method=None, callback=None,
                options=None, x0=None, integrality=None):
        opts = {"backend": backend}
        for key, value in (options or {}).items():
            if key == "disp":
                continue
            opts[SCIPY_OPTIONS.get(key, key)] = value
        res = gpgpu_linprog(c, A_ub, b_ub, A_eq, b_eq, bounds, method=lp_method, options=opts)
        assert res.lp.method == lp_method            # the method asked for answered
        return res
    return linprog


class _Through:
    method = "mehrotra"           # the name scipy's tests pass on (the replaced linprog ignores it)
    lp_method = "mehrotra"        # the method of gpgpu.lp.linprog these tests run
    options = {}
    backend = None

    @pytest.fixture(autouse=True)
    def _gpgpu_linprog(self, monkeypatch, request):
        excluded = dict(EXCLUDED, **(EXCLUDED_MATRIX_FREE if self.lp_method == "matrix-free" else {}))
        if request.node.originalname in excluded:
            pytest.skip(excluded[request.node.originalname])
        monkeypatch.setattr(scipy_tests, "linprog", _through_gpgpu(self.backend, self.lp_method))


class TestScipyLinprogNumpy64(_Through, scipy_tests.LinprogCommonTests):
    backend = "numpy64"


@pytest.mark.skipif(not os.environ.get("GPGPU_LONG_TESTS"), reason="about 80 s on llvmpipe; set GPGPU_LONG_TESTS=1")
class TestScipyLinprogGPU(_Through, scipy_tests.LinprogCommonTests):
    backend = "gpu"


class TestScipyLinprogMatrixFreeNumpy64(_Through, scipy_tests.LinprogCommonTests):
    lp_method = "matrix-free"
    options = {"presolve": False}        # the method's default, said to scipy's tests (module notes)
    backend = "numpy64"


class TestScipyLinprogMatrixFreeGPU(_Through, scipy_tests.LinprogCommonTests):
    lp_method = "matrix-free"
    options = {"presolve": False}
    backend = "gpu"


@pytest.mark.parametrize("method, backend", [("matrix-free", "numpy64"), ("matrix-free", "gpu"),
                                             ("mehrotra", "numpy64")])
def test_an_lp_with_a_ray_of_optima_answers_a_point_of_it(method, backend):
    """scipy's test_bug_8973_2 without its vertex: min 0 x subject to x <= -2, x free. Every
    x <= -2 is optimal; without a presolve an interior point method answers one of them with
    objective 0 and the constraint's slack, b - A x, non-negative."""
    import numpy as np

    res = gpgpu_linprog(np.zeros(1), [[1.0]], [-2.0], bounds=(None, None), method=method,
                        options={"backend": backend, "presolve": False})
    assert res.status == 0 and res.success, res.message
    assert res.fun == 0.0
    assert res.x[0] <= -2.0 + 1e-6, res.x
    np.testing.assert_allclose(res.slack, -2.0 - res.x, rtol=0, atol=1e-6)
    assert res.slack[0] >= -1e-6


@pytest.mark.parametrize("last", [(0, None), (None, 0)])
def test_the_trivially_unbounded_lps_are_unbounded_as_highs_answers(last):
    """The LPs of the two excluded test_unbounded_no_nontrivial_constraints tests: status 3 with
    no point, as scipy's HiGHS methods answer them (the part of those tests that is not the
    legacy methods' convention)."""
    import numpy as np

    c = np.array([0, 0, 0, 1, -1, -1 if last == (0, None) else 1])
    A_ub = np.array([[1, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0], [0, 0, 0, 0, 0, -1 if last == (0, None) else 1]])
    bounds = [(None, None)] * 3 + [(-1, 1), (-1, 1), last]
    res = gpgpu_linprog(c, A_ub, np.array([2, -2, 0]), bounds=bounds, options={"backend": "numpy64"})
    assert res.status == 3 and not res.success and res.x is None, res.message


#: scipy's HiGHS-only tests of the marginals that this linprog runs: the KKT conditions on its
#: ``very_random_gen`` LP. Its test_marginals is not run: it differentiates the objective by
#: finite differences of nested solves, which an interior point answer to eps = 1e-9 makes noisy
#: above its rtol = 1e-7 with atol 0 (a marginal of 0 comes out near 1e-10);
#: tests/test_lp_marginals.py compares the marginals with HiGHS's own instead.
HIGHS_MARGINAL_TESTS = ("test_dual_feasibility", "test_complementary_slackness")


@pytest.mark.parametrize("test", HIGHS_MARGINAL_TESTS)
@pytest.mark.parametrize("lp_method, backend", [("mehrotra", "numpy64"), ("matrix-free", "numpy64"),
                                                ("mehrotra", "gpu"), ("matrix-free", "gpu")])
def test_scipys_highs_tests_of_the_marginals(test, lp_method, backend, monkeypatch):
    monkeypatch.setattr(scipy_tests, "linprog", _through_gpgpu(backend, lp_method))
    suite = scipy_tests.LinprogHiGHSTests()
    suite.method, suite.options = "highs", {}
    getattr(scipy_tests.LinprogHiGHSTests, test)(suite)
