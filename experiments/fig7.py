"""Fig. 7 of paper 000 (Jung & O'Leary): Cholesky inner vs outer product vs LU, render-to-texture.

The same three algorithms as ``experiments.fig6`` (the inner-product Cholesky, the
outer-product Cholesky with the singlepass square update, LU-GPU without pivoting), measured
the same way, but every pass renders straight into its texture (``transfer="rtt"``), as
BrookGPU's p-buffers allow on Windows XP (section 6.1.2).

Claim (section 6.1.2): with RTT "the outer product Cholesky algorithm outperforms the inner
product version": the inner product subtraction runs a dynamic loop over fewer fragments
(n-k per step against (n-k)² for the update), so it is less parallel. We report the measured
outer/inner time ratio at the largest n, and (section 6.1.3) the square-update Cholesky
against LU. The CSV has the columns of fig6 but the copy-to-texture fragments.
"""
from __future__ import annotations

from experiments.fig6 import common_claims, measure, notes, plot_times, which_faster
from experiments.harness import Claim, Experiment


def claims_rtt(rows, sizes):
    n, t, shared = common_claims(rows, sizes)
    ratio = t["cholesky_outer_square"] / t["cholesky_inner"]
    return [
        Claim("Cholesky outer (square update) / inner time, render to texture",
              "below 1: \"the outer product Cholesky algorithm outperforms the inner product version\" "
              "with RTT (section 6.1.2)",
              f"{ratio:.2f} at n = {n} ({which_faster(ratio)})"),
    ] + shared


def run(ctx):
    rows = measure(ctx, "rtt")
    return rows, claims_rtt(rows, ctx.sizes), notes(rows, ctx.sizes)


def plot(rows, fig, renderer):
    plot_times(rows, fig, renderer, "render to texture (RTT, section 6.1.2)")


EXPERIMENT = Experiment(
    name="fig7", title="Cholesky inner vs outer (square update) vs LU, render-to-texture", paper="000 Fig. 7",
    sizes_software=[64, 128, 192, 256, 384, 512], sizes_gpu=[256, 512, 1024, 1536, 2048],
    run=run, plot=plot, repeat_software=3, repeat_gpu=2)

if __name__ == "__main__":
    raise SystemExit(EXPERIMENT.main())
