"""Where a whole matrix-free solve's PCG time goes, solve by solve (beyond 002).

    python -m experiments.mfipm.solves --problems nug12 [--eps 1e-6] [--max-iter N]
        [--pcg-check N] [--check-lag N] [--out docs/figures/mfipm_solves_<date>.csv]

``solve(name, method="matrix-free", backend="gpu")`` runs with the defaults; each PCG solve of
the fused iteration (:meth:`gpgpu.lp.matrix_free_fused.FusedPCG.solve`, one per refinement
round of each Newton system) is timed by the wall clock between two ``finish()`` calls: its
fused iterations drawn, seconds, microseconds a fused iteration, x's precision, k and whether it
converged. Set against ``experiments.mfipm.passes`` (the recorded iteration replayed back to
back), the per-solve figures show what the solve adds to the iteration's own time: the start
of each solve, its checks' read-backs, the copies of the checked iterates and the answer.
``--pcg-check`` sets the iterations between checks (the option ``pcg_check``, default 8) and
``--check-lag`` how many iterations late a check is read
(:data:`gpgpu.lp.matrix_free_fused.CHECK_LAG`, default 4; 0 reads each check at once).

Each row: problem, the solve's number, fused iterations, seconds, us an iteration, solution,
k, converged, renderer, date. The last row of a problem (solve ``all``) holds the whole solve's
wall time, status and interior point iterations, its fused iterations and the microseconds an
iteration over all its PCG solves.
"""
from __future__ import annotations

import csv
import sys
import time

from experiments.figures import printed_markdown, rows_to, tool_parser

FIELDS = ("problem", "solve", "iterations", "seconds", "us_per_iteration", "solution", "k", "converged", "status",
          "interior_iterations", "pcg_check", "check_lag", "renderer", "date")


def measure(problem: str, eps: float = 1e-6, max_iter: int = 100, pcg_check: int | None = None,
            check_lag: int | None = None) -> list:
    """The rows of one problem (see the module notes)."""
    from gpgpu import lp
    from gpgpu.context import get_context
    from gpgpu.lp import matrix_free_fused as mff
    from gpgpu.lp.matrix_free_gpu import PCG_CHECK

    ctx = get_context()
    rows, drawn = [], [0]
    step, solve = mff.FusedPCG._step, mff.FusedPCG.solve

    def counted(self):
        drawn[0] += 1
        return step(self)

    def timed(self, b, target, maxiter, soft=None):
        ctx.finish()
        t0, first = time.perf_counter(), drawn[0]
        out = solve(self, b, target, maxiter, soft)
        ctx.finish()
        seconds, its = time.perf_counter() - t0, drawn[0] - first
        rows.append({"problem": problem, "solve": len(rows), "iterations": its, "seconds": seconds,
                     "us_per_iteration": seconds / max(its, 1) * 1e6, "solution": self.be.solution,
                     "k": self.streams.k, "converged": out["converged"]})
        return out

    lag = mff.CHECK_LAG
    mff.FusedPCG._step, mff.FusedPCG.solve = counted, timed
    if check_lag is not None:
        mff.CHECK_LAG = int(check_lag)
    settings = {"pcg_check": PCG_CHECK if pcg_check is None else int(pcg_check), "check_lag": mff.CHECK_LAG}
    try:
        t0 = time.perf_counter()
        r = lp.solve(problem, method="matrix-free", backend="gpu", eps=eps, max_iter=max_iter,
                     pcg_check=settings["pcg_check"])
        total = time.perf_counter() - t0
    finally:
        mff.FusedPCG._step, mff.FusedPCG.solve = step, solve
        mff.CHECK_LAG = lag
    for row in rows:
        row.update(settings)
    its, seconds = sum(x["iterations"] for x in rows), sum(x["seconds"] for x in rows)
    rows.append({"problem": problem, "solve": "all", "iterations": its, "seconds": total,
                 "us_per_iteration": seconds / max(its, 1) * 1e6, "solution": "", "k": "", "converged": "",
                 "status": r.status, "interior_iterations": r.iterations, **settings})
    return rows


def markdown(path) -> str:
    """The CSV as a table: each PCG solve's fused iterations, seconds and microseconds an
    iteration, x's precision, k and whether it converged; a problem's row ``all`` last."""
    out = ["| problem | solve | fused iterations | seconds | us an iteration | solution | k | converged |",
           "| --- " * 8 + "|"]
    for r in csv.DictReader(open(path)):
        out.append(f"| {r['problem']} | {r['solve']} | {r['iterations']} | {float(r['seconds']):.3f} | "
                   f"{float(r['us_per_iteration']):.1f} | {r['solution'] or '-'} | {r['k'] or '-'} | "
                   f"{r['converged'] or '-'} |")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = tool_parser(__doc__)
    ap.add_argument("--problems", default="nug12", help="names or paths, comma-separated")
    ap.add_argument("--eps", type=float, default=1e-6)
    ap.add_argument("--max-iter", type=int, default=100, help="interior point iterations at most")
    ap.add_argument("--pcg-check", type=int, default=None, help="iterations between PCG's checks (default 8)")
    ap.add_argument("--check-lag", type=int, default=None, help="iterations a check is read late (default 4)")
    args = ap.parse_args(argv)
    if printed_markdown(args, markdown):
        return 0
    if args.check_lag is not None and args.check_lag < 0:
        ap.error(f"--check-lag must be 0 or more, got {args.check_lag}")
    if args.pcg_check is not None and args.pcg_check < 1:
        ap.error(f"--pcg-check must be 1 or more, got {args.pcg_check}")
    with rows_to(args.out, "mfipm_solves", FIELDS, extrasaction="ignore") as write:
        for problem in args.problems.split(","):
            rows = measure(problem, args.eps, args.max_iter, args.pcg_check, args.check_lag)
            for r in rows:
                write(r)
            last = rows[-1]
            print(f"{problem:8s} {len(rows) - 1} PCG solves, {last['iterations']} fused iterations, "
                  f"{last['us_per_iteration']:.1f} us an iteration in PCG, {last['seconds']:.2f} s in all "
                  f"({last['status']}, {last['interior_iterations']} iterations; pcg_check {last['pcg_check']}, "
                  f"check lag {last['check_lag']})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
