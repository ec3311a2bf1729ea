"""The matrix-free IPM's PCG (paper 002) drawn from recorded plans (GPUMatrixFree.pcg_planned):
the same iterates and iteration counts as the loop drawn pass by pass (plan=False), the passes
of an iteration counted exactly for pairwise and fan sums, one transfer a check, and whole
solves that stay optimal."""
import math

import numpy as np
import scipy.sparse as sp
import pytest

highspy = pytest.importorskip("highspy")

from gpgpu import counters  # noqa: E402
from gpgpu.lp import Problem, gruca_like, solve  # noqa: E402
from gpgpu.lp.matrix_free import pcg  # noqa: E402
from gpgpu.lp.matrix_free_gpu import GPUMatrixFree  # noqa: E402
from gpgpu.lp.matrix_free_numpy import NumpyMatrixFree  # noqa: E402
from gpgpu.stream import Stream  # noqa: E402

from test_lp_matrix_free import highs_objective, random_qap  # noqa: E402
from test_lp_mehrotra import netlib, rel  # noqa: E402

DELTA, RANK = 1.0, 5


@pytest.fixture(scope="module")
def qap():
    """A size-4 QAP relaxation (104 rows, 88 columns: one texture row, no dense part), weights
    in e^[-1, 1], and its G_R in float64."""
    p = random_qap(4, seed=1)
    rng = np.random.default_rng(4)
    theta = np.exp(rng.uniform(-1, 1, p.A.shape[1]))
    A = p.A.toarray()
    G = A @ (theta[:, None] * A.T) + DELTA * np.eye(A.shape[0])
    b = rng.standard_normal(A.shape[0])
    return p, theta, G, b


def run(p, theta, b, target, maxiter, backend="gpu", **kw):
    be = NumpyMatrixFree(p) if backend == "numpy64" else GPUMatrixFree(p, **kw)
    try:
        be.set_weights(theta, DELTA)
        be.build_preconditioner(RANK)
        bv = be.vector(b)
        before = be.readbacks
        res = pcg(be, bv, target, maxiter)
        res["readbacks"] = be.readbacks - before
        res["x"] = be.to_numpy(res["x"])
        return res
    finally:
        be.release()


@pytest.mark.parametrize("sums", ["pingpong", "fan"])
@pytest.mark.parametrize("check", [1, 8])
def test_planned_pcg_follows_the_drawn_one(qap, sums, check):
    """After 6 iterations (target 0: no stop) the planned iterate differs from the drawn one by
    no more than float32 rounding: at most twice the drawn one's distance from float64's PCG
    (numpy64, the same P^-1 algebra), an independent measure of float32's error at this point.
    To a target: the same stop, iteration counts within one, both residuals (float64) at it."""
    p, theta, G, b = qap
    x64 = run(p, theta, b, 0.0, 6, backend="numpy64")["x"]
    drawn = run(p, theta, b, 0.0, 6, sums=sums, pcg_check=check, plan=False)
    planned = run(p, theta, b, 0.0, 6, sums=sums, pcg_check=check, plan=True)
    assert drawn["iterations"] == planned["iterations"] == 6
    err32 = np.linalg.norm(drawn["x"] - x64)
    assert 0 < err32 < 1e-3 * np.linalg.norm(x64)          # a float32 run, near float64's
    assert np.linalg.norm(planned["x"] - drawn["x"]) <= max(2 * err32, 2.0 ** -20 * np.linalg.norm(x64))
    assert planned["residual"] == pytest.approx(drawn["residual"], rel=1e-3)
    target = 1e-4 * np.linalg.norm(b)
    drawn = run(p, theta, b, target, 300, sums=sums, pcg_check=check, plan=False)
    planned = run(p, theta, b, target, 300, sums=sums, pcg_check=check, plan=True)
    assert drawn["converged"] and planned["converged"] and not planned["breakdown"]
    assert abs(planned["iterations"] - drawn["iterations"]) <= (1 if check == 1 else check)
    if check == 1:
        assert abs(planned["iterations"] - drawn["iterations"]) <= 1
    for res in (drawn, planned):
        # the recurrence's ||r|| met the target; b - G x in float64 within float32's drift of it
        assert res["residual"] <= target
        assert np.linalg.norm(b - G @ res["x"]) <= 1.5 * target


def passes(p, theta, b, maxiter, **kw):
    """The passes of ``maxiter`` PCG iterations after the plans are recorded (002's kernels
    unless ``fused`` is given)."""
    kw.setdefault("fused", False)
    be = GPUMatrixFree(p, **kw)
    try:
        be.set_weights(theta, DELTA)
        be.build_preconditioner(RANK)
        bv = be.vector(b)
        be.free(pcg(be, bv, 0.0, maxiter)["x"])          # records the plans
        with counters.count(time=False, trace=False) as c:
            res = pcg(be, bv, 0.0, maxiter)
        be.free(res["x"])
        assert res["iterations"] == maxiter
        return c.passes()
    finally:
        be.release()


@pytest.mark.parametrize("sums, plan, expected", [
    # m = 104 in one row, no dense part. An iteration: q = G_R p (FSATY, Theta~, FSAX, + delta p:
    # 4 passes), p^T q, the breakdown watch, x += alpha p, r -= alpha q, z = P^-1 r, r^T z,
    # p = z + beta p: 8 passes + 2 dots + P^-1.
    # Pairwise ("pingpong") sums: a dot is the product and ceil(log2 104) = 7 halvings (8); P^-1
    # is two plane dots (the product of the k planes and 7 halvings along the rows: 8 each), two
    # plane combinations and (drawn) the k-vector saxpy u1 - g: 8 + 16 + 18 = 42 planned,
    # 8 + 16 + 19 = 43 drawn.
    ("pingpong", True, 8 + 2 * 8 + 2 * 8 + 2),
    ("pingpong", False, 8 + 2 * 8 + 2 * 8 + 3),
    # Fan sums: ceil(log32 104) = 2 fan passes; planned, the products are made in the first
    # (dot_reduction_fan, plane_dot_fan): a dot 2 passes, a plane dot 2 (18 planned); drawn 3
    # each (23).
    ("fan", True, 8 + 2 * 2 + 2 * 2 + 2),
    ("fan", False, 8 + 2 * 3 + 2 * 3 + 3),
])
def test_passes_a_pcg_iteration(qap, sums, plan, expected):
    """Passes of 10 iterations without a check (pcg_check = 1000: the checks are the first
    iteration and the last, the same in both solves): a solve of 20 less one of 10."""
    p, theta, _, b = qap
    kw = dict(sums=sums, plan=plan, pcg_check=1000)
    assert (passes(p, theta, b, 20, **kw) - passes(p, theta, b, 10, **kw)) == 10 * expected


@pytest.fixture(scope="module")
def gruca():
    """gruca_like(64): rows and columns of 9 and a full row and column of 65. In the packed
    format (dense=None keeps rows up to PACKED_DENSE_ROW sparse) A, its transposed copy and A∘A
    split every row: rows of 9 in two segments of 5, the full row in 13 (a (first, count) texel
    a row, so both second-pass programs); ELLPACK moves the full row and column to its dense
    part. Weights, G_R in float64 and b as for qap."""
    p = gruca_like(64, seed=2)
    rng = np.random.default_rng(4)
    theta = np.exp(rng.uniform(-1, 1, p.A.shape[1]))
    A = p.A.toarray()
    G = A @ (theta[:, None] * A.T) + DELTA * np.eye(A.shape[0])
    return p, theta, G, rng.standard_normal(A.shape[0])


def test_planned_pcg_with_the_packed_format(gruca):
    """format="packed" (the fast preset's) inside the recorded plans: the split rows' partial
    sums live in a temporary of the plan. The planned iterate after 6 iterations is within
    float32 rounding of the drawn one (twice the drawn one's distance from float64's PCG); to a
    target both converge, b - G x in float64 at it."""
    p, theta, G, b = gruca
    be = GPUMatrixFree(p, format="packed")
    try:
        assert all(S.format == "packed" and not S.single and not S.uniform for S in (be.A, be.AT, be.A2))
        assert be.A.kr == be.A.kc == 0
    finally:
        be.release()
    x64 = run(p, theta, b, 0.0, 6, backend="numpy64")["x"]
    drawn = run(p, theta, b, 0.0, 6, format="packed", sums="fan", plan=False)
    planned = run(p, theta, b, 0.0, 6, format="packed", sums="fan", plan=True)
    assert drawn["iterations"] == planned["iterations"] == 6
    err32 = np.linalg.norm(drawn["x"] - x64)
    assert 0 < err32 < 1e-3 * np.linalg.norm(x64)
    assert np.linalg.norm(planned["x"] - drawn["x"]) <= max(2 * err32, 2.0 ** -20 * np.linalg.norm(x64))
    target = 1e-4 * np.linalg.norm(b)
    planned = run(p, theta, b, target, 300, format="packed", sums="fan", plan=True)
    assert planned["converged"] and not planned["breakdown"]
    assert planned["residual"] <= target and np.linalg.norm(b - G @ planned["x"]) <= 1.5 * target


@pytest.mark.parametrize("sums, plan, expected", [
    # m = 65: ceil(log2 65) = 7 halvings and ceil(log32 65) = 2 fan passes, as m = 104's above,
    # and the same rank: qap's counts, plus one pass for each of FSATY and FSAX (the packed
    # product of split rows is two passes: the segments' partial sums, then a row's sum). No
    # dense part (ELLPACK's full row and column would add their own passes).
    ("pingpong", True, 8 + 2 * 8 + 2 * 8 + 2 + 2),
    ("pingpong", False, 8 + 2 * 8 + 2 * 8 + 3 + 2),
    ("fan", True, 8 + 2 * 2 + 2 * 2 + 2 + 2),
    ("fan", False, 8 + 2 * 3 + 2 * 3 + 3 + 2),
])
def test_passes_a_pcg_iteration_packed(gruca, sums, plan, expected):
    p, theta, _, b = gruca
    kw = dict(format="packed", sums=sums, plan=plan, pcg_check=1000)
    assert (passes(p, theta, b, 20, **kw) - passes(p, theta, b, 10, **kw)) == 10 * expected


@pytest.mark.parametrize("sums", ["pingpong", "fan"])
def test_passes_a_fused_pcg_iteration(qap, gruca, sums):
    """The fused iteration (gpgpu.lp.matrix_free_fused) is seven passes whatever m, k and the
    sums: five of its own kernels and the two products, FSATY and FSAX (ELLPACK, no dense
    part: one pass each, the weights Theta~ and the curvature sums in A's); the packed
    format's split rows: two passes a product, the weights a scaling pass of their own and
    the curvature sums another, so eleven."""
    p, theta, _, b = qap
    kw = dict(sums=sums, fused=True, pcg_check=1000)
    assert passes(p, theta, b, 20, **kw) - passes(p, theta, b, 10, **kw) == 10 * 7
    p, theta, _, b = gruca
    kw = dict(format="packed", sums=sums, fused=True, pcg_check=1000)
    assert passes(p, theta, b, 20, **kw) - passes(p, theta, b, 10, **kw) == 10 * 11


def test_a_check_is_one_transfer(qap, monkeypatch):
    """Read-backs every pcg_check iterations: with pcg_check = 8 and 20 iterations the checks are
    iterations 1, 8, 16 and 20 (the first, every 8th, the last): one transfer each (p^T q, r^T z,
    the watch and r^T r in one texel; the fused iteration's through a pixel buffer) plus ||b||'s,
    where the drawn loop makes four a check."""
    import moderngl

    p, theta, _, b = qap
    calls = []
    for cls, name in ((Stream, "to_array"), (Stream, "item"), (Stream, "read_texel"),
                      (moderngl.Framebuffer, "read_into"), (moderngl.Framebuffer, "read")):
        real = getattr(cls, name)
        monkeypatch.setattr(cls, name, lambda self, *a, _real=real, _name=name, **k:
                            (calls.append(_name), _real(self, *a, **k))[1])
    found = {}
    for plan in (True, False):
        be = GPUMatrixFree(p, pcg_check=8, plan=plan)
        try:
            be.set_weights(theta, DELTA)
            be.build_preconditioner(RANK)
            bv = be.vector(b)
            calls.clear()
            res = pcg(be, bv, 0.0, 20)
            found[plan] = len(calls)
            assert res["iterations"] == 20 and not res["converged"]
            be.free(res["x"])
        finally:
            be.release()
    assert found[True] == 1 + 4
    assert found[False] == 1 + 4 * 4


def test_plan_is_true_or_false(qap):
    p = qap[0]
    with pytest.raises(TypeError, match="plan must be True or False"):
        GPUMatrixFree(p, plan="yes")
    be = GPUMatrixFree(p, profile=True)
    try:
        assert not be.plan          # profile times each part: drawn pass by pass
    finally:
        be.release()


@pytest.mark.parametrize("preset", ["robust", "paper", "fast"])
def test_afiro_planned_stays_optimal(preset):
    p, ref = netlib("afiro")
    r = solve(p, method="matrix-free", backend="gpu", eps=1e-8, preset=preset)
    assert r.status == "optimal", r.message
    assert rel(r.objective, ref) <= 1e-6
    assert r.options.get("format", "ellpack") == {"fast": "packed", "paper": "tell"}.get(preset, "ellpack")


def test_dense_row_and_column_planned_stays_optimal():
    """gruca_like has a dense row and a dense column (the dense part of the products: plane
    dots and dense_part passes inside the recorded iteration), with fan sums."""
    p = gruca_like(64, seed=2)
    ref = highs_objective(p)
    r = solve(p, method="matrix-free", backend="gpu", eps=1e-8, sums="fan")
    assert r.status == "optimal", r.message
    assert rel(r.objective, ref) <= 1e-6
    assert math.isfinite(r.objective)


def test_fast_preset_solves_with_the_packed_format(monkeypatch):
    """The fast preset (format="packed", fan sums, planned PCG) on gruca_like(64), whose full row
    and column the packed format keeps sparse and splits into segments: optimal, HiGHS's
    objective; the back end was built with the packed format for A, Aᵀ and A∘A."""
    import gpgpu.lp.matrix_free_gpu as mfg

    built = []
    real = mfg.GPUMatrixFree.__init__

    def spy(self, *a, **k):
        real(self, *a, **k)
        built.append((self.A.format, self.AT.format, self.A2.format, self.plan))

    monkeypatch.setattr(mfg.GPUMatrixFree, "__init__", spy)
    p = gruca_like(64, seed=2)
    ref = highs_objective(p)
    r = solve(p, method="matrix-free", backend="gpu", eps=1e-8, preset="fast")
    assert r.status == "optimal", r.message
    assert rel(r.objective, ref) <= 1e-6
    assert built and all(b == ("packed", "packed", "packed", True) for b in built)


def test_a_plan_recorded_without_the_watch_is_not_drawn_with_it():
    """The planned loop's plans are keyed by whether the breakdown watch runs (pcg_check > 1):
    a back end whose pcg_check changes between solves (1, then 1000) draws the update recorded
    with the watch, and a positive definite system does not read as a breakdown (a plan of
    pcg_check = 1 put p^T q in the watch's place)."""
    m, n = 45, 110
    A = (sp.random(m, n, density=0.12, random_state=np.random.RandomState(3), format="csr") + sp.eye(m, n)).tocsr()
    p = Problem.from_arrays(A, A @ np.ones(n), np.ones(n))
    rng = np.random.default_rng(11)
    theta, b = np.exp(rng.uniform(-2, 2, n)), rng.standard_normal(m)
    be = GPUMatrixFree(p, fused=False, pcg_check=1)
    try:
        be.set_weights(theta, 1e-2)
        be.build_preconditioner(7)
        for check, maxiter in ((1, 6), (1000, 10), (1000, 20)):
            be.pcg_check = check
            bv = be.vector(b)
            res = pcg(be, bv, 0.0, maxiter)
            assert not res["breakdown"] and res["iterations"] == maxiter, (check, maxiter, res)
            be.free(res["x"])
            be.free(bv)
    finally:
        be.release()
