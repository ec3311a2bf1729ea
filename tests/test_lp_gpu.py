"""The GPU back end of the interior-point method (Algorithm 3 of paper 000) on llvmpipe."""
import numpy as np
import pytest

from gpgpu.lp import Problem, read_mps, solve
from gpgpu.lp.netlib import PAPER_TABLE3, netlib_dir

try:
    NETLIB = netlib_dir()
except FileNotFoundError:  # pragma: no cover - the data ships beside the project
    NETLIB = None

needs_netlib = pytest.mark.skipif(NETLIB is None, reason="NETLIB problems not found (GPGPU_NETLIB_DIR)")


def highs_objective(path):
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(path))
    h.run()
    return h.getInfo().objective_function_value


@needs_netlib
@pytest.mark.parametrize("name", ["afiro", "sc50b", "blend", "adlittle"])
def test_netlib_on_the_gpu_reaches_the_papers_eps(name):
    path = NETLIB / f"{name}.mps.gz"
    problem = read_mps(path)
    eps = PAPER_TABLE3[name]["eps"]
    ref = highs_objective(path)
    gpu = solve(problem, backend="gpu", eps=eps)
    assert gpu.status == "optimal", gpu.message
    assert gpu.backend == "gpu"                    # the paper's algorithm: no refinement at its eps
    # (6.1)-(6.3) at eps bound the relative objective error by about eps (measured <= 0.6 eps)
    assert abs(gpu.objective - ref) / max(1.0, abs(ref)) <= eps
    assert gpu.iterations <= 1.5 * PAPER_TABLE3[name]["iterations"]
    cpu = solve(problem, backend="numpy32", eps=eps)
    assert abs(gpu.iterations - cpu.iterations) <= 2
    # only scalars come back: a few dozen per iteration, never a vector
    assert 0 < gpu.readbacks_per_iteration < 40


@needs_netlib
@pytest.mark.parametrize("name", ["afiro", "sc50b", "blend", "adlittle"])
def test_one_pass_adat_and_substitution_solve_the_same_problems_in_fewer_passes(name):
    """adat="inner" (000's singlepass inner products), substitution="inner" (one pass a step)
    and pivot="fused" (the Cholesky's pivot steps in one pass and a copy): the same algorithm
    in fewer passes, so the paper's eps and objective, iterations within one of the faithful
    path's, and at most half the passes an iteration (measured: 0.38-0.45)."""
    from gpgpu import counters

    path = NETLIB / f"{name}.mps.gz"
    problem = read_mps(path)
    eps = PAPER_TABLE3[name]["eps"]
    ref = highs_objective(path)
    with counters.count(time=False) as c:
        paper = solve(problem, backend="gpu", eps=eps, preset="paper", adat="outer")   # 001's multipass adat
    paper_passes = c.passes() / paper.iterations
    with counters.count(time=False) as c:
        fast = solve(problem, backend="gpu", eps=eps, preset="paper", adat="inner", substitution="inner", pivot="fused")
    assert fast.status == "optimal", fast.message
    assert abs(fast.objective - ref) / max(1.0, abs(ref)) <= eps
    assert abs(fast.iterations - paper.iterations) <= 1
    assert c.passes("adat_inner_product") == fast.iterations + 1 and c.passes("outer_product_addition") == 0
    assert c.passes("substitution_inner_product") > 0 and c.passes("substitution_update") == 0
    assert c.passes("pivot_column") > 0 and c.passes("normalization") == 0
    assert c.passes() / fast.iterations <= 0.5 * paper_passes


@needs_netlib
@pytest.mark.parametrize("name", ["afiro", "sc50b", "blend"])
def test_onepass_cholesky_steps_solve_the_same_problems(name):
    """pivot="onepass" (a whole Cholesky step in one pass, beyond the paper): the paper's eps and
    HiGHS's objective, iterations within one of the faithful path's, one cholesky_step pass per
    step of every factorization and none of Algorithm 2's pivot passes."""
    from gpgpu import counters

    path = NETLIB / f"{name}.mps.gz"
    problem = read_mps(path)
    eps = PAPER_TABLE3[name]["eps"]
    paper = solve(problem, backend="gpu", eps=eps, preset="paper")
    with counters.count(time=False) as c:
        fast = solve(problem, backend="gpu", eps=eps, preset="paper", adat="inner", substitution="inner", pivot="onepass")
    assert fast.status == "optimal", fast.message
    assert abs(fast.objective - highs_objective(path)) / max(1.0, abs(highs_objective(path))) <= eps
    assert abs(fast.iterations - paper.iterations) <= 1
    m = problem.A.shape[0]
    assert c.passes("cholesky_step") % m == 0 and c.passes("cholesky_step") >= m * fast.iterations
    assert c.passes("normalization") == c.passes("square_root_guarded") == c.passes("pivot_column") == 0


@needs_netlib
@pytest.mark.parametrize("name", ["afiro", "sc50b", "blend"])
def test_inverse_substitution_solves_small_problems_with_two_passes_a_solve(name):
    """substitution="inverse" (beyond the paper): L^-1 formed once per factorization, each solve
    two products. Optimal at the paper's eps on the small problems (bandm, larger and worse
    conditioned, ends in numerical trouble: measured, README)."""
    from gpgpu import counters
    from gpgpu.cholesky import STEPS_KERNELS
    from gpgpu.lp.gpu_backend import STEPS_A_PASS

    path = NETLIB / f"{name}.mps.gz"
    problem = read_mps(path)
    eps = PAPER_TABLE3[name]["eps"]
    with counters.count(time=False) as c:
        r = solve(problem, backend="gpu", eps=eps, preset="paper", adat="inner", substitution="inverse", pivot="onepass")
    assert r.status == "optimal", r.message
    assert abs(r.objective - highs_objective(path)) / max(1.0, abs(highs_objective(path))) <= eps
    m = problem.A.shape[0]
    # with the one-pass steps, STEPS_A_PASS steps of L and of L^-1 are one joined pass
    steps = STEPS_KERNELS[STEPS_A_PASS].label
    per = -(-m // STEPS_A_PASS)
    assert c.passes(steps) >= per * r.iterations and c.passes(steps) % per == 0
    assert c.passes("lower_inverse_step") == c.passes("cholesky_step") == 0
    assert c.passes("substitution_inner_product") == c.passes("substitution_update") == 0
    with counters.count(time=False) as c:
        r2 = solve(problem, backend="gpu", eps=eps, preset="paper", adat="inner", substitution="inverse", pivot="fused")
    assert r2.status == "optimal", r2.message
    assert abs(r2.objective - highs_objective(path)) / max(1.0, abs(highs_objective(path))) <= eps
    assert c.passes("lower_inverse_step") >= m * r2.iterations and c.passes("cholesky_inverse_step") == 0


def _paper_and_option(name, **options):
    """(problem's HiGHS objective, eps, the paper's run and its counter, the run with
    ``options`` and its counter) on a NETLIB problem at the paper's eps."""
    from gpgpu import counters

    path = NETLIB / f"{name}.mps.gz"
    problem = read_mps(path)
    eps = PAPER_TABLE3[name]["eps"]
    with counters.count(time=False) as c0:
        paper = solve(problem, backend="gpu", eps=eps, preset="paper")
    with counters.count(time=False) as c:
        r = solve(problem, backend="gpu", eps=eps, preset="paper", **options)
    return highs_objective(path), eps, paper, c0, r, c


@needs_netlib
@pytest.mark.parametrize("name", ["afiro", "sc50b"])
def test_fan_reductions_solve_the_same_problems_with_fewer_reduction_passes(name):
    """reductions="fan" (beyond the paper): every inner product, norm, minimum and step length
    of the iteration by 32-texel fan passes, the products and ratios in their first passes. The
    paper's eps and HiGHS's objective, iterations within one of the faithful path's, no halving
    reduction pass left and the same read-backs."""
    ref, eps, paper, c0, fan, c = _paper_and_option(name, reductions="fan")
    assert fan.status == "optimal", fan.message
    assert abs(fan.objective - ref) / max(1.0, abs(ref)) <= eps
    assert abs(fan.iterations - paper.iterations) <= 1
    halving = ("sum_reduction", "min_reduction", "absmax_reduction", "argmax_reduction", "argmax_reduction_first")
    assert all(c.passes(k) == 0 for k in halving), c.report()
    assert all(c0.passes(k) > 0 for k in halving[:4]), c0.report()
    for k in ("sum_reduction_fan", "absmax_reduction_fan", "dot_reduction_fan", "step_ratio_min_fan",
              "blocking_ratio_argmax_fan_first"):
        assert c.passes(k) > 0, (k, c.report())
    # the products of the inner products and the ratios of the line search are computed in the
    # reductions' first passes: no pass of their own (the products left are Newton's)
    assert c.passes("step_ratio") == c.passes("blocking_ratio") == 0 < c0.passes("step_ratio")
    assert c.passes("elementwise_product") < c0.passes("elementwise_product")
    fan_passes = sum(c.passes(k) for k in c.stats if "reduction" in k) / fan.iterations
    paper_passes = sum(c0.passes(k) for k in c0.stats if "reduction" in k) / paper.iterations
    assert fan_passes < 0.5 * paper_passes
    assert fan.readbacks_per_iteration == pytest.approx(paper.readbacks_per_iteration, rel=0.2)


@needs_netlib
@pytest.mark.parametrize("name", ["afiro", "blend"])
def test_packed_inner_product_adat_solves_the_same_problems(name):
    """adat="inner4" (beyond the paper): A packed once, d each iteration, one product pass: the
    paper's eps and HiGHS's objective, iterations within one of adat="inner"'s."""
    from gpgpu import counters

    path = NETLIB / f"{name}.mps.gz"
    problem = read_mps(path)
    eps = PAPER_TABLE3[name]["eps"]
    inner = solve(problem, backend="gpu", eps=eps, preset="paper", adat="inner")
    with counters.count(time=False) as c:
        r = solve(problem, backend="gpu", eps=eps, preset="paper", adat="inner4")
    assert r.status == "optimal", r.message
    assert abs(r.objective - highs_objective(path)) / max(1.0, abs(highs_objective(path))) <= eps
    assert abs(r.iterations - inner.iterations) <= 1
    factorizations = c.passes("adat_inner_product_4x1")
    assert factorizations >= r.iterations and c.passes("adat_inner_product") == 0
    assert c.passes("pack_4x1") == factorizations + 1          # d each time, A once


@pytest.mark.parametrize("n", [1, 3, 37])
def test_fused_composites_equal_their_separate_operations_and_numpy(n):
    """fuse=True (beyond the paper): alpha A x + y and alpha A^T v + z by sgemv with beta = 1,
    a (x .* y) + b z and (x .* y + c) ./ z by one pass each, (x + a dx)^T (s + b ds) in its fan
    reduction's passes -- the values of the separate operations (fuse=False: matvec/rmatvec,
    mul, scale, axpy, add_scalar, div, dot; to the rounding the GL specification allows two
    different programs, bit for bit on llvmpipe) and
    of numpy float64 to float32 rounding; the numpy back ends keep the separate operations."""
    from gpgpu import counters
    from gpgpu.lp.gpu_backend import GPUBackend

    rng = np.random.default_rng(n)
    m = max(1, n // 2)
    A = rng.standard_normal((m, n))
    p = Problem.from_arrays(A, np.ones(m), np.ones(n))
    x, z, w = rng.standard_normal(n), rng.standard_normal(n), rng.standard_normal(n)
    y, v = rng.standard_normal(m), rng.standard_normal(m)
    zpos = np.abs(z) + 0.5
    want = {"matvec_add": -1.5 * A @ x + y, "rmatvec_add": 2.0 * A.T @ v + z,
            "mul_add": -1.0 * (x * z) - w, "mul_add_plain": x * z + w, "mul_shift_div": (x * w - 0.3) / zpos}
    fan_passes = 1 if n <= 32 else 2
    got, dots = {}, {}
    for fuse in (False, True):
        be = GPUBackend(p, fuse=fuse, reductions="fan")
        try:
            X, Y, Z, V, W, ZP = (be.vector(a) for a in (x, y, z, v, w, zpos))
            ops = {"matvec_add": (lambda: be.matvec_add(X, Y, -1.5), 2), "rmatvec_add": (lambda: be.rmatvec_add(V, Z, 2.0), 2),
                   "mul_add": (lambda: be.mul_add(X, Z, W, -1.0, -1.0), 3), "mul_add_plain": (lambda: be.mul_add(X, Z, W), 2),
                   "mul_shift_div": (lambda: be.mul_shift_div(X, W, -0.3, ZP), 3)}
            got[fuse] = {}
            for k, (op, separate) in ops.items():
                with counters.count(time=False) as c:
                    out = op()
                assert c.passes() == (1 if fuse else separate), (k, c.report())
                got[fuse][k] = be.to_numpy(out)
            with counters.count(time=False) as c:
                dots[fuse] = be.stepped_dot(X, Z, 0.25, W, ZP, -0.5)      # (x + z/4)^T (w - zpos/2)
            assert c.passes() == fan_passes + (0 if fuse else 2), c.report()
        finally:
            be.release()
    dot64 = (x + 0.25 * z) @ (w - 0.5 * zpos)
    reqs = lambda X, Z, W: [("dot", X, Z), ("norm_inf", W), ("dot", Z, W), ("norm_inf", X)]
    values = {}
    for fuse in (False, True):                      # several scalars, one read-back fused
        be = GPUBackend(p, fuse=fuse, reductions="fan")
        try:
            X, Z, W = (be.vector(a) for a in (x, z, w))
            before = be.readbacks
            values[fuse] = be.scalars(reqs(X, Z, W))
            assert be.readbacks - before == (1 if fuse else 4)
        finally:
            be.release()
    assert values[True] == values[False]            # the same reductions, only their last texel moved
    np.testing.assert_allclose(values[True], [x @ z, np.abs(w).max(), z @ w, np.abs(x).max()],
                               rtol=1e-5, atol=1e-5 * n)
    with pytest.raises(ValueError, match="requests are"):
        GPUBackend(p).scalars([("sum", None)])
    for fuse in (False, True):                      # the entries at two indexes, one read-back fused
        be = GPUBackend(p, fuse=fuse)
        try:
            vs = [be.vector(a) for a in (x, z, w)]
            idx = [n - 1, 0]
            before = be.readbacks
            got_e = be.entries_many(vs, idx)
            assert be.readbacks - before == (1 if fuse else 6)
            for g, a in zip(got_e, (x, z, w)):
                np.testing.assert_array_equal(g, a[idx].astype(np.float32))
        finally:
            be.release()
    assert dots[True] == pytest.approx(dots[False], rel=1e-6, abs=1e-6)
    assert dots[True] == pytest.approx(dot64, rel=1e-5, abs=1e-5 * n)
    # Fused and separate are different fragment programs: the GL specification lets a driver
    # contract a * b + c into one fma and order a sum as it likes, so they agree to rounding
    # only (bit for bit on llvmpipe, within an ulp or so on NVIDIA's driver). Each evaluation of
    # a sum of k float32 terms is within k u sum|terms| of the exact value (u = 2^-24, k counting
    # the products and the final additions), so the two differ by at most twice that.
    u = 2.0 ** -24
    magnitude = {"matvec_add": (np.abs(1.5 * A) @ np.abs(x) + np.abs(y), n + 2),
                 "rmatvec_add": (np.abs(2.0 * A.T) @ np.abs(v) + np.abs(z), m + 2),
                 "mul_add": (np.abs(x * z) + np.abs(w), 3), "mul_add_plain": (np.abs(x * z) + np.abs(w), 3),
                 "mul_shift_div": ((np.abs(x * w) + 0.3) / zpos, 4)}
    for k, w_ in want.items():
        terms, count = magnitude[k]
        np.testing.assert_array_less(np.abs(got[True][k].astype(np.float64) - got[False][k]),
                                     2 * count * u * terms + 1e-45, err_msg=k)
        scale = np.abs(A).max() * max(np.abs(x).max(), np.abs(v).max()) * n + 1.0
        np.testing.assert_allclose(got[True][k], w_, rtol=0, atol=4 * 6e-8 * scale * max(1, n ** 0.5))


@needs_netlib
@pytest.mark.parametrize("name", ["afiro", "blend"])
def test_fused_composites_solve_the_same_problems_in_fewer_passes(name):
    ref, eps, plain, c0, r, c = _paper_and_option(name, fuse=True)
    assert r.status == "optimal", r.message
    assert abs(r.objective - ref) / max(1.0, abs(ref)) <= eps
    assert abs(r.iterations - plain.iterations) <= 1
    assert c.passes("multiply_add") >= 3 * r.iterations and c0.passes("multiply_add") == 0
    assert c.passes("saxpy") / r.iterations < c0.passes("saxpy") / plain.iterations - 4


def test_gpu_backend_options_are_checked():
    p = Problem.from_arrays(np.eye(2), np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="adat must be 'outer'"):
        solve(p, backend="gpu", adat="diagonal")
    with pytest.raises(ValueError, match="substitution must be 'outer'"):
        solve(p, backend="gpu", substitution="diagonal")
    with pytest.raises(ValueError, match="pivot must be 'separate'"):
        solve(p, backend="gpu", pivot="joined")
    with pytest.raises(ValueError, match="pivot='onepass' is a variant of the outer form"):
        solve(p, backend="gpu", pivot="onepass", cholesky="inner")
    with pytest.raises(ValueError, match="reductions must be 'pingpong'"):
        solve(p, backend="gpu", reductions="tree")


@needs_netlib
def test_inner_cholesky_on_the_gpu():
    r = solve(NETLIB / "afiro.mps.gz", backend="gpu", cholesky="inner", eps=4e-5)
    assert r.status == "optimal"
    assert r.objective == pytest.approx(-464.7531428571, rel=4e-4)


@needs_netlib
def test_refinement_reaches_1e_8_on_the_gpu():
    path = NETLIB / "afiro.mps.gz"
    r = solve(path, backend="gpu", eps=1e-8, refine=True)
    assert r.status == "optimal"
    assert abs(r.objective - highs_objective(path)) / 464.75 <= 1e-7


def test_infeasible_and_unbounded_on_the_gpu():
    # x1 + x2 = 1 and x1 + x2 = 3 (with x >= 0): infeasible
    infeasible = Problem.from_arrays(np.array([[1.0, 1.0], [1.0, 1.0]]), np.array([1.0, 3.0]), np.array([1.0, 1.0]))
    r = solve(infeasible, backend="gpu", eps=1e-6, max_iter=60, presolve=False)
    assert r.status == "infeasible" and "Certificate, at iteration" in r.message
    r = solve(infeasible, backend="gpu", eps=1e-6, max_iter=60)          # the default presolves
    assert r.status == "infeasible" and "HiGHS's presolve proved it" in r.message
    # min -x1 with x1 - x2 = 0: unbounded; b = 0, so no lambda at all is dual feasible
    unbounded = Problem.from_arrays(np.array([[1.0, -1.0]]), np.array([0.0]), np.array([-1.0, 0.0]))
    r = solve(unbounded, backend="gpu", eps=1e-6, max_iter=60)
    assert r.status == "unbounded" and "has ||lambda||_1 below inf" in r.message


def test_gpu_and_numpy_take_the_same_first_steps():
    rng = np.random.default_rng(3)
    m, n = 8, 16
    A = rng.random((m, n))
    p = Problem.from_arrays(A, A @ (rng.random(n) + 0.5), A.T @ rng.standard_normal(m) + rng.random(n) + 0.5)
    g = solve(p, backend="gpu", eps=1e-4)
    c = solve(p, backend="numpy32", eps=1e-4)
    assert g.status == c.status == "optimal"
    for hg, hc in zip(g.history[:3], c.history[:3]):
        assert hg["mu"] == pytest.approx(hc["mu"], rel=1e-3)
        assert hg["alpha_pri"] == pytest.approx(hc["alpha_pri"], rel=1e-3, abs=1e-5)
