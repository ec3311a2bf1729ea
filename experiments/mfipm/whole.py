"""Paper 002's headline over whole solves: the matrix-free IPM on the GPU against the CPU beside it
(002's Table 3 compares whole solves: 1.1-3.9x faster on the GPU than on the CPU).

    python -m experiments.mfipm.whole --problems scsd8,sctap1,nug12 [--eps 1e-6]
        [--runs gpu,gpu-002,numpy64,numpy64-1,gpu-one-row] [--out docs/figures/mfipm_whole_<renderer>_<date>.csv]
        [--timeout S] [--reference CSV [CSV ...]]
    python -m experiments.mfipm.whole --markdown CSV
    python -m experiments.mfipm.whole --claims CSV [CSV ...] --command "the commands that wrote them"

Each (problem, run) is a subprocess of its own: a warm-up solve of afiro first (the package's
copy, whatever ``GPGPU_NETLIB_DIR`` says: the kernels compiled, numpy's threads started), then ``solve(name, method="matrix-free", backend=...,
eps=...)`` timed by its wall clock. The runs: ``gpu``, the defaults (PCG's iteration fused:
:mod:`gpgpu.lp.matrix_free_fused`); ``gpu-002``, the same with ``fused=False`` (002's kernels
from recorded plans); ``numpy64``, float64 PCG with its products on all the CPU's cores
(``threads=os.cpu_count()``, 002's "8 core"); ``numpy64-1``, one thread (002's "serial"; BLAS
limited to one thread where threadpoolctl is installed); ``gpu-one-row`` (not by default), the
defaults with the back end's vectors in one texture row (``fold=None``) instead of folded 128
wide; ``gpu-halving`` (not by default), the defaults with the dense part's sums by 000's
halving passes (``sums="pingpong"``) instead of fans of 32 texels; ``gpu-presolve`` and
``numpy64-presolve`` (not by default), ``gpu`` and ``numpy64`` on the LP that HiGHS's presolve
leaves (``presolve=True``; the matrix-free method does not presolve by default). A problem is a NETLIB name, a QAPLIB
name (the QAP relaxation, as ``solve`` reads it) or a path. A run may name constants of
``gpgpu.lp`` to set in its process after a ``+``, as :mod:`experiments.netlib_speed`'s back ends
do: ``gpu+matrix_free.CORRECTOR_START=True`` is ``gpu`` with
``gpgpu.lp.matrix_free.CORRECTOR_START`` set (and a key without a dot is one more option of
``solve``).

Each row: the problem, the run, eps, status, interior point iterations, PCG iterations,
seconds, passes, passes a PCG iteration (all the solve's passes over its PCG iterations: the
preconditioner's builds and the outer iteration's passes included), host microseconds a pass
(``LPResult.host_us_per_pass``: issuing the passes, not waiting for the GPU), read-backs, the
objective and its error against HiGHS, renderer and date; and where the seconds went: in PCG
(``pcg_seconds``), of which waiting for its checks' read-backs (``read_seconds``: the GPU's
queued passes drained), in the preconditioner's builds (``build_seconds``), and issuing passes
(``issue_seconds``, all the solve's). What is not PCG nor a build is the outer iteration's.
HiGHS's objective (its IPM) is solved after a problem's runs, each run printed as it ends;
``--reference`` takes it from earlier CSVs of this experiment instead (nug20's takes HiGHS
minutes).

``--claims`` turns such CSVs into the reproduction report's claims (``mfipm_whole.claims.json``
beside the first, ``mfipm_whole.llvmpipe.claims.json`` for a software renderer, and for a GPU
their rows as ``mfipm_whole.csv``, which the verdicts name): 002 Table 3's serial CPU / GPU and
multi-core CPU / GPU solve times over whole solves, each where one CSV holds both runs of a
problem (a ratio is never taken across two runs of the experiment).
"""
from __future__ import annotations

import csv
import json
import math
import os
import sys
import time
from dataclasses import asdict
from pathlib import Path

from experiments.figures import printed_markdown, rows_to, tool_parser
from experiments.netlib_speed import backend_options, run_child, set_constants
from gpgpu.lp.netlib import DATA_DIR

#: the warm-up's problem: the package's own afiro, found also where GPGPU_NETLIB_DIR names a
#: folder without it
WARM_UP = DATA_DIR / "netlib" / "afiro.mps.gz"

FIELDS = ("problem", "run", "eps", "status", "iterations", "pcg_iterations", "seconds", "passes", "passes_per_pcg",
          "host_us_per_pass", "readbacks", "objective", "highs_objective", "error", "renderer", "date",
          "pcg_seconds", "read_seconds", "build_seconds", "issue_seconds")
#: run name -> solve's back end and options
RUNS = {"gpu": ("gpu", {}), "gpu-002": ("gpu", {"fused": False}),
        "numpy64": ("numpy64", {"threads": "all"}), "numpy64-1": ("numpy64", {"threads": 1}),
        "gpu-one-row": ("gpu", {"fold": None}), "gpu-halving": ("gpu", {"sums": "pingpong"}),
        "gpu-presolve": ("gpu", {"presolve": True}), "numpy64-presolve": ("numpy64", {"threads": "all", "presolve": True})}
#: the runs made when ``--runs`` is not given
DEFAULT_RUNS = ("gpu", "gpu-002", "numpy64", "numpy64-1")
#: the reproduction report's name of these claims
NAME = "mfipm_whole"
#: 002 Table 3's ratios over whole solves: (claim, the CPU run, the paper's figure)
RATIOS = (("whole solves: serial CPU solve time / GPU solve time", "numpy64-1",
           '"reduced no more than four times" (1.1-3.9 in Table 3)'),
          ("whole solves: multi-core CPU solve time / GPU solve time", "numpy64",
           "Table 3 solve 0.7-1.5 (8 cores / GPU)"))


def solved(r) -> bool:
    """Whether a run's row is a solve a speed ratio may take: it ended optimal (a run in
    numerical trouble or at an iteration limit stopped without an answer, unfinished or not)."""
    return r is not None and r["status"] == "optimal"


def _child(problem: str, run: str, eps: float) -> dict:
    """One run, in the subprocess: the warm-up, then the timed solve."""
    from gpgpu.lp import solve

    base, extra = backend_options(run)
    backend, options = RUNS[base]
    options = dict(options, **set_constants(extra))
    if options.get("threads") == "all":
        options["threads"] = os.cpu_count() or 1
    limit = _blas_threads(1) if options.get("threads") == 1 else None
    solve(str(WARM_UP), method="matrix-free", backend=backend, eps=eps, **options)
    t0 = time.perf_counter()
    r = solve(problem, method="matrix-free", backend=backend, eps=eps, **options)
    seconds = time.perf_counter() - t0
    if limit is not None:
        limit.unregister()
    pcg = int(r.pcg_iterations or 0)
    return {"status": r.status, "iterations": r.iterations, "pcg_iterations": pcg, "seconds": seconds,
            "passes": r.passes, "passes_per_pcg": (r.passes or 0) / max(1, pcg),
            "host_us_per_pass": r.host_us_per_pass, "readbacks": r.readbacks, "objective": float(r.objective),
            "pcg_seconds": r.timers["pcg"], "read_seconds": r.timers["pcg_reads"], "build_seconds": r.timers["build"],
            "issue_seconds": r.pass_seconds}


def _blas_threads(n: int):
    """BLAS limited to n threads while the returned context is open (None without threadpoolctl)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return None
    ctx = threadpool_limits(limits=n)
    ctx.__enter__()

    class _Undo:
        @staticmethod
        def unregister():
            ctx.__exit__(None, None, None)
    return _Undo()


def run_one(problem: str, run: str, eps: float, timeout: float) -> dict:
    return run_child("import json; from experiments.mfipm.whole import _child; "
                     f"print(json.dumps(_child({problem!r}, {run!r}, {eps!r})))", timeout)


def highs_objective(problem: str) -> float:
    """HiGHS's optimum (its IPM) of the LP ``solve`` reads for ``problem``, in the source's sense."""
    from experiments.mfipm.common import highs_objective as highs
    from gpgpu.lp.api import read_named

    p = read_named(problem)
    return p.sense * highs(p)[0]


def main(argv=None) -> int:
    ap = tool_parser(__doc__)
    ap.add_argument("--problems", default="scsd8,sctap1", help="names or paths, comma-separated")
    ap.add_argument("--runs", default=",".join(DEFAULT_RUNS), help=f"comma-separated, of {', '.join(RUNS)}")
    ap.add_argument("--eps", type=float, default=1e-6)
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--reference", nargs="+", default=[],
                    help="CSVs of earlier runs: their problems' HiGHS objective is taken from them, not solved again")
    ap.add_argument("--claims", nargs="+", default=None,
                    help="write the report's claims from CSVs of this experiment (each one run, the ratios within it)")
    ap.add_argument("--command", default="", help="with --claims: the command that wrote the CSV")
    ap.add_argument("--note", action="append", default=[], help="with --claims: a note for the report (repeatable)")
    args = ap.parse_args(argv)
    if printed_markdown(args, markdown):
        return 0
    if args.claims:
        print(f"wrote {write_claims(args.claims, args.command, args.note)}")
        return 0
    runs = args.runs.split(",")
    try:
        unknown = sorted({r for r in runs if backend_options(r)[0] not in RUNS})
        for run in runs:
            set_constants(backend_options(run)[1], check_only=True)
    except (ValueError, SyntaxError, ImportError) as e:
        ap.error(f"--runs: {e}")
    if unknown:
        ap.error(f"unknown runs {', '.join(unknown)}; choose from {', '.join(RUNS)} "
                 "(each may add +module.CONSTANT=value)")
    known = reference_objectives(args.reference)
    with rows_to(args.out, "mfipm_whole", FIELDS, extrasaction="ignore") as write:
        for problem in args.problems.split(","):
            done = []
            for run in runs:                        # each run printed as it ends, before HiGHS runs
                r = run_one(problem, run, args.eps, args.timeout)
                done.append((run, r))
                print(f"{problem:10s} {run:10s} {r.get('status', '?'):18s} {r.get('seconds', math.nan):8.2f} s "
                      f"{r.get('iterations', '')!s:>4} it {r.get('pcg_iterations', '')!s:>6} PCG "
                      f"{r.get('passes_per_pcg', math.nan):6.1f} passes/PCG  objective {r.get('objective', math.nan)!r}"
                      + (f"  ({r['message']})" if r.get("status") == "crash" else ""), flush=True)
            ref = math.nan
            try:
                ref = known[problem] if problem in known else highs_objective(problem)
            finally:                                # the runs' rows kept if HiGHS fails or is interrupted
                for run, r in done:
                    err = abs(r.get("objective", math.nan) - ref) / max(1.0, abs(ref))
                    write(dict(r, problem=problem, run=run, eps=args.eps, highs_objective=ref, error=err))
                    print(f"{problem:10s} {run:10s} error against HiGHS {err:.1e}", flush=True)
    return 0


def reference_objectives(paths) -> dict:
    """{problem: HiGHS's objective} from earlier CSVs of this experiment (``--reference``): the
    problems whose reference need not be solved again (nug20's takes HiGHS minutes)."""
    known = {}
    for path in paths or ():
        for r in csv.DictReader(open(path, newline="")):
            value = float(r["highs_objective"])
            if math.isfinite(value):
                known[r["problem"]] = value
    return known


def claims(*paths) -> list:
    """The claims of :data:`RATIOS` from CSVs of this experiment: per problem the CPU run's
    seconds over the GPU defaults' (``gpu``) of the same CSV (one run of the experiment), where
    both solved it (:func:`solved`); a ratio with no such problem is left out."""
    from experiments.harness import Claim

    how = ("experiments.mfipm.whole: solve(name, method='matrix-free', eps=...) with each back end's defaults, "
           "a process a run; numpy64 on all the host's cores and on one thread (numpy64-1)")
    out = []
    for text, cpu, paper in RATIOS:
        got = []
        for path in paths:
            rows = list(csv.DictReader(open(path)))
            by = {(r["problem"], r["run"]): r for r in rows}
            got += [f"{nm} {float(by[nm, cpu]['seconds']) / float(by[nm, 'gpu']['seconds']):.2f}"
                    for nm in dict.fromkeys(r["problem"] for r in rows)
                    if solved(by.get((nm, cpu))) and solved(by.get((nm, "gpu")))]
        if got:
            out.append(Claim(text, paper, "; ".join(got), how))
    return out


def write_claims(paths, command: str = "", notes=()) -> Path:
    """``mfipm_whole.claims.json`` (``.llvmpipe.claims.json`` for a software renderer) beside the
    first CSV of ``paths`` (one path or several, each a run on the same renderer), with the
    command that wrote them and ``notes``, and for a GPU their rows as ``mfipm_whole.csv`` (the
    rows the verdicts name)."""
    from experiments.__main__ import is_software

    paths = [Path(paths)] if isinstance(paths, (str, Path)) else [Path(p) for p in paths]
    rows = [r for p in paths for r in csv.DictReader(open(p))]
    if not rows:
        raise ValueError(f"no rows in {', '.join(map(str, paths))}: give CSVs this experiment wrote")
    renderers = {r["renderer"] for r in rows}
    if len(renderers) > 1:
        raise ValueError(f"the CSVs come from different renderers ({', '.join(sorted(renderers))}): "
                         "give the runs of one renderer")
    renderer = rows[0]["renderer"]
    software = is_software(renderer)
    folder = paths[0].parent
    if not software and [p.name for p in paths] != [f"{NAME}.csv"]:
        columns = list(dict.fromkeys(k for r in rows for k in r))     # older CSVs lack the later columns
        with open(folder / f"{NAME}.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=columns, restval="")
            w.writeheader()
            w.writerows(rows)
    target = folder / f"{NAME}{'.llvmpipe' if software else ''}.claims.json"
    data = {"name": NAME, "title": "matrix-free IPM over whole solves, CPU vs GPU", "renderer": renderer,
            "date": max(r["date"] for r in rows), "command": command, "size_name": "", "sizes": [],
            "seconds": sum(float(r["seconds"]) for r in rows if r["seconds"]),
            "notes": [f"rows: {', '.join(p.name for p in paths)}", *notes],
            "claims": [asdict(c) for c in claims(*paths)]}
    target.write_text(json.dumps(data, indent=1) + "\n")
    return target


def markdown(path) -> str:
    """The CSV as a table: per problem and run the status, iterations, PCG iterations, seconds,
    passes a PCG iteration and host time a pass, and the GPU's speed-up over each CPU run (002's
    Table 3 ratio: CPU seconds over GPU seconds; a ``-presolve`` run's over the CPU's on the
    presolved LP, ``numpy64-presolve``) where the GPU run solved the problem and the CPU run
    solved it too ("> r" where the CPU run stopped at its ``time_limit``, so that it would
    have taken longer); "-" where either ended without an answer."""
    rows = list(csv.DictReader(open(path)))
    by = {}
    for r in rows:
        by.setdefault(r["problem"], {})[r["run"]] = r
    out = ["| problem | run | status | iterations | PCG iterations | seconds | passes a PCG iteration | "
           "host us a pass | CPU s / this run's s (numpy64, numpy64-1; with the presolve, numpy64-presolve) |",
           "| --- " * 9 + "|"]

    def figure(value, spec):
        return format(float(value), spec) if value not in ("", None) and float(value) == float(value) else "-"

    for name, d in by.items():
        for run, r in d.items():
            ratios = []
            # a presolved GPU run against the CPU on the same presolved LP
            for cpu in ("numpy64-presolve", "numpy64-1-presolve") if run.endswith("-presolve") else ("numpy64", "numpy64-1"):
                c = d.get(cpu)
                ok = run.startswith("gpu") and solved(r) and (solved(c) or (c is not None and c["status"] == "time_limit"))
                ratio = figure(float(c["seconds"]) / float(r["seconds"]), ".2f") if ok else "-"
                # a CPU run stopped by its time limit took longer than its seconds: a lower bound
                ratios.append(f"> {ratio}" if ok and c["status"] == "time_limit" else ratio)
            gpu = run.startswith("gpu")
            out.append(f"| {name} | {run} | {r['status'].replace('_', ' ')} | {r.get('iterations') or '-'} | "
                       f"{r.get('pcg_iterations') or '-'} | {figure(r['seconds'], '.2f')} | "
                       f"{figure(r['passes_per_pcg'], '.1f') if gpu else '-'} | "
                       f"{figure(r['host_us_per_pass'], '.1f') if gpu else '-'} | {', '.join(ratios)} |")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
