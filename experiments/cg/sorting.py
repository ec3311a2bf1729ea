"""Paper 003, Fig. 7: rows (and columns) sorted by their number of non-zeros, so that each
count is one rectangle drawn with its own fragment program.

Symmetric matrices, sorted and unsorted in the corrigan format: 2-D and 3-D Poisson (the
boundary rows have fewer non-zeros; sizes = unknowns), the RBF matrices of 003's application
(2-D curve and 3-D torus, many distinct counts) and A Aᵀ of NETLIB's afiro and sc50b. For each:
the fragment programs of one product (distinct counts), the passes (rectangles) per product, the
fragments shaded (occlusion queries) and the time of one product.

Claim (003): sorting lets "as many rows ... be drawn at once": passes drop to the number of
programs, and the time with them where passes dominate.
"""
from __future__ import annotations

import numpy as np

from experiments.cg.common import median_time, netlib_matrices, poisson2d, poisson3d
from experiments.cg.rbf_surface import scaled_parameters
from experiments.harness import Claim, Experiment, counted


def matrices(ctx):
    from gpgpu import rbf

    out = []
    for N in ctx.sizes:
        k2, k3 = max(2, round(N ** 0.5)), max(2, round(N ** (1 / 3)))
        out += [(f"poisson2d_{k2}x{k2}", poisson2d(k2)), (f"poisson3d_{k3}^3", poisson3d(k3))]
    n2, n3 = (300, 800) if ctx.software else (2000, 10000)
    for name, pts, case in ((f"rbf2d_{n2}", rbf.blob_2d(n2), "curve_2d"),
                            (f"rbf3d_{n3}", rbf.torus_3d(n3, noise=0.005), "torus_3d")):
        par = scaled_parameters(case, len(pts[0]))
        out.append((name, rbf.rbf_system(*pts, par["eps"], par["support"])[2]))
    for name, A in netlib_matrices(True):
        if name in ("afiro", "sc50b"):
            out.append((f"{name}_AAT", (A @ A.T).tocsr()))
    return out


def run(ctx):
    from gpgpu import SparseStream, Stream

    rows = []
    for name, A in ctx.steps(matrices(ctx), unit="matrix"):
        x = np.random.default_rng(0).standard_normal(A.shape[0])
        for sort in (False, True):
            with SparseStream.from_scipy(A, format="corrigan", sort=sort, max_programs=A.shape[0]) as S, \
                    Stream.from_array(x) as xs:
                out = Stream.vector_of(A.shape[0])
                fn = lambda: S._product(xs, out, permuted=True)      # noqa: E731
                sec = median_time(fn, ctx.repeat)
                c = counted(fn)
                rows.append({"matrix": name, "n": A.shape[0], "nnz": A.nnz, "sorted": sort,
                             "programs": S.programs, "passes": c.passes(), "fragments": c.fragments(),
                             "seconds": sec})
                out.release()
            ctx.progress(f"{name} sorted={sort}: {rows[-1]['passes']} passes, {S.programs} programs, {sec * 1e3:.2f} ms")
    return rows, claims(rows)


def claims(rows):
    pairs = {}
    for r in rows:
        pairs.setdefault(r["matrix"], {})[r["sorted"]] = r
    ok = all(p[True]["passes"] == p[True]["programs"] for p in pairs.values())
    same = all(p[True]["fragments"] == p[False]["fragments"] for p in pairs.values())
    ratios = {m: p[True]["seconds"] / p[False]["seconds"] for m, p in pairs.items()}
    drops = {m: f"{p[False]['passes']} -> {p[True]['passes']}" for m, p in pairs.items()}
    worst = max(pairs.values(), key=lambda p: p[False]["passes"])
    return [
        Claim("passes per product, sorted, equal the fragment programs (distinct counts)",
              "each count drawn at once (003, Fig. 7)", "yes for every matrix" if ok else "NO (see CSV)",
              "occlusion-query pass counts"),
        Claim("fragments per product, sorted vs unsorted", "the same rows, once each",
              "equal for every matrix" if same else "DIFFERENT (see CSV)"),
        Claim("passes unsorted -> sorted", "fewer", "; ".join(f"{m}: {d}" for m, d in drops.items())),
        Claim("time sorted / unsorted", "below 1 (fewer passes)",
              f"{min(ratios.values()):.2f} .. {max(ratios.values()):.2f}; "
              f"{worst[True]['matrix']}: {ratios[worst[True]['matrix']]:.2f}"),
    ]


def plot(rows, fig, renderer):
    ax1, ax2 = fig.subplots(1, 2)
    names = sorted({r["matrix"] for r in rows}, key=lambda m: [r["n"] for r in rows if r["matrix"] == m][0])
    x = np.arange(len(names))
    for i, (sort, label) in enumerate(((False, "unsorted"), (True, "sorted (003 Fig. 7)"))):
        ax1.bar(x + (i - 0.5) * 0.4, [next(r["passes"] for r in rows if r["matrix"] == m and r["sorted"] == sort)
                                      for m in names], 0.4, label=label)
        ax2.bar(x + (i - 0.5) * 0.4, [1e3 * next(r["seconds"] for r in rows if r["matrix"] == m and r["sorted"] == sort)
                                      for m in names], 0.4, label=label)
    for ax, yl in ((ax1, "passes per product"), (ax2, "ms per product")):
        ax.set_xticks(x)
        ax.set_xticklabels(names, rotation=60, fontsize=6)
        ax.set_ylabel(yl)
        ax.set_yscale("log")
        ax.legend(fontsize=7)


EXPERIMENT = Experiment(
    name="cg_sorting", title="rows sorted by non-zero count: programs and passes", paper="003 Fig. 7",
    sizes_software=[1024, 4096], sizes_gpu=[4096, 65536, 262144], run=run, plot=plot,
    repeat_software=3, repeat_gpu=5, size_name="unknowns")

if __name__ == "__main__":
    raise SystemExit(EXPERIMENT.main())
