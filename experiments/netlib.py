"""Every NETLIB problem of ``gpgpu/data/netlib`` and ``netlib-more`` with every back end
(beyond the papers, whose Table 3 has ten of them).

For each problem (``netlib_dir()`` and the ``netlib-more`` folder beside it) and run:

=================  ======================================================================
``numpy64``        float64, eps = 1e-8, the robustness options: ``presolve=True,
                   correct_primal=True, free_safeguard=True``
``numpy64-paper``  float64, eps = 1e-8, Algorithm 3 as printed (no presolve, no correction)
``gpu-refine``     the GPU's float32 factor with float64 refinement, eps = 1e-8, the same
                   three options; ``factor_precision="auto"`` (the default): float-float
                   factors after a stall (the row's ``float_float_from``, -1 when never)
``gpu-defaults``   ``solve(p, backend="gpu", eps=1e-8)`` and nothing else: what a user gets (the
                   fast kernels, bounds in the Newton system, refinement, chosen by the defaults)
``gpu``            the GPU without refinement, the three options: eps = 1e-2, 1e-3, ...
                   1e-8 in turn, the smallest at which it ends optimal with the objective
                   within max(eps, 1e-6) of HiGHS's is reported
=================  ======================================================================

Each row: status, iterations, the accuracy reached (the worst of (6.1)-(6.3) at the point
returned), the objective's error relative to HiGHS's (max(1, |objective|)), the solve's seconds
(after two untimed iterations of the same run on the same problem, which compile the kernels),
its GPU passes and host microseconds a pass, the order of the normal matrix it factored and
the standard form's rows (the order with bounds as rows), and HiGHS's seconds (its default
solver and its interior point solver, same machine). :func:`lp_speed_rows` gives the LP rows of
``python -m experiments.speed --parts lp``. On a software renderer the GPU runs only on
the problems of at most ``--gpu-rows`` standard-form rows (default 200 there, all on a GPU):
llvmpipe takes minutes for the larger ones; the notes list what was left out.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from experiments.harness import Claim, Experiment
from experiments.table3 import WARMUP_ITERATIONS, highs_objective

TARGET = 1e-6              # relative objective error counted as right
#: the GPU's eps ladder without refinement, coarse to fine: from 1e-2 (Table 3's runs went to
#: 2e-3), so that a problem whose float32 iterates stall above 1e-4 still reports what it reaches
GPU_EPS = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8)
ROBUST = {"presolve": True, "correct_primal": True, "free_safeguard": True}
RUNS = {
    "numpy64": dict(backend="numpy64", eps=1e-8, **ROBUST),
    "numpy64-paper": dict(backend="numpy64", eps=1e-8, presolve=False, correct_primal=False, free_safeguard=False),
    "gpu-refine": dict(backend="gpu", eps=1e-8, refine=True, **ROBUST),
    "gpu-defaults": dict(backend="gpu", eps=1e-8),
    "gpu": dict(backend="gpu", refine=False, **ROBUST),
}
PROBLEMS_OPTION = ("--problems", {"type": str, "default": None,
                                  "help": "comma-separated problem names (default: every file of both folders)"})
RUNS_OPTION = ("--runs", {"type": str, "default": None,
                          "help": f"comma-separated runs among {', '.join(RUNS)} (default: all)"})
GPU_ROWS_OPTION = ("--gpu-rows", {"type": int, "default": None,
                                  "help": "GPU runs only for problems of at most this many standard-form rows "
                                          "(default: 200 on a software renderer, no limit on a GPU)"})


def problem_files() -> list:
    """[(name, folder label, path)] of every .mps.gz of netlib and netlib-more, sorted by name."""
    from gpgpu.lp.netlib import netlib_dir

    base = netlib_dir()
    out = []
    for folder in (base, base.parent / "netlib-more"):
        if folder.is_dir():
            out += [(p.name.split(".")[0], folder.name, p) for p in sorted(folder.glob("*.mps.gz"))]
    return sorted(out)


def accuracy(r) -> float:
    """The worst of (6.1)-(6.3) at the point returned (inf when there is none)."""
    if not r.history:
        return 0.0 if r.status == "optimal" else float("inf")
    h = r.history[min(r.point_iteration, len(r.history) - 1)]
    return max(h["primal_residual"], h["dual_residual"], h["gap"])


def highs_ipm(path) -> tuple:
    """(seconds, objective) of HiGHS's interior point solver (``solver="ipm"``, crossover as its
    default) on the MPS file."""
    from gpgpu.lp.mps import quiet_highs

    h = quiet_highs()
    h.readModel(str(path))
    h.setOptionValue("solver", "ipm")
    t0 = time.perf_counter()
    h.run()
    return time.perf_counter() - t0, float(h.getInfo().objective_function_value)


#: the LP's speed rows (``python -m experiments.speed --parts lp``): the GPU's defaults and numpy64's
#: (LAPACK, its default BLAS threads) at eps = 1e-8, beside HiGHS's interior point solver
LP_SPEED = {"gpu_defaults": dict(backend="gpu", eps=1e-8), "numpy64": dict(backend="numpy64", eps=1e-8)}


def lp_speed_rows(path, progress=None) -> list:
    """The rows of one NETLIB problem for the LP's speed: per run of :data:`LP_SPEED` (after two
    untimed iterations of it) its status, iterations, seconds, objective error against HiGHS's,
    passes and host microseconds a pass, and the order of the normal matrix it factored beside
    the standard form's (what paper 000's method factors, bounds as rows); and HiGHS's IPM."""
    from gpgpu.lp import read_mps

    name = Path(path).name.split(".")[0]
    problem = read_mps(path)
    highs_s, ref = highs_ipm(path)
    rows = [{"part": "lp", "problem": name, "algorithm": "highs_ipm", "seconds": highs_s, "status": "optimal",
             "objective_error": 0.0}]
    for label, kw in LP_SPEED.items():
        _warm_up(problem, **kw)
        res = _one(problem, ref, **kw)
        rows.append({"part": "lp", "problem": name, "algorithm": label, **res})
    if progress is not None:
        progress(f"{name}: " + ", ".join(f"{r['algorithm']} {r['seconds']:.3g} s" for r in rows))
    return rows


def _one(problem, ref, tol=TARGET, **kw) -> dict:
    """One solve; ``right``: optimal with the objective within ``tol`` of HiGHS's."""
    from gpgpu.lp import solve

    t0 = time.perf_counter()
    r = solve(problem, **kw)
    seconds = time.perf_counter() - t0
    err = abs(r.objective - ref) / max(1.0, abs(ref)) if np.isfinite(r.objective) else float("inf")
    # the iteration at which factor_precision="auto" went on with float-float factors (-1: never)
    switched = next((h["iteration"] for h in r.history if "factor_precision" in h), -1)
    return {"status": r.status, "iterations": r.iterations, "accuracy": accuracy(r), "objective_error": err,
            "seconds": seconds, "right": r.status == "optimal" and err <= tol, "eps": kw.get("eps"),
            "float_float_from": switched, "passes": r.passes, "host_us_per_pass": r.host_us_per_pass,
            "normal_rows": r.normal_rows, "standard_rows": r.standard_rows}


def _warm_up(problem, **kw) -> None:
    """A few untimed iterations of the run (its kernels compiled, its textures allocated)."""
    from gpgpu.lp import solve

    solve(problem, max_iter=WARMUP_ITERATIONS, **{"eps": GPU_EPS[0], **kw})


def run(ctx):
    from gpgpu.lp import read_mps

    wanted = ctx.options.get("problems")
    runs = [s.strip() for s in (ctx.options.get("runs") or ",".join(RUNS)).split(",") if s.strip()]
    unknown = [s for s in runs if s not in RUNS]
    if unknown:
        raise ValueError(f"unknown runs {unknown}; choose among {', '.join(RUNS)}")
    gpu_rows = ctx.options.get("gpu_rows")
    if gpu_rows is None:
        gpu_rows = 200 if ctx.software else None
    files = problem_files()
    if wanted:
        names = [s.strip() for s in wanted.split(",") if s.strip()]
        missing = sorted(set(names) - {f[0] for f in files})
        if missing:
            raise ValueError(f"no MPS file for {missing} in the netlib folders")
        files = [f for f in files if f[0] in names]
    rows, notes, left_out = [], [], []
    for name, folder, path in ctx.steps(files, unit="problem"):
        problem = read_mps(path)
        ref, highs_s = highs_objective(path)
        highs_ipm_s, _ = highs_ipm(path)
        m, n = problem.standard_size
        for label in runs:
            kw = dict(RUNS[label])
            if kw["backend"] == "gpu" and gpu_rows is not None and m > gpu_rows:
                left_out.append(f"{name} ({m} rows)")
                continue
            _warm_up(problem, **kw)
            if label == "gpu":                     # the smallest eps it reaches, coarse to fine
                res = None
                for eps in GPU_EPS:
                    r = _one(problem, ref, tol=max(TARGET, eps), eps=eps, **kw)   # (6.3) bounds it by ~eps
                    if not r["right"]:
                        res = res or r
                        break
                    res = r
            else:
                res = _one(problem, ref, **kw)
            row = {"problem": name, "folder": folder, "rows": m, "columns": n, "run": label, **res,
                   "highs_objective": ref, "highs_seconds": highs_s, "highs_ipm_seconds": highs_ipm_s}
            rows.append(row)
            ctx.progress(f"{name} {label}: {res['status']}, {res['iterations']} it, accuracy "
                         f"{res['accuracy']:.1e}, objective error {res['objective_error']:.1e}, "
                         f"{res['seconds']:.2f} s")
    if left_out:
        notes.append(f"GPU runs left out on this renderer (more than {gpu_rows} standard-form rows): "
                     + ", ".join(sorted(set(left_out))))
    return rows, claims(rows), notes


def claims(rows) -> list:
    out = []
    for label in RUNS:
        sel = [r for r in rows if r["run"] == label]
        if not sel:
            continue
        right = [r for r in sel if r["right"]]
        misses = [f"{r['problem']} ({r['status']}, {r['objective_error']:.1e})" for r in sel if not r["right"]]
        if label == "gpu":
            text = ("GPU without refinement: optimal, objective within max(eps, 1e-6) of HiGHS, at some eps of "
                    "1e-2 .. 1e-8")
            smallest = [f"{r['problem']} {r['eps']:g}" for r in right]
            measured = (f"{len(right)} of {len(sel)}; smallest eps reached: " + "; ".join(smallest)
                        + (f"; misses: {', '.join(misses)}" if misses else ""))
        else:
            text = f"{label}: optimal at eps = 1e-8, objective within 1e-6 of HiGHS"
            measured = f"{len(right)} of {len(sel)}" + (f"; misses: {', '.join(misses)}" if misses else "")
            switched = [f"{r['problem']} ({r['float_float_from']})" for r in sel if r["float_float_from"] >= 0]
            if label in ("gpu-refine", "gpu-defaults"):
                measured += ("; float-float factors after a stall (iteration): " + ", ".join(switched)
                             if switched else "; no solve switched to float-float factors")
        out.append(Claim(text, "no figure in the papers (every problem)", measured))
    for label in ("numpy64", "gpu-refine"):
        sel = [r for r in rows if r["run"] == label]
        if sel:
            ours, highs = sum(r["seconds"] for r in sel), sum(r["highs_seconds"] for r in sel)
            out.append(Claim(f"{label}: total solve time / HiGHS's", "no figure in the papers",
                             f"{ours:.1f} s / {highs:.2f} s = {ours / max(highs, 1e-9):.0f} x ({len(sel)} problems)"))
    return out


def plot(rows, fig, renderer):
    ax1, ax2 = fig.subplots(1, 2)
    labels = [k for k in RUNS if any(r["run"] == k for r in rows)]
    right = [sum(r["right"] for r in rows if r["run"] == k) for k in labels]
    total = [sum(1 for r in rows if r["run"] == k) for k in labels]
    x = np.arange(len(labels))
    ax1.bar(x, total, 0.6, color="lightgray", label="problems run")
    ax1.bar(x, right, 0.6, label="optimal, objective within 1e-6")
    ax1.set_xticks(x, labels, rotation=20, fontsize=7)
    ax1.legend(fontsize=7)
    ax1.set_title("problems solved", fontsize=9)
    for k in labels:
        sel = [r for r in rows if r["run"] == k]
        ax2.scatter([r["highs_seconds"] for r in sel], [r["seconds"] for r in sel], s=10, label=k)
    ax2.set_xscale("log")
    ax2.set_yscale("log")
    ax2.set_xlabel("HiGHS (s)")
    ax2.set_ylabel("this project (s)")
    ax2.legend(fontsize=7)
    ax2.set_title("solve time per problem", fontsize=9)


EXPERIMENT = Experiment(
    name="netlib", title="every NETLIB problem with every back end", paper="000 section 4 (beyond: every NETLIB problem)",
    sizes_software=[], sizes_gpu=[], run=run, plot=plot, size_name="problem",
    arguments=[PROBLEMS_OPTION, RUNS_OPTION, GPU_ROWS_OPTION])

if __name__ == "__main__":
    raise SystemExit(EXPERIMENT.main())
