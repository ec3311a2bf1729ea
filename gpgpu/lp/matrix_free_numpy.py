"""The matrix-free back end in numpy / scipy float64: the CPU reference of paper 002's method.

Every operation is the float64 counterpart of a GPU pass of
:class:`~gpgpu.lp.matrix_free_gpu.GPUMatrixFree`: FSATY and FSAX are scipy CSR products (002's
serial CPU code held A column-wise and row-wise alike), the preconditioner (7)-(8) is built from
the k columns G_R e_i computed as products with unit vectors (batched here as one sparse
product with the k rows of A), L11 by numpy's Cholesky, L21 by triangular solves.

``threads`` (beyond the serial code, 002's "8 core" column of Table 3): the products A v, Aᵀ w
and (A .* A) theta run in that many threads, each over a block of rows (:class:`ThreadedCSR`:
Aᵀ y from a row-wise CSR copy of Aᵀ, cut into row blocks the same way, so no thread writes
where another does and no partial vectors are reduced). scipy's CSR product releases the GIL
while it loops over the rows, so the blocks run in parallel (docs/guide/matrix-free.md).
Each row's sum is the serial product's, in the same order: the answers equal the serial
products bit for bit, and a solve with threads takes the serial solve's iterations.
"""
from __future__ import annotations

import os

import numpy as np
import scipy.linalg as sla

from .matrix_free_backend import MatrixFreeBackend

__all__ = ["NumpyMatrixFree", "ThreadedCSR", "partial_cholesky", "PIVOT_TOLERANCE", "MIN_BLOCK_NONZEROS"]

#: ThreadedCSR gives a thread at least this many non-zeros: below, handing the block to a
#: thread costs more than the product (measured on 2 cores: a 700-non-zero product took 10 x
#: longer in two threads than in one)
MIN_BLOCK_NONZEROS = 1 << 15

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


class ThreadedCSR:
    """``M @ v`` for a scipy CSR matrix M and a 1-D float64 v, in ``threads`` threads of a
    pool, each over one block of consecutive rows (blocks of about equal non-zeros, so a dense
    row does not leave the other threads idle; at most one block per ``min_block`` non-zeros,
    default ``MIN_BLOCK_NONZEROS``, so a small matrix stays in one thread). Each row is summed
    as scipy sums it serially, so the answer equals ``M @ v`` bit for bit. ``pool``: a
    ``concurrent.futures`` executor to share (else one of its own, ended by ``close()`` or the
    garbage collector); ``threads=1`` is ``M @ v`` itself.
    """

    def __init__(self, M, threads: int, pool=None, min_block: int = MIN_BLOCK_NONZEROS):
        import scipy.sparse as sp

        threads = _check_threads(threads)
        self.M = sp.csr_matrix(M)
        self.shape = self.M.shape
        m = self.shape[0]
        blocks = max(1, min(threads, m, self.M.nnz // max(int(min_block), 1)))
        # cut where the running count of non-zeros (plus one a row, for empty rows) passes
        # equal shares
        work = self.M.indptr + np.arange(m + 1)
        cuts = np.searchsorted(work, np.linspace(0, work[-1], blocks + 1)[1:-1])
        bounds = np.unique(np.concatenate([[0], cuts, [m]]))
        self.bounds = [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
        self.blocks = [self.M[a:b] for a, b in self.bounds]
        self.threads = threads
        self._own = pool is None and len(self.blocks) > 1
        if self._own:
            from concurrent.futures import ThreadPoolExecutor

            pool = ThreadPoolExecutor(len(self.blocks), thread_name_prefix="gpgpu-csr")
        self.pool = pool

    def __matmul__(self, v):
        v = np.asarray(v, dtype=np.float64)
        if len(self.blocks) <= 1:
            return self.M @ v
        out = np.empty(self.shape[0], dtype=np.float64)

        def part(i):
            a, b = self.bounds[i]
            out[a:b] = self.blocks[i] @ v

        for f in [self.pool.submit(part, i) for i in range(len(self.blocks))]:
            f.result()
        return out

    def close(self) -> None:
        if self._own and self.pool is not None:
            self.pool.shutdown(wait=False)
        self.pool = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def _check_threads(threads) -> int:
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise ValueError(f"threads must be a positive integer (the threads of the sparse products; 1 is "
                         f"002's serial code, os.cpu_count() = {os.cpu_count()} here), got {threads!r}")
    return int(threads)


class NumpyMatrixFree(MatrixFreeBackend):
    """:class:`~gpgpu.lp.matrix_free.MatrixFreeBackend` in float64 numpy and scipy.sparse.

    ``threads`` (default 1, 002's serial code): the sparse products A v, Aᵀ w and the
    diagonal's (A .* A) theta in that many threads, over blocks of rows (module notes; the
    answers are the serial ones). Pass it through ``solve(..., method="matrix-free",
    backend="numpy64", threads=8)``; the result's ``backend`` then reads "numpy64-threads".
    A value that is not a positive integer raises ValueError.
    """

    name = "numpy64"
    pcg_floor = 1e-13

    def __init__(self, problem, profile: bool = False, threads: int = 1):
        super().__init__(problem, profile=profile)
        self.threads = _check_threads(threads)
        self.A = problem.A.tocsr()
        self.AT = self.A.T.tocsr()
        self.A2 = self.A.multiply(self.A).tocsr()
        self._pool = None
        if self.threads > 1:
            from concurrent.futures import ThreadPoolExecutor

            self.name = "numpy64-threads"
            self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="gpgpu-csr")
            # the products PCG makes (the preconditioner's build keeps scipy's sparse x sparse)
            self._Ax, self._ATy, self._A2x = (ThreadedCSR(M, self.threads, self._pool)
                                              for M in (self.A, self.AT, self.A2))
        else:
            self._Ax, self._ATy, self._A2x = self.A, self.AT, self.A2

    def release(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
            self._Ax, self._ATy, self._A2x = self.A, self.AT, self.A2
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
            t = self._ATy @ v
        t = self.theta * t
        with self.timed("fsax"):
            u = self._Ax @ t
        return u + self.delta * v

    def build_preconditioner(self, rank):
        m = self.m
        diag = self._A2x @ self.theta + self.delta                 # diag(G_R) = (A .* A) Theta~ + delta
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
        self.diagonal = diag
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
