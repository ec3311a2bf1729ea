"""python -m gpgpu.lp FILE: solves a linear program with Algorithm 3 of paper 000
(Mehrotra's predictor-corrector method) or, with --method matrix-free, with paper
002's matrix-free method, and shows its progress.

FILE is an MPS file (.mps or .mps.gz) or the name of a NETLIB problem of Table 3
(afiro, sc50b, ...), looked up in gpgpu.lp.netlib.netlib_dir(). A FILE that cannot be
read (missing, a folder, empty, malformed) is one error line, exit status 2.

Before the first iteration, short status lines on stderr say what it is doing
and how long it took: reading the file, HiGHS's presolve, building the back end
(on the GPU: the OpenGL context and the uploads), the starting point and the first
iteration (the kernels compile at their first use). Then a row an iteration on
stdout, and the result. --quiet shows the result alone. --time-limit SECONDS stops
with the best point met.
"""
from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

from ..cli import positive_float, positive_int, run_main, tolerance
from ..context import ContextError
from . import BACKENDS, METHODS, PRESETS, REFINE_BELOW, api, matrix_free, preset_options, presolve, read_mps, solve
from .netlib import PAPER_TABLE3, netlib_path


_FILE_HINT = "give an MPS file (.mps or .mps.gz) or the name of a NETLIB problem of Table 3 (afiro, sc50b, ...)"


def _resolve(name: str) -> Path:
    """The MPS file ``name`` names: a path, or a NETLIB problem's name. An empty name and a
    folder are refused (ValueError) with what to give instead."""
    if not name.strip():
        raise ValueError(f"FILE is an empty name; {_FILE_HINT}")
    p = Path(name)
    if p.is_dir():
        raise ValueError(f"{name} is a folder, not an MPS file; {_FILE_HINT}")
    if p.exists() or p.suffix or "/" in name:
        return p
    return netlib_path(name)


def _read_error(name: str, exc: OSError) -> str:
    """One line for a file that cannot be read: the file and the system's cause."""
    if exc.strerror:
        return f"cannot read {exc.filename if exc.filename is not None else name}: {exc.strerror}; {_FILE_HINT}"
    return str(exc)


class _Status:
    """The status lines before the first row, on stderr: "what ... 0.12 s" (the time once the
    step is done); nothing when ``enabled`` is false."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.t0 = None

    def start(self, text: str) -> None:
        self.end()
        if self.enabled:
            print(f"{text} ...", end="", file=sys.stderr, flush=True)
            self.t0 = time.perf_counter()

    def end(self, more: str = "") -> None:
        if self.t0 is not None:
            print(f" {time.perf_counter() - self.t0:.2f} s" + (f", {more}" if more else ""), file=sys.stderr,
                  flush=True)
            self.t0 = None

    @contextlib.contextmanager
    def step(self, text: str):
        self.start(text)
        try:
            yield
        finally:
            self.end()


@contextlib.contextmanager
def _announced(status: _Status, backend: str):
    """While ``solve`` runs: a status line as it presolves and as it builds its back end.
    ``solve`` has no hook for these steps, so the functions it calls for them are wrapped
    here, and put back afterwards."""
    real = (api.get_backend, matrix_free.get_matrix_free_backend, presolve.presolve_and_solve,
            api._check_backend_options)
    what = f"building the {backend} back end" + (" (OpenGL context, uploads)" if backend == "gpu" else "")
    probing = []

    def check_backend_options(*a, **k):          # a 1 x 1 back end built to check the options: no line
        probing.append(True)
        try:
            return real[3](*a, **k)
        finally:
            probing.pop()

    first = "the starting point and iteration 0 (the kernels compile at their first use)"

    def get_backend(*a, **k):
        if probing:
            return real[0](*a, **k)
        with status.step(what):
            be = real[0](*a, **k)
        status.start(first)                     # ended by the first iteration's row
        return be

    def get_matrix_free_backend(*a, **k):
        with status.step(what):
            be = real[1](*a, **k)
        status.start(first)
        return be

    def presolve_and_solve(problem, run, **k):
        status.start("presolve (HiGHS's)")
        m0, n0 = problem.standard_size

        def reduced(p, *args):
            m, n = p.standard_size
            status.end(f"standard form {m0} x {n0} -> {m} x {n}")
            return run(p, *args)

        try:
            return real[2](problem, reduced, **k)
        finally:
            status.end()

    names = (api, "get_backend"), (matrix_free, "get_matrix_free_backend"), (presolve, "presolve_and_solve"), \
        (api, "_check_backend_options")
    for (module, name), wrapper in zip(names, (get_backend, get_matrix_free_backend, presolve_and_solve,
                                              check_backend_options)):
        setattr(module, name, wrapper)
    try:
        yield
    finally:
        for (module, name), function in zip(names, real):
            setattr(module, name, function)
        status.end()


def parser() -> argparse.ArgumentParser:
    """The command's arguments (its --help: this module's notes and every option, whole)."""
    ap = argparse.ArgumentParser(prog="python -m gpgpu.lp", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", help="MPS file, or a NETLIB problem name of Table 3")
    ap.add_argument("--eps", type=tolerance, default=None,
                    help="tolerance of (6.1)-(6.3) (default: Table 3's for its problems, "
                         "else 1e-6)")
    ap.add_argument("--backend", choices=BACKENDS, default="gpu",
                    help="gpu, numpy32 or numpy64 (the matrix-free method: gpu or numpy64)")
    ap.add_argument("--method", choices=METHODS, default="mehrotra",
                    help="mehrotra (paper 000, default) or matrix-free (paper 002, PCG)")
    ap.add_argument("--preset", choices=tuple(PRESETS), default="robust",
                    help="robust (default: the solver that solves the NETLIB and QAP problems), paper (the "
                         "paper's algorithm as printed) or fast (robust with the speed options that keep the "
                         "answer); the options below override it (docs/lp_defaults.md)")
    ap.add_argument("--rank", type=positive_int, default=None,
                    help="matrix-free: columns k of the partial Cholesky preconditioner (default 100)")
    ap.add_argument("--rank-max", type=positive_int, default=None,
                    help="matrix-free (beyond 002): k doubles after an iteration whose PCG hit its "
                         "limit, up to this (default: k stays --rank)")
    ap.add_argument("--pcg-maxiter", type=positive_int, default=None,
                    help="matrix-free: PCG iterations per solve (default max(200, min(4 m, 2000)))")
    ap.add_argument("--stall-window", type=positive_int, default=None,
                    help="matrix-free: iterations of the stall test's window (default 8; nug20's "
                         "late iterations recover after more, docs/results/matrix-free.md)")
    ap.add_argument("--sums", choices=("pingpong", "fan"), default=None,
                    help="matrix-free on the gpu: the inner products' reductions, 000's halving "
                         "(pingpong, default) or 32 texels a fragment (fan, beyond the papers, fewer passes)")
    ap.add_argument("--pcg-check", type=positive_int, default=None,
                    help="matrix-free on the gpu (beyond 002): PCG reads its scalars every this many "
                         "iterations (default 8; 1: every iteration)")
    ap.add_argument("--pcg-solution", choices=("float32", "float-float"), default=None,
                    help="matrix-free on the gpu: PCG's solution vector in float32 or, beyond 002, "
                         "float-float (needs OpenGL 4.0's GL_ARB_gpu_shader5); default: float32 until "
                         "a PCG solve stops at its limit, then float-float")
    ap.add_argument("--cholesky", choices=("inner", "outer"), default=None,
                    help="mehrotra: the Cholesky form of the normal equations (4.12), outer products "
                         "(Algorithm 2 of 000, default) or inner products (Algorithm 1)")
    ap.add_argument("--adat", choices=("outer", "inner", "inner4"), default=None,
                    help="mehrotra on the gpu: A D² Aᵀ by 001's outer products (default), 000's "
                         "singlepass inner products (one pass), or those over 4 x 1 packed RGBA "
                         "texels (inner4, beyond the paper)")
    ap.add_argument("--pivot", choices=("separate", "fused", "onepass"), default=None,
                    help="mehrotra on the gpu, outer Cholesky: the pivot steps as Algorithm 2's four "
                         "passes (default), one pass and a copy, or the whole step (pivot, column, "
                         "update) in one pass (both beyond the paper)")
    ap.add_argument("--substitution", choices=("outer", "inner", "inverse"), default=None,
                    help="mehrotra on the gpu: substitutions three passes a step (default), one "
                         "(inner-product form), or L^-1 once per factorization and two passes a "
                         "solve (both beyond the paper)")
    ap.add_argument("--reductions", choices=("pingpong", "fan"), default=None,
                    help="mehrotra on the gpu: inner products, norms, minima and step lengths by "
                         "000's halving passes (pingpong, default) or 32 texels a fragment (fan, "
                         "beyond the paper, fewer passes)")
    ap.add_argument("--fuse", action="store_true",
                    help="mehrotra on the gpu: A x + y, A^T y + z and a (x .* y) + b z one pass each "
                         "(beyond the paper, fewer passes)")
    ap.add_argument("--factor-precision", choices=("float32", "float-float"), default=None,
                    help="mehrotra on the gpu with refinement: the normal equations, their factor and "
                         "the refinement's substitutions in float32 (default) or in float-float, pairs "
                         "of float32 (beyond the papers, for problems the float32 factor cannot finish)")
    ap.add_argument("--refine", action=argparse.BooleanOptionalAction, default=None,
                    help="mixed-precision iterative refinement of (4.12) (beyond the paper); "
                         "default: on for gpu and numpy32 when eps < 3e-5")
    ap.add_argument("--scale", action="store_true",
                    help="geometric row and column scaling, powers of two, undone on the answer "
                         "(beyond the papers)")
    robust = "; default: on for mehrotra when eps < 3e-5, where refinement is"
    ap.add_argument("--presolve", action=argparse.BooleanOptionalAction, default=None,
                    help="HiGHS's presolve before and postsolve after the interior point method "
                         "(beyond the papers)" + robust)
    ap.add_argument("--correct-primal", action=argparse.BooleanOptionalAction, default=None,
                    help="mehrotra: one more solve an iteration puts the direction back on "
                         "A dx = r_b (beyond the paper)" + robust)
    ap.add_argument("--free-safeguard", action=argparse.BooleanOptionalAction, default=None,
                    help="mehrotra: keep both halves of a split free variable from growing together "
                         "(beyond the paper)" + robust)
    ap.add_argument("--regularize", action="store_true",
                    help="mehrotra: paper 002's primal-dual proximal regularisation, the factor of "
                         "A (Theta^-1 + rho I)^-1 A^T + delta I (beyond paper 000; matrix-free: always)")
    ap.add_argument("--reg-min", type=positive_float, default=None,
                    help="smallest rho = delta (default 1e-12 mehrotra, 1e-8 matrix-free)")
    ap.add_argument("--reg-max", type=positive_float, default=None,
                    help="largest rho = delta (default 1e-6 mehrotra, 1e-2 matrix-free)")
    ap.add_argument("--time-limit", type=positive_float, default=None, metavar="SECONDS",
                    help="stop at the first test after this many seconds with status time_limit and the "
                         "best point met")
    ap.add_argument("--max-iter", type=positive_int, default=100,
                    help="interior point iterations at most (default 100)")
    ap.add_argument("--quiet", action="store_true", help="no status lines and no per-iteration lines")
    return ap


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    status = _Status(not args.quiet)
    try:
        path = _resolve(args.file)
        with status.step(f"reading {path}"):
            problem = read_mps(path)
    except (FileNotFoundError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:                       # a file that cannot be read
        print(f"error: {_read_error(args.file, e)}", file=sys.stderr)
        return 2
    eps = args.eps
    if eps is None:
        eps = PAPER_TABLE3.get(problem.name.lower(), {}).get("eps", 1e-6)
    _print_problem(problem, args, eps)
    try:
        extra = _method_options(args)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        with _announced(status, args.backend):
            # an option left out (None) is the preset's
            res = solve(problem, backend=args.backend, cholesky=args.cholesky, eps=eps, preset=args.preset,
                        refine=args.refine, max_iter=args.max_iter, method=args.method, presolve=args.presolve,
                        correct_primal=args.correct_primal, free_safeguard=args.free_safeguard,
                        scale=True if args.scale else None, regularize=True if args.regularize else None,
                        callback=None if args.quiet else _iteration_printer(status), time_limit=args.time_limit,
                        **extra)
    except ImportError as e:
        print(f"error: backend {args.backend!r} is not available ({e})", file=sys.stderr)
        return 2
    except (ValueError, MemoryError, ContextError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    _print_result(res, problem, args)
    return 0 if res.status_code == 0 else 1


def _print_problem(problem, args, eps) -> None:
    """The problem's sizes (and what the reading presolve changed), integrality dropped, and the
    method, back end, refinement, eps and preset of the run."""
    rows, cols = problem.original_size
    m, n = problem.standard_size
    changes = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in problem.presolve.items() if v)
    print(f"{problem.name}: {rows} rows x {cols} columns; standard form {m} x {n}"
          + (f" ({changes})" if changes else ""))
    for note in problem.warnings:
        if "LP relaxation" in note:                    # integer columns: read_mps dropped their integrality
            print(f"warning: {note}", flush=True)
    refine = preset_options(args.preset, args.method, args.backend, refine=args.refine).get("refine")
    if refine is None:                              # solve's rule for refine=None
        refine = args.backend in ("gpu", "numpy32") and eps < REFINE_BELOW
    if args.method == "matrix-free" and args.backend == "numpy64":
        refine = False                              # its PCG is float64 already
    print(f"method {args.method}, backend {args.backend}, "
          + (f"cholesky {args.cholesky or 'outer'}, " if args.method == "mehrotra" else "")
          + f"refine {refine}, eps {eps:g}, preset {args.preset}")


def _iteration_printer(status):
    """The callback that prints a line per iteration (the header before the first)."""
    header = [f"{'it':>3} {'primal res':>10} {'dual res':>10} {'gap':>10} {'mu':>10} "
              f"{'a_pri':>7} {'a_dual':>7} {'sigma':>9} {'time':>7}"]

    def show(h):
        def f(v, fmt):
            return format(v, fmt) if v is not None else "-"
        status.end()                                   # the first iteration's line
        if header:
            print(header.pop(), flush=True)
        print(f"{h['iteration']:>3} {h['primal_residual']:>10.3e} {h['dual_residual']:>10.3e} "
              f"{h['gap']:>10.3e} {h['mu']:>10.3e} {f(h['alpha_pri'], '7.4f'):>7} "
              f"{f(h['alpha_dual'], '7.4f'):>7} {f(h['sigma'], '9.2e'):>9} "
              f"{h['time']:>7.3f}", flush=True)

    return show


#: the flags of one method (or one back end) only: flag -> (the args attribute, solve's option)
_MATRIX_FREE_FLAGS = {"--rank": ("rank", "rank"), "--rank-max": ("rank_max", "rank_max"),
                      "--pcg-maxiter": ("pcg_maxiter", "pcg_maxiter"), "--sums": ("sums", "sums"),
                      "--pcg-check": ("pcg_check", "pcg_check"), "--pcg-solution": ("pcg_solution", "solution"),
                      "--stall-window": ("stall_window", "stall_window")}
_MATRIX_FREE_GPU_FLAGS = ("--sums", "--pcg-check", "--pcg-solution")
_MEHROTRA_GPU_FLAGS = {"--adat": "adat", "--substitution": "substitution", "--pivot": "pivot",
                       "--reductions": "reductions", "--fuse": "fuse", "--factor-precision": "factor_precision"}


def _method_options(args) -> dict:
    """The options of the chosen method and back end that the flags set, for ``solve``; a
    ValueError naming a flag given to a method or back end that does not take it."""
    mehrotra_gpu = [flag for flag, key in _MEHROTRA_GPU_FLAGS.items() if getattr(args, key)]
    flags = list(_MEHROTRA_GPU_FLAGS)
    listed = ", ".join(flags[:-1]) + " and " + flags[-1]
    if args.method == "matrix-free":
        if args.backend == "numpy32":
            raise ValueError("the matrix-free method runs on --backend gpu or numpy64")
        extra = {option: getattr(args, attr) for attr, option in _MATRIX_FREE_FLAGS.values()
                 if getattr(args, attr) is not None}
        for flag in _MATRIX_FREE_GPU_FLAGS:
            if _MATRIX_FREE_FLAGS[flag][1] in extra and args.backend != "gpu":
                raise ValueError(f"{flag} is an option of the gpu back end")
        if mehrotra_gpu:
            raise ValueError(f"{listed} are options of --method mehrotra")
        if args.regularize:
            raise ValueError("--regularize is an option of --method mehrotra (the matrix-free method always "
                             "regularises)")
    else:
        if mehrotra_gpu and args.backend != "gpu":
            raise ValueError(f"{listed} are options of the gpu back end")
        extra = {key: getattr(args, key) for key in _MEHROTRA_GPU_FLAGS.values() if getattr(args, key)}
        for flag, (attr, _) in _MATRIX_FREE_FLAGS.items():
            if getattr(args, attr) is not None:
                raise ValueError(f"{flag} is an option of --method matrix-free")
        if not args.regularize and (args.reg_min or args.reg_max):
            raise ValueError("--reg-min and --reg-max need --regularize with --method mehrotra")
    extra.update({k: v for k, v in (("reg_min", args.reg_min), ("reg_max", args.reg_max)) if v is not None})
    return extra


def _print_result(res, problem, args) -> None:
    """Status, objective, options, presolve, PCG counts (matrix-free), iterations and time, and
    Table 3's figures when the problem is one of its ten."""
    print(f"status: {res.status} ({res.message})")
    print(f"objective: {res.objective:.12g}")
    if res.options:
        print("options: " + ", ".join(f"{k}={v}" for k, v in res.options.items()))
    if res.presolve is not None:
        (m0, m1), (n0, n1) = res.presolve["rows"], res.presolve["columns"]
        print(f"presolve (HiGHS): {res.presolve['status']}, {m0} x {n0} -> {m1} x {n1}")
    if args.method == "matrix-free" and hasattr(res, "pcg_iterations"):
        stops = getattr(res, "pcg_stops", {})
        others = "".join(f", {v} {label}" for key, label in (("breakdown", "at a PCG breakdown"),
                                                             ("stalled", "where refinement stalled"),
                                                             ("rounds", "after all refinement rounds"))
                         if (v := stops.get(key, 0)))
        print(f"PCG iterations: {res.pcg_iterations} (rank k = {res.rank}; "
              f"{stops.get('limit', res.pcg_unconverged)} solves at the PCG limit{others})")
    print(f"iterations: {res.iterations}   time: {res.elapsed:.3f} s   "
          f"read-backs per iteration: {res.readbacks_per_iteration:.1f}   "
          f"replaced pivots: {res.replaced_pivots}")
    ref = PAPER_TABLE3.get(problem.name.lower())
    if ref:
        print(f"paper 000 Table 3: {ref['iterations']} GPU iterations, "
              f"{ref['matlab_iterations']} MATLAB iterations at eps {ref['eps']:g}")

if __name__ == "__main__":
    sys.exit(run_main(main))
