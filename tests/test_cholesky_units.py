"""Cholesky where A's diagonal spans more than float32 holds, and a Stream's factor, as a user
sees them: references are numpy's float64 Cholesky of the unscaled matrix and L Lᵀ = A."""
import numpy as np
import pytest

import gpgpu


def test_a_diagonal_beyond_float32s_range_is_factored():
    """diag(1e20, 1e-20, 1) is positive definite; scaled by one power of two its 1e-20 fell below
    float32's normal range next to 1e20 and was refused (NotPositiveDefiniteError at k = 1)."""
    L = gpgpu.cholesky(np.diag([1e20, 1e-20, 1.0]))
    np.testing.assert_allclose(np.diagonal(L), [1e10, 1e-10, 1.0], rtol=1e-7)
    assert np.count_nonzero(L - np.diag(np.diagonal(L))) == 0


@pytest.mark.parametrize("options", [{}, {"form": "inner"}, {"update": "square"}, {"variant": "blocked", "block": 4}])
def test_a_matrix_in_units_1e20_apart_is_factored(options, rng):
    """D A D with D = 10^k, k in -20..20: L = D L_A (L_A numpy's factor of A) to float32's accuracy
    relative to each row's own size."""
    B = rng.random((8, 8))
    A = B @ B.T + 8 * np.eye(8)
    D = 10.0 ** rng.integers(-20, 21, 8)
    L = gpgpu.cholesky(D[:, None] * A * D[None, :], **options)
    L_A = np.linalg.cholesky(A)
    np.testing.assert_allclose(L / D[:, None], L_A, atol=2e-6 * np.abs(L_A).max(), rtol=0)


def test_a_matrix_of_ordinary_units_takes_the_one_power_of_two(rng):
    """Where the diagonal fits, the upload is 2^e A as before: A and 4 A give L and 2 L exactly."""
    B = rng.random((6, 6))
    A = B @ B.T + np.diag(np.linspace(1, 1e6, 6))
    np.testing.assert_array_equal(gpgpu.cholesky(4.0 * A), 2.0 * gpgpu.cholesky(A))


@pytest.mark.parametrize("options", [{}, {"update": "square"}, {"form": "inner"}, {"variant": "blocked", "block": 4}])
def test_a_streams_factor_holds_l_alone(options, rng):
    """The strictly upper triangle of a Stream's factor is 0, as a numpy factor's (it held A's
    entries: max |L Lᵀ - A| = 3.2 for eye(4) + 1)."""
    A = np.eye(4) + 1.0
    S = gpgpu.Stream.from_array(A.astype(np.float32), "A")
    try:
        L = gpgpu.cholesky(S, **options)
        out = L.to_array().astype(np.float64)
        L.release()
    finally:
        S.release()
    assert np.count_nonzero(np.triu(out, 1)) == 0
    np.testing.assert_allclose(out @ out.T, A, atol=4e-7 * 2)
    np.testing.assert_allclose(out, np.linalg.cholesky(A), atol=3e-7)
