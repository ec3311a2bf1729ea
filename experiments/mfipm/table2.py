"""Paper 002, Table 2: the share of the matrix-free IPM's solution time spent in PCG, in
operations with P^-1, and in the products A x and Aᵀ y.

Each problem is solved (settings of ``experiments.mfipm.common``) with ``profile=True``: the
back end times each part, and on the GPU waits for its work to finish at the end of each timed
part (``glFinish``), so that a part's time is its GPU time and not the time to queue its
passes (which costs some speed: the shares, not the totals, are the result). PCG is the time
inside the PCG solves (it contains the P^-1 and the products of its iterations); A x and Aᵀ y
also count the k products a preconditioner build makes (G_R e_i, 002 (7)), as the paper's
code must make them too. Both back ends: numpy64 (the CPU, as 002's serial code) and gpu;
``--preset paper`` solves with 002's method (on the GPU A in T-ELL with the dense rows apart).

Claims: 002's PCG share 62-90 %, P^-1 19-55 %, A x 12-37 %, Aᵀ y 11-34 %.
"""
from __future__ import annotations

import numpy as np

from experiments.harness import Claim, Experiment
from experiments.mfipm.common import (GRUCA_OPTION, PAPER_TABLE2, PRESET_OPTION, QAP_OPTION, QAP_SETTINGS_OPTION,
                                      bar_axis, preset, problems, settings, settings_label)
from experiments.mfipm.table3 import warm_up

#: the faithful paths only (table3 also times the GPU with the fan sums)
BACKENDS = ("numpy64", "gpu")

PARTS = ("pcg", "precondition", "fsax", "fsaty", "build")


def run(ctx):
    from gpgpu.lp import solve

    warm_up()
    rows = []
    for label, family, key, p in ctx.steps(problems(ctx), unit="problem"):
        for be in BACKENDS:
            kw = dict(method="matrix-free", backend=be, eps=1e-8, profile=True, preset=preset(ctx),
                      **settings(family, ctx, p))
            solve(p, **{**kw, "max_iter": 1})       # untimed: the textures of this size allocated
            r = solve(p, **kw)
            total = r.timers["total"]
            row = {"problem": label, "backend": be, "settings": settings_label(family, ctx), "preset": kw["preset"],
                   "status": r.status,
                   "iterations": r.iterations,
                   "pcg_iterations": r.pcg_iterations, "seconds": total,
                   **{f"{part}_percent": 100.0 * r.timers[part] / total for part in PARTS},
                   **{f"paper_{k}_percent": v for k, v in zip(("pcg", "precondition", "fsax", "fsaty"),
                                                              PAPER_TABLE2.get(key, (None,) * 4))}}
            rows.append(row)
            ctx.progress(f"{label} {be}: PCG {row['pcg_percent']:.0f}%, P^-1 {row['precondition_percent']:.0f}%, "
                         f"Ax {row['fsax_percent']:.0f}%, A^T y {row['fsaty_percent']:.0f}% of {total:.2f} s")
    return rows, claims(rows)


def claims(rows):
    def fmt(part):
        return "; ".join(f"{r['problem']} {r['backend']} {r[part + '_percent']:.0f}%" for r in rows)

    return [Claim("share of the solve time in PCG", "62-90 % (89 nug20, 90 nug30, 62-89 Gruca)", fmt("pcg")),
            Claim("share in operations with P^-1", "19-55 % (55 nug20, 54 nug30, 19-42 Gruca)", fmt("precondition")),
            Claim("share in A x", "12-37 %", fmt("fsax")),
            Claim("share in A^T y", "11-34 %", fmt("fsaty"))]


def plot(rows, fig, renderer):
    axes = fig.subplots(1, len(BACKENDS))
    for ax, be in zip(np.atleast_1d(axes), BACKENDS):
        sel = [r for r in rows if r["backend"] == be]
        x = np.arange(len(sel))
        for i, part in enumerate(PARTS[:4]):
            ax.bar(x + (i - 1.5) * 0.2, [r[f"{part}_percent"] for r in sel], 0.2, label=part)
        bar_axis(ax, [r["problem"] for r in sel], be, ylabel="% of solve time")


EXPERIMENT = Experiment(
    name="mfipm_table2", title="shares of the matrix-free IPM's time", paper="002 Table 2",
    sizes_software=[1024], sizes_gpu=[1024, 4096, 16384], run=run, plot=plot, size_name="N",
    arguments=[QAP_OPTION, QAP_SETTINGS_OPTION, GRUCA_OPTION, PRESET_OPTION])

if __name__ == "__main__":
    raise SystemExit(EXPERIMENT.main())
