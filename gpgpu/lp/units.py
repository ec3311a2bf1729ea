"""The LP brought into units of its own before anything else (beyond the papers).

An LP means the same in any units: multiply a column of A and its cost by E_j and divide its
bounds by E_j (x_j = E_j y_j, the variable in other units), or multiply a row and its bounds by
R_i, and the solution maps exactly. The interior point tests (6.1)-(6.3), HiGHS's presolve
(absolute tolerances of 1e-7) and float32 storage do not: they see the numbers as written. So
when the user's units put the rows or columns of A far from unit size, :class:`Lines` gives the
solve the same LP scaled geometrically (each row, then each column, divided by the geometric
mean of its largest and smallest non-zero magnitudes, the Curtis-Reid idea as interior point
codes use it, until the factors settle), and brings bounds and costs whose largest magnitude is
outside ``BOUND_BAND`` and ``COST_BAND`` to the band's nearer edge:

    Â = R A C,   row bounds 2^β R (l, u),   column bounds 2^β C⁻¹ (l, u),   ĉ = 2^γ C c,
    x = 2^-β C x̂,   row duals 2^-γ R ŷ,   reduced costs 2^-γ C⁻¹ d̂,   objective 2^-(β+γ).

Every factor is a power of two held as its exponent (applied with ``ldexp``), so the scaling
rounds nothing and a factor beyond float64's range (a coefficient of 1e-310) is no overflow.
"Far from unit size" is any line whose largest |a_ij| lies outside ``LINE_BAND``, or lines whose
largest |a_ij| spread over more than ``LINE_SPREAD`` octaves, where the geometric scaling brings
them within both (an LP that no diagonal scaling makes unit-sized, such as x1 + x2 <= 4,
x1 + 1e39 x2 <= 6, is left as written). An LP within the bands (the 42 NETLIB problems of
``gpgpu/data``: rows within 2^-14 .. 2^17, columns within 2^-8 .. 2^17, spreads at most 2^23,
bounds at most 2^23.3, costs at most 2^16.3) is solved as written, and the later normalisation
(:class:`~gpgpu.lp.scaling.Units`: A's geometric mean, b and c into their bands) and HiGHS's
presolve see it as before. :mod:`gpgpu.lp.certificate` checks the answer in these units.

The scaled LP is built by :func:`~gpgpu.lp.mps.standardize` from the scaled general form, so its
standard form has the user's structure (slacks, shifts, splits and bound rows in the same places)
and each of its rows and columns is the user's times a power of two: :meth:`Lines.result` maps the
answer back entry by entry.
"""
from __future__ import annotations

import copy
import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .mps import Problem, standardize

__all__ = ["Lines", "LINE_BAND", "LINE_SPREAD", "BOUND_BAND", "COST_BAND", "unit_sized"]

#: log2 of the band of a row's or column's largest |a_ij| within which the LP's lines count as
#: unit-sized (HiGHS's presolve tolerances are absolute, float32 holds 2^-126 .. 2^128; the 42
#: NETLIB problems of gpgpu/data lie within 2^-14 .. 2^17)
LINE_BAND = (-16, 20)
#: the most octaves the rows' (or the columns') largest |a_ij| may spread over
LINE_SPREAD = 24
#: log2 of the band of the largest finite bound (after the lines' scaling) outside which the
#: bounds are brought to the band's nearer edge: below it, the normalisation that follows would
#: not reach them (its factors go up to 2^1000, a bound of 1e-310 needs more); above it, x of
#: that size leaves the float32 factor of A D² Aᵀ no room (the 42 NETLIB problems' bounds are at
#: most 2^23.3, forplan)
BOUND_BAND = (-100, 24)
#: the same for the largest |c_j|; large costs are left to the float32 checks, which name them
#: (the NETLIB costs are at most 2^16.3, gfrd-pnc)
COST_BAND = (-100, math.inf)
#: the most passes of row then column scaling (the factors stop changing after a few)
PASSES = 20


def _log2_entries(A) -> tuple:
    """(rows, columns, log2 |a_ij|) of the non-zeros of ``A``."""
    M = sp.coo_matrix(A)
    keep = M.data != 0
    return M.row[keep], M.col[keep], np.log2(np.abs(M.data[keep]))


def _line_extremes(index, values, size) -> tuple:
    """(largest, smallest) of ``values`` grouped by ``index`` (-inf, +inf for an empty line)."""
    big, small = np.full(size, -np.inf), np.full(size, np.inf)
    np.maximum.at(big, index, values)
    np.minimum.at(small, index, values)
    return big, small


def unit_sized(A) -> bool:
    """Whether ``A``'s lines are unit-sized: every row's and column's largest |a_ij| in
    LINE_BAND, spreading over at most LINE_SPREAD octaves (module notes)."""
    rows, cols, logs = _log2_entries(A)
    return _unit_sized(rows, cols, logs, *A.shape)


def _unit_sized(rows, cols, logs, m, n) -> bool:
    """Whether every line's largest |a_ij| lies in LINE_BAND and they spread over at most
    LINE_SPREAD octaves, rows and columns apart."""
    lo, hi = LINE_BAND
    for index, size in ((rows, m), (cols, n)):
        big = _line_extremes(index, logs, size)[0]
        big = big[np.isfinite(big)]
        if big.size and (big.min() < lo or big.max() > hi or big.max() - big.min() > LINE_SPREAD):
            return False
    return True


def _geometric_exponents(rows, cols, logs, m, n) -> tuple:
    """Integer exponents (e_r, e_c) such that 2^(e_r[i] + e_c[j]) |a_ij| has rows, then columns,
    whose largest and smallest magnitudes are about reciprocal (passes until none changes)."""
    er, ec = np.zeros(m, dtype=np.int64), np.zeros(n, dtype=np.int64)
    for _ in range(PASSES):
        changed = False
        for index, size, own in ((rows, m, er), (cols, n, ec)):
            big, small = _line_extremes(index, logs + er[rows] + ec[cols], size)
            step = np.zeros(size, dtype=np.int64)
            full = np.isfinite(big)
            step[full] = -np.round(0.5 * (big[full] + small[full])).astype(np.int64)
            own += step
            changed |= bool(step.any())
        if not changed:
            break
    return er, ec


def _value_exponent(values, band) -> int:
    """The exponent that brings the largest finite |v| to the nearer edge of ``band`` (log2) when
    it lies outside; 0 otherwise (and for no finite non-zero value)."""
    v = np.abs(np.concatenate([np.ravel(x) for x in values]))
    v = v[np.isfinite(v) & (v > 0)]
    if not v.size:
        return 0
    top = float(np.log2(v.max()))
    lo, hi = band
    return int(np.round(lo - top)) if top < lo else int(np.round(hi - top)) if top > hi else 0


def _general_form(problem) -> dict:
    """The general form of ``problem`` as :func:`standardize` got it (or, for a problem given in
    the standard form, A x = b, x >= 0)."""
    if problem.source is not None:
        return problem.source
    n = problem.n
    return {"c": problem.c, "A": problem.A, "row_lower": problem.b, "row_upper": problem.b,
            "col_lower": np.zeros(n), "col_upper": np.full(n, np.inf), "offset": problem.c0, "sense": 1}


@dataclass(frozen=True)
class Lines:
    """The powers of two of the module notes, as exponents: ``rows`` (one a row of the general
    form), ``columns`` (one a column), ``bounds`` (β: x̂ = 2^β x) and ``costs`` (γ)."""

    rows: np.ndarray
    columns: np.ndarray
    bounds: int = 0
    costs: int = 0

    @classmethod
    def of(cls, problem) -> "Lines | None":
        """The LP's units (module notes), or None when it is written in unit-sized ones."""
        g = _general_form(problem)
        m, n = g["A"].shape
        rows, cols, logs = _log2_entries(g["A"])
        er, ec = np.zeros(m, dtype=np.int64), np.zeros(n, dtype=np.int64)
        if not _unit_sized(rows, cols, logs, m, n):
            er, ec = _geometric_exponents(rows, cols, logs, m, n)
            if not _unit_sized(rows, cols, logs + er[rows] + ec[cols], m, n):
                er[:], ec[:] = 0, 0        # no diagonal scaling makes it unit-sized: left as written
        beta = _value_exponent([np.ldexp(g["row_lower"], er), np.ldexp(g["row_upper"], er),
                                np.ldexp(g["col_lower"], -ec), np.ldexp(g["col_upper"], -ec)], BOUND_BAND)
        gamma = _value_exponent([np.ldexp(g["c"], ec)], COST_BAND)
        if not (er.any() or ec.any() or beta or gamma):
            return None
        return cls(er, ec, beta, gamma)

    def problem(self, problem) -> "Problem | None":
        """The LP in these units, with the user's structure; None when the scaling would change
        that structure (a bound carried past 1e30, which standardize reads as infinite)."""
        g = _general_form(problem)
        er, ec, beta, gamma = self.rows, self.columns, self.bounds, self.costs
        M = sp.coo_matrix(g["A"])
        A = sp.csc_matrix((np.ldexp(M.data, er[M.row] + ec[M.col]), (M.row, M.col)), shape=M.shape)
        c = np.ldexp(g["c"], ec + gamma)
        offset = float(np.ldexp(g["offset"], beta + gamma))
        if problem.source is None:
            return dataclasses.replace(problem, A=A, b=np.ldexp(problem.b, er + beta), c=c, c0=offset,
                                       presolve=dict(problem.presolve))
        scaled = standardize(c, A, np.ldexp(g["row_lower"], er + beta), np.ldexp(g["row_upper"], er + beta),
                             col_lower=np.ldexp(g["col_lower"], beta - ec),
                             col_upper=np.ldexp(g["col_upper"], beta - ec),
                             offset=offset, sense=g["sense"], name=problem.name, warnings=problem.warnings,
                             integer_columns=problem.integer_columns)
        if not _same_structure(problem, scaled):
            return None
        scaled.presolve = dict(problem.presolve)
        return scaled

    def exponents(self, problem) -> tuple:
        """(e_x, e_y) of ``problem``'s standard form: x_std = 2^(e_x - β) x̂_std, y = 2^(e_y - γ)
        ŷ, s = 2^(-e_x - γ) ŝ (module notes)."""
        if problem.source is None:
            return self.columns.copy(), self.rows.copy()
        g = problem._general
        kept_rows = g["rows"]
        # the general variables: the kept columns, then the slacks of the inequality rows
        ev = np.concatenate([self.columns[problem._kept], -self.rows[kept_rows][g["ineq"]]])
        ex = np.zeros(problem.n, dtype=np.int64)
        ex[g["pos"]] = ev
        free = g["neg"] >= 0
        ex[g["neg"][free]] = ev[free]
        bound = g["wcol"] >= 0
        ex[g["wcol"][bound]] = ev[bound]
        ey = np.concatenate([self.rows[kept_rows], -ev[g["bound_cols"]]])
        return ex, ey

    def result(self, result, scaled, problem):
        """``result`` of the ``scaled`` problem in the units of ``problem``: its points, the
        source variables and objective recomputed, the history's objectives."""
        ex, ey = self.exponents(problem)
        beta, gamma = self.bounds, self.costs

        def point(x, y, s):
            with np.errstate(over="ignore"):
                return (np.ldexp(x, ex - beta), np.ldexp(y, ey - gamma), np.ldexp(s, -ex - gamma))

        out = copy.copy(result)
        out.history = [objectives_scaled(e, -(beta + gamma)) for e in result.history]
        for name in ("last_point", "stop_point"):
            if getattr(result, name, None) is not None:
                setattr(out, name, point(*getattr(result, name)[:3]))
        if result.x_std is not None:
            with np.errstate(over="ignore"):
                out.x_std, out.y, out.s = point(result.x_std, result.y, result.s)
            out.x = problem.to_original(out.x_std)
            out.objective = problem.original_objective(out.x_std)
            beyond = [name for name, v in (("x", out.x_std), ("y", out.y), ("s", out.s)) if not np.isfinite(v).all()]
            if beyond:
                out.message += (f" In the problem's own units {' and '.join(beyond)} "
                                f"{'hold' if len(beyond) > 1 else 'holds'} values beyond float64's range (inf): "
                                "the LP's rows or columns differ from unit size by more than 2^1000.")
        return out

    def start(self, start, problem):
        """A matrix-free ``start`` (a result, a checkpoint mapping or a triple (x, y, s) of
        ``problem``) in these units; arrays of another size pass unchanged (the solve names
        them)."""
        from .scaling import start_arrays

        d = start_arrays(start)
        ex, ey = self.exponents(problem)
        for key, e in (("x", self.bounds - ex), ("y", self.costs - ey), ("s", ex + self.costs)):
            if d.get(key) is not None:
                v = np.asarray(d[key], dtype=np.float64)
                d[key] = np.ldexp(v, e) if v.shape == e.shape else v
        return d

    def callback(self, callback):
        """The callback of the scaled problem's solve: it hands the user's objective values on."""
        shift = -(self.bounds + self.costs)
        if callback is None or shift == 0:
            return callback
        return lambda entry: callback(objectives_scaled(entry, shift))


def objectives_scaled(entry: dict, exponent: int) -> dict:
    """A history entry with the values in the objective's units, its primal and dual objectives
    and mu = xᵀs / n, times 2^``exponent`` (a copy); the relative tests (6.1)-(6.3) are unitless."""
    if not exponent:
        return dict(entry)
    return dict(entry, **{k: float(np.ldexp(entry[k], exponent)) for k in ("primal_objective", "dual_objective", "mu")
                          if entry.get(k) is not None})


def _same_structure(a: Problem, b: Problem) -> bool:
    """Whether two standardized problems have the same standard form's pattern (so that their
    points map entry by entry)."""
    if a.A.shape != b.A.shape or a.A.nnz != b.A.nnz or a.status != b.status:
        return False
    ga, gb = a._general, b._general
    return all(np.array_equal(ga[k], gb[k]) for k in ("rows", "ineq", "kind", "pos", "neg", "wcol", "bound_cols")) \
        and np.array_equal(a._kept, b._kept)
