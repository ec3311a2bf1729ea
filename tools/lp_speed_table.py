"""Print the markdown table of docs/results/lp.md's "Speed of the defaults" from the CSV that
``python -m experiments.speed --parts lp --out DIR`` writes (DIR/speed.csv).

    python tools/lp_speed_table.py docs/figures/lp_speed_h200_2026-11-28.csv
"""
from __future__ import annotations

import csv
import sys

from gpgpu.lp.netlib import PROBLEMS


def table(path: str) -> str:
    by: dict = {}
    for r in csv.DictReader(open(path)):
        if r.get("part") == "lp":
            by.setdefault(r["problem"], {})[r["algorithm"]] = r
    order = [p for p in PROBLEMS if p in by] + sorted(p for p in by if p not in PROBLEMS)
    lines = ["| problem | normal matrix (bounds as rows) | GPU defaults: s, iterations | passes, host µs a pass "
             "| numpy64 (LAPACK): s, iterations | HiGHS IPM: s |", "| --- | --- | --- | --- | --- | --- |"]
    total = {"gpu_defaults": 0.0, "numpy64": 0.0, "highs_ipm": 0.0}
    for p in order:
        g, n, h = by[p]["gpu_defaults"], by[p]["numpy64"], by[p]["highs_ipm"]
        for k in total:
            total[k] += float(by[p][k]["seconds"])
        status = "" if g["status"] == "optimal" else f" ({g['status']})"
        lines.append(f"| {p} | {g['normal_rows']} ({g['standard_rows']}) | {float(g['seconds']):.3f}, "
                     f"{g['iterations']}{status} | {int(g['passes']):,}, {float(g['host_us_per_pass']):.1f} | "
                     f"{float(n['seconds']):.3f}, {n['iterations']} | {float(h['seconds']):.3f} |")
    lines.append(f"| all {len(order)} | | {total['gpu_defaults']:.2f} | | {total['numpy64']:.2f} | "
                 f"{total['highs_ipm']:.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(sys.argv[1]))
