"""Table 3 of paper 000: Mehrotra's predictor-corrector method on ten NETLIB problems.

For each problem (``gpgpu/data/netlib`` or ``GPGPU_NETLIB_DIR``; a missing file is reported
and skipped): the original and standard-form sizes, the paper's eps, the GPU iterations and
times with the inner-product Cholesky and the outer-product Cholesky twice, with the square
update the paper's BrookGPU code had to use (its "outer" column) and with the triangle update
of section 3.2, the numpy-float32 iterations and time (the
paper's "MATLAB version implementing exactly the same algorithm ... with single precision"),
HiGHS's objective (and its time) and our relative objective error, and the paper's numbers
beside ours (each timed run comes after two untimed iterations of the same run on the same
problem: they compile the kernels and allocate the textures of its size). Beyond the paper: ``gpu_fast``, the outer form with A D² Aᵀ by 000's singlepass
inner products, the substitutions one pass a step and the pivot steps fused (``FAST``; the H200
figure of the docs was measured before the fused pivot steps), ``gpu_onepass`` (``ONEPASS``:
each step of the Cholesky and of L⁻¹ in one pass, two passes a solve, the one-pass adat over
4 x 1 packed texels, every reduction by the fan, 32 texels a fragment, and the primal
correction of each direction), and a last pair of columns
with mixed-precision refinement (``refine=True``) at eps = 1e-8. Times include reading nothing
from disk: the problem is read first. ``--baseline DIR`` (a source tree of this project at an
earlier commit) times that tree's faithful path on the same problems in a subprocess first, so
that the goal "a tenth of the faithful path's time" is measured in one run.

Claims checked: every problem reaches the paper's eps on the GPU with relative objective
error at most eps (the gap test (6.3) bounds it by about eps); iterations within a factor 1.5 of the paper's; GPU and
numpy32 iteration counts within 2; with refinement every problem reaches 1e-8 with relative
objective error at most 1e-7.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from experiments.harness import Claim, Experiment
from gpgpu.lp import read_mps, solve
from gpgpu.lp.gpu_backend import STEPS_A_PASS
from gpgpu.lp.netlib import PAPER_TABLE3, PROBLEMS, netlib_dir

SOFTWARE_PROBLEMS = ["afiro", "sc50b", "blend", "adlittle"]
#: untimed iterations of each run before it is timed (every kernel of an iteration compiled)
WARMUP_ITERATIONS = 2
#: beyond the paper's passes (for speed): A D² Aᵀ by 000's singlepass inner products, the
#: substitutions in the inner-product form (one pass a step) and the Cholesky's pivot steps in
#: one pass and a copy; the same algorithm otherwise
FAST = {"adat": "inner", "substitution": "inner", "pivot": "fused"}
#: further (beyond the paper): A D² Aᵀ by the inner products over 4 x 1 packed texels, each step
#: of the Cholesky and of L^-1 in one pass, two passes a solve, the inner products, norms and
#: minima by fan reductions (32 texels a fragment), the composites of the directions one pass
#: each (fuse), and each direction put back on A dx = r_b by one more solve (bandm's float32
#: primal residual otherwise stalls just above the paper's eps in some roundings: measured,
#: numerical trouble after 19 iterations)
ONEPASS = {"adat": "inner4", "substitution": "inverse", "pivot": "onepass", "reductions": "fan",
           "fuse": True, "correct_primal": True}


#: the paper's algorithm (preset="paper") with 001's multipass A D² Aᵀ, each run's kernels named
PAPER = {"preset": "paper", "adat": "outer"}
CONFIGS = (("gpu_inner", dict(backend="gpu", cholesky="inner", **PAPER)),
           ("gpu_outer_square", dict(backend="gpu", cholesky="outer", update="square", **PAPER)),
           ("gpu_outer", dict(backend="gpu", cholesky="outer", update="triangle", **PAPER)),
           ("gpu_fast", dict(backend="gpu", cholesky="outer", update="triangle", **dict(PAPER, **FAST))),
           ("gpu_onepass", dict(backend="gpu", cholesky="outer", update="triangle", **dict(PAPER, **ONEPASS))),
           ("numpy32", dict(backend="numpy32", cholesky="outer", preset="paper")))


def highs_objective(path) -> tuple:
    """(objective, seconds) of HiGHS's default solver on the MPS file."""
    from gpgpu.lp.mps import quiet_highs

    h = quiet_highs()
    h.readModel(str(path))
    t0 = time.perf_counter()
    h.run()
    return float(h.getInfo().objective_function_value), time.perf_counter() - t0


def _solve(problem, **kw):
    t0 = time.perf_counter()
    r = solve(problem, **kw)
    return r, time.perf_counter() - t0


#: what ``--baseline`` runs in a subprocess with another source tree first on the path: the
#: faithful path (outer form, triangle update, the paper's eps, no refinement) on each problem,
#: after two untimed iterations of it, as here
_BASELINE = """
import json, sys, time
from gpgpu.lp import read_mps, solve
from gpgpu.lp.netlib import PAPER_TABLE3
for path in sys.argv[1:]:
    name = path.rsplit("/", 1)[-1].split(".")[0]
    p = read_mps(path)
    eps = PAPER_TABLE3[name]["eps"]
    solve(p, backend="gpu", cholesky="outer", eps=eps, refine=False, max_iter=2)
    t0 = time.perf_counter()
    r = solve(p, backend="gpu", cholesky="outer", eps=eps, refine=False)
    print(json.dumps({"problem": name, "seconds": time.perf_counter() - t0, "status": r.status}), flush=True)
"""


def baseline_times(tree: Path, paths: list) -> tuple:
    """({problem: (seconds, status)}, label): the faithful path of an earlier source tree of this
    project (``tree`` holds its ``gpgpu`` and ``glsl``), timed in a subprocess on this GPU in the
    same run, in the environment it ran in then (without the threaded-driver variable this
    gpgpu sets on import, unless the user set it); the label is the tree's git commit when it is
    a checkout, else its folder name."""
    tree = Path(tree).resolve()
    if not (tree / "gpgpu" / "lp").is_dir():
        raise SystemExit(f"--baseline {tree}: no gpgpu/lp there; give a source tree of this project "
                         "(e.g. git worktree add /tmp/base <commit>)")
    from gpgpu import context

    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tree)] + [p for p in sys.path if p]))
    if context.THREADED_GL_SET_HERE:          # the earlier code ran with the driver's own choice
        env.pop(context.THREADED_GL_VARIABLE, None)
    try:
        out = subprocess.run([sys.executable, "-c", _BASELINE, *(str(Path(p).resolve()) for p in paths)],
                             env=env, cwd=str(tree), capture_output=True, text=True, check=True)
    except subprocess.CalledProcessError as e:
        raise SystemExit(f"--baseline {tree}: its faithful path failed:\n{(e.stderr or '')[-2000:]}") from None
    times = {}
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            d = json.loads(line)
            times[d["problem"]] = (d["seconds"], d["status"])
    git = None
    if (tree / ".git").exists():         # a checkout or worktree of its own, not a folder inside one
        git = subprocess.run(["git", "-C", str(tree), "log", "-1", "--format=%h"], capture_output=True, text=True)
    return times, (git.stdout.strip() if git is not None and git.returncode == 0 and git.stdout.strip() else tree.name)


def run(ctx):
    names = ctx.options.get("problems") or (SOFTWARE_PROBLEMS if ctx.software else list(PROBLEMS))
    refine = not ctx.options.get("no_refine")
    rows, notes = [], []
    folder = netlib_dir()
    baseline, base_tree = {}, None
    if ctx.options.get("baseline"):
        found = [p for p in (next((folder / f"{n}{s}" for s in (".mps.gz", ".mps") if (folder / f"{n}{s}").exists()),
                                  None) for n in names) if p is not None]
        ctx.progress(f"baseline: the faithful path of {ctx.options['baseline']}")
        baseline, base_tree = baseline_times(ctx.options["baseline"], found)
    for name in ctx.steps(names, unit="problem"):
        paper = PAPER_TABLE3[name]
        path = next((folder / f"{name}{s}" for s in (".mps.gz", ".mps") if (folder / f"{name}{s}").exists()), None)
        if path is None:
            notes.append(f"{name}: no file in {folder}, skipped")
            ctx.progress(f"{name}: missing, skipped")
            continue
        problem = read_mps(path)
        ref, highs_seconds = highs_objective(path)
        eps = paper["eps"]
        row = {"problem": name, "paper_size": paper["size"],
               "original_size": "x".join(map(str, problem.original_size)),
               "standard_size": "x".join(map(str, problem.standard_size)), "eps": eps,
               "highs_objective": ref, "highs_seconds": highs_seconds}
        for label, kw in CONFIGS:
            _solve(problem, eps=eps, refine=False, max_iter=WARMUP_ITERATIONS, **kw)   # untimed
            r, seconds = _solve(problem, eps=eps, refine=False, **kw)   # the paper's algorithm
            row[f"{label}_status"] = r.status
            row[f"{label}_iterations"] = r.iterations
            row[f"{label}_seconds"] = seconds
            row[f"{label}_rel_error"] = abs(r.objective - ref) / max(1.0, abs(ref))
            if label == "gpu_outer":
                row["gpu_outer_readbacks_per_iteration"] = r.readbacks_per_iteration
        if name in baseline:
            row["baseline_seconds"], row["baseline_status"] = baseline[name]
            row["baseline_tree"] = base_tree
        if refine:
            # refinement alone, as measured before the robust options became solve()'s defaults below 3e-5
            kw = dict(eps=1e-8, backend="gpu", cholesky="outer", refine=True, **PAPER)
            _solve(problem, max_iter=WARMUP_ITERATIONS, **kw)                            # untimed
            r, seconds = _solve(problem, **kw)
            row.update({"gpu_refine_status": r.status, "gpu_refine_iterations": r.iterations,
                        "gpu_refine_seconds": seconds,
                        "gpu_refine_rel_error": abs(r.objective - ref) / max(1.0, abs(ref))})
        row.update({"paper_iterations": paper["iterations"], "paper_inner_seconds": paper["time_inner"],
                    "paper_outer_seconds": paper["time_outer"], "paper_matlab_iterations": paper["matlab_iterations"],
                    "paper_matlab_seconds": paper["matlab_time"]})
        rows.append(row)
        ctx.progress(f"{name}: gpu outer {row['gpu_outer_iterations']} it, {row['gpu_outer_seconds']:.2f} s, "
                     f"rel. error {row['gpu_outer_rel_error']:.1e} (paper {paper['iterations']} it)")
    return rows, claims(rows, refine), notes


def claims(rows, refine):
    if not rows:
        return []
    out = []
    runs = ("gpu_inner", "gpu_outer_square", "gpu_outer")
    bad = [r["problem"] for r in rows for k in runs
           if not (r[f"{k}_status"] == "optimal" and r[f"{k}_rel_error"] <= r["eps"])]
    worst = max(r[f"{k}_rel_error"] / r["eps"] for r in rows for k in runs)
    out.append(Claim("GPU reaches the paper's eps with relative objective error <= eps",
                     "all ten problems solved (Table 3)",
                     f"{len(rows) * len(runs) - len(bad)} of {len(rows) * len(runs)} runs (inner, outer "
                     f"square, outer triangle); largest error {worst:.2g} eps"
                     + (f"; not: {sorted(set(bad))}" if bad else "")))
    ratios = [r["gpu_outer_iterations"] / r["paper_iterations"] for r in rows]
    out.append(Claim("GPU iterations / paper's iterations", "1 (Table 3)",
                     f"from {min(ratios):.2f} to {max(ratios):.2f}; within a factor 1.5: "
                     f"{sum(1 / 1.5 <= q <= 1.5 for q in ratios)} of {len(ratios)}"))
    diffs = [abs(r["gpu_outer_iterations"] - r["numpy32_iterations"]) for r in rows]
    paper_diffs = [abs(r["paper_iterations"] - r["paper_matlab_iterations"]) for r in rows]
    out.append(Claim("GPU vs single-precision CPU (same algorithm) iterations, largest difference",
                     f"{max(paper_diffs)} (GPU vs MATLAB, these problems)",
                     f"{max(diffs)} (within 2: {sum(d <= 2 for d in diffs)} of {len(diffs)})"))
    inner = sum(r["gpu_inner_seconds"] for r in rows)
    square = sum(r["gpu_outer_square_seconds"] for r in rows)
    outer = sum(r["gpu_outer_seconds"] for r in rows)
    p_inner = sum(r["paper_inner_seconds"] for r in rows)
    p_outer = sum(r["paper_outer_seconds"] for r in rows)
    out.append(Claim("total GPU time, inner / outer Cholesky (outer with the square update, as the paper's)",
                     f"{p_inner:.2f} s / {p_outer:.2f} s = {p_inner / p_outer:.2f}",
                     f"{inner:.2f} s / {square:.2f} s = {inner / square:.2f}"))
    out.append(Claim("total GPU time, outer square / outer triangle update (beyond Table 3)",
                     "not in Table 3 (BrookGPU could not draw triangles)",
                     f"{square:.2f} s / {outer:.2f} s = {square / outer:.2f}"))
    fast = sum(r["gpu_fast_seconds"] for r in rows)
    highs = sum(r["highs_seconds"] for r in rows)
    slow = [r["problem"] for r in rows
            if not (r["gpu_fast_status"] == "optimal" and r["gpu_fast_rel_error"] <= r["eps"])]
    out.append(Claim("total GPU time, outer triangle / the same with adat, substitution and pivot steps in "
                     "one-pass forms (beyond the paper)", "not in Table 3",
                     f"{outer:.2f} s / {fast:.2f} s = {outer / fast:.2f} (HiGHS: {highs:.2f} s; "
                     f"{len(rows) - len(slow)} of {len(rows)} at the paper's eps"
                     + (f"; not: {slow}" if slow else "") + ")"))
    onepass = sum(r["gpu_onepass_seconds"] for r in rows)
    missed = [r["problem"] for r in rows
              if not (r["gpu_onepass_status"] == "optimal" and r["gpu_onepass_rel_error"] <= r["eps"])]
    what = (f"{STEPS_A_PASS} steps of L and of L^-1 a pass, two passes a solve, the packed one-pass adat, fan reductions "
            "with their terms in the first pass, fused vector operations and the primal correction")
    out.append(Claim(f"total GPU time, outer triangle / {what} (beyond the paper)",
                     "not in Table 3",
                     f"{outer:.2f} s / {onepass:.2f} s = {outer / onepass:.2f} ({len(rows) - len(missed)} of "
                     f"{len(rows)} at the paper's eps" + (f"; not: {missed}" if missed else "") + ")"))
    if all("baseline_seconds" in r for r in rows):
        base = sum(r["baseline_seconds"] for r in rows)
        ok = sum(r["baseline_status"] == "optimal" for r in rows)
        out.append(Claim("the faithful path (the --baseline tree, timed in the same run) / the fastest "
                         "options above (beyond the paper)",
                         "not in Table 3",
                         f"{base:.2f} s / {onepass:.2f} s = {base / onepass:.2f} "
                         f"(baseline {ok} of {len(rows)} optimal)"))
    if refine:
        ok = [r for r in rows if r["gpu_refine_status"] == "optimal" and r["gpu_refine_rel_error"] <= 1e-7]
        out.append(Claim("with refinement (beyond the paper): eps = 1e-8, relative objective error <= 1e-7",
                         "not reachable in single precision (section 7)", f"{len(ok)} of {len(rows)} problems"))
    return out


def plot(rows, fig, renderer):
    import numpy as np

    ax = fig.subplots()
    names = [r["problem"] for r in rows]
    x = np.arange(len(names))
    w = 0.2
    w = 0.16
    for i, (key, label) in enumerate((("paper_iterations", "paper (GPU)"), ("gpu_inner_iterations", "GPU inner"),
                                      ("gpu_outer_square_iterations", "GPU outer, square update"),
                                      ("gpu_outer_iterations", "GPU outer, triangle update"),
                                      ("numpy32_iterations", "numpy float32"))):
        ax.bar(x + (i - 2) * w, [r[key] for r in rows], w, label=label)
    ax.set_xticks(x)
    ax.set_xticklabels(names, rotation=30, fontsize=8)
    ax.set_ylabel("iterations")
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)


EXPERIMENT = Experiment(
    name="table3", title="interior-point method on NETLIB problems", paper="000 Table 3",
    sizes_software=[0], sizes_gpu=[0], run=run, plot=plot, repeat_software=1, repeat_gpu=1,
    size_name="problem",
    arguments=[("--problems", dict(type=lambda s: [v.strip() for v in s.split(",") if v.strip()],
                                   help=f"comma-separated subset of {', '.join(PROBLEMS)} (default: all on a GPU, "
                                        f"{', '.join(SOFTWARE_PROBLEMS)} on a software renderer)")),
               ("--no-refine", dict(action="store_true", help="skip the refine=True run at eps = 1e-8")),
               ("--baseline", dict(type=Path, default=None,
                                   help="a source tree of this project at an earlier commit (git worktree add "
                                        "DIR COMMIT): its faithful path is timed in the same run, for the "
                                        "goal of a tenth of its time"))])

if __name__ == "__main__":
    raise SystemExit(EXPERIMENT.main())
