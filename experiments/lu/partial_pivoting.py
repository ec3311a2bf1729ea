"""Paper 004 (LU-GPU, Galoppo et al., SC'05), the figure of LU with partial pivoting: the GPU
against ATLAS ``getrf`` on a 3.4 GHz Pentium IV.

The input is a random standard normal float32 matrix. The GPU runs ``lu_factor(A, "partial")``
(per step: the argmax of |A(k:n, k)| by a column reduction and one read-back of the pivot's
position, the row swap by the "parallel data transfer", then copy, normalization and
elimination; the upload is not timed); the CPU runs LAPACK ``sgetrf`` through scipy.

Claims (caption): the GPU is "35% faster for matrix size 3500 on the fastest GPU" (the 7800),
reported here as CPU/GPU - 1 at the largest n, and "follows ATLAS' execution time growth rate
closely" (log-log slopes). The fragments of the elimination kernel are checked against
(n-1)n(2n-1)/6, Table 1(a) of paper 000.
"""
from __future__ import annotations

from experiments.harness import Claim, Experiment
from experiments.lu.common import (SCALING_POINTER, common_notes, fragments_claim, growth_text,
                                   largest_common_n, measure, no_data_claim, plot_lu, rate_claims, times_at)

PIVOTING = "partial"
CPU_IMPL = "cpu_sgetrf"


def run(ctx):
    rows, notes = measure(ctx, PIVOTING, "sgetrf")
    return rows, claims(rows), common_notes(ctx, PIVOTING) + notes + [SCALING_POINTER]


def claims(rows):
    text = "GPU faster than CPU sgetrf by (CPU time / GPU time - 1)"
    paper = "+35% at n = 3500 (GeForce 7800 vs ATLAS getrf)"
    n = largest_common_n(rows, CPU_IMPL)
    if n is None:
        first = no_data_claim(text, paper)
    else:
        g, c = times_at(rows, n, CPU_IMPL)
        first = Claim(text, paper, f"{100 * (c / g - 1):+.0f}% at n = {n}")
    return [first,
            Claim("growth of the running time (log-log slope)", "the GPU follows ATLAS' growth rate closely",
                  growth_text(rows, CPU_IMPL), "least squares over the upper half of the sizes"),
            fragments_claim(rows)] + rate_claims(rows)


def plot(rows, fig, renderer):
    plot_lu(rows, fig, renderer, CPU_IMPL, "LU, partial pivoting")


EXPERIMENT = Experiment(
    name="lu_partial_pivoting", title="LU with partial pivoting on the GPU vs CPU sgetrf",
    paper="004 (LU, partial pivoting)",
    sizes_software=[32, 64, 128, 256, 512], sizes_gpu=[500, 1000, 1500, 2000, 2500, 3000, 3500],
    run=run, plot=plot, repeat_software=3, repeat_gpu=2)

if __name__ == "__main__":
    raise SystemExit(EXPERIMENT.main())
