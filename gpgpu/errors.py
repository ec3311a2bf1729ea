"""The named errors: of the factorizations and solves (breakdowns detected on the GPU), and of the
OpenGL context (a leaf module: every floor imports its errors from here)."""
from __future__ import annotations

import numpy as np

__all__ = ["NotPositiveDefiniteError", "SingularMatrixError", "CGBreakdownError", "ContextError", "WrongThreadError",
           "UNIT_ROUNDOFF"]

#: float32's unit roundoff, 2^-24: the size of one rounding error in the GPU's arithmetic.
UNIT_ROUNDOFF = 2.0 ** -24


class NotPositiveDefiniteError(np.linalg.LinAlgError):
    """A pivot of the Cholesky factorization was not positive, at step ``k`` (0-based).

    The Cholesky factorizations of papers 000 (Algorithms 1-2) and 001 take a square root of
    each step's pivot; a pivot <= 0 means the leading (k+1) x (k+1) minor is not positive
    definite. A ``numpy.linalg.LinAlgError``, as numpy's own ``cholesky`` raises;
    the step is kept as ``k``.

    Parameters
    ----------
    k : int
        The step (0-based) whose pivot was not positive.
    n : int
        The order of the matrix.
    hint : str, optional
        What to do instead; default: use ``gpgpu.lu`` for general matrices.

    See Also
    --------
    cholesky, SingularMatrixError

    Examples
    --------
    >>> import numpy as np
    >>> import gpgpu
    >>> try:
    ...     gpgpu.cholesky(np.diag([4.0, -1.0, 2.0]))
    ... except gpgpu.NotPositiveDefiniteError as e:
    ...     print(e.k, isinstance(e, np.linalg.LinAlgError))
    1 True
    """

    def __init__(self, k: int, n: int, hint: str | None = None):
        self.k = k
        hint = hint or ("Cholesky needs a symmetric positive definite matrix; use gpgpu.lu for "
                        "general matrices.")
        super().__init__(
            f"matrix is not positive definite: the pivot at step k = {k} (0-based; the leading "
            f"{k + 1} x {k + 1} minor of the {n} x {n} matrix) is not positive. {hint}")


class SingularMatrixError(np.linalg.LinAlgError):
    """A zero (or, in float32, negligible) pivot at step ``k`` (0-based).

    Raised by the eliminations of LU-GPU (paper 004: LU with any pivoting, Gauss-Jordan) and
    by the triangular solves. ``pivot`` is the pivot's magnitude when it was read back and
    ``threshold`` the bound it did not exceed: n u max|A| with u = 2^-24, the size of the
    rounding errors that the float32 elimination makes; a pivot that small means the matrix is
    singular to float32 precision and the solution would be noise. A
    ``numpy.linalg.LinAlgError``; ``k``, ``pivot`` and ``threshold`` are kept as attributes.

    Parameters
    ----------
    k : int
        The step (0-based) whose pivot was zero or negligible.
    n : int
        The order of the matrix.
    pivoting : str, optional
        The elimination's pivoting (``"none"``, ``"partial"``, ``"full"``), for the message.
    pivot : float, optional
        The pivot's magnitude as read back.
    threshold : float, optional
        The bound n u max|A| that the pivot did not exceed.
    what : str, optional
        What was being eliminated, for the message; default the n x n elimination.

    See Also
    --------
    lu, lu_factor, gauss_jordan, NotPositiveDefiniteError

    Examples
    --------
    >>> import numpy as np
    >>> import gpgpu
    >>> try:
    ...     gpgpu.lu_factor(np.array([[1.0, 2.0], [2.0, 4.0]]))
    ... except gpgpu.SingularMatrixError as e:
    ...     print(e.k, isinstance(e, np.linalg.LinAlgError))
    1 True
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
    """Conjugate gradients broke down at ``iteration`` (0-based).

    In the conjugate gradients of paper 003 (after Shewchuk), dᵀ A d was not positive
    (``diverged`` False: A is not positive definite), or it overflowed float32 (``diverged``
    True: the iteration blew up, e.g. on a system too ill-conditioned for float32); the
    project's breakdown watch on the GPU finds it (docs/departures.md).
    A ``numpy.linalg.LinAlgError``; ``iteration`` and ``diverged`` are kept as attributes.

    Parameters
    ----------
    iteration : int
        The iteration (0-based) that broke down.
    n : int
        The order of the system.
    detail : str, optional
        Why it broke down, for the message; default dᵀ A d <= 0.
    diverged : bool, optional
        True when the iteration blew up rather than met an indefinite A.

    See Also
    --------
    cg

    Examples
    --------
    >>> import numpy as np
    >>> import gpgpu
    >>> try:
    ...     gpgpu.cg(np.diag([1.0, -2.0]), np.ones(2))       # indefinite
    ... except gpgpu.CGBreakdownError as e:
    ...     print(e.iteration, e.diverged)
    0 False
    """

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
    used from a thread that does not own it.

    Every pass of the papers' pipeline needs an OpenGL 3.3 context whose R32F textures can be
    render targets; ``get_context`` raises this when none can be made (the message names the
    system packages to install), and its subclass ``WrongThreadError`` when a Stream is used
    from a thread other than the one that made it.

    See Also
    --------
    get_context, WrongThreadError

    Examples
    --------
    >>> import gpgpu
    >>> try:
    ...     ctx = gpgpu.get_context()
    ... except gpgpu.ContextError as e:          # no EGL, no display, no float targets
    ...     print("no OpenGL context:", e)
    ... else:
    ...     print(ctx.version_code >= 330)
    True
    """


class WrongThreadError(ContextError):
    """A Stream (or other GL object) was used from a thread other than the one that made it.

    Each thread has its own OpenGL context and GL objects cannot cross between contexts, so a
    Stream belongs to the thread that made it; one used elsewhere, or after its context was
    released, raises this instead of reading or writing another context's textures. Pass
    numpy arrays between threads instead (``to_array()`` there, ``Stream.from_array`` here).

    See Also
    --------
    ContextError, get_context, release_context

    Examples
    --------
    >>> import threading
    >>> import gpgpu
    >>> S = gpgpu.Stream(2, 2)                   # belongs to this thread
    >>> def read(out):
    ...     try:
    ...         S.to_array()
    ...     except gpgpu.WrongThreadError:
    ...         out.append("WrongThreadError")
    >>> out = []
    >>> t = threading.Thread(target=read, args=(out,)); t.start(); t.join()
    >>> out
    ['WrongThreadError']
    >>> S.release()
    """
