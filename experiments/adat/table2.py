"""Table 2 of paper 001 (Jung & O'Leary): weighted least squares, ill-conditioned problems.

As ``table1`` (same code), but the i-th diagonal element of D² is 10^(-4 + 8 i / (n - 1)),
i = 0 .. n-1, so the weights span eight orders of magnitude; A and b stay uniform on [0, 1].

Claims (section 5.3): "Ill-conditioned problems require more refinement iterations" (7-15
against 4-5 in Table 1); the refined error stays near 1e-10; more than 100% speed-up for
m >= 1536. To compare the iteration counts on the same machine, each m also solves the
random problem of Table 1 (untimed; column ``iterations_random``).
"""
from __future__ import annotations

import numpy as np

from experiments.adat.table1 import (MAXITER, TOL, common_claims, measure, paper_note, per_m_claims, plot_table,
                                     random_problem)
from experiments.adat.table1 import PAPER as PAPER1
from experiments.harness import Claim, Experiment

#: Table 2 of 001, transcribed: m -> (x0 error, refined error, iteration count, GPU x0 (s),
#: refine (s), total (s), CPU (s), speed-up)
PAPER = {
    512: ("2.92E-02", "1.16E-10", "7", "0.36", "0.02", "0.38", "0.20", "0.53"),
    1024: ("7.19E-02", "2.01E-10", "10", "0.48", "0.10", "0.58", "1.05", "1.81"),
    1536: ("9.35E-02", "2.37E-10", "13", "1.33", "0.30", "1.63", "3.41", "2.09"),
    2048: ("1.13E-01", "3.41E-10", "15", "3.00", "0.66", "3.66", "7.98", "2.18"),
}


def ill_conditioned_problem(m: int, seed: int = 0) -> tuple:
    """A and b uniform on [0, 1]; D²_ii = 10^(-4 + 8 i / (n - 1)) (section 5.3 of 001)."""
    A, _, b = random_problem(m, seed)
    n = A.shape[1]
    d = 10.0 ** (-4.0 + 8.0 * np.arange(n) / (n - 1))
    return A, d, b


def run(ctx):
    from gpgpu import lstsq_weighted

    rows = measure(ctx, ill_conditioned_problem, " (ill-conditioned)")
    for r in rows:
        r["iterations_random"] = lstsq_weighted(*random_problem(r["m"]), tol=TOL, maxiter=MAXITER, criterion="paper").iterations
    more = [r["m"] for r in rows if r["iterations"] > r["iterations_random"]]
    counts = ", ".join(f"{r['iterations']} vs {r['iterations_random']}" for r in rows)
    claims = per_m_claims(rows, PAPER) + common_claims(rows, PAPER) + [
        Claim("ill-conditioned problems need more refinement iterations (this table vs Table 1)",
              "7, 10, 13, 15 vs 4, 4, 4, 5 (m = 512 .. 2048)",
              f"{counts} (m = {', '.join(str(r['m']) for r in rows)}); more at "
              + ("every m" if len(more) == len(rows) else f"m = {more}" if more else "no m"),
              "same A and b, D² uniform for Table 1"),
    ]
    notes = [paper_note(PAPER, "Table 2"), paper_note(PAPER1, "Table 1"),
             "GPU x0 time here: upload of A, d and A D² b, forming and factoring A D² Aᵀ, both triangular "
             "solves on the GPU and the read-back of x0 (the paper read back L and timed the transfers too)."]
    return rows, claims, notes


def plot(rows, fig, renderer):
    plot_table(rows, fig, renderer, "ill-conditioned problems")


EXPERIMENT = Experiment(
    name="adat_table2", title="Weighted least squares, ill-conditioned problems (mixed-precision refinement)",
    paper="001 Table 2", sizes_software=[64, 128, 256, 512], sizes_gpu=[512, 1024, 1536, 2048],
    run=run, plot=plot, repeat_software=3, repeat_gpu=3, size_name="m")

if __name__ == "__main__":
    raise SystemExit(EXPERIMENT.main())
