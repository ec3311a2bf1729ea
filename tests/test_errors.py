"""Bad input and breakdowns: a named error that says the cause, never NaN or garbage."""
import numpy as np
import pytest

import gpgpu
from gpgpu import SingularMatrixError, Stream
from gpgpu import packed as pk
from gpgpu.context import max_texture_size
from gpgpu.stream import pool_bytes, set_pool_limit


# --------------------------------------------------------------------------- sizes and types
@pytest.mark.parametrize("rows, cols", [(2.7, 5), (3, 5.0), ("3", 5), (None, 2)])
def test_stream_sizes_must_be_integers(rows, cols):
    with pytest.raises(TypeError, match="must be an integer"):
        Stream(rows, cols)


def test_stream_accepts_numpy_integers():
    with Stream(np.int64(2), np.int32(3)) as s:
        assert s.shape == (2, 3)


def test_stream_data_must_fill_it():
    with pytest.raises(ValueError, match="does not fill"):
        Stream(2, 2, data=np.ones(3))


@pytest.mark.parametrize("call", [
    lambda big: gpgpu.cholesky(big),
    lambda big: gpgpu.cholesky(big, storage="packed"),
    lambda big: gpgpu.lu(big),
    lambda big: gpgpu.gauss_jordan(big, np.ones(big.shape[0])),
    lambda big: gpgpu.adat(big),
    lambda big: gpgpu.lstsq_weighted(big, np.ones(big.shape[1]), np.ones(big.shape[1])),
])
def test_shape_is_checked_before_any_copy(call):
    """A zero-stride view of a matrix larger than GL_MAX_TEXTURE_SIZE takes no memory, and this
    one refuses every element-wise operation: a function that converted, copied or scanned it
    before checking the shape fails with 'touched' instead of the texture-size error."""
    n = max_texture_size() + 1
    big = np.broadcast_to(np.float64(1.0), (n, n)).view(Untouchable)
    with pytest.raises(ValueError, match="GL_MAX_TEXTURE_SIZE"):
        call(big)


class Untouchable(np.ndarray):
    """An array whose elements may not be looked at: only its shape, dtype and kind."""

    def __array_ufunc__(self, *args, **kwargs):
        raise AssertionError("touched: an element-wise operation before the shape check")

    def __array_function__(self, func, types, args, kwargs):
        if func.__name__ in ("iscomplexobj", "shape", "ndim"):
            return super().__array_function__(func, types, args, kwargs)
        raise AssertionError(f"touched: np.{func.__name__} before the shape check")

    def astype(self, *args, **kwargs):
        raise AssertionError("touched: astype before the shape check")

    def __array__(self, *args, **kwargs):
        raise AssertionError("touched: converted before the shape check")


# --------------------------------------------------------------------------- singular systems
def test_cho_solve_with_a_zero_on_the_diagonal_raises():
    L = np.tril(np.ones((5, 5)))
    L[3, 3] = 0.0
    with pytest.raises(SingularMatrixError, match=r"L\[3, 3\] is zero") as e:
        gpgpu.cho_solve(L, np.ones(5))
    assert e.value.k == 3
    with Stream.from_array(L) as Ls, Stream.from_array(np.ones(5)) as b, \
            pytest.raises(SingularMatrixError, match="step k = 3"):
        gpgpu.cho_solve(Ls, b)


def test_cho_solve_packed_with_a_zero_on_the_diagonal_raises():
    L = np.tril(np.ones((6, 6)))
    L[5, 5] = 0.0                     # in the rotated part of the packed texture
    with Stream.from_array(pk.pack(L)) as P, pytest.raises(SingularMatrixError, match="step k = 5"):
        gpgpu.cho_solve(P, np.ones(6), storage="packed")


def test_cho_solve_with_a_good_factor_is_right(rng):
    B = rng.standard_normal((7, 7))
    A = B @ B.T + 7 * np.eye(7)
    b = rng.standard_normal(7)
    x = gpgpu.cho_solve(np.linalg.cholesky(A), b)
    np.testing.assert_allclose(x, np.linalg.solve(A, b), rtol=1e-5, atol=1e-5)


def test_trsv_with_a_zero_on_the_diagonal_raises():
    T = np.triu(np.ones((4, 4)))
    T[1, 1] = 0.0
    with pytest.raises(SingularMatrixError, match=r"T\[1, 1\]"):
        gpgpu.trsv(T, np.ones(4), lower=False)
    # a unit-diagonal solve never reads the diagonal: no error
    np.testing.assert_allclose(gpgpu.trsv(T, np.ones(4), lower=False, unit_diagonal=True),
                               np.linalg.solve(np.triu(T, 1) + np.eye(4), np.ones(4)), rtol=1e-6)


SINGULAR = {
    "1..9": np.arange(1.0, 10.0).reshape(3, 3),                     # rank 2; float32 leaves 3.6e-7
    "rank 5 of 6": np.random.default_rng(0).standard_normal((6, 5))
                   @ np.random.default_rng(1).standard_normal((5, 6)),
}


@pytest.mark.parametrize("name", sorted(SINGULAR))
def test_gauss_jordan_on_a_singular_matrix_raises(name):
    A = SINGULAR[name]
    with pytest.raises(SingularMatrixError, match="singular") as e:
        gpgpu.gauss_jordan(A, np.ones(A.shape[0]))
    assert e.value.k == A.shape[0] - 1
    with pytest.raises(SingularMatrixError):
        gpgpu.lu_solve(A, np.ones(A.shape[0]))
    with pytest.raises(SingularMatrixError):
        gpgpu.lu(A, pivoting="full")


def test_tiny_but_meaningful_pivots_are_not_singular():
    """diag(1, 1e-5) is far from singular in float32 (n u max|A| = 1.2e-7)."""
    A = np.diag([1.0, 1e-5])
    np.testing.assert_allclose(gpgpu.gauss_jordan(A, np.ones(2)), [1.0, 1e5], rtol=1e-6)
    np.testing.assert_allclose(gpgpu.lu_solve(A, np.ones(2)), [1.0, 1e5], rtol=1e-6)
    P, L, U = gpgpu.lu(A, pivoting="none")
    np.testing.assert_allclose(np.diag(U), [1.0, 1e-5], rtol=1e-6)


def test_lu_without_pivoting_flags_a_negligible_pivot():
    A = np.array([[1.0, 2.0], [2.0, 4.0 + 1e-9]])      # 4 + 1e-9 rounds to 4 in float32
    with pytest.raises(SingularMatrixError, match="pivoting='none'") as e:
        gpgpu.lu(A, pivoting="none")
    assert e.value.k == 1


# --------------------------------------------------------------------------- least squares, adat
def test_lstsq_refuses_complex_input_instead_of_dropping_the_imaginary_part():
    A = np.ones((2, 4), dtype=complex)
    with pytest.raises(ValueError, match="complex"):
        gpgpu.lstsq_weighted(A, np.ones(4), np.ones(4))
    with pytest.raises(ValueError, match="complex"):
        gpgpu.lstsq_weighted(np.ones((2, 4)), np.ones(4), np.ones(4) * 1j)


@pytest.mark.parametrize("kw, match", [(dict(tol=0.0), "tol"), (dict(tol=float("nan")), "tol"),
                                       (dict(maxiter=-1), "maxiter"), (dict(maxiter=2.5), "maxiter")])
def test_lstsq_options_are_checked(kw, match):
    with pytest.raises(ValueError, match=match):
        gpgpu.lstsq_weighted(np.eye(2), np.ones(2), np.ones(2), **kw)


def test_adat_refuses_negative_weights():
    with pytest.raises(ValueError, match="non-negative"):
        gpgpu.adat(np.ones((3, 4)), np.array([1.0, -0.5, 1.0, 1.0]))
    with Stream.from_array(np.ones((3, 4))) as A, Stream.from_array(-np.ones(4)) as d, \
            pytest.raises(ValueError, match="non-negative"):
        gpgpu.adat(A, d)


def test_adat_overflow_is_an_error_not_inf():
    with pytest.raises(FloatingPointError, match="overflows float32"):
        gpgpu.adat(np.full((3, 4), 1e10), np.full(4, 1e20))
    # just below the limit is fine: 4 x (1e9)^2 x 1e19 = 4e37
    C = gpgpu.adat(np.full((3, 4), 1e9), np.full(4, 1e19))
    np.testing.assert_allclose(C[np.tril_indices(3)], 4e37, rtol=1e-6)


# --------------------------------------------------------------------------- the pool
def test_pool_is_bounded_by_bytes_and_can_be_emptied():
    gpgpu.free_temporaries()
    old = set_pool_limit(256 * 1024)
    try:
        for n in range(100, 1600, 100):            # 15 sizes of reductions
            gpgpu.reduce(np.ones((n, 7)), "sum")
            assert pool_bytes() <= 256 * 1024
        held = pool_bytes()
        assert held > 0
        assert gpgpu.free_temporaries() == held
        assert pool_bytes() == 0
    finally:
        set_pool_limit(old)
    with pytest.raises(ValueError, match=">= 0"):
        set_pool_limit(-1)


def test_pool_limit_zero_keeps_nothing():
    old = set_pool_limit(0)
    try:
        assert gpgpu.reduce(np.arange(10.0), "sum") == 45.0
        assert pool_bytes() == 0
    finally:
        set_pool_limit(old)
