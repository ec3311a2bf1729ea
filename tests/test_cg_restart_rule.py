"""cg's restart rule, with the true residuals b - A x controlled: when CG's recurrence reaches the
target, cg measures b - A x; above the target it restarts from x, unless this measurement is no
better than the best one so far (float32's floor: it stops, ``.stagnated``), and it answers the
best iterate it measured. Real runs meet an equal measurement rarely and a worse final iterate by
fractions of a percent, so these tests set the measured values (the iteration itself runs on the
GPU unchanged) and check the rule's branches: an equal measurement stops, and the answer is the
iterate of the best measurement."""
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import gpgpu
import importlib

cg_module = importlib.import_module("gpgpu.cg.api")      # true_residual's module

#: 1-D Poisson: at rtol 1e-7 its first b - A x is above the target (float32), so a restart moves x
T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(40, 40)).tocsr()
B = np.linspace(1.0, 2.0, 40)


class _Measured:
    """What ``_dot(...).item()`` gives inside ``true_residual``: the value the test sets."""

    def __init__(self, value):
        self.value = value

    def item(self):
        return self.value


@pytest.fixture
def measured(monkeypatch):
    """Replaces cg's measurement of ||b - A x||^2: the k-th measurement is factors[k] (the last
    factor repeated) times 1e8 times the real one at the first measurement (far above any target),
    and records the iterate x of each measurement."""
    real_dot = cg_module._dot
    record = {"x": [], "factors": [1.0]}

    def dot(*args, **kwargs):
        out = real_dot(*args, **kwargs)
        frame = sys._getframe(1)
        if frame.f_code.co_name != "true_residual":
            return out
        k = len(record["x"])
        record["x"].append(frame.f_locals["x"].to_array().reshape(-1).astype(np.float64))
        if k == 0:
            record["first"] = 1e8 * max(float(out.item()), 1e-30)
        factors = record["factors"]
        return _Measured(record["first"] * factors[min(k, len(factors) - 1)])

    monkeypatch.setattr(cg_module, "_dot", dot)
    return record


@pytest.mark.parametrize("preset", ["robust", "fast"])
def test_an_equal_measurement_stops_as_stagnated(preset, measured, ctx):
    """A restart whose b - A x is no better than the best (here: equal) is float32's floor: cg
    stops after one restart. (With the test `>` instead of `>=` it restarted until maxiter.)"""
    measured["factors"] = [1.0, 1.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = gpgpu.cg(T, B, rtol=1e-7, maxiter=300, preset=preset)
    assert r.stagnated and r.restarts == 1 and r[1] > 0
    assert len(measured["x"]) == 2


@pytest.mark.parametrize("preset", ["robust", "fast"])
def test_the_answer_is_the_best_measured_iterate(preset, measured, ctx):
    """Measurements 1, then 3 (worse: stop): the answer is the iterate of the first measurement
    and its residual (the run's x when the best measurement was taken), not the last iterate."""
    measured["factors"] = [1.0, 3.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = gpgpu.cg(T, B, rtol=1e-7, maxiter=300, preset=preset)
    x, info = r
    assert r.stagnated and r.restarts == 1 and info > 0
    first, last = measured["x"]
    assert not np.array_equal(first, last)     # (the restart moved x: the two are told apart)
    i = int(np.argmax(np.abs(first)))
    scale = x[i] / first[i]                    # cg's power-of-two scaling of the system
    assert scale == 2.0 ** np.round(np.log2(scale))
    np.testing.assert_array_equal(x, first * scale)
    # the residual reported is the best (first) measurement's, scaled back by a power of two (the
    # last one's was sqrt(3) times it)
    ratio = r.residual_norm / np.sqrt(measured["first"])
    assert ratio == pytest.approx(2.0 ** np.round(np.log2(ratio)), rel=1e-6)
