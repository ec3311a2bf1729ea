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


@pytest.mark.parametrize("form", ["outer", "inner"])
@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
def test_trsv_all_forms(n, lower, transpose, form, rng):
    t = well_conditioned_triangle(n, rng, lower)
    b = rng.standard_normal(n)
    ref = scipy.linalg.solve_triangular(t, b, lower=lower, trans=1 if transpose else 0)
    assert rel_err(gpgpu.trsv(t, b, lower=lower, transpose=transpose, form=form), ref) < 1e-5


@pytest.mark.parametrize("form", ["outer", "inner"])
def test_trsv_reads_only_its_triangle(form, rng):
    n = 9
    for lower, transpose in ((True, True), (True, False), (False, True), (False, False)):
        t = well_conditioned_triangle(n, rng, lower)
        other = (np.triu if lower else np.tril)(rng.standard_normal((n, n)), 1 if lower else -1) * 100
        b = rng.standard_normal(n)
        ref = scipy.linalg.solve_triangular(t, b, lower=lower, trans=1 if transpose else 0)
        got = gpgpu.trsv(t + other, b, lower=lower, transpose=transpose, form=form)   # garbage in the other triangle
        assert rel_err(got, ref) < 1e-5, (lower, transpose)


def test_trsv_inner_form_is_one_pass_a_step(rng):
    """The inner-product form: n passes of n fragments (one a step), against 3 passes a step
    (division, copy, update) of the outer form; exact on a unit triangle with integers."""
    n = 12
    t = np.tril(rng.integers(-3, 4, (n, n)), -1) + np.eye(n)
    x = rng.integers(-5, 6, n).astype(np.float64)
    b = t @ x
    with counters.count() as c:
        got = gpgpu.trsv(t, b, form="inner")
    np.testing.assert_array_equal(got, x)
    assert c.passes("substitution_inner_product") == n and c.fragments("substitution_inner_product") == n * n
    assert c.passes("substitution_division") == c.passes("substitution_update") == 0
    with pytest.raises(ValueError, match="substitution form"):
        gpgpu.trsv(t, b, form="diagonal")


@pytest.mark.parametrize("form", ["outer", "inner"])
def test_trsv_unit_diagonal(form, rng):
    n = 17
    t = np.tril(rng.uniform(-1, 1, (n, n)) / n, -1) + np.diag(rng.uniform(5, 6, n))
    b = rng.standard_normal(n)
    unit = np.tril(t, -1) + np.eye(n)
    ref = scipy.linalg.solve_triangular(unit, b, lower=True)
    assert rel_err(gpgpu.trsv(t, b, unit_diagonal=True, form=form), ref) < 1e-5


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
