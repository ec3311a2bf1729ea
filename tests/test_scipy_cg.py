"""scipy's own iterative-solver tests, run through :func:`gpgpu.cg`.

The tests are the functions of ``scipy/sparse/linalg/_isolve/tests/test_iterative.py`` from the
installed scipy (not copied), called here with ``gpgpu.cg`` as the solver: the cases of scipy's
``IterativeParams`` that scipy runs its ``cg`` on (the symmetric positive definite ones), and
the tests that take a solver. ``gpgpu.cg`` is called as scipy's (``cg(A, b, x0=None, *, rtol,
atol, maxiter, M, callback)``, answering ``(x, info)``), so nothing is mapped.

Excluded (:data:`EXCLUDED`), each for a documented difference of the GPU's cg, not of its
answer, and each with a test of this file that checks what ``gpgpu.cg`` answers there instead:

- **float32's reach**: the GPU computes in float32, so it cannot hold ||b - A x|| below about
  2^-23 ||b|| (``gpgpu.cg.FLOAT32_REACH``; more on an ill-conditioned A). scipy's
  ``test_convergence`` asks rtol = 1e-8 of its float64 cases, ``test_x0_equals_Mb`` 1e-8 of
  every case, ``test_x0_working`` 1e-6 of a matrix whose conditioning puts that out of float32's
  reach, and ``test_atol`` targets down to 1e-9. There ``gpgpu.cg`` answers info > 0 with a
  ``Float32ToleranceWarning`` and never info 0 with a residual above the target
  (:func:`test_below_float32s_reach_cg_says_so_and_never_claims_convergence`).
- **LinearOperators**: ``test_precond_dummy`` and ``test_precond_inverse`` pass A or M as a
  ``LinearOperator``; the GPU needs A's entries and applies M as a diagonal, so ``gpgpu.cg``
  refuses them with a TypeError that says what to pass
  (:func:`test_a_linear_operator_is_refused_with_what_to_pass`); ``test_atol``'s dense M is
  refused with a ValueError for the same reason.
- **complex A**: the GPU's streams are real; the complex cases are refused with a ValueError
  (:func:`test_a_complex_system_is_refused`).
- **x's dtype** (scipy 1.18 and later, whose tests take ``xp`` and batch shapes, given here as
  numpy and none): its convergence and ``x0="Mb"`` tests also ask that x come back in a float32
  case's float32; ``gpgpu.cg`` answers x in float64 (docs/guide/sparse.md), so on such a scipy
  those two run on the float32 cases as
  :func:`test_float32_cases_converge_with_x_in_float64` instead (the same residual checks).

The float32-reach exclusions run again through ``cg(..., refine=True)`` (float64 refinement
around the float32 CG, beyond the papers), which meets scipy's targets there
(:func:`test_scipys_float64_targets_through_refine`), with the rest of scipy's tests that take
a solver.
"""
import warnings

import numpy as np
import pytest

scipy_tests = pytest.importorskip("scipy.sparse.linalg._isolve.tests.test_iterative",
                                  reason="scipy's test files are not installed")

import scipy.sparse.linalg as spla  # noqa: E402

import gpgpu  # noqa: E402
from gpgpu.cg import FLOAT32_REACH  # noqa: E402

REACH = "float32's reach: the target is below what a float32 iteration can hold (module notes)"
OPERATOR = "A or M as a LinearOperator: the GPU needs A's entries and M's diagonal (module notes)"
COMPLEX = "a complex A: the GPU's streams are real float32 (module notes)"
DTYPE = ("scipy 1.18's tests also ask x in A's and b's dtype (float32 here); gpgpu.cg answers x in float64 "
         "(module notes)")
#: scipy's tests that, from scipy 1.18 on, check that x comes back in the float32 of a float32
#: case (test_float32_cases_converge_with_x_in_float64 checks their residuals instead)
DTYPE_CHECKED = ("test_convergence", "test_x0_equals_Mb")
#: (test, case) pairs and solver tests of scipy's file that this cg does not run (module notes);
#: a case of None: every case (test_precond_inverse, which loops over scipy's solvers itself, is
#: not called at all)
EXCLUDED = {
    ("test_convergence", "poisson1d"): REACH,
    ("test_convergence", "poisson2d"): REACH,
    ("test_convergence", "rand-sym-pd"): REACH,
    ("test_x0_equals_Mb", None): REACH,
    ("test_precond_dummy", None): OPERATOR,
    ("test_precond_inverse", None): OPERATOR,
    ("test_atol", None): REACH + "; and its dense M, which the GPU cannot apply as a diagonal (module notes)",
    ("test_x0_working", None): REACH,
}


def _cases():
    """scipy's cases that scipy runs its cg on, with gpgpu.cg as their solver."""
    cases = []
    for t in scipy_tests.IterativeParams().generate_tests():
        if t.solver is spla.cg:
            name = t.name[:-len("-cg")]
            cases.append(scipy_tests.SingleTest(t.A, t.b, gpgpu.cg, name, t.convergence))
    return cases


CASES = _cases()
CASE_TESTS = ("test_maxiter", "test_convergence", "test_precond_dummy", "test_x0_equals_Mb")
SOLVER_TESTS = ("test_zero_rhs", "test_x0_solves_problem_exactly", "test_positional_error", "test_atol",
                "test_x0_working")


def _run(test, **given):
    """scipy's test function ``test`` with the arguments ``given`` (case, solver, atol) and, in a
    scipy whose tests also take the array namespace and batch shapes (``xp``, ``batch_A``,
    ``batch_b``, newer than 1.17), numpy and no batch: the same test on numpy arrays."""
    import inspect

    fn = getattr(scipy_tests, test)
    params = inspect.signature(fn).parameters
    case = given.get("case")
    if "xp" in params and case is not None and case.A.dtype == np.float32 and test in DTYPE_CHECKED:
        pytest.skip(DTYPE)
    extra = {"xp": np, "batch_A": (), "batch_b": ()}
    fn(**given, **{k: v for k, v in extra.items() if k in params})


def _skip_excluded(test, case=None):
    for key in ((test, case), (test, None)):
        if key in EXCLUDED:
            pytest.skip(EXCLUDED[key])
    if case is not None and "cmplx" in case:
        pytest.skip(COMPLEX)


def test_scipys_cases_are_the_ones_scipy_runs_its_cg_on():
    """The cases taken from scipy's file: its symmetric positive definite ones (a scipy that
    renames or drops them fails here rather than running nothing)."""
    names = {c.name.rsplit("-", 1)[0] for c in CASES}
    assert {"poisson1d", "poisson1d-F", "poisson2d", "poisson2d-F", "rand-sym-pd", "rand-sym-pd-F"} <= names


@pytest.mark.filterwarnings("ignore::gpgpu.Float32ToleranceWarning")
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@pytest.mark.parametrize("test", CASE_TESTS)
def test_scipys_case_tests(test, case):
    _skip_excluded(test, case.name.rsplit("-", 1)[0])
    _run(test, case=case)


@pytest.mark.filterwarnings("ignore::gpgpu.Float32ToleranceWarning")
@pytest.mark.parametrize("test", SOLVER_TESTS)
def test_scipys_solver_tests(test):
    _skip_excluded(test)
    _run(test, solver=gpgpu.cg)


@pytest.mark.parametrize("atol", ["legacy", None, -1])
def test_scipys_invalid_atol(atol):
    _run("test_invalid_atol", solver=gpgpu.cg, atol=atol)


def _solve(A, b, **kw):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        x, info = gpgpu.cg(A, b, **kw)
    warned = any(issubclass(w.category, gpgpu.Float32ToleranceWarning) for w in seen)
    return x, info, warned


def _atol_system():
    """test_atol's system (its seed and construction)."""
    rng = np.random.default_rng(168441431005389)
    A = rng.uniform(size=[10, 10])
    return A @ A.T + 10 * np.eye(10), 1e3 * rng.uniform(size=10)


def _x0_working_system():
    """test_x0_working's system (its seed and construction)."""
    rng = np.random.default_rng(1685363802304750)
    A = rng.random(size=[10, 10])
    return A @ A.T, rng.random(10), rng.random(10)


def _reach_runs():
    """The runs the REACH exclusions stand for: (name, A, b, keywords)."""
    by_name = {c.name.rsplit("-", 1)[0]: c for c in CASES}
    runs = []
    for name in ("poisson1d", "poisson2d", "rand-sym-pd", "poisson1d-F", "rand-sym-pd-F"):
        c = by_name[name]
        runs.append((f"{name} rtol 1e-8", c.A, c.b, {"rtol": 1e-8, "x0": 0 * c.b}))
        runs.append((f"{name} x0 Mb", c.A, c.b, {"rtol": 1e-8, "x0": "Mb"}))
    A, b = _atol_system()
    tols = np.r_[0, np.logspace(-9, 2, 7), np.inf]
    for rtol in tols:
        for atol in tols:
            if rtol or atol:
                runs.append((f"atol's system rtol {rtol:g} atol {atol:g}", A, b, {"rtol": rtol, "atol": atol}))
    A, b, x0 = _x0_working_system()
    runs += [("x0_working's system", A, b, {"rtol": 1e-6, "atol": 0}),
             ("x0_working's system from x0", A, b, {"rtol": 1e-6, "atol": 0, "x0": x0})]
    return runs


def test_below_float32s_reach_cg_says_so_and_never_claims_convergence():
    """Where scipy's tests ask for less than float32 can hold: info 0 only with ||b - A x||
    (float64, on the CPU) within the target (scipy's 1.00025 fudge for roundoff), else info > 0
    with a Float32ToleranceWarning; and the residual reached is float32's, within 1e-4 ||b||
    (a cg that answered x0, or a wrong x, fails this). Where the target is within float32's
    reach (1e-5 ||b|| and up here) info is 0."""
    for name, A, b, kw in _reach_runs():
        x, info, warned = _solve(A, b, **kw)
        err, bnorm = np.linalg.norm(A @ x - b), np.linalg.norm(b)
        target = max(kw.get("atol", 0.0), kw["rtol"] * bnorm)
        if info == 0:
            assert err <= 1.00025 * target, (name, err, target)
        else:
            assert warned, f"{name}: info {info} without a Float32ToleranceWarning"
            assert err <= 1e-4 * bnorm, (name, err / bnorm)
        if target >= 1e-5 * bnorm:
            assert info == 0, (name, info, err / bnorm)
    assert FLOAT32_REACH == 2.0 ** -23


@pytest.mark.parametrize("which", ["A", "M"])
def test_a_linear_operator_is_refused_with_what_to_pass(which):
    """test_precond_dummy's and test_precond_inverse's operators: a TypeError naming what cg takes."""
    c = next(c for c in CASES if c.name == "poisson1d-cg")
    op = spla.aslinearoperator(c.A)
    identity = spla.LinearOperator(c.A.shape, lambda v: v)
    with pytest.raises(TypeError, match="LinearOperator"):
        if which == "A":
            gpgpu.cg(op, c.b, rtol=1e-5)
        else:
            gpgpu.cg(c.A, c.b, M=identity, rtol=1e-5)


def test_a_dense_preconditioner_is_refused():
    """test_atol's M (a dense symmetric matrix): a ValueError saying M must be diagonal."""
    A, b = _atol_system()
    M0 = np.random.default_rng(1).standard_normal(size=(10, 10))
    with pytest.raises(ValueError, match="M is not diagonal"):
        gpgpu.cg(A, b, M=M0 @ M0.T, rtol=1e-5)


def test_a_complex_system_is_refused():
    """scipy's complex cases: a ValueError naming the cause."""
    c = next(t for t in scipy_tests.IterativeParams().generate_tests()
             if t.solver is spla.cg and t.name.startswith("rand-cmplx-sym-pd"))
    with pytest.raises(ValueError, match="complex"):
        gpgpu.cg(c.A, c.b, rtol=1e-5)


def refined_cg(A, b, x0=None, **kw):
    """gpgpu.cg with its float64 refinement, called as scipy's cg."""
    return gpgpu.cg(A, b, x0, refine=True, **kw)


refined_cg.__name__ = "cg"
REAL_CASES = [c for c in CASES if "cmplx" not in c.name]


@pytest.mark.parametrize("case", REAL_CASES, ids=[c.name for c in REAL_CASES])
@pytest.mark.parametrize("test", ("test_maxiter", "test_convergence", "test_x0_equals_Mb"))
def test_scipys_float64_targets_through_refine(test, case):
    """scipy's case tests, float64 targets included (rtol = 1e-8), through cg(refine=True): no
    warning either (a refinement that stalled, or one that called maxiter's stop a stall, warns)."""
    refined = scipy_tests.SingleTest(case.A, case.b, refined_cg, case.name.rsplit("-", 1)[0], case.convergence)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gpgpu.Float32ToleranceWarning)
        _run(test, case=refined)


@pytest.mark.parametrize("test", ("test_x0_working", "test_zero_rhs", "test_x0_solves_problem_exactly",
                                  "test_positional_error"))
def test_scipys_solver_tests_through_refine(test):
    with warnings.catch_warnings():
        warnings.simplefilter("error", gpgpu.Float32ToleranceWarning)
        _run(test, solver=refined_cg)


def test_refine_meets_every_target_of_scipys_atol_grid():
    """test_atol's system and its grid of rtol and atol (down to 1e-9, and 0), without its dense
    M: with refine every combination converges, within scipy's bound (its 1.00025 fudge)."""
    A, b = _atol_system()
    tols = np.r_[0, np.logspace(-9, 2, 7), np.inf]
    for rtol in tols:
        for atol in tols:
            if rtol or atol:
                x, info = gpgpu.cg(A, b, rtol=rtol, atol=atol, refine=True)
                assert info == 0, (rtol, atol)
                assert np.linalg.norm(A @ x - b) <= 1.00025 * max(atol, rtol * np.linalg.norm(b)), (rtol, atol)


@pytest.mark.parametrize("case", [c for c in REAL_CASES if c.A.dtype == np.float32],
                         ids=[c.name for c in REAL_CASES if c.A.dtype == np.float32])
def test_float32_cases_converge_with_x_in_float64(case):
    """What scipy's test_convergence (rtol 1e-2 for a float32 case) and test_x0_equals_Mb (rtol
    1e-8, through refine) check on the float32 cases, but the dtype: info 0, x0 left as given,
    ||A x - b|| within the target, x in float64."""
    A, b = case.A, case.b
    x0 = 0 * b
    x, info = gpgpu.cg(A, b, x0=x0, rtol=1e-2)
    assert info == 0 and not x0.any() and x.dtype == np.float64
    assert np.linalg.norm(A @ x - b) <= 1e-2 * np.linalg.norm(b)
    x, info = gpgpu.cg(A, b, x0="Mb", rtol=1e-8, refine=True)
    assert info == 0 and np.linalg.norm(A @ x - b) <= 1e-8 * np.linalg.norm(b)
