"""Presolve and postsolve with HiGHS (beyond the papers; ``solve(..., presolve=True)``).

Real interior point codes do not iterate on the LP as the user wrote it: a presolve first
removes what can be decided without iterating (singleton rows and columns, doubleton
equations, dominated and duplicate columns, forcing rows, ...), and a postsolve maps the
answer back. HiGHS (``highspy``, already the project's MPS reader) exposes both; this module
puts them around the interior point methods:

1. the problem's general form (:attr:`Problem.source`, kept by :func:`~gpgpu.lp.mps.standardize`;
   a problem given in the standard form is ``A x = b, x >= 0``) goes to HiGHS as a
   minimisation;
2. HiGHS presolves it. It may decide the problem (infeasible; reduced to nothing), or
   answer "infeasible or unbounded" (then the unreduced problem is solved, whose status
   tells which);
3. the reduced LP is brought to the standard form (4.1)-(4.3) and solved by the interior
   point method asked for (Mehrotra's or the matrix-free one, any back end);
4. its point -- the reduced LP's column values, row activities and duals (row duals
   lambda, reduced costs c - A^T lambda) -- goes to HiGHS's postsolve, which gives the
   user's columns and row duals; from them the result holds the user's standard-form point:
   ``x_std = problem.from_original(x)``, ``y`` from the row duals (a bound row x' + w = u - l
   takes min(reduced cost, 0)) and ``s = c - A^T y``.

The statuses of the reduced problem are the problem's (presolve keeps feasibility and
boundedness); a point that is not optimal (iteration limit, numerical trouble) is postsolved
too, as the best point the method had. The history, the iterations and the read-backs are
those of the reduced problem, whose objective values include the presolve's constant, so
they are the user's objective values. ``LPResult.presolve`` says what the presolve did.
"""
from __future__ import annotations

import copy
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .mehrotra import MESSAGES, STATUS, STATUS_CODES, LPResult
from .mps import Problem, quiet_highs, standardize
from .scaling import general_form_factors, objectives_divided

__all__ = ["general_form", "presolve_and_solve"]


def general_form(problem: Problem) -> dict:
    """The general form of ``problem`` (min sense): c, A (CSC), row and column bounds, offset.

    The source given to :func:`standardize` when there is one, else the standard form itself
    (rows A x = b, columns x >= 0)."""
    src = problem.source
    if src is None:
        m, n = problem.A.shape
        return {"c": problem.c.copy(), "A": problem.A.tocsc(), "row_lower": problem.b.copy(),
                "row_upper": problem.b.copy(), "col_lower": np.zeros(n), "col_upper": np.full(n, np.inf),
                "offset": problem.c0, "sense": 1}
    sense = src["sense"]
    return dict(src, c=sense * src["c"], offset=sense * src["offset"], sense=1)


def _highs(g: dict):
    import highspy

    A = g["A"].tocsc()
    m, n = A.shape
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n, m
    lp.col_cost_ = g["c"]
    lp.offset_ = g["offset"]
    inf = highspy.kHighsInf
    lp.col_lower_ = np.where(np.isfinite(g["col_lower"]), g["col_lower"], -inf)
    lp.col_upper_ = np.where(np.isfinite(g["col_upper"]), g["col_upper"], inf)
    lp.row_lower_ = np.where(np.isfinite(g["row_lower"]), g["row_lower"], -inf)
    lp.row_upper_ = np.where(np.isfinite(g["row_upper"]), g["row_upper"], inf)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = A.indptr, A.indices, A.data
    h = quiet_highs(output=True)
    fd, log_path = tempfile.mkstemp(suffix=".log", prefix="highs_")
    os.close(fd)
    try:
        # HiGHS's log, to a file, only while the model is passed: its reason for a refusal
        h.setOptionValue("log_file", log_path)
        status = h.passModel(lp)
        h.setOptionValue("log_file", "")
        try:
            log = Path(log_path).read_text(errors="replace")
        except OSError:
            log = ""
    finally:
        try:
            os.unlink(log_path)
        except OSError:
            pass
    h.setOptionValue("output_flag", False)
    if status == highspy.HighsStatus.kError:
        reasons = [ln.strip()[len("ERROR:"):].strip() for ln in log.splitlines()
                   if ln.strip().startswith("ERROR:")]
        raise ValueError("HiGHS refused the LP for its presolve: " + ("; ".join(reasons) or "it gave no reason")
                         + _largest_entry(g) + ". presolve=False solves it without HiGHS")
    return h


def _largest_entry(g: dict) -> str:
    """Where the general form's largest coefficient is, for a refusal's message."""
    A = g["A"].tocsc()
    if not A.nnz:
        return ""
    k = int(np.argmax(np.abs(A.data)))
    j = int(np.searchsorted(A.indptr, k, side="right") - 1)
    return f" (the largest coefficient: A[{int(A.indices[k])}, {j}] = {A.data[k]:g})"


def _from_highs_lp(lp, name: str) -> Problem:
    import highspy

    mat = lp.a_matrix_
    m, n = lp.num_row_, lp.num_col_
    start, index, value = (np.asarray(v) for v in (mat.start_, mat.index_, mat.value_))
    if mat.format_ == highspy.MatrixFormat.kColwise:
        A = sp.csc_matrix((value, index, start), shape=(m, n))
    else:
        A = sp.csr_matrix((value, index, start), shape=(m, n))
    return standardize(lp.col_cost_, A, lp.row_lower_, lp.row_upper_, col_lower=lp.col_lower_,
                       col_upper=lp.col_upper_, offset=lp.offset_, sense=1, name=name + " (presolved)")


def _general_duals(p: Problem, y_std: np.ndarray) -> tuple:
    """Row duals and reduced costs of the general form p.source for p's standard-form
    multipliers y_std (min sense; the rows standardize dropped get 0)."""
    g, src = p._general, p.source
    rd = np.zeros(src["A"].shape[0])
    rd[g["rows"]] = y_std[:g["rows"].size]
    cd = src["c"] - src["A"].T @ rd
    return rd, cd


def _standard_duals(p: Problem, rd: np.ndarray, cd: np.ndarray) -> tuple:
    """(y, s) of p's standard form for the general form's row duals rd and reduced costs cd
    (min sense): a kept row takes its row dual, the bound row x' + w = u - l of a variable
    min(its reduced cost, 0) (0 at its lower bound, the multiplier of u at its upper bound)."""
    if p.source is None:
        y = rd.copy()
    else:
        g = p._general
        rows, bk = g["rows"], g["bound_cols"]
        y = np.zeros(p.m)
        y[:rows.size] = rd[rows]
        # reduced cost of each general variable: a kept column's, or a row slack's (its
        # column -e_i and cost 0 give 0 - (-1) y_i)
        red = np.concatenate([cd[p._kept], y[g["ineq"]]])
        y[rows.size:] = np.minimum(red[bk], 0.0)
    return y, p.c - p.A.T @ y


def _normalised(g: dict) -> tuple:
    """(the general form HiGHS gets, row factors r, beta, gamma): rows times r, bounds times beta,
    c times gamma, the offset times gamma beta (:func:`gpgpu.lp.scaling.general_form_factors`);
    x = x̂ / beta, row duals r ŷ / gamma, reduced costs ĉd / gamma."""
    r, beta, gamma = general_form_factors(g)
    R = sp.diags(r)
    return (dict(g, c=gamma * g["c"], A=(R @ g["A"]).tocsc(), row_lower=beta * r * g["row_lower"],
                 row_upper=beta * r * g["row_upper"], col_lower=beta * g["col_lower"],
                 col_upper=beta * g["col_upper"], offset=gamma * beta * g["offset"]), r, beta, gamma)


def _in_user_objectives(res: LPResult, factor: float) -> LPResult:
    """A copy of the reduced problem's result (the method's own attributes, pcg_iterations, ...,
    kept) with its history's objectives divided by ``factor`` (the user's units) and without its
    points of the reduced problem (no start or ray for the user's)."""
    out = copy.copy(res)
    if factor != 1.0:
        out.history = [objectives_divided(e, factor) for e in res.history]
    for name in ("last_point", "stop_point"):
        if getattr(res, name, None) is not None:
            setattr(out, name, None)
    return out


def presolve_and_solve(problem: Problem, run, backend: str = "", normalize: bool = False) -> LPResult:
    """HiGHS's presolve, ``run(reduced_problem, objective_factor) -> LPResult``, HiGHS's postsolve
    (module notes); ``objective_factor`` is what the reduced problem's objective values are the
    user's times.
    ``backend`` names the back end in the results the presolve decides alone; ``normalize``
    gives HiGHS the rows, bounds and costs scaled by powers of two (:func:`_normalised`), and
    ``run`` the reduced problem in those units (its history's objectives are mapped back)."""
    import highspy

    t0 = time.perf_counter()
    sense = problem.source["sense"] if problem.source is not None else 1
    g = general_form(problem)
    given, r, beta, gamma = _normalised(g) if normalize else (g, np.ones(g["A"].shape[0]), 1.0, 1.0)
    h = _highs(given)
    h.presolve()
    pstatus = h.getModelPresolveStatus()
    P = highspy.HighsPresolveStatus
    m0, n0 = g["A"].shape
    name = pstatus.name[1:] if pstatus.name.startswith("k") else pstatus.name     # kReduced -> Reduced
    info = {"rows": (m0, m0), "columns": (n0, n0), "status": name, "seconds": time.perf_counter() - t0}

    def finish(res: LPResult) -> LPResult:
        res.presolve = info
        return res

    if pstatus == P.kInfeasible:
        code = STATUS_CODES["infeasible"]
        return finish(LPResult(status="infeasible", status_code=code,
                               message=f"{MESSAGES[code]} (HiGHS's presolve proved it)", x=None, x_std=None,
                               y=None, s=None, objective=float("nan"), iterations=0, elapsed=info["seconds"],
                               backend=backend))
    if pstatus in (P.kNotReduced, P.kUnboundedOrInfeasible, P.kNotPresolved):
        # nothing removed, "infeasible or unbounded" (the method's own tests tell which), or not
        # presolved (HiGHS declines, e.g. for a cost of 1e20, its infinity)
        res = run(problem, 1.0)
        res.message += {P.kNotReduced: " (presolve: nothing removed)",
                        P.kNotPresolved: " (HiGHS did not presolve the problem; it was solved as given)",
                        P.kUnboundedOrInfeasible: " (HiGHS's presolve found the problem infeasible or unbounded; "
                                                  "the unreduced problem was solved to tell which)"}[pstatus]
        return finish(res)
    if pstatus not in (P.kReduced, P.kReducedToEmpty):
        raise RuntimeError(f"HiGHS's presolve ended with {info['status']!r}")
    lp = h.getPresolvedLp()
    info["rows"], info["columns"] = (m0, lp.num_row_), (n0, lp.num_col_)
    if lp.num_col_ == 0:
        res = None
        xr, rowr, rdr, cdr = (np.zeros(0),) * 4
    else:
        reduced = _from_highs_lp(lp, problem.name)
        res = run(reduced, gamma * beta)
        if res.x is None:                                  # infeasible or unbounded: no point to map
            out = _in_user_objectives(res, gamma * beta)
            out.message += f" (on the presolved problem, {lp.num_row_} x {lp.num_col_})"
            return finish(out)
        xr = res.x
        A = reduced.source["A"]
        rowr = A @ xr
        rdr, cdr = _general_duals(reduced, res.y)
    sol = highspy.HighsSolution()
    sol.col_value, sol.row_value = xr, rowr
    sol.col_dual, sol.row_dual = cdr, rdr
    sol.value_valid = sol.dual_valid = True
    h.postsolve(sol)
    post = h.getSolution()
    x = np.asarray(post.col_value, dtype=np.float64) / beta
    rd = np.asarray(post.row_dual, dtype=np.float64) * (r / gamma)
    cd = np.asarray(post.col_dual, dtype=np.float64) / gamma
    if x.size != n0 or rd.size != m0:
        raise RuntimeError("HiGHS's postsolve gave no solution of the original size")
    info["seconds"] = time.perf_counter() - t0 - (res.elapsed if res is not None else 0.0)
    x_std = problem.from_original(x)
    y, s = _standard_duals(problem, rd, cd)
    objective = sense * (float(g["c"] @ x) + g["offset"])
    if res is None:
        code = 0
        return finish(LPResult(status=STATUS[code], status_code=code,
                               message="Optimal: HiGHS's presolve decided every variable (no interior "
                                       "point iteration was needed).",
                               x=x, x_std=x_std, y=y, s=s, objective=objective, iterations=0,
                               elapsed=info["seconds"], backend=backend))
    out = _in_user_objectives(res, gamma * beta)
    out.x, out.x_std, out.y, out.s, out.objective = x, x_std, y, s, objective
    out.message = res.message + f" (on the presolved problem, {lp.num_row_} x {lp.num_col_} of {m0} x {n0})"
    out.elapsed = res.elapsed + info["seconds"]
    return finish(out)
