"""The named errors: of the factorizations and solves (breakdowns detected on the GPU), and of the
OpenGL context (a leaf module: every floor imports its errors from here)."""
from __future__ import annotations

import numpy as np

__all__ = ["NotPositiveDefiniteError", "SingularMatrixError", "CGBreakdownError", "ContextError", "WrongThreadError",
           "UNIT_ROUNDOFF"]

#: float32's unit roundoff, 2^-24: the size of one rounding error in the GPU's arithmetic.
UNIT_ROUNDOFF = 2.0 ** -24


class NotPositiveDefiniteError(np.linalg.LinAlgError):
    """A pivot of the Cholesky factorization was not positive, at step ``k`` (0-based)."""

    def __init__(self, k: int, n: int, hint: str | None = None):
        self.k = k
        hint = hint or ("Cholesky needs a symmetric positive definite matrix; use gpgpu.lu for "
                        "general matrices.")
        super().__init__(
            f"matrix is not positive definite: the pivot at step k = {k} (0-based; the leading "
            f"{k + 1} x {k + 1} minor of the {n} x {n} matrix) is not positive. {hint}")


class SingularMatrixError(np.linalg.LinAlgError):
    """A zero (or, in float32, negligible) pivot at step ``k`` (0-based).

    ``pivot`` is the pivot's magnitude when it was read back and ``threshold`` the bound it
    did not exceed: n u max|A| with u = 2^-24, the size of the rounding errors that the
    float32 elimination makes; a pivot that small means the matrix is singular to float32
    precision and the solution would be noise.
    """

    def __init__(self, k: int, n: int, pivoting: str | None = None, pivot: float | None = None,
                 threshold: float | None = None, what: str | None = None):
        self.k, self.pivot, self.threshold = k, pivot, threshold
        hint = "; try pivoting='partial' or 'full'" if pivoting == "none" else ""
        where = what or (f"the {n} x {n} elimination with pivoting={pivoting!r}" if pivoting
                         else f"the {n} x {n} elimination")
        if pivot is not None and pivot != 0.0 and threshold:
            head = (f"matrix is singular to float32 precision: |pivot| = {pivot:.3g} <= n u max|A| "
                    f"= {threshold:.3g} (u = 2^-24, float32's unit roundoff)")
        else:
            head = "matrix is singular: zero pivot"
        super().__init__(f"{head} at step k = {k} (0-based) of {where}{hint}")


class CGBreakdownError(np.linalg.LinAlgError):
    """Conjugate gradients broke down at ``iteration`` (0-based): dᵀ A d was not positive
    (``diverged`` False: A is not positive definite), or it overflowed float32 (``diverged`` True:
    the iteration blew up, e.g. on a system too ill-conditioned for float32)."""

    def __init__(self, iteration: int, n: int, detail: str | None = None, diverged: bool = False):
        self.iteration = iteration
        self.diverged = diverged
        why = detail or ("d^T A d <= 0: A is not positive definite, or so ill-conditioned that float32 "
                         "rounding made it look indefinite")
        fix = ("A may be too ill-conditioned for float32 CG: precondition it (M = 1 / diag(A)), "
               "loosen tol, or regularise A" if diverged else
               "CG needs a symmetric positive definite matrix; use gpgpu.lu_solve (dense) or a "
               "method for indefinite systems")
        super().__init__(f"conjugate gradients broke down at iteration {iteration} (0-based) of the "
                         f"{n} x {n} system: {why}. {fix}.")


class ContextError(RuntimeError):
    """No usable OpenGL context: no EGL, no display, no float render targets; or a GL object
    used from a thread that does not own it."""


class WrongThreadError(ContextError):
    """A Stream (or other GL object) was used from a thread other than the one that made it."""
