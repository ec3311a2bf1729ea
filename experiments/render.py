"""The docs' tables rendered from the measured data: every block of README.md and docs/ between

    <!-- render: RENDERER DATA [DATA ...] -->
    ...
    <!-- /render -->

is the output of ``RENDERERS[RENDERER]`` on the data files named (paths from the repository's
root, globs allowed), so a table cannot say what its CSV does not. (``floors`` takes no file:
its data is the package's own import graph; ``lp_options`` reads gpgpu.lp's options
table and presets.)

    python -m experiments.render            # rewrite every block from its data
    python -m experiments.render --check    # exit 1 naming each block that differs (a test runs this)

(``make report`` runs the first.) A renderer reads files and writes markdown, nothing else: no
experiment runs here.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BLOCK = re.compile(r"(<!-- render: (?P<spec>[^\n]*?) -->\n)(?P<body>.*?)(<!-- /render -->)", re.S)


def _netlib_all(paths):
    from experiments.netlib_all import markdown
    return markdown(paths)


def _lp_speed(paths):
    """The LP's speed table (results/lp.md) from ``python -m experiments.speed --parts lp``'s CSV:
    a row per problem (the project's NETLIB order), the GPU defaults beside numpy64 and HiGHS."""
    import csv

    from gpgpu.lp.netlib import PROBLEMS

    by: dict = {}
    for path in paths:
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
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


def _lp_options(_paths):
    """gpgpu.lp's options table (gpgpu.lp.options) with each preset's values over it."""
    from gpgpu.lp import PRESETS
    from gpgpu.lp.options import OPTIONS

    def cell(text):
        return str(text).replace("|", "/")

    presets = list(PRESETS)
    lines = ["| option | read by | values | " + " | ".join(f"`{p}`" for p in presets) + " | what it does |",
             "| --- | --- | --- | " + " | ".join("---" for _ in presets) + " | --- |"]
    for o in OPTIONS:
        sets = []
        for p in presets:
            found = [f"{v!r}" + ("" if scope == "any" else f" ({scope})")
                     for scope, row in PRESETS[p].items() for k, v in row.items() if k == o.name]
            sets.append(", ".join(found))
        lines.append(f"| `{o.name}` | {', '.join(o.readers)} | {cell(o.values)} | "
                     + " | ".join(cell(v) for v in sets) + f" | {cell(o.doc)} |")
    return "\n".join(lines)


def _cg_options(_paths):
    """gpgpu.cg's options table with each preset's values (PRESETS, PRESET_FORMATS) over it."""
    import importlib

    cg = importlib.import_module("gpgpu.cg")
    presets = list(cg.PRESETS)
    lines = ["| option | values | " + " | ".join(f"`{p}`" for p in presets) + " | what it does |",
             "| --- | --- | " + " | ".join("---" for _ in presets) + " | --- |"]
    for o in cg.OPTIONS:
        row = [dict(cg.PRESETS[p], format=cg.PRESET_FORMATS[p]) for p in presets]
        cells = [repr(r[o.name]) if o.name in r else "" for r in row]
        lines.append(f"| `{o.name}` | {o.values.replace('|', '/')} | " + " | ".join(cells)
                     + f" | {o.doc.replace('|', '/')} |")
    return "\n".join(lines)


def _floors(paths):
    from experiments.floors import markdown
    return markdown(paths)


#: renderer name -> function of the data paths, returning markdown
RENDERERS = {
    "cg_options": _cg_options,
    "floors": _floors,
    "lp_options": _lp_options,
    "netlib_all": _netlib_all,
    "lp_speed": _lp_speed,
}


def pages(root: Path = ROOT) -> list:
    """The pages that may hold blocks: README.md and every markdown file under docs/."""
    return [root / "README.md"] + sorted((root / "docs").rglob("*.md"))


def render_block(spec: str, root: Path = ROOT) -> str:
    """The markdown of one block's spec ("RENDERER DATA ..."); a clear error for an unknown
    renderer or data that is not there."""
    name, *patterns = spec.split()
    if name not in RENDERERS:
        raise ValueError(f"unknown renderer {name!r} (known: {', '.join(RENDERERS)})")
    paths = []
    for pattern in patterns:
        found = sorted(root.glob(pattern))
        if not found:
            raise FileNotFoundError(f"{name}: no data file matches {pattern!r} (paths are from the repository's root)")
        paths += found
    return RENDERERS[name](paths).rstrip("\n") + "\n"


def render_page(text: str, root: Path = ROOT) -> str:
    """The page with every block rendered again."""
    return BLOCK.sub(lambda m: m.group(1) + render_block(m.group("spec"), root) + m.group(4), text)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.render", description=__doc__.split("\n\n")[0])
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 if a block differs from its data")
    args = p.parse_args(argv)
    stale = []
    for page in pages():
        text = page.read_text()
        if "<!-- render:" not in text:
            continue
        new = render_page(text)
        if new != text:
            stale.append(page.relative_to(ROOT))
            if not args.check:
                page.write_text(new)
    if args.check and stale:
        print("rendered blocks differ from their data in: " + ", ".join(map(str, stale))
              + " (python -m experiments.render rewrites them)", file=sys.stderr)
        return 1
    print(("stale: " if args.check else "rewrote: ") + (", ".join(map(str, stale)) or "nothing"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
