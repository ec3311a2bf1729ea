"""The LP front end: default tolerance on the GPU, option checks, LPs that the presolve empties,
sparse storage and the size checks before anything dense is made."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

highspy = pytest.importorskip("highspy")

from gpgpu.context import max_texture_size  # noqa: E402
from gpgpu.lp import REFINE_BELOW, Problem, read_mps, solve  # noqa: E402
from gpgpu.lp import mps as mps_module  # noqa: E402
from gpgpu.lp.netlib import netlib_dir  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def highs(path_or_lp):
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(path_or_lp))
    h.run()
    return h.getModelStatus(), h.getInfo().objective_function_value


def afiro():
    try:
        return netlib_dir() / "afiro.mps.gz"
    except FileNotFoundError as e:
        pytest.skip(str(e))


# --------------------------------------------------------------------------- the default eps
def test_readme_example_is_optimal_on_the_gpu_with_the_defaults():
    path = afiro()
    r = solve(path)                                  # backend="gpu", eps=1e-6
    _, ref = highs(path)
    assert r.status == "optimal", r.message
    assert r.backend == "gpu+refine"                 # eps < 3e-5 turns refinement on
    assert abs(r.objective - ref) / abs(ref) <= 1e-6


def test_two_variable_lp_at_1e_5_is_optimal_on_the_gpu():
    # min x1 + 2 x2  s.t.  x1 + x2 = 1, x >= 0  ->  x = (1, 0), objective 1
    p = Problem.from_arrays(np.array([[1.0, 1.0]]), np.array([1.0]), np.array([1.0, 2.0]))
    r = solve(p, eps=1e-5)
    assert r.status == "optimal" and r.objective == pytest.approx(1.0, abs=1e-5)
    np.testing.assert_allclose(r.x, [1.0, 0.0], atol=1e-5)


def test_refine_default_keeps_the_papers_algorithm_at_the_papers_eps():
    p = Problem.from_arrays(np.array([[1.0, 1.0]]), np.array([1.0]), np.array([1.0, 2.0]))
    assert solve(p, eps=REFINE_BELOW).backend == "gpu"
    assert solve(p, eps=REFINE_BELOW / 2, presolve=False).backend == "gpu+refine"
    assert solve(p, eps=1e-7, refine=False, max_iter=5).backend == "gpu"
    assert solve(p, backend="numpy64", eps=1e-9).backend == "numpy64"


@pytest.mark.parametrize("eps", [float("inf"), float("nan"), 0.0, -1e-6, 1.0, 2.0])
def test_eps_outside_zero_one_is_refused(eps):
    p = Problem.from_arrays(np.eye(1), np.ones(1), np.ones(1))
    with pytest.raises(ValueError, match="0 < eps < 1"):
        solve(p, backend="numpy64", eps=eps)


@pytest.mark.parametrize("eps", ["1e-6", True, False, np.True_, 1e-6j])
def test_eps_that_is_not_a_number_is_refused_not_converted(eps):
    """float("1e-6") is 1e-6 and float(True) is 1.0: a string was solved as a tolerance and a bool
    got the range's message. Both are a TypeError that names eps and the kind of value it takes."""
    p = Problem.from_arrays(np.eye(1), np.ones(1), np.ones(1))
    with pytest.raises(TypeError, match=r"eps must be a number \(a float such as 1e-6.*got "):
        solve(p, backend="numpy64", eps=eps)


def test_eps_none_is_the_default():
    """eps=None (solve's default) is 1e-6 outside the paper preset's Table 3 problems."""
    p = Problem.from_arrays(np.array([[1.0, 1.0, 1.0]]), np.array([2.0]), np.array([1.0, 2.0, 3.0]))
    for eps in (None, 1e-6):
        assert "eps = 1e-06" in solve(p, backend="numpy64", eps=eps, presolve=False).message


def test_eps_and_max_iter_are_checked_before_the_problem_is_read(tmp_path):
    """The arguments are checked at the top of solve: a wrong eps is named before the MPS file is
    read (here one that does not exist, which would have been the error before)."""
    missing = tmp_path / "missing.mps"
    with pytest.raises(TypeError, match="eps must be a number"):
        solve(missing, eps="1e-6")
    with pytest.raises(ValueError, match="0 < eps < 1"):
        solve(missing, eps=float("nan"))
    with pytest.raises(TypeError, match="max_iter must be a positive integer"):
        solve(missing, max_iter=True)


def test_numpy_numbers_are_numbers():
    p = Problem.from_arrays(np.array([[1.0, 1.0]]), np.array([1.0]), np.array([1.0, 2.0]))
    r = solve(p, backend="numpy64", eps=np.float32(1e-6), max_iter=np.int64(50))
    assert r.status == "optimal"
    np.testing.assert_allclose(r.x, [1.0, 0.0], atol=1e-6)


@pytest.mark.parametrize("max_iter, exc", [(0, ValueError), (-3, ValueError), (2.5, TypeError),
                                           (True, TypeError), ("10", TypeError)])
def test_max_iter_must_be_a_positive_integer(max_iter, exc):
    p = Problem.from_arrays(np.eye(1), np.ones(1), np.ones(1))
    with pytest.raises(exc, match="max_iter"):
        solve(p, backend="numpy64", max_iter=max_iter)


@pytest.mark.parametrize("method, backend", [("mehrotra", "gpu"), ("mehrotra", "numpy64"),
                                             ("matrix-free", "gpu"), ("matrix-free", "numpy64")])
@pytest.mark.parametrize("option, ours", [("maxiter", "max_iter"), ("tol", "eps"), ("colour", None)])
def test_an_unknown_option_is_named_by_solve_with_the_options_there_are(method, backend, option, ours):
    """scipy's names (maxiter, tol) were a TypeError from inside the back end's constructor,
    "GPUBackend.__init__() got an unexpected keyword argument 'maxiter'", naming neither solve
    nor the option to use; now solve names the option, ours for scipy's, and the list."""
    p = Problem.from_arrays(np.eye(2), np.ones(2), np.ones(2))
    with pytest.raises(TypeError) as err:
        solve(p, method=method, backend=backend, **{option: 5})
    msg = str(err.value)
    assert msg.startswith(f"solve: unexpected keyword argument '{option}'") and "__init__" not in msg
    assert f"method={method!r} with backend={backend!r} takes eps, max_iter" in msg
    if ours:
        assert f"'{option}' is '{ours}' here" in msg
    assert ("rank" in msg) is (method == "matrix-free") and ("correct_primal" in msg) is (method == "mehrotra")
    assert ("fuse," in msg) is (method == "mehrotra" and backend == "gpu")
    assert ("fused" in msg) is (method == "matrix-free" and backend == "gpu")
    assert ("factorization" in msg) is (method == "mehrotra" and backend == "numpy64")


def test_the_options_of_each_method_and_back_end_still_pass_the_name_check():
    p = Problem.from_arrays(np.eye(2), np.ones(2), np.ones(2))
    assert solve(p, backend="numpy32", pivot_tol=1e-8, refine_method="cg", scale=True).status == "optimal"
    assert solve(p, backend="gpu", adat="outer", cholesky="inner", presolve=False).status == "optimal"
    assert solve(p, method="matrix-free", backend="numpy64", rank=1, adaptive=False, threads=1,
                 reg_min=1e-8).status == "optimal"


@pytest.mark.parametrize("problem", [42, np.eye(2), None])
def test_problem_must_be_a_problem_or_a_path(problem):
    with pytest.raises(TypeError, match="Problem or the path"):
        solve(problem)


# --------------------------------------------------------------------------- emptied by presolve
EMPTIED = {
    # name: (scipy.optimize.linprog arguments, status, objective); HiGHS (through linprog) is
    # run on the same data in the test
    "no constraints, c >= 0": (dict(c=[1.0, 2.0]), "optimal", 0.0),
    "no constraints, c_j < 0": (dict(c=[1.0, -2.0]), "unbounded", None),
    "every column fixed": (dict(c=[1.0, 2.0], A_ub=[[1.0, 1.0]], b_ub=[5.0], bounds=(1, 1)), "optimal", 3.0),
    "every column fixed, infeasible": (dict(c=[1.0, 2.0], A_ub=[[1.0, 1.0]], b_ub=[1.0], bounds=(1, 1)),
                                       "infeasible", None),
    "a bound row only": (dict(c=[-1.0], A_ub=[[1.0]], b_ub=[5.0]), "optimal", -5.0),
    "a free row only": (dict(c=[1.0], A_ub=[[1.0]], b_ub=[np.inf]), "optimal", 0.0),
}


@pytest.mark.parametrize("name", sorted(EMPTIED))
@pytest.mark.parametrize("backend", ["numpy64", "gpu"])
def test_lps_that_the_presolve_empties(name, backend):
    from scipy.optimize import linprog

    data, status, objective = EMPTIED[name]
    ref_data = dict(data)
    if "b_ub" in data and np.isinf(data["b_ub"]).all():   # linprog takes no infinite bounds:
        ref_data.pop("A_ub"), ref_data.pop("b_ub")        # a free row is no constraint
    ref = linprog(**ref_data, method="highs")
    assert {0: "optimal", 2: "infeasible", 3: "unbounded"}[ref.status] == status
    if objective is not None:
        assert ref.fun == pytest.approx(objective)
    p = Problem.from_inequalities(**data)
    r = solve(p, backend=backend)
    assert r.status == status, r.message
    if objective is not None:
        assert r.objective == pytest.approx(objective, abs=1e-6)
        # the answer satisfies the source constraints
        x = r.x
        if "A_ub" in data:
            assert np.all(np.asarray(data["A_ub"]) @ x <= np.asarray(data["b_ub"]) + 1e-6)


def test_emptied_lp_from_an_mps_file_and_the_cli(tmp_path):
    f = tmp_path / "norows.mps"
    f.write_text("NAME NOROWS\nROWS\n N OBJ\nCOLUMNS\n    X1 OBJ 1.0\n    X2 OBJ 3.0\n"
                 "RHS\nBOUNDS\n LO BND X1 2.0\n UP BND X2 4.0\nENDATA\n")
    status, ref = highs(f)
    assert status == highspy.HighsModelStatus.kOptimal
    r = solve(f)
    assert r.status == "optimal" and r.objective == pytest.approx(ref) == 2.0
    out = subprocess.run([sys.executable, "-m", "gpgpu.lp", str(f)], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr and "status: optimal" in out.stdout


# --------------------------------------------------------------------------- sparse, sizes
def diagonal_mps(path: Path, n: int) -> None:
    """min sum x_i s.t. 2 x_i = 4: an n x n diagonal LP in about 55 n bytes of MPS."""
    lines = ["NAME DIAG", "ROWS", " N OBJ", *(f" E R{i}" for i in range(n)), "COLUMNS",
             *(f"    X{i} OBJ 1.0 R{i} 2.0" for i in range(n)), "RHS",
             *(f"    RHS R{i} 4.0" for i in range(n)), "ENDATA"]
    path.write_text("\n".join(lines) + "\n")


def test_a_large_sparse_lp_is_read_sparse_and_refused_by_size(tmp_path):
    n = max_texture_size() + 1
    f = tmp_path / "diag.mps"
    diagonal_mps(f, n)
    p = read_mps(f)
    assert sp.issparse(p.A) and p.A.shape == (n, n) and p.A.nnz == n     # never dense
    np.testing.assert_array_equal(p.A.diagonal(), 2.0)
    with pytest.raises(ValueError, match="GL_MAX_TEXTURE_SIZE"):
        solve(p, backend="gpu", presolve=False)
    # the default presolve decides this LP (singleton rows) without the interior point method
    r = solve(p, backend="gpu")
    assert r.status == "optimal" and r.iterations == 0 and r.objective == pytest.approx(2.0 * n)


def test_dense_memory_is_checked_before_it_is_allocated(monkeypatch):
    p = Problem.from_arrays(sp.eye(300, format="csr"), np.ones(300), np.ones(300))
    monkeypatch.setattr(mps_module, "available_memory", lambda: 100_000)
    with pytest.raises(MemoryError, match="GiB.*too large for the dense normal-equation method"):
        solve(p, backend="numpy64", presolve=False)
    with pytest.raises(MemoryError, match="the gpu backend"):           # the paper's dense A on the GPU
        solve(p, backend="gpu", presolve=False, preset="paper")
    # the default GPU path never makes A dense: its A D² Aᵀ comes from the non-zeros of A
    assert solve(p, backend="gpu", presolve=False).status == "optimal"


def test_problem_data_are_checked():
    with pytest.raises(ValueError, match="finite"):
        Problem.from_arrays(np.eye(2), np.array([1.0, np.nan]), np.ones(2))
    with pytest.raises(ValueError, match="NaN or infinity"):
        Problem.from_arrays(np.array([[1.0, np.inf]]), np.ones(1), np.ones(2))
    with pytest.raises(ValueError, match="complex"):
        Problem.from_arrays(np.eye(2) * 1j, np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="A is 2x2 but b has 3"):
        Problem.from_arrays(np.eye(2), np.ones(3), np.ones(2))


def test_sparse_and_dense_input_give_the_same_problem_and_answer(rng):
    A = rng.random((6, 10))
    A[A < 0.5] = 0.0
    b = A @ (rng.random(10) + 0.1)
    c = A.T @ rng.standard_normal(6) + rng.random(10) + 0.1
    dense = Problem.from_arrays(A, b, c)
    sparse = Problem.from_arrays(sp.csc_matrix(A), b, c)
    assert (dense.A != sparse.A).nnz == 0
    r1, r2 = solve(dense, backend="numpy64", eps=1e-9), solve(sparse, backend="numpy64", eps=1e-9)
    assert r1.status == r2.status == "optimal"
    assert r1.objective == pytest.approx(r2.objective, rel=1e-12)
