"""Every status checked on the user's own problem (beyond the papers).

The interior point methods decide on the problem they iterate on: the presolved, scaled,
normalised LP, in float32 on the GPU. :func:`gpgpu.lp.solve` answers the user's LP, so before it
says "optimal", "infeasible" or "unbounded" it checks the answer on that LP, in float64:

* **optimal**: the tests (6.1)-(6.3) of paper 000 at the answer's (x, y, s), in the units of the
  LP itself (:func:`normalised`: the lines' units of :class:`~gpgpu.lp.units.Lines`, then the
  normalisation of :class:`~gpgpu.lp.scaling.Units`, so that the check means the same whatever
  units the LP is written in; for an LP in unit-sized units these are its own; an LP that no
  diagonal scaling makes unit-sized is checked in its own units as well, the larger of the two
  counting)::

      primal = max(||b - A x||, ||b - A x⁺||) / (1 + ||b||)         x⁺ = max(x, 0)
      dual   = max(||c - Aᵀy - s||, ||c - Aᵀy - s⁺||) / (1 + ||c||)
      gap    = |cᵀx - bᵀy| / (1 + |cᵀx|)                           (infinity norms)

  The projected terms put a bound violation (x_j < 0, s_j < 0 of a postsolved point) into the
  units of the rows. "optimal" when all three are at most eps (:class:`Check`).
* **infeasible**: a Farkas ray y (where the iteration stopped): bᵀy > 0 and every x >= 0 with
  A x = b has ||x||_1 >= bᵀy / max(Aᵀy)⁺, which must exceed ``RAY_RATIO`` times the iterates'
  ||x||_1 (:func:`farkas`).
* **unbounded**: a primal ray u = x / (-cᵀx) >= 0 with cᵀu = -1, so that every dual-feasible y
  has ||y||_1 >= 1 / ||A u||, ``RAY_RATIO`` times the iterates' m ||y||_inf, at a point that
  meets (6.1) (:func:`primal_ray`).

What :func:`gpgpu.lp.solve` does when a check fails (:func:`confirm`: solve the presolved problem
again to a tighter eps where only its postsolved duals fail, solve again without the presolve,
solve the feasibility problem min 0 over the same constraints, or answer numerical trouble with
the residual named); :func:`feasibility_problem` builds that problem.
"""
from __future__ import annotations

import copy
import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .mps import Problem, standardize
from .scaling import Units
from .units import Lines, unit_sized

__all__ = ["Check", "Ray", "optimality", "farkas", "primal_ray", "normalised", "feasibility_problem", "confirm",
           "RAY_RATIO", "TIGHTER", "MIN_EPS"]

#: how many times the iterates' norm a ray's bound must exceed (the methods' ``ray_ratio``)
RAY_RATIO = 1e4
#: a presolved answer whose duals fail the check (its primal passing) is solved again with the
#: presolve at eps times TIGHTER (at least MIN_EPS) before the presolve is dropped: HiGHS's
#: postsolve maps an interior point's duals with errors of the order of its complementarity
#: (measured: ganges on numpy64 at eps 1e-8, duals 7.7e-8 off; at 1e-12, 8.8e-10)
TIGHTER, MIN_EPS = 1e-4, 1e-14


@dataclass(frozen=True)
class Check:
    """(6.1)-(6.3) of an answer on the user's problem, in float64 and its own units (module
    notes), against ``eps``."""

    primal: float
    dual: float
    gap: float
    eps: float

    @property
    def holds(self) -> bool:
        return all(v <= self.eps for v in (self.primal, self.dual, self.gap))

    def words(self) -> str:
        """The three numbers, the failing ones marked."""
        parts = []
        for name, v in (("primal residual (6.1)", self.primal), ("dual residual (6.2)", self.dual),
                        ("gap (6.3)", self.gap)):
            parts.append(f"{name} {v:.2e}" + (f" > eps = {self.eps:g}" if not v <= self.eps else ""))
        return ", ".join(parts)


@dataclass(frozen=True)
class Ray:
    """A ray's check: ``bound`` (the norm below which no feasible point, or no dual-feasible
    multiplier, exists), ``iterates`` (the iterates' norm it is compared with), and for a primal
    ray ``primal`` ((6.1) at the point: an unbounded LP needs a feasible one)."""

    kind: str
    bound: float
    iterates: float
    primal: float = 0.0
    eps: float = math.inf

    @property
    def holds(self) -> bool:
        return self.bound > RAY_RATIO * self.iterates and self.primal <= self.eps

    def words(self) -> str:
        what = "x >= 0 with A x = b has ||x||_1" if self.kind == "farkas" else "dual-feasible y has ||y||_1"
        out = f"no {what} below {self.bound:.3g} (the iterates' norm: {self.iterates:.3g})"
        if self.kind == "primal":
            out += f", at a point with primal residual (6.1) {self.primal:.2e}"
        return out


@dataclass(frozen=True)
class Normalised:
    """A problem and a point of it in the units of the check: Â, b̂, ĉ and the maps of x, y, s."""

    A: sp.csr_matrix
    b: np.ndarray
    c: np.ndarray
    fx: np.ndarray
    fy: np.ndarray
    fs: np.ndarray
    unit: bool = True               # whether Â is unit-sized (:func:`gpgpu.lp.units.unit_sized`)
    exponents: tuple = (0, 0, 0)    # powers of two of x, y, s besides fx, fy, fs (the lines' units)

    def point(self, x, y, s) -> tuple:
        return tuple(None if v is None else np.ldexp(np.asarray(v, dtype=np.float64) * f, e)
                     for v, f, e in zip((x, y, s), (self.fx, self.fy, self.fs), self.exponents))


def normalised(problem) -> Normalised:
    """``problem``'s standard form in the units of the check (module notes), as the solve's own
    normalisation scales it, each factor a power of two: x̂ = 2^ex fx x, ŷ = 2^ey fy y,
    ŝ = 2^es fs s (:attr:`Normalised.exponents` hold ex, ey, es, the lines' units)."""
    ex, ey = np.zeros(problem.n, dtype=np.int64), np.zeros(problem.m, dtype=np.int64)
    beta1 = gamma1 = 0
    base = problem
    lines = Lines.of(problem)
    if lines is not None:
        scaled = lines.problem(problem)
        if scaled is not None:
            base = scaled
            ex, ey = lines.exponents(problem)
            beta1, gamma1 = lines.bounds, lines.costs
    u = Units.of(base)
    A = sp.csr_matrix(sp.diags(u.rows) @ base.A @ sp.diags(u.columns))
    return Normalised(A, base.b * (u.beta * u.rows), base.c * (u.gamma * u.columns), u.beta / u.columns,
                      u.gamma / u.rows, u.gamma * u.columns, unit_sized(A), (beta1 - ex, gamma1 - ey, gamma1 + ex))


def as_given(problem) -> Normalised:
    """``problem``'s standard form in its own units (the identity maps)."""
    ones = np.ones(problem.n)
    return Normalised(sp.csr_matrix(problem.A), problem.b, problem.c, ones, np.ones(problem.m), ones)


def _inf(v) -> float:
    return float(np.max(np.abs(v), initial=0.0))


def optimality(problem, x_std, y, s, eps: float, units: Normalised | None = None) -> Check:
    """The check of an optimal answer (module notes) at ``problem``'s standard-form point: in
    the LP's own units (:func:`normalised`), and as given too where those are not unit-sized."""
    N = normalised(problem) if units is None else units
    check = _tests(N, x_std, y, s, eps)
    if N.unit:
        return check
    mine = _tests(as_given(problem), x_std, y, s, eps)
    return Check(max(check.primal, mine.primal), max(check.dual, mine.dual), max(check.gap, mine.gap), eps)


def _tests(N: Normalised, x_std, y, s, eps: float) -> Check:
    """(6.1)-(6.3) with the projections of the module notes, in the units of ``N``."""
    x, y, s = N.point(x_std, y, s)
    if not all(np.isfinite(v).all() for v in (x, y, s)):
        return Check(math.inf, math.inf, math.inf, eps)
    nb, nc = _inf(N.b), _inf(N.c)
    rb = N.b - N.A @ x
    rb_plus = N.b - N.A @ np.maximum(x, 0.0)
    rc = N.c - N.A.T @ y
    primal = max(_inf(rb), _inf(rb_plus)) / (1.0 + nb)
    dual = max(_inf(rc - s), _inf(rc - np.maximum(s, 0.0))) / (1.0 + nc)
    cx, by = float(N.c @ x), float(N.b @ y)
    gap = abs(cx - by) / (1.0 + abs(cx))
    return Check(primal, dual, gap, eps)


def farkas(problem, point, units: Normalised | None = None) -> Ray:
    """The check of an infeasible answer at the point (x, y, s) where the iteration stopped."""
    N = normalised(problem) if units is None else units
    x, y, _ = N.point(*point[:3])
    by = float(N.b @ y)
    if not (np.isfinite(by) and by > 0 and np.isfinite(x).all()):
        return Ray("farkas", 0.0, math.inf)
    worst = float(np.max(N.A.T @ y, initial=0.0))
    bound = by / worst if worst > 0 else math.inf
    return Ray("farkas", bound, 1.0 + float(np.abs(x).sum()))


def primal_ray(problem, point, eps: float, units: Normalised | None = None) -> Ray:
    """The check of an unbounded answer at the point (x, y, s) where the iteration stopped."""
    N = normalised(problem) if units is None else units
    x, y, _ = N.point(*point[:3])
    cx = float(N.c @ x)
    if not (np.isfinite(cx) and cx < 0 and np.isfinite(y).all() and (x >= 0).all()):
        return Ray("primal", 0.0, math.inf)
    spread = _inf(N.A @ x) / -cx
    bound = 1.0 / spread if spread > 0 else math.inf
    primal = _inf(N.b - N.A @ x) / (1.0 + _inf(N.b))
    return Ray("primal", bound, 1.0 + N.A.shape[0] * _inf(y), primal, eps)


def feasibility_problem(problem) -> Problem:
    """``problem`` with no objective (min 0 over the same constraints): its dual is feasible, so
    an interior point method ends it optimal (a feasible point) or infeasible (a Farkas ray)."""
    src = problem.source
    if src is None:
        return dataclasses.replace(problem, c=np.zeros(problem.n), c0=0.0, name=problem.name + " (feasibility)",
                                   presolve=dict(problem.presolve))
    return standardize(np.zeros_like(src["c"]), src["A"], src["row_lower"], src["row_upper"],
                       col_lower=src["col_lower"], col_upper=src["col_upper"], offset=0.0, sense=1,
                       name=problem.name + " (feasibility)")


def _with_status(result, code: int, message: str, check=None):
    """A copy of ``result`` (the method's own attributes kept) with status ``code`` and
    ``message``, no point for 2 and 3."""
    from .mehrotra import STATUS

    out = copy.copy(result)
    out.status, out.status_code, out.message, out.check = STATUS[code], code, message, check
    if code in (2, 3):
        out.x = out.x_std = out.y = out.s = None
        out.objective = math.nan
    return out


def confirm(problem, result, eps: float, resolve, presolved: bool):
    """``result`` of ``solve`` on ``problem`` with its status checked (module notes), as
    :func:`gpgpu.lp.solve` answers it.

    ``resolve(problem, presolve=False)`` solves a problem again (the same options but the
    presolve's; None where it cannot: a back end instance and another problem); ``presolved``
    says whether ``result`` came through HiGHS's presolve. An optimal
    answer that fails its check is solved again without the presolve where it had one, and is
    numerical trouble (the point kept, the failing residuals named) where that fails too. An
    infeasible or unbounded answer whose ray does not hold (or that the presolve decided) is
    decided by the feasibility problem (:func:`feasibility_problem`): a feasible point makes a
    dual ray unbounded and an infeasibility claim wrong (solved again without the presolve, or
    numerical trouble); its Farkas ray makes it infeasible. A presolved optimal answer whose
    primal passes and duals fail is first solved again with the presolve at a tighter eps
    (:data:`TIGHTER`): Mehrotra's iteration goes on from its last point
    (:class:`gpgpu.lp.mehrotra.Resume`; from the start where that does not end optimal within
    ``gpgpu.lp.api.RESUME_ITERATIONS``), the matrix-free method starts again. ``resolve(problem,
    fresh=True, eps=...)`` asks for a solve from the start."""
    code = result.status_code
    if code == 0:
        return _confirm_optimal(problem, result, eps, resolve, presolved)
    if code in (2, 3):
        return _confirm_ray(problem, result, eps, resolve, presolved)
    return result


def _confirm_optimal(problem, result, eps, resolve, presolved):
    units = normalised(problem)
    check = optimality(problem, result.x_std, result.y, result.s, eps, units)
    if check.holds:
        result.check = check
        return result
    if presolved and check.primal <= eps:
        # the postsolve maps an interior point's duals with errors of the order of its
        # complementarity: the presolved problem solved to a tighter eps gives duals that pass
        tight = max(eps * TIGHTER, MIN_EPS)
        again = resolve(problem, eps=tight)
        if getattr(again, "resumed_from", None) is not None and not (
                again.status_code == 0 and optimality(problem, again.x_std, again.y, again.s, eps, units).holds):
            again = resolve(problem, eps=tight, fresh=True)       # going on did not end there: from the start
        if again.status_code == 0:
            check2 = optimality(problem, again.x_std, again.y, again.s, eps, units)
            if check2.holds:
                again.check = check2
                how = (f"the iteration went on from its last point (iteration {again.resumed_from}) to eps = {tight:g}"
                       if getattr(again, "resumed_from", None) is not None
                       else f"the presolved problem was solved again at eps = {tight:g}")
                again.message += (f" HiGHS's postsolve gave duals that fail the check on the problem as given "
                                  f"({check.words()}), so {how}.")
                return again
    if presolved:
        again = resolve(problem, presolve=False)
        note = (f" HiGHS's presolve and postsolve gave a point that fails the check on the problem as given "
                f"({check.words()}), so it was solved again without the presolve.")
        if again.status_code == 0:
            check2 = optimality(problem, again.x_std, again.y, again.s, eps, units)
            if check2.holds:
                again.check = check2
                again.message += note
                return again
            if max(check2.primal, check2.dual, check2.gap) < max(check.primal, check.dual, check.gap):
                result, check = again, check2
        elif again.status_code != 4:
            again.message += note
            return confirm(problem, again, eps, resolve, False)
    return _with_status(result, 4, (
        "Numerical trouble: the point meets (6.1)-(6.3) on the problem the method solved but not on the "
        f"problem as given (checked in float64, gpgpu.lp.certificate: {check.words()}). " + result.message), check)


def _ray_of(problem, result, eps, units):
    point = result.stop_point
    if point is None or result.evidence not in ("farkas", "primal ray"):
        return None
    if result.status_code == 2:
        return farkas(problem, point, units)
    return primal_ray(problem, point, eps, units)


def _confirm_ray(problem, result, eps, resolve, presolved):
    units = normalised(problem)
    ray = _ray_of(problem, result, eps, units)
    if ray is not None and ray.holds:
        result.check = ray
        return result
    feasibility = feasibility_problem(problem)
    f = resolve(feasibility, presolve=False)
    if f is None:
        result.message += (" Not confirmed on the problem as given: the back end was given as an instance, which "
                           "solves its own problem only (give it by name to have the status checked).")
        return result
    if f.status_code == 0:
        fcheck = optimality(feasibility, f.x_std, f.y, f.s, eps)
        if fcheck.holds:
            return _feasible(problem, result, eps, resolve, presolved, fcheck)
    elif f.status_code == 2 and f.stop_point is not None:
        fray = farkas(feasibility, f.stop_point)
        if fray.holds:
            words = f"the feasibility problem (min 0 over the same constraints) has a Farkas ray: {fray.words()}"
            if result.status_code == 2:
                result.check = fray
                result.message += f" Confirmed: {words}."
                return result
            return _with_status(result, 2, (f"The problem is (primal) infeasible, and its dual too: {words}. The "
                                            f"iteration had found a ray of the primal: {result.message}"), fray)
    result.message += (f" Not confirmed on the problem as given: the feasibility problem (min 0 over the same "
                       f"constraints) ended {f.status}, so this status rests on "
                       + ("HiGHS's presolve." if result.stop_point is None else "the iteration's own tests."))
    return result


def _feasible(problem, result, eps, resolve, presolved, fcheck):
    """The answer when the feasibility problem found a feasible point (``fcheck``)."""
    code = result.status_code
    if code == 3 or result.evidence == "dual ray":
        words = ("the feasibility problem (min 0 over the same constraints) found a feasible point "
                 f"({fcheck.words()})")
        if code == 3:
            result.check = fcheck
            result.message += f" Confirmed: {words}."
            return result
        return _with_status(result, 3, (f"The problem is unbounded (its dual is infeasible): the iteration found a "
                                        f"ray of the primal and {words}. {result.message}"), fcheck)
    if presolved:
        again = resolve(problem, presolve=False)
        again.message += (" HiGHS's presolve found the problem infeasible, but it has a feasible point (the "
                          "feasibility problem's), so it was solved again without the presolve.")
        return confirm(problem, again, eps, resolve, False)
    return _with_status(result, 4, (
        "Numerical trouble: the iteration's tests found the problem infeasible, but the feasibility problem (min 0 "
        f"over the same constraints) has a feasible point ({fcheck.words()}). " + result.message), None)
