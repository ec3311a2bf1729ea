"""``solve``: the LP's entry point, as scipy's ``linprog`` is laid out: check the options, resolve
the preset (:data:`PRESETS`), read or take the problem, dispatch to Mehrotra's method
(:mod:`.mehrotra` on a back end of :mod:`.backends`) or the matrix-free method
(:mod:`.matrix_free`), and shape the result. ``gpgpu.lp`` re-exports what users call."""
from __future__ import annotations

import contextlib
import math
import numbers
import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .. import counters
from .backend import BACKENDS, Backend
from .backends import get_backend
from .bounds import BOUNDS, BoundRows
from .mehrotra import MESSAGES, STATUS, STATUS_CODES, LPResult, Resume, mehrotra
from .mps import INFINITE_BOUND, Problem, read_mps
from .options import names_taken
from .netlib import netlib_path, PAPER_TABLE3
from .qap import qap_lp, qaplib_dir
from .scaling import objectives_divided, scale_problem, Units, unscale_result
from . import certificate, presolve as presolve_module, regularisation as R
from .units import Lines
from . import matrix_free as mf


#: the interior point methods of ``solve``
METHODS = ("mehrotra", "matrix-free")
#: scipy's names of options this solver has under another name
SCIPY_NAMES = {"maxiter": "max_iter", "tol": "eps", "primal_feasibility_tolerance": "eps",
               "dual_feasibility_tolerance": "eps", "ipm_optimality_tolerance": "eps", "autoscale": "scale"}


#: ``refine=None`` (the default) turns refinement on for the float32 back ends when eps is
#: below this: 3e-5 is the tightest tolerance the paper's single-precision runs reached
#: (Table 3 of 000), so the paper's settings keep the paper's algorithm.
REFINE_BELOW = 3e-5


def _check_options(eps, max_iter):
    """``eps`` and ``max_iter`` checked (a TypeError or ValueError naming the argument) and
    returned as float and int. A string ("1e-6") or a bool is no tolerance: refused, not converted."""
    if isinstance(eps, (bool, np.bool_)) or not isinstance(eps, numbers.Real):
        raise TypeError(f"eps must be a number (a float such as 1e-6, the relative tolerance of "
                        f"(6.1)-(6.3)), got {eps!r} of type {type(eps).__name__}")
    eps_f = float(eps)
    if not (math.isfinite(eps_f) and 0.0 < eps_f < 1.0):
        raise ValueError(f"eps must be a finite number with 0 < eps < 1 (the relative tolerance of "
                         f"(6.1)-(6.3)), got {eps!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral):
        raise TypeError(f"max_iter must be a positive integer, got {max_iter!r}")
    if max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer, got {max_iter}")
    return eps_f, int(max_iter)


def _trivial(problem, backend) -> LPResult | None:
    """The answer for a problem the presolve emptied (no rows or no columns left), or None.

    With no columns every variable was fixed or removed by the presolve: the point is unique.
    With no rows the LP is min c^T x over x >= 0: x = 0 is optimal when c >= 0, and the
    problem is unbounded along any e_j with c_j < 0.
    """
    m, n = problem.standard_size
    if m and n:
        return None
    code, x = 0, np.zeros(n)
    if n and (problem.c < 0).any():
        code = 3
        j = int(np.argmin(problem.c))
        detail = f"no constraints are left and variable {j} has cost {problem.c[j]:g} < 0"
    else:
        detail = "the presolve left no " + ("columns" if not n else "rows") + "; the solution is unique"
    message = f"{MESSAGES[code]} ({detail})"
    return LPResult(status=STATUS[code], status_code=code, message=message,
                    x=problem.to_original(x) if code == 0 else None, x_std=x if code == 0 else None,
                    y=np.zeros(m) if code == 0 else None, s=problem.c.copy() if code == 0 else None,
                    objective=problem.original_objective(x) if code == 0 else float("nan"),
                    iterations=0, backend=str(backend))


#: what each preset sets, by method and (for "/gpu") by back end: docs/lp_defaults.md has the
#: table. An option that ``solve`` is given overrides its preset's; one left out (or None) is the
#: preset's, and one no preset names keeps its function's default.
#: the GPU kernels of Mehrotra's method that robust and fast draw (beyond the papers, the same
#: algorithm in float32 rounding: docs/guide/lp.md): A D² Aᵀ from the non-zeros of A in one pass of
#: points, the Cholesky factor and L⁻¹ together by blocks of 16 columns where the float64
#: refinement follows the factor ("auto": four steps a pass over a block's panel in float32, one
#: in float-float, then one pass for the rest: on an H100 degen3 took 1.60 s where four steps a
#: pass over the whole matrix took 2.89 s, docs/results/lp.md), two passes a solve, the reductions 32 texels a fragment, the composites of
#: the directions one pass each
FAST_GPU_KERNELS = {"adat": "points", "substitution": "inverse", "pivot": "onepass", "reductions": "fan",
                    "fuse": True, "factor_block": "auto"}

PRESETS = {
    # the papers' algorithms where the project has them (docs/guide/lp.md and
    # docs/guide/matrix-free.md have the table of each option: the paper's, or the project's and
    # why): 000's Algorithm 3 on its standard form (a row of the normal matrix for each upper
    # bound) with its single-pass A D^2 A^T, the outer Cholesky with the square update of Table 3,
    # float32 factors and halving reductions (numpy: the Cholesky loop on the dense A), and with
    # eps=None Table 3's eps for Table 3's problems (PAPER_EPS); 002's regularised PCG IPM
    # without the adaptive rule, T-ELL with the dense rows split off (the nearest to the DHTELL2
    # of 002's Table 3, which a fragment program cannot draw as printed), pairwise sums and PCG's scalars read every
    # iteration; no presolve, scaling or refinement. The starting point's floor, the stall
    # stops, the guarded square root, ETA_MAX, and 002's rank, PCG target and reg_min, stay the
    # project's
    "paper": {"any": {"refine": False, "presolve": False, "scale": False, "normalize": False, "bounds": "rows"},
              "mehrotra": {"correct_primal": False, "free_safeguard": False, "regularize": False},
              "mehrotra/gpu": {"adat": "inner", "substitution": "outer", "pivot": "separate", "update": "square",
                               "reductions": "pingpong", "fuse": False, "factor_precision": "float32"},
              "mehrotra/numpy": {"factorization": "loop", "adat": "dense"},
              "matrix-free": {"adaptive": False},
              "matrix-free/gpu": {"format": "tell", "sums": "pingpong", "pcg_check": 1,
                                  "solution": "float32", "fused": False, "fold": None}},
    # the defaults: upper bounds in the Newton system, refinement, HiGHS's presolve, the primal
    # correction and the free-split safeguard automatic (on below REFINE_BELOW, see solve),
    # float-float factors after a stall, the fast kernels of FAST_GPU_KERNELS on the GPU and
    # LAPACK on the CPU; the matrix-free method's adaptive regularisation floor and PCG limit,
    # and on the GPU the dense part's sums by fans of 32 texels (sums="fan"; on an H100 the 19
    # problems with a dense part of the NETLIB set measured took 48.5 s against 72.7 s by 000's
    # halving sums, all optimal both ways: docs/results/matrix-free.md).
    # Its storage stays the back end's ELLPACK: the packed format changes the sums' order only
    # (float32 rounding), and robust's record (the NETLIB and nug runs) was measured with
    # ELLPACK; on llvmpipe at eps 1e-8 packed was as optimal on ten LPs (bandm: optimal, ELLPACK
    # numerical trouble there, a rounding-sensitive problem either way) with fewer passes on the
    # larger ones
    "robust": {"mehrotra/gpu": dict(FAST_GPU_KERNELS),
               "matrix-free": {"adaptive": True},
               "matrix-free/gpu": {"sums": "fan"}},
    # robust plus every option that saves work and keeps the answer (float32 rounding only:
    # docs/guide/lp.md, docs/guide/matrix-free.md): the primal correction at every eps; the
    # matrix-free products in the packed format (beyond 002: two entries an RGBA texel, long
    # rows in segments; gpgpu.sparse)
    "fast": {"mehrotra": {"correct_primal": True},
             "mehrotra/gpu": dict(FAST_GPU_KERNELS),
             "matrix-free": {"adaptive": True},
             "matrix-free/gpu": {"format": "packed", "sums": "fan"}},
}


def preset_options(preset="robust", method="mehrotra", backend="gpu", **options) -> dict:
    """The options that ``solve`` runs with for a preset, a method, a back end and overrides.

    ``solve(..., preset=preset, method=method, backend=backend, **options)`` runs with what this
    answers: the preset's options (:data:`PRESETS`: "paper", the papers' algorithms where the
    project has them, paper 000's Algorithm 3 with Table 3's kernels and paper 002's matrix-free
    method; "robust", the default; "fast", the speed options that keep the answer), its method's
    part and, for a back end given by name, its "/gpu" or "/numpy" part, then ``options`` over them.
    Where ``cholesky`` or ``pivot`` given make the preset's ``pivot="onepass"`` or
    ``update="square"`` not apply (they belong to the outer Cholesky form), these are left out.
    docs/lp_defaults.md and docs/reference/lp-options.md table the presets.

    Parameters
    ----------
    preset : {"robust", "paper", "fast"}
        The preset's name.
    method : {"mehrotra", "matrix-free"}
        The interior point method.
    backend : str or Backend
        The back end; only one given by name ("gpu", "numpy32", "numpy64") adds its part.
    **options
        Overrides; None for one of solve's own options (:data:`PRESET_NONE`) leaves the preset's value.

    Returns
    -------
    dict
        Option name to value.

    Raises
    ------
    ValueError
        An unknown preset or method.

    Examples
    --------
    >>> from gpgpu import lp
    >>> paper = lp.preset_options("paper", "mehrotra", "gpu")
    >>> paper["adat"], paper["update"], paper["refine"]
    ('inner', 'square', False)
    >>> lp.preset_options("fast", "mehrotra", "numpy64", refine=True)
    {'correct_primal': True, 'refine': True}
    """
    if not isinstance(preset, str) or preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; choose one of {', '.join(map(repr, PRESETS))} "
                         "('paper': the papers' algorithm, 'robust': the default, 'fast': the speed options "
                         "that keep the answer)")
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    table = PRESETS[preset]
    out = dict(table.get("any", {}), **table.get(method, {}))
    if isinstance(backend, str) and backend == "gpu":
        out.update(table.get(f"{method}/gpu", {}))
        if ((options.get("cholesky") or "outer") != "outer" or (options.get("update") or "triangle") != "triangle") \
                and out.get("pivot") == "onepass":
            del out["pivot"]                  # a variant of the outer form with the triangle update
        if "update" in out and "update" not in options and (
                (options.get("cholesky") or "outer") != "outer" or options.get("pivot") == "onepass"):
            del out["update"]                 # paper's square update: the outer form's, not onepass's
    elif isinstance(backend, str) and backend in ("numpy32", "numpy64"):
        out.update(table.get(f"{method}/numpy", {}))
        if method == "mehrotra" and (options.get("cholesky") or "outer") != "outer" and "factorization" not in options:
            out["factorization"] = "loop"     # cholesky="inner" is a form of the paper's loop
    out.update({k: v for k, v in options.items() if v is not None or k not in PRESET_NONE})
    return out


#: solve's own options whose None means "the preset's value" (others pass None on, to be checked)
PRESET_NONE = ("refine", "presolve", "correct_primal", "free_safeguard", "regularize", "scale", "normalize",
               "cholesky", "adaptive")


#: ``solve``'s tolerance when ``eps`` is None (its default), except with ``preset="paper"``
#: (see :func:`paper_eps`)
DEFAULT_EPS = 1e-6


def paper_eps(problem, preset="paper", method="mehrotra") -> float:
    """The tolerance that ``solve`` uses when its ``eps`` is None.

    ``solve(problem, eps=None, preset=preset, method=method)`` runs at this eps: with
    ``preset="paper"`` and Mehrotra's method, a problem of Table 3 of paper 000 (found by its name,
    as ``python -m gpgpu.lp`` picks it) gets Table 3's eps, 3e-5 .. 2e-3
    (``gpgpu.lp.netlib.PAPER_TABLE3[name]["eps"]``); everything else gets :data:`DEFAULT_EPS`, 1e-6.

    Parameters
    ----------
    problem : Problem
        The problem (its ``name`` is looked up in Table 3).
    preset : {"paper", "robust", "fast"}
        The preset of the solve.
    method : {"mehrotra", "matrix-free"}
        The method of the solve.

    Returns
    -------
    float
        The tolerance of (6.1)-(6.3).

    Examples
    --------
    >>> from gpgpu import lp
    >>> from gpgpu.lp.netlib import netlib_path
    >>> p = lp.read_mps(netlib_path("afiro"))
    >>> lp.paper_eps(p), lp.paper_eps(p, preset="robust")
    (4e-05, 1e-06)
    """
    if preset == "paper" and method == "mehrotra":
        name = getattr(problem, "name", None)
        if isinstance(name, str) and name.lower() in PAPER_TABLE3:
            return float(PAPER_TABLE3[name.lower()]["eps"])
    return DEFAULT_EPS


def solve(problem, backend="gpu", eps=None, method="mehrotra", *, preset="robust", max_iter=100,
          callback=None, time_limit=None, **options) -> LPResult:
    """Solve a linear program by an interior point method on the GPU (or on numpy).

    Minimises c^T x subject to A x = b, x >= 0 (the standard form (4.1)-(4.3) of paper 000, to
    which :func:`standardize` brings an MPS file's general form) by Algorithm 3 of paper 000 (Jung &
    O'Leary: Mehrotra's predictor-corrector method, its dense normal equations formed (adat) and
    factored (Cholesky) on the GPU), or by the matrix-free interior point method of paper 002
    (``method="matrix-free"``: regularised normal equations solved by PCG with a partial Cholesky
    preconditioner, A used only through sparse products, :mod:`gpgpu.lp.matrix_free`). A preset
    chooses the options in one word and ``**options`` override it one by one:
    docs/reference/lp-options.md tables every option and what each preset sets; docs/guide/lp.md
    and docs/guide/matrix-free.md say when to change what and which values are the papers'.

    Parameters
    ----------
    problem : Problem or str or Path
        A standard-form problem, an MPS file, or a shipped NETLIB ("afiro") or QAPLIB ("nug12") name.
    backend : {"gpu", "numpy32", "numpy64"} or Backend
        Where the iteration runs; the matrix-free method runs on "gpu" or "numpy64".
    eps : float, optional
        Tolerance of (6.1)-(6.3), 0 < eps < 1; None: 1e-6, or Table 3's eps under the paper preset.
    method : {"mehrotra", "matrix-free"}
        Paper 000's Algorithm 3 (the default), or paper 002's matrix-free method.
    preset : {"robust", "paper", "fast"}
        The options in one word (:data:`PRESETS`): the default, the papers' algorithms, or the speed options.
    max_iter : int
        The most interior point iterations, a positive integer.
    callback : callable, optional
        Called with each iteration's history entry (a dict).
    time_limit : float, optional
        Seconds after which the iteration stops with status "time_limit" and the best point met.
    **options
        The preset's options overridden one by one; None leaves the preset's value.

    Returns
    -------
    LPResult
        The status, the point (``x`` in the problem's own variables, ``x_std``, ``y``, ``s``), the
        objective and the history. ``check`` holds the status checked in float64 on the problem as
        given; ``preset``, ``options``, ``passes`` and ``warnings`` say how it was solved. An
        infeasible or unbounded problem has no point (``x`` None, ``objective`` NaN; the matrix-free
        result keeps where its iteration stopped in ``last_point``).

    Raises
    ------
    TypeError
        ``eps``, ``max_iter``, a flag option or ``callback`` of the wrong type, or an option that
        neither solve, the method nor the back end takes (named before anything is solved).
    ValueError
        ``eps`` outside 0 < eps < 1 or ``max_iter`` below 1, an unknown preset or method, options
        that do not go together; on a float32 back end an entry beyond float32's range (3.4e38, or
        1.8e19 for A in the matrix-free method on the GPU); an LP that HiGHS's presolve refuses
        (coefficients of 1e15 and more: ``presolve=False`` solves without it).
    FileNotFoundError
        ``problem`` names neither a file nor a shipped problem.

    See Also
    --------
    linprog : The same solver, called as ``scipy.optimize.linprog``.
    preset_options : The options a preset and overrides run with.

    Examples
    --------
    >>> from gpgpu import lp
    >>> r = lp.solve("afiro")
    >>> r.status, round(r.objective, 2)
    ('optimal', -464.75)
    >>> r = lp.solve("afiro", backend="numpy64", eps=1e-8, preset="paper")
    >>> r.success, r.options["bounds"]
    (True, 'rows')
    """
    # check the arguments (and read a named problem)
    problem, eps, deadline = _checked(problem, eps, method, preset, max_iter, callback, time_limit)
    # resolve the options: the preset's, the ones given over them, their names checked
    chosen = preset_options(preset, method, backend, **options)
    _check_option_names(options, method, backend)
    run = _resolved(chosen, backend, eps, max_iter, callback, method, deadline)
    # dispatch: presolve, scaling, normalisation, then the method on its back end
    with counters.tally() as drawn:
        result = _answer(problem, run)
    # shape the result
    return _shaped(problem, result, drawn, preset, chosen, method)


def _checked(problem, eps, method, preset, max_iter, callback, time_limit) -> tuple:
    """solve's arguments checked (eps and max_iter before an MPS file is read), the problem read
    when it is named, and eps when None (:func:`paper_eps`): (problem, eps, deadline)."""
    _check_options(DEFAULT_EPS if eps is None else eps, max_iter)   # before an MPS file is read
    deadline = _deadline(time_limit)
    if isinstance(problem, (str, Path)):
        problem = read_named(problem)
    elif not isinstance(problem, Problem):
        raise TypeError(f"problem must be a gpgpu.lp.Problem or the path of an MPS file, got "
                        f"{type(problem).__name__}")
    if eps is None:
        eps = paper_eps(problem, preset, method)
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be a function (it is called with each iteration's history entry, "
                        f"a dict) or None, got {callback!r} of type {type(callback).__name__}")
    return problem, eps, deadline


@dataclass(frozen=True)
class _Run:
    """What a solve runs with: solve's arguments and the options the preset and the overrides
    chose, solve's own options taken out (None: decided by :func:`_automatic`), the method's and
    back end's left in ``options``."""
    backend: object
    eps: float
    max_iter: int
    callback: object
    method: str
    deadline: float | None = None
    cholesky: object = "outer"
    refine: bool | None = None
    presolve: bool | None = None
    correct_primal: bool | None = None
    free_safeguard: bool | None = None
    scale: bool = False
    regularize: bool | None = None
    normalize: bool = True
    options: dict = field(default_factory=dict)
    resume: Resume | None = None        # Mehrotra's last point, for a solve at a tighter eps


def _resolved(chosen, backend, eps, max_iter, callback, method, deadline) -> _Run:
    """The run of the options ``chosen`` (:func:`preset_options`): solve's own taken out and the
    flags checked (True, False or None; a TypeError naming one that is not)."""
    options = dict(chosen)
    flags = {name: _flag(name, options.pop(name, None), none=True)
             for name in ("refine", "presolve", "correct_primal", "free_safeguard", "regularize")}
    scale = _flag("scale", options.pop("scale", False))
    normalize = _flag("normalize", options.pop("normalize", None), none=True)
    cholesky = options.pop("cholesky", "outer")
    for name in FLAG_OPTIONS:
        if name in options:
            options[name] = _flag(name, options[name])
    return _Run(backend, eps, max_iter, callback, method, deadline, cholesky, scale=scale,
                normalize=normalize is not False, options=options, **flags)


def _shaped(problem, result: LPResult, drawn, preset, chosen, method) -> LPResult:
    """The result as solve answers it: an empty column's unboundedness, the passes drawn, the
    method, preset and options, the problem's warnings, and an optimum's marginals on the
    problem as given (:meth:`Problem.marginals`)."""
    result = _unbounded_column(problem, result)
    result.method = method
    if result.status_code == 0 and result.y is not None and result.s is not None:
        result.marginals = problem.marginals(result.y, result.s)
    result.passes, result.pass_seconds = drawn.passes, drawn.seconds
    result.preset, result.options = preset, {k: v for k, v in chosen.items() if k != "start"}
    notes = list(_relaxation_warnings(problem))
    result.warnings = notes
    if notes:
        result.message += " Warning: " + " ".join(notes) + "."
    return result


def read_named(name):
    """The Problem of an MPS file's path, or of the name of a shipped NETLIB problem ("afiro")
    or QAPLIB instance ("nug12": its LP relaxation, :func:`gpgpu.lp.qap.qap_lp`)."""
    path = Path(name)
    try:
        exists = path.exists()
    except OSError as e:                # a name the file system refuses (too long, ...)
        raise FileNotFoundError(f"{str(name)[:60]}{'...' if len(str(name)) > 60 else ''}: not a file name this "
                                f"system takes ({e.strerror}); give an MPS file's path or a shipped problem's "
                                "name (\"afiro\", \"nug12\")") from None
    if isinstance(name, str) and not exists and not path.suffix and "/" not in name:
        try:
            path = netlib_path(name)
        except FileNotFoundError as e:
            try:
                qap = qaplib_dir() / f"{name}.dat"
            except FileNotFoundError:
                qap = None
            if qap is None or not qap.is_file():
                raise FileNotFoundError(f"{e.args[0]}, and no QAPLIB instance {name!r} (gpgpu.lp.qap.qaplib_dir())")
            return qap_lp(qap)            # the QAP LP relaxation of 002's Table 1
    return read_mps(path)


def _deadline(time_limit):
    """``time.perf_counter()`` + ``time_limit``, or None; a clear error for a limit that is not a
    positive number of seconds."""
    if time_limit is None:
        return None
    if isinstance(time_limit, bool) or not isinstance(time_limit, numbers.Real):
        raise TypeError(f"time_limit must be a number of seconds, got {time_limit!r}")
    if not time_limit > 0:
        raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    return time.perf_counter() + float(time_limit)


def _check_option_names(options, method, backend) -> None:
    """An option that neither ``solve``, the method nor the back end (given by name) takes is a
    TypeError naming it, scipy's name of one of ours (``maxiter``, ``tol``) with ours, and the
    options there are, before anything is built (the back end's own TypeError named its class)."""

    taken = names_taken(method, backend) if method in METHODS else None
    if taken is None:                 # a back end instance, or a name that solve refuses by itself
        return
    known = set(taken) - {"backend", "eps", "max_iter", "callback", "time_limit"}
    # the other method's (or back end's) options that _solve refuses with their own reason
    unknown = sorted(set(options) - known - {"adaptive", "start", "factor_precision"})
    if unknown:
        hints = [f"{k!r} is {SCIPY_NAMES[k]!r} here" for k in unknown if k in SCIPY_NAMES]
        if method == "matrix-free":       # Mehrotra's options, which the matrix-free method refuses by name
            known -= {"cholesky", "correct_primal", "free_safeguard"}
        raise TypeError(f"solve: unexpected keyword argument{'s' if len(unknown) > 1 else ''} "
                        f"{', '.join(map(repr, unknown))}" + (f" ({'; '.join(hints)})" if hints else "")
                        + f"; method={method!r} with backend={backend!r} takes eps, max_iter, callback, "
                        f"preset and the options {', '.join(sorted(known))}")


#: boolean options of the back ends (checked as solve's own flags)
FLAG_OPTIONS = ("profile", "fuse", "fast_solve", "adaptive")

#: the largest float32: the GPU and numpy32 back ends hold the LP in float32
FLOAT32_MAX = float(np.finfo(np.float32).max)
#: float32's smallest normal number: below it a GPU may flush to zero
FLOAT32_TINY = float(np.finfo(np.float32).tiny)


def _flag(name, v, none=False):
    """A boolean option checked: True or False (numpy's too), or None where ``none``."""
    if v is None and none:
        return None
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    raise TypeError(f"{name} must be True or False{' (or None, its default)' if none else ''}, got {v!r}")


def _relaxation_warnings(problem):
    """The problem's warnings that the result must carry: integrality dropped (read_mps), a
    finite bound beyond +-1e30 read as infinite (standardize)."""
    yield from (w for w in problem.warnings if ("LP relaxation" in w and problem.integer_columns)
                or INFINITE_BOUND in w)


def _unbounded_column(problem, result: LPResult) -> LPResult:
    """The answer for a problem with an empty column whose cost pulls it to an infinite bound
    (:func:`~gpgpu.lp.mps.standardize` fixed it at 0): unbounded when the rest is feasible
    (solved to optimality), the rest's status otherwise (infeasible: both the primal and the dual
    are, reported as infeasible, as scipy and HiGHS do)."""
    col = problem.presolve.get("unbounded_column")
    if col is None or result.status_code != 0:
        return result
    code = STATUS_CODES["unbounded"]
    result.status, result.status_code = "unbounded", code
    result.message = (f"{MESSAGES[code]} (empty column {col[0]} with cost {col[1]:g} has no bound on the side its "
                      f"cost prefers, and the rest of the problem is feasible: solved to optimality in "
                      f"{result.iterations} iterations)")
    return _no_point(result)


def _no_point(result: LPResult) -> LPResult:
    """An infeasible or unbounded result without a point (x, x_std, y, s None, objective NaN),
    as the results the presolve decides: the iterate where the tests fired solves nothing."""
    if result.status_code in (2, 3):
        result.x = result.x_std = result.y = result.s = None
        result.objective = float("nan")
    return result


def _check_float32_span(problem, units, backend, method) -> None:
    """A ValueError when the normalised LP (``units``) has an entry that float32 cannot hold on
    the GPU or numpy32: A's normal-equation products a_ik a_jk (both methods square A) need
    |a| within 1.1e-19 .. 1.8e19, b and c within 1.2e-38 .. 3.4e38. Names the user's entries."""
    A = sp.coo_matrix(problem.A)
    squares = (math.sqrt(FLOAT32_TINY), math.sqrt(FLOAT32_MAX))
    parts = (("A", A.data, A.data * units.rows[A.row] * units.columns[A.col], squares,
              lambda k: f"A[{A.row[k]}, {A.col[k]}]"),
             ("b", problem.b, problem.b * units.rows * units.beta, (FLOAT32_TINY, FLOAT32_MAX), lambda k: f"b[{k}]"),
             ("c", problem.c, problem.c * units.gamma, (FLOAT32_TINY, FLOAT32_MAX), lambda k: f"c[{k}]"))
    for name, given, scaled, (lo, hi), where in parts:
        mag = np.abs(scaled)
        bad = np.flatnonzero((mag > hi) | ((mag < lo) & (mag > 0)))
        if not bad.size:
            continue
        k = int(bad[0])
        nonzero = np.flatnonzero(given)
        big = int(nonzero[np.argmax(np.abs(given[nonzero]))])
        small = int(nonzero[np.argmin(np.abs(given[nonzero]))])
        what = {"A": "coefficient", "b": "right-hand side", "c": "cost"}[name]
        form = "the standard form's " if problem.source is not None else "the "
        names = {i: form + f"{what} {where(i)} = {given[i]:g}" for i in (big, small)}
        src = problem.source
        if src is not None and name in ("A", "c"):        # the largest as the user gave it
            S = sp.coo_matrix(src["A"]) if name == "A" else None
            vals = S.data if name == "A" else src["c"]
            hit = np.flatnonzero(vals == given[big])
            if hit.size:
                h = int(hit[0])
                names[big] = (f"the coefficient A[{S.row[h]}, {S.col[h]}] = {vals[h]:g}" if name == "A"
                              else f"the cost c[{h}] = {vals[h]:g}")
        span = f"{names[big]} is {abs(given[big] / given[small]):.2g} times {names[small]}" if big != small \
            else names[big]
        raise ValueError(
            f"{problem.name}: {span}: more than float32 holds on the {backend} back end even with the LP "
            f"normalised ({what}s within {lo:.2g} .. {hi:.2g}{'; both methods square A' if name == 'A' else ''}; "
            f"normalised, {where(k)} is {mag[k]:.2g}). Use backend='numpy64' (float64), or scale=True (rows and "
            "columns scaled by powers of two)")


def _check_float32(problem, backend, method) -> None:
    """A ValueError naming the first entry a float32 back end cannot hold (see ``solve``)."""
    if method == "matrix-free":
        limit, parts = math.sqrt(FLOAT32_MAX), (("A", problem.A),)
        why = (f"above {limit:.3g}, whose square (A .* A, the diagonal of the normal equations) is beyond "
               "float32's range (3.4e38)")
    else:
        limit, parts = FLOAT32_MAX, (("A", problem.A), ("b", problem.b), ("c", problem.c))
        why = "beyond float32's range (|v| <= 3.4e38)"
    src = problem.source
    for name, v in parts:
        data = v.data if name == "A" else v
        over = np.flatnonzero(np.abs(data) > limit)
        if not over.size:
            continue
        where = None
        if src is not None and name in ("A", "c"):       # the entry as the user gave it
            if name == "A":
                SA = src["A"].tocsc()
                big = np.flatnonzero(np.abs(SA.data) > limit)
                if big.size:
                    k = int(big[0])
                    j = int(np.searchsorted(SA.indptr, k, side="right") - 1)
                    where = f"the coefficient A[{int(SA.indices[k])}, {j}] = {SA.data[k]:g}"
            else:
                big = np.flatnonzero(np.abs(src["c"]) > limit)
                if big.size:
                    where = f"the cost c[{int(big[0])}] = {src['c'][big[0]]:g}"
        if where is None:             # given in the standard form, or made by the conversion (a shift)
            form = "the standard form's " if src is not None else "the "
            if name == "A":
                M = problem.A.tocsr()
                k = int(np.flatnonzero(np.abs(M.data) > limit)[0])
                i = int(np.searchsorted(M.indptr, k, side="right") - 1)
                where = f"{form}coefficient A[{i}, {int(M.indices[k])}] = {M.data[k]:g}"
            else:
                what = "right-hand side" if name == "b" else "cost"
                where = f"{form}{what} {name}[{int(over[0])}] = {data[over[0]]:g}"
        raise ValueError(f"{problem.name}: {where} is {why}: the {backend} back end holds the LP in float32, "
                         "where it would be infinity. Use backend='numpy64' (float64), or scale=True (rows and "
                         "columns scaled by powers of two)")


def _answer(problem, run: _Run) -> LPResult:
    """The solve in the LP's own units (:func:`_own_units`), its status checked there
    (:func:`gpgpu.lp.certificate.confirm`: solved again without the presolve, or the feasibility
    problem solved, where the check asks for it), the answer in the units of ``problem``."""
    run = _automatic(run)
    own, run, to_user = _own_units(problem, run)
    kept = Resume() if run.method == "mehrotra" else None
    result = _solve(own, replace(run, resume=kept))

    def resolve(p, fresh=False, **changes):
        if p is not own and not isinstance(run.backend, str):
            return None                 # a back end given as an instance is bound to its problem
        # the same problem at a tighter eps: the iteration goes on from its last point, for
        # RESUME_ITERATIONS at most (``fresh``: from the start)
        going_on = (kept if not fresh and p is own and set(changes) == {"eps"} and kept is not None and kept.point
                    else None)
        callback = run.callback if p is own else None
        if going_on is not None:
            changes["max_iter"] = min(run.max_iter, RESUME_ITERATIONS)
            if callback is not None:        # the continuation's entries numbered on, as its history
                callback = _numbered_on(run.callback, result.iterations)
        again = _solve(p, replace(run, callback=callback, resume=going_on, **changes))
        if going_on is not None and going_on.resumed:
            return _continued(result, again)
        if p is own:          # a second solve of the problem: the history holds both, as the callback saw
            again.history = result.history + again.history
        return again

    return _trouble_hints(to_user(certificate.confirm(own, result, run.eps, resolve,
                                                      presolved=result.presolve is not None)), run)


#: Beyond the papers: what a matrix-free solve of the LP as given that ends in numerical trouble
#: adds to its message (docs/results/matrix-free.md, "HiGHS's presolve with the matrix-free method")
PRESOLVE_HINT = (" The method ran on the LP as given: with HiGHS's presolve first (presolve=True) the matrix-free "
                 "method solves some LPs it does not solve unreduced, and fails on a few it solves "
                 "(docs/results/matrix-free.md).")


#: Beyond the papers: what a matrix-free solve on the GPU (a float32 PCG) that ends in numerical
#: trouble adds to its message (docs/results/matrix-free.md: cycle, whose trouble is float32's)
FLOAT64_HINT = (" The GPU's PCG computes in float32: backend=\"numpy64\" runs the same method with a "
                "float64 PCG on the CPU, which solves some LPs a float32 PCG does not (docs/results/matrix-free.md).")


def _trouble_hints(result: LPResult, run: _Run) -> LPResult:
    """``result``, its message told of the presolve where a matrix-free solve without it ended in
    numerical trouble and the presolve was to be had (highspy installed, a back end by name,
    no ``start``), and of the float64 back end where such a solve ran on the GPU."""
    if run.method != "matrix-free" or result.status != "numerical_trouble" or not isinstance(run.backend, str):
        return result
    if (not run.presolve and result.presolve is None and "start" not in run.options and _has_highspy()):
        result.message += PRESOLVE_HINT
    if run.backend == "gpu":
        result.message += FLOAT64_HINT
    return result


#: Beyond the papers: the most iterations a solve that goes on from the last point to a tighter
#: eps takes (:class:`~gpgpu.lp.mehrotra.Resume`); one that does not end optimal by then is
#: dropped for a solve from the start (``gpgpu.lp.certificate``): the last point can be too
#: near the boundary to go on from (docs/results/lp.md, "Going on to a tighter eps").
RESUME_ITERATIONS = 10


def _numbered_on(callback, k: int):
    """``callback`` given each entry with its iteration counted on by ``k`` (a continuation's)."""
    return lambda entry: callback({**entry, "iteration": entry["iteration"] + k} if "iteration" in entry else entry)


def _continued(first: LPResult, then: LPResult) -> LPResult:
    """``then``, the iteration that went on from ``first``'s last point (:class:`Resume`), as one
    solve: its iterations, point iteration and history entries counted on from ``first``'s last
    iteration, whose entry (the same point, tested) it replaces."""
    k = first.iterations

    def on(entry):
        return {**entry, **{key: entry[key] + k for key in ("iteration", "restart_iteration") if key in entry}}

    then.history = first.history[:-1] + [on(e) for e in then.history]
    # the message's iteration numbers ("(3 iterations, eps", "at iteration 2") counted on too
    then.message = re.sub(r"\((\d+) iterations, eps|\biteration (\d+)",
                          lambda m: m.group(0).replace(m.group(1) or m.group(2), str(int(m.group(1) or m.group(2)) + k)),
                          then.message)
    raised = re.search(r" (?:The iteration (?:stalled|fell behind|broke down)|At iteration \d+ the factor replaced)"
                       r".*? factor\.", first.message)
    if raised and raised.group(0) not in then.message:     # the first part's raise of the precision, said
        then.message = re.sub(r"(\(\d+ iterations, eps = [^)]*\))", lambda m: m.group(1) + raised.group(0),
                              then.message, count=1)
    then.iterations += k
    then.point_iteration += k
    then.resumed_from = k
    return then


def _own_units(problem, run: _Run) -> tuple:
    """(the problem to solve, its run, the map of its result to ``problem``'s): the LP in units
    of its own where its rows or columns are far from unit size (:class:`gpgpu.lp.units.Lines`;
    with ``normalize`` and a back end by name), the callback and a ``start`` mapped; the LP as
    given and the identity otherwise."""
    if run.normalize and isinstance(run.backend, str) and problem.status is None:
        lines = Lines.of(problem)
        scaled = lines.problem(problem) if lines is not None else None
        if scaled is not None:
            options = dict(run.options)
            if options.get("start") is not None:
                options["start"] = lines.start(options["start"], problem)
            return (scaled, replace(run, callback=lines.callback(run.callback), options=options),
                    lambda result: lines.result(result, scaled, problem))
    return problem, run, lambda result: result


def _solve(problem, run: _Run) -> LPResult:
    """``solve`` after its argument checks (it also solves the presolved, scaled and normalised
    problems): the automatic options decided and checked, then HiGHS's presolve, an answer
    without iterating, the scaling or the normalisation where they apply (each solving another
    problem by this function), and the method on a back end."""
    run = _automatic(run)
    options = _checked_combinations(problem, run)
    if run.presolve and problem.status is None:
        return _presolved(problem, run, options)
    if problem.status is not None:                      # decided by the presolve
        code = STATUS_CODES[problem.status]
        return LPResult(status=problem.status, status_code=code,
                        message=f"{MESSAGES[code]} (presolve: {problem.message})", x=None,
                        x_std=None, y=None, s=None, objective=float("nan"), iterations=0,
                        backend=str(run.backend))
    trivial = _trivial(problem, run.backend)
    if trivial is not None:
        return trivial
    if run.scale:
        if not isinstance(run.backend, str):
            raise ValueError("scale=True solves the scaled problem, so it needs a back end by name "
                             f"({', '.join(BACKENDS)}), not an instance bound to the unscaled problem")
        scaled, r, c = scale_problem(problem)
        result = _solve(scaled, replace(run, presolve=False, scale=False, options=options))
        return unscale_result(result, problem, r, c)
    float32 = run.backend == "gpu" or (run.backend == "numpy32" and run.method == "mehrotra")
    if run.normalize and isinstance(run.backend, str):     # an instance is bound to the problem as given
        units = Units.of(problem)
        if float32:
            _check_float32_span(problem, units, run.backend, run.method)
        if not units.identity:
            seen = _user_objectives(run.callback, units.gamma * units.beta)
            result = _solve(units.problem(problem), replace(run, callback=seen, presolve=False, scale=False,
                                                            normalize=False, options=options))
            return units.result(result, problem)
    if isinstance(run.backend, str) and float32:
        _check_float32(problem, run.backend, run.method)
    if run.method == "matrix-free":
        return _no_point(_solve_matrix_free(problem, run.backend, run.eps, run.refine, run.max_iter, run.callback,
                                            dict(options, deadline=run.deadline) if run.deadline is not None
                                            else options))
    return _no_point(_solve_mehrotra(problem, run, options))


def _automatic(run: _Run) -> _Run:
    """eps and max_iter checked; the options whose None is decided by the problem's tolerance:
    presolve, correct_primal and free_safeguard on for Mehrotra's method below
    :data:`REFINE_BELOW` with a back end by name (the presolve where highspy is installed),
    refinement on for the float32 back ends below it."""
    eps, max_iter = _check_options(run.eps, run.max_iter)
    if run.method not in METHODS:
        raise ValueError(f"unknown method {run.method!r}; choose one of {', '.join(METHODS)}")
    robust = run.method == "mehrotra" and eps < REFINE_BELOW and isinstance(run.backend, str)
    presolve = run.presolve
    if presolve is None:               # HiGHS's presolve needs highspy (the optional "lp" extra)
        presolve = robust and _has_highspy()
    correct_primal, free_safeguard = (robust if v is None else v for v in (run.correct_primal, run.free_safeguard))
    refine = run.refine
    if refine is None:
        name = run.backend if isinstance(run.backend, str) else getattr(run.backend, "name", "")
        refine = name in ("gpu", "numpy32") and eps < REFINE_BELOW
    return replace(run, eps=eps, max_iter=max_iter, presolve=presolve, correct_primal=correct_primal,
                   free_safeguard=free_safeguard, refine=refine)


def _checked_combinations(problem, run: _Run) -> dict:
    """The options of ``run`` checked together (a TypeError or ValueError naming what does not go
    with what); its method's and back end's options, a copy, with ``start`` in the units of the
    solve (:class:`~gpgpu.lp.scaling.Units`) or left out when None."""
    method, backend_options = run.method, dict(run.options)
    for name in ("presolve", "correct_primal", "free_safeguard", "scale", "regularize"):
        v = getattr(run, name)
        if name == "regularize" and v is None:
            v = False
        if not isinstance(v, bool):
            raise TypeError(f"{name} must be True or False, got {v!r}")
    if run.regularize is False and method == "matrix-free":
        raise ValueError("the matrix-free method is always regularised (paper 002's (5)); leave regularize "
                         "at None, or set reg_min / reg_max")
    if not run.regularize and method == "mehrotra" and ({"reg_min", "reg_max"} & set(backend_options)):
        raise ValueError("reg_min and reg_max bound the regularisation: with method='mehrotra' they need "
                         "regularize=True")
    if backend_options.get("factor_precision", "float32") != "float32":
        if method != "mehrotra" or run.backend != "gpu":
            raise ValueError("factor_precision is an option of method='mehrotra' with backend='gpu' (the "
                             "precision of its normal-equation factor)")
        if run.regularize and backend_options["factor_precision"] == "float-float":
            raise ValueError("factor_precision='float-float' does not take the regularisation's shift; "
                             "use regularize=True or factor_precision='float-float', not both")
    if "adaptive" in backend_options and method != "matrix-free":
        raise ValueError("adaptive is an option of method='matrix-free' (its regularisation floor and PCG "
                         "limit rise where PCG stops at its limit)")
    if "start" in backend_options and backend_options["start"] is None:
        del backend_options["start"]                     # the default: Mehrotra's starting point
    if "start" in backend_options:
        if method != "matrix-free":
            raise ValueError("start is an option of method='matrix-free' (a point to resume its "
                             "iteration from)")
        if run.presolve or run.scale:
            raise ValueError("start is a point of the problem as given: it does not go with presolve=True "
                             "or scale=True, which solve another problem")
        if run.normalize and isinstance(run.backend, str):    # the point in the units of the solve
            units = Units.of(problem)
            if not units.identity:
                backend_options["start"] = units.start(backend_options["start"])
    if run.correct_primal and method != "mehrotra":
        raise ValueError("correct_primal is an option of method='mehrotra' (the matrix-free method "
                         "computes dx from dy and keeps its PCG residual in the primal equation)")
    if run.free_safeguard and method != "mehrotra":
        raise ValueError("free_safeguard is an option of method='mehrotra' (the matrix-free method's "
                         "primal regularisation R_p already bounds Theta)")
    return backend_options


def _user_objectives(callback, factor: float):
    """The callback of a solve of the normalised (or presolved) problem, whose objective values
    are ``factor`` times the user's: it hands the user's values on."""
    if callback is None or factor == 1.0:
        return callback
    return lambda entry: callback(objectives_divided(entry, factor))


def _presolved(problem, run: _Run, options: dict) -> LPResult:
    """HiGHS's presolve, the reduced problem solved (:func:`_solve`), its postsolve
    (:func:`gpgpu.lp.presolve.presolve_and_solve`)."""
    if not isinstance(run.backend, str):
        raise ValueError("presolve=True solves a reduced problem, so it needs a back end by name "
                         f"({', '.join(BACKENDS)}), not an instance bound to the unreduced problem")
    if run.method == "mehrotra":      # the presolve may decide the problem without building the back end
        _check_backend_options(run.backend, run.cholesky, run.refine, options)

    def reduced(p, factor):
        return _solve(p, replace(run, callback=_user_objectives(run.callback, factor), presolve=False,
                                 options=options))

    return presolve_module.presolve_and_solve(problem, reduced, backend=run.backend, normalize=run.normalize)


def _solve_mehrotra(problem, run: _Run, options: dict) -> LPResult:
    """Algorithm 3 (:func:`~gpgpu.lp.mehrotra.mehrotra`) on the back end of ``run``, released after
    unless it was given as an instance."""
    reg = _regularisation_options(options, "mehrotra")
    be = get_backend(run.backend, problem, cholesky=run.cholesky, refine=run.refine, **options)
    try:
        with getattr(be, "blas_threads", contextlib.nullcontext)():
            return mehrotra(be, problem, eps=run.eps, max_iter=run.max_iter, callback=run.callback,
                            correct_primal=run.correct_primal, free_safeguard=run.free_safeguard,
                            regularize=bool(run.regularize), deadline=run.deadline, resume=run.resume, **reg)
    finally:
        release = getattr(be, "release", None)
        if release is not None and not isinstance(run.backend, Backend):
            release()                                   # GPU streams, deterministically


def _has_highspy() -> bool:
    import importlib.util

    return importlib.util.find_spec("highspy") is not None


def _check_backend_options(backend: str, cholesky, refine, options) -> None:
    """The back end built on a 1 x 1 LP and let go, so that a wrong option is refused before a
    presolve that may decide the problem without building it."""
    opts = {k: v for k, v in options.items() if k not in ("reg_min", "reg_max", "deadline")}
    probe = get_backend(backend, Problem.from_arrays(np.ones((1, 1)), np.ones(1), np.ones(1)),
                        cholesky=cholesky, refine=refine, **opts)
    release = getattr(probe, "release", None)
    if release is not None:
        release()


def _regularisation_options(options, method) -> dict:
    """``reg_min`` and ``reg_max`` taken out of ``options`` and checked (both methods)."""
    lo, hi = (R.MEHROTRA_REG_MIN, R.MEHROTRA_REG_MAX) if method == "mehrotra" else (R.REG_MIN, R.REG_MAX)
    reg = {k: options.pop(k) for k in ("reg_min", "reg_max") if k in options}
    for name, v in reg.items():
        if not (isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v) and v > 0):
            raise ValueError(f"{name} must be a positive number, got {v!r}")
    if reg.get("reg_min", lo) > reg.get("reg_max", hi):
        raise ValueError("reg_min must not exceed reg_max")
    return reg


def _solve_matrix_free(problem, backend, eps, refine, max_iter, callback, options) -> LPResult:
    algo = {k: options.pop(k) for k in ("rank", "rank_max", "pcg_maxiter", "stall_window", "start", "adaptive",
                                        "deadline")
            if k in options}
    bounds = options.pop("bounds", "implicit")
    if bounds not in BOUNDS:
        raise ValueError(f"bounds must be 'implicit' (upper bounds in the Newton system's diagonal, the normal "
                         f"matrix of the problem's own rows) or 'rows' (a row of the normal matrix for each bound), "
                         f"got {bounds!r}")
    for name in ("rank", "rank_max", "pcg_maxiter", "stall_window"):
        v = algo.get(name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1):
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    algo.update(_regularisation_options(options, "matrix-free"))
    name = backend if isinstance(backend, str) else getattr(backend, "name", "")
    if isinstance(backend, str) and backend not in ("gpu", "numpy64"):
        raise ValueError(f"the matrix-free method runs on backend 'gpu' or 'numpy64', got {backend!r}")
    if refine and name == "numpy64":
        refine = False                                  # its PCG is float64 already
    rows = BoundRows.detect(problem.A) if bounds == "implicit" and not isinstance(backend, mf.MatrixFreeBackend) else None
    main = problem if rows is None else Problem.from_arrays(rows.A_main, problem.b[:rows.m], problem.c,
                                                            name=problem.name)
    be = mf.get_matrix_free_backend(backend, main, **options)
    try:
        return mf.matrix_free(be, problem, eps=eps, max_iter=max_iter, callback=callback,
                           refine=bool(refine), bounds=rows, **algo)
    finally:
        if not isinstance(backend, mf.MatrixFreeBackend):
            be.release()
