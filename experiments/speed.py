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

The sparse half (``--parts``: ``dense``, ``sparse`` or its pieces ``cg``, ``spmv``, ``pcg``;
default both halves), beyond the papers (002 found the GPU 1.1-3.9x faster than the CPU over
whole IPM solves):

* CG on 2-D Poisson k² (``--cg-sizes`` k; b standard normal, seed k; rtol 1e-5): ``gpgpu.cg``
  with the presets "paper" (003 as printed: pyramid sums, ||r|| read back every iteration) and
  "fast" (fan sums, read-backs every 16 iterations), scipy's float32 cg with BLAS on one thread
  and on all cores (threadpoolctl), and ``cupyx.scipy.sparse.linalg.cg`` (cuSPARSE) where cupy
  imports and finds a CUDA device. Each row: the median total time, the iterations, the time an
  iteration and the true relative residual ||b - A x|| / ||b|| in float64; the GPU rows also
  the passes and the bytes written an iteration (:func:`experiments.sparse_timing.cg_per_iteration`);
* y = A x on Poisson k² (``--spmv-sizes``) and on the LP matrices of ``--spmv-problems`` (nug30 on
  a GPU): ``SparseStream`` in ELLPACK and packed, scipy CSR (float32; its product runs on one
  thread) and cuSPARSE CSR through cupyx where importable. Each product is timed in a batch of
  ``SPMV_BATCH`` between two ``finish()`` (the pipeline's rate, as cuSPARSE's between two
  synchronizations), median of the repeats;
* PCG of the matrix-free IPM on ``--pcg-problems`` (nug12, nug20, nug30 on a GPU; the Gruca-like
  stand-in of 256 rows on a software renderer) for a fixed
  budget (``--pcg-ipm-iterations`` 3 interior point iterations, ``--pcg-maxiter`` 100 PCG
  iterations a solve): the gpu back end with its fused iteration and fan sums (and 002's
  kernels, ``fused=False``, with 002's pairwise sums, from plans), and numpy64 with BLAS on one
  thread; time a PCG iteration = the solve's PCG
  time over its PCG iterations (:func:`experiments.sparse_timing.timed_ipm_solve`).

A GPU row's ``fill_fraction`` is the time the fill limit would take to write the bytes the row
writes an iteration (or a product) over the time measured: bytes written / (4 bytes x
``gpgpu.bench.fill_limit(1)``, an R32F target's fragments a second) / seconds. The claims
state the figures, or "not measured" (a row absent, e.g. no cupy, or a size not run).
"""
from __future__ import annotations

import argparse
import os

import numpy as np

from experiments.common import cholesky_gpu, general_matrix, spd_matrix, upload_lower
from experiments.harness import Claim, Experiment, counted, line_plot, positive_int, release, size_list, timed
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


SPARSE_ROWS = {
    "cg_paper": "CG, preset paper (faithful, 003)", "cg_fast": "CG, preset fast (beyond)",
    "scipy_cg_1t": "scipy float32 cg, 1 thread (CPU)", "scipy_cg_threads": "scipy float32 cg, all threads (CPU)",
    "cupyx_cg": "cupyx cg (cuSPARSE)",
    "spmv_ellpack": "y = A x, ELLPACK", "spmv_packed": "y = A x, packed (beyond)",
    "scipy_csr": "y = A x, scipy CSR (CPU, 1 thread)", "cusparse_csr": "y = A x, cuSPARSE CSR (cupyx)",
    "pcg_gpu_fan": "PCG, GPU, fused, fan sums (beyond)", "pcg_gpu_pingpong": "PCG, GPU, 002's kernels and sums, planned",
    "pcg_numpy64": "PCG, numpy64 (CPU, 1 thread)",
}
PARTS = ("dense", "cg", "spmv", "pcg", "lp")
#: what runs without --parts: the factorizations and the sparse half
DEFAULT_PARTS = ("dense", "cg", "spmv", "pcg")
#: the LP rows' problems on a software renderer (all shipped NETLIB problems on a GPU)
LP_SOFTWARE_PROBLEMS = ["afiro", "sc50b", "blend", "adlittle"]
CG_RTOL = 1e-5
#: products timed back to back between two finish() calls (the pipeline's rate)
SPMV_BATCH = 20
#: the CG claims' size (Poisson k²)
CG_CLAIM_K = 512


def part_list(text: str) -> tuple:
    """argparse type for --parts: comma-separated dense, sparse (= cg, spmv, pcg), cg, spmv, pcg, lp."""
    out = []
    for t in (v.strip().lower() for v in text.split(",") if v.strip()):
        if t == "sparse":
            out += ["cg", "spmv", "pcg"]
        elif t in PARTS:
            out.append(t)
        else:
            raise argparse.ArgumentTypeError(f"unknown part {t!r}: give comma-separated parts among dense, sparse "
                                             f"(or its pieces cg, spmv, pcg) and lp, e.g. --parts dense,sparse")
    if not out:
        raise argparse.ArgumentTypeError("expected comma-separated parts, e.g. --parts dense,sparse")
    return tuple(p for p in PARTS if p in out)


def name_list(text: str) -> list:
    """Comma-separated problem names; 'none' for none."""
    return [] if text.strip().lower() == "none" else [t.strip() for t in text.split(",") if t.strip()]


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


def _fill(row: dict, written: float, seconds: float, limit: float) -> dict:
    """The row's bytes written (an iteration or a product) and their time at the fill limit over
    the time measured (module notes)."""
    row["written_bytes"] = written
    row["fill_fraction"] = written / (4 * limit) / seconds if limit and seconds > 0 else None
    return row


def _poisson_system(k: int):
    from experiments.cg.common import poisson2d

    A = poisson2d(k)
    return A, np.random.default_rng(k).standard_normal(A.shape[0])


def _cg_rows(k, repeat, limit):
    """CG on Poisson k²: gpgpu.cg's presets paper and fast, scipy float32 (1 thread and all),
    cupyx where importable (module notes)."""
    import scipy.sparse.linalg as spla

    import gpgpu
    from experiments.sparse_timing import blas_threads, cg_per_iteration, cupyx_cg

    A, b = _poisson_system(k)
    n, bn = A.shape[0], float(np.linalg.norm(b))
    base = {"part": "cg", "problem": f"poisson{k}", "size": n, "nnz": A.nnz}
    rows = []

    def row(name, device, seconds, x, iterations, info, **extra):
        r = dict(base, algorithm=name, device=device, seconds=seconds, iterations=iterations,
                 seconds_per_iteration=seconds / max(iterations, 1), info=info,
                 residual=float(np.linalg.norm(b - A @ np.asarray(x, dtype=np.float64)) / bn), **extra)
        rows.append(r)
        return r

    for preset in ("paper", "fast"):
        last = []
        seconds = timed(lambda: gpgpu.cg(A, b, rtol=CG_RTOL, preset=preset), repeat, last.append)
        res = last[-1]
        per = cg_per_iteration(A, b, {"preset": preset}, iterations=res.iterations)
        r = row(f"cg_{preset}", "gpu", seconds, res[0], res.iterations, int(res[1]),
                passes_per_iteration=per["passes"], fragments_per_iteration=per["fragments"])
        _fill(r, per["written"], r["seconds_per_iteration"], limit)
    A32, b32 = A.astype(np.float32), b.astype(np.float32)
    for name, threads in (("scipy_cg_1t", 1), ("scipy_cg_threads", os.cpu_count() or 1)):
        context, label = blas_threads(threads)
        last = []

        def scipy32():
            its = [0]

            def count(xk):
                its[0] += 1
            x, info = spla.cg(A32, b32, rtol=CG_RTOL, maxiter=10 * n, callback=count)
            return x, info, its[0]
        with context:
            seconds = timed(scipy32, repeat, last.append)
        x, info, its = last[-1]
        row(name, "cpu", seconds, x, its, int(info), threads=label)
    solve = cupyx_cg(A32, b32, CG_RTOL, 10 * n)
    if solve is not None:
        last = []
        seconds = timed(solve, max(3, repeat), last.append)
        x, info, its = last[-1]
        row("cupyx_cg", "cuda", seconds, x, its, info)
    return rows


def _spmv_rows(name, A, repeat, limit):
    """y = A x: SparseStream ELLPACK and packed, scipy CSR float32, cuSPARSE where importable."""
    import scipy.sparse as sp

    from experiments.sparse_timing import WriteCounter, cusparse_product
    from gpgpu import SparseStream, Stream, counters

    A = sp.csr_matrix(A)
    m, n = A.shape
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    want = A @ x.astype(np.float64)
    scale = max(1e-30, float(np.abs(want).max()))
    base = {"part": "spmv", "problem": name, "size": m, "nnz": A.nnz}
    rows = []

    def row(algorithm, device, seconds, y, **extra):
        err = float(np.abs(np.asarray(y, dtype=np.float64).reshape(-1)[:m] - want).max() / scale)
        r = dict(base, algorithm=algorithm, device=device, seconds=seconds, gnnz=A.nnz / seconds / 1e9,
                 error=err, **extra)
        rows.append(r)
        return r

    for fmt in ("ellpack", "packed"):
        S = SparseStream.from_scipy(A, format=fmt)
        xs, ys = Stream.vector_of(n, data=x), Stream.vector_of(m)
        try:
            def batch():
                for _ in range(SPMV_BATCH):
                    S.matvec(xs, out=ys)
            seconds = timed(batch, repeat) / SPMV_BATCH
            with counters.activated(WriteCounter(time=False, keep_trace=False)) as c:
                S.matvec(xs, out=ys)
            r = row(f"spmv_{fmt}", "gpu", seconds, ys.to_array(), passes=c.passes(), fragments=c.fragments())
            _fill(r, c.written(), seconds, limit)
        finally:
            xs.release(), ys.release(), S.release()
    A32 = A.astype(np.float32)
    out = []

    def cpu_batch():
        for _ in range(SPMV_BATCH):
            y = A32 @ x
        out.append(y)
    row("scipy_csr", "cpu", timed(cpu_batch, repeat) / SPMV_BATCH, out[-1], threads="1")
    cuda = cusparse_product(A32, x)
    if cuda is not None:
        seconds = timed(lambda: cuda(SPMV_BATCH), max(3, repeat)) / SPMV_BATCH
        import cupy
        row("cusparse_csr", "cuda", seconds, cupy.asnumpy(cuda(1)))
    return rows


PCG_RUNS = (("pcg_gpu_fan", "gpu", {"sums": "fan", "plan": True}),
            ("pcg_gpu_pingpong", "gpu", {"sums": "pingpong", "plan": True, "fused": False}),
            ("pcg_numpy64", "numpy64", {}))


def _pcg_rows(name, p, ipm_iterations, pcg_maxiter, check, limit):
    """PCG of the matrix-free IPM for a fixed budget: the gpu back end (fused with fan sums;
    002's kernels with pairwise sums, planned) and numpy64 on one thread (module notes)."""
    from experiments.sparse_timing import blas_threads, pcg_per_iteration, timed_ipm_solve

    rows = []
    base = {"part": "pcg", "problem": name, "size": p.A.shape[0], "nnz": p.A.nnz}
    for algorithm, backend, kw in PCG_RUNS:
        if backend == "gpu":
            kw = dict(kw, pcg_check=check)
            r, wall = timed_ipm_solve(p, backend, ipm_iterations, pcg_maxiter, **kw)
            per = pcg_per_iteration(p, kw["sums"], kw["plan"], check, fused=kw.get("fused", True))
            extra = {"passes_per_iteration": per["passes"], "fragments_per_iteration": per["fragments"]}
        else:
            context, label = blas_threads(1)
            with context:
                r, wall = timed_ipm_solve(p, backend, ipm_iterations, pcg_maxiter)
            extra, per = {"threads": label}, None
        seconds = r.timers["pcg"]
        row = dict(base, algorithm=algorithm, device="gpu" if backend == "gpu" else "cpu", seconds=seconds,
                   iterations=r.pcg_iterations, ipm_iterations=r.iterations,
                   seconds_per_iteration=seconds / max(r.pcg_iterations, 1), solve_seconds=wall, **extra)
        if per is not None:
            _fill(row, per["written"], row["seconds_per_iteration"], limit)
        rows.append(row)
    return rows


def _sparse_defaults(ctx) -> dict:
    o = ctx.options
    sw = ctx.software
    return {"cg": o.get("cg_sizes") or ([8, 16] if sw else [256, 512]),
            "spmv": o.get("spmv_sizes") or ([32, 64] if sw else [512, 1024]),
            "spmv_problems": o.get("spmv_problems") if o.get("spmv_problems") is not None else
            (["nug12"] if sw else ["nug30"]),
            "pcg_problems": o.get("pcg_problems") if o.get("pcg_problems") is not None else
            (["gruca_like_256"] if sw else ["nug12", "nug20", "nug30"])}


def run(ctx):
    from experiments.sparse_timing import load_problem
    from gpgpu.bench import fill_limit

    parts = ctx.options.get("parts") or DEFAULT_PARTS
    if isinstance(parts, str):
        parts = part_list(parts)
    limit = fill_limit(1)
    sparse = _sparse_defaults(ctx)
    steps = [("dense", n) for n in (ctx.sizes if "dense" in parts else [])]
    steps += [("cg", k) for k in (sparse["cg"] if "cg" in parts else [])]
    steps += [("spmv", k) for k in (sparse["spmv"] if "spmv" in parts else [])]
    steps += [("spmv", name) for name in (sparse["spmv_problems"] if "spmv" in parts else [])]
    steps += [("pcg", name) for name in (sparse["pcg_problems"] if "pcg" in parts else [])]
    steps += [("lp", path) for path in (_lp_problems(ctx) if "lp" in parts else [])]
    if "dense" in parts:
        _gpu_rows(8, 1, limit)             # compile every program once, untimed
    ipm_its, pcg_maxiter = ctx.options.get("pcg_ipm_iterations") or 3, ctx.options.get("pcg_maxiter") or 100
    check = ctx.options.get("pcg_check") or 8
    rows = []
    for part, key in ctx.steps(steps, unit="step"):
        if part == "dense":
            new = _gpu_rows(key, ctx.repeat, limit) + _cpu_rows(key, ctx.repeat) + _cuda_rows(key, ctx.repeat)
            for r in new:
                r["part"] = "dense"
            label = f"n={key}"
        elif part == "cg":
            new, label = _cg_rows(key, ctx.repeat, limit), f"CG poisson{key}"
        elif part == "spmv" and isinstance(key, int):
            new, label = _spmv_rows(f"poisson{key}", _poisson_system(key)[0], ctx.repeat, limit), f"SpMV poisson{key}"
        elif part == "spmv":
            new, label = _spmv_rows(key, load_problem(key).A, ctx.repeat, limit), f"SpMV {key}"
        elif part == "lp":
            from experiments.netlib import lp_speed_rows

            new, label = lp_speed_rows(key), f"LP {key.name.split('.')[0]}"
        else:
            new, label = _pcg_rows(key, load_problem(key), ipm_its, pcg_maxiter, check, limit), f"PCG {key}"
        rows += new
        ctx.progress(f"{label}: " + ", ".join(f"{r['algorithm']} {r['seconds']:.3g} s" for r in new))
    for r in rows:
        r["fill_limit"] = limit
    dense = [r for r in rows if r.get("part") == "dense"]
    out = claims(dense, ctx.sizes, limit) if dense else []
    if any(p in parts for p in ("cg", "spmv", "pcg")):
        out += sparse_claims(rows, parts)
    if "lp" in parts:
        out += lp_claims([r for r in rows if r.get("part") == "lp"])
    return rows, out


def _lp_problems(ctx) -> list:
    """The MPS files of ``--lp-problems`` (default: every shipped NETLIB problem on a GPU, four
    small ones of Table 3 on a software renderer)."""
    from gpgpu.lp.netlib import netlib_path

    from experiments.netlib import problem_files

    names = ctx.options.get("lp_problems")
    if names is None:
        if ctx.software:
            names = LP_SOFTWARE_PROBLEMS
        else:
            return [path for _, _, path in problem_files()]
    return [netlib_path(name) for name in names]


def lp_claims(rows) -> list:
    """The LP's speed (beyond the papers) as measured on this run: Table 3's
    ten with the GPU's defaults, the GPU against numpy64 where the normal matrix has 500 rows or
    more, host time a pass over whole solves, and every solve optimal."""
    from gpgpu.lp.netlib import PROBLEMS

    def get(problem, algorithm):
        return next((r for r in rows if r["problem"] == problem and r["algorithm"] == algorithm), None)

    out = []
    problems = list(dict.fromkeys(r["problem"] for r in rows))
    gpu = [get(p, "gpu_defaults") for p in problems]
    table3 = [r for r in gpu if r is not None and r["problem"] in PROBLEMS]
    if len(table3) == len(PROBLEMS):
        total = sum(r["seconds"] for r in table3)
        out.append(Claim("Table 3's ten at eps 1e-8 with the GPU's defaults: total time",
                         "no figure (beyond the papers)",
                         f"{total:.2f} s; numpy64 "
                         f"{sum(get(r['problem'], 'numpy64')['seconds'] for r in table3):.2f} s, HiGHS IPM "
                         f"{sum(get(r['problem'], 'highs_ipm')['seconds'] for r in table3):.2f} s"))
    else:
        out.append(Claim("Table 3's ten at eps 1e-8 with the GPU's defaults: total time",
                         "no figure (beyond the papers)", "not measured (not all ten run)"))
    large = [(r, get(r["problem"], "numpy64")) for r in gpu if r is not None and r["normal_rows"] >= 500]
    if large:
        slower = [f"{g['problem']} ({g['seconds']:.2f} s against {n['seconds']:.2f} s)" for g, n in large
                  if g["seconds"] > n["seconds"]]
        out.append(Claim("the GPU's defaults as fast as numpy64 or faster, where the normal matrix has >= 500 rows",
                         "no figure (beyond the papers)",
                         f"{len(large) - len(slower)} of {len(large)}"
                         + (f"; slower: {', '.join(slower)}" if slower else "")))
    drawn = [r for r in gpu if r is not None and r["passes"]]
    if drawn:
        per = sum(r["host_us_per_pass"] * r["passes"] for r in drawn) / sum(r["passes"] for r in drawn)
        worst = max(drawn, key=lambda r: r["host_us_per_pass"])
        out.append(Claim("host time a pass over whole solves (GPU defaults)", "no figure (beyond the papers)",
                         f"{per:.2f} us over {len(drawn)} solves; the largest "
                         f"{worst['host_us_per_pass']:.2f} us ({worst['problem']})"))
    for label in ("gpu_defaults", "numpy64"):
        sel = [r for r in rows if r["algorithm"] == label]
        if sel:
            misses = [f"{r['problem']} ({r['status']}, {r['objective_error']:.1e})" for r in sel if not r["right"]]
            out.append(Claim(f"{label}: optimal at eps 1e-8, objective within 1e-6 of HiGHS", "all",
                             f"{len(sel) - len(misses)} of {len(sel)}" + (f"; not: {', '.join(misses)}" if misses else "")))
    return out


def claims(rows, sizes, limit):
    n = max(sizes)
    t = {r["algorithm"]: r["seconds"] for r in rows if r["n"] == n}
    f = {r["algorithm"]: r.get("fill_fraction") for r in rows if r["n"] == n}
    ts = {}
    for r in rows:
        ts.setdefault(r["n"], {})[r["algorithm"]] = r["seconds"]
    out = [
        Claim("Cholesky (faithful) fragment rate / fill limit", "no figure (beyond the papers)",
              f"{f['cholesky']:.0%} at n = {n} ({limit / 1e9:.3g} Gfragments/s limit)",
              "all passes' fragments (occlusion queries) / wall time; gpgpu.bench.fill_limit(1)"),
        Claim("LU partial pivoting / no pivoting, pivot read back", "no figure (beyond the papers)",
              f"{t['lu_partial'] / t['lu_none']:.2f} at n = {n}"),
        Claim("LU partial pivoting / no pivoting, pivot on the GPU", "no figure (beyond the papers)",
              "; ".join(f"{ts[k]['lu_partial_gpu'] / ts[k]['lu_none']:.2f} at n = {k}"
                        for k in sorted(ts) if k >= 2048 or k == n)),
        Claim("LU full pivoting: pivot on the GPU / read back", "no figure (beyond the papers)",
              f"{t['lu_full_gpu'] / t['lu_full']:.2f} at n = {n}" if "lu_full" in t else
              f"not run at n = {n} (full pivoting only up to {FULL_MAX})"),
        Claim("Cholesky GPU (faithful) / CPU spotrf time", "no figure",
              f"{t['cholesky'] / t['spotrf']:.2f} at n = {n}"),
        Claim("blocked Cholesky speed-up over the faithful one", "no figure (beyond the papers)",
              f"{t['cholesky'] / t['cholesky_blocked8']:.2f} (b = 8), {t['cholesky'] / t['cholesky_blocked16']:.2f} "
              f"(b = 16); with panels one pass a column {t['cholesky'] / t['cholesky_blocked16_onepass']:.2f} "
              f"(b = 16), {t['cholesky'] / t['cholesky_blocked32_onepass']:.2f} (b = 32) at n = {n}"),
        Claim("blocked LU (partial pivoting) speed-up over the faithful one (pivot read back)", "no figure",
              f"{t['lu_partial'] / t['lu_partial_blocked8']:.2f} (b = 8), {t['lu_partial'] / t['lu_partial_blocked16']:.2f} "
              f"(b = 16) at n = {n}"),
        Claim("blocked Cholesky / CPU spotrf time", "no figure (beyond the papers)",
              f"{min(t['cholesky_blocked8'], t['cholesky_blocked16']) / t['spotrf']:.2f} (faithful panels), "
              f"{min(t['cholesky_blocked16_onepass'], t['cholesky_blocked32_onepass']) / t['spotrf']:.2f} "
              f"(panels one pass a column) at n = {n} (the better b)"),
    ]
    if "cusolver_potrf" in t:
        out.append(Claim("Cholesky GPU (faithful) / cuSOLVER potrf time", "no figure",
                         f"{t['cholesky'] / t['cusolver_potrf']:.0f} at n = {n}"))
    return out


def sparse_claims(rows, parts=PARTS) -> list:
    """The sparse solvers' speed (beyond the papers) as measured, or "not measured" where a row is absent (no cupy, a size or problem not run)."""
    def get(part, problem, algorithm):
        return next((r for r in rows if r.get("part") == part and r.get("problem") == problem
                     and r.get("algorithm") == algorithm), None)

    out = []
    if "cg" in parts:
        ks = sorted(int(r["problem"][len("poisson"):]) for r in rows
                    if r.get("part") == "cg" and r.get("algorithm") == "cg_paper")
        k = CG_CLAIM_K if CG_CLAIM_K in ks else (ks[-1] if ks else None)
        at = ""
        prob = f"poisson{k}"
        cupyx = get("cg", prob, "cupyx_cg")
        for preset in ("fast", "paper"):
            mine = get("cg", prob, f"cg_{preset}")
            text = f"CG, preset {preset} / cupyx CG total time, Poisson {CG_CLAIM_K}²"
            paper = "no figure (beyond the papers)"
            if mine is None or cupyx is None:
                why = "no CG rows" if k is None else ("cupyx not importable" if cupyx is None else "no row")
                out.append(Claim(text, paper, f"not measured ({why})"))
                continue
            ratio = mine["seconds"] / cupyx["seconds"]
            out.append(Claim(text, paper, f"{mine['seconds']:.3g} s / "
                             f"{cupyx['seconds']:.3g} s = {ratio:.2f} at {k}²{at} ({mine['iterations']} and "
                             f"{cupyx['iterations']} iterations)", "median wall time of whole solves, rtol 1e-5"))
        sci = get("cg", prob, "scipy_cg_1t")
        text = "CG iterations / scipy float32 cg's, presets paper and fast"
        paper = "no figure (beyond the papers)"
        if sci is None or k is None:
            out.append(Claim(text, paper, "not measured (no CG rows)"))
        else:
            figs = []
            for preset in ("paper", "fast"):
                mine = get("cg", prob, f"cg_{preset}")
                if mine is None:
                    continue
                dev = mine["iterations"] / max(sci["iterations"], 1) - 1
                figs.append(f"{preset} {mine['iterations']} ({dev:+.1%}, true residual {mine['residual']:.2e})")
            out.append(Claim(text, paper, ", ".join(figs) + f" against scipy's "
                             f"{sci['iterations']} (true residual {sci['residual']:.2e}) at {k}²{at}",
                             "true residual ||b - A x|| / ||b|| in float64"))
        sci_t = get("cg", prob, "scipy_cg_threads")
        for algorithm in ("cg_fast", "cg_paper"):
            mine = get("cg", prob, algorithm)
            if mine is None or sci is None:
                continue
            cpu = f"{1e3 * sci['seconds_per_iteration']:.3g} ms (1 thread)"
            if sci_t is not None:
                cpu += f", {1e3 * sci_t['seconds_per_iteration']:.3g} ms (all threads)"
            fill = mine.get("fill_fraction")
            out.append(Claim(f"CG, preset {algorithm[3:]}: time an iteration against scipy float32 cg",
                             "no figure (beyond the papers)",
                             f"{1e3 * mine['seconds_per_iteration']:.3g} ms against {cpu} at {k}²; "
                             f"{mine['passes_per_iteration']:.1f} passes an iteration"
                             + (f", {fill:.1%} of the fill limit" if fill is not None else ""),
                             "bytes written an iteration / (4 B x gpgpu.bench.fill_limit(1)) / its time"))
    if "spmv" in parts:
        text = "y = A x on nug30's A / cuSPARSE CSR time"
        paper = "no figure (beyond the papers)"
        cus = get("spmv", "nug30", "cusparse_csr")
        mine = {f: get("spmv", "nug30", f"spmv_{f}") for f in ("ellpack", "packed")}
        mine = {f: r for f, r in mine.items() if r is not None}
        if cus is None or not mine:
            why = "nug30 not run" if not mine else "cupyx not importable"
            out.append(Claim(text, paper, f"not measured ({why})"))
        else:
            out.append(Claim(text, paper, ", ".join(
                f"{f} {1e3 * r['seconds']:.3g} ms ({r['seconds'] / cus['seconds']:.2f}, "
                f"{r['fill_fraction']:.1%} of the fill limit)" for f, r in mine.items())
                + f" against cuSPARSE's {1e3 * cus['seconds']:.3g} ms",
                f"products timed {SPMV_BATCH} back to back between two synchronizations, median"))
    if "pcg" in parts:
        for problem in ("nug20", "nug30"):
            text = f"PCG of the matrix-free IPM, numpy64 (1 thread) / GPU time a PCG iteration, {problem}"
            paper = ("002: the GPU 1.1-3.9x faster over whole solves (Table 3)" if problem == "nug20"
                     else "no figure (beyond the papers)")
            cpu, gpu = get("pcg", problem, "pcg_numpy64"), get("pcg", problem, "pcg_gpu_fan")
            if cpu is None or gpu is None:
                out.append(Claim(text, paper, f"not measured ({problem} not run)"))
                continue
            ratio = cpu["seconds_per_iteration"] / gpu["seconds_per_iteration"]
            pp = get("pcg", problem, "pcg_gpu_pingpong")
            ms_gpu, ms_cpu = 1e3 * gpu["seconds_per_iteration"], 1e3 * cpu["seconds_per_iteration"]
            out.append(Claim(text, paper, f"{ratio:.2f} fused, with fan sums ({ms_gpu:.3g} ms against "
                             f"{ms_cpu:.3g} ms"
                             + (f"; 002's kernels and sums {cpu['seconds_per_iteration'] / pp['seconds_per_iteration']:.2f}"
                                if pp else "") + ")",
                             "the solves' PCG time over their PCG iterations, a fixed budget"))
    return out


def _bars(ax, rows, title):
    """Time an iteration (or a product) per problem, a bar per algorithm, log scale."""
    problems = list(dict.fromkeys(r["problem"] for r in rows))
    algorithms = list(dict.fromkeys(r["algorithm"] for r in rows))
    width = 0.8 / max(len(algorithms), 1)
    for j, a in enumerate(algorithms):
        xs, ys = [], []
        for i, p in enumerate(problems):
            r = next((r for r in rows if r["problem"] == p and r["algorithm"] == a), None)
            if r is not None:
                xs.append(i + j * width)
                ys.append(r.get("seconds_per_iteration", r["seconds"]))
        ax.bar(xs, ys, width, label=SPARSE_ROWS.get(a, a))
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(problems))], problems, fontsize=7)
    ax.set_yscale("log")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=6)


def _lp_plot(ax, rows):
    """Seconds per NETLIB problem: the GPU's defaults, numpy64 and HiGHS's IPM (log scale)."""
    problems = list(dict.fromkeys(r["problem"] for r in rows))
    for j, (a, label) in enumerate((("gpu_defaults", "GPU, defaults"), ("numpy64", "numpy64 (LAPACK)"),
                                    ("highs_ipm", "HiGHS IPM"))):
        pts = [(i, r["seconds"]) for i, p in enumerate(problems) for r in rows
               if r["problem"] == p and r["algorithm"] == a]
        if pts:
            ax.scatter(*zip(*pts), s=10, label=label)
    ax.set_xticks(range(len(problems)), problems, fontsize=5, rotation=90)
    ax.set_yscale("log")
    ax.set_ylabel("seconds")
    ax.set_title("interior-point LP at eps 1e-8", fontsize=9)
    ax.legend(fontsize=6)


def plot(rows, fig, renderer):
    lp = [r for r in rows if r.get("part") == "lp"]
    if lp and all(r.get("part") == "lp" for r in rows):
        _lp_plot(fig.subplots(1, 1), lp)
        return
    sparse = [r for r in rows if r.get("part") in ("cg", "spmv", "pcg")]
    rows = [r for r in rows if r.get("part", "dense") == "dense"]
    if sparse:
        if rows:
            (ax1, ax2), (ax3, ax4) = fig.subplots(2, 2)
        else:
            ax3, ax4 = fig.subplots(1, 2)
        iterative = [r for r in sparse if r["part"] in ("cg", "pcg")]
        if iterative:
            _bars(ax3, iterative, "CG and PCG: time an iteration (s)")
        spmv = [r for r in sparse if r["part"] == "spmv"]
        if spmv:
            _bars(ax4, spmv, "y = A x: time a product (s)")
        if not rows:
            return
    else:
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
    name="speed", title="Factorizations and the sparse half (CG, SpMV, PCG) against the fill limit, the CPU and CUDA libraries",
    paper="beyond the papers",
    sizes_software=[64, 128], sizes_gpu=[1024, 2048, 4096, 8192],
    run=run, plot=plot, repeat_software=3, repeat_gpu=3,
    arguments=[
        ("--parts", {"type": part_list, "default": None,
                     "help": "what to run: comma-separated dense, sparse (or its pieces cg, spmv, pcg); "
                             "default: dense,sparse"}),
        ("--cg-sizes", {"type": size_list, "default": None,
                        "help": "CG on 2-D Poisson k²: the sides k (default: 256,512 on a GPU, 8,16 on a software "
                                "renderer)"}),
        ("--spmv-sizes", {"type": size_list, "default": None,
                          "help": "y = A x on 2-D Poisson k²: the sides k (default: 512,1024 on a GPU, 32,64 on a "
                                  "software renderer)"}),
        ("--spmv-problems", {"type": name_list, "default": None,
                             "help": "y = A x on these LPs' A: QAPLIB names, gruca_like_N or MPS files "
                                     "(default: nug30 on a GPU, nug12 on a software renderer; 'none' for none)"}),
        ("--lp-problems", {"type": name_list, "default": None,
                           "help": "the LP part's NETLIB problems (default: every shipped one on a GPU, "
                                   f"{','.join(LP_SOFTWARE_PROBLEMS)} on a software renderer)"}),
        ("--pcg-problems", {"type": name_list, "default": None,
                            "help": "PCG of the matrix-free IPM on these LPs (default: nug12,nug20,nug30 on a GPU, "
                                    "gruca_like_256 on a software renderer, where nug12 takes a minute; 'none' for none)"}),
        ("--pcg-ipm-iterations", {"type": positive_int, "default": 3,
                                  "help": "interior point iterations of each timed PCG solve (default: 3)"}),
        ("--pcg-maxiter", {"type": positive_int, "default": 100,
                           "help": "PCG iterations a solve at most (default: 100)"}),
        ("--pcg-check", {"type": positive_int, "default": 8,
                         "help": "the GPU's PCG reads its scalars back every this many iterations (default: 8)"}),
    ])

if __name__ == "__main__":
    raise SystemExit(EXPERIMENT.main())
