"""``python -m experiments`` lists the experiments; ``python -m experiments all`` runs them all and
writes REPORT.md (every claim, the paper's number, ours, the renderer) into the output folder.

    python -m experiments                 # list
    python -m experiments all [--out DIR] [--repeat R] [--only fig8,lu.partial_pivoting] [--verbose]
    python -m experiments report [--out DIR] [--to FILE] [--verdicts FILE]   # REPORT.md from the
                                          # NAME.claims.json and verdicts.json in DIR
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
from experiments.verdicts import source_text

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
    "cg.recompute": "beyond 003: Shewchuk's listing in numpy float32 with and without its r = b - A x every "
                    "50 iterations, beside cg(preset='paper')",
    "mfipm.emulate32": "beyond 002: the GPU's float32 PCG emulated in numpy, to study where it stalls",
    "mfipm.chunks": "beyond 002: a matrix-free solve in chunks of iterations, with a checkpoint after each",
    "mfipm.whole": "002 Table 3's headline over whole solves: the matrix-free IPM on the GPU against numpy64 on "
                   "all cores and one thread, with passes a PCG iteration",
    "mfipm.passes": "beyond 002: the fused PCG iteration's GPU time, as drawn and pass by pass (timer queries)",
    "mfipm.solves": "beyond 002: each PCG solve of a whole matrix-free solve timed by itself, and the whole solve",
    "netlib_all": "beyond the papers: both methods' defaults over the whole NETLIB LP collection, a CSV and its table",
    "netlib_speed": "beyond the papers: the LP's GPU defaults against numpy64 and HiGHS's IPM on the NETLIB "
                    "problems of 1000 normal rows and more, a CSV and its table",
    "factor_blocks": "beyond the papers: the LP's factor with its inverse by blocks of columns against a step (or "
                     "four) a pass, float32 and float-float",
    "floors": "the package's import graph: its floors (docs/architecture.md), and any import circle",
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


#: the verdicts a claim can get in verdicts.json (REPORT.md's verdict tables); "not checked" only for
#: the papers' claims that no experiment checks
VERDICTS = ("holds", "holds in direction", "does not hold", "beyond the papers", "not checked")
#: the verdict tables, in this order: the papers', then the experiments beyond them
PAPERS = ("000", "001", "002", "003", "004", "beyond")
PAPER_TITLES = {"000": "000: Cholesky decomposition and linear programming on a GPU",
                "001": "001: A D² Aᵀ, symmetric and triangular matrices on a GPU",
                "002": "002: the matrix-free interior point method on a GPU",
                "003": "003: conjugate gradients on graphics hardware",
                "004": "004: LU-GPU, dense linear systems",
                "beyond": "Beyond the papers"}


def paper_of(name: str) -> str:
    """The paper an experiment (its claims' "name", e.g. "adat_fig8") belongs to: the first paper
    its registry line (or its tool's line, e.g. "mfipm_whole") names, or "beyond"."""
    import re

    dotted = name.replace("_", ".", 1)
    what = REGISTRY.get(dotted, REGISTRY.get(name, TOOLS.get(dotted, "")))
    m = re.match(r"(\d{3})\b", what)
    return m.group(1) if m else "beyond"


def is_software(renderer: str) -> bool:
    return any(s in renderer.lower() for s in ("llvmpipe", "softpipe", "swiftshader"))


def short_renderer(renderer: str) -> str:
    """"NVIDIA H200/PCIe/SSE2" -> "H200", "llvmpipe (LLVM 15.0.6, 256 bits)" -> "llvmpipe"."""
    if is_software(renderer):
        return renderer.split(" (")[0]
    words = renderer.split("/")[0].replace("NVIDIA ", "").split()
    return words[0] if words else renderer


def cell(text: str, limit: int = 0) -> str:
    """Text for a Markdown table cell: | escaped; cut at ``limit`` characters (at a "; ")."""
    text = str(text)
    if limit and len(text) > limit:
        cut = text.rfind("; ", 0, limit)
        text = text[:cut if cut > limit // 2 else limit] + "; ..."
    return text.replace("|", "\\|")


def load_claims(out: Path) -> dict:
    """name -> {"gpu": the claims of a run on a GPU, "llvmpipe": of a run on a software renderer},
    from every *.claims.json in ``out`` (NAME.claims.json as an experiment writes it; a second run of
    the same experiment on the other renderer may lie beside it under another file name, e.g.
    NAME.llvmpipe.claims.json)."""
    import json

    found: dict = {}
    for path in sorted(out.glob("*.claims.json")):
        data = json.loads(path.read_text())
        kind = "llvmpipe" if is_software(data.get("renderer", "")) else "gpu"
        found.setdefault(data["name"], {})
        if kind not in found[data["name"]] or path.name == f"{data['name']}.claims.json":
            found[data["name"]][kind] = data
    return found


def verdict_tables(found: dict, verdicts: dict) -> list:
    """The lines of "## Verdicts": a table per paper (claim | paper | here (NVIDIA) | llvmpipe |
    verdict) and its count line."""
    lines = ["## Verdicts", "",
             "Each claim with its verdict from `verdicts.json` beside the claims: *holds*, *holds in "
             "direction* (the paper's direction, far off in size), *does not hold*, *beyond the papers* "
             "(the paper gives no figure) and *not checked* (a claim of the paper no experiment checks). "
             "*here* is the run on a GPU, with its renderer and date; *llvmpipe* the run on the "
             "software renderer where there is one. A paper verdict quotes the paper's sentence it "
             "rests on (the rule: `experiments/verdicts.py`).", ""]
    judged = verdicts.get("claims", {})
    by_paper: dict = {p: [] for p in PAPERS}
    for name in ordered(found):
        runs = found[name]
        main = runs.get("gpu") or runs["llvmpipe"]
        soft = runs.get("llvmpipe")
        for c in main["claims"]:
            gpu = runs.get("gpu")
            here = (f"{short_renderer(gpu['renderer'])}, {gpu.get('date', 'date unknown')}: {c['measured']}"
                    if gpu else "not run")
            s = next((x for x in soft["claims"] if x["text"] == c["text"]), None) if soft else None
            llvm = f"{soft.get('date', 'date unknown')}: {s['measured']}" if s else "not run"
            v = judged.get(name, {}).get(c["text"], {})
            why = v.get("reason", "")
            if source_text(v):
                why += f" (source: {source_text(v)})"
            by_paper[paper_of(name)].append((f"{name}: {c['text']}", c["paper"], here, llvm,
                                             v.get("verdict", "no verdict"), why))
    for nc in verdicts.get("not_checked", []):
        by_paper.setdefault(nc["paper"], []).append((nc["claim"], nc["paper_says"], "not checked",
                                                     "not checked", "not checked", nc["reason"]))
    for paper in PAPERS:
        rows = by_paper.get(paper, [])
        if not rows:
            continue
        lines += [f"### {PAPER_TITLES[paper]}", "", "| claim | paper | here (NVIDIA) | llvmpipe | verdict |",
                  "| --- | --- | --- | --- | --- |"]
        for claim, pap, here, llvm, v, why in rows:
            lines.append(f"| {cell(claim)} | {cell(pap)} | {cell(here, 240)} | {cell(llvm, 240)} | "
                         f"**{v}**" + (f": {cell(why)}" if why else "") + " |")
        lines += ["", count_line(v for *_, v, _ in rows), ""]
    return lines


def count_line(verdicts) -> str:
    """"12 hold, 3 hold in direction, 1 does not hold, ..." (the verdicts' counts, in VERDICTS' order)."""
    from collections import Counter

    n = Counter(verdicts)
    words = {"holds": ("holds", "hold"), "holds in direction": ("holds in direction", "hold in direction"),
             "does not hold": ("does not hold", "do not hold"), "beyond the papers": ("beyond the papers",) * 2,
             "not checked": ("not checked",) * 2}
    parts = [f"{n[v]} {words[v][n[v] != 1]}" for v in VERDICTS if n[v]]
    parts += [f"{k} {c}" for k, c in n.items() if k not in VERDICTS]
    return ", ".join(parts) + "."


def ordered(found: dict) -> list:
    order = [n.replace(".", "_") for n in REGISTRY]
    return [n for n in order if n in found] + sorted(n for n in found if n not in order)


def report(out: Path, failures: list = (), seconds: float | None = None, to: Path | None = None,
           verdicts: Path | None = None) -> Path:
    """Write REPORT.md from the NAME.claims.json files in ``out`` (in the registry's order) and the
    verdicts file (default: ``out``/verdicts.json), into ``out`` or to the file ``to`` (the data and
    figures are then linked relative to it). Everything in it comes from those files: rendering twice
    gives the same text."""
    import json
    import os

    out = Path(out)
    found = load_claims(out)
    vpath = Path(verdicts) if verdicts is not None else out / "verdicts.json"
    judged = json.loads(vpath.read_text()) if vpath.exists() else {}
    sections = [found[n].get("gpu") or found[n]["llvmpipe"] for n in ordered(found)]
    runs = [r for n in ordered(found) for r in found[n].values()]
    total = seconds if seconds is not None else sum(o.get("seconds", 0) for o in runs)
    dates = sorted(o["date"] for o in runs if o.get("date"))
    groups: dict = {}
    for n in ordered(found):
        for o in found[n].values():
            key = (o["renderer"], o.get("date", "date unknown"), o.get("command", "command unknown"))
            groups.setdefault(key, []).append(o["name"])
    lines = ["# Reproduction report", "",
             f"Rendered by `python -m experiments report` from the claims files of {len(runs)} runs "
             f"({total / 60:.1f} minutes of experiments), the newest of {dates[-1] if dates else 'an unknown date'}. "
             "The runs, by renderer, date and command:", ""]
    lines += [f"- {r}, {d}, `{c}`: {', '.join(names)}" for (r, d, c), names in
              sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2]))]
    lines += ["",
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
    lines += verdict_tables(found, judged)
    path = Path(to) if to is not None else out / "REPORT.md"
    rel = Path(os.path.relpath(out, path.parent)).as_posix()
    first_seen: dict = {}
    for o in sections:
        shown = f"Sizes ({o['size_name']}): {sort_sizes(o['sizes'])}. " if o.get("sizes") else ""
        data, png = f"{rel}/{o['name']}.csv", f"{rel}/{o['name']}.png"
        figure = f", figure: [`{png}`]({png})" if (out / f"{o['name']}.png").exists() else ""   # a tool draws none
        lines += [f"## {o['name']}: {o['title']}", "",
                  f"Renderer: {o['renderer']}. Date: {o.get('date', 'unknown')}. "
                  f"Command: `{o.get('command', 'unknown')}`. {shown}"
                  f"Data: [`{data}`]({data}){figure}.", ""]
        soft = found[o["name"]].get("llvmpipe")
        if soft is not None and soft is not o:
            lines += [f"Also run on {soft['renderer']} ({soft.get('date', 'date unknown')}, "
                      f"`{soft.get('command', 'command unknown')}`): its figures are the verdict "
                      "tables' llvmpipe column.", ""]
        if o["claims"]:
            lines += ["| claim | paper | here | kind |", "| --- | --- | --- | --- |"]
            for c in o["claims"]:
                here = c["measured"] + (f" ({c['how']})" if c.get("how") else "")
                lines.append(f"| {cell(c['text'])} | {cell(c['paper'])} | {cell(here)} | {c.get('kind', 'measured')} |")
            lines.append("")
        for n in o["notes"]:
            n = n.replace("{out}", rel)
            if n in first_seen:
                lines += [f"Note: as the note of {first_seen[n]} that begins \"{' '.join(n.split()[:6])} ...\".", ""]
            else:
                first_seen[n] = o["name"]
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
        p.add_argument("--verdicts", type=Path, default=None,
                       help="the verdicts file (default: OUT/verdicts.json)")
        args = p.parse_args(argv[1:])
        print(f"wrote {report(args.out, to=args.to, verdicts=args.verdicts)}")
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
