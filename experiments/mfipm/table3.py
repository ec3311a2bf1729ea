"""Paper 002, Table 3: the matrix-free IPM's solve time and its sparse products' time, on the CPU
(the numpy64 back end: scipy CSR products in one thread, 002's "serial"), on all the CPU's cores
(``numpy64-threads``, 002's "8 core": the same back end with ``threads=--threads``, default
os.cpu_count(); its products in a thread pool over blocks of rows, A^T y from a row-wise copy
of A^T: see :mod:`gpgpu.lp.matrix_free_numpy`; scipy's CSR product releases the GIL, so the
blocks run at once) and on the GPU (the gpu back end: this project's fragment-shader kernels,
float32 PCG with float64 refinement). Where threadpoolctl is installed, the serial run limits
BLAS (the preconditioner's dense products) to one thread and the threaded run to --threads;
without it BLAS uses what OpenBLAS chooses in both (the CSV's ``blas_threads`` says which).

002's GPU kernel is DHTELL2: "one block to handle any dense rows separately, then a half warp
(sixteen threads) per row using a transposed ELLPACK format". A fragment computes one output
texel and cannot share a row's sum with other fragments, so no pass splits a row over threads;
the nearest the pipeline draws is ``gpu-tell``: transposed ELLPACK (``format="tell"``,
consecutive rows read consecutive texels at each step) with the dense rows and columns apart,
the dense rows' inner products all at once (:func:`gpgpu.sparse.tell_dense_part`). ``gpu``
keeps plain ELLPACK (one fragment a row, each reading along its texture row).

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
The GPU runs five times: ELLPACK with the defaults (``gpu``: PCG's iteration fused, seven passes,
beyond the papers: :mod:`gpgpu.lp.matrix_free_fused`), ELLPACK with 002's kernels and 000's
halving sums (``gpu-002``, ``fused=False``), T-ELL with the dense part (``gpu-tell``, DHTELL2's
nearest), ELLPACK with 002's kernels and the fan sums (``gpu-fan``, beyond the papers:
``sums="fan"``, 32 texels a fragment, fewer passes) and the fast preset (``gpu-fast``, beyond the
papers: ``preset="fast"``, the packed format, two entries an RGBA texel, with the fan sums; PCG's
iterations drawn from recorded plans, as in every GPU run).

``--preset paper`` runs every solve with 002's method as the project draws it
(``preset="paper"``: the fixed regularisation schedule, no refinement, PCG's scalars read every
iteration; on the GPU T-ELL with the dense part and 002's kernels, so ``gpu-tell`` is then the
paper preset as it stands, ``gpu`` and ``gpu-002`` the same with ELLPACK, ``gpu-fan`` with the fan
sums); ``gpu-fast`` keeps the fast preset. The CSV's ``preset`` column says which ran.

Problems: ``--sizes`` N and ``--gruca`` names (Table 3's 64kx64k0, 96kx128-0 and 256x256-0:
``experiments.mfipm.common``, whose notes say how the last two were sized), and ``--qap``.

Claims: 002 "speed-up of sparse matrix-vector kernels using all 8 cores ... between two and six
times, giving at most a threefold speed-up of the IPM solution time"; "speed-up of these same
kernels [GPU] can approach ten times, though overall solution time is reduced no more than four
times"; the abstract's "a comparison of the speed-up achieved using a many-core GPU
implementation with that for a multi-core CPU implementation indicates the former has better
potential"; nug20 in 1.60 s on a Tesla C2070 (2.19 s serial, 1.18 s on 8 cores).
"""
from __future__ import annotations

import contextlib
import os
import time

import numpy as np

from experiments.harness import Claim, Experiment, finish, positive_int
from experiments.mfipm.common import (GRUCA_OPTION, PAPER_TABLE3, PRESET_OPTION, QAP_OPTION, QAP_SETTINGS_OPTION,
                                      bar_axis, highs_reference, preset, problems, settings, settings_label,
                                      settings_text, worst_residual)

#: (label, back end, options): the CPU in one thread (002's serial) and in --threads (002's
#: 8 core; ``threads`` filled in by run()); the GPU five times: ELLPACK (the defaults: PCG's
#: iteration fused, gpgpu.lp.matrix_free_fused), ELLPACK with 002's kernels and 000's halving
#: sums (``fused=False``), T-ELL with the dense part (DHTELL2's nearest), ELLPACK with 002's
#: kernels and the fan sums (beyond the papers: 32 texels a fragment, fewer passes;
#: gpgpu.reduce), the fast preset (packed, fan sums). Each run's options go over
#: ``--preset``'s (with "paper": T-ELL and 002's kernels already; ``gpu`` names ELLPACK)
RUNS = (("numpy64", "numpy64", {}), ("numpy64-threads", "numpy64", {"threads": None}),
        ("gpu", "gpu", {"format": "ellpack"}), ("gpu-002", "gpu", {"format": "ellpack", "fused": False}),
        ("gpu-tell", "gpu", {"format": "tell"}), ("gpu-fan", "gpu", {"sums": "fan", "fused": False}),
        ("gpu-fast", "gpu", {"preset": "fast"}))
BACKENDS = tuple(label for label, _, _ in RUNS)
#: which product times a run's SpMV time is made of
SIDE = {"numpy64": "cpu", "numpy64-threads": "cpu_threads", "gpu": "gpu", "gpu-002": "gpu", "gpu-tell": "gpu_tell",
        "gpu-fan": "gpu",
        "gpu-fast": "gpu_packed"}
THREADS_OPTION = ("--threads", {"type": positive_int, "default": None,
                                "help": "threads of the multi-core CPU run (default: os.cpu_count())"})


def blas_threads(n):
    """A context that limits BLAS to n threads (threadpoolctl), or does nothing without it;
    answers (context, label for the CSV)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext(), "default"
    return threadpool_limits(limits=n, user_api="blas"), str(n)


def product_times(p, repeat, threads: int = 1) -> dict:
    """Seconds of one A x and one A^T y: scipy CSR (float64, as the numpy64 back end) in one
    thread and in ``threads`` (ThreadedCSR, as numpy64 with threads), and the GPU's
    SparseStream in ELLPACK, in T-ELL with the dense part and packed (each with its transposed
    copy, as the gpu back end with format "ellpack", "tell" and "packed")."""
    from gpgpu import SparseStream, Stream
    from gpgpu.lp.matrix_free_numpy import ThreadedCSR

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
    TA, TAT = ThreadedCSR(A, threads), ThreadedCSR(AT, threads)
    out["cpu_threads_ax"], out["cpu_threads_aty"] = med(lambda: TA @ x), med(lambda: TAT @ y)
    TA.close(), TAT.close()
    xs, ys = Stream.from_array(x), Stream.from_array(y)
    yo, xo = Stream.vector_of(m), Stream.vector_of(n)
    for side, fmt in (("gpu", "ellpack"), ("gpu_tell", "tell"), ("gpu_packed", "packed")):
        S = SparseStream.from_scipy(A, format=fmt)
        T = S.transposed()
        out[f"{side}_ax"] = med(lambda: S._product(xs, yo))
        out[f"{side}_aty"] = med(lambda: T._product(ys, xo))
        S.release()
    for s in (xs, ys, yo, xo):
        s.release()
    return out


def warm_up():
    from gpgpu.lp import gruca_like, solve

    for options in ({"format": "ellpack"}, {"format": "tell"}, {"preset": "fast"}):
        solve(gruca_like(16, seed=1), method="matrix-free", backend="gpu", eps=1e-8, rank=4, **options)


def run(ctx):
    from gpgpu.lp import solve

    threads = ctx.options.get("threads") or os.cpu_count() or 1
    warm_up()
    rows = []
    for label, family, key, p in ctx.steps(problems(ctx), unit="problem"):
        ref, highs_s = highs_reference(p, family, key)
        prod = product_times(p, ctx.repeat, threads)
        for be, backend, options in RUNS:
            if "threads" in options:
                options = dict(options, threads=threads)
            options = {"preset": preset(ctx), **options}               # a run's own preset wins (gpu-fast)
            kw = dict(method="matrix-free", backend=backend, eps=1e-8, **settings(family, ctx, p), **options)
            limit, blas = blas_threads(threads if be == "numpy64-threads" else 1)
            with limit:
                solve(p, **{**kw, "max_iter": 1})                                       # untimed
                finish()
                t0 = time.perf_counter()
                r = solve(p, **kw)
                finish()
                seconds = time.perf_counter() - t0
            side = SIDE[be]
            nprod = r.counts["fsax"] + r.counts["fsaty"]
            spmv = r.counts["fsax"] * prod[f"{side}_ax"] + r.counts["fsaty"] * prod[f"{side}_aty"]
            row = {"problem": label, "family": family, "backend": be, "settings": settings_label(family, ctx),
                   "preset": options["preset"],
                   "threads": threads if be == "numpy64-threads" else 1,
                   "blas_threads": blas if backend == "numpy64" else "",
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


def _ratios(by, names, num, den, per_iteration=False):
    """"name ratio" of the solve times (and per PCG iteration) or of one A x + one A^T y."""
    out = []
    for nm in names:
        c, g = by.get((nm, num)), by.get((nm, den))
        if not (c and g):
            continue
        if per_iteration:
            out.append(f"{nm} {c['seconds'] / g['seconds']:.2f} (per PCG iteration "
                       f"{c['seconds_per_pcg_iteration'] / g['seconds_per_pcg_iteration']:.2f})")
        else:
            out.append(f"{nm} {(c['ax_seconds'] + c['aty_seconds']) / (g['ax_seconds'] + g['aty_seconds']):.2f}")
    return out


def _paper_ratios(i, j) -> str:
    """002's Table 3 column i over column j, as "lo-hi"."""
    r = [v[i] / v[j] for v in PAPER_TABLE3.values()]
    return f"{min(r):.1f}-{max(r):.1f}"


def claims(rows, how=None):
    by = {(r["problem"], r["backend"]): r for r in rows}
    names = list(dict.fromkeys(r["problem"] for r in rows))
    spmv = _ratios(by, names, "numpy64", "gpu")
    solve_ratio = _ratios(by, names, "numpy64", "gpu", per_iteration=True)
    threads = next((r.get("threads") for r in rows if r["backend"] == "numpy64-threads"), None)
    out = [Claim("GPU SpMV speed-up over serial CPU (one A x + one A^T y)", f"\"can approach ten times\" ({_paper_ratios(3, 5)} in "
                 "Table 3)", "; ".join(spmv), "median times of one product, scipy CSR float64 vs SparseStream ELLPACK"),
           Claim("matrix-free IPM: CPU solve time / GPU solve time", "\"reduced no more than four times\" "
                 f"({_paper_ratios(0, 2)} in Table 3)", "; ".join(solve_ratio),
                 "same settings on both back ends; their PCG iteration counts differ (float64 vs float32 PCG)")]
    # the multi-core column (002's 8 core)
    mc_spmv = _ratios(by, names, "numpy64", "numpy64-threads")
    mc_solve = _ratios(by, names, "numpy64", "numpy64-threads", per_iteration=True)
    out.append(Claim("multi-core SpMV speed-up over serial CPU (one A x + one A^T y)",
                     f"\"between two and six times\" on 8 cores ({_paper_ratios(3, 4)} in Table 3)",
                     "; ".join(mc_spmv) or "not run", f"scipy CSR in one thread vs ThreadedCSR in {threads} threads "
                     "(row blocks; A^T y from a CSR copy of A^T); the same float64 answers"))
    out.append(Claim("multi-core solve speed-up over serial CPU", "\"at most a threefold speed-up\" on 8 cores "
                     f"({_paper_ratios(0, 1)} in Table 3)", "; ".join(mc_solve) or "not run",
                     f"numpy64 with threads={threads} vs threads=1 (the same iterations: the products' answers are "
                     "the serial ones); BLAS threads as the CSV's blas_threads"))
    gm_spmv = _ratios(by, names, "numpy64-threads", "gpu-tell")
    gm_solve = _ratios(by, names, "numpy64-threads", "gpu-tell", per_iteration=True)
    verdict = "no pair in this run"
    if gm_solve:
        wins = [nm for nm in names if (nm, "numpy64-threads") in by and (nm, "gpu-tell") in by
                and by[(nm, "gpu-tell")]["seconds"] < by[(nm, "numpy64-threads")]["seconds"]]
        verdict = (f"met on {len(wins)} of {len(gm_solve)} problems" if wins else
                   f"missed: the multi-core CPU solves faster on all {len(gm_solve)} problems")
    out.append(Claim("GPU vs multi-core CPU: multi-core time / GPU time (solve; SpMV)",
                     "abstract: the GPU \"has better potential\"; Table 3 solve "
                     f"{_paper_ratios(1, 2)}, SpMV {_paper_ratios(4, 5)} (8 cores / GPU)",
                     f"{verdict}: solve " + ("; ".join(gm_solve) or "-") + "; SpMV " + ("; ".join(gm_spmv) or "-"),
                     f"numpy64 in {threads} threads vs the GPU with T-ELL and the dense part (DHTELL2's nearest)"))
    tell_spmv = _ratios(by, names, "gpu", "gpu-tell")
    tell_solve = _ratios(by, names, "gpu", "gpu-tell", per_iteration=True)
    out.append(Claim("GPU, ELLPACK time / T-ELL with the dense part time (solve; SpMV)",
                     "002: transposed ELLPACK \"beneficial for large problems\" (DHTELL2; no figure for ELLPACK)",
                     "solve " + ("; ".join(tell_solve) or "-") + "; SpMV " + ("; ".join(tell_spmv) or "-"),
                     "a fragment cannot split a row over threads (one fragment, one output texel), so T-ELL here "
                     "is one fragment a row reading consecutive texels, not DHTELL2's half warp a row"))
    fan = [f"{nm} {by[(nm, 'gpu-002')]['seconds'] / by[(nm, 'gpu-fan')]['seconds']:.2f}" for nm in names
           if (nm, "gpu-002") in by and (nm, "gpu-fan") in by]
    out.append(Claim("GPU solve time, halving sums / fan sums (beyond the papers)", "no figure in 002",
                     "; ".join(fan), "the same solve with 002's kernels (fused=False); the fan sums take "
                     "ceil(log32) passes a sum instead of ceil(log2) (a PCG iteration of nug12: about 30 passes "
                     "instead of 75)"))
    fused = [f"{nm} {by[(nm, 'gpu-002')]['seconds'] / by[(nm, 'gpu')]['seconds']:.2f}" for nm in names
             if (nm, "gpu-002") in by and (nm, "gpu") in by]
    out.append(Claim("GPU solve time, 002's kernels / the fused PCG iteration (beyond the papers)", "no figure in 002",
                     "; ".join(fused), "ELLPACK both; fused=False draws 002's kernels (about 30 dependent passes a "
                     "PCG iteration), the default seven (gpgpu.lp.matrix_free_fused)"))
    fast = _ratios(by, names, "numpy64", "gpu-fast", per_iteration=True)
    out.append(Claim("matrix-free IPM: CPU solve time / GPU solve time, fast preset (beyond the papers)",
                     f"\"reduced no more than four times\" ({_paper_ratios(0, 2)} in Table 3)", "; ".join(fast) or "not run",
                     "numpy64 in one thread vs the GPU with preset='fast' (packed products, fan sums); per PCG "
                     "iteration, as their PCG iteration counts differ"))
    for nm in ("nug20", "nug30"):
        c, g, gf = by.get((nm, "numpy64")), by.get((nm, "gpu")), by.get((nm, "gpu-fan"))
        if c and gf:
            out.append(Claim(f"{nm} solve time, GPU with fan sums (beyond the papers)", f"{PAPER_TABLE3[nm][2]} s "
                             "(Tesla C2070)", f"{gf['seconds']:.2f} s ({gf['iterations']} interior point and "
                             f"{gf['pcg_iterations']} PCG iterations, accuracy reached {gf['accuracy']:.1e})",
                             "as the row above, sums='fan'"))
        if c and g:
            paper = PAPER_TABLE3[nm]
            mc = by.get((nm, "numpy64-threads"))
            mc_text = f"; {mc['seconds']:.2f} s on {mc['threads']} threads" if mc else ""
            out.append(Claim(f"{nm} solve time: GPU, CPU", f"{paper[2]} s (Tesla C2070), {paper[0]} s (Opteron 2378, "
                             f"serial); {paper[1]} s (8 cores)", f"{g['seconds']:.2f} s, {c['seconds']:.2f} s{mc_text} "
                             f"({g['iterations']} / "
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
    repeat_software=1, repeat_gpu=3,
    arguments=[QAP_OPTION, QAP_SETTINGS_OPTION, GRUCA_OPTION, THREADS_OPTION, PRESET_OPTION])

if __name__ == "__main__":
    raise SystemExit(EXPERIMENT.main())
