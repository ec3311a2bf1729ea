"""A multipass algorithm as a list of draws on a ping-pong pair.

The papers' algorithms (Algorithm 2 of 000, Algorithms 3 and 5 of 001) are sequences of
"bind X as the target, run kernel K over primitive P, swap S and T". A plan is exactly that:
``Draw(kernel, target, primitive, inputs)`` items, where target and inputs name roles
("S", "T", or any other stream given to ``run``), and ``SWAP``. Plans are pure, so tests can
rasterize every primitive of every step and compare its coverage with the intended texels,
and ``run`` executes them with the streams bound.

Beyond the papers (host cost per pass): :func:`compiled` turns a plan into a
:class:`CompiledPlan`, whose vertices are written into one vertex buffer once, and which
each later run draws pass by pass as ranges of that buffer: no primitive is built and no
vertex written per pass. ``compiled(key, build)`` keeps the compiled plans of the calling
thread's context by key (the factorization's order and variant), the most recent
``PLAN_CACHE`` of them, so a solver that factors matrices of one order again and again (the
interior point methods) builds its plan once. The passes, their order, inputs and results are
the plan's, so counters and the recorder see the same passes.
"""
from __future__ import annotations

from typing import NamedTuple

from .kernel import Kernel
from .stream import PingPong

__all__ = ["Draw", "SWAP", "run", "CompiledPlan", "compiled", "PLAN_CACHE"]

PLAN_CACHE = 16

SWAP = "swap"


class Draw(NamedTuple):
    kernel: Kernel
    target: str  # role of the target stream
    primitive: object
    inputs: dict  # sampler name -> role
    uniforms: dict | None = None
    texels: int | None = None


class CompiledPlan:
    """A plan with all its vertices in one vertex buffer (made on first use, in the context of
    the thread that runs it, and kept in that context's state)."""

    def __init__(self, plan):
        self.plan = list(plan)
        self.buffer = None
        self._vaos = {}
        self._firsts = []

    def _upload(self):
        from .kernel import _state

        st = _state()
        data, firsts, first = [], [], 0
        for item in self.plan:
            if item is SWAP:
                firsts.append(None)
                continue
            d = item.primitive.data()
            data.append(d)
            firsts.append(first)
            first += len(d) // 32
        self.buffer = st.ctx.buffer(b"".join(data) or bytes(32))
        self._firsts = firsts

    def release_buffer(self) -> None:
        for vao in self._vaos.values():
            vao.release()
        if self.buffer is not None:
            self.buffer.release()
        self.buffer, self._vaos, self._firsts = None, {}, []

    def run(self, pp: PingPong, others: dict | None = None) -> None:
        from . import counters
        from .kernel import _state

        if self.buffer is None:
            self._upload()
        others = others or {}
        vaos = self._vaos
        st = _state()
        # nothing else binds a framebuffer or a texture between the passes of this loop, so a
        # pass binds only what differs from the previous pass's (host cost)
        bound = {}
        counted = counters.current() is not None
        S, T = pp.S, pp.T
        for item, first in zip(self.plan, self._firsts):
            if item is SWAP:
                S, T = T, S
                continue
            k = item.kernel
            vao = vaos.get(k._key)
            if vao is None:
                vao = vaos[k._key] = k.vertex_array(self.buffer)
            roles = {"S": S, "T": T, **others} if others else {"S": S, "T": T}
            inputs = {name: roles[role] for name, role in item.inputs.items()}
            if counted:  # the counters' (and recorder's) path: each pass measured as draw_range's
                pp.S, pp.T = S, T
                k.draw_range(roles[item.target], vao, item.primitive, first, inputs, item.uniforms, item.texels)
                bound.clear()
                continue
            k._bind(st, roles[item.target], inputs, item.uniforms, bound)
            vao.render(item.primitive.mode, vertices=len(item.primitive), first=first)
        pp.S, pp.T = S, T


def compiled(key, build) -> CompiledPlan:
    """The compiled plan of ``key`` in this thread's context, built by ``build()`` (a plan) on
    the first call; the least recently used beyond ``PLAN_CACHE`` are released."""
    from .kernel import _state

    plans = _state().plans
    c = plans.pop(key, None)
    if c is None:
        c = CompiledPlan(build())
    plans[key] = c                        # most recent last
    while len(plans) > PLAN_CACHE:
        plans.pop(next(iter(plans))).release_buffer()
    return c


def run(plan, pp: PingPong, others: dict | None = None, transfer: str = "rtt") -> None:
    """Execute a plan: roles "S" and "T" are the ping-pong pair, other roles come from ``others``.
    A :class:`CompiledPlan` is drawn from its vertex buffer (render to texture only; with
    ``transfer="ctt"`` its passes are drawn one by one as a plain plan's)."""
    others = others or {}
    if isinstance(plan, CompiledPlan):
        if transfer == "rtt":
            plan.run(pp, others)
            return
        plan = plan.plan
    for item in plan:
        if item is SWAP:
            pp.swap()
            continue
        roles = {"S": pp.S, "T": pp.T, **others}
        item.kernel.draw(roles[item.target], item.primitive,
                         {name: roles[role] for name, role in item.inputs.items()},
                         item.uniforms, item.texels, transfer)
