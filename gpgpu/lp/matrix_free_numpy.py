"""The matrix-free back end in numpy / scipy float64: the CPU reference of paper 002's method.

Every operation is the float64 counterpart of a GPU pass of
:class:`~gpgpu.lp.matrix_free_gpu.GPUMatrixFree`: FSATY and FSAX are scipy CSR products (002's
serial CPU code held A column-wise and row-wise alike), the preconditioner (7)-(8) is built from
the k columns G_R e_i computed as products with unit vectors (batched here as one sparse
product with the k rows of A), L11 by numpy's Cholesky, L21 by triangular solves.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from .matrix_free import MatrixFreeBackend

__all__ = ["NumpyMatrixFree", "partial_cholesky", "PIVOT_TOLERANCE"]

#: pivots of G11 at or below this fraction of their diagonal entry are replaced (float64)
PIVOT_TOLERANCE = 1e-10


def partial_cholesky(G_cols, K, diag):
    """The partial Cholesky preconditioner (002 (7)-(8)) from the k columns ``G_cols`` = G[:, K]
    (m x k, float64) and the diagonal of G.

    Answers ``(C, B, d_s)``: C the k x k lower factor of G11 = G[K, K] (C = L11 D_L^1/2),
    B = G[:, K] C^-T (its rows at K hold C itself and are not used), and d_s the diagonal of the
    Schur complement G22 - B2 B2^T at the other rows (entries at K are 0). A pivot that is not
    positive is replaced by the largest diagonal entry (the preconditioner stays positive
    definite; PCG then needs more iterations, it does not fail); a pivot at or below
    ``PIVOT_TOLERANCE`` times its diagonal entry counts as not positive.
    """
    G11 = G_cols[K]
    G11 = 0.5 * (G11 + G11.T)
    replaced = 0
    try:
        C = np.linalg.cholesky(G11)
    except np.linalg.LinAlgError:
        # guarded outer-product factorization: a non-positive pivot becomes max(diag)
        k = G11.shape[0]
        S = G11.copy()
        C = np.zeros_like(S)
        big = float(np.max(np.diag(G11))) if k else 1.0
        for j in range(k):
            p = S[j, j]
            # relative to the pivot's own diagonal entry, as the GPU's guarded factor (there 1e-6,
            # for float32): a pivot of 1e-14 once let the multipliers of nug12's complete,
            # numerically singular factor (k = m, delta = 1e-8) overflow to inf
            if not p > PIVOT_TOLERANCE * max(G11[j, j], 0.0):
                p, replaced = big, replaced + 1
            C[j, j] = np.sqrt(p)
            C[j + 1:, j] = S[j + 1:, j] / C[j, j]
            S[j + 1:, j + 1:] -= np.outer(C[j + 1:, j], C[j + 1:, j])
    B = sla.solve_triangular(C, G_cols.T, lower=True).T          # G[:, K] C^-T
    d_s = diag - np.einsum("ij,ij->i", B, B)
    d_s[K] = 0.0
    return C, B, d_s, replaced


class NumpyMatrixFree(MatrixFreeBackend):
    """:class:`~gpgpu.lp.matrix_free.MatrixFreeBackend` in float64 numpy and scipy.sparse."""

    name = "numpy64"
    pcg_floor = 1e-13

    def __init__(self, problem, profile: bool = False):
        super().__init__(problem, profile=profile)
        self.A = problem.A.tocsr()
        self.AT = self.A.T.tocsr()
        self.A2 = self.A.multiply(self.A).tocsr()
        self.theta = None
        self.delta = 0.0
        self.pre = None

    def vector(self, arr):
        return np.array(arr, dtype=np.float64)

    def to_numpy(self, v):
        self.readbacks += 1
        return np.array(v, dtype=np.float64)

    def dot(self, x, y):
        self.readbacks += 1
        return float(x @ y)

    def axpy(self, a, x, y):
        return a * x + y

    def set_weights(self, theta, delta):
        self.theta = np.asarray(theta, dtype=np.float64)
        self.delta = float(delta)

    def normal_matvec(self, v):
        with self.timed("fsaty"):
            t = self.AT @ v
        t = self.theta * t
        with self.timed("fsax"):
            u = self.A @ t
        return u + self.delta * v

    def build_preconditioner(self, rank):
        m = self.m
        diag = self.A2 @ self.theta + self.delta                 # diag(G_R) = (A .* A) Theta~ + delta
        k = min(rank, m)
        K = np.sort(np.argpartition(-diag, k - 1)[:k]) if k < m else np.arange(m)
        # G_R e_i for i in K: A (Theta~ (A^T e_i)) + delta e_i, all k at once
        rows = self.A[K]                                         # (A^T e_i)^T, i in K
        G_cols = (self.A @ (rows.multiply(self.theta[None, :]).T)).toarray()
        G_cols[K, np.arange(k)] += self.delta
        C, B, d_s, replaced = partial_cholesky(G_cols, K, diag)
        floor = 1e-12 * diag
        dinv = np.where(d_s > floor, 1.0 / np.maximum(d_s, floor), 1.0 / diag)
        dinv[K] = 0.0
        self.pre = (K, C, B, dinv)
        self.readbacks += m                                      # the diagonal, to choose K
        return {"k": k, "replaced": replaced, "schur_floor": int(np.count_nonzero(d_s[dinv > 0] <= floor[dinv > 0]))}

    def precondition(self, r):
        K, C, B, dinv = self.pre
        u1 = sla.solve_triangular(C, r[K], lower=True)            # C^-1 r1
        w = (r - B @ u1) * dinv                                  # D_S^-1 (r2 - L21 u1)
        v = u1 - B.T @ w
        out = w
        out[K] = sla.solve_triangular(C, v, lower=True, trans="T")   # C^-T (u1 - L21^T w2)
        return out
