"""What the matrix-free method (:mod:`gpgpu.lp.matrix_free`, paper 002) asks of a back end: the
abstract :class:`MatrixFreeBackend`, which :mod:`~gpgpu.lp.matrix_free_numpy` and
:mod:`~gpgpu.lp.matrix_free_gpu` implement (a leaf under both and the method)."""
from __future__ import annotations

import abc
import math
import time
from contextlib import contextmanager, nullcontext
from typing import NamedTuple

import numpy as np

__all__ = ["MatrixFreeBackend", "MF_BACKENDS", "SoftLimit", "SoftStop", "PCG_STALL_FALL", "PCG_NEAR"]

#: the matrix-free method's back ends by name (:func:`gpgpu.lp.backends.get_matrix_free_backend`)
MF_BACKENDS = ("gpu", "numpy64")
#: PCG's stall stop (the residual-aware limit): past the limit, a solve whose best residual is
#: still above this share of what it was ``span`` iterations before stops (:class:`SoftStop`)
PCG_STALL_FALL = 0.5
#: PCG's stall stop near its target: before the limit, a solve whose best residual is within
#: this many times its target and has not halved over ``near_span`` iterations stops
#: (:class:`SoftStop`)
PCG_NEAR = 10.0


class SoftLimit(NamedTuple):
    """The residual-aware limit of one PCG solve (beyond 002; :func:`gpgpu.lp.matrix_free.pcg`):
    past ``limit`` iterations PCG stops at the first check whose residual is at most
    ``enough``, and (``span`` > 0) at the first check ``span`` or more iterations after a mark
    whose best residual is still above PCG_STALL_FALL times the mark's (not halved; the first
    mark: the first check at or past the limit, a mark passed replaced by that check). Before
    the limit (``near_span`` > 0) the same test with ``near_span`` stops a solve whose best
    residual is within PCG_NEAR times its target (the first mark: the first check there), the
    stall stop near the target. A plain pair (limit, enough) has no stall stop."""
    limit: int
    enough: float
    span: int = 0
    near_span: int = 0

    def after(self, done: int, scale: float) -> "SoftLimit":
        """The limit of a refinement round that starts after ``done`` iterations on a
        right-hand side multiplied by ``scale``."""
        return SoftLimit(max(int(self.limit) - done, 0), float(self.enough) * scale, self.span, self.near_span)


class SoftStop:
    """The residual-aware limit's decisions in one PCG solve (:class:`SoftLimit`; None: the
    plain limit ``maxiter``) toward ``target``. :meth:`stops` is asked at each check with the
    iteration count, the check's residual norm and the best norm of the checks so far;
    ``stalled`` says whether one of PCG's stall stops ended the solve."""

    def __init__(self, soft, maxiter: int, target: float = 0.0):
        soft = SoftLimit(maxiter, math.inf) if soft is None else SoftLimit(*soft)
        self.limit, self.enough, self.span = int(soft.limit), float(soft.enough), int(soft.span)
        self.near_span, self.near = int(soft.near_span), PCG_NEAR * float(target)
        self.mark = None              # (iteration, best norm) of the stall stop's last mark
        self.near_mark = None         # ... of the stall stop's near the target, before the limit
        self.stalled = False

    def stops(self, it: int, rnorm: float, best: float) -> bool:
        if it < self.limit:
            return self._stalled_near(it, best)
        if rnorm <= self.enough:
            return True
        if self.span <= 0:
            return False
        self.mark, stalled = _stall_test(self.mark, self.span, it, best)
        self.stalled |= stalled
        return stalled

    def _stalled_near(self, it: int, best: float) -> bool:
        if self.near_span <= 0 or not best <= self.near:
            return False
        self.near_mark, stalled = _stall_test(self.near_mark, self.near_span, it, best)
        self.stalled |= stalled
        return stalled


def _stall_test(mark, span: int, it: int, best: float) -> tuple:
    """(the next mark, stalled): a check ``span`` or more iterations after ``mark`` (iteration,
    best norm) whose best norm is above PCG_STALL_FALL times the mark's is a stall; one that
    has fallen that far, or the first check (no mark), is the next mark."""
    if mark is not None and it - mark[0] >= span:
        if best > PCG_STALL_FALL * mark[1]:
            return mark, True
        mark = None
    return (mark if mark is not None else (it, best)), False


class MatrixFreeBackend(abc.ABC):
    """The operations the matrix-free method asks of a back end (module notes).

    Vectors (handles) have length m, the rows of A: the space of the normal equations.
    ``readbacks`` counts numbers brought back to the CPU; ``timers`` accumulates seconds per
    part ("fsax", "fsaty", "precondition", "build"; "pcg_reads": PCG's checks waiting for their
    read-back, the GPU's queued passes included), ``counts`` the calls.
    """

    name = "abstract"
    #: smallest relative PCG residual this back end's precision reaches dependably
    pcg_floor = 1e-14
    #: diag(G_R) in float64 as the last ``build_preconditioner`` read it (None before): what
    #: :func:`~gpgpu.lp.matrix_free.rhs_scale` estimates PCG's magnitudes from
    diagonal = None

    def __init__(self, problem, profile: bool = False):
        self.problem = problem
        self.m, self.n = problem.A.shape
        self.readbacks = 0
        if not isinstance(profile, (bool, np.bool_)):
            raise TypeError(f"profile must be True or False, got {profile!r}")
        self.profile = bool(profile)
        self.timers = {"fsax": 0.0, "fsaty": 0.0, "precondition": 0.0, "build": 0.0, "pcg_reads": 0.0}
        self.counts = {"fsax": 0, "fsaty": 0, "precondition": 0, "build": 0, "pcg_reads": 0}

    def sync(self) -> None:
        """Wait for queued work (the GPU's), so that a timer stops when its work is done."""

    def scope(self):
        """A context the method's iteration runs in (the GPU back end's folded vectors); none here."""
        return nullcontext()

    @contextmanager
    def timed(self, part: str):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            if self.profile:
                self.sync()
            self.timers[part] += time.perf_counter() - t0
            self.counts[part] += 1

    def release(self) -> None:
        """Free the back end's storage (GPU textures)."""

    @abc.abstractmethod
    def vector(self, arr):
        """Upload a float64 array of length m."""

    @abc.abstractmethod
    def to_numpy(self, v) -> np.ndarray:
        """Download as float64 (one read-back)."""

    def free(self, v) -> None:
        """Release a vector."""

    @abc.abstractmethod
    def dot(self, x, y) -> float:
        """x^T y (one read-back)."""

    @abc.abstractmethod
    def axpy(self, a: float, x, y):
        """a x + y, a new vector."""

    # scalars that may stay where the vectors are (beyond 002, GPU back end): PCG asks for its
    # inner products as handles, uses them in ratio_axpy, and reads them only every
    # ``pcg_check`` iterations. The defaults are eager: a handle is the float itself.
    #: PCG reads its residual norm (and checks for breakdown) every this many iterations
    pcg_check = 1

    def dot_deferred(self, x, y):
        """x^T y as a handle for :meth:`ratio_axpy` and :meth:`read` (default: the float)."""
        return self.dot(x, y)

    def ratio_axpy(self, num, den, sign: float, x, y):
        """y + sign (num / den) x with num, den handles of :meth:`dot_deferred`, a new vector."""
        return self.axpy(sign * num / den, x, y)

    def read(self, handle) -> float:
        """The value of a handle (a read-back where it lives on the device)."""
        return float(handle)

    def free_scalar(self, handle) -> None:
        """Release a handle."""

    # PCG's solution vector, which sums the steps alpha p: in float32 a step below half an ulp of x
    # is lost, and late in a degenerate LP's solve that stalls PCG (module notes). A back end
    # may keep it in a wider format than its other vectors; the defaults keep it as they are.
    def accumulator(self):
        """A zero solution vector for :meth:`accumulate` (freed by :meth:`free`, read by
        :meth:`to_numpy`)."""
        return self.vector(np.zeros(self.m))

    def accumulate(self, num, den, p, x):
        """x + (num / den) p, a new solution vector (num, den handles of :meth:`dot_deferred`)."""
        return self.ratio_axpy(num, den, 1.0, p, x)

    def widen_solution(self) -> bool:
        """Keep PCG's solution vector in the wider format from the next solve on, where the back
        end has one and its format was left to it (the adaptive rule calls this after the first
        solve that stopped at its limit; module notes); whether it changed. Default: no wider
        format."""
        return False

    def watch_start(self):
        """A breakdown watch for PCG between its reads (default: on the host): the first
        iteration whose p^T q was not positive, or -1."""
        return -1.0

    def watch_step(self, watch, pq, iteration: int):
        """The watch after an iteration with p^T q = ``pq`` (a handle)."""
        if watch >= 0:
            return watch
        v = self.read(pq)
        return watch if (math.isfinite(v) and v > 0.0) else float(iteration)

    @abc.abstractmethod
    def set_weights(self, theta, delta: float) -> None:
        """Theta~ = (Theta^-1 + R_p)^-1 (float64, length n) and delta = R_d for G_R."""

    @abc.abstractmethod
    def normal_matvec(self, v):
        """G_R v = A (Theta~ (A^T v)) + delta v: FSATY, the scaling, FSAX (002 (9))."""

    @abc.abstractmethod
    def build_preconditioner(self, rank: int) -> dict:
        """The partial Cholesky preconditioner (7)-(8) of the current G_R with k = rank pivoted
        columns; answers facts about it (``k``, ``replaced`` pivots)."""

    @abc.abstractmethod
    def precondition(self, r):
        """P^-1 r, a new vector."""
