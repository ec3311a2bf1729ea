"""What one pass costs on the GPU found: host time per pass, and the fill limit.

``python -m gpgpu bench`` prints both. The fill limit is the rate at which the fragment
pipeline retires full-screen passes that write one texel per fragment (R32F, 4 bytes, or
RGBA32F, 16 bytes) with 0 to 3 texture reads (``glsl/fill_rate.frag``): no kernel of the
papers can shade faster, so the experiments report their update kernels' fragment rates as a
fraction of it (``fill_limit``). On an NVIDIA H200 only a small part of the chip runs the
graphics pipeline, and this limit, not the card's memory bandwidth, is what the papers'
kernels meet.
"""
from __future__ import annotations

import contextlib
import statistics
import time

import numpy as np

from .context import get_context, is_software_renderer
from .geometry import Rect, Texel
from .kernel import Kernel
from .stream import PingPong, Stream
from .blas1 import KERNELS, whole
from .cholesky import cholesky_plan
from .passes import CompiledPlan, SWAP

__all__ = ["pass_overhead", "plan_overhead", "chain_latency", "fill_rate", "fill_limits", "fill_limit",
           "default_fill_size"]

_PROBES: dict = {}


def _probe(reads: int, components: int) -> Kernel:
    key = (reads, components)
    if key not in _PROBES:
        _PROBES[key] = Kernel("fill_rate", texels=reads + 1, doc="fill-rate probe",
                              defines={"READS": reads, "COMPONENTS": components})
    return _PROBES[key]


def default_fill_size() -> int:
    """4096 x 4096 on a GPU, 512 x 512 on a software renderer."""
    return 512 if is_software_renderer() else 4096


def pass_overhead(passes: int = 20000) -> dict:
    """Host microseconds per pass for one-texel copies: the same primitive each pass, a new
    primitive (vertex table) each pass as the algorithms build them, and host + GPU."""
    ctx = get_context()
    copy = KERNELS["copy"]
    with Stream(16, 16) as src, Stream(16, 16) as dst:
        texel = Texel.at(3, 3, T0=lambda x, y: (x, y))
        for _ in range(100):  # warm up: compile, first draws
            copy.draw(dst, texel, {"A": src})
        ctx.finish()
        t0 = time.perf_counter()
        for _ in range(passes):
            copy.draw(dst, texel, {"A": src})
        t1 = time.perf_counter()
        ctx.finish()
        t2 = time.perf_counter()
        t3 = time.perf_counter()
        for k in range(passes):
            copy.draw(dst, Texel.at(k % 16, 3, T0=lambda x, y: (x, y)), {"A": src})
        t4 = time.perf_counter()
        ctx.finish()
    return {"passes": passes, "host_us_per_pass": (t1 - t0) / passes * 1e6,
            "host_us_per_pass_new_primitive": (t4 - t3) / passes * 1e6,
            "total_us_per_pass": (t2 - t0) / passes * 1e6}


def plan_overhead(m: int = 64, repeat: int = 20) -> dict:
    """Host microseconds per pass of a pre-built plan (beyond the papers): the passes of an order-``m``
    outer-product Cholesky (Algorithm 2 of 000 with the triangle update; five passes a step)
    drawn from one vertex buffer (:class:`gpgpu.passes.CompiledPlan`) on a ping-pong pair,
    ``repeat`` times. ``host_us_per_pass``: the time to issue them; ``total_us_per_pass``:
    until the GPU has finished. Small passes, so that the host's cost per pass shows.
    ``plan_python_us_per_pass``: the same runs with the draw calls left out (the plan's draw
    call a no-op while they run; the bindings and uniform writes stay), the host's Python (and
    binding) cost alone: host minus it is the driver's draw call."""

    ctx = get_context()
    plan = CompiledPlan(cholesky_plan(m))
    passes = sum(d is not SWAP for d in plan.plan)
    a = np.random.default_rng(0).random((m, m))
    a = (a @ a.T + m * np.eye(m)).astype(np.float32)
    try:
        with Stream.from_array(a) as s0, Stream.from_array(a) as s, Stream(m, m) as t:
            pp = PingPong(s, t)
            plan.run(pp, {"M0": s0})  # warm up: compile, upload the vertex buffer
            ctx.finish()
            t0 = time.perf_counter()
            for _ in range(repeat):  # factors garbage after the first: the passes cost the same
                plan.run(pp, {"M0": s0})
            t1 = time.perf_counter()
            ctx.finish()
            t2 = time.perf_counter()
            with _draw_calls_left_out(plan._ops, 3):
                t3 = time.perf_counter()
                for _ in range(repeat):
                    plan.run(pp, {"M0": s0})
                t4 = time.perf_counter()
    finally:
        plan.release_buffer()
    n = passes * repeat
    return {"order": m, "plan_passes": passes, "plan_host_us_per_pass": (t1 - t0) / n * 1e6,
            "plan_total_us_per_pass": (t2 - t0) / n * 1e6, "plan_python_us_per_pass": (t4 - t3) / n * 1e6}


@contextlib.contextmanager
def _draw_calls_left_out(ops: list, at: int):
    """A plan's passes (``ops``, tuples whose item ``at`` is the draw call a run makes: the
    plans keep moderngl's C method, not ``VertexArray.render``) with a no-op draw call inside
    the block."""
    saved = list(ops)
    ops[:] = [op[:at] + (lambda *a: None,) + op[at + 1:] for op in ops]
    try:
        yield
    finally:
        ops[:] = saved


def chain_latency(passes: int = 4000, ring: int = 8, burst: int = 8) -> dict:
    """Microseconds per one-texel copy until the GPU has finished (host + GPU), by what a pass
    reads and where it writes, and the round trip of a read-back (beyond the papers: what the
    iterative methods' dependent passes and checks cost, whatever their size).

    ``same_target_us_per_pass``: every pass copies one stream into one other (no pass reads
    another's output; one framebuffer). ``new_target_us_per_pass``: the same source into
    ``ring`` streams in turn (a framebuffer change a pass). ``dependent_us_per_pass``: each pass
    reads the stream the previous pass wrote, around a ring of ``ring`` streams, as the
    solvers' chains do. ``readback_us``: one pass and the read-back of its texel, per round
    trip; ``burst_readback_us``: ``burst`` dependent passes and then a read-back, per round
    trip (a solver's check after its passes). ``chain_host_us_per_pass``: the host's share of the
    dependent chain (issuing alone)."""
    ctx = get_context()
    copy = KERNELS["copy"]
    streams = [Stream(1, 1, data=np.ones((1, 1), np.float32)) for _ in range(ring + 1)]
    src, ring_ = streams[-1], streams[:-1]
    texel = whole(src)

    def same(k):
        copy.draw(ring_[0], texel, {"A": src})

    def new(k):
        copy.draw(ring_[k % ring], texel, {"A": src})

    def dependent(k):
        copy.draw(ring_[(k + 1) % ring], texel, {"A": ring_[k % ring]})

    def timed(step, count):
        for k in range(min(count, 100)):           # warm up: compile, first draws
            step(k)
        ctx.finish()
        t0 = time.perf_counter()
        for k in range(count):
            step(k)
        t1 = time.perf_counter()
        ctx.finish()
        return (t1 - t0) / count * 1e6, (time.perf_counter() - t0) / count * 1e6

    def round_trip(chained):
        """``chained`` dependent passes, then the read-back of the last one's texel."""
        def trip(k):
            for j in range(chained):
                dependent(j)
            ring_[chained % ring].item()
        return trip

    try:
        out = {"chain_passes": passes, "ring": ring, "burst": burst}
        out["same_target_us_per_pass"] = timed(same, passes)[1]
        out["new_target_us_per_pass"] = timed(new, passes)[1]
        out["chain_host_us_per_pass"], out["dependent_us_per_pass"] = timed(dependent, passes)
        trips = max(1, passes // (4 * burst))
        out["readback_us"] = timed(round_trip(1), trips)[1]
        out["burst_readback_us"] = timed(round_trip(burst), trips)[1]
    finally:
        for s in streams:
            s.release()
    return out


def recorded_overhead(repeat: int = 2000) -> dict:
    """Host microseconds per pass of two recorded plans (:class:`gpgpu.passes.RecordedPlan`; beyond
    the papers) run in turn, as an iteration recorded for each order of its ping-pong pair is (the
    LP's fused PCG): each plan draws four one-texel passes of four kernels (saxpy, scale,
    add_scalar, elementwise_product) from x into y, the other from y into x, ``repeat`` times
    each. ``recorded_host_us_per_pass``: the time to issue them; ``recorded_python_us_per_pass``:
    the same with the draw calls left out (as :func:`plan_overhead`)."""
    from .passes import RecordedPlan, recording

    ctx = get_context()
    x, y = Stream(1, 1, data=np.ones((1, 1), np.float32)), Stream(1, 1, data=np.ones((1, 1), np.float32))
    passes = (("saxpy", ("X", "Y"), {"alpha": 0.5}), ("scale", ("X",), {"alpha": 0.5}),
              ("add_scalar", ("X",), {"alpha": 0.25}), ("elementwise_product", ("X", "Y"), {}))
    plans = []
    try:
        for src, dst in ((x, y), (y, x)):
            with recording() as noted:
                for name, samplers, uniforms in passes:
                    KERNELS[name].draw(dst, whole(dst), {s: src for s in samplers}, uniforms)
            plans.append(RecordedPlan(noted, keep=[x, y]))
        n = repeat * 2 * len(passes)
        timings = []
        for drawn in (True, False):
            with contextlib.ExitStack() as left_out:
                if not drawn:
                    for p in plans:
                        left_out.enter_context(_draw_calls_left_out(p._fast, 5))
                for p in plans:                      # warm up: the programs hold their values
                    p.run()
                ctx.finish()
                t0 = time.perf_counter()
                for _ in range(repeat):
                    plans[0].run()
                    plans[1].run()
                timings.append((time.perf_counter() - t0) / n * 1e6)
                ctx.finish()
    finally:
        for p in plans:
            p.release()
        x.release()
        y.release()
    return {"recorded_passes": 2 * len(passes), "recorded_host_us_per_pass": timings[0],
            "recorded_python_us_per_pass": timings[1]}


def fill_rate(size: int, reads: int = 0, components: int = 1, repeat: int = 10) -> float:
    """Fragments per second of a full-screen ``size`` x ``size`` pass with ``reads`` texture
    reads per fragment, writing ``components`` channels (median of ``repeat`` passes, each
    timed from an idle GPU to ``finish()``)."""
    if reads not in (0, 1, 2, 3) or components not in (1, 4):
        raise ValueError("reads must be 0..3 and components 1 or 4")
    ctx = get_context()
    kernel = _probe(reads, components)
    rng = np.random.default_rng(0)
    inputs = [Stream(size, size, components=components,
                     data=rng.random((size, size, components), dtype=np.float32)) for _ in range(reads)]
    target = Stream(size, size, components=components)
    try:
        rect = Rect.covering(0, 0, size, size)
        bound = dict(zip("ABC", inputs))
        kernel.draw(target, rect, bound)  # compile and warm up
        ctx.finish()
        times = []
        for _ in range(max(1, repeat)):
            t0 = time.perf_counter()
            kernel.draw(target, rect, bound)
            ctx.finish()
            times.append(time.perf_counter() - t0)
    finally:
        target.release()
        for s in inputs:
            s.release()
    return size * size / statistics.median(times)


def fill_limits(size: int | None = None, repeat: int = 10) -> dict:
    """{(components, reads): fragments per second} for R32F and RGBA32F, 0 to 3 reads."""
    size = size or default_fill_size()
    return {(c, r): fill_rate(size, r, c, repeat) for c in (1, 4) for r in range(4)}


_LIMITS: dict = {}


def fill_limit(reads: int = 3, components: int = 1, size: int | None = None, repeat: int = 5) -> float:
    """The fill limit (fragments/s) for a kernel that reads ``reads`` texels and writes one,
    measured once per renderer and process (what the experiments compare against)."""
    renderer = get_context().info["GL_RENDERER"]
    key = (renderer, reads, components)
    if key not in _LIMITS:
        _LIMITS[key] = fill_rate(size or default_fill_size(), reads, components, repeat)
    return _LIMITS[key]
