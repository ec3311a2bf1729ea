"""Inputs and GPU routines shared by the experiments (uploads are not timed)."""
from __future__ import annotations

import numpy as np

from gpgpu import Stream
from gpgpu.cholesky import factor
from gpgpu.lu import lu_factor


def spd_matrix(n: int, seed: int = 0) -> np.ndarray:
    """A random symmetric positive definite matrix, well conditioned: B Bᵀ / n + I."""
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n, n)).astype(np.float32)
    return (B @ B.T) / n + np.eye(n, dtype=np.float32)


def general_matrix(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, n)).astype(np.float32)


def upload_lower(A: np.ndarray) -> Stream:
    return Stream.from_array(np.tril(A))


def cholesky_gpu(S: Stream, n: int, **variant) -> Stream:
    """The factorization as the papers time it: no breakdown scan at the end."""
    return factor(S, n, check=False, **variant)


def lu_gpu(S: Stream, pivoting: str = "none", transfer: str = "rtt"):
    return lu_factor(S, pivoting, transfer, check=False)
