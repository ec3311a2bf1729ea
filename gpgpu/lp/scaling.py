"""Geometric scaling of a standard-form LP (beyond the papers), undone on output.

Interior point codes scale the rows and columns of A before they iterate, so that the
entries of A -- and with them the normal equations A D² Aᵀ -- span fewer orders of magnitude.
``solve(..., scale=True)`` does what they do, in the classic geometric form (Curtis and Reid's
idea as interior point codes use it): a few passes that divide each row, then each column, by
the geometric mean of its largest and smallest non-zero magnitudes, every factor rounded to a
power of two so that the scaling itself rounds nothing. The scaled problem

    Â = R A C,   b̂ = R b,   ĉ = C c          (R, C diagonal)

has the same optimum in other units: x = C x̂, y = R ŷ, s = C⁻¹ ŝ, and the same objective
cᵀx = ĉᵀx̂. The iteration's history and its tests (6.1)-(6.3) are those of the scaled problem.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp

__all__ = ["geometric_scaling", "scale_problem", "unscale_result"]

#: passes of row then column scaling
PASSES = 6


def _pow2(v: np.ndarray) -> np.ndarray:
    return np.exp2(np.round(np.log2(v)))


def _line_factors(M: sp.csr_matrix) -> np.ndarray:
    """1 / sqrt(max |a| min |a|) over the non-zeros of each row of ``M`` (|entries|), a power of
    two; 1 for an empty row."""
    out = np.ones(M.shape[0])
    counts = np.diff(M.indptr)
    rows = np.flatnonzero(counts)
    if rows.size:
        starts = M.indptr[rows]
        big = np.maximum.reduceat(M.data, starts)
        small = np.minimum.reduceat(M.data, starts)
        out[rows] = _pow2(1.0 / (np.sqrt(big) * np.sqrt(small)))     # no overflow of big * small
    return out


def geometric_scaling(A, passes: int = PASSES) -> tuple:
    """(r, c): row and column factors, powers of two, such that diag(r) A diag(c) has rows and
    columns whose largest and smallest non-zero magnitudes are about reciprocal."""
    M = sp.csr_matrix(abs(sp.csr_matrix(A, dtype=np.float64)))
    M.eliminate_zeros()
    m, n = M.shape
    r, c = np.ones(m), np.ones(n)
    for _ in range(passes):
        S = sp.diags(r) @ M @ sp.diags(c)
        r *= _line_factors(sp.csr_matrix(S))
        S = sp.diags(r) @ M @ sp.diags(c)
        c *= _line_factors(sp.csr_matrix(S.T))
    return r, c


def scale_problem(problem, passes: int = PASSES) -> tuple:
    """(scaled Problem, r, c): the same problem (its maps back to the source variables kept)
    with A, b, c replaced by R A C, R b, C c."""
    r, c = geometric_scaling(problem.A, passes)
    A = sp.diags(r) @ problem.A @ sp.diags(c)
    scaled = dataclasses.replace(problem, A=A, b=r * problem.b, c=c * problem.c,
                                 name=problem.name, presolve=dict(problem.presolve))
    return scaled, r, c


def unscale_result(result, problem, r: np.ndarray, c: np.ndarray):
    """The result of the scaled problem in the units of ``problem``: x_std = C x̂, y = R ŷ,
    s = C⁻¹ ŝ, the source variables and the objective recomputed from them."""
    if result.x_std is None:
        return result
    x_std = c * result.x_std
    return dataclasses.replace(result, x_std=x_std, y=r * result.y, s=result.s / c,
                               x=problem.to_original(x_std), objective=problem.original_objective(x_std))
