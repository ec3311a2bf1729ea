"""Conjugate gradients on the GPU against scipy's cg in float32 and float64 (paper 003, which
solved its systems by CG on the GPU following Shewchuk's listing).

2-D Poisson on a k x k grid (sizes = k), b random, x0 = 0, tol 1e-5 (scipy's meaning). Every
solver's true residual ||b - A x_k|| / ||b|| is computed in float64 from its iterate after each
iteration (the callback), so the histories compare like with like. The GPU's main series is
paper 003 as printed, ``gpgpu.cg(A, b, preset="paper")``: A in 003's storage (the corrigan
format: values and column textures, a program per non-zero count, rows and columns sorted, the
answer unsorted), the dot products summed over 003's pyramid, Shewchuk's listing with
r = b - A x every 50 iterations and the recurrence's ||r|| deciding convergence; beside it the
same preset with ping-pong sums, and with paper 002's ELLPACK (one program, one pass). The CSV has one row per
(k, solver, iteration); the last row of each run carries its iteration count and time: the
median of the timed runs, which have no callback and come after the run with the callback
(it compiles the GPU's kernels, untimed).

Claims: the GPU takes scipy float32's iteration count to within 10% and reaches its residual.
"""
from __future__ import annotations

import time

import numpy as np
import scipy.sparse.linalg as spl

from experiments.cg.common import poisson2d
from experiments.harness import Claim, Experiment, finish

TOL = 1e-5
#: solver -> (storage, sums) of the GPU's, each cg(preset="paper"); the first is the main series
GPU = {"gpu_corrigan_pyramid": ("corrigan", "pyramid"), "gpu_corrigan_pingpong": ("corrigan", "pingpong"),
       "gpu_ellpack_pyramid": ("ellpack", "pyramid")}
SOLVERS = tuple(GPU) + ("scipy_float32", "scipy_float64")
MAIN = "gpu_corrigan_pyramid"


def solve(A, b, solver, callback=None):
    import gpgpu

    if solver in GPU:
        storage, sums = GPU[solver]
        res = gpgpu.cg(A, b, rtol=TOL, preset="paper", format=storage, reduction=sums, callback=callback)
        return res[0], res[1], res.iterations
    dtype = np.float32 if solver.endswith("32") else np.float64
    count = []

    def cb(xk):
        count.append(1)
        if callback is not None:
            callback(xk)
    x, info = spl.cg(A.astype(dtype), b.astype(dtype), rtol=TOL, callback=cb, maxiter=10 * A.shape[0])
    return x, info, len(count)


def run(ctx):
    rows = []
    for k in ctx.steps(ctx.sizes):
        A = poisson2d(k)
        b = np.random.default_rng(k).standard_normal(A.shape[0])
        bn = np.linalg.norm(b)
        for solver in SOLVERS:
            hist = []
            solve(A, b, solver, callback=lambda xk: hist.append(np.linalg.norm(b - A @ xk) / bn))
            times = []
            for _ in range(ctx.repeat):
                finish()
                t0 = time.perf_counter()
                x, info, its = solve(A, b, solver)
                finish()
                times.append(time.perf_counter() - t0)
            for i, r in enumerate(hist, start=1):
                rows.append({"k": k, "unknowns": k * k, "solver": solver, "iteration": i, "relative_residual": r})
            rows[-1].update(iterations=its, info=info, seconds=float(np.median(times)),
                            final_residual=float(np.linalg.norm(b - A @ x) / bn))
            ctx.progress(f"k={k} {solver}: {its} iterations, {rows[-1]['seconds']:.3f} s, "
                         f"residual {rows[-1]['final_residual']:.2e}")
    return rows, claims(rows)


def claims(rows):
    last = {(r["k"], r["solver"]): r for r in rows if "iterations" in r}
    ks = sorted({k for k, _ in last})
    k = ks[-1]
    g, s32, s64 = last[(k, MAIN)], last[(k, "scipy_float32")], last[(k, "scipy_float64")]
    ell = last[(k, "gpu_ellpack_pyramid")]
    within = [abs(last[(kk, MAIN)]["iterations"] - last[(kk, "scipy_float32")]["iterations"])
              <= 0.1 * last[(kk, "scipy_float32")]["iterations"] for kk in ks]
    return [
        Claim("GPU CG iterations (003's sorted storage, pyramid sums) / scipy float32 cg iterations to tol 1e-5",
              "the same algorithm (Shewchuk's CG, 003)",
              f"{g['iterations']} / {s32['iterations']} at k = {k} (within 10% at {sum(within)} of {len(ks)} sizes); "
              f"float64: {s64['iterations']}; ELLPACK: {ell['iterations']}"),
        Claim("final true relative residual, GPU vs scipy float32", "same precision, same answer",
              f"{g['final_residual']:.2e} vs {s32['final_residual']:.2e} at k = {k}"),
        Claim("GPU time per CG iteration / scipy float32's", "no figure in 003",
              f"{g['seconds'] / g['iterations'] / (s32['seconds'] / s32['iterations']):.2f} at k = {k}"),
        Claim("pyramid / ping-pong dot products (two alternating textures), CG time",
              "003 chose the pyramid, \"intuitive (yet inefficient)\", over ping-ponging",
              f"{g['seconds'] / last[(k, 'gpu_corrigan_pingpong')]['seconds']:.2f} at k = {k}"),
        Claim("003's sorted storage / ELLPACK (002), CG time", "no figure in 003",
              f"{g['seconds'] / ell['seconds']:.2f} at k = {k}"),
    ]


def plot(rows, fig, renderer):
    ax = fig.subplots()
    k = max(r["k"] for r in rows)
    for solver, style in zip(SOLVERS, ("-", "--", (0, (5, 1)), ":", "-.")):
        pts = [(r["iteration"], r["relative_residual"]) for r in rows if r["k"] == k and r["solver"] == solver]
        if pts:
            ax.plot(*zip(*pts), linestyle=style, label=solver.replace("_", " ") + (" (003)" if solver == MAIN else ""))
    ax.axhline(TOL, color="grey", lw=0.5)
    ax.set_yscale("log")
    ax.set_xlabel("iteration")
    ax.set_ylabel("||b - A x_k|| / ||b||")
    ax.set_title(f"2-D Poisson, {k} x {k} grid", fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)


EXPERIMENT = Experiment(
    name="cg_convergence", title="conjugate gradients: GPU vs scipy float32 and float64", paper="003 (CG)",
    sizes_software=[32, 64], sizes_gpu=[64, 128, 256], run=run, plot=plot,
    repeat_software=3, repeat_gpu=3, size_name="k")

if __name__ == "__main__":
    raise SystemExit(EXPERIMENT.main())
