"""Paper 002, Table 3: the matrix-free IPM's solve time and its sparse products' time, on the CPU
(the numpy64 back end: scipy CSR products in one thread, 002's "serial") and on the GPU (the
gpu back end: this project's fragment-shader kernels, float32 PCG with float64 refinement).

For each problem and back end: the solve (settings of ``experiments.mfipm.common``: Gruca-like
to eps = 1e-8, the QAP LPs for a fixed budget of iterations or, with ``--qap-settings solve``, to
eps = 1e-8; the CSV's ``settings`` column says which), its interior point and PCG
iterations, the accuracy reached (the worst of the three relative residuals of 000's (6.1)-(6.3))
and the objective's error against HiGHS where known; the time of one A x and one Aᵀ y (median of
repeats, GPU finished before and after), and the "SpMV time" of the solve = products made x
time per product (002 reports the products' total time). HiGHS's IPM time is given where it
ran here. Nothing timed is a first run: a small problem is solved first (the kernels compile),
each timed solve comes after one untimed iteration of the same solve (the textures of its size
allocated), and each timed product after one untimed product.
The GPU runs twice: with 000's halving sums (``gpu``, the faithful path) and with the fan sums
(``gpu-fan``, beyond the papers: ``sums="fan"``, 32 texels a fragment, fewer passes).

Claims: 002 "speed-up of these same kernels can approach ten times, though overall solution
time is reduced no more than four times"; nug20 in 1.60 s on a Tesla C2070 (2.19 s serial).
"""
from __future__ import annotations

import time

import numpy as np

from experiments.harness import Claim, Experiment, finish
from experiments.mfipm.common import (PAPER_TABLE3, QAP_OPTION, QAP_SETTINGS_OPTION, bar_axis, highs_reference,
                                      problems, settings, settings_label, settings_text,
                                      worst_residual)

#: (label, back end, options): the GPU twice, with 000's halving sums (the faithful path) and
#: with the fan sums (beyond the papers: 32 texels a fragment, fewer passes; gpgpu.reduce)
RUNS = (("numpy64", "numpy64", {}), ("gpu", "gpu", {}), ("gpu-fan", "gpu", {"sums": "fan"}))
BACKENDS = tuple(label for label, _, _ in RUNS)


def product_times(p, repeat) -> dict:
    """Seconds of one A x and one A^T y: scipy CSR (float64, as the numpy64 back end) and the
    GPU's SparseStream (ELLPACK and its transposed copy, as the gpu back end)."""
    from gpgpu import SparseStream, Stream

    A = p.A.tocsr()
    AT = A.T.tocsr()
    m, n = A.shape
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(n), rng.standard_normal(m)

    def med(f):
        f()
        finish()
        ts = []
        for _ in range(max(3, repeat)):
            finish()
            t0 = time.perf_counter()
            f()
            finish()
            ts.append(time.perf_counter() - t0)
        return float(np.median(ts))

    out = {"cpu_ax": med(lambda: A @ x), "cpu_aty": med(lambda: AT @ y)}
    S = SparseStream.from_scipy(A, format="ellpack")
    T = S.transposed()
    xs, ys = Stream.from_array(x), Stream.from_array(y)
    yo, xo = Stream.vector_of(m), Stream.vector_of(n)
    out["gpu_ax"] = med(lambda: S._product(xs, yo))
    out["gpu_aty"] = med(lambda: T._product(ys, xo))
    for s in (xs, ys, yo, xo):
        s.release()
    S.release()
    return out


def warm_up():
    from gpgpu.lp import gruca_like, solve

    solve(gruca_like(16, seed=1), method="matrix-free", backend="gpu", eps=1e-8, rank=4)


def run(ctx):
    from gpgpu.lp import solve

    warm_up()
    rows = []
    for label, family, key, p in ctx.steps(problems(ctx), unit="problem"):
        ref, highs_s = highs_reference(p, family, key)
        prod = product_times(p, ctx.repeat)
        for be, backend, options in RUNS:
            kw = dict(method="matrix-free", backend=backend, eps=1e-8, **settings(family, ctx, p), **options)
            solve(p, **{**kw, "max_iter": 1})                                       # untimed
            finish()
            t0 = time.perf_counter()
            r = solve(p, **kw)
            finish()
            seconds = time.perf_counter() - t0
            side = "cpu" if be == "numpy64" else "gpu"
            nprod = r.counts["fsax"] + r.counts["fsaty"]
            spmv = r.counts["fsax"] * prod[f"{side}_ax"] + r.counts["fsaty"] * prod[f"{side}_aty"]
            row = {"problem": label, "family": family, "backend": be, "settings": settings_label(family, ctx),
                   "rows": p.A.shape[0],
                   "nonzeros": int(p.A.nnz), "status": r.status, "iterations": r.iterations,
                   "pcg_iterations": r.pcg_iterations, "pcg_unconverged": r.pcg_unconverged,
                   "accuracy": worst_residual(r),
                   "objective_error": abs(r.objective - ref) / abs(ref) if ref else None,
                   "seconds": seconds, "seconds_per_pcg_iteration": seconds / max(r.pcg_iterations, 1),
                   "products": nprod, "ax_seconds": prod[f"{side}_ax"], "aty_seconds": prod[f"{side}_aty"],
                   "spmv_seconds": spmv, "highs_seconds": highs_s,
                   **{f"paper_{k}": v for k, v in zip(("serial", "8core", "gpu", "spmv_serial", "spmv_8core", "spmv_gpu"),
                                                      PAPER_TABLE3.get(key, (None,) * 6))}}
            rows.append(row)
            ctx.progress(f"{label} {be}: {r.status}, {r.iterations} its, {r.pcg_iterations} PCG, "
                         f"{seconds:.2f} s, accuracy {row['accuracy']:.1e}"
                         + (f", objective error {row['objective_error']:.1e}" if ref else ""))
    return rows, claims(rows, settings_text(ctx))


def claims(rows, how=None):
    by = {(r["problem"], r["backend"]): r for r in rows}
    names = list(dict.fromkeys(r["problem"] for r in rows))
    spmv, solve_ratio = [], []
    for nm in names:
        c, g = by.get((nm, "numpy64")), by.get((nm, "gpu"))
        if c and g:
            spmv.append(f"{nm} {(c['ax_seconds'] + c['aty_seconds']) / (g['ax_seconds'] + g['aty_seconds']):.2f}")
            solve_ratio.append(f"{nm} {c['seconds'] / g['seconds']:.2f} (per PCG iteration "
                               f"{c['seconds_per_pcg_iteration'] / g['seconds_per_pcg_iteration']:.2f})")
    out = [Claim("GPU SpMV speed-up over serial CPU (one A x + one A^T y)", "\"can approach ten times\" (0.6-10.7 in "
                 "Table 3)", "; ".join(spmv), "median times of one product, scipy CSR float64 vs SparseStream ELLPACK"),
           Claim("matrix-free IPM: CPU solve time / GPU solve time", "\"reduced no more than four times\" "
                 "(1.1-3.9 in Table 3)", "; ".join(solve_ratio),
                 "same settings on both back ends; their PCG iteration counts differ (float64 vs float32 PCG)")]
    fan = [f"{nm} {by[(nm, 'gpu')]['seconds'] / by[(nm, 'gpu-fan')]['seconds']:.2f}" for nm in names
           if (nm, "gpu") in by and (nm, "gpu-fan") in by]
    out.append(Claim("GPU solve time, halving sums / fan sums (beyond the papers)", "no figure in 002",
                     "; ".join(fan), "the same solve; the fan sums take ceil(log32) passes a sum instead of "
                     "ceil(log2) (a PCG iteration of nug12: about 30 passes instead of 75)"))
    for nm in ("nug20", "nug30"):
        c, g, gf = by.get((nm, "numpy64")), by.get((nm, "gpu")), by.get((nm, "gpu-fan"))
        if c and gf:
            out.append(Claim(f"{nm} solve time, GPU with fan sums (beyond the papers)", f"{PAPER_TABLE3[nm][2]} s "
                             "(Tesla C2070)", f"{gf['seconds']:.2f} s ({gf['iterations']} interior point and "
                             f"{gf['pcg_iterations']} PCG iterations, accuracy reached {gf['accuracy']:.1e})",
                             "as the row above, sums='fan'"))
        if c and g:
            paper = PAPER_TABLE3[nm]
            out.append(Claim(f"{nm} solve time: GPU, CPU", f"{paper[2]} s (Tesla C2070), {paper[0]} s (Opteron 2378, "
                             "serial)", f"{g['seconds']:.2f} s, {c['seconds']:.2f} s ({g['iterations']} / "
                             f"{c['iterations']} interior point and {g['pcg_iterations']} / {c['pcg_iterations']} "
                             f"PCG iterations, accuracy reached {g['accuracy']:.1e} / {c['accuracy']:.1e})",
                             f"{how or settings_text(None)}; 002 gives neither its tolerance nor its iteration "
                             "counts"))
    acc = [f"{r['problem']} {r['backend']} {r['objective_error']:.1e} ({r['status']})" for r in rows
           if r["objective_error"] is not None]
    out.append(Claim("objective vs HiGHS (relative)", "no figure in 002", "; ".join(acc) or "no reference here"))
    return out


def plot(rows, fig, renderer):
    ax1, ax2 = fig.subplots(1, 2)
    names = list(dict.fromkeys(r["problem"] for r in rows))
    x = np.arange(len(names))
    w = 0.8 / len(BACKENDS)
    for i, be in enumerate(BACKENDS):
        vals = [next((r["seconds"] for r in rows if r["problem"] == nm and r["backend"] == be), np.nan) for nm in names]
        sp = [next((r["spmv_seconds"] for r in rows if r["problem"] == nm and r["backend"] == be), np.nan) for nm in names]
        ax1.bar(x + (i - (len(BACKENDS) - 1) / 2) * w, vals, w, label=be)
        ax2.bar(x + (i - (len(BACKENDS) - 1) / 2) * w, sp, w, label=be)
    for ax, t in ((ax1, "solve time (s)"), (ax2, "SpMV time in the solve (s)")):
        bar_axis(ax, names, t, log=True)


EXPERIMENT = Experiment(
    name="mfipm_table3", title="matrix-free IPM and SpMV time, CPU vs GPU", paper="002 Table 3",
    sizes_software=[1024], sizes_gpu=[1024, 4096, 16384], run=run, plot=plot, size_name="N",
    repeat_software=1, repeat_gpu=3, arguments=[QAP_OPTION, QAP_SETTINGS_OPTION])

if __name__ == "__main__":
    raise SystemExit(EXPERIMENT.main())
