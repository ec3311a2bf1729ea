"""The matrix-free method's defaults on the project's 42 NETLIB problems (and optionally the
QAP relaxations), one process per problem with a timeout, as rows of
docs/figures/lp_matrix_free_defaults_numpy64.csv.

Each run is ``solve(p, method="matrix-free", backend="numpy64", eps=1e-6, **options)`` with one
BLAS thread (``--backend gpu``: the GPU's PCG, its renderer in the renderer column); the
objective error is relative to HiGHS's objective (max(1, |objective|)). ``--jobs N`` runs N
problems at a time (one process each; on one GPU they share it).

    python tools/netlib_matrix_free.py                       # the 42, rows on stdout
    python tools/netlib_matrix_free.py --problems bnl1,ganges --options '{"rank": 200}'
    python tools/netlib_matrix_free.py --qap nug12 --append docs/figures/lp_matrix_free_defaults_numpy64.csv
    python tools/netlib_matrix_free.py --backend gpu --jobs 12 --timeout 500      # the GPU's PCG

``--variant`` names the rows' variant column (default "defaults"), ``--timeout`` the seconds
per problem (a run past it is a row with status "timeout"). ``OPENBLAS_CORETYPE=SkylakeX`` (or
Haswell, Sandybridge, Prescott) in the environment picks OpenBLAS's kernels for every child
process and is named in the renderer column.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RENDERER = "numpy64 on this 2-core machine (one BLAS thread)"
FIELDS = ("problem", "status", "objective_error_vs_highs", "iterations", "time_s", "options", "variant",
          "renderer", "date")

#: what one child process runs: the problem, HiGHS's objective, the solve; one JSON line
_CHILD = r"""
import json, sys, time
from threadpoolctl import threadpool_limits
threadpool_limits(1)
from gpgpu.lp import read_mps, solve
kind, name, options, backend = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
if kind == "qap":
    from gpgpu.lp.qap import qaplib_dir, qap_lp
    from experiments.mfipm.common import HIGHS_QAP
    p, ref = qap_lp(qaplib_dir() / f"{name}.dat"), HIGHS_QAP[name]
else:
    from gpgpu.lp.netlib import netlib_path
    from experiments.table3 import highs_objective
    path = netlib_path(name)
    p, ref = read_mps(path), highs_objective(path)[0]
t0 = time.perf_counter()
r = solve(p, method="matrix-free", backend=backend, eps=1e-6, **options)
out = {"status": r.status, "error": abs(r.objective - ref) / max(1.0, abs(ref)),
       "iterations": r.iterations, "time": time.perf_counter() - t0}
if backend == "gpu":
    import gpgpu
    out["renderer"] = gpgpu.get_context().info.get("GL_RENDERER", "?")
print(json.dumps(out))
"""


def netlib_names() -> list:
    from gpgpu.lp.netlib import netlib_dir

    base = netlib_dir()
    names = []
    for folder in (base, base.parent / "netlib-more"):
        names += [p.name.split(".")[0] for p in sorted(folder.glob("*.mps.gz"))]
    return names


def run_one(kind: str, name: str, options: dict, timeout: float, backend: str = "numpy64") -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        out = subprocess.run([sys.executable, "-c", _CHILD, kind, name, json.dumps(options), backend], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "error": float("nan"), "iterations": "", "time": timeout}
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode != 0 or not lines:
        tail = (out.stderr.strip().splitlines() or ["no output"])[-1]
        return {"status": f"error: {tail}", "error": float("nan"), "iterations": "", "time": float("nan")}
    return json.loads(lines[-1])


def renderer(res: dict | None = None) -> str:
    """The renderer column: RENDERER, with the OpenBLAS kernels when OPENBLAS_CORETYPE names them
    (the defaults' trajectories once depended on them; docs/lp_defaults.md); a GPU run's
    GL_RENDERER (``res["renderer"]``) when it has one."""
    if res and res.get("renderer"):
        return f"{res['renderer']} (GPU PCG; outer iteration numpy64)"
    if res and res.get("backend") == "gpu":          # no answer from the child (a timeout)
        return "the GPU (the run gave no answer; GPU PCG; outer iteration numpy64)"
    core = os.environ.get("OPENBLAS_CORETYPE")
    return RENDERER if not core else f"{RENDERER[:-1]}; OPENBLAS_CORETYPE={core})"


def row(name: str, res: dict, options: dict, variant: str, backend: str = "numpy64") -> dict:
    shown = dict(options, backend=backend)
    res = dict(res, backend=backend)
    return {"problem": name, "status": res["status"], "objective_error_vs_highs": f"{res['error']:.2e}",
            "iterations": res["iterations"], "time_s": f"{res['time']:.1f}",
            # the CSV's options column keeps its commas out (as the file's earlier rows)
            "options": json.dumps(shown).replace(",", ";"), "variant": variant, "renderer": renderer(res),
            "date": datetime.date.today().isoformat()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", default=None, help="comma-separated NETLIB names (default: all 42; \"\" for none)")
    ap.add_argument("--qap", default="", help="comma-separated QAPLIB names (nug12, nug15) to run too")
    ap.add_argument("--options", default="{}", help="JSON of solve options beyond the defaults")
    ap.add_argument("--variant", default="defaults", help="the rows' variant column")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per problem")
    ap.add_argument("--append", default=None, help="append the rows to this CSV instead of printing them")
    ap.add_argument("--backend", default="numpy64", choices=("numpy64", "gpu"), help="the PCG's back end")
    ap.add_argument("--jobs", type=int, default=1, help="problems run at a time (a process each)")
    args = ap.parse_args(argv)
    options = json.loads(args.options)
    jobs = [("qap", n) for n in args.qap.split(",") if n]
    names = netlib_names() if args.problems is None else [n for n in args.problems.split(",") if n]
    jobs += [("netlib", n) for n in names]
    # plain comma-joined fields, as the file's earlier rows (no field holds a comma)
    lines = [] if args.append is not None else [",".join(FIELDS)]
    solved = 0
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max(1, args.jobs)) as pool:       # each job waits on its own process
        futures = [pool.submit(run_one, kind, name, options, args.timeout, args.backend) for kind, name in jobs]
        for (kind, name), fut in zip(jobs, futures):
            res = fut.result()
            solved += res["status"] == "optimal"
            r = row(name, res, options, args.variant, args.backend)
            lines.append(",".join(str(r[k]).replace(",", ";") for k in FIELDS))
            print(f"{name}: {res['status']}, error {res['error']:.2e}, {res['iterations']} iterations, "
                  f"{res['time']:.1f} s", file=sys.stderr, flush=True)
    print(f"{solved} of {len(jobs)} optimal", file=sys.stderr)
    text = "".join(ln + "\n" for ln in lines)
    if args.append is None:
        sys.stdout.write(text)
    else:
        with open(args.append, "a") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
