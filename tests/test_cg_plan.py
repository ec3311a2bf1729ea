"""CG drawn from recorded plans, fan sums and the presets of gpgpu.cg: the same passes as drawn
one by one, the passes an iteration counted exactly, read-backs every k iterations without
harm past convergence, and what each preset implies."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spl

import gpgpu
from gpgpu import Stream, counters, stream
from gpgpu.blas1 import KERNELS as L1, whole
from gpgpu.cg import PRESETS
from gpgpu.kernel import Kernel
from gpgpu.passes import NotReplayable, RecordedPlan, recording
from gpgpu.reduce import dot_fan
from gpgpu.stream import borrow, give_back


def poisson2d(k):
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(k, k))
    return (sp.kron(sp.eye(k), T) + sp.kron(T, sp.eye(k))).tocsr()


def scipy_cg32_iterations(A, b, **kw):
    its = []
    x, info = spl.cg(A.astype(np.float32), b.astype(np.float32), callback=lambda xk: its.append(1), **kw)
    return x, len(its)


@pytest.fixture(scope="module")
def poisson64():
    A = poisson2d(64)                            # n = 4096: one texture row on every renderer
    b = np.random.default_rng(0).standard_normal(A.shape[0])
    return A, b, spl.spsolve(A.tocsc(), b)


def spd(n, rng):
    B = rng.standard_normal((n, n))
    return B @ B.T / n + 2 * np.eye(n)


def trace(fn):
    with counters.count(time=False, trace=True) as c:
        out = fn()
    return out, [(p.kernel, p.target, p.primitive, p.vertices) for p in c.trace]


# ---------------------------------------------------------------- the plan
@pytest.mark.parametrize("kw", [dict(preset="robust"), dict(preset="fast"),
                                dict(preset="fast", M="jacobi", recompute_every=5),
                                dict(preset="fast", iteration="standard"),
                                dict(preset="fast", iteration="standard", M="jacobi", recompute_every=5)])
def test_a_planned_solve_draws_the_passes_of_a_drawn_one(poisson64, kw):
    """The plan changes what Python does between the passes, not the passes: the same kernels on
    the same primitives into targets of the same shapes, in the same order, and so the same x
    bit for bit (the same programs on the same inputs)."""
    A, b, _ = poisson64
    kw = dict(kw)
    if kw.get("M") == "jacobi":
        kw["M"] = 1.0 / A.diagonal()
    planned, p_passes = trace(lambda: gpgpu.cg(A, b, rtol=1e-5, maxiter=40, **kw))
    drawn, d_passes = trace(lambda: gpgpu.cg(A, b, rtol=1e-5, maxiter=40, plan=False, **kw))
    # fast: 5 passes an iteration (single-reduction), 9 with iteration="standard"
    assert p_passes == d_passes and len(p_passes) > 40 * (9 if kw.get("iteration") == "standard" else 5)
    np.testing.assert_array_equal(planned[0], drawn[0])
    assert planned.iterations == drawn.iterations == 40


def test_a_recorded_plan_owns_its_temporaries_and_takes_dynamic_uniforms():
    """The borrowed temporary of the recorded passes goes back to the pool and is overwritten
    there; the plan draws into a stream of its own, so a run still computes from its inputs. A
    dynamic uniform takes each run's value."""
    x = Stream.vector_of(8, data=np.arange(8, dtype=np.float32))
    out = Stream.vector_of(8)
    scale = L1["scale"]
    with recording() as noted:
        tmp = borrow(1, 8)
        scale.draw(tmp, whole(tmp), {"X": x}, {"alpha": 2.0})
        L1["copy"].draw(out, whole(out), {"A": tmp})
        give_back(tmp)
    plan = RecordedPlan(noted, keep=[out], dynamic=[(scale, "alpha")])
    try:
        assert len(plan) == 2 and len(plan.temporaries) == 1 and plan.temporaries[0] is not tmp
        again = borrow(1, 8)                      # the pool hands the recorded temporary out again
        L1["fill"].draw(again, whole(again), uniforms={"value": 99.0})
        plan.run({(scale, "alpha"): 3.0})
        np.testing.assert_array_equal(out.to_array().ravel(), 3.0 * np.arange(8))
        np.testing.assert_array_equal(again.to_array().ravel(), 99.0)   # not drawn into
        give_back(again)
        plan.run()                                # the last value stays
        np.testing.assert_array_equal(out.to_array().ravel(), 3.0 * np.arange(8))
    finally:
        plan.release()
        x.release()
        out.release()


def test_a_copy_to_texture_pass_is_not_replayable():
    x = Stream.vector_of(4, data=np.ones(4, dtype=np.float32))
    y = Stream.vector_of(4)
    try:
        with recording() as noted:
            L1["copy"].draw(y, whole(y), {"A": x}, transfer="ctt")
        with pytest.raises(NotReplayable, match="copy-to-texture"):
            RecordedPlan(noted)
    finally:
        x.release()
        y.release()


# ---------------------------------------------------------------- passes an iteration
def passes_per_16_iterations(A, b, **kw):
    """Passes of iterations 17..32: a solve of 32 iterations less one of 16 (both stop at
    maxiter, unconverged; their set-up and final b - A x cancel). check_every=16: one read-back
    of (r^T r, breakdown flag, convergence watch) in the window, copied into a row by 3 passes."""
    counts = []
    for m in (16, 32):
        with counters.count(time=False, trace=False) as c:
            res = gpgpu.cg(A, b, rtol=1e-5, maxiter=m, check_every=16, **kw)
        assert res[1] == m
        counts.append(c.passes())
    return counts[1] - counts[0]


@pytest.mark.parametrize("reduction, jacobi, expected", [
    # n = 4096 in one row. An iteration: q = A d (1 ELLPACK pass), d^T q, the breakdown watch,
    # alpha, x += alpha d, r -= alpha q, delta = r^T s, the convergence watch, beta, d = s + beta d:
    # 8 passes + 2 dot products (with Jacobi M: + s = M r and a third dot product, r^T r).
    # Pyramid dot (003 Figs. 1-3): the products drawn into the 2^12 base (no padding: 4096
    # is a power of two), 12 halving levels = 13 passes. Fan dot: the products summed 32 a
    # fragment, 4096 -> 128 -> 4 -> 1 = 3 passes.
    ("pyramid", False, 16 * (8 + 2 * 13) + 3),       # 34 an iteration
    ("pyramid", True, 16 * (9 + 3 * 13) + 3),        # 48
    # The fan iteration (reduction="fan", the fast preset; cg's docstring): q = A d (1); d^T q
    # as 4096 -> 128 -> 4 by fan passes, the last 4 added by the fragment that writes the state
    # texel with the breakdown watch (3); x and r in one pass of two targets (1); delta and
    # ||r||^2 (with Jacobi both in the same passes) with the convergence watch, 3 as d^T q;
    # d = M r + beta d (1). The read-back is the state texel itself: no copy passes.
    ("fan", False, 16 * 9),                          # 9
    ("fan", True, 16 * 9),                           # 9
])
def test_passes_an_iteration(poisson64, reduction, jacobi, expected):
    A, b, _ = poisson64
    M = 1.0 / A.diagonal() if jacobi else None
    assert passes_per_16_iterations(A, b, reduction=reduction, M=M) == expected


def test_fan_dot_products_of_folded_vectors(monkeypatch, rng):
    """A vector folded into rows: its full rows summed along each row, then down the column of
    row sums, the partial last row on its own, the two added: 1000 -> 32 -> 1 (2 passes), 4 -> 1
    (1), 96 -> 3 -> 1 (2), 2 -> 1 (1) = 6 passes for 4096 entries in rows of 1000."""
    monkeypatch.setattr(stream, "FOLD_WIDTH", 1000)
    x64, y64 = rng.standard_normal(4096), rng.standard_normal(4096)
    x, y = Stream.vector_of(4096, data=x64.astype(np.float32)), Stream.vector_of(4096, data=y64.astype(np.float32))
    try:
        assert x.shape == (5, 1000)
        with counters.count(time=False, trace=False) as c:
            d = dot_fan(x, y)
        assert c.passes() == 6
        exact = float(np.dot(x64.astype(np.float32).astype(np.float64), y64.astype(np.float32).astype(np.float64)))
        # a sum of 4096 products in float32: each rounded, added in 4 levels of at most 32 terms
        bound = 2 * (1 + 32 * 4) * 2.0 ** -24 * float(np.abs(x64 * y64).sum())
        assert abs(d.item() - exact) <= bound
        d.release()
    finally:
        x.release()
        y.release()


def test_fast_preset_on_folded_vectors(monkeypatch, rng):
    monkeypatch.setattr(stream, "FOLD_WIDTH", 16)          # 100 unknowns in rows of 16
    A = poisson2d(10)
    b = rng.standard_normal(100)
    x, info = gpgpu.cg(A, b, rtol=1e-6, preset="fast")
    assert info == 0
    x_ref = spl.spsolve(A.tocsc(), b)
    assert np.linalg.norm(b - A @ x) <= 1e-6 * np.linalg.norm(b)
    np.testing.assert_allclose(x, x_ref, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- read-backs every k iterations
@pytest.mark.parametrize("n", [5, 30])
@pytest.mark.parametrize("check_every", [16, 64])
@pytest.mark.parametrize("jacobi", [False, True])
def test_fast_preset_past_convergence_answers_the_converged_iterate(n, check_every, jacobi):
    """A well-conditioned system converging in under 16 iterations, read back every 16 or 64:
    without the convergence watch the iterations would run on past r = 0 into 0 / 0
    (CGBreakdownError, "not positive definite" or "diverged"). The watch freezes x on the GPU:
    the answer, its iteration count and residual are those of check_every=1 (the same fan
    programs), and verified against float64."""
    rng = np.random.default_rng(n)
    A = spd(n, rng)
    b = rng.standard_normal(n)
    M = 1.0 / np.diag(A) if jacobi else None
    every = gpgpu.cg(A, b, rtol=1e-6, M=M, preset="fast", check_every=1)
    sparse = gpgpu.cg(A, b, rtol=1e-6, M=M, preset="fast", check_every=check_every)
    assert every[1] == sparse[1] == 0 and sparse.iterations == every.iterations < 16
    np.testing.assert_array_equal(sparse[0], every[0])
    assert sparse.residual_norm == every.residual_norm
    assert sparse.readbacks < every.readbacks
    assert np.linalg.norm(b - A @ sparse[0]) <= 1e-6 * np.linalg.norm(b) * (1 + 1e-3)
    x_ref = np.linalg.solve(A, b)
    assert np.linalg.norm(sparse[0] - x_ref) <= np.linalg.cond(A) * 1e-6 * np.linalg.norm(x_ref) * 1.01


@pytest.mark.parametrize("scale", [1e-17, 1e-30, 1e30])
def test_fast_preset_with_a_tiny_or_huge_b_converges_for_real(scale):
    """||b|| = 1e-17: ||r||^2 ~ 1e-34 and smaller would underflow float32 (the convergence test
    would pass on r^T r = 0 at once); the power-of-two scaling keeps it in range, so the fast
    preset too answers an x whose residual, in float64, meets the target."""
    A = poisson2d(16)
    b = np.random.default_rng(16).standard_normal(256) * scale
    x, info = gpgpu.cg(A, b, rtol=1e-5, preset="fast")
    assert info == 0
    assert np.linalg.norm(b - A @ x) <= 1e-5 * np.linalg.norm(b) * (1 + 1e-3)
    assert np.linalg.norm(x) > 0


def test_fast_preset_matches_scipy(poisson64):
    """Fan sums add in another order than scipy's: the iteration count is within a few of scipy's
    float32 cg, the answer within float32's reach of the float64 solution."""
    A, b, x_ref = poisson64
    res = gpgpu.cg(A, b, rtol=1e-5, preset="fast")
    x32, its32 = scipy_cg32_iterations(A, b, rtol=1e-5)
    assert res[1] == 0
    assert abs(res.iterations - its32) <= 0.05 * its32 + 2
    theirs = max(1e-5 * np.linalg.norm(b), np.linalg.norm(b - A @ x32.astype(np.float64)))
    assert np.linalg.norm(b - A @ res[0]) <= 1.05 * theirs
    assert np.linalg.norm(res[0] - x_ref) / np.linalg.norm(x_ref) < 1e-4


# ---------------------------------------------------------------- presets
@pytest.fixture(scope="module")
def poisson32():
    A = poisson2d(32)
    return A, np.random.default_rng(0).standard_normal(A.shape[0])


def kernels_of(fn):
    with counters.count(time=False, trace=False) as c:
        out = fn()
    return out, set(c.stats)


def test_presets_imply_their_options(poisson32):
    A, b = poisson32
    (paper, kp) = kernels_of(lambda: gpgpu.cg(A, b, rtol=1e-5, preset="paper"))
    (robust, kr) = kernels_of(lambda: gpgpu.cg(A, b, rtol=1e-5, preset="robust"))
    (fast, kf) = kernels_of(lambda: gpgpu.cg(A, b, rtol=1e-5, preset="fast"))
    # pyramid sums (003) in paper and robust, fan sums in fast
    assert "sum_reduction" in kp and "sum_reduction" in kr and "dot_reduction_fan" not in kp | kr
    assert "dot_reduction_fan" in kf and "sum_reduction" not in kf
    # paper and robust read ||r|| every iteration, fast every 16 (+ the first, the last window,
    # the verifications of b - A x)
    assert paper.readbacks >= paper.iterations and robust.readbacks >= robust.iterations
    assert fast.readbacks <= fast.iterations // 16 + 2 + 2 * (fast.restarts + 1)
    # the paper's convergence test is the recurrence's ||r|| (as scipy's): no restart; robust
    # verifies b - A x and restarts from x when the recurrence's ||r|| had drifted below it
    assert paper.restarts == 0 and paper[1] == 0 and paper.residuals[-1] <= 1e-5 * np.linalg.norm(b)
    assert robust[1] == 0 and robust.residual_norm <= 1e-5 * np.linalg.norm(b)
    assert PRESETS["robust"] == {"reduction": "pyramid", "check_every": 1, "verify": True, "iteration": "standard"}


def test_an_option_overrides_its_preset(poisson32):
    A, b = poisson32
    res, k = kernels_of(lambda: gpgpu.cg(A, b, rtol=1e-5, preset="fast", reduction="pyramid"))
    assert "sum_reduction" in k and "dot_reduction_fan" not in k
    assert res.readbacks <= res.iterations // 16 + 2 + 2 * (res.restarts + 1)     # check_every stays 16
    res = gpgpu.cg(A, b, rtol=1e-5, preset="fast", check_every=1)
    assert res.readbacks >= res.iterations
    res, k = kernels_of(lambda: gpgpu.cg(A, b, rtol=1e-5, preset="paper", reduction="fan"))
    assert "dot_reduction_fan" in k and res.readbacks >= res.iterations


def test_paper_preset_with_verify_restarts_like_robust():
    """verify=True on the paper preset: b - A x decides, as in robust (here the recurrence's
    ||r|| reaches 2e-5 ||b|| before b - A x does, so robust restarts at least once). robust is
    given the paper's storage and recomputation, so that verify is the one difference."""
    A = poisson2d(32)
    b = np.ones(1024)
    plain = gpgpu.cg(A, b, rtol=2e-5, preset="paper")
    verified = gpgpu.cg(A, b, rtol=2e-5, preset="paper", verify=True)
    robust = gpgpu.cg(A, b, rtol=2e-5, preset="robust", format="corrigan", recompute_every=50)
    assert plain.restarts == 0 and robust.restarts >= 1
    assert verified.restarts == robust.restarts and verified.iterations == robust.iterations
    np.testing.assert_array_equal(verified[0], robust[0])


@pytest.mark.parametrize("kw, error, match", [
    (dict(preset="fastest"), ValueError, "'paper', 'robust', 'fast'"),
    (dict(reduction="tree"), ValueError, "reduction"),
    (dict(verify="yes"), TypeError, "verify"),
    (dict(plan=1), TypeError, "plan"),
])
def test_bad_preset_options_are_named(kw, error, match):
    with pytest.raises(error, match=match):
        gpgpu.cg(sp.eye(3, format="csr"), np.ones(3), **kw)


def test_a_recorded_plan_rewrites_the_uniforms_another_draw_changed():
    """A plan skips checking its passes' uniforms while the program still holds them (the cache's
    owner, host time a pass); a draw of the same kernel with other values in between must make
    the next run write them again, and a pass of another plan likewise."""
    out = Stream(1, 8)
    try:
        with recording() as noted:
            L1["fill"].draw(out, whole(out), uniforms={"value": 2.5})
        plan = RecordedPlan(noted, keep=[out])
        with recording() as noted:
            L1["fill"].draw(out, whole(out), uniforms={"value": -4.0})
        other = RecordedPlan(noted, keep=[out])
        try:
            plan.run()
            np.testing.assert_array_equal(out.to_array().reshape(-1), 2.5)
            plan.run()                                   # nothing changed: the writes are skipped
            np.testing.assert_array_equal(out.to_array().reshape(-1), 2.5)
            L1["fill"].draw(out, whole(out), uniforms={"value": 7.0})
            np.testing.assert_array_equal(out.to_array().reshape(-1), 7.0)
            plan.run()                                   # the draw wrote 7: the plan writes 2.5 again
            np.testing.assert_array_equal(out.to_array().reshape(-1), 2.5)
            other.run()
            np.testing.assert_array_equal(out.to_array().reshape(-1), -4.0)
            plan.run()
            np.testing.assert_array_equal(out.to_array().reshape(-1), 2.5)
        finally:
            plan.release()
            other.release()
    finally:
        out.release()


def test_plans_with_equal_passes_share_their_writes_and_write_no_uniform_in_turn(monkeypatch):
    """Two plans of the same passes over a ping-pong pair's two orders (the fused PCG's plans):
    each pass of one shares its uniform writes with the other's pass of the same program and
    values, so that run in turn, after the first run of each, no uniform is written or compared
    (``_write_uniforms`` not called) and each still draws its own streams; a pass whose value
    differs (another fill value) or is dynamic keeps writes of its own, and its value is drawn."""
    import gpgpu.passes as passes

    a = Stream.vector_of(8, data=np.arange(8, dtype=np.float32))
    b, c = Stream.vector_of(8), Stream.vector_of(8)
    scale = L1["scale"]
    try:
        plans = []
        for src, dst in ((a, b), (b, a)):
            with recording() as noted:
                L1["fill"].draw(c, whole(c), uniforms={"value": 1.5})
                scale.draw(dst, whole(dst), {"X": src}, {"alpha": 2.0})
            plans.append(RecordedPlan(noted, keep=[a, b, c]))
        first, second = plans
        assert all(p[0] is q[0] for p, q in zip(first._fast, second._fast))
        first.run()
        second.run()
        calls = []
        monkeypatch.setattr(passes, "_write_uniforms", lambda cache, writes: calls.append(writes))
        for _ in range(2):
            first.run()
            second.run()
        assert calls == []
        # the recordings drew too: a -> b -> a four times
        np.testing.assert_array_equal(a.to_array().ravel(), 2.0 ** 8 * np.arange(8))
        monkeypatch.undo()
        with recording() as noted:
            L1["fill"].draw(c, whole(c), uniforms={"value": -3.0})
        third = RecordedPlan(noted, keep=[c])
        with recording() as noted:
            scale.draw(b, whole(b), {"X": a}, {"alpha": 2.0})
        dynamic = RecordedPlan(noted, keep=[a, b], dynamic=[(scale, "alpha")])
        with recording() as noted:                  # another program, the same names and values
            L1["add_scalar"].draw(c, whole(c), {"X": a}, {"alpha": 2.0})
        added = RecordedPlan(noted, keep=[a, c])
        try:
            assert third._fast[0][0] is not first._fast[0][0]
            assert dynamic._fast[0][0] is not first._fast[1][0]
            assert added._fast[0][0] is not first._fast[1][0]
            first.run()
            added.run()
            np.testing.assert_array_equal(c.to_array().ravel(), 2.0 ** 8 * np.arange(8) + 2.0)
            first.run()
            third.run()
            np.testing.assert_array_equal(c.to_array().ravel(), -3.0)
            dynamic.run({(scale, "alpha"): 0.5})
            np.testing.assert_array_equal(b.to_array().ravel(), 2.0 ** 7 * np.arange(8))
            first.run()                              # alpha 2.0 again, c 1.5 again
            np.testing.assert_array_equal(c.to_array().ravel(), 1.5)
            np.testing.assert_array_equal(b.to_array().ravel(), 2.0 ** 9 * np.arange(8))
        finally:
            third.release()
            dynamic.release()
            added.release()
        for p in plans:
            p.release()
    finally:
        for s in (a, b, c):
            s.release()
