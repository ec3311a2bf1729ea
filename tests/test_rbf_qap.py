"""003's application (implicit surfaces by compactly supported RBFs, solved by GPU CG) and the
QAP LP relaxations of paper 002."""
import itertools

import numpy as np
import pytest
import scipy.sparse.linalg as spl

import gpgpu
from gpgpu import rbf
from gpgpu.lp.qap import QAPLIBFormatError, qap_lp, qap_sizes, qaplib_dir, read_qaplib


def test_wendland_function_values():
    # (1 - r)^4 (4 r + 1): 1 at 0, 0 from 1 on, (0.5)^4 * 3 = 0.1875 at 1/2
    np.testing.assert_allclose(rbf.wendland([0.0, 0.5, 1.0, 1.5]), [1.0, 0.1875, 0.0, 0.0])


@pytest.mark.parametrize("case", ["curve", "torus"])
def test_rbf_systems_solve_like_scipy(case):
    if case == "curve":
        (p, n), eps, h = rbf.blob_2d(200), 0.1, 0.2
    else:
        (p, n), eps, h = rbf.torus_3d(600, noise=0.005), 0.08, 0.3
    centres, f, A = rbf.rbf_system(p, n, eps, h)
    assert abs(A - A.T).max() == 0 and A.shape == (3 * len(p),) * 2
    res = gpgpu.cg(A, f, rtol=1e-6)
    its = []
    x32, _ = spl.cg(A.astype(np.float32), f.astype(np.float32), rtol=1e-6, callback=lambda xk: its.append(1))
    assert res[1] == 0 and abs(res.iterations - len(its)) <= 0.1 * len(its)
    x64 = spl.spsolve(A.tocsc(), f)
    assert np.linalg.norm(res[0] - x64) / np.linalg.norm(x64) < 1e-3
    # the zero level set passes near the points: s at the input points is small against eps
    s = rbf.evaluate(p, centres, res[0], h)
    assert np.abs(s).max() < 0.5 * eps
    # the evaluation product on the GPU equals the float64 one
    E = rbf.evaluation_matrix(p, centres, h)
    np.testing.assert_allclose(s, E @ res[0], rtol=1e-4, atol=1e-6)


def test_evaluate_marks_points_out_of_reach():
    (p, n) = rbf.blob_2d(50)
    centres, f, A = rbf.rbf_system(p, n, 0.1, 0.2)
    s = rbf.evaluate(np.array([[0.0, 0.0], [10.0, 10.0]]), centres, np.ones(len(centres)), 0.2)
    assert np.isnan(s[1])


def _qaplib():
    try:
        return qaplib_dir()
    except FileNotFoundError as e:
        pytest.skip(str(e))


@pytest.mark.parametrize("name, shape, nnz", [("nug12", (3192, 8856), 38304), ("nug20", (15240, 72600), 304800),
                                              ("nug30", (52260, 379350), 1567800)])
def test_qap_sizes_equal_002_table_1(name, shape, nnz):
    p = qap_lp(_qaplib() / f"{name}.dat")
    assert p.standard_size == shape and p.A.nnz == nnz
    n = int(name[3:])
    assert qap_sizes(n) == (*shape, nnz)


def test_qap_lp_is_a_relaxation_through_every_assignment(rng):
    """For every permutation of a small QAP, x = its permutation matrix and y_ijkl = x_ij x_kl is
    feasible and costs exactly the QAP's objective sum F_ik D_{pi(i) pi(k)} (an independent
    check of every row and every cost); the LP bound is then at most the best of them."""
    n = 4
    F = rng.integers(0, 5, (n, n)).astype(float)
    D = rng.integers(0, 5, (n, n)).astype(float)
    np.fill_diagonal(F, 0)
    np.fill_diagonal(D, 0)
    p = qap_lp((F, D))
    N = n * n
    costs = []
    for perm in itertools.permutations(range(n)):
        x = np.zeros(N)
        x[np.arange(n) * n + np.array(perm)] = 1.0
        z = np.concatenate([x, np.zeros(p.n - N)])
        # y = x_ij x_kl: the y column is 1 exactly when both x's its rows name (with -1) are 1
        A = p.A.tocsc()
        for col in range(N, p.n):
            rows = A.indices[A.indptr[col]:A.indptr[col + 1]]
            xs = set()
            for r in rows:
                row = p.A.getrow(r)
                xs |= {c for c, v in zip(row.indices, row.data) if c < N and v < 0}
            z[col] = float(all(x[c] == 1 for c in xs))
        assert np.abs(p.A @ z - p.b).max() == 0
        qap = sum(F[i, k] * D[perm[i], perm[k]] for i in range(n) for k in range(n))
        assert p.c @ z == pytest.approx(qap)
        costs.append(qap)
    from scipy.optimize import linprog

    lp = linprog(p.c, A_eq=p.A, b_eq=p.b, method="highs")
    assert lp.status == 0 and lp.fun <= min(costs) + 1e-9


def test_malformed_qaplib_files_name_the_line(tmp_path):
    f = tmp_path / "bad.dat"
    f.write_text("3\n0 1 2\n1 0 x\n2 1 0\n" + "0 1 1\n" * 3)
    with pytest.raises(QAPLIBFormatError, match="line 3: 'x' is not a number"):
        read_qaplib(f)
    f.write_text("3\n0 1 2\n1 0 1\n")
    with pytest.raises(QAPLIBFormatError, match="needs two 3 x 3 matrices"):
        read_qaplib(f)
    f.write_text("2.5\n")
    with pytest.raises(QAPLIBFormatError, match="positive integer"):
        read_qaplib(f)
    n, D, F, best = read_qaplib(_qaplib() / "nug12.dat")
    assert n == 12 and best == 578 and D[0, 1] == 1 and np.all(D == D.T)
