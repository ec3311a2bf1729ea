"""Threads: every thread gets its own context; numpy calls are right from any thread; a Stream
used outside its thread raises WrongThreadError instead of touching another context."""
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import gpgpu
from gpgpu import Stream, WrongThreadError, counters
from gpgpu.context import current_context, get_context


def _spd(rng, n):
    B = rng.standard_normal((n, n))
    return B @ B.T + n * np.eye(n)


def _work(seed: int) -> list:
    """One repetition: Cholesky, an LU solve and a dot product, each checked against float64."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 25))
    A = _spd(rng, n)
    L = gpgpu.cholesky(A)
    ref = np.linalg.cholesky(A)
    errors = [np.abs(L - ref).max() / np.abs(ref).max()]
    G = rng.standard_normal((n, n)) + n * np.eye(n)
    b = rng.standard_normal(n)
    x = gpgpu.lu_solve(G, b)
    xr = np.linalg.solve(G, b)
    errors.append(np.abs(x - xr).max() / np.abs(xr).max())
    u, v = rng.integers(-9, 9, 100).astype(float), rng.integers(-9, 9, 100).astype(float)
    errors.append(abs(gpgpu.dot(u, v) - u @ v))  # exact on small integers
    return errors


def test_four_threads_fifty_repetitions_each_match_numpy():
    start = threading.Barrier(4)

    def worker(t):
        start.wait()  # the first calls (context creation) race on purpose
        return [_work(1000 * t + r) for r in range(50)]

    with ThreadPoolExecutor(4) as ex:
        results = list(ex.map(worker, range(4)))
    errors = np.array([e for per_thread in results for e in per_thread])
    assert errors.shape == (200, 3)
    assert errors[:, 0].max() < 1e-5      # Cholesky, float32 against float64
    assert errors[:, 1].max() < 1e-4      # LU solve of a diagonally dominant matrix
    assert errors[:, 2].max() == 0.0      # the dot product of integers is exact
    # and the main thread's context is intact afterwards
    assert _work(7)[2] == 0.0


def test_each_thread_has_its_own_context_released_when_it_ends():
    main = get_context()
    seen = {}

    def worker():
        seen["ctx"] = get_context()
        seen["stream"] = Stream.from_array(np.arange(4.0))
        seen["value"] = gpgpu.dot(np.ones(3), np.arange(3.0))

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen["value"] == 3.0
    assert seen["ctx"] is not main and current_context() is main
    assert seen["ctx"].extra.released            # the thread's end released its context
    with pytest.raises(WrongThreadError, match="released"):
        seen["stream"].to_array()
    seen["stream"].release()                     # harmless: the context is gone


def test_stream_used_from_another_thread_raises_and_leaves_owner_intact():
    a = np.diag([1.0, 4.0, 9.0])
    with Stream.from_array(a) as s:
        errors = {}

        def worker():
            for name, call in (("to_array", s.to_array), ("reduce", lambda: gpgpu.reduce(s, "sum")),
                               ("cholesky", lambda: gpgpu.cholesky(s))):
                try:
                    call()
                except Exception as exc:  # noqa: BLE001 - recorded and checked below
                    errors[name] = exc

        t = threading.Thread(target=worker, name="intruder")
        t.start()
        t.join()
        assert set(errors) == {"to_array", "reduce", "cholesky"}
        for exc in errors.values():
            assert isinstance(exc, WrongThreadError)
            assert "MainThread" in str(exc) and "intruder" in str(exc)
        np.testing.assert_array_equal(s.to_array(), a)


def test_release_from_another_thread_defers_to_the_owner():
    s = Stream.from_array(np.ones((3, 3)))
    keep = Stream.from_array(np.full((3, 3), 2.0))
    t = threading.Thread(target=s.release)
    t.start()
    t.join()
    assert s.released
    ctx = get_context()
    assert len(ctx.objects) >= 1                 # queued for this thread, not freed there
    gpgpu.context.collect_garbage()
    assert len(ctx.objects) == 0
    np.testing.assert_array_equal(keep.to_array(), np.full((3, 3), 2.0))
    keep.release()


def test_counters_see_only_their_own_thread():
    with counters.count() as c:
        t = threading.Thread(target=lambda: gpgpu.reduce(np.ones(64), "sum"))
        t.start()
        t.join()
        assert c.passes() == 0
        gpgpu.reduce(np.ones(4), "sum")
    assert c.passes("sum_reduction") == 2


def test_release_context_then_new_context_in_same_thread():
    def worker(out):
        s = Stream.from_array(np.ones(3))
        first = get_context()
        gpgpu.release_context()
        assert current_context() is None
        with pytest.raises(WrongThreadError, match="released"):
            s.to_array()
        out["value"] = gpgpu.dot(np.ones(3), np.ones(3))   # a fresh context
        out["new"] = get_context() is not first

    out = {}
    t = threading.Thread(target=lambda: out.update(run=worker(out)))
    t.start()
    t.join()
    assert out == {"value": 3.0, "new": True, "run": None}
