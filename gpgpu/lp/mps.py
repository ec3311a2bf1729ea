"""Reading an LP and bringing it to the standard form (4.1)-(4.3) of paper 000.

Algorithm 3 of paper 000 (Mehrotra's predictor-corrector method, [Meh92], [Wri97]) is written
for the standard form

    min c^T x   s.t.   A x = b,   x >= 0                                (4.1)-(4.3)

with ``A`` kept sparse (``scipy.sparse``) until a dense method needs it
(:meth:`Problem.dense_A`, which first checks that the dense matrix fits). NETLIB problems come
in MPS files, in the general form

    min / max  c^T x + c0   s.t.   row_lower <= A x <= row_upper,   col_lower <= x <= col_upper,

which HiGHS (``highspy``) reads. :func:`standardize` turns the general form into the standard
form, after a light presolve:

* a column with ``lb == ub`` is fixed and substituted out (its cost goes to the constant);
* an empty column is fixed at the bound its cost prefers; where that bound is infinite and the
  cost non-zero it is fixed at 0 and ``presolve["unbounded_column"]`` holds (column, cost):
  the problem is unbounded if the rest of it is feasible, which :func:`gpgpu.lp.solve` decides
  by solving the rest (infeasible when the rest is);
* a free row (both row bounds infinite) is dropped; an empty row is dropped, and the problem is
  infeasible when ``0`` violates its bounds;
* a bound that no finite value meets -- a row's upper bound -inf or lower bound +inf, a
  column's lower bound +inf or upper bound -inf (bounds beyond +-1e30 count as infinite) --
  makes the problem infeasible, as a lower bound above the upper one does; the message names
  the row or column.

Then every inequality row ``rl <= a^T x <= ru`` gets a slack ``v`` with ``a^T x - v = 0`` and
``rl <= v <= ru``, and every variable (original or slack) with bounds ``[l, u]`` becomes
non-negative: a finite ``l`` is shifted away (``v = l + x'``), an upper bound alone is reflected
(``v = u - x'``), a free variable is split (``v = x+ - x-``), and a finite ``u`` on top of a
finite ``l`` adds the row ``x' + w = u - l`` with a new ``w >= 0`` (the algorithm has no other
way to hold an upper bound). A maximisation is flipped to a minimisation. The constant term is
kept in ``Problem.c0`` so that ``c^T x + c0`` is the objective (in the minimisation sense).
"""
from __future__ import annotations

import io
import math
import os
import re
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np
import scipy.sparse as sp

__all__ = ["Problem", "read_mps", "standardize", "available_memory", "check_mps_numbers", "quiet_highs"]

# Column kinds of the map from standard-form variables back to the original ones.
_SHIFT, _REFLECT, _FREE = 0, 1, 2


@dataclass
class Problem:
    """A linear program in the standard form (4.1)-(4.3) of paper 000, with the map back to its source.

    ``min c^T x + c0`` s.t. ``A x = b``, ``x >= 0``: the form Algorithm 3 of paper 000 (Mehrotra's
    method) and paper 002's matrix-free method iterate on, with A kept sparse (:meth:`dense_A`
    makes it dense after checking that it fits). Build one with :meth:`from_arrays` (the standard
    form given), :meth:`from_inequalities` (scipy.linprog's form), :func:`read_mps` or
    :func:`standardize`; those keep the map back to the source's variables (:meth:`to_original`,
    :meth:`original_objective`) and the source itself (``source``).

    Parameters
    ----------
    A : scipy.sparse matrix or array_like, shape (m, n)
        The constraint matrix of (4.2), stored as CSR, float64.
    b : array_like, shape (m,)
        The right-hand side of (4.2).
    c : array_like, shape (n,)
        The costs of (4.1), minimised.
    c0 : float
        The objective constant: the standard-form objective is ``c @ x + c0``.
    name : str
        The problem's name.
    original_size : (int, int)
        (rows, columns) of the source LP as HiGHS reads it (Table 3 of 000 counts one row more).
    sense : {1, -1}
        1 when the source minimises, -1 when it maximises (its objective is ``sense * (c @ x + c0)``).
    status : str or None
        None, or "infeasible" / "unbounded" when the presolve already decided the problem.
    message : str
        Why the presolve decided it.
    presolve : dict
        Counts of what the presolve removed and the conversion added.
    warnings : list of str
        HiGHS's warnings while reading, and :func:`read_mps`'s and :func:`standardize`'s own.
    integer_columns : tuple of str
        The columns whose integrality (or semi-continuity) was dropped: the LP relaxation is solved.
    source : dict or None
        The general form given to :func:`standardize`, before any presolve.

    Raises
    ------
    ValueError
        Sizes that disagree, data that is not real and finite, or a constant ``c0`` that is not finite.

    Examples
    --------
    >>> import numpy as np
    >>> from gpgpu import lp
    >>> p = lp.Problem.from_arrays(np.array([[1.0, 1.0]]), [2.0], [1.0, 3.0])
    >>> p.standard_size, p.A.nnz
    ((1, 2), 2)
    >>> r = lp.solve(p)
    >>> r.status, round(r.objective, 3)
    ('optimal', 2.0)
    """

    A: np.ndarray = field(repr=False)
    b: np.ndarray = field(repr=False)
    c: np.ndarray = field(repr=False)
    c0: float = 0.0
    name: str = "lp"
    original_size: tuple = None
    sense: int = 1
    status: Optional[str] = None
    message: str = ""
    presolve: dict = field(default_factory=dict, repr=False)
    warnings: list = field(default_factory=list, repr=False)
    integer_columns: tuple = field(default=(), repr=False)
    # map back: x_orig = fixed (removed columns), x_orig[kept] = shift + sign * x[pos] - x[neg]
    _n_orig: int = field(default=None, repr=False)
    _fixed: np.ndarray = field(default=None, repr=False)
    _kept: np.ndarray = field(default=None, repr=False)
    _shift: np.ndarray = field(default=None, repr=False)
    _sign: np.ndarray = field(default=None, repr=False)
    _pos: np.ndarray = field(default=None, repr=False)
    _neg: np.ndarray = field(default=None, repr=False)   # -1 where the variable is not split
    _general: dict = field(default=None, repr=False)     # presolved general form (from_original)
    #: the general form given to :func:`standardize` (c, A, row/column bounds, offset, sense),
    #: before any presolve: what ``solve(..., presolve=True)`` gives HiGHS's presolve
    source: dict = field(default=None, repr=False)

    def __post_init__(self):
        self.A = _as_sparse(self.A, "A").tocsr()
        self.b = _real_vector(self.b, "b")
        self.c = _real_vector(self.c, "c")
        self.c0 = float(self.c0)
        m, n = self.A.shape
        if self.b.shape != (m,) or self.c.shape != (n,):
            raise ValueError(f"A is {m}x{n} but b has {self.b.size} and c has {self.c.size} "
                             "entries")
        if not np.isfinite(self.c0):
            raise ValueError(f"the objective constant c0 = {self.c0} is not finite")
        if self.original_size is None:
            self.original_size = (m, n)
        if self._n_orig is None:               # standard form given directly: identity map
            self._n_orig = n
            self._fixed = np.zeros(n)
            self._kept = np.arange(n)
            self._shift = np.zeros(n)
            self._sign = np.ones(n)
            self._pos = np.arange(n)
            self._neg = -np.ones(n, dtype=np.int64)

    # ------------------------------------------------------------------ sizes
    @property
    def m(self) -> int:
        """Rows of the standard form."""
        return self.A.shape[0]

    @property
    def n(self) -> int:
        """Columns of the standard form."""
        return self.A.shape[1]

    @property
    def standard_size(self) -> tuple:
        """(m, n) of the standard form (4.1)-(4.3)."""
        return self.A.shape

    def dense_A(self, dtype=np.float64, copies: float = 1.0, extra_bytes: int = 0,
                method: str = "the dense method") -> np.ndarray:
        """A as a dense array of ``dtype``, after checking that it fits in memory.

        ``copies`` dense m x n arrays of ``dtype`` plus ``extra_bytes`` (for example the m x m
        normal-equation matrix and its factor) must fit in the memory the system says is
        available; otherwise ``MemoryError`` names the sizes, so that nothing is allocated
        before the answer is known.
        """
        m, n = self.A.shape
        need = int(copies * m * n * np.dtype(dtype).itemsize) + int(extra_bytes)
        avail = available_memory()
        if avail is not None and need > avail:
            raise MemoryError(
                f"{self.name}: {method} needs the {m} x {n} constraint matrix dense, and with the "
                f"m x m normal equations about {need / 2**30:.2f} GiB, more than the "
                f"{avail / 2**30:.2f} GiB of memory available ({self.A.nnz} non-zeros: "
                f"{100 * self.A.nnz / max(m * n, 1):.3g}% dense). The problem is too large for "
                "the dense normal-equation method of paper 000.")
        return self.A.astype(dtype).toarray()

    # ------------------------------------------------------------------ maps
    def to_original(self, x_std) -> np.ndarray:
        """The source variables for a standard-form point ``x_std``."""
        x_std = np.asarray(x_std, dtype=np.float64)
        if x_std.shape != (self.n,):
            raise ValueError(f"x_std has shape {x_std.shape}, expected ({self.n},)")
        x = self._fixed.copy()
        v = self._shift + self._sign * x_std[self._pos]
        split = self._neg >= 0
        v[split] -= x_std[self._neg[split]]
        x[self._kept] = v
        return x

    def objective(self, x_std) -> float:
        """The standard-form objective ``c^T x + c0`` (4.1), constant included."""
        return float(self.c @ np.asarray(x_std, dtype=np.float64) + self.c0)

    def original_objective(self, x_std) -> float:
        """The source objective (its own sense, constant included) at ``x_std``."""
        return self.sense * self.objective(x_std)

    def from_original(self, x) -> np.ndarray:
        """A standard-form point for source variables ``x`` (slacks included).

        ``A @ from_original(x) == b`` when ``x`` satisfies the source constraints; the entries
        are >= 0 when it satisfies them as inequalities too. For problems built with
        :meth:`from_arrays` this is the identity.
        """
        x = np.asarray(x, dtype=np.float64)
        g = self._general
        if g is None:
            return x.copy()
        xk = x[self._kept]
        v = np.concatenate([xk, (g["A"] @ xk)[g["ineq"]]])   # kept columns, then row slacks
        out = np.zeros(self.n)
        kind, lo, up, pos = g["kind"], g["lo"], g["up"], g["pos"]
        shift, refl, free = kind == _SHIFT, kind == _REFLECT, kind == _FREE
        out[pos[shift]] = v[shift] - lo[shift]
        w = shift & (g["wcol"] >= 0)
        out[g["wcol"][w]] = up[w] - v[w]
        out[pos[refl]] = up[refl] - v[refl]
        out[pos[free]] = np.maximum(v[free], 0.0)
        out[g["neg"][free]] = np.maximum(-v[free], 0.0)
        return out

    def marginals(self, y, s) -> dict:
        """The source LP's marginals (sensitivities of its objective, its own sense) at a
        standard-form dual point (``y``, ``s``), as scipy's HiGHS methods give them.

        Returns ``{"rows": ..., "lower": ..., "upper": ...}``: for each source row, the
        objective's derivative with respect to the row's bound that holds it (an equality's
        right-hand side, an inequality's finite side); for each source variable, with respect
        to its lower bound (>= 0 when minimising) and its upper bound (<= 0). Derived from the
        standard form's Lagrangian, cᵀx - yᵀ(A x - b) - sᵀx: a row's marginal is its dual
        y_i (a slack's column, -e_i with cost 0, gives y_i = z_lo - z_up of the slack's
        bounds, so an inequality's y_i is its bound's multiplier with its sign); a shifted
        variable's lower marginal is s of its column and its upper marginal -s of its bound
        row's slack (= that row's y); a reflected one's upper marginal is -s of its column; a
        free one has none. A column the light presolve removed (fixed, or empty at a bound)
        takes its reduced cost c_j - a_jᵀy, its positive part at the lower bound and its
        negative part at the upper; a removed row (free or empty) has marginal 0. A problem
        built by :meth:`from_arrays` is its own source: rows y, lower s, upper 0.
        """
        y = np.asarray(y, dtype=np.float64)
        s = np.asarray(s, dtype=np.float64)
        if y.shape != (self.m,) or s.shape != (self.n,):
            raise ValueError(f"marginals: y and s must have shapes ({self.m},) and ({self.n},) (the standard "
                             f"form's), got {y.shape} and {s.shape}")
        g = self._general
        if g is None:
            return {"rows": y.copy(), "lower": s.copy(), "upper": np.zeros(self.n)}
        m0, n0 = self.original_size
        rows = np.zeros(m0)
        rows[g["rows"]] = y[:g["rows"].size]             # the kept rows come first, in order
        lower, upper = np.zeros(n0), np.zeros(n0)
        nk = self._kept.size
        kind, pos, wcol = g["kind"][:nk], g["pos"][:nk], g["wcol"][:nk]
        kept_lower, kept_upper = np.zeros(nk), np.zeros(nk)
        shift, refl = kind == _SHIFT, kind == _REFLECT
        kept_lower[shift] = s[pos[shift]]
        bounded = shift & (wcol >= 0)
        kept_upper[bounded] = -s[wcol[bounded]]
        kept_upper[refl] = -s[pos[refl]]
        lower[self._kept], upper[self._kept] = kept_lower, kept_upper
        removed = np.setdiff1d(np.arange(n0), self._kept)
        if removed.size:
            src = self.source
            reduced = self.sense * src["c"][removed] - src["A"][:, removed].T @ rows
            lower[removed], upper[removed] = np.maximum(reduced, 0.0), np.minimum(reduced, 0.0)
        return {"rows": self.sense * rows, "lower": self.sense * lower, "upper": self.sense * upper}

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_arrays(cls, A, b, c, c0=0.0, name="lp") -> "Problem":
        """A problem given directly in the standard form (4.1)-(4.3) (A dense or scipy.sparse)."""
        return cls(A=A, b=b, c=c, c0=c0, name=name)

    @classmethod
    def from_inequalities(cls, c, A_ub=None, b_ub=None, *, A_eq=None, b_eq=None, bounds=(0, None),
                          c0=0.0, maximize=False, name="lp") -> "Problem":
        """``min c^T x`` s.t. ``A_ub x <= b_ub``, ``A_eq x = b_eq``, bounds (as scipy.linprog).

        ``bounds`` is one ``(lb, ub)`` pair for all variables or one per variable; ``None``
        means infinite (``bounds=None``: (0, None), as scipy). The problem goes through
        :func:`standardize`. A matrix without its right-hand side (or the reverse), a right-hand
        side of another length than the matrix's rows, or bounds of another shape is a
        ValueError naming it.
        """
        c = _real_vector(c, "c")
        n = c.size
        blocks, lo, up = [], [], []
        for A_part, b_part, names in ((A_ub, b_ub, ("A_ub", "b_ub")), (A_eq, b_eq, ("A_eq", "b_eq"))):
            if (A_part is None) != (b_part is None):
                given, missing = names if b_part is None else names[::-1]
                raise ValueError(f"from_inequalities: {given} is given without {missing}: pass both or neither")
            if A_part is None:
                continue
            A_part = _as_sparse(A_part, names[0], n)
            rhs = _real_vector(b_part, names[1], allow_inf=names[1] == "b_ub")
            if rhs.size != A_part.shape[0]:
                raise ValueError(f"from_inequalities: {names[1]} has {rhs.size} entries, {names[0]} has "
                                 f"{A_part.shape[0]} rows: one right-hand side a row")
            blocks.append(A_part)
            lo.append(np.full(rhs.size, -np.inf) if names[1] == "b_ub" else rhs)
            up.append(rhs)
        A = sp.vstack(blocks, format="csc") if blocks else sp.csc_matrix((0, n))
        if bounds is None:             # scipy's default: x >= 0
            bounds = (0, None)
        try:
            bounds = list(bounds)
            if len(bounds) == 2 and not isinstance(bounds[0], (tuple, list, np.ndarray)):
                bounds = [bounds] * n
            pairs = [tuple(bd) for bd in bounds]
            if len(pairs) != n or any(len(bd) != 2 for bd in pairs):
                raise ValueError
            cl = np.array([-np.inf if bd[0] is None else bd[0] for bd in pairs], dtype=np.float64)
            cu = np.array([np.inf if bd[1] is None else bd[1] for bd in pairs], dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"from_inequalities: bounds must be one (lb, ub) pair for all variables or "
                             f"{n} such pairs, one per entry of c (None: no bound), got {bounds!r}") from None
        return standardize(c, A, np.concatenate(lo) if lo else np.zeros(0),
                           np.concatenate(up) if up else np.zeros(0), col_lower=cl, col_upper=cu, offset=c0,
                           sense=-1 if maximize else 1, name=name)


# ---------------------------------------------------------------------- helpers
def available_memory() -> int | None:
    """Bytes of memory the system can give now (Linux: MemAvailable), or None if unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def _real_vector(v, name, allow_inf=False) -> np.ndarray:
    arr = np.asarray(v)
    if np.iscomplexobj(arr) or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValueError(f"{name}: expected real numbers, got dtype {arr.dtype}")
    arr = np.ascontiguousarray(arr, dtype=np.float64).ravel()
    bad = np.isnan(arr) if allow_inf else ~np.isfinite(arr)
    if bad.any():
        raise ValueError(f"{name}: entry {int(np.flatnonzero(bad)[0])} is {arr[bad][0]}; "
                         "LP data must be finite")
    return arr


def _as_sparse(A, name, n=None):
    """A real, finite 2-D matrix as scipy.sparse CSC (float64, explicit zeros removed)."""
    if sp.issparse(A):
        M = sp.csc_matrix(A)
    else:
        arr = np.asarray(A)
        if np.iscomplexobj(arr) or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
            raise ValueError(f"{name}: expected a real matrix, got dtype {arr.dtype}")
        if arr.ndim == 1 and n is not None and arr.size == n:
            arr = arr.reshape(1, n)
        if arr.ndim != 2:
            raise ValueError(f"{name}: expected a 2-D matrix, got shape {arr.shape}")
        M = sp.csc_matrix(arr.astype(np.float64, copy=False))
    if np.iscomplexobj(M.data):
        raise ValueError(f"{name}: complex values are not supported")
    M = M.astype(np.float64)
    if M.nnz and not np.all(np.isfinite(M.data)):
        M.sort_indices()
        k = int(np.flatnonzero(~np.isfinite(M.data))[0])
        col = int(np.searchsorted(M.indptr, k, side="right") - 1)
        raise ValueError(f"{name}: contains NaN or infinity ({name}[{int(M.indices[k])}, {col}] = {M.data[k]}); "
                         "LP data must be finite (a value beyond float64's range, |a| > 1.8e308, reads as "
                         "infinity)")
    M.eliminate_zeros()
    M.sort_indices()
    if n is not None and M.shape[1] != n:
        raise ValueError(f"{name}: has {M.shape[1]} columns, c has {n} entries")
    return M


# ---------------------------------------------------------------------- conversion
def standardize(c, A, row_lower, row_upper, *, col_lower, col_upper, offset=0.0, sense=1,
                name="lp", warnings=(), integer_columns=()) -> Problem:
    """Bring a general-form LP to the standard form (4.1)-(4.3) of paper 000.

    ``min/max c^T x + offset`` s.t. ``row_lower <= A x <= row_upper``, ``col_lower <= x <=
    col_upper`` becomes ``min c^T x + c0`` s.t. ``A x = b``, ``x >= 0``, the form Algorithm 3 of
    paper 000 is written for: after a light presolve (fixed and empty columns, free and empty rows)
    each inequality row gets a slack, each variable is shifted, reflected or split, and each finite
    upper bound on top of a finite lower bound gets a row of its own (the module notes say how).
    A is kept sparse throughout. Infinite bounds are +-inf (beyond +-1e30 counts as infinite); a
    bound that no finite value meets, or crossed bounds, make the problem infeasible.

    Parameters
    ----------
    c : array_like
        The costs, one per column of A.
    A : array_like or scipy.sparse matrix
        The constraint matrix.
    row_lower : array_like
        The rows' lower bounds (-inf: none).
    row_upper : array_like
        The rows' upper bounds (+inf: none).
    col_lower : array_like
        The variables' lower bounds (-inf: none).
    col_upper : array_like
        The variables' upper bounds (+inf: none).
    offset : float
        The objective constant.
    sense : {1, -1}
        1 to minimise, -1 to maximise.
    name : str
        The problem's name.
    warnings : sequence of str
        Warnings for the problem to carry (:func:`read_mps`'s).
    integer_columns : sequence of str
        The columns whose integrality was dropped (:func:`read_mps`'s).

    Returns
    -------
    Problem
        With ``status`` "infeasible" and a ``message`` naming the row or column when the presolve
        already decided it (``solve`` then answers without iterating).

    Raises
    ------
    ValueError
        Sizes that disagree, NaN or an infinite coefficient, ``sense`` not 1 or -1, or an offset
        that is not finite.

    Examples
    --------
    >>> import numpy as np
    >>> from gpgpu import lp
    >>> p = lp.standardize([1, 2], [[1, 1]], [1], [np.inf], col_lower=[0, 0], col_upper=[np.inf, 4])
    >>> p.standard_size, p.presolve["slacks"], p.presolve["upper_bound_rows"]
    ((2, 4), 1, 1)
    >>> round(lp.solve(p).objective, 3)
    1.0
    """
    c = _real_vector(c, "c")
    n0 = c.size
    A = _as_sparse(A, "A", n0)
    m0 = A.shape[0]
    rl, ru, cl, cu, raw = _bounds(A.shape, row_lower, row_upper, col_lower, col_upper)
    if sense not in (1, -1):
        raise ValueError(f"sense must be 1 or -1, got {sense!r}")
    if not np.isfinite(offset):
        raise ValueError(f"the objective constant {offset} is not finite")
    warnings = list(warnings) + _infinite_bounds(raw)
    source = {"c": c.copy(), "A": A.tocsc(copy=True), "row_lower": rl.copy(), "row_upper": ru.copy(),
              "col_lower": cl.copy(), "col_upper": cu.copy(), "offset": float(offset), "sense": int(sense)}
    cmin = sense * c                         # minimise cmin^T x + sense*offset
    stats = {"fixed_columns": 0, "empty_columns": 0, "empty_rows": 0, "free_rows": 0}
    messages = _unmeetable_bounds(rl, ru, cl, cu, raw)
    cols = _fixed_and_empty_columns(A, cmin, rl, ru, cl, cu, stats)
    rows = _free_and_empty_rows(cols["A"], m0, cols["rl"], cols["ru"], stats)
    messages += rows["messages"]
    std = _standard_form(rows["A"], rows["rl"], rows["ru"], cols["cl"], cols["cu"], cols["cmin"], stats)
    nk = rows["A"].shape[1]
    general = {"A": rows["A"].tocsr(), "ineq": std["ineq"], "kind": std["kind"], "lo": std["lo"],
               "up": std["up"], "pos": std["pos"], "neg": std["neg"], "wcol": std["wcol"],
               "rows": rows["kept_rows"], "bound_cols": std["bound_cols"]}
    kind = std["kind"][:nk]
    return Problem(A=std["A"], b=std["b"], c=std["c"], c0=sense * float(offset) + cols["c0"] + std["c0"],
                   name=name, original_size=(m0, n0), sense=int(sense),
                   status="infeasible" if messages else None, message="; ".join(messages), presolve=stats,
                   warnings=list(warnings), integer_columns=tuple(integer_columns), _n_orig=n0,
                   _fixed=cols["fixed"], _kept=cols["kept"],
                   _shift=std["shift"][:nk], _sign=std["sign"][:nk], _pos=std["pos"][:nk],
                   _neg=np.where(kind == _FREE, std["neg"][:nk], -1), _general=general, source=source)


def _bounds(shape, row_lower, row_upper, col_lower, col_upper):
    """The four bound vectors as float64 (values beyond +-1e30 made infinite), checked for size
    and NaN, and their raw copies (for the messages)."""
    m0, n0 = shape
    rl, ru, cl, cu = (np.array(v, dtype=np.float64).ravel()
                      for v in (row_lower, row_upper, col_lower, col_upper))
    if rl.size != m0 or ru.size != m0 or cl.size != n0 or cu.size != n0:
        raise ValueError(f"inconsistent LP data sizes: A is {m0} x {n0} and c has {n0} entries, so "
                         f"row_lower and row_upper need {m0} entries and col_lower and col_upper {n0}; "
                         f"got {rl.size}, {ru.size}, {cl.size} and {cu.size}")
    raw = {"rl": rl.copy(), "ru": ru.copy(), "cl": cl.copy(), "cu": cu.copy()}
    for what, v in (("row lower", rl), ("row upper", ru), ("column lower", cl), ("column upper", cu)):
        if np.isnan(v).any():
            raise ValueError(f"the {what} bound of {what.split()[0]} {int(np.flatnonzero(np.isnan(v))[0])} is NaN")
        v[v >= 1e30] = np.inf
        v[v <= -1e30] = -np.inf
    return rl, ru, cl, cu, raw


#: the words of the warning that a finite bound beyond +-1e30 was read as infinite
INFINITE_BOUND = "counts as infinite"


def _infinite_bounds(raw) -> list:
    """A warning for each kind of bound that holds finite values beyond +-1e30, which count as
    infinite (MPS files' and HiGHS's convention): the first one named."""
    out = []
    for key, what in (("rl", "row lower"), ("ru", "row upper"), ("cl", "column lower"), ("cu", "column upper")):
        v = raw[key]
        big = np.flatnonzero(np.isfinite(v) & (np.abs(v) >= 1e30))
        if big.size:
            i = int(big[0])
            out.append(f"the {what} bound of {what.split()[0]} {i}, {v[i]:g}, {INFINITE_BOUND} (bounds beyond "
                       f"+-1e30 are no bound, as in MPS files and HiGHS)"
                       + (f"; {big.size} {what} bounds are such" if big.size > 1 else ""))
    return out


def _unmeetable_bounds(rl, ru, cl, cu, raw) -> list:
    """The messages of bounds that no finite value meets (a^T x <= -inf, a^T x >= +inf,
    x_j >= +inf, x_j <= -inf, lb = ub = +-inf too) and of crossed bounds: the problem is then
    infeasible. Such a row is made free (dropped below) and such a column fixed at 0, in place,
    so that nothing below computes with the infinity."""
    messages = []
    for kind, lower, upper, raw_lo, raw_up in (("row", rl, ru, raw["rl"], raw["ru"]),
                                               ("column", cl, cu, raw["cl"], raw["cu"])):
        bad = np.flatnonzero((lower == np.inf) | (upper == -np.inf))
        if bad.size:
            i = int(bad[0])
            side, value = ("lower", raw_lo[i]) if lower[i] == np.inf else ("upper", raw_up[i])
            what = "a^T x" if kind == "row" else f"x_{i}"
            rel = ">=" if side == "lower" else "<="
            inf = "+inf" if side == "lower" else "-inf"
            shown = inf if np.isinf(value) else (f"{value:g}, which counts as {inf} (bounds beyond +-1e30 "
                                                 "are infinite)")
            messages.append(f"{kind} {i} has {side} bound {shown}: {what} {rel} {inf} holds for no finite x"
                            + (f" ({bad.size} {kind}s have such a bound)" if bad.size > 1 else ""))
            if kind == "row":
                lower[bad], upper[bad] = -np.inf, np.inf
            else:
                lower[bad] = upper[bad] = 0.0
    bad = np.flatnonzero(cl > cu)
    if bad.size:
        messages.append(f"column {bad[0]} has lower bound {cl[bad[0]]} > upper bound {cu[bad[0]]}")
    bad = np.flatnonzero(rl > ru)
    if bad.size:
        messages.append(f"row {bad[0]} has lower bound {rl[bad[0]]} > upper bound {ru[bad[0]]}")
    return messages


def _fixed_and_empty_columns(A, cmin, rl, ru, cl, cu, stats) -> dict:
    """Presolve: fixed columns and empty columns leave, at their value (an empty column at the
    bound its cost prefers, any finite bound when the cost is 0), moved into the rows' bounds and
    the objective constant ``c0``; an empty column whose cost prefers an infinite bound is noted
    in ``stats["unbounded_column"]`` (solve decides it once the rest is solved)."""
    nnz_col = np.diff(A.indptr)
    is_fixed = cl == cu
    is_empty = ~is_fixed & (nnz_col == 0)
    fixed = np.where(is_fixed, cl, 0.0)
    prefer = np.where(cmin > 0, cl, np.where(cmin < 0, cu,
                      np.where(np.isfinite(cl), cl, np.where(np.isfinite(cu), cu, 0.0))))
    unbounded_cols = np.flatnonzero(is_empty & ~np.isfinite(prefer))
    if unbounded_cols.size:           # decided by solve once the rest is solved (at 0 here)
        j = unbounded_cols[0]
        stats["unbounded_column"] = (int(j), float(cmin[j]))
    fixed = np.where(is_empty, np.where(np.isfinite(prefer), prefer, 0.0), fixed)
    stats["fixed_columns"] = int(is_fixed.sum())
    stats["empty_columns"] = int(is_empty.sum())
    removed = is_fixed | is_empty
    c0 = 0.0
    if removed.any():
        c0 = float(cmin[removed] @ fixed[removed])
        act = A[:, np.flatnonzero(removed)] @ fixed[removed]
        rl = rl - act
        ru = ru - act
    kept = np.flatnonzero(~removed)
    return {"A": A[:, kept], "cmin": cmin[kept], "cl": cl[kept], "cu": cu[kept], "rl": rl, "ru": ru,
            "c0": c0, "fixed": fixed, "kept": kept}


def _free_and_empty_rows(A, m0, rl, ru, stats) -> dict:
    """Presolve: free rows and empty rows leave; an empty row whose bounds exclude 0 makes the
    problem infeasible (a message)."""
    nnz_row = np.bincount(A.indices, minlength=m0) if A.nnz else np.zeros(m0, dtype=np.int64)
    is_free = (rl == -np.inf) & (ru == np.inf)
    is_empty_row = ~is_free & (nnz_row == 0)
    stats["free_rows"] = int(is_free.sum())
    stats["empty_rows"] = int(is_empty_row.sum())
    tol = 1e-9 * (1.0 + np.maximum(np.where(np.isfinite(rl), np.abs(rl), 0.0),
                                   np.where(np.isfinite(ru), np.abs(ru), 0.0)))
    messages = []
    violated = np.flatnonzero(is_empty_row & ((rl > tol) | (ru < -tol)))
    if violated.size:
        i = violated[0]
        messages.append(f"empty row {i} needs 0 in [{rl[i]:g}, {ru[i]:g}]")
    keep_row = ~(is_free | is_empty_row)
    return {"A": A.tocsr()[keep_row].tocsc(), "rl": rl[keep_row], "ru": ru[keep_row],
            "kept_rows": np.flatnonzero(keep_row), "messages": messages}


def _standard_form(A, rl, ru, cl, cu, cmin, stats) -> dict:
    """(4.1)-(4.3) from the presolved general form: a slack a^T x - v = 0, rl <= v <= ru for
    every inequality row; then every variable non-negative: v = l + x' (shift), v = u - x'
    (reflect), v = x+ - x- (free); a finite u on top of a finite l adds the row x' + w = u - l."""
    m = A.shape[0]
    ineq = np.flatnonzero(rl != ru)
    b = np.where(rl == ru, rl, 0.0)
    b[~np.isfinite(b)] = 0.0                 # only for infeasible bound data
    slack = sp.csc_matrix((-np.ones(ineq.size), (ineq, np.arange(ineq.size))), shape=(m, ineq.size))
    G = sp.hstack([A, slack], format="csc")  # one general variable per column
    lo = np.concatenate([cl, rl[ineq]])
    up = np.concatenate([cu, ru[ineq]])
    cost = np.concatenate([cmin, np.zeros(ineq.size)])
    nv = G.shape[1]

    kind = np.where(np.isfinite(lo), _SHIFT, np.where(np.isfinite(up), _REFLECT, _FREE))
    shift = np.where(kind == _SHIFT, lo, np.where(kind == _REFLECT, up, 0.0))
    sign = np.where(kind == _REFLECT, -1.0, 1.0)
    b = b - G @ shift
    c0 = float(cost @ shift)
    width = np.where(kind == _FREE, 2, 1)
    pos = (np.cumsum(width) - width).astype(np.int64)
    free = np.flatnonzero(kind == _FREE)
    neg = -np.ones(nv, dtype=np.int64)
    neg[free] = pos[free] + 1
    n_main = int(width.sum())
    rows = np.concatenate([np.arange(nv), free])
    cols = np.concatenate([pos, neg[free]])
    vals = np.concatenate([sign, -np.ones(free.size)])
    P = sp.csc_matrix((vals, (rows, cols)), shape=(nv, n_main))
    A_main = (G @ P).tocsc()
    std_cost = np.zeros(n_main)
    std_cost[pos] = sign * cost
    std_cost[neg[free]] = -cost[free]
    bk = np.flatnonzero((kind == _SHIFT) & np.isfinite(up))      # bound rows, in k order
    nb = bk.size
    wcol = -np.ones(nv, dtype=np.int64)
    wcol[bk] = n_main + np.arange(nb)
    B = sp.csc_matrix((np.ones(2 * nb), (np.concatenate([np.arange(nb)] * 2),
                                          np.concatenate([pos[bk], wcol[bk]]))),
                      shape=(nb, n_main + nb))
    stats.update(slacks=int(ineq.size), upper_bound_rows=int(nb), free_splits=int(free.size))
    return {"A": sp.vstack([sp.hstack([A_main, sp.csc_matrix((m, nb))]), B], format="csr"),
            "b": np.concatenate([b, up[bk] - lo[bk]]), "c": np.concatenate([std_cost, np.zeros(nb)]),
            "c0": c0, "ineq": ineq, "kind": kind, "lo": lo, "up": up, "pos": pos, "neg": neg,
            "wcol": wcol, "bound_cols": bk, "shift": shift, "sign": sign}


# ---------------------------------------------------------------------- reading
_FD1_LOCK = threading.Lock()


def quiet_highs(output: bool = False):
    """A ``highspy.Highs()`` built without HiGHS's banner ("Running HiGHS ... Copyright ...")
    reaching the terminal, its console log off; with ``output=False`` (default) all its output
    off, with ``output=True`` its log kept for a ``log_file`` the caller sets.

    highspy 1.16 prints the banner from C, to file descriptor 1, while the first Highs of a
    process is built, before any option can be set; so descriptor 1 points to the null device
    during the construction (Python's and C's buffers flushed on either side). Every Highs of
    the package and of the experiments is built here."""
    import highspy

    with _FD1_LOCK:
        try:
            sys.stdout.flush()
            saved = os.dup(1)
        except (OSError, ValueError, AttributeError):          # no descriptor 1 to protect
            saved = None
        if saved is not None:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.close(null)
        try:
            h = highspy.Highs()
        finally:
            if saved is not None:
                _flush_c_stdout()
                os.dup2(saved, 1)
                os.close(saved)
    h.setOptionValue("log_to_console", False)
    if not output:
        h.setOptionValue("output_flag", False)
    return h


def _flush_c_stdout() -> None:
    """fflush(NULL): C's buffered output written out while descriptor 1 is still redirected."""
    try:
        import ctypes

        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError, TypeError):          # no C library to ask (Windows): HiGHS flushes itself
        pass


def _highs_log(path_str: str):
    """Read ``path_str`` with HiGHS, its log going to a temporary file; (highs, status, log)."""
    fd, log_path = tempfile.mkstemp(suffix=".log", prefix="highs_")
    os.close(fd)
    try:
        h = quiet_highs(output=True)
        h.setOptionValue("log_file", log_path)
        status = h.readModel(path_str)
        try:
            log = Path(log_path).read_text(errors="replace")
        except OSError:
            log = ""
        # HiGHS keeps the log file open; point it away before deleting
        h.setOptionValue("log_file", "")
    finally:
        try:
            os.unlink(log_path)
        except OSError:
            pass
    return h, status, log


#: sections of an MPS file (a line that starts in column 1 with one of these opens it)
_SECTIONS = {"NAME", "OBJSENSE", "OBJSENS", "OBJNAME", "ROWS", "LAZYCONS", "USERCUTS", "COLUMNS", "RHS",
             "RANGES", "BOUNDS", "SOS", "QUADOBJ", "QMATRIX", "QSECTION", "QCMATRIX", "CSECTION",
             "DELAYEDROWS", "MODELCUTS", "INDICATORS", "GENCONS", "PWLOBJ", "PWLNAM", "PWLCON", "ENDATA"}
#: BOUNDS types that need a value (BV and SC take one optionally, FR, MI and PL none)
_BOUND_NEEDS_VALUE = {"UP", "LO", "FX", "LI", "UI"}
#: the free-format fields that hold numbers, by a data line's field count: COLUMNS; RHS and RANGES
_COLUMNS_NUMBERS = {3: (2,), 5: (2, 4)}
_RHS_NUMBERS = {2: (1,), 3: (2,), 4: (1, 3), 5: (2, 4)}
#: the fixed-format fields 4 and 6 (columns 25-36 and 50-61): the numbers of a data line
_FIXED_NUMBER_FIELDS = ((24, 36), (49, 61))


#: an MPS number: ASCII digits with an optional sign, point and exponent, or inf / infinity / nan
#: (what C's strtod reads whole); Python's float() also takes ``1_0`` and non-ASCII digits
_MPS_NUMBER = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)",
                         re.IGNORECASE | re.ASCII)


def _mps_number(token: str):
    """The value of an MPS number token, or None when it is not one (``abc``, ``1,5``, ``1_0``,
    ``１``: digits other than ASCII's). For an ASCII token without ``_`` Python's float() takes
    exactly the forms of :data:`_MPS_NUMBER` (the regular expression stays as their definition)."""
    if not token.isascii() or "_" in token:
        return None
    try:
        return float(token)
    except ValueError:
        return None


def _finite(token: str) -> bool:
    """Whether ``token`` is a finite MPS number (:func:`_mps_number`, not NaN or infinite)."""
    v = _mps_number(token)
    return v is not None and math.isfinite(v)


def _mps_lines(path: Path):
    """(line number, line) of an MPS file (gzipped when its name ends in .gz); a file that cannot
    be read as such ends early (HiGHS's own error then speaks for it)."""
    import gzip

    opener = gzip.open if path.suffix.lower() == ".gz" else open
    try:
        with opener(path, "rt", errors="replace") as f:
            text = f.read()                  # whole: a text layer line by line costs more
    except (OSError, EOFError):
        return
    # the lines as the file's own iteration gives them: newlines already made "\n", each kept
    yield from enumerate(io.StringIO(text, newline="\n"), start=1)


def check_mps_numbers(path) -> None:
    """Check that every number of the COLUMNS, RHS, RANGES and BOUNDS sections of an MPS file
    is one, and that no coefficient is infinite or NaN.

    HiGHS reads a token such as ``abc`` where a number belongs as 0 and drops the entry without
    a word; this check is what lets :func:`read_mps` refuse such a file. Free format is read
    first (whitespace-separated fields, as HiGHS does); a line whose field count does not fit
    free format (names with spaces) is read in fixed format (numbers in columns 25-36 and
    50-61).

    Raises
    ------
    ValueError
        Naming the file, the line number, the section and the token.
    """
    path = Path(path)
    section = None

    def bad(lineno, token, line, why="is not a number"):
        raise ValueError(f"malformed MPS file {path}: line {lineno} ({section} section): {token!r} {why} "
                         f"(the line: {line.strip()!r})")

    def ok(v, allow_inf):
        return v is not None and v == v and (allow_inf or -math.inf < v < math.inf)   # v == v: not NaN

    def fixed(line, allow_inf):
        """The first fixed-format number field that is not a number, or None."""
        for a, b in _FIXED_NUMBER_FIELDS:
            field = line[a:b].strip() if len(line) > a else ""
            if field and not ok(_mps_number(field), allow_inf):
                return field
        return None

    numbers = ("COLUMNS", "RHS", "RANGES", "BOUNDS")
    for lineno, line in _mps_lines(path):
        tokens = line.split()
        if not tokens or line[0] == "*":
            continue
        if not line[0].isspace() and tokens[0].upper() in _SECTIONS:
            section = tokens[0].upper()
            continue
        if section not in numbers:
            continue
        allow_inf = section != "COLUMNS"       # an infinite bound is one; an infinite coefficient is not
        if section == "COLUMNS":
            if len(tokens) >= 3 and tokens[1].strip("'\"").upper() == "MARKER":
                continue
            positions = _COLUMNS_NUMBERS.get(len(tokens))
            if positions is not None and _finite(tokens[2]) and (len(tokens) == 3 or _finite(tokens[4])):
                continue                      # the common line: its numbers are finite MPS numbers
        elif section in ("RHS", "RANGES"):
            positions = _RHS_NUMBERS.get(len(tokens))
        else:                                 # BOUNDS: type [set name] column [value]
            kind = tokens[0].upper()
            if kind in _BOUND_NEEDS_VALUE:
                positions = (len(tokens) - 1,) if len(tokens) in (3, 4) else None
            elif kind in ("BV", "SC"):
                positions = (3,) if len(tokens) == 4 else ()
            else:
                positions = ()
        if positions is not None:
            for i in positions:
                v = _mps_number(tokens[i])
                if ok(v, allow_inf):
                    continue
                if len(line) > 24 and fixed(line, allow_inf) is None:
                    break                     # fixed format reads it: names with spaces
                if v is None:
                    bad(lineno, tokens[i], line)
                bad(lineno, tokens[i], line, "is not a finite number (NaN, or a coefficient beyond float64's "
                                             "range, |a| > 1.8e308, which reads as infinity)")
        else:
            token = fixed(line, allow_inf)
            if token is not None:
                bad(lineno, token, line)


def _integrality(lp, highspy) -> tuple:
    """(names, kinds) of the columns HiGHS read as integer or semi-continuous."""
    kinds = list(lp.integrality_)
    if not kinds:
        return (), ()
    names = list(lp.col_names_) or [f"column {j}" for j in range(lp.num_col_)]
    cont = highspy.HighsVarType.kContinuous
    idx = [j for j, k in enumerate(kinds) if k != cont]
    return tuple(names[j] for j in idx), tuple((j, kinds[j]) for j in idx)


def read_mps(path) -> Problem:
    """Read an MPS file and bring it to the standard form (4.1)-(4.3) of paper 000.

    HiGHS (``highspy``) reads the file (``.mps`` or ``.mps.gz``: HiGHS picks its reader by the
    name), after :func:`check_mps_numbers` has checked its numbers (HiGHS would read a token such as
    ``abc`` as 0); :func:`standardize` turns its general form into the standard form that Algorithm
    3 of paper 000 is written for, with the map back to the file's variables. Integer columns
    (``MARKER`` ``INTORG``, ``BV``, ``LI``, ``UI``) and semi-continuous ones (``SC``) are read as
    continuous: the problem is the LP relaxation, ``Problem.integer_columns`` names them and
    ``Problem.warnings`` says so (:func:`gpgpu.lp.solve` puts the warning on its result).

    Parameters
    ----------
    path : str or Path
        The MPS file, ``.mps`` or ``.mps.gz``.

    Returns
    -------
    Problem
        The standard form (4.1)-(4.3) with the map back to the file's variables.

    Raises
    ------
    TypeError
        ``path`` that is not a str or a path.
    FileNotFoundError
        No such file (``IsADirectoryError``: a directory).
    ValueError
        A name that does not end in ``.mps`` or ``.mps.gz``, a number that is not one or is not
        finite (the line named), or a file HiGHS cannot parse (its error lines quoted).

    See Also
    --------
    standardize : The conversion to the standard form.

    Examples
    --------
    >>> from gpgpu import lp
    >>> from gpgpu.lp.netlib import netlib_path
    >>> p = lp.read_mps(netlib_path("afiro"))
    >>> p.name, p.original_size, p.standard_size
    ('afiro', (27, 32), (27, 51))
    """
    import highspy

    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"read_mps: path must be a str or pathlib.Path naming an MPS file, got "
                        f"{type(path).__name__}")
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a directory, not an MPS file: pass the path of a .mps or "
                                ".mps.gz file")
    if not path.exists():
        raise FileNotFoundError(f"MPS file not found: {path}")
    if not path.is_file():         # a device or a pipe: it exists, but is no file to read
        raise ValueError(f"{path} is not a regular file (a device or a pipe): pass the path of a .mps or "
                         ".mps.gz file")
    h, status, log = _highs_log(str(path))
    lines = [ln.strip() for ln in log.splitlines()]
    errors = [ln[len("ERROR:"):].strip() for ln in lines if ln.startswith("ERROR:")]
    warns = [ln for ln in lines if ln.startswith("WARNING")]
    if status == highspy.HighsStatus.kError and any("not supported" in e for e in errors):
        raise ValueError(f"cannot read {path}: HiGHS chooses its reader by the file name's ending and has "
                         f"none for {path.name!r} (whatever the file holds); an MPS file must be named "
                         "*.mps or *.mps.gz: rename or copy it to such a name")
    check_mps_numbers(path)        # before HiGHS's error too: it names the line (HiGHS: an inf, a NaN)
    if status == highspy.HighsStatus.kError:
        cause = "; ".join(errors) if errors else "HiGHS could not read it"
        if not path.name.lower().endswith((".mps", ".mps.gz")):     # e.g. .lp: read as a CPLEX LP file
            cause += (f" (HiGHS chose its reader by the name's ending, {''.join(path.suffixes)!r}: if the file "
                      "is MPS, name it *.mps or *.mps.gz)")
        raise ValueError(f"malformed MPS file {path}: {cause}")
    lp = h.getLp()
    m, n = lp.num_row_, lp.num_col_
    if n == 0:
        raise ValueError(f"malformed MPS file {path}: no columns"
                         + (f" ({'; '.join(warns)})" if warns else ""))
    mat = lp.a_matrix_
    start = np.asarray(mat.start_, dtype=np.int64)
    index = np.asarray(mat.index_, dtype=np.int64)
    value = np.asarray(mat.value_, dtype=np.float64)
    if mat.format_ == highspy.MatrixFormat.kColwise:
        A = sp.csc_matrix((value, index, start), shape=(m, n))
    else:                                    # row-wise
        A = sp.csr_matrix((value, index, start), shape=(m, n))
    if A.nnz and not np.all(np.isfinite(A.data)):
        A = sp.csc_matrix(A)
        k = int(np.flatnonzero(~np.isfinite(A.data))[0])
        j = int(np.searchsorted(A.indptr, k, side="right") - 1)
        raise ValueError(f"malformed MPS file {path}: the matrix entry of row {int(A.indices[k])}, column {j} "
                         f"is {A.data[k]} (LP data must be finite)")
    sense = -1 if lp.sense_ == highspy.ObjSense.kMaximize else 1
    name = lp.model_name_ or path.name.split(".")[0]
    col_lower = np.array(lp.col_lower_, dtype=np.float64)
    col_upper = np.array(lp.col_upper_, dtype=np.float64)
    integer, kinds = _integrality(lp, highspy)
    if integer:
        V = highspy.HighsVarType
        semi = [j for j, k in kinds if k in (V.kSemiContinuous, V.kSemiInteger)]
        col_lower[semi] = np.minimum(col_lower[semi], 0.0)     # x = 0 or l <= x <= u, relaxed
        col_upper[semi] = np.maximum(col_upper[semi], 0.0)
        shown = ", ".join(integer[:5]) + (", ..." if len(integer) > 5 else "")
        warns = warns + [f"the MPS file marks {len(integer)} of its {n} columns integer or semi-continuous "
                         f"({shown}): gpgpu.lp solves linear programs, so their integrality is dropped "
                         "and the LP relaxation is solved (its optimum is a bound on the integer problem's, "
                         "not necessarily its answer)"]
    return standardize(lp.col_cost_, A, lp.row_lower_, lp.row_upper_, col_lower=col_lower,
                       col_upper=col_upper, offset=lp.offset_, sense=sense, name=name, warnings=warns,
                       integer_columns=integer)
