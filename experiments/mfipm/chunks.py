"""Solve an LP with the matrix-free method in chunks of interior point iterations, each resumed
from the last, with a checkpoint on disk after every chunk, for GPUs lent a command at a time
(each command stops after 10 minutes): the way nug20 was solved on an H100 with the
defaults and on an H200 to 1e-8 (docs/results/matrix-free.md, "Problems solved, and not").
Beyond 002, a driver, not a table: 002 reports no solve to a tolerance this long.

    python -m experiments.mfipm.chunks nug20 --backend gpu --solution float-float \\
        --budget 540 --checkpoint ck/
    python -m experiments.mfipm.chunks nug20 --defaults --checkpoint ck/   # eps 1e-6, nothing else
    # run it again with the same --checkpoint (and the same settings) to go on

Within a command, each chunk is ``solve(..., max_iter=CHUNK, start=previous result)``; between
commands it starts from the checkpoint (:func:`gpgpu.lp.matrix_free.checkpoint`: the point, the
regularisation's state and k), which resumes as the result would. A resumed chunk restarts the
stall test's window, so with chunks shorter than the window (default 4 < 8) the stall test never
ends the run. A chunk is shortened to the iterations that fit in what is left of ``--budget``
seconds, counting 1.3 times the last chunk's time an iteration (the earlier command's last chunk
when resuming; the first chunk of a fresh run is not limited). It stops when a chunk ends with
a status other than ``iteration_limit``, when not one more iteration fits in the budget, or
after ``--max-iter`` iterations in all. ``CHECKPOINT/NAME_BACKEND.npz`` holds the point;
``NAME_BACKEND.json`` the settings and a record per chunk (per iteration: primal and dual
residuals, gap, PCG iterations; seconds, PCG iterations, unconverged solves, objective).

A bar over the iterations (of ``--max-iter``) shows on stderr where stderr is a terminal
(``--progress`` shows it anyway, ``--no-progress`` never); a line per chunk goes to stdout.

Exit status: 0 optimal, 1 another final status, 3 not finished (budget or --max-iter: run again).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from .common import HIGHS_QAP, load_problem

__all__ = ["main", "run_chunks"]

#: the QAP settings that solve nug12, nug15 and nug20 (docs/results/matrix-free.md; common.qap_solve_settings)
DEFAULTS = {"eps": 1e-8, "rank": 100, "reg_min": 1e-4, "pcg_maxiter": 10000}


def _files(directory: Path, name: str, backend: str) -> tuple:
    stem = Path(name).name.split(".")[0]
    return directory / f"{stem}_{backend}.npz", directory / f"{stem}_{backend}.json"


def run_chunks(problem, name: str, backend: str, checkpoint_dir, options: dict, chunk: int = 4,
               budget: float = 540.0, max_iter: int = 200, out=print, progress: bool | None = None) -> dict:
    """Chunks of ``chunk`` iterations of ``solve(problem, method="matrix-free", backend=backend,
    **options)`` until the status is final, ``budget`` seconds would be passed, or ``max_iter``
    iterations were run in all (this and the earlier commands); answers the log (module notes).
    ``progress``: the bar over the iterations (None: only where stderr is a terminal)."""
    from experiments.harness import progress_bar
    from gpgpu.lp import solve
    from gpgpu.lp.matrix_free import checkpoint

    if chunk < 1 or max_iter < 1 or not budget > 0:
        raise ValueError(f"chunk and max_iter must be positive and budget > 0, got {chunk}, {max_iter}, {budget}")
    directory = Path(checkpoint_dir)
    directory.mkdir(parents=True, exist_ok=True)
    point_file, log_file = _files(directory, name, backend)
    settings = dict(options, backend=backend, problem=name)
    log, start = {"settings": settings, "chunks": []}, None
    if log_file.exists():
        log = json.loads(log_file.read_text())
        if log["settings"] != settings:
            changed = sorted(k for k in set(log["settings"]) | set(settings)
                             if log["settings"].get(k) != settings.get(k))
            raise ValueError(f"{log_file} was written with other settings ({', '.join(changed)}: "
                             f"{[log['settings'].get(k) for k in changed]} there, {[settings.get(k) for k in changed]} "
                             "now): run with the same settings or another --checkpoint")
        if log["chunks"] and log["chunks"][-1]["status"] != "iteration_limit":
            out(f"{log_file}: already ended with status {log['chunks'][-1]['status']!r}")
            return log
        if not point_file.exists():
            raise ValueError(f"{log_file} has no point beside it ({point_file.name}): remove the log to start "
                             "afresh, or use another --checkpoint")
        with np.load(point_file) as saved:
            start = {key: saved[key] for key in saved.files}
    # seconds an iteration, from the last chunk (the earlier command's when resuming): a chunk is
    # shortened to what fits in the budget left, with 1.3 times that time an iteration
    per_iteration = None
    if log["chunks"]:
        per_iteration = log["chunks"][-1]["seconds"] / max(log["chunks"][-1]["iterations"], 1)
    t0 = time.perf_counter()
    done = sum(c["iterations"] for c in log["chunks"])
    bar = progress_bar(total=max_iter, initial=min(done, max_iter), desc=point_file.stem, unit="iteration",
                       show=progress)

    def say(text):                                # a line to ``out``, past the bar
        with bar.external_write_mode():
            out(text)

    try:
        while True:
            done = sum(c["iterations"] for c in log["chunks"])
            if done >= max_iter:
                say(f"stopped: {done} iterations in all (--max-iter {max_iter})")
                break
            size = min(chunk, max_iter - done)
            if per_iteration is not None:
                size = min(size, int((budget - (time.perf_counter() - t0)) // (1.3 * per_iteration)))
                if size < 1:
                    say(f"stopped: another iteration ({per_iteration:.1f} s the last) would pass the budget of "
                        f"{budget:.0f} s")
                    break
            t1 = time.perf_counter()
            r = solve(problem, method="matrix-free", backend=backend, max_iter=size, start=start,
                      callback=lambda h, done=done: bar.update(min(done + h["iteration"], max_iter) - bar.n),
                      **options)
            last = time.perf_counter() - t1
            per_iteration = last / max(r.iterations, 1)
            record = {"iterations": r.iterations, "status": r.status, "seconds": last,
                      "pcg_iterations": r.pcg_iterations, "pcg_unconverged": r.pcg_unconverged,
                      "objective": r.objective, "point_iteration": r.point_iteration,
                      "history": [{"primal_residual": h["primal_residual"], "dual_residual": h["dual_residual"],
                                   "gap": h["gap"], "pcg_iterations": h["pcg_iterations"]} for h in r.history]}
            log["chunks"].append(record)
            np.savez(point_file, **checkpoint(r))
            log_file.write_text(json.dumps(log))
            h = r.history[-1]
            say(f"iteration {done + r.iterations}: {r.status}, primal {h['primal_residual']:.2e} dual "
                f"{h['dual_residual']:.2e} gap {h['gap']:.2e}, objective {r.objective!r}, {r.pcg_iterations} PCG "
                f"iterations, {last:.1f} s")
            start = r
            if r.status != "iteration_limit":
                break
    finally:
        bar.close()
    return log


def summary(log: dict, reference=None) -> str:
    chunks = log["chunks"]
    if not chunks:
        return "no chunk run"
    its = sum(c["iterations"] for c in chunks)
    text = (f"{chunks[-1]['status']} after {its} iterations in {len(chunks)} chunks: "
            f"{sum(c['pcg_iterations'] for c in chunks)} PCG iterations, {sum(c['seconds'] for c in chunks):.1f} s "
            f"of solves, objective {chunks[-1]['objective']!r}")
    if reference is not None:
        text += f", {abs(chunks[-1]['objective'] - reference) / abs(reference):.1e} from HiGHS's {reference!r}"
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m experiments.mfipm.chunks", description=__doc__.split("\n\n")[0])
    ap.add_argument("problem", help="a QAPLIB name (nug12, nug20, ...; GPGPU_QAPLIB_DIR) or an MPS file")
    ap.add_argument("--checkpoint", required=True, help="folder of the checkpoint and the log")
    ap.add_argument("--backend", choices=("gpu", "numpy64"), default="gpu")
    ap.add_argument("--budget", type=float, default=540.0, help="seconds of this command (default 540)")
    ap.add_argument("--chunk", type=int, default=4, help="iterations a chunk (default 4)")
    ap.add_argument("--max-iter", type=int, default=200, help="iterations in all (default 200)")
    ap.add_argument("--eps", type=float, default=DEFAULTS["eps"])
    ap.add_argument("--rank", type=int, default=DEFAULTS["rank"])
    ap.add_argument("--reg-min", type=float, default=DEFAULTS["reg_min"])
    ap.add_argument("--pcg-maxiter", type=int, default=DEFAULTS["pcg_maxiter"])
    ap.add_argument("--solution", choices=("float32", "float-float"), default=None,
                    help="gpu: PCG's solution vector (default the back end's: float32 until the first "
                         "solve stopped at its PCG limit, float-float after it)")
    ap.add_argument("--sums", choices=("pingpong", "fan"), default="fan", help="gpu: reductions (default fan)")
    ap.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="the bar over the iterations on stderr (default: only where stderr is a terminal)")
    ap.add_argument("--defaults", action="store_true",
                    help="the matrix-free method's defaults instead of the QAP settings: eps 1e-6 and no "
                         "other option (rank, reg_min, pcg_maxiter, sums, solution: solve's own)")
    args = ap.parse_args(argv)
    options = {"eps": args.eps, "rank": args.rank, "reg_min": args.reg_min, "pcg_maxiter": args.pcg_maxiter}
    if args.defaults:
        if args.solution is not None:
            ap.error("--defaults takes no --solution: it runs solve's own options")
        options = {"eps": 1e-6}
    elif args.backend == "gpu":
        options["sums"] = args.sums
        if args.solution is not None:
            options["solution"] = args.solution
    elif args.solution is not None:
        ap.error("--solution is an option of --backend gpu")
    try:
        log = run_chunks(load_problem(args.problem), args.problem, args.backend, args.checkpoint, options,
                         chunk=args.chunk, budget=args.budget, max_iter=args.max_iter,
                         out=lambda text: print(text, flush=True), progress=args.progress)
    except (ValueError, FileNotFoundError) as e:         # a wrong checkpoint, an unknown problem
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(summary(log, HIGHS_QAP.get(args.problem)), flush=True)
    status = log["chunks"][-1]["status"] if log["chunks"] else "iteration_limit"
    return 0 if status == "optimal" else 3 if status == "iteration_limit" else 1


if __name__ == "__main__":
    sys.exit(main())
