"""Fig. 9 of paper 001 (Jung & O'Leary): Cholesky decomposition, full vs packed vs LU vs CPU.

The outer-product Cholesky with one oversized triangle per step (Kernels 3-5, Algorithm 5,
Fig. 5 of 001) on the full m x m texture and on the rectangular packed format (two triangles
in the first half of the iterations, one in the second: Figs. 6-7), against the LU
decomposition without pivoting of Galoppo et al. (paper 004; square elimination update) and
against the CPU: LAPACK ``spotrf`` (float32, ``scipy.linalg.lapack``) as the paper's ATLAS
spotrf. The matrix is a well-conditioned symmetric positive definite B Bᵀ / m + I; the
factorizations are timed as the paper does, without transfers and without the breakdown scan.

Claims (section 5.2): Cholesky outperforms LU "by 83.5% for m = 3584" (LU time / Cholesky
time - 1); the packed version performs as fast as the full one ("for m = 3328, the non-packed
version is only 1% faster"), because the number of fragments is exactly the same in both. The
CSV has one row per (m, algorithm) with the median time and, for the GPU, the fragments of the
update kernel and of all kernels (occlusion queries).
"""
from __future__ import annotations

import numpy as np

from experiments.adat.fig8 import cpu_note
from experiments.common import cholesky_gpu, lu_gpu, spd_matrix, upload_lower
from experiments.harness import (Claim, Experiment, counted, limit_claims, line_plot, median_by, release,
                                 timed, update_rate)
from gpgpu import Stream
from gpgpu import packed as pk
from gpgpu.context import max_texture_size

#: algorithm -> the update kernel whose fragments are counted
ALGORITHMS = {
    "cholesky_full": "outer_product_subtraction",
    "cholesky_packed": "outer_product_subtraction",
    "lu": "elimination",
    "cpu_spotrf": None,
}
LABELS = {"cholesky_full": "Cholesky, full format", "cholesky_packed": "Cholesky, packed format",
          "lu": "LU without pivoting [GGHM05]", "cpu_spotrf": "CPU LAPACK spotrf (float32)"}
CPU_REPEAT = 5


def cpu_cholesky(A: np.ndarray) -> np.ndarray:
    from scipy.linalg.lapack import spotrf

    c, info = spotrf(A, lower=1, clean=0, overwrite_a=0)
    if info != 0:
        raise np.linalg.LinAlgError(f"spotrf failed, info = {info}")
    return c


def warm_up() -> None:
    """Compile the kernels and load LAPACK once, untimed."""
    A = spd_matrix(8)
    with upload_lower(A) as S, Stream.from_array(pk.pack(np.tril(A))) as P, Stream.from_array(A) as G:
        release(cholesky_gpu(S, 8))
        release(cholesky_gpu(P, 8, storage="packed"))
        release(lu_gpu(G))
    cpu_cholesky(np.asfortranarray(A))


def run(ctx):
    rows, notes = [], [cpu_note()]
    warm_up()
    limit = max_texture_size()
    for m in ctx.steps(ctx.sizes):
        A = spd_matrix(m)
        AF = np.asfortranarray(A)
        packable = pk.packed_shape(m)[0] <= limit
        if not packable:
            notes.append(f"m = {m}: the packed texture would be {pk.packed_shape(m)[0]} high, more than "
                         f"GL_MAX_TEXTURE_SIZE = {limit} (the paper's m = 4096 remark); no packed row")
        with upload_lower(A) as S, Stream.from_array(A) as G, \
                Stream.from_array(pk.pack(np.tril(A)) if packable else np.zeros((1, 1), np.float32)) as P:
            for name, update_kernel in ALGORITHMS.items():
                if name == "cholesky_packed" and not packable:
                    continue
                row = {"m": m, "algorithm": name}
                if name == "cpu_spotrf":
                    row["seconds"] = timed(lambda: cpu_cholesky(AF), max(ctx.repeat, CPU_REPEAT))
                else:
                    if name == "lu":
                        fn = lambda: lu_gpu(G)  # noqa: E731
                    elif name == "cholesky_full":
                        fn = lambda: cholesky_gpu(S, m)  # noqa: E731
                    else:
                        fn = lambda: cholesky_gpu(P, m, storage="packed")  # noqa: E731
                    row["seconds"] = timed(fn, ctx.repeat, release)
                    c = counted(fn, release)
                    row.update(update_fragments=c.fragments(update_kernel), fragments=c.fragments(),
                               passes=c.passes(), **update_rate(c, update_kernel))
                rows.append(row)
                ctx.progress(f"m={m} {name}: {row['seconds']:.4f} s")
    return rows, claims(rows, ctx.sizes), notes


def claims(rows, sizes):
    m = max(sizes)
    t = {a: median_by(rows, "seconds", {"m": m, "algorithm": a}) for a in ALGORITHMS}
    both = [s for s in sorted(sizes) if median_by(rows, "seconds", {"m": s, "algorithm": "cholesky_packed"})]
    mp = max(both) if both else None
    same = all(median_by(rows, "update_fragments", {"m": s, "algorithm": "cholesky_packed"})
               == median_by(rows, "update_fragments", {"m": s, "algorithm": "cholesky_full"}) for s in both)
    out = [Claim("Cholesky outperforms LU: LU time / Cholesky time - 1", "83.5% at m = 3584",
                 f"{100 * (t['lu'] / t['cholesky_full'] - 1):.1f}% at m = {m}", "full-format Cholesky")]
    if mp is not None:
        tp = median_by(rows, "seconds", {"m": mp, "algorithm": "cholesky_packed"})
        tf = median_by(rows, "seconds", {"m": mp, "algorithm": "cholesky_full"})
        out += [Claim("packed / full (non-packed) Cholesky time", "1.01 at m = 3328 (non-packed only 1% faster)",
                      f"{tp / tf:.3f} at m = {mp}"),
                Claim("update fragments equal, packed and full", "exactly the same every iteration",
                      "equal at every size" if same else "DIFFERENT (see CSV)", "occlusion queries")]
    out.append(Claim("GPU Cholesky (full) / CPU spotrf time", "compared in Fig. 9; the text gives no ratio",
                     f"{t['cholesky_full'] / t['cpu_spotrf']:.2f} at m = {m}", "float32 LAPACK via scipy"))
    return out + limit_claims(rows, "m", {a: k for a, k in ALGORITHMS.items() if k})


def plot(rows, fig, renderer):
    ax = fig.subplots(1, 1)
    line_plot(rows, ax, "m", "seconds", "algorithm", LABELS)
    ax.set_xlabel("m")
    ax.set_ylabel("time (s)")
    ax.set_title("Cholesky decomposition (transfers not included)", fontsize=9)


EXPERIMENT = Experiment(
    name="adat_fig9", title="Cholesky decomposition: full vs packed format vs LU vs CPU spotrf", paper="001 Fig. 9",
    sizes_software=[64, 128, 256, 384, 512], sizes_gpu=[512, 1024, 1536, 2048, 2560, 3072, 3328, 3584],
    run=run, plot=plot, repeat_software=3, repeat_gpu=2, size_name="m")

if __name__ == "__main__":
    raise SystemExit(EXPERIMENT.main())
