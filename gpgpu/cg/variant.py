"""What every iteration variant of conjugate gradients shares (in the manner of PETSc's KSP
types): an object built over the operator, b and M of the scaled system, whose ``setup`` makes
every stream of the solve once, ``start`` (re)starts CG from x and r, ``iterate`` draws one
iteration's passes from the current streams into the next ones, and ``step`` draws that
iteration from a plan recorded the first time its ping-pong pairs stand in a given order
(``gpgpu.passes.RecordedPlan``), then swaps the pairs. Vectors and 1 x 1 scalars are held in
named records (:class:`Streams`), never unpacked by position. The variants:
:class:`gpgpu.cg.standard.Standard` (Shewchuk's listing, paper 003), :class:`gpgpu.cg.fan.Fan`
and :class:`gpgpu.cg.single_reduction.SingleReduction` (beyond the papers)."""
from __future__ import annotations

import numpy as np

from ..passes import NotReplayable, RecordedPlan, recording
from ..stream import Stream


class Streams:
    """A record of named streams (``v.x``, ``v.xn``, ``s.alpha``, ...): the vectors or the 1 x 1
    scalars of an iteration. ``swap("x", "xn")`` exchanges a ping-pong pair."""

    def __init__(self, **streams: Stream):
        self.__dict__.update(streams)

    def swap(self, *names: str) -> None:
        """Exchange the streams of each pair of names given, (a, b, c, d): a <-> b, c <-> d."""
        d = self.__dict__
        for a, b in zip(names[::2], names[1::2]):
            d[a], d[b] = d[b], d[a]


class Variant:
    """One CG iteration variant over ``op`` (an ``_Operator``), the scaled system's ``b`` and
    diagonal ``M`` (None: no preconditioner), summing dot products by ``reduction``; ``threshold``
    is the convergence watch's ||r||^2 target; ``plan``: draw iterations from recorded plans.

    Subclasses set ``dynamic`` (the (kernel, uniform) pairs whose value, the iteration number and
    the next one, each plan's run gives), ``late_watch`` (the convergence of x_k is seen in
    iteration k + 1) and implement ``setup``, ``start``, ``iterate``, ``plan_key``, ``swap``,
    ``watches`` and ``converged``."""

    dynamic: tuple = ()
    late_watch = False

    def __init__(self, op, b: Stream, M: Stream | None, reduction: str, threshold: float, plan: bool = True):
        self.op, self.b, self.M, self.reduction = op, b, M, reduction
        self.threshold, self.plan = threshold, plan
        self.jac = int(M is not None)
        self.created: list = []
        self.plans: dict = {}
        self.pairs: dict = {}          # passes.Targets of several render targets, by their streams

    def new(self, rows: int | None = None, cols: int = 1, **kw) -> Stream:
        """A stream of the solve (released with it): like b, or rows x cols."""
        s = Stream.like(self.b) if rows is None else Stream(rows, cols, **kw)
        self.created.append(s)
        return s

    def vectors(self, *names: str) -> Streams:
        """A record of vectors like b, one a name (x, r, d and their next ones, q, s, ...)."""
        return Streams(**{name: self.new() for name in names})

    def scalars(self, *names: str) -> Streams:
        """A record of 1 x 1 scalar streams, one a name."""
        return Streams(**{name: self.new(1, 1) for name in names})

    def setup(self) -> None:
        """Every stream of the solve, made once: the vectors x, r, d in ping-pong pairs (an
        iteration renders the next x, r, d while reading the current ones), q = A d and s = M r,
        and the true residual's 1 x 1 ||b - A x||^2; subclasses add their own."""
        self.v = self.vectors("x", "xn", "r", "rn", "d", "dn", "q", "s")
        self.true_rr = self.new(1, 1)

    def step(self, it: int, recompute: bool, check: bool) -> None:
        """Iteration ``it`` (from 0), from its plan when there is one; then the pairs swap.
        ``recompute``: r = b - A x instead of the recurrence (Shewchuk's every 50); ``check``:
        the watches are read back after this iteration."""
        key = self.plan_key(recompute, check)
        p = self.plans.get(key, False) if self.plan else None
        if p:
            p.run({kernel_uniform: float(it + k) for k, kernel_uniform in enumerate(self.dynamic)})
        elif p is False:
            with recording() as noted:
                self.iterate(it, recompute, check)
            try:
                self.plans[key] = RecordedPlan(noted, keep=self.kept(), dynamic=self.dynamic)
            except NotReplayable:
                self.plans[key] = None
        else:
            self.iterate(it, recompute, check)
        self.swap()

    def kept(self) -> list:
        """The streams a recorded plan must not take for its temporaries: the solve's own, b, M,
        the operator's scaling temporary and the multiple-target bindings."""
        return (self.created + [self.b] + ([self.M] if self.M is not None else [])
                + ([self.op._tmp] if self.op._tmp is not None else []) + list(self.pairs.values()))

    def swap(self) -> None:
        """The ping-pong pairs of vectors swap after an iteration."""
        self.v.swap("x", "xn", "r", "rn", "d", "dn")

    def retarget(self, target: float, floor: float) -> None:
        """The convergence watch's target ||r|| becomes ``target`` (at least ``floor``): the
        recorded plans, which hold the old one, are recorded again."""
        self.threshold = float(np.float32(min(max(target, floor) ** 2, float(np.finfo(np.float32).max))))
        for p in self.plans.values():
            if p is not None:
                p.release()
        self.plans.clear()

    def restart_from_residual(self) -> None:
        """CG restarts from x with the residual just written into ``rn`` (the true residual)."""
        self.v.swap("r", "rn")
        self.start()

    def release(self, keep: Stream | None = None) -> None:
        """Every plan, binding and stream of the solve released, but ``keep`` (the answer)."""
        for p in self.plans.values():
            if p is not None:
                p.release()
        for t in self.pairs.values():
            t.release()
        for s in self.created:
            if s is not keep:
                s.release()

    # the variant's own: ------------------------------------------------------------------
    def start(self) -> None:
        raise NotImplementedError

    def iterate(self, it: int, recompute: bool, check: bool) -> None:
        raise NotImplementedError

    def plan_key(self, recompute: bool, check: bool) -> tuple:
        raise NotImplementedError

    def watches(self, check: bool) -> tuple:
        """(||r||^2, breakdown watch, convergence watch) after an iteration: one read-back."""
        raise NotImplementedError

    def converged(self) -> bool:
        """Whether the convergence watch is set (one read-back)."""
        raise NotImplementedError
