"""Numbers far from 1 in the dense and sparse kernels: no silent underflow, no rounded index.

A GPU flushes float32's subnormal numbers to zero, and float32 holds integers exactly only up
to 2^24. The numpy front ends scale by powers of two (exact) and undo it in float64; what
cannot be represented is refused. References: numpy float64.
"""
import numpy as np
import pytest
import scipy.sparse as sp

import gpgpu
from gpgpu import SparseStream


def _spd(n=20, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.random((n, n))
    return A @ A.T + n * np.eye(n), rng.random(n)


@pytest.mark.parametrize("scale", [1e-42, 1e-46, 1e-200, 1e30])
def test_lu_and_cholesky_solves_keep_tiny_and_large_right_hand_sides(scale, ctx):
    """b 1e-42 came back 1.9e-2 off (float32 subnormals) and b 1e-46 as x = 0, no warning."""
    A, b = _spd()
    x0 = np.linalg.solve(A, b)
    for x in (gpgpu.lu_solve(A, b * scale), gpgpu.cho_solve(np.linalg.cholesky(A), b * scale)):
        assert x.dtype == np.float64
        np.testing.assert_allclose(x / scale, x0, rtol=0, atol=5e-6 * np.abs(x0).max())


def test_a_solution_beyond_float32_still_raises(ctx):
    A, b = _spd()
    with pytest.raises((ValueError, FloatingPointError), match="overflow"):
        gpgpu.lu_solve(A, b * 1e300)


@pytest.mark.parametrize("a_scale, d_scale", [(1e-20, 1.0), (1e-19, 1.0), (1.0, 1e-40), (1e10, 1e-30)])
def test_adat_keeps_products_below_float32s_range(a_scale, d_scale, ctx):
    """A * 1e-20 gave all zeros (the true entries are about 1e-39), A * 1e-19 12 % off."""
    rng = np.random.default_rng(1)
    A, d = rng.random((12, 20)), rng.random(20) + 0.1
    ref = np.tril((A * a_scale * d * d_scale) @ (A * a_scale).T)
    C = np.tril(gpgpu.adat(A * a_scale, d=d * d_scale))
    np.testing.assert_allclose(C, ref, rtol=0, atol=1e-6 * np.abs(ref).max())


@pytest.mark.parametrize("fmt", ["ellpack", "tell", "corrigan", "packed", "split"])
def test_column_indexes_beyond_2_to_the_24_are_refused(fmt, ctx):
    """ELLPACK, T-ELL and corrigan stored index 2^24 + 3 as a float32 and multiplied the wrong
    column ([201, 35] for [21, 41]); every format now refuses such a matrix."""
    n = 2 ** 24 + 5
    A = sp.csr_matrix((np.array([1.0, 2.0]), np.array([21, 2 ** 24 + 3]), np.array([0, 1, 2])), shape=(2, n))
    with pytest.raises(ValueError, match=r"column indexes as float32, exact only up to 2\^24 = 16777216"):
        SparseStream.from_scipy(A, format=fmt)


@pytest.mark.parametrize("fmt, per_segment", [("packed", 1 + 2), ("split", 3 * 2)])
def test_segmented_fetches_count_the_row_meta_texels(fmt, per_segment, ctx):
    """Rows of 5, 1 and 3 non-zeros in segments of 2: 3 + 1 + 2 = 6 segments. Pass 1 fetches a
    segment's entries (packed: ceil(2/2) = 1 texel of two values and 2 gathers of x; split: 3 a
    value); rows of unequal segment counts make pass 2 fetch each row's (first, count) texel
    (m = 3) and its 6 partials: 6 * per_segment + 6 + 3 fetches in all."""
    rows = [[0, 1, 2, 3, 4], [5], [6, 7, 8]]
    r = np.repeat(np.arange(3), [len(x) for x in rows])
    A = sp.csr_matrix((np.arange(1.0, 10.0), (r, np.concatenate(rows))), shape=(3, 9))
    with SparseStream.from_scipy(A, format=fmt, segment=2) as S:
        f = S.fetches()
        assert f["fetches"] == 6 * per_segment + 6 + 3 and f["entries"] == 6 * 2
        np.testing.assert_allclose(S.matvec(np.ones(9)), A @ np.ones(9), rtol=1e-6)
