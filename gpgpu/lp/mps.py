"""Reading an LP and bringing it to the standard form (4.1)-(4.3) of paper 000.

Algorithm 3 of paper 000 (Mehrotra's predictor-corrector method, [Meh92], [Wri97]) is written
for the standard form

    min c^T x   s.t.   A x = b,   x >= 0                                (4.1)-(4.3)

with a dense ``A``. NETLIB problems come in MPS files, in the general form

    min / max  c^T x + c0   s.t.   row_lower <= A x <= row_upper,   col_lower <= x <= col_upper,

which HiGHS (``highspy``) reads. :func:`standardize` turns the general form into the standard
form, after a light presolve:

* a column with ``lb == ub`` is fixed and substituted out (its cost goes to the constant);
* an empty column is fixed at the bound its cost prefers (the problem is unbounded when that
  bound is infinite and the cost is non-zero);
* a free row (both row bounds infinite) is dropped; an empty row is dropped, and the problem is
  infeasible when ``0`` violates its bounds.

Then every inequality row ``rl <= a^T x <= ru`` gets a slack ``v`` with ``a^T x - v = 0`` and
``rl <= v <= ru``, and every variable (original or slack) with bounds ``[l, u]`` becomes
non-negative: a finite ``l`` is shifted away (``v = l + x'``), an upper bound alone is reflected
(``v = u - x'``), a free variable is split (``v = x+ - x-``), and a finite ``u`` on top of a
finite ``l`` adds the row ``x' + w = u - l`` with a new ``w >= 0`` (the algorithm has no other
way to hold an upper bound). A maximisation is flipped to a minimisation. The constant term is
kept in ``Problem.c0`` so that ``c^T x + c0`` is the objective (in the minimisation sense).
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

__all__ = ["Problem", "read_mps", "standardize"]

# Column kinds of the map from standard-form variables back to the original ones.
_SHIFT, _REFLECT, _FREE = 0, 1, 2


@dataclass
class Problem:
    """An LP in the standard form (4.1)-(4.3) of paper 000, with the map back to its source.

    Attributes
    ----------
    A : ndarray, shape (m, n), float64
        The dense constraint matrix of (4.2).
    b : ndarray, shape (m,)
        The right-hand side of (4.2).
    c : ndarray, shape (n,)
        The cost vector of (4.1) (minimisation).
    c0 : float
        The objective constant: the standard-form objective is ``c @ x + c0``.
    name : str
    original_size : (int, int)
        (rows, columns) of the source LP as HiGHS reads it (the objective row not counted;
        paper 000's Table 3 counts it, so its row numbers are one larger).
    sense : int
        ``+1`` when the source minimises, ``-1`` when it maximises; the source objective is
        ``sense * (c @ x + c0)``.
    status : str or None
        ``None`` normally; ``"infeasible"`` or ``"unbounded"`` when the presolve has already
        decided the problem (``message`` says why).
    message : str
    presolve : dict
        Counts of what the presolve removed and what the conversion added.
    warnings : list of str
        Warnings HiGHS gave while reading the file.
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
    # map back: x_orig = fixed (removed columns), x_orig[kept] = shift + sign * x[pos] - x[neg]
    _n_orig: int = field(default=None, repr=False)
    _fixed: np.ndarray = field(default=None, repr=False)
    _kept: np.ndarray = field(default=None, repr=False)
    _shift: np.ndarray = field(default=None, repr=False)
    _sign: np.ndarray = field(default=None, repr=False)
    _pos: np.ndarray = field(default=None, repr=False)
    _neg: np.ndarray = field(default=None, repr=False)   # -1 where the variable is not split
    _general: dict = field(default=None, repr=False)     # presolved general form (from_original)

    def __post_init__(self):
        self.A = np.ascontiguousarray(self.A, dtype=np.float64)
        self.b = np.ascontiguousarray(self.b, dtype=np.float64).ravel()
        self.c = np.ascontiguousarray(self.c, dtype=np.float64).ravel()
        self.c0 = float(self.c0)
        m, n = self.A.shape
        if self.b.shape != (m,) or self.c.shape != (n,):
            raise ValueError(f"A is {m}x{n} but b has {self.b.size} and c has {self.c.size} "
                             "entries")
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
        kind, lo, up = g["kind"], g["lo"], g["up"]
        for k in range(v.size):
            p = g["pos"][k]
            if kind[k] == _SHIFT:
                out[p] = v[k] - lo[k]
                if g["wcol"][k] >= 0:
                    out[g["wcol"][k]] = up[k] - v[k]
            elif kind[k] == _REFLECT:
                out[p] = up[k] - v[k]
            else:
                out[p] = max(v[k], 0.0)
                out[g["neg"][k]] = max(-v[k], 0.0)
        return out

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_arrays(cls, A, b, c, c0=0.0, name="lp") -> "Problem":
        """A problem given directly in the standard form (4.1)-(4.3) (dense arrays)."""
        return cls(A=A, b=b, c=c, c0=c0, name=name)

    @classmethod
    def from_inequalities(cls, c, A_ub=None, b_ub=None, A_eq=None, b_eq=None, bounds=(0, None),
                          c0=0.0, maximize=False, name="lp") -> "Problem":
        """``min c^T x`` s.t. ``A_ub x <= b_ub``, ``A_eq x = b_eq``, bounds (as scipy.linprog).

        ``bounds`` is one ``(lb, ub)`` pair for all variables or one per variable; ``None``
        means infinite. The problem goes through :func:`standardize`.
        """
        c = np.asarray(c, dtype=np.float64).ravel()
        n = c.size
        blocks, lo, up = [], [], []
        if A_ub is not None:
            A_ub = np.atleast_2d(np.asarray(A_ub, dtype=np.float64))
            blocks.append(A_ub)
            lo.append(np.full(A_ub.shape[0], -np.inf))
            up.append(np.asarray(b_ub, dtype=np.float64).ravel())
        if A_eq is not None:
            A_eq = np.atleast_2d(np.asarray(A_eq, dtype=np.float64))
            blocks.append(A_eq)
            lo.append(np.asarray(b_eq, dtype=np.float64).ravel())
            up.append(np.asarray(b_eq, dtype=np.float64).ravel())
        A = np.vstack(blocks) if blocks else np.zeros((0, n))
        bounds = list(bounds)
        if len(bounds) == 2 and not isinstance(bounds[0], (tuple, list)):
            bounds = [bounds] * n
        cl = np.array([-np.inf if bd[0] is None else bd[0] for bd in bounds], dtype=np.float64)
        cu = np.array([np.inf if bd[1] is None else bd[1] for bd in bounds], dtype=np.float64)
        return standardize(c, A, np.concatenate(lo) if lo else np.zeros(0),
                           np.concatenate(up) if up else np.zeros(0), cl, cu, offset=c0,
                           sense=-1 if maximize else 1, name=name)


# ---------------------------------------------------------------------- conversion
def standardize(c, A, row_lower, row_upper, col_lower, col_upper, offset=0.0, sense=1,
                name="lp", warnings=()) -> Problem:
    """Bring ``min/max c^T x + offset``, ``row_lower <= A x <= row_upper``,
    ``col_lower <= x <= col_upper`` to the standard form (4.1)-(4.3) (see the module notes).

    Parameters
    ----------
    c, A, row_lower, row_upper, col_lower, col_upper : array_like
        Dense data; infinite bounds are ``+-inf`` (values beyond ``+-1e30`` count as infinite).
    offset : float
        Objective constant.
    sense : {1, -1}
        1 to minimise, -1 to maximise.

    Returns
    -------
    Problem
        With ``status`` set when the presolve already found the problem infeasible or unbounded.
    """
    c = np.asarray(c, dtype=np.float64).ravel()
    A = np.atleast_2d(np.asarray(A, dtype=np.float64))
    m0, n0 = A.shape[0], c.size
    if A.size == 0:
        A = A.reshape(m0, n0)
    rl, ru, cl, cu = (np.array(v, dtype=np.float64).ravel()
                      for v in (row_lower, row_upper, col_lower, col_upper))
    if A.shape != (m0, n0) or rl.size != m0 or ru.size != m0 or cl.size != n0 or cu.size != n0:
        raise ValueError("inconsistent LP data sizes")
    for v in (rl, ru, cl, cu):
        v[v >= 1e30] = np.inf
        v[v <= -1e30] = -np.inf
    if sense not in (1, -1):
        raise ValueError(f"sense must be 1 or -1, got {sense!r}")
    cmin = sense * c                         # minimise cmin^T x + sense*offset
    c0 = sense * float(offset)
    status, messages = None, []
    stats = {"fixed_columns": 0, "empty_columns": 0, "empty_rows": 0, "free_rows": 0}

    bad = np.flatnonzero(cl > cu)
    if bad.size:
        status = "infeasible"
        messages.append(f"column {bad[0]} has lower bound {cl[bad[0]]} > upper bound {cu[bad[0]]}")
    bad = np.flatnonzero(rl > ru)
    if bad.size:
        status = "infeasible"
        messages.append(f"row {bad[0]} has lower bound {rl[bad[0]]} > upper bound {ru[bad[0]]}")

    # --- presolve: fixed columns, empty columns
    fixed = np.zeros(n0)
    keep_col = np.ones(n0, dtype=bool)
    nnz_col = np.count_nonzero(A, axis=0)
    for j in range(n0):
        if cl[j] == cu[j]:
            fixed[j] = cl[j]
            keep_col[j] = False
            stats["fixed_columns"] += 1
        elif nnz_col[j] == 0:
            keep_col[j] = False
            stats["empty_columns"] += 1
            if cmin[j] > 0:
                val = cl[j]
            elif cmin[j] < 0:
                val = cu[j]
            else:
                val = cl[j] if np.isfinite(cl[j]) else (cu[j] if np.isfinite(cu[j]) else 0.0)
            if not np.isfinite(val):
                status = status or "unbounded"
                messages.append(f"empty column {j} with cost {cmin[j]:g} is unbounded "
                                "(the problem is unbounded if the rest of it is feasible)")
                val = 0.0
            fixed[j] = val
    removed = ~keep_col
    if removed.any():
        c0 += float(cmin[removed] @ fixed[removed])
        act = A[:, removed] @ fixed[removed]
        rl = rl - act
        ru = ru - act
    kept = np.flatnonzero(keep_col)
    A = A[:, kept]
    cmin = cmin[kept]
    cl, cu = cl[kept], cu[kept]

    # --- presolve: free rows, empty rows
    keep_row = np.ones(m0, dtype=bool)
    nnz_row = np.count_nonzero(A, axis=1)
    for i in range(m0):
        if rl[i] == -np.inf and ru[i] == np.inf:
            keep_row[i] = False
            stats["free_rows"] += 1
        elif nnz_row[i] == 0:
            keep_row[i] = False
            stats["empty_rows"] += 1
            tol = 1e-9 * (1.0 + max(abs(rl[i]) if np.isfinite(rl[i]) else 0.0,
                                    abs(ru[i]) if np.isfinite(ru[i]) else 0.0))
            if rl[i] > tol or ru[i] < -tol:
                status = "infeasible"
                messages.append(f"empty row {i} needs 0 in [{rl[i]:g}, {ru[i]:g}]")
    A = A[keep_row]
    rl, ru = rl[keep_row], ru[keep_row]
    m, nk = A.shape

    # --- slacks: a^T x - v = 0, rl <= v <= ru for every inequality row
    ineq = np.flatnonzero(rl != ru)
    b = np.where(rl == ru, rl, 0.0)
    b[~np.isfinite(b)] = 0.0                 # only for infeasible bound data
    cols = [A[:, j] for j in range(nk)]      # one general variable per column
    lo = list(cl) + list(rl[ineq])
    up = list(cu) + list(ru[ineq])
    cost = list(cmin) + [0.0] * ineq.size
    for i in ineq:
        e = np.zeros(m)
        e[i] = -1.0
        cols.append(e)
    nv = len(cols)

    # --- make every variable non-negative
    std_cols, std_cost = [], []
    kind = np.zeros(nv, dtype=np.int64)
    shift = np.zeros(nv)
    sign = np.ones(nv)
    pos = np.zeros(nv, dtype=np.int64)
    neg = -np.ones(nv, dtype=np.int64)
    wcol = -np.ones(nv, dtype=np.int64)
    bound_rows = []                          # (std column of x', u - l)
    for k in range(nv):
        a, l, u, ck = cols[k], lo[k], up[k], cost[k]
        pos[k] = len(std_cols)
        if np.isfinite(l):                   # v = l + x'
            kind[k], shift[k] = _SHIFT, l
            b -= a * l
            c0 += ck * l
            std_cols.append(a)
            std_cost.append(ck)
            if np.isfinite(u):
                bound_rows.append((k, u - l))
        elif np.isfinite(u):                 # v = u - x'
            kind[k], shift[k], sign[k] = _REFLECT, u, -1.0
            b -= a * u
            c0 += ck * u
            std_cols.append(-a)
            std_cost.append(-ck)
        else:                                # v = x+ - x-
            kind[k] = _FREE
            std_cols.append(a)
            std_cost.append(ck)
            neg[k] = len(std_cols)
            std_cols.append(-a)
            std_cost.append(-ck)
    nb = len(bound_rows)
    n_std = len(std_cols) + nb
    A_std = np.zeros((m + nb, n_std))
    if std_cols:
        A_std[:m, :len(std_cols)] = np.column_stack(std_cols)
    b_std = np.concatenate([b, np.zeros(nb)])
    c_std = np.concatenate([np.asarray(std_cost, dtype=np.float64), np.zeros(nb)])
    for r, (k, width) in enumerate(bound_rows):      # x' + w = u - l
        w = len(std_cols) + r
        A_std[m + r, pos[k]] = 1.0
        A_std[m + r, w] = 1.0
        b_std[m + r] = width
        wcol[k] = w
    stats.update(slacks=int(ineq.size), upper_bound_rows=nb,
                 free_splits=int(np.count_nonzero(kind == _FREE)))

    general = {"A": A, "ineq": ineq, "kind": kind, "lo": np.array(lo), "up": np.array(up),
               "pos": pos, "neg": neg, "wcol": wcol}
    orig_kind = kind[:nk]
    prob = Problem(A=A_std, b=b_std, c=c_std, c0=c0, name=name, original_size=(m0, n0),
                   sense=int(sense), status=status, message="; ".join(messages), presolve=stats,
                   warnings=list(warnings), _n_orig=n0, _fixed=fixed, _kept=kept,
                   _shift=shift[:nk], _sign=sign[:nk], _pos=pos[:nk],
                   _neg=np.where(orig_kind == _FREE, neg[:nk], -1), _general=general)
    return prob


# ---------------------------------------------------------------------- reading
def _highs_log(path_str: str):
    """Read ``path_str`` with HiGHS, its log going to a temporary file; (highs, status, log)."""
    import highspy

    fd, log_path = tempfile.mkstemp(suffix=".log", prefix="highs_")
    os.close(fd)
    try:
        h = highspy.Highs()
        h.setOptionValue("log_to_console", False)
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


def read_mps(path) -> Problem:
    """Read an MPS file (``.mps`` or ``.mps.gz``) with HiGHS and convert it to standard form.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    Problem
        The standard form (4.1)-(4.3) of paper 000 with the map back to the file's variables.

    Raises
    ------
    FileNotFoundError
        When ``path`` does not exist.
    ValueError
        When HiGHS cannot parse the file; the message names the file and quotes HiGHS's
        error lines (which usually say the offending entry or section).
    """
    import highspy

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"MPS file not found: {path}")
    h, status, log = _highs_log(str(path))
    lines = [ln.strip() for ln in log.splitlines()]
    errors = [ln[len("ERROR:"):].strip() for ln in lines if ln.startswith("ERROR:")]
    warns = [ln for ln in lines if ln.startswith("WARNING")]
    if status == highspy.HighsStatus.kError:
        cause = "; ".join(errors) if errors else "HiGHS could not read it"
        raise ValueError(f"malformed MPS file {path}: {cause}")
    lp = h.getLp()
    m, n = lp.num_row_, lp.num_col_
    if n == 0:
        raise ValueError(f"malformed MPS file {path}: no columns"
                         + (f" ({'; '.join(warns)})" if warns else ""))
    A = np.zeros((m, n))
    mat = lp.a_matrix_
    start = np.asarray(mat.start_, dtype=np.int64)
    index = np.asarray(mat.index_, dtype=np.int64)
    value = np.asarray(mat.value_, dtype=np.float64)
    if mat.format_ == highspy.MatrixFormat.kColwise:
        for j in range(n):
            sl = slice(start[j], start[j + 1])
            A[index[sl], j] = value[sl]
    else:                                    # row-wise
        for i in range(m):
            sl = slice(start[i], start[i + 1])
            A[i, index[sl]] = value[sl]
    sense = -1 if lp.sense_ == highspy.ObjSense.kMaximize else 1
    name = lp.model_name_ or path.name.split(".")[0]
    return standardize(lp.col_cost_, A, lp.row_lower_, lp.row_upper_, lp.col_lower_,
                       lp.col_upper_, offset=lp.offset_, sense=sense, name=name, warnings=warns)
