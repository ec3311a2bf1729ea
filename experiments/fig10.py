"""Fig. 10 of paper 000 (Jung & O'Leary): forming A D² Aᵀ vs decomposing it, squares vs triangles.

A is m x n with n = 2m ("two times more variables than constraints"), d the diagonal of D².
Forming C = A D² Aᵀ is Algorithm 3 of 001 (``gpgpu.adat.form``: per column of A a column
scaling and an outer product addition), with the addition drawn over the whole square
(``domain="square"``, what BrookGPU can draw, the paper's Fig. 10) or over the lower triangle
(``domain="triangle"``). Decomposing C is the outer-product Cholesky with the square update
(``update="square"``) or the singlepass triangular update (``update="triangle"``).

Claims (section 6.2.1, with the operation counts of section 5.2): "forming the matrix is
approximately 6 times as expensive as decomposing it (m²n = 2m³ = 6 x m³/3) when only
rectangular domains can be updated"; with triangles forming costs m²n/2 and factoring m³/6,
so triangles halve both ("triangular domain support is essential in achieving speedup in
the matrix formation", Fig. 10's caption). We report, at the largest m, the forming /
decomposing time ratio with squares (and with triangles), and the triangle / square time
ratios of forming and of factoring; the fragment counts of the update kernels are checked
against n m², n m(m+1)/2, (m-1)m(2m-1)/6 and (m-1)m(m+1)/6.
The CSV has one row per (m, algorithm): the median time, the update kernel's fragments and
their formula, all fragments and passes. Uploads of A, d and C are not timed.
"""
from __future__ import annotations

import numpy as np

from experiments.common import cholesky_gpu, upload_lower
from experiments.harness import (Claim, Experiment, counted, limit_claims, line_plot, median_by, release,
                                 timed, update_rate)
from gpgpu import Stream
from gpgpu.adat import form

#: name -> (update kernel, what, variant, label)
ALGORITHMS = {
    "form_square": ("outer_product_addition", "form", "square", "forming A D² Aᵀ (square)"),
    "form_triangle": ("outer_product_addition", "form", "triangle", "forming A D² Aᵀ (triangle)"),
    "factor_square": ("outer_product_subtraction", "factor", "square", "Cholesky (square update)"),
    "factor_triangle": ("outer_product_subtraction", "factor", "triangle", "Cholesky (triangular update)"),
}
LABELS = {name: label for name, (_, _, _, label) in ALGORITHMS.items()}


def formula(m: int, n: int, algorithm: str) -> int:
    """Fragments of the update kernel: outer product additions n m² (square) or n m(m+1)/2
    (lower triangle with the diagonal); Table 2 of 000 for the factorization."""
    return {"form_square": n * m * m, "form_triangle": n * m * (m + 1) // 2,
            "factor_square": (m - 1) * m * (2 * m - 1) // 6,
            "factor_triangle": (m - 1) * m * (m + 1) // 6}[algorithm]


def problem(m: int, seed: int = 0):
    """A (m x 2m), d > 0 and C = A diag(d) Aᵀ (symmetric positive definite), float32."""
    rng = np.random.default_rng(seed)
    n = 2 * m
    A = (rng.standard_normal((m, n)) / np.sqrt(n)).astype(np.float32)
    d = rng.uniform(0.5, 1.5, n).astype(np.float32)
    C = ((A.astype(np.float64) * d) @ A.T.astype(np.float64)).astype(np.float32)
    return A, d, C


def run(ctx):
    rows = []
    for m in ctx.steps(ctx.sizes):
        n = 2 * m
        A, d, C = problem(m)
        with Stream.from_array(A) as As, Stream.from_array(d) as ds, upload_lower(C) as Cs:
            for name, (update_kernel, what, variant, _) in ALGORITHMS.items():
                if what == "form":
                    fn = lambda v=variant: form(As, ds, "full", v)  # noqa: E731
                else:
                    fn = lambda v=variant: cholesky_gpu(Cs, m, form="outer", update=v)  # noqa: E731
                seconds = timed(fn, ctx.repeat, release)
                c = counted(fn, release)
                rows.append({"m": m, "n": n, "algorithm": name, "seconds": seconds,
                             "update_fragments": c.fragments(update_kernel), "formula": formula(m, n, name),
                             "fragments": c.fragments(), "passes": c.passes(), **update_rate(c, update_kernel)})
                ctx.progress(f"m={m} {name}: {seconds:.4f} s")
    return rows, claims(rows, ctx.sizes)


def claims(rows, sizes):
    m = max(sizes)
    t = {a: median_by(rows, "seconds", {"m": m, "algorithm": a}) for a in ALGORITHMS}
    f = {a: median_by(rows, "update_fragments", {"m": m, "algorithm": a}) for a in ALGORITHMS}
    exact = all(r["update_fragments"] == r["formula"] for r in rows)
    return [
        Claim("forming / decomposing time, square domains", "about 6 (m²n = 2m³ = 6 x m³/3, section 6.2.1)",
              f"{t['form_square'] / t['factor_square']:.2f} at m = {m} "
              f"(update fragments {f['form_square'] / f['factor_square']:.2f})"),
        Claim("forming / decomposing time, triangles", "about 6 (m²n/2 vs m³/6, section 5.2)",
              f"{t['form_triangle'] / t['factor_triangle']:.2f} at m = {m} "
              f"(update fragments {f['form_triangle'] / f['factor_triangle']:.2f})"),
        Claim("forming: triangle / square time", "about 0.5 (m²n/2 vs m²n, section 5.2)",
              f"{t['form_triangle'] / t['form_square']:.2f} at m = {m} "
              f"(update fragments {f['form_triangle'] / f['form_square']:.2f})"),
        Claim("factoring: triangle / square time", "about 0.5 (m³/6 vs m³/3, Table 2)",
              f"{t['factor_triangle'] / t['factor_square']:.2f} at m = {m} "
              f"(update fragments {f['factor_triangle'] / f['factor_square']:.2f})"),
        Claim("update fragments equal the formulas", "n m², n m(m+1)/2; (m-1)m(2m-1)/6, (m-1)m(m+1)/6",
              "equal at every size" if exact else "DIFFERENT (see CSV)", "occlusion queries"),
    ] + limit_claims(rows, "m", {a: k for a, (k, _, _, _) in ALGORITHMS.items()})


def plot(rows, fig, renderer):
    ax1, ax2 = fig.subplots(1, 2)
    line_plot(rows, ax1, "m", "seconds", "algorithm", LABELS)
    ax1.set_xlabel("m (constraints; n = 2m variables)")
    ax1.set_ylabel("time (s)")
    ax1.set_title("forming vs decomposing", fontsize=9)
    ratios = []
    for domain in ("square", "triangle"):
        for m in sorted({r["m"] for r in rows}):
            tf = median_by(rows, "seconds", {"m": m, "algorithm": f"form_{domain}"})
            td = median_by(rows, "seconds", {"m": m, "algorithm": f"factor_{domain}"})
            if tf and td:
                ratios.append({"m": m, "domain": domain, "ratio": tf / td})
    line_plot(ratios, ax2, "m", "ratio", "domain", {"square": "square domains", "triangle": "triangles"})
    ax2.axhline(6, color="gray", linestyle="--", linewidth=1, label="paper: about 6")
    ax2.legend(fontsize=8)
    ax2.set_xlabel("m")
    ax2.set_ylabel("forming time / decomposing time")
    ax2.set_title("forming / decomposing", fontsize=9)


EXPERIMENT = Experiment(
    name="fig10", title="forming A D² Aᵀ vs decomposing it, square domains vs triangles (n = 2m)",
    paper="000 Fig. 10", sizes_software=[32, 64, 128, 192, 256, 384], sizes_gpu=[256, 512, 1024, 1536, 2048],
    run=run, plot=plot, repeat_software=3, repeat_gpu=2, size_name="m")

if __name__ == "__main__":
    raise SystemExit(EXPERIMENT.main())
