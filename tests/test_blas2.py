import numpy as np
import pytest
import scipy.linalg

import gpgpu
from gpgpu import Stream, counters

from conftest import LENGTHS, rel_err


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("form", ["inner", "outer"])
def test_gemv_square(n, form, rng):
    a = rng.standard_normal((n, n))
    x = rng.standard_normal(n)
    assert rel_err(gpgpu.gemv(a, x, form=form), a @ x) < 1e-5
    assert rel_err(gpgpu.gemv(a, x, transpose=True, form=form), a.T @ x) < 1e-5


@pytest.mark.parametrize("form", ["inner", "outer"])
def test_gemv_non_square_with_alpha_beta(form, rng):
    a = rng.standard_normal((7, 13))
    x = rng.standard_normal(13)
    y = rng.standard_normal(7)
    assert rel_err(gpgpu.gemv(a, x, y, alpha=2.0, beta=-0.5, form=form), 2 * a @ x - 0.5 * y) < 1e-5
    xt = rng.standard_normal(7)
    yt = rng.standard_normal(13)
    assert rel_err(gpgpu.gemv(a, xt, yt, alpha=0.5, beta=3.0, transpose=True, form=form),
                   0.5 * a.T @ xt + 3 * yt) < 1e-5


def test_gemv_pass_counts():
    a = np.ones((4, 6))
    with counters.count() as c:
        gpgpu.gemv(a, np.ones(6), form="inner")
    assert c.passes("matrix_vector_inner_product") == 1 and c.fragments() == 4
    with counters.count() as c:
        gpgpu.gemv(a, np.ones(6), form="outer")
    assert c.passes("matrix_vector_outer_product") == 6


def test_gemv_shape_errors():
    with pytest.raises(ValueError, match="length 3"):
        gpgpu.gemv(np.ones((2, 3)), np.ones(2))
    with pytest.raises(ValueError, match="form"):
        gpgpu.gemv(np.ones((2, 3)), np.ones(3), form="diagonal")


def well_conditioned_triangle(n, rng, lower=True):
    t = rng.uniform(-1, 1, (n, n)) / n + np.diag(rng.uniform(1, 2, n))
    return np.tril(t) if lower else np.triu(t)


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
def test_trsv_all_forms(n, lower, transpose, rng):
    t = well_conditioned_triangle(n, rng, lower)
    b = rng.standard_normal(n)
    ref = scipy.linalg.solve_triangular(t, b, lower=lower, trans=1 if transpose else 0)
    assert rel_err(gpgpu.trsv(t, b, lower=lower, transpose=transpose), ref) < 1e-5


def test_trsv_reads_only_its_triangle(rng):
    n = 9
    lower = well_conditioned_triangle(n, rng)
    full = lower + np.triu(rng.standard_normal((n, n)), 1) * 100  # garbage above the diagonal
    b = rng.standard_normal(n)
    ref = scipy.linalg.solve_triangular(lower, b, lower=True, trans=1)
    assert rel_err(gpgpu.trsv(full, b, lower=True, transpose=True), ref) < 1e-5


def test_trsv_unit_diagonal(rng):
    n = 17
    t = np.tril(rng.uniform(-1, 1, (n, n)) / n, -1) + np.diag(rng.uniform(5, 6, n))
    b = rng.standard_normal(n)
    unit = np.tril(t, -1) + np.eye(n)
    ref = scipy.linalg.solve_triangular(unit, b, lower=True)
    assert rel_err(gpgpu.trsv(t, b, unit_diagonal=True), ref) < 1e-5


def test_trsv_stream_in_stream_out(rng):
    t = well_conditioned_triangle(5, rng)
    b = rng.standard_normal(5)
    with Stream.from_array(t) as ts, Stream.from_array(b) as bs:
        x = gpgpu.trsv(ts, bs)
        assert isinstance(x, Stream)
        assert rel_err(x.to_array(), scipy.linalg.solve_triangular(t, b, lower=True)) < 1e-5
        x.release()


def test_trsv_errors():
    with pytest.raises(ValueError, match="square"):
        gpgpu.trsv(np.ones((2, 3)), np.ones(2))
    with pytest.raises(ValueError, match="length 3"):
        gpgpu.trsv(np.eye(3), np.ones(4))
