"""Every option of ``gpgpu.lp.solve`` in one table: its name, who reads it (``solve`` itself, a
method, or a back end of a method), its values, what it does and how a command line reads it.
The presets (:data:`gpgpu.lp.PRESETS`) are rows of values over this table, ``linprog``'s
``options`` and ``solve``'s name checks read it, ``python -m gpgpu.lp`` builds its flags from it
(:mod:`gpgpu.lp.__main__`), and the docs' options page is rendered from it
(``python -m experiments.render``); ``tests/test_lp_options.py`` checks that every option a
reader takes is in the table and that no preset sets one its scope does not read."""
from __future__ import annotations

from ..cli import positive_float, positive_int, positive_int_or_auto, positive_int_or_off, tolerance
from ..options import Option

__all__ = ["Option", "OPTIONS", "READERS", "names_read_by", "reader_of", "names_taken", "SOLVE_OPTIONS",
           "METHOD_OPTIONS"]

#: who reads an option: ``solve`` itself (both methods), a method's iteration, or a back end
#: (the scopes of the presets' rows: "mehrotra/gpu" is GPUBackend's, "mehrotra/numpy"
#: NumpyBackend's, "matrix-free/gpu" GPUMatrixFree's, "matrix-free/numpy" NumpyMatrixFree's)
READERS = ("solve", "mehrotra", "matrix-free", "mehrotra/gpu", "mehrotra/numpy", "matrix-free/gpu",
           "matrix-free/numpy")


OPTIONS = (
    # solve's own (both methods)
    Option("backend", ("solve",), '"gpu", "numpy32", "numpy64" or a back end', "where the iteration runs",
           ("gpu", "numpy32", "numpy64")),
    Option("eps", ("solve",), "0 < eps < 1, or None", "the tolerance of (6.1)-(6.3); None: 1e-6, or Table 3's "
           "eps under the paper preset", tolerance),
    Option("max_iter", ("solve",), "a positive integer", "interior point iterations at most", positive_int),
    Option("callback", ("solve",), "a function or None", "called with each iteration's history entry"),
    Option("time_limit", ("solve",), "seconds or None", "stop at the next test after this many seconds "
           "(status time_limit, the best point)", positive_float),
    Option("cholesky", ("solve", "mehrotra/gpu", "mehrotra/numpy"), '"outer", "inner" or None',
           "the Cholesky form: Algorithm 2 (outer product) or Algorithm 1 (inner product) of 000",
           ("outer", "inner")),
    Option("refine", ("solve", "mehrotra/gpu", "mehrotra/numpy"), "True, False or None",
           "mixed-precision refinement of the normal-equation solves; None: on for float32 below 3e-5", bool),
    Option("presolve", ("solve",), "True, False or None", "HiGHS's presolve and postsolve around the "
           "iteration", bool),
    Option("correct_primal", ("solve",), "True, False or None", "the primal correction of Mehrotra's "
           "method (beyond 000)", bool),
    Option("free_safeguard", ("solve",), "True, False or None", "the safeguard of split free variables "
           "(beyond 000)", bool),
    Option("scale", ("solve",), "True, False or None", "geometric scaling of rows and columns", bool),
    Option("normalize", ("solve",), "True, False or None", "powers of two that bring A's rows, b and c "
           "into band (the answer independent of the LP's units)", bool),
    Option("regularize", ("solve",), "True, False or None", "proximal regularisation of Mehrotra's method",
           bool),
    # the methods' own
    Option("reg_min", ("mehrotra", "matrix-free"), "a float", "the regularisation's floor", positive_float),
    Option("reg_max", ("mehrotra", "matrix-free"), "a float", "the regularisation's start", positive_float),
    Option("adaptive", ("matrix-free",), "True, False or None", "the matrix-free method's adaptive floor "
           "and PCG limit (off: 002's fixed schedule)", bool),
    Option("rank", ("matrix-free",), "a positive integer", "k, the partial Cholesky preconditioner's rank "
           "(002)", positive_int),
    Option("rank_max", ("matrix-free",), "a positive integer", "how far k may grow", positive_int),
    Option("pcg_maxiter", ("matrix-free",), "a positive integer", "PCG's iteration limit a solve", positive_int),
    Option("stall_window", ("matrix-free",), "a positive integer", "iterations the stall test looks back",
           positive_int),
    Option("start", ("matrix-free",), "a checkpoint or None", "resume from a checkpoint "
           "(gpgpu.lp.matrix_free.checkpoint)"),
    Option("bounds", ("matrix-free", "mehrotra/gpu", "mehrotra/numpy"), '"implicit" or "rows"',
           "upper bounds in the Newton system, or as rows (000's standard form)", ("implicit", "rows")),
    # Mehrotra's back ends
    Option("update", ("mehrotra/gpu",), '"triangle" or "square"', "the outer Cholesky's update domain",
           ("triangle", "square")),
    Option("pivot_tol", ("mehrotra/gpu", "mehrotra/numpy"), "a float or None", "the guarded square root's "
           "relative pivot tolerance", positive_float),
    Option("refine_method", ("mehrotra/gpu", "mehrotra/numpy"), '"cg" or "richardson"', "the refinement's "
           "iteration", ("cg", "richardson")),
    Option("adat", ("mehrotra/gpu", "mehrotra/numpy"), 'gpu: "outer", "inner", "inner4", "points"; numpy: '
           '"sparse", "dense"', "how A D² Aᵀ is formed",
           {"mehrotra/gpu": ("outer", "inner", "inner4", "points"), "mehrotra/numpy": ("sparse", "dense")}),
    Option("substitution", ("mehrotra/gpu",), '"outer", "inner" or "inverse"', "the triangular solves' form",
           ("outer", "inner", "inverse")),
    Option("pivot", ("mehrotra/gpu",), '"separate", "fused" or "onepass"', "the outer Cholesky's pivot "
           "steps", ("separate", "fused", "onepass")),
    Option("reductions", ("mehrotra/gpu",), '"pingpong" or "fan"', "the reductions: 000's halving passes "
           "or 32 texels a fragment", ("pingpong", "fan")),
    Option("fuse", ("mehrotra/gpu",), "True or False", "the iteration's composites one pass each", bool),
    Option("factor_precision", ("mehrotra/gpu",), '"auto", "float32" or "float-float"', "the factor's "
           "precision (auto: float-float after a stall)", ("auto", "float32", "float-float")),
    Option("factor_block", ("mehrotra/gpu",), 'None, "auto" or an even integer from 2 to 128', "the factor with "
           "its inverse by blocks of this many columns (beyond the papers); None: steps a pass; auto: 16 with "
           "refinement, else None", positive_int_or_auto),
    Option("fast_solve", ("mehrotra/numpy",), "True or False", "scipy's triangular solves in the paper's "
           "loop", bool),
    Option("factorization", ("mehrotra/numpy",), '"lapack" or "loop"', "LAPACK's potrf, or the paper's "
           "Cholesky loop", ("lapack", "loop")),
    Option("threads", ("mehrotra/numpy", "matrix-free/numpy"), "a positive integer or None", "CPU threads "
           "(BLAS, or the sparse products)", positive_int),
    Option("dtype", ("mehrotra/numpy",), "set by the back end's name", "float32 (numpy32) or float64 "
           "(numpy64)"),
    # the matrix-free method's back ends
    Option("format", ("matrix-free/gpu",), '"ellpack", "tell", "corrigan", "packed" or "split"',
           "the SparseStream format of A", ("ellpack", "tell", "corrigan", "packed", "split")),
    Option("dense", ("matrix-free/gpu",), "None, False or an integer", "SparseStream's dense-row threshold",
           positive_int_or_off),
    Option("profile", ("matrix-free/gpu", "matrix-free/numpy"), "True or False", "time each part (002's "
           "Table 2)", bool),
    Option("sums", ("matrix-free/gpu",), '"pingpong" or "fan"', "the reductions of the inner products",
           ("pingpong", "fan")),
    Option("pcg_check", ("matrix-free/gpu",), "a positive integer", "PCG reads its scalars every so many "
           "iterations", positive_int),
    Option("solution", ("matrix-free/gpu",), 'None, "float32" or "float-float"', "the format of PCG's "
           "solution vector", ("float32", "float-float"), flag="--pcg-solution"),
    Option("plan", ("matrix-free/gpu",), "True or False", "PCG's iterations drawn from recorded plans", bool),
    Option("fused", ("matrix-free/gpu",), "True or False", "PCG's iteration in seven fused passes (with plan)", bool),
    Option("fold", ("matrix-free/gpu",), "a positive integer or None", "the back end's vectors folded so many "
           "texels wide (None: one texture row, as the papers)", positive_int_or_off),
)


def names_read_by(reader: str) -> tuple:
    """The options that ``reader`` (one of :data:`READERS`) takes, in the table's order."""
    if reader not in READERS:
        raise ValueError(f"unknown reader {reader!r}; one of {', '.join(READERS)}")
    return tuple(o.name for o in OPTIONS if reader in o.readers)


def reader_of(method: str, backend) -> str | None:
    """The table's reader of a method on a back end given by name ("mehrotra/gpu", ...), or None
    for a back end instance or a name that solve refuses by itself."""
    if not isinstance(backend, str):
        return None
    if backend == "gpu":
        return f"{method}/gpu"
    if backend == "numpy64" or (backend == "numpy32" and method == "mehrotra"):
        return f"{method}/numpy"
    return None


#: options of the table that the back end's name sets, never the caller
SET_BY_BACKEND = ("dtype",)


def names_taken(method: str, backend) -> tuple | None:
    """Every option a caller may give ``solve`` for ``method`` on ``backend`` (solve's own, the
    method's and the back end's, in the table's order), or None where the table cannot say (a
    back end instance)."""
    reader = reader_of(method, backend)
    if reader is None:
        return None
    return tuple(o.name for o in OPTIONS if o.name not in SET_BY_BACKEND
                 and {"solve", method, reader} & set(o.readers))


#: solve's own keyword options (linprog's ``options`` takes these and the method's and back end's)
SOLVE_OPTIONS = names_read_by("solve")
#: the algorithm options of each method that ``solve`` takes out before the back end
#: (``adaptive`` is resolved with the preset, as solve's own options are)
METHOD_OPTIONS = {m: tuple(n for n in names_read_by(m) if n != "adaptive") for m in ("mehrotra", "matrix-free")}
