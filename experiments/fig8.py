"""Fig. 8 of paper 000 (Jung & O'Leary): Cholesky with the triangular update vs LU, OpenGL.

Left panel: the outer-product Cholesky with one oversized triangle per step (Fig. 5 of 001,
index swizzle) against LU-GPU without pivoting (square elimination, paper 004). Right
panel: the three index variants of the triangular update (section 6.1.3): the swizzled
interpolated pivot index, a pivot index computed in the kernel, and index triads.

Claims (section 6.1.3): Cholesky with triangular update takes about half the time of LU;
swizzled indexes perform 35% better than a computed pivot index; pair vs triad shows no
noticeable difference. The CSV has one row per (size, algorithm) with the median time (each
variant run once untimed at each size first: the variant timed first no longer carries the
shaders' compile time), the fragments of the update kernel and of all kernels (occlusion
queries), and the Table 2 formula for the update.
"""
from __future__ import annotations

from experiments.common import cholesky_gpu, lu_gpu, spd_matrix, upload_lower
from experiments.harness import (Claim, Experiment, counted, limit_claims, line_plot, median_by, release,
                                 timed, update_rate)
from gpgpu import Stream

ALGORITHMS = {
    "cholesky_swizzle": ("outer_product_subtraction", dict(update="triangle", index="swizzle")),
    "cholesky_computed": ("outer_product_subtraction_computed", dict(update="triangle", index="computed")),
    "cholesky_triad": ("outer_product_subtraction_triad", dict(update="triangle", index="triad")),
    "lu": ("elimination", None),
}


def table2(n: int, algorithm: str) -> int:
    """Fragments of the update kernel, Table 2 of 000: (n-1)n(n+1)/6 triangle, (n-1)n(2n-1)/6 LU."""
    return (n - 1) * n * (2 * n - 1) // 6 if algorithm == "lu" else (n - 1) * n * (n + 1) // 6


def run(ctx):
    rows = []
    for n in ctx.steps(ctx.sizes):
        A = spd_matrix(n)
        with upload_lower(A) as S, Stream.from_array(A) as G:
            for name, (update_kernel, variant) in ALGORITHMS.items():
                if variant is None:
                    fn = lambda: lu_gpu(G)  # noqa: E731
                else:
                    fn = lambda v=variant: cholesky_gpu(S, n, **v)  # noqa: E731
                seconds = timed(fn, ctx.repeat, release)
                c = counted(fn, release)
                rows.append({"n": n, "algorithm": name, "seconds": seconds,
                             "update_fragments": c.fragments(update_kernel), "table2_update": table2(n, name),
                             "fragments": c.fragments(), "passes": c.passes(), **update_rate(c, update_kernel)})
                ctx.progress(f"n={n} {name}: {seconds:.4f} s")
    return rows, claims(rows, ctx.sizes)


def claims(rows, sizes):
    n = max(sizes)
    t = {a: median_by(rows, "seconds", {"n": n, "algorithm": a}) for a in ALGORITHMS}
    exact = all(r["update_fragments"] == r["table2_update"] for r in rows)
    return [
        Claim("Cholesky (triangular update) / LU time", "about 0.5 (section 6.1.3)",
              f"{t['cholesky_swizzle'] / t['lu']:.2f} at n = {n}"),
        Claim("computed pivot index / swizzled index time", "about 1.35 (swizzle 35% faster)",
              f"{t['cholesky_computed'] / t['cholesky_swizzle']:.2f} at n = {n}"),
        Claim("index triad / index pair time", "about 1.0 (no noticeable difference)",
              f"{t['cholesky_triad'] / t['cholesky_swizzle']:.2f} at n = {n}"),
        Claim("update fragments equal Table 2 of 000", "(n-1)n(n+1)/6 and (n-1)n(2n-1)/6",
              "equal at every size" if exact else "DIFFERENT (see CSV)", "occlusion queries"),
    ] + limit_claims(rows, "n", {a: k for a, (k, _) in ALGORITHMS.items()})


def plot(rows, fig, renderer):
    ax1, ax2 = fig.subplots(1, 2)
    line_plot([r for r in rows if r["algorithm"] in ("cholesky_swizzle", "lu")], ax1, "n", "seconds", "algorithm",
              {"cholesky_swizzle": "Cholesky (triangular update)", "lu": "LU [GGHM05]"})
    ax1.set_xlabel("n")
    ax1.set_ylabel("time (s)")
    ax1.set_title("Cholesky vs LU", fontsize=9)
    line_plot([r for r in rows if r["algorithm"].startswith("cholesky")], ax2, "n", "seconds", "algorithm",
              {"cholesky_swizzle": "index swizzle", "cholesky_computed": "computed index", "cholesky_triad": "index triad"})
    ax2.set_xlabel("n")
    ax2.set_ylabel("time (s)")
    ax2.set_title("index variants of the triangular update", fontsize=9)


EXPERIMENT = Experiment(
    name="fig8", title="Cholesky (triangular update, index variants) vs LU, OpenGL", paper="000 Fig. 8",
    sizes_software=[32, 64, 128, 256], sizes_gpu=[512, 1024, 1536, 2048, 3072, 4096],
    run=run, plot=plot, repeat_software=3, repeat_gpu=3)

if __name__ == "__main__":
    raise SystemExit(EXPERIMENT.main())
