"""gpgpu.lp.lapack: the guarded Cholesky of paper 000 ([Wri97] pivot replacement) by LAPACK.

References are independent of the code under test: ``np.linalg.cholesky`` and
``np.linalg.solve`` in float64, and the Python loop ``cholesky_outer`` (Algorithm 2 of 000)
for the guarded cases.

Planted bugs and the tests that catch them:

- threshold against the diagonal of the UPDATED matrix instead of M0 (then p > tol * p holds
  for any positive p): ``test_tiny_positive_pivot_exact`` and ``test_pivots_from_ldl[tiny]``
  (replaced 0 instead of 1).
- replacing the wrong index (j - 1, j + 1, or k instead of k + j after a restart):
  ``test_pivots_from_ldl`` (``replaced_at`` checks where sqrt(huge) sits), the spread and
  consecutive cases, and the comparison of L with the loop.
- off-by-one in the restart (k += j instead of j + 1, restarting on S instead of S[1:, 1:],
  or dropping the rows Lb): ``test_pivots_from_ldl[spread]`` / ``[consecutive]``,
  ``test_zero_and_duplicate_rows`` (L differs from the loop, or a wrong count).
- forgetting the replaced column's update T'' = T'[1:, 1:] - col col^T: invisible with
  huge = 1e64 (col ~ 1e-32), caught by ``test_small_huge_needs_column_update`` (huge = 4).
- trusting potrf's info alone (NaN passes OpenBLAS's ``ajj <= 0`` test, tiny positive
  pivots pass any potrf): ``test_non_finite_on_diagonal``, ``test_tiny_positive_pivot_exact``.
- taking the rows below a stopped potrf's valid block from its output instead of trsm
  (potrf stops before it writes them): ``test_pivots_from_ldl`` (negative, consecutive,
  spread; all cases at m = 300), ``test_zero_and_duplicate_rows[float64]``.
- dropping the isfinite test of potrf's pivots is not caught: with pivot_tol >= 0 an inf
  pivot also fails d * d > tol * M0 (M0[k, k] = inf, or a NaN threshold).
"""
import numpy as np
import pytest

from gpgpu.lp.lapack import guarded_cholesky, guarded_solve
from gpgpu.lp.numpy_backend import cholesky_outer, default_pivot_tol, huge_pivot

DTYPES = [np.float64, np.float32]


def spd(rng, m, dtype=np.float64):
    """A well-conditioned SPD matrix B B^T + m I."""
    B = rng.standard_normal((m, m + 3))
    return (B @ B.T + m * np.eye(m)).astype(dtype)


def ldl(rng, d):
    """L0 diag(d) L0^T with L0 unit lower triangular (mild entries): its exact pivots are d."""
    m = len(d)
    L0 = np.eye(m) + np.tril(rng.standard_normal((m, m)), -1) * 0.3 / np.sqrt(m)
    return (L0 * np.asarray(d, dtype=np.float64)) @ L0.T


def replaced_at(L, dtype):
    """Indices whose diagonal is sqrt(huge)."""
    return np.flatnonzero(np.diagonal(L) == np.sqrt(dtype(huge_pivot(dtype))))


def assert_like_loop(M, rel=1e-10, **kw):
    """guarded_cholesky(M) against cholesky_outer(M): same count, same replaced indices,
    replaced columns sqrt(huge) on the diagonal and ~0 below, the rest equal within ``rel``
    (Frobenius norm, float64 comparison) where the loop's L is finite."""
    dt = M.dtype.type
    L, r = guarded_cholesky(M, **kw)
    L0, r0 = cholesky_outer(M, **kw)
    assert L.dtype == M.dtype and L.shape == M.shape
    assert r == r0
    root = np.sqrt(dt(kw.get("huge", huge_pivot(dt))))
    rep = np.flatnonzero(np.diagonal(L0) == root)
    assert np.array_equal(np.flatnonzero(np.diagonal(L) == root), rep)
    assert np.array_equal(np.triu(L, 1), np.zeros_like(L))
    A, A0 = np.array(L, np.float64), np.array(L0, np.float64)
    A[rep, rep] = A0[rep, rep] = 0.0
    ok = np.isfinite(A0)
    assert np.array_equal(np.isfinite(A), ok)
    assert np.linalg.norm(A[ok] - A0[ok]) <= rel * max(np.linalg.norm(A0[ok]), 1.0)
    if "huge" not in kw:                                  # replaced columns ~0 below
        below = np.tril(A, -1)[:, rep]
        scale = np.abs(M[np.isfinite(M)]).max(initial=1.0)
        assert np.all(np.abs(below[np.isfinite(below)]) <= 1e3 * scale / float(root))
    return L, r


# ------------------------------------------------------------------ SPD: no replacement
@pytest.mark.parametrize("m", [1, 2, 5, 64, 300])
@pytest.mark.parametrize("dtype", DTYPES)
def test_spd_matches_numpy(rng, m, dtype):
    M = spd(rng, m, dtype)
    L, r = guarded_cholesky(M)
    ref = np.linalg.cholesky(M.astype(np.float64))
    tol = 1e-12 if dtype == np.float64 else 1e-4
    assert r == 0 and L.dtype == dtype
    assert np.linalg.norm(L.astype(np.float64) - ref) <= tol * np.linalg.norm(ref)
    assert np.array_equal(np.triu(L, 1), np.zeros_like(L))


def test_empty_and_one_by_one():
    L, r = guarded_cholesky(np.zeros((0, 0)))
    assert L.shape == (0, 0) and r == 0
    L, r = guarded_cholesky(np.array([[4.0]], dtype=np.float32))
    assert r == 0 and L.dtype == np.float32 and L[0, 0] == 2.0
    L, r = guarded_cholesky(np.array([[-1.0]]))
    assert r == 1 and L[0, 0] == np.sqrt(huge_pivot(np.float64))


def test_rejects_non_square_or_non_float():
    with pytest.raises(ValueError):
        guarded_cholesky(np.zeros((2, 3)))
    with pytest.raises(ValueError):
        guarded_cholesky(np.eye(3, dtype=np.int64))


# ------------------------------------------------------------------ guarded pivots
CASES = {                      # name: (pivot index -> value), m = 40 (or m of the test)
    "zero": {7: 0.0},
    "negative": {7: -1.0},
    "tiny": {7: 1e-20},
    "first": {0: -2.0},
    "last": {-1: 0.0},
    "consecutive": {5: 0.0, 6: -1.0, 7: 1e-20},
    "spread": {3: 0.0, 11: -0.5, 20: 1e-22, 31: 0.0},
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("m", [40, 300])
def test_pivots_from_ldl(rng, case, m):
    d = rng.uniform(1.0, 2.0, m)
    for i, v in CASES[case].items():
        d[i * (m // 40) if i >= 0 else i] = v
    M = ldl(rng, d)
    L, r = assert_like_loop(M)
    assert r == len(CASES[case])
    expect = sorted(i * (m // 40) if i >= 0 else m + i for i in CASES[case])
    assert np.array_equal(replaced_at(L, np.float64), expect)


@pytest.mark.parametrize("dtype", DTYPES)
def test_zero_and_duplicate_rows(rng, dtype):
    """M = B B^T with B's row 9 a copy of row 8, row 20 zero, rows 30..32 copies of 0..2:
    pivots 9, 20, 30, 31, 32 are (rounding-)zero."""
    B = rng.standard_normal((50, 70))
    B[9] = B[8]
    B[20] = 0.0
    B[30:33] = B[:3]
    M = (B @ B.T).astype(dtype)
    # float32: those pivots are rounding noise of relative size ~1e-7, on both sides of the
    # default tolerance (1e-7) -- loop and potrf round differently and may disagree there,
    # so the float32 case takes a tolerance well above the noise
    kw = {} if dtype == np.float64 else dict(pivot_tol=1e-5)
    L, r = assert_like_loop(M, rel=1e-10 if dtype == np.float64 else 1e-4, **kw)
    assert r == 5
    assert np.array_equal(replaced_at(L, dtype), [9, 20, 30, 31, 32])


def tiny_block_matrix(rng, dtype, k=6, m=20, couple=True):
    """SPD blocks around an embedded [[1, b], [b, b^2 + e]] at rows k, k+1 whose pivot k+1
    is exactly e (b^2 exact): e / M[k+1, k+1] ~ 6e-8 (float32) or 8e-15 (float64), below
    the default tolerances, yet positive, so potrf itself accepts it. ``couple``: random
    entries between the block and the later rows (harmless once pivot k+1 is replaced; if it
    is kept, its column / sqrt(e) spoils the rest)."""
    b = 1.375                                            # b^2 = 1.890625 exactly
    e = 2.0 ** -23 if dtype == np.float32 else 2.0 ** -46
    M = np.zeros((m, m))
    M[:k, :k] = spd(rng, k)
    M[k:k + 2, k:k + 2] = [[1.0, b], [b, b * b + e]]
    X = rng.standard_normal((m - k - 2, 2)) * couple     # couples the block to later rows
    M[k + 2:, k:k + 2] = X
    M[k:k + 2, k + 2:] = X.T
    M[k + 2:, k + 2:] = spd(rng, m - k - 2) + X @ X.T
    assert e < default_pivot_tol(dtype) * (b * b + e)
    return M.astype(dtype), k + 1


@pytest.mark.parametrize("dtype", DTYPES)
def test_tiny_positive_pivot_exact(rng, dtype):
    M, k = tiny_block_matrix(rng, dtype)
    L, r = assert_like_loop(M, rel=1e-10 if dtype == np.float64 else 1e-4)
    assert r == 1 and np.array_equal(replaced_at(L, dtype), [k])
    # with a tolerance below e / M[k, k] nothing is replaced, and L[k, k]^2 = e
    M, k = tiny_block_matrix(rng, dtype, couple=False)
    L, r = guarded_cholesky(M, pivot_tol=1e-9 if dtype == np.float32 else 1e-16)
    assert r == 0 and np.isclose(float(L[k, k]) ** 2, float(M[k, k]) - 1.890625, rtol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_small_huge_needs_column_update(rng, dtype):
    """huge = 4: the replaced column is not ~0, its rank-one update of the rest matters."""
    d = rng.uniform(1.0, 2.0, 30)
    d[[4, 5, 17]] = [0.0, -1.0, 0.0]
    M = ldl(rng, d).astype(dtype)
    L, r = assert_like_loop(M, rel=1e-10 if dtype == np.float64 else 1e-4, huge=4.0)
    assert r == 3
    assert np.array_equal(np.flatnonzero(np.diagonal(L) == 2.0), [4, 5, 17])


def test_pivot_tol_parameter(rng):
    """A large pivot_tol replaces pivots that are fine by the default: like the loop."""
    M = spd(rng, 30)
    L, r = assert_like_loop(M, pivot_tol=0.9)
    assert r > 0


@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("dtype", DTYPES)
def test_non_finite_on_diagonal(rng, dtype, bad):
    """NaN passes OpenBLAS potrf's ``ajj <= 0`` test; inf passes any: the guard's check of
    potrf's pivots must replace them, like the loop."""
    M = spd(rng, 25, dtype)
    M[12, 12] = bad
    L, r = assert_like_loop(M, rel=1e-10 if dtype == np.float64 else 1e-4)
    assert r == 1 and np.array_equal(replaced_at(L, dtype), [12])
    assert np.all(np.isfinite(L))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")         # the loop's inf - inf
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_off_diagonal_no_traceback(rng, bad):
    """A non-finite off-diagonal entry spoils all later pivots; same count as the loop."""
    M = spd(rng, 20)
    M[14, 3] = M[3, 14] = bad
    L, r = guarded_cholesky(M)
    L0, r0 = cholesky_outer(M)
    assert r == r0 > 0
    assert np.array_equal(np.isfinite(L), np.isfinite(L0))
    ok = np.isfinite(L0) & (np.abs(L0) < 1e30)
    assert np.allclose(L[ok], L0[ok], rtol=1e-10, atol=1e-12)


def test_all_replaced():
    for M in (np.zeros((6, 6)), -np.eye(6), np.full((6, 6), np.nan)):
        L, r = assert_like_loop(M)
        assert r == 6


# ------------------------------------------------------------------ solve
@pytest.mark.parametrize("m", [1, 5, 64, 300])
def test_solve_matches_numpy(rng, m):
    M = spd(rng, m)
    b = rng.standard_normal(m)
    L, _ = guarded_cholesky(M)
    ref = np.linalg.solve(M, b)
    z = guarded_solve(L, b)
    assert z.shape == b.shape and z.dtype == np.float64
    assert np.linalg.norm(z - ref) <= 1e-12 * np.linalg.norm(ref)
    # a C-ordered L (e.g. the loop's) and several right-hand sides
    B = rng.standard_normal((m, 3))
    Z = guarded_solve(np.ascontiguousarray(L), B)
    assert np.linalg.norm(Z - np.linalg.solve(M, B)) <= 1e-12 * np.linalg.norm(Z)


def test_solve_float32(rng):
    M = spd(rng, 64, np.float32)
    b = rng.standard_normal(64)
    L, _ = guarded_cholesky(M)
    z = guarded_solve(L, b)
    ref = np.linalg.solve(M.astype(np.float64), b)
    assert z.dtype == np.float32
    assert np.linalg.norm(z - ref) <= 1e-4 * np.linalg.norm(ref)


def test_solve_with_replaced_pivot(rng):
    """A replaced pivot's sqrt(huge) does not raise, and z is the solution with that
    direction dropped: M = blockdiag(R, 0) (a zero row) gives z = (R^-1 b[:-1], ~0)."""
    m = 12
    M = np.zeros((m, m))
    M[:-1, :-1] = spd(rng, m - 1)
    b = rng.standard_normal(m)
    L, r = guarded_cholesky(M)
    assert r == 1
    z = guarded_solve(L, b)
    assert np.all(np.isfinite(z)) and abs(z[-1]) < 1e-50
    ref = np.linalg.solve(M[:-1, :-1], b[:-1])
    assert np.linalg.norm(z[:-1] - ref) <= 1e-12 * np.linalg.norm(ref)


def test_solve_empty():
    assert guarded_solve(np.zeros((0, 0)), np.zeros(0)).shape == (0,)
