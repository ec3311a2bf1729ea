"""Structural stand-ins for Gruca's quantum-physics LPs of paper 002 (Tables 1-3).

Gruca's models are not public. Paper 002 gives their structure: N + 1 rows and N + 1 columns
(N = 1024, 4096, 16384, 65536: "1kx1k0" .. "64kx64k0") with N sqrt(N) + 2N + 1 non-zeros
(Table 1: 34817, 270337, 2129921, 16908289), and "at most one dense row and column, all other
rows and columns have the same, small, number of non-zeroes" (section 3.2). ``gruca_like(N)``
builds LPs with exactly that structure -- they are NOT Gruca's models, their numbers are random:

* the N regular rows and columns: sqrt(N) non-zeros each, the union of sqrt(N) shifted copies of
  one random permutation (row i has its entries in columns pi((i + t_q) mod N), q = 1 .. sqrt(N),
  with distinct shifts t_q, so no two coincide and every column gets sqrt(N) too);
* one dense row (row N, all N + 1 columns) and one dense column (column N, all N + 1 rows):
  2N + 1 more non-zeros;
* values uniform in [0.5, 1.5] with random signs (the dense column positive), except one
  entry of each row, 2 sqrt(N) + U(0, 1), and the dense row's others, U(0.5, 1.5) / sqrt(N):
  every row is strictly diagonally dominant after a column permutation, so A is non-singular
  and well conditioned (with all values of one size, random square A are ill conditioned and
  the LP itself, not the method, would be the difficulty);
* feasible and bounded by construction: b = A x0 with x0 > 0 and c = A^T y0 + s0 with s0 > 0, so
  x0 is primal feasible and (y0, s0) dual feasible, and the optimum is finite. A is square
  (as Table 1's) and, with random values, non-singular, so x0 is the only feasible point and the
  optimum; y* = A^-T c, s* = 0. The interior point method does not know that: it follows the
  central path from its own starting point, and its linear algebra (the work 002 measures) is
  that of any LP with this matrix.

``slack=True`` (what the experiments of 002 use) makes a feasible set of more than one point:
the N + 1 rows above become inequalities A0 x <= b, and the standard form gains a slack column
per row, A = [A0  I] ((N + 1) x (2N + 2), N + 1 more non-zeros):

* b = A0 x0 + w0 with x0, w0 > 0: (x0, w0) is an interior point of the feasible set, which
  therefore has dimension N + 1 (a polytope, not a point);
* the slacks cost nothing and c = A0^T y0 + s0 with y0 < 0 (entries -U(0.5, 1.5)) and s0 > 0:
  (y0, s0, -y0) is strictly dual feasible (dual: A0^T y <= c, y <= 0), so the optimum is
  finite, at a vertex that no formula gives (HiGHS is the reference); min c^T x over
  A0 x <= b, x >= 0.

Table 1's sizes are those of A0, the model's own columns (Cplex counts a row's slack as part
of the row, not as a column of the model): the printed 1025 columns of 1kx1k0 cannot be a
square non-singular A of an equality LP with a feasible set worth solving. Gruca's models may
differ; 002 says nothing more.

``per_row`` (default sqrt(N)): the non-zeros of a regular row and column. 002's Table 3 has
two problems that Tables 1-2 lack, 96kx128-0 and 256x256-0, without their sizes;
``experiments.mfipm.common.GRUCA_NAMED`` defines stand-ins for them with this (its notes say
how they were read from the names).
"""
from __future__ import annotations

import math
import numbers

import numpy as np
from .mps import Problem

__all__ = ["gruca_like", "gruca_sizes", "GRUCA_TABLE1"]

#: 002's Table 1 for the Gruca problems: N -> (rows, columns, non-zeros, Cplex's Cholesky
#: non-zeros, Cplex IPM time, dual simplex time) as printed (None: out of memory / over 28 days)
GRUCA_TABLE1 = {
    1024: (1025, 1025, 34817, 0.5e6, 0.82, 0.38),
    4096: (4097, 4097, 270337, 8e6, 89.0, 11.0),
    16384: (16385, 16385, 2129921, 128e6, 2351.0, 924.0),
    65536: (65537, 65537, 16908289, 2048e6, None, 111 * 3600.0),
}


def gruca_sizes(N: int, per_row: int | None = None, slack: bool = False) -> tuple:
    """(rows, columns, non-zeros) of ``gruca_like(N, per_row=per_row, slack=slack)``: N + 1,
    N + 1, N r + 2N + 1 with r = ``per_row`` (default sqrt(N)); with ``slack``, N + 1 more
    columns and non-zeros."""
    r = math.isqrt(N) if per_row is None else int(per_row)
    extra = N + 1 if slack else 0
    return N + 1, N + 1 + extra, N * r + 2 * N + 1 + extra


def gruca_like(N: int, seed: int = 0, per_row: int | None = None, slack: bool = False):
    """An LP with the structure of Gruca's problems of paper 002's Table 1, with random numbers.

    Gruca's quantum-physics LPs, on which paper 002 measures its matrix-free method, are not
    public; 002 gives their structure (section 3.2 and Table 1): N + 1 rows and columns, sqrt(N)
    non-zeros in each regular row and column, one dense row and one dense column. This builds LPs
    with exactly that structure as a standard-form :class:`~gpgpu.lp.Problem` with a sparse A,
    feasible and bounded by construction (the module notes say how). They are NOT Gruca's models.

    Parameters
    ----------
    N : int
        The regular rows, a perfect square >= 4 (any integer >= 4 when ``per_row`` is given).
    seed : int
        The seed of the random values.
    per_row : int, optional
        The non-zeros of a regular row and column, 2 <= per_row < N; default sqrt(N).
    slack : bool
        Inequality rows A0 x <= b with a slack column each (a polytope), or the square equality LP.

    Returns
    -------
    Problem
        The LP, named ``gruca_like_N`` (``gruca_like_N_slack`` with ``slack``).

    Raises
    ------
    ValueError
        ``N`` not an integer >= 4, not a perfect square without ``per_row``, or ``per_row`` out of range.
    TypeError
        ``slack`` that is not True or False.

    Examples
    --------
    >>> from gpgpu import lp
    >>> p = lp.gruca_like(16)
    >>> p.standard_size, p.A.nnz
    ((17, 17), 97)
    >>> q = lp.gruca_like(16, slack=True)
    >>> r = lp.solve(q)
    >>> q.standard_size, r.status
    ((17, 34), 'optimal')
    """
    import scipy.sparse as sp

    if isinstance(N, bool) or not isinstance(N, numbers.Integral) or N < 4:
        raise ValueError(f"gruca_like: N must be an integer >= 4, got {N!r}")
    if per_row is None:
        r = math.isqrt(N)
        if r * r != N:
            raise ValueError(f"gruca_like: N must be a perfect square (each regular row holds sqrt(N) "
                             f"non-zeros; 002 uses 1024, 4096, 16384, 65536), got {N}; or give per_row, "
                             "the non-zeros of a regular row")
    else:
        if isinstance(per_row, bool) or not isinstance(per_row, numbers.Integral) or not 2 <= per_row < N:
            raise ValueError(f"gruca_like: per_row (the non-zeros of a regular row) must be an integer with "
                             f"2 <= per_row < N = {N}, got {per_row!r}")
        r = int(per_row)
    if not isinstance(slack, (bool, np.bool_)):
        raise TypeError(f"gruca_like: slack must be True or False, got {slack!r}")
    rng = np.random.default_rng(seed)
    perm = rng.permutation(N)
    shifts = rng.choice(N, size=r, replace=False)
    rows = np.repeat(np.arange(N), r)
    cols = perm[(rows + np.tile(shifts, N)) % N]
    vals = rng.uniform(0.5, 1.5, rows.size) * rng.choice([-1.0, 1.0], rows.size)
    vals[::r] = 2.0 * r + rng.uniform(0.0, 1.0, N)        # one dominant entry per regular row
    rows = np.concatenate([rows, np.full(N + 1, N), np.arange(N)])
    cols = np.concatenate([cols, np.arange(N + 1), np.full(N, N)])
    dense_row = rng.uniform(0.5, 1.5, N + 1) / r
    dense_row[N] = 2.0 * r + rng.uniform(0.0, 1.0)
    vals = np.concatenate([vals, dense_row, rng.uniform(0.5, 1.5, N)])
    A = sp.csr_matrix((vals, (rows, cols)), shape=(N + 1, N + 1))
    x0 = rng.uniform(0.5, 1.5, N + 1)
    y0 = rng.standard_normal(N + 1)
    s0 = rng.uniform(0.5, 1.5, N + 1)
    if not slack:
        b = A @ x0
        c = A.T @ y0 + s0
        return Problem.from_arrays(A, b, c, name=f"gruca_like_{N}")
    y0 = -rng.uniform(0.5, 1.5, N + 1)                    # y <= 0: the slacks' dual constraints
    w0 = rng.uniform(0.5, 1.5, N + 1)
    b = A @ x0 + w0
    c = np.concatenate([A.T @ y0 + s0, np.zeros(N + 1)])
    A = sp.hstack([A, sp.identity(N + 1, format="csr")], format="csr")
    return Problem.from_arrays(A, b, c, name=f"gruca_like_{N}_slack")
