import numpy as np
import pytest

import gpgpu
from gpgpu import Stream

from conftest import LENGTHS, rel_err


@pytest.mark.parametrize("n", LENGTHS)
def test_elementwise_kernels_match_numpy(n, rng):
    x = rng.standard_normal(n)
    y = rng.standard_normal(n) + 3.0
    f32 = 2e-7
    assert rel_err(gpgpu.copy(x), x) < f32
    assert rel_err(gpgpu.saxpy(1.5, x, y), 1.5 * x + y) < f32
    assert rel_err(gpgpu.scale(-2.0, x), -2.0 * x) < f32
    assert rel_err(gpgpu.add_scalar(x, 0.25), x + 0.25) < f32
    assert rel_err(gpgpu.multiply(x, y), x * y) < f32
    assert rel_err(gpgpu.divide(x, y), x / y) < f32


@pytest.mark.parametrize("n", LENGTHS)
def test_dot_and_norm(n, rng):
    x = rng.standard_normal(n)
    y = rng.standard_normal(n)
    assert gpgpu.dot(x, y) == pytest.approx(x @ y, rel=1e-5, abs=1e-5 * np.sqrt(n))
    assert gpgpu.norm_inf(x) == pytest.approx(np.abs(x).max(), rel=1e-7)


def test_dot_exact_on_integers():
    x = np.arange(1, 101, dtype=float)
    assert gpgpu.dot(x, x) == (x * x).sum()


def test_matrix_elementwise(rng):
    a = rng.standard_normal((5, 7))
    b = rng.standard_normal((5, 7))
    assert rel_err(gpgpu.saxpy(2.0, a, b), 2 * a + b) < 2e-7


@pytest.mark.parametrize("n", LENGTHS)
def test_max_step_is_largest_feasible_alpha(n, rng):
    x = rng.random(n) + 0.1
    dx = rng.standard_normal(n) * 2
    neg = dx < 0
    ref = min(1.0, (-x[neg] / dx[neg]).min()) if neg.any() else 1.0
    alpha = gpgpu.max_step(x, dx)
    assert alpha == pytest.approx(ref, rel=1e-6)
    assert np.all(x + alpha * dx >= -1e-6)


def test_max_step_is_one_when_nothing_decreases():
    assert gpgpu.max_step(np.ones(4), np.ones(4)) == 1.0


def test_fill_and_out_parameter():
    s = gpgpu.fill(5, 3.0)
    np.testing.assert_array_equal(s.to_array(), np.full(5, 3.0, np.float32))
    x = Stream.from_array(np.arange(5.0))
    out = gpgpu.saxpy(2.0, x, s, out=Stream(1, 5, vector=True))
    np.testing.assert_array_equal(out.to_array(), 2 * np.arange(5.0) + 3)
    for t in (s, x, out):
        t.release()


def test_shape_mismatch_raises():
    with pytest.raises(ValueError, match="same shape"):
        gpgpu.saxpy(1.0, np.ones(3), np.ones(4))


def test_stream_inputs_give_stream_outputs():
    with Stream.from_array(np.ones(3)) as x:
        r = gpgpu.scale(2.0, x)
        assert isinstance(r, Stream)
        np.testing.assert_array_equal(r.to_array(), [2, 2, 2])
        r.release()
        d = gpgpu.dot(x, x)  # Streams in, a 1 x 1 Stream out: no read-back
        assert isinstance(d, Stream) and d.shape == (1, 1) and d.item() == 3.0
        d.release()
        assert gpgpu.dot(x, x, stream=False) == 3.0
        n = gpgpu.norm_inf(x)
        assert isinstance(n, Stream) and n.item() == 1.0
        n.release()
