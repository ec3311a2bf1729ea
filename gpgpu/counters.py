"""Counting passes, fragments, GPU time and bytes; tracing the passes.

Off by default (queries cost time). Around any block::

    with gpgpu.counters.count() as c:
        gpgpu.cholesky(A)
    print(c.report())
    c.fragments("outer_product_subtraction")   # exact, from GL_SAMPLES_PASSED

Per kernel: passes, fragments shaded (occlusion queries, GL_SAMPLES_PASSED), GPU time
(GL_TIME_ELAPSED where the driver has timer queries) and bytes = declared texels read plus
written per fragment x 4 x fragments (Table 1 of paper 000). ``c.trace`` lists every pass:
kernel, primitive, vertices, fragments, target shape.
"""
from __future__ import annotations

import threading
import time as _time
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass, field

from .context import get_context, has_timer_query

__all__ = ["count", "Counter", "Pass", "KernelStats", "current", "tally", "Tally", "current_tally"]

# Counters are per thread, like contexts: a count() block sees the passes of its own thread.
_local = threading.local()
_open = 0  # count() blocks open in all threads: when 0, current() answers without a lookup
_lock = threading.Lock()


def _stack() -> list:
    st = getattr(_local, "stack", None)
    if st is None:
        st = _local.stack = []
    return st


def current():
    """The innermost active counter of this thread, or None (Kernel.draw's fast path)."""
    if not _open:
        return None
    st = getattr(_local, "stack", None)
    return st[-1] if st else None


def __getattr__(name):  # ``counters.active``: the same as current(), kept for readers
    if name == "active":
        return current()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass
class Pass:
    """One rasterization pass."""

    kernel: str
    primitive: str
    vertices: int
    target: tuple
    texels: int
    fragments: int = 0
    gpu_ns: int = 0
    query: object = field(default=None, repr=False, compare=False)
    copied: bool = False  # a copy-to-texture pass: fragments are the texels copied

    @property
    def bytes(self) -> int:
        return 4 * self.texels * self.fragments


@dataclass
class KernelStats:
    passes: int = 0
    fragments: int = 0
    gpu_ns: int = 0
    query: object = field(default=None, repr=False, compare=False)
    bytes: int = 0


@dataclass
class Counter:
    """Collects passes while active; results are resolved from the queries when read."""

    time: bool = True
    keep_trace: bool = True
    _pending: list = field(default_factory=list)
    _passes: list = field(default_factory=list)
    _stats: "OrderedDict[str, KernelStats]" = field(default_factory=OrderedDict)

    def measure(self, kernel, primitive, target, texels, render, inputs=None, uniforms=None) -> Pass:
        """Run ``render()`` (one pass) inside an occlusion (and timer) query and note the pass.
        ``inputs`` and ``uniforms`` are the pass's, for subclasses that look at them
        (:class:`gpgpu.record.Recorder`)."""
        ctx = get_context()
        q = ctx.query(samples=True, time=self.time)
        with q:
            render()
        p = Pass(kernel.label, primitive.kind, len(primitive), target.shape, texels or kernel.texels,
                 query=q)
        stack = _stack()
        for c in stack:
            c._pending.append(p)
        if len(self._pending) > 4096:
            for c in stack:
                c._resolve()
        return p

    def measure_copy(self, label, primitive, target, copy) -> Pass:
        """A pass that copies instead of shading (copy-to-texture): ``copy()`` returns the texels
        copied, which are its fragments; GPU time from a timer query where there is one."""
        q = get_context().query(time=True) if self.time else None
        if q is not None:
            with q:
                copied = copy()
        else:
            copied = copy()
        p = Pass(label, "copy", len(primitive), target.shape, 2, fragments=int(copied), query=q,
                 copied=True)
        stack = _stack()
        for c in stack:
            c._pending.append(p)
        return p

    def _resolve(self) -> None:
        for p in self._pending:
            q = p.query
            if q is not None:  # first counter to read it resolves it for all
                if not p.copied:
                    p.fragments = int(q.samples)
                p.gpu_ns = int(q.elapsed) if self.time else 0
                p.query = None
            self._add(p)
        self._pending.clear()

    def _add(self, p: Pass) -> None:
        s = self._stats.setdefault(p.kernel, KernelStats())
        s.passes += 1
        s.fragments += p.fragments
        s.gpu_ns += p.gpu_ns
        s.bytes += p.bytes
        if self.keep_trace:
            self._passes.append(p)

    # ------------------------------------------------------------------ results
    @property
    def stats(self) -> "OrderedDict[str, KernelStats]":
        self._resolve()
        return self._stats

    @property
    def trace(self) -> list:
        self._resolve()
        return list(self._passes)

    def fragments(self, kernel: str | None = None) -> int:
        st = self.stats
        if kernel is None:
            return sum(s.fragments for s in st.values())
        return st[kernel].fragments if kernel in st else 0

    def passes(self, kernel: str | None = None) -> int:
        st = self.stats
        if kernel is None:
            return sum(s.passes for s in st.values())
        return st[kernel].passes if kernel in st else 0

    def bytes(self, kernel: str | None = None) -> int:
        st = self.stats
        if kernel is None:
            return sum(s.bytes for s in st.values())
        return st[kernel].bytes if kernel in st else 0

    def gpu_seconds(self, kernel: str | None = None) -> float:
        st = self.stats
        ns = sum(s.gpu_ns for s in st.values()) if kernel is None else (st[kernel].gpu_ns if kernel in st else 0)
        return ns * 1e-9

    def report(self) -> str:
        """A table: kernel, passes, fragments, bytes, GPU time."""
        rows = [f"{'kernel':34s} {'passes':>8s} {'fragments':>12s} {'bytes':>14s} {'GPU ms':>10s}"]
        for name, s in self.stats.items():
            rows.append(f"{name:34s} {s.passes:8d} {s.fragments:12d} {s.bytes:14d} {s.gpu_ns * 1e-6:10.3f}")
        rows.append(f"{'total':34s} {self.passes():8d} {self.fragments():12d} {self.bytes():14d} "
                    f"{self.gpu_seconds() * 1e3:10.3f}")
        return "\n".join(rows)

    def format_trace(self, limit: int | None = None) -> str:
        lines = []
        for i, p in enumerate(self.trace[:limit]):
            lines.append(f"{i:6d} {p.kernel:32s} {p.primitive:8s} {p.vertices:2d} vertices -> "
                         f"{p.fragments:9d} fragments into {p.target[0]}x{p.target[1]}")
        return "\n".join(lines)


@contextmanager
def suspended():
    """Inside the block no counter of this thread sees a pass: for passes that only look at
    another pass (the recorder's coverage and fetch passes), which are not the algorithm's."""
    stack = _stack()
    saved = stack[:]
    stack.clear()
    try:
        yield
    finally:
        stack[:] = saved


@contextmanager
def activated(counter: Counter):
    """Make ``counter`` this thread's innermost counter inside the block (``count`` and
    :func:`gpgpu.record.record` open theirs with it)."""
    global _open
    stack = _stack()
    stack.append(counter)
    with _lock:
        _open += 1
    try:
        yield counter
    finally:
        stack.remove(counter)
        with _lock:
            _open -= 1


@contextmanager
def count(time: bool = True, trace: bool = True):
    """Count every pass drawn inside the block (see module docstring)."""
    with activated(Counter(time=time and has_timer_query(), keep_trace=trace)) as c:
        yield c


# --------------------------------------------------------------------------- the host's tally
@dataclass
class Tally:
    """Passes drawn inside a :func:`tally` block and the host time spent issuing them: binding
    the program, framebuffer, textures and uniforms, writing vertices and the draw call, for a
    pass drawn by itself (``Kernel.draw``) or from a plan (``gpgpu.passes``); not the time the
    host waits for the GPU (read-backs) nor its own numerical work. No queries: it costs two
    clock reads a pass or a plan."""

    passes: int = 0
    seconds: float = 0.0

    @property
    def host_us_per_pass(self) -> float:
        """Microseconds of host time a pass (0 without passes)."""
        return self.seconds / self.passes * 1e6 if self.passes else 0.0


_tally_local = threading.local()
clock = _time.perf_counter


def current_tally():
    """The innermost active :class:`Tally` of this thread, or None."""
    return getattr(_tally_local, "tally", None)


@contextmanager
def tally():
    """``with tally() as t:`` counts the passes drawn inside and the host time spent issuing
    them (:class:`Tally`); a tally opened inside another adds its counts to the outer one."""
    outer = current_tally()
    t = Tally()
    _tally_local.tally = t
    try:
        yield t
    finally:
        _tally_local.tally = outer
        if outer is not None:
            outer.passes += t.passes
            outer.seconds += t.seconds


@contextmanager
def suspended_tally():
    """Inside the block no tally of this thread counts (a plan that counts its passes itself
    and draws them through a path that would count them again)."""
    saved = current_tally()
    _tally_local.tally = None
    try:
        yield
    finally:
        _tally_local.tally = saved
