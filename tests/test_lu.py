import re

import numpy as np
import pytest
import scipy.linalg
from scipy.linalg.lapack import dgetc2

import gpgpu
from gpgpu import SingularMatrixError, Stream, counters
from gpgpu.lu import lu_factor

from conftest import rel_err

SIZES = [1, 2, 3, 5, 16, 33, 100]


@pytest.mark.parametrize("n", SIZES)
def test_partial_pivoting_matches_scipy(n, rng):
    A = rng.standard_normal((n, n))
    P, L, U = gpgpu.lu(A)
    P2, L2, U2 = scipy.linalg.lu(A)
    np.testing.assert_array_equal(P, P2)  # the same pivot rows
    assert rel_err(P @ L @ U, A) < 1e-5
    assert rel_err(L, L2) < 1e-4 and rel_err(U, U2) < 1e-4
    assert np.allclose(np.diag(L), 1) and np.array_equal(L, np.tril(L)) and np.array_equal(U, np.triu(U))


@pytest.mark.parametrize("n", SIZES)
def test_full_pivoting_matches_lapack_getc2(n, rng):
    A = rng.standard_normal((n, n))
    with lu_factor(A, pivoting="full") as f:
        rows, cols = f.row_swaps, f.col_swaps
    _, ipiv, jpiv, info = dgetc2(A)
    # getc2 records the row and column interchanged at each step (scipy returns them 0-based)
    assert rows[:n - 1] == list(ipiv[:n - 1])
    assert cols[:n - 1] == list(jpiv[:n - 1])
    P, L, U, Q = gpgpu.lu(A, pivoting="full")
    assert rel_err(P @ L @ U @ Q, A) < 1e-5


@pytest.mark.parametrize("n", SIZES)
def test_no_pivoting_on_diagonally_dominant(n, rng):
    A = rng.standard_normal((n, n)) + 2 * n * np.eye(n)
    P, L, U = gpgpu.lu(A, pivoting="none")
    np.testing.assert_array_equal(P, np.eye(n))
    assert rel_err(L @ U, A) < 1e-5


@pytest.mark.parametrize("n", [1, 2, 7, 16])
def test_fragment_counts_equal_table_1a_of_paper_000(n, rng):
    A = rng.standard_normal((n, n)) + 2 * n * np.eye(n)
    with counters.count() as c:
        gpgpu.lu(A, pivoting="none")
    assert c.fragments("elimination") == (n - 1) * n * (2 * n - 1) // 6
    assert c.fragments("normalization") == (n - 1) * n // 2
    # copy: rows of U, n(n+1)/2 (Table 1(a)), plus copyback (n-1)n/2; "copy A to S" apart
    assert c.fragments("copy") == n * (n + 1) // 2 + (n - 1) * n // 2
    assert c.fragments("copy_input") == n * n


def test_row_swap_draws_two_lines_in_one_pass():
    A = np.array([[1.0, 2.0], [3.0, 4.0]])
    with counters.count() as c:
        gpgpu.lu(A)
    lines = [p for p in c.trace if p.primitive == "line" and p.vertices == 4]
    assert len(lines) == 2 and all(p.fragments == 4 for p in lines)  # swap, then copy back


def test_singular_matrix_names_the_step():
    # row 1 = 2 x row 0, with binary fractions only, so elimination gives exact zeros on any
    # hardware (fused multiply-adds included): pivots 2, then -1, then an exact 0 at step 2
    A = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 1.0, 1.0]])
    with pytest.raises(SingularMatrixError, match="step k = 2") as e:
        gpgpu.lu(A)
    assert e.value.k == 2
    with pytest.raises(SingularMatrixError, match="step k = 0"):
        gpgpu.lu(np.array([[0.0, 1.0], [1.0, 0.0]]), pivoting="none")
    with pytest.raises(SingularMatrixError, match="step k = 2"):
        gpgpu.lu(np.zeros((3, 3)) + np.diag([1.0, 1.0, 0.0]), pivoting="full")
    with pytest.raises(SingularMatrixError):
        gpgpu.gauss_jordan(A, np.ones(3))


def test_input_errors():
    with pytest.raises(ValueError, match="square"):
        gpgpu.lu(np.ones((2, 3)))
    with pytest.raises(ValueError, match="pivoting"):
        gpgpu.lu(np.eye(2), pivoting="rook")
    with pytest.raises(ValueError, match="length 2"):
        gpgpu.lu_solve(np.eye(2), np.ones(3))
    with pytest.raises(ValueError, match="rows"):
        gpgpu.gauss_jordan(np.eye(2), np.ones((3, 1)))


@pytest.mark.parametrize("n", [1, 2, 3, 17])
@pytest.mark.parametrize("pivoting", ["partial", "full"])
def test_lu_solve(n, pivoting, rng):
    A = rng.standard_normal((n, n)) + n * np.eye(n)
    b = rng.standard_normal(n)
    with lu_factor(A, pivoting) as f:
        assert rel_err(gpgpu.lu_solve(f, b), np.linalg.solve(A, b)) < 1e-5
        B = rng.standard_normal((n, 3))
        assert rel_err(gpgpu.lu_solve(f, B), np.linalg.solve(A, B)) < 1e-5


@pytest.mark.parametrize("n", [1, 2, 3, 17, 33])
def test_gauss_jordan(n, rng):
    A = rng.standard_normal((n, n)) + n * np.eye(n)
    B = rng.standard_normal((n, 4))
    assert rel_err(gpgpu.gauss_jordan(A, B), np.linalg.solve(A, B)) < 1e-5
    b = rng.standard_normal(n)
    x = gpgpu.gauss_jordan(A, b)
    assert x.shape == (n,) and rel_err(x, np.linalg.solve(A, b)) < 1e-5


def test_copy_to_texture_gives_the_same_factor(rng):
    A = rng.standard_normal((9, 9))
    P1, L1, U1 = gpgpu.lu(A)
    P2, L2, U2 = gpgpu.lu(A, transfer="ctt")
    np.testing.assert_array_equal(P1, P2)
    np.testing.assert_array_equal(U1, U2)


def test_lu_factor_of_a_stream(rng):
    A = rng.standard_normal((5, 5))
    with Stream.from_array(A) as s, lu_factor(s) as f:
        P, L, U = scipy.linalg.lu(A)
        np.testing.assert_array_equal(f.row_perm, P.argmax(axis=0))


def doolittle(A):
    """LU without pivoting in float64, the textbook loop: the independent reference."""
    U = np.array(A, dtype=np.float64)
    n = U.shape[0]
    L = np.eye(n)
    for k in range(n - 1):
        L[k + 1:, k] = U[k + 1:, k] / U[k, k]
        U[k + 1:, k:] -= np.outer(L[k + 1:, k], U[k, k:])
    return L, np.triu(U)


@pytest.mark.parametrize("n", [1, 2, 5, 17])
def test_no_pivoting_with_negative_pivots(n, rng):
    """Every pivot negative (a negated diagonally dominant matrix): a pivot check that took
    the sign instead of the magnitude would call these zero."""
    A = -(rng.standard_normal((n, n)) + 2 * n * np.eye(n))
    P, L, U = gpgpu.lu(A, pivoting="none")
    Lr, Ur = doolittle(A)
    assert np.all(np.diag(Ur) < 0)
    np.testing.assert_array_equal(P, np.eye(n))
    np.testing.assert_allclose(L, Lr, atol=2e-6)
    np.testing.assert_allclose(U, Ur, rtol=2e-6, atol=2e-6 * n)
    x = gpgpu.lu_solve(lu_factor(A, pivoting="none"), np.ones(n))
    np.testing.assert_allclose(x, np.linalg.solve(A, np.ones(n)), rtol=1e-5, atol=1e-7)


def test_partial_pivoting_with_negative_pivots(rng):
    A = -np.abs(rng.standard_normal((9, 9))) - 9 * np.eye(9)
    P, L, U = gpgpu.lu(A)
    Pr, Lr, Ur = scipy.linalg.lu(A)
    np.testing.assert_array_equal(P, Pr)
    np.testing.assert_allclose(U, Ur, rtol=1e-5, atol=1e-5)


def test_lu_solve_and_gauss_jordan_with_streams(rng):
    n = 11
    A = rng.standard_normal((n, n)) + n * np.eye(n)
    b = rng.standard_normal(n)
    B = rng.standard_normal((n, 3))
    ref = np.linalg.solve(A, b)
    with Stream.from_array(A) as As, Stream.from_array(b) as bs, Stream.from_array(B) as Bs:
        f = lu_factor(As)
        x = gpgpu.lu_solve(f, bs)
        assert isinstance(x, Stream) and x.shape == (1, n)
        np.testing.assert_allclose(x.to_array(), ref, rtol=1e-5, atol=1e-6)
        x.release()
        f.release()
        X = gpgpu.gauss_jordan(As, Bs)
        assert isinstance(X, Stream) and X.shape == (n, 3)
        np.testing.assert_allclose(X.to_array(), np.linalg.solve(A, B), rtol=1e-5, atol=1e-6)
        X.release()
        with pytest.raises(ValueError, match="n x r stream"):
            gpgpu.gauss_jordan(As, bs)


# ---------------------------------------------------------------- pivots kept on the GPU (issue 13)
@pytest.mark.parametrize("pivoting", ["partial", "full"])
@pytest.mark.parametrize("n", [1, 2, 3, 17, 64])
def test_gpu_pivots_give_the_readback_paths_factor_bit_for_bit(pivoting, n):
    rng = np.random.default_rng(n)
    for A in (rng.standard_normal((n, n)),                       # swaps at most steps
              rng.standard_normal((n, n)) + 4 * n * np.eye(n),   # no swap at all
              rng.integers(-2, 3, (n, n)).astype(float) + 7 * np.eye(n)[::-1]):  # ties, swaps
        want = gpgpu.lu(A, pivoting)
        got = gpgpu.lu(A, pivoting, pivots="gpu")
        for w, g in zip(want, got):
            assert np.array_equal(w, g)
        if pivoting == "partial":                               # scipy's rows, independently
            P, L, U = got
            Ps = scipy.linalg.lu(A.astype(np.float32))[0]
            assert np.array_equal(P, Ps)
            np.testing.assert_allclose(P @ L @ U, A, atol=4 * n * 6e-8 * np.abs(A).max() * max(1, n ** 0.5))


def test_gpu_partial_pivots_draw_four_passes_a_step_after_the_search():
    """Partial pivoting with the pivot on the GPU: per step (but the last) one pass of the swap
    and the normalization through it, one back copy of the same three lines and the
    elimination; no separate copies (the bit-for-bit test above checks their values)."""
    n = 9
    A = np.random.default_rng(2).standard_normal((n, n))
    with Stream.from_array(A) as S, gpgpu.counters.count(time=False) as c:
        gpgpu.lu_factor(S, "partial", pivots="gpu").release()
    passes = {str(k): s.passes for k, s in c.stats.items()}
    assert passes["copy_swap_gpu"] == n
    assert passes["swap_normalization"] == passes["elimination"] == n - 1
    assert "normalization" not in passes and passes.get("copy", 0) == 0
    assert passes["argmax_reduction_fan_first"] == n


def test_gpu_pivots_read_back_once(readbacks):
    A = np.random.default_rng(0).standard_normal((24, 24))
    with Stream.from_array(A) as S:
        for pivots, expected in (("gpu", 2), ("readback", 25)):   # threshold + pivots | + one a step
            readbacks.n = 0
            gpgpu.lu_factor(S, "partial", pivots=pivots).release()
            assert readbacks.n == expected, pivots


def test_gpu_pivots_singular_and_solve():
    A = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 1.0, 1.0]])
    with pytest.raises(SingularMatrixError, match="step k = 2") as e:
        gpgpu.lu(A, pivots="gpu")
    assert e.value.k == 2
    with pytest.raises(SingularMatrixError, match="step k = 2"):
        gpgpu.lu(np.diag([1.0, 1.0, 0.0]), pivoting="full", pivots="gpu")
    with pytest.raises(ValueError, match="pivots must be one of"):
        gpgpu.lu(np.eye(2), pivots="cpu")
    B = np.random.default_rng(3).standard_normal((9, 9))
    b = np.arange(9.0)
    with gpgpu.lu_factor(B, "full", pivots="gpu") as f:
        x = gpgpu.lu_solve(f, b)
    np.testing.assert_allclose(x, np.linalg.solve(B, b), rtol=2e-4, atol=2e-4)


# ---------------------------------------------------------------- tiny entries (subnormal on a GPU)
# A GPU flushes float32's subnormal numbers (below 2^-126 = 1.2e-38) to zero; a numpy input is
# scaled by a power of two first, exactly, and the results scaled back. U = 8 x 8 random: the
# backward errors below are n u (u = 2^-24) against float32's 6e-8 measured; unscaled they
# were 6e-2 (LU) and 1e-2 (Cholesky) at 1e-37.
TINY = [1e-37, 1e-30]
N_TINY = 8
U32 = 2.0 ** -24


def _spd(rng, n):
    B = rng.standard_normal((n, n))
    return B @ B.T + n * np.eye(n)


@pytest.mark.parametrize("scale", TINY)
@pytest.mark.parametrize("variant", ["faithful", "blocked"])
def test_lu_of_tiny_entries_has_float32_backward_error(scale, variant, rng):
    A = rng.standard_normal((N_TINY, N_TINY)) * scale
    opts = {"variant": "blocked", "block": 4} if variant == "blocked" else {}
    P, L, U = gpgpu.lu(A, **opts)
    assert np.linalg.norm(P @ L @ U - A) / np.linalg.norm(A) < N_TINY * U32
    if variant == "faithful":
        P, L, U, Q = gpgpu.lu(A, pivoting="full")
        assert np.linalg.norm(P @ L @ U @ Q - A) / np.linalg.norm(A) < N_TINY * U32


@pytest.mark.parametrize("scale", TINY)
@pytest.mark.parametrize("variant", ["faithful", "blocked"])
def test_cholesky_of_tiny_entries_has_float32_backward_error(scale, variant, rng):
    A = _spd(rng, N_TINY) * scale
    L = gpgpu.cholesky(A, **({"variant": "blocked", "block": 4} if variant == "blocked" else {}))
    L64 = L.astype(np.float64)
    assert np.linalg.norm(L64 @ L64.T - A) / np.linalg.norm(A) < N_TINY * U32
    if variant == "faithful":
        Lp = gpgpu.cholesky(A, storage="packed").astype(np.float64)
        assert np.linalg.norm(Lp @ Lp.T - A) / np.linalg.norm(A) < N_TINY * U32


def _backward(A, x, b):
    """||A x - b|| / (||A|| ||x|| + ||b||) in float64: the solve's backward error."""
    x = np.asarray(x, dtype=np.float64)
    return np.linalg.norm(A @ x - b) / (np.linalg.norm(A) * np.linalg.norm(x) + np.linalg.norm(b))


@pytest.mark.parametrize("scale", TINY)
def test_solves_with_tiny_entries_have_float32_backward_error(scale, rng):
    """Matrix and right-hand side both tiny (the solution of size 1), and a tiny matrix with a
    right-hand side of size 1 (the solution of size 1 / scale)."""
    n = N_TINY
    A = rng.standard_normal((n, n)) * scale
    S = _spd(rng, n) * scale
    b = rng.standard_normal(n)
    B = rng.standard_normal((n, 2)) * np.array([scale, 1.0])    # one tiny column, one of size 1
    for rhs in (b * scale, b):
        assert _backward(A, gpgpu.gauss_jordan(A, rhs), rhs) < n * U32
        assert _backward(A, gpgpu.lu_solve(A, rhs), rhs) < n * U32
        assert _backward(S, gpgpu.cho_solve(np.linalg.cholesky(S), rhs), rhs) < n * U32
    for X in (gpgpu.gauss_jordan(A, B), gpgpu.lu_solve(A, B)):
        assert all(_backward(A, X[:, j], B[:, j]) < n * U32 for j in range(2))
    X = gpgpu.cho_solve(np.linalg.cholesky(S), B)
    assert all(_backward(S, X[:, j], B[:, j]) < n * U32 for j in range(2))


def test_a_power_of_two_scales_the_results_exactly(rng):
    """The same matrix times 2^-123 (2^-124 for Cholesky, whose L scales by the square root)
    gives the same P and L and U (L, solutions) times that power, bit for bit: the GPU sees
    the same upload."""
    n = N_TINY
    A = rng.standard_normal((n, n))
    b = rng.standard_normal(n)
    P, L, U = gpgpu.lu(A)
    Ps, Ls, Us = gpgpu.lu(np.ldexp(A, -123))
    assert np.array_equal(Ps, P) and np.array_equal(Ls, L) and np.array_equal(Us, np.ldexp(U, -123))
    x = gpgpu.lu_solve(A, b)
    assert np.array_equal(gpgpu.lu_solve(np.ldexp(A, -123), np.ldexp(b, -100)), np.ldexp(x, 23))
    x = gpgpu.gauss_jordan(A, b)
    assert np.array_equal(gpgpu.gauss_jordan(np.ldexp(A, -123), np.ldexp(b, -100)), np.ldexp(x, 23))
    S = _spd(rng, n)
    L = gpgpu.cholesky(S)
    Lt = gpgpu.cholesky(np.ldexp(S, -124))
    assert Lt.dtype == np.float64 and np.array_equal(Lt, np.ldexp(L, -62))
    x = gpgpu.cho_solve(L, b)
    assert np.array_equal(gpgpu.cho_solve(Lt, np.ldexp(b, -124)), x)


def test_tiny_singular_matrix_reports_its_own_units():
    """A singular matrix times 2^-130: singular as before, the pivot and threshold of the error
    in the matrix's units (n u max|A|), not the scaled matrix's."""
    A = np.ldexp(np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 1.0, 1.0]]), -130)
    threshold = 3 * U32 * 6 * 2.0 ** -130                      # n u max|A|
    with pytest.raises(SingularMatrixError, match="step k = 2") as e:
        gpgpu.lu(A)
    assert e.value.k == 2 and e.value.threshold == pytest.approx(threshold, rel=1e-6)
    with pytest.raises(SingularMatrixError, match="step k = 2") as e:
        gpgpu.gauss_jordan(A, np.ones(3))
    assert e.value.threshold == pytest.approx(threshold, rel=1e-6)


def test_tiny_solution_beyond_float32_is_refused():
    """x = b / A beyond float32's range: a FloatingPointError, not inf."""
    A = np.array([[2.0 ** -140]])
    with pytest.raises(FloatingPointError, match="overflows float32"):
        gpgpu.lu_solve(A, np.array([1e10]))
    with pytest.raises(FloatingPointError, match="overflows float32"):
        gpgpu.gauss_jordan(A, np.array([1e10]))


def test_stream_right_hand_sides_with_a_scaled_matrix(rng):
    """A numpy matrix of 2^-123 scale with a Stream right-hand side: the solution (a Stream for
    lu_solve and cho_solve, numpy for gauss_jordan, the kind of A) scaled back on the GPU
    (2^119 and 2^124: two passes, none above 2^100) or the CPU. The matrices are well
    conditioned: the solutions to the solve tests' 1e-5."""
    n = N_TINY
    A = rng.standard_normal((n, n)) + n * np.eye(n)
    S = _spd(rng, n)
    b = rng.standard_normal(n)
    At, Lt = np.ldexp(A, -123), np.ldexp(np.linalg.cholesky(S), -62)
    with Stream.from_array(b) as bs, lu_factor(At) as f:
        assert f.exponent == 123 - np.frexp(np.abs(A).max())[1]       # max|2^e At| in [0.5, 1)
        x = gpgpu.lu_solve(f, bs)
        assert isinstance(x, Stream)
        np.testing.assert_allclose(x.to_array(), np.linalg.solve(At, b), rtol=1e-5)
        x.release()
        x = gpgpu.cho_solve(Lt, bs)
        assert isinstance(x, Stream)
        np.testing.assert_allclose(x.to_array(), np.linalg.solve(np.ldexp(S, -124), b), rtol=1e-5)
        x.release()
    with Stream.from_array(b[:, None]) as Bs:
        X = gpgpu.gauss_jordan(At, Bs)
    np.testing.assert_allclose(X[:, 0], np.linalg.solve(At, b), rtol=1e-5)


@pytest.mark.parametrize("shape", [(5,), (1, 6), (5, 2)])
def test_lu_solve_names_the_users_b_and_checks_it_before_factoring(shape, rng):
    A = rng.standard_normal((6, 6))
    b = np.ones(shape)
    with gpgpu.counters.count(time=False) as c:
        with pytest.raises(ValueError, match=re.escape(f"got shape {shape}")):
            gpgpu.lu_solve(A, b)
    assert c.passes() == 0                       # nothing factored for a b that cannot fit
    with gpgpu.lu_factor(A) as f:
        with pytest.raises(ValueError, match=re.escape(f"b must have length 6 (or shape (6, r) for r right-hand "
                                                       f"sides), got shape {shape}")):
            gpgpu.lu_solve(f, b)


def test_lu_solve_refuses_the_p_l_u_of_lu_with_the_fix(rng):
    A = rng.standard_normal((6, 6))
    with pytest.raises(TypeError, match=r"not the \(P, L, U\) arrays of gpgpu.lu.*lu_factor\(A\)"):
        gpgpu.lu_solve(gpgpu.lu(A), np.ones(6))
    # a matrix given as a list of rows is still a matrix
    x = gpgpu.lu_solve([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]], [1.0, 2.0, 3.0])
    np.testing.assert_allclose(x, np.linalg.solve([[2, 1, 0], [1, 3, 1], [0, 1, 4]], [1, 2, 3]), rtol=1e-6)
