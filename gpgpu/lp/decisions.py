"""The decisions both interior point methods share (Mehrotra's, :mod:`gpgpu.lp.mehrotra`, and the
matrix-free one, :mod:`gpgpu.lp.matrix_free`): when an iteration stops, with which status, and
the result's words. Each takes records -- the iteration's measures (``point``), the problem's
sizes, the tests' :class:`Settings`, the deferred :class:`Reads` -- not lists of floats.

Statuses (codes as ``scipy.optimize.linprog``):

====  ====================  ==============================================================
code  status                meaning
====  ====================  ==============================================================
0     optimal               (6.1)-(6.3) hold with the given eps
1     iteration_limit       max_iter iterations without meeting (6.1)-(6.3)
2     infeasible            the primal (4.1)-(4.3) has no feasible point
3     unbounded             the primal is unbounded (the dual (4.4)-(4.6) is infeasible)
4     numerical_trouble     NaN/inf, or no progress (the precision is exhausted)
====  ====================  ==============================================================

The infeasibility and unboundedness tests (:func:`diverged`) are derived in
:mod:`gpgpu.lp.mehrotra`'s notes; the stall test in :func:`stop_code`'s.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable, Optional

__all__ = ["STATUS", "STATUS_CODES", "MESSAGES", "TIME_LIMIT_MESSAGE", "Settings", "Reads", "diverged", "stop_code",
           "limit_status", "result_message"]

#: status code -> status name
STATUS = {0: "optimal", 1: "iteration_limit", 2: "infeasible", 3: "unbounded",
          4: "numerical_trouble"}
#: status name -> status code ("time_limit" has the iteration limit's code, as in scipy's linprog)
STATUS_CODES = {**{v: k for k, v in STATUS.items()}, "time_limit": 1}
#: the message of a solve stopped by its time limit (``solve(..., time_limit=...)``)
TIME_LIMIT_MESSAGE = "Time limit reached before (6.1)-(6.3) were met."
#: status code -> message
MESSAGES = {
    0: "Optimal: the relative residuals (6.1), (6.2) and the relative gap (6.3) are below eps.",
    1: "Iteration limit reached before (6.1)-(6.3) were met.",
    2: "The problem is (primal) infeasible.",
    3: "The problem is unbounded (its dual is infeasible).",
    4: "Numerical trouble: the iteration broke down or stopped making progress "
       "(the precision is probably exhausted for this eps).",
}


@dataclass(frozen=True)
class Settings:
    """The stopping tests' settings (:func:`stop_code`, :func:`diverged`): the tolerance of
    (6.1)-(6.3), the iteration limit, the stall test's window, the ray tests' ratio, the collapse
    test's fraction of mu and the deadline (``time.perf_counter()``, or None)."""
    eps: float
    max_iter: int
    stall_window: int
    ray_ratio: float
    collapse: float
    deadline: Optional[float] = None


@dataclass(frozen=True)
class Reads:
    """The read-backs :func:`diverged` may need, deferred (each costs a GPU round trip): eᵀx and
    ‖λ‖_inf of the iteration's point."""
    sum_x: Callable[[], float]
    lam_inf: Callable[[], float]


def _quotient(a: float, b: float) -> float:
    return a / b if b > 0 else math.inf


def diverged(point, sizes, first: dict, settings: "Settings", reads: "Reads", why: dict | None = None):
    """The infeasibility and unboundedness tests (:mod:`gpgpu.lp.mehrotra`'s notes) at an
    iteration's ``point`` (a record with pres, dres, mu, by, cx, nrb, nrc: the tests (6.1), (6.2),
    mu, bᵀλ, cᵀx and the residuals' infinity norms), the problem's ``sizes`` (nb, nc: ‖b‖, ‖c‖),
    iteration 0's measures ``first`` and the ``settings``; a status code or None.

    ``reads`` holds the read-backs (eᵀx, ‖λ‖) a test may need, evaluated only when a cheap
    necessary condition already holds. ``why`` (a dict), when given, gets ``"certificate"``
    (the sizes behind a status 2 or 3, for the result's message) and ``"kind"`` (the evidence:
    "farkas", "primal ray", "dual ray", "collapse").
    """
    why = {} if why is None else why
    pres, dres, mu, by, cx, nrb, nrc = (point.pres, point.dres, point.mu, point.by, point.cx, point.nrb,
                                        point.nrc)
    nb, nc = sizes.nb, sizes.nc
    eps, ray_ratio, collapse = settings.eps, settings.ray_ratio, settings.collapse
    # Farkas ray of the dual: no feasible x with ||x||_1 < b^T lambda / (||c|| + ||r_c||)
    if pres > eps and by > ray_ratio * (nc + nrc):
        sx = reads.sum_x()
        if by > ray_ratio * (nc + nrc) * (1.0 + sx):
            why["certificate"] = (f"a Farkas ray: b^T lambda = {by:.3g} with s >= 0 and ||A^T lambda + s||_inf "
                                  f"<= ||c||_inf + ||r_c||_inf = {nc + nrc:.3g}, so no x >= 0 with A x = b "
                                  f"has ||x||_1 below "
                                  f"{_quotient(by, nc + nrc):.3g} (the iterates' ||x||_1: {sx:.3g}; primal residual "
                                  f"(6.1) {pres:.2e})")
            why["kind"] = "farkas"
            return 2
    # ray of the primal: no dual-feasible lambda with ||lambda||_1 < -c^T x / (||b|| + ||r_b||).
    # The dual is infeasible then, which makes the primal unbounded only if it is feasible: the
    # primal residual must have come down. Where it has not, the primal is infeasible as well
    # unless a feasible point exists out of the iterates' reach: infeasible (both infeasible:
    # scipy's and HiGHS's status), with why["kind"] = "dual ray" so that gpgpu.lp.solve decides it by the
    # feasibility problem (gpgpu.lp.certificate)
    primal_settled = pres <= max(0.01 * first["pres"], 1e3 * eps)
    if dres > eps and -cx > ray_ratio * (nb + nrb):
        li = reads.lam_inf()
        if -cx > ray_ratio * (nb + nrb) * (1.0 + first["m"] * li):
            ray = (f"a primal ray: c^T x = {cx:.3g} with x >= 0 and ||A x||_inf <= ||b||_inf + "
                   f"||r_b||_inf = {nb + nrb:.3g}, so no dual-feasible lambda has ||lambda||_1 "
                   f"below {_quotient(-cx, nb + nrb):.3g} (the "
                   f"iterates' m ||lambda||_inf: {first['m'] * li:.3g}; dual residual (6.2) "
                   f"{dres:.2e})")
            if primal_settled:
                why["certificate"], why["kind"] = ray, "primal ray"
                return 3
            why["certificate"] = (f"{ray}, while the primal residual (6.1) stayed at {pres:.2e} (it started at "
                                  f"{first['pres']:.2e}): the dual is infeasible and no feasible x was met")
            why["kind"] = "dual ray"
            return 2
    # complementarity has vanished while one residual never came down
    if mu <= collapse * first["mu"]:
        for code, key, name in ((2, "pres", "primal residual (6.1)"), (3, "dres", "dual residual (6.2)")):
            if first["min_" + key] > max(0.01 * first[key], 1e3 * eps):
                why["certificate"] = (f"mu fell to {mu:.2e} ({collapse:g} of its start) while the {name} "
                                      f"never came below {first['min_' + key]:.2e} (it started at "
                                      f"{first[key]:.2e})")
                why["kind"] = "collapse"
                return code
    return None


def stop_code(point, settings: "Settings", k: int, worst_hist: list, diverged, feasibility: bool = True):
    """The termination decision of iteration ``k`` at ``point`` (a record with finite, pres, dres,
    gap, worst), or None to go on: 4 when not finite, 0 when the tests (6.1)-(6.3) hold, else
    ``diverged()`` (infeasible / unbounded / collapse), else 4 when the worst residual stalled over
    ``settings.stall_window`` iterations (``worst_hist`` is the record of the worst residuals), 1 at
    the iteration limit or the deadline.

    Stalled: the smallest worst residual of the last ``stall_window`` iterations is not half
    the smallest before them. With ``feasibility`` (the default of both methods) the larger of
    (6.1) and (6.2) must have stalled too: an iteration whose relative gap grows while the
    residuals still fall (the gap test means little before the iterate is nearly feasible) is
    progress (the project's stop, beyond paper 000, whose runs stop at (6.1)-(6.3) or the
    iteration limit; the NETLIB results with it: docs/results/lp.md). False is the earlier test
    (the worst residual alone), kept for comparison."""
    pres, dres, gap, worst, eps = point.pres, point.dres, point.gap, point.worst, settings.eps
    stall_window, max_iter, deadline = settings.stall_window, settings.max_iter, settings.deadline
    if not point.finite:
        return 4
    if pres <= eps and dres <= eps and gap <= eps:            # (6.1)-(6.3)
        return 0
    stop = diverged()
    if stop is None:
        worst_hist.append((worst, max(pres, dres) if feasibility else worst))
        if len(worst_hist) > 2 * stall_window and all(
                min(h[i] for h in worst_hist[-stall_window:]) > 0.5 * min(h[i] for h in worst_hist[:-stall_window])
                for i in (0, 1)):
            return 4
        if k >= max_iter or (deadline is not None and time.perf_counter() >= deadline):
            return 1
    return stop


def limit_status(code: int, k: int, max_iter: int, message: str) -> tuple:
    """(status, message) of a result: code 1 before max_iter iterations is the time limit's."""
    if code == 1 and k < max_iter:
        return "time_limit", message.replace(MESSAGES[1], TIME_LIMIT_MESSAGE, 1)
    return STATUS[code], message


def result_message(code, iterations, eps, point_k, trouble, detail="", certificate=None) -> str:
    """The result's message (both methods): the status's text, then the iterations and eps
    (``detail`` added) for optimal, the certificate's sizes for infeasible and unbounded, the
    point's iteration when an earlier one is returned, and why the precision ran out
    (``trouble``) when it did."""
    message = MESSAGES[code]
    if code == 0:
        message += f" ({iterations} iterations, eps = {eps:g}{detail})"
    elif code in (2, 3) and certificate:
        message += f" Certificate, at iteration {iterations}: {certificate}."
    elif code == 4 and point_k < iterations:
        message += f" The point returned is that of iteration {point_k}."
    if trouble is not None:
        message += f" Stopped at iteration {iterations}: {trouble}."
    return message
