"""Paper 004 (LU-GPU, Galoppo et al., SC'05), the figure of LU with full pivoting: the GPU
against LAPACK ``getc2`` of the Intel Math Kernel Library.

The input is a random standard normal float32 matrix. The GPU runs ``lu_factor(A, "full")``
(per step: the argmax of |A| over the trailing submatrix by a 2-D reduction and one read-back
of the pivot's position, the row and the column swap by the "parallel data transfer", then
copy, normalization and elimination; the upload is not timed); the CPU runs LAPACK ``sgetc2``
through scipy.

``sgetc2`` is unblocked O(n^3) scalar code (a full search, then a rank-1 update, per step): it
is timed once above n = 1024 and not run above n = 2048, so that a run on a GPU stays within
about two minutes; the claim uses the largest n where both ran.

Claim (caption): the GPU is "an order of magnitude faster than the implementation of LAPACK
getc2() in the Intel Math Kernel Library" (CPU/GPU time ratio). The fragments of the
elimination kernel are checked against (n-1)n(2n-1)/6, Table 1(a) of paper 000.
"""
from __future__ import annotations

from experiments.harness import Claim, Experiment
from experiments.lu.common import (SCALING_POINTER, common_notes, fragments_claim, growth_text,
                                   largest_common_n, measure, no_data_claim, plot_lu, rate_claims, times_at)

PIVOTING = "full"
CPU_IMPL = "cpu_sgetc2"
GETC2_MAX_N = 2048  # no sgetc2 above this size
GETC2_SINGLE_ABOVE = 1024  # one sgetc2 run above this size


def run(ctx):
    rows, notes = measure(ctx, PIVOTING, "sgetc2", cpu_max_n=GETC2_MAX_N, cpu_single_above=GETC2_SINGLE_ABOVE)
    notes = common_notes(ctx, PIVOTING) + notes + [
        "sgetc2 is LAPACK's unblocked full-pivoting LU (the paper's was the one of Intel MKL).",
        SCALING_POINTER]
    return rows, claims(rows), notes


def claims(rows):
    text = "CPU sgetc2 time / GPU time"
    paper = "about 10 or more (an order of magnitude faster than getc2 of Intel MKL)"
    n = largest_common_n(rows, CPU_IMPL)
    if n is None:
        first = no_data_claim(text, paper)
    else:
        g, c = times_at(rows, n, CPU_IMPL)
        first = Claim(text, paper, f"{c / g:.1f} at n = {n}")
    return [first,
            Claim("growth of the running time (log-log slope)", "O(n^3) (not stated; for reference)",
                  growth_text(rows, CPU_IMPL), "least squares over the upper half of the sizes"),
            fragments_claim(rows)] + rate_claims(rows)


def plot(rows, fig, renderer):
    plot_lu(rows, fig, renderer, CPU_IMPL, "LU, full pivoting")


EXPERIMENT = Experiment(
    name="lu_full_pivoting", title="LU with full pivoting on the GPU vs CPU sgetc2", paper="004 (LU, full pivoting)",
    sizes_software=[32, 64, 128, 256, 512], sizes_gpu=[256, 512, 1024, 1536, 2048],
    run=run, plot=plot, repeat_software=3, repeat_gpu=2)

if __name__ == "__main__":
    raise SystemExit(EXPERIMENT.main())
