"""The LP's speed on the NETLIB problems a user brings next (beyond the papers): per problem, the GPU
with ``solve``'s defaults against numpy64 (LAPACK on all cores) and HiGHS's interior point method
timed alone, with the iterations, the passes an iteration and the host time a pass.

    python -m experiments.netlib_speed --source DIR [DIR ...] [--min-rows 1000] [--problems a,b]
        [--eps 1e-8] [--out docs/figures/netlib_speed_<renderer>_<date>.csv] [--timeout S]
    python -m experiments.netlib_speed --markdown CSV

``--source`` names folders of NETLIB ``.mps.gz`` files (``gpgpu/data/netlib``,
``gpgpu/data/netlib-more``, or coin-or-tools/Data-Netlib's 91: see ``experiments.netlib_all``).
``--min-rows`` keeps the problems whose normal matrix (the standard form's main rows after
HiGHS's presolve, as ``solve`` factors it) has at least that many rows; it is found by one
numpy64 iteration. ``--backends`` names back ends, each with options after a ``+`` if any
(``gpu+factor_block=16`` is ``solve(path, backend="gpu", factor_block=16)``; the row's
``backend`` is that name; the table compares ``gpu`` with ``numpy64``). An option whose key has
a dot sets a constant of ``gpgpu.lp`` in the run's process instead: ``gpu+mehrotra.NEWTON_RTOL=1e-13``
sets ``gpgpu.lp.mehrotra.NEWTON_RTOL`` before its solves. Each (problem, back end) runs in a subprocess of its own: a warm-up solve of
adlittle first (``WARM_UP``: the GPU's kernels compiled, the blocked factor's among them,
numpy's threads started; for ``gpu`` a second one with float-float factors, whose kernels a
raise of the precision uses), then ``solve(path,
backend=..., eps=...)`` timed by its wall clock, reading the MPS file included. HiGHS's IPM
(``highspy``, ``solver="ipm"``, crossover off, its presolve on) is timed by its own run time.
Each row: the problem, HiGHS's sizes, the back end, status, iterations, seconds, passes, passes
an iteration, host microseconds a pass (``LPResult.host_us_per_pass``), read-backs an iteration
(``LPResult.readbacks_per_iteration``: on the GPU each solve with the factor is one), the objective's error
against HiGHS, the normal matrix's rows, HiGHS's IPM seconds, renderer and date.
"""
from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
import time

from experiments.figures import printed_markdown, rows_to, tool_parser
from experiments.netlib_all import highs_reference, problem_files
from gpgpu.lp.netlib import DATA_DIR

FIELDS = ("problem", "rows", "columns", "nonzeros", "normal_rows", "backend", "eps", "status", "iterations", "seconds",
          "passes", "passes_per_iteration", "host_us_per_pass", "readbacks_per_iteration", "objective", "highs_objective", "error",
          "highs_ipm_seconds", "renderer", "date")
BACKENDS = ("gpu", "numpy64")


def highs_ipm_seconds(path) -> float:
    """HiGHS's interior point method alone on the MPS file: its run time (crossover off)."""
    from gpgpu.lp.mps import quiet_highs

    h = quiet_highs()
    h.readModel(str(path))
    h.setOptionValue("solver", "ipm")
    h.setOptionValue("run_crossover", "off")
    h.run()
    return float(h.getRunTime())


def backend_options(name: str) -> tuple:
    """``"gpu+factor_block=16+fuse=False"`` -> ("gpu", {"factor_block": 16, "fuse": False}): a back
    end's name and the options after it, each value a Python literal."""
    import ast

    backend, *pairs = name.split("+")
    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"backend {name!r}: each option after '+' is key=value, got {pair!r}")
        options[key] = ast.literal_eval(value)
    return backend, options


def set_constants(options: dict, check_only: bool = False) -> dict:
    """Set the options whose key names a constant of ``gpgpu.lp`` (``"mehrotra.NEWTON_RTOL"``:
    ``gpgpu.lp.mehrotra.NEWTON_RTOL``); answers the others. A constant that does not exist is a
    ValueError naming it (``check_only``: that check, nothing set)."""
    import importlib

    rest = {}
    for key, value in options.items():
        if "." not in key:
            rest[key] = value
            continue
        module, _, name = key.rpartition(".")
        target = importlib.import_module(f"gpgpu.lp.{module}")
        if not hasattr(target, name):
            raise ValueError(f"backend option {key!r}: gpgpu.lp.{module} has no constant {name}")
        if not check_only:
            setattr(target, name, value)
    return rest


#: the warm-up's problem: adlittle's normal matrix (53 rows) spans more than one block of the
#: GPU's factor (``gpgpu.lp.gpu_backend.AUTO_BLOCK``, 16), so that the blocked factor's kernels
#: are compiled before the timed solve too (afiro's 7 rows draw none of them); the package's
#: copy, found also where GPGPU_NETLIB_DIR names a folder without it
WARM_UP = str(DATA_DIR / "netlib" / "adlittle.mps.gz")


def warm_up(backend: str, eps: float, options: dict) -> None:
    """The warm-up solves of :data:`WARM_UP` (the GPU's kernels compiled, numpy's threads
    started); for ``gpu`` a second one with float-float factors, whose kernels a raise of the
    precision uses."""
    from gpgpu.lp import solve

    solve(WARM_UP, backend=backend, eps=eps, **options)
    if backend == "gpu" and "factor_precision" not in options:
        try:
            solve(WARM_UP, backend=backend, eps=eps, factor_precision="float-float", **options)
        except (RuntimeError, ValueError):   # no float-float here (a context without GL_ARB_gpu_shader5), or
            pass                               # none with these options (refine=False, eps >= REFINE_BELOW, ...)


def _child(path, backend, eps) -> dict:
    """One run, in the subprocess: :func:`warm_up`, then ``solve(path, backend, eps)``
    (``backend`` with its options, :func:`backend_options`)."""
    from gpgpu.lp import solve

    backend, options = backend_options(backend)
    options = set_constants(options)
    warm_up(backend, eps, options)
    t0 = time.perf_counter()
    r = solve(str(path), backend=backend, eps=eps, **options)
    seconds = time.perf_counter() - t0
    return {"status": r.status, "iterations": r.iterations, "seconds": seconds, "objective": float(r.objective),
            "passes": r.passes, "passes_per_iteration": r.passes / max(1, r.iterations),
            "host_us_per_pass": r.host_us_per_pass, "readbacks_per_iteration": r.readbacks_per_iteration,
            "normal_rows": r.normal_rows, "message": r.message}


def normal_rows(path) -> int:
    """The order of the normal matrix ``solve`` factors (one numpy64 iteration)."""
    from gpgpu.lp import solve

    return int(solve(str(path), backend="numpy64", eps=1e-8, max_iter=1).normal_rows)


def run_one(path, backend, eps, timeout) -> dict:
    return run_child("import json, sys; from experiments.netlib_speed import _child; "
                     f"print(json.dumps(_child({str(path)!r}, {backend!r}, {eps!r})))", timeout)


def run_child(code: str, timeout: float) -> dict:
    """Run ``code`` (which prints a JSON object last) in a Python subprocess: its object, or a
    row whose status says the subprocess timed out or crashed."""
    try:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "seconds": timeout}
    if proc.returncode != 0:
        return {"status": "crash", "message": (proc.stderr.strip().splitlines() or [""])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = tool_parser(__doc__)
    ap.add_argument("--source", nargs="+", default=["gpgpu/data/netlib", "gpgpu/data/netlib-more"])
    ap.add_argument("--problems", default=None, help="names, comma-separated (default: every file)")
    ap.add_argument("--min-rows", type=int, default=1000, help="the normal matrix's rows at least (0: every problem)")
    ap.add_argument("--eps", type=float, default=1e-8)
    ap.add_argument("--backends", default=",".join(BACKENDS))
    ap.add_argument("--timeout", type=float, default=300.0)
    args = ap.parse_args(argv)
    if printed_markdown(args, markdown):
        return 0
    for backend in args.backends.split(","):
        try:
            set_constants(backend_options(backend)[1], check_only=True)
        except (ValueError, SyntaxError, ImportError) as e:
            ap.error(f"--backends: {e}")
    files = problem_files(args.source)
    if args.problems:
        wanted = set(args.problems.split(","))
        files = [(n, p) for n, p in files if n in wanted]
    with rows_to(args.out, "netlib_speed", FIELDS, extrasaction="ignore") as write:
        for name, path in files:
            rows = normal_rows(path)
            if rows < args.min_rows:
                continue
            ref = highs_reference(path)
            ipm = highs_ipm_seconds(path)
            for backend in args.backends.split(","):
                r = run_one(path, backend, args.eps, args.timeout)
                obj = r.get("objective", math.nan)
                err = abs(obj - ref["highs_objective"]) / max(1.0, abs(ref["highs_objective"]))
                write(dict(ref, **dict(r, normal_rows=rows), problem=name, backend=backend, eps=args.eps, error=err,
                           highs_ipm_seconds=ipm))
                print(f"{name:10s} {backend:8s} {r.get('status', '?'):18s} {r.get('seconds', math.nan):7.2f} s "
                      f"{r.get('iterations', '')!s:>4} it {r.get('passes_per_iteration', math.nan):8.0f} passes/it "
                      f"{r.get('host_us_per_pass', math.nan):5.2f} us/pass  HiGHS IPM {ipm:.3f} s"
                      + (f"  ({r['message']})" if r.get("status") == "crash" else ""), flush=True)
    return 0


def markdown(path) -> str:
    """The CSV as a table: per problem the GPU's and numpy64's seconds (iterations), their ratio and
    the GPU's against HiGHS's IPM, the passes an iteration and the host time a pass."""
    rows = list(csv.DictReader(open(path)))
    by = {}
    for r in rows:
        by.setdefault(r["problem"], {})[r["backend"]] = r
    out = ["| problem | normal rows | HiGHS IPM s | GPU s (iterations) | numpy64 s (iterations) | GPU / numpy64 | "
           "GPU / HiGHS | passes an iteration | host us a pass |", "| --- " * 9 + "|"]
    def run(r):
        if r["status"] == "timeout":
            return f"over {float(r['seconds']):.0f} s"
        note = "" if r["status"] == "optimal" else f", {r['status'].replace('_', ' ')}"
        return f"{float(r['seconds']):.2f} ({r['iterations']}{note})"

    def figure(value, spec):
        return format(float(value), spec) if value not in ("", None) else "-"

    for name, d in by.items():
        g, c = d.get("gpu"), d.get("numpy64")
        if g is None:
            continue
        ipm, gs = float(g["highs_ipm_seconds"]), float(g["seconds"])
        timed = g["status"] != "timeout"
        both = c is not None and timed and c["status"] != "timeout"       # a GPU-only run: numpy64's "-"
        out.append(f"| {name} | {g['normal_rows']} | {ipm:.3f} | {run(g)} | {run(c) if c else '-'} | "
                   f"{figure(gs / float(c['seconds']) if both else '', '.2f')} | {figure(gs / ipm if timed else '', '.1f')} | "
                   f"{figure(g['passes_per_iteration'], '.0f')} | {figure(g['host_us_per_pass'], '.2f')} |")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
