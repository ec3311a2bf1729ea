"""PCG of paper 002 in seven passes an iteration, one after another (beyond 002: ``fused``;
eight or nine where A has dense rows or columns).

002's PCG (section 2.1, [9]) applies the partial Cholesky preconditioner (7)-(8) in two
triangular halves, each with k inner products of length m, and reduces each inner product of
the iteration by itself: on this pipeline that is some 30 dependent passes an iteration (55 on
scsd8, counting the interior point's own), and a dependent pass costs microseconds whatever
its size. The same algorithm, every value the same up to float32 rounding, is drawn here as:

==  ==========================  ============================================================
 1  ``pcg_update_forward``      the last iteration's update, x + alpha p and r - alpha (y +
                                delta p) in one RGBA texel an entry (x hi, x lo, r; x in
                                float-float with ``solution``), and with the new r, in a second
                                render target, w = D_S^-1 (r - F r_K), F = G[:, K] G11^-1 (002
                                (7)-(8)'s forward half: u1 = C^-1 r_K and r - B u1 merged,
                                B u1 = F r_K); alpha = 0 in the first iteration
 2  ``pcg_chunk_sums``          the partial sums (chunks of L entries) of F^T w, of
                                w (r - F r_K) and r^T r, and u1 = C^-1 r_K (002 (7)'s u1)
 3  ``pcg_chunk_totals``        z(K) = C^-T u1 - F^T w (the backward half), gamma = r^T z =
                                w^T (r - F r_K) + ||u1||^2, beta = gamma / gamma_old, r^T r
 4  ``pcg_direction``           p = z + beta p, z put together on the way (w off K, z(K) at K)
 5  FSATY                       u = A^T p (``SparseStream.product_fused``; a dense part
                                added in the same pass, ``sparse_ellpack_four`` with DENSE;
                                where A^T has dense rows, one pass before it: their inner
                                products in chunks)
 6  FSAX                        y = A Theta~ u, Theta~ u rounded first, and in the rows below
                                y the partial sums of p^T G_R p = theta^T u^2 + delta p^T p
                                (from u: not after y), ``sparse_ellpack_four`` with CURVATURE
                                (on ELLPACK; a dense part added in the same pass, and where
                                A has dense rows one pass before it, their inner products in
                                chunks: 8 or 9 passes an iteration; other formats a scaling
                                pass before their own product and the sums as a pass of
                                their own)
 7  ``pcg_step_scalars``        p^T q, alpha = gamma / p^T q, the breakdown watch, the count,
                                the updated residual at the pivots
==  ==========================  ============================================================

Four numbers a texel where a pass reads k of them: F's k planes lie four a texel (an RGBA
stack of ceil(k / 4) planes, ``plane_mix`` with FOUR), and ``pcg_step_scalars`` leaves the
updated residual at the pivots, r_K, four a texel after its two texels of scalars (the same
arithmetic as ``pcg_update_forward``'s, gathered from the entries K). Passes 1 and 2 then fetch
about k / 2 texels an entry, not the 3 k of a plane a texel and a gather of each r(K_j). The
loops of every pass issue four entries' fetches before they add them, in the entries' order
(the sums of a loop one entry at a time): a fetch waits for memory, four in flight about as
long as one (ELLPACK's rows: ``sparse_ellpack_four``).

Each pass reads what the one before it wrote. Why the forms are equal (H = G11^-1 =
C^-T C^-1, F = B C^-1 with 002's C = L11 D_L^1/2 and B = G21 C^-T): u1 = C^-1 r_K and B u1 = F r_K; P^-1 r is w off K and
C^-T (u1 - B^T w) = C^-T u1 - F^T w at K; r^T z = r^T w + r_K^T (C^-T u1 - F^T w) = w^T (r - F r_K)
+ ||u1||^2 (w is 0 at K). F = B X is made once a preconditioner (``plane_mix``; X = C^-1 is
kept): with B and E, three passes. Neither F nor r^T z goes through H = G11^-1 formed in
float32: its rounding, about epsilon ||H|| = epsilon cond(C)^2 / ||G11||, swamps r_K^T H r_K
once G11's condition nears 1 / float32's epsilon (nug15's G11 near its optimum), and a
negative r^T z stops PCG as a breakdown. The pivots' part of r^T z is a sum of squares, as
002's two triangular halves give it. The column stack G[:, K] leaves delta out (it only
touches G11), so F's rows at K are I - delta G11^-1, not I: they multiply w, which is 0 there.

A sum of m entries is two passes whatever m: chunks of L = max(32, ceil(sqrt(m))) entries a
fragment, then one fragment a total. The iteration is one recorded plan
(``gpgpu.passes.RecordedPlan``) for each order of its ping-pong pairs, with no uniform written
per iteration (the count is carried in the scalars' texel). At a check one read of the
scalars' first texel brings ||r||^2 of the iterate the iteration's first pass wrote, p^T q,
gamma and the watch. The read goes through a pixel buffer and is waited for
:data:`CHECK_LAG` iterations later (beyond 002): a check read at once leaves the GPU idle while
the host waits and then issues the next iterations (measured in docs/results/matrix-free.md,
"Checks read late"). The decisions are the same as at once; the iterations drawn past the
check that stops a solve are wasted.
"""
from __future__ import annotations

import math

import numpy as np

from ..blas1 import KERNELS as L1, whole
from ..cholesky import count_replaced, diagonal_for_replaced, factor_with_inverse
from ..context import get_context, max_texture_size
from ..geometry import Rect
from ..kernel import Kernel
from ..passes import NotReplayable, RecordedPlan, Targets, recording
from ..reduce import chunk_length
from ..stream import Stream, vector_shape
from .matrix_free_backend import SoftStop

__all__ = ["KERNELS", "CHECK_LAG", "FusedPCG", "chunk_length"]

KERNELS = {
    "update_forward": Kernel("pcg_update_forward", texels=8,
                             doc="x + alpha p, r - alpha q and 002 (7)-(8)'s forward half, one pass"),
    "update_forward_ff": Kernel("pcg_update_forward", texels=8, defines={"FLOAT_FLOAT": 1},
                                extensions=("GL_ARB_gpu_shader5",), library="float_float",
                                doc="x + alpha p in float-float, r - alpha q, P^-1's forward half"),
    "chunk_sums": Kernel("pcg_chunk_sums", texels=3, doc="the iteration's inner products, partial sums"),
    "chunk_totals": Kernel("pcg_chunk_totals", texels=3, doc="z at K, r^T z, beta, r^T r"),
    "direction": Kernel("pcg_direction", texels=5, doc="p = z + beta p, z put together"),
    "product_curvature": Kernel("sparse_ellpack_four", texels=5, defines={"CURVATURE": 1, "WEIGHTED": 1},
                                doc="y = A Theta~ u and, below y, p^T G_R p's partial sums, one pass"),
    "product_curvature_dense": Kernel("sparse_ellpack_four", texels=7,
                                      defines={"CURVATURE": 1, "WEIGHTED": 1, "DENSE": 1},
                                      doc="y = A Theta~ u with A's dense part and p^T G_R p's partial sums, one pass"),
    "curvature_sums": Kernel("sparse_ellpack_four", texels=3, defines={"CURVATURE": 1},
                             doc="p^T G_R p's partial sums alone (formats other than ELLPACK)"),
    "step_scalars": Kernel("pcg_step_scalars", texels=3, doc="p^T q, alpha, the watch, the count"),
    "state_start": Kernel("pcg_state_start", texels=2, doc="x0 = 0, r0 = b"),
    "pivot_start": Kernel("pcg_pivot_start", texels=3, doc="r0 = b at the pivots, four a texel"),
    "plane_mix": Kernel("plane_mix", texels=3, doc="B = G[:, K] C^-T and E, once a preconditioner"),
    "plane_mix4": Kernel("plane_mix", texels=3, defines={"FOUR": 1, "TRANSPOSED": 1},
                         doc="F = B C^-1 = G[:, K] G11^-1, four planes a texel, once a preconditioner"),
}


#: Cholesky steps a pass of G11's factor with its inverse (``factor_with_inverse(steps=)``:
#: ceil(k / 4) + 5 passes instead of k + 5, the same float32 operations; the LP's
#: ``STEPS_A_PASS``, measured there)
FACTOR_STEPS = 4

#: a PCG check is read this many iterations after it is drawn (:class:`_Checks`): the host
#: waits for a read while the GPU runs the iterations queued after it (beyond 002)
CHECK_LAG = 4


def _chunks(length: int) -> tuple:
    L = chunk_length(length)
    return L, -(-int(length) // L)


def fours(k: int) -> int:
    """Texels that hold k numbers four a texel (F's planes, the pivots' residuals)."""
    return max(1, -(-int(k) // 4))


class _Streams:
    """The fused PCG's streams, made once a back end and k: the state (x, r) and p, the totals
    and the scalars in ping-pong pairs (``[current, next]``), and the iteration's own. Where A
    carries the curvature sums in its product (``SparseStream.carries_rows``) they lie in rows
    of y's texture below y's (``sums_row`` on, ``sums_width`` a row, the m part from
    ``m_first``; a dense part of A is added to y in the same pass), else in a 2-row stream of
    their own (row 1 the m part)."""

    def __init__(self, be, k: int):
        m, n = be.m, be.n
        rgba = lambda: Stream(be.rows, be.width, components=4, vector=True, length=m)  # noqa: E731
        self.k, self.k4 = k, fours(k)
        self.m_chunk, self.m_chunks = _chunks(m)
        self.n_chunk, self.n_chunks = _chunks(n)
        self.carried = be.A.carries_rows()
        self.dense = bool(be.A.kc or be.A.kr)
        if self.carried:
            below = -(-(self.n_chunks + self.m_chunks) // be.width)
            self.curvature = self.y = Stream(be.rows + below, be.width, vector=True, length=m)
            self.sums_row, self.sums_width, self.m_first = be.rows, be.width, self.n_chunks
        else:
            self.y = Stream.vector_of(m)
            width = max(self.n_chunks, self.m_chunks)
            self.curvature = Stream(2, width)
            self.sums_row, self.sums_width, self.m_first = 0, width, width
        self.xr, self.p = [rgba(), rgba()], [Stream.vector_of(m), Stream.vector_of(m)]
        self.totals = [Stream(1, k + 3), Stream(1, k + 3)]
        self.scalars = [Stream(1, 2 + self.k4, components=4), Stream(1, 2 + self.k4, components=4)]
        if isinstance(CHECK_LAG, bool) or not isinstance(CHECK_LAG, int) or CHECK_LAG < 0:
            raise ValueError(f"CHECK_LAG must be an integer >= 0 (iterations a check is read late), got {CHECK_LAG!r}")
        self.lag = CHECK_LAG                  # the checks' lag these streams are made for (_Checks)
        self.held = [rgba() for _ in range(self.lag + 2)]   # the checked iterates (_Checks)
        self.reads = [get_context().buffer(reserve=16) for _ in range(self.lag + 1)]
        self.w = rgba()
        self.sums = Stream(self.k4 + 2, max(self.m_chunks, self.k4), components=4)
        self.u = Stream.vector_of(n)
        #: the first pass's two targets: the next state and w (pcg_update_forward)
        self.targets = {id(xr): Targets(xr, self.w) for xr in self.xr}

    def all(self) -> list:
        own = [self.curvature] if self.curvature is not self.y else []
        return [*self.xr, *self.p, *self.totals, *self.scalars, *self.held, self.w, self.sums, *own,
                self.u, self.y]

    def swap(self) -> None:
        for pair in (self.xr, self.p, self.totals, self.scalars):
            pair.reverse()

    def release(self) -> None:
        for t in self.targets.values():
            t.release()
        for s in self.all():
            s.release()
        for r in self.reads:
            r.release()


class FusedPCG:
    """PCG on G_R dy = b for a :class:`~gpgpu.lp.matrix_free_gpu.GPUMatrixFree` back end in
    the passes of the module notes; :meth:`solve` keeps :func:`~gpgpu.lp.matrix_free.pcg`'s
    contract. :meth:`prepare` makes F, X = C^-1 and the pivots' slots after each preconditioner."""

    def __init__(self, be, kernels: dict):
        """``kernels``: the back end's table (``copy_rgba``)."""
        self.be = be
        self.copy_rgba = kernels["copy_rgba"]                  # the back end's
        self.streams = None
        self.F = self.X = None
        self.slot = Stream.vector_of(be.m)
        self.plans = {}
        self.ready = False            # F, X and the slots made for the current preconditioner

    # ------------------------------------------------------------------ once a preconditioner
    def fits(self, k: int) -> bool:
        """Whether :func:`gpgpu.cholesky.factor_with_inverse` holds G11 (k x 2k texels)."""
        return 2 * k <= max_texture_size()

    def prepare(self, G11: Stream, stacks: list, K: np.ndarray, k: int, guard: dict,
                replaced_diagonal: bool = True) -> tuple:
        """The preconditioner's parts from G11 and the column stack: C and X = C^-1 (guarded,
        ceil(k / FACTOR_STEPS) + 5 passes: :func:`~gpgpu.cholesky.factor_with_inverse`; with
        ``replaced_diagonal``, a pivot replaced by the guard's huge value then becomes G11's
        diagonal entry, one pass where there is one: :func:`~gpgpu.cholesky.diagonal_for_replaced`); B = G[:, K] C^-T (plane
        b = sum_j X(b, j) G e_{K_j}) and E (plane b = sum_j X(b, j) e_{K_j}), for D_S^-1 and for
        002's passes; X itself and F = B X = G[:, K] G11^-1 for the fused ones (off K; the
        columns lack delta, so F's rows at K, which w's zeros there never read, are
        I - delta G11^-1); the slots (c at
        entry K_c, -1 elsewhere). ``stacks`` = [[G[:, K], spare], [unit planes, spare]] come
        back as [[B, G[:, K]], [E, F]]. Answers (B, E, the number of replaced pivots)."""
        be = self.be
        self.forget()
        (cols, b_out), (units, e_out) = stacks
        C, X = factor_with_inverse(G11, k, guarded=guard, steps=FACTOR_STEPS)
        replaced = count_replaced(C, k, "full", guard["huge"])
        if replaced and replaced_diagonal:
            X_old, X = X, diagonal_for_replaced(X, C, G11, k, guard["huge"], rows=True)
            X_old.release()
        C.release()
        if self.X is not None:
            self.X.release()
        self.X = X
        planes = Rect.covering(0, 0, be.width, k * be.rows)
        mix = {"k": k, "plane_rows": be.rows}
        KERNELS["plane_mix"].draw(b_out, planes, {"P": cols, "M": X}, mix)
        KERNELS["plane_mix"].draw(e_out, planes, {"P": units, "M": X}, mix)
        k4 = fours(k)
        if self.F is None or self.F.rows != k4 * be.rows:
            if self.F is not None:
                self.F.release()
            self.F = Stream(k4 * be.rows, be.width, components=4)
        KERNELS["plane_mix4"].draw(self.F, Rect.covering(0, 0, be.width, k4 * be.rows), {"P": b_out, "M": X}, mix)
        stacks[0][:], stacks[1][:] = [b_out, cols], [e_out, units]
        slot = np.full(be.m, -1.0)
        slot[K] = np.arange(k)
        self.slot.write(slot)
        if self.streams is not None and (self.streams.k != k or self.streams.lag != CHECK_LAG):
            self.streams.release()
            self.streams = None
        if self.streams is None:
            self.streams = _Streams(be, k)
        self.ready = True
        return b_out, e_out, replaced

    def forget(self) -> None:
        """Drop the recorded plans (G_R or P^-1 changed)."""
        for p in self.plans.values():
            if p is not None:
                p.release()
        self.plans = {}

    # ------------------------------------------------------------------ one iteration
    def _iteration(self) -> None:
        """The seven passes of the module notes, current -> next."""
        be, s = self.be, self.streams
        k, k4, h, W, m = s.k, s.k4, be.rows, be.width, be.m
        xr, p, totals, scalars = s.xr[0], s.p[0], s.totals[0], s.scalars[0]
        update = KERNELS["update_forward_ff" if be.solution == "float-float" else "update_forward"]
        update.draw(s.targets[id(s.xr[1])], whole(s.xr[1]),
                    {"XR": xr, "P": p, "Y": s.y, "Sc": scalars, "F": self.F, "Dinv": be.pre[2]},
                    {"k4": k4, "plane_rows": h, "delta": be.delta})
        xr = s.xr[1]                                    # this iteration's state
        KERNELS["chunk_sums"].draw(s.sums, Rect.covering(0, 0, s.sums.cols, k4 + 2),
                                   {"W": s.w, "F": self.F, "XR": xr, "X": self.X, "Sc": scalars},
                                   {"k": k, "k4": k4, "plane_rows": h, "width": W, "length": m, "chunk": s.m_chunk})
        KERNELS["chunk_totals"].draw(s.totals[1], Rect.covering(0, 0, k + 3, 1),
                                     {"S": s.sums, "X": self.X, "Prev": totals},
                                     {"k": k, "k4": k4, "chunks": s.m_chunks})
        KERNELS["direction"].draw(s.p[1], whole(s.p[1]), {"W": s.w, "Slot": self.slot, "Z": s.totals[1], "P": p},
                                  {"k": k})
        be.AT.product_fused(s.p[1], s.u)
        sums = {"n": be.n, "n_chunk": s.n_chunk, "n_chunks": s.n_chunks, "m": m, "m_width": W,
                "m_chunk": s.m_chunk, "m_chunks": s.m_chunks, "sums_width": s.sums_width, "m_first": s.m_first}
        if s.carried:                                   # y = A Theta~ u and the sums below it
            c = s.curvature                             # (a dense part added in the same pass)
            be.A.draw_with_rows(KERNELS["product_curvature_dense" if s.dense else "product_curvature"], c,
                                Rect.covering(0, 0, c.cols, c.rows),
                                {"X": s.u, "Weights": be.theta, "Theta": be.theta, "P": s.p[1]},
                                {"x_width": s.u.cols, "rows_y": h, **sums})
        else:
            be.A.product_fused(s.u, s.y, weights=be.theta)
            KERNELS["curvature_sums"].draw(s.curvature, whole(s.curvature),
                                           {"X": s.u, "Theta": be.theta, "P": s.p[1]},
                                           {"x_width": s.u.cols, "rows_y": 0, **sums})
        KERNELS["step_scalars"].draw(s.scalars[1], Rect.covering(0, 0, 2 + k4, 1),
                                     {"C": s.curvature, "Z": s.totals[1], "Prev": scalars, "XR": xr, "P": s.p[1],
                                      "Y": s.y, "Kpos": be._kpos},
                                     {"sums_row": s.sums_row, "sums_width": s.sums_width, "m_first": s.m_first,
                                      "n_chunks": s.n_chunks, "m_chunks": s.m_chunks, "k": k, "width": W,
                                      "delta": be.delta})

    def _step(self) -> None:
        """One iteration from its recorded plan for the pairs' order (recorded the first time;
        drawn pass by pass where the passes cannot be replayed), then the pairs swap."""
        s = self.streams
        key = (id(s.xr[0]), id(s.p[0]), id(s.totals[0]), id(s.scalars[0]), self.be.solution)
        plan = self.plans.get(key, False)
        if plan:
            plan.run({})
        elif plan is False:
            with recording() as noted:
                self._iteration()
            try:
                self.plans[key] = RecordedPlan(noted, keep=[*s.all(), *s.targets.values()])
            except NotReplayable:                 # e.g. a transposed product by additive blending
                self.plans[key] = None
        else:
            self._iteration()
        counts = self.be.counts
        counts["fsax"] += 1
        counts["fsaty"] += 1
        counts["precondition"] += 1
        s.swap()

    def _start(self, b: Stream) -> None:
        """x0 = 0, r0 = b, p = 0 (so that the first direction is z), gamma_old = 1, the watch at
        -1, the count at 0 and r0 = b at the pivots (``pcg_pivot_start``)."""
        s = self.streams
        KERNELS["state_start"].draw(s.xr[0], whole(s.xr[0]), {"B": b})
        s.p[0].fbo.clear()
        s.totals[0].write(np.where(np.arange(s.k + 3) == s.k, 1.0, 0.0).reshape(1, -1))
        start = np.zeros((1, 4 * (2 + s.k4)))
        start[0, 2] = -1.0
        s.scalars[0].write(start)
        KERNELS["pivot_start"].draw(s.scalars[0], Rect.covering(2, 0, 2 + s.k4, 1), {"B": b, "Kpos": self.be._kpos},
                                    {"k": s.k, "width": self.be.width})

    # ------------------------------------------------------------------ the solve
    def solve(self, b: Stream, target: float, maxiter: int, soft=None) -> dict:
        """:func:`~gpgpu.lp.matrix_free.pcg`'s contract (x0 = 0; ``x`` the best checked iterate,
        a vector of the back end's pool). A check reads ||r|| of the iterate that the first
        pass of the iteration just drawn wrote (iteration i's update is the first pass of
        iteration i + 1): at the iterations 0 and 1, every ``pcg_check``-th, at the soft limit
        and at ``maxiter`` (whose iteration is drawn for its update and residual only). The
        first check reads ||b||: a b within the target costs one iteration's passes, no more.

        A check's read is decided :data:`CHECK_LAG` iterations late (see :class:`_Checks`): the
        iterations drawn past the one that stops the solve are wasted, the answer and the
        iteration count are the check's, as if it had been read at once."""
        be = self.be
        every = max(1, int(be.pcg_check))
        soft = SoftStop(soft, maxiter, target)
        if maxiter < 1:
            rnorm = math.sqrt(max(be.dot(b, b), 0.0))
            out = {"iterations": 0, "converged": rnorm <= target, "breakdown": False, "stalled": False,
                   "residual": rnorm}
            out["x"] = be.accumulator()
            return out
        s = self.streams
        checks = _Checks(be, s, self._copy, target, soft)
        self._start(b)
        it = 0
        while True:
            last = it >= maxiter
            current = s.xr[1]                         # the iterate this step's first pass writes
            self._step()
            if it <= 1 or it % every == 0 or last or it == soft.limit:
                checks.read(it, current, last)
            if checks.decide(it, at_once=last or it == soft.limit):
                break
            it += 1
        out = checks.out
        out.update(x=self._answer(checks.best), residual=checks.best_norm, iterations=min(out["iterations"], maxiter))
        return out

    def _answer(self, best) -> Stream:
        """The best iterate's x as a vector of the back end's pool (float-float: RGBA, .r hi,
        .g lo; float32: its .r), or zeros."""
        be = self.be
        if best is None:
            return be.accumulator()
        if be.solution == "float-float":
            return self._copy(best, be._new_ff())
        out = be._new(be.m)
        L1["copy"].draw(out, whole(out), {"A": best})   # copy reads .r: x's float32 value
        return out

    def _copy(self, src: Stream, dst: Stream) -> Stream:
        """``dst`` = ``src``, all four components."""
        self.copy_rgba.draw(dst, Rect.covering(0, 0, src.cols, src.rows, T0=lambda X, Y: (X, Y)), {"A": src})
        return dst

    def release(self) -> None:
        self.forget()
        if self.streams is not None:
            self.streams.release()
            self.streams = None
        for s in (self.X, self.F, self.slot):
            if s is not None:
                s.release()
        self.X = self.F = None
        self.ready = False


class _Checks:
    """PCG's checks, each read :data:`CHECK_LAG` iterations after it is drawn (beyond 002).

    A check copies the iterate it reads (into one of the streams ``held``, so that the
    ping-pong cannot draw over it) and asks for the scalars' first texel through a pixel buffer
    (``read``); the read is waited for only after ``CHECK_LAG`` more iterations are drawn
    (``decide``). Read at once, a check leaves the GPU with nothing queued while the host waits
    and then issues the next iterations; late, the GPU runs the queued iterations meanwhile.
    The decisions are those of a check read at once, in the same order: the best iterate, the
    target, the soft limit (``soft``: a :class:`~gpgpu.lp.matrix_free_backend.SoftStop`), the
    breakdown watch."""

    def __init__(self, be, streams, copy, target: float, soft):
        self.be, self.s, self.copy = be, streams, copy
        self.target, self.soft = target, soft
        self.pending = []                 # (iteration, held copy of its iterate, last, pixel buffer)
        self.best, self.best_norm = None, math.inf     # None: the zero x0 (its residual ||b||: the first check)
        self.out = {"iterations": 0, "converged": False, "breakdown": False, "stalled": False}

    def read(self, it: int, current: Stream, last: bool) -> None:
        s = self.s
        busy = [p[1] for p in self.pending] + [self.best]
        held = next(h for h in s.held if not any(h is u for u in busy))
        self.copy(current, held)
        buffer = next(r for r in s.reads if not any(r is p[3] for p in self.pending))
        s.scalars[0].fbo.read_into(buffer, viewport=(0, 0, 1, 1), components=4, dtype="f4")
        self.pending.append((it, held, last, buffer))

    def decide(self, it: int, at_once: bool) -> bool:
        """Decide, oldest first, the checks drawn ``CHECK_LAG`` iterations ago or more (the
        lag the streams were made for; all of them ``at_once``); True when one stops the solve
        (``out`` says how)."""
        while self.pending and (at_once or it - self.pending[0][0] >= self.s.lag):
            if self._decide_one(*self.pending.pop(0)):
                return True
        return False

    def _decide_one(self, it: int, held: Stream, last: bool, buffer) -> bool:
        be, out = self.be, self.out
        with be.timed("pcg_reads"):
            pq, gamma, watch, rr = (float(v) for v in np.frombuffer(buffer.read(), np.float32)[:4])
        be.readbacks += 4
        out["iterations"] = it
        rn = math.sqrt(rr) if math.isfinite(rr) and rr >= 0 else math.inf
        if it == 0:                               # ||b||, the zero x0's
            self.best_norm = rn
        elif rn < self.best_norm:
            self.best, self.best_norm = held, rn
        if rn <= self.target:
            out["converged"] = True
            return True
        if not math.isfinite(rn):
            out["breakdown"] = True
            return True
        if self.soft.stops(it, rn, self.best_norm):     # past the soft limit: enough, or stalled
            out["stalled"] = self.soft.stalled
            return True
        if last:
            return True
        if watch >= 0 or not (math.isfinite(pq) and pq > 0 and math.isfinite(gamma) and gamma > 0):
            out["breakdown"] = True
            return True
        return False
