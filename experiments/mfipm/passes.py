"""Where the fused PCG iteration's time goes: each pass's GPU time, and the whole iteration's.

    python -m experiments.mfipm.passes --problems nug12,nug20 [--after 300] [--repeat 200]
        [--solution float-float] [--rank K] [--fold W|off] [--label TEXT]
        [--out docs/figures/mfipm_passes_<date>.csv]
    python -m experiments.mfipm.passes --markdown CSV

For each problem, ``solve(name, method="matrix-free")`` runs on the GPU with the defaults (and
``solution=`` with ``--solution``: x in float32 or float-float from the first PCG solve; ``rank=``,
the preconditioner's k, with ``--rank``; ``fold=``, the vectors' width, with ``--fold``) until
the fused iteration (:mod:`gpgpu.lp.matrix_free_fused`) has drawn ``after`` iterations; then its
recorded plan (one iteration, :class:`gpgpu.passes.RecordedPlan`) is drawn ``repeat`` times
back to back three ways: with the host's clock around the issue alone (host microseconds a run),
with ``finish()`` after (wall microseconds a run), and inside one GL_TIME_ELAPSED query (GPU
microseconds a run: the iteration as PCG draws it, each pass waiting for the one before); then
each pass alone, drawn ``repeat`` times inside a query of its own (its GPU time when nothing
waits for it: the sum of these, against the iteration's, is what the passes' dependencies
cost). The solve stops there: its answer is not the point.

Each row: problem, the run's label (``--label``: which code, when rows of several are put
together), m, n, k, x's format in the measured iteration (``solution``), the pass (its place in the iteration and its kernel, or ``plan``),
its target's texels, GPU microseconds, wall microseconds, host microseconds (plan rows), the
renderer and the date. On a renderer without timer queries the GPU column is empty.
"""
from __future__ import annotations

import csv
import sys
import time

from experiments.figures import printed_markdown, rows_to, tool_parser
from gpgpu.cli import positive_int_or_off

FIELDS = ("problem", "label", "m", "n", "k", "solution", "pass", "kernel", "texels", "gpu_us", "wall_us", "host_us", "renderer",
          "date")


class _Measured(Exception):
    """Raised out of the solve once the plan has been measured."""


def measure(problem: str, after: int = 300, repeat: int = 200, solution: str | None = None,
            rank: int | None = None, fold=None) -> list:
    """The rows of one problem (see the module notes)."""
    from gpgpu import lp
    from gpgpu.context import get_context, has_timer_query
    from gpgpu.lp import matrix_free_fused as mff

    ctx = get_context()
    timed = has_timer_query()
    rows, seen = [], [0]
    step = mff.FusedPCG._step

    def gpu_us(draw) -> float | None:
        if not timed:
            return None
        q = ctx.query(time=True)
        with q:
            for _ in range(repeat):
                draw()
        ctx.finish()
        return q.elapsed / 1e3 / repeat

    def wall_us(draw) -> float:
        ctx.finish()
        t0 = time.perf_counter()
        for _ in range(repeat):
            draw()
        ctx.finish()
        return (time.perf_counter() - t0) / repeat * 1e6

    def measured(self):
        s = self.streams
        key = (id(s.xr[0]), id(s.p[0]), id(s.totals[0]), id(s.scalars[0]), self.be.solution)
        plan = self.plans.get(key)
        seen[0] += 1
        if seen[0] < after or not plan:
            return step(self)
        base = {"problem": problem, "m": self.be.m, "n": self.be.n, "k": s.k, "solution": self.be.solution}
        for _ in range(20):
            plan.run({})
        ctx.finish()
        t0 = time.perf_counter()
        for _ in range(repeat):
            plan.run({})
        host = (time.perf_counter() - t0) / repeat * 1e6
        rows.append(dict(base, **{"pass": "plan", "kernel": f"{len(plan)} passes", "texels": "",
                                  "wall_us": wall_us(lambda: plan.run({})), "gpu_us": gpu_us(lambda: plan.run({})),
                                  "host_us": host}))
        for i, (kernel, target, *_) in enumerate(plan.passes):
            alone = plan.alone(i)
            rows.append(dict(base, **{"pass": i, "kernel": kernel.name, "texels": target.rows * target.cols,
                                      "gpu_us": gpu_us(lambda: alone.run({})), "wall_us": wall_us(lambda: alone.run({})),
                                      "host_us": ""}))
        raise _Measured

    mff.FusedPCG._step = measured
    try:
        lp.solve(problem, method="matrix-free", backend="gpu", eps=1e-6,
                 **({} if solution is None else {"solution": solution}), **({} if rank is None else {"rank": rank}),
                 **({} if fold is None else {"fold": fold}))
    except _Measured:
        pass
    finally:
        mff.FusedPCG._step = step
    return rows


def markdown(path) -> str:
    """The CSV as a table: per problem the iteration's GPU, wall and host time and each pass's
    GPU time alone."""
    rows = list(csv.DictReader(open(path)))

    def us(value):
        return f"{float(value):.1f}" if value not in ("", None) else "-"

    out = ["| problem | run | x | pass | kernel | texels | GPU us | wall us | host us |", "| --- " * 9 + "|"]
    for r in rows:
        out.append(f"| {r['problem']} | {r.get('label') or '-'} | {r.get('solution') or '-'} | {r['pass']} | "
                   f"{r['kernel']} | {r['texels'] or '-'} | {us(r['gpu_us'])} | {us(r['wall_us'])} | {us(r['host_us'])} |")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = tool_parser(__doc__)
    ap.add_argument("--problems", default="nug12", help="names or paths, comma-separated")
    ap.add_argument("--after", type=int, default=300, help="fused iterations drawn before the measurement")
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--label", default="", help="a name for this run's rows (which code)")
    ap.add_argument("--solution", default=None, choices=("float32", "float-float"),
                    help="x's format from the first PCG solve (default: the solver's own choice)")
    ap.add_argument("--rank", type=int, default=None, help="the preconditioner's k (default: the solver's)")
    ap.add_argument("--fold", type=positive_int_or_off, default=None,
                    help="the vectors' width in texels, or off (one row; default: the back end's)")
    args = ap.parse_args(argv)
    if printed_markdown(args, markdown):
        return 0
    with rows_to(args.out, "mfipm_passes", FIELDS) as write:
        for problem in args.problems.split(","):
            rows = measure(problem, args.after, args.repeat, args.solution, args.rank, args.fold)
            if not rows:
                print(f"{problem}: the solve ended before {args.after} fused iterations", flush=True)
            for r in rows:
                write(dict(r, label=args.label))
                print(f"{problem:8s} {r['pass']!s:>4} {r['kernel']:24s} GPU {us_text(r['gpu_us'])} us  "
                      f"wall {r['wall_us']:8.1f} us", flush=True)
    return 0


def us_text(value) -> str:
    return f"{value:8.1f}" if isinstance(value, float) else "       -"


if __name__ == "__main__":
    sys.exit(main())
