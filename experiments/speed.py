"""Speed of the faithful factorizations against the fill limit, LAPACK and cuSOLVER (beyond the papers).

Beyond the papers: one process runs, per size n, on the GPU found

* Cholesky, outer form with the oversized-triangle update (001 Algorithm 5, the faithful path),
  and the blocked Cholesky of :mod:`gpgpu.blocked` with panels of 8 and 16 columns (beyond the
  papers: RGBA 2 x 2 blocks, one rank-b pass per panel);
* the blocked LU with partial pivoting of :mod:`gpgpu.blocked` (b = 8 and 16; beyond the papers);
* LU without pivoting, with partial and with full pivoting (paper 004), the pivot read back at
  every step as LU-GPU did (``pivots="readback"``), and partial and full pivoting with the
  pivot kept on the GPU (``pivots="gpu"``, beyond the papers: the swap lines placed by the
  vertex program, the pivots read back once at the end);

and beside them scipy's float32 LAPACK on the CPU (``spotrf``, ``sgetrf``; ``sgetc2`` for full
pivoting up to n = 2048, where its unblocked O(n³) loop still ends in minutes; the GPU's full
pivoting likewise, ``FULL_MAX``), and cuSOLVER
through torch (``torch.linalg.cholesky``, ``torch.linalg.lu_factor``) when torch with CUDA is
importable (never a dependency of the project). Each row: median seconds, Gflop/s (n³/3 for
Cholesky, 2n³/3 for LU), and for the GPU rows the fragments of all passes (occlusion queries,
an untimed run), the passes, fragments per second over the whole factorization, and that rate
as a fraction of the fill limit ``python -m gpgpu bench`` measures on the same GPU
(``gpgpu.bench.fill_limit(1)``). Every factor's relative residual is computed in float64 after
the timing. Nothing here is asserted in tests; the report states what was measured.
"""
from __future__ import annotations

import numpy as np

from experiments.common import cholesky_gpu, general_matrix, spd_matrix, upload_lower
from experiments.harness import Claim, Experiment, counted, line_plot, release, timed
from gpgpu import Stream
from gpgpu.blocked import blocked_cholesky
from gpgpu.lu import lu_factor

GPU_ROWS = {
    "cholesky": "Cholesky, outer form, triangle update (faithful)",
    "lu_none": "LU, no pivoting (faithful)",
    "lu_partial": "LU, partial pivoting, pivot read back (faithful)",
    "lu_partial_gpu": "LU, partial pivoting, pivot on the GPU (beyond)",
    "lu_full": "LU, full pivoting, pivot read back (faithful)",
    "lu_full_gpu": "LU, full pivoting, pivot on the GPU (beyond)",
    "cholesky_onepass": "Cholesky, a whole step in one pass (beyond)",
    "cholesky_blocked8": "Cholesky, blocked, b = 8 (beyond)",
    "cholesky_blocked16": "Cholesky, blocked, b = 16 (beyond)",
    "cholesky_blocked16_onepass": "Cholesky, blocked, b = 16, panels one pass a column (beyond)",
    "cholesky_blocked32_onepass": "Cholesky, blocked, b = 32, panels one pass a column (beyond)",
    "lu_partial_blocked8": "LU, partial pivoting, blocked, b = 8 (beyond)",
    "lu_partial_blocked16": "LU, partial pivoting, blocked, b = 16 (beyond)",
    "lu_partial_blocked16_gpu": "LU, partial pivoting, blocked, b = 16, pivot on the GPU (beyond)",
}
CPU_ROWS = {"spotrf": "LAPACK spotrf (CPU)", "sgetrf": "LAPACK sgetrf (CPU)", "sgetc2": "LAPACK sgetc2 (CPU)"}
CUDA_ROWS = {"cusolver_potrf": "cuSOLVER potrf (torch)", "cusolver_getrf": "cuSOLVER getrf (torch)"}
SGETC2_MAX = 2048
#: full pivoting searches the whole trailing submatrix at every step: 32 s at n = 2048 on the
#: H200 (measured), so larger sizes are left out (as sgetc2's)
FULL_MAX = 2048


def _flops(algorithm: str, n: int) -> float:
    chol = algorithm.startswith("cholesky") or algorithm in ("spotrf", "cusolver_potrf")
    return n ** 3 / 3 if chol else 2 * n ** 3 / 3


def _lu_residual(A, f) -> float:
    LU = f.LU.to_array().astype(np.float64)
    n = A.shape[0]
    L, U = np.tril(LU, -1) + np.eye(n), np.triu(LU)
    PAQ = A.astype(np.float64)[f.row_perm][:, f.col_perm]
    return float(np.linalg.norm(PAQ - L @ U) / np.linalg.norm(A))


def _gpu_rows(n, repeat, limit):
    rows = []
    A = spd_matrix(n)
    G = general_matrix(n)
    with upload_lower(A) as S, Stream.from_array(G) as GS, Stream.from_array(G + np.float32(n) * np.eye(n, dtype=np.float32)) as GD:
        runs = {
            "cholesky": lambda: cholesky_gpu(S, n),
            "cholesky_onepass": lambda: cholesky_gpu(S, n, pivot="onepass"),
            "cholesky_blocked8": lambda: blocked_cholesky(S, 8, check=False),
            "cholesky_blocked16": lambda: blocked_cholesky(S, 16, check=False),
            "cholesky_blocked16_onepass": lambda: blocked_cholesky(S, 16, check=False, panel="onepass"),
            "cholesky_blocked32_onepass": lambda: blocked_cholesky(S, 32, check=False, panel="onepass"),
            "lu_none": lambda: lu_factor(GD, "none", check=False),
            "lu_partial": lambda: lu_factor(GS, "partial", check=False),
            "lu_partial_gpu": lambda: lu_factor(GS, "partial", check=False, pivots="gpu"),
            "lu_partial_blocked8": lambda: lu_factor(GS, "partial", check=False, variant="blocked", block=8),
            "lu_partial_blocked16": lambda: lu_factor(GS, "partial", check=False, variant="blocked", block=16),
            "lu_partial_blocked16_gpu": lambda: lu_factor(GS, "partial", check=False, variant="blocked", block=16,
                                                          pivots="gpu"),
        }
        if n <= FULL_MAX:
            runs["lu_full"] = lambda: lu_factor(GS, "full", check=False)
            runs["lu_full_gpu"] = lambda: lu_factor(GS, "full", check=False, pivots="gpu")
        for name, fn in runs.items():
            seconds = timed(fn, repeat, release)
            c = counted(fn, release)
            out = fn()
            if name.startswith("cholesky"):
                L = np.tril(out.to_array().astype(np.float64))
                residual = float(np.linalg.norm(L @ L.T - A) / np.linalg.norm(A))
            else:
                residual = _lu_residual(GD.to_array() if name == "lu_none" else G, out)
            release(out)
            frags = c.fragments()
            rate = frags / seconds
            rows.append({"n": n, "algorithm": name, "device": "gpu", "seconds": seconds,
                         "gflops": _flops(name, n) / seconds / 1e9, "fragments": frags, "passes": c.passes(),
                         "fragments_per_second": rate, "fill_fraction": rate / limit if limit else None,
                         "residual": residual})
    return rows


def _cpu_rows(n, repeat):
    import time

    from scipy.linalg import lapack

    rows = []
    A, G = spd_matrix(n), general_matrix(n)

    def clock(fn):
        fn()                                           # untimed: LAPACK's first call at this size
        ts = []
        for _ in range(max(1, repeat)):
            t0 = time.perf_counter()
            out = fn()
            ts.append(time.perf_counter() - t0)
        return sorted(ts)[len(ts) // 2], out

    s, (c, info) = clock(lambda: lapack.spotrf(A, lower=1))
    L = np.tril(c.astype(np.float64))
    rows.append({"n": n, "algorithm": "spotrf", "device": "cpu", "seconds": s, "gflops": _flops("spotrf", n) / s / 1e9,
                 "residual": float(np.linalg.norm(L @ L.T - A) / np.linalg.norm(A))})
    s, (lu, piv, info) = clock(lambda: lapack.sgetrf(G))
    rows.append({"n": n, "algorithm": "sgetrf", "device": "cpu", "seconds": s, "gflops": _flops("sgetrf", n) / s / 1e9,
                 "residual": None})
    if n <= SGETC2_MAX:
        s, _ = clock(lambda: lapack.sgetc2(G))
        rows.append({"n": n, "algorithm": "sgetc2", "device": "cpu", "seconds": s,
                     "gflops": _flops("sgetc2", n) / s / 1e9, "residual": None})
    return rows


def _cuda_rows(n, repeat):
    try:
        import torch
        if not torch.cuda.is_available():
            return []
    except Exception:
        return []
    rows = []
    A = torch.from_numpy(spd_matrix(n)).cuda()
    G = torch.from_numpy(general_matrix(n)).cuda()
    for name, fn in (("cusolver_potrf", lambda: torch.linalg.cholesky(A)),
                     ("cusolver_getrf", lambda: torch.linalg.lu_factor(G))):
        import time
        fn()
        torch.cuda.synchronize()
        ts = []
        for _ in range(max(3, repeat)):
            t0 = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            ts.append(time.perf_counter() - t0)
        s = sorted(ts)[len(ts) // 2]
        rows.append({"n": n, "algorithm": name, "device": "cuda", "seconds": s, "gflops": _flops(name, n) / s / 1e9})
    return rows


def run(ctx):
    from gpgpu.bench import fill_limit

    limit = fill_limit(1)
    # compile every program once, untimed
    _gpu_rows(8, 1, limit)
    rows = []
    for n in ctx.steps(ctx.sizes):
        rows += _gpu_rows(n, ctx.repeat, limit)
        rows += _cpu_rows(n, ctx.repeat)
        rows += _cuda_rows(n, ctx.repeat)
        ctx.progress(f"n={n}: " + ", ".join(f"{r['algorithm']} {r['seconds']:.3g} s" for r in rows if r["n"] == n))
    for r in rows:
        r["fill_limit"] = limit
    return rows, claims(rows, ctx.sizes, limit)


def claims(rows, sizes, limit):
    n = max(sizes)
    t = {r["algorithm"]: r["seconds"] for r in rows if r["n"] == n}
    f = {r["algorithm"]: r.get("fill_fraction") for r in rows if r["n"] == n}
    ts = {}
    for r in rows:
        ts.setdefault(r["n"], {})[r["algorithm"]] = r["seconds"]
    out = [
        Claim("Cholesky (faithful) fragment rate / fill limit", "goal (beyond the papers): >= 85 % at n = 4096",
              f"{f['cholesky']:.0%} at n = {n} ({limit / 1e9:.3g} Gfragments/s limit)",
              "all passes' fragments (occlusion queries) / wall time; gpgpu.bench.fill_limit(1)"),
        Claim("LU partial pivoting / no pivoting, pivot read back", "1.85 at 4096 on the H200 with the pivot read back (2026-11)",
              f"{t['lu_partial'] / t['lu_none']:.2f} at n = {n}"),
        Claim("LU partial pivoting / no pivoting, pivot on the GPU", "goal (beyond the papers): <= 1.2 at n >= 2048",
              "; ".join(f"{ts[k]['lu_partial_gpu'] / ts[k]['lu_none']:.2f} at n = {k}"
                        for k in sorted(ts) if k >= 2048 or k == n)),
        Claim("LU full pivoting: pivot on the GPU / read back", "no figure (beyond the papers)",
              f"{t['lu_full_gpu'] / t['lu_full']:.2f} at n = {n}" if "lu_full" in t else
              f"not run at n = {n} (full pivoting only up to {FULL_MAX})"),
        Claim("Cholesky GPU (faithful) / CPU spotrf time", "no figure",
              f"{t['cholesky'] / t['spotrf']:.2f} at n = {n}"),
        Claim("blocked Cholesky speed-up over the faithful one", "goal (beyond the papers): >= 4 at n = 4096",
              f"{t['cholesky'] / t['cholesky_blocked8']:.2f} (b = 8), {t['cholesky'] / t['cholesky_blocked16']:.2f} "
              f"(b = 16); with panels one pass a column {t['cholesky'] / t['cholesky_blocked16_onepass']:.2f} "
              f"(b = 16), {t['cholesky'] / t['cholesky_blocked32_onepass']:.2f} (b = 32) at n = {n}"),
        Claim("blocked LU (partial pivoting) speed-up over the faithful one (pivot read back)", "no figure",
              f"{t['lu_partial'] / t['lu_partial_blocked8']:.2f} (b = 8), {t['lu_partial'] / t['lu_partial_blocked16']:.2f} "
              f"(b = 16) at n = {n}"),
        Claim("blocked Cholesky / CPU spotrf time", "goal (beyond the papers): < 1",
              f"{min(t['cholesky_blocked8'], t['cholesky_blocked16']) / t['spotrf']:.2f} (faithful panels), "
              f"{min(t['cholesky_blocked16_onepass'], t['cholesky_blocked32_onepass']) / t['spotrf']:.2f} "
              f"(panels one pass a column) at n = {n} (the better b)"),
    ]
    if "cusolver_potrf" in t:
        out.append(Claim("Cholesky GPU (faithful) / cuSOLVER potrf time", "no figure",
                         f"{t['cholesky'] / t['cusolver_potrf']:.0f} at n = {n}"))
    return out


def plot(rows, fig, renderer):
    ax1, ax2 = fig.subplots(1, 2)
    labels = {**GPU_ROWS, **CPU_ROWS, **CUDA_ROWS}
    line_plot(rows, ax1, "n", "seconds", "algorithm", labels)
    ax1.set_xlabel("n")
    ax1.set_ylabel("time (s)")
    ax1.set_yscale("log")
    ax1.set_title("factorization time", fontsize=9)
    gpu = [dict(r, fill_percent=100 * r["fill_fraction"]) for r in rows if r.get("fill_fraction") is not None]
    line_plot(gpu, ax2, "n", "fill_percent", "algorithm", GPU_ROWS)
    ax2.set_xlabel("n")
    ax2.set_ylabel("fragments/s, % of the fill limit")
    ax2.set_title("the faithful kernels against the fill limit", fontsize=9)


EXPERIMENT = Experiment(
    name="speed", title="Factorizations against the fill limit, LAPACK and cuSOLVER",
    paper="beyond the papers",
    sizes_software=[64, 128], sizes_gpu=[1024, 2048, 4096, 8192],
    run=run, plot=plot, repeat_software=3, repeat_gpu=3)

if __name__ == "__main__":
    raise SystemExit(EXPERIMENT.main())
