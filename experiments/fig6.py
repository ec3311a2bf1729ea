"""Fig. 6 of paper 000 (Jung & O'Leary): Cholesky inner vs outer product vs LU, copy-to-texture.

The paper's Fig. 6 times BrookGPU on Linux, where p-buffers have no render-to-texture: every
pass renders into a framebuffer and the result is then copied into its texture (CTT, section
6.1.1). Here every pass of all three algorithms does the same (``transfer="ctt"``: render
into a scratch framebuffer, then a copy pass over the same primitive):

* the inner-product Cholesky (Algorithm 1, Fig. 4(a)): one column per step, a dynamic loop;
* the outer-product Cholesky with the singlepass square update (what BrookGPU can draw,
  Table 1(c));
* LU-GPU without pivoting (paper 004, Table 1(a)).

Claim (section 6.1.1): with CTT the outer-product Cholesky is outperformed by the inner
product version, because it "requires approximately (n-k)² more copy operations at each
iteration". We report the measured outer/inner time ratio at the largest n, and check the
extra copies with the counters: outer minus inner copy-to-texture fragments is exactly
sum over k of (n-1-k)² = (n-1)n(2n-1)/6. Section 6.1.3 adds that the square-update Cholesky
"cannot be faster than LU"; we report that ratio too.

``experiments.fig7`` is the same measurement with render-to-texture (``measure(ctx, "rtt")``).
The CSV has one row per (size, algorithm): the median time, the fragments of the update
kernel with the Table 2 formula, the copy-to-texture fragments, all fragments, passes and
the Table 1 bytes counted (declared texels x 4 x fragments) of the update kernel and of all
passes (copies included).
"""
from __future__ import annotations

from experiments.common import cholesky_gpu, lu_gpu, spd_matrix, upload_lower
from experiments.harness import (Claim, Experiment, counted, limit_claims, line_plot, median_by, release,
                                 timed, update_rate)
from gpgpu import Stream

#: name -> (update kernel, Cholesky variant or None for LU, label)
ALGORITHMS = {
    "cholesky_inner": ("inner_product_subtraction", dict(form="inner"), "Cholesky (inner product)"),
    "cholesky_outer_square": ("outer_product_subtraction", dict(form="outer", update="square"),
                              "Cholesky (outer product, square update)"),
    "lu": ("elimination", None, "LU [GGHM05]"),
}
LABELS = {name: label for name, (_, _, label) in ALGORITHMS.items()}


def table2(n: int, algorithm: str) -> int:
    """Fragments of the update kernel, Table 2 of 000: inner product subtraction n-k at the
    k-th iteration (k = 1 .. n-1: (n-1)n/2), square update and LU elimination (n-1)n(2n-1)/6."""
    if algorithm == "cholesky_inner":
        return (n - 1) * n // 2
    return (n - 1) * n * (2 * n - 1) // 6


def measure(ctx, transfer: str) -> list:
    """Time and count the three algorithms with ``transfer`` ("ctt" or "rtt") at every size."""
    rows = []
    for n in ctx.steps(ctx.sizes):
        A = spd_matrix(n)
        with upload_lower(A) as S, Stream.from_array(A) as G:
            for name, (update_kernel, variant, _) in ALGORITHMS.items():
                if variant is None:
                    fn = lambda: lu_gpu(G, "none", transfer)  # noqa: E731
                else:
                    fn = lambda v=variant: cholesky_gpu(S, n, transfer=transfer, **v)  # noqa: E731
                seconds = timed(fn, ctx.repeat, release)
                c = counted(fn, release)
                row = {"n": n, "algorithm": name, "transfer": transfer, "seconds": seconds,
                       "update_fragments": c.fragments(update_kernel), "table2_update": table2(n, name),
                       **update_rate(c, update_kernel)}
                if transfer == "ctt":
                    row["ctt_fragments"] = c.fragments("copy_to_texture")
                row.update(fragments=c.fragments(), passes=c.passes(), update_bytes=c.bytes(update_kernel),
                           bytes=c.bytes())
                rows.append(row)
                ctx.progress(f"n={n} {name} ({transfer}): {seconds:.4f} s")
    return rows


def common_claims(rows, sizes) -> tuple:
    """The largest n, the times there, and the claims shared by Figs. 6 and 7."""
    n = max(sizes)
    t = {a: median_by(rows, "seconds", {"n": n, "algorithm": a}) for a in ALGORITHMS}
    exact = all(r["update_fragments"] == r["table2_update"] for r in rows)
    shared = [
        Claim("Cholesky outer (square update) / LU time",
              "not below 1 (BrookGPU's square-update Cholesky \"cannot be faster than LU\", section 6.1.3)",
              f"{t['cholesky_outer_square'] / t['lu']:.2f} at n = {n}"),
        Claim("update fragments equal Table 2 of 000",
              "inner (n-1)n/2 (n-k per step); square and LU (n-1)n(2n-1)/6",
              "equal at every size" if exact else "DIFFERENT (see CSV)", "occlusion queries"),
    ]
    # the inner product subtraction reads a whole row per fragment: no fixed-read limit for it
    shared += limit_claims(rows, "n", {"cholesky_outer_square": "outer_product_subtraction",
                                       "lu": "elimination"})
    return n, t, shared


def which_faster(ratio: float) -> str:
    """The verdict on an outer/inner time ratio (within 5% counts as a tie)."""
    return "inner faster" if ratio > 1.05 else "outer faster" if ratio < 0.95 else "within 5%"


def claims_ctt(rows, sizes):
    n, t, shared = common_claims(rows, sizes)
    extra_ok = all(
        median_by(rows, "ctt_fragments", {"n": m, "algorithm": "cholesky_outer_square"})
        - median_by(rows, "ctt_fragments", {"n": m, "algorithm": "cholesky_inner"})
        == (m - 1) * m * (2 * m - 1) // 6 for m in sizes)
    outer_ctt = median_by(rows, "ctt_fragments", {"n": n, "algorithm": "cholesky_outer_square"})
    inner_ctt = median_by(rows, "ctt_fragments", {"n": n, "algorithm": "cholesky_inner"})
    ratio = t["cholesky_outer_square"] / t["cholesky_inner"]
    return [
        Claim("Cholesky outer (square update) / inner time, copy to texture",
              "above 1: \"outer product ... is outperformed by the inner product version\" with CTT (section 6.1.1)",
              f"{ratio:.2f} at n = {n} ({which_faster(ratio)})"),
        Claim("extra copy-to-texture fragments, outer - inner",
              "about (n-k)² more copies per iteration (section 6.1.1)",
              ("equal to sum (n-1-k)² = (n-1)n(2n-1)/6 at every size" if extra_ok else "DIFFERENT (see CSV)")
              + f"; {outer_ctt} vs {inner_ctt} copies at n = {n}",
              "texels copied by glCopyTexSubImage2D, from each pass's region (the tests check that they "
              "equal the fragments each pass shaded)", kind="by construction"),
    ] + shared


def notes(rows, sizes) -> list:
    """Table 1(b) prints about 8n³/3 bytes for the inner product subtraction, but its own entries
    (n-k fragments of 4(2k+2) bytes at the k-th iteration) sum to about 4n³/3; say which we count."""
    n = max(sizes)
    b = median_by(rows, "update_bytes", {"n": n, "algorithm": "cholesky_inner"})
    if not b:
        return []
    return [f"inner product subtraction bytes counted at n = {n}: {b / n ** 3:.2f} n³; Table 1(b) of 000 "
            "prints about 8n³/3 = 2.67 n³, while its per-iteration entries (n-k fragments of 4(2k+2) "
            "bytes) sum to about 4n³/3 = 1.33 n³"]


def run(ctx):
    rows = measure(ctx, "ctt")
    return rows, claims_ctt(rows, ctx.sizes), notes(rows, ctx.sizes)


def plot_times(rows, fig, renderer, transfer_text: str):
    ax = fig.subplots(1, 1)
    line_plot(rows, ax, "n", "seconds", "algorithm", LABELS)
    ax.set_xlabel("matrix dimension n")
    ax.set_ylabel("average execution time (s)")
    ax.set_title(transfer_text, fontsize=9)


def plot(rows, fig, renderer):
    plot_times(rows, fig, renderer, "every pass copied to its texture (CTT, section 6.1.1)")


EXPERIMENT = Experiment(
    name="fig6", title="Cholesky inner vs outer (square update) vs LU, copy-to-texture", paper="000 Fig. 6",
    sizes_software=[64, 128, 192, 256, 384, 512], sizes_gpu=[256, 512, 1024, 1536, 2048],
    run=run, plot=plot, repeat_software=3, repeat_gpu=2)

if __name__ == "__main__":
    raise SystemExit(EXPERIMENT.main())
