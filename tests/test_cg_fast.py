"""The fan iteration of gpgpu.cg (the fast preset, ``reduction="fan"``): answers against scipy
float64, iterations against scipy's float32 cg, passes an iteration counted, and each fused
kernel (the fan dot product with its state fragment, the two-target x and r pass, the d pass
with beta and Jacobi's M r inlined) caught by a planted-bug style check. No bit equality across
programs: NVIDIA contracts multiply-adds into fma."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spl

import gpgpu
from gpgpu import Stream, counters, stream
from gpgpu.cg.kernels import FUSED, _fused_levels, _fused_sum
from gpgpu.errors import CGBreakdownError
from gpgpu.passes import Targets

U = 2.0 ** -24


def poisson2d(k):
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(k, k))
    return (sp.kron(sp.eye(k), T) + sp.kron(T, sp.eye(k))).tocsr()


def scipy32_iterations(A, b, M=None, rtol=1e-5):
    its = []
    M32 = None if M is None else sp.diags(M.astype(np.float32))
    spl.cg(A.astype(np.float32), b.astype(np.float32), rtol=rtol, M=M32, callback=lambda xk: its.append(1))
    return len(its)


def check_answer(A, b, res, rtol):
    """x against scipy float64: its residual in float64 meets the target (up to float32's
    rounding of b - A x, 2^-24 (||b|| + || |A| |x| ||) a term), and ||x - x*|| <= ||r|| / lambda_min."""
    x, info = res
    assert info == 0
    A64 = sp.csr_matrix(A)
    x_star = spl.spsolve(A64.tocsc(), b)
    r = b - A64 @ x
    slack = 8 * U * (np.linalg.norm(b) + np.linalg.norm(abs(A64) @ abs(x)))
    assert np.linalg.norm(r) <= rtol * np.linalg.norm(b) + slack
    lam_min = spl.eigsh(A64.tocsc(), k=1, sigma=0, which="LM", return_eigenvectors=False)[0]
    assert np.linalg.norm(x - x_star) <= (np.linalg.norm(r) + slack) / lam_min


@pytest.fixture(scope="module")
def poisson64():
    A = poisson2d(64)
    return A, np.random.default_rng(1).standard_normal(A.shape[0])


@pytest.fixture(scope="module")
def spd_jacobi():
    """A random SPD matrix whose diagonal spans three decades, so Jacobi matters."""
    rng = np.random.default_rng(2)
    n = 300
    B = rng.standard_normal((n, n))
    D = np.diag(10.0 ** rng.uniform(0, 3, n))
    A = D @ (B @ B.T / n + np.eye(n)) @ D
    A = (A + A.T) / 2
    return A, rng.standard_normal(n), 1.0 / np.diag(A)


# ---------------------------------------------------------------- answers and iterations
def test_fast_poisson_against_scipy(poisson64):
    A, b = poisson64
    res = gpgpu.cg(A, b, rtol=1e-5, preset="fast")
    check_answer(A, b, res, 1e-5)
    ref = scipy32_iterations(A, b)
    assert abs(res.iterations - ref) <= 0.02 * ref + 2


def test_fast_jacobi_on_a_random_spd_matrix(spd_jacobi):
    A, b, M = spd_jacobi
    res = gpgpu.cg(sp.csr_matrix(A), b, rtol=1e-5, M=M, preset="fast")
    check_answer(A, b, res, 1e-5)
    ref = scipy32_iterations(sp.csr_matrix(A), b, M)
    assert abs(res.iterations - ref) <= 0.02 * ref + 2
    # without Jacobi the same system takes far more iterations: M r really is in delta and d
    plain = gpgpu.cg(sp.csr_matrix(A), b, rtol=1e-5, preset="fast", maxiter=3 * res.iterations)
    assert plain.iterations > 2 * res.iterations


def test_fast_on_folded_vectors_with_a_partial_last_row(monkeypatch, rng):
    """n = 625 in rows of 16: 39 full rows and one entry in the last; more than 32 rows, so the
    fan dot products also sum down the column of row sums."""
    monkeypatch.setattr(stream, "FOLD_WIDTH", 16)
    A = poisson2d(25)
    b = rng.standard_normal(625)
    M = 1.0 / (A.diagonal() * rng.uniform(0.5, 2.0, 625))
    for kw in (dict(), dict(M=M)):
        res = gpgpu.cg(A, b, rtol=1e-5, preset="fast", **kw)
        check_answer(A, b, res, 1e-5)
        ref = scipy32_iterations(A, b, kw.get("M"))
        assert abs(res.iterations - ref) <= 0.02 * ref + 2


def test_fast_breakdown_is_found_at_the_iteration_robust_finds(rng):
    """The breakdown watch of the state fragment (stage 1): an indefinite A raises at the
    iteration where d^T A d <= 0, as the robust preset's own watch."""
    d = np.concatenate([np.linspace(1, 2, 30), [-1.0]])
    Q, _ = np.linalg.qr(rng.standard_normal((31, 31)))
    A = Q @ np.diag(d) @ Q.T
    b = rng.standard_normal(31)
    found = []
    for preset in ("robust", "fast"):
        with pytest.raises(CGBreakdownError) as e:
            gpgpu.cg(A, b, rtol=1e-7, preset=preset)
        found.append(e.value.iteration)
    assert found[0] == found[1]


# ---------------------------------------------------------------- passes an iteration
def passes_per_32(A, b, **kw):
    counts = []
    for m in (16, 48):
        with counters.count(time=False, trace=False) as c:
            res = gpgpu.cg(A, b, rtol=1e-9, maxiter=m, preset="fast", **kw)
        assert res.iterations == m
        counts.append(c.passes())
    return counts[1] - counts[0]


@pytest.mark.parametrize("jacobi", [False, True])
def test_fast_passes_an_iteration(poisson64, jacobi):
    """The fan iteration (``iteration="standard"``; the fast preset draws the single-reduction
    one, 5 passes: tests/test_cg_single_reduction.py). n = 4096 in one row. q = A d: 1 pass (the fast preset's packed format: Poisson's rows of
    3 .. 5 entries are one segment of 5 each, so no second pass; ELLPACK's would be 1 too). d^T q: products summed 32 a fragment,
    4096 -> 128 -> 4, the last 4 added by the fragment that writes the state (delta, d^T q,
    breakdown watch, convergence watch): 3 passes. x and r: 1 pass of two render targets.
    delta = r^T M r and ||r||^2 (one fan for both, RGBA partials with Jacobi) and the
    convergence watch: 3. d = M r + beta d: 1. 9 passes (the robust preset's pyramid: 34, 48
    with Jacobi); the read-back every 16 is the state texel itself, no copy pass."""
    A, b = poisson64
    M = 1.0 / A.diagonal() if jacobi else None
    with np.errstate(all="ignore"):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert passes_per_32(A, b, M=M, iteration="standard") == 32 * 9


def test_fan_levels():
    # one row of 4096: 128 then 4 partial sums; 8 rows of 32768 (NVIDIA, n = 512^2): 1024, 32
    assert _fused_levels(1, 4096) == [(1, 128, "x"), (1, 4, "x")]
    assert _fused_levels(8, 32768) == [(8, 1024, "x"), (8, 32, "x")]
    # 40 rows of 16: one sum a row, then down the column of 40 row sums: 2 left
    assert _fused_levels(40, 16) == [(40, 1, "x"), (2, 1, "y")]


# ---------------------------------------------------------------- the fused kernels one by one
def folded_with_garbage_tail(values, width, tail=1e30):
    """A folded vector stream whose texels past its length hold ``tail`` (not zeros)."""
    n = len(values)
    rows = -(-n // width)
    full = np.full(rows * width, tail, dtype=np.float32)
    full[:n] = values
    return Stream(rows, width, vector=True, length=n, data=full.reshape(rows, width))


@pytest.mark.parametrize("n, width", [(1001, 64), (645, 16), (4093, 4096)])
def test_fused_dot_skips_the_tail_and_sums_every_level(rng, n, width):
    """The fan dot product and its stage-0 fragment: (sum S Y, sum S Y, -1, -1). The tail of the
    last row holds 1e30 (a kernel that read it would answer ~1e60 or inf); odd n, a partial last
    row, and (645 in rows of 16) a level down the columns. Bound: float32 sums of at most 32
    terms a level, 4 levels (a dropped or doubled texel, a skipped level is far outside)."""
    x64, y64 = rng.standard_normal(n), rng.standard_normal(n)
    x32, y32 = x64.astype(np.float32), y64.astype(np.float32)
    x, y = folded_with_garbage_tail(x32, width), folded_with_garbage_tail(y32, width, tail=-3e30)
    levels = _fused_levels(x.rows, x.cols)
    parts = [Stream(h, w) for h, w, _ in levels]
    out = Stream(1, 1, components=4)
    try:
        _fused_sum(FUSED["dq"], {"S": x, "Y": y}, parts, levels, 0, 0, out, {})
        got = out.to_array().reshape(-1)
        exact = float(np.dot(x32.astype(np.float64), y32.astype(np.float64)))
        bound = 2 * (1 + 32 * 4 + width) * U * float(np.abs(x32.astype(np.float64) * y32).sum())
        assert abs(got[0] - exact) <= bound and got[1] == got[0]
        assert list(got[2:]) == [-1.0, -1.0]
    finally:
        for s in parts + [x, y, out]:
            s.release()


def test_fused_jacobi_sums_delta_and_rr_in_their_channels(rng):
    """TERM 3: (r^T M r, r^T r) as the first two channels of RGBA partials; swapping them or
    dropping M is caught (M far from 1)."""
    n, width = 777, 64
    r64, m64 = rng.standard_normal(n), rng.uniform(5.0, 9.0, n)
    r32, m32 = r64.astype(np.float32), m64.astype(np.float32)
    r, m = folded_with_garbage_tail(r32, width), folded_with_garbage_tail(m32, width)
    levels = _fused_levels(r.rows, r.cols)
    parts = [Stream(h, w, components=4) for h, w, _ in levels]
    out = Stream(1, 1, components=4)
    try:
        _fused_sum(FUSED["rmr"], {"S": r, "Mdiag": m}, parts, levels, 0, 1, out, {})
        got = out.to_array().reshape(-1)
        r_, m_ = r32.astype(np.float64), m32.astype(np.float64)
        rmr, rr = float(r_ @ (m_ * r_)), float(r_ @ r_)
        tol = 2 * (2 + 32 * 4 + width) * U
        assert abs(got[0] - rmr) <= tol * rmr and abs(got[1] - rr) <= tol * rr
    finally:
        for s in parts + [r, m, out]:
            s.release()


def test_two_target_update_writes_x_and_r_each_to_its_stream(rng):
    """cg_update STEP 1: x + alpha d into the first target, r - alpha q into the second, alpha =
    delta / d^T q from the state texel (delta, d^T q, flag, converged), and 0 once converged."""
    n = 37                                   # one row, odd
    X, D, R, Q = (rng.standard_normal(n).astype(np.float32) for _ in range(4))
    streams = [Stream.vector_of(n, data=v) for v in (X, D, R, Q)]
    xn, rn = Stream.vector_of(n), Stream.vector_of(n)
    t = Targets(xn, rn)
    from gpgpu.blas1 import whole
    try:
        for state, alpha in (((3.0, 4.0, -1.0, -1.0), 0.75), ((3.0, 4.0, -1.0, 5.0), 0.0)):
            st = Stream(1, 1, components=4, data=np.array(state, dtype=np.float32).reshape(1, 1, 4))
            FUSED["xr"].draw(t, whole(xn), {"state": st, "X": streams[0], "D": streams[1], "R": streams[2],
                                            "Q": streams[3]})
            st.release()
            x_ref = X.astype(np.float64) + alpha * D
            r_ref = R.astype(np.float64) - alpha * Q
            np.testing.assert_allclose(xn.to_array().reshape(-1), x_ref, rtol=0, atol=4 * U * (abs(x_ref) + abs(D)).max())
            np.testing.assert_allclose(rn.to_array().reshape(-1), r_ref, rtol=0, atol=4 * U * (abs(r_ref) + abs(Q)).max())
    finally:
        t.release()
        for s in streams + [xn, rn]:
            s.release()


def test_targets_refuse_streams_of_two_shapes():
    a, b = Stream(1, 4), Stream(1, 5)
    try:
        with pytest.raises(ValueError, match="one shape"):
            Targets(a, b)
    finally:
        a.release()
        b.release()


# ---------------------------------------------------------------- the storage of a scipy A
def test_fast_stores_a_scipy_matrix_packed(poisson64, monkeypatch):
    """The fast preset puts a scipy.sparse A on the GPU in the packed format (beyond the papers;
    robust keeps ELLPACK, paper 002's storage, and paper its sorted corrigan format, 003's): the
    SparseStream cg builds is packed (seen at its construction) and the result says so. Poisson 64²'s rows of 3 .. 5 are one
    segment of 5 each: one pass a product, the 9 passes an iteration above. The answer against
    scipy float64 within float32's bound, the iterations within 2 % + 2 of scipy float32's."""
    from gpgpu import SparseStream

    A, b = poisson64
    built = []
    real = SparseStream.from_scipy.__func__

    def spy(cls, M, *a, **k):
        S = real(cls, M, *a, **k)
        built.append(S)
        return S

    monkeypatch.setattr(SparseStream, "from_scipy", classmethod(spy))
    res = gpgpu.cg(A, b, rtol=1e-5, preset="fast")
    assert [S.format for S in built] == ["packed"] and res.format == "packed"
    assert built[0].single and built[0].segment == 5 and built[0].shape == A.shape
    check_answer(A, b, res, 1e-5)
    ref = scipy32_iterations(A, b)
    assert abs(res.iterations - ref) <= 0.02 * ref + 2
    built.clear()
    assert gpgpu.cg(A, b, rtol=1e-3, preset="robust").format == "ellpack"
    assert gpgpu.cg(A, b, rtol=1e-3, preset="paper").format == "corrigan"   # 003's storage, sorted
    assert [S.format for S in built] == ["ellpack", "corrigan"] and built[1].perm is not None
    # an option given overrides the preset's format
    assert gpgpu.cg(A, b, rtol=1e-3, preset="fast", format="ellpack").format == "ellpack"
    assert gpgpu.cg(A, b, rtol=1e-3, format="packed").format == "packed"
    small = poisson2d(4).toarray()
    assert gpgpu.cg(small, np.ones(16), rtol=1e-3, preset="fast").format is None


def test_fast_with_split_rows_is_two_passes_a_product(rng):
    """A matrix whose rows are longer than a segment (a 2-D Poisson 20² plus a full row and
    column of small entries, rows of up to 400): the packed product is two passes (segments,
    then a row's partial sums); the answer still scipy's. n = 400 in one row: a fan dot
    product is 400 -> 13 partial sums, then the state fragment adds the 13: 2 passes (4096's
    3). An iteration: q = A d 2, d^T q 2, x and r 1, delta and ||r||^2 2, d 1: 8 passes (7
    with a one-pass product); single-reduction (the fast preset's): w = A u 2, one fan
    reduction 2, the update 1: 5."""
    A = poisson2d(20).tolil()
    A[0, :] = 0.01
    A[:, 0] = 0.01
    A[0, 0] = 4.0
    A = A.tocsr()
    b = rng.standard_normal(400)
    res = gpgpu.cg(A, b, rtol=1e-5, preset="fast")
    assert res.format == "packed"
    check_answer(A, b, res, 1e-5)
    ref = scipy32_iterations(A, b)
    assert abs(res.iterations - ref) <= 0.02 * ref + 2
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")           # rtol=1e-9: the iterations run to maxiter
        assert passes_per_32(A, b, iteration="standard") == 32 * 8
        assert passes_per_32(A, b) == 32 * 5


def test_format_is_checked():
    A = poisson2d(4)
    b = np.ones(16)
    with pytest.raises(ValueError, match="format must be one of 'corrigan', 'ellpack', 'tell', 'packed', 'split'"):
        gpgpu.cg(A, b, format="csr")
    with pytest.raises(ValueError, match="format='packed' is how cg stores a scipy.sparse A.*ndarray"):
        gpgpu.cg(A.toarray(), b, format="packed")
    from gpgpu import SparseStream

    with SparseStream.from_scipy(A) as S:
        with pytest.raises(ValueError, match="SparseStream \\(format 'ellpack'\\).*drop format="):
            gpgpu.cg(S, b, format="packed")
