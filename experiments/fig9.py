"""Fig. 9 of paper 000 (Jung & O'Leary): memory bandwidth of Cholesky and LU, OpenGL.

The outer-product Cholesky with the singlepass triangular update and the index swizzle
(Table 1(d)) against LU-GPU without pivoting (paper 004, Table 1(a)). Bandwidth is the
bytes the kernels read and write, counted as Table 1 of 000 counts them (declared texels
per fragment x 4 bytes x fragments shaded, from the occlusion queries: ``Counter.bytes()``),
divided by the median time of the factorization (uploads not timed). The bytes include the
copy of the input into the work texture that ``factor`` and ``lu_factor`` start with ("Copy A
to S", 8n² bytes, timed too, absent from Table 1; counted apart under the label
``copy_input``, the CSV has it as ``input_copy_bytes``).

Claim (section 6.1.4): the square root kernel shades one fragment, with no parallelism, so
Cholesky "shows less bandwidth usage than LU"; "when the matrix is sufficiently large,
however, Cholesky uses as much bandwidth as LU does" (both bandwidth bound). We report the
Cholesky/LU bandwidth ratio at the smallest and at the largest n, and check the counted
bytes against the Table 1 totals.
"""
from __future__ import annotations

from experiments.common import cholesky_gpu, lu_gpu, spd_matrix, upload_lower
from experiments.harness import (Claim, Experiment, counted, limit_claims, line_plot, median_by, release,
                                 timed, update_rate)
from gpgpu import Stream

ALGORITHMS = {
    "cholesky": dict(form="outer", update="triangle", index="swizzle"),
    "lu": None,
}
LABELS = {"cholesky": "Cholesky (outer product, triangular update)", "lu": "LU [GGHM05]"}


def table1_bytes(n: int, algorithm: str) -> int:
    """Total bytes of Table 1 of 000: (d) Cholesky, singlepass triangular update; (a) LU."""
    if algorithm == "cholesky":
        return 8 * n + 8 * (n - 1) + 6 * (n - 1) * n + 4 * (n - 1) * n + 16 * (n - 1) * n * (n + 1) // 6
    return 14 * n * (n + 1) + 16 * (n - 1) * n * (2 * n - 1) // 6


def run(ctx):
    rows = []
    for n in ctx.steps(ctx.sizes):
        A = spd_matrix(n)
        with upload_lower(A) as S, Stream.from_array(A) as G:
            for name, variant in ALGORITHMS.items():
                if variant is None:
                    fn = lambda: lu_gpu(G, "none")  # noqa: E731
                else:
                    fn = lambda v=variant: cholesky_gpu(S, n, **v)  # noqa: E731
                seconds = timed(fn, ctx.repeat, release)
                c = counted(fn, release)
                nbytes = c.bytes()
                # "Copy A to S" (n² fragments, timed, not in Table 1) is counted as copy_input
                update_kernel = "elimination" if variant is None else "outer_product_subtraction"
                rows.append({"n": n, "algorithm": name, "seconds": seconds, "fragments": c.fragments(),
                             "passes": c.passes(), "bytes": nbytes, "input_copy_bytes": c.bytes("copy_input"),
                             "table1_bytes": table1_bytes(n, name), "GB/s": nbytes / seconds / 1e9,
                             "update_fragments": c.fragments(update_kernel), **update_rate(c, update_kernel)})
                ctx.progress(f"n={n} {name}: {seconds:.4f} s, {nbytes / seconds / 1e9:.3f} GB/s")
    return rows, claims(rows, ctx.sizes)


def claims(rows, sizes):
    lo, hi = min(sizes), max(sizes)

    def ratio(n):
        return (median_by(rows, "GB/s", {"n": n, "algorithm": "cholesky"})
                / median_by(rows, "GB/s", {"n": n, "algorithm": "lu"}))

    def off_table(algorithm, less):
        """Sizes where counted bytes (less the input copy) differ from Table 1 less ``less(n)``."""
        off = [(r["n"], r["bytes"] - r["input_copy_bytes"] - (r["table1_bytes"] - less(r["n"])))
               for r in rows if r["algorithm"] == algorithm]
        off = [f"n = {n}: {d:+d} bytes" for n, d in off if d]
        return "equal at every size" if not off else "equal except " + ", ".join(off)

    gbs = {a: median_by(rows, "GB/s", {"n": hi, "algorithm": a}) for a in ALGORITHMS}
    return [
        Claim("Cholesky / LU bandwidth, smallest n", "below 1: \"less bandwidth usage than LU\" (section 6.1.4)",
              f"{ratio(lo):.2f} at n = {lo}", "bytes counted / median time",
              kind="measured time; bytes by construction"),
        Claim("Cholesky / LU bandwidth, largest n", "about 1: \"Cholesky uses as much bandwidth as LU does\"",
              f"{ratio(hi):.2f} at n = {hi} ({gbs['cholesky']:.3g} vs {gbs['lu']:.3g} GB/s)",
              "bytes counted / median time", kind="measured time; bytes by construction"),
        *limit_claims(rows, "n", {"cholesky": "outer_product_subtraction", "lu": "elimination"}),
        Claim("bytes counted equal Table 1 of 000", "(d) about 8n³/3 Cholesky, (a) about 16n³/3 LU",
              "Cholesky " + off_table("cholesky", lambda n: 0) + "; LU (Table 1(a) less 20n: it counts "
              "the diagonal in normalization and copyback) " + off_table("lu", lambda n: 20 * n),
              "declared texels x 4 x fragments, less the copy of the input into the work texture",
              kind="by construction"),
    ]


def plot(rows, fig, renderer):
    ax = fig.subplots(1, 1)
    line_plot(rows, ax, "n", "GB/s", "algorithm", LABELS)
    ax.set_xlabel("matrix dimension n")
    ax.set_ylabel("memory bandwidth (GB/s)")
    ax.set_title("bytes of Table 1 (counted) / time", fontsize=9)


EXPERIMENT = Experiment(
    name="fig9", title="memory bandwidth of Cholesky (triangular update) and LU, OpenGL", paper="000 Fig. 9",
    sizes_software=[32, 64, 128, 256, 384, 512],
    sizes_gpu=[64, 128, 256, 512, 1024, 2048, 3072, 4096],
    run=run, plot=plot, repeat_software=3, repeat_gpu=3)

if __name__ == "__main__":
    raise SystemExit(EXPERIMENT.main())
