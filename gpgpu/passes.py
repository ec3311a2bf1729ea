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

Iterative methods (conjugate gradients) draw the same passes every iteration through code
that builds them pass by pass (products, reductions). :func:`recording` notes the passes one
iteration draws (drawing them too), and :class:`RecordedPlan` draws them again: all their
vertices in one vertex buffer, each pass's program, target framebuffer, textures and uniforms
chosen once, the temporaries the iteration borrowed replaced by streams of the plan's own (no
borrow or give_back in the loop), a uniform that changes from one iteration to the next
(``dynamic``) given to each ``run``. The passes, their order, inputs and results are the
recorded ones: a recorded iteration and its replays are the same passes. A program keeps the
uniform values last written, and a plan's pass writes or compares none while its program holds
that pass's values; passes of one program with equal values in two plans (an iteration
recorded for each order of its ping-pong pairs) share their writes, so plans run in turn write
and compare no uniform either.
"""
from __future__ import annotations

import copy
import struct
from contextlib import contextmanager
from functools import partial
from typing import NamedTuple

from . import counters
from .kernel import Kernel, context_state
from .stream import PingPong, Stream
from .context import park

__all__ = ["Draw", "SWAP", "run", "CompiledPlan", "compiled", "PLAN_CACHE", "recording", "RecordedPlan",
           "NotReplayable", "Targets"]

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
        self._ops = None
        self._roles = None

    def _upload(self):
        st = context_state()
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
        self.buffer, self._vaos, self._firsts, self._ops = None, {}, [], None

    def _compile_ops(self, st) -> None:
        """The plan as flat operations on slots (host cost per pass): slot 0 and 1 are the pair's
        S and T as the run starts (the SWAPs resolved here, once), 2 .. the other roles; per
        pass the program, its vertex array, the target slot, the (unit, slot) of each input,
        the sampler uniforms with their units and the uniforms with their values."""
        roles = sorted({r for d in self.plan if d is not SWAP for r in (d.target, *d.inputs.values())} - {"S", "T"})
        index = {r: 2 + i for i, r in enumerate(roles)}
        ops, parity = [], 0
        for item, first in zip(self.plan, self._firsts):
            if item is SWAP:
                parity ^= 1
                continue
            k = item.kernel
            prog, _, cache = k.compiled(st)
            vao = self._vaos.get(k.key)
            if vao is None:
                vao = self._vaos[k.key] = k.vertex_array(self.buffer)
            slot = lambda role: parity if role == "S" else (1 - parity if role == "T" else index[role])  # noqa: E731
            target = slot(item.target)
            inputs = tuple((unit, slot(role)) for unit, role in enumerate(item.inputs.values()))
            if any(s == target for _, s in inputs):
                raise ValueError(f"kernel {k.name!r}: a role is both input and target of a pass of this plan")
            samplers = [(name, k.sampler(prog, name), unit) for unit, name in enumerate(item.inputs)]
            uniforms = []
            for name, value in (item.uniforms or {}).items():
                u = k.uniform(prog, name)
                uniforms.append((name, value, u, _pack(u, value), _writer(u)))   # packed once
            ops.append((k, prog, cache, _renderer(vao), item.primitive.mode, len(item.primitive), first, target,
                        inputs, tuple(samplers), tuple(uniforms)))
        self._ops, self._roles, self._parity = ops, roles, parity

    def run(self, pp: PingPong, others: dict | None = None) -> None:
        if self.buffer is None:
            self._upload()
        others = others or {}
        if counters.current() is None:
            self._run_fast(pp, others)
            return
        self._run_pass_by_pass(pp, others, counted=True)

    def _run_fast(self, pp: PingPong, others: dict) -> None:
        """``run`` without counters: the passes of :meth:`_compile_ops`, each binding only the
        framebuffer, textures, sampler units and uniform values that differ from the previous
        pass's (nothing else binds between the passes of this loop)."""

        tally = counters.current_tally()
        t0 = counters.clock() if tally is not None else 0.0
        self._draw_ops(pp, others, context_state())
        if tally is not None and self._ops is not None:
            tally.passes += len(self._ops)
            tally.seconds += counters.clock() - t0

    def _draw_ops(self, pp: PingPong, others: dict, st) -> None:
        if self._ops is None:
            self._compile_ops(st)
        streams = [pp.S, pp.T] + [others[r] for r in self._roles]
        ctx = st.ctx
        for s in streams:
            if s.ctx is not ctx or s.texture is None:
                s._check_alive()
        if len(set(map(id, streams))) < len(streams):      # one stream in two roles: check each pass
            with counters.suspended_tally():                   # counted by _run_fast
                self.run_checked(pp, others)
            return
        # moderngl's objects' own methods, without their Python frames (as RecordedPlan.run)
        fbo_uses = [s.fbo.mglo.use for s in streams]
        texture_uses = [s.texture.mglo.use for s in streams]
        sizes = [(s.cols, s.rows) for s in streams]
        last_target, bound = None, [None] * 16
        for k, prog, cache, render, mode, count, first, target, inputs, samplers, uniforms in self._ops:
            if target != last_target:
                fbo_uses[target]()
                last_target = target
            size = sizes[target]
            if cache.get("viewport") != size:
                prog["viewport"].value = size
                cache["viewport"] = size
            for unit, slot in inputs:
                if bound[unit] != slot:
                    texture_uses[slot](unit)
                    bound[unit] = slot
            for name, u, unit in samplers:
                if cache.get(name) != unit:
                    u.value = unit
                    cache[name] = unit
            if cache.owner is not uniforms:      # the program may hold another pass's values
                _write_uniforms(cache, uniforms)
            render(mode, count, first, -1)
        if last_target is not None:
            streams[last_target].fbo.ctx.fbo = streams[last_target].fbo   # what Framebuffer.use() records
        if self._parity:
            pp.S, pp.T = pp.T, pp.S

    def run_checked(self, pp: PingPong, others: dict) -> None:
        """The pass-by-pass path of :meth:`run` (each pass's bindings checked as it binds them)."""
        self._run_pass_by_pass(pp, others, counted=False)

    def _run_pass_by_pass(self, pp: PingPong, others: dict, counted: bool) -> None:
        """Each pass bound and drawn in turn; with ``counted``, through ``draw_range`` so that
        the counters (and the recorder) measure each pass."""

        vaos = self._vaos
        st = context_state()
        tally = None if counted else counters.current_tally()     # counted: draw_range tallies
        t0 = counters.clock() if tally is not None else 0.0
        # nothing else binds a framebuffer or a texture between the passes of this loop, so a
        # pass binds only what differs from the previous pass's (host cost)
        bound = {}
        S, T = pp.S, pp.T
        for item, first in zip(self.plan, self._firsts):
            if item is SWAP:
                S, T = T, S
                continue
            k = item.kernel
            vao = vaos.get(k.key)
            if vao is None:
                vao = vaos[k.key] = k.vertex_array(self.buffer)
            roles = {"S": S, "T": T, **others} if others else {"S": S, "T": T}
            inputs = {name: roles[role] for name, role in item.inputs.items()}
            if counted:  # the counters' (and recorder's) path: each pass measured as draw_range's
                pp.S, pp.T = S, T
                k.draw_range(roles[item.target], vao, item.primitive, first, inputs, item.uniforms, item.texels)
                bound.clear()
                continue
            k.bind(roles[item.target], inputs, item.uniforms, bound, st=st)
            vao.render(item.primitive.mode, vertices=len(item.primitive), first=first)
            if tally is not None:
                tally.passes += 1
        pp.S, pp.T = S, T
        if tally is not None:
            tally.seconds += counters.clock() - t0



def compiled(key, build) -> CompiledPlan:
    """The compiled plan of ``key`` in this thread's context, built by ``build()`` (a plan) on
    the first call; the least recently used beyond ``PLAN_CACHE`` are released."""
    plans = context_state().plans
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


class Targets(Stream):
    """Several streams of one shape rendered by one pass (multiple render targets, beyond the
    papers' one output a pass; the GeForce 6800 of 2004 had four): a fragment program's outputs
    declared ``layout(location = i) out ...`` go to ``streams[i]``. It stands where a pass takes
    its target (``Kernel.draw``, :func:`recording`, :class:`RecordedPlan`); it owns only its
    framebuffer (``release`` frees that, never the streams), and it is never an input: read
    its streams. A stream of it given as an input of the same pass is refused by the caller
    (reading and rendering one texture in a pass is undefined)."""

    __slots__ = ("streams",)

    def __init__(self, *streams: Stream):   # not Stream.__init__: no texture of its own
        if len(streams) < 2:
            raise ValueError("Targets takes two or more streams")
        first = streams[0]
        if any((s.rows, s.cols) != (first.rows, first.cols) for s in streams):
            raise ValueError(f"Targets: the streams must have one shape, got {[s.shape for s in streams]}")
        for s in streams:
            s._check_alive()
        self.streams = tuple(streams)
        self.rows, self.cols, self.components = first.rows, first.cols, first.components
        self.vector, self.length, self.ctx = first.vector, first.length, first.ctx
        self.texture = first.texture
        self._fbo = first.ctx.framebuffer(color_attachments=[s.texture for s in streams])

    def release(self) -> None:
        fbo, self._fbo, self.texture = self._fbo, None, None
        if fbo is not None:
            park(self.ctx)          # never leave a deleted framebuffer bound (moderngl rebinds it)
            fbo.release()

    def __del__(self):
        pass


class NotReplayable(ValueError):
    """A recorded sequence of passes that :class:`RecordedPlan` cannot draw again (a
    copy-to-texture pass, or a pass drawn with additive blending); draw it pass by pass."""


@contextmanager
def recording():
    """``with recording() as passes:`` every pass drawn inside (by ``Kernel.draw`` or
    ``draw_generated``, in this thread's context) is drawn as usual and noted in ``passes``,
    for :class:`RecordedPlan`."""
    st = context_state()
    if st.recording is not None:
        raise RuntimeError("passes.recording() is already active in this context")
    noted = []
    st.recording = noted
    try:
        yield noted
    finally:
        st.recording = None


def _pack(u, value):
    """The bytes moderngl's ``Uniform.value = value`` writes (packed once, written each run)."""
    if u.array_length > 1:
        return None
    if u.dimension > 1:
        return struct.pack(u.fmt, *value)
    return struct.pack(u.fmt, value)


def _writer(u):
    """``u.write`` without moderngl's Python frame (what ``Uniform.write`` calls)."""
    return partial(u.ctx._write_uniform, u.program_obj, u.location, u.gl_type, u.array_length, u.element_size)


def _write_uniforms(cache, writes) -> None:
    """A pass's uniform values (name, value, uniform, packed bytes or None, writer), each written
    where the program holds another value; the program then holds this pass's (``owner``)."""
    for name, value, u, data, write in writes:
        if cache.get(name) != value:
            if data is None:
                u.value = value
            else:
                write(data)
            cache[name] = value
    cache.owner = writes


class _Writes(list):
    """A recorded pass's uniform writes (:class:`RecordedPlan`). Passes of one program with the
    same values, in the plans of a context, share one (:func:`_shared_writes`): the program
    holding one plan's values then holds the other's (``UniformCache.owner``), and plans run in
    turn (a ping-pong iteration's two orders) write nor compare any uniform."""

    __slots__ = ("__weakref__",)


def _shared_writes(st, prog, writes, dynamic: bool) -> _Writes:
    """The context's writes list equal to ``writes`` for ``prog`` (same names, same packed
    bytes), or ``writes`` as a new shared one. A pass with a dynamic value keeps its own (its
    run changes it), and so does one with an array uniform (no packed bytes: values equal under
    == may differ in their bits, 0.0 and -0.0)."""
    if dynamic or any(w[3] is None for w in writes):
        return _Writes(writes)
    key = (prog, tuple((w[0], w[3]) for w in writes))
    found = st.shared_writes.get(key)
    if found is None:
        found = st.shared_writes[key] = _Writes(writes)
    return found


def _renderer(vao):
    """``vao.render`` without moderngl's Python frame (a vertex array with no scope: ours)."""
    if getattr(vao, "scope", None) is not None:
        return lambda mode, count, first, instances: vao.render(mode, count, first, instances)
    return vao.mglo.render


class RecordedPlan:
    """Passes noted by :func:`recording`, drawn again by :meth:`run` with all the host work
    done once (beyond the papers: host cost per pass).

    ``keep``: the streams that carry state from one run to the next (an iteration's vectors
    and scalars). Any other stream whose first use in the passes is as a target is a
    temporary (written before it is read): the plan draws into a stream of its own of the
    same shape instead, made once, so the borrowed temporaries of the recorded passes may go
    back to the pool and be reused elsewhere. Streams first read (the matrix, b) are used as
    they are. ``dynamic``: (kernel, uniform name) pairs whose value each ``run`` gives.
    """

    def __init__(self, noted, keep=(), dynamic=()):
        if any(n is None for n in noted):
            raise NotReplayable("a copy-to-texture pass cannot be drawn from a recorded plan")
        if any(n.blending for n in noted):
            raise NotReplayable("a pass with additive blending cannot be drawn from a recorded plan")
        st = self._st = context_state()
        keep_ids = {id(s) for s in keep}
        seen, clones, self.temporaries = set(), {}, []

        def mapped(s, target):
            c = clones.get(id(s))
            if c is not None:
                return c
            if id(s) in seen or id(s) in keep_ids or not target:
                seen.add(id(s))
                return s
            c = clones[id(s)] = Stream.like(s, zero=False)
            self.temporaries.append(c)
            return c

        self.passes, firsts, uniform_list = [], [], []
        data, first = [], 0
        for kernel, target, primitive, inputs, uniforms, texels, _ in noted:     # RecordedPass records
            inputs = {name: mapped(s, False) for name, s in (inputs or {}).items()}
            target = mapped(target, True)
            self.passes.append((kernel, target, primitive, inputs, texels))
            if kernel.rasterized:
                d = primitive.data()
                data.append(d)
                firsts.append(first)
                first += len(d) // 32
            else:
                firsts.append(None)
            uniform_list.append(dict(uniforms or {}))
        self.buffer = st.ctx.buffer(b"".join(data) or bytes(32))
        self._vaos = {}
        self._fast = []
        self._dynamic = {}
        for (kernel, target, primitive, inputs, texels), uniforms, first in zip(self.passes, uniform_list, firsts):
            prog, own_vao, cache = kernel.compiled(st)
            if first is None:
                vao, first = own_vao, 0
            else:
                vao = self._vaos.get(kernel.key)
                if vao is None:
                    vao = self._vaos[kernel.key] = kernel.vertex_array(self.buffer)
            writes = [["viewport", (target.cols, target.rows), prog["viewport"], None, None]]
            textures = []
            for unit, (name, stream) in enumerate(inputs.items()):
                writes.append([name, unit, kernel.sampler(prog, name), None, None])
                textures.append((unit, stream.texture, stream.texture.mglo.use))
            for name, value in uniforms.items():
                writes.append([name, value, kernel.uniform(prog, name), None, None])
                if (kernel, name) in dynamic:
                    self._dynamic.setdefault((kernel, name), []).append(writes[-1])
            for w in writes:
                w[3] = _pack(w[2], w[1])
                w[4] = _writer(w[2])
            writes = _shared_writes(st, prog, writes, any((kernel, name) in dynamic for name in uniforms))
            self._fast.append((writes, cache, target.fbo, target.fbo.mglo.use, textures, _renderer(vao),
                               primitive.mode, len(primitive), first))

    def _fast_vao(self, kernel):
        return self._vaos[kernel.key]

    def __len__(self) -> int:
        return len(self.passes)

    def run(self, values: dict | None = None) -> None:
        """Draw the passes; ``values`` maps (kernel, uniform name) pairs given as ``dynamic`` to
        this run's values."""
        if values:
            for key, value in values.items():
                for w in self._dynamic.get(key, ()):
                    if w[1] != value:
                        w[1] = value
                        w[3] = _pack(w[2], value)
                        for fast in self._fast:          # the programs no longer hold this run's values
                            fast[1].owner = None
        if counters.current() is not None:   # each pass measured (counters, recorder), as drawn
            for (kernel, target, primitive, inputs, texels), (writes, *_, first) in zip(self.passes, self._fast):
                u = {w[0]: w[1] for w in writes[1 + len(inputs):]}
                if kernel.rasterized:
                    kernel.draw_range(target, self._fast_vao(kernel), primitive, first, inputs, u, texels)
                else:
                    kernel.draw_generated(target, primitive, inputs, u, texels)
            return
        tally = counters.current_tally()
        t0 = counters.clock() if tally is not None else 0.0
        last_fbo = None
        bound = [None] * 32
        for writes, cache, fbo, fbo_use, textures, render, mode, count, first in self._fast:
            if cache.owner is not writes:        # the program holds another pass's values
                _write_uniforms(cache, writes)
            if fbo is not last_fbo:
                fbo_use()
                last_fbo = fbo
            for unit, texture, use in textures:
                if bound[unit] is not texture:
                    use(unit)
                    bound[unit] = texture
            render(mode, count, first, -1)
        if last_fbo is not None:
            last_fbo.ctx.fbo = last_fbo       # what moderngl's Framebuffer.use() records
        if tally is not None:
            tally.passes += len(self._fast)
            tally.seconds += counters.clock() - t0

    def alone(self, i: int) -> "RecordedPlan":
        """A view of this plan whose :meth:`run` draws its pass ``i`` only, as the plan draws it
        (to time a pass by itself). The view shares the plan's buffers and temporaries: release
        the plan, never the view."""
        view = copy.copy(self)
        view.passes, view._fast = self.passes[i:i + 1], self._fast[i:i + 1]
        return view

    def release(self) -> None:
        """Release the plan's vertex buffer, vertex arrays and temporaries."""
        for vao in self._vaos.values():
            vao.release()
        if self.buffer is not None:
            self.buffer.release()
        for t in self.temporaries:
            t.release()
        self.buffer, self._vaos, self._fast, self.passes, self.temporaries = None, {}, [], [], []
