"""python -m gpgpu.lp FILE: solves a linear program with Algorithm 3 of paper 000
(Mehrotra's predictor-corrector method) or, with --method matrix-free, with paper
002's matrix-free method, and shows its progress.

FILE is an MPS file (.mps or .mps.gz) or the name of a shipped problem: NETLIB's (Table 3's
afiro, sc50b, ... and the 32 more, pilot4, ...) or QAPLIB's nug12 .. nug30 (their LP relaxations),
read as gpgpu.lp.solve reads a name (gpgpu.lp.api.read_named). A FILE that cannot be
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
import inspect
import sys
import time
from pathlib import Path

from ..cli import run_main
from ..context import ContextError
from . import METHODS, PRESETS, REFINE_BELOW, api, matrix_free, preset_options, presolve, read_mps, solve
from .api import read_named
from .netlib import PAPER_TABLE3
from .options import OPTIONS, READERS


_FILE_HINT = "give an MPS file (.mps or .mps.gz) or the name of a shipped NETLIB problem (afiro, sc50b, pilot4, ...) or QAPLIB instance (nug12, ...)"


def _resolve(name: str) -> Path | None:
    """The MPS file ``name`` names, or None for the name of a shipped problem (NETLIB's or
    QAPLIB's, read by :func:`gpgpu.lp.api.read_named`, as ``solve`` reads it). An empty name
    and a folder are refused (ValueError) with what to give instead."""
    if not name.strip():
        raise ValueError(f"FILE is an empty name; {_FILE_HINT}")
    p = Path(name)
    if p.is_dir():
        raise ValueError(f"{name} is a folder, not an MPS file; {_FILE_HINT}")
    if p.exists() or p.suffix or "/" in name:
        return p
    return None


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


#: the options of the table (gpgpu.lp.options.OPTIONS) that are not flags, and why
NOT_FLAGS = {
    "callback": "a Python function; the command prints a row an iteration instead (--quiet: none)",
    "start": "a checkpoint object of gpgpu.lp.matrix_free.checkpoint, which a Python caller keeps "
             "(experiments.mfipm.chunks writes and reads them as files)",
    "dtype": "set by --backend: float32 for numpy32, float64 for numpy64",
}
#: what the command does differently from solve with an option, added to the flag's help
_CLI_NOTES = {
    "eps": "here Table 3's eps for its problems under every preset, else 1e-6",
    "time_limit": "here from the start of the command, reading the file included",
}
_METAVARS = {"time_limit": "SECONDS", "dense": "N_OR_OFF"}
#: solve's defaults of its own options (backend, max_iter): the flags' defaults
_SOLVE_DEFAULTS = {name: p.default for name, p in inspect.signature(solve).parameters.items()
                   if p.default is not inspect.Parameter.empty and p.default is not None}
#: the --help groups of the table's flags, by who reads the option (see _group)
_GROUPS = (("solve", "options of both methods"),
           ("both", "options of both methods' iterations or back ends ([...]: those that read it)"),
           ("mehrotra", "options of --method mehrotra, paper 000 ([...]: its iteration or back end that reads it)"),
           ("matrix-free", "options of --method matrix-free, paper 002 ([...]: its iteration or back end that "
                           "reads it)"))


def _group(option) -> str:
    """The --help group of a table option: both methods (read by solve itself), one method
    (every reader is that method or one of its back ends), or the back ends of both."""
    if "solve" in option.readers:
        return "solve"
    methods = {reader.split("/")[0] for reader in option.readers}
    return methods.pop() if len(methods) == 1 else "both"


def _add_flag(group, option) -> None:
    """The flag of a table option (:class:`gpgpu.options.Option`): ``--name``, its words as
    choices, True/False as ``--name`` / ``--no-name``, else its ``parse`` as the type; the
    help is the table's doc, then who reads it [in brackets], the command's note and its
    default. Its value is ``args.<name>``, None when the flag is not given (the preset's, or
    solve's default)."""
    default = _SOLVE_DEFAULTS.get(option.name)
    readers = ", ".join(r for r in option.readers if r != "solve")
    note = _CLI_NOTES.get(option.name)
    text = option.doc + (f" [{readers}]" if readers else "") + (f"; {note}" if note else "") + \
        (f" (default {default})" if default is not None else "")
    kw = {"dest": option.name, "default": default, "help": text.replace("%", "%%")}
    parse = option.parse
    if parse is bool:
        kw["action"] = argparse.BooleanOptionalAction
    elif isinstance(parse, (tuple, dict)):
        kw["choices"] = _words(option)
    else:
        kw["type"] = parse
        kw["metavar"] = _METAVARS.get(option.name)
    group.add_argument(option.cli_flag, **kw)


def _words(option) -> tuple:
    """The words a table option takes (of every reader, for a mapping per reader), in order."""
    parse = option.parse
    words = parse if isinstance(parse, tuple) else sum(parse.values(), ())
    return tuple(dict.fromkeys(words))


def flag_options() -> tuple:
    """The options of the table that are flags (every one but :data:`NOT_FLAGS`), in its order."""
    return tuple(o for o in OPTIONS if o.name not in NOT_FLAGS)


def parser() -> argparse.ArgumentParser:
    """The command's arguments (its --help: this module's notes and every option, whole): the
    file, the method, the preset and --quiet, then a flag for each option of the options table
    (:data:`gpgpu.lp.options.OPTIONS`) that is not in :data:`NOT_FLAGS`."""
    ap = argparse.ArgumentParser(prog="python -m gpgpu.lp", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", help="MPS file, or the name of a shipped NETLIB problem or QAPLIB instance")
    ap.add_argument("--method", choices=METHODS, default="mehrotra",
                    help="mehrotra (paper 000, default) or matrix-free (paper 002, PCG)")
    ap.add_argument("--preset", choices=tuple(PRESETS), default="robust",
                    help="robust (default: the solver that solves the NETLIB and QAP problems), paper (the "
                         "paper's algorithm as printed) or fast (robust with the speed options that keep the "
                         "answer); the options below override it (docs/lp_defaults.md)")
    ap.add_argument("--quiet", action="store_true", help="no status lines and no per-iteration lines")
    groups = {key: ap.add_argument_group(title) for key, title in _GROUPS}
    for option in flag_options():
        _add_flag(groups[_group(option)], option)
    return ap


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    status = _Status(not args.quiet)
    try:
        path = _resolve(args.file)
        with status.step(f"reading {path if path is not None else args.file}"):
            problem = read_mps(path) if path is not None else read_named(args.file)
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
        options = _given_options(args)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        with _announced(status, args.backend):
            # a flag left out (None) is the preset's option, or solve's default
            res = solve(problem, eps=eps, preset=args.preset, method=args.method,
                        callback=None if args.quiet else _iteration_printer(status), **options)
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


def _given_options(args) -> dict:
    """The table's options that the flags set (eps aside: main decides it), for ``solve``; a
    ValueError naming a flag that the chosen method and back end do not read (the table's
    readers), or a word of it that this back end does not take."""
    if args.method == "matrix-free" and args.backend == "numpy32":
        raise ValueError("the matrix-free method runs on --backend gpu or numpy64")
    side = "gpu" if args.backend == "gpu" else "numpy"
    readers = {"solve", args.method, f"{args.method}/{side}"}
    given = {o.name: getattr(args, o.name) for o in flag_options()
             if o.name != "eps" and getattr(args, o.name) is not None}
    for option in flag_options():
        if option.name not in given:
            continue
        if not readers & set(option.readers):
            raise ValueError(_not_read(option, args))
        if isinstance(option.parse, dict) and given[option.name] not in option.parse.get(f"{args.method}/{side}", ()):
            raise ValueError(_other_words(option, args.method, side))
    if args.method == "matrix-free" and args.regularize:
        raise ValueError("--regularize is an option of --method mehrotra (the matrix-free method always "
                         "regularises)")
    if args.method == "mehrotra" and not args.regularize and (args.reg_min or args.reg_max):
        raise ValueError("--reg-min and --reg-max need --regularize with --method mehrotra")
    return given


def _not_read(option, args) -> str:
    """Why a flag is refused: the method, or else the back end, that reads its option, and the
    flags of the options read there that this run does not read (the table's readers)."""
    side = "gpu" if args.backend == "gpu" else "numpy"
    here = {"solve", args.method, f"{args.method}/{side}"}
    mine = [r for r in option.readers if r.split("/")[0] == args.method]
    if mine:                                        # this method's other back end reads it
        where, other = _BACK_ENDS[mine[0].split("/")[1]], f"--backend {args.backend}"
        scope = set(mine)
    else:
        method = option.readers[0].split("/")[0]
        where, other = f"--method {method}", f"--method {args.method}"
        scope = {r for r in READERS if r.split("/")[0] == method}
    unread = [o.cli_flag for o in flag_options() if set(o.readers) & scope and not set(o.readers) & here]
    return (f"{option.cli_flag} is an option of {where}, not of {other} (the options of {where} that this run "
            f"does not read: {', '.join(unread)})")


_BACK_ENDS = {"gpu": "the gpu back end", "numpy": "the numpy back ends"}


def _other_words(option, method, side) -> str:
    """Why a word of a flag is refused: the back ends that take it, and the words this one takes."""
    mine = f"{method}/{side}"
    said = "; ".join(f"{option.cli_flag} {_listed(words, 'and')} are options of {_BACK_ENDS[reader.split('/')[1]]}"
                     for reader, words in option.parse.items() if reader != mine)
    return f"{said}; --backend {'gpu' if side == 'gpu' else 'numpy32 or numpy64'} takes " \
           f"{option.cli_flag} {_listed(option.parse.get(mine, ()), 'or')}"


def _listed(words, last: str) -> str:
    """The words as "a, b and c" (or "a, b or c")."""
    words = list(words)
    return ", ".join(words[:-1]) + f" {last} " + words[-1] if len(words) > 1 else "".join(words)


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
    if res.pcg_iterations is not None:
        stops = res.pcg_stops or {}
        others = "".join(f", {v} {label}" for key, label in (("stall", "by PCG's stall stop"),
                                                             ("breakdown", "at a PCG breakdown"),
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
