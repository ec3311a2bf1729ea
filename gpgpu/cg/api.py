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
from typing import NamedTuple

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

__all__ = ["cg", "CGResult", "true_residual", "VARIANTS", "FREEZE_FLOOR", "REFINE_RTOL", "REFINE_PROGRESS"]

#: The iteration variants by name: Shewchuk's listing pass by pass (``iteration="standard"``
#: with pyramid or ping-pong sums), the fan iteration (``"standard"`` with fan sums) and the
#: single-reduction iteration
VARIANTS = {"standard": Standard, "fan": Fan, "single-reduction": SingleReduction}
#: The recurrence's residual is frozen (the convergence watch set) at ||r|| <= 2^-30 ||b|| at
#: the latest, whatever the target (rtol = atol = 0 included): 2^6 below float32's unit roundoff,
#: so no reachable target is cut, and far above the underflow of ||r||² and d^T A d.
FREEZE_FLOOR = 2.0 ** -30


class CGResult(tuple):
    """The answer of :func:`cg`: the tuple ``(x, info)`` of scipy's cg, with the run's figures.

    It unpacks as scipy.sparse.linalg.cg's answer; the attributes tell how paper 003's CG ran
    on the GPU (the read-backs, the recurrence's residuals) and what the project's verification
    of b - A x did (restarts, stagnation; docs/guide/sparse.md). ``gpgpu.rbf.fit`` answers one
    for its two solves, with ``solves`` (the two results) in place of ``residuals`` and ``format``.

    The tuple's items: ``x`` (the answer: float64 of shape (n,) for a numpy b, a Stream for a
    Stream b) and ``info`` (0 when converged, ||b - A x|| <= max(rtol ||b||, atol), verified;
    else the iterations done). The run's figures are attributes.

    Attributes
    ----------
    iterations : int
        Iterations done, up to the one that converged.
    residual_norm : float
        ||b - A x|| of the answer (||b|| for x0 = None and no iteration).
    readbacks : int
        Read-backs from the GPU in the run.
    residuals : list of float
        Each ||r|| of the recurrence read back: the first, then one a check.
    restarts : int
        Times the recurrence met the target but b - A x did not, and CG restarted from x.
    stagnated : bool
        CG stopped because a restart did not lower ||b - A x|| (below float32's reach), or, with
        ``refine``, because a refinement round did not halve it.
    format : str or None
        The SparseStream format A was multiplied in (None for a dense A).
    refinements : int
        With ``refine=True``: the float64 refinement rounds (GPU solves) run; 0 without.

    See Also
    --------
    cg : the solver that answers it.

    Examples
    --------
    >>> import numpy as np
    >>> import gpgpu
    >>> A = 2 * np.eye(16) - np.eye(16, k=1) - np.eye(16, k=-1)
    >>> result = gpgpu.cg(A, np.ones(16))
    >>> x, info = result
    >>> info, result.format, result.stagnated
    (0, None, False)
    >>> bool(result.residual_norm <= 1e-5 * np.linalg.norm(np.ones(16)))
    True
    """

    def __new__(cls, x, info, **extra):
        self = super().__new__(cls, (x, info))
        for k, v in extra.items():
            setattr(self, k, v)
        return self



def cg(A, b, x0=None, *, rtol: float = _DEFAULT_RTOL, atol: float = 0.0, maxiter: int | None = None,
       M=None, callback=None, tol: float | None = None, preset: str = "robust", check_every: int | None = None,
       reduction: str | None = None, recompute_every: int | None = None, verify: bool | None = None,
       plan: bool = True, format: str | None = None, iteration: str | None = None,
       refine: bool = False) -> CGResult:
    """Solve A x = b for a symmetric positive definite A by conjugate gradients on the GPU.

    Paper 003's conjugate gradients (Corrigan, after Bolz et al. 2003 and Shewchuk 1994's
    listing), called as scipy.sparse.linalg.cg (scipy >= 1.14): every vector operation of an
    iteration is a fragment program over float32 textures, the dot products are summed on the
    GPU and the scalars stay there, read back every ``check_every`` iterations. ``preset``
    picks the options together: ``"paper"`` is 003's CG (pyramid sums, Shewchuk's r = b - A x
    every 50 iterations, 003's sorted corrigan storage), ``"robust"`` (the default) verifies
    b - A x before it answers info 0, and ``"fast"`` adds, beyond the papers, fan sums and the
    single-reduction iteration of Chronopoulos and Gear (1989). docs/reference/cg-options.md
    lists every option by preset; docs/guide/sparse.md says what each does in float32.

    Parameters
    ----------
    A : SparseStream, scipy.sparse matrix, (n, n) array or Stream
        The symmetric positive definite matrix (a LinearOperator or a callable: TypeError).
    b : (n,) or (n, 1) array, or vector Stream
        The right-hand side; x comes back of shape (n,) for either shape, as scipy's.
    x0 : (n,) array, vector Stream or "Mb", optional
        The starting point (default zeros; "Mb" is M b, as scipy's).
    rtol : float, optional
        Stop when ||b - A x|| <= max(rtol ||b||, atol) (default 1e-5; inf answers x0 at once).
    atol : float, optional
        The absolute part of the target (default 0).
    maxiter : int, optional
        Iterations at most (default 10 n; 0 only tests x0, info 1 when it misses the target).
    M : (n,) array, vector Stream or diagonal matrix, optional
        A diagonal (Jacobi) preconditioner M ~ A^-1, positive and finite, e.g. 1 / A.diagonal().
    callback : callable, optional
        ``callback(xk)`` after every iteration, xk numpy in A's order (two read-backs each).
    tol : float, optional
        Deprecated, as in scipy (removed in 1.14): the old name of ``rtol``.
    preset : {"robust", "paper", "fast"}, optional
        The options below in one word; an option given explicitly overrides its preset's value.
    check_every : int, optional
        Read ||r|| and the watches back every this many iterations (preset: 1, "fast" 16).
    reduction : {"pyramid", "pingpong", "fan"}, optional
        How dot products sum: 003's pyramid, halving ping-pong passes, or fan passes of 32 texels.
    recompute_every : int, False or None, optional
        Shewchuk's r = b - A x every this many iterations (None: the preset's, 50 for "paper").
    verify : bool, optional
        Decide convergence on b - A x (True in "robust" and "fast") or on the recurrence's ||r||.
    plan : bool, optional
        Draw each iteration from a plan recorded the first time (default True; host cost only).
    format : {"corrigan", "ellpack", "tell", "packed", "split"}, optional
        The SparseStream format a scipy.sparse A is put on the GPU in (preset: see ``PRESET_FORMATS``).
    iteration : {"standard", "single-reduction"}, optional
        Shewchuk's listing, or Chronopoulos and Gear's single-reduction CG (needs fan sums).
    refine : bool, optional
        Beyond the papers (default False): mixed-precision iterative refinement, for a target
        below float32's reach. Each round computes r = b - A x in float64 on the host and
        solves A d = r by this CG on the GPU (to ``REFINE_RTOL`` of ||r||, or the target),
        then x += d in float64; the rounds stop at the target, when ``maxiter`` (all rounds'
        iterations together) is spent, or when a round no longer halves ||r|| (``stagnated``).
        A and b must be numpy or scipy.sparse (the residual is the host's).

    Returns
    -------
    result : CGResult
        ``(x, info)`` as scipy's (info 0: converged, else the iterations done), with the run's figures.

    Raises
    ------
    CGBreakdownError
        d^T A d <= 0 (A is not positive definite) or an overflow (``diverged``), at a named iteration.
    TypeError
        A or M is a LinearOperator or a callable: the GPU needs A's entries and M's diagonal.
    ValueError
        Bad shapes or options, a non-symmetric A (where checked), an M not diagonal or not positive.

    Warns
    -----
    Float32ToleranceWarning
        The target is below float32's reach, or the residual stagnated above it (``.stagnated``).
    DeprecationWarning
        ``tol`` was given.

    See Also
    --------
    CGResult : the answer and the run's figures.
    SparseStream.from_scipy : A put on the GPU in a chosen format, once for several solves.

    Notes
    -----
    The GPU computes in float32 whatever the input: float64 A, b, x0 and M are rounded to
    float32 after an exact power-of-two scaling, and x comes back in float64. The smallest
    target float32 can be held to is about 2^-23 ||b|| = 1.19e-7 ||b|| (``FLOAT32_REACH``);
    for a smaller residual pass ``refine=True`` (each round's correction computed in float32
    against a float64 residual).

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> import gpgpu
    >>> A = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(16, 16), format="csr")
    >>> b = np.ones(16)
    >>> x, info = gpgpu.cg(A, b, rtol=1e-5)
    >>> info, x.shape
    (0, (16,))
    >>> bool(np.linalg.norm(b - A @ x) <= 1e-5 * np.linalg.norm(b))
    True
    """
    o = resolve(preset, rtol=rtol, atol=atol, tol=tol, maxiter=maxiter, callback=callback,
                check_every=check_every, reduction=reduction, iteration=iteration, verify=verify,
                recompute_every=recompute_every, plan=plan)
    if refine is not False:
        if refine is not True:
            raise TypeError(f"cg: refine must be True or False, got {refine!r}")
        return _refined(A, b, x0, M, o, dict(preset=preset, check_every=check_every, reduction=reduction,
                                             recompute_every=recompute_every, verify=verify, plan=plan,
                                             format=format, iteration=iteration))
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
                            residuals=[bnorm], format=used, restarts=0, stagnated=False, refinements=0)
        if not bmax > 0:            # b = 0: x = 0 exactly (A is nonsingular)
            x = np.zeros(n) if numpy_out else Stream.vector_of(n)
            return CGResult(x, 0, iterations=0, residual_norm=0.0, readbacks=system.readbacks, residuals=[0.0],
                            format=used, restarts=0, stagnated=False, refinements=0)
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
            scaled = ScaledProblem(system.b, system.x0, system.M, np.ldexp(bnorm, -k), np.ldexp(target, -k))
            x_out, info, extra = _iterate(op, scaled, o, system.to_user, system.residual64())
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
        extra["refinements"] = 0
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


#: ``refine=True``: each round's CG solves A d = r to this fraction of ||r|| (or to the target,
#: where that is less tight): 1e-5, cg's default rtol, well above float32's reach, so a round
#: on a moderately conditioned A converges and takes ||r|| down five orders
REFINE_RTOL = 1e-5
#: ``refine=True``: the rounds stop (``stagnated``) when one lowers ||b - A x|| by less than this
REFINE_PROGRESS = 0.5


def _refined(A, b, x0, M, o, options) -> CGResult:
    """cg's ``refine=True`` (beyond the papers): mixed-precision iterative refinement, the
    residual r = b - A x in float64 on the host, each correction d by the float32 CG on the GPU
    (``options``, cg's other keywords, passed to it), x += d in float64, until ||r|| meets the
    target of the resolved options ``o`` (its rtol, atol, maxiter for all rounds, callback)."""
    import scipy.sparse as sp

    if isinstance(A, (Stream, SparseStream)) or isinstance(b, Stream) or isinstance(x0, Stream):
        raise ValueError("cg: refine=True computes b - A x in float64 on the host, so A must be a numpy array or "
                         "a scipy.sparse matrix and b (and x0) numpy arrays; pass them so, or drop refine")
    _check_matrix_kind(A)
    callback = o.callback
    A64 = A.tocsr().astype(np.float64) if sp.issparse(A) else np.asarray(A, dtype=np.float64)
    b64 = np.asarray(b, dtype=np.float64).reshape(-1)
    if not np.any(b64):                      # b = 0: x = 0 exactly, as without refine (and scipy)
        return cg(A, b, x0, rtol=o.rtol, atol=o.atol, maxiter=o.maxiter, M=M, callback=callback, **options)
    n = b64.size
    budget = 10 * n if o.maxiter is None else o.maxiter
    target = max(o.rtol * float(np.linalg.norm(b64)), o.atol)
    x = np.zeros(n) if x0 is None or isinstance(x0, str) else np.asarray(x0, dtype=np.float64).reshape(-1).copy()
    start = x0 if isinstance(x0, str) else None           # "Mb": the first round starts from M r
    r = b64 - A64 @ x                        # the float64 residual of x, kept from round to round
    rnorm = float(np.linalg.norm(r))
    figures = {"iterations": 0, "readbacks": 0, "restarts": 0, "format": None}
    norms, rounds, stagnated, broke = [rnorm], 0, False, False
    while not rnorm <= target and figures["iterations"] < budget:
        step = None if callback is None else (lambda d, x=x: callback(x + d))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", Float32ToleranceWarning)     # the rounds are the remedy
                d, info = inner = cg(A, r, start, rtol=max(REFINE_RTOL, target / rnorm), atol=0.0, M=M,
                                     maxiter=budget - figures["iterations"], callback=step, **options)
        except CGBreakdownError:
            if rounds == 0:                  # as without refine: nothing was solved
                raise
            stagnated, broke = True, True    # a later round: keep the x the rounds before reached
            break
        start, rounds = None, rounds + 1
        for key in ("iterations", "readbacks", "restarts"):
            figures[key] += getattr(inner, key)
        figures["format"] = inner.format
        trial = x + d
        r_trial = b64 - A64 @ trial
        new = float(np.linalg.norm(r_trial))
        spent = figures["iterations"] >= budget              # maxiter's stop, not a stagnation
        if not new < rnorm:                  # no gain (float32 can't resolve the correction)
            stagnated = not spent
            break
        x, r, stagnated = trial, r_trial, not spent and not new <= REFINE_PROGRESS * rnorm
        rnorm = new
        norms.append(rnorm)
        if stagnated or inner.iterations == 0:   # (no iteration: nothing left that float32 resolves)
            break
    converged = rnorm <= target
    if not converged and stagnated:
        why = ("the float32 CG of the next round broke down (dᵀAd <= 0 in float32)" if broke else
               "a float64 refinement round no longer halved it")
        warnings.warn(f"cg(refine=True): stopped at ||b - A x|| = {rnorm:.3g} ({rnorm / max(norms[0], 1e-300):.2g} "
                      f"of the start), above the target {target:.3g}: {why} (the float32 corrections do not "
                      "resolve this system further)", Float32ToleranceWarning, stacklevel=3)
    info = 0 if converged else max(1, figures["iterations"])
    return CGResult(x, info, residual_norm=rnorm, residuals=norms, stagnated=stagnated and not converged,
                    refinements=rounds, **figures)


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


class ScaledProblem(NamedTuple):
    """What :func:`_iterate` solves, in the scaled system's units: b, x0 (None: zeros) and M
    (None: no preconditioner) as float32 vector streams, ||b|| and the target."""
    b: Stream
    x0: Stream | None
    M: Stream | None
    bnorm: float
    target: float


def _iterate(op, problem: ScaledProblem, o, to_user, residual64=None):
    """CG on the scaled ``problem`` from x0 (None: zeros), bnorm and target in its units, with the
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
    b, x0, M, bnorm, target = problem
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
