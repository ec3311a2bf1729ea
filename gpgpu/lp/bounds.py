"""Upper bounds in the Newton system instead of rows of the normal matrix (beyond paper 000).

The standard form (4.1)-(4.3) of paper 000 has no upper bounds, so
:func:`~gpgpu.lp.mps.standardize` gives every bounded column ``0 <= x_j <= u_j`` a row of its
own, ``x_j + w_k = u_k`` with a new ``w_k >= 0``: the bound rows, last in ``A``. Paper 000's
method factors the normal matrix of every row, so a problem with many bounds factors a much
larger matrix than its own rows need (grow22: 1320 rows instead of 440, a dense Cholesky 27
times the work).

Production interior point codes (Lustig, Marsten and Shanno's OB1, Vanderbei's LOQO, HiGHS's
IPX; [Wri97] ch. 11) keep ``x <= u`` in the Newton system: the bound's slack and dual enter the
diagonal, and the normal matrix keeps the problem's own rows. This module does the same by block
elimination of the bound rows from the normal equations of the standard form, so that the
iteration of :func:`~gpgpu.lp.mehrotra.mehrotra` -- its points, its tests, its duals, its
infeasibility detection -- is the standard form's, unchanged; only the linear algebra of
``factor_normal`` / ``solve_normal`` differs.

The derivation. Order the rows as the m main rows and the bound rows; bound row k reads
``alpha_k x_j + beta_k w_k = u_k`` (1 and 1 from :func:`standardize`; other powers of two after
``scale=True``), where ``w_k`` appears in no other row and no two bound rows share a column.
With D = diag(d) the weights of the normal matrix and ``delta`` its shift,

    M = [[A D Aᵀ + δI,   A D E α],
         [α Eᵀ D Aᵀ,     G      ]],    G = diag(α_k² d_j(k) + β_k² d_w(k) + δ),

(E selects the bounded columns). G is diagonal, so with the Schur complement

    S = A D Aᵀ + δI - A D E α G⁻¹ α Eᵀ D Aᵀ = A D̃ Aᵀ + δI,
    d̃_j = d_j - α_k² d_j² / G_k = d_j (β_k² d_w + δ) / (α_k² d_j + β_k² d_w + δ)   (j bounded)

(d̃_j = d_j for the other columns), a system M [z1; z2] = [r1; r2] is

    S z1 = r1 - A (D E α G⁻¹ r2),        z2 = G⁻¹ (r2 - α Eᵀ D Aᵀ z1).

With δ = 0, 1/d̃_j = s_j/x_j + z_k/w_k: the diagonal of the classic formulation with bounds
(Θ⁻¹ = X⁻¹S + W⁻¹Z, [Wri97] p. 220). Only S, of the main rows' order, is formed and factored.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = ["BoundRows", "BOUNDS"]

#: ``bounds=`` of the Mehrotra back ends: "implicit" (the default, this module) or "rows" (the
#: normal matrix of every row of the standard form, as paper 000)
BOUNDS = ("implicit", "rows")


@dataclass
class BoundRows:
    """The trailing bound rows of a standard-form ``A`` and how to eliminate them.

    Attributes
    ----------
    m : int
        Rows of the normal matrix (the main rows ``0 .. m-1``); the bound rows are ``m ..``.
    x, w : ndarray of int
        For bound row k, the column of its bounded variable and of its slack.
    alpha, beta : ndarray
        The coefficients of ``x`` and ``w`` in bound row k.
    A_main : scipy.sparse.csr_matrix
        The main rows of A (all its columns; a slack's column is zero there), float64.
    """

    m: int
    x: np.ndarray
    w: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    A_main: sp.csr_matrix

    @property
    def count(self) -> int:
        return int(self.x.size)

    def main_rows(self, dtype) -> sp.csr_matrix:
        """A_main in ``dtype`` (float32 for the float32 back ends' vectors), made once."""
        dtype = np.dtype(dtype)
        if dtype == np.float64:
            return self.A_main
        cache = self.__dict__.setdefault("_cast", {})
        if dtype not in cache:
            cache[dtype] = self.A_main.astype(dtype)
        return cache[dtype]

    def main_rows_transposed(self, dtype) -> sp.csr_matrix:
        """A_mainᵀ in ``dtype`` as CSR, made once (its products add the terms of ``A_main.T @``
        in the same order)."""
        cache = self.__dict__.setdefault("_transposed", {})
        dtype = np.dtype(dtype)
        if dtype not in cache:
            cache[dtype] = self.main_rows(dtype).T.tocsr()
        return cache[dtype]

    @classmethod
    def detect(cls, A) -> "BoundRows | None":
        """The bound rows of ``A``: the longest run of last rows that each have two non-zeros,
        one of them in a column that no other row has (the slack ``w``), the other (``x``) in no
        other row of the run; None when the last row is not one."""
        A = sp.csr_matrix(A)
        m, n = A.shape
        per_column = np.bincount(A.indices, minlength=n)
        used = np.zeros(n, dtype=bool)
        xs, ws, al, be = [], [], [], []
        r = m
        while r > 1:                                     # a normal matrix of one row at least
            lo, hi = A.indptr[r - 1], A.indptr[r]
            if hi - lo != 2:
                break
            (c1, c2), (v1, v2) = A.indices[lo:hi], A.data[lo:hi]
            if per_column[c2] == 1:
                xc, wc, a, b = c1, c2, v1, v2
            elif per_column[c1] == 1:
                xc, wc, a, b = c2, c1, v2, v1
            else:
                break
            if used[xc]:
                break
            used[xc] = used[wc] = True
            xs.append(xc), ws.append(wc), al.append(a), be.append(b)
            r -= 1
        if r == m:
            return None
        order = slice(None, None, -1)                    # bound row k is row r + k
        return cls(m=r, x=np.asarray(xs[order], dtype=np.int64), w=np.asarray(ws[order], dtype=np.int64),
                   alpha=np.asarray(al[order], dtype=np.float64), beta=np.asarray(be[order], dtype=np.float64),
                   A_main=sp.csr_matrix(A[:r], dtype=np.float64))

    # ------------------------------------------------------------------ the elimination (numpy)
    def _g(self, d, shift: float):
        """G_k = alpha_k² d_x + beta_k² d_w + delta, in d's precision."""
        dx, dw = d[self.x], d[self.w]
        return self.alpha.astype(d.dtype) ** 2 * dx + self.beta.astype(d.dtype) ** 2 * dw + d.dtype.type(shift)

    def weights(self, d: np.ndarray, shift: float = 0.0) -> np.ndarray:
        """d̃: the weights of the Schur complement S = A_main diag(d̃) A_mainᵀ + shift I (module
        notes), in d's precision; a slack's entry is 0 (its column is not in the main rows)."""
        d = np.asarray(d)
        out = d.copy()
        keep = d.dtype.type(shift) + self.beta.astype(d.dtype) ** 2 * d[self.w]    # beta² d_w + delta
        dx = d[self.x]
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            # d_x keep / (alpha² d_x + keep), written so that a huge d_x cannot overflow
            out[self.x] = keep / (self.alpha.astype(d.dtype) ** 2 + keep / dx)
        out[self.w] = 0
        return out

    def eliminate(self, r: np.ndarray, d: np.ndarray, shift: float = 0.0) -> np.ndarray:
        """The right-hand side of the Schur system for M z = r: r1 - A_main (D E alpha G⁻¹ r2)."""
        r = np.asarray(r)
        v = np.zeros(d.shape, dtype=r.dtype)
        v[self.x] = d[self.x] * self.alpha.astype(r.dtype) * r[self.m:] / self._g(d, shift)
        return (r[:self.m] - self.main_rows(r.dtype) @ v).astype(r.dtype, copy=False)

    def back_substitute(self, z1: np.ndarray, r: np.ndarray, d: np.ndarray, shift: float = 0.0) -> np.ndarray:
        """z = [z1; z2] with z2 = G⁻¹ (r2 - alpha Eᵀ D A_mainᵀ z1): the solution of M z = r."""
        t = self.main_rows_transposed(z1.dtype) @ z1
        z2 = (np.asarray(r)[self.m:] - self.alpha.astype(z1.dtype) * d[self.x] * t[self.x]) / self._g(d, shift)
        return np.concatenate([z1, z2.astype(z1.dtype, copy=False)])
