"""CG on 2-D Poisson systems: passes an iteration, wall microseconds a pass, iterations, total
time and the true residual, for each preset of ``gpgpu.cg`` (and the robust one drawn pass by
pass, ``plan=False``), beside scipy's float32 cg on one thread and cupyx's cg when importable.
Each gpgpu row names the SparseStream format the solve used in brackets (``result.format``: the
fast preset's packed, the others' ELLPACK); "fast, ellpack" is the fast preset with
``format="ellpack"``, so the two storages can be told apart. The fast preset draws the
single-reduction iteration (Chronopoulos and Gear; ``iteration="single-reduction"``, 5 passes an
iteration); "fast, standard" is the fast preset with ``iteration="standard"`` (the fan
iteration of Shewchuk's listing, 9 passes), so the two iterations can be told apart, both also
with the matrix already on the GPU ("A on the GPU"). "robust, check_every=16" is 003's pyramid
iteration (the default preset) reading ||r|| back every 16 iterations instead of every one.

    python tools/bench_cg.py                 # Poisson 256^2 and 512^2
    python tools/bench_cg.py --sizes 128 --host
    python tools/bench_cg.py --check-every 1 4 8 16 32 64     # the fast preset's read-back interval
    python tools/bench_cg.py --sizes 512 --profile            # GPU time of each kernel an iteration
    python tools/bench_cg.py --sizes 512 --profile fast paper
    python tools/bench_cg.py --sizes 512 --profile fast fast:standard   # PRESET:ITERATION

``--profile [PRESET[:ITERATION] ...]`` (default: fast) prints, per kernel of one iteration, the passes, the
fragments, the GPU time (each pass inside a GL timer query, GL_TIME_ELAPSED, by gpgpu.counters)
and the fraction of the fill limit that is: the time the fill limit (``--fill-r32f``, 13.3
Gfragments/s for an R32F target, ``--fill-rgba32f``, 3.4 for RGBA32F, the NVIDIA H100's as
``python -m gpgpu bench`` measured it; a pass of two render targets writes two) would take for
those fragments over the GPU time. The passes an iteration are the difference between a
solve of 48 iterations and one of 16 (both stop at maxiter, unconverged), divided by 32, for
each kernel and target shape; the GPU time of such a pass is the median over the solve of 48.
The timer queries cost: the sum of the GPU times can exceed an iteration's wall time without.

b is standard normal (seed n), rtol 1e-5, as ``experiments.cg.convergence``. Each solve runs
once to warm up (programs compiled, pools filled) and then ``--repeat`` times; the median wall
time is printed. "passes/it" is counted by gpgpu.counters as the difference between solves of
64 and 32 iterations, divided by 32 (read-backs' copies included, once every check_every);
"us/pass" is the median wall time over (passes/it x iterations). "host us/pass" (``--host``)
is Python's cost alone: the same solve with every draw call and read-back made a no-op
(what the GPU would cost nothing for). The true residual is ||b - A x|| / ||b|| in float64.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")          # scipy on one thread (set before numpy loads)

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import scipy.sparse.linalg as spla  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gpgpu  # noqa: E402
from gpgpu import counters  # noqa: E402
from gpgpu.cg import FAST_CHECK_EVERY  # noqa: E402
from experiments.sparse_timing import cg_passes_per_iteration as passes_per_iteration  # noqa: E402

RTOL = 1e-5


def poisson2d(k: int):
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(k, k))
    return (sp.kron(sp.eye(k), T) + sp.kron(T, sp.eye(k))).tocsr()


def median_time(fn, repeat: int):
    fn()
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def host_per_pass(A, b, kw, ppi: float, short: int = 32, long: int = 352) -> float:
    """Python's cost a pass: draws and the read-backs of the watches made no-ops; the time of a
    solve of ``short`` iterations taken from one of ``long`` (the setup drops out)."""
    import moderngl

    from gpgpu import Stream

    cgmod = sys.modules["gpgpu.cg.standard"]
    render, read, to_array = moderngl.VertexArray.render, cgmod._read, Stream.to_array
    fake = [1.0, -1.0, -1.0]          # r^T r, no breakdown, not converged
    # the state texel of the fan iteration (delta, r^T r, watches) and the 1 x 2 state of the
    # single-reduction one ((gamma, alpha, beta, r^T r), (watches, d^T A d, delta)), likewise
    states = {(1, 1): np.array([[[1.0, 1.0, -1.0, -1.0]]], dtype=np.float32),
              (1, 2): np.array([[[1.0, 1.0, 0.0, 1.0], [-1.0, -1.0, 1.0, 1.0]]], dtype=np.float32)}

    def fake_to_array(self, *a, **k):
        if self.shape == (1, 3) and self.components == 1:
            return np.array([fake], dtype=np.float32)
        if self.components == 4 and self.shape in states:
            return states[self.shape].copy()
        return to_array(self, *a, **k)
    moderngl.VertexArray.render = lambda self, *a, **k: None
    cgmod._read = lambda *s: fake
    Stream.to_array = fake_to_array
    try:
        def solve(m):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return gpgpu.cg(A, b, rtol=0.0, maxiter=m, **kw)
        t0 = min(median_time(lambda: solve(short), 1)[0] for _ in range(5))     # the least disturbed
        t1 = min(median_time(lambda: solve(long), 1)[0] for _ in range(5))
    finally:
        moderngl.VertexArray.render, cgmod._read, Stream.to_array = render, read, to_array
    return 1e6 * (t1 - t0) / (ppi * (long - short))


def profile(A, b, kw, rate1: float, rate4: float, short: int = 16, long: int = 48) -> str:
    """Per kernel of one iteration: passes, fragments, GPU microseconds (timer queries) and the
    fraction of the fill limit (see the module docstring)."""
    outputs = {}
    measure = counters.Counter.measure

    def noting(self, kernel, primitive, target, texels, render, inputs=None, uniforms=None):
        outputs[kernel.label] = (target.components, len(getattr(target, "streams", (target,))))
        return measure(self, kernel, primitive, target, texels, render, inputs, uniforms)

    runs = []
    counters.Counter.measure = noting
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gpgpu.cg(A, b, rtol=0.0, maxiter=short, **kw)       # warm-up: programs compiled, pools filled
            for m in (short, long):
                with counters.count(time=True, trace=True) as c:
                    gpgpu.cg(A, b, rtol=0.0, maxiter=m, **kw)
                runs.append(c.trace)
    finally:
        counters.Counter.measure = measure
    # passes an iteration of each (kernel, target shape): exact, from the difference of the runs;
    # its GPU time a pass: the median over the long run's passes (robust to a disturbed pass)
    counts = [{}, {}]
    times, frags = {}, {}
    for i, trace in enumerate(runs):
        for p in trace:
            key = (p.kernel, p.target)
            counts[i][key] = counts[i].get(key, 0) + 1
            if i == 1:
                times.setdefault(key, []).append(p.gpu_ns)
                frags[key] = p.fragments
    its = long - short
    per_kernel = {}
    for key, n1 in counts[1].items():
        passes = (n1 - counts[0].get(key, 0)) / its
        if passes <= 0:
            continue
        us = passes * statistics.median(times[key]) / 1e3
        comps, outs = outputs.get(key[0], (1, 1))
        limit_us = 1e6 * passes * frags[key] * outs / (rate4 if comps == 4 else rate1)
        row = per_kernel.setdefault(key[0], [0.0, 0.0, 0.0, 0.0])
        for j, v in enumerate((passes, passes * frags[key], us, limit_us)):
            row[j] += v
    rows = sorted(((v[2], k, *v[:2], v[3]) for k, v in per_kernel.items()), reverse=True)
    total = [sum(r[i] for r in rows) if i != 1 else "iteration" for i in range(5)]
    lines = [f"  {'kernel':34s} {'passes':>7s} {'fragments':>11s} {'GPU us':>8s} {'us/pass':>8s} "
             f"{'fill-limit us':>13s} {'of limit':>8s}"]
    for us, k, passes, fr, limit_us in rows + [tuple(total)]:
        lines.append(f"  {k:34s} {passes:7.2f} {fr:11.0f} {us:8.1f} {us / passes:8.2f} {limit_us:13.1f} "
                     f"{limit_us / us if us > 0 else float('nan'):8.1%}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[256, 512], help="grid sides k (n = k^2)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--maxiter", type=int, default=None,
                    help="cg's maxiter for every gpgpu row (default cg's own, 10 n): a preset that does not "
                         "reach rtol stops there with info = maxiter")
    ap.add_argument("--host", action="store_true", help="also Python's cost a pass (draws made no-ops)")
    ap.add_argument("--check-every", type=int, nargs="*", default=None,
                    help="also the fast preset with these read-back intervals")
    ap.add_argument("--profile", nargs="*", default=None, metavar="PRESET[:ITERATION]",
                    help="GPU time per kernel of one iteration of these presets (default: fast; "
                         "fast:standard for the fast preset with iteration='standard'), nothing else")
    ap.add_argument("--fill-r32f", type=float, default=13.3e9, help="fill limit, R32F fragments/s (H100)")
    ap.add_argument("--fill-rgba32f", type=float, default=3.4e9, help="fill limit, RGBA32F fragments/s (H100)")
    args = ap.parse_args(argv)
    if args.profile is not None:
        print(f"renderer: {gpgpu.get_context().info.get('GL_RENDERER', '?')}")
        from gpgpu.context import has_timer_query
        if not has_timer_query():
            print("no GL timer queries on this renderer: GPU times read 0")
        for side in args.sizes:
            A = poisson2d(side)
            b = np.random.default_rng(side).standard_normal(A.shape[0])
            for name in args.profile or ["fast"]:
                preset, _, iteration = name.partition(":")
                kw = dict(preset=preset, **({"iteration": iteration} if iteration else {}))
                what = f"preset {preset!r}" + (f", iteration {iteration!r}" if iteration else "")
                print(f"\n2-D Poisson {side}^2 (n = {A.shape[0]}), {what}: one iteration")
                print(profile(A, b, kw, args.fill_r32f, args.fill_rgba32f), flush=True)
        return
    configs = [("paper", dict(preset="paper")), ("robust", dict(preset="robust")),
               (f"robust, check_every={FAST_CHECK_EVERY}", dict(preset="robust", check_every=FAST_CHECK_EVERY)),
               ("robust, no plan", dict(preset="robust", plan=False)), ("fast", dict(preset="fast")),
               ("fast, no plan", dict(preset="fast", plan=False)),
               ("fast, ellpack", dict(preset="fast", format="ellpack")),
               ("fast, standard", dict(preset="fast", iteration="standard"))]
    for k in args.check_every or ():
        configs.append((f"fast, check_every={k}", dict(preset="fast", check_every=k)))
    # A put on the GPU once, outside the timed solve (as cupyx's CSR matrix is): the solve alone
    configs += [("paper, A on the GPU", dict(preset="paper", prebuilt="corrigan")),
                (f"robust, check_every={FAST_CHECK_EVERY}, A on the GPU",
                 dict(preset="robust", check_every=FAST_CHECK_EVERY, prebuilt="ellpack")),
                ("fast, A on the GPU", dict(preset="fast", prebuilt="packed")),
                ("fast, standard, A on the GPU", dict(preset="fast", iteration="standard", prebuilt="packed"))]
    try:
        import cupy
        import cupyx.scipy.sparse as csp
        import cupyx.scipy.sparse.linalg as cspla
    except Exception:            # not installed, or no CUDA device
        cupy = None
    print(f"renderer: {gpgpu.get_context().info.get('GL_RENDERER', '?')}")
    for side in args.sizes:
        A = poisson2d(side)
        n = A.shape[0]
        b = np.random.default_rng(side).standard_normal(n)
        bn = float(np.linalg.norm(b))
        print(f"\n2-D Poisson {side}^2 (n = {n}, nnz = {A.nnz}), rtol {RTOL:g}")
        head = f"{'solver':34s} {'iters':>6s} {'info':>5s} {'time s':>8s} {'ms/it':>7s} {'passes/it':>9s} " \
               f"{'us/pass':>8s} {'true res':>9s}" + (f" {'host us/pass':>12s}" if args.host else "")
        print(head)
        A32, b32 = A.astype(np.float32), b.astype(np.float32)
        its = [0]

        def scipy32():
            its[0] = 0
            return spla.cg(A32, b32, rtol=RTOL, maxiter=10 * n,
                           callback=lambda xk: its.__setitem__(0, its[0] + 1))
        t, (x, info) = median_time(scipy32, args.repeat)
        res = np.linalg.norm(b - A @ x.astype(np.float64)) / bn
        print(f"{'scipy float32, 1 thread':34s} {its[0]:6d} {info:5d} {t:8.3f} {1e3 * t / its[0]:7.3f} "
              f"{'':9s} {'':8s} {res:9.2e}")
        if cupy is not None:
            try:
                Ac, bc = csp.csr_matrix(A32), cupy.asarray(b32)
                cits = [0]

                def cupy_cg():
                    cits[0] = 0
                    count = lambda xk: cits.__setitem__(0, cits[0] + 1)  # noqa: E731
                    try:      # cupy's cg takes rtol (and atol) as scipy >= 1.12; older ones tol
                        x, info = cspla.cg(Ac, bc, rtol=RTOL, maxiter=10 * n, callback=count)
                    except TypeError:
                        cits[0] = 0
                        x, info = cspla.cg(Ac, bc, tol=RTOL, maxiter=10 * n, callback=count)
                    cupy.cuda.Device().synchronize()
                    return x, info
                t, (x, info) = median_time(cupy_cg, args.repeat)
                res = np.linalg.norm(b - A @ cupy.asnumpy(x).astype(np.float64)) / bn
                print(f"{'cupyx cg (cuSPARSE)':34s} {cits[0]:6d} {int(info):5d} {t:8.3f} "
                      f"{1e3 * t / max(cits[0], 1):7.3f} {'':9s} {'':8s} {res:9.2e}")
            except Exception as exc:      # e.g. no CUDA device
                print(f"{'cupyx cg (cuSPARSE)':34s} failed: {exc}")
        for name, kw in configs:
            kw = dict(kw)
            limit = {"maxiter": args.maxiter} if args.maxiter else {}
            fmt = kw.pop("prebuilt", None)
            if fmt is not None:
                sort = dict(sort=True, max_programs=A.shape[0]) if fmt == "corrigan" else {}
                t_build, Ag = median_time(lambda: gpgpu.SparseStream.from_scipy(A, format=fmt, **sort), 1)
                name = f"{name} ({1e3 * t_build:.0f} ms to build)"
            Ai = A if fmt is None else Ag
            t, r = median_time(lambda: gpgpu.cg(Ai, b, rtol=RTOL, **kw, **limit), args.repeat)
            ppi = passes_per_iteration(A, b, kw)
            res = np.linalg.norm(b - A @ r[0]) / bn
            label = f"gpgpu {name} [{r.format}]"
            if fmt is not None:
                # the GPU's time for the whole solve: one GL_TIME_ELAPSED query around it
                q = gpgpu.get_context().query(time=True)
                with q:
                    gpgpu.cg(Ai, b, rtol=RTOL, **kw, **limit)
                gpgpu.get_context().finish()
                label += f" GPU {q.elapsed / 1e6:.0f} ms"
                Ag.release()
            line = (f"{label:34s} {r.iterations:6d} {r[1]:5d} {t:8.3f} "
                    f"{1e3 * t / max(r.iterations, 1):7.3f} {ppi:9.2f} "
                    f"{1e6 * t / max(ppi * r.iterations, 1):8.2f} {res:9.2e}")
            if args.host:
                line += f" {host_per_pass(A, b, kw, ppi):12.2f}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
