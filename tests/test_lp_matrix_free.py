"""The matrix-free interior point method of paper 002 (section 2.1): its preconditioner, its PCG,
both back ends, the problems of 002's Tables 1-3 and the statuses and errors it shares with the
Mehrotra solver."""
import dataclasses
import math
import os

import numpy as np
import pytest
import scipy.sparse as sp

highspy = pytest.importorskip("highspy")

from gpgpu import counters, stream  # noqa: E402
from gpgpu.context import get_context  # noqa: E402
from gpgpu.float_float import available as float_float_available  # noqa: E402
from gpgpu.lp import METHODS, Problem, gruca_like, solve  # noqa: E402
from gpgpu.lp.gruca import GRUCA_TABLE1, gruca_sizes  # noqa: E402
from gpgpu.lp.matrix_free import MatrixFreeBackend, get_matrix_free_backend, pcg  # noqa: E402
import gpgpu.lp.matrix_free_gpu as mf_gpu  # noqa: E402
from gpgpu.lp.matrix_free_gpu import GPUMatrixFree  # noqa: E402
from gpgpu.lp.matrix_free_numpy import NumpyMatrixFree, partial_cholesky  # noqa: E402
from gpgpu.lp.mehrotra import MESSAGES  # noqa: E402
from gpgpu.lp.netlib import PROBLEMS  # noqa: E402
from gpgpu.lp.qap import qap_lp  # noqa: E402

from experiments.mfipm.common import highs_objective as highs_lp  # noqa: E402
from test_lp_mehrotra import INFEASIBLE, UNBOUNDED, netlib, netlib_more, rel  # noqa: E402

#: HiGHS 1.16 (its IPM, default tolerances) on gruca_like(1024, seed=0), computed once
#: (highspy.Highs, solver="ipm", 3.1 s); the problem is built from its seed, so this is fixed.
GRUCA_1024_SEED0 = 781.0911780286774


def highs_objective(p: Problem) -> float:
    return highs_lp(p)[0]


def random_qap(n, seed):
    rng = np.random.default_rng(seed)
    F = rng.integers(0, 6, (n, n)).astype(float)
    D = rng.integers(1, 6, (n, n)).astype(float)
    np.fill_diagonal(F, 0)
    np.fill_diagonal(D, 0)
    return qap_lp((F + F.T, D + D.T), name=f"qap{n}_{seed}")


# --------------------------------------------------------------------------- Gruca-like problems
@pytest.mark.parametrize("N", [16, 64, 1024])
def test_gruca_like_has_the_structure_of_002_table_1(N):
    p = gruca_like(N, seed=3)
    r = math.isqrt(N)
    rows, cols, nnz = gruca_sizes(N)
    assert p.A.shape == (rows, cols) == (N + 1, N + 1) and p.A.nnz == nnz == N * r + 2 * N + 1
    if N in GRUCA_TABLE1:
        assert GRUCA_TABLE1[N][:3] == (rows, cols, nnz)
    A = p.A.tocsr()
    row_nnz = np.diff(A.indptr)
    col_nnz = np.diff(A.tocsc().indptr)
    # N regular rows with sqrt(N) entries and the dense column's one; one full row; same for columns
    assert (row_nnz[:N] == r + 1).all() and row_nnz[N] == N + 1
    assert (col_nnz[:N] == r + 1).all() and col_nnz[N] == N + 1
    assert (A[:, N].toarray() > 0).all()


def test_gruca_like_is_feasible_and_bounded_by_construction():
    # x0 > 0 feasible and (y0, s0 > 0) dual feasible, rebuilt from the same seed's draws
    N = 64
    p = gruca_like(N, seed=5)
    A = p.A.toarray()
    x = np.linalg.solve(A, p.b)                     # A is square and non-singular: x0 itself
    assert x.min() >= 0.5 - 1e-9 and x.max() <= 1.5 + 1e-9
    assert np.linalg.cond(A) < 1e3
    assert highs_objective(p) == pytest.approx(p.c @ x, rel=1e-9)
    assert gruca_like(N, seed=5).A.nnz == p.A.nnz and not np.array_equal(gruca_like(N, seed=6).b, p.b)


@pytest.mark.parametrize("N", [0, 3, 15, 1.5, True])
def test_gruca_like_rejects_bad_sizes(N):
    with pytest.raises(ValueError, match="gruca_like: N must be"):
        gruca_like(N)


# --------------------------------------------------------------------------- the preconditioner
def normal_matrix(A, theta, delta):
    A = A.toarray() if sp.issparse(A) else A
    return (A * theta) @ A.T + delta * np.eye(A.shape[0])


def reference_P(G, K, C=None):
    """002 (7)-(8) from its definitions: P = L diag(D_L, D_S) L^T, with G11 = L11 D_L L11^T,
    L21 = G21 L11^-T D_L^-1 and D_S = diag(G22 - L21 D_L L21^T), in float64, with K first.
    ``C``: the factor C = L11 D_L^1/2 to use (one with replaced pivots), else G11's Cholesky."""
    m = G.shape[0]
    rest = np.setdiff1d(np.arange(m), K)
    order = np.concatenate([K, rest])
    Gp = G[np.ix_(order, order)]
    k = len(K)
    C = np.linalg.cholesky(Gp[:k, :k]) if C is None else C
    DL = np.diag(C) ** 2
    L11 = C / np.diag(C)
    L21 = Gp[k:, :k] @ np.linalg.inv(L11).T / DL
    DS = np.diag(Gp[k:, k:] - (L21 * DL) @ L21.T)
    L = np.eye(m)
    L[:k, :k] = L11
    L[k:, :k] = L21
    Pp = L @ np.diag(np.concatenate([DL, DS])) @ L.T
    P = np.empty_like(Pp)
    P[np.ix_(order, order)] = Pp
    return P


def small_lp(rng, m=30, n=70, density=0.15):
    A = sp.random(m, n, density=density, random_state=np.random.RandomState(1), format="csr")
    A = A + sp.eye(m, n, format="csr")               # full row rank
    x0 = rng.uniform(0.5, 1.5, n)
    return Problem.from_arrays(A.tocsr(), A @ x0, rng.uniform(0.5, 2.0, n), name="small")


@pytest.mark.parametrize("k", [1, 7, 30])
def test_numpy_preconditioner_is_002_partial_cholesky(rng, k):
    p = small_lp(rng)
    theta = rng.uniform(1e-3, 1e2, p.A.shape[1])
    delta = 1e-4
    be = NumpyMatrixFree(p)
    be.set_weights(theta, delta)
    info = be.build_preconditioner(k)
    G = normal_matrix(p.A, theta, delta)
    K = np.sort(np.argsort(-np.diag(G))[:k])           # the k largest diagonal entries
    np.testing.assert_array_equal(be.pre[0], K)
    P = reference_P(G, K)
    for _ in range(3):
        r = rng.standard_normal(p.A.shape[0])
        np.testing.assert_allclose(be.precondition(r.copy()), np.linalg.solve(P, r), rtol=1e-9,
                                   atol=1e-9 * np.abs(np.linalg.solve(P, r)).max())
    assert info == {"k": k, "replaced": 0, "schur_floor": 0}
    if k == p.A.shape[0]:                             # the complete factor: P = G
        np.testing.assert_allclose(P, G, rtol=1e-12, atol=1e-12)


def test_partial_cholesky_replaces_a_non_positive_pivot():
    G = np.array([[4.0, 2.0, 2.0], [2.0, 1.0, 1.0], [2.0, 1.0, 3.0]])   # G[:2,:2] singular
    C, B, d_s, replaced = partial_cholesky(G[:, :2], np.array([0, 1]), np.diag(G))
    assert replaced == 1 and C[1, 1] == pytest.approx(2.0)              # sqrt(max diag) = 2
    assert np.isfinite(B).all() and d_s[2] > 0


@pytest.mark.parametrize("sums", ["pingpong", "fan"])
@pytest.mark.parametrize("fold", [None, 8])
@pytest.mark.parametrize("k", [1, 5, 30])
def test_gpu_preconditioner_and_products_equal_float64(rng, monkeypatch, fold, k, sums):
    """P^-1 r, G_R v and v^T w on the GPU against the float64 reference; with fold=8 every
    vector (31 rows of A with a dense row and column: gruca_like(30)) is folded 8 wide, so
    the planes span several texture rows and the last row has a tail. With sums="fan" every
    sum is a fan sum (none of 000's halving passes is left)."""
    if fold:
        monkeypatch.setattr(stream, "FOLD_WIDTH", fold)
    p = small_lp(rng) if k != 5 else gruca_like(36, seed=2)
    m, n = p.A.shape
    theta = np.exp(rng.uniform(-3, 3, n))
    delta = 1e-2
    G = normal_matrix(p.A, theta, delta)
    K = np.sort(np.argsort(-np.diag(G))[:k])
    P = reference_P(G, K)
    be = GPUMatrixFree(p, sums=sums)
    try:
        be.set_weights(theta, delta)
        info = be.build_preconditioner(k)
        assert info["k"] == k and info["replaced"] == 0
        for _ in range(2):
            r = rng.standard_normal(m)
            ref = np.linalg.solve(P, r)
            rv = be.vector(r)
            with counters.count() as c:
                z = be.to_numpy(be.precondition(rv))
                be.normal_matvec(rv)
                be.dot(rv, rv)
            halving, fan = c.passes("sum_reduction"), c.passes("sum_reduction_fan")
            assert (halving > 0 and fan == 0) if sums == "pingpong" else (fan > 0 and halving == 0)
            # measured up to 2.1e-6; float32 rounding times cond(P) <= 300 bounds it by ~2e-5
            assert np.abs(z - ref).max() <= 5e-6 * np.abs(ref).max()
            Gv = be.to_numpy(be.normal_matvec(rv))
            assert np.abs(Gv - G @ r).max() <= 1e-5 * np.abs(G @ r).max()
            assert be.dot(rv, rv) == pytest.approx(float(r @ r), rel=1e-5)
            w = rng.standard_normal(m)
            assert be.to_numpy(be.axpy(-0.5, rv, be.vector(w))) == pytest.approx(w - 0.5 * r, abs=1e-6)
    finally:
        be.release()


def equal_rows_problem(third=False):
    """(A, Problem): a 10 x 24 A whose rows 0 and 1 are equal and have the largest diagonal
    entries of G = A A^T, so that G11 of k = 2 is exactly singular (in float32 too); with
    ``third``, row 2 has as large a diagonal entry and overlaps them, so that k = 3 puts a
    factored column after the replaced pivot."""
    A = sp.random(10, 24, density=0.3, random_state=np.random.RandomState(4), format="lil")
    A = sp.lil_matrix(A + sp.eye(10, 24))
    for i in (0, 1):
        A[i, :] = 0
        A[i, :6] = 3.0
    if third:
        A[2, :] = 0
        A[2, 3:9] = 3.0
    A = sp.csr_matrix(A)
    return A, Problem.from_arrays(A, A @ np.ones(24), np.ones(24))


def test_gpu_preconditioner_counts_replaced_pivots(rng):
    """Rows 0 and 1 of A are equal and have the largest diagonal entries of G, and delta = 0:
    G11 is exactly singular (in float32 too), its second pivot is replaced on both back ends."""
    _, p = equal_rows_problem()
    for be in (NumpyMatrixFree(p), GPUMatrixFree(p)):
        be.set_weights(np.ones(24), 0.0)
        info = be.build_preconditioner(2)
        assert info["replaced"] == 1, be.name
        z = be.to_numpy(be.precondition(be.vector(rng.standard_normal(10))))
        assert np.isfinite(z).all()
        be.release()


def guarded_factor(G11, tolerance, huge):
    """G11's outer-product Cholesky factor in float64 as the GPU's guarded one makes it: each
    pivot not above ``tolerance`` times its diagonal entry replaced by ``huge``; and the
    replaced pivots' indices."""
    S, k = G11.astype(np.float64).copy(), G11.shape[0]
    C, replaced = np.zeros_like(S), []
    for j in range(k):
        p = S[j, j]
        if not p > tolerance * G11[j, j]:
            p = huge
            replaced.append(j)
        C[j, j] = np.sqrt(p)
        C[j + 1:, j] = S[j + 1:, j] / C[j, j]
        S[j + 1:, j + 1:] -= np.outer(C[j + 1:, j], C[j + 1:, j])
    return C, replaced


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("fused", [True, False])
def test_gpu_replaced_pivot_becomes_its_diagonal_entry(rng, fused, k, monkeypatch):
    """G11 exactly singular (rows 0 and 1 of A equal, delta = 0): the guard replaces its second
    pivot by HUGE_PIVOT, whose column of C is then about 0, and the pivot then becomes G11's
    diagonal entry g (REPLACED_DIAGONAL): P^-1 r is the float64 P^-1 r of 002 (7)-(8) with that
    factor, P^-1 e_1 about 1 / g. With the pivot left at 1e30 (the rule before, and
    REPLACED_DIAGONAL = False) P^-1 e_1 is about 0: P^-1 is blind to that direction and PCG's
    residual there cannot fall. Both builds: the fused PCG's (C^-1's row scaled) and 002's (C's
    diagonal entry set, then substitutions). With k = 3 a third column is factored after the
    replaced one (its rows of C^-1 must not change)."""
    A, p = equal_rows_problem(third=k == 3)
    G = normal_matrix(A, np.ones(24), 0.0)
    K = np.arange(k)
    assert np.array_equal(np.sort(np.argsort(-np.diag(G))[:k]), K)
    G11 = G[np.ix_(K, K)]
    C, replaced = guarded_factor(G11, mf_gpu.PIVOT_TOLERANCE, mf_gpu.HUGE_PIVOT)
    assert replaced == [1]
    C_diagonal = C.copy()
    C_diagonal[1, 1] = np.sqrt(G11[1, 1])
    for rule, factor in ((True, C_diagonal), (False, C)):
        monkeypatch.setattr(mf_gpu, "REPLACED_DIAGONAL", rule)
        P = reference_P(G, K, C=factor)
        be = GPUMatrixFree(p, fused=fused)
        try:
            be.set_weights(np.ones(24), 0.0)
            info = be.build_preconditioner(k)
            assert info["replaced"] == 1
            for r in (np.eye(10)[1], rng.standard_normal(10)):
                ref = np.linalg.solve(P, r)
                z = be.to_numpy(be.precondition(be.vector(r)))
                assert np.abs(z - ref).max() <= 1e-5 * np.abs(ref).max(), (rule, r)
        finally:
            be.release()


def _preconditioned_on_both(p, theta, delta, k, r):
    """P^-1 r and D_S^-1 by the numpy64 and the GPU back end (same G_R, same k)."""
    out = []
    for be in (NumpyMatrixFree(p), GPUMatrixFree(p)):
        try:
            be.set_weights(theta, delta)
            info = be.build_preconditioner(k)
            assert info["k"] == k and info["replaced"] == 0, be.name
            z = be.to_numpy(be.precondition(be.vector(r)))
            dinv = be.pre[3] if be.name == "numpy64" else be.to_numpy(be.pre[2])
            out.append((z, dinv))
        finally:
            be.release()
    return out


def test_schur_floor_of_both_back_ends_agrees_on_a_zero_schur_entry(rng):
    """Rows 0 and 1 of A are equal and have the largest diagonal of G (delta = 0, k = 1): row 0
    is pivoted and row 1's Schur entry G_11 - G_10^2 / G_00 is 0, rounding aside. Both back ends
    floor it to 1 / diag(G)_1 (schur_diagonal_inverse.frag: s at or below 1e-6 d; numpy64: 1e-12
    d), so their P^-1 r agree to float32 rounding; a floored entry set to 0 (or left at 1 / s, a
    rounding error's reciprocal) would not."""
    A = sp.random(12, 30, density=0.3, random_state=np.random.RandomState(3), format="lil")
    A = sp.lil_matrix(A + sp.eye(12, 30))
    A[1, :] = 0
    A[1, :8] = 2.0                          # diag(G)_0 = diag(G)_1 = 32, the largest
    A[0, :] = A[1, :]
    A = sp.csr_matrix(A)
    p = Problem.from_arrays(A, A @ np.ones(30), np.ones(30))
    r = rng.standard_normal(12)
    (zn, dn), (zg, dg) = _preconditioned_on_both(p, np.ones(30), 0.0, 1, r)
    assert dn[1] == 1.0 / 32 and dg[1] == pytest.approx(1.0 / 32, rel=1e-6)    # the floor, on both
    assert np.abs(zg - zn).max() <= 1e-5 * np.abs(zn).max()


def test_schur_floor_is_relative_to_the_diagonal(rng):
    """Theta scaled by 1e-9 (an interior point late in a solve): G_R's entries are ~1e-9 and so
    are the Schur entries, far above 1e-6 of their diagonal entries. Neither back end may floor
    them (an absolute floor of 1e-6 would floor every one to 1 / diag): P^-1 r agree (1e-5)."""
    p = small_lp(rng)
    theta = 1e-9 * np.exp(rng.uniform(-2, 2, p.A.shape[1]))
    r = rng.standard_normal(p.A.shape[0])
    (zn, dn), (zg, dg) = _preconditioned_on_both(p, theta, 0.0, 20, r)
    diag = np.diag(normal_matrix(p.A, theta, 0.0))
    rest = dn > 0
    assert (1.0 / dn[rest] < 0.6 * diag[rest]).sum() >= 3      # Schur entries far from diag(G): 1 / d would show
    np.testing.assert_allclose(dg, dn, rtol=1e-5, atol=0)
    assert np.abs(zg - zn).max() <= 1e-5 * np.abs(zn).max()


# --------------------------------------------------------------------------- PCG
def test_pcg_solves_and_reports_its_limit(rng):
    p = small_lp(rng)
    be = NumpyMatrixFree(p)
    theta = np.exp(rng.uniform(-4, 4, p.A.shape[1]))
    be.set_weights(theta, 1e-6)
    be.build_preconditioner(3)
    G = normal_matrix(p.A, theta, 1e-6)
    b = rng.standard_normal(p.A.shape[0])
    res = pcg(be, b, 1e-10 * np.linalg.norm(b), 500)
    assert res["converged"] and not res["breakdown"] and 1 < res["iterations"] < 500
    np.testing.assert_allclose(res["x"], np.linalg.solve(G, b), rtol=1e-7)
    short = pcg(be, b, 1e-10 * np.linalg.norm(b), 2)
    assert not short["converged"] and short["iterations"] == 2
    assert short["residual"] == pytest.approx(np.linalg.norm(b - G @ short["x"]), rel=1e-8)
    zero = pcg(be, np.zeros_like(b), 1e-12, 10)
    assert zero["converged"] and zero["iterations"] == 0 and not zero["x"].any()


def _gpu_pcg(p, theta, delta, rank, check, b, target, maxiter, fused=True):
    be = GPUMatrixFree(p, pcg_check=check, fused=fused)
    be.set_weights(theta, delta)
    be.build_preconditioner(rank)
    bv = be.vector(b)
    before = be.readbacks
    res = pcg(be, bv, target, maxiter)
    res["readbacks"] = be.readbacks - before
    res["x"] = be.to_numpy(res["x"])
    be.release()
    return res


def _read_back_system(rng):
    """A small LP's G_R (delta 1e-4), b, G_R^-1 b and PCG's target 1e-4 ||b||."""
    p = small_lp(rng)
    theta = np.exp(rng.uniform(-3, 3, p.A.shape[1]))
    G = normal_matrix(p.A, theta, 1e-4)
    b = rng.standard_normal(p.A.shape[0])
    exact = np.linalg.solve(G, b)
    target = 1e-4 * np.linalg.norm(b)
    return p, theta, G, b, exact, target


def test_gpu_pcg_reads_its_scalars_every_pcg_check_iterations(rng):
    """Beyond 002: alpha and beta stay on the GPU (saxpy_ratio); PCG reads p^T q, r^T z and r^T r
    at the first iteration, every pcg_check-th and the last. The solution is the textbook
    loop's (pcg_check = 1) and float64's, to float32; the read-backs are counted exactly.
    (002's kernels, fused=False; the fused iteration's reads: the test after this one.)"""
    p, theta, G, b, exact, target = _read_back_system(rng)
    every = _gpu_pcg(p, theta, 1e-4, 3, 1, b, target, 200, fused=False)
    lazy = _gpu_pcg(p, theta, 1e-4, 3, 8, b, target, 200, fused=False)
    for res in (every, lazy):
        assert res["converged"] and not res["breakdown"]
        assert np.linalg.norm(b - G @ res["x"]) <= 3e-4 * np.linalg.norm(b)
        np.testing.assert_allclose(res["x"], exact, rtol=0, atol=2e-3 * np.abs(exact).max())
    assert 3 < every["iterations"] and every["readbacks"] == 1 + 3 * every["iterations"]
    # converged at a check: the first one past the textbook loop's iteration count
    assert lazy["iterations"] % 8 == 0 and every["iterations"] - 1 <= lazy["iterations"] <= every["iterations"] + 8
    # each read: p^T q, r^T z, the breakdown watch, r^T r
    assert lazy["readbacks"] == 1 + 4 * (1 + lazy["iterations"] // 8)
    # the last iteration is a check: the residual reported is the iterate's
    short = _gpu_pcg(p, theta, 1e-4, 3, 8, b, 0.0, 5, fused=False)
    assert short["iterations"] == 5 and not short["converged"]
    assert short["residual"] == pytest.approx(np.linalg.norm(b - G @ short["x"]), rel=1e-3)
    assert short["readbacks"] == 1 + 4 * 2
    # the first iteration is a check: the complete factor (k = m) converges there
    full = _gpu_pcg(p, theta, 1e-4, p.A.shape[0], 8, b, 1e-3 * np.linalg.norm(b), 50, fused=False)
    assert full["converged"] and full["iterations"] == 1


def test_fused_pcg_reads_its_scalars_at_iterations_0_1_every_pcg_check_th_and_the_last(rng):
    """The fused iteration (gpgpu.lp.matrix_free_fused): a check reads the 2 x 1 scalars (p^T q,
    r^T z, the watch, ||r||^2 of the iterate before the iteration just drawn), 4 numbers, at
    the iterations 0 (||b||) and 1, every pcg_check-th and the last; nothing else is read. The
    answers are float64's to float32, as the unfused loop's."""
    p, theta, G, b, exact, target = _read_back_system(rng)
    every = _gpu_pcg(p, theta, 1e-4, 3, 1, b, target, 200)
    lazy = _gpu_pcg(p, theta, 1e-4, 3, 8, b, target, 200)
    for res in (every, lazy):
        assert res["converged"] and not res["breakdown"]
        assert np.linalg.norm(b - G @ res["x"]) <= 3e-4 * np.linalg.norm(b)
        np.testing.assert_allclose(res["x"], exact, rtol=0, atol=2e-3 * np.abs(exact).max())
        # the recurrence's ||r|| against b - G x in float64: apart by float32's rounding of r's
        # updates, a part of u ||G|| ||x|| (about 3e-5 here; on the H200, with contracted
        # multiply-adds, the two were 2.3e-6 apart at a residual of 8e-5, 6e-8 on llvmpipe)
        true = np.linalg.norm(b - G @ res["x"])
        drift = 0.1 * 2.0 ** -24 * np.linalg.norm(G, 2) * np.linalg.norm(res["x"])
        assert abs(res["residual"] - true) <= 2e-2 * true + drift, (res["residual"], true, drift)
    assert 3 < every["iterations"] and every["readbacks"] == 4 * (every["iterations"] + 1)
    # converged at a check: the first one at or past the textbook loop's iteration count
    assert lazy["iterations"] % 8 == 0 and every["iterations"] <= lazy["iterations"] <= every["iterations"] + 8
    assert lazy["readbacks"] == 4 * (2 + lazy["iterations"] // 8)
    # the last iteration is a check: the residual reported is the iterate's
    short = _gpu_pcg(p, theta, 1e-4, 3, 8, b, 0.0, 5)
    assert short["iterations"] == 5 and not short["converged"]
    assert short["residual"] == pytest.approx(np.linalg.norm(b - G @ short["x"]), rel=1e-3)
    assert short["readbacks"] == 4 * 3
    # iteration 1 is a check: the complete factor (k = m) converges there
    full = _gpu_pcg(p, theta, 1e-4, p.A.shape[0], 8, b, 1e-3 * np.linalg.norm(b), 50)
    assert full["converged"] and full["iterations"] == 1
    # b within the target: converged at the first check, x = 0
    zero = _gpu_pcg(p, theta, 1e-4, 3, 8, b, 2 * np.linalg.norm(b), 50)
    assert zero["converged"] and zero["iterations"] == 0 and not zero["x"].any()
    assert zero["readbacks"] == 4


@pytest.mark.parametrize("fold", [None, 8])
@pytest.mark.parametrize("problem, k, fmt", [("small", 3, "ellpack"), ("small", 20, "ellpack"), ("small", 30, "ellpack"),
                                             ("gruca", 5, "ellpack"), ("small", 3, "tell"), ("small", 3, "packed")])
def test_fused_pcg_iteration_value_by_value(rng, monkeypatch, fold, problem, k, fmt):
    """Two fused iterations from x0 = 0 against float64, value by value (gpgpu.lp.matrix_free_fused):
    the first direction p1 = z0 = P^-1 b (P 002's partial Cholesky preconditioner, built in
    float64 from G_R), gamma = b^T z0, ||b||^2, p1^T G_R p1, alpha, r1 = b - alpha G_R p1 at
    the pivots; then (the second iteration's first pass) x1 = alpha p1 and r1, beta =
    r1^T z1 / gamma and p2 = z1 + beta p1. With fold=8 the vectors,
    planes, chunks and slots cross texture rows; k = 30 is the complete factor of a 30-row LP
    (D_S = 0: P^-1 = G_R^-1), k = 20 puts five texels of F's planes in a group of four and one
    after it; gruca_like(36) has a dense row and column. ELLPACK without a
    dense part draws the preconditioner's columns in two passes (product_planes), transposed
    ELLPACK and the packed format one product a column."""
    if fold:
        monkeypatch.setattr(stream, "FOLD_WIDTH", fold)
    p = small_lp(rng) if problem == "small" else gruca_like(36, seed=2)
    m, n = p.A.shape
    theta = np.exp(rng.uniform(-2, 2, n))
    delta = 1e-2
    G = normal_matrix(p.A, theta, delta)
    b = rng.standard_normal(m)
    be = GPUMatrixFree(p, format=fmt)
    try:
        be.set_weights(theta, delta)
        be.build_preconditioner(k)
        K = np.sort(be._kpos.to_array().reshape(-1)[:k].astype(int))
        Pinv = np.linalg.inv(reference_P(G, K))
        f = be._fused
        f._start(be.vector(b))
        f._step()
        st = f.streams
        z0 = Pinv @ b
        gamma = b @ z0
        p1 = z0
        pq = p1 @ G @ p1
        alpha = gamma / pq
        got_p1 = st.p[0].to_array()[:m]
        np.testing.assert_allclose(got_p1, p1, rtol=0, atol=2e-5 * np.abs(p1).max())
        pq_, gamma_, watch, rr = st.scalars[0].to_array().reshape(-1)[:4]
        alpha_, count = st.scalars[0].to_array().reshape(-1)[4:6]
        assert (watch, count) == (-1.0, 1.0)
        assert gamma_ == pytest.approx(gamma, rel=2e-5) and rr == pytest.approx(b @ b, rel=1e-5)
        assert pq_ == pytest.approx(pq, rel=2e-5) and alpha_ == pytest.approx(alpha, rel=3e-5)
        # the first pass of the first iteration wrote x0 = 0 and r0 = b (alpha 0: no step yet)
        xr = st.xr[0].to_array().reshape(-1, 4)[:m]
        np.testing.assert_array_equal(xr[:, :2], 0.0)
        np.testing.assert_array_equal(xr[:, 2], b.astype(np.float32))
        x1, r1 = alpha * p1, b - alpha * (G @ p1)
        # the residual at the pivots, four a texel after the two scalars' texels (what the next
        # iteration's P^-1 reads), in the order of the pivots' slots; zeros past the k-th
        Kslots = be._kpos.to_array().reshape(-1)[:k].astype(int)
        rK = st.scalars[0].to_array().reshape(-1)[8:]
        assert rK.size == 4 * -(-k // 4)
        np.testing.assert_allclose(rK[:k], r1[Kslots], rtol=0, atol=3e-5 * np.abs(b).max())
        np.testing.assert_array_equal(rK[k:], 0.0)
        f._step()
        # the second iteration's first pass: x1 = alpha p1 and r1 = b - alpha G_R p1
        xr = st.xr[0].to_array().reshape(-1, 4)[:m]
        np.testing.assert_allclose(xr[:, 0] + xr[:, 1], x1, rtol=0, atol=3e-5 * np.abs(x1).max())
        np.testing.assert_allclose(xr[:, 2], r1, rtol=0, atol=3e-5 * np.abs(b).max())
        if k == m:                     # r1 is float32's rounding of 0: the rest is noise
            return
        z1 = Pinv @ r1
        beta = (r1 @ z1) / gamma
        p2 = z1 + beta * p1
        np.testing.assert_allclose(st.p[0].to_array()[:m], p2, rtol=0, atol=1e-4 * np.abs(p2).max())
        assert st.totals[0].to_array().reshape(-1)[k + 1] == pytest.approx(beta, rel=1e-3)
        assert st.scalars[0].to_array().reshape(-1)[5] == 2.0
    finally:
        be.release()


@pytest.mark.parametrize("solution", ["float32", "float-float"])
@pytest.mark.parametrize("fold", [None, 8])
def test_fused_pcg_on_folded_vectors_and_dense_parts_equals_float64(rng, monkeypatch, fold, solution):
    """The fused iteration where the vectors are folded (fold=8: m = 37 and n = 73 in rows of 8
    with tails, so P^-1's planes, the chunks of 32 entries and the slots cross texture rows) and
    A has a dense row and column (gruca_like(36): ELLPACK's dense part, its own product
    passes): PCG to 1e-5 ||b|| gives float64's solution of G_R x = b, with x in float32 or
    float-float, and the same iterations as 002's kernels (fused=False) within two checks."""
    if solution == "float-float" and not float_float_available():
        pytest.skip("float-float needs GL_ARB_gpu_shader5")
    if fold:
        monkeypatch.setattr(stream, "FOLD_WIDTH", fold)
    p = gruca_like(36, seed=2)
    m, n = p.A.shape
    theta = np.exp(rng.uniform(-3, 3, n))
    G = normal_matrix(p.A, theta, 1e-3)
    b = rng.standard_normal(m)
    exact = np.linalg.solve(G, b)
    target = 1e-5 * np.linalg.norm(b)
    runs = {}
    for fused in (True, False):
        be = GPUMatrixFree(p, solution=solution, fused=fused, pcg_check=1)
        try:
            be.set_weights(theta, 1e-3)
            be.build_preconditioner(5)
            res = pcg(be, be.vector(b), target, 300)
            runs[fused] = res["iterations"]
            x = be.to_numpy(res["x"])
        finally:
            be.release()
        assert res["converged"] and not res["breakdown"], res
        assert np.linalg.norm(b - G @ x) <= 2 * target
        assert res["residual"] == pytest.approx(np.linalg.norm(b - G @ x), rel=0.3, abs=1e-7 * np.linalg.norm(b))
        np.testing.assert_allclose(x, exact, rtol=0, atol=1e-3 * np.abs(exact).max())
    # the fused check reads the residual before the iteration drawn: one iteration later at most
    assert runs[False] - 2 <= runs[True] <= runs[False] + 3, runs


@pytest.mark.parametrize("backend", ["numpy64", "gpu"])
def test_pcg_reports_a_breakdown_between_two_reads(rng, backend):
    """An indefinite G (Theta~ with negative entries), no preconditioner: p^T q <= 0 at some
    iteration. Read every iteration, PCG stops there with ``breakdown``; read every 8, the
    breakdown watch (conjugate gradients' breakdown_flag on the GPU) reports it at the next read,
    never 'converged'."""
    p = small_lp(rng)
    m, n = p.A.shape
    theta = rng.uniform(0.5, 2.0, n) * np.where(np.arange(n) % 3 == 0, -1.0, 1.0)
    G = normal_matrix(p.A, theta, 0.0)
    assert np.linalg.eigvalsh(G).min() < 0 < np.linalg.eigvalsh(G).max()
    b = rng.standard_normal(m)
    results = {}
    for check in (1, 8):
        be = NumpyMatrixFree(p) if backend == "numpy64" else GPUMatrixFree(p, pcg_check=check)
        be.pcg_check = check
        be.set_weights(theta, 0.0)
        be.precondition = lambda r, be=be: be.axpy(0.0, r, r)        # P = I
        res = pcg(be, be.vector(b), 1e-12 * np.linalg.norm(b), 200)
        results[check] = res
        assert res["breakdown"] and not res["converged"], (check, res["iterations"])
        x = res["x"] if backend == "numpy64" else be.to_numpy(res["x"])
        assert np.linalg.norm(b - G @ x) == pytest.approx(res["residual"], rel=1e-3)
        if backend == "gpu":
            be.release()
    assert results[1]["iterations"] <= results[8]["iterations"] < results[1]["iterations"] + 8


def test_gpu_pcg_gives_back_every_scalar(rng, monkeypatch):
    """Every 1 x 1 stream PCG's GPU back end borrows (inner products, the breakdown watch) goes
    back to the pool exactly once, on every way out: converged at a read, at the iteration
    limit, and at a breakdown."""
    from gpgpu.lp import matrix_free_gpu as mfg

    out, back = [], []
    borrow, give_back = mfg.borrow, mfg.give_back

    def counting_borrow(rows, cols, *a, **kw):
        s = borrow(rows, cols, *a, **kw)
        if (rows, cols) == (1, 1):
            out.append(id(s))
        return s

    def counting_give_back(*streams):
        back.extend(id(s) for s in streams if s is not None and s.shape[:2] == (1, 1))
        give_back(*streams)

    monkeypatch.setattr(mfg, "borrow", counting_borrow)
    monkeypatch.setattr(mfg, "give_back", counting_give_back)
    p = small_lp(rng)
    m, n = p.A.shape
    b = rng.standard_normal(m)
    cases = [(np.exp(rng.uniform(-3, 3, n)), 1e-4 * np.linalg.norm(b), 200),      # converged
             (np.exp(rng.uniform(-3, 3, n)), 0.0, 13),                            # the limit
             (rng.uniform(0.5, 2.0, n) * np.where(np.arange(n) % 3 == 0, -1.0, 1.0), 0.0, 200)]  # breakdown
    for theta, target, maxiter in cases:
        be = GPUMatrixFree(p, fused=False)     # 002's kernels: the fused PCG borrows nothing
        be.set_weights(theta, 1e-4)
        be.build_preconditioner(3)
        out.clear()
        back.clear()
        res = pcg(be, be.vector(b), target, maxiter)
        assert out and sorted(out) == sorted(back), (len(out), len(back))
        be.release()
    assert res["breakdown"]


def test_saxpy_ratio_on_the_gpu(rng):
    """y + sign (n / d) x with n, d 1 x 1 streams, both signs; a ratio 0 / 0 (r reached 0 between
    two checks) leaves y as it is instead of spreading NaN."""
    p = small_lp(rng)
    be = GPUMatrixFree(p)
    x, y = rng.standard_normal(be.m), rng.standard_normal(be.m)
    X, Y = be.vector(x), be.vector(y)
    num, den = be.dot_deferred(X, X), be.dot_deferred(X, Y)
    assert be.read(num) == pytest.approx(x @ x, rel=1e-5) and be.read(den) == pytest.approx(x @ y, rel=1e-4)
    for sign in (1.0, -1.0):
        out = be.to_numpy(be.ratio_axpy(num, den, sign, X, Y))
        np.testing.assert_allclose(out, y + sign * (x @ x) / (x @ y) * x, rtol=1e-4, atol=1e-4)
    zero = be.dot_deferred(be.vector(np.zeros(be.m)), X)
    assert be.read(zero) == 0.0
    out = be.to_numpy(be.ratio_axpy(zero, zero, 1.0, X, Y))
    np.testing.assert_array_equal(out, y.astype(np.float32))
    for h in (num, den, zero):
        be.free_scalar(h)
    be.release()


def test_pcg_solution_in_float_float_keeps_steps_below_an_ulp(rng):
    """Beyond 002: PCG's solution x + (n / d) p in float-float (saxpy_ratio_ff). 100 steps of
    about 1e-8 on x = 1 (half an ulp of 1 in float32 is 6e-8): float-float keeps their sum to
    float64's accuracy, float32 loses every one. Negative ratios; a ratio 0 / 0 leaves x as it
    is; a pooled accumulator starts at 0 again."""
    p = small_lp(rng)
    ones = np.ones(p.A.shape[0])
    for solution in ("float-float", "float32"):
        be = GPUMatrixFree(p, solution=solution)
        m = be.m
        E = be.vector(ones)
        mm = be.dot_deferred(E, E)                                  # m / m = 1 exactly
        x = be.accumulate(mm, mm, E, be.accumulator())
        exact = np.ones(m)
        steps = rng.uniform(0.5, 1.0, (100, m)) * 1e-8 * np.where(rng.random((100, m)) < 0.3, -1.0, 1.0)
        for step in steps:
            P = be.vector(step)
            x_new = be.accumulate(mm, mm, P, x)
            be.free(x)
            be.free(P)
            x = x_new
            exact += step
        zero = be.dot_deferred(be.vector(np.zeros(m)), E)
        x_new = be.accumulate(zero, zero, E, x)                     # 0 / 0: no step
        got = be.to_numpy(x_new)
        if solution == "float-float":
            assert x.components == 4
            np.testing.assert_allclose(got, exact, rtol=0, atol=1e-13)
            assert np.abs(got - 1.0).max() > 1e-7                   # the steps are there
        else:
            np.testing.assert_array_equal(got, ones)               # every step lost
        be.free(x)
        be.free(x_new)
        np.testing.assert_array_equal(be.to_numpy(be.accumulator()), np.zeros(m))   # pooled, zeroed
        be.release()


@pytest.mark.parametrize("bad", ["double", "float64", "", "auto"])
def test_pcg_solution_format_is_checked(bad):
    p, _ = netlib("afiro")
    with pytest.raises(ValueError, match="solution must be None or one of"):
        solve(p, method="matrix-free", backend="gpu", solution=bad)


def test_pcg_solution_in_float_float_needs_gpu_shader5(monkeypatch):
    from gpgpu import float_float

    p, _ = netlib("afiro")
    monkeypatch.setattr(float_float, "available", lambda: False)
    with pytest.raises(ValueError, match="GL_ARB_gpu_shader5.*solution='float32'"):
        solve(p, method="matrix-free", backend="gpu", solution="float-float")
    assert solve(p, method="matrix-free", backend="gpu").status == "optimal"     # float32, the default


def test_gpu_pcg_with_a_float_float_solution_gets_closer_to_its_recurrence(rng):
    """On a badly scaled G (Theta~ from e^-8 to e^8) the float32 solution vector leaves PCG's true
    residual (against float64's G) far above its recurrence; in float-float it gets several
    times closer."""
    p = small_lp(rng, m=60, n=150)
    m, n = p.A.shape
    theta = np.exp(rng.uniform(-8, 8, n))
    G = normal_matrix(p.A, theta, 1e-4)
    b = rng.standard_normal(m)
    true = {}
    for solution in ("float32", "float-float"):
        be = GPUMatrixFree(p, solution=solution)
        be.set_weights(theta, 1e-4)
        be.build_preconditioner(3)
        res = pcg(be, be.vector(b), 0.0, 300)
        x = be.to_numpy(res["x"])
        true[solution] = np.linalg.norm(b - G @ x) / np.linalg.norm(b)
        assert res["residual"] < 1e-6 * np.linalg.norm(b)         # the recurrence: converged
        be.release()
    # measured on llvmpipe: 2.0e-5 against 1.8e-4 (float-float's is the float32 products'
    # residual gap; the float32 one moves with the order of the products' sums)
    assert true["float-float"] < 0.2 * true["float32"]


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "8"])
def test_pcg_check_is_a_positive_integer(bad):
    p, _ = netlib("afiro")
    with pytest.raises(ValueError, match="pcg_check"):
        solve(p, method="matrix-free", backend="gpu", pcg_check=bad)


@pytest.mark.parametrize("backend", ["numpy64", "gpu"])
def test_history_gap_parts_are_the_gaps_three_terms(rng, backend):
    """history["gap_parts"]: x^T s, x^T r_c and -y^T r_b over 1 + |c^T x| at the entry's
    iterate, in the problem's units: float64 from the point where a run cut by max_iter
    stopped (last_point), b and c scaled so that the iteration's units are not the problem's;
    their sum is the objectives' difference over 1 + |c^T x|."""
    small = small_lp(rng)
    p = Problem.from_arrays(small.A, 1e3 * small.b, 50.0 * small.c, c0=7.0)
    r = solve(p, method="matrix-free", backend=backend, max_iter=3)
    assert r.status == "iteration_limit" and r.history[-1]["iteration"] == 3
    x, y, s = r.last_point
    cx = float(p.c @ x)
    want = np.array([x @ s, x @ (p.c - p.A.T @ y - s), -(y @ (p.b - p.A @ x))]) / (1.0 + abs(cx))
    assert np.all(np.abs(want) > 1e-6)                 # three terms that a sign or a swap changes
    h = r.history[-1]
    np.testing.assert_allclose(h["gap_parts"], want, rtol=1e-9, atol=1e-12 * np.abs(want).max())
    difference = (h["primal_objective"] - h["dual_objective"]) / (1.0 + abs(h["primal_objective"] - 7.0))
    assert sum(h["gap_parts"]) == pytest.approx(difference, rel=1e-9, abs=1e-12)
    assert all(len(e["gap_parts"]) == 3 for e in r.history)


def test_refinement_rounds_stop_when_pcg_runs_out():
    """Float64 refinement rounds (_Solver.solve): a back end whose PCG only reaches 1e-3 of its
    right-hand side (pcg_floor) needs several rounds to meet a 1e-10 target and gets there; when
    PCG itself stops at its iteration limit, the first round is the last (another would meet
    the same conditioning)."""
    from gpgpu.lp.matrix_free import _Solver

    class Coarse(NumpyMatrixFree):
        pcg_floor = 1e-3

    p = gruca_like(64, seed=3)
    A = p.A.tocsr()
    rhs = np.random.default_rng(0).standard_normal(A.shape[0])
    theta = np.random.default_rng(1).uniform(0.1, 10.0, A.shape[1])
    target = 1e-10 * np.linalg.norm(rhs)
    G = (A.toarray() * theta) @ A.toarray().T + 1e-3 * np.eye(A.shape[0])
    for maxiter, converged in ((500, True), (2, False)):
        be = Coarse(p)
        sol = _Solver(be, A, A.T.tocsr(), refine=True, maxiter=maxiter)
        sol.set_weights(theta, 1e-3, 4)
        dy, facts = sol.solve(rhs, target)
        assert facts["converged"] is converged
        if converged:
            assert facts["rounds"] >= 3 and np.linalg.norm(rhs - G @ dy) <= 1.01 * target
        else:
            assert facts["rounds"] == 1 and facts["iterations"] == 2
            assert facts["residual"] == pytest.approx(np.linalg.norm(rhs - G @ dy) / np.linalg.norm(rhs), rel=1e-6)


def _normal_system():
    """gruca_like(64)'s normal matrix G_R = A diag(theta) Aᵀ + 1e-6 I with random weights
    (dense, float64: the reference), a solution z and rhs = G_R z: (p, A, theta, G, z, rhs, rng)."""
    p = gruca_like(64, seed=3)
    A = p.A.tocsr()
    rng = np.random.default_rng(5)
    theta = rng.uniform(0.01, 100.0, A.shape[1])
    G = (A.toarray() * theta) @ A.toarray().T + 1e-6 * np.eye(A.shape[0])
    z = rng.standard_normal(A.shape[0])
    return p, A, theta, G, z, G @ z, rng


@pytest.mark.parametrize("refine", [False, True])
def test_a_solve_from_a_start_solves_for_the_correction(refine):
    """_Solver.solve(..., start=): PCG solves G_R d = rhs - G_R start (float64 residual) and the
    answer is start + d (the dense float64 G_R is the reference): the exact solution as the
    start takes no PCG iteration; a start that leaves 1e-4 of rhs meets a 1e-8 target in fewer
    PCG iterations than from 0; a start whose residual is above START_ENOUGH (half) of rhs is
    dropped, the solve that of no start."""
    from gpgpu.lp.matrix_free import START_ENOUGH, _Solver

    assert START_ENOUGH == 0.5
    p, A, theta, G, z, rhs, rng = _normal_system()
    target = 1e-8 * np.linalg.norm(rhs)

    def run(start):
        sol = _Solver(NumpyMatrixFree(p), A, A.T.tocsr(), refine=refine, maxiter=2000)
        sol.set_weights(theta, 1e-6, 2)
        return sol.solve(rhs, target, start=start)

    dy, facts = run(z)
    assert facts["iterations"] == 0 and facts["converged"]
    np.testing.assert_allclose(dy, z, rtol=0, atol=1e-12 * np.abs(z).max())
    cold, cold_facts = run(None)
    near = z + 1e-4 * np.linalg.solve(G, rhs - G @ z + rng.standard_normal(z.size) * np.linalg.norm(rhs) / z.size ** 0.5)
    assert np.linalg.norm(rhs - G @ near) <= 1e-3 * np.linalg.norm(rhs)
    warm, warm_facts = run(near)
    for d, f in ((cold, cold_facts), (warm, warm_facts)):
        assert f["converged"] and np.linalg.norm(rhs - G @ d) <= target * (1 + 1e-6)
        assert f["residual"] == pytest.approx(np.linalg.norm(rhs - G @ d) / np.linalg.norm(rhs), rel=1e-3)
    assert 0 < warm_facts["iterations"] < cold_facts["iterations"]
    far, far_facts = run(-z)                            # residual 2 ||rhs||: dropped
    np.testing.assert_array_equal(far, cold)
    assert far_facts["iterations"] == cold_facts["iterations"]


def test_a_starts_floor_is_of_the_residual_pcg_is_given(monkeypatch):
    """A back end whose PCG stops at 1e-3 of its right-hand side (``pcg_floor``): from a start
    whose residual is 1e-2 of rhs, the first round's target is 1e-3 of that residual (the
    floor of the right-hand side PCG is given: 1e-5 ||rhs||), not 1e-3 ||rhs||; without a start
    it is 1e-3 of rhs (the target itself far below). Seen in the target each PCG round is
    called with, relative to the vector it is given."""
    import gpgpu.lp.matrix_free as mf

    class Coarse(NumpyMatrixFree):
        pcg_floor = 1e-3

    asked = []
    inner = mf.pcg

    def spy(be, b, target, maxiter, soft=None):
        asked.append(target / float(np.linalg.norm(b)))
        return inner(be, b, target, maxiter, soft)

    monkeypatch.setattr(mf, "pcg", spy)
    p, A, theta, G, z, rhs, rng = _normal_system()
    e = rng.standard_normal(z.size)
    start = z + 1e-2 * np.linalg.norm(rhs) * np.linalg.solve(G, e / np.linalg.norm(e))
    assert np.linalg.norm(rhs - G @ start) == pytest.approx(1e-2 * np.linalg.norm(rhs), rel=1e-9)
    for given, ratio in ((start, 1e-3), (None, 1e-3)):
        sol = mf._Solver(Coarse(p), A, A.T.tocsr(), refine=False, maxiter=2000)
        sol.set_weights(theta, 1e-6, 2)
        asked.clear()
        sol.solve(rhs, 1e-12 * np.linalg.norm(rhs), start=given)
        assert asked == [pytest.approx(ratio, rel=1e-6)]


@pytest.mark.parametrize("backend,on", [("gpu", True), ("gpu", False), ("numpy64", True)])
def test_the_corrector_starts_from_the_predictors_dy(backend, on, monkeypatch):
    """With CORRECTOR_START on a float32 PCG (the GPU) the combined direction's PCG starts from
    the predictor's dy (module notes, ``adaptive``); the predictor and the centrality correctors
    start from 0, and so does every solve by default (CORRECTOR_START off), with
    preset="paper" (002, no adaptive rule) and on a float64 PCG (numpy64). Seen where the outer
    iteration passes each solve its start (afiro, its answer HiGHS's)."""
    import gpgpu.lp.matrix_free as mf

    assert mf.CORRECTOR_START is False                    # the default
    monkeypatch.setattr(mf, "CORRECTOR_START", on)

    calls = []
    inner = mf._Solver.solve

    def spy(self, rhs, tol, maxiter=None, soft=None, rel=None, start=None):
        dy, facts = inner(self, rhs, tol, maxiter, soft, rel, start)
        calls.append((None if start is None else start.copy(), dy.copy()))
        return dy, facts

    monkeypatch.setattr(mf._Solver, "solve", spy)
    p, ref = netlib("afiro")
    for options, warm in (({}, on and backend == "gpu"), ({"preset": "paper"}, False)):
        per_iteration = []

        def take(h):
            per_iteration.append(list(calls))
            calls.clear()

        calls.clear()
        r = solve(p, method="matrix-free", backend=backend, eps=1e-6, callback=take, **options)
        assert r.status == "optimal" and rel(r.objective, ref) <= 1e-6
        per_iteration[0][:2] = []                         # the starting point's two solves
        assert len(per_iteration) > 3
        for solves in per_iteration[:-1]:                 # the last entry takes no step
            (start_a, dy_a), (start_c, _), *correctors = solves
            assert start_a is None and all(s is None for s, _ in correctors)
            if warm:
                np.testing.assert_array_equal(start_c, dy_a)
            else:
                assert start_c is None


# --------------------------------------------------------------------------- solving
#: netlib-more problems the numpy64 matrix-free method solves to 1e-8 in about a second each;
#: grow15, scrs8 and standmps end in numerical_trouble without the feasibility clause of the
#: stall test (their relative gap grows while the residuals fall), gfrd-pnc and grow22 without
#: the normalisation of b and c
MORE_SOLVED = ["grow15", "scrs8", "standmps", "gfrd-pnc", "grow22", "bore3d", "scsd6", "ship04l", "scorpion"]


@pytest.mark.parametrize("source,name", [("table3", p) for p in PROBLEMS] + [("more", p) for p in MORE_SOLVED])
def test_numpy64_solves_netlib(source, name):
    """The ten Table-3 problems of 000 and eight of netlib-more, to 1e-8, against HiGHS."""
    p, ref = netlib(name) if source == "table3" else netlib_more(name)
    r = solve(p, method="matrix-free", backend="numpy64", eps=1e-8)
    assert r.status == "optimal", r.message
    assert rel(r.objective, ref) <= 1e-6
    assert r.method == "matrix-free" and r.pcg_iterations > 0 and r.pcg_unconverged == 0
    assert r.rank == min(100, p.A.shape[0])


@pytest.mark.parametrize("backend", ["numpy64", "gpu"])
def test_rank_doubles_after_a_failed_pcg_up_to_rank_max(backend):
    """With 3 PCG iterations a solve, k = 2 soon fails; after each iteration with a failed
    solve k doubles (2, 4, 8, 16) up to rank_max = 20, after a converged one it stays; with
    k = 20 of m = 27 PCG converges and the answer is HiGHS's. Without rank_max, k stays 2."""
    p, ref = netlib("afiro")
    hist = []
    r = solve(p, method="matrix-free", backend=backend, eps=1e-8, rank=2, rank_max=20, pcg_maxiter=3,
              callback=hist.append)
    for a, b in zip(hist, hist[1:]):
        assert b["rank"] == (a["rank"] if a["pcg_converged"] else min(20, 2 * a["rank"]))
    assert [h["rank"] for h in hist if not h["pcg_converged"]][:4] == [2, 4, 8, 16]
    assert hist[-1]["rank"] == r.rank == 20
    assert r.status == "optimal", r.message
    assert rel(r.objective, ref) <= 1e-6
    fixed = []
    solve(p, method="matrix-free", backend=backend, eps=1e-8, rank=2, pcg_maxiter=3, max_iter=6,
          callback=lambda e: fixed.append(e["rank"]))
    assert set(fixed) == {2}
    with pytest.raises(ValueError, match="rank_max must be a positive integer"):
        solve(p, method="matrix-free", backend=backend, rank_max=0)


@pytest.mark.skipif(not os.environ.get("GPGPU_LONG_TESTS"), reason="40-140 s; set GPGPU_LONG_TESTS=1")
def test_nug12_with_the_rank_grown_to_m():
    """nug12 reaches HiGHS's objective to 1e-6 (measured 4.0e-9) only when k grows to m: the
    complete factor (k = 1600 still ends in numerical trouble, README)."""
    from experiments.mfipm.common import HIGHS_QAP
    from gpgpu.lp.qap import qaplib_dir

    try:
        path = qaplib_dir() / "nug12.dat"
    except FileNotFoundError as e:
        pytest.skip(str(e))
    p = qap_lp(path)
    r = solve(p, method="matrix-free", backend="numpy64", eps=1e-8, rank_max=p.A.shape[0])
    assert r.status == "optimal", r.message
    assert rel(r.objective, HIGHS_QAP["nug12"]) <= 1e-6
    assert r.rank == p.A.shape[0]


@pytest.mark.skipif(not os.environ.get("GPGPU_LONG_TESTS"), reason="about 50 s on 2 cores; set GPGPU_LONG_TESTS=1")
def test_nug12_with_002s_preconditioner_of_rank_100():
    """nug12 (3192 x 8856) with 002's partial Cholesky preconditioner, k = 100 << m, reaches
    HiGHS's objective to 1e-6 (measured 4.4e-10 in 19 iterations, 14 s on numpy64) with a
    regularisation floor of 1e-4 and up to 4000 PCG iterations a solve; PCG stops at its limit
    in 22 solves, reported in the result. With the default floor (1e-8) it ends in numerical
    trouble 1.7e-6 off (README)."""
    from experiments.mfipm.common import HIGHS_QAP
    from gpgpu.lp.qap import qaplib_dir

    try:
        path = qaplib_dir() / "nug12.dat"
    except FileNotFoundError as e:
        pytest.skip(str(e))
    p = qap_lp(path)
    r = solve(p, method="matrix-free", backend="numpy64", eps=1e-8, rank=100, pcg_maxiter=4000, reg_min=1e-4,
              adaptive=False)
    assert r.status == "optimal", r.message
    assert rel(r.objective, HIGHS_QAP["nug12"]) <= 1e-6
    assert r.rank == 100 and r.pcg_unconverged > 0 and "PCG iteration limit (4000)" in r.message


def nug(name):
    from gpgpu.lp.qap import qaplib_dir

    try:
        path = qaplib_dir() / f"{name}.dat"
    except FileNotFoundError as e:
        pytest.skip(str(e))
    return qap_lp(path)


@pytest.mark.parametrize("name", [pytest.param("nug12", marks=pytest.mark.skipif(
    not os.environ.get("GPGPU_LONG_TESTS"), reason="30-90 s on 2 cores; set GPGPU_LONG_TESTS=1")), pytest.param("nug15", marks=pytest.mark.skipif(
    not os.environ.get("GPGPU_LONG_TESTS"), reason="1-5 minutes on numpy64 here; set GPGPU_LONG_TESTS=1")),
    pytest.param("nug20", marks=pytest.mark.skipif(
        not os.environ.get("GPGPU_LONG_TESTS"), reason="about 10 minutes on numpy64 here; set GPGPU_LONG_TESTS=1"))])
def test_qap_relaxation_is_optimal_with_the_defaults(name):
    """nug12 (3192 x 8856) with method="matrix-free" and nothing else, at eps = 1e-6 (numpy64 here;
    the rule is in the algorithm, so the GPU back end has it too). Without the adaptive rule it
    ends in numerical trouble 2.2e-6 from HiGHS's objective: from iteration 7 PCG stops at its
    limit with residuals growing to 4e-3 of the right-hand side, and the primal residual grows
    1000-fold. With it the regularisation floor stays at the last converged iteration's 1e-5
    and the PCG limit grows to 8000: optimal in 16 iterations with the safeguards of the
    adaptive defaults, 1.1e-7 off (30-44 s here; 17 iterations with the rule alone)."""
    from experiments.mfipm.common import HIGHS_QAP

    p = nug(name)
    r = solve(p, method="matrix-free", backend="numpy64")
    assert r.status == "optimal", r.message
    assert rel(r.objective, HIGHS_QAP[name]) <= 1e-6
    hist = r.history[:-1]
    rho = [h["regularisation"][0] for h in hist]
    first = next(i for i, h in enumerate(hist) if not h["pcg_converged"])
    # the floor held until an iteration whose solves converged again (after it the floor may
    # come down ten-fold where it holds a residual: nug15 under OpenBLAS's Haswell kernels)
    again = next((i for i in range(first + 1, len(hist)) if hist[i]["pcg_converged"]), len(hist) - 1)
    assert min(rho[first + 1:again + 1]) >= rho[first - 1] * (1 - 1e-12)
    assert max(max(h["pcg_iterations"]) for h in r.history[:-1]) > 2000   # the limit grew
    assert "grown to" in r.message
    # the history's pcg_limit is the limit the combined solve ran under (not the one the rule
    # set for the next iteration)
    at_limit = [h for h in hist if h["pcg_stop"][1] == "limit"]
    assert at_limit and all(h["pcg_iterations"][1] == h["pcg_limit"] for h in at_limit)
    if name == "nug20":
        # the primal finishing rule ended it: without it the primal residual stays at 1e-5
        # while mu falls to 1e-10 (docs/lp_defaults.md)
        assert any(h["pcg_limit"] > max(h["pcg_iterations"][0], 8000) for h in hist)


@pytest.mark.parametrize("pres,dres,gap,leads", [
    (2e-6, 1e-7, 1e-7, True), (2e-6, 3e-6, 1e-7, False), (2e-6, 1e-7, 3e-6, False),
    (5e-7, 1e-7, 1e-7, False), (1e-6, 1e-7, 1e-7, False), (2e-6, 2e-6, 1e-7, False)])
def test_primal_finishing_rule_condition(pres, dres, gap, leads):
    """The rule's condition by hand: the primal residual above eps = 1e-6 and above both other
    tests (a tie is not a lead)."""
    from gpgpu.lp.matrix_free import _primal_leads

    assert _primal_leads(pres, dres, gap, 1e-6) is leads


def test_primal_finishing_rule_runs_the_combined_solve_longer_where_the_primal_residual_leads(monkeypatch):
    """The primal finishing rule (module notes): in an iteration whose primal residual is above
    eps and the largest of the three tests, the combined direction's PCG may run 8 times the
    limit; the predictor's solve, every other iteration, a ``pcg_maxiter`` given and
    ``adaptive=False`` keep the limit. beaconfd's primal residual leads in every iteration and
    sctap1's in its first three (m = 173 and 300: limits 692 and 1200), so both branches run.
    Each solve's limit is seen where the outer iteration passes it to PCG."""
    import gpgpu.lp.matrix_free as mf

    calls = []
    inner = mf._Solver.solve

    def spy(self, rhs, tol, maxiter=None, soft=None, rel=None, start=None):
        calls.append(self.maxiter if maxiter is None else maxiter)
        return inner(self, rhs, tol, maxiter, soft, rel, start)

    monkeypatch.setattr(mf._Solver, "solve", spy)
    seen = set()
    for name in ("beaconfd", "sctap1"):
        p, ref = netlib(name)
        for options in ({}, {"pcg_maxiter": 300}, {"preset": "paper"}):
            limit = options.get("pcg_maxiter", max(200, min(4 * p.A.shape[0], 2000)))
            per_iteration = []

            def take(h):
                per_iteration.append((h, list(calls)))
                calls.clear()

            calls.clear()
            r = solve(p, method="matrix-free", backend="numpy64", eps=1e-6, callback=take, **options)
            assert r.status == "optimal" and rel(r.objective, ref) <= 1e-6
            per_iteration[0][1][:2] = []                  # the starting point's two solves
            for h, solves in per_iteration[:-1]:          # the last entry takes no step
                lead = h["primal_residual"] > max(1e-6, h["dual_residual"], h["gap"])
                fires = lead and not options
                predictor, combined, *correctors = solves
                assert predictor == limit and correctors == [limit] * len(correctors)
                assert combined == h["pcg_limit"] == (8 * limit if fires else limit), (name, options, h["iteration"])
                seen.add(fires)
    assert seen == {True, False}


@pytest.mark.parametrize("name", PROBLEMS)
def test_table3_netlib_is_optimal_with_the_matrix_free_defaults(name):
    """Table 3's ten problems with method="matrix-free" and the defaults (eps 1e-6): their PCG
    always converges, so the rule on PCG's limit never acts; the safeguards of the adaptive
    defaults (floor 1e-12, centrality correctors) take 6-22 iterations instead of 7-29 (each
    < 0.5 s)."""
    p, ref = netlib(name)
    r = solve(p, method="matrix-free", backend="numpy64")
    assert r.status == "optimal", r.message
    assert rel(r.objective, ref) <= 1e-6 and r.pcg_unconverged == 0


@pytest.mark.parametrize("backend", ["numpy64", "gpu"])
def test_adaptive_rule_holds_the_floor_after_a_pcg_limit(backend):
    """With 20 PCG iterations a solve and k = 1, afiro's solves stop at their limit from its second
    (numpy64, PCG's target 1e-6 of the right-hand side) or third (GPU, 1e-2) iteration on: from the
    iteration after the first such stop, rho = delta never fall below their value at the last
    iteration whose solves converged (without the rule they follow mu down to 1e-8) until an
    iteration whose solves converge again (after it the floor may come down ten-fold where it
    holds a residual) or a stall's restart; a pcg_maxiter given is kept (the default limit alone
    grows)."""
    p, _ = netlib("afiro")
    runs = {}
    for adaptive in (True, False):
        hist = []
        solve(p, method="matrix-free", backend=backend, eps=1e-8, rank=1, pcg_maxiter=20, max_iter=25,
              adaptive=adaptive, callback=hist.append)
        # up to a stall's restart (the adaptive defaults then lower the ceiling reg_max)
        upto = next((i for i, h in enumerate(hist) if "restart_iteration" in h), len(hist))
        runs[adaptive] = [h for h in hist[:upto] if h["regularisation"] is not None]
    for adaptive, hist in runs.items():
        failed = [i for i, h in enumerate(hist) if not h["pcg_converged"]]
        ok = [i for i in range(failed[0]) if hist[i]["pcg_converged"]]
        assert failed and ok and max(max(h["pcg_iterations"]) for h in hist) <= 20
        again = next((i for i in range(failed[0] + 1, len(hist)) if hist[i]["pcg_converged"]), len(hist) - 1)
        later = [max(h["regularisation"]) for h in hist[failed[0] + 1:again + 1]]
        held = max(hist[ok[-1]]["regularisation"])
        if adaptive:
            assert min(later) >= held * (1 - 1e-12)
        else:
            assert min(later) < held


@pytest.mark.parametrize("backend,adaptive,float32_target,target", [
    ("numpy64", True, None, 1e-6), ("gpu", True, None, 1e-2), ("gpu", True, 1e-3, 1e-3), ("gpu", False, 1e-3, 1e-2)])
def test_pcg_target_follows_the_back_ends_precision(backend, adaptive, float32_target, target, monkeypatch):
    """The defaults' PCG target is 1e-6 of the right-hand side where the back end's PCG reaches
    it (float64, numpy64) and PCG_REL_FLOAT32 = 1e-2 on the GPU, whose float32 PCG stops at 1e-5
    of its residual: there 1e-6 made every solve take a float64 refinement round (measured on
    afiro: 13 of 19 of the iterations' solves took two rounds instead of 5; scsd6 twice the
    time); a float32 target set to 1e-3 is asked for; without the adaptive rule, PCG_REL_FIXED =
    1e-2 whatever the float32 target. afiro's first iteration, whose residual cap is far above
    the targets: its two solves ask for target ||rhs|| and (GPU) end in one round."""
    import gpgpu.lp.matrix_free as mf

    if float32_target is not None:
        monkeypatch.setattr(mf, "PCG_REL_FLOAT32", float32_target)

    asked = []
    inner = mf._Solver.solve

    def spy(self, rhs, tol, maxiter=None, soft=None, rel=None, start=None):
        dy, facts = inner(self, rhs, tol, maxiter, soft, rel, start)
        asked.append((tol / float(np.linalg.norm(rhs)), facts["rounds"]))
        return dy, facts

    monkeypatch.setattr(mf._Solver, "solve", spy)
    p, ref = netlib("afiro")
    r = solve(p, method="matrix-free", backend=backend, eps=1e-6, adaptive=adaptive)
    assert r.status == "optimal" and rel(r.objective, ref) <= 1e-6
    first = asked[2:4]                               # after the starting point's two solves
    assert [t for t, _ in first] == [pytest.approx(target, rel=1e-12)] * 2
    assert [n for _, n in first] == [1, 1]


#: netlib-more problems that the matrix-free defaults solved only with the safeguards of the
#: adaptive defaults (numpy64, eps 1e-6; before them: numerical_trouble 5.6e-6, 0.13 and 0.40
#: off HiGHS's objective), each within a few seconds
@pytest.mark.parametrize("name,mechanism", [("finnis", "floor"), ("forplan", "correctors"),
                                            ("fffff800", "restart")])
def test_netlib_more_is_optimal_with_the_matrix_free_defaults(name, mechanism):
    """finnis and forplan: the gap (6.3) was held by the residuals (c^T x - b^T y = x^T s +
    x^T r_c - y^T r_b with multipliers of 1e3-1e4) while the floor 1e-8 of rho = delta held the
    residuals; with the floor at 1e-12, PCG's target 1e-6 of the right-hand side and (forplan)
    Gondzio's centrality correctors on its short steps they are optimal. fffff800: under the
    early regularisation (1e-3 .. 1e-4) its iterates head for a wrong face (0.39 off HiGHS's
    objective) and the stall test fires; the run goes on from its starting point with rho = delta
    at the floor 1e-12 and the ceiling reg_max 1e4 lower (1e-6), and is optimal (the history has
    the restart; a restart from the best point near the central path stayed in the wrong
    region)."""
    p, ref = netlib_more(name)
    r = solve(p, method="matrix-free", backend="numpy64")
    assert r.status == "optimal", r.message
    assert rel(r.objective, ref) <= 1e-6
    regs = [h["regularisation"] for h in r.history if h["regularisation"] is not None]
    restarts = [h for h in r.history if "restart_iteration" in h]
    if mechanism == "floor":
        assert min(min(v) for v in regs) < 1e-8                  # below the fixed schedule's floor
    if mechanism == "restart":
        assert len(restarts) == 1 and restarts[0]["regularisation_ceiling"] == pytest.approx(1e-6)
        assert restarts[0]["restart_iteration"] == 0                 # from the starting point
        after = r.history[restarts[0]["iteration"] + 1]["regularisation"]
        assert max(after) == pytest.approx(1e-12)                   # at the floor
    else:
        assert not restarts


@pytest.mark.parametrize("name,seeds", [("forplan", (1, 2, 3)), pytest.param("fffff800", (1, 2), marks=pytest.mark.skipif(
    not os.environ.get("GPGPU_LONG_TESTS"), reason="about 40 s on 2 cores; set GPGPU_LONG_TESTS=1"))])
def test_matrix_free_defaults_do_not_depend_on_the_last_bits(name, seeds):
    """The defaults' successes must not hang on rounding: forplan and fffff800 with c perturbed
    by 1e-14 relative (as another BLAS kernel rounds: OpenBLAS's SkylakeX kernels made both end
    in numerical trouble) stay optimal within 1e-6 of HiGHS's objective. They did not when PCG
    stopped at 1e-2 of the right-hand side (the inexact directions turned last-bit differences
    into other trajectories: fffff800 optimal for 1 of 4 such perturbations) and the restart
    went on from the best point near the central path, which the early regularisation had
    steered towards a wrong face (0.06-0.4 off)."""
    p, ref = netlib_more(name)
    for seed in seeds:
        rng = np.random.default_rng(seed)
        q = dataclasses.replace(p, c=p.c * (1.0 + 1e-14 * rng.standard_normal(p.c.shape)))
        r = solve(q, method="matrix-free", backend="numpy64")
        assert r.status == "optimal", (seed, r.message)
        assert rel(r.objective, ref) <= 1e-6, seed


def test_free_split_safeguard_keeps_the_split_and_bounds_its_halves():
    """The free-split safeguard (pilot4, perold: 88 splits): both halves of a split lowered by
    the same amount so that min(x+, x-) <= 1 + |x+ - x-|; other columns untouched. pilot4 with
    the defaults: optimal (69 iterations, about a minute here; docs/lp_defaults.md)."""
    from gpgpu.lp.matrix_free import _bound_free_splits

    x = np.array([5.0, 107.0, 100.0, 0.5, 0.25, 3.0])
    partner = np.array([-1, 2, 1, 4, 3, -1])
    y = _bound_free_splits(x, partner)
    assert y[1] - y[2] == pytest.approx(7.0) and min(y[1], y[2]) == pytest.approx(1.0 + 7.0)
    assert y[[0, 3, 4, 5]].tolist() == [5.0, 0.5, 0.25, 3.0]    # within the bound: unchanged
    assert x[1] == 107.0                                         # a copy


@pytest.mark.parametrize("c_factor,b_factor", [(1e10, 1.0), (1.0, 1e6), (1e6, 1e3)])
def test_scaling_b_and_c_changes_nothing(c_factor, b_factor):
    """The iteration works on b / max(1, ||b||) and c / max(1, ||c||): adlittle with c x 1e10
    (which ended 'infeasible' when reg_max and the other constants were absolute) or b x 1e6
    takes the same iterations to the same point, in the problem's units."""
    p, ref = netlib("adlittle")
    base = solve(p, method="matrix-free", backend="numpy64", eps=1e-8)
    q = Problem(p.A, p.b * b_factor, p.c * c_factor, c0=p.c0 * c_factor)
    r = solve(q, method="matrix-free", backend="numpy64", eps=1e-8)
    assert r.status == "optimal" and r.iterations == base.iterations
    assert rel(r.objective / (c_factor * b_factor), ref) <= 1e-6
    np.testing.assert_allclose(r.x_std / b_factor, base.x_std, rtol=1e-6, atol=1e-9 * np.abs(base.x_std).max())
    np.testing.assert_allclose(r.y / c_factor, base.y, rtol=1e-6, atol=1e-9 * np.abs(base.y).max())
    for a, b in zip(r.history, base.history):
        assert a["primal_residual"] == pytest.approx(b["primal_residual"], rel=1e-3, abs=1e-12)
        # rel 1e-5: the scaled data round differently and PCG stops where its residual falls
        # below 1e-2 of the right-hand side, so the iterates part at the rounding's level
        # amplified by G_R's condition (measured 1.2e-6 with the floor 1e-12 and the correctors)
        assert a["mu"] == pytest.approx(b["mu"] * c_factor * b_factor, rel=1e-5)


def test_a_breakdown_in_the_back_end_is_numerical_trouble_not_a_traceback():
    """An arithmetic error of the back end inside an iteration (the numpy factor of a singular
    G11 once overflowed to inf and scipy raised ValueError) ends the solve in numerical trouble,
    with the best point and the reason in the message."""
    class BreaksDown(NumpyMatrixFree):
        builds = 0

        def build_preconditioner(self, rank):
            BreaksDown.builds += 1
            if BreaksDown.builds == 4:                 # the start point's, then iterations 0, 1, 2
                raise ValueError("array must not contain infs or NaNs (planted)")
            return super().build_preconditioner(rank)

    p, ref = netlib("afiro")
    seen = []
    r = solve(p, method="matrix-free", backend=BreaksDown(p), eps=1e-8, callback=seen.append)
    assert r.status == "numerical_trouble"
    assert "Stopped at iteration 2: ValueError: array must not contain infs or NaNs (planted)" in r.message
    assert r.iterations == 2 and len(r.history) == len(seen) == 3
    assert np.all(np.isfinite(r.x)) and rel(r.objective, ref) < 1.0


def test_partial_cholesky_replaces_a_tiny_pivot_instead_of_overflowing():
    """A pivot 1e-13 of its diagonal entry (a numerically singular G11) is replaced, so that
    no multiplier explodes: C, B and d_s stay finite and bounded by the data."""
    v = np.array([1.0, 2.0, 3.0])
    G = np.outer(v, v) + np.diag([0.0, 1e-13 * 4.0, 0.0])          # rank one + a hair
    G = np.block([[G, v[:, None]], [v[None, :], np.array([[20.0]])]])
    C, B, d_s, replaced = partial_cholesky(G[:, :3], np.arange(3), np.diag(G))
    assert replaced == 2
    assert np.isfinite(C).all() and np.isfinite(B).all() and np.isfinite(d_s).all()
    assert np.abs(B).max() <= 10.0 and d_s[3] > 0


def test_stall_test_counts_falling_residuals_as_progress():
    """The stall test of both methods (gpgpu.lp.decisions.stop_code): the worst residual (here the
    gap) stalls over the window while the feasibility residuals halve every iteration. Without the
    feasibility clause that is numerical trouble (4) once 2 windows have passed; with it the
    iteration goes on (None) -- until the residuals stall too."""
    from types import SimpleNamespace

    from gpgpu.lp.decisions import Settings, stop_code

    settings = Settings(eps=1e-8, max_iter=100, stall_window=4, ray_ratio=1e4, collapse=1e-10)

    def run(feasibility, feas_of):
        hist, code = [], None
        for k in range(30):
            pres = dres = feas_of(k)
            point = SimpleNamespace(finite=True, pres=pres, dres=dres, gap=1.0, worst=max(pres, dres, 1.0))
            code = stop_code(point, settings, k, hist, lambda: None, feasibility=feasibility)
            if code is not None:
                return code, k
        return code, None

    falling = lambda k: 2.0 ** -k
    assert run(False, falling) == (4, 8)             # the first chance: 2 windows + 1
    assert run(True, falling) == (None, None)
    assert run(True, lambda k: 1e-3) == (4, 8)       # nothing falls: stalled both ways


def test_stall_window_reaches_the_iteration(monkeypatch):
    """solve(..., stall_window=n) is the stall test's window of the matrix-free iteration (the
    QAP LPs' late iterations may stall for more than 8 and recover, README); default 8."""
    from gpgpu.lp import matrix_free as mf

    seen = []
    real = mf.matrix_free

    def spy(be, problem, **kw):
        seen.append(kw.get("stall_window", "default"))
        return real(be, problem, **kw)

    monkeypatch.setattr(mf, "matrix_free", spy)
    p, ref = netlib("afiro")
    for kw, expect in (({}, "default"), ({"stall_window": 30}, 30)):
        r = solve(p, method="matrix-free", backend="numpy64", eps=1e-8, **kw)
        assert r.status == "optimal" and rel(r.objective, ref) < 1e-8 and seen[-1] == expect


GPU_NETLIB = ["afiro", "sc50b", "adlittle", "blend", "beaconfd"]
#: the other five take 15-95 s each on llvmpipe (4 minutes in all): run with GPGPU_LONG_TESTS=1
GPU_NETLIB_LONG = [p for p in PROBLEMS if p not in GPU_NETLIB]


@pytest.mark.parametrize("name", GPU_NETLIB + [pytest.param(
    p, marks=pytest.mark.skipif(not os.environ.get("GPGPU_LONG_TESTS"),
                                reason="15-95 s on llvmpipe; set GPGPU_LONG_TESTS=1")) for p in GPU_NETLIB_LONG])
def test_gpu_solves_table3_netlib(name):
    p, ref = netlib(name)
    r = solve(p, method="matrix-free", backend="gpu", eps=1e-8)
    assert r.status == "optimal", r.message
    assert rel(r.objective, ref) <= 1e-6
    assert r.backend == "gpu" and r.readbacks > 0


@pytest.mark.parametrize("backend, options", [("numpy64", {}), ("gpu", {}), ("gpu", {"sums": "fan"})])
def test_gruca_like_1024_reaches_highs(backend, options):
    p = gruca_like(1024, seed=0)
    r = solve(p, method="matrix-free", backend=backend, eps=1e-8, **options)
    assert r.status == "optimal", r.message
    assert rel(r.objective, GRUCA_1024_SEED0) <= 1e-6
    # rank 100 of 1025 rows: the preconditioner is partial, PCG does iterate
    assert r.rank == 100 and r.pcg_iterations > 2 * r.iterations


@pytest.mark.parametrize("backend", ["numpy64", "gpu"])
def test_small_qap_relaxation_reaches_highs(backend):
    """A rank-deficient QAP LP (the relaxation of a random size-4 QAP: 104 rows, 88 columns)
    with a partial preconditioner (k = 20 of 104)."""
    p = random_qap(4, seed=1)
    ref = highs_objective(p)
    r = solve(p, method="matrix-free", backend=backend, eps=1e-8, rank=20)
    assert r.status == "optimal", r.message
    assert rel(r.objective, ref) <= 1e-6


def test_history_result_and_profile():
    p, _ = netlib("afiro")
    seen = []
    r = solve(p, method="matrix-free", backend="numpy64", eps=1e-8, callback=seen.append, profile=True)
    assert len(seen) == len(r.history) == r.iterations + 1
    step = r.history[0]
    assert len(step["pcg_iterations"]) == 2 and step["pcg_converged"] is True
    assert 0 < step["regularisation"][0] <= 1e-2 and step["rank"] == 27
    assert r.history[-1]["pcg_iterations"] is None
    # the starting point's two solves are counted in the total, not in the history
    assert 0 < sum(sum(h["pcg_iterations"]) for h in r.history[:-1]) <= r.pcg_iterations
    assert r.timers["total"] >= r.timers["fsax"] > 0 and r.counts["fsax"] == r.counts["fsaty"] > 0
    assert r.counts["precondition"] >= r.pcg_iterations


def test_pcg_limit_is_reported_never_silent():
    p = gruca_like(64, seed=1)
    r = solve(p, method="matrix-free", backend="numpy64", eps=1e-8, rank=1, pcg_maxiter=2, max_iter=5)
    assert r.pcg_unconverged > 0
    assert f"stopped at the PCG iteration limit (2)" in r.message
    assert any(h["pcg_converged"] is False for h in r.history[:-1])
    assert r.status != "optimal"
    assert "k = 1 of 65 columns" in r.message and "rank_max" in r.message
    # a preconditioner of every column: nothing to suggest
    r = solve(p, method="matrix-free", backend="numpy64", eps=1e-8, rank=65, pcg_maxiter=2, max_iter=2)
    assert r.status == "iteration_limit" and "rank_max" not in r.message


@pytest.mark.parametrize("backend", ["numpy64", "gpu"])
@pytest.mark.parametrize("case", sorted(INFEASIBLE))
def test_infeasible(backend, case):
    p = Problem.from_inequalities(**INFEASIBLE[case])
    r = solve(p, method="matrix-free", backend=backend, eps=1e-8, max_iter=50)
    assert r.status == "infeasible" and r.message.startswith(MESSAGES[2])


@pytest.mark.parametrize("backend", ["numpy64", "gpu"])
@pytest.mark.parametrize("case", sorted(UNBOUNDED))
def test_unbounded(backend, case):
    p = Problem.from_inequalities(**UNBOUNDED[case])
    r = solve(p, method="matrix-free", backend=backend, eps=1e-8, max_iter=50)
    assert r.status == "unbounded"


def test_pcg_stops_are_reported_as_they_happened():
    """The message said "N solves stopped at the PCG iteration limit (200)" for every solve short
    of its tolerance, also for PCG breakdowns after 7 iterations. A G_R made indefinite breaks
    PCG down at its first step: every such solve is a breakdown after 0 iterations, none is at
    the limit, and the message, the counts and the history say so."""

    class Indefinite(NumpyMatrixFree):
        def normal_matvec(self, v):
            return -super().normal_matvec(v)

    p = Problem.from_inequalities([-1, -2], A_ub=[[1, 1], [1, 3]], b_ub=[4, 6])
    r = solve(p, method="matrix-free", backend=Indefinite(p), eps=1e-8, max_iter=3)
    assert r.pcg_unconverged > 0
    assert r.pcg_stops == {"limit": 0, "stall": 0, "breakdown": r.pcg_unconverged, "stalled": 0, "rounds": 0}
    assert "iteration limit" not in r.message and "rank_max" not in r.message
    assert (f"{r.pcg_unconverged} of the normal-equation solves stopped at a PCG breakdown" in r.message
            and "after 0 PCG iterations each" in r.message)
    assert all(h["pcg_stop"] == ("breakdown", "breakdown") for h in r.history[:-1])
    # the limit, as it happened: every such solve ran pcg_maxiter iterations
    g = gruca_like(64, seed=1)
    r = solve(g, method="matrix-free", backend="numpy64", eps=1e-8, rank=1, pcg_maxiter=2, max_iter=5)
    assert r.pcg_stops["limit"] == r.pcg_unconverged > 0 and r.pcg_stops["breakdown"] == 0
    for h in r.history[:-1]:
        for stop, its in zip(h["pcg_stop"], h["pcg_iterations"]):
            assert (stop == "limit") == (its == 2) and stop in ("limit", "converged")


def test_gpu_infeasible_lp_reports_its_pcg_stops_truly():
    """The hostile user's case: an infeasible LP on the GPU (A's two rows opposite, so G_R is
    numerically singular in float32). Whatever the renderer's rounding makes of PCG, the message
    names each reason that occurred with its count and no other."""
    p = Problem.from_inequalities(**INFEASIBLE["contradiction"])
    r = solve(p, method="matrix-free", backend="gpu")
    assert r.status == "infeasible"
    assert sum(r.pcg_stops.values()) == r.pcg_unconverged
    phrases = {"limit": "at the PCG iteration limit", "stall": "by PCG's stall stop", "breakdown": "at a PCG breakdown",
               "stalled": "no longer reduced the residual", "rounds": "refinement rounds"}
    for reason, n in r.pcg_stops.items():
        assert (phrases[reason] in r.message) == (n > 0), (reason, r.message)
    maxiter = max(200, min(4 * p.m, 2000))
    for h in r.history[:-1]:
        for stop, its in zip(h["pcg_stop"], h["pcg_iterations"]):
            assert stop != "limit" or its >= maxiter


def test_gpu_solve_reports_its_pcg_stall_stops_as_such():
    """scorpion (netlib-more) on the GPU: a combined solve ended by PCG's stall stop is "stall" in
    the history, not "limit" (on llvmpipe the stop near the target ends iteration 7's combined
    solve after 608 PCG iterations of its 1552). On every renderer: optimal within 1e-6 of
    HiGHS; each combined solve at "limit" ran its limit, and the stall stops are counted in
    pcg_stops and named in the message (with the PCG iterations they ran) exactly when there
    are some; on llvmpipe there is one, short of its limit."""
    p, ref = netlib_more("scorpion")
    r = solve(p, method="matrix-free", backend="gpu", eps=1e-6)
    assert r.status == "optimal" and abs(r.objective - ref) <= 1e-6 * abs(ref)
    steps = [h for h in r.history if h["pcg_stop"] is not None]
    stalls = [h for h in steps if h["pcg_stop"][1] == "stall"]
    assert all(h["pcg_iterations"][1] >= h["pcg_limit"] for h in steps if h["pcg_stop"][1] == "limit")
    n = sum(stop == "stall" for h in steps for stop in h["pcg_stop"])
    assert r.pcg_stops["stall"] == n
    assert ("by PCG's stall stop" in r.message) == (n > 0)
    if n:
        assert "PCG iterations" in r.message.split("by PCG's stall stop")[1]
    renderer = get_context().info.get("GL_RENDERER", "")
    if "llvmpipe" in renderer:
        assert stalls and any(h["pcg_iterations"][1] < h["pcg_limit"] for h in stalls)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("case", sorted(INFEASIBLE) + sorted(UNBOUNDED))
def test_infeasible_and_unbounded_results_have_no_point(method, case):
    """An infeasible matrix-free result had a finite x and objective (the iterate where the test
    fired), unlike the results the presolve decides (x None, objective NaN). Every infeasible or
    unbounded result of solve now has no point, whichever method and way found it; the
    matrix-free result keeps where its iteration stopped for start= (last_point)."""
    status = "infeasible" if case in INFEASIBLE else "unbounded"
    p = Problem.from_inequalities(**(INFEASIBLE[case] if case in INFEASIBLE else UNBOUNDED[case]))
    for presolve in (False, True):
        r = solve(p, method=method, backend="numpy64", eps=1e-8, max_iter=50, presolve=presolve)
        assert r.status == status, (presolve, r.message)
        assert r.x is None and r.x_std is None and r.y is None and r.s is None
        assert math.isnan(r.objective)
        if method == "matrix-free" and r.iterations:
            assert all(np.isfinite(v).all() for v in r.last_point)


def unbounded_lp(m, seed):
    """min c^T x, A x = b, x >= 0 with a ray d >= 0 (A d = 0, c^T d = -1) on m / 2 columns; A is
    sparse, random, of full row rank, n = 2 m; b = A x0 for an x0 > 0."""
    rng = np.random.default_rng(seed)
    n = 2 * m
    A = (sp.random(m, n, density=5 / m, random_state=np.random.RandomState(seed), format="csr")
         + sp.eye(m, n)).toarray()
    d = np.zeros(n)
    support = rng.choice(n, m // 2, replace=False)
    d[support] = rng.uniform(0.5, 1.5, support.size)
    j = support[0]
    A[:, j] = -(A @ d - A[:, j] * d[j]) / d[j]
    b = A @ rng.uniform(0.5, 1.5, n)
    c = rng.uniform(0.5, 1.5, n)
    c -= (c @ d + 1.0) / (d @ d) * d
    return Problem.from_arrays(sp.csr_matrix(A), b, c, name=f"unbounded{m}")


@pytest.mark.parametrize("seed", [0, 3])
def test_an_unbounded_lp_whose_iteration_stalls_is_unbounded(seed):
    """A well-scaled unbounded LP (HiGHS: unbounded; Mehrotra's method: unbounded) ended in
    numerical trouble with the matrix-free method: x ran along the ray, but the regularised steps
    shrank (to 1e-5) and the stall test fired before the ray test's ratio of 1e4 held. Once the
    iteration stalls the ray test decides at a ratio of 100."""
    p = unbounded_lp(100, seed)
    assert linprog_status(p) == 3
    assert solve(p, backend="numpy64", eps=1e-8, presolve=False).status == "unbounded"
    r = solve(p, method="matrix-free", backend="numpy64", eps=1e-8, adaptive=False)
    assert r.status == "unbounded", r.message
    assert "a primal ray: c^T x = -" in r.message and "The iteration had stalled" in r.message
    # with the adaptive defaults' safeguards the steps along the ray no longer shrink so: the ray
    # test holds at its own ratio, before any stall
    r = solve(p, method="matrix-free", backend="numpy64", eps=1e-8)
    assert r.status == "unbounded", r.message
    assert "a primal ray: c^T x = -" in r.message


def linprog_status(p):
    from scipy.optimize import linprog

    return linprog(p.c, A_eq=p.A, b_eq=p.b, method="highs").status


def test_numerical_trouble_says_when_the_objective_ran_away():
    """Where no ray test holds (a float32 PCG at its limit), the message still says that the LP
    may be unbounded when the primal objective ran far below every other objective value seen,
    and says nothing of the kind when the objectives meet (a stalled feasible LP)."""
    from gpgpu.lp.matrix_free import _ray_hint

    def hist(p0, d0, p1, d1):
        return [{"primal_objective": p0, "dual_objective": d0, "primal_residual": 1.0, "dual_residual": 1e-2},
                {"primal_objective": p1, "dual_objective": d1, "primal_residual": 1e-3, "dual_residual": 1e-2}]

    assert "may be unbounded" in _ray_hint(hist(359.0, 114.0, -9.7e5, 16.9))
    assert "may be infeasible" in _ray_hint(hist(1.0, -2.0, 3.0, 4e4))
    assert _ray_hint(hist(1.885e10, 0.0, 292.0, 308.0)) == ""          # modszk1's: a feasible LP's
    assert _ray_hint(hist(359.0, 114.0, -3e4, 16.9)) == ""


def test_tiny_problem_and_iteration_limit():
    p = Problem.from_inequalities([-1, -2], A_ub=[[1, 1], [1, 3]], b_ub=[4, 6])
    r = solve(p, method="matrix-free", backend="numpy64", eps=1e-10)
    assert r.status == "optimal"
    np.testing.assert_allclose(r.x, [3, 1], atol=1e-8)
    r = solve(p, method="matrix-free", backend="numpy64", eps=1e-10, max_iter=1)
    assert r.status == "iteration_limit" and r.iterations == 1


# --------------------------------------------------------------------------- bad input
def test_bad_options_are_named():
    p = Problem.from_inequalities([-1, -2], A_ub=[[1, 1], [1, 3]], b_ub=[4, 6])
    assert METHODS == ("mehrotra", "matrix-free")
    with pytest.raises(ValueError, match="unknown method 'cg'; choose one of mehrotra, matrix-free"):
        solve(p, method="cg")
    with pytest.raises(ValueError, match="runs on backend 'gpu' or 'numpy64', got 'numpy32'"):
        solve(p, method="matrix-free", backend="numpy32")
    for bad in (0, -3, 1.5, True):
        with pytest.raises(ValueError, match="rank must be a positive integer"):
            solve(p, method="matrix-free", backend="numpy64", rank=bad)
        with pytest.raises(ValueError, match="pcg_maxiter must be a positive integer"):
            solve(p, method="matrix-free", backend="numpy64", pcg_maxiter=bad)
        with pytest.raises(ValueError, match="stall_window must be a positive integer"):
            solve(p, method="matrix-free", backend="numpy64", stall_window=bad)
    with pytest.raises(ValueError, match="reg_min must be a positive number"):
        solve(p, method="matrix-free", backend="numpy64", reg_min=0.0)
    with pytest.raises(ValueError, match="reg_min must not exceed reg_max"):
        solve(p, method="matrix-free", backend="numpy64", reg_min=1e-1, reg_max=1e-3)
    with pytest.raises(ValueError, match="eps"):
        solve(p, method="matrix-free", backend="numpy64", eps=-1)
    for bad in (0, -3, 1.5, True, "wide"):
        with pytest.raises(ValueError, match="fold must be a positive integer"):
            solve(p, method="matrix-free", backend="gpu", fold=bad)
    with pytest.raises(ValueError, match="unknown matrix-free backend 'tpu'"):
        get_matrix_free_backend("tpu", p)
    with pytest.raises(TypeError):
        solve(p, method="matrix-free", backend="numpy64", colour="red")
    assert issubclass(NumpyMatrixFree, MatrixFreeBackend) and issubclass(GPUMatrixFree, MatrixFreeBackend)


# --------------------------------------------------------------------------- resuming (start=)
@pytest.mark.parametrize("name", ["afiro", "sc50b", "adlittle"])
def test_a_resumed_run_goes_on_as_the_uncut_one(name):
    """start=result passes the point where the cut run stopped and its regularisation's state:
    the resumed iterations are the uncut run's (afiro and sc50b had their regularisation cut
    before iteration 4: restarted at the point's mu instead, their next residuals were 0.3-0.7
    apart) and end at the same count."""
    p, _ = netlib(name)
    full = solve(p, method="matrix-free", backend="numpy64", eps=1e-8)
    cut = solve(p, method="matrix-free", backend="numpy64", eps=1e-8, max_iter=4)
    rest = solve(p, method="matrix-free", backend="numpy64", eps=1e-8, start=cut)
    assert full.status == rest.status == "optimal" and 4 + rest.iterations == full.iterations
    for a, b in zip(full.history[4:7], rest.history[:3]):
        for key in ("primal_residual", "dual_residual", "gap"):
            assert b[key] == pytest.approx(a[key], rel=1e-6), key
    assert rest.objective == pytest.approx(full.objective, rel=1e-9)


def test_a_resumed_run_keeps_the_rank_rank_max_had_grown():
    """With rank_max, k grows after failed PCG solves; start=result goes on with the grown k
    (restarted at rank, the resumed run took 2-4 more iterations than the uncut one)."""
    p, _ = netlib("adlittle")
    opts = dict(method="matrix-free", backend="numpy64", eps=1e-8, rank=1, rank_max=64, pcg_maxiter=5)
    full = solve(p, **opts)
    cut = solve(p, **opts, max_iter=4)
    assert cut.rank > 1
    rest = solve(p, **opts, start=cut)
    assert rest.history[0]["rank"] == cut.rank
    assert 4 + rest.iterations == full.iterations and rest.rank == full.rank
    for a, b in zip(full.history[4:7], rest.history[:3]):
        assert b["primal_residual"] == pytest.approx(a["primal_residual"], rel=1e-6)


@pytest.mark.parametrize("name", ["afiro", "sc50b"])
def test_a_run_resumed_from_a_saved_checkpoint_goes_on_as_the_uncut_one(name, tmp_path):
    """checkpoint(result) saved with numpy.savez and loaded in place of the result: the resumed
    iterations are the uncut run's, as with start=result; from the bare triple (no
    regularisation state) they are not, so the test sees a checkpoint that drops the state."""
    from gpgpu.lp.matrix_free import checkpoint

    p, _ = netlib(name)
    opts = dict(method="matrix-free", backend="numpy64", eps=1e-8)
    full = solve(p, **opts)
    # a cut where the state matters: the first at which the bare triple's next-but-one dual
    # residual is 10 % off the uncut run's (the proximal terms' cut state is then not mu's)
    for k in range(2, full.iterations - 2):
        cut = solve(p, **opts, max_iter=k)
        bare = solve(p, **opts, start=cut.last_point, max_iter=2)
        if abs(bare.history[1]["dual_residual"] / full.history[k + 1]["dual_residual"] - 1) > 0.1:
            break
    else:
        pytest.fail("the bare triple resumed as the uncut run at every cut: the test sees nothing")
    np.savez(tmp_path / "point.npz", **checkpoint(cut))
    with np.load(tmp_path / "point.npz") as saved:
        rest = solve(p, **opts, start=saved)
    assert full.status == rest.status == "optimal" and k + rest.iterations == full.iterations
    for a, b in zip(full.history[k:k + 3], rest.history[:3]):
        for key in ("primal_residual", "dual_residual", "gap"):
            assert b[key] == pytest.approx(a[key], rel=1e-6), key


def test_a_checkpoint_keeps_the_rank_rank_max_had_grown():
    from gpgpu.lp.matrix_free import checkpoint

    p, _ = netlib("adlittle")
    opts = dict(method="matrix-free", backend="numpy64", eps=1e-8, rank=1, rank_max=64, pcg_maxiter=5)
    cut = solve(p, **opts, max_iter=4)
    saved = checkpoint(cut)
    assert cut.rank > 1 and int(saved["rank"]) == cut.rank
    assert tuple(saved["regularisation_state"]) == cut.regularisation_state
    assert all(np.array_equal(a, b) for a, b in zip((saved["x"], saved["y"], saved["s"]), cut.last_point))
    rest = solve(p, **opts, start=saved, max_iter=1)
    assert rest.history[0]["rank"] == cut.rank


def test_checkpoints_are_checked():
    from gpgpu.lp.matrix_free import checkpoint

    p, _ = netlib("afiro")
    m, n = p.A.shape
    with pytest.raises(ValueError, match="last_point"):
        checkpoint(solve(p, backend="numpy64"))
    point = {"x": np.ones(n), "y": np.zeros(m), "s": np.ones(n)}
    cases = [({"x": point["x"], "y": point["y"]}, "missing s"),
             (dict(point, regularisation_state=np.array([1e-4])), "regularisation_state"),
             (dict(point, regularisation_state=np.array([1e-4, -1.0])), "regularisation_state"),
             (dict(point, rank=np.array(0)), "rank"),
             (dict(point, x=-point["x"]), "positive")]
    for start, match in cases:
        with pytest.raises(ValueError, match=match):
            solve(p, method="matrix-free", backend="numpy64", start=start)
    cut = solve(p, method="matrix-free", backend="numpy64", max_iter=4)
    point = dict(zip("xys", cut.last_point))        # the state is optional: then as a triple
    assert solve(p, method="matrix-free", backend="numpy64", start=point).status == "optimal"


@pytest.mark.parametrize("backend", ["numpy64", "gpu"])
def test_start_resumes_from_a_previous_result(backend):
    """Beyond 002: ``start`` continues from a result's point. adlittle (||b||_inf, ||c||_inf > 1,
    so the point is rescaled on the way in): cut at 4 iterations and resumed, it ends optimal
    against HiGHS, and the resumed history begins at the cut run's last residuals; resumed
    from the optimal point, it is optimal at iteration 0."""
    p, ref = netlib("adlittle")
    assert np.abs(p.b).max() > 1 and np.abs(p.c).max() > 1
    cut = solve(p, method="matrix-free", backend=backend, eps=1e-8, max_iter=4)
    assert cut.status == "iteration_limit" and cut.iterations == 4
    rest = solve(p, method="matrix-free", backend=backend, eps=1e-8, start=cut)
    assert rest.status == "optimal" and rel(rest.objective, ref) <= 1e-6
    last, first = cut.history[-1], rest.history[0]
    for key in ("primal_residual", "dual_residual", "gap", "mu"):
        assert first[key] == pytest.approx(last[key], rel=1e-9), key
    again = solve(p, method="matrix-free", backend=backend, eps=1e-8, start=(rest.x_std, rest.y, rest.s))
    assert again.status == "optimal" and again.iterations == 0
    assert again.objective == pytest.approx(rest.objective, rel=1e-12)


def test_start_is_checked():
    p, _ = netlib("afiro")
    m, n = p.A.shape
    x, y, s = np.ones(n), np.zeros(m), np.ones(n)
    cases = [((x[:-1], y, s), "shape"), ((x, y[:-1], s), "shape"), ((-x, y, s), "positive"),
             ((x, y, 0 * s), "positive"), ((x * np.nan, y, s), "finite"), ((x, y), "triple"),
             (3.0, "triple")]
    for start, match in cases:
        with pytest.raises(ValueError, match=match):
            solve(p, method="matrix-free", backend="numpy64", start=start)
    with pytest.raises(ValueError, match="matrix-free"):
        solve(p, backend="numpy64", start=(x, y, s))
    with pytest.raises(ValueError, match="scale"):
        solve(p, method="matrix-free", backend="numpy64", scale=True, start=(x, y, s))


def _hard_normal_system(rng, backend):
    """A back end holding a G_R (m = 120) that PCG with k = 1 does not solve in 60 iterations
    (Theta~ over four orders: its residual falls about 500-fold in 60), and a right-hand side.
    ``backend`` "gpu-unfused": the GPU's planned PCG in 002's kernels (``fused=False``)."""
    p = small_lp(rng, m=120, n=300, density=0.05)
    be = (GPUMatrixFree(p, fused=False) if backend == "gpu-unfused" else get_matrix_free_backend(backend, p))
    theta = 10.0 ** rng.uniform(-2, 2, p.A.shape[1])
    be.set_weights(theta, 1e-6)
    be.build_preconditioner(1)
    G = normal_matrix(p.A.toarray(), theta, 1e-6)
    return be, G, rng.standard_normal(p.A.shape[0])


@pytest.mark.parametrize("backend", ["numpy64", "gpu"])
def test_pcg_soft_limit_stops_at_the_first_read_past_it_where_the_residual_is_enough(rng, backend):
    """pcg(..., soft=(limit, enough)): past ``limit`` iterations PCG stops at the first read whose
    residual is at most ``enough`` (not converged), and never before ``limit``; without ``soft``
    it runs to ``maxiter``. The trajectory is the unsoftened one's (the same iterations cut at
    other counts), and the reported residual is the float64 ||b - G x|| of the answer (float32
    on the GPU: to 1e-3). Catches a soft test that never stops, one that stops before the limit,
    and (GPU, reads every 8 iterations) a missing read at the soft limit itself."""
    be, G, b = _hard_normal_system(rng, backend)
    bv = be.vector(b)

    def run(maxiter, soft=None):
        out = pcg(be, bv, 0.0, maxiter, soft=soft)
        x = be.to_numpy(out["x"])
        true = float(np.linalg.norm(b - G @ x))
        assert out["residual"] == pytest.approx(true, rel=1e-3 if backend == "gpu" else 1e-8)
        return out

    full = run(60)
    assert full["iterations"] == 60 and not full["converged"]
    # stopped at the soft limit itself (10: not a multiple of the GPU's 8) when anything is enough
    early = run(60, soft=(10, math.inf))
    assert early["iterations"] == 10 and not early["converged"]
    # nothing is enough: as without soft
    assert run(60, soft=(10, 0.0))["iterations"] == 60
    # enough = the residual 40 iterations reach: stops at the first read at or past 10 whose
    # residual (the unsoftened trajectory's) is at most that
    every = be.pcg_check
    reads = sorted({j for j in range(10, 61) if j % every == 0 or j in (10, 60)})
    residual_at = {j: run(j)["residual"] for j in reads}
    enough = residual_at[40] * (1 + 1e-6)
    expect = next(j for j in reads if residual_at[j] <= enough)
    assert 10 < expect <= 60
    got = run(60, soft=(10, enough))
    assert got["iterations"] == expect and got["residual"] <= enough
    be.release()


def test_a_refinement_round_that_raises_the_residual_is_reported_as_it_is(monkeypatch):
    """_Solver.solve with refinement: a round after which the float64 residual is no lower ends
    the solve ("stalled"), and the solve's relative residual (the history's ``pcg_residual``) is
    that of the answer it returns, not the lower one before the round. PCG is a stub here that
    converges each round: the first takes 0.9 of the residual away, the second adds twice it
    back (the float64 residual 0.1, then 0.3 of the right-hand side's)."""
    import gpgpu.lp.matrix_free as mf

    p = small_lp(np.random.default_rng(0))
    be = NumpyMatrixFree(p)
    theta = np.ones(p.A.shape[1])
    be.set_weights(theta, 1e-3)
    G = normal_matrix(p.A.toarray(), theta, 1e-3)
    shares = iter([0.9, -2.0])

    def stub(be_, r, tol, maxiter, soft=None):
        return {"x": next(shares) * np.linalg.solve(G, r), "iterations": 10, "converged": True,
                "breakdown": False, "residual": 0.0}

    monkeypatch.setattr(mf, "pcg", stub)
    sol = mf._Solver(be, p.A.tocsr(), p.A.T.tocsr(), refine=True, maxiter=1000, rounds=8)
    sol.set_weights(theta, 1e-3, 1)
    rhs = np.random.default_rng(1).standard_normal(p.A.shape[0])
    dy, facts = sol.solve(rhs, 1e-12)
    assert facts["rounds"] == 2 and facts["iterations"] == 20 and facts["stop"] == "stalled"
    true = np.linalg.norm(rhs - G @ dy) / np.linalg.norm(rhs)
    assert true == pytest.approx(0.3, rel=1e-6)
    assert facts["residual"] == pytest.approx(true, rel=1e-9)


def test_solve_with_refinement_goes_on_past_a_soft_stop_that_the_float64_residual_does_not_confirm(monkeypatch):
    """_Solver.solve with refinement and ``soft``: a PCG round stopped at the soft limit (its own,
    float32, residual enough) is followed by another round on the float64 residual while that
    residual is above ``enough`` and falls, within ``maxiter`` PCG iterations in all; without
    ``soft`` the first round stopped before its tolerance ends the solve, as before. PCG is a
    stub here that takes half the float64 residual away a round in 10 iterations, so the
    float64 residual after j rounds is 0.5^j of the right-hand side's."""
    import gpgpu.lp.matrix_free as mf

    p = small_lp(np.random.default_rng(0))
    be = NumpyMatrixFree(p)
    theta = np.ones(p.A.shape[1])
    be.set_weights(theta, 1e-3)
    G = normal_matrix(p.A.toarray(), theta, 1e-3)

    def stub(be_, r, tol, maxiter, soft=None):
        return {"x": 0.5 * np.linalg.solve(G, r), "iterations": 10, "converged": False, "breakdown": False,
                "residual": 0.0}

    monkeypatch.setattr(mf, "pcg", stub)
    sol = mf._Solver(be, p.A.tocsr(), p.A.T.tocsr(), refine=True, maxiter=1000, rounds=50)
    sol.set_weights(theta, 1e-3, 1)
    rhs = np.random.default_rng(1).standard_normal(p.A.shape[0])
    n0 = float(np.linalg.norm(rhs))
    _, once = sol.solve(rhs, 1e-12, soft=None)
    assert once["rounds"] == 1 and once["stop"] == "limit" and not once["converged"]
    # enough = 0.1 ||rhs||: 0.5^4 = 0.0625 is the first at or below it
    _, facts = sol.solve(rhs, 1e-12, soft=(10, 0.1 * n0))
    assert facts["rounds"] == 4 and facts["iterations"] == 40 and facts["stop"] == "limit"
    assert facts["residual"] == pytest.approx(0.5 ** 4, rel=1e-6)
    # the cap: 20 PCG iterations in all allow two rounds
    _, capped = sol.solve(rhs, 1e-12, maxiter=20, soft=(10, 0.1 * n0))
    assert capped["rounds"] == 2 and capped["iterations"] == 20
    # a round ended by PCG's stall stop ends the solve: another would meet the same conditioning
    monkeypatch.setattr(mf, "pcg", lambda *a, **k: {**stub(*a, **k), "stalled": True})
    _, stalled = sol.solve(rhs, 1e-12, soft=(10, 0.1 * n0, 5))
    assert stalled["rounds"] == 1 and stalled["stop"] == "stall" and not stalled["converged"]
    # each round's limit: the soft limit less the iterations done, enough scaled, the spans kept
    seen = []
    monkeypatch.setattr(mf, "pcg", lambda be_, r, tol, maxiter, soft=None: seen.append((maxiter, soft)) or stub(
        be_, r, tol, maxiter, soft))
    sol.solve(rhs, 1e-12, maxiter=100, soft=(15, 0.1 * n0, 7, 3))
    assert [(mi, s.limit, s.span, s.near_span) for mi, s in seen] == [(100, 15, 7, 3), (90, 5, 7, 3), (80, 0, 7, 3),
                                                                       (70, 0, 7, 3)]
    assert all(math.log2(s.enough / (0.1 * n0)).is_integer() for _, s in seen)   # power-of-two scales


def test_soft_stop_decisions():
    """SoftStop, by hand: nothing stops before the limit; past it a residual at most ``enough``
    stops; with a span, the first check past the limit marks the best residual, and a check
    ``span`` or more iterations after the mark stops (``stalled``) unless the best residual has
    fallen below half the mark's -- then it is the new mark. Without a span (a pair, or None:
    the plain limit) no stall."""
    from gpgpu.lp.matrix_free_backend import PCG_STALL_FALL, SoftLimit, SoftStop

    assert PCG_STALL_FALL == 0.5
    plain = SoftStop(None, 50)
    assert (plain.limit, plain.enough) == (50, math.inf)
    assert not plain.stops(49, 1.0, 1.0) and plain.stops(50, 1e300, 1.0)
    pair = SoftStop((10, 0.1), 100)
    assert not pair.stops(9, 0.01, 0.01)                 # before the limit: enough does not stop it
    assert not any(pair.stops(it, 1.0, 1.0) for it in range(10, 100, 8)) and not pair.stalled
    assert pair.stops(98, 0.1, 0.1) and not pair.stalled
    st = SoftStop(SoftLimit(10, 0.01, 20), 1000)
    # mark at 10 (best 1.0); at 30 the best 0.49 has halved: new mark (30, 0.49)
    assert [st.stops(it, b, b) for it, b in ((10, 1.0), (18, 0.8), (29, 0.5), (30, 0.49))] == [False] * 4
    assert st.mark == (30, 0.49)
    # at 49 (19 past the mark) no decision; at 50 the best 0.25 is above 0.245: stalled
    assert not st.stops(49, 0.3, 0.25) and not st.stalled
    assert st.stops(50, 0.3, 0.25) and st.stalled
    # the best norm decides the stall, the check's residual the enough test
    st = SoftStop(SoftLimit(0, 0.01, 4), 1000)
    assert not st.stops(0, 1.0, 1.0) and not st.stops(4, 2.0, 0.4) and st.mark == (4, 0.4)
    assert st.stops(8, 0.005, 0.4) and not st.stalled
    # halved exactly is halved: a new mark, no stall
    st = SoftStop(SoftLimit(0, 0.01, 4), 1000)
    assert not st.stops(0, 1.0, 1.0) and not st.stops(4, 0.5, 0.5) and st.mark == (4, 0.5) and not st.stalled
    assert SoftLimit(10, 2.0, 3).after(4, 0.5) == SoftLimit(6, 1.0, 3)
    assert SoftLimit(10, 2.0, 3).after(40, 1.0).limit == 0
    assert SoftLimit(10, 2.0, 3, 7).after(4, 0.5) == SoftLimit(6, 1.0, 3, 7)


def test_soft_stop_near_the_target_decisions():
    """The stall stop near the target, by hand: before the limit, with near_span and toward a
    target of 0.1 (PCG_NEAR = 10: within 1.0), checks whose best residual is above 1.0 mark
    nothing; the first at or below it marks; a check near_span or more after the mark stops
    (``stalled``) unless the best has halved -- then it is the new mark. Without near_span, or
    with target 0, nothing stops before the limit; past the limit the limit's tests decide."""
    from gpgpu.lp.matrix_free_backend import PCG_NEAR, SoftLimit, SoftStop

    assert PCG_NEAR == 10.0
    st = SoftStop(SoftLimit(100, 0.0, 0, 20), 1000, 0.1)
    assert [st.stops(it, b, b) for it, b in ((0, 5.0), (8, 1.01), (16, 1.0))] == [False] * 3
    assert st.near_mark == (16, 1.0)
    assert not st.stops(35, 0.6, 0.6) and not st.stalled            # 19 past the mark: no decision
    assert not st.stops(36, 0.5, 0.5) and st.near_mark == (36, 0.5)  # halved: the next mark
    assert not st.stops(50, 0.3, 0.3)
    assert st.stops(56, 0.3, 0.26) and st.stalled                   # 0.26 > 0.25: stalled
    for soft, target in ((SoftLimit(100, 0.0, 0, 0), 0.1), (SoftLimit(100, 0.0, 0, 20), 0.0)):
        st = SoftStop(soft, 1000, target)
        assert not any(st.stops(it, 0.05, 0.05) for it in range(0, 100, 4)) and not st.stalled
    st = SoftStop(SoftLimit(10, 0.0, 0, 4), 1000, 0.1)             # past the limit: no span, no stall
    assert not st.stops(0, 1.0, 1.0) and not any(st.stops(it, 0.9, 0.9) for it in range(10, 200, 4))


@pytest.mark.parametrize("backend", ["numpy64", "gpu", "gpu-unfused"])
def test_pcg_stall_stop_ends_a_solve_whose_residual_does_not_halve(rng, backend, monkeypatch):
    """pcg with soft = (limit, enough, span): on the hard system (its residual falls about 500-fold
    in 60 iterations, never 20-fold in 14) with the stall share patched to 1/20 the solve stops
    at the first read ``span`` or more past the first read at or past the limit, ``stalled``,
    not converged, with the best residual of the reads; the same when that read is maxiter's
    (every loop says ``stalled``); with a share of 0.999 (any fall passes) it runs to maxiter.
    The reads are every iteration on numpy64 and every 8th (and the limit) on the GPU: the span
    14 puts the stop at 24 from a mark at the limit, 10, and at 32 from the next read, 16.
    Catches a stall test never run, one run before the limit, no read at the limit, one that
    compares with the check's residual before the mark's, and a stalled solve not reported."""
    import gpgpu.lp.matrix_free_backend as mfb

    be, G, b = _hard_normal_system(rng, backend)
    bv = be.vector(b)
    monkeypatch.setattr(mfb, "PCG_STALL_FALL", 0.05)
    out = pcg(be, bv, 0.0, 60, soft=(10, 0.0, 14))
    assert out["iterations"] == 24 and out["stalled"] and not out["converged"] and not out["breakdown"]
    x = be.to_numpy(out["x"])
    assert out["residual"] == pytest.approx(float(np.linalg.norm(b - G @ x)), rel=1e-8 if backend == "numpy64" else 1e-3)
    be.free(out["x"])
    last = pcg(be, bv, 0.0, 26, soft=(10, 0.0, 16))        # the stall falls on maxiter's read
    assert last["iterations"] == 26 and last["stalled"]
    be.free(last["x"])
    monkeypatch.setattr(mfb, "PCG_STALL_FALL", 0.999)
    out = pcg(be, bv, 0.0, 60, soft=(10, 0.0, 14))
    assert out["iterations"] == 60 and not out["stalled"]
    be.free(out["x"])
    be.release()


@pytest.mark.parametrize("backend", ["numpy64", "gpu", "gpu-unfused"])
def test_pcg_stall_stop_near_the_target_ends_a_solve_before_its_limit(rng, backend, monkeypatch):
    """pcg with soft = (limit, enough, span, near_span): on the hard system (never 20-fold in 14
    iterations) with the stall share patched to 1/20 and PCG_NEAR to 1000, a target of ||b|| /
    1000 puts ||b|| itself within PCG_NEAR times it: the first read marks, and the first read
    14 or more iterations later stops the solve, ``stalled``, not converged, long before the
    limit 50: at 15 on numpy64 (a read an iteration from iteration 1), at 16 on the GPU (reads
    at 0, 1 and every 8th);
    the reported residual is the answer's. With near_span 0 the solve runs to maxiter 40.
    Catches a near stall never tested, one tested against the check's residual instead of
    the best, and a target not passed to the decisions (PCG_NEAR times 0 marks nothing)."""
    import gpgpu.lp.matrix_free_backend as mfb

    be, G, b = _hard_normal_system(rng, backend)
    bv = be.vector(b)
    monkeypatch.setattr(mfb, "PCG_STALL_FALL", 0.05)
    monkeypatch.setattr(mfb, "PCG_NEAR", 1000.0)
    target = float(np.linalg.norm(b)) / 1000 * (1 + 1e-6)
    out = pcg(be, bv, target, 40, soft=(50, 0.0, 0, 14))
    assert out["iterations"] == (15 if backend == "numpy64" else 16)
    assert out["stalled"] and not out["converged"] and not out["breakdown"]
    x = be.to_numpy(out["x"])
    assert out["residual"] == pytest.approx(float(np.linalg.norm(b - G @ x)), rel=1e-8 if backend == "numpy64" else 1e-3)
    assert out["residual"] < np.linalg.norm(b)
    be.free(out["x"])
    out = pcg(be, bv, target, 40, soft=(50, 0.0, 0, 0))
    assert out["iterations"] == 40 and not out["stalled"] and not out["converged"]
    be.free(out["x"])
    be.release()


def test_float_float_solution_after_the_first_pcg_limit():
    """The GPU back end's ``solution=None`` (the default): PCG's solution vector is float32 until
    the first iteration with a solve stopped at its limit, float-float from the next iteration on
    (the history's ``pcg_solution``); ``solution="float32"`` and the paper preset keep float32;
    a checkpoint carries the widening into a resumed run. afiro with k = 1 and 20 PCG iterations
    a solve (the adaptive rule's test) stops at the limit from its third iteration."""
    from gpgpu import float_float
    from gpgpu.lp.matrix_free import checkpoint

    if not float_float.available():
        pytest.skip("no GL_ARB_gpu_shader5: no float-float")
    p, _ = netlib("afiro")
    opts = dict(method="matrix-free", backend="gpu", eps=1e-8, rank=1, pcg_maxiter=20, max_iter=8)
    for extra, widens in (({}, True), ({"solution": "float32"}, False), ({"preset": "paper"}, False)):
        r = solve(p, **opts, **extra)
        steps = [h for h in r.history if h["pcg_stop"] is not None]
        first = next(i for i, h in enumerate(steps) if {"limit", "stall"} & set(h["pcg_stop"]))
        assert all(h["pcg_solution"] == "float32" for h in r.history[:first + 1]), extra
        later = {h["pcg_solution"] for h in r.history[first + 1:]}
        assert later == ({"float-float"} if widens else {"float32"}), extra
    cut = solve(p, **opts)
    rest = solve(p, **opts, start=checkpoint(cut))
    assert rest.history[0]["pcg_solution"] == "float-float"
    assert solve(p, method="matrix-free", backend="numpy64", max_iter=2).history[0]["pcg_solution"] is None


def test_residual_aware_limit_is_asked_of_a_float32_pcg_only(monkeypatch):
    """The combined direction's solve on a float32 PCG (the GPU) with the default limit L: PCG may
    run to 8 L, stopping past L where its residual is at most 10 times the primal part of its
    target (``soft``; the history's ``pcg_limit`` L and ``pcg_cap`` 8 L), unless the primal
    finishing rule gives it 8 L outright; the predictor keeps L. A float64 PCG (numpy64), a
    ``pcg_maxiter`` given and the paper preset never get a soft limit."""
    import gpgpu.lp.matrix_free as mf

    calls = []
    inner = mf._Solver.solve

    def spy(self, rhs, tol, maxiter=None, soft=None, rel=None, start=None):
        calls.append((self.maxiter if maxiter is None else maxiter, soft, tol))
        return inner(self, rhs, tol, maxiter, soft, rel, start)

    monkeypatch.setattr(mf._Solver, "solve", spy)
    p, ref = netlib("afiro")
    L = max(200, min(4 * p.A.shape[0], 2000))
    seen = set()
    for backend, options in (("gpu", {}), ("gpu", {"pcg_maxiter": 300}), ("gpu", {"preset": "paper"}),
                             ("numpy64", {})):
        limit = options.get("pcg_maxiter", L)
        per_iteration = []

        def take(h):
            per_iteration.append((h, list(calls)))
            calls.clear()

        calls.clear()
        r = solve(p, method="matrix-free", backend=backend, eps=1e-6, callback=take, **options)
        assert r.status == "optimal" and rel(r.objective, ref) <= 1e-6
        per_iteration[0][1][:2] = []                      # the starting point's two solves
        for h, solves in per_iteration[:-1]:
            (pred_max, pred_soft, _), (comb_max, comb_soft, comb_tol), *_ = solves
            assert (pred_max, pred_soft) == (limit, None)
            fires = not options and h["primal_residual"] > max(1e-6, h["dual_residual"], h["gap"])
            aware = backend == "gpu" and not options and not fires
            if aware:
                assert comb_max == 8 * limit and comb_soft[0] == limit
                assert comb_soft.span == limit // 2             # PCG's stall stop: its span half the limit
                # 10 times the primal part of the target: at least 10 times the target itself
                assert comb_soft[1] >= 10 * comb_tol * (1 - 1e-12)
            else:
                assert comb_soft is None and comb_max == (8 * limit if fires else limit)
            assert (h["pcg_limit"], h["pcg_cap"]) == ((limit, 8 * limit) if aware else (comb_max, comb_max))
            seen.add((backend, aware))
    assert seen == {("gpu", True), ("gpu", False), ("numpy64", False)}


def test_the_paper_preset_stores_a_as_t_ell_with_the_dense_rows_apart(monkeypatch):
    """The matrix-free paper preset draws A as the nearest the pipeline has to 002's DHTELL2:
    T-ELL with the dense rows and columns split off. The GPU back end it builds for a Gruca-like
    LP (one full row and one full column among rows of sqrt(N) + 1 non-zeros) holds A, its
    transposed copy and A∘A in format "tell", with that row and column in the dense part; the
    preset's answer is HiGHS's objective within the float32 PCG's accuracy, and the same run
    with ELLPACK takes the same number of interior point iterations (the formats' sums differ
    by float32 rounding at most). Its vectors lie in one texture row; the defaults fold them
    128 wide."""
    built = []
    real_init = GPUMatrixFree.__init__

    def spy(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        built.append((self.A.format, self.A.dense_rows.tolist(), self.A.dense_cols.tolist(),
                      self.AT.format, self.AT.dense_rows.tolist(), self.A2.format, self.fold, self.theta.shape))

    monkeypatch.setattr(GPUMatrixFree, "__init__", spy)
    N = 64
    p = gruca_like(N, seed=0, slack=True)                 # A = [A0 I]: row N and column N are A0's full ones
    assert p.A.tocsr()[N].nnz == N + 2 and p.A.tocsc()[:, N].nnz == N + 1
    r = solve(p, method="matrix-free", backend="gpu", preset="paper")
    assert r.status == "optimal"
    n = p.A.shape[1]
    assert n > 128                                        # the default fold would fold theta
    assert built[-1] == ("tell", [N], [N], "tell", [N], "tell", None, (1, n))   # vectors in one row, as 002's
    assert rel(r.objective, highs_objective(p)) < 1e-5
    e = solve(p, method="matrix-free", backend="gpu", preset="paper", format="ellpack")
    assert built[-1][0] == "ellpack" and e.status == "optimal"
    d = solve(p, method="matrix-free", backend="gpu")
    assert built[-1][6:] == (128, (-(-n // 128), 128)) and d.status == "optimal"   # the defaults fold 128 wide
    assert abs(e.iterations - r.iterations) <= 1


def test_rhs_scale_puts_the_two_magnitudes_about_one():
    """rhs_scale (beyond 002): the power of two 2^s with 2^4s ||r||^2 sum r_i^2 / G_ii = 1 to
    within the rounding of s (a factor 2^2 either way); G_R's entries of 1e30 and ||r|| of 1e-3
    give r^T z near 1e-34 unscaled, near 1e-15 scaled (||r||^2 near 1e15); no r, or no usable diagonal, fall back."""
    from gpgpu.lp.matrix_free import rhs_scale
    r = np.full(50, 1e-3)
    diag = np.full(50, 1e30)
    scale = rhs_scale(r, diag)
    s = math.log2(scale)
    assert s == int(s) and s > 0                                   # a power of two, upward
    rr, gamma = r @ r, np.sum(r ** 2 / diag)
    assert 0.25 <= scale ** 4 * rr * gamma <= 4.0
    assert 1e-17 < scale ** 2 * gamma < 1e-13 and 1e13 < scale ** 2 * rr < 1e17    # 1e-15 and 1e15
    # huge r over tiny G_ii: downward
    assert rhs_scale(np.full(4, 1e10), np.full(4, 1e-10)) < 1.0
    # no diagonal: ||r||^2 alone goes to 1; zero diagonal entries are left out
    assert rhs_scale(np.full(4, 2.0 ** -20), None) == 2.0 ** 19
    half = np.where(np.arange(50) < 25, 0.0, 1e30)          # gamma from the 25 usable entries, ||r||^2 from all
    assert rhs_scale(r, half) == 2.0 ** round(-0.25 * math.log2(rr * np.sum(r[25:] ** 2 / 1e30)))
    # nothing to scale, and the clamp at 2^+-120
    assert rhs_scale(np.zeros(5), diag[:5]) == 1.0
    assert rhs_scale(np.full(5, 1e-300), np.full(5, 1e300)) == 2.0 ** 120


def test_the_rhs_scale_changes_no_digit_of_a_float64_solve(monkeypatch):
    """The scale is a power of two: numpy64's whole solve (x, y, s, objective, status, the
    history of every iteration) is the same bit for bit with the scale and with 2^0."""
    import gpgpu.lp.matrix_free as mf
    runs = []
    for scaled in (True, False):
        if not scaled:
            monkeypatch.setattr(mf, "rhs_scale", lambda r, diagonal: 1.0)
        seen = []
        res = solve("afiro", method="matrix-free", backend="numpy64", eps=1e-8, callback=lambda e: seen.append(e))
        runs.append((res, seen))
    (a, ca), (b, cb) = runs
    assert a.status == b.status == "optimal" and a.iterations == b.iterations
    for name in ("x", "y", "s"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert a.objective == b.objective and a.pcg_iterations == b.pcg_iterations
    keys = ("mu", "pcg_iterations", "pcg_residual", "alpha_pri", "alpha_dual")
    assert [[e.get(k) for k in keys] for e in a.history] == [[e.get(k) for k in keys] for e in b.history]
    assert len(ca) == len(cb) == len(a.history)


def test_the_fold_widens_where_the_layouts_or_the_planes_would_not_fit():
    """fitting_fold: 128 doubled until rows(m) x max(longest row, 256 planes) and rows(n) x the
    longest column fit the texture: nug20 (rows of 20, columns of 40, m = 15240, n = 72600) at
    128 in 32768 (120 x 256, 568 x 40) and 256 in 16384 (120 x 256 and 568 x 40 do not fit); nug30
    (m = 52260, columns of 60) at 1024 and 2048 (the columns); nug12 (m = 3192) in 4096 at 256,
    for the planes alone (25 x 256 = 6400; its columns, 70 x 24, fit at 128); a full row longer
    than the texture: no fold."""
    from gpgpu.lp.api import read_named
    from gpgpu.lp.matrix_free_gpu import fitting_fold
    nug20, nug30 = read_named("nug20").A, read_named("nug30").A
    assert [fitting_fold(128, nug20, L) for L in (32768, 16384)] == [128, 256]
    assert [fitting_fold(128, nug30, L) for L in (32768, 16384)] == [1024, 2048]
    assert fitting_fold(64, nug20, 32768) == 128 and fitting_fold(512, nug20, 32768) == 512
    assert fitting_fold(128, read_named("nug12").A, 4096) == 256
    full = sp.vstack([sp.csr_matrix(np.ones((1, 4096))), sp.eye(10, 4096, format="csr")]).tocsr()
    assert fitting_fold(128, full, 2048) is None


def test_nug20_builds_on_any_renderer_and_a_rank_past_the_planes_is_named():
    """nug20's back end builds with the default fold on this renderer (its width from
    fitting_fold: 256 on llvmpipe, where 128 would not hold A^T's layout), its vectors so folded;
    a rank whose planes of the folded vectors would not fit a texture is refused naming the fix."""
    from gpgpu.context import max_texture_size
    from gpgpu.lp.api import read_named
    from gpgpu.lp.matrix_free_gpu import fitting_fold
    p = read_named("nug20")
    be = GPUMatrixFree(p)
    try:
        assert be.fold == fitting_fold(128, p.A) and be.fold is not None
        assert (be.rows, be.width) == (-(-15240 // be.fold), be.fold)
        assert be.theta.shape == (-(-72600 // be.fold), be.fold)
        be.set_weights(np.ones(72600), 1e-2)
        too_many = max_texture_size() // be.rows + 1
        with pytest.raises(ValueError, match=f"rank of at most {too_many - 1}, or fold=None"):
            be.build_preconditioner(too_many)
    finally:
        be.release()
