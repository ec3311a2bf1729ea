"""Paper 004 (LU-GPU, Galoppo et al., SC'05), the figure of LU without pivoting: the GPU
against ATLAS ``getrf`` (which pivots) on a 3.4 GHz Pentium IV.

The input is a random float32 matrix made diagonally dominant (+ n I), so that elimination
without pivoting is stable. The GPU runs ``lu_factor(A, "none", check=False)`` (the upload and
the final zero-pivot scan are not timed); the CPU runs LAPACK ``sgetrf`` through scipy, which
pivots, as the paper compared with the pivoting ATLAS ``getrf`` (LAPACK has no LU without
pivoting).

Claims (caption): the GPU without pivoting is "comparable to the optimized ATLAS getrf()" (the
GPU/CPU time ratio at the largest n), and both grow as O(n^3) (log-log slopes). The fragments
of the elimination kernel are checked against (n-1)n(2n-1)/6, Table 1(a) of paper 000.

Not reproduced: the paper's fragment-processor scaling figure (LU without pivoting on a GeForce
6800 Ultra with some of its 16 fragment processors disabled, almost linear in their number).
The processors were switched off through the 2005 driver; OpenGL on a modern GPU or on
llvmpipe gives no way to run a draw on fewer shader cores, and varying llvmpipe's threads would
measure the CPU instead. The figure is left out, and a note in the report says so.
"""
from __future__ import annotations

from experiments.harness import Claim, Experiment
from experiments.lu.common import (SCALING_NOTE, common_notes, fragments_claim, growth_text,
                                   largest_common_n, measure, no_data_claim, plot_lu, rate_claims, times_at)

PIVOTING = "none"
CPU_IMPL = "cpu_sgetrf"


def run(ctx):
    rows, notes = measure(ctx, PIVOTING, "sgetrf")
    notes = common_notes(ctx, PIVOTING) + notes + [
        "The CPU sgetrf pivots (partial pivoting), as the paper's ATLAS getrf did; the GPU does not.",
        SCALING_NOTE]
    return rows, claims(rows), notes


def claims(rows):
    text = "GPU LU without pivoting / CPU sgetrf time"
    paper = "comparable, about 1 (GeForce 7800 vs ATLAS getrf, 3.4 GHz Pentium IV)"
    n = largest_common_n(rows, CPU_IMPL)
    if n is None:
        first = no_data_claim(text, paper)
    else:
        g, c = times_at(rows, n, CPU_IMPL)
        first = Claim(text, paper, f"{g / c:.2f} at n = {n}")
    return [first,
            Claim("growth of the running time (log-log slope)", "O(n^3) for GPU and CPU (slope 3)",
                  growth_text(rows, CPU_IMPL), "least squares over the upper half of the sizes"),
            fragments_claim(rows)] + rate_claims(rows)


def plot(rows, fig, renderer):
    plot_lu(rows, fig, renderer, CPU_IMPL, "LU without pivoting")


EXPERIMENT = Experiment(
    name="lu_no_pivoting", title="LU without pivoting on the GPU vs CPU sgetrf", paper="004 (LU, no pivoting)",
    sizes_software=[32, 64, 128, 256, 512], sizes_gpu=[500, 1000, 1500, 2000, 2500, 3000, 3500],
    run=run, plot=plot, repeat_software=3, repeat_gpu=2)

if __name__ == "__main__":
    raise SystemExit(EXPERIMENT.main())
