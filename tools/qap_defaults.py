"""Solve QAPLIB's nug LP relaxations with the matrix-free method's defaults and compare with HiGHS.

    python tools/qap_defaults.py nug12 nug15 --backend gpu        # eps 1e-6, no other option
    python tools/qap_defaults.py nug20 --backend numpy64 --rank-max 800   # a variant: rank_max
    python tools/qap_defaults.py nug20 --backend numpy64 --set PCG_REL=1e-4 --progress

Prints, per problem: status, objective, relative difference to HiGHS's objective (the values
in experiments.mfipm.common.HIGHS_QAP), IPM and PCG iterations, wall time, the preconditioner's
final k and the renderer; ``--progress`` also prints a line per interior point iteration.
This is the check of the issue "002's solver solves 002's problems with its defaults".
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("problems", nargs="+", help="nug12, nug15, nug20, nug30")
    ap.add_argument("--backend", default="gpu", choices=("gpu", "numpy64"))
    ap.add_argument("--preset", default=None, help="a preset of gpgpu.lp.solve (default: solve's own)")
    ap.add_argument("--rank-max", type=int, default=None,
                    help="rank_max of the matrix-free method (default: solve's own)")
    ap.add_argument("--reg-min", type=float, default=None,
                    help="reg_min of the matrix-free method (default: solve's own)")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="a variant: set a module constant of gpgpu.lp.matrix_free (PCG_REL, "
                         "PCG_LIMIT_GROWTH, FLOOR_RISE, ...) to a number; repeatable")
    ap.add_argument("--kw", action="append", default=[], metavar="NAME=VALUE",
                    help="a keyword of gpgpu.lp.solve with a number or true/false (pcg_maxiter=10000, "
                         "adaptive=false, ...); repeatable")
    ap.add_argument("--progress", action="store_true",
                    help="print each iteration's residuals, gap, mu, steps, rho = delta, PCG iterations, "
                         "why each solve stopped, and k")
    args = ap.parse_args(argv)

    import gpgpu.lp.matrix_free as mf
    for item in args.set:
        name, _, value = item.partition("=")
        if not hasattr(mf, name) or not isinstance(getattr(mf, name), (int, float)):
            ap.error(f"--set {item}: gpgpu.lp.matrix_free has no numeric constant {name!r}")
        setattr(mf, name, type(getattr(mf, name))(float(value)))

    from experiments.mfipm.common import HIGHS_QAP
    from gpgpu.lp import solve
    from gpgpu.lp.qap import qap_lp, qaplib_dir

    if args.backend == "gpu":
        import gpgpu
        print(f"renderer: {gpgpu.context.get_context().info['GL_RENDERER']}", flush=True)
    for name in args.problems:
        p = qap_lp(qaplib_dir() / f"{name}.dat")
        extra = {"preset": args.preset} if args.preset else {}
        if args.rank_max is not None:
            extra["rank_max"] = args.rank_max
        if args.reg_min is not None:
            extra["reg_min"] = args.reg_min
        for item in args.kw:
            key, _, value = item.partition("=")
            low = value.strip().lower()
            extra[key] = low == "true" if low in ("true", "false") else (
                int(value) if value.strip().lstrip("-").isdigit() else float(value))
        if args.progress:
            extra["callback"] = lambda h: print(
                f"  {h['iteration']}: primal {h['primal_residual']:.1e} dual {h['dual_residual']:.1e} "
                f"gap {h['gap']:.1e} mu {h['mu']:.1e} steps {h['alpha_pri'] or 0:.2f}/{h['alpha_dual'] or 0:.2f} "
                f"rho=delta {h['regularisation'][0] if h['regularisation'] else 0:.1e} "
                f"PCG {h['pcg_iterations']} {h['pcg_stop']} k {h['rank']} "
                f"{time.perf_counter() - t:.0f} s" + (" (restart)" if "restart_iteration" in h else ""),
                flush=True)
        t = time.perf_counter()
        r = solve(p, method="matrix-free", backend=args.backend, **extra)
        dt = time.perf_counter() - t
        ref = HIGHS_QAP[name]
        print(f"{name} ({p.A.shape[0]} x {p.A.shape[1]}) {args.backend}: {r.status}, objective {r.objective!r}, "
              f"{abs(r.objective - ref) / abs(ref):.2e} from HiGHS, {r.iterations} iterations, "
              f"{getattr(r, 'pcg_iterations', '?')} PCG iterations, {dt:.1f} s, final k {getattr(r, 'rank', '?')}; {r.message}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
