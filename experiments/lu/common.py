"""What the three LU experiments of paper 004 share: the input, the GPU and CPU measurements,
the residual check, the claim helpers and the plot.

Per size n, one row for the GPU (``lu_factor`` of ``gpgpu.lu``, the factor already uploaded, not
timed; ``check=False`` as the papers time it) and one for LAPACK on the CPU in float32 through
scipy (``sgetrf`` for no and partial pivoting, as the paper's ATLAS ``getrf``; ``sgetc2`` for full
pivoting, as the paper's Intel MKL ``getc2``). GPU rows also carry the fragments of the
elimination kernel and of all kernels (occlusion queries, an extra untimed run), the passes, and
the pivot read-backs (one texel, the pivot's position, per step: n with pivoting, 0 without).
Before the first size, one untimed run of each side on an 8 x 8 matrix compiles the shaders.
Every row carries the relative residual ||P A Q - L U||_F / ||A||_F of its factor, computed in
float64 after the timing, so that no timing is of a wrong factorization.
"""
from __future__ import annotations

import os
import statistics
import time

import numpy as np

from experiments.common import general_matrix, lu_gpu
from experiments.harness import Claim, counted, limit_claims, line_plot, median_by, release, timed, update_rate
from gpgpu import Stream

GPU = "gpu"
#: CPU routine -> its label in the plot
CPU = {
    "sgetrf": "LAPACK sgetrf (partial pivoting, blocked)",
    "sgetc2": "LAPACK sgetc2 (full pivoting, unblocked)",
}

SCALING_FIGURE = "fragment-processor scaling figure"
SCALING_NOTE = (
    f"Not reproduced: the {SCALING_FIGURE} of 004 (LU without pivoting on a GeForce 6800 Ultra "
    "with some of its fragment processors disabled, showing an almost linear speed-up with "
    "their number). The processors were disabled through the 2005 NVIDIA driver; neither a "
    "modern GPU nor llvmpipe lets OpenGL choose how many shader cores run a draw, and scaling "
    "the number of llvmpipe threads (LP_NUM_THREADS) would measure the CPU, not the GPU's "
    "fragment processors, so the figure is left out rather than imitated."
)
SCALING_POINTER = f"The {SCALING_FIGURE} of 004 is not reproduced (see lu_no_pivoting)."


def test_matrix(n: int, pivoting: str, seed: int = 0) -> np.ndarray:
    """Random standard normal float32; + n I without pivoting (diagonally dominant, stable)."""
    A = general_matrix(n, seed)
    if pivoting == "none":
        A = A + np.float32(n) * np.eye(n, dtype=np.float32)
    return A


def elimination_formula(n: int) -> int:
    """Fragments of the elimination kernel, Table 1(a) of 000: sum of (n-k-1)^2 = (n-1)n(2n-1)/6."""
    return (n - 1) * n * (2 * n - 1) // 6


def permutation(swaps) -> np.ndarray:
    """LAPACK's interchanges (0-based, as scipy returns them) as a permutation: perm[i] is the
    original index that ends at position i."""
    perm = np.arange(len(swaps))
    for i, p in enumerate(swaps):
        perm[[i, p]] = perm[[p, i]]
    return perm


def residual(A: np.ndarray, LU: np.ndarray, row_perm, col_perm) -> float:
    """||A[row_perm][:, col_perm] - L U||_F / ||A||_F in float64 (unit lower L, U of one array)."""
    LU = np.asarray(LU, dtype=np.float64)
    L = np.tril(LU, -1) + np.eye(LU.shape[0])
    PAQ = np.asarray(A, dtype=np.float64)[np.asarray(row_perm)][:, np.asarray(col_perm)]
    return float(np.linalg.norm(PAQ - L @ np.triu(LU)) / np.linalg.norm(PAQ))


def cpu_factor(routine: str, B: np.ndarray):
    """Factor B (Fortran-ordered float32, overwritten) -> (LU, row_perm, col_perm)."""
    from scipy.linalg import lapack

    n = B.shape[0]
    if routine == "sgetrf":
        lu, piv, info = lapack.sgetrf(B, overwrite_a=1)
        cols = np.arange(n)
    elif routine == "sgetc2":
        lu, piv, jpiv, info = lapack.sgetc2(B, overwrite_a=1)
        cols = permutation(jpiv)
    else:
        raise ValueError(f"unknown CPU routine {routine!r}")
    if info < 0:
        raise RuntimeError(f"{routine}: illegal argument {-info}")
    return lu, permutation(piv), cols


def cpu_time(routine: str, A: np.ndarray, repeat: int, warmup: bool = True):
    """Median wall time of the LAPACK routine, after one untimed run with ``warmup``; the copy of
    A for each run is not timed."""
    if warmup:
        cpu_factor(routine, np.array(A, dtype=np.float32, order="F"))
    times, out = [], None
    for _ in range(max(1, repeat)):
        B = np.array(A, dtype=np.float32, order="F")
        t0 = time.perf_counter()
        out = cpu_factor(routine, B)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def warm_up(pivoting: str, cpu: str, n: int = 8) -> None:
    """One untimed run of each side on a small matrix: the shaders compile and the BLAS threads
    start here, not inside the first timed size."""
    A = test_matrix(n, pivoting)
    with Stream.from_array(A) as G:
        release(lu_gpu(G, pivoting))
    cpu_time(cpu, A, 1)


def measure(ctx, pivoting: str, cpu: str, cpu_max_n: int | None = None,
            cpu_single_above: int | None = None):
    """The rows (GPU and CPU per size) and the notes on what was capped.

    ``cpu_max_n``: no CPU run above this size; ``cpu_single_above``: one CPU run (not
    ``ctx.repeat``) above this size, for a routine whose time dwarfs the timing noise.
    """
    rows, skipped, single = [], [], []
    warm_up(pivoting, cpu)
    for n in ctx.steps(ctx.sizes):
        A = test_matrix(n, pivoting)
        info: dict = {}

        def keep(f, A=A):
            info["readbacks"] = len(f.row_swaps)
            info["residual"] = residual(A, f.LU.to_array(), f.row_perm, f.col_perm)
            f.release()

        with Stream.from_array(A) as G:
            fn = lambda G=G: lu_gpu(G, pivoting)  # noqa: E731
            seconds = timed(fn, ctx.repeat, release)
            c = counted(fn, keep)
        rows.append({"n": n, "implementation": GPU, "seconds": seconds, "repeat": ctx.repeat,
                     "elimination_fragments": c.fragments("elimination"),
                     "formula_elimination": elimination_formula(n),
                     "fragments": c.fragments(), "passes": c.passes(),
                     "pivot_readbacks": info["readbacks"], "residual": info["residual"],
                     **update_rate(c, "elimination")})
        ctx.progress(f"n={n} gpu: {seconds:.4f} s")
        if cpu_max_n is not None and n > cpu_max_n:
            skipped.append(n)
            continue
        reps = 1 if cpu_single_above is not None and n > cpu_single_above else ctx.repeat
        if reps < ctx.repeat:
            single.append(n)
        seconds, (lu, rp, cp) = cpu_time(cpu, A, reps, warmup=reps > 1)
        rows.append({"n": n, "implementation": f"cpu_{cpu}", "seconds": seconds, "repeat": reps,
                     "elimination_fragments": "", "formula_elimination": "", "fragments": "", "passes": "",
                     "pivot_readbacks": "", "residual": residual(A, lu, rp, cp)})
        ctx.progress(f"n={n} cpu {cpu}: {seconds:.4f} s")
    notes = []
    if skipped:
        notes.append(f"CPU {cpu} not run for n = {', '.join(map(str, skipped))} (above {cpu_max_n}): "
                     f"it is unblocked O(n^3) code and would dominate the run; the CPU/GPU claims use "
                     f"the largest n where both ran.")
    if single:
        notes.append(f"CPU {cpu} timed once (repeat 1, no untimed run first) for n = "
                     f"{', '.join(map(str, single))}.")
    return rows, notes


def lapack_name() -> str:
    try:
        import scipy

        dep = scipy.show_config(mode="dicts")["Build Dependencies"]["lapack"]
        return f"{dep.get('name', 'unknown')} {dep.get('version', '')}".strip()
    except Exception:  # noqa: BLE001 - only a label
        return "scipy's LAPACK"


def common_notes(ctx, pivoting: str) -> list:
    notes = [
        f"The CPU here is a modern multi-core ({os.cpu_count()} logical CPUs) with an optimized, "
        f"multithreaded LAPACK ({lapack_name()}, through scipy, float32), not the paper's 3.4 GHz "
        f"Pentium IV with ATLAS / Intel MKL; absolute GPU-vs-CPU comparisons differ from 2005.",
        "Rows: GPU times exclude the upload (004, and 000 section 6.1); CPU times exclude the copy of "
        "the input. residual = ||P A Q - L U||_F / ||A||_F of each factor, in float64.",
    ]
    if pivoting != "none":
        notes.append("pivot_readbacks: the pivot's position is read back to the CPU once per step "
                     "(n per factorization), a synchronization the code without pivoting does not have.")
    if ctx.software:
        notes.append(f"The renderer ({ctx.renderer}) rasterizes in software on the same CPU: the "
                     f"'GPU' times are CPU times of an emulated pipeline, so the GPU/CPU ratios here "
                     f"say nothing about a GPU; run on a GPU for the paper's comparison.")
    return notes


# ---------------------------------------------------------------------- claims
def rate_claims(rows) -> list:
    """The elimination kernel's fragment rate as a fraction of the fill limit."""
    return limit_claims(rows, "n", {GPU: "elimination"}, key="implementation")


def largest_common_n(rows, cpu_impl: str):
    gpu = {r["n"] for r in rows if r["implementation"] == GPU}
    cpu = {r["n"] for r in rows if r["implementation"] == cpu_impl}
    both = gpu & cpu
    return max(both) if both else None


def times_at(rows, n, cpu_impl):
    return (median_by(rows, "seconds", {"n": n, "implementation": GPU}),
            median_by(rows, "seconds", {"n": n, "implementation": cpu_impl}))


def growth(rows, impl: str):
    """(slope, n_lo, n_hi): least-squares slope of log t against log n over the upper half of
    the sizes (at least the two largest), or None with fewer than two sizes."""
    pts = sorted((r["n"], r["seconds"]) for r in rows if r["implementation"] == impl and r["seconds"] > 0)
    if len(pts) < 2:
        return None
    pts = pts[min(len(pts) // 2, len(pts) - 2):]
    x = np.log([p[0] for p in pts])
    y = np.log([p[1] for p in pts])
    slope = float(np.polyfit(x, y, 1)[0])
    return slope, pts[0][0], pts[-1][0]


def growth_text(rows, cpu_impl: str) -> str:
    g, c = growth(rows, GPU), growth(rows, cpu_impl)
    if g is None:
        return "n/a (needs two sizes)"
    text = f"GPU {g[0]:.2f} over n = {g[1]}..{g[2]}"
    if c is not None:
        text += f"; CPU {c[0]:.2f} over n = {c[1]}..{c[2]}"
    return text


def fragments_claim(rows) -> Claim:
    gpu = [r for r in rows if r["implementation"] == GPU]
    exact = all(r["elimination_fragments"] == r["formula_elimination"] for r in gpu)
    return Claim("elimination fragments equal Table 1(a) of 000", "(n-1)n(2n-1)/6 (square trailing submatrix)",
                 "equal at every size" if exact else "DIFFERENT (see CSV)", "occlusion queries")


def no_data_claim(text: str, paper: str) -> Claim:
    return Claim(text, paper, "n/a (no size with both GPU and CPU)")


# ------------------------------------------------------------------------ plot
def plot_lu(rows, fig, renderer, cpu_impl: str, gpu_label: str) -> None:
    ax1, ax2 = fig.subplots(1, 2)
    line_plot(rows, ax1, "n", "seconds", "implementation",
              {GPU: f"GPU: {gpu_label}", cpu_impl: f"CPU: {CPU[cpu_impl.removeprefix('cpu_')]}"}, logy=True)
    ax1.legend(fontsize=7, loc="upper left")
    ax1.set_xlabel("n")
    ax1.set_ylabel("time (s)")
    ax1.set_title("running time", fontsize=9)
    ratios = []
    for n in sorted({r["n"] for r in rows}):
        g, c = times_at(rows, n, cpu_impl)
        if g and c:
            ratios.append((n, c / g))
    if ratios:
        ax2.plot([p[0] for p in ratios], [p[1] for p in ratios], marker="o", label="CPU time / GPU time")
        ax2.legend(fontsize=7, loc="upper left")
        ax2.set_yscale("log")
    ax2.axhline(1.0, color="grey", lw=0.8, ls="--")
    ax2.set_xlabel("n")
    ax2.set_ylabel("speed-up of the GPU")
    ax2.set_title("CPU / GPU time (> 1: GPU faster)", fontsize=9)
    ax2.grid(True, alpha=0.3)


