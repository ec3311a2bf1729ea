"""Random feasible, bounded LPs with mixed bounds and rows, the same LPs in other units, and
the judge of an answer against HiGHS on the LP as first written (shared by the tests of the
LP's units and by tools/units_audit.py)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class LP:
    """``min c x`` s.t. ``A_ub x <= b_ub``, ``A_eq x = b_eq``, ``bounds`` (scipy's call)."""
    c: np.ndarray
    A_ub: np.ndarray
    b_ub: np.ndarray
    A_eq: np.ndarray
    b_eq: np.ndarray
    bounds: np.ndarray            # (n, 2), +-inf for none

    def call(self) -> dict:
        return dict(c=self.c, A_ub=self.A_ub, b_ub=self.b_ub, A_eq=self.A_eq, b_eq=self.b_eq,
                    bounds=[tuple(None if not np.isfinite(v) else v for v in row) for row in self.bounds])


def random_lp(rng, m_ub=None, m_eq=None, n=None) -> LP:
    """A feasible LP (a point x0 inside its bounds meets every row) whose dual is feasible too
    (c = A_ub^T y_ub + A_eq^T y_eq + z with the signs the bounds need), so it has an optimum."""
    n = n or int(rng.integers(4, 13))
    m_ub = int(rng.integers(1, 8)) if m_ub is None else m_ub
    m_eq = int(rng.integers(0, max(1, n // 3))) if m_eq is None else m_eq
    A_ub = rng.standard_normal((m_ub, n)) * (rng.random((m_ub, n)) < 0.7)
    A_eq = rng.standard_normal((m_eq, n)) * (rng.random((m_eq, n)) < 0.7)
    kind = rng.integers(0, 4, n)                     # 0 x >= l, 1 l <= x <= u, 2 x <= u, 3 free
    lo = np.where((kind == 0) | (kind == 1), rng.uniform(-2, 1, n), -np.inf)
    up = np.where((kind == 1) | (kind == 2), rng.uniform(1, 3, n), np.inf)
    up = np.where(kind == 1, np.maximum(up, lo + 0.5), up)
    x0 = np.where(np.isfinite(lo), lo, np.where(np.isfinite(up), up - 1.0, 0.0)) + 0.3 * rng.random(n)
    x0 = np.minimum(x0, np.where(np.isfinite(up), up, np.inf))
    b_ub = A_ub @ x0 + rng.random(m_ub) * (rng.random(m_ub) < 0.7)
    b_eq = A_eq @ x0
    y_ub = -rng.random(m_ub)
    y_eq = rng.standard_normal(m_eq)
    z = np.where(kind == 0, rng.random(n), np.where(kind == 2, -rng.random(n),
                 np.where(kind == 1, rng.standard_normal(n), 0.0)))
    c = A_ub.T @ y_ub + A_eq.T @ y_eq + z
    return LP(c, A_ub, b_ub, A_eq, b_eq, np.column_stack([lo, up]))


@dataclass
class Units:
    """The same LP in other units: rows times R, x = E y (columns times E, bounds over E), the
    right-hand sides and bounds times fb (x times fb), c times fc."""
    R_ub: np.ndarray
    R_eq: np.ndarray
    E: np.ndarray
    fb: float
    fc: float

    def apply(self, lp: LP) -> LP:
        E, fb = self.E, self.fb
        return LP(lp.c * E * self.fc, self.R_ub[:, None] * lp.A_ub * E, self.R_ub * lp.b_ub * fb,
                  self.R_eq[:, None] * lp.A_eq * E, self.R_eq * lp.b_eq * fb, lp.bounds * fb / E[:, None])

    def x_back(self, x):
        """The first LP's x for an x of the LP in these units."""
        return np.asarray(x) * self.E / self.fb

    def objective_back(self, f):
        return f / (self.fb * self.fc)


def random_units(rng, lp: LP, low=-8, high=8) -> Units:
    """Powers of ten 10^k, k uniform in low..high, for each row, each column, b and c."""
    def p(size=None):
        return 10.0 ** rng.integers(low, high + 1, size)
    return Units(p(lp.A_ub.shape[0]), p(lp.A_eq.shape[0]), p(lp.c.size), float(p()), float(p()))


def judge(lp: LP, reference, x, fun, tol=1e-6) -> str:
    """'' when ``x`` (of ``lp`` as first written) is feasible and optimal to ``tol`` relative to
    the LP's magnitudes (rows: 1 + |b_i| + sum |a_ij x_j|; the objective: 1 + sum |c_j x_j| of
    HiGHS's optimum); else what is wrong."""
    x = np.asarray(x, dtype=np.float64)
    xr = reference.x
    scale = 1.0 + np.abs(lp.c * xr).sum()
    problems = []
    if abs(fun - reference.fun) > tol * scale:
        problems.append(f"objective {fun!r} vs HiGHS {reference.fun!r}")
    for name, A, b, eq in (("ub", lp.A_ub, lp.b_ub, False), ("eq", lp.A_eq, lp.b_eq, True)):
        if not A.shape[0]:
            continue
        r = A @ x - b
        size = 1.0 + np.abs(b) + np.abs(A) @ np.abs(x)
        v = np.abs(r) / size if eq else np.maximum(r, 0.0) / size
        if v.max(initial=0.0) > tol:
            problems.append(f"row {name}[{int(np.argmax(v))}] violated by {v.max():.2e} (relative)")
    lo, up = lp.bounds[:, 0], lp.bounds[:, 1]
    size = 1.0 + np.abs(xr)
    v = np.maximum(np.where(np.isfinite(lo), lo - x, 0.0), np.where(np.isfinite(up), x - up, 0.0)) / size
    if v.max(initial=0.0) > tol:
        problems.append(f"bound of x[{int(np.argmax(v))}] violated by {v.max():.2e} (relative)")
    return "; ".join(problems)


def case(seed: int, low=-8, high=8) -> tuple:
    """(the LP, its other units) of one seed: each case stands alone."""
    rng = np.random.default_rng(seed)
    lp = random_lp(rng)
    return lp, random_units(rng, lp, low, high)
