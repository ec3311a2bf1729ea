"""Guarded Cholesky factorization and solve through LAPACK, in float32 or float64.

Paper 000 (Jung & O'Leary 2006) factors the normal matrix M = A D A^T of Mehrotra's
method with the outer-product Cholesky of its Algorithm 2, and a pivot that is too small
is replaced by a huge number ([Wri97] ch. 11): see
:func:`gpgpu.lp.numpy_backend.cholesky_outer`, the Python loop this module mirrors. At step
k a pivot that is not finite or not above ``pivot_tol * M0[k, k]`` (M0 the ORIGINAL
diagonal of M) becomes ``huge``: L[k, k] = sqrt(huge), the column below it is divided by
sqrt(huge) (so it is ~0) and the factorization goes on.

Beyond the paper: the factorization is LAPACK's blocked right-looking ``potrf`` (BLAS level
3, all cores). When ``potrf`` stops at a non-positive or NaN pivot, or finishes but one of
its pivots L[j, j]**2 is below the guard's threshold, the leading j columns are kept (a
``trsm`` gives the rows below the valid block when ``potrf`` stopped), the trailing Schur
complement is formed by ``syrk``, its first pivot is replaced as in the loop, and ``potrf``
restarts on what remains. Without bad pivots the cost is one ``potrf``; each bad pivot adds
the work of the restart.
"""
from __future__ import annotations

import numpy as np
from scipy.linalg.blas import get_blas_funcs
from scipy.linalg.lapack import get_lapack_funcs

from .backend import default_pivot_tol, huge_pivot

__all__ = ["guarded_cholesky", "guarded_solve"]


def _square_float(M):
    M = np.asarray(M)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise ValueError(f"M must be a square matrix, got shape {M.shape}")
    if M.dtype not in (np.float32, np.float64):
        raise ValueError(f"M must be float32 or float64, got {M.dtype}")
    return M


def _first_bad(C, info, thr):
    """Local index of the first pivot of ``potrf``'s answer the guard rejects, or n if none.

    ``info = j + 1 > 0`` means ``potrf`` stopped at pivot j; the pivots before it are its
    diagonal squared, checked against ``thr`` (tol * M0) like ``_bad`` of the loop.
    """
    if info < 0:
        raise RuntimeError(f"potrf: illegal argument {-info}")
    n = C.shape[0]
    valid = n if info == 0 else info - 1
    d = np.diagonal(C)[:valid].astype(np.float64)
    bad = np.flatnonzero(~(np.isfinite(d) & (d * d > thr[:valid])))
    return int(bad[0]) if bad.size else valid


def _leading_rows(C, info, T, j):
    """Rows j: of the factor's first j columns: from ``potrf`` if it finished, else by trsm
    Lb = T[j:, :j] La^-T (a stopped ``potrf`` may not have reached them)."""
    if info == 0:
        return C[j:, :j]
    trsm, = get_blas_funcs(("trsm",), (T,))
    return trsm(1.0, C[:j, :j], T[j:, :j], side=1, lower=1, trans_a=1)


def _schur(T, Lb, j):
    """Lower triangle of T[j:, j:] - Lb Lb^T (syrk); T itself when j = 0."""
    if j == 0:
        return T
    syrk, = get_blas_funcs(("syrk",), (T,))
    return syrk(-1.0, Lb, beta=1.0, c=T[j:, j:], lower=1)


def guarded_cholesky(M, pivot_tol=None, huge=None):
    """Cholesky factor of M with [Wri97]'s pivot replacement, by LAPACK ``potrf``.

    Same contract as :func:`gpgpu.lp.numpy_backend.cholesky_outer` (equal results up to
    rounding): reads the lower triangle of M, in M's dtype (``spotrf`` / ``dpotrf``).

    Parameters
    ----------
    M : ndarray, shape (m, m), float32 or float64
        Symmetric matrix (only the lower triangle and diagonal are read).
    pivot_tol : float, optional
        A pivot that is not finite or not above ``pivot_tol * M[k, k]`` (original diagonal)
        is replaced; default :func:`~gpgpu.lp.backend.default_pivot_tol`.
    huge : float, optional
        Value of a replaced pivot; default :func:`~gpgpu.lp.backend.huge_pivot`.

    Returns
    -------
    L : ndarray, shape (m, m)
        Lower triangular factor in M's dtype (zeros above the diagonal, Fortran order).
    replaced : int
        Number of pivots replaced.
    """

    M = _square_float(M)
    dt, m = M.dtype, M.shape[0]
    tol = default_pivot_tol(dt) if pivot_tol is None else pivot_tol
    root = np.sqrt(dt.type(huge_pivot(dt) if huge is None else huge))
    thr = np.asarray(tol * np.diagonal(M), dtype=dt)
    potrf, = get_lapack_funcs(("potrf",), (M,))
    L = np.zeros((m, m), dtype=dt, order="F")
    T, k, replaced = M, 0, 0
    with np.errstate(all="ignore"):
        while k < m:                                  # T: trailing block at step k
            C, info = potrf(T, lower=1, clean=1)
            j = _first_bad(C, info, thr[k:])
            if j == T.shape[0]:
                L[k:, k:] = C
                break
            L[k:k + j, k:k + j] = np.tril(C[:j, :j])
            Lb = _leading_rows(C, info, T, j)
            L[k + j:, k:k + j] = Lb
            S = _schur(T, Lb, j)                      # pivot S[0, 0] is the guarded one
            col = S[1:, 0] / root
            L[k + j, k + j] = root
            L[k + j + 1:, k + j] = col
            T = S[1:, 1:] - np.multiply.outer(col, col)
            replaced += 1
            k += j + 1
    return L, replaced


def guarded_solve(L, r):
    """Solve L L^T z = r (``potrs``: forward then backward substitution) in L's dtype.

    No finiteness check, so a replaced pivot's sqrt(huge) is fine (its component of z is
    ~0).

    Parameters
    ----------
    L : ndarray, shape (m, m)
        Lower triangular factor, e.g. from :func:`guarded_cholesky`.
    r : array_like, shape (m,) or (m, k)

    Returns
    -------
    z : ndarray, shape of r, dtype of L
    """
    L = np.asarray(L)
    r = np.asarray(r, dtype=L.dtype)
    if r.size == 0:
        return r.copy()
    potrs, = get_lapack_funcs(("potrs",), (L,))
    # potrs reads one triangle: L itself (Fortran order) or its transpose's upper one
    c, lower = (L, 1) if L.flags.f_contiguous else (L.T, 0)
    b = r.reshape(r.shape[0], -1)
    with np.errstate(all="ignore"):
        z, info = potrs(c, b, lower=lower)
    if info < 0:
        raise RuntimeError(f"potrs: illegal argument {-info}")
    return z.reshape(r.shape)
