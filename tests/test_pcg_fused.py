"""The fused PCG of the matrix-free method (gpgpu.lp.matrix_free_fused.FusedPCG, GPUMatrixFree's
``fused=True``): paper 002's PCG on G_R = A Theta~ A^T + delta I with the partial Cholesky
preconditioner of 002 (7)-(8), in seven passes an iteration.

Everything is compared with references written here in float64 numpy, from the definitions and
not from the code's formulas:

* the parts made once a preconditioner (``FusedPCG.prepare``): X = C^-1, F = G[:, K] G11^-1,
  the pivots' slots, 002's B = G[:, K] C^-T and E = C^-1 placed at K, D_S^-1, and P^-1 r from
  P = [L11 0; L21 I] diag(D_L, D_S) [L11 0; L21 I]^T;
* whole solves against a float64 PCG with that P (same stop, iteration counts within float32's
  reach, the answer's true residual and its distance from G_R^-1 b), with float32 and float-float
  solution vectors, on vectors in one texture row and folded into several;
* the fused solve against the older planned loop (``fused=False``), and its passes an iteration;
* pcg's contract: b = 0, maxiter = 0, a target out of reach, the soft limit, a breakdown;
* an LP solved end to end, against HiGHS (scipy.optimize.linprog).

The problems are small (m = 45 rows, n = 110 columns: m > 32 and not a multiple of 32, so the
inner products add several chunks of 32 and a partial one; n > 32 too), and one with m = 1100 whose
chunks are 34 entries long (max(32, ceil(sqrt(m)))).
"""
import numpy as np
import pytest
import scipy.sparse as sp

from gpgpu import counters, float_float, stream
from gpgpu.lp import Problem, solve
from gpgpu.lp.matrix_free import pcg
from gpgpu.lp.matrix_free_fused import CHECK_LAG, FusedPCG, chunk_length
from gpgpu.lp.matrix_free_gpu import GPUMatrixFree

M, N, K_RANK, DELTA = 45, 110, 7, 1e-2

needs_ff = pytest.mark.skipif(not float_float.available(), reason="float-float needs GL_ARB_gpu_shader5")


# --------------------------------------------------------------------------- float64 references
def random_lp(m, n, seed, density=0.12):
    """A = a random sparse matrix + [I 0] (full row rank), b = A x0 with x0 in [0.5, 1.5] (feasible),
    c > 0 (bounded below by 0)."""
    rng = np.random.default_rng(seed)
    A = sp.random(m, n, density=density, random_state=np.random.RandomState(seed), format="csr")
    A = (A + sp.eye(m, n, format="csr")).tocsr()
    x0 = rng.uniform(0.5, 1.5, n)
    c = rng.uniform(0.5, 2.0, n)
    return Problem.from_arrays(A, A @ x0, c, name=f"random{m}x{n}")


def normal_matrix(A, theta, delta):
    A = A.toarray() if sp.issparse(A) else np.asarray(A)
    return A @ np.diag(theta) @ A.T + delta * np.eye(A.shape[0])


def top_diagonal(G, k):
    """002's pivots: the k largest diagonal entries of G, in increasing order of their index."""
    return np.sort(np.argsort(-np.diag(G), kind="stable")[:k])


def partial_cholesky_P(G, K):
    """002 (7)-(8) as a matrix: with K first, G11 = L11 D_L L11^T (unit lower L11),
    L21 = G21 L11^-T D_L^-1, D_S = diag(G22 - L21 D_L L21^T) and
    P = [L11 0; L21 I] diag(D_L, D_S) [L11 0; L21 I]^T, put back in G's order."""
    m, k = G.shape[0], len(K)
    order = np.concatenate([K, np.setdiff1d(np.arange(m), K)])
    Gp = G[np.ix_(order, order)]
    R = np.linalg.cholesky(Gp[:k, :k])              # R R^T = G11, R lower
    DL = np.diag(R) ** 2
    L11 = R / np.diag(R)                            # unit lower triangle: column j of R / R_jj
    L21 = np.linalg.solve(L11, Gp[:k, k:]).T / DL   # G21 L11^-T D_L^-1
    DS = np.diag(Gp[k:, k:]) - np.einsum("ij,j,ij->i", L21, DL, L21)
    L = np.eye(m)
    L[:k, :k], L[k:, :k] = L11, L21
    Pp = L @ np.diag(np.concatenate([DL, DS])) @ L.T
    P = np.empty_like(Pp)
    P[np.ix_(order, order)] = Pp
    return P, DS, order[k:]


def pcg64(G, P, b, target, maxiter):
    """Textbook PCG (x0 = 0) in float64, every iteration checked: stops when ||r|| <= target or
    after maxiter iterations. Answers x, the iterations, converged, and the residual norms ||r_j|| of every iterate."""
    x = np.zeros_like(b)
    r = b.copy()
    norms = [np.linalg.norm(r)]
    if norms[0] <= target or maxiter < 1:
        return {"x": x, "iterations": 0, "converged": norms[0] <= target, "norms": norms}
    z = np.linalg.solve(P, r)
    p = z.copy()
    rz = r @ z
    it = 0
    while it < maxiter:
        q = G @ p
        alpha = rz / (p @ q)
        x = x + alpha * p
        r = r - alpha * q
        it += 1
        norms.append(np.linalg.norm(r))
        if norms[-1] <= target:
            return {"x": x, "iterations": it, "converged": True, "norms": norms}
        z = np.linalg.solve(P, r)
        rz, rz_old = r @ z, rz
        p = z + rz / rz_old * p
    return {"x": x, "iterations": it, "converged": False, "norms": norms}


# --------------------------------------------------------------------------- set-ups
@pytest.fixture(scope="module")
def system():
    """The m = 45, n = 110 LP's matrix, weights in e^[-2, 2], G_R in float64, a right-hand side."""
    p = random_lp(M, N, seed=3)
    rng = np.random.default_rng(11)
    theta = np.exp(rng.uniform(-2, 2, N))
    G = normal_matrix(p.A, theta, DELTA)
    b = rng.standard_normal(M)
    return p, theta, G, b


@pytest.fixture(params=[None, 16, 3], ids=["one-row", "folded16", "folded3"])
def fold(request, monkeypatch):
    """None: every vector in one texture row. 16: vectors folded 16 wide (m = 45 in 3 rows with a
    tail of 3, n = 110 in 7 rows): each plane of a stack spans several texture rows. 3: the six
    curvature sums below y (four of the n entries' chunks, two of the m's) span two rows, and a
    group of four sums crosses from one row to the next."""
    if request.param:
        monkeypatch.setattr(stream, "FOLD_WIDTH", request.param)
    return request.param


def backend(p, theta, delta, k, **kw):
    be = GPUMatrixFree(p, **kw)
    be.set_weights(theta, delta)
    be.build_preconditioner(k)
    return be


def solve_on(be, b, target, maxiter, soft=None):
    """pcg on the back end; the answer's x read back (float64) and freed."""
    bv = be.vector(b)
    res = pcg(be, bv, target, maxiter, soft=soft)
    x = res.pop("x")
    res["x"] = be.to_numpy(x)
    be.free(x)
    be.free(bv)
    return res


def stack_planes(be, S, k):
    """The k planes of a stack (each folded as a vector of length m) as a k x m array."""
    a = S.to_array().reshape(k * be.rows, be.width)
    return np.stack([a[c * be.rows:(c + 1) * be.rows].reshape(-1)[:be.m] for c in range(k)])


def stack_planes4(be, S, k):
    """The k planes of an RGBA stack, four a plane (plane c in component c % 4 of plane c // 4),
    as a k x m array; and the components past the k-th (which must hold zeros)."""
    k4 = -(-k // 4)
    a = S.to_array().reshape(k4 * be.rows, be.width, 4)
    planes = [a[b * be.rows:(b + 1) * be.rows].reshape(-1, 4)[:be.m] for b in range(k4)]
    full = np.concatenate(planes, axis=1)            # m x 4 k4, column 4 b + l = plane 4 b + l
    return full[:, :k].T, full[:, k:]


# --------------------------------------------------------------------------- 1. the preconditioner
@pytest.mark.parametrize("k", [1, K_RANK])
def test_fused_preconditioner_parts_equal_float64(system, fold, k):
    """After build_preconditioner(k): the pivots are the k largest entries of diag(G_R);
    X = C^-1 (G11 = C C^T) and F = G[:, K] G11^-1 (off K: its rows at K are never read) to float32 rounding;
    the slots are c at K_c and -1 elsewhere; B = G[:, K] C^-T and E = C^-1 at K (G11 = C C^T) and D_S^-1; P^-1 r
    (``precondition``, 002's passes on B and E) is the float64 partial Cholesky preconditioner's,
    and so is the fused form w off K, X^T X r_K - F^T w at K with the GPU's X and F."""
    p, theta, G, b = system
    be = backend(p, theta, DELTA, k)
    try:
        assert be._fused is not None and be._fused.ready
        assert (be.rows, be.width) == ((1, M) if fold is None else (-(-M // fold), fold))
        K = be._kpos.to_array().reshape(-1)[:k].astype(int)
        np.testing.assert_array_equal(K, top_diagonal(G, k))
        G11inv = np.linalg.inv(G[np.ix_(K, K)])
        cond = np.linalg.cond(G[np.ix_(K, K)])
        # X: k x k, X(row j, col l) = (C^-1)_jl, lower triangular (zeros above: the pivots'
        # sums run over whole rows and columns of it)
        Xg = be._fused.X.to_array().reshape(k, k).astype(np.float64)
        Xref = np.linalg.inv(np.linalg.cholesky(G[np.ix_(K, K)]))
        np.testing.assert_array_equal(np.triu(Xg, 1), 0.0)
        assert np.abs(Xg - Xref).max() <= 2e-6 * np.sqrt(cond) * np.abs(Xref).max()
        # F: plane j = column j of G[:, K] G11^-1 off K. (Its rows at K are never used: w is 0
        # there. The column stack leaves delta out, so they hold I - delta G11^-1, not I.)
        P, DS, rest = partial_cholesky_P(G, K)
        Fref = G[:, K] @ G11inv
        F, past = stack_planes4(be, be._fused.F, k)
        F = F.T
        np.testing.assert_array_equal(past, 0.0)          # the components past the k-th plane
        assert np.abs(F[rest] - Fref[rest]).max() <= 2e-6 * cond * np.abs(Fref).max()
        # the slots: c at entry K_c, -1 elsewhere
        slot = be._fused.slot.to_array().reshape(-1)[:M]
        want = np.full(M, -1.0)
        want[K] = np.arange(k)
        np.testing.assert_array_equal(slot, want)
        # 002's B and E (be.pre[0], be.pre[1]) made by plane_mix with X = C^-1: plane c of B is
        # column c of G[:, K] C^-T (off K; at K unused, as F's); plane c of E is row c of C^-1
        # placed at K
        C = np.linalg.cholesky(G[np.ix_(K, K)])
        X = np.linalg.inv(C)
        Bref = G[:, K] @ X.T
        Eref = np.zeros((M, k))
        Eref[K] = X.T
        Bg = stack_planes(be, be.pre[0], k).T
        Eg = stack_planes(be, be.pre[1], k).T
        assert np.abs(Bg[rest] - Bref[rest]).max() <= 2e-6 * cond * np.abs(Bref).max()
        assert np.abs(Eg - Eref).max() <= 2e-6 * cond * np.abs(Eref).max()
        # D_S^-1: 1 / the Schur complement's diagonal off K, 0 at K
        dinv = be.to_numpy(be.pre[2])
        np.testing.assert_array_equal(dinv[K], 0.0)
        np.testing.assert_allclose(dinv[rest], 1.0 / DS, rtol=1e-4)
        rng = np.random.default_rng(5)
        for _ in range(2):
            r = rng.standard_normal(M)
            ref = np.linalg.solve(P, r)
            # the fused form (module notes) in float64 with the reference's parts is P^-1 r
            w = np.zeros(M)
            w[rest] = (r - Fref @ r[K])[rest] / DS
            fused_form = w.copy()
            fused_form[K] = G11inv @ r[K] - Fref.T @ w
            np.testing.assert_allclose(fused_form, ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())
            # ... and with the GPU's X, F and D_S^-1 (float32 parts) it stays P^-1 r
            wg = dinv * (r - F @ r[K])                        # 0 at K: F's rows there unused
            zg = wg.copy()
            zg[K] = Xg.T @ (Xg @ r[K]) - F.T @ wg
            assert np.abs(zg - ref).max() <= 2e-5 * np.abs(ref).max()
            rv = be.vector(r)
            z = be.precondition(rv)
            got = be.to_numpy(z)
            be.free(z)
            be.free(rv)
            assert np.abs(got - ref).max() <= 2e-5 * np.abs(ref).max()
    finally:
        be.release()


# --------------------------------------------------------------------------- 1b. an ill-conditioned G11
def test_fused_pivots_part_of_gamma_when_g11_is_ill_conditioned():
    """Two nearly equal heavy rows of A among the pivots: G11's condition is about 4e6 (its
    smallest pivot just above the guard's 1e-6 of its diagonal entry: nothing replaced), as
    nug15's near its optimum. For b = G[:, K] v (so r - F r_K = 0 off K, w = 0, and gamma =
    b^T P^-1 b = v^T G11 v: the pivots' part alone), v near G11's top eigenvector, the first
    iteration's gamma (the scalars' texel) is float64's to 1e-3 (measured 1e-5 on llvmpipe):
    u1 = C^-1 b_K and ||u1||^2. Through H = G11^-1 formed in float32 (b_K^T H b_K) its rounding,
    about eps32 ||H||, swamps the value: measured 0.90 to 1.007 times float64's for these four
    on llvmpipe (a planted H fails), and negative on an H100 at nug15 (a PCG breakdown)."""
    rng = np.random.default_rng(21)
    A = random_lp(M, N, seed=3).A.toarray()
    A[0] *= 30.0
    A[1] = A[0]
    A[1, np.flatnonzero(A[0])[0]] *= 1.0 + 2.2e-3           # nearly equal: one entry apart
    theta = np.exp(rng.uniform(-1, 1, N))
    x0 = rng.uniform(0.5, 1.5, N)
    p = Problem.from_arrays(sp.csr_matrix(A), A @ x0, rng.uniform(0.5, 2.0, N), name="pair")
    delta = 1e-8
    G = normal_matrix(p.A, theta, delta)
    K = top_diagonal(G, K_RANK)
    G11 = G[np.ix_(K, K)]
    pivots = np.diag(np.linalg.cholesky(G11)) ** 2 / np.diag(G11)
    assert {0, 1} <= set(K) and pivots.min() > 1e-6 and np.linalg.cond(G11) > 3e6
    P, _, _ = partial_cholesky_P(G, K)
    top = np.linalg.eigh(G11)[1][:, -1]
    be = GPUMatrixFree(p)
    try:
        be.set_weights(theta, delta)
        assert be.build_preconditioner(K_RANK)["replaced"] == 0 and be._fused.ready
        np.testing.assert_array_equal(be._kpos.to_array().reshape(-1)[:K_RANK].astype(int), K)
        f = be._fused
        for t in range(4):
            v = top + 0.3 * t * rng.standard_normal(K_RANK)
            b = G[:, K] @ v
            bv = be.vector(b)
            f._start(bv)
            f._step()                                  # r = b: the first iteration's gamma
            gamma = float(f.streams.scalars[0].to_array().reshape(-1)[1])
            be.free(bv)
            assert gamma == pytest.approx(b @ np.linalg.solve(P, b), rel=1e-3)
    finally:
        be.release()


# --------------------------------------------------------------------------- 2. a whole solve
@pytest.mark.parametrize("check", [1, 8])
@pytest.mark.parametrize("solution", ["float32", pytest.param("float-float", marks=needs_ff)])
def test_fused_solve_follows_float64_pcg(system, fold, solution, check):
    """Fused solves against float64 PCG with the same P, to 1e-3 ||b|| (where float32's iterates
    still follow float64's: iteration counts within one with pcg_check = 1, or float64's rounded
    up to the next check with 8) and to 1e-5 ||b|| (where float32 has drifted: measured two
    iterations more than float64, as a float32 numpy PCG). Both converge; the reported residual
    meets the target, the answer's true residual (float64, b - G_R x) is within float32's drift
    of it, and x is G_R^-1 b to cond(G_R) times the target; seven passes an iteration (and a
    copy of the iterate at a check), CHECK_LAG iterations drawn past the check that stops."""
    p, theta, G, b = system
    be = backend(p, theta, DELTA, K_RANK, solution=solution, pcg_check=check)
    try:
        assert be._fused.ready and be.plan
        K = be._kpos.to_array().reshape(-1)[:K_RANK].astype(int)
        P, _, _ = partial_cholesky_P(G, K)
        xstar = np.linalg.solve(G, b)
        cond = np.linalg.cond(G)
        for rel_target, slack in ((1e-3, 1), (1e-5, 4)):
            target = rel_target * np.linalg.norm(b)
            ref = pcg64(G, P, b, target, 500)
            assert ref["converged"] and 10 <= ref["iterations"] <= 100     # the partial P does iterate
            with counters.tally() as t:
                res = solve_on(be, b, target, 500)
            assert res["converged"] and not res["breakdown"]
            its = res["iterations"]
            if check == 1:
                assert abs(its - ref["iterations"]) <= slack
            else:
                assert its % 8 == 0
                assert ref["iterations"] - slack <= its < ref["iterations"] + slack + 8
            assert res["residual"] <= target
            x = res["x"]
            true = np.linalg.norm(b - G @ x)
            assert true <= 1.2 * target
            assert abs(true - res["residual"]) <= 0.2 * target
            bound = 2 * cond * rel_target * np.linalg.norm(xstar)
            assert np.linalg.norm(x - xstar) <= bound
            assert np.linalg.norm(x - ref["x"]) <= bound
            # seven passes an iteration, CHECK_LAG iterations past the deciding check, a copy of
            # the iterate at each check drawn, x0 and r0 = b, the answer's copy
            checks = its + 1 + CHECK_LAG if check == 1 else its // 8 + 3
            assert t.passes <= 7 * (its + 1 + CHECK_LAG) + checks + 3
    finally:
        be.release()


@needs_ff
def test_fused_float_float_solution_keeps_what_float32_loses(fold):
    """Theta~ from e^-8 to e^8: x is large where theta is small and PCG's late steps are far below
    an ulp of it. The float32 x leaves the true residual (float64) far above the recurrence's; the
    float-float x (hi + lo) keeps the steps, several times closer. Its low parts are non-zero and
    below half an ulp of the high parts (a normalised float-float)."""
    p = random_lp(60, 150, seed=8, density=0.15)
    rng = np.random.default_rng(4)
    theta = np.exp(rng.uniform(-8, 8, 150))
    G = normal_matrix(p.A, theta, 1e-4)
    b = rng.standard_normal(60)
    true = {}
    for solution in ("float32", "float-float"):
        be = backend(p, theta, 1e-4, 3, solution=solution)
        try:
            bv = be.vector(b)
            res = pcg(be, bv, 0.0, 300)
            assert res["residual"] < 1e-6 * np.linalg.norm(b)       # the recurrence converged
            if solution == "float-float":
                assert res["x"].components == 4
                a = res["x"].to_array().reshape(-1, 4)[:60].astype(np.float64)
                hi, lo = a[:, 0], a[:, 1]
                assert np.count_nonzero(lo) >= 30
                assert (np.abs(lo) <= 0.5 * np.spacing(np.abs(hi).astype(np.float32)).astype(np.float64)).all()
            x = be.to_numpy(res["x"])
            true[solution] = np.linalg.norm(b - G @ x) / np.linalg.norm(b)
            be.free(res["x"])
        finally:
            be.release()
    # measured 1.6e-5 against 9.9e-5; a float-float x that lost its low parts is float32's
    assert true["float-float"] < 0.3 * true["float32"]


@pytest.mark.parametrize("fold", [None, 128], ids=["one-row", "folded128"])
def test_fused_solve_with_long_chunks(fold):
    """m = 1100, n = 2300: the inner products' chunks are max(32, ceil(sqrt(m))) = 34 entries (33
    chunks, the last of 12) and 48 for n; vectors in one texture row (``fold=None``) or folded
    128 wide (the back end's default: 9 rows for m with a tail of 76, 18 for n with 124), so
    that a chunk crosses rows. Eight iterations (target 0)
    are float64 PCG's eighth iterate to float32 rounding, and a solve to 1e-4 ||b|| stops near
    where float64's does, its answer's true residual at the target."""
    m, n = 1100, 2300
    assert chunk_length(m) == 34 and m % 34 and chunk_length(n) == 48
    p = random_lp(m, n, seed=21, density=0.002)
    rng = np.random.default_rng(9)
    theta = np.exp(rng.uniform(-2, 2, n))
    G = normal_matrix(p.A, theta, DELTA)
    b = rng.standard_normal(m)
    be = backend(p, theta, DELTA, 4, pcg_check=1, fold=fold)
    try:
        assert (be.rows, be.width) == ((1, m) if fold is None else (9, 128))
        assert be.theta.shape == ((1, n) if fold is None else (18, 128))
        K = be._kpos.to_array().reshape(-1)[:4].astype(int)
        np.testing.assert_array_equal(K, top_diagonal(G, 4))
        P, _, _ = partial_cholesky_P(G, K)
        ref = pcg64(G, P, b, 0.0, 8)
        res = solve_on(be, b, 0.0, 8)
        assert res["iterations"] == 8 and not res["converged"]
        assert np.linalg.norm(res["x"] - ref["x"]) <= 1e-4 * np.linalg.norm(ref["x"])
        assert res["residual"] == pytest.approx(ref["norms"][8], rel=1e-3)
        target = 1e-4 * np.linalg.norm(b)
        ref = pcg64(G, P, b, target, 300)
        res = solve_on(be, b, target, 300)
        assert ref["converged"] and res["converged"]
        # preconditioned cond ~250: float32's iterates drift from float64's after ~30 iterations
        # (measured 62 against 60, and ||r_30|| 7% apart); a tenth of the count allowed
        assert abs(res["iterations"] - ref["iterations"]) <= 0.1 * ref["iterations"]
        assert np.linalg.norm(b - G @ res["x"]) <= 1.5 * target
    finally:
        be.release()


def test_fused_build_factors_g11_four_steps_a_pass(system):
    """The build factors G11 with its inverse four Cholesky steps a pass (FACTOR_STEPS):
    ceil(7 / 4) = 2 ``cholesky_inverse_steps`` passes for k = 7 (the last one three steps), no
    one-step pass; the parts it makes are checked against float64 above."""
    from gpgpu.cholesky import KERNELS as CH, STEPS_KERNELS
    from gpgpu.lp.matrix_free_fused import FACTOR_STEPS

    p, theta, G, b = system
    be = GPUMatrixFree(p)
    try:
        be.set_weights(theta, DELTA)
        with counters.count(time=False) as c:
            be.build_preconditioner(K_RANK)
        assert FACTOR_STEPS == 4
        assert c.passes(STEPS_KERNELS[4].label) == 2 and c.passes(CH["cholesky_inverse_step"].label) == 0
    finally:
        be.release()


# --------------------------------------------------------------------------- 3. fused and planned
def test_fused_and_planned_agree_and_fused_draws_seven_passes(system):
    """Six iterations (target 0) of the fused and of the planned loop (fused=False) are float64
    PCG's sixth iterate to float32 rounding, and each other's; to a target both converge within an
    iteration of each other. The fused iteration draws seven passes (here each sparse product is one
    pass, the weights and the curvature sums in A's): with pcg_check = 1000 (no check between the
    second iteration and the last) a solve of 20 iterations draws 70 more than one of 10; the
    planned loop more than twice as many."""
    p, theta, G, b = system
    out, passes = {}, {}
    K = None
    for fused in (True, False):
        be = backend(p, theta, DELTA, K_RANK, fused=fused, pcg_check=1)
        try:
            assert (be._fused is not None) == fused
            K = be._kpos.to_array().reshape(-1)[:K_RANK].astype(int)
            out[fused] = solve_on(be, b, 0.0, 6)
            out[fused, "target"] = solve_on(be, b, 1e-5 * np.linalg.norm(b), 500)
        finally:
            be.release()
        be = backend(p, theta, DELTA, K_RANK, fused=fused, pcg_check=1000)  # checks: 0, 1, the last
        try:
            counts = []
            for maxiter in (10, 20):
                bv = be.vector(b)
                with counters.tally() as t:
                    res = pcg(be, bv, 0.0, maxiter)
                assert res["iterations"] == maxiter and not res["converged"]
                be.free(res["x"])
                be.free(bv)
                counts.append(t.passes)
            passes[fused] = counts
        finally:
            be.release()
    P, _, _ = partial_cholesky_P(G, K)
    ref = pcg64(G, P, b, 0.0, 6)
    scale = np.linalg.norm(ref["x"])
    for fused in (True, False):
        assert out[fused]["iterations"] == 6
        assert np.linalg.norm(out[fused]["x"] - ref["x"]) <= 1e-4 * scale
        assert out[fused]["residual"] == pytest.approx(ref["norms"][6], rel=1e-3)
    assert np.linalg.norm(out[True]["x"] - out[False]["x"]) <= 1e-4 * scale
    a, c = out[True, "target"], out[False, "target"]
    assert a["converged"] and c["converged"] and abs(a["iterations"] - c["iterations"]) <= 1
    assert np.linalg.norm(a["x"] - c["x"]) <= 1e-3 * np.linalg.norm(a["x"])
    # seven passes an iteration, a few more a solve (x0 and r0 = b, a copy of the iterate at each
    # of the three checks, the answer's); the iteration at the limit is drawn for its update and
    # residual, and none past it (the checks are decided at once there)
    assert passes[True][1] - passes[True][0] == 10 * 7
    assert passes[True][0] == 7 * 11 + 2 + 3 + 1
    assert passes[False][1] - passes[False][0] > 2 * (passes[True][1] - passes[True][0])


@pytest.mark.parametrize("column", [True, False], ids=["rows-and-column", "rows"])
@pytest.mark.parametrize("fold", [None, 16])
def test_fused_with_a_dense_part_is_float64_pcg_in_nine_passes(monkeypatch, fold, column):
    """Where A has dense rows (two, full) and dense columns (two, full, crossing them), each of the
    iteration's two products adds the dense part in the sparse part's pass, after one pass that
    draws its dense rows' inner products in chunks (of 32, n = 110 in four chunks, the last of
    14, or m = 45 in two for A^T's dense rows), and A's pass draws the curvature sums below its
    y: nine passes an iteration (20 iterations draw 90 more than 10); with the dense rows alone
    A^T has no dense row and its product adds its dense columns in its own pass: eight. Six
    iterations are float64 PCG's sixth iterate with the same P (002 (7)-(8) on the same
    pivots) to float32 rounding, folded 16 wide or not."""
    if fold:
        monkeypatch.setattr(stream, "FOLD_WIDTH", fold)
    rng = np.random.default_rng(7)
    A = random_lp(M, N, seed=5).A.tolil()
    for i in (4, 30):
        A[i, :] = rng.uniform(0.5, 2.0, N) * rng.choice([-1.0, 1.0], N)
    if column:
        for j in (60, 75):
            A[:, j] = rng.uniform(0.5, 2.0, (M, 1))
    A = A.tocsr()
    p = Problem.from_arrays(A, A @ rng.uniform(0.5, 1.5, N), rng.uniform(0.5, 2.0, N), name="dense45x110")
    theta = np.exp(rng.uniform(-2, 2, N))
    G = normal_matrix(A, theta, DELTA)
    b = rng.standard_normal(M)
    be = backend(p, theta, DELTA, K_RANK, dense=30, pcg_check=1000)
    try:
        assert be._fused is not None
        assert [int(i) for i in be.A.dense_rows] == [4, 30]
        assert [int(j) for j in be.A.dense_cols] == ([60, 75] if column else [])
        K = be._kpos.to_array().reshape(-1)[:K_RANK].astype(int)
        got = solve_on(be, b, 0.0, 6)
        counts = []
        for maxiter in (10, 20):
            bv = be.vector(b)
            with counters.tally() as t:
                res = pcg(be, bv, 0.0, maxiter)
            be.free(res["x"])
            be.free(bv)
            counts.append(t.passes)
        # the last iteration's FSAX: y = A Theta~ u (its sparse part drawn with the sums below
        # it, then the dense part), and below the sparse part's y the sums of theta u^2 and p^2
        s = be._fused.streams
        u = s.u.to_array().astype(np.float64)[:N]
        pv = s.p[0].to_array().astype(np.float64)[:M]
        y = s.y.to_array().astype(np.float64)[:M]
        c = s.curvature
        below = np.frombuffer(c.texture.read(), np.float32).reshape(c.rows, c.cols)[be.rows:].astype(np.float64)
        below = below.reshape(-1)
        theta32 = theta.astype(np.float32).astype(np.float64)
    finally:
        be.release()
    scaled = (theta32 * u).astype(np.float32).astype(np.float64)
    assert np.abs(y - A @ scaled).max() <= 1e-5 * (abs(A) @ abs(scaled)).max()
    assert below[:s.n_chunks].sum() == pytest.approx(theta32 @ u ** 2, rel=1e-5)
    assert below[s.m_first:s.m_first + s.m_chunks].sum() == pytest.approx(pv @ pv, rel=1e-5)
    P, _, _ = partial_cholesky_P(G, K)
    ref = pcg64(G, P, b, 0.0, 6)
    assert np.linalg.norm(got["x"] - ref["x"]) <= 1e-4 * np.linalg.norm(ref["x"])
    assert got["residual"] == pytest.approx(ref["norms"][6], rel=1e-3)
    assert counts[1] - counts[0] == 10 * (9 if column else 8)


# --------------------------------------------------------------------------- 4. the contract
@pytest.mark.parametrize("check", [1, 8])
def test_fused_contract_paths(system, check):
    """pcg's contract on the fused path: b = 0 converges at iteration 0 with x = 0 (even to target
    0); b within the target likewise; maxiter = 0 draws nothing; a target out of reach in 3
    iterations stops there, not converged, with the reported residual the true one of the answer;
    x is the best checked iterate."""
    p, theta, G, b = system
    be = backend(p, theta, DELTA, K_RANK, pcg_check=check)
    try:
        assert be._fused.ready
        bnorm = np.linalg.norm(b)
        for target in (0.0, 1e-6):
            res = solve_on(be, np.zeros(M), target, 50)
            assert res["converged"] and res["iterations"] == 0 and not res["breakdown"]
            assert res["residual"] == 0.0
            np.testing.assert_array_equal(res["x"], 0.0)
        res = solve_on(be, b, 1.01 * bnorm, 50)                  # b itself within the target
        assert res["converged"] and res["iterations"] == 0
        assert res["residual"] == pytest.approx(bnorm, rel=1e-5)
        np.testing.assert_array_equal(res["x"], 0.0)
        with counters.count(time=False) as c:
            res = solve_on(be, b, 1e-3 * bnorm, 0)
        assert res["iterations"] == 0 and not res["converged"] and not res["breakdown"]
        assert res["residual"] == pytest.approx(bnorm, rel=1e-5)
        np.testing.assert_array_equal(res["x"], 0.0)
        # no iteration drawn: only ||b||'s inner product (its products, then the halving sums)
        assert c.passes() == c.passes("elementwise_product") + c.passes("sum_reduction")
        K = be._kpos.to_array().reshape(-1)[:K_RANK].astype(int)
        P, _, _ = partial_cholesky_P(G, K)
        ref = pcg64(G, P, b, 0.0, 3)
        for maxiter in (1, 3):
            res = solve_on(be, b, 1e-9 * bnorm, maxiter)
            assert not res["converged"] and not res["breakdown"] and res["iterations"] == maxiter
            true = np.linalg.norm(b - G @ res["x"])
            assert res["residual"] == pytest.approx(true, rel=1e-3)
            # the best of the checked iterates (1 and maxiter, 2 as well with check = 1)
            seen = [1, 2, 3] if check == 1 else [1, maxiter]
            best = min(ref["norms"][j] for j in seen if j <= maxiter)
            assert res["residual"] == pytest.approx(best, rel=1e-3)
    finally:
        be.release()


@pytest.mark.parametrize("check", [1, 8])
def test_fused_soft_limit(system, check):
    """soft = (limit, enough): the solve stops at the first check at or after the limit whose
    ||r|| <= enough, not converged. With enough huge that is the limit itself; with enough just
    above float64's ||r_j|| of some j > limit, the first check at or after that j (every
    iteration with pcg_check = 1; the multiples of 8 with 8)."""
    p, theta, G, b = system
    be = backend(p, theta, DELTA, K_RANK, pcg_check=check)
    try:
        K = be._kpos.to_array().reshape(-1)[:K_RANK].astype(int)
        P, _, _ = partial_cholesky_P(G, K)
        ref = pcg64(G, P, b, 0.0, 40)
        norms = np.array(ref["norms"])
        res = solve_on(be, b, 0.0, 100, soft=(3, 1e30))
        assert res["iterations"] == 3 and not res["converged"] and not res["breakdown"]
        assert res["residual"] == pytest.approx(norms[3], rel=1e-3)
        assert np.linalg.norm(b - G @ res["x"]) == pytest.approx(res["residual"], rel=1e-3)
        # an enough that float32 cannot misjudge: the first j > 4 where ||r_j|| drops below
        # enough = 0.8 ||r_{j-1}|| while every earlier norm from 3 is above enough / 0.9
        for j in range(5, 30):
            enough = 0.8 * norms[j - 1]
            if norms[j] <= 0.9 * enough and (norms[3:j] >= enough / 0.9).all():
                break
        else:
            pytest.fail("no clear drop in float64's residual norms")
        checks = [i for i in range(3, 101) if check == 1 or i % 8 == 0 or i == 3]
        expected = next(i for i in checks if i >= j and norms[i] <= enough)
        res = solve_on(be, b, 0.0, 100, soft=(3, enough))
        assert res["iterations"] == expected and not res["converged"]
        assert res["residual"] <= enough
        assert res["residual"] == pytest.approx(norms[expected], rel=1e-3)
    finally:
        be.release()


@pytest.mark.parametrize("check", [1, 8])
def test_fused_breakdown_on_an_indefinite_system(system, check):
    """A tenth of the weights negative (halved): G_R is indefinite while its diagonal, G11 (k = 3)
    and the Schur diagonal D_S stay positive (P is SPD, no pivot replaced or floored). Float64
    PCG meets p^T G_R p < 0 (clearly: -0.17 |p| |G p|) at iteration 5 with r^T z > 0 until then.
    The fused solve stops with ``breakdown``, not converged: at iteration 5 with pcg_check = 1
    (its residual the smallest of float64's first five), at the next check (8) with the watch
    between checks; x is an iterate whose true residual is the one reported."""
    p = system[0]
    rng = np.random.default_rng(15)
    theta = np.exp(rng.uniform(-2, 2, N))
    theta[rng.random(N) < 0.08] *= -0.5
    G = normal_matrix(p.A, theta, DELTA)
    b = rng.standard_normal(M)
    assert np.linalg.eigvalsh(G).min() < -1.0 and np.diag(G).min() > 0
    K = top_diagonal(G, 3)
    P, DS, rest = partial_cholesky_P(G, K)
    assert (DS > 1e-2 * np.diag(G)[rest]).all()
    # float64 PCG up to its breakdown
    x, r = np.zeros(M), b.copy()
    z = np.linalg.solve(P, r)
    d, rz = z.copy(), r @ z
    norms = [np.linalg.norm(r)]
    for j in range(50):
        q = G @ d
        if d @ q <= 0:
            break
        assert rz > 0
        alpha = rz / (d @ q)
        x, r = x + alpha * d, r - alpha * q
        norms.append(np.linalg.norm(r))
        z = np.linalg.solve(P, r)
        rz, rz_old = r @ z, rz
        d = z + rz / rz_old * d
    assert j == 5 and d @ q < -0.1 * np.linalg.norm(d) * np.linalg.norm(q)
    be = GPUMatrixFree(p, pcg_check=check)
    try:
        be.set_weights(theta, DELTA)
        info = be.build_preconditioner(3)
        assert info["replaced"] == 0 and be._fused.ready
        np.testing.assert_array_equal(be._kpos.to_array().reshape(-1)[:3].astype(int), K)
        res = solve_on(be, b, 0.0, 200)
        assert res["breakdown"] and not res["converged"]
        assert res["iterations"] == (5 if check == 1 else 8)
        assert np.isfinite(res["x"]).all()
        assert res["residual"] == pytest.approx(np.linalg.norm(b - G @ res["x"]), rel=1e-3)
        if check == 1:
            assert res["residual"] == pytest.approx(min(norms), rel=1e-3)
    finally:
        be.release()


@pytest.mark.parametrize("check", [1, 8])
def test_late_checks_decide_as_checks_read_at_once(system, monkeypatch, check):
    """CHECK_LAG: a check read four iterations late decides what it decides read at once (lag 0):
    the same iterations, converged and breakdown flags, residual, and bit for bit the same x
    (the held copy of the checked iterate), for a target met, maxiter reached, the soft limit
    and a breakdown (negative weights). A converged solve draws CHECK_LAG iterations past its
    check (none at maxiter or the soft limit, decided at once)."""
    import gpgpu.lp.matrix_free_fused as mff
    p, theta, G, b = system
    rng = np.random.default_rng(15)
    indefinite = np.exp(rng.uniform(-2, 2, N))
    indefinite[rng.random(N) < 0.08] *= -0.5
    b2 = rng.standard_normal(M)
    # a target met, maxiter reached, the soft limit, a breakdown, and ||b|| within the target with
    # maxiter 3: the checks 0 .. 3 all pending at the last, decided at once oldest first (0 stops)
    cases = [(theta, b, 1e-4 * np.linalg.norm(b), 500, None), (theta, b, 0.0, 13, None),
             (theta, b, 0.0, 100, (3, 1e30)), (indefinite, b2, 0.0, 200, None),
             (theta, b, 2 * np.linalg.norm(b), 3, None)]
    drawn = [0]
    step = FusedPCG._step
    monkeypatch.setattr(FusedPCG, "_step", lambda self: (drawn.__setitem__(0, drawn[0] + 1), step(self))[1])
    out = {}
    for lag in (0, 4):
        monkeypatch.setattr(mff, "CHECK_LAG", lag)
        for c, (weights, rhs, target, maxiter, soft) in enumerate(cases):
            be = GPUMatrixFree(p, pcg_check=check)
            try:
                be.set_weights(weights, DELTA)
                be.build_preconditioner(3 if c == 3 else K_RANK)
                drawn[0] = 0
                out[lag, c] = solve_on(be, rhs, target, maxiter, soft=soft), drawn[0]
            finally:
                be.release()
    for c in range(len(cases)):
        (now, n0), (late, n4) = out[0, c], out[4, c]
        assert {k: now[k] for k in ("iterations", "converged", "breakdown", "residual")} == \
            {k: late[k] for k in ("iterations", "converged", "breakdown", "residual")}
        np.testing.assert_array_equal(late["x"], now["x"])
        assert n0 == now["iterations"] + 1
        assert n4 == {0: n0 + 4, 3: n0 + 4, 4: 4}.get(c, n0)      # the last case: drawn up to maxiter
    assert out[0, 0][0]["converged"] and out[0, 1][0]["iterations"] == 13 and out[0, 2][0]["iterations"] == 3
    assert out[0, 3][0]["breakdown"]
    assert out[0, 4][0]["converged"] and out[0, 4][0]["iterations"] == 0


def test_the_checks_pixel_buffers_are_released(system, monkeypatch):
    """The CHECK_LAG + 1 pixel buffers of the checks go with the back end's release."""
    import moderngl

    p, theta, G, b = system
    released = []
    real = moderngl.Buffer.release
    monkeypatch.setattr(moderngl.Buffer, "release", lambda self: (released.append(self), real(self))[1])
    be = backend(p, theta, DELTA, K_RANK)
    reads = list(be._fused.streams.reads)
    assert len(reads) == CHECK_LAG + 1
    solve_on(be, b, 1e-3 * np.linalg.norm(b), 100)
    be.release()
    assert all(any(r is q for q in released) for r in reads)


# --------------------------------------------------------------------------- 5. an LP end to end
@pytest.fixture(scope="module")
def lp():
    from scipy.optimize import linprog

    p = random_lp(M, N, seed=5)
    ref = linprog(p.c, A_eq=p.A, b_eq=p.b, bounds=(0, None), method="highs")
    assert ref.status == 0
    return p, ref.fun


@pytest.mark.parametrize("fused", [True, False])
def test_lp_end_to_end(lp, monkeypatch, fused):
    """gpgpu.lp.solve(method="matrix-free", backend="gpu", eps=1e-6) with k = 8 of 45: optimal,
    HiGHS's objective to 1e-6; x >= 0 with A x = b, s >= 0 with A^T y + s = c, a small gap; the
    history an entry an iteration and one more, each given to the callback; with fused=True the
    solves went through FusedPCG.solve, with fused=False never."""
    p, ref = lp
    calls = []
    real = FusedPCG.solve
    monkeypatch.setattr(FusedPCG, "solve", lambda self, *a, **k: (calls.append(1), real(self, *a, **k))[1])
    seen = []
    r = solve(p, method="matrix-free", backend="gpu", eps=1e-6, rank=8, fused=fused, callback=seen.append)
    assert r.status == "optimal", r.message
    assert abs(r.objective - ref) <= 1e-6 * abs(ref)
    assert (len(calls) > 0) == fused
    A = p.A.toarray()
    x, y, s = r.x, r.y, r.s
    assert x.shape == (N,) and y.shape == (M,) and s.shape == (N,)
    assert np.isfinite(x).all() and np.isfinite(y).all() and np.isfinite(s).all()
    assert x.min() >= -1e-9 and s.min() >= -1e-9
    assert np.linalg.norm(A @ x - p.b) <= 1e-5 * (1 + np.linalg.norm(p.b))
    assert np.linalg.norm(A.T @ y + s - p.c) <= 1e-5 * (1 + np.linalg.norm(p.c))
    assert abs(p.c @ x - p.b @ y) <= 1e-5 * (1 + abs(ref))
    assert p.c @ x == pytest.approx(r.objective, rel=1e-9)
    assert len(seen) == len(r.history) == r.iterations + 1 and r.iterations >= 5
    assert all(a is b for a, b in zip(seen, r.history))
    assert all(h["rank"] == 8 for h in r.history[:-1])
    for h in r.history[:-1]:                       # the predictor's and the corrector's solves
        assert len(h["pcg_iterations"]) == 2 and all(0 < i <= 1000 for i in h["pcg_iterations"])
        assert set(h["pcg_stop"]) <= {"converged", "limit", "stall"}
    assert r.history[-1]["pcg_iterations"] is None
    assert 0 < sum(sum(h["pcg_iterations"]) for h in r.history[:-1]) <= r.pcg_iterations
    assert sum(h["pcg_converged"] is True for h in r.history[:-1]) >= r.iterations // 2


def test_afiro_fused_and_planned_reach_highs():
    """The shipped afiro (27 rows, k = 10): optimal with fused=True and with fused=False, both at
    HiGHS's objective (highspy on the MPS file) to 1e-6."""
    highspy = pytest.importorskip("highspy")
    from gpgpu.lp.netlib import netlib_path

    path = netlib_path("afiro")
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(path))
    h.run()
    ref = h.getInfo().objective_function_value
    for fused in (True, False):
        r = solve(str(path), method="matrix-free", backend="gpu", eps=1e-6, rank=10, fused=fused)
        assert r.status == "optimal", r.message
        assert abs(r.objective - ref) <= 1e-6 * abs(ref)


@pytest.mark.parametrize("k", [23, 37])
def test_fused_first_iteration_with_many_pivots(system, k):
    """k = 23 = 16 + 4 + 3 and 37 = 2 x 16 + 4 + 1: the pivots' loops of ``pcg_chunk_sums``
    (u1 = C^-1 r_K) and ``pcg_chunk_totals`` (X^T u1) take sixteen entries a round, then four,
    then one (k = 7 elsewhere runs the last two only). The first iteration's totals are float64's:
    z at K (P^-1 b there), gamma = b^T P^-1 b and ||b||^2."""
    p, theta, G, b = system
    be = backend(p, theta, DELTA, k)
    try:
        assert be._fused.ready
        K = be._kpos.to_array().reshape(-1)[:k].astype(int)
        np.testing.assert_array_equal(K, top_diagonal(G, k))
        P, _, _ = partial_cholesky_P(G, K)
        z = np.linalg.solve(P, b)
        f = be._fused
        bv = be.vector(b)
        f._start(bv)
        f._step()
        be.free(bv)
        totals = f.streams.totals[0].to_array().reshape(-1).astype(np.float64)
        cond = np.linalg.cond(G[np.ix_(K, K)])
        # measured on llvmpipe: 9e-7 and 8e-7 of max |z| (cond(G11) 44 and 84), 3e-7 and 9e-8
        assert np.abs(totals[:k] - z[K]).max() <= 1e-7 * cond * np.abs(z).max()
        assert totals[k] == pytest.approx(b @ z, rel=2e-6)
        assert totals[k + 2] == pytest.approx(b @ b, rel=1e-6)
    finally:
        be.release()
