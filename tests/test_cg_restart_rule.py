"""cg's restart rule, with the true residuals b - A x controlled: when CG's recurrence reaches the
target, cg measures b - A x; above the target it restarts from x; a restart whose measurement is
no better than the best one so far is followed by one more with the recurrence aimed below the
target, and when that gains nothing too it stops (float32's floor, ``.stagnated``); it answers
the best iterate it measured. Real runs meet an equal measurement rarely and a worse final
iterate by fractions of a percent, so these tests set the measured values (the iteration itself
runs on the GPU unchanged) and check the rule's branches: equal measurements stop after the
lowered aim, and the answer is the iterate of the best measurement."""
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
    """Replaces cg's measurement of ||b - A x|| (``_verified``): the k-th measurement is
    factors[k] (the last factor repeated) times 1e4 times the real one at the first measurement
    (far above any target), and records the iterate x and the convergence watch's target of each
    measurement."""
    real = cg_module._verified
    record = {"x": [], "factors": [1.0], "thresholds": []}

    def verified(cgv, residual64):
        value, read = real(cgv, residual64)
        k = len(record["x"])
        record["x"].append(cgv.v.x.to_array().reshape(-1).astype(np.float64))
        record["thresholds"].append(cgv.threshold)
        if k == 0:
            record["first"] = 1e4 * max(value, 1e-30)
        factors = record["factors"]
        return record["first"] * factors[min(k, len(factors) - 1)], read

    monkeypatch.setattr(cg_module, "_verified", verified)
    return record


@pytest.mark.parametrize("preset", ["robust", "fast"])
def test_an_equal_measurement_stops_as_stagnated(preset, measured, ctx):
    """A restart whose b - A x is no better than the best (here: equal) is followed by one aimed
    below the target; equal again, that is float32's floor: cg stops after two restarts. (With
    the test `>` instead of `>=` it restarted until maxiter; without the lowered aim it stopped
    after one.)"""
    measured["factors"] = [1.0, 1.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = gpgpu.cg(T, B, rtol=1e-7, maxiter=300, preset=preset)
    assert r.stagnated and r.restarts == 2 and r[1] > 0
    assert len(measured["x"]) == 3
    first, second, third = measured["thresholds"]
    # the aim (a squared norm) is lowered once, by the miss (target / measurement, 1e-4 here, times
    # RETARGET), down to the freeze floor at the most
    assert first == second and third < 1e-3 * first


@pytest.mark.parametrize("preset", ["robust", "fast"])
def test_the_answer_is_the_best_measured_iterate(preset, measured, ctx):
    """Measurements 1, then 3 (worse: stop): the answer is the iterate of the first measurement
    and its residual (the run's x when the best measurement was taken), not the last iterate."""
    measured["factors"] = [1.0, 3.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = gpgpu.cg(T, B, rtol=1e-7, maxiter=300, preset=preset)
    x, info = r
    assert r.stagnated and r.restarts == 2 and info > 0
    first, _, last = measured["x"]
    assert not np.array_equal(first, last)     # (the restart moved x: the two are told apart)
    i = int(np.argmax(np.abs(first)))
    scale = x[i] / first[i]                    # cg's power-of-two scaling of the system
    assert scale == 2.0 ** np.round(np.log2(scale))
    np.testing.assert_array_equal(x, first * scale)
    # the residual reported is the best (first) measurement's, scaled back by a power of two (the
    # last one's was 3 times it)
    ratio = r.residual_norm / measured["first"]
    assert ratio == pytest.approx(2.0 ** np.round(np.log2(ratio)), rel=1e-6)
