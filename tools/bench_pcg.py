"""The matrix-free IPM's PCG (paper 002) on QAPLIB's nug LPs: for the GPU back end, planned
(``plan=True``, the iterations drawn from recorded plans) and drawn pass by pass (``plan=False``),
with pairwise ("pingpong", 002's) and fan sums: passes a PCG iteration, ms a PCG iteration and
wall us a pass; beside numpy64's ms a PCG iteration on one thread.

    python tools/bench_pcg.py                       # nug12, nug20 (and nug30 with --nug30)
    python tools/bench_pcg.py --problems nug12 --ipm-iterations 2 --pcg-maxiter 50
    python tools/bench_pcg.py --format packed       # one storage only

``--format`` (default: ellpack and packed) is the SparseStream format of A, Aᵀ's copy and A∘A
(``GPUMatrixFree(format=...)``): ELLPACK (002's storage) runs every configuration below, and
each other format given adds the planned fan run (the fast preset's PCG) in it.

Each row solves the LP of ``gpgpu.lp.qap.qap_lp`` with ``solve(method="matrix-free", max_iter=
--ipm-iterations, pcg_maxiter=--pcg-maxiter)`` (eps 1e-8, the robust preset's other options;
PCG's scalars read every ``--pcg-check`` iterations on the GPU) after one warm-up solve of one
IPM iteration (programs compiled, pools filled); "ms/PCG it" is the solve's PCG time over its PCG
iterations (result.timers["pcg"] / result.pcg_iterations: set-up of each solve, read-backs and
the float64 refinement's CPU product included). "passes/it" is counted by gpgpu.counters on
the back end after the first IPM iteration's weights: solves of 3 and 2 check windows of PCG
iterations differ by one window, divided by its iterations (the read-out of a check included,
once a window). "us/pass" is ms/PCG it over passes/it. The IPM's trajectories differ between
rows by float32 rounding (the PCG iteration counts too): compare per PCG iteration.
"""
from __future__ import annotations

import argparse
import os
import sys

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")          # numpy64 on one thread (set before numpy loads)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from experiments.sparse_timing import pcg_passes_per_iteration as passes_per_iteration  # noqa: E402
from experiments.sparse_timing import timed_ipm_solve  # noqa: E402
from gpgpu.lp.qap import qap_lp, qaplib_dir  # noqa: E402

CONFIGS = [("gpu planned", "pingpong", True), ("gpu drawn", "pingpong", False),
           ("gpu planned", "fan", True), ("gpu drawn", "fan", False)]


def configs(formats):
    """(label, sums, plan, format): ELLPACK's four when "ellpack" is asked, then the planned fan run
    of each other format."""
    out = [(label, sums, plan, "ellpack") for label, sums, plan in CONFIGS] if "ellpack" in formats else []
    return out + [("gpu planned", "fan", True, f) for f in formats if f != "ellpack"]


def timed_solve(p, backend, args, **kw):
    return timed_ipm_solve(p, backend, args.ipm_iterations, args.pcg_maxiter, **kw)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", nargs="+", default=["nug12", "nug20"])
    ap.add_argument("--nug30", action="store_true", help="also nug30 (m = 52260)")
    ap.add_argument("--ipm-iterations", type=int, default=3)
    ap.add_argument("--pcg-maxiter", type=int, default=100)
    ap.add_argument("--pcg-check", type=int, default=8)
    ap.add_argument("--no-numpy", action="store_true", help="skip numpy64")
    ap.add_argument("--format", nargs="+", default=["ellpack", "packed"],
                    choices=["ellpack", "tell", "packed", "split"],
                    help="SparseStream formats (default: ellpack's four runs and packed's planned fan run)")
    args = ap.parse_args(argv)
    names = list(args.problems) + (["nug30"] if args.nug30 and "nug30" not in args.problems else [])
    print(f"{'problem':8} {'m x n':>16} {'back end':12} {'format':8} {'sums':9} {'passes/it':>9} {'ms/PCG it':>10} "
          f"{'us/pass':>8} {'PCG its':>8} {'IPM its':>7} {'wall s':>7}")
    for name in names:
        try:
            p = qap_lp(qaplib_dir() / f"{name}.dat")
        except Exception as e:              # noqa: BLE001 (a missing file: say so, go on)
            print(f"{name}: {type(e).__name__}: {e}")
            continue
        shape = f"{p.A.shape[0]} x {p.A.shape[1]}"
        for label, sums, plan, fmt in configs(args.format):
            try:
                passes = passes_per_iteration(p, sums, plan, args.pcg_check, format=fmt)
                r, wall = timed_solve(p, "gpu", args, sums=sums, plan=plan, pcg_check=args.pcg_check, format=fmt)
            except Exception as e:          # noqa: BLE001 (nug30 may not fit: say why, go on)
                print(f"{name:8} {shape:>16} {label:12} {fmt:8} {sums:9} {type(e).__name__}: {e}")
                continue
            ms = 1e3 * r.timers["pcg"] / max(r.pcg_iterations, 1)
            print(f"{name:8} {shape:>16} {label:12} {fmt:8} {sums:9} {passes:9.1f} {ms:10.3f} {1e3 * ms / passes:8.1f} "
                  f"{r.pcg_iterations:8d} {r.iterations:7d} {wall:7.1f}", flush=True)
        if not args.no_numpy:
            r, wall = timed_solve(p, "numpy64", args)
            ms = 1e3 * r.timers["pcg"] / max(r.pcg_iterations, 1)
            print(f"{name:8} {shape:>16} {'numpy64 1t':12} {'':8} {'':9} {'':>9} {ms:10.3f} {'':>8} "
                  f"{r.pcg_iterations:8d} {r.iterations:7d} {wall:7.1f}", flush=True)


if __name__ == "__main__":
    main()
