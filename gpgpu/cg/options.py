"""The options of conjugate gradients as one table (``OPTIONS``, records of
:class:`gpgpu.options.Option`), its presets as rows of values over it (``PRESETS`` and
``PRESET_FORMATS``), and :func:`resolve`, which checks every option once and fills in the
preset's values: the record the API and the iterations read. docs/reference/cg-options.md is
rendered from these tables; docs/guide/sparse.md says whose choice each value of the paper
preset is."""
from __future__ import annotations

import numbers
import warnings
from types import SimpleNamespace

import numpy as np

from ..options import Option
from ..sparse import SparseStream

REDUCTIONS = ("pyramid", "pingpong", "fan")
#: ``iteration=``: Shewchuk's listing (paper 003's, two reductions an iteration) or the
#: single-reduction CG of Chronopoulos and Gear (beyond the papers; drawn with fan sums)
ITERATIONS = ("standard", "single-reduction")

#: What each ``preset`` of :func:`gpgpu.cg.cg` sets (an option given explicitly overrides it):
#: "paper" is paper 003's CG: pyramid sums, ||r|| read back every iteration, Shewchuk's listing
#: with its r = b - A x every 50 iterations, the recurrence's ||r|| decides convergence (as 003
#: and scipy's cg; ``residual_norm`` still reports b - A x), and a scipy.sparse A stored in 003's
#: sorted corrigan format (``PRESET_FORMATS``); docs/guide/sparse.md has the table of what it
#: sets and whose choice each value is. "robust" (the default) verifies b - A x at the target and
#: restarts from x when it misses; "fast" sums by fan passes (32 texels a fragment, beyond 003),
#: draws the single-reduction iteration of Chronopoulos and Gear (beyond 003) and reads ||r||
#: back every FAST_CHECK_EVERY iterations, verified as "robust".
FAST_CHECK_EVERY = 16
#: Shewchuk's listing recomputes r = b - A x every this many iterations ("If i is divisible by 50")
SHEWCHUK_RECOMPUTE_EVERY = 50
PRESETS = {
    "paper": {"reduction": "pyramid", "check_every": 1, "verify": False, "iteration": "standard",
              "recompute_every": SHEWCHUK_RECOMPUTE_EVERY},
    "robust": {"reduction": "pyramid", "check_every": 1, "verify": True, "iteration": "standard"},
    "fast": {"reduction": "fan", "check_every": FAST_CHECK_EVERY, "verify": True, "iteration": "single-reduction"},
}
#: every option of :func:`gpgpu.cg.cg` (its presets, :data:`PRESETS` and :data:`PRESET_FORMATS`,
#: are rows of values over it; docs/reference/cg-options.md is rendered from it)
OPTIONS = (
    Option("x0", ("cg",), 'None, a vector or "Mb"', "the starting point (None: zeros)"),
    Option("rtol", ("cg",), "a number >= 0 (inf accepted)", "the target ‖b − A x‖ ≤ max(rtol ‖b‖, atol)"),
    Option("atol", ("cg",), "a number >= 0", "the absolute part of the target"),
    Option("maxiter", ("cg",), "an integer >= 0 or None", "iterations at most (None: 10 n)"),
    Option("M", ("cg",), "None, a vector or a diagonal matrix",
           "a diagonal (Jacobi) preconditioner, M ≈ A⁻¹ as scipy's"),
    Option("callback", ("cg",), "a function or None", "called with x after each iteration"),
    Option("tol", ("cg",), "a number or None", "scipy's former name of rtol"),
    Option("preset", ("cg",), '"paper", "robust" or "fast"', "the options below in one word"),
    Option("check_every", ("cg",), "a positive integer", "the convergence test read back every so many "
           "iterations"),
    Option("reduction", ("cg",), '"pyramid", "pingpong" or "fan"', "the inner products' sums: 003's "
           "pyramid, 000's halving passes, or 32 texels a fragment"),
    Option("iteration", ("cg",), '"standard" or "single-reduction"', "Shewchuk's listing, or one reduction "
           "an iteration (beyond the papers)"),
    Option("verify", ("cg",), "True or False", "convergence checked on b - A x before info 0 (restarts)"),
    Option("recompute_every", ("cg",), "a positive integer, False (never) or None (the preset's)",
           "r = b - A x every so many iterations (Shewchuk's 50)"),
    Option("plan", ("cg",), "True or False", "the iterations drawn from recorded plans"),
    Option("format", ("cg",), '"corrigan", "ellpack", "tell", "packed" or "split"', "the SparseStream format "
           "of a scipy.sparse A (corrigan: 003's, rows sorted)"),
    Option("refine", ("cg",), "True or False", "float64 refinement around the float32 CG, for targets "
           "below float32's reach (beyond the papers)"),
)
#: The SparseStream format each preset puts a scipy.sparse A on the GPU in (``format=``
#: overrides it): paper 003's corrigan format with rows and columns sorted by non-zero count
#: (a program per count; the system solved in the sorted order) for "paper", ELLPACK (paper
#: 002's storage, one program) for "robust", packed (beyond the papers: two entries an RGBA
#: texel, long rows in segments) for "fast".
PRESET_FORMATS = {"paper": "corrigan", "robust": "ellpack", "fast": "packed"}
#: the formats ``format=`` takes (a scipy.sparse A); "corrigan" is paper 003's, sorted
SCIPY_FORMATS = ("corrigan", "ellpack", "tell", "packed", "split")


class _DefaultTolerance(float):
    """rtol's default, 1e-5, told apart from an rtol the caller gave (``tol`` and ``rtol``)."""

    def __repr__(self):
        return repr(float(self))


_DEFAULT_RTOL = _DefaultTolerance(1e-5)


def _tolerances(rtol, atol, tol) -> tuple:
    """(rtol, atol) checked; ``tol``, scipy's former name of rtol, warned of and taken."""
    if tol is not None:
        warnings.warn("cg: the keyword tol is deprecated, as in scipy (removed there in 1.14); use rtol, "
                      "which means the same (stop when ||b - A x|| <= max(rtol ||b||, atol))",
                      DeprecationWarning, stacklevel=4)
        if rtol is not _DEFAULT_RTOL and rtol != tol:
            raise ValueError(f"cg: tol={tol!r} and rtol={rtol!r} disagree; tol is the deprecated name "
                             "of rtol: pass rtol alone")
        rtol = tol
    rtol = float(rtol) if isinstance(rtol, _DefaultTolerance) else rtol
    for name, v in (("tol" if tol is not None else "rtol", rtol), ("atol", atol)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or np.isnan(v) or v < 0:
            raise ValueError(f"cg: {name} must be a number >= 0 (inf: any x0 is accepted, as in scipy), "
                             f"got {v!r}")
    return rtol, atol


def _format(format, preset: str, A) -> str:
    """The SparseStream format of a scipy.sparse A: ``format`` checked (a ValueError when A is
    not a scipy.sparse matrix, whose storage is then fixed), else the preset's."""
    if format is None:
        return PRESET_FORMATS[preset]
    if format not in SCIPY_FORMATS:
        raise ValueError(f"cg: format must be one of {', '.join(map(repr, SCIPY_FORMATS))}, got {format!r}")
    import scipy.sparse as sp

    if not sp.issparse(A):
        kind = (f"a SparseStream (format {A.format!r})" if isinstance(A, SparseStream) else
                f"a {type(A).__name__}, multiplied as a dense matrix")
        raise ValueError(f"cg: format={format!r} is how cg stores a scipy.sparse A, but A is {kind}: drop "
                         "format=, or pass A as a scipy.sparse matrix")
    return format


def resolve(preset, *, rtol, atol, tol, maxiter, callback, check_every, reduction, iteration, verify,
            recompute_every, plan) -> SimpleNamespace:
    """Every option of :func:`gpgpu.cg.cg` checked once (ValueError or TypeError naming it), the
    preset's value filled in where the caller gave none: a record with the fields rtol, atol,
    maxiter (None: 10 n), callback, check_every, reduction, iteration, verify, recompute_every
    (None: never) and plan (``format`` is checked apart, by :func:`_format`, once A's kind is)."""
    rtol, atol = _tolerances(rtol, atol, tol)
    if preset not in PRESETS:
        raise ValueError(f"cg: preset must be one of {', '.join(map(repr, PRESETS))}, got {preset!r}")
    chosen = PRESETS[preset]
    check_every = chosen["check_every"] if check_every is None else check_every
    if iteration is not None and iteration not in ITERATIONS:
        raise ValueError(f"cg: iteration must be one of {', '.join(map(repr, ITERATIONS))}, got {iteration!r}")
    if iteration == "single-reduction" and reduction not in (None, "fan"):
        raise ValueError(f"cg: iteration='single-reduction' sums its dot products by fan passes, so it "
                         f"cannot take reduction={reduction!r}: drop reduction= (or pass reduction='fan'), "
                         "or pass iteration='standard'")
    if iteration is None:       # the preset's; single-reduction only where the sums are fan passes
        iteration = chosen["iteration"] if reduction in (None, "fan") else "standard"
    reduction = chosen["reduction"] if reduction is None else reduction
    if iteration == "single-reduction":
        reduction = "fan"
    verify = chosen["verify"] if verify is None else verify
    if not isinstance(verify, (bool, np.bool_)) or not isinstance(plan, (bool, np.bool_)):
        raise TypeError(f"cg: verify and plan must be True or False, got verify={verify!r}, plan={plan!r}")
    if recompute_every is None:
        recompute_every = chosen.get("recompute_every")
    elif recompute_every is False:
        recompute_every = None
    for name, v in (("check_every", check_every), ("recompute_every", recompute_every)):
        if name == "recompute_every" and v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
            raise ValueError(f"cg: {name} must be a positive integer" + (
                ", False (never) or None (the preset's)" if name == "recompute_every" else "") + f", got {v!r}")
    if reduction not in REDUCTIONS:
        raise ValueError(f"cg: reduction must be one of {REDUCTIONS}, got {reduction!r}")
    if callback is not None and not callable(callback):
        raise TypeError("cg: callback must be callable")
    if maxiter is not None and (isinstance(maxiter, bool) or not isinstance(maxiter, numbers.Integral)
                                or maxiter < 0):
        raise ValueError(f"cg: maxiter must be a non-negative integer, got {maxiter!r}")
    return SimpleNamespace(rtol=rtol, atol=atol, maxiter=maxiter, callback=callback, check_every=check_every,
                           reduction=reduction, iteration=iteration, verify=bool(verify),
                           recompute_every=recompute_every, plan=bool(plan))
