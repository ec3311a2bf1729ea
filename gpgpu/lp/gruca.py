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
"""
from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = ["gruca_like", "gruca_sizes", "GRUCA_TABLE1"]

#: 002's Table 1 for the Gruca problems: N -> (rows, columns, non-zeros, Cplex's Cholesky
#: non-zeros, Cplex IPM time, dual simplex time) as printed (None: out of memory / over 28 days)
GRUCA_TABLE1 = {
    1024: (1025, 1025, 34817, 0.5e6, 0.82, 0.38),
    4096: (4097, 4097, 270337, 8e6, 89.0, 11.0),
    16384: (16385, 16385, 2129921, 128e6, 2351.0, 924.0),
    65536: (65537, 65537, 16908289, 2048e6, None, 111 * 3600.0),
}


def gruca_sizes(N: int) -> tuple:
    """(rows, columns, non-zeros) of ``gruca_like(N)``: N + 1, N + 1, N sqrt(N) + 2N + 1."""
    r = math.isqrt(N)
    return N + 1, N + 1, N * r + 2 * N + 1


def gruca_like(N: int, seed: int = 0):
    """An LP with the structure of Gruca's problems in 002's Table 1 (module notes), as a
    standard-form :class:`~gpgpu.lp.Problem` with a sparse A. N must be a perfect square >= 4."""
    import scipy.sparse as sp

    from .mps import Problem

    if isinstance(N, bool) or not isinstance(N, numbers.Integral) or N < 4:
        raise ValueError(f"gruca_like: N must be an integer >= 4, got {N!r}")
    r = math.isqrt(N)
    if r * r != N:
        raise ValueError(f"gruca_like: N must be a perfect square (each regular row holds sqrt(N) "
                         f"non-zeros; 002 uses 1024, 4096, 16384, 65536), got {N}")
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
    b = A @ x0
    c = A.T @ y0 + s0
    return Problem.from_arrays(A, b, c, name=f"gruca_like_{N}")
