"""What a hostile user meets at the LP's front door: time limits, names, presets, and data that
are not what linprog expects; each answer checked against HiGHS or a hand-worked case."""
import numpy as np
import pytest
import scipy.sparse as sp

from gpgpu.lp import linprog, solve
from gpgpu.lp.mps import standardize


@pytest.mark.parametrize("method", ["mehrotra", "matrix-free"])
def test_a_time_limit_returns_the_best_point_with_its_status(method):
    """eps = 1e-12 is out of reach in a microsecond: the solve stops at its first test with
    status "time_limit" (code 1, as scipy's) and a point of the right size; linprog says 1."""
    r = solve("afiro", backend="numpy64", method=method, eps=1e-12, time_limit=1e-6)
    assert r.status == "time_limit" and r.status_code == 1 and r.iterations < 100
    assert r.message.startswith("Time limit reached") and r.x is not None and r.x.shape == (32,)
    res = linprog([1.0, 1.0], A_ub=[[-1.0, -2.0], [-3.0, -1.0]], b_ub=[-4.0, -6.0], method=method,
                  options={"backend": "numpy64", "time_limit": 1e-6})
    assert res.status == 1 and not res.success and res.x is not None
    # a limit that is not reached changes nothing
    r = solve("afiro", backend="numpy64", method=method, eps=1e-8, time_limit=600.0)
    assert r.status == "optimal" and r.objective == pytest.approx(-464.7531428, rel=1e-8)


@pytest.mark.parametrize("bad, error", [(0, ValueError), (-1.0, ValueError), ("10", TypeError), (True, TypeError)])
def test_a_time_limit_that_is_no_number_of_seconds_is_refused(bad, error):
    with pytest.raises(error, match="time_limit must be a"):
        solve("afiro", backend="numpy64", time_limit=bad)


@pytest.mark.parametrize("preset", [["robust"], {"robust": 1}, None])
def test_a_preset_that_is_no_name_is_named(preset):
    with pytest.raises(ValueError, match=r"unknown preset .*choose one of 'paper', 'robust', 'fast'"):
        solve("afiro", backend="numpy64", preset=preset)


def test_a_name_the_file_system_refuses_is_one_clear_error():
    with pytest.raises(FileNotFoundError, match=r"not a file name this system takes .*shipped problem's name"):
        solve("a" * 5000, backend="numpy64")


def test_a_qaplib_name_is_its_lp_relaxation():
    """"nug12" ships in gpgpu/data/qaplib: solve reads it as 002's QAP relaxation (3192 x 8856),
    where it said "NETLIB problem not found"."""
    from gpgpu.lp.api import read_named

    p = read_named("nug12")
    assert p.A.shape == (3192, 8856)
    with pytest.raises(FileNotFoundError, match=r"NETLIB problem 'nug99' not found .*no QAPLIB instance 'nug99'"):
        read_named("nug99")


@pytest.mark.parametrize("presolve", [True, False])
def test_a_row_of_tiny_coefficients_is_kept(presolve):
    """1e-8 x1 + 1e-8 x2 >= 1e-8 is x1 + x2 >= 1: min x1 + x2 is 1 (HiGHS's presolve, given
    the row as written, dropped it as redundant: fun 0)."""
    res = linprog([1.0, 1.0], A_ub=[[-1e-8, -1e-8]], b_ub=[-1e-8],
                  options={"backend": "numpy64", "presolve": presolve})
    assert res.status == 0 and res.fun == pytest.approx(1.0, rel=1e-8)


def test_equality_rows_of_tiny_coefficients_give_highs_answer():
    from scipy.optimize import linprog as highs

    rng = np.random.default_rng(3)
    A = rng.random((3, 6)) + 0.1
    b = A @ (rng.random(6) + 0.5)
    c = rng.random(6) + 0.2
    ref = highs(c, A_eq=A, b_eq=b)
    res = linprog(c, A_eq=A * 1e-8, b_eq=b * 1e-8, options={"backend": "numpy64"})
    assert res.status == 0 and res.fun == pytest.approx(ref.fun, rel=1e-8)


def test_linprog_takes_what_scipy_takes():
    # a scalar b_ub with one row; a Python int beyond float64's integers; duplicates of a CSR
    # matrix summed (-x0 - 2 x1 <= -1: min x0 + x1 = 0.5 at x1 = 0.5)
    assert linprog([1, 1], A_ub=[[-1, -1]], b_ub=-1, options={"backend": "numpy64"}).fun == pytest.approx(1.0)
    res = linprog([10 ** 20, 1], A_ub=[[-1, -1]], b_ub=[-1], options={"backend": "numpy64"})
    assert res.status == 0 and res.x == pytest.approx([0.0, 1.0], abs=1e-8)
    A = sp.csr_matrix((np.array([-1.0, -1.0, -1.0]), np.array([0, 1, 1]), np.array([0, 3])), shape=(1, 2))
    res = linprog([1, 1], A_ub=A, b_ub=[-1], options={"backend": "numpy64"})
    assert res.fun == pytest.approx(0.5, rel=1e-8) and res.x == pytest.approx([0.0, 0.5], abs=1e-8)


@pytest.mark.parametrize("kwargs, match", [
    (dict(c=[1], A_eq=[[1]], b_eq="hello"), r"b_eq must be a vector of numbers"),
    (dict(c=[1, 1], A_ub=[[1, 1], [1]], b_ub=[1, 1]), r"A_ub must be a 2-D array of numbers with rows of one length"),
    (dict(c=["a", 1]), r"c must be a vector of numbers"),
])
def test_data_that_are_not_numbers_are_a_type_error(kwargs, match):
    with pytest.raises(TypeError, match=match):
        linprog(options={"backend": "numpy64"}, **kwargs)


def test_an_empty_unbounded_column_needs_a_feasible_rest():
    """min -x2 with x2 >= 0 in no row: unbounded when x0 + x1 = 1 is feasible, infeasible when
    the rest is (x0 + x1 = -1, x >= 0)."""
    for rhs, status in ((1.0, "unbounded"), (-1.0, "infeasible")):
        p = standardize([1, 1, -1], [[1, 1, 0]], [rhs], [rhs], col_lower=[0, 0, 0], col_upper=[np.inf] * 3)
        assert solve(p, backend="numpy64", presolve=False).status == status


def test_cholesky_none_keeps_lapack_on_numpy():
    """The command line passes cholesky=None when --cholesky is not given: that is the preset's
    outer form on LAPACK, not the paper's loop (it printed "options: factorization=loop")."""
    from gpgpu.lp import preset_options

    assert "factorization" not in preset_options("robust", "mehrotra", "numpy64", cholesky=None)
    assert preset_options("robust", "mehrotra", "numpy64", cholesky="inner")["factorization"] == "loop"
    assert preset_options("robust", "mehrotra", "gpu", cholesky=None)["pivot"] == "onepass"


def test_the_command_line_takes_a_time_limit_and_names_the_first_iteration(capsys):
    from gpgpu.lp.__main__ import main

    assert main(["afiro", "--backend", "numpy64", "--eps", "1e-12", "--time-limit", "0.000001"]) == 1   # not optimal
    out = capsys.readouterr()
    assert "status: time_limit (Time limit reached" in out.out
    assert "the starting point and iteration 0" in out.err
