"""The matrix-free interior point method of paper 002 (Smith, Gondzio, Hall), section 2.1.

A primal-dual interior point method for the standard form min c^T x, A x = b, x >= 0 that
touches A only through products A v and A^T w, as Gondzio's matrix-free IPM ([7] of 002).
What is 002's and what is the project's, option by option for the "paper" preset:
docs/guide/matrix-free.md; the measurements behind the defaults: docs/lp_defaults.md and
docs/results/matrix-free.md.

* **Regularisation** (002 (5)): proximal terms 1/2 (x - x0)^T R_p (x - x0) in the primal and
  1/2 (y - y0)^T R_d (y - y0) in the dual, with R_p = rho I, R_d = delta I and the reference
  points chosen dynamically as the current iterate (x0 = x_k, y0 = y_k, the proximal-point
  choice of Friedlander and Orban and of Pougkakiotis and Gondzio's IP-PMM). The terms then
  vanish from the right-hand side and only change the matrix; the iteration converges to a
  solution of the LP itself. rho = delta = clip(mu_k, reg_min, reg_max): strong while the
  iterate is far from the optimum, small near it (002 prints no bounds: reg_min 1e-12 with the
  adaptive defaults, 1e-8 without, reg_max 1e-2 are the project's).
* **Normal equations** (002 (6)): with Theta = X S^-1 and Theta~ = (Theta^-1 + R_p)^-1 the
  Newton system of the regularised pair,

      A dx + R_d dy = xi_p,   -R_p dx + A^T dy + ds = xi_d,   S dx + X ds = xi_mu,

  reduces to G_R dy = xi_p + A Theta~ (xi_d - X^-1 xi_mu), G_R = A Theta~ A^T + R_d, then
  dx = Theta~ (A^T dy - xi_d + X^-1 xi_mu), ds = X^-1 (xi_mu - S dx). G_R is never formed:
  preconditioned conjugate gradients (:func:`pcg`) multiply by it as A (Theta~ (A^T v)) + delta v.
* **Preconditioner** (002 (7)-(8)): the partial Cholesky factorization of G_R with the k
  columns of largest diagonal entries pivoted first (the project's choice: 002 does not say how
  the k columns are chosen; the diagonal of G_R is (A .* A) Theta~ + delta, a product with the
  squared entries): G11 = L11 D_L L11^T (k x k),
  L21 = G21 L11^-T D_L^-1, D_S the diagonal of the Schur complement G22 - L21 D_L L21^T, and
  P = [L11 0; L21 I] diag(D_L, D_S) [L11 0; L21 I]^T. k is ``rank``: by default
  min(m, 100) (the project's choice, :data:`DEFAULT_RANK`: 002 prints no k); for m <= k the
  preconditioner is the complete factor and PCG converges in a step or two.
* **Outer iteration**: Mehrotra's predictor-corrector (as paper 000's solver, :mod:`.mehrotra`):
  an affine-scaling predictor, sigma = (mu_aff / mu)^3, then the combined direction with
  xi_mu = sigma mu e - X S e - dX_aff dS_aff e; two PCG solves per iteration with the same
  preconditioner; steps 0.995 of the way to the boundary.
* **Growing rank** (``rank_max``, beyond 002): k doubles after an iteration whose PCG failed.
* **The adaptive rule** (``adaptive``, beyond 002, on by default): 002 leaves R_p, R_d "chosen
  dynamically"; rho = delta follow mu down, and G_R's condition grows as they fall. After an
  iteration in which a PCG solve stopped at its iteration limit, the floor reg_min becomes the
  rho of the last iteration whose solves converged, so the condition stays where PCG met its
  tolerance, and the default PCG limit doubles (up to PCG_LIMIT_GROWTH times) for the later
  solves. With the proximal reference points at the current iterate the floor does not move
  the solution. Once an iteration's solves converge again and a proximal term holds a residual
  back (the leak test below), the raised floor comes down FLOOR_RISE-fold (never below the floor
  given). Problems whose PCG always converges never meet the rule.
* **The safeguards of the adaptive defaults** (``adaptive``, beyond 002): the floor reg_min is
  1e-12 instead of 1e-8 (``adaptive=False`` keeps 1e-8), since
  c^T x - b^T y = x^T s + x^T r_c - y^T r_b and with large multipliers residuals at eps leave
  the gap far above it, and the floor's leak delta dy would hold them there; for the same
  reason, when the residual part of the gap exceeds half of eps (1 + |c^T x|), the primal PCG
  target and the leak test aim at eps (1 + |c^T x|) / ||y||_2 (and / ||x||_2) rather than
  eps (1 + ||b||) (:func:`_residual_floors`); Gondzio's multiple centrality correctors while
  the step is below 0.9 and the iteration's solves converged (:func:`_centrality_correctors`,
  at most CORRECTORS, a PCG solve each); the Mehrotra solver's free-split safeguard
  (:func:`_bound_free_splits`); PCG's target 1e-6 of the right-hand side instead of 1e-2 on a
  float64 back end (``PCG_REL``; below); and a restart: the first time the stall test fires,
  the iteration goes on from its starting point with rho = delta at the floor 1e-12 and the
  ceiling reg_max RESTART_REG_CUT times lower (a restart from the best point near the central
  path would stay in the region the early regularisation led to); after the restart the floor,
  where PCG stops at its limit, rises at least ten-fold (:class:`_Floor`). The history entry of
  the restart has ``restart_iteration`` (0, the starting point) and ``regularisation_ceiling``
  and takes no step.
* **The primal finishing rule** (``adaptive``, beyond 002, with the default PCG limit): the PCG
  residual r of a solve stopped at its limit stays in the primal equation (below), so where PCG
  stops at its limit the primal residual cannot fall below what the limit leaves, while mu and
  the gap go on falling. In an iteration whose relative primal residual is above eps and the
  largest of the three tests, the combined direction's PCG may run FINISH_LIMIT_GROWTH times
  the current limit (the predictor's keeps it: it only sets sigma). A problem whose PCG meets its
  tolerance within the limit is not affected: PCG stops at its tolerance. The history entry's
  ``pcg_limit`` is the combined solve's limit.
* **The residual-aware limit** (``adaptive``, beyond 002, with the default PCG limit, on a
  float32 PCG: the GPU): where the finishing rule does not fire, the combined direction's PCG
  may still run up to FINISH_LIMIT_GROWTH times the limit, stopping past the limit as soon as
  its residual is at most PRIMAL_ENOUGH times the primal part of its target (that is,
  max(||r_b||, eps (1 + ||b||)): a step along it no longer raises the primal residual). With
  float64 refinement the float64 residual decides: a round that PCG ended there on its float32
  residual is followed by another while the float64 one is above it and still falls. Past the
  limit the solve also stops where it no longer gains (PCG's stall stop): where its best residual
  has not halved (PCG_STALL_FALL) over PCG_STALL_SPAN times the limit (the first mark at the limit; a
  refinement round after the limit is tested from its start, and a round stopped so ends the
  solve). Before the limit the same test, over PCG_NEAR_SPAN times the limit, stops a solve whose
  best residual is within PCG_NEAR (10) times its target: float32's PCG can stall a little above
  a target near its floor for thousands of iterations (ship12s: at 1.3 times it from iteration
  200 to the stall stop at 3000). A float32 PCG stopped at its limit leaves about 1e-3 of its
  right-hand side late in a solve, far above a primal residual near eps, and nug20 spends whole
  allowances there without PCG's stall stop (docs/lp_defaults.md). A float64 PCG keeps the plain limit. The history's
  ``pcg_limit`` is then the limit and ``pcg_cap`` the most the solve could run.
* **The corrector from the predictor** (``CORRECTOR_START``, off by default; beyond 002, with
  ``adaptive`` on a float32 PCG: the GPU): the combined direction's PCG starts from the
  predictor's dy instead of 0: it solves G_R d = rhs - G_R dy_aff (that residual in float64 on
  the CPU) and the direction is dy_aff + d. The two right-hand sides differ only in xi_mu, so the
  residual PCG starts from is a fraction of the right-hand side, and the back end's floor
  (``pcg_floor``), relative to the residual PCG is given, falls with it: the direction can come
  out more exact. A start whose residual is above START_ENOUGH (half) of the right-hand side's
  norm is dropped. Where bound rows are eliminated the start's main rows start the Schur
  system's PCG. Off by default: it saves PCG iterations on most small NETLIB problems and costs
  them on nug12 (docs/results/matrix-free.md, "The corrector from the predictor").
* **float-float after the first limit** (``adaptive``, beyond 002, a back end with a wider
  format for PCG's solution vector: the GPU's ``solution=None``, the default): after the first
  iteration with a solve stopped at its limit, PCG's solution vector is float-float
  (:meth:`MatrixFreeBackend.widen_solution`; the history's ``pcg_solution``): where PCG stops at
  its limit its steps fall below half an ulp of a float32 x. Problems whose PCG always converges
  never widen. A checkpoint carries the widening.
* **Inexact directions**: dx and ds are computed from dy exactly as above, so the dual and
  complementarity equations hold to rounding and the PCG residual r = rhs - G_R dy is the only
  error, in the primal equation: A dx + R_d dy = xi_p - r. PCG stops when
  ||r|| <= min(t ||rhs||, max(0.1 ||xi_p||, 0.1 eps (1 + ||b||_inf))), so the primal residual
  keeps falling; t = 1e-6 (``PCG_REL``) with ``adaptive`` on a float64 back end, 1e-2
  (``PCG_REL_FLOAT32``) with ``adaptive`` on a float32 one, and 1e-2 (``PCG_REL_FIXED``)
  without ``adaptive`` (002 prints no target, all three are the project's). A float32 PCG (the
  GPU) stops at 1e-5 of its residual (``pcg_floor``), so that its target, at or above that
  floor, needs no float64 refinement round a solve (the targets against each other:
  docs/lp_defaults.md). A solve whose PCG reaches its iteration limit is kept (the
  direction is still a descent direction for the residuals) but counted: in the history entry
  (``pcg_converged``, and ``pcg_stop``: why each solve stopped -- "converged", "limit",
  "stall" (PCG's stall stop, below), "breakdown" (p^T G_R p or r^T P^-1 r not positive),
  "stalled" or "rounds" (the float64 refinement rounds)),
  in ``LPResult.pcg_unconverged`` and ``LPResult.pcg_stops`` (the count of each reason), and in
  the message, reason by reason, with the PCG iterations those solves ran; it is never a silent
  step.

Units: the iteration works on b / max(1, ||b||_inf) and c / max(1, ||c||_inf) (x, lambda, s
scaled to match), so that its absolute constants (reg_min, reg_max, the starting point's shifts)
mean the same at every scale of b and c; the tests, the history and the result are in the
problem's own units.

Precision: the outer iteration (x, y, s and the residuals b - A x, c - A^T y - s) is float64 on
the CPU for every back end, as in 002, whose GPU computed the sparse products while the IPM ran
on the CPU. The back end does the PCG: :class:`~gpgpu.lp.matrix_free_numpy.NumpyMatrixFree`
in float64, :class:`~gpgpu.lp.matrix_free_gpu.GPUMatrixFree` in float32 on the GPU (FSAX,
FSATY, the scaling, P^-1, the dot products: kernels of this project). A float32 PCG cannot
drive ||r|| below about 1e-5 ||rhs||; with ``refine`` (the default for eps < 3e-5, as the
Mehrotra solver) the solve is repeated on the float64 residual rhs - G_R dy (computed on the
CPU) until the target above is met (or a round's PCG reaches its iteration limit: another
round would meet the same conditioning): mixed-precision iterative refinement around the GPU PCG.

The back-end interface (:class:`MatrixFreeBackend`) is small: vectors of length m in the back
end's storage, ``dot``, ``axpy``, ``set_weights`` (Theta~ and delta), ``normal_matvec``
(G_R v), ``build_preconditioner`` and ``precondition`` (P^-1 v); beyond 002, scalars that may
stay on the device (``dot_deferred``, ``ratio_axpy``, ``read``, the breakdown watch), which
PCG reads every ``pcg_check`` iterations (GPU: 8; numpy64: 1, the textbook loop), and PCG's
solution vector in a format of its own (``accumulator``, ``accumulate``: float-float on the
GPU with ``solution="float-float"``, where a float32 x loses the steps below half its ulp).
The back end times its parts (``timers``: FSAX, FSATY, P^-1, the preconditioner's
construction) for 002's Table 2.

Resuming (beyond 002): ``start=`` a previous result goes on from the point where it stopped
(``LPResult.last_point``, with its regularisation's state and k), so that a long solve can run
in pieces; :func:`checkpoint` turns a result into arrays that ``numpy.savez`` keeps, and
``start=`` that dict (or the loaded file) resumes the same way in another process
(``experiments.mfipm.chunks``).
"""
from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .decisions import Reads, Settings, diverged, limit_status, result_message, stop_code
from .mehrotra import FREE_SPLIT_BOUND, LPResult, _split_partners
from .backends import get_matrix_free_backend
from .matrix_free_backend import MF_BACKENDS, MatrixFreeBackend, SoftLimit, SoftStop
from .regularisation import FIXED_REG_MIN, REG_MAX, REG_MIN, ProximalRegularisation

__all__ = ["MatrixFreeBackend", "matrix_free", "pcg", "get_matrix_free_backend", "MF_BACKENDS",
           "DEFAULT_RANK"]

#: why a normal-equation solve stopped before its tolerance (``history['pcg_stop']``, the message)
STOP_REASONS = {
    "limit": "stopped at the PCG iteration limit ({maxiter})",
    "stall": ("stopped by PCG's stall stop (the best residual had not halved over a span of "
              "iterations, near the target or past the limit)"),
    "breakdown": ("stopped at a PCG breakdown (p^T G_R p or r^T P^-1 r not positive or not finite: G_R "
                  "or the preconditioner is numerically singular in the back end's precision)"),
    "stalled": "stopped when a float64 refinement round no longer reduced the residual",
    "rounds": "stopped after the {rounds} float64 refinement rounds",
}
#: the ray tests of :func:`gpgpu.lp.decisions.diverged` once the stall test has fired: a ratio
#: this large between the certificate's bound and the iterates' norm then decides (module notes)
STALL_RAY_RATIO = 1e2
#: Default number k of pivoted columns of the partial Cholesky preconditioner (min(m, k)).
DEFAULT_RANK = 100
STEP_TO_BOUNDARY = 0.995
#: the adaptive regularisation floor's factor (``adaptive=True``): up after an iteration whose
#: PCG stopped before its tolerance, down when the proximal terms hold a residual back
FLOOR_RISE = 10.0
#: the PCG limit doubles after an iteration that stopped at it, up to this many times its start
PCG_LIMIT_GROWTH = 4
#: a stalled iteration goes on (this many times) from its starting point with rho = delta at the
#: floor and the regularisation's ceiling reg_max this many times lower
RESTARTS, RESTART_REG_CUT = 1, 1e4
#: the primal finishing rule (``adaptive``, the default PCG limit only): in an iteration whose
#: primal residual is above eps and the largest of the three tests, the combined direction's PCG
#: may run this many times the current limit (module notes)
FINISH_LIMIT_GROWTH = 8
#: the residual-aware limit: past its limit a float32 PCG's combined solve goes on while its
#: residual is above PRIMAL_ENOUGH times the primal part of its target (module notes)
PRIMAL_ENOUGH = 10.0
#: PCG's stall stop (the residual-aware limit): past the limit, the solve stops where its best
#: residual has not halved (``PCG_STALL_FALL``) over this share of the limit (module notes)
PCG_STALL_SPAN = 0.5
#: PCG's stall stop near its target (the residual-aware limit): before the limit, the solve
#: stops where its best residual, within PCG_NEAR times its target, has not halved over this
#: share of the limit (module notes)
PCG_NEAR_SPAN = 0.1
#: PCG's relative target ||r|| <= PCG_REL ||rhs|| with ``adaptive`` on a back end whose PCG
#: reaches it (float64: numpy64); PCG_REL_FIXED with ``adaptive=False`` (module notes,
#: docs/lp_defaults.md)
PCG_REL, PCG_REL_FIXED = 1e-6, 1e-2
#: ... and with ``adaptive`` on a float32 back end (the GPU), whose PCG stops at 1e-5 of its
#: residual (``pcg_floor``): any target at or above that floor needs no float64 refinement
#: round. A tighter one makes the directions more exact, which can save outer iterations and
#: cost PCG iterations; which way a problem goes is in docs/lp_defaults.md (module notes)
PCG_REL_FLOAT32 = 1e-2
#: PCG's target is never above this share of the primal residual ||xi_p|| (nor of its floor, eps
#: (1 + ||b||)): the residual PCG leaves in the primal equation stays below the one it reduces
PCG_PRIMAL_SHARE = 0.1
#: the starting point's floor: x and s at least this times (1 + their largest entry) above the
#: shifted least-squares point, so that the start is interior where that point is complementary
START_SHIFT = 1e-3
#: a solve's start (the corrector from the predictor, module notes) is taken where its float64
#: residual is at most this share of the right-hand side's norm (else PCG starts from 0)
START_ENOUGH = 0.5
#: the combined direction's PCG from the predictor's dy (module notes; off by default)
CORRECTOR_START = False


def rhs_scale(r: np.ndarray, diagonal) -> float:
    """The power of two 2^s by which PCG's right-hand side is multiplied before a solve (and
    the answer divided after; beyond 002). PCG's numbers are r^T r ~ ||r||^2 and gamma = r^T z,
    p^T G_R p ~ sum r_i^2 / G_ii (P^-1 scales each entry about as 1 / G_ii). Where G_R's
    entries are huge (late interior point iterations, badly scaled units) gamma and p^T G_R p
    fall toward float32's smallest normal number, 1.2e-38, while ||r||^2 does not; a GPU
    flushes smaller numbers to zero, and PCG breaks down on p^T G_R p = 0. 2^s puts the two
    magnitudes' geometric mean at 1 (2^4s ||r||^2 sum r_i^2 / G_ii = 1), as far from float32's
    floor as from its ceiling (3.4e38). In float64 the scaling changes no digit."""
    big = float(np.max(np.abs(r))) if r.size else 0.0
    if not (big > 0 and math.isfinite(big)):
        return 1.0
    u = r / big                                        # logarithms of r's sums without under/overflow
    log_rr = 2 * math.log2(big) + math.log2(float(np.dot(u, u)))
    log_gamma = log_rr
    if diagonal is not None:
        d = np.asarray(diagonal, dtype=np.float64)
        ok = np.isfinite(d) & (d > 0)
        g = float(np.sum(u[ok] ** 2 / d[ok])) if ok.any() else 0.0
        if g > 0 and math.isfinite(g):
            log_gamma = 2 * math.log2(big) + math.log2(g)
    s = int(round(-0.25 * (log_rr + log_gamma)))
    return math.ldexp(1.0, max(-120, min(120, s)))


def pcg(be: MatrixFreeBackend, b, target: float, maxiter: int, soft=None) -> dict:
    """Preconditioned conjugate gradients on G_R dy = b with the back end's operations
    (Hestenes-Stiefel with a preconditioner; [9] of 002), x0 = 0.

    Stops when ||r||_2 <= target or after ``maxiter`` iterations; with ``soft`` (a
    ``SoftLimit`` of ``gpgpu.lp.matrix_free_backend``: limit, enough and span) also at the first
    read after ``limit`` iterations where ||r||_2 <= enough, or where the best residual has
    not halved over ``span`` iterations (not converged: the residual-aware limit of
    :func:`matrix_free`). Answers a dict: ``x`` (a back-end vector, the iterate with the
    smallest residual seen; the caller frees it), ``iterations``, ``residual`` (its ||r||_2),
    ``converged``, ``breakdown`` (p^T G p <= 0 or not finite), ``stalled`` (PCG's stall stop
    ended it).

    The step lengths alpha = r^T z / p^T q and beta = r'^T z' / r^T z are used where the back end
    keeps its scalars (:meth:`MatrixFreeBackend.ratio_axpy`); the residual norm and the breakdown
    test are read at the first iteration, every ``be.pcg_check``-th and the last. With
    ``pcg_check = 1`` (numpy64) that is the textbook loop, three scalars an iteration; the GPU
    back end reads them every 8 iterations, so the GPU is not left waiting for the host between
    passes (beyond 002, which read them each iteration): PCG may run up to pcg_check - 1
    iterations past its target. A breakdown between two reads (p^T q <= 0 or not finite) is
    recorded by a watch on the device (``watch_step``: the first such iteration) and read with
    the others: PCG then stops with ``breakdown`` and the best iterate of the reads so far.
    A back end whose ``plan`` is true runs its ``pcg_planned`` instead (the GPU's: this loop
    drawn from recorded plans, the same contract).
    """
    if getattr(be, "plan", False):
        return be.pcg_planned(b, target, maxiter, soft=soft)
    soft = SoftStop(soft, maxiter, target)
    x = be.accumulator()
    rnorm = math.sqrt(max(be.dot(b, b), 0.0))
    out = {"iterations": 0, "converged": rnorm <= target, "breakdown": False, "stalled": False,
           "residual": rnorm}
    if out["converged"]:
        out["x"] = x
        return out
    st = _PCGState(be, b, x, rnorm)                     # r = b, p = z = P^-1 r, r^T z
    while st.it < maxiter:
        q = be.normal_matvec(st.p)                      # q = G_R p
        pq = be.dot_deferred(st.p, q)                   # p^T q
        # checked: the first iteration (a complete factor, k = m, converges in one), every
        # pcg_check-th and the last
        check = st.it == 0 or (st.it + 1) % st.every == 0 or st.it + 1 in (maxiter, soft.limit)
        if st.watch is not None:
            st.watch = be.watch_step(st.watch, pq, st.it)
        if check and st.broke_down(q, pq, target, out):
            break
        st.update(q, pq)                                # x + alpha p, r - alpha q
        if check and st.stops(target, soft, out):
            break
        st.direction()                                  # z = P^-1 r, p = z + beta p
    return st.finish(out)


class _PCGState:
    """The vectors and scalars of one :func:`pcg` solve (back-end handles): the iterate ``x``,
    the residual ``r`` (``b`` itself until the first update), the direction ``p``, r^T z, the
    breakdown watch, the best iterate of the reads and its residual norm, the iteration count."""

    def __init__(self, be, b, x, rnorm):
        self.be = be
        self.every = max(1, int(be.pcg_check))
        self.watch = be.watch_start() if self.every > 1 else None    # a p^T q <= 0 between two reads
        self.best_x, self.best_norm = x, rnorm
        self.x, self.r, self.r_owned = x, b, False
        with be.timed("precondition"):
            self.p = be.precondition(b)
        self.rz = be.dot_deferred(b, self.p)
        self.it = 0

    def read_norm(self) -> float:
        """||r||_2 read back (inf where not finite)."""
        be = self.be
        h = be.dot_deferred(self.r, self.r)
        vv = be.read(h)
        be.free_scalar(h)
        return math.sqrt(vv) if math.isfinite(vv) and vv >= 0 else math.inf

    def broke_down(self, q, pq, target, out) -> bool:
        """The check before the update: p^T q and r^T z (and the watch) read; on a breakdown, or
        where r reached 0 since the last check (then z = p = 0: 0 / 0 steps, which saxpy_ratio
        makes 0), the residual decides (r = b - G x holds whatever the steps were; the best
        iterate of the reads is kept) and PCG stops: True."""
        be = self.be
        pqv, rzv = be.read(pq), be.read(self.rz)
        broke = not (math.isfinite(pqv) and pqv > 0.0 and math.isfinite(rzv) and rzv > 0.0)
        if self.watch is not None and not broke:
            broke = be.read(self.watch) >= 0      # p^T q <= 0 at an iteration since the last read
        if not broke:
            return False
        be.free(q)
        be.free_scalar(pq)
        if self.every > 1:
            rnorm = self.read_norm()
            if rnorm < self.best_norm:
                if self.best_x is not self.x:
                    be.free(self.best_x)
                self.best_x, self.best_norm = self.x, rnorm
            if rnorm <= target:
                out["converged"] = True
                return True
        out["breakdown"] = True
        return True

    def update(self, q, pq) -> None:
        """x + alpha p, r - alpha q with alpha = r^T z / p^T q (kept by the back end)."""
        be = self.be
        x_new = be.accumulate(self.rz, pq, self.p, self.x)
        r_new = be.ratio_axpy(self.rz, pq, -1.0, q, self.r)
        be.free(q)
        be.free_scalar(pq)
        if self.r_owned:
            be.free(self.r)
        self.r, self.r_owned = r_new, True
        if self.x is not self.best_x:
            be.free(self.x)
        self.x = x_new
        self.it += 1

    def stops(self, target, soft, out) -> bool:
        """The check after the update: ||r|| read, the best iterate kept; True where PCG stops
        (converged, broken down between two checks, or past the soft limit: ``soft``, a
        :class:`~gpgpu.lp.matrix_free_backend.SoftStop`)."""
        rnorm = self.read_norm()
        if rnorm < self.best_norm:
            self.be.free(self.best_x)
            self.best_x, self.best_norm = self.x, rnorm
        if rnorm <= target:
            out["converged"] = True
            return True
        if not math.isfinite(rnorm):              # broke down between two checks
            out["breakdown"] = True
            return True
        if soft.stops(self.it, rnorm, self.best_norm):    # past the soft limit: enough, or stalled
            out["stalled"] = soft.stalled
            return True
        return False

    def direction(self) -> None:
        """z = P^-1 r, beta = r'^T z' / r^T z, p = z + beta p."""
        be = self.be
        with be.timed("precondition"):
            z = be.precondition(self.r)
        rz_new = be.dot_deferred(self.r, z)
        p_new = be.ratio_axpy(rz_new, self.rz, 1.0, self.p, z)
        be.free(z)
        be.free(self.p)
        be.free_scalar(self.rz)
        self.p, self.rz = p_new, rz_new

    def finish(self, out) -> dict:
        """Free what the solve made but the best iterate; the answer dict."""
        be = self.be
        be.free(self.p)
        be.free_scalar(self.rz)
        if self.watch is not None:
            be.free_scalar(self.watch)
        if self.r_owned:
            be.free(self.r)
        if self.x is not self.best_x:
            be.free(self.x)
        out.update(x=self.best_x, residual=self.best_norm, iterations=self.it)
        return out


class _Solver:
    """The outer iteration's view of the normal equations: PCG solves (with float64 refinement
    rounds when the back end's precision asks for them) and the statistics of the run."""

    def __init__(self, be, A, AT, refine, maxiter, rounds=8, bounds=None):
        self.bounds = bounds                             # bound rows eliminated (gpgpu.lp.bounds), or None
        if bounds is not None:                           # G_R is the Schur complement of the main rows
            A = bounds.A_main
            AT = A.T.tocsr()
        self.be, self.A, self.AT = be, A, AT
        self.theta_full = None
        self.refine, self.maxiter, self.rounds = refine, maxiter, rounds
        self.maxiter0 = maxiter                          # the limit before the adaptive rule grew it
        self.theta = None
        self.delta = 0.0
        self.iterations = 0
        self.unconverged = 0
        self.stops = {reason: [] for reason in STOP_REASONS}     # PCG iterations of each such solve
        self.outer_seconds = 0.0
        self.outer_products = 0
        self.pcg_seconds = 0.0

    def set_weights(self, theta, delta, rank):
        self.theta_full = theta
        if self.bounds is not None:                     # the Schur complement's weights
            theta = self.bounds.weights(theta, delta)
        self.theta, self.delta = theta, delta
        self.be.set_weights(theta, delta)
        with self.be.timed("build"):
            return self.be.build_preconditioner(rank)

    def G64(self, v):
        """G_R v in float64 on the CPU (the refinement residual)."""
        t0 = time.perf_counter()
        out = self.A @ (self.theta * (self.AT @ v)) + self.delta * v
        self.outer_seconds += time.perf_counter() - t0
        self.outer_products += 2
        return out

    def solve(self, rhs, target, maxiter=None, soft=None, rel=None, start=None) -> tuple:
        """dy with ||rhs - G_R dy|| <= target, as far as PCG gets (at most ``maxiter`` PCG
        iterations, by default the current limit); (dy, facts). ``start``: a dy to start from
        (module notes, the corrector from the predictor): PCG solves for the correction on the
        float64 residual rhs - G_R start where that residual's norm is at most START_ENOUGH
        times rhs's (else from 0). ``rel``, with bound rows
        eliminated: where the Schur system's right-hand side is no larger than ``target`` (a
        target relative to ``rhs``, met by dy = 0 on the main rows with no PCG iteration),
        PCG's target is ``rel`` times that right-hand side's norm instead. ``soft = (limit, enough)``:
        past ``limit`` PCG iterations the solve stops where ||rhs - G_R dy|| <= enough (with
        refinement, judged on the float64 residual: a round stopped there whose residual is
        still above ``enough`` is followed by another, within ``maxiter`` in all). With bound
        rows eliminated, PCG solves the Schur system of the main rows and the bound rows' part
        follows exactly (:mod:`gpgpu.lp.bounds`): G_R's residual is the Schur system's."""
        if self.bounds is None:
            return self._solve(rhs, target, maxiter, soft, start)
        b, theta, delta = self.bounds, self.theta_full, self.delta
        schur = b.eliminate(rhs, theta, delta)
        size = float(np.linalg.norm(schur))
        if rel is not None and target >= size:
            # the bound rows carry rhs: its main rows' part is solved to rel of its own size, not
            # dropped (the presolved forplan on the GPU: dy = 0 there, then the steps collapsed)
            target = rel * size
        # the Schur system's unknowns are the main rows of dy (gpgpu.lp.bounds)
        dy, facts = self._solve(schur, target, maxiter, soft, None if start is None else start[:b.m])
        return b.back_substitute(dy, rhs, theta, delta), facts

    def _solve(self, rhs, target, maxiter=None, soft=None, start=None) -> tuple:
        be = self.be
        maxiter = self.maxiter if maxiter is None else int(maxiter)
        soft = None if soft is None else SoftLimit(*soft)
        rnorm0 = float(np.linalg.norm(rhs))
        dy, r, rnorm = self._start(rhs, rnorm0, start)
        facts = {"iterations": 0, "rounds": 0, "converged": False, "breakdown": False, "stop": "rounds"}
        rounds = self.rounds if self.refine else 1

        def pcg_stop(res):
            if res["breakdown"]:
                return "breakdown"
            return "stall" if res.get("stalled") else "limit"

        for _ in range(rounds):
            tol = max(target, be.pcg_floor * rnorm)      # the floor: of the residual PCG is given
            t0 = time.perf_counter()
            scale = rhs_scale(r, be.diagonal)            # a power of two: exact, undone below
            rv = be.vector(r * scale)
            done = facts["iterations"]
            res = pcg(be, rv, tol * scale, maxiter - done,
                      soft=None if soft is None else soft.after(done, scale))
            be.free(rv)
            if be.profile:
                be.sync()
            self.pcg_seconds += time.perf_counter() - t0
            dy = dy + be.to_numpy(res["x"]) / scale
            res["residual"] /= scale
            be.free(res["x"])
            facts["iterations"] += res["iterations"]
            facts["rounds"] += 1
            facts["breakdown"] |= res["breakdown"]
            if not self.refine:
                rnorm = res["residual"]       # PCG's own residual, of its right-hand side r (rhs - G_R start)
                facts["converged"] = res["converged"]
                facts["stop"] = "converged" if res["converged"] else pcg_stop(res)
                break
            r_new = rhs - self.G64(dy)
            rnorm_new = float(np.linalg.norm(r_new))
            if not res["converged"]:
                # PCG itself ran out of iterations (or broke down, or stalled past its soft
                # limit): another round would meet the same conditioning (measured: nug12 on the
                # H200 spent 3-7 rounds of 2000 PCG iterations a solve for no gain) -- unless it
                # stopped at a soft limit on a float32 residual that the float64 one does not confirm
                facts["stop"] = pcg_stop(res)
                if (soft is None or res["breakdown"] or res.get("stalled") or facts["iterations"] >= maxiter
                        or rnorm_new <= soft.enough or not rnorm_new < 0.9 * rnorm):
                    rnorm = rnorm_new                        # the answer's, even where the round raised it
                    break
                r, rnorm = r_new, rnorm_new
                continue
            if rnorm_new <= target:
                facts["converged"] = True
                facts["stop"] = "converged"
                rnorm = rnorm_new
                break
            if not rnorm_new < 0.9 * rnorm:                  # the rounds stopped helping
                rnorm = rnorm_new                            # the answer's, even where the round raised it
                facts["stop"] = "stalled"
                break
            r, rnorm = r_new, rnorm_new
        facts["residual"] = rnorm / rnorm0 if rnorm0 > 0 else 0.0
        self.iterations += facts["iterations"]
        if not facts["converged"]:
            self.unconverged += 1
            self.stops[facts["stop"]].append(facts["iterations"])
        return dy, facts

    def _start(self, rhs, rnorm0, start) -> tuple:
        """(dy, r, ||r||) PCG begins with: 0, rhs and its norm; or ``start``, its float64 residual
        rhs - G_R start and that norm, where that norm is at most START_ENOUGH times rhs's."""
        if start is not None:
            r = rhs - self.G64(start)
            rnorm = float(np.linalg.norm(r))
            if rnorm <= START_ENOUGH * rnorm0:
                return np.array(start, dtype=np.float64), r, rnorm
        return np.zeros_like(rhs), rhs, rnorm0

    def unconverged_note(self) -> str:
        """What the result's message says of the solves that stopped before their tolerance:
        how many stopped for which reason, after how many PCG iterations."""
        total = self.unconverged
        parts = []
        for reason, its in self.stops.items():
            if not its:
                continue
            limit = (f"{self.maxiter}" if self.maxiter == self.maxiter0 else
                     f"{self.maxiter0}, grown to {self.maxiter} by the adaptive rule")
            what = STOP_REASONS[reason].format(maxiter=limit, rounds=self.rounds)
            lo, hi = min(its), max(its)
            after = ("" if reason == "limit" and not self.refine else
                     f", after {lo} PCG iterations" + (" each" if len(its) > 1 else "") if lo == hi else
                     f", after {lo} to {hi} PCG iterations")
            parts.append((len(its), what, after))
        if len(parts) == 1:
            n, what, after = parts[0]
            return (f"{n} of the normal-equation solves {what} before their tolerance{after} "
                    "(see history['pcg_converged'] and history['pcg_stop']).")
        listed = "; ".join(f"{n} {what}{after}" for n, what, after in parts)
        return (f"{total} of the normal-equation solves stopped before their tolerance: {listed} "
                "(see history['pcg_converged'] and history['pcg_stop']).")


def checkpoint(result) -> dict:
    """What resuming a matrix-free ``result`` needs, as numpy arrays (beyond 002): ``x``, ``y``,
    ``s`` (the standard-form point where the iteration stopped, ``last_point``),
    ``regularisation_state`` (rho, delta) and ``rank`` (k). ``numpy.savez(file, **checkpoint(r))``
    keeps it; ``start=`` the dict or ``numpy.load(file)`` goes on as ``start=r`` does."""
    if getattr(result, "last_point", None) is None:
        raise ValueError("checkpoint: the result carries no last_point; only method='matrix-free' "
                         "results can be resumed")
    x, y, s = (np.array(v, dtype=np.float64) for v in result.last_point)
    return {"x": x, "y": y, "s": s,
            "regularisation_state": np.array(result.regularisation_state, dtype=np.float64),
            "rank": np.array(int(result.rank)),
            "adaptive_state": np.array(result.adaptive_state if result.adaptive_state is not None
                                       else (0.0, 0, 0.0, 0.0), dtype=np.float64)}


def _resume_state(start):
    """((rho, delta) or None, k or None) that ``start`` carries: a matrix-free result's, or a
    checkpoint mapping's (:func:`checkpoint`), checked."""
    if isinstance(start, LPResult):
        state, rank = getattr(start, "regularisation_state", None), getattr(start, "rank", None)
    elif isinstance(start, Mapping):
        state, rank = start.get("regularisation_state"), start.get("rank")
    else:
        return None, None
    if state is not None:
        state = np.asarray(state, dtype=np.float64).ravel()
        if state.shape != (2,) or not np.isfinite(state).all() or not (state > 0).all():
            raise ValueError(f"start: regularisation_state must be two positive numbers (rho, delta), got {state}")
        state = (float(state[0]), float(state[1]))
    if rank is not None:
        rank = int(np.asarray(rank))
        if rank < 1:
            raise ValueError(f"start: rank must be a positive k, got {rank}")
    return state, rank


def _start_point(start, m: int, n: int) -> tuple:
    """(x, y, s) of ``start`` (an LPResult, a checkpoint mapping or a triple) as float64 copies,
    checked: shapes (n,), (m,), (n,), finite, x > 0 and s > 0 (an interior point)."""
    if isinstance(start, Mapping):
        missing = [key for key in ("x", "y", "s") if key not in start]
        if missing:
            raise ValueError(f"start: a checkpoint mapping needs x, y and s (gpgpu.lp.matrix_free.checkpoint); "
                             f"missing {', '.join(missing)}")
        start = (start["x"], start["y"], start["s"])
    elif isinstance(start, LPResult):
        if getattr(start, "last_point", None) is not None:
            start = start.last_point          # the matrix-free method's: where it stopped
        elif start.x_std is None:
            raise ValueError(f"start: the result has no point to start from (status {start.status!r})")
        else:
            start = (start.x_std, start.y, start.s)
    try:
        x, y, s = (np.array(v, dtype=np.float64) for v in start)
    except (TypeError, ValueError) as e:
        raise ValueError(f"start must be an LPResult, a checkpoint mapping or a triple (x, y, s) of arrays: {e}") from None
    for name, v, size in (("x", x, n), ("y", y, m), ("s", s, n)):
        if v.shape != (size,):
            raise ValueError(f"start: {name} must have shape ({size},) (the standard form's), got {v.shape}")
        if not np.isfinite(v).all():
            raise ValueError(f"start: {name} has entries that are not finite")
    if not (x > 0).all() or not (s > 0).all():
        raise ValueError("start: x and s must be positive (an interior point, as a result's x_std and s are)")
    return x, y, s


def _max_step(v, dv) -> float:
    neg = dv < 0
    if not neg.any():
        return 1.0
    return float(min(1.0, np.min(-v[neg] / dv[neg])))


def matrix_free(be: MatrixFreeBackend, problem, *, eps=1e-6, max_iter=100, callback=None, rank=None,
                pcg_maxiter=None, refine=False, reg_min=None, reg_max=REG_MAX, ray_ratio=1e4,
                collapse=1e-10, stall_window=8, rank_max=None, start=None, adaptive=True,
                correctors=None, free_safeguard=None, bounds=None, deadline=None) -> LPResult:
    """The matrix-free IPM of 002 section 2.1 on back end ``be`` (module notes).

    Parameters
    ----------
    eps : float
        Tolerance of the termination tests (6.1)-(6.3) of paper 000, as the Mehrotra solver.
    deadline : float, optional
        A ``time.perf_counter()`` value after which the iteration stops with status
        "time_limit" and its best point (as :func:`~gpgpu.lp.mehrotra.mehrotra`).
    rank : int, optional
        k, the pivoted columns of the partial Cholesky preconditioner (default min(m, 100)).
    rank_max : int, optional
        Beyond 002: after an iteration in which a PCG solve reached its limit, k doubles (up
        to ``rank_max``, at most m) for the next iteration. Default None: k stays ``rank``,
        002's method. With ``rank_max = m`` a problem whose spectrum no k << m columns tame
        (nug12) ends with the complete factor: then the method is a direct normal-equations
        IPM that forms G_R's columns by products, no longer matrix-free.
    pcg_maxiter : int, optional
        PCG iterations per solve (default max(200, min(4 m, 2000))).
    refine : bool
        Float64 refinement rounds around the back end's PCG (module notes).
    reg_min, reg_max : float
        Bounds of rho = delta (R_p = rho I, R_d = delta I), which follow mu between them.
        reg_min None: 1e-12 with ``adaptive`` (the rule raises it where PCG needs it), 1e-8
        without (:data:`~gpgpu.lp.regularisation.FIXED_REG_MIN`).
    adaptive : bool
        Beyond 002 (default True; ``preset="paper"`` turns it off): after an iteration in which
        a PCG solve stopped at its iteration limit, the floor of rho = delta becomes their value
        at the last iteration whose solves all converged (they stop following mu down), and the
        default PCG limit doubles, up to 4 times its start (module notes). It also turns on the
        safeguards of the module notes (floor 1e-12, residual targets aware of the gap, PCG's
        target 1e-6 of the right-hand side on a float64 back end, centrality correctors, the
        free-split safeguard, one restart from the starting point after a stall, with the
        regularisation at its floor). What each changes, measured: docs/lp_defaults.md.
    correctors, free_safeguard : optional
        The centrality correctors' count (None: 2 with ``adaptive``, else 0) and the free-split
        safeguard (None: as ``adaptive``); for experiments (``solve`` does not take them).
    bounds : BoundRows, optional
        Beyond 002: the bound rows of ``problem.A`` eliminated from the normal equations
        (:mod:`gpgpu.lp.bounds`; ``solve`` finds them unless ``bounds="rows"``): ``be`` is then
        built on the main rows, and PCG solves their Schur complement
        A_main diag(Theta~') A_mainᵀ + delta I; None: G_R of every row, as 002.
    start : LPResult or (x, y, s), optional
        Beyond 002: start from this point of the standard form (x, s > 0) instead of Mehrotra's
        starting point. A matrix-free result passes the point where its iteration stopped
        (``last_point``; its ``x_std``, ``y``, ``s`` are the best point seen when it ends at
        ``max_iter`` or in numerical trouble, which need not be the last), so that a run cut
        short by ``max_iter`` goes on as if it had not been cut (with its regularisation's
        state and, within ``rank_max``, its k; the history counts from 0 again and the stall
        test's window restarts). A mapping with ``x``, ``y``, ``s`` and optionally
        ``regularisation_state`` and ``rank`` (:func:`checkpoint`, or its file loaded with
        ``numpy.load``) resumes as the result would. A triple starts with the regularisation at
        the point's mu.

    Notes
    -----
    The statuses, the infeasibility and unboundedness tests and the stall test are those of
    :func:`gpgpu.lp.mehrotra.mehrotra` (the stall test with its feasibility clause: a growing
    gap while (6.1)-(6.2) fall is progress; its ``diverged``). When the stall test fires, the
    ray tests are asked once more at ``STALL_RAY_RATIO`` = 100 instead of ``ray_ratio``: the
    regularised steps along a ray of an unbounded LP can shrink before the ratio holds, and a
    stalled iteration ends anyway (docs/guide/matrix-free.md). When it still ends in numerical
    trouble and the primal (dual) objective ran away -- beyond 100 times every other objective
    value seen -- the message says that the LP may be unbounded (infeasible). History entries
    add ``pcg_iterations`` (predictor, corrector), ``pcg_converged``, ``pcg_stop`` (module
    notes), ``pcg_residual`` (the residual of the dy the step is made from, relative to the
    right-hand side: float64 with refinement, PCG's own without; the worse of the two solves),
    ``rank``, ``regularisation`` and ``gap_parts``: x^T s, x^T r_c and -y^T r_b, each over
    1 + |c^T x|, whose sum is (c^T x - b^T y) / (1 + |c^T x|) (the gap (6.3) is the larger of
    its size and the first part's): which of complementarity, the dual residual and the primal
    residual holds the gap.

    The loop, top to bottom: the residuals and the tests (6.1)-(6.3) (:func:`_measure`), the
    stopping tests (:func:`_stopping_tests`; a stall's restart, :func:`_restart`), the
    predictor-corrector directions (:func:`_predictor_corrector`), the step
    (:func:`_take_step`); the state is one record (:class:`_Run`).
    """
    with be.scope():                         # the back end's vectors (the GPU's folded ones)
        run = _Run(be, problem, eps, max_iter, callback, rank, pcg_maxiter, refine, reg_min, reg_max,
                   ray_ratio, collapse, stall_window, rank_max, adaptive, correctors, free_safeguard, bounds,
                   deadline)
        if start is not None:
            _resume(run, start)                  # beyond 002: a given interior point, with its state
        else:
            _mehrotra_start(run)
        run.begin()
        while True:
            t = _measure(run)                    # r_b, r_c, mu, (6.1)-(6.3), the history entry
            stop = _stopping_tests(run, t)
            if stop == 4 and _may_restart(run, t):
                _restart(run, t.entry)           # beyond 002: once from the starting point
                continue
            if stop is not None:
                run.code = stop
                run.report(t.entry)
                break
            step = _predictor_corrector(run, t)
            if step is None:                     # the back end's arithmetic broke down
                break
            _take_step(run, t, step)
        return _result(run)


class _Run:
    """The state of one :func:`matrix_free` run, the record its named parts read and update:
    the problem in the iteration's units (A, Aᵀ, b / bs, c / cs and the norms of b and c), the
    normal equations' solver, the regularisation and its adaptive floor, the options, the point
    (x, y, s), the preconditioner's k, and what the tests and the result keep (the history,
    the best point, the starting point a restart goes back to)."""

    def __init__(self, be, problem, eps, max_iter, callback, rank, pcg_maxiter, refine, reg_min, reg_max,
                 ray_ratio, collapse, stall_window, rank_max, adaptive, correctors, free_safeguard, bounds,
                 deadline):
        self.t0 = time.perf_counter()
        self.be, self.problem, self.bounds = be, problem, bounds
        A = problem.A.tocsr()
        self.A, self.AT = A, A.T.tocsr()
        self.m, self.n = m, n = A.shape
        self.nb = float(np.max(np.abs(problem.b))) if m else 0.0
        self.nc = float(np.max(np.abs(problem.c))) if n else 0.0
        # the iteration works on b / bs and c / cs (x = bs x', lambda = cs lambda', s = cs s'), so
        # that its absolute constants (reg_min, reg_max, the starting shifts) mean the same for
        # every scale of b and c; the tests and the history are in the problem's own units
        self.bs, self.cs = max(1.0, self.nb), max(1.0, self.nc)
        self.units = _Units(self.nb, self.nc, self.bs, self.cs)
        self.b, self.c = problem.b / self.bs, problem.c / self.cs
        self.k = min(m, DEFAULT_RANK if rank is None else int(rank))
        self.k_max = self.k if rank_max is None else max(self.k, min(m, int(rank_max)))
        maxiter = max(200, min(4 * m, 2000)) if pcg_maxiter is None else int(pcg_maxiter)
        self.sol = _Solver(be, A, self.AT, refine, maxiter, bounds=bounds)
        self.adaptive = adaptive = bool(adaptive)
        if reg_min is None:
            reg_min = min(REG_MIN if adaptive else FIXED_REG_MIN, reg_max)
        self.correctors = (CORRECTORS if adaptive else 0) if correctors is None else int(correctors)
        self.free_safeguard = adaptive if free_safeguard is None else bool(free_safeguard)
        self.reg = ProximalRegularisation(reg_min, reg_max)
        self.floor = _Floor(self.reg, self.sol, adaptive, grow=pcg_maxiter is None)
        self.eps, self.max_iter, self.callback, self.deadline = eps, max_iter, callback, deadline
        self.ray_ratio, self.collapse, self.stall_window = ray_ratio, collapse, stall_window
        # the target 1e-6 where the back end's PCG reaches it in one solve (float64); a float32 PCG
        # stops at pcg_floor = 1e-5 of its residual, so that 1e-6 would cost every solve a
        # refinement round: PCG_REL_FLOAT32 there, at least that floor (module notes); without
        # adaptive, PCG_REL_FIXED
        if not adaptive:
            self.pcg_rel = PCG_REL_FIXED
        else:
            self.pcg_rel = PCG_REL if be.pcg_floor < PCG_REL else max(PCG_REL_FLOAT32, be.pcg_floor)
        self.x = self.lam = self.s = None
        self.history, self.worst_hist, self.why = [], [], {}      # why: the certificate of 2 or 3
        self.first, self.restarts, self.code, self.it = None, 0, 1, 0
        self.replaced_total, self.trouble, self.stalled_ray = 0, None, False

    def begin(self) -> None:
        """After the starting point: the free-split partners, and the best point and the point
        a restart goes on from, both the start."""
        self.partner = _split_partners(self.problem) if self.free_safeguard else None
        self.best = self.origin = (math.inf, 0, self.x, self.lam, self.s)

    def outer(self, f, v):
        """A product of the outer iteration (float64 on the CPU), timed and counted."""
        t = time.perf_counter()
        out = f @ v
        self.sol.outer_seconds += time.perf_counter() - t
        self.sol.outer_products += 1
        return out

    def report(self, entry) -> None:
        if self.callback is not None:
            self.callback(entry)


def _resume(run, start) -> None:
    """Beyond 002: the point ``start`` gives (a previous result's last point, a checkpoint or a
    triple), with the regularisation's state, the adaptive floor and PCG limit and the k it had."""
    state, rank_then = _resume_state(start)
    if state is not None:
        run.reg.rho, run.reg.delta = state
    run.floor.resume(start)                                 # the adaptive rule's floor and limit
    if rank_then is not None:
        run.k = min(run.k_max, max(run.k, rank_then))       # as far as rank_max had grown it
    x, lam, s = _start_point(start, run.m, run.n)
    run.x, run.lam, run.s = x / run.bs, lam / run.cs, s / run.cs


def _mehrotra_start(run) -> None:
    """Mehrotra's starting point ([Wri97] p. 210), the least-squares solves by PCG on
    A Aᵀ + delta I (Theta~ = e): x = Aᵀ (A Aᵀ)⁻¹ b, y = (A Aᵀ)⁻¹ A c, s = c - Aᵀ y, shifted
    positive, then each by half of xᵀs over the other's sum (at least START_SHIFT (1 + its largest))."""
    sol, A, AT, b, c = run.sol, run.A, run.AT, run.b, run.c
    sol.set_weights(np.ones(run.n), run.reg.start[1], run.k)
    tiny = 1e-10 * (1.0 + run.nb) / run.bs
    w, _ = sol.solve(b, tiny)
    x = run.outer(AT, w)
    lam, _ = sol.solve(run.outer(A, c), 1e-10 * (1.0 + float(np.linalg.norm(A @ c))))
    s = c - run.outer(AT, lam)
    x = x + max(-1.5 * float(x.min()), 0.0)
    s = s + max(-1.5 * float(s.min()), 0.0)
    xs = float(x @ s)
    if not xs > 0.0:
        x, s = x + 1.0, s + 1.0
        xs = float(x @ s)
    x = x + max(0.5 * xs / s.sum(), START_SHIFT * (1.0 + np.abs(x).max()))
    s = s + max(0.5 * xs / x.sum(), START_SHIFT * (1.0 + np.abs(s).max()))
    run.x, run.lam, run.s = x, lam, s


@dataclass
class _Tests:
    """One iteration's residuals (``rb``, ``rc`` and the infinity norms ``nrb_n``, ``nrc_n``, mu
    ``mu_n`` in the iteration's units; ``nrb``, ``nrc``, ``mu``, ``cx`` = cᵀx and ``by`` = bᵀy in
    the problem's), the tests (6.1)-(6.3) ``pres``, ``dres``, ``gap``, whether all are finite,
    the worst of the three, and the history entry."""
    rb: np.ndarray
    rc: np.ndarray
    nrb_n: float
    nrc_n: float
    mu_n: float
    nrb: float
    nrc: float
    mu: float
    cx: float
    by: float
    pres: float
    dres: float
    gap: float
    finite: bool
    worst: float
    entry: dict


def _measure(run) -> _Tests:
    """r_b = b - A x, r_c = c - Aᵀ y - s, mu = xᵀs / n and paper 000's tests (6.1)-(6.3); the
    history entry of iteration ``run.it`` appended; the best point kept."""
    x, lam, s, bs, cs, m, n = run.x, run.lam, run.s, run.bs, run.cs, run.m, run.n
    rb = run.b - run.outer(run.A, x)
    rc = run.c - run.outer(run.AT, lam) - s
    cx, by = float(run.c @ x), float(run.b @ lam)
    nrb_n = float(np.abs(rb).max()) if m else 0.0          # in the iteration's units
    nrc_n = float(np.abs(rc).max()) if n else 0.0
    mu_n = float(x @ s) / n
    nrb, nrc, mu, cx, by = nrb_n * bs, nrc_n * cs, mu_n * bs * cs, cx * bs * cs, by * bs * cs
    pres, dres = nrb / (1.0 + run.nb), nrc / (1.0 + run.nc)
    # (6.3); with the adaptive safeguards the complementarity x^T s too: c^T x - b^T y =
    # x^T s + x^T r_c - y^T r_b, and large multipliers times residuals within (6.1) can cancel
    # x^T s there (forplan, ||b|| = 1e7: x^T s 1.3e-5 relative, (6.3) 3.5e-7, the objective
    # 7.5e-6 off)
    gap = max(abs(cx - by), mu * n if run.adaptive else 0.0) / (1.0 + abs(cx))
    # the gap's parts, each over 1 + |c^T x|: which of x^T s, x^T r_c and -y^T r_b holds it
    per = bs * cs / (1.0 + abs(cx))
    parts = (float(x @ s) * per, float(x @ rc) * per, -float(lam @ rb) * per)
    entry = {"iteration": run.it, "primal_residual": pres, "dual_residual": dres, "gap": gap, "mu": mu,
             "gap_parts": parts,
             "primal_objective": cx + run.problem.c0, "dual_objective": by + run.problem.c0,
             "alpha_pri": None, "alpha_dual": None, "sigma": None, "replaced_pivots": None,
             "pcg_iterations": None, "pcg_converged": None, "pcg_stop": None, "pcg_residual": None,
             "pcg_limit": None, "pcg_cap": None, "pcg_solution": getattr(run.be, "solution", None),
             "rank": run.k, "regularisation": None, "time": time.perf_counter() - run.t0}
    run.history.append(entry)
    finite = all(math.isfinite(v) for v in (cx, by, nrb, nrc, mu)) and mu > 0
    worst = max(pres, dres, gap) if finite else math.inf
    if worst < run.best[0]:
        run.best = (worst, run.it, x, lam, s)
    if run.first is None:
        run.first = {"mu": mu, "pres": pres, "dres": dres, "m": m, "min_pres": pres, "min_dres": dres}
    first = run.first
    if finite:
        first["min_pres"] = min(first["min_pres"], pres)
        first["min_dres"] = min(first["min_dres"], dres)
    return _Tests(rb, rc, nrb_n, nrc_n, mu_n, nrb, nrc, mu, cx, by, pres, dres, gap, finite, worst, entry)


def _settings(run, ray_ratio) -> Settings:
    """The stopping tests' settings of the run, at this ray ratio."""
    return Settings(run.eps, run.max_iter, run.stall_window, ray_ratio, run.collapse, run.deadline)


def _diverged_at(run, t: _Tests, ratio):
    """The Mehrotra solver's infeasibility and unboundedness tests at this ray ``ratio``."""
    x, lam = run.x, run.lam
    reads = Reads(lambda: float(x.sum()) * run.bs, lambda: float(np.abs(lam).max()) * run.cs)
    return diverged(t, run, run.first, _settings(run, ratio), reads, run.why)


def _stopping_tests(run, t: _Tests):
    """The Mehrotra solver's stop code (:func:`gpgpu.lp.decisions.stop_code`: 0 optimal, 1
    the iteration limit, 2 and 3 the certificates, 4 numerical trouble or a stall, 5 the
    deadline), or None to go on. When the stall test fires while the iteration runs along a ray
    that the ray test has not yet certified at ``ray_ratio`` (the regularisation slows the run
    along it), the ray tests decide at STALL_RAY_RATIO."""
    stop = stop_code(t, _settings(run, run.ray_ratio), run.it, run.worst_hist,
                     lambda: _diverged_at(run, t, run.ray_ratio))
    if stop == 4 and t.finite and (weak := _diverged_at(run, t, STALL_RAY_RATIO)) is not None:
        stop, run.stalled_ray = weak, True
    return stop


def _may_restart(run, t: _Tests) -> bool:
    """Whether a stall goes on from the starting point (``adaptive``, at most RESTARTS times)."""
    return t.finite and run.adaptive and run.restarts < RESTARTS and not run.stalled_ray


def _restart(run, entry) -> None:
    """Beyond 002: a stall goes on from the starting point with rho = delta at the floor and the
    ceiling RESTART_REG_CUT times lower (module notes); the entry says so and takes no step."""
    run.restarts += 1
    _, entry["restart_iteration"], run.x, run.lam, run.s = run.origin
    reg, floor = run.reg, run.floor
    reg.reg_max /= RESTART_REG_CUT
    reg.reg_min = floor.floor0 = min(floor.floor0, reg.reg_max)
    reg.rho = reg.delta = reg.reg_min
    floor.restarted = True
    run.worst_hist.clear()
    entry["regularisation_ceiling"] = reg.reg_max
    run.report(entry)
    run.it += 1


@dataclass
class _Step:
    """An iteration's combined direction (dx, dy, ds) and step lengths, sigma, the predictor's
    and the corrector's PCG facts, the corrector's limit (``soft``: the residual-aware one), the
    proximal terms' hold, the preconditioner's build facts, and rho = delta of the iteration."""
    dx: np.ndarray
    dy: np.ndarray
    ds: np.ndarray
    ap: float
    ad: float
    sigma: float
    f1: dict
    f2: dict
    limit: int
    soft: tuple | None
    held: tuple
    info: dict
    rho_k: float
    delta_k: float


def _newton(run, t: _Tests, theta, cap_abs):
    """The Newton direction of the regularised pair for a right-hand side xi_mu (002 (6)):
    G_R dy = xi_p + A Theta~ (xi_d - X⁻¹ xi_mu) by PCG, dx = Theta~ (Aᵀ dy - xi_d + X⁻¹ xi_mu),
    ds = X⁻¹ (xi_mu - S dx), with xi_p = r_b, xi_d = r_c (``residuals``) or both zero (a
    centrality corrector); PCG's target min(pcg_rel ||rhs||, ``cap_abs``); ``start``: the dy
    PCG starts from (the corrector from the predictor, module notes)."""
    x, s, A, AT, sol, pcg_rel, rb, rc = run.x, run.s, run.A, run.AT, run.sol, run.pcg_rel, t.rb, t.rc

    def newton(xi_mu, residuals=True, maxiter=None, soft=None, start=None):
        f = (rc - xi_mu / x) if residuals else -xi_mu / x  # xi_d - X^-1 xi_mu
        rhs = (rb + run.outer(A, theta * f)) if residuals else run.outer(A, theta * f)
        tol = min(pcg_rel * float(np.linalg.norm(rhs)), cap_abs)
        dy, facts = sol.solve(rhs, tol, maxiter, soft, rel=pcg_rel, start=start)
        dx = theta * (run.outer(AT, dy) - f)
        ds = (xi_mu - s * dx) / x
        return dx, dy, ds, facts

    return newton


def _corrector_limit(run, t: _Tests, cap_abs) -> tuple:
    """(limit, soft) of the combined direction's PCG: while the primal residual is the test
    farthest above eps, FINISH_LIMIT_GROWTH times the limit (the primal finishing rule); else
    on a float32 PCG the residual-aware limit (past the limit the solve goes on, up to the
    finishing rule's, while its residual would raise the primal residual; module notes)."""
    sol = run.sol
    finishing = run.floor.grow and _primal_leads(t.pres, t.dres, t.gap, run.eps)
    limit = FINISH_LIMIT_GROWTH * sol.maxiter if finishing else sol.maxiter
    soft = None
    if run.floor.grow and not finishing and run.be.pcg_floor >= PCG_REL:
        soft = SoftLimit(sol.maxiter, PRIMAL_ENOUGH * cap_abs, int(PCG_STALL_SPAN * sol.maxiter),
                         int(PCG_NEAR_SPAN * sol.maxiter))
        limit = FINISH_LIMIT_GROWTH * sol.maxiter
    return limit, soft


def _predictor_corrector(run, t: _Tests):
    """Mehrotra's predictor-corrector on the regularised normal equations (002 (5)-(8)): G_R's
    weights Theta~ = (Theta⁻¹ + R_p)⁻¹ and the preconditioner, the affine predictor
    (xi_mu = -X S e), sigma = (mu_aff / mu)^3, the combined direction (xi_mu = sigma mu e -
    X S e - dX_aff dS_aff e; with ``CORRECTOR_START``, its PCG started from the predictor's
    dy), the steps to the boundary, Gondzio's centrality correctors, and the
    regularisation's reaction to the step. None where the back end's arithmetic broke down
    (then ``run.code`` is 4 and ``run.trouble`` says why)."""
    x, lam, s, reg, n, mu_n = run.x, run.lam, run.s, run.reg, run.n, t.mu_n
    try:
        rho_k, delta_k = reg.current(mu_n)
        theta = 1.0 / (s / x + rho_k)                         # (Theta^-1 + R_p)^-1
        info = run.sol.set_weights(theta, delta_k, run.k)
        run.replaced_total += int(info.get("replaced", 0))
        floor_b, floor_c = _residual_floors(x, lam, s, t.cx, t.by, run.eps, run.units, run.adaptive)
        cap_abs = max(PCG_PRIMAL_SHARE * float(np.linalg.norm(t.rb)), PCG_PRIMAL_SHARE * floor_b)
        newton = _newton(run, t, theta, cap_abs)
        # predictor: xi_mu = -X S e
        dx_a, dy_a, ds_a, f1 = newton(-x * s)
        ap, ad = _max_step(x, dx_a), _max_step(s, ds_a)
        mu_aff = float((x + ap * dx_a) @ (s + ad * ds_a)) / n
        sigma = (mu_aff / mu_n) ** 3
        # corrector, combined direction: xi_mu = sigma mu e - X S e - dX_aff dS_aff e
        limit, soft = _corrector_limit(run, t, cap_abs)
        warm = CORRECTOR_START and run.adaptive and run.be.pcg_floor >= PCG_REL   # module notes
        dx, dy, ds, f2 = newton(sigma * mu_n - x * s - dx_a * ds_a, maxiter=limit, soft=soft,
                                start=dy_a if warm else None)             # from the predictor's dy
        ap = min(1.0, STEP_TO_BOUNDARY * _max_step(x, dx))
        ad = min(1.0, STEP_TO_BOUNDARY * _max_step(s, ds))
        count = run.correctors if f1["converged"] and f2["converged"] else 0
        (dx, dy, ds, ap, ad), extra = _centrality_correctors(newton, x, s, _Direction(dx, dy, ds, ap, ad),
                                                             sigma * mu_n, count)
        for fk in extra:
            f2 = fk if not fk["converged"] else f2
        # the proximal terms move the residuals by -alpha R_p dx and -alpha R_d dy: when they
        # would hold them back, the next iteration regularises ten times less
        held = reg.after_step(rho_k, delta_k, float(np.abs(dx).max()), float(np.abs(dy).max()) if run.m else 0.0,
                              t.nrc_n, t.nrb_n, floor_c, floor_b)
    except (np.linalg.LinAlgError, FloatingPointError, ValueError) as e:
        # the back end's arithmetic broke down (a factor with inf or NaN): the precision
        # is exhausted, never a traceback out of solve
        run.code, run.trouble = 4, f"{type(e).__name__}: {e}"
        run.report(t.entry)
        return None
    return _Step(dx, dy, ds, ap, ad, sigma, f1, f2, limit, soft, held, info, rho_k, delta_k)


def _take_step(run, t: _Tests, step: _Step) -> None:
    """The adaptive floor's reaction, k doubled after unconverged solves (within ``rank_max``),
    x + alpha_p dx (the free splits bounded), y + alpha_d dy, s + alpha_d ds, the history entry."""
    f1, f2 = step.f1, step.f2
    run.floor.after_iteration(step.rho_k, step.delta_k, f1, f2, step.held)
    if run.k < run.k_max and not (f1["converged"] and f2["converged"]):
        run.k = min(run.k_max, 2 * run.k)                         # a richer preconditioner next time
    x = run.x + step.ap * step.dx
    if run.partner is not None:
        x = _bound_free_splits(x, run.partner)
    run.x = x
    run.lam = run.lam + step.ad * step.dy
    run.s = run.s + step.ad * step.ds
    t.entry.update(alpha_pri=step.ap, alpha_dual=step.ad, sigma=step.sigma,
                   replaced_pivots=int(step.info.get("replaced", 0)),
                   pcg_iterations=(f1["iterations"], f2["iterations"]),
                   pcg_converged=bool(f1["converged"] and f2["converged"]),
                   pcg_stop=(f1["stop"], f2["stop"]),
                   pcg_residual=max(f1["residual"], f2["residual"]), regularisation=(step.rho_k, step.delta_k),
                   pcg_limit=step.limit if step.soft is None else step.soft.limit, pcg_cap=step.limit)
    run.report(t.entry)
    run.it += 1


def _result(run) -> LPResult:
    """The LPResult of the run in the problem's units: the best point where the iteration ended
    at its limit or in numerical trouble (the last point kept for resuming), the message with
    the PCG solves that stopped before their tolerance, the PCG counts and the back end's timers."""
    elapsed = time.perf_counter() - run.t0
    code, it, sol, k, m, bs, cs, problem = run.code, run.it, run.sol, run.k, run.m, run.bs, run.cs, run.problem
    point_k, x, lam, s = it, run.x, run.lam, run.s
    last = (x * bs, lam * cs, s * cs)                          # where the iteration stopped
    if code in (1, 4):
        _, point_k, x, lam, s = run.best
    message = result_message(code, it, run.eps, point_k, run.trouble, f", {sol.iterations} PCG iterations",
                              certificate=run.why.get("certificate"))
    if run.stalled_ray:
        message += (f" (The iteration had stalled: the ray test decided at a ratio of {STALL_RAY_RATIO:g} "
                    f"between the certificate's bound and the iterates' norm, not {run.ray_ratio:g}.)")
    elif code == 4 and run.why.get("certificate") is None and run.first is not None:
        message += _ray_hint(run.history)
    if sol.unconverged:
        message += " " + sol.unconverged_note()
        if code != 0 and k < m and (sol.stops["limit"] or sol.stops["stall"]):
            message += (f" The preconditioner had k = {k} of {m} columns: a larger rank, or rank_max "
                        "(k doubles after such an iteration), may let PCG converge.")
    x, lam, s = x * bs, lam * cs, s * cs                       # back to the problem's units
    status, message = limit_status(code, it, run.max_iter, message)
    be, floor, reg = run.be, run.floor, run.reg
    res = LPResult(status=status, status_code=code, message=message, x=problem.to_original(x),
                   x_std=x, y=lam, s=s, objective=problem.original_objective(x), iterations=it,
                   history=run.history, readbacks_per_iteration=be.readbacks / max(it, 1),
                   replaced_pivots=run.replaced_total, backend=be.name, elapsed=elapsed,
                   readbacks=be.readbacks, point_iteration=point_k, standard_rows=m,
                   normal_rows=m if run.bounds is None else run.bounds.m)
    res.method = "matrix-free"
    res.last_point = last
    if code in (2, 3):
        res.stop_point, res.evidence = last, run.why.get("kind", "")
    res.regularisation_state = (reg.rho, reg.delta)
    res.adaptive_state = (reg.reg_min, sol.maxiter, floor.last_ok if floor.last_ok is not None else 0.0,
                          1.0 if floor.widened else 0.0)
    res.pcg_iterations = sol.iterations
    res.pcg_unconverged = sol.unconverged
    res.pcg_stops = {reason: len(its) for reason, its in sol.stops.items()}
    res.rank = k
    res.timers = dict(be.timers, pcg=sol.pcg_seconds, outer_products=sol.outer_seconds, total=elapsed)
    res.counts = dict(be.counts, outer_products=sol.outer_products)
    return res


class _Floor:
    """The adaptive rule (``adaptive=True``, beyond 002; module notes): after an iteration in
    which a PCG solve stopped at its iteration limit or at a breakdown (G_R numerically singular
    in the back end's precision: float32 on the GPU), the regularisation floor ``reg.reg_min``
    becomes the rho = delta of the last iteration whose solves all converged (rho stops following
    mu down: G_R's condition stays where PCG met its tolerance), and the PCG limit doubles, up to
    PCG_LIMIT_GROWTH times its start (the default limit only: a ``pcg_maxiter`` given is kept).
    After a stall's restart (which goes on at the floor 1e-12) the floor becomes at least
    FLOOR_RISE times the iteration's rho = delta (the last converged value alone can stay at the
    restart's floor while PCG stops at its limit). Problems whose PCG always converges never
    meet it."""

    def __init__(self, reg, sol, adaptive, grow=True):
        self.reg, self.sol, self.adaptive = reg, sol, bool(adaptive)
        self.cap = PCG_LIMIT_GROWTH * sol.maxiter if grow else sol.maxiter
        self.grow = self.adaptive and grow               # the limit is the rule's to change
        self.last_ok = None
        self.raises = 0
        self.lowered = 0
        self.restarted = False                           # after a restart: at least a ten-fold rise
        self.floor0 = reg.reg_min                        # the floor given (or the default)
        self.widened = False                             # PCG's solution vector in the wider format

    def resume(self, start):
        """Take the floor, PCG limit and last converged rho a resumed result (or checkpoint) had."""
        state = getattr(start, "adaptive_state", None) if isinstance(start, LPResult) else (
            start.get("adaptive_state") if isinstance(start, Mapping) else None)
        if not self.adaptive or state is None:
            return
        state = np.asarray(state, dtype=np.float64).ravel()
        floor_then, limit, last_ok = (float(v) for v in state[:3])
        self.reg.reg_min = max(self.reg.reg_min, min(floor_then, self.reg.reg_max))
        self.sol.maxiter = max(self.sol.maxiter, min(int(limit), self.cap))
        self.last_ok = last_ok if last_ok > 0 else self.last_ok
        if state.size > 3 and state[3] > 0:
            self.widen()

    def widen(self):
        """PCG's solution vector in the back end's wider format from now on (module notes)."""
        self.widened = self.sol.be.widen_solution() or self.widened

    def after_iteration(self, rho_k, delta_k, f1, f2, held=(False, False)):
        if not self.adaptive:
            return
        if f1["converged"] and f2["converged"]:
            self.last_ok = max(rho_k, delta_k)
            reg = self.reg
            if any(held) and reg.reg_min > self.floor0:
                # the raised floor now holds a residual back while PCG meets its tolerance:
                # it comes down ten-fold (the term that held is cut with it)
                reg.reg_min = max(self.floor0, reg.reg_min / FLOOR_RISE)
                if held[0]:
                    reg.rho = max(reg.reg_min, rho_k / FLOOR_RISE)
                if held[1]:
                    reg.delta = max(reg.reg_min, delta_k / FLOOR_RISE)
                self.lowered += 1
            return
        if not {"limit", "stall", "breakdown"} & {f1["stop"], f2["stop"]}:   # PCG did not converge
            return
        if not self.widened:
            self.widen()
        reg = self.reg
        rise = FLOOR_RISE * max(rho_k, delta_k)
        new = min(reg.reg_max, max(self.last_ok, rise) if self.restarted and self.last_ok is not None else
                  self.last_ok if self.last_ok is not None else rise)
        if new > reg.reg_min:
            reg.reg_min = new
            self.raises += 1
        self.sol.maxiter = min(self.cap, 2 * self.sol.maxiter)


#: Gondzio's multiple centrality correctors (``adaptive``): at most this many an iteration
CORRECTORS = 2
#: Gondzio's multiple centrality correctors: the trial step's increase, the products' band
#: [BETA_MIN, BETA_MAX] sigma mu, and the least gain in the step that keeps a corrector
CORRECTOR_STEP_GAIN, BETA_MIN, BETA_MAX, CORRECTOR_ACCEPT = 0.3, 0.1, 10.0, 0.1


class _Direction(NamedTuple):
    """A search direction (dx, dy, ds) and its primal and dual step lengths (``ap``, ``ad``)."""
    dx: np.ndarray
    dy: np.ndarray
    ds: np.ndarray
    ap: float
    ad: float


def _centrality_correctors(newton, x, s, direction: _Direction, target, count) -> tuple:
    """Gondzio's multiple centrality correctors (Gondzio 1996; the correctors of his matrix-free
    IPM, [7] of 002): while the combined direction's step is short, aim at the point of a
    longer trial step alpha~ = min(1, alpha + 0.3), pull its complementarity products that fall
    outside [0.1, 10] sigma mu back to that band (xi_mu = the projection minus the products,
    residuals zero), and keep the corrected direction when its step grows by at least 0.1 of
    the aimed increase; at most ``count`` correctors (one PCG solve each). Answers the
    (corrected) :class:`_Direction` and the correctors' PCG facts."""
    dx, dy, ds, ap, ad = direction
    extra = []
    for _ in range(count):
        a = min(ap, ad)
        if a >= 0.9:
            break
        tp, td = min(1.0, ap + CORRECTOR_STEP_GAIN), min(1.0, ad + CORRECTOR_STEP_GAIN)
        v = (x + tp * dx) * (s + td * ds)
        t = np.clip(v, BETA_MIN * target, BETA_MAX * target) - v
        t = np.maximum(t, -BETA_MAX * target)
        cx, cy, cs, facts = newton(t, residuals=False)
        extra.append(facts)
        nx, ny, ns = dx + cx, dy + cy, ds + cs
        np_ = min(1.0, STEP_TO_BOUNDARY * _max_step(x, nx))
        nd = min(1.0, STEP_TO_BOUNDARY * _max_step(s, ns))
        if min(np_, nd) < a + CORRECTOR_ACCEPT * CORRECTOR_STEP_GAIN * min(1.0, 1.0 - a + 1e-12) or not facts["converged"]:
            if min(np_, nd) > a and facts["converged"]:
                dx, dy, ds, ap, ad = nx, ny, ns, np_, nd
            break
        dx, dy, ds, ap, ad = nx, ny, ns, np_, nd
    return _Direction(dx, dy, ds, ap, ad), extra


def _bound_free_splits(x, partner, bound=FREE_SPLIT_BOUND):
    """The free-split safeguard of the Mehrotra solver (its ``free_safeguard``): both halves of
    every split free variable v = x+ - x- lowered by the same amount so that
    min(x+, x-) <= bound (1 + |v|); v and A x do not change (the halves' columns are opposite)."""
    idx = np.flatnonzero(partner >= 0)
    lo = np.minimum(x[idx], x[partner[idx]])
    shift = np.maximum(lo - bound * (1.0 + np.abs(x[idx] - x[partner[idx]])), 0.0)
    if not shift.any():
        return x
    x = x.copy()
    x[idx] -= shift                                   # each pair appears twice: both halves lowered
    return x


def _primal_leads(pres, dres, gap, eps) -> bool:
    """Whether the relative primal residual is above eps and the largest of the three tests
    (the primal finishing rule's condition, module notes)."""
    return pres > max(eps, dres, gap)


@dataclass(frozen=True)
class _Units:
    """The problem's scales: ``nb`` = ||b||_inf and ``nc`` = ||c||_inf, and the iteration's units
    ``bs`` = max(1, nb), ``cs`` = max(1, nc) (it works on b / bs and c / cs)."""
    nb: float
    nc: float
    bs: float
    cs: float


def _residual_floors(x, lam, s, cx, by, eps, units: _Units, adaptive=True) -> tuple:
    """The residuals (in the iteration's units) below which the PCG target (primal) and the
    proximal terms' leak test stop asking for more: eps (1 + ||b||_inf) and eps (1 + ||c||_inf),
    as the tests (6.1)-(6.2) -- unless the gap (6.3) is held by the residuals. c^T x - b^T y =
    x^T s + x^T r_c - y^T r_b: when the residual part exceeds half of eps (1 + |c^T x|) (large
    multipliers: |y^T r_b| can be 1e3 times ||r_b||_inf), the floors become
    eps (1 + |c^T x|) / ||y||_2 and eps (1 + |c^T x|) / ||x||_2, so that the residuals fall until
    the gap can close. ``cx``, ``by`` in the problem's units; ``units``: :class:`_Units`."""
    nb, nc, bs, cs = units.nb, units.nc, units.bs, units.cs
    floor_b, floor_c = eps * (1.0 + nb) / bs, eps * (1.0 + nc) / cs
    if not adaptive:
        return floor_b, floor_c
    scale = bs * cs
    held = abs(cx - by - float(x @ s) * scale)
    want = eps * (1.0 + abs(cx))
    if held > 0.5 * want:
        ny, nx = float(np.linalg.norm(lam)), float(np.linalg.norm(x))
        if ny > 0:
            floor_b = min(floor_b, want / (scale * ny))
        if nx > 0:
            floor_c = min(floor_c, want / (scale * nx))
    return floor_b, floor_c


def _ray_hint(history, ratio=STALL_RAY_RATIO) -> str:
    """For numerical trouble without a certificate: a sentence when an objective ran away -- the
    primal objective fell below -``ratio`` times the largest magnitude of the others (the start's
    two objectives and the last dual one), or the dual objective rose so above them: the LP may
    be unbounded (infeasible) although no ray test held. (A feasible, bounded LP's objectives
    meet near its optimum.)"""
    first, last = history[0], history[-1]
    p0, p1 = first["primal_objective"], last["primal_objective"]
    d0, d1 = first["dual_objective"], last["dual_objective"]
    if not all(math.isfinite(v) for v in (p0, p1, d0, d1)):
        return ""
    if p1 < -ratio * max(1.0, abs(p0), abs(d0), abs(d1)):
        return (f" The primal objective ran from {p0:.3g} to {p1:.3g} (the dual objective: {d1:.3g}) while the "
                f"dual residual (6.2) stayed at {last['dual_residual']:.2e}: the LP may be unbounded (no ray test "
                "held; Mehrotra's method may decide it).")
    if d1 > ratio * max(1.0, abs(d0), abs(p0), abs(p1)):
        return (f" The dual objective ran from {d0:.3g} to {d1:.3g} (the primal objective: {p1:.3g}) while the "
                f"primal residual (6.1) stayed at {last['primal_residual']:.2e}: the LP may be infeasible (no ray "
                "test held; Mehrotra's method may decide it).")
    return ""
