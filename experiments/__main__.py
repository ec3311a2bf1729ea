"""``python -m experiments`` lists the experiments; ``python -m experiments all`` runs them all and
writes REPORT.md (every claim, the paper's number, ours, the renderer) into the output folder.

    python -m experiments                 # list
    python -m experiments all [--out DIR] [--repeat R] [--only fig8,lu.partial_pivoting] [--verbose]
    python -m experiments report [--out DIR] [--to FILE]   # REPORT.md from the NAME.claims.json in DIR
    python -m experiments fig8 [...]      # same as python -m experiments.fig8
    python -m experiments mfipm.chunks [...]   # a tool: same as python -m experiments.mfipm.chunks
"""
from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

from experiments.harness import add_output_flags, positive_int, size_list, sort_sizes, writable_dir

#: module (under experiments.) -> what it reproduces, in the papers' order
REGISTRY = {
    "fig6": "000 Fig. 6: Cholesky inner vs outer (square update) vs LU, copy-to-texture",
    "fig7": "000 Fig. 7: the same with render-to-texture",
    "fig8": "000 Fig. 8: Cholesky triangular update vs LU; index swizzle vs computed vs triad",
    "fig9": "000 Fig. 9: memory bandwidth of Cholesky and LU",
    "fig10": "000 Fig. 10: forming AD²Aᵀ vs factoring it, square domains vs triangles",
    "table3": "000 Table 3: interior-point LP on ten NETLIB problems",
    "fig11": "000 Fig. 11: interior-point LP on random dense problems",
    "netlib": "beyond the papers: every NETLIB problem (netlib, netlib-more) with every back end",
    "adat.fig8": "001 Fig. 8: assembling AD²Aᵀ, packed vs full vs CPU ssyrk",
    "adat.fig9": "001 Fig. 9: Cholesky full vs packed vs LU vs CPU spotrf",
    "adat.table1": "001 Table 1: weighted least squares, random problems",
    "adat.table2": "001 Table 2: weighted least squares, ill-conditioned problems",
    "lu.no_pivoting": "004: LU without pivoting vs CPU sgetrf",
    "lu.partial_pivoting": "004: LU with partial pivoting vs CPU sgetrf",
    "lu.full_pivoting": "004: LU with full pivoting vs CPU sgetc2",
    "cg.spmv": "003 Figs. 4-6, 002 Table 3: sparse products, every format vs scipy CSR",
    "cg.convergence": "003: GPU CG vs scipy cg (float32, float64) on 2-D Poisson",
    "cg.sorting": "003 Fig. 7: rows sorted by non-zero count, programs and passes",
    "cg.rbf_surface": "003's application: implicit surfaces with compactly supported RBFs",
    "mfipm.table1": "002 Table 1: QAP and Gruca-like problem sizes, Cholesky fill of a direct IPM",
    "mfipm.table2": "002 Table 2: shares of the matrix-free IPM's time (PCG, P^-1, A x, A^T y)",
    "mfipm.table3": "002 Table 3: matrix-free IPM and SpMV time, CPU (numpy/scipy) vs GPU",
    "speed": "beyond the papers: Cholesky, LU, CG, SpMV and PCG against the fill limit, the CPU and CUDA libraries",
}

#: the machines the papers measured on (each paper's own words): the report's header says it
PAPERS_HARDWARE = ("The papers ran on: 000 a GeForce 6800 against a 2.8 GHz Pentium IV; 001 a GeForce 7800 GTX "
                   "against a 3.0 GHz Xeon; 002 a Tesla C2070 against two quad-core AMD Opteron 2378; 003 a "
                   "GeForce FX 5900 (no CPU timings); 004 a GeForce 6800 and a 7800 against a 3.4 GHz Pentium IV.")

#: command-line tools beside the experiments (a main(), no figure or table; not run by ``all``)
TOOLS = {
    "mfipm.emulate32": "beyond 002: the GPU's float32 PCG emulated in numpy, to study where it stalls",
    "mfipm.chunks": "beyond 002: a matrix-free solve in chunks of iterations, with a checkpoint after each",
    "netlib_all": "beyond the papers: both methods' defaults over the whole NETLIB LP collection, a CSV and its table",
    "render": "the docs' tables between <!-- render: ... --> markers, rendered again from their data (make report)",
}


def load(name: str):
    return importlib.import_module(f"experiments.{name}").EXPERIMENT


def list_experiments() -> None:
    print("experiments (python -m experiments.<name> [--sizes a,b] [--repeat r] [--out DIR] [--verbose]):")
    for name, what in REGISTRY.items():
        print(f"  {name:22s} {what}")
    print("\ntools (python -m experiments.<name> --help):")
    for name, what in TOOLS.items():
        print(f"  {name:22s} {what}")
    print("\npython -m experiments all   runs every experiment and writes REPORT.md")


def report(out: Path, failures: list = (), seconds: float | None = None, to: Path | None = None) -> Path:
    """Write REPORT.md from the NAME.claims.json files in ``out`` (in the registry's order), into
    ``out`` or to the file ``to`` (the data and figures are then linked relative to it)."""
    import json
    import os

    found = {}
    for path in out.glob("*.claims.json"):
        data = json.loads(path.read_text())
        found[data["name"]] = data
    order = [n.replace(".", "_") for n in REGISTRY]
    outcomes = [found[n] for n in order if n in found] + [v for k, v in found.items() if k not in order]
    renderers = sorted({o["renderer"] for o in outcomes})
    total = seconds if seconds is not None else sum(o.get("seconds", 0) for o in outcomes)
    lines = ["# Reproduction report", "",
             f"Generated by `python -m experiments` on {time.strftime('%Y-%m-%d %H:%M')}, "
             f"renderer: {', '.join(renderers) or 'n/a'}; {total / 60:.1f} minutes of experiments.", "",
             "Every claim of the papers that an experiment checks, the paper's figure and the one "
             "found here. Timings are medians of repeats with the GPU idle before and "
             "`finish()` after; uploads are not timed unless the paper timed them. " + PAPERS_HARDWARE
             + " Ratios between GPU algorithms are what carries over, absolute times and GPU-vs-CPU "
             "comparisons do not.", "",
             "The column *kind* says what a line rests on. *measured*: a time, an iteration count, "
             "an error, or a fragment count read from the GPU's occlusion queries. *by construction*: "
             "a number the code derives from measured ones with its own formulas (bytes = texels "
             "per fragment, typed in from Table 1 of 000, x 4 x the counted fragments; texels copied "
             "by copy-to-texture, from each pass's region), so agreeing with the paper there "
             "checks the bookkeeping, not the hardware. Where the paper gives no figure the "
             "paper column says so.", ""]
    path = Path(to) if to is not None else out / "REPORT.md"
    rel = Path(os.path.relpath(out, path.parent))
    for o in outcomes:
        shown = f"Sizes ({o['size_name']}): {sort_sizes(o['sizes'])}. " if o.get("sizes") else ""
        data, png = (rel / f"{o['name']}.csv").as_posix(), (rel / f"{o['name']}.png").as_posix()
        lines += [f"## {o['name']}: {o['title']}", "",
                  f"Renderer: {o['renderer']}. {shown}Data: [`{data}`]({data}), figure: [`{png}`]({png}).", ""]
        if o["claims"]:
            lines += ["| claim | paper | here | kind |", "| --- | --- | --- | --- |"]
            for c in o["claims"]:
                here = c["measured"] + (f" ({c['how']})" if c.get("how") else "")
                lines.append(f"| {c['text']} | {c['paper']} | {here} | {c.get('kind', 'measured')} |")
            lines.append("")
        for n in o["notes"]:
            lines += [f"Note: {n}", ""]
    if failures:
        lines += ["## Experiments that did not run", ""]
        lines += [f"- {name}: {err}" for name, err in failures]
        lines.append("")
    path.write_text("\n".join(lines))
    return path


def run_all(argv) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments all")
    p.add_argument("--out", type=writable_dir, default="results")
    p.add_argument("--repeat", type=positive_int)
    p.add_argument("--only", type=lambda s: [v.strip() for v in s.split(",") if v.strip()],
                   help="comma-separated subset of the experiments")
    p.add_argument("--sizes", type=size_list,
                   help="the same sizes for every experiment (for a quick check)")
    add_output_flags(p)
    args = p.parse_args(argv)
    names = args.only or list(REGISTRY)
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        p.error(f"unknown experiments {unknown}; see python -m experiments")
    outcomes, failures = [], []
    t0 = time.perf_counter()
    for name in names:
        print(f"== {name}: {REGISTRY[name]}", flush=True)
        try:
            exp = load(name)
            outcomes.append(exp.execute(args.sizes, args.repeat, args.out, verbose=args.verbose,
                                        progress=args.progress))
        except Exception as exc:  # keep going: the report lists what failed and why
            failures.append((name, f"{type(exc).__name__}: {exc}"))
            print(f"   {name} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
    path = report(args.out, failures, time.perf_counter() - t0)
    print(f"\nwrote {path}")
    return 1 if failures else 0


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("list", "-h", "--help"):
        list_experiments()
        return 0
    if argv[0] == "all":
        return run_all(argv[1:])
    if argv[0] == "report":
        p = argparse.ArgumentParser(prog="python -m experiments report")
        p.add_argument("--out", type=writable_dir, default="results",
                       help="the folder with the NAME.claims.json, CSV and PNG files")
        p.add_argument("--to", type=Path, default=None,
                       help="write the report to this file instead of OUT/REPORT.md")
        args = p.parse_args(argv[1:])
        print(f"wrote {report(args.out, to=args.to)}")
        return 0
    if argv[0] in REGISTRY:
        return load(argv[0]).main(argv[1:])
    if argv[0] in TOOLS:
        return importlib.import_module(f"experiments.{argv[0]}").main(argv[1:])
    print(f"unknown experiment {argv[0]!r}", file=sys.stderr)
    list_experiments()
    return 2


if __name__ == "__main__":
    sys.exit(main())
