"""gpgpu.counters.tally: the passes drawn and the host time spent issuing them, without queries;
the same count as the counters for passes drawn one by one, from a compiled plan and from a
recorded plan."""
import numpy as np
import pytest

import gpgpu
from gpgpu import Stream, counters
from gpgpu.blas1 import KERNELS, whole
from gpgpu.passes import RecordedPlan, recording


def test_tally_counts_what_the_counters_count(rng):
    a = rng.standard_normal((12, 12))
    a = a @ a.T + 12 * np.eye(12)
    gpgpu.cholesky(a)                                  # compiled once
    with counters.count(time=False) as c:
        gpgpu.cholesky(a)                              # a compiled plan and passes of its own
    with counters.tally() as t:
        gpgpu.cholesky(a)
    assert t.passes == c.passes() > 12 and t.seconds > 0 and t.host_us_per_pass > 0


@pytest.fixture
def copy_then_double(rng):
    """(v, x, y, plan): a plan recorded from two passes, y = x then x = 2 y (recorded: x = 2 v,
    y = v); released after the test."""
    v = rng.standard_normal(64)
    x = Stream.from_array(v)
    y = Stream.like(x)
    with recording() as noted:
        KERNELS["copy"].draw(y, whole(y), {"A": x})
        KERNELS["scale"].draw(x, whole(x), {"X": y}, {"alpha": 2.0})
    plan = RecordedPlan(noted, keep=[x, y])
    yield v, x, y, plan
    plan.release()
    x.release()
    y.release()


def test_tally_counts_recorded_plans_and_nests(copy_then_double):
    _, x, y, plan = copy_then_double
    with counters.tally() as outer:
        with counters.tally() as inner:
            plan.run()
            plan.run()
        KERNELS["copy"].draw(y, whole(y), {"A": x})
    assert inner.passes == 4 and outer.passes == 5
    with counters.count(time=False) as c, counters.tally() as t:
        plan.run()
    assert c.passes() == t.passes == 2
    assert counters.current_tally() is None


def test_a_plans_pass_alone_draws_that_pass_only(copy_then_double):
    """RecordedPlan.alone(i) (to time one pass by itself) draws pass i as the plan does, and
    nothing else: the plan copies x into y, then doubles x from y (recorded: x = 2 v, y = v)."""
    v, x, y, plan = copy_then_double
    with counters.tally() as t:
        plan.alone(0).run()                                  # y = x = 2 v; x stays
    assert t.passes == 1
    np.testing.assert_array_equal(y.to_array(), (2 * v).astype(np.float32))
    np.testing.assert_array_equal(x.to_array(), (2 * v).astype(np.float32))
    plan.alone(1).run()                                      # x = 2 y = 4 v; y stays
    np.testing.assert_array_equal(x.to_array(), (4 * v).astype(np.float32))
    np.testing.assert_array_equal(y.to_array(), (2 * v).astype(np.float32))
    assert len(plan) == 2
