"""Algorithm 3 of paper 000: Mehrotra's predictor-corrector interior-point method.

Written once against the operations of :class:`~gpgpu.lp.backend.Backend`, so the same code
runs on numpy (float32 / float64) and on the GPU. References: paper 000 section 4 (equations
(4.1)-(4.16)) and 6.2.2 ((6.1)-(6.3)); [Meh92] S. Mehrotra, "On the implementation of a
primal-dual interior point method", SIAM J. Optim. 2 (1992); [Wri97] S. J. Wright,
"Primal-Dual Interior-Point Methods", SIAM 1997 (ch. 10 for the algorithm, its starting point
and step lengths; ch. 9 and 11 for infeasibility and practical details).

Statuses (codes as ``scipy.optimize.linprog``) and the stopping tests: :mod:`gpgpu.lp.decisions`,
which both methods share.

Infeasibility detection (a heuristic, in the spirit of [Wri97] ch. 9 and of the blow-up tests
of LIPSOL/PCx, but using only numbers Algorithm 3 reads back anyway): an infeasible primal
makes the dual iterates diverge along a Farkas ray, an unbounded primal makes x diverge along
a ray of {x >= 0, A x = 0, c^T x < 0}. Since A^T lambda = c - r_c - s <= c - r_c, the vector
y = lambda / (b^T lambda) has b^T y = 1 and A^T y <= theta_p e with
theta_p = (||c||_inf + ||r_c||_inf) / (b^T lambda), so every feasible x has
||x||_1 >= 1 / theta_p. Symmetrically u = x / (-c^T x) >= 0 has c^T u = -1 and
||A u||_inf <= theta_d = (||b||_inf + ||r_b||_inf) / (-c^T x), so every dual-feasible lambda has
||lambda||_1 >= 1 / theta_d. We declare the primal infeasible when 1/theta_p exceeds
``ray_ratio`` times (1 + e^T x) while (6.1) is not met, and unbounded when 1/theta_d exceeds
``ray_ratio`` times (1 + m ||lambda||_inf) while (6.2) is not met (for a feasible, bounded
problem both quotients stay of the order of the iterates' own norms, since b^T lambda ~ c^T x
<= ||c||_inf ||x||_1). ``e^T x`` and ``||lambda||_inf`` are read back only once the cheap
necessary conditions 1/theta > ray_ratio hold.

Beyond paper 000 in every preset, "paper" included (docs/guide/lp.md lists them with the
paper preset's options): the floor of the starting point's shifts (:func:`starting_point`),
the stall stop and the ray tests (numerical trouble, infeasible, unbounded; 000 stops at
(6.1)-(6.3) or the iteration limit), the guarded square root of the Cholesky (a pivot not above
its tolerance replaced by a huge value, [Wri97] ch. 11) and the cap ETA_MAX of the step
fractions. The measurements behind the defaults: docs/lp_defaults.md and docs/results/lp.md.

:func:`mehrotra` is the loop of Algorithm 3, read top to bottom: the residuals and (6.1)-(6.3)
(:func:`_residuals`), the stops (:func:`_termination`), the weights and their factor
(:func:`_weights`), the predictor (:func:`_predictor`), the corrector and the step lengths
(:func:`_corrector`), the step (:func:`_update`) and the result (:func:`_result`), over one state
record (:class:`_Iterate`).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import NamedTuple, Optional

import numpy as np

from .backend import REFINE_RTOL, PrecisionExhausted
from .decisions import (MESSAGES, STATUS, STATUS_CODES, Reads, Settings, diverged, limit_status,  # noqa: F401
                        result_message, stop_code)
from .mps import _FREE
from .regularisation import MEHROTRA_REG_MAX, MEHROTRA_REG_MIN, ProximalRegularisation

__all__ = ["mehrotra", "LPResult", "STATUS", "STATUS_CODES", "MESSAGES"]

GAMMA_F = 0.01          # Mehrotra's gamma_f ([Meh92]; [Wri97] p. 205)
ETA_MAX = 1.0 - 1e-6    # f_pri, f_dual capped here: the iterate stays strictly positive
                        # even when mu+ = 0 (then f = 1 would land on the boundary)


@dataclass
class LPResult:
    """The answer of :func:`gpgpu.lp.solve` (and of :func:`~gpgpu.lp.mehrotra.mehrotra`).

    What an interior point method answered for an LP: the status (codes as
    ``scipy.optimize.linprog``; :data:`STATUS`, :data:`MESSAGES`), the point, the objective and the
    iteration's history, for Algorithm 3 of paper 000 (Mehrotra's method) or paper 002's matrix-free
    method, with what the run cost (read-backs, GPU passes) and how its status was checked
    (:mod:`gpgpu.lp.certificate`). ``success`` is ``status_code == 0``; :func:`gpgpu.lp.solve` adds
    ``preset``, ``options`` and ``warnings``.

    Parameters
    ----------
    status : str
        One of :data:`STATUS`'s values: "optimal", "infeasible", "unbounded", ...
    status_code : int
        scipy's code: 0 optimal, 1 iteration or time limit, 2 infeasible, 3 unbounded, 4 numerical trouble.
    message : str
        What happened, in words.
    x : ndarray or None
        The source problem's variables (``Problem.to_original``); None without a point.
    x_std : ndarray or None
        The standard-form primal point.
    y : ndarray or None
        The dual multipliers lambda.
    s : ndarray or None
        The dual slacks.
    objective : float
        The source objective at ``x`` (its own sense, constant included); NaN without a point.
    iterations : int
        Completed iterations (directions computed and taken).
    history : list of dict
        Per iteration: iteration, primal_residual, dual_residual, gap, mu, alpha_pri, alpha_dual, sigma, time, ...
    readbacks_per_iteration : float
        Read-backs an iteration.
    replaced_pivots : int
        Pivots replaced in all factorizations (the guarded square root).
    backend : str
        The back end's name.
    elapsed : float
        Seconds, the starting point included.
    readbacks : int
        All read-backs of the run.
    point_iteration : int
        The iteration whose point is returned (the best met for iteration_limit and numerical_trouble).
    presolve : dict or None
        With ``presolve=True``: HiGHS's presolve status, sizes before and after, and seconds.
    normal_rows : int
        The order of the normal matrix formed and factored (the main rows with ``bounds="implicit"``).
    standard_rows : int
        The standard form's rows (the order paper 000's method factors).
    passes : int
        The GPU passes the whole solve drew (0 on numpy).
    pass_seconds : float
        The host time spent issuing them (``host_us_per_pass`` in microseconds a pass).
    stop_point : tuple or None
        (x_std, y, s) where the iteration stopped, for infeasible and unbounded: their ray's point.
    evidence : str
        How infeasible or unbounded was found: "farkas", "primal ray", "dual ray", "collapse" or "".
    check : Check or Ray or None
        The status checked in float64 on the problem as given (:mod:`gpgpu.lp.certificate`).
    resumed_from : int or None
        Where the check asked for a tighter eps and the iteration went on from its last point
        (:class:`Resume`): the iteration it went on from; None otherwise.
    method : str
        The method that answered: "mehrotra" (Algorithm 3 of paper 000) or "matrix-free" (paper
        002's), also where the answer was decided before any iteration (an LP that the reductions
        of :func:`~gpgpu.lp.mps.standardize` or the presolve solve whole).
    preset, options, warnings : str, dict, list
        Set by :func:`gpgpu.lp.solve`: the preset and the options the solve ran with, and the
        problem's warnings (an LP relaxation of integer columns); None, None and [] from
        :func:`mehrotra` called directly.
    marginals : dict or None
        Set by :func:`gpgpu.lp.solve` for an optimum: the objective's derivatives with respect
        to the source LP's row bounds (``"rows"``, in its row order) and its variables' lower
        and upper bounds (``"lower"``, ``"upper"``), from the duals
        (:meth:`~gpgpu.lp.Problem.marginals`); None otherwise.
    pcg_iterations, pcg_unconverged, pcg_stops, rank : int, int, dict, int
        The matrix-free iteration's PCG (:mod:`gpgpu.lp.matrix_free`): PCG iterations in all,
        the solves that stopped before their tolerance, how many stopped for each reason, and
        the preconditioner's k at the end. None where that iteration did not run (Mehrotra's
        method, or an LP decided before any iteration); so are the four below.
    last_point, regularisation_state, adaptive_state : tuple
        The matrix-free iteration's state for going on (``start=``,
        :func:`gpgpu.lp.matrix_free.checkpoint`): the standard-form (x_std, y, s) where it
        stopped, (rho, delta), and the adaptive rule's floor, PCG limit, last converged rho and
        whether PCG's solution vector was widened.
    timers, counts : dict
        The matrix-free back end's seconds and counts by part (002's Table 2: products, the
        preconditioner's builds and applications, PCG, the outer products, the total).

    Examples
    --------
    >>> from gpgpu import lp
    >>> r = lp.solve("sc50b")
    >>> r.status, r.status_code, r.success, round(r.objective, 3)
    ('optimal', 0, True, -70.0)
    >>> sorted(r.history[0])[:4]
    ['alpha_dual', 'alpha_pri', 'dual_objective', 'dual_residual']
    """

    status: str
    status_code: int
    message: str
    x: Optional[np.ndarray]
    x_std: Optional[np.ndarray]
    y: Optional[np.ndarray]
    s: Optional[np.ndarray]
    objective: float
    iterations: int
    history: list = field(default_factory=list)
    readbacks_per_iteration: float = 0.0
    replaced_pivots: int = 0
    backend: str = ""
    elapsed: float = 0.0
    readbacks: int = 0
    point_iteration: int = 0
    presolve: Optional[dict] = None
    normal_rows: int = 0
    standard_rows: int = 0
    passes: int = 0
    pass_seconds: float = 0.0
    stop_point: Optional[tuple] = None
    evidence: str = ""
    check: object = None
    resumed_from: Optional[int] = None
    method: str = "mehrotra"
    preset: Optional[str] = None
    options: Optional[dict] = None
    warnings: list = field(default_factory=list)
    marginals: Optional[dict] = None
    pcg_iterations: Optional[int] = None
    pcg_unconverged: Optional[int] = None
    pcg_stops: Optional[dict] = None
    rank: Optional[int] = None
    last_point: Optional[tuple] = None
    regularisation_state: Optional[tuple] = None
    adaptive_state: Optional[tuple] = None
    timers: Optional[dict] = None
    counts: Optional[dict] = None

    @property
    def success(self) -> bool:
        return self.status_code == 0

    @property
    def host_us_per_pass(self) -> float:
        """Host microseconds spent issuing each GPU pass of the solve (0 without passes)."""
        return self.pass_seconds / self.passes * 1e6 if self.passes else 0.0

    def __repr__(self):
        return (f"LPResult(status={self.status!r}, objective={self.objective!r}, "
                f"iterations={self.iterations}, method={self.method!r}, backend={self.backend!r})")


def starting_point(be, b, c, ones_n, floor_rel=1e-3):
    """Mehrotra's starting point ([Meh92]; [Wri97] ch. 10, p. 210).

    x~ = A^T (A A^T)^{-1} b,  lambda~ = (A A^T)^{-1} A c,  s~ = c - A^T lambda~ (least-squares
    points), shifted to be non-negative by delta_x = max(-1.5 min x~, 0), delta_s likewise,
    then by delta^_x = 0.5 x^T s / e^T s and delta^_s = 0.5 x^T s / e^T x so that they are
    positive and well centred; each of the last shifts is at least
    ``floor_rel * (1 + ||x^||_inf)`` (``s^`` likewise), a safeguard of ours for the degenerate
    case x^T s^ ~ 0. Answers (x0, lambda0, s0, replaced pivots).
    """
    replaced = be.factor_normal(ones_n)                      # A A^T (d = e)
    w = be.solve_normal(b)
    x = be.rmatvec(w)                                        # x~ = A^T (A A^T)^{-1} b
    lam = be.solve_normal(be.matvec(c))                      # lambda~ = (A A^T)^{-1} A c
    s = be.axpy(-1.0, be.rmatvec(lam), c)                    # s~ = c - A^T lambda~
    dx = max(-1.5 * be.vmin(x), 0.0)
    ds = max(-1.5 * be.vmin(s), 0.0)
    x = be.add_scalar(x, dx)                                 # x^ = x~ + delta_x e
    s = be.add_scalar(s, ds)                                 # s^ = s~ + delta_s e
    xs = be.dot(x, s)
    if not xs > 0.0:                                         # e.g. b = 0 or c = 0
        x = be.add_scalar(x, 1.0)
        s = be.add_scalar(s, 1.0)
        xs = be.dot(x, s)
    dxh = 0.5 * xs / be.dot(s, ones_n)                       # delta^_x = x^T s / (2 e^T s)
    dsh = 0.5 * xs / be.dot(x, ones_n)                       # delta^_s = x^T s / (2 e^T x)
    # Safeguard (ours): when c (or b) lies in the range of A^T (of A), s^ (x^) is ~0 and so
    # is x^T s; the shifts would leave a point with mu ~ 0 that cannot move. Keep every
    # shift at least floor_rel * (1 + ||.||_inf); the NETLIB starts are not affected.
    dxh = max(dxh, floor_rel * (1.0 + be.norm_inf(x)))
    dsh = max(dsh, floor_rel * (1.0 + be.norm_inf(s)))
    x = be.add_scalar(x, dxh)
    s = be.add_scalar(s, dsh)
    return x, lam, s, replaced


def _newton(be, d, rb, rc, q, correct_primal=False, rho=0.0):
    """Solve the normal equations (4.12)-(4.14) for one right-hand side (with
    ``correct_primal``, then put dx back on A dx = r_b: :func:`_correct_primal`).

    With D^2 = S^{-1} X (``d``), ``q = S^{-1} r_xs``:
        A D^2 A^T dlam = r_b + A (S^{-1} X r_c + S^{-1} r_xs)       (4.12)
        ds = r_c - A^T dlam                                          (4.13)
        dx = -S^{-1} (r_xs + X ds) = -q - D^2 ds                     (4.14)
    ``rb`` / ``rc`` may be None for zero residuals (the corrector of Algorithm 3).

    Regularised (``regularize`` of :func:`mehrotra`; :mod:`.regularisation`): the system is
    A dx + delta dlam = r_b, -rho dx + A^T dlam + ds = r_c, S dx + X ds = -r_xs. Derivation:
    the third gives dx = -S^{-1} r_xs - D^2 ds; with ds = r_c + rho dx - A^T dlam from the
    second, (I + rho D^2) dx = -S^{-1} r_xs - D^2 (r_c - A^T dlam), i.e. with
    S~ = S + rho X, D~^2 = S~^{-1} X and q~ = S~^{-1} r_xs,
        dx = -q~ - D~^2 (r_c - A^T dlam),
    and the first becomes (A D~^2 A^T + delta I) dlam = r_b + A (D~^2 r_c + q~). So the caller
    passes ``d`` = D~^2 and ``q`` = q~ (the factor holds the shift delta), (4.12)-(4.14) run
    unchanged, and ds = (r_c - A^T dlam) + rho dx.

    The refined solve of (4.12) is asked for :data:`NEWTON_RTOL` when the primal correction
    follows, else ``REFINE_RTOL`` (what that tolerance leaves, and why the correction makes up
    for it, at :data:`NEWTON_RTOL`).
    """
    t = q if rc is None else be.mul_add(d, rc, q)           # S^{-1} X r_c + S^{-1} r_xs
    rhs = be.matvec(t) if rb is None else be.matvec_add(t, rb)               # right-hand side of (4.12)
    dlam = be.solve_normal(rhs, NEWTON_RTOL if correct_primal else REFINE_RTOL)   # (4.12)
    ds = be.scale(-1.0, be.rmatvec(dlam)) if rc is None else be.rmatvec_add(dlam, rc, -1.0)   # (4.13)
    dx = be.mul_add(d, ds, q, -1.0, -1.0)                    # (4.14)
    if correct_primal:
        dx, dlam, ds = _correct_primal(be, d, rb, dx, dlam, ds, carry_dual=CORRECT_DUAL and not rho)
    if rho:
        ds_reg = be.axpy(rho, dx, ds)                        # ds = (r_c - A^T dlam) + rho dx
        be.free(ds)
        ds = ds_reg
    return dx, dlam, ds


#: Beyond the papers: the refined solves of the Newton system (4.12) and of the primal correction
#: (:func:`_correct_primal`) stop at these relative residuals (``rtol`` of
#: :func:`gpgpu.lp.backend.refine_solve`; they matter where the back end refines a float32 or
#: float-float factor's solves in float64, ``refine=True``). With ds and dx from dlam by
#: (4.13)-(4.14), A dx = r_b + (M dlam - rhs) exactly (A dx + delta dlam, regularised): the
#: solve's residual is the direction's only primal error, and ds, dx satisfy (4.13)-(4.14)
#: whatever dlam is. The correction solves M w = -(M dlam - rhs) and leaves its own residual, at
#: most CORRECTION_RTOL times the first: 1e-14 ||rhs|| in all, below the 1e-13 ||rhs|| that one
#: solve to ``REFINE_RTOL`` leaves without a correction. Each order of magnitude costs about one
#: solve with the factor, a read-back on the GPU (measured: docs/results/lp.md, "Fewer solves an
#: iteration"). Without the correction, (4.12) is solved to ``REFINE_RTOL``.
NEWTON_RTOL = 1e-8
#: ... and the correction's solve (above).
CORRECTION_RTOL = 1e-6

#: Beyond the papers: the primal correction's solve also refines dlam, and ds follows it by
#: (4.13), so the direction solves (4.12)-(4.14) to the correction's tolerance and the
#: complementarity row stays exact (:func:`_correct_primal`). False: dx alone moves, projected
#: onto A dx = r_b in the metric D^-2.
CORRECT_DUAL = True

#: the free-split safeguard keeps min(x+, x-) <= FREE_SPLIT_BOUND (1 + |x+ - x-|) ...
FREE_SPLIT_BOUND = 1.0
#: ... but lowers neither half below FREE_SPLIT_CENTRING mu / s_j, a fraction of its centred value
#: (lowered below it, a half's x_j s_j falls far short of mu and the dual step is blocked there;
#: the value is the one measured best, CHANGELOG.md)
FREE_SPLIT_CENTRING = 0.01
#: A point is near the central path (a raise of the factor's precision may go on from it) while
#: each residual (6.1), (6.2), relative to its start, is at most this many times mu relative to
#: its start: ||r_k|| / ||r_0|| <= NEIGHBOURHOOD mu_k / mu_0, the infeasibility condition of
#: the wide neighbourhood of infeasible interior-point methods ([Wri97] ch. 6).
NEIGHBOURHOOD = 10.0
#: ... and while the residuals keep pace with mu: the pace of an iterate is the larger of
#: (||r_k|| / ||r_0||) / (mu_k / mu_0) over the residuals (6.1), (6.2) not yet below eps, and
#: an iterate whose pace exceeds PACE_SLIP times the smallest pace met (since the start or
#: the last raise) does not become the restart point. A float32 factor that replaces
#: meaningful pivots lets mu fall while a residual holds: cycle's primal residual stalls at
#: 3.6e-3 from iteration 12 while mu falls a hundred-fold, its pace climbing from 0.25 to 4.7,
#: still inside the neighbourhood; a restart from there ends in numerical trouble, from
#: iteration 11 it is optimal (docs/results/lp.md). A pace that slips early and comes back is
#: no such stall: 80bau3b's dual residual lags mu at iterations 3 and 4 on an H100 (pace 3.0
#: against a floor of 0.98), then the pace falls to 0.024 at iteration 27; its primal residual
#: holds at 1.7e-6 from 28, and the restart point is 27.
PACE_SLIP = 2.0
#: Beyond the papers: a slip of the pace (above: an iterate beyond PACE_SLIP times the floor
#: after one within it) after a step whose float32 factor
#: replaced more pivots than the fewest a step's factor replaced before it (dependent rows
#: replace the same ones in every factor), measured against a floor above zero (a pace is 0
#: while both residuals are below eps), raises the factor's precision at once, where the back end has a more precise
#: one (float-float on the GPU with ``factor_precision="auto"``), and the iteration goes on from
#: the last point that kept pace, instead of waiting for the stall test (2 x stall_window
#: iterations at least). The rule fires once a solve, before any raise. On an H100 degen3's float32 factor replaced 98 pivots at iteration 7,
#: the primal residual rose thirteen-fold at iteration 8, and the stall test raised at
#: iteration 16 and went back to iteration 7 (docs/results/lp.md, "The pace's slip").
RAISE_AT_SLIP = True
#: Beyond the papers: a factor that replaced more than REPLACED_JUMP x (normal rows) pivots above
#: the fewest a step's factor replaced before it raises the factor's precision before its step,
#: where the back end has a more precise one (float32 to float-float on the GPU with
#: ``factor_precision="auto"``), and the same iteration factors again and goes on from the same
#: point, if that point keeps pace with mu (PACE_SLIP): the step that RAISE_AT_SLIP would take
#: and then undo (two iterations) is not taken. Pivots that dependent rows replace in every
#: factor count in the fewest; a few more (80bau3b's float32 factors replace 4 to 8 of 1645 from
#: iteration 7 on, and its iteration keeps pace until 28) stay below the jump. None: no such
#: raise. The rule fires once a solve, before any other raise.
REPLACED_JUMP = 0.01
#: Beyond the papers: a step whose lengths alpha_pri and alpha_dual are both below this in size
#: does not move the iterate, and the factor that gave its direction is spent. Where the back end has a
#: more precise factor (float32 to float-float on the GPU with ``factor_precision="auto"``) the
#: iteration goes on with it at once, from the best point near the central path, instead of
#: waiting for the stall test (2 x stall_window iterations at least): degen3's float32 step at
#: iteration 8 was 1.7e-10 and 1.7e-8, the stall test raised at iteration 16 and went back to
#: iteration 8 (docs/results/lp.md, "A step that does not move").
STEP_FLOOR = 1e-6


def _split_partners(problem):
    """For each standard-form column, the index of the other half of its free-variable split
    (-1 when it is not one), or None when the problem has no split (or no general form)."""
    g = problem._general
    if g is None:
        return None
    free = np.flatnonzero(g["kind"] == _FREE)
    if free.size == 0:
        return None
    partner = -np.ones(problem.n, dtype=np.int64)
    pos, neg = g["pos"][free], g["neg"][free]
    partner[pos], partner[neg] = neg, pos
    return partner


def _correct_primal(be, d, rb, dx, dlam, ds, carry_dual=False):
    """dx + D^2 A^T (A D^2 A^T)^-1 (r_b - A dx): the direction moved, in the metric D^-2, onto
    A dx = r_b (``rb`` None: r_b = 0, the corrector's); the ``correct_primal`` option of
    :func:`mehrotra`. Its solve stops at :data:`CORRECTION_RTOL`.

    With ``carry_dual`` (:data:`CORRECT_DUAL`, unregularised) the correction's w is a
    refinement step of (4.12) carried through (4.13)-(4.14): dlam + w, ds - A^T w, and dx + D^2
    A^T w as above, so that S dx + X ds = -r_xs stays exact (S D^2 A^T w = X A^T w). Without
    it dlam and ds are those of the first solve, and the complementarity row takes the error
    that the correction removes from the primal one: X A^T w. Answers (dx, dlam, ds); the
    inputs it replaces are freed."""
    if rb is None:
        adx = be.matvec(dx)
        r = be.scale(-1.0, adx)                                               # r_b - A dx, r_b = 0
        be.free(adx)
    else:
        r = be.matvec_add(dx, rb, -1.0)                                       # r_b - A dx
    w = be.solve_normal(r, CORRECTION_RTOL)
    atw = be.rmatvec(w)
    out = be.mul_add(d, atw, dx)
    freed = [r, w, atw, dx]
    if carry_dual:
        freed += [dlam, ds]
        dlam, ds = be.axpy(1.0, w, dlam), be.axpy(-1.0, atw, ds)
    for v in freed:
        be.free(v)
    return out, dlam, ds


class _MaxSteps(NamedTuple):
    """The largest step lengths (4.15)-(4.16) and their blocking indexes (-1: none; see
    ``Backend.max_step``)."""
    a_pri: float
    i_pri: int
    a_dual: float
    i_dual: int


def _mehrotra_step(be, x, dx, s, ds, largest: _MaxSteps, n, gamma_f=GAMMA_F):
    """Mehrotra's step-length heuristic ([Meh92] sec. 6; [Wri97] p. 205).

    With mu+ = (x + a_pri dx)^T (s + a_dual ds) / n and i the primal blocking index of (4.15),
        f_pri = (gamma_f mu+ / (s_i + a_dual ds_i) - x_i) / (a_pri dx_i),
        alpha_pri = max(1 - gamma_f, f_pri) a_pri,
    and symmetrically for the dual with the blocking index of (4.16); f is capped at
    ``ETA_MAX`` < 1 so that x, s stay strictly positive (when mu+ = 0, f = 1 would put the
    blocking component on zero). Without a blocking index (a_max = 1) the full step is taken.
    ``largest`` holds a_pri, a_dual and the blocking indexes.
    """
    a_pri, i_pri, a_dual, i_dual = largest
    mu_plus = be.stepped_dot(x, dx, a_pri, s, ds, a_dual) / n
    idx = [i for i in (i_pri, i_dual) if i >= 0]
    if not idx:
        return 1.0, 1.0
    xv, dxv, sv, dsv = be.entries_many((x, dx, s, ds), idx)
    alpha_pri, alpha_dual = 1.0, 1.0
    k = 0
    if i_pri >= 0:
        den = sv[k] + a_dual * dsv[k]
        f = (gamma_f * mu_plus / den - xv[k]) / (a_pri * dxv[k]) if den > 0 and a_pri > 0 \
            else 1.0 - gamma_f
        alpha_pri = max(1.0 - gamma_f, min(f, ETA_MAX)) * a_pri
        k += 1
    if i_dual >= 0:
        den = xv[k] + a_pri * dxv[k]
        f = (gamma_f * mu_plus / den - sv[k]) / (a_dual * dsv[k]) if den > 0 and a_dual > 0 \
            else 1.0 - gamma_f
        alpha_dual = max(1.0 - gamma_f, min(f, ETA_MAX)) * a_dual
    return alpha_pri, alpha_dual


def _near_central_path(pres, dres, mu, first, eps) -> bool:
    """Whether an iterate lies in the wide neighbourhood's infeasibility condition (see
    :data:`NEIGHBOURHOOD`): its residuals have fallen at least as fast as mu, to within that
    factor. A point where mu collapsed while a residual held (the float32 factor's stall: mu
    1e-13 and (6.1) 2.5e-5 on capri) is a dead end for any factor; a raise goes on from the best
    point that is not one. Residuals already below eps count as fallen."""
    ratio = NEIGHBOURHOOD * mu / first["mu"]
    return all(r <= eps or r <= ratio * r0 for r, r0 in ((pres, first["pres"]), (dres, first["dres"])))


def _pace(pres, dres, mu, first, eps) -> float:
    """The pace of an iterate (see :data:`PACE_SLIP`): 0 where both residuals are below eps."""
    fallen = mu / first["mu"] if first["mu"] > 0 else 0.0
    rates = [r / r0 for r, r0 in ((pres, first["pres"]), (dres, first["dres"])) if r > eps and r0 > 0]
    if not rates:
        return 0.0
    return max(rates) / fallen if fallen > 0 else math.inf


def _precision_raised(raised, entry, raised_at, worst_hist, be, vectors, callback, why="stall"):
    """Book-keeping of an iteration at which the back end's factor became more precise (the
    solve then goes on from the best point; see :func:`mehrotra`)."""
    entry["factor_precision"] = raised
    entry["precision_raised_by"] = why
    raised_at.append(entry["iteration"])
    worst_hist.clear()
    for v in vectors:
        be.free(v)
    if callback is not None:
        callback(entry)


def mehrotra(be, problem, eps=1e-6, max_iter=100, *, callback=None, ray_ratio=1e4,
             collapse=1e-10, stall_window=8, correct_primal=False, free_safeguard=False,
             regularize=False, reg_min=MEHROTRA_REG_MIN, reg_max=MEHROTRA_REG_MAX, deadline=None, resume=None):
    """Algorithm 3 of paper 000 on backend ``be`` for the standard-form ``problem``.

    Parameters
    ----------
    be : Backend
    problem : Problem
    eps : float
        Tolerance of the termination tests (6.1)-(6.3).
    max_iter : int
    callback : callable, optional
        Called with each history entry (a dict) once its iteration is complete.
    deadline : float, optional
        A ``time.perf_counter()`` value: the iteration stops at the first test after it with
        status "time_limit" (code 1) and the best point met (``solve``'s ``time_limit``).
    ray_ratio : float
        Threshold of the ray (Farkas) tests for infeasibility / unboundedness (module notes).
    collapse : float
        Second test: the primal is declared infeasible (unbounded) when mu has fallen below
        ``collapse * mu_0`` while the smallest (6.1) ((6.2)) met so far is still above both 1%
        of its starting value and ``1000 eps`` -- complementarity converged, feasibility never
        came.
    stall_window : int
        Numerical trouble is declared when neither the worst of (6.1)-(6.3) nor the larger
        of (6.1)-(6.2) has improved by a factor 2 over this many iterations (checked after
        2 * stall_window iterations; see :func:`gpgpu.lp.decisions.stop_code`).
    correct_primal : bool
        Beyond the paper: correct each direction so that A dx = r_b holds to the solve's
        accuracy, dx += D^2 A^T (A D^2 A^T)^-1 (r_b - A dx), the predictor's with its r_b and
        the corrector's with r_b = 0 (so their sum meets r_b) -- two more solves with the same
        factor per iteration, and products with A and A^T. (4.14) forms dx = -q - D^2 ds, a
        difference of terms that grow like D^2 near the optimum, so A dx misses r_b by
        rounding times |A| |D^2 ds| and the primal residual (6.1) stalls (docs/guide/lp.md).
    free_safeguard : bool
        Beyond the paper: after each step, both halves of every split free variable v = x+ - x-
        (:func:`~gpgpu.lp.mps.standardize`) are lowered by the same amount so that
        min(x+, x-) <= FREE_SPLIT_BOUND (1 + |v|) (``Backend.bound_free_splits``). v and A x do
        not change; without it the halves grow together and Theta with them, and the iterate
        loses centrality (docs/guide/lp.md).
    regularize : bool
        Beyond paper 000: the primal-dual proximal regularisation of paper 002 (5)-(6)
        (:mod:`.regularisation`, the matrix-free method's): each Newton system gets -rho dx in
        its dual and delta dlam in its primal equation, so the factor is of
        A (Theta^-1 + rho I)^-1 A^T + delta I, whose weights are at most 1/rho and whose
        eigenvalues are at least delta (:func:`_newton`).
    reg_min, reg_max : float
        Bounds of rho = delta, which follow mu between them (in the units of b and c divided
        by max(1, their largest magnitude)) and are cut ten-fold when their terms would hold
        the residuals back; default 1e-12 and 1e-6 (:data:`.regularisation.MEHROTRA_REG_MIN`).
        History entries get ``regularisation`` (rho, delta).
    resume : Resume, optional
        Beyond the paper: filled with the last point when the solve ends optimal; given one
        filled for a problem of the same shape, the iteration starts from its point instead of
        Mehrotra's starting point, with the factor's precision raised as often as the solve
        that filled it raised it (:class:`Resume`).

    Notes
    -----
    When the iteration stalls or breaks down (numerical trouble: a stall, an iterate that is no
    longer finite, an error of the precision inside an iteration, a step below
    :data:`STEP_FLOOR` that did not move the iterate, the first slip of the pace after a factor
    that replaced pivots, :data:`RAISE_AT_SLIP`) and ``be.raise_precision()``
    answers a more precise factor (the GPU back end with refinement and ``factor_precision="auto"``: float-float,
    :mod:`gpgpu.float_float`; beyond the papers), the solve goes on with that factor and a fresh
    stall test from the best point met that is near the central path (:func:`_near_central_path`;
    the best point when none is); that iteration takes no step, its history entry gets
    ``factor_precision`` and ``restart_iteration`` and the message says so. A float32 factor
    that replaced a jump of pivots (:data:`REPLACED_JUMP`) raises the precision before its
    step instead, from the same point: that iteration factors again and takes its step (its
    entry gets ``factor_precision``, no ``restart_iteration``). Without regularisation only.

    Returns
    -------
    LPResult
        For ``iteration_limit`` and ``numerical_trouble`` the point returned is the best one
        met (smallest worst criterion); ``LPResult.point_iteration`` says which.
    """
    t0 = time.perf_counter()
    lp = _Data.upload(be, problem)
    going_on = resume is not None and resume.fits(problem)
    it = _Iterate.resumed(be, resume) if going_on else _Iterate.start(be, lp)    # Mehrotra's starting point
    partner = _split_partners(problem) if free_safeguard else None
    reg = ProximalRegularisation(reg_min, reg_max, max(1.0, lp.nb), max(1.0, lp.nc)) if regularize else None
    tests = Settings(eps, max_iter, stall_window, ray_ratio, collapse, deadline)
    while True:
        r = _residuals(be, lp, it, t0)                        # r_b, r_c, (6.1)-(6.3), mu
        it.track(r, eps)                                      # the best point (and the best near the central path)
        stop = _termination(be, lp, it, r, tests)             # (6.1)-(6.3) and the other stops
        if stop == 4 and reg is None and _go_on_finer(be, it, r, callback,
                                                      "stall" if r.finite else "the iterate is no longer finite"):
            continue                                          # from the best point with a finer factor
        stuck, it.stuck = it.stuck, None
        if stop is None and stuck and reg is None and _go_on_finer(be, it, r, callback, stuck):
            continue                                          # a step that did not move: on with a finer factor
        slipped, it.slipped = it.slipped, None
        if stop is None and slipped and reg is None and _go_on_finer(be, it, r, callback, slipped):
            continue                                          # fell behind after replaced pivots: a finer factor
        if stop is not None:
            it.code = stop
            if callback is not None:
                callback(r.entry)
            break
        try:
            w = _weights(be, it, r.mu, reg)                   # D^2 = S^{-1} X, the factor of (4.12)
            if reg is None:
                w = _raise_at_replaced(be, it, r, w, lp)          # a jump in replaced pivots: a finer factor now
            aff, sigma = _predictor(be, lp, it, r, w, correct_primal)          # affine-scaling direction
            step = _corrector(be, lp, it, r, w, aff, sigma, correct_primal)    # + centering, (4.15)-(4.16)
        except (PrecisionExhausted, ValueError, FloatingPointError, np.linalg.LinAlgError) as e:
            # Theta beyond float32, a refinement residual that overflowed, a factor with inf:
            # the precision is exhausted -- on from the best point with a more precise factor
            # where the back end has one (as after a stall), else numerical trouble with the
            # best point, never a traceback out of solve
            if reg is None and _go_on_finer(be, it, r, callback, f"{type(e).__name__}: {e}"):
                continue
            it.code, it.trouble = 4, str(e) if isinstance(e, PrecisionExhausted) else f"{type(e).__name__}: {e}"
            break
        _update(be, lp, it, r, step, partner, reg, eps)                    # x, lambda, s += alpha d
        if callback is not None:
            callback(r.entry)
        it.k += 1
    result = _result(be, problem, lp, it, eps, max_iter, t0)
    if resume is not None and it.code == 0:
        resume.keep(problem, result, len(it.raised_at) + (resume.raises if going_on else 0), it.first)
    return result


@dataclass
class Resume:
    """Beyond the papers: the point a later solve of the same standard-form problem at a tighter
    eps goes on from (``mehrotra(..., resume=...)``). :func:`mehrotra` fills it with its last
    point (x, lambda, s in float64) when it ends optimal, with how often it raised the factor's
    precision and with its iteration 0's measures (mu and the residuals the collapse, pace and
    neighbourhood tests compare with); a later call given it filled, for a problem of the same
    shape, starts at that point with the precision raised as often and those measures, its
    iterations counted from 0, and sets ``resumed``. ``gpgpu.lp.solve`` gives one to a solve whose check on the problem as given may ask for a
    tighter eps (HiGHS's postsolve maps an interior point's duals with errors of the order of
    its complementarity: :mod:`gpgpu.lp.certificate`): the iteration then goes on for a few
    iterations where it solved the problem again from the start."""
    point: tuple | None = None
    shape: tuple | None = None
    raises: int = 0
    first: dict | None = None
    resumed: bool = False

    def fits(self, problem) -> bool:
        """Whether it holds a point of ``problem``'s standard form."""
        return self.point is not None and self.shape == tuple(problem.A.shape)

    def keep(self, problem, result, raises: int, first: dict | None = None) -> None:
        self.point = (result.x_std.copy(), result.y.copy(), result.s.copy())
        self.shape, self.raises = tuple(problem.A.shape), raises
        self.first = dict(first) if first is not None else None


@dataclass
class _Data:
    """The problem's vectors on the back end and its constant sizes: m x n, ||b||_inf, ||c||_inf."""
    m: int
    n: int
    nb: float
    nc: float
    b: object
    c: object
    ones_n: object
    c0: float

    @classmethod
    def upload(cls, be, problem) -> "_Data":
        m, n = problem.A.shape
        nb = float(np.max(np.abs(problem.b))) if m else 0.0       # ||b||_inf, ||c||_inf: constants
        nc = float(np.max(np.abs(problem.c))) if n else 0.0
        b = be.vector(problem.b)
        c = be.vector(problem.c)
        return cls(m, n, nb, nc, b, c, be.vector(np.ones(n)), problem.c0)


@dataclass
class _Iterate:
    """The iteration's state: the point (x, lambda, s) and iteration k, the history, the best
    point met (``best``) and the best near the central path (``restart``), each as
    (worst criterion, k, x, lambda, s), the stall test's record, the status so far."""
    x: object
    lam: object
    s: object
    replaced: int                       # pivots replaced in all factorizations
    readbacks: int                      # the back end's read-backs before iteration 0
    k: int = 0
    code: int = 1
    trouble: Optional[str] = None       # why the precision ran out
    history: list = field(default_factory=list)
    why: dict = field(default_factory=dict)          # the certificate of 2 or 3
    raised_at: list = field(default_factory=list)    # iterations where the factor's precision rose
    worst_hist: list = field(default_factory=list)   # worst criterion per iteration
    first: Optional[dict] = None        # iteration 0's mu and residuals, the smallest residuals met
    best: tuple = ()
    restart: tuple = ()
    pace_floor: float = math.inf        # the smallest pace since the start or the last raise
    paced: bool = True                  # the last pace is within PACE_SLIP x the floor (smallest since then)
    stuck: Optional[str] = None         # the last step was below STEP_FLOOR: its lengths
    slipped: Optional[str] = None       # the pace slipped after a factor that replaced pivots (RAISE_AT_SLIP)
    slip_seen: bool = False             # such a slip was flagged once: the rule does not fire again
    fewest_replaced: float = math.inf   # the fewest pivots a step's factor replaced

    @classmethod
    def start(cls, be, lp: _Data) -> "_Iterate":
        x, lam, s, replaced = starting_point(be, lp.b, lp.c, lp.ones_n)
        it = cls(x, lam, s, replaced, be.readbacks)
        it.best = it.restart = (math.inf, 0, x, lam, s)
        return it

    @classmethod
    def resumed(cls, be, resume: "Resume") -> "_Iterate":
        """The iteration from ``resume``'s point, the factor's precision raised as often as the
        solve that kept it raised it (:class:`Resume`)."""
        for _ in range(resume.raises):
            if be.raise_precision() is None:
                break
        x, lam, s = (be.vector(v) for v in resume.point)
        it = cls(x, lam, s, 0, be.readbacks)
        it.best = it.restart = (math.inf, 0, x, lam, s)
        it.first = dict(resume.first) if resume.first is not None else None
        resume.resumed = True
        return it

    def track(self, r, eps) -> None:
        """The best point, iteration 0's measures and the smallest residuals, and the best point
        near the central path (:func:`_near_central_path`), after the residuals ``r``."""
        if r.worst < self.best[0]:
            self.best = (r.worst, self.k, self.x, self.lam, self.s)
        first = self.first
        if first is None:
            first = self.first = {"mu": r.mu, "pres": r.pres, "dres": r.dres, "m": r.m, "min_pres": r.pres,
                                  "min_dres": r.dres}
        if r.finite:
            first["min_pres"] = min(first["min_pres"], r.pres)
            first["min_dres"] = min(first["min_dres"], r.dres)
            pace = _pace(r.pres, r.dres, r.mu, first, eps)
            floor, was_paced = self.pace_floor, self.paced
            self.pace_floor = min(self.pace_floor, pace)
            self.paced = not pace > PACE_SLIP * self.pace_floor
            replaced = self.history[-2].get("replaced_pivots") if len(self.history) > 1 else None
            fewest = self.fewest_replaced
            if replaced is not None:
                self.fewest_replaced = min(fewest, replaced)
                if RAISE_AT_SLIP and was_paced and not self.paced and not self.raised_at and replaced > fewest \
                        and floor > 0 and not self.slip_seen:
                    self.slip_seen = True
                    self.slipped = (f"the residuals fell behind mu after a factor that replaced {replaced} pivots, "
                                    f"{fewest} before (pace {pace:.2g}, its floor {floor:.2g})")
            if self.paced and r.worst < self.restart[0] and _near_central_path(r.pres, r.dres, r.mu, first, eps):
                self.restart = (r.worst, self.k, self.x, self.lam, self.s)


@dataclass
class _Residuals:
    """An iteration's residual vectors r_b, r_c, the numbers read back (c^T x, b^T lambda, their
    infinity norms, mu), the criteria (6.1)-(6.3) and its history entry."""
    rb: object
    rc: object
    cx: float
    by: float
    nrb: float
    nrc: float
    mu: float
    pres: float
    dres: float
    gap: float
    m: int
    entry: dict
    finite: bool
    worst: float


def _residuals(be, lp: _Data, it: _Iterate, t0: float) -> _Residuals:
    """Residuals and objectives (Algorithm 3: sgemv, inner product, inf_norm kernels), the
    criteria (6.1)-(6.3) and the iteration's history entry (appended)."""
    rb = be.matvec_add(it.x, lp.b, -1.0)                      # r_b = b - A x
    rc = be.axpy(-1.0, it.s, be.rmatvec_add(it.lam, lp.c, -1.0))   # r_c = c - A^T lambda - s
    cx, by, nrb, nrc, xs = be.scalars([("dot", lp.c, it.x),   # primal objective
                                       ("dot", lp.b, it.lam),  # dual objective
                                       ("norm_inf", rb), ("norm_inf", rc), ("dot", it.x, it.s)])
    mu = xs / lp.n                                            # mu = x^T s / n
    pres = nrb / (1.0 + lp.nb)                                # (6.1)
    dres = nrc / (1.0 + lp.nc)                                # (6.2)
    gap = abs(cx - by) / (1.0 + abs(cx))                      # (6.3)
    entry = {"iteration": it.k, "primal_residual": pres, "dual_residual": dres, "gap": gap,
             "mu": mu, "primal_objective": cx + lp.c0,
             "dual_objective": by + lp.c0, "alpha_pri": None, "alpha_dual": None,
             "sigma": None, "replaced_pivots": None, "regularisation": None,
             "time": time.perf_counter() - t0}
    it.history.append(entry)
    finite = all(math.isfinite(v) for v in (cx, by, nrb, nrc, mu)) and mu > 0
    worst = max(pres, dres, gap) if finite else math.inf
    return _Residuals(rb, rc, cx, by, nrb, nrc, mu, pres, dres, gap, lp.m, entry, finite, worst)


def _termination(be, lp: _Data, it: _Iterate, r: _Residuals, t: Settings):
    """The status code at which the iteration stops here, or None
    (:func:`gpgpu.lp.decisions.stop_code`, with the ray and collapse tests of
    :func:`gpgpu.lp.decisions.diverged`)."""
    reads = Reads(lambda: be.dot(it.x, lp.ones_n), lambda: be.norm_inf(it.lam))
    return stop_code(r, t, it.k, it.worst_hist, lambda: diverged(r, lp, it.first, t, reads, it.why))


def _go_on_finer(be, it: _Iterate, r: _Residuals, callback, why: str) -> bool:
    """Beyond the papers: where the back end has a more precise factor (a stall with a float32
    factor on the GPU with refinement and factor_precision="auto", an iterate no longer finite,
    an error of the precision), the iteration goes on from the best point met near the central
    path (the best point when none is) with it, its stall test restarted; this iteration takes
    no step. False (nothing done) where the back end has none."""
    raised = be.raise_precision()
    if raised is None:
        return False
    _precision_raised(raised, r.entry, it.raised_at, it.worst_hist, be, (r.rb, r.rc), callback, why)
    _, r.entry["restart_iteration"], it.x, it.lam, it.s = it.restart if it.restart[0] < math.inf else it.best
    it.pace_floor, it.paced = math.inf, True       # the pace is watched afresh from the restart point
    it.stuck = it.slipped = None                   # what the old factor did says nothing of the new one
    it.k += 1
    return True


@dataclass
class _Weights:
    """D^2 = S^{-1} X, the factor of A D^2 A^T (4.12), and the predictor's S^{-1} r_xs = x;
    regularised, D~^2 = S~^{-1} X with S~ = S + rho X, the shift delta, and S~^{-1} X S e
    (:func:`_newton`)."""
    d: object
    q_a: object
    s_reg: object
    rho: float
    delta: float
    replaced: int


def _weights(be, it: _Iterate, mu: float, reg) -> _Weights:
    """The weights of the iteration's two Newton systems, and their factor (adat, chol)."""
    if reg is None:
        rho_k = delta_k = 0.0
        s_reg = it.s
        d = be.div(it.x, it.s)                                # D^2 = S^{-1} X
        q_a = it.x                                            # S^{-1} r_xs = x
    else:                                                     # S~ = S + rho X (_newton)
        rho_k, delta_k = reg.current(mu)
        s_reg = be.axpy(rho_k, it.x, it.s)
        d = be.div(it.x, s_reg)                               # D~^2 = S~^{-1} X
        q_a = be.mul(d, it.s)                                 # S~^{-1} X S e
    replaced = be.factor_normal(d, delta_k)                   # adat (+ delta I), chol
    it.replaced += replaced
    return _Weights(d, q_a, s_reg, rho_k, delta_k, replaced)


def _raise_at_replaced(be, it: _Iterate, r: _Residuals, w: _Weights, lp: _Data) -> _Weights:
    """Beyond the papers (:data:`REPLACED_JUMP`): where this iteration's factor replaced more
    than REPLACED_JUMP x (normal rows) pivots above the fewest a step's factor replaced before,
    the iterate keeps pace with mu (an iterate that fell behind is no point to go on from: the
    other rules go back to one), and the back end has a more precise factor, the precision is
    raised and the same point's matrix factored again (the entry gets ``factor_precision`` and
    ``precision_raised_by``, the stall test starts afresh); else ``w`` as it is."""
    if REPLACED_JUMP is None or it.raised_at or not it.paced or not w.replaced > it.fewest_replaced:
        return w
    rows = getattr(be, "m_normal", lp.m)
    if w.replaced - it.fewest_replaced <= REPLACED_JUMP * rows:
        return w
    raised = be.raise_precision()
    if raised is None:
        return w
    why = f"the factor replaced {w.replaced} pivots, {it.fewest_replaced} before ({rows} normal rows)"
    _precision_raised(raised, r.entry, it.raised_at, it.worst_hist, be, (), None, why)   # no vector freed, no callback yet
    r.entry["replaced_before_raise"] = w.replaced
    it.pace_floor, it.paced = math.inf, True
    replaced = be.factor_normal(w.d, w.delta)
    it.replaced += replaced
    return _Weights(w.d, w.q_a, w.s_reg, w.rho, w.delta, replaced)


@dataclass
class _Direction:
    """A solution (dx, dlambda, ds) of (4.12)-(4.14)."""
    dx: object
    dl: object
    ds: object


def _predictor(be, lp: _Data, it: _Iterate, r: _Residuals, w: _Weights, correct_primal: bool) -> tuple:
    """The predictor (affine-scaling) direction: (4.12)-(4.14) with r_xs = X S e, and Mehrotra's
    centering parameter sigma = (mu_aff / mu)^3 from its step lengths; (direction, sigma)."""
    aff = _Direction(*_newton(be, w.d, r.rb, r.rc, w.q_a, correct_primal, w.rho))
    a_pri_aff = be.max_step(it.x, aff.dx)                     # alpha_aff^pri
    a_dual_aff = be.max_step(it.s, aff.ds)                    # alpha_aff^dual
    mu_aff = be.stepped_dot(it.x, aff.dx, a_pri_aff, it.s, aff.ds, a_dual_aff) / lp.n
    return aff, (mu_aff / r.mu) ** 3                          # sigma = (mu_aff / mu)^3


@dataclass
class _Step:
    """The corrector's right-hand side and direction, the search direction (their sum with the
    predictor's) and its step lengths; the weights, the predictor's direction and sigma they were
    computed from (what :func:`_update` frees and records)."""
    q: object
    corrector: _Direction
    direction: _Direction
    a_pri: float
    a_dual: float
    weights: _Weights
    predictor: _Direction
    sigma: float


def _corrector(be, lp: _Data, it: _Iterate, r: _Residuals, w: _Weights, aff: _Direction, sigma: float,
               correct_primal: bool) -> _Step:
    """The corrector (centering-corrector) direction: (4.12)-(4.14) with r_b = r_c = 0 and
    r_xs = -sigma mu e + dX_aff dS_aff e; the search direction (predictor + corrector) and its
    step lengths: the largest (4.15)-(4.16), cut by Mehrotra's heuristic (:func:`_mehrotra_step`)."""
    q = be.mul_shift_div(aff.dx, aff.ds, -sigma * r.mu, w.s_reg)   # S^{-1} r_xs (S~^{-1} r_xs)
    cor = _Direction(*_newton(be, w.d, None, None, q, correct_primal, w.rho))
    dx = be.axpy(1.0, aff.dx, cor.dx)
    dl = be.axpy(1.0, aff.dl, cor.dl)
    ds = be.axpy(1.0, aff.ds, cor.ds)
    a_pri_max, i_pri = be.max_step(it.x, dx, index=True)     # (4.15)
    a_dual_max, i_dual = be.max_step(it.s, ds, index=True)   # (4.16)
    a_pri, a_dual = _mehrotra_step(be, it.x, dx, it.s, ds, _MaxSteps(a_pri_max, i_pri, a_dual_max, i_dual), lp.n)
    return _Step(q, cor, _Direction(dx, dl, ds), a_pri, a_dual, w, aff, sigma)


def _update(be, lp: _Data, it: _Iterate, r: _Residuals, step: _Step, partner, reg, eps: float) -> None:
    """The step: x += alpha_pri dx, (lambda, s) += alpha_dual (dlambda, ds); then the free-split
    safeguard, the regularisation's next rho and delta, the iteration's vectors freed and its
    history entry completed."""
    dirn, w, aff, sigma = step.direction, step.weights, step.predictor, step.sigma
    it.x = be.axpy(step.a_pri, dirn.dx, it.x)
    it.lam = be.axpy(step.a_dual, dirn.dl, it.lam)
    it.s = be.axpy(step.a_dual, dirn.ds, it.s)
    if partner is not None:                                   # the free-split safeguard
        floor = FREE_SPLIT_CENTRING * be.dot(it.x, it.s) / lp.n
        bounded = be.bound_free_splits(it.x, partner, FREE_SPLIT_BOUND, it.s, floor)
        be.free(it.x)
        it.x = bounded
    if reg is not None:
        dx_max, dl_max = be.scalars([("norm_inf", dirn.dx), ("norm_inf", dirn.dl)])
        reg.after_step(w.rho, w.delta, dx_max, dl_max, r.nrc, r.nrb, eps * (1.0 + lp.nc), eps * (1.0 + lp.nb))
        for v in (w.s_reg, w.q_a):
            be.free(v)
        r.entry["regularisation"] = (w.rho, w.delta)
    cor = step.corrector
    for v in (r.rb, r.rc, w.d, aff.dx, aff.dl, aff.ds, step.q, cor.dx, cor.dl, cor.ds, dirn.dx, dirn.dl, dirn.ds):
        be.free(v)
    r.entry.update(alpha_pri=step.a_pri, alpha_dual=step.a_dual, sigma=sigma, replaced_pivots=w.replaced)
    if max(abs(step.a_pri), abs(step.a_dual)) < STEP_FLOOR:
        it.stuck = f"steps of {step.a_pri:.2g} and {step.a_dual:.2g}: the direction did not move"


def _result(be, problem, lp: _Data, it: _Iterate, eps: float, max_iter: int, t0: float) -> LPResult:
    """The result: the last point, or the best one met for codes 1 and 4, downloaded and taken
    back to the source problem; the message (with the precision's raise, if any)."""
    elapsed = time.perf_counter() - t0
    k = it.k
    per_iter = (be.readbacks - it.readbacks) / max(k, 1)
    point_k, x, lam, s = k, it.x, it.lam, it.s
    if it.code in (1, 4):                                     # the best point met
        _, point_k, x, lam, s = it.best
    x_std = be.to_numpy(x)
    y = be.to_numpy(lam)
    s_np = be.to_numpy(s)
    message = result_message(it.code, k, eps, point_k, it.trouble, certificate=it.why.get("certificate"))
    if it.raised_at and "restart_iteration" not in it.history[it.raised_at[0]]:     # raised before its step
        first_raise = it.history[it.raised_at[0]]
        message += (f" At iteration {it.raised_at[0]} {first_raise['precision_raised_by']}: the iteration went on "
                    f"from the same point with a {first_raise['factor_precision']} factor.")
    elif it.raised_at:
        first_raise = it.history[it.raised_at[0]]
        why = first_raise["precision_raised_by"]
        how = "stalled" if why == "stall" else f"fell behind ({why})" if why.startswith("the residuals fell") \
            else f"broke down ({why})"
        message += (f" The iteration {how} at iteration {it.raised_at[0]} and went on from its best point "
                    f"near the central path (iteration {first_raise['restart_iteration']}) with a "
                    f"{first_raise['factor_precision']} factor.")
    status, message = limit_status(it.code, k, max_iter, message)
    stop = (x_std, y, s_np) if it.code in (2, 3) else None
    return LPResult(status=status, status_code=it.code, message=message, stop_point=stop,
                    evidence=it.why.get("kind", "") if stop is not None else "",
                    x=problem.to_original(x_std), x_std=x_std, y=y, s=s_np,
                    objective=problem.original_objective(x_std), iterations=k, history=it.history,
                    readbacks_per_iteration=per_iter, replaced_pivots=it.replaced,
                    backend=be.name, elapsed=elapsed, readbacks=be.readbacks,
                    point_iteration=point_k, normal_rows=getattr(be, "m_normal", lp.m), standard_rows=lp.m)
