"""The LP's default path on the fast kernels and plans, and numpy64 on LAPACK (beyond the paper):
what robust draws, what the result reports of its passes, the solves drawn from recorded plans,
and the numpy back ends' options."""
import numpy as np
import pytest

from gpgpu import counters
from gpgpu.lp import Problem, solve
from gpgpu.lp.gpu_backend import GPUBackend
from gpgpu.lp.numpy_backend import NumpyBackend

highspy = pytest.importorskip("highspy")

from test_lp_mehrotra import netlib, rel  # noqa: E402


def test_robust_draws_the_fast_kernels_and_reports_its_passes():
    """robust on the GPU at 1e-8: A D² Aᵀ by one pass of points a factorization, four Cholesky
    steps of L and L⁻¹ a pass, two products a solve, no substitution or halving reduction; the
    result's passes are the counters' and host time is spent on each."""
    p, ref = netlib("afiro")
    with counters.count(time=False) as c:
        r = solve(p, eps=1e-8)
    assert r.status == "optimal" and rel(r.objective, ref) <= 1e-8
    factorizations = r.iterations + 1
    assert c.passes("adat_points") == factorizations
    assert c.passes("cholesky_inverse_steps_STEPS4") >= factorizations
    for kernel in ("adat_inner_product", "outer_product_addition", "substitution_update", "substitution_inner_product",
                   "square_root_guarded", "sum_reduction"):
        assert c.passes(kernel) == 0, kernel
    assert r.passes == c.passes() > 0 and r.host_us_per_pass > 0
    assert solve(p, backend="numpy64", eps=1e-8).passes == 0


def test_the_solves_are_drawn_from_one_recorded_plan_across_factorizations(rng):
    """The refined solves write the right-hand side into a kept stream and draw the solve's
    passes from a plan recorded once: the factor's streams are kept from one factorization to
    the next, so the plan is the same object after a second factorization, and its answer is
    bit for bit the same passes' drawn one by one."""
    from gpgpu import Stream
    from gpgpu.cholesky import PRODUCT_CHUNK, solve_with_inverse

    p, _ = netlib("afiro")
    be = GPUBackend(p, refine=True, adat="points", substitution="inverse", pivot="onepass", bounds="rows")
    try:
        be.factor_normal(rng.uniform(0.5, 2.0, p.n))
        r = rng.standard_normal(p.m)
        first = be._solve_read_back(r)
        plan = be._plans["solve"][1]
        again = be._solve_read_back(r)                         # replayed
        np.testing.assert_array_equal(first, again)
        with Stream.from_array(r.astype(np.float32)) as rs:
            direct = solve_with_inverse(be.Linv, rs)
            np.testing.assert_array_equal(direct.to_array(), again.astype(np.float32))
            direct.release()
        be.factor_normal(rng.uniform(0.5, 2.0, p.n))
        be._solve_read_back(r)
        assert be._plans["solve"][1] is plan                  # not recorded again
        with counters.tally() as t:
            be._solve_read_back(r)
        assert t.passes == (2 if PRODUCT_CHUNK is None else 4)   # y = L⁻¹ r, z = L⁻ᵀ y
    finally:
        be.release()


def test_numpy_lapack_and_the_papers_loop_solve_alike():
    """numpy64's default factorization (LAPACK potrf with the guard's restarts) and the paper's
    loop: the same iterations and objective on afiro; a replaced pivot is replaced by both."""
    p, ref = netlib("afiro")
    lapack = solve(p, backend="numpy64", eps=1e-8, presolve=False)
    loop = solve(p, backend="numpy64", eps=1e-8, presolve=False, factorization="loop")
    assert lapack.iterations == loop.iterations and rel(lapack.objective, ref) <= 1e-8
    assert rel(loop.objective, lapack.objective) <= 1e-12
    # a zero row of A: its pivot of A D Aᵀ is 0 and is replaced in both factorizations
    A = np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 1.0, 1.0]])
    q = Problem.from_arrays(A, np.array([1.0, 0.0, 1.0]), np.ones(3))
    for factorization in ("lapack", "loop"):
        be = NumpyBackend(q, factorization=factorization, bounds="rows")
        assert be.factor_normal(np.ones(3)) == 1, factorization


def test_numpy_back_end_options_are_checked():
    p, _ = netlib("afiro")
    with pytest.raises(ValueError, match="factorization='loop'"):
        NumpyBackend(p, cholesky="inner")
    with pytest.raises(ValueError, match="factorization must be 'lapack'"):
        NumpyBackend(p, factorization="magma")
    with pytest.raises(ValueError, match="adat must be 'sparse'"):
        NumpyBackend(p, adat="points")
    # through solve, cholesky="inner" picks the paper's loop by itself
    assert solve(p, backend="numpy64", cholesky="inner", eps=1e-8).status == "optimal"


def test_sparse_and_dense_adat_form_the_same_normal_matrix(rng):
    p, _ = netlib("afiro")
    d = rng.uniform(0.1, 10.0, p.n)
    Ls = []
    for adat in ("sparse", "dense"):
        be = NumpyBackend(p, adat=adat, bounds="rows")
        be.factor_normal(d)
        Ls.append(np.asarray(be.L))
    ref = np.linalg.cholesky((p.A.toarray() * d) @ p.A.toarray().T)
    for L in Ls:
        np.testing.assert_allclose(L, ref, rtol=1e-10, atol=1e-12 * np.abs(ref).max())


def test_numpy32_refined_raises_its_factors_to_float64():
    """numpy32 with refinement emulates the GPU's path: after a stall its factors become float64
    (the GPU's float-float), its own pivot tolerance with them."""
    p, _ = netlib("afiro")
    be = NumpyBackend(p, dtype=np.float32, refine=True)
    assert be.raise_precision() == "float64" and be.fdtype == np.float64 and be.pivot_tol == 1e-13
    assert be.raise_precision() is None
    assert NumpyBackend(p, dtype=np.float32).raise_precision() is None          # not refined
