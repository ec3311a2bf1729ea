"""y = A x on the GPU (SparseStream.matvec on vector Streams) for long matrices, with the
layout variants that may matter, against the fill limit (and cuSPARSE when cupy imports).

    python tools/bench_spmv.py                         # Poisson 512², 1024², nug30's A
    python tools/bench_spmv.py --only nug30 --reps 50
    python tools/bench_spmv.py --small                 # Poisson 128², 256², nug12 (a software renderer)
    python tools/bench_spmv.py --only nug30 --rmatvec  # A^T y too (the LP's other product)

Per matrix and variant it prints: the median time of one product between two glFinish calls
(``--reps`` of them after a warm-up), the time per product of ``--batch`` products issued
back to back between two glFinish calls (the pipeline's rate, without a drain per product),
the GPU time of the product's passes from timer queries where the driver has them, the passes
a product draws, Gnnz/s (from the batched time), the batched time over cuSPARSE's, the
fragments a second over the fill limit for 3 reads (``gpgpu.bench.fill_limit(3)``), the texel
fetches of the sparse part (``SparseStream.fetches()``: ELLPACK and TELL 3 a stored entry,
value, column index, x, padding included; packed, counted from its kernels) a non-zero, and
those fetches a second over 3 x the fill limit, i.e. how near the fragment pipeline's texture
rate the product runs.

Variants: ``format`` (ellpack: a row's entries along a texture row; tell: down a column;
packed, beyond the papers: two entries an RGBA texel, rows split into segments of ``seg``
entries, the split rows' partials folded ``pfold`` wide, a second pass summing them; split:
the same without the packing, to tell the two gains apart), ``fold`` (the width W that long vectors, and
the ELLPACK layouts with them, are folded to: ``gpgpu.stream.FOLD_WIDTH``; default
GL_MAX_TEXTURE_SIZE), ``dense`` (None: the automatic dense part; ``--dense-variants`` adds
False: all entries in the sparse layout, no dense passes). The default set (ELLPACK and TELL at
two fold widths, packed at three segment lengths, split) runs in under 3 minutes on an H100 with
``--rmatvec``; ``--folds`` adds fold widths.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

import gpgpu  # noqa: E402
from gpgpu import SparseStream, Stream, counters, stream as stream_module  # noqa: E402
from gpgpu.bench import fill_limit  # noqa: E402
from gpgpu.context import max_texture_size  # noqa: E402


def poisson2d(k: int):
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(k, k))
    return (sp.kron(sp.eye(k), T) + sp.kron(T, sp.eye(k))).tocsr()


def nug(n: int):
    from gpgpu.lp.qap import qap_lp, qaplib_dir

    return sp.csr_matrix(qap_lp(qaplib_dir() / f"nug{n}.dat").A)


def cusparse_time(A, reps: int) -> float | None:
    """Median ms of cupyx's CSR y = A x (float32), CUDA events; None without cupy."""
    try:
        import cupy as cp
        import cupyx.scipy.sparse as csp
    except Exception:
        return None
    try:
        Ad = csp.csr_matrix(A.astype(np.float32))
        x = cp.asarray(np.random.default_rng(0).standard_normal(A.shape[1]).astype(np.float32))
        for _ in range(3):
            Ad @ x
        cp.cuda.runtime.deviceSynchronize()
        times = []
        for _ in range(reps):
            a, b = cp.cuda.Event(), cp.cuda.Event()
            a.record()
            Ad @ x
            b.record()
            b.synchronize()
            times.append(cp.cuda.get_elapsed_time(a, b))
        return statistics.median(times)
    except Exception as exc:  # no CUDA device, or cupy without cuSPARSE
        print(f"  (cupy: {exc})")
        return None


def measure(A, fmt: str, fold: int | None, dense, reps: int, batch: int, limit: float, op: str = "matvec",
            opts: dict | None = None) -> dict:
    ctx = gpgpu.get_context()
    saved = stream_module.FOLD_WIDTH
    stream_module.FOLD_WIDTH = fold
    try:
        S = SparseStream.from_scipy(A, format=fmt, dense=dense, **(opts or {}))
        B = A if op == "matvec" else A.T.tocsr()       # the product's matrix
        m, n = B.shape
        product = S.matvec if op == "matvec" else S.rmatvec
        x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
        xs, ys = Stream.vector_of(n, data=x), Stream.vector_of(m)
        try:
            product(xs, out=ys)                   # warm-up: compile, first draw (rmatvec: A^T's copy)
            ctx.finish()
            want = B @ x.astype(np.float64)
            err = float(np.abs(ys.to_array().reshape(-1)[:m] - want).max() / max(1e-30, float(np.abs(want).max())))
            if op == "rmatvec":
                S = S.transposed()                 # its layout (K, dense part) is the product's
            single = []
            for _ in range(reps):
                ctx.finish()
                t0 = time.perf_counter()
                product(xs, out=ys)
                ctx.finish()
                single.append(time.perf_counter() - t0)
            batched = []
            for _ in range(max(3, reps // batch)):
                ctx.finish()
                t0 = time.perf_counter()
                for _ in range(batch):
                    product(xs, out=ys)
                ctx.finish()
                batched.append((time.perf_counter() - t0) / batch)
            with counters.count(time=True) as c:
                product(xs, out=ys)
            gpu_ns = sum(s.gpu_ns for s in c.stats.values())
            passes = c.passes()
            K = S.K or 0
            y_shape = ys.shape
            fetches = S.fetches()["fetches"]
            layout = (f"{S.segment}x{S.split}" if fmt in ("packed", "split") else "")
            pfold = S.p_shape[1] if fmt in ("packed", "split") and not S.single else None
        finally:
            xs.release(), ys.release()
        kc, kr = int(getattr(S, "kc", 0) or 0), int(getattr(S, "kr", 0) or 0)
        (S if op == "matvec" else product.__self__).release()
    finally:
        stream_module.FOLD_WIDTH = saved
    t = statistics.median(batched)
    return {"nnz": B.nnz, "single_ms": statistics.median(single) * 1e3, "batched_ms": t * 1e3,
            "gpu_ms": gpu_ns / 1e6 if gpu_ns else None, "passes": passes, "K": K, "y": y_shape,
            "kc": kc, "kr": kr, "gnnz": B.nnz / t / 1e9, "fill": m / t / limit,
            "fetch": fetches / t / (3 * limit), "per_nnz": fetches / B.nnz, "layout": layout, "pfold": pfold,
            "err": err}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", default=None, help="matrix names to run (poisson512, poisson1024, nug30)")
    ap.add_argument("--small", action="store_true", help="Poisson 128², 256² and nug12 instead")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--batch", type=int, default=20)
    ap.add_argument("--rmatvec", action="store_true",
                    help="also x = A^T y (rmatvec, from the transposed copy), for the non-square matrices")
    ap.add_argument("--folds", type=int, nargs="+", default=None,
                    help="fold widths to try besides the default (default: 4096 where below the limit)")
    ap.add_argument("--dense-variants", action="store_true", help="also dense=False for ELLPACK and TELL")
    ap.add_argument("--segments", type=int, nargs="+", default=[4, 16],
                    help="packed segment lengths to try besides the automatic one (default: 4 16)")
    args = ap.parse_args(argv)
    started = time.perf_counter()
    ctx = gpgpu.get_context()
    top = max_texture_size()
    folds = [None] + [f for f in (args.folds or [4096]) if f < top]
    limit = fill_limit(3)
    print(f"renderer: {ctx.info['GL_RENDERER']}; GL_MAX_TEXTURE_SIZE {top}; fill limit (R32F, 3 reads) "
          f"{limit / 1e9:.2f} G fragments/s")
    mats = {"poisson128": lambda: poisson2d(128), "poisson256": lambda: poisson2d(256), "nug12": lambda: nug(12)} \
        if args.small else {"poisson512": lambda: poisson2d(512), "poisson1024": lambda: poisson2d(1024),
                            "nug30": lambda: nug(30)}
    for name, make in mats.items():
        if args.only and name not in args.only:
            continue
        A = make()
        ms = cusparse_time(A, args.reps)
        print(f"\n{name}: {A.shape[0]} x {A.shape[1]}, {A.nnz} non-zeros, rows of {np.diff(A.indptr).min()} .. "
              f"{np.diff(A.indptr).max()}" + (f"; cuSPARSE CSR {ms:.4f} ms ({A.nnz / ms / 1e6:.1f} Gnnz/s)"
                                              if ms else "; cuSPARSE: cupy not importable"))
        print(f"  {'format':>7} {'fold':>6} {'dense':>6} {'seg x s':>7} {'pfold':>6} {'y shape':>12} {'K':>4} "
              f"{'kc/kr':>7} {'passes':>6} {'1 ms':>8} {'batch ms':>8} {'GPU ms':>8} {'Gnnz/s':>7} {'/cuSP':>6} "
              f"{'fill':>6} {'f/nnz':>6} {'fetch':>6} {'rel err':>8}")
        ops = ["matvec"] + (["rmatvec"] if args.rmatvec and A.shape[0] != A.shape[1] else [])
        variants = [(f, w, d, None) for f in ("ellpack", "tell") for w in folds
                    for d in ((None, False) if args.dense_variants else (None,))]
        variants += [("packed", None, None, {})] + [("packed", None, None, {"segment": s}) for s in args.segments]
        variants += [("split", None, None, {})]          # the packed layout unpacked: splitting's gain alone
        for op in ops:
            if op == "rmatvec":
                print("  x = A^T y (rmatvec, from the transposed copy):")
            for fmt, fold, dense, opts in variants:
                try:
                    r = measure(A, fmt, fold, dense, args.reps, args.batch, limit, op, opts)
                except ValueError as exc:
                    print(f"  {fmt:>7} {str(fold or top):>6} {str(dense):>6}  refused: {exc}")
                    continue
                gpu = f"{r['gpu_ms']:.4f}" if r["gpu_ms"] is not None else "-"
                vs = f"{r['batched_ms'] / ms:.2f}" if ms and op == "matvec" else "-"
                seg = r["layout"] if not opts or "segment" not in opts else r["layout"] + "*"
                print(f"  {fmt:>7} {str(fold or top):>6} {str(dense):>6} {seg or '-':>7} {str(r['pfold'] or '-'):>6} "
                      f"{str(r['y']):>12} {r['K']:>4} {r['kc']:>3}/{r['kr']:<3} {r['passes']:>6} "
                      f"{r['single_ms']:>8.4f} {r['batched_ms']:>8.4f} {gpu:>8} {r['gnnz']:>7.2f} {vs:>6} "
                      f"{r['fill']:>6.2f} {r['per_nnz']:>6.2f} {r['fetch']:>6.2f} {r['err']:>8.1e}", flush=True)
    print(f"\n(seg x s: a packed fragment's entries x the most segments of a row, * given; "
          f"total run {time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
