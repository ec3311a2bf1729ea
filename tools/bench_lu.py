"""The blocked LU with the pivots on the GPU against LAPACK's sgetrf, n = 1024, 2048, 4096.

    python tools/bench_lu.py                          # b = 16 and 32, n = 1024 2048 4096
    python tools/bench_lu.py --sizes 512 --blocks 16  # a quick look on a software renderer
    python tools/bench_lu.py --sizes 4096 --blocks 32 64 --repeat 1   # the breakdown at 4096

Per n and block b it prints: the GPU's time of ``lu_factor(S, variant="blocked", pivots="gpu",
check=False)`` on a Stream (median of ``--repeat`` after one warm-up; each run from an idle GPU
to ``finish()``, including the one read-back of the pivots), scipy's sgetrf on the same float32
matrix with all the threads its BLAS has (median of ``--repeat`` after a warm-up), the GPU's
passes and read-backs (one counted run), and both backward errors ‖PA − LU‖_F / ‖A‖_F in
float64. The pivots are compared with sgetrf's (a random normal matrix: distinct enough).
``issue s``: the time the host spends issuing the pre-built plan's passes (inside
``CompiledPlan.run``, one run; the GPU works behind it), i.e. the host's share: near the GPU
time, the factorization is bound by the host's cost per pass, not by the GPU.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
from scipy.linalg import lapack  # noqa: E402

import gpgpu  # noqa: E402
from gpgpu import Stream, counters  # noqa: E402


def _median_time(fn, repeat: int, finish) -> float:
    out = fn()                      # warm-up: compile, first draws
    finish()
    _release(out)
    times = []
    for _ in range(repeat):
        finish()
        t0 = time.perf_counter()
        out = fn()
        finish()
        times.append(time.perf_counter() - t0)
        _release(out)
    return statistics.median(times)


def _release(out) -> None:
    if hasattr(out, "release"):
        out.release()


class _ReadBacks:
    """Counts Stream read-backs (read_texel, to_array, item) while active."""

    def __enter__(self):
        self.n, self._saved = 0, {}
        for name in ("read_texel", "to_array", "item"):
            original = self._saved[name] = getattr(Stream, name)

            def counting(s, *a, _original=original, **k):
                self.n += 1
                return _original(s, *a, **k)

            setattr(Stream, name, counting)
        return self

    def __exit__(self, *exc):
        for name, original in self._saved.items():
            setattr(Stream, name, original)


def _issue_time(fn, finish) -> float:
    """Seconds spent inside CompiledPlan.run during one ``fn()`` (the host issuing the plan)."""
    from gpgpu.passes import CompiledPlan

    spent, original = [0.0], CompiledPlan.run

    def timed(self, *a, **k):
        t0 = time.perf_counter()
        try:
            return original(self, *a, **k)
        finally:
            spent[0] += time.perf_counter() - t0

    finish()
    CompiledPlan.run = timed
    try:
        _release(fn())
    finally:
        CompiledPlan.run = original
    finish()
    return spent[0]


def backward_error(A: np.ndarray, LU: np.ndarray, perm: np.ndarray) -> float:
    L = np.tril(LU, -1).astype(np.float64) + np.eye(len(A))
    U = np.triu(LU).astype(np.float64)
    return float(np.linalg.norm(A[perm].astype(np.float64) - L @ U) / np.linalg.norm(A.astype(np.float64)))


def sgetrf_perm(ipiv: np.ndarray) -> np.ndarray:
    perm = np.arange(len(ipiv))
    for k, p in enumerate(ipiv):
        perm[[k, p]] = perm[[p, k]]
    return perm


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048, 4096])
    ap.add_argument("--blocks", type=int, nargs="+", default=[16, 32])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--breakdown", type=int, default=None,
                    help="n of the per-kernel GPU time breakdown (default the largest size; 0: none)")
    args = ap.parse_args(argv)
    ctx = gpgpu.get_context()
    print(f"renderer: {ctx.info['GL_RENDERER']}; CPU threads: {os.cpu_count()} "
          f"(OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')})")
    head = (f"{'n':>6} {'b':>3} {'GPU s':>9} {'sgetrf s':>9} {'GPU/sgetrf':>10} {'issue s':>8} {'passes':>7} {'reads':>5} "
            f"{'passes/col':>10} {'GPU err':>9} {'sgetrf err':>10} {'pivots':>7}")
    print(head)
    for n in args.sizes:
        A = np.random.default_rng(n).standard_normal((n, n)).astype(np.float32)
        t_cpu = _median_time(lambda: lapack.sgetrf(A), args.repeat, lambda: None)
        lu_c, ipiv, info = lapack.sgetrf(A)
        perm_c = sgetrf_perm(ipiv)
        err_c = backward_error(A, lu_c, perm_c)
        with Stream.from_array(A, "A") as S:
            for b in args.blocks:
                run = lambda: gpgpu.lu_factor(S, "partial", check=False, variant="blocked", block=b,  # noqa: E731
                                              pivots="gpu")
                t_gpu = _median_time(run, args.repeat, ctx.finish)
                with _ReadBacks() as rb, counters.count(time=False, trace=False) as c:
                    f = run()
                passes, reads = c.passes(), rb.n
                f.release()
                issue = _issue_time(run, ctx.finish)
                f = run()
                LU = f.LU.to_array()
                perm = np.asarray(f.row_perm)
                f.release()
                err = backward_error(A, LU, perm)
                same = "same" if np.array_equal(perm, perm_c) else "differ"
                print(f"{n:>6} {b:>3} {t_gpu:>9.4f} {t_cpu:>9.4f} {t_gpu / t_cpu:>10.2f} {issue:>8.4f} {passes:>7} {reads:>5} "
                      f"{passes / n:>10.2f} {err:>9.2e} {err_c:>10.2e} {same:>7}", flush=True)
    n = max(args.sizes) if args.breakdown is None else args.breakdown
    if n:
        A = np.random.default_rng(n).standard_normal((n, n)).astype(np.float32)
        with Stream.from_array(A, "A") as S:
            for b in args.blocks:
                print(breakdown(S, b, ctx.finish), flush=True)
    return 0


def breakdown(S, b: int, finish) -> str:
    """Per kernel of one blocked LU of the Stream S (block b, pivots on the GPU): passes,
    fragments, GPU time from a timer query around each pass, as a table."""
    run = lambda: gpgpu.lu_factor(S, "partial", check=False, variant="blocked", block=b, pivots="gpu")  # noqa: E731
    _release(run())                  # compiled programs and plan
    finish()
    t0 = time.perf_counter()
    with counters.count(time=True, trace=False) as c:
        _release(run())
        finish()
    wall = time.perf_counter() - t0
    total = c.gpu_seconds() or float("nan")
    rows = [f"n = {S.rows}, b = {b}: per kernel (timer query a pass; {c.passes()} passes, "
            f"GPU {total * 1e3:.1f} ms summed, {wall:.2f} s wall with the queries)",
            f"  {'kernel':38s} {'passes':>7s} {'fragments':>12s} {'GPU ms':>9s} {'us/pass':>8s} "
            f"{'Gfrag/s':>8s} {'share':>6s}"]
    for name, st in sorted(c.stats.items(), key=lambda kv: -kv[1].gpu_ns):
        ms = st.gpu_ns * 1e-6
        rate = st.fragments / (st.gpu_ns or 1)
        rows.append(f"  {name:38s} {st.passes:7d} {st.fragments:12d} {ms:9.2f} {1e3 * ms / st.passes:8.2f} "
                    f"{rate:8.2f} {100 * st.gpu_ns * 1e-9 / total:5.1f}%")
    return "\n".join(rows)


if __name__ == "__main__":
    sys.exit(main())
