"""The public function :func:`cg` (called as scipy.sparse.linalg.cg) and the loop around the
iterations: the options resolved (:mod:`gpgpu.cg.options`), A, b, x0 and M checked, scaled and
uploaded (:mod:`gpgpu.cg.operator`, :mod:`gpgpu.cg.inputs`), the iteration variant chosen by
name (``VARIANTS``: Shewchuk's listing, the fan iteration, the single-reduction iteration) and
driven by :func:`_iterate`: the watches read back every ``check_every`` iterations, a breakdown
or divergence raised, and, with ``verify``, convergence decided on the true residual
b - A x (:func:`true_residual`) with a restart from x when it misses and a stop when a restart
gains nothing. The answer is scaled back (and unsorted) into A's units."""
from __future__ import annotations

import warnings

import numpy as np

from ..blas1 import KERNELS as L1, whole
from ..errors import CGBreakdownError
from ..sparse import SparseStream
from ..stream import Stream
from .fan import Fan
from .inputs import FLOAT32_REACH, Float32ToleranceWarning, _System, _arguments, _check_matrix_kind
from .kernels import _dot
from .operator import _operator
from .options import _DEFAULT_RTOL, _format, resolve
from .single_reduction import SingleReduction
from .standard import Standard
from .variant import Variant

__all__ = ["cg", "CGResult", "true_residual", "VARIANTS", "FREEZE_FLOOR"]

#: The iteration variants by name: Shewchuk's listing pass by pass (``iteration="standard"``
#: with pyramid or ping-pong sums), the fan iteration (``"standard"`` with fan sums) and the
#: single-reduction iteration
VARIANTS = {"standard": Standard, "fan": Fan, "single-reduction": SingleReduction}
#: The recurrence's residual is frozen (the convergence watch set) at ||r|| <= 2^-30 ||b|| at
#: the latest, whatever the target (rtol = atol = 0 included): 2^6 below float32's unit roundoff,
#: so no reachable target is cut, and far above the underflow of ||r||² and d^T A d.
FREEZE_FLOOR = 2.0 ** -30


class CGResult(tuple):
    """``(x, info)`` like scipy's cg, with the run's figures as attributes: ``iterations``,
    ``residual_norm`` (||b - A x|| of the answer, computed on the GPU in float32; for x0 = None
    and no iteration, ||b||), ``readbacks``, ``residuals`` (each ||r|| of the recurrence read back:
    the first, then one a check), ``restarts`` (the times the recurrence reached the target but
    b - A x did not, and CG restarted from x), ``stagnated`` (CG stopped because a restart did
    not lower ||b - A x||: the target is below float32's reach) and ``format`` (the SparseStream
    format A was multiplied in, None for a dense A)."""

    def __new__(cls, x, info, **extra):
        self = super().__new__(cls, (x, info))
        for k, v in extra.items():
            setattr(self, k, v)
        return self



def cg(A, b, x0=None, *, rtol: float = _DEFAULT_RTOL, atol: float = 0.0, maxiter: int | None = None,
       M=None, callback=None, tol: float | None = None, preset: str = "robust", check_every: int | None = None,
       reduction: str | None = None, recompute_every: int | None = None, verify: bool | None = None,
       plan: bool = True, format: str | None = None, iteration: str | None = None) -> CGResult:
    """Solve A x = b for a symmetric positive definite A by conjugate gradients on the GPU.

    Called as scipy.sparse.linalg.cg (scipy >= 1.14): ``x, info = cg(A, b, rtol=1e-6)``.

    Parameters
    ----------
    A : SparseStream, scipy.sparse matrix or array, (n, n) array or Stream
        scipy matrices are put on the GPU in ``format`` (003's sorted corrigan format for the
        paper preset, ELLPACK for robust, packed for fast); a dense array or Stream is
        multiplied by the inner-product sgemv of paper 000. A sorted corrigan SparseStream
        (paper 003) is solved in its sorted order: b is permuted once and x unpermuted at the
        end. A
        ``scipy.sparse.linalg.LinearOperator`` (or any callable) is a TypeError: the product
        A d runs on the GPU as a fragment program over a texture of A's entries, so cg needs
        the matrix itself (pass the scipy.sparse matrix, a dense array, a SparseStream).
        A must be symmetric. A scipy or numpy A is checked, and so is a SparseStream that keeps
        ``from_scipy``'s host copy (``transpose="copy"``, the default, until its transposed copy
        is built): a ValueError gives max |A - A^T|. A dense Stream, or a SparseStream without
        that copy, is not checked (that would read the matrix back): there its symmetry is the
        caller's job. CG on a non-symmetric A may break down or not converge (info 0 is still
        verified on b - A x, unless verify=False).
    b : (n,) or (n, 1) array, or vector Stream
        x comes back of shape (n,) for either shape, as scipy's.
    x0 : (n,) or (n, 1) array or vector Stream, or "Mb", optional (zeros)
        ``"Mb"``, as scipy: M b (b without M), for numpy b and M.
    rtol, atol : float
        scipy's meaning: stop when ||r|| <= max(rtol ||b||, atol) (defaults 1e-5 and 0). r is
        the true residual b - A x as float32 computes it, not the recurrence's (``verify``).
        See "Precision" below for the smallest target float32 reaches; a smaller one, ``rtol =
        atol = 0`` included, warns (``Float32ToleranceWarning``) and ends with info > 0 and
        ``.stagnated`` (or at maxiter) unless b - A x comes out exactly zero. ``inf`` accepts
        x0 (zeros) at once, info 0, as scipy.
    tol : float, optional
        Deprecated (as in scipy, which removed it in 1.14): the old name of ``rtol``. A
        DeprecationWarning; a ValueError when ``rtol`` is given too with another value.
    maxiter : int, optional
        Default 10 n, as scipy. ``maxiter=0`` only tests x0: info 0 when ||b - A x0|| meets the
        target, else 1 (scipy answers 0 there, which would read as success).
    M : None, (n,) or (n, 1) array, vector Stream, or a diagonal matrix
        A diagonal preconditioner M ~ A^-1 (Jacobi: 1 / diag(A)), applied on the GPU by one
        element-wise product pass. Give its diagonal as a vector, or the matrix as a diagonal
        scipy.sparse matrix or array (``scipy.sparse.diags(1 / d)``, or csr / dia / ... with
        entries on the diagonal only) or dense (n, n) array, whose diagonal is taken. A matrix
        with an entry off the diagonal is a ValueError, a LinearOperator or a callable a
        TypeError: the GPU applies only a diagonal. M is positive definite as A is: an M with
        an entry <= 0 or not finite is a ValueError naming it, before the iterations (a Stream
        M is read back once for this).
    callback : callable, optional
        ``callback(xk)`` after every iteration with x as a numpy array in A's (unsorted) order
        (one read-back of x, and one of the convergence watch, per iteration; a Stream A gets
        numpy too). The last xk is the answer's x whenever an iteration ran.
    preset : {"robust", "paper", "fast"}
        A set of the options below (``PRESETS``; ``PRESET_FORMATS`` for ``format``); an option
        given explicitly overrides its preset's value. ``"robust"`` (default): 003's pyramid
        sums, ||r|| read back every iteration, b - A x verified at the target (CG restarts from
        x when it misses), a scipy.sparse A in ELLPACK. ``"paper"``: 003's CG: pyramid sums,
        ||r|| read back every iteration, Shewchuk's listing with its r = b - A x every 50
        iterations, the recurrence's ||r|| deciding convergence, as in 003 and scipy's cg (no
        verification, no restart: info 0 may come with a ``residual_norm`` above the target,
        by float32's drift of the recurrence), a scipy.sparse A in 003's sorted corrigan
        format; docs/guide/sparse.md lists each option and what float32 does with the
        recomputation. ``"fast"`` (beyond 003): fan sums (32 texels a fragment: a dot product
        of 4096 entries in 3 passes instead of 14) and ||r|| read back every
        ``FAST_CHECK_EVERY`` (16) iterations, verified as robust, the single-reduction
        iteration (``iteration``, ``gpgpu.cg.single_reduction``: 5 passes an iteration at
        n = 4096, Jacobi or not; 9 with ``iteration="standard"``), a scipy.sparse A in the
        packed format. All three keep the convergence and breakdown watches on the GPU.
    check_every : int
        Read ||r|| (and the breakdown and convergence watches) back every this many
        iterations (preset: 1, or 16 for "fast"). The iterations after convergence inside a
        window change nothing: the convergence watch sets alpha = beta = 0 on the GPU from the
        iteration that converged on, so x, the iteration count and ``residual_norm`` are those
        of that iteration, and no 0 / 0 follows (r may be exactly 0 there).
    reduction : {"pyramid", "pingpong", "fan"}
        How the dot products sum: 003's pyramid (preset "paper" and "robust"), halving
        ping-pong passes, or fan passes of 32 texels with the products computed in the first
        (preset "fast"), which also fuses the iteration's scalar and vector passes (the fan
        iteration, ``gpgpu.cg.fan``, or the single-reduction one: ``iteration``); sums differ
        only by float32 rounding (the order of the additions).
    iteration : {"standard", "single-reduction"}
        ``"standard"`` (presets "paper" and "robust"): Shewchuk's listing, as paper 003, two
        reductions an iteration. ``"single-reduction"`` (preset "fast"; beyond the papers): the
        CG of Chronopoulos and Gear (1989, "s-step iterative methods for symmetric linear
        systems"), both dot products from one reduction, s = A d carried by a recurrence
        (``gpgpu.cg.single_reduction``): the same iterates in exact arithmetic, a different
        rounding in float32, the same watches, verification, scaling and Jacobi M, in fewer passes. It is drawn with
        fan sums: given with ``reduction="pyramid"`` or ``"pingpong"`` it is a ValueError, and a
        preset's "single-reduction" gives way to "standard" where ``reduction`` asks for
        those sums; given with a preset of pyramid sums it brings fan sums. The recurrence's
        ||r|| of x_k is seen one iteration later than in the standard iteration (that
        iteration changes nothing; ``.residuals`` are read one iteration behind).
    verify : bool
        Decide convergence on b - A x, computed when the recurrence's ||r|| reaches the
        target (True in "robust" and "fast"), or on the recurrence's ||r|| (False: "paper").
    plan : bool
        Draw each iteration from a plan recorded the first time (default True; host cost
        only, ``gpgpu.passes.RecordedPlan``): the same passes in the same order on the same
        streams as ``plan=False``, which builds and binds every pass in Python each time.
    recompute_every : int, False or None
        Shewchuk's restart of the residual, r = b - A x, every this many iterations (his
        listing uses 50); ``False``: never; None: the preset's (50 for "paper", never for
        "robust" and "fast"). In float32 it converges where the target is within float32's
        reach and cannot below it (docs/guide/sparse.md: the direction built from the
        recomputed r is no longer orthogonal to the last one, and the energy rises).
    format : {"corrigan", "ellpack", "tell", "packed", "split"}
        The SparseStream format a scipy.sparse A is put on the GPU in (``gpgpu.sparse``):
        "corrigan" (preset "paper") is paper 003's storage as 003 used it, values and column
        textures, one fragment program per non-zero count (all compiled), rows and columns
        sorted by count and the system solved in that order; "ellpack" (preset "robust") is
        paper 002's storage, values and column indexes in
        m x K textures, one fragment a row; "tell" its transposed ELLPACK; "packed" (preset
        "fast", beyond the papers) two entries (value, column) an RGBA texel, 1.5 fetches a
        non-zero against ELLPACK's 3, rows longer than a segment summed by a second pass (a
        product is then two passes; Poisson's rows of at most 5 are one); "split" the packed
        segments without the packing. Given with an A that is not a scipy.sparse matrix, a
        ValueError (A's storage is fixed).

    Precision
    ---------
    The GPU computes in float32, whatever the input: float64 A, b, x0 and M are rounded to
    float32 (after exact power-of-two scaling) and the iterations run in float32; the numpy
    answer is float64 holding the float32 iterate, scaled back exactly. The smallest target
    float32 can be held to is about 2^-23 ||b|| = 1.19e-7 ||b|| (``FLOAT32_REACH``, float32's
    machine epsilon): x is held in float32 and info 0 is decided on b - A x computed in
    float32, where each entry of A x (about as large as b's near the solution) is rounded with
    a relative error up to u = 2^-24, so the computed residual is uncertain by about
    u || |A| |x| || >= u ||b||, and rounding x to float32 moves b - A x by as much again: 2u.
    An ill-conditioned A stops higher. When max(rtol ||b||, atol) < 2^-23 ||b||, cg warns
    once (``Float32ToleranceWarning``, a RuntimeWarning) and runs anyway; for a smaller
    residual refine its x in float64 (e.g. scipy.sparse.linalg.cg from ``x0=x``).

    Returns
    -------
    CGResult ``(x, info)``: x numpy (float64, shape (n,)) for a numpy b (a Stream for a Stream
    b); info 0 when converged (||b - A x|| <= max(rtol ||b||, atol), verified), else the
    number of iterations done (at least 1). When CG did not converge, x is the iterate of the
    smallest verified ||b - A x||. ``.iterations``, ``.residual_norm`` (||b - A x|| of the
    answer), ``.readbacks``, ``.residuals``, ``.restarts`` and ``.stagnated`` tell the run;
    ``.format`` is the SparseStream format A was multiplied in (None for a dense A).
    b = 0 answers x = 0 at once (A is nonsingular).

    Raises
    ------
    CGBreakdownError
        dᵀAd <= 0 at some iteration: A is not positive definite (the iteration is named); or
        dᵀAd, ||r|| or b - A x overflowed (``diverged``).
    TypeError
        A or M a LinearOperator or a callable (see A and M).
    ValueError
        Bad shapes, non-square or non-symmetric A (where checked, see A), a non-diagonal M or
        one with an entry <= 0 (named), NaN, complex, an empty row, a zero A or M, bad options
        (tol and rtol disagreeing too, iteration="single-reduction" with pyramid or ping-pong
        sums); a Stream answer whose x float32 cannot hold (max |x| above 3.4e38 or within
        2^24 of the underflow at 1.2e-38: pass b as numpy to get x in float64).

    Warns
    -----
    Float32ToleranceWarning
        The target is below float32's reach (see "Precision"), or the residual stagnated above
        the target (float32's reach on that system: info > 0, ``.stagnated``).
    DeprecationWarning
        ``tol`` was used.
    """
    o = resolve(preset, rtol=rtol, atol=atol, tol=tol, maxiter=maxiter, callback=callback,
                check_every=check_every, reduction=reduction, iteration=iteration, verify=verify,
                recompute_every=recompute_every, plan=plan)
    _check_matrix_kind(A)
    o.format = _format(format, preset, A)
    b, x0, M = _arguments(b, x0, M)
    op = _operator(A, o.format)
    used = op.A.format if isinstance(op.A, SparseStream) else None
    n = op.n
    if o.maxiter is None:
        o.maxiter = 10 * n
    system = None
    try:
        system = _System(op, b, o.reduction, 1 if isinstance(A, Stream) else 0)   # (max|A| of a dense Stream)
        numpy_out, bmax, bnorm, k = system.numpy_out, system.bmax, system.bnorm, system.k
        if (np.isinf(o.rtol) and bmax > 0 or np.isinf(o.atol)) and x0 is None:   # x = 0 is within the target
            x = np.zeros(n) if numpy_out else Stream.vector_of(n)
            return CGResult(x, 0, iterations=0, residual_norm=bnorm, readbacks=system.readbacks,
                            residuals=[bnorm], format=used, restarts=0, stagnated=False)
        if not bmax > 0:            # b = 0: x = 0 exactly (A is nonsingular)
            x = np.zeros(n) if numpy_out else Stream.vector_of(n)
            return CGResult(x, 0, iterations=0, residual_norm=0.0, readbacks=system.readbacks, residuals=[0.0],
                            format=used, restarts=0, stagnated=False)
        system.upload(x0, M)
        target = max(o.rtol * bnorm, o.atol)
        if target < FLOAT32_REACH * bnorm:
            asked = f"rtol = {o.rtol:.3g}" if o.rtol * bnorm >= o.atol else f"atol = {o.atol:.3g}"
            warnings.warn(f"cg: the target max(rtol ||b||, atol) = {target:.3g} ({asked}) is below what "
                          f"float32 can reach, about 2^-23 ||b|| = {FLOAT32_REACH * bnorm:.3g}: the GPU computes "
                          "in float32 (float64 input too), so expect info > 0 (.stagnated) unless b - A x "
                          "comes out exactly zero. Ask for rtol >= 1.2e-7, or refine the answer in float64 "
                          "(e.g. scipy.sparse.linalg.cg from x0=x)", Float32ToleranceWarning, stacklevel=2)
        try:
            x_out, info, extra = _iterate(op, system.b, system.x0, system.M, np.ldexp(bnorm, -k),
                                          np.ldexp(target, -k), o, system.to_user, system.residual64())
        except CGBreakdownError as e:
            if system.M is None or e.diverged or e.iteration < 1:
                raise
            # with a preconditioner, a breakdown after progress points at M's conditioning too
            note = (f" A preconditioner M was given: the breakdown came after {e.iteration} iterations, so "
                    "the preconditioned system (M A) may be what float32 rounding made look indefinite, "
                    "not A; try preset='robust' (the standard iteration), a better-conditioned M, or none")
            e.args = (str(e) + note + ".",)
            raise
        extra["readbacks"] += system.readbacks
        extra["format"] = used
        extra["residual_norm"] = float(np.ldexp(extra["residual_norm"], k))
        extra["residuals"] = [float(np.ldexp(v, k)) for v in extra["residuals"]]
        if info > 0 and extra["stagnated"] and target >= FLOAT32_REACH * bnorm:   # (below it: warned above)
            warnings.warn(f"cg: stopped at ||b - A x|| = {extra['residual_norm']:.3g} "
                          f"({extra['residual_norm'] / bnorm:.2g} ||b||), above the target {target:.3g}: the "
                          "residual stagnated, which is float32's reach on this system (its conditioning "
                          "multiplies the 1.2e-7 of float32's roundoff). Ask for a larger rtol, or refine the "
                          "answer in float64 (e.g. scipy.sparse.linalg.cg from x0=x)", Float32ToleranceWarning,
                          stacklevel=2)
        if numpy_out:
            x = system.to_user(x_out)
            x_out.release()
            return CGResult(x, info, **extra)
        x_out, more = system.stream_answer(x_out)
        extra["readbacks"] += more
        return CGResult(x_out, info, **extra)
    finally:
        if system is not None:
            system.release()
        op.release()


def true_residual(cgv: Variant, out: Stream) -> float:
    """||b - A x|| of the variant's current x, b - A x written into ``out`` (one product, one
    read-back of its square, summed by the variant's reduction)."""
    x = cgv.v.x
    cgv.op(x, cgv.v.q)
    L1["saxpy"].draw(out, whole(out), {"X": cgv.v.q, "Y": cgv.b}, {"alpha": -1.0})
    value = _dot(out, out, cgv.reduction, cgv.true_rr).item()
    return float(np.sqrt(value)) if np.isfinite(value) else float("inf")


def _verified(cgv: Variant, residual64) -> tuple:
    """(||b - A x|| of the variant's x, read-backs): b - A x written into ``rn`` on the GPU (a
    restart starts from it), its norm in float64 on the host where ``residual64`` is given
    (float32's rounding of A x, u || |A| |x| ||, is not in it; one more read-back, of x), else the
    GPU's float32 norm."""
    rnorm = true_residual(cgv, cgv.v.rn)
    if residual64 is None or not np.isfinite(rnorm):
        return rnorm, 1
    return residual64(cgv.v.x), 2


def _stalled(seen: list, it: int) -> bool:
    """Whether the recurrence's smallest ||r|| read in the last STALL_WINDOW iterations is no
    lower than the smallest read before them (:data:`STALL_WINDOW`)."""
    if it < 2 * STALL_WINDOW:
        return False
    recent = [r for k, r in seen if k > it - STALL_WINDOW]
    before = [r for k, r in seen if k <= it - STALL_WINDOW]
    return bool(recent) and bool(before) and min(recent) >= min(before)


def _variant(o) -> type:
    """The iteration variant the resolved options ask for."""
    if o.iteration == "single-reduction":
        return VARIANTS["single-reduction"]
    return VARIANTS["fan" if o.reduction == "fan" else "standard"]


#: without verification (the paper preset), CG stops stagnated when the recurrence's smallest
#: ||r|| of the last STALL_WINDOW iterations is not below the smallest before them (beyond 003,
#: whose listing runs to maxiter there: below float32's reach the recomputed residual never meets
#: the target, and maxiter is 10 n)
STALL_WINDOW = 500
#: after a restart whose verification gained nothing, the recurrence's target is the target times
#: the ratio of the miss (target / ||b - A x||) times this, so that the next restart goes past it
#: (a float32 recurrence that drifts by a few percent stopped just above the target otherwise)
RETARGET = 0.5


def _iterate(op, b: Stream, x0: Stream | None, M: Stream | None, bnorm: float, target: float, o, to_user,
             residual64=None):
    """CG on the scaled system from x0 (None: zeros), bnorm and target in its units, with the
    resolved options ``o`` (:func:`gpgpu.cg.options.resolve`); ``to_user`` gives the callback x in
    A's units; ``residual64`` (x -> ||b - A x|| in float64 on the host, or None) measures the
    verification's true residual where A and b are on the host. Returns (x, info, figures).

    Every ``check_every`` iterations one read-back brings ||r||², the breakdown watch (the first
    iteration with dᵀAd <= 0, kept on the GPU) and the convergence watch (the first iteration with
    ||r|| <= the target, kept on the GPU): from that iteration on alpha and beta are 0, so the
    iterations run until the read-back change nothing, and the iteration count and x are those
    of the iteration that converged, whatever ``check_every`` is. Then, with ``verify``, the true
    residual b - A x decides (in float64 with ``residual64``): above the target CG restarts from x
    with it; a restart that gains nothing (no lower than the best so far) is followed by one more
    with the recurrence aimed below the target by the miss (:data:`RETARGET`), and when that gains
    nothing either CG stops (float32's floor: ``stagnated``); the answer is the best iterate
    measured. Without ``verify``, a recurrence that stops falling for :data:`STALL_WINDOW`
    iterations ends ``stagnated``."""
    threshold = float(np.float32(min(max(target, FREEZE_FLOOR * bnorm) ** 2, float(np.finfo(np.float32).max))))
    cgv = _variant(o)(op, b, M, o.reduction, threshold, o.plan)
    answer, readbacks, residuals, callback = None, 0, [], o.callback
    try:
        cgv.setup()
        v = cgv.v
        if x0 is None:                   # r = b (no product: A 0 = 0)
            L1["copy"].draw(v.r, whole(v.r), {"A": b})
            rnorm = bnorm
        else:
            L1["copy"].draw(v.x, whole(v.x), {"A": x0})
            rnorm = true_residual(cgv, v.r)
            readbacks += 1
            if not np.isfinite(rnorm):
                raise ValueError("cg: the initial residual b - A x0 is not finite (overflow in A x0)")
        residuals.append(rnorm)
        cgv.start()
        it, info, restarts, stagnated, best, x_best = 0, None, 0, False, rnorm, None
        seen = [(0, rnorm)]          # (iteration, the recurrence's ||r||) read back
        aimed_lower = False          # whether the recurrence's target was lowered (RETARGET)
        if rnorm <= target:
            info = 0
        while info is None:
            if it >= o.maxiter:
                break
            check = (it + 1) % o.check_every == 0 or it + 1 >= o.maxiter
            cgv.step(it, bool(o.recompute_every and (it + 1) % o.recompute_every == 0), check)
            it += 1
            converged_now = False
            if callback is not None:
                readbacks += 2
                converged_now = cgv.converged()
                if not (cgv.late_watch and converged_now):
                    callback(to_user(v.x))           # (then this is the converging iteration)
                # single-reduction sees r_k's norm in iteration k, so x (frozen) is the previous one's
            if not (check or converged_now):
                continue
            rr_value, first_bad, converged_at = cgv.watches(check)
            readbacks += 1
            if first_bad >= 0 and first_bad != int(first_bad):     # iteration + 0.5: overflow
                raise CGBreakdownError(int(first_bad), op.n, detail=(
                    "d^T A d overflowed float32 (inf or NaN): the iteration diverged"), diverged=True)
            if first_bad >= 0:
                raise CGBreakdownError(int(first_bad), op.n)
            rnorm = float(np.sqrt(max(rr_value, 0.0))) if np.isfinite(rr_value) else float("inf")
            residuals.append(rnorm)
            seen.append((it, rnorm))
            if converged_at < 0:
                if not np.isfinite(rnorm):
                    raise CGBreakdownError(it - 1, op.n, detail="the residual is no longer finite: the "
                                           "iteration diverged", diverged=True)
                if not o.verify and _stalled(seen, it):
                    stagnated = True         # the answer's true residual decides info below
                    break
                continue
            # the recurrence reached the target at iteration converged_at (x, r frozen since)
            it = int(converged_at)
            rnorm, read = _verified(cgv, residual64)
            readbacks += read
            if not np.isfinite(rnorm):
                raise CGBreakdownError(it - 1, op.n, detail="b - A x is no longer finite: the iteration "
                                       "diverged", diverged=True)
            if rnorm <= target or not o.verify:
                info = 0
            elif rnorm >= best and aimed_lower:      # no gain even aiming lower: float32's floor
                stagnated, info = True, max(it, 1)
            else:                    # restart from x with the true residual
                if rnorm < best:
                    best = rnorm
                    if x_best is None:
                        x_best = cgv.new()
                    L1["copy"].draw(x_best, whole(x_best), {"A": v.x})
                else:                # a restart that gained nothing: once more, aiming below the target
                    aimed_lower = True
                    cgv.retarget(target * min(1.0, target / rnorm) * RETARGET, FREEZE_FLOOR * bnorm)
                restarts += 1
                cgv.restart_from_residual()
        if info is None:             # maxiter: the answer's true residual (it may meet the target)
            if it > 0:
                rnorm, read = _verified(cgv, residual64)
                readbacks += read
            info = 0 if rnorm <= target else max(it, 1)
            stagnated = stagnated and info > 0
        answer = v.x
        if info and x_best is not None and best < rnorm:     # answer the best iterate verified
            answer, rnorm = x_best, best
        return answer, info, {"iterations": it, "residual_norm": rnorm, "readbacks": readbacks,
                              "residuals": residuals, "restarts": restarts, "stagnated": stagnated}
    finally:
        cgv.release(keep=answer)
