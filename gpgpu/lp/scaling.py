"""Geometric scaling of a standard-form LP (beyond the papers), undone on output.

Interior point codes scale the rows and columns of A before they iterate, so that the
entries of A -- and with them the normal equations A D² Aᵀ -- span fewer orders of magnitude.
``solve(..., scale=True)`` does what they do, in the classic geometric form (Curtis and Reid's
idea as interior point codes use it): a few passes that divide each row, then each column, by
the geometric mean of its largest and smallest non-zero magnitudes, every factor rounded to a
power of two so that the scaling itself rounds nothing. The scaled problem

    Â = R A C,   b̂ = R b,   ĉ = C c          (R, C diagonal)

has the same optimum in other units: x = C x̂, y = R ŷ, s = C⁻¹ ŝ, and the same objective
cᵀx = ĉᵀx̂. The iteration's history and its tests (6.1)-(6.3) are those of the scaled problem.

The normalisation (:class:`Units`, ``solve(..., normalize=True)``, on in the robust and fast
presets) is what makes the answer independent of the units the user wrote the LP in. The tests
(6.1)-(6.3) measure residuals against 1 + ||b||, 1 + ||c|| and 1 + |cᵀx|: in the user's units
the 1 dominates when b, c or the objective are small (c = 1e-6 makes the gap test absolute and
met at once; A = 1e6 makes x and the objective small), and the starting point's shifts are
absolute too. So before the iteration, with powers of two (which round nothing),

* the problem's own rows (not the rows x_j + w_k = u_k of upper bounds) are multiplied by alpha,
  which brings the geometric mean of their |a_ij| into :data:`A_BAND` when it is outside (a
  slack column keeps its coefficient 1: it is divided by alpha);
* b by beta, which brings a largest |b_i| below 1 up to 1 (x̂ = beta x);
* c by gamma, which brings a largest |c_j| below ``C_FLOOR[1]`` up to it;

    Â = R A C,   b̂ = beta R b,   ĉ = gamma C c,
    x = C x̂ / beta,   y = R ŷ / gamma,   s = C⁻¹ ŝ / gamma,   cᵀx = ĉᵀx̂ / (gamma beta).

Only what is out of its band moves, and only to the band's edge: an LP already written in
reasonable units (the 42 NETLIB problems of gpgpu/data) is solved as given, and multiplying c,
A or b by any power of ten gives the iterates of an LP at the band's edge, hence the same answer.
``solve(..., presolve=True)`` gives HiGHS the general form normalised likewise
(:func:`general_form_factors`: rows outside :data:`ROW_BAND` one by one first), since HiGHS's
tolerances are absolute (1e-7): a row 1e-8 x1 + 1e-8 x2 >= 1e-8 is otherwise "redundant".
"""
from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from .bounds import BoundRows
from .matrix_free import checkpoint
from .mehrotra import LPResult

__all__ = ["geometric_scaling", "scale_problem", "unscale_result", "Units", "general_form_factors", "objectives_divided"]

#: passes of row then column scaling
PASSES = 6


def _pow2(v: np.ndarray) -> np.ndarray:
    return np.exp2(np.round(np.log2(v)))


def _line_factors(M: sp.csr_matrix) -> np.ndarray:
    """1 / sqrt(max |a| min |a|) over the non-zeros of each row of ``M`` (|entries|), a power of
    two; 1 for an empty row."""
    out = np.ones(M.shape[0])
    counts = np.diff(M.indptr)
    rows = np.flatnonzero(counts)
    if rows.size:
        starts = M.indptr[rows]
        big = np.maximum.reduceat(M.data, starts)
        small = np.minimum.reduceat(M.data, starts)
        out[rows] = _pow2(1.0 / (np.sqrt(big) * np.sqrt(small)))     # no overflow of big * small
    return out


def geometric_scaling(A, passes: int = PASSES) -> tuple:
    """(r, c): row and column factors, powers of two, such that diag(r) A diag(c) has rows and
    columns whose largest and smallest non-zero magnitudes are about reciprocal."""
    M = sp.csr_matrix(abs(sp.csr_matrix(A, dtype=np.float64)))
    M.eliminate_zeros()
    m, n = M.shape
    r, c = np.ones(m), np.ones(n)
    for _ in range(passes):
        S = sp.diags(r) @ M @ sp.diags(c)
        r *= _line_factors(sp.csr_matrix(S))
        S = sp.diags(r) @ M @ sp.diags(c)
        c *= _line_factors(sp.csr_matrix(S.T))
    return r, c


def scale_problem(problem, passes: int = PASSES) -> tuple:
    """(scaled Problem, r, c): the same problem (its maps back to the source variables kept)
    with A, b, c replaced by R A C, R b, C c."""
    r, c = geometric_scaling(problem.A, passes)
    A = sp.diags(r) @ problem.A @ sp.diags(c)
    scaled = dataclasses.replace(problem, A=A, b=r * problem.b, c=c * problem.c,
                                 name=problem.name, presolve=dict(problem.presolve))
    return scaled, r, c


def unscale_result(result, problem, r: np.ndarray, c: np.ndarray):
    """The result of the scaled problem in the units of ``problem``: x_std = C x̂, y = R ŷ,
    s = C⁻¹ ŝ, the source variables and the objective recomputed from them."""
    return _unscaled(result, problem, lambda x: c * x, lambda y: r * y, lambda s: s / c, 1.0)


def _unscaled(result, problem, fx, fy, fs, objective_factor: float):
    """``result`` with its points mapped by ``fx``, ``fy``, ``fs`` into ``problem``'s units, the
    source variables and objective recomputed, and the history's objectives divided by
    ``objective_factor``. A copy: the method's own attributes (``pcg_iterations``, ...) stay."""
    out = copy.copy(result)
    if objective_factor != 1.0:
        out.history = [objectives_divided(e, objective_factor) for e in result.history]
    for name in ("last_point", "stop_point"):
        point = getattr(result, name, None)
        if point is not None:
            setattr(out, name, (fx(point[0]), fy(point[1]), fs(point[2])))
    if result.x_std is None:
        return out
    out.x_std, out.y, out.s = fx(result.x_std), fy(result.y), fs(result.s)
    out.x = problem.to_original(out.x_std)
    out.objective = problem.original_objective(out.x_std)
    return out


def start_arrays(start) -> dict:
    """A matrix-free ``start`` as a mapping with "x", "y", "s" (and a checkpoint's other keys): a
    result (its last point where it has one), a checkpoint mapping (a copy) or a triple."""
    if isinstance(start, LPResult):
        return (checkpoint(start) if getattr(start, "last_point", None) is not None
                else {"x": start.x_std, "y": start.y, "s": start.s})
    if isinstance(start, Mapping):
        return dict(start)
    x, y, s = start
    return {"x": x, "y": y, "s": s}


def objectives_divided(entry: dict, factor: float) -> dict:
    """A history entry with its primal and dual objectives divided by ``factor`` (a copy)."""
    return dict(entry, **{k: entry[k] / factor for k in ("primal_objective", "dual_objective")
                          if entry.get(k) is not None})


def _pow2_near_reciprocal(v: float) -> float:
    """The power of two nearest 1 / v (in the log), 1 for v = 0 or v not finite; at most 2^1000
    (1 / v of a subnormal v is beyond float64: :class:`gpgpu.lp.units.Lines` brings such values
    to unit size before)."""
    if not (v > 0 and math.isfinite(v)):
        return 1.0
    return math.ldexp(1.0, min(1000, -round(math.log2(v))))


#: the band of the geometric mean of |a_ij| (the problem's own rows, slack columns aside) that
#: the normalisation leaves alone: outside it A is brought to its nearer edge. The 42 NETLIB
#: problems of gpgpu/data lie inside (0.022 grow15 .. 4.9 gfrd-pnc), so they are solved as given
A_BAND = (2.0 ** -6, 2.0 ** 3)


@dataclass(frozen=True)
class Units:
    """The normalisation's factors (module notes): Â = R A C, b̂ = beta R b, ĉ = gamma C c with
    R = alpha on the problem's own rows and 1 on its bound rows (x_j + w_k = u_k, kept in the
    units of x), C = 1 but 1 / alpha on the slack columns of those rows (one entry, +-1, cost 0)
    so that a slack keeps its coefficient; alpha, beta, gamma powers of two."""

    alpha: float = 1.0
    beta: float = 1.0
    gamma: float = 1.0
    rows: np.ndarray = None             # R's diagonal
    columns: np.ndarray = None          # C's diagonal

    @classmethod
    def of(cls, problem) -> "Units":
        """alpha brings the geometric mean of |a_ij| over the problem's own rows (slack columns
        aside) into :data:`A_BAND` when it is outside, beta a max |R b| below 1 up to 1, gamma a
        max |c_j| below 1 up to 1; each 1 otherwise."""
        A = sp.csr_matrix(problem.A)
        m, n = A.shape
        bound_rows = BoundRows.detect(A)
        main = m if bound_rows is None else bound_rows.m
        C = sp.csc_matrix(A)
        single = np.diff(C.indptr) == 1
        value, row = np.zeros(n), np.full(n, -1)
        value[single], row[single] = C.data[C.indptr[:-1][single]], C.indices[C.indptr[:-1][single]]
        unit = single & (np.abs(value) == 1.0) & (problem.c == 0) & (row < main)
        own = np.abs(A[:main][:, np.flatnonzero(~unit)].data)
        own = own[own > 0]
        gm = float(np.exp(np.mean(np.log(own)))) if own.size else 1.0
        lo, hi = A_BAND
        alpha = (_pow2_near_reciprocal(gm / lo) if gm < lo else _pow2_near_reciprocal(gm / hi) if gm > hi else 1.0)
        rows = np.ones(m)
        rows[:main] = alpha
        nb = float(np.max(np.abs(rows * problem.b), initial=0.0))
        nc = float(np.max(np.abs(problem.c), initial=0.0))
        beta = max(_pow2_near_reciprocal(nb), 1.0) if 0.0 < nb < 1.0 else 1.0
        gamma = max(_pow2_near_reciprocal(nc / C_FLOOR[1]), 1.0) if 0.0 < nc < C_FLOOR[1] else 1.0
        return cls(alpha, beta, gamma, rows, np.where(unit, 1.0 / alpha, 1.0))

    @property
    def identity(self) -> bool:
        return self.alpha == self.beta == self.gamma == 1.0

    def problem(self, problem):
        """The normalised problem (the objective constant scaled with the objective)."""
        b, g, R, C = self.beta, self.gamma, self.rows, self.columns
        return dataclasses.replace(problem, A=sp.csr_matrix(sp.diags(R) @ problem.A @ sp.diags(C)),
                                   b=problem.b * (b * R), c=problem.c * (g * C), c0=problem.c0 * g * b,
                                   presolve=dict(problem.presolve))

    def result(self, result, problem):
        """The normalised problem's result in the units of ``problem``: x = C x̂ / beta,
        y = R ŷ / gamma, s = C⁻¹ ŝ / gamma."""
        b, g, R, C = self.beta, self.gamma, self.rows, self.columns
        return _unscaled(result, problem, lambda x: C * x / b, lambda y: R * y / g, lambda s: s / (g * C), g * b)

    def start(self, start) -> dict:
        """A matrix-free ``start`` (a result, a checkpoint mapping or a triple (x, y, s), in the
        problem's units) in the normalised units; the regularisation's state is the normalised
        solve's already. Arrays of the wrong size pass unchanged (the solve names them)."""
        d = start_arrays(start)
        b, g, R, C = self.beta, self.gamma, self.rows, self.columns
        for key, f in (("x", b / C), ("y", g / R), ("s", g * C)):
            if d.get(key) is not None:
                v = np.asarray(d[key], dtype=np.float64)
                d[key] = v * f if v.shape == f.shape else v
        return d


#: (the presolve's, the standard form's) largest |c_j| below which c is brought up to it. HiGHS's
#: decisions on costs (dominated columns) depend on its absolute tolerance 1e-7, so the presolve
#: scales c only where it comes near that; the iteration's tests need |c| of order 1. Measured
#: (numpy64, eps 1e-8): tuff (max |c_j| = 0.005) is optimal with c brought to 2^-4, 2^-6 or 2^-8
#: and ends in numerical trouble with c brought to 1, both after HiGHS's presolve
C_FLOOR = (2.0 ** -12, 2.0 ** -4)

#: the band of a row's largest |a_ij| that the presolve's normalisation leaves alone: a row
#: outside it is brought to its nearer edge before HiGHS, whose tolerances are absolute (1e-7)
ROW_BAND = (2.0 ** -10, 2.0 ** 20)


def _to_band(v: np.ndarray, band: tuple) -> np.ndarray:
    """Powers of two that bring each v > 0 outside ``band`` to its nearer edge; 1 inside (and
    for v = 0)."""
    lo, hi = band
    out = np.ones_like(v)
    low, high = (v > 0) & (v < lo), v > hi
    out[low] = np.exp2(np.round(np.log2(lo / v[low])))
    out[high] = np.exp2(np.round(np.log2(hi / v[high])))
    return out


def general_form_factors(g: dict) -> tuple:
    """(row factors r, beta, gamma) for a general form (presolve.general_form): rows whose
    largest |a_ij| is outside :data:`ROW_BAND` brought to its edge, then all rows by the power
    of two that brings the geometric mean of |a_ij| into :data:`A_BAND`; the bounds times beta
    (x̂ = beta x) and c times gamma, which bring a largest finite bound and a largest |c_j| below
    1 up to 1 -- the normalisation of :class:`Units`, for the general form."""
    A = sp.csr_matrix(abs(sp.csr_matrix(g["A"], dtype=np.float64)))
    A.eliminate_zeros()
    m = A.shape[0]
    big = np.zeros(m)
    rows = np.flatnonzero(np.diff(A.indptr))
    if rows.size:
        big[rows] = np.maximum.reduceat(A.data, A.indptr[rows])
    r = _to_band(big, ROW_BAND)
    scaled = (sp.diags(r) @ A).data
    gm = float(np.exp(np.mean(np.log(scaled)))) if scaled.size else 1.0
    r *= float(_to_band(np.array([gm]), A_BAND)[0])
    finite = [np.abs(v[np.isfinite(v)]) for v in (r * g["row_lower"], r * g["row_upper"], g["col_lower"],
                                                   g["col_upper"])]
    nb = max((float(v.max()) for v in finite if v.size), default=0.0)
    nc = float(np.max(np.abs(g["c"]), initial=0.0))
    beta = max(_pow2_near_reciprocal(nb), 1.0) if 0.0 < nb < 1.0 else 1.0
    gamma = max(_pow2_near_reciprocal(nc / C_FLOOR[0]), 1.0) if 0.0 < nc < C_FLOOR[0] else 1.0
    return r, beta, gamma
