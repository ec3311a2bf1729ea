"""Upper bounds in the Newton system (gpgpu.lp.bounds): the bound rows x_j + w_k = u_k of the
standard form eliminated from the normal equations, which keep the problem's own rows.

Every check compares with an independent reference: the dense normal matrix of every row,
A D Aᵀ + delta I, solved by numpy in float64 (the elimination's formulas never enter it), or
the same LP with bounds="rows" (paper 000's standard form) and HiGHS's objective."""
import numpy as np
import pytest
import scipy.sparse as sp

from gpgpu.lp import Problem, solve
from gpgpu.lp.bounds import BoundRows
from gpgpu.lp.numpy_backend import NumpyBackend

highspy = pytest.importorskip("highspy")


def bounded_lp(seed=0, m=6, n=9, nb=5):
    """A feasible, bounded LP with ``nb`` upper-bounded columns, through standardize."""
    rng = np.random.default_rng(seed)
    A = rng.uniform(-1, 1, (m, n)) * (rng.random((m, n)) < 0.6)
    A[np.arange(m), np.arange(m) % n] += 2.0
    x0 = rng.uniform(0.2, 0.8, n)
    ub = [(0, 1.0 if j < nb else None) for j in range(n)]
    return Problem.from_inequalities(rng.uniform(-1, 1, n), A_ub=A, b_ub=A @ x0 + 0.5, bounds=ub)


def scaled_rows(problem, alpha, beta):
    """The problem with bound row k multiplied by alpha_k on x and beta_k on w (its right-hand
    side by... alpha_k: (alpha x + beta w = alpha u) is another system, the same rows' pattern)."""
    A = problem.A.tolil(copy=True)
    b = problem.b.copy()
    rows = BoundRows.detect(problem.A)
    for k in range(rows.count):
        i = rows.m + k
        A[i, rows.x[k]] = alpha[k]
        A[i, rows.w[k]] = beta[k]
    return Problem.from_arrays(A.tocsr(), b, problem.c)


def dense_reference(A, d, shift, r):
    M = (A.toarray() * d) @ A.toarray().T + shift * np.eye(A.shape[0])
    return np.linalg.solve(M, r)


def test_bound_rows_are_found_with_their_columns():
    p = bounded_lp(nb=5)
    rows = BoundRows.detect(p.A)
    assert rows.count == p.presolve["upper_bound_rows"] == 5
    assert rows.m == p.m - 5
    g = p._general
    np.testing.assert_array_equal(rows.x, g["pos"][g["bound_cols"]])      # x' of each bounded column
    np.testing.assert_array_equal(rows.w, g["wcol"][g["bound_cols"]])     # its slack w
    np.testing.assert_array_equal(rows.alpha, 1.0)
    np.testing.assert_array_equal(rows.beta, 1.0)
    assert rows.A_main.shape == (rows.m, p.n) and abs(rows.A_main - p.A[:rows.m]).max() == 0


def test_only_trailing_rows_of_a_private_slack_and_a_free_column_are_bound_rows():
    # row 2: x0 + w(col 3); row 3: x0 + col 4 shares x0 with row 2 -> only row 3 is taken
    A = sp.csr_matrix(np.array([[1., 1., 1., 0., 0.],
                                [0., 1., 2., 0., 0.],
                                [1., 0., 0., 1., 0.],
                                [1., 0., 0., 0., 1.]]))
    rows = BoundRows.detect(A)
    assert rows.m == 3 and rows.x.tolist() == [0] and rows.w.tolist() == [4]
    # a last row whose two columns both appear elsewhere: none
    B = sp.csr_matrix(np.array([[1., 1.], [1., 1.]]))
    assert BoundRows.detect(B) is None
    # every row a bound row: the first stays a main row (a normal matrix of one row at least)
    C = sp.csr_matrix(np.array([[1., 0., 1., 0.], [0., 1., 0., 1.]]))
    assert BoundRows.detect(C).m == 1


@pytest.mark.parametrize("shift", [0.0, 1e-3])
@pytest.mark.parametrize("scaled", [False, True])
def test_elimination_solves_the_normal_equations_of_every_row(shift, scaled):
    """weights, eliminate and back_substitute answer M z = r for M of every row (float64)."""
    p = bounded_lp(seed=3)
    rng = np.random.default_rng(7)
    rows = BoundRows.detect(p.A)
    if scaled:                                   # alpha, beta other than 1: catches a swap of the two
        p = scaled_rows(p, rng.choice([0.5, 2.0, 4.0], rows.count), rng.choice([0.25, 1.0, 8.0], rows.count))
        rows = BoundRows.detect(p.A)
        assert not np.all(rows.alpha == rows.beta)
    d = np.exp(rng.uniform(-8, 8, p.n))          # the weights of late iterations: 1e-4 .. 1e4 and beyond
    r = rng.standard_normal(p.m)
    dt = rows.weights(d, shift)
    Am = rows.A_main.toarray()
    S = (Am * dt) @ Am.T + shift * np.eye(rows.m)
    z1 = np.linalg.solve(S, rows.eliminate(r, d, shift))
    z = rows.back_substitute(z1, r, d, shift)
    ref = dense_reference(p.A, d, shift, r)
    assert np.linalg.norm(z - ref) <= 1e-9 * np.linalg.norm(ref)


def test_weights_of_a_bounded_column_are_the_classic_diagonal():
    """With delta = 0, 1/d~ = s/x + z/w ([Wri97] p. 220): d~ = 1 / (1/d_x + 1/d_w); a slack's
    weight is 0, an unbounded column's is d; a huge d_x gives d_w, not an overflow."""
    p = bounded_lp(nb=3)
    rows = BoundRows.detect(p.A)
    d = np.linspace(0.5, 3.0, p.n)
    dt = rows.weights(d)
    np.testing.assert_allclose(dt[rows.x], 1.0 / (1.0 / d[rows.x] + 1.0 / d[rows.w]), rtol=1e-15)
    assert np.all(dt[rows.w] == 0)
    other = np.setdiff1d(np.arange(p.n), np.concatenate([rows.x, rows.w]))
    np.testing.assert_array_equal(dt[other], d[other])
    d[rows.x] = 1e300
    assert np.all(np.isfinite(rows.weights(d)[rows.x]))
    np.testing.assert_allclose(rows.weights(d)[rows.x], d[rows.w], rtol=1e-12)


@pytest.mark.parametrize("backend", ["numpy64", "numpy32", "gpu", "gpu+refine"])
def test_each_back_end_solves_with_the_normal_matrix_of_every_row(backend, rng):
    """factor_normal + solve_normal with bound rows eliminated equal the float64 solve of every
    row's normal matrix: numpy64 to 1e-9; the float32 back ends (numpy32, the GPU's bound-row
    kernels) to float32 accuracy for this conditioning; the GPU refined to 1e-10."""
    from gpgpu.lp.backends import get_backend

    p = bounded_lp(seed=11)
    rows = BoundRows.detect(p.A)
    p = scaled_rows(p, rng.choice([0.5, 2.0], rows.count), rng.choice([0.25, 4.0], rows.count))
    d = rng.uniform(0.5, 2.0, p.n)
    r = rng.standard_normal(p.m)
    shift = 1e-2
    name, refine = backend.split("+")[0], backend.endswith("refine")
    be = get_backend(name, p, refine=refine, **({"adat": "points", "substitution": "inverse", "pivot": "onepass"}
                                                 if name == "gpu" else {}))
    assert be.m_normal == rows.m < p.m
    try:
        be.factor_normal(be.vector(d), shift)
        z = be.to_numpy(be.solve_normal(be.vector(r)))
    finally:
        getattr(be, "release", lambda: None)()
    ref = dense_reference(p.A, d, shift, r)
    tol = 1e-9 if backend in ("numpy64", "gpu+refine") else 2e-4
    assert np.linalg.norm(z - ref) <= tol * np.linalg.norm(ref), backend


def _highs(p):
    from scipy.optimize import linprog

    res = linprog(p.c, A_eq=p.A, b_eq=p.b, bounds=(0, None), method="highs")
    return res.fun + p.c0


@pytest.mark.parametrize("backend", ["numpy64", "gpu"])
@pytest.mark.parametrize("seed", [0, 1])
def test_implicit_bounds_solve_what_bound_rows_solve(backend, seed):
    """The same LP with bounds="implicit" and "rows": optimal at 1e-8 within 1e-8 of HiGHS, the
    normal matrix of the main rows only, and the same duals of every standard-form row."""
    p = bounded_lp(seed=seed, m=8, n=14, nb=9)
    ref = _highs(p)
    implicit = solve(p, backend=backend, eps=1e-8, presolve=False)
    rows = solve(p, backend=backend, eps=1e-8, presolve=False, bounds="rows")
    for r in (implicit, rows):
        assert r.status == "optimal", r.message
        assert abs(r.objective - ref) <= 1e-8 * max(1.0, abs(ref))
    assert implicit.normal_rows == p.m - 9 and rows.normal_rows == p.m
    assert implicit.y.shape == rows.y.shape == (p.m,)
    np.testing.assert_allclose(implicit.y, rows.y, atol=1e-6 * max(1.0, np.abs(rows.y).max()))


@pytest.mark.parametrize("backend", ["numpy64", "gpu"])
def test_infeasible_and_unbounded_with_bounds_in_the_newton_system(backend):
    """Bounds that make an LP infeasible (x, y <= 1, x + y >= 3) and an LP unbounded along a
    column without bound: the statuses of bound rows, with the bounds in the diagonal."""
    infeasible = Problem.from_inequalities([1.0, 1.0, 0.0], A_ub=[[-1.0, -1.0, 0.0], [0.0, 0.0, 1.0]],
                                           b_ub=[-3.0, 5.0], bounds=[(0, 1), (0, 1), (0, None)])
    r = solve(infeasible, backend=backend, eps=1e-8, presolve=False, max_iter=60)
    assert r.status == "infeasible", r.message
    # x <= 1 + y with y free of bounds above: -x runs away; z in [0, 1] gives a bound row
    unbounded = Problem.from_inequalities([-1.0, 0.0, 1.0], A_ub=[[1.0, -1.0, 0.0], [0.0, 0.0, 1.0]],
                                          b_ub=[1.0, 5.0], bounds=[(0, None), (0, None), (0, 1)])
    r = solve(unbounded, backend=backend, eps=1e-8, presolve=False, max_iter=60)
    assert r.status == "unbounded", r.message
    for p in (infeasible, unbounded):
        assert BoundRows.detect(p.A) is not None


def test_matrix_free_with_bounds_in_the_newton_system():
    """The matrix-free method's PCG on the main rows' Schur complement: HiGHS's objective at
    1e-6, as with bound rows."""
    p = bounded_lp(seed=4, m=10, n=18, nb=12)
    ref = _highs(p)
    for bounds in ("implicit", "rows"):
        r = solve(p, method="matrix-free", backend="numpy64", eps=1e-7, presolve=False, bounds=bounds)
        assert r.status == "optimal", (bounds, r.message)
        assert abs(r.objective - ref) <= 1e-6 * max(1.0, abs(ref)), bounds


def test_bounds_option_is_checked_and_the_paper_keeps_bound_rows():
    p = bounded_lp()
    with pytest.raises(ValueError, match="bounds must be 'implicit'"):
        solve(p, backend="numpy64", bounds="diagonal")
    with pytest.raises(ValueError, match="bounds must be 'implicit'"):
        solve(p, method="matrix-free", backend="numpy64", bounds="diagonal")
    assert solve(p, backend="numpy64", preset="paper", eps=1e-6).normal_rows == p.m
    assert NumpyBackend(p, bounds="rows").m_normal == p.m


def test_a_schur_right_hand_side_below_the_target_is_solved_not_dropped():
    """The matrix-free solver with bound rows eliminated: a right-hand side whose main rows' part
    (the Schur system's) is far smaller than the target relative to the whole one is met by
    dy = 0 there with no PCG iteration; with ``rel`` it is solved to ``rel`` of its own size
    (the dense normal matrix of every row in float64 is the reference)."""
    from gpgpu.lp import matrix_free as mf
    from gpgpu.lp.matrix_free_numpy import NumpyMatrixFree

    p = bounded_lp(nb=5)
    rows = BoundRows.detect(p.A)
    main = Problem.from_arrays(rows.A_main, p.b[:rows.m], p.c)
    be = NumpyMatrixFree(main)
    sol = mf._Solver(be, p.A.tocsr(), p.A.T.tocsr(), refine=False, maxiter=200, bounds=rows)
    rng = np.random.default_rng(3)
    d, shift = rng.uniform(0.5, 2.0, p.n), 1e-3
    sol.set_weights(d, shift, rows.m)
    M = (p.A.toarray() * d) @ p.A.toarray().T + shift * np.eye(p.m)
    z = np.concatenate([1e-6 * rng.standard_normal(rows.m), rng.standard_normal(rows.count)])
    rhs = M @ z                                          # the main rows' part of the solution tiny
    schur = rows.eliminate(rhs, d, shift)
    target = 1e-2 * np.linalg.norm(rhs)
    assert np.linalg.norm(schur) < target                # what makes dy = 0 meet the target
    dropped, facts = sol.solve(rhs, target)
    assert facts["iterations"] == 0 and np.abs(dropped[:rows.m]).max() == 0
    solved, facts = sol.solve(rhs, target, rel=1e-2)
    assert facts["iterations"] > 0 and facts["converged"]
    assert np.linalg.norm(rhs - M @ solved) <= 1e-2 * np.linalg.norm(schur) * (1 + 1e-9)
    np.testing.assert_allclose(solved[:rows.m], z[:rows.m], rtol=0, atol=1e-2 * np.abs(z[:rows.m]).max() * 10)
    # a target the Schur system's right-hand side does not meet is kept as given
    _, facts = sol.solve(rhs, 1e-3 * np.linalg.norm(schur), rel=1e-2)
    assert facts["converged"] and facts["residual"] <= 1e-3 * (1 + 1e-9)
