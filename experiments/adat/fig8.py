"""Fig. 8 of paper 001 (Jung & O'Leary): time to assemble A D² Aᵀ, packed vs full vs CPU.

A is m x n with n = 2m, A and the diagonal d of D² uniform on [0, 1], float32. On the GPU,
Algorithm 3 of 001 (column scaling, Kernel 1, then the outer product addition, Kernel 2, over
the lower triangle) into a full m x m texture (Fig. 2) and into the rectangular packed format
(two triangles per pass, Fig. 4). On the CPU, float32 BLAS as the paper's "saxpy and ssyrk of
ATLAS": scale the columns of A by D (the square roots of d), then ``scipy.linalg.blas.ssyrk``
forms the lower triangle of (A D)(A D)ᵀ. Transfers are excluded, as in the paper ("Transferring
A and d to and retrieving the result from the GPU are not considered").

Claims (section 5.1): the packed version performs almost the same as the non-packed one ("for
m = 2048, the non-packed version is only 1% faster"), because the number of fragments per
iteration is exactly the same in both; the GPU outperforms ATLAS for m larger than 768. The
CSV has one row per (m, algorithm) with the median time and, for the GPU, the fragments of
the outer product addition kernel (occlusion queries) against n m (m + 1) / 2.
"""
from __future__ import annotations

import numpy as np

from experiments.harness import (Claim, Experiment, counted, limit_claims, line_plot, median_by, release,
                                 timed, update_rate)
from gpgpu import Stream
from gpgpu.adat import form

ALGORITHMS = ("gpu_packed", "gpu_full", "cpu_ssyrk")
LABELS = {"gpu_packed": "GPU, packed format", "gpu_full": "GPU, full format",
          "cpu_ssyrk": "CPU, scaling + BLAS ssyrk (float32)"}


def problem(m: int, seed: int = 0) -> tuple:
    """A (m x 2m) and d (2m), uniform on [0, 1], float32 (section 5.3 of 001)."""
    rng = np.random.default_rng(seed + m)
    n = 2 * m
    return rng.random((m, n), dtype=np.float32), rng.random(n, dtype=np.float32)


def cpu_adat(A: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Lower triangle of A diag(d) Aᵀ in float32: scale the columns by sqrt(d), then ssyrk."""
    from scipy.linalg.blas import ssyrk

    B = A * np.sqrt(d)[None, :]  # keeps A's (Fortran) order
    return ssyrk(1.0, B, lower=1)


def cpu_note() -> str:
    """Which CPU the float32 BLAS/LAPACK baseline ran on (the paper: ATLAS on one 3.0 GHz Xeon)."""
    import os
    import platform

    import scipy

    return (f"CPU baseline: scipy {scipy.__version__} BLAS/LAPACK (float32) on {os.cpu_count()} logical CPUs "
            f"({platform.processor() or platform.machine()}); the paper used ATLAS on a 3.0 GHz Xeon "
            "and a GeForce 7800 GTX, so only the shape of the curves carries over.")


def outer_fragments(m: int) -> int:
    """Fragments of the outer product addition: the lower triangle, n = 2m times."""
    return 2 * m * m * (m + 1) // 2


#: CPU timings are microseconds to milliseconds: take the median of at least this many runs
CPU_REPEAT = 5


def warm_up() -> None:
    """Compile the kernels and load BLAS once, untimed, so the first size is not charged for it."""
    A, d = problem(8)
    with Stream.from_array(A) as As, Stream.from_array(d) as ds:
        for storage in ("full", "packed"):
            release(form(As, ds, storage=storage))
    cpu_adat(np.asfortranarray(A), d)


def run(ctx):
    rows = []
    warm_up()
    for m in ctx.steps(ctx.sizes):
        A, d = problem(m)
        AF = np.asfortranarray(A)
        with Stream.from_array(A) as As, Stream.from_array(d) as ds:
            for name in ALGORITHMS:
                row = {"m": m, "algorithm": name}
                if name == "cpu_ssyrk":
                    row["seconds"] = timed(lambda: cpu_adat(AF, d), max(ctx.repeat, CPU_REPEAT))
                else:
                    storage = name.split("_")[1]
                    fn = lambda s=storage: form(As, ds, storage=s)  # noqa: E731
                    row["seconds"] = timed(fn, ctx.repeat, release)
                    c = counted(fn, release)
                    row.update(update_fragments=c.fragments("outer_product_addition"),
                               expected_update=outer_fragments(m), fragments=c.fragments(), passes=c.passes(),
                               **update_rate(c, "outer_product_addition"))
                rows.append(row)
                ctx.progress(f"m={m} {name}: {row['seconds']:.4f} s")
    return rows, claims(rows, ctx.sizes), [cpu_note()]


def crossover(rows, sizes) -> str:
    """The smallest measured m from which on the GPU (full) beats the CPU at every larger m."""
    faster = [median_by(rows, "seconds", {"m": m, "algorithm": "gpu_full"})
              < median_by(rows, "seconds", {"m": m, "algorithm": "cpu_ssyrk"}) for m in sorted(sizes)]
    if not any(faster):
        return f"never in the sizes measured (m = {min(sizes)} .. {max(sizes)}): the CPU is faster throughout"
    first = next(m for m, f in zip(sorted(sizes), faster) if f)
    k = sorted(sizes).index(first)
    if all(faster[k:]):
        return f"GPU faster from m = {first} on" + (" (the smallest measured)" if k == 0 else "")
    wins = [m for m, f in zip(sorted(sizes), faster) if f]
    return f"GPU faster at m = {wins} only (not beyond every m measured)"


def claims(rows, sizes):
    m = max(sizes)
    t = {a: median_by(rows, "seconds", {"m": m, "algorithm": a}) for a in ALGORITHMS}
    same = all(median_by(rows, "update_fragments", {"m": s, "algorithm": "gpu_packed"})
               == median_by(rows, "update_fragments", {"m": s, "algorithm": "gpu_full"})
               == outer_fragments(s) for s in sizes)
    return [
        Claim("packed / full (non-packed) time", "1.01 at m = 2048 (non-packed only 1% faster)",
              f"{t['gpu_packed'] / t['gpu_full']:.3f} at m = {m}"),
        Claim("outer product fragments equal, packed and full", "exactly the same every iteration",
              "equal at every size, n m (m + 1) / 2" if same else "DIFFERENT (see CSV)", "occlusion queries"),
        Claim("m beyond which the GPU beats the CPU (ATLAS saxpy + ssyrk)", "m > 768",
              crossover(rows, sizes), "GPU full vs scipy ssyrk, float32"),
        Claim("GPU full / CPU ssyrk time", "below 1 for m > 768",
              f"{t['gpu_full'] / t['cpu_ssyrk']:.2f} at m = {m}"),
    ] + limit_claims(rows, "m", {"gpu_full": "outer_product_addition",
                                 "gpu_packed": "outer_product_addition"})


def plot(rows, fig, renderer):
    ax = fig.subplots(1, 1)
    line_plot(rows, ax, "m", "seconds", "algorithm", LABELS)
    ax.set_xlabel("m (A is m x 2m)")
    ax.set_ylabel("time (s)")
    ax.set_title("assembling AD²Aᵀ (transfers not included)", fontsize=9)


EXPERIMENT = Experiment(
    name="adat_fig8", title="Time to assemble AD²Aᵀ: packed vs full format vs CPU ssyrk", paper="001 Fig. 8",
    sizes_software=[64, 128, 256, 384, 512], sizes_gpu=[256, 512, 768, 1024, 1280, 1536, 1792, 2048],
    run=run, plot=plot, repeat_software=3, repeat_gpu=3, size_name="m")

if __name__ == "__main__":
    raise SystemExit(EXPERIMENT.main())
