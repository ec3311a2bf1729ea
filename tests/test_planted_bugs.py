"""One test for each bug that a mutation audit planted in the LP's code and the suite let through
(each names the planted change it fails on). References are hand-worked LPs and Table 3."""
import argparse

import numpy as np
import pytest
import scipy.sparse as sp

from gpgpu.cli import tolerance
from gpgpu.lp import DEFAULT_EPS, Problem, paper_eps, solve
from gpgpu.lp.mehrotra import mehrotra
from gpgpu.lp.numpy_backend import NumpyBackend
from gpgpu.lp.netlib import PAPER_TABLE3


def test_no_rows_and_a_zero_cost_is_optimal_at_zero():
    """min 0 x1 + x2 over x >= 0, no rows: x = 0 is optimal (objective 0); a zero cost is no ray
    (planted: ``c < 0`` -> ``c <= 0`` in the answer without rows said unbounded)."""
    p = Problem.from_arrays(sp.csr_matrix((0, 2)), np.zeros(0), np.array([0.0, 1.0]))
    r = solve(p, backend="numpy64", presolve=False)
    assert r.status == "optimal" and r.objective == 0.0 and np.array_equal(r.x, [0.0, 0.0])
    q = Problem.from_arrays(sp.csr_matrix((0, 2)), np.zeros(0), np.array([-1e-300, 1.0]))
    assert solve(q, backend="numpy64", presolve=False).status == "unbounded"


def test_tables_eps_is_the_paper_preset_of_mehrotras_method_only():
    """Table 3's eps (afiro's among them) belongs to paper 000's method; the matrix-free
    method's paper preset runs at DEFAULT_EPS (planted: paper_eps for every method)."""
    afiro = Problem.from_arrays(np.eye(1), np.ones(1), np.ones(1), name="afiro")
    assert paper_eps(afiro, "paper", "mehrotra") == PAPER_TABLE3["afiro"]["eps"] != DEFAULT_EPS
    assert paper_eps(afiro, "paper", "matrix-free") == DEFAULT_EPS
    assert paper_eps(afiro, "robust", "mehrotra") == DEFAULT_EPS
    r = solve("afiro", backend="numpy64", method="matrix-free", preset="paper")
    assert r.status == "optimal" and f"eps = {DEFAULT_EPS:g}" in r.message


def test_a_coefficient_too_small_for_float32_is_named():
    """x1 + x2 <= 4, x1 + 1e-30 x2 <= 6 cannot be made unit-sized (its cross ratio is 1e30): on
    the GPU its 1e-30, whose square float32 flushes, is named (planted: the span check without
    its tiny side let it through)."""
    p = Problem.from_inequalities([-1, -2], A_ub=[[1, 1], [1, 1e-30]], b_ub=[4, 6])
    with pytest.raises(ValueError, match=r"A\[1, 1\] = 1e-30: more than float32 holds .*coefficients within "
                                         r"1.1e-19 \.\. 1.8e\+19"):
        solve(p, backend="gpu", presolve=False)


def test_the_iteration_limit_answers_the_best_point():
    """The LP infeasible both ways: iteration 0's worst test (0.94) is better than iteration 1's
    (1.64), so max_iter = 1 answers iteration 0's point (planted: the last point for code 1)."""
    p = Problem.from_inequalities([-1.0, -1.0], A_ub=[[1.0, -1.0], [-1.0, 1.0]], b_ub=[-1.0, -1.0])
    r = mehrotra(NumpyBackend(p, dtype=np.float64), p, eps=1e-8, max_iter=1)
    worst = [max(h["primal_residual"], h["dual_residual"], h["gap"]) for h in r.history]
    assert r.status == "iteration_limit" and r.iterations == 1
    assert worst[0] < worst[1] and r.point_iteration == 0
    b = p.b
    assert np.abs(b - p.A @ r.x_std).max() / (1 + np.abs(b).max()) == pytest.approx(r.history[0]["primal_residual"])


@pytest.mark.parametrize("text", ["0", "1", "-1e-8", "nan", "inf", "1.5"])
def test_the_command_lines_eps_is_strictly_between_0_and_1(text):
    """--eps 0 was taken (planted: ``0 < eps`` -> ``0 <= eps``)."""
    with pytest.raises(argparse.ArgumentTypeError, match="0 < eps < 1"):
        tolerance(text)
    assert tolerance("1e-8") == 1e-8


def test_the_normalisations_powers_of_two_stay_finite():
    """A largest |c_j| of 1e-310 asks the band's normalisation for 2^1026, beyond float64: its
    power of two stops at 2^1000 (planted: the cap at 2^2000 raised OverflowError from solve with
    normalize on and the LP's own units off)."""
    from gpgpu.lp.scaling import Units

    p = Problem.from_arrays(np.eye(2), np.ones(2), np.array([-1e-310, 0.0]))
    u = Units.of(p)
    assert u.gamma == 2.0 ** 1000 and np.isfinite(u.gamma)


def test_the_presolve_without_the_normalisation_maps_x_back_as_is():
    """presolve=True, normalize=False: HiGHS gets the LP as written and x comes back divided by
    beta = 1 (planted: beta = 0 there, x infinite); afiro's optimum."""
    r = solve("afiro", backend="numpy64", eps=1e-8, presolve=True, normalize=False)
    assert r.status == "optimal" and r.objective == pytest.approx(-464.7531428571, rel=1e-9)
    assert np.isfinite(r.x).all() and r.presolve["status"] == "Reduced"


def test_a_callback_sees_the_users_objectives_when_the_presolve_removes_nothing():
    """A dense 3 x 6 equality LP, which HiGHS's presolve leaves as it is ("NotReduced"): the
    callback's objectives are the history's (planted: the objective factor 0 on that path)."""
    rng = np.random.default_rng(0)
    A, x0 = rng.uniform(0.5, 2.0, (3, 6)), rng.uniform(0.5, 1.5, 6)
    p = Problem.from_inequalities(rng.uniform(0.5, 2.0, 6), A_eq=A, b_eq=A @ x0)
    seen = []
    r = solve(p, backend="numpy64", eps=1e-8, callback=seen.append)
    assert r.presolve["status"] == "NotReduced" and r.status == "optimal"
    assert [e["primal_objective"] for e in seen] == [e["primal_objective"] for e in r.history]
    assert np.isfinite([e["primal_objective"] for e in seen]).all()


def test_the_one_pass_pivot_belongs_to_the_outer_form_only():
    """The robust preset's pivot="onepass" is a variant of the outer form with the triangle
    update: cholesky="inner" (or update="square") leaves it out (planted: the test turned round,
    which dropped it from the outer form and kept it for the inner one)."""
    from gpgpu.lp import preset_options

    assert preset_options("robust", "mehrotra", "gpu")["pivot"] == "onepass"
    assert "pivot" not in preset_options("robust", "mehrotra", "gpu", cholesky="inner")
    assert "pivot" not in preset_options("robust", "mehrotra", "gpu", update="square")


def test_an_equal_regularisation_floor_and_ceiling_is_taken():
    """reg_min = reg_max fixes rho = delta: allowed (planted: ``>`` -> ``>=`` refused it); a floor
    above the ceiling is refused."""
    r = solve("afiro", backend="numpy64", eps=1e-8, regularize=True, reg_min=1e-9, reg_max=1e-9, presolve=False)
    assert r.status == "optimal" and r.objective == pytest.approx(-464.7531428571, rel=1e-7)
    shifts = {h["regularisation"] for h in r.history if h["regularisation"] is not None}
    assert len(shifts) == 1                   # rho and delta fixed (in the units of b and c scaled to 1)
    with pytest.raises(ValueError, match="reg_min must not exceed reg_max"):
        solve("afiro", backend="numpy64", regularize=True, reg_min=1e-8, reg_max=1e-9)


def test_the_matrix_free_paper_preset_keeps_the_bounds_as_rows():
    """preset="paper" runs 002's method on the standard form with a row of the normal matrix for
    each upper bound (bounds="rows"): its normal matrix has the standard form's rows (planted: the
    bound rows detected whatever ``bounds`` says); the defaults keep the problem's own rows."""
    paper = solve("sc50b", backend="numpy64", method="matrix-free", preset="paper", eps=1e-6)
    robust = solve("sc50b", backend="numpy64", method="matrix-free", eps=1e-6, presolve=False)
    assert paper.status == robust.status == "optimal"
    assert paper.normal_rows == paper.standard_rows
    q = solve("afiro", backend="numpy64", method="matrix-free", preset="paper")
    assert q.normal_rows == q.standard_rows
    bounded = Problem.from_inequalities([-1.0, -2.0], A_ub=[[1.0, 1.0]], b_ub=[3.0], bounds=[(0, 2), (0, 2)])
    rows = solve(bounded, backend="numpy64", method="matrix-free", preset="paper")
    implicit = solve(bounded, backend="numpy64", method="matrix-free", presolve=False)
    assert rows.status == implicit.status == "optimal" and rows.objective == pytest.approx(-5.0, rel=1e-6)
    assert rows.normal_rows == rows.standard_rows == 3 and implicit.normal_rows == 1
