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


def _netlib_speed(paths):
    from experiments.netlib_speed import markdown
    return markdown(paths[0])


def _mfipm_whole(paths):
    from experiments.mfipm.whole import markdown
    return markdown(paths[0])


def _factor_blocks(paths):
    from experiments.factor_blocks import markdown
    return markdown(paths[0])


def _mfipm_passes(paths):
    from experiments.mfipm.passes import markdown
    return markdown(paths[0])


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


def _claims(paths):
    """A table of chosen claims (README's "What reproduces and what does not"): the rows of a
    selection file (docs/figures/readme_claims.json: a label and the (experiment, claim text) pairs
    it shows), each with the paper's value, the measurement, the machine and date from the
    experiments' claims files and the verdict from verdicts.json beside them."""
    import json

    from experiments.__main__ import cell, short_renderer

    lines = ["| claim | paper | measured | machine, date | verdict |", "| --- | --- | --- | --- | --- |"]
    for path in paths:
        figures = path.parent
        judged = json.loads((figures / "verdicts.json").read_text())["claims"]
        for row in json.loads(path.read_text())["rows"]:
            found = []
            for name, text in row["claims"]:
                run = json.loads((figures / f"{name}.claims.json").read_text())
                claim = next((c for c in run["claims"] if c["text"] == text), None)
                if claim is None:
                    raise ValueError(f"{path.name}: {name}.claims.json has no claim {text!r}")
                verdict = judged.get(name, {}).get(text, {}).get("verdict", "no verdict")
                found.append((claim, f"{short_renderer(run['renderer'])}, {run['date']}", verdict))

            def distinct(values):
                return "; ".join(dict.fromkeys(values))
            lines.append(f"| {cell(row['label'])} | {cell(distinct(c['paper'] for c, _, _ in found))} | "
                         f"{distinct(cell(c['measured'], 180) for c, _, _ in found)} | "
                         f"{distinct(m for _, m, _ in found)} | {distinct(v for _, _, v in found)} |")
    return "\n".join(lines)


def _verdicts(paths):
    """The summary of the papers' verdicts (results/index.md) from verdicts.json and the claims
    files beside it: the count a paper and verdict, then every claim that holds only in direction
    or does not hold, with its reason (claims beyond the papers are left out: they have no paper
    verdict)."""
    import json

    from experiments.__main__ import PAPERS, PAPER_TITLES, cell, load_claims, ordered, paper_of
    from experiments.verdicts import PAPER_VERDICTS

    figures = paths[0].parent
    judged = json.loads(paths[0].read_text())["claims"]
    found = load_claims(figures)
    rows = []              # (paper, experiment, claim, verdict, reason)
    for name in ordered(found):
        main = found[name].get("gpu") or found[name]["llvmpipe"]
        for c in main["claims"]:
            v = judged.get(name, {}).get(c["text"], {})
            if v.get("verdict") in PAPER_VERDICTS:
                rows.append((v.get("paper") or paper_of(name), name, c["text"], v["verdict"], v.get("reason", "")))
    lines = ["| paper | " + " | ".join(PAPER_VERDICTS) + " |", "| --- | " + " | ".join("---" for _ in PAPER_VERDICTS) + " |"]
    for paper in PAPERS:
        counts = [sum(1 for r in rows if r[0] == paper and r[3] == v) for v in PAPER_VERDICTS]
        if any(counts):
            lines.append(f"| {PAPER_TITLES[paper]} | " + " | ".join(map(str, counts)) + " |")
    for verdict in PAPER_VERDICTS[1:]:
        lines += ["", f"**{verdict.capitalize()}:**", ""]
        lines += [f"- {name}: {cell(text)}: {cell(reason)}" for _, name, text, v, reason in rows if v == verdict]
    return "\n".join(lines)


def _departures(paths):
    """Every departure of the paper presets (docs/departures.md): the rows of the guides' tables
    "The paper preset, option by option" (and the dense functions' table) whose value is the
    project's, with the guide's words: the paper's text, what the code does and why. The guides'
    tables are checked against the code (tests/test_presets_say_what_they_do.py), so a preset
    changed in the code fails there, and this page follows the tables."""
    import posixpath
    import re as _re

    row = _re.compile(r"^\| `([^`]+)`(?: `([^`]+)`)?((?: \|[^|`]*)?) \| `([^`]+)` \| (.+) \|$")
    lines = ["| area | option or constant | applies to | value | the paper's text, what the code does, why |",
             "| --- | --- | --- | --- | --- |"]
    for path in paths:
        text = path.read_text()
        title = text.splitlines()[0].lstrip("# ").strip()
        heading = next((h for h in PRESET_HEADINGS if h in text), None)
        if heading is None:
            raise ValueError(f"{path.name} has none of the sections {PRESET_HEADINGS}")
        start = text.find(heading)
        level = text.rfind("\n", 0, start)
        body = text[start:]
        hashes = text[level + 1:start].strip()
        end = _re.search(rf"^#{{1,{len(hashes)}}} ", body[len(heading):], _re.M)
        body = body[:end.start() + len(heading)] if end else body
        function = ""
        for line in body.splitlines():
            named = _re.match(r"^#+ `(gpgpu\.\w+)`$", line)
            if named:
                function = named.group(1) + " "
            m = row.match(line)
            if m and m.group(5).startswith("the project's"):
                name = function + m.group(1) + (f" {m.group(2)}" if m.group(2) else "")
                applies = m.group(3).strip(" |") or "all"
                why = m.group(5)[len("the project's"):].strip().removeprefix("(").removesuffix(")")
                why = why.lstrip(",:; ").strip() or "the project's choice"
                here = path.parent.relative_to(ROOT / "docs").as_posix()     # links from the guide, made from docs/
                why = _re.sub(r"\]\((?!https?:|#)([^)]+)\)",
                              lambda m: f"]({posixpath.normpath(posixpath.join(here, m.group(1)))})", why)
                lines.append(f"| [{title}]({path.relative_to(ROOT / 'docs').as_posix()}) | `{name}` | {applies} | "
                             f"`{m.group(4)}` | {why} |")
    return "\n".join(lines)


#: the headings of the guides' sections that list the paper presets' options (the LP, the
#: matrix-free method, CG) and the dense functions' settings
PRESET_HEADINGS = ("The paper preset, option by option", "The papers' settings, option by option")


def _limitations(paths, docs="docs/"):
    """The limitations list of README.md and docs/start/troubleshooting.md, one text for both
    (``docs``: the path from the page to docs/), its figures computed from the data files named:
    the LP's speed (``python -m experiments.speed --parts lp``'s CSV), CG's (``tools/bench_cg.py``'s
    output) and the dense factorization's against cuSOLVER (speed.claims.json)."""
    import csv
    import json

    from gpgpu.lp.netlib import PAPER_TABLE3

    by = {}
    lp_csv = next(p for p in paths if p.suffix == ".csv")
    with open(lp_csv, newline="") as f:
        for r in csv.DictReader(f):
            if r.get("part") == "lp":
                by.setdefault(r["algorithm"], {})[r["problem"]] = float(r["seconds"])
    ten = [p for p in PAPER_TABLE3 if p in by["gpu_defaults"]]

    def total(algorithm, problems):
        return sum(by[algorithm][p] for p in problems)
    every = sorted(by["gpu_defaults"])
    cg = {}
    for line in next(p for p in paths if p.suffix == ".txt").read_text().splitlines():
        words = line.split()
        if line.startswith(("scipy float32", "cupyx cg")):
            cg[line.split(",")[0].split(" (")[0]] = float(words[-2])       # ms an iteration (no pass columns)
        elif line.startswith("gpgpu fast, A on the GPU"):
            cg["fast"] = float(words[-4])
        elif line.startswith("gpgpu paper, A on the GPU"):
            cg["paper"] = float(words[-4])
            cg["paper_res"] = words[-1]
    speed = json.loads(next(p for p in paths if p.name.endswith(".claims.json")).read_text())
    ratio, _, where = next(c["measured"] for c in speed["claims"] if "cuSOLVER potrf" in c["text"]).partition(" ")
    lp_date, cg_date = _date_of(lp_csv), _date_of(next(p for p in paths if p.suffix == ".txt"))
    large = _large_lp_lines(next((p for p in paths if p.name.startswith("netlib_speed_")), None),
                            [p for p in paths if p.name.startswith("mfipm_whole_")], docs)
    return "\n".join([
        "- **float32 only.** Textures are float32, as on the papers' GPUs; results carry float32's",
        "  rounding (u = 2^-24). Tight tolerances come from refinement on the CPU (least squares, the LP)",
        "  and from float-float arithmetic (pairs of float32) in the LP's factors.",
        "- **Slow next to today's libraries.** Through the graphics pipeline, driven pass by pass from",
        "  Python, only a small part of a modern GPU computes, and each dependent pass costs",
        "  microseconds:",
        f"  - the LP at eps = 1e-8 with the defaults (NVIDIA H200, {lp_date}, "
        f"`{lp_csv.name}`): Table 3's ten NETLIB problems take {total('gpu_defaults', ten):.2f} s, numpy64 on",
        f"    LAPACK {total('numpy64', ten):.2f} s, **HiGHS's IPM {total('highs_ipm', ten):.2f} s**; all "
        f"{len(every)} take {total('gpu_defaults', every):.1f} s, numpy64 {total('numpy64', every):.1f} s, HiGHS",
        f"    {total('highs_ipm', every):.1f} s ([speed of the defaults]({docs}results/lp.md#speed-of-the-defaults));",
        *large,
        f"  - CG (2-D Poisson, 262144 unknowns, H200, {cg_date}, `tools/bench_cg.py`): the `\"fast\"` preset's",
        f"    iteration takes {cg['fast']:.2f} ms with the matrix already on the GPU, {cg['fast'] / cg['scipy float32']:.2f} "
        f"of scipy float32's on one CPU thread and {cg['fast'] / cg['cupyx cg']:.1f} times cupyx's (cuSPARSE) in the same run;",
        f"    the paper's own preset takes {cg['paper']:.2f} ms and does not reach rtol 1e-5 (true residual "
        f"{float(cg['paper_res']):.2e}) ([Sparse and CG]({docs}results/sparse.md));",
        f"  - dense: the faithful Cholesky takes {ratio} times cuSOLVER's potrf's time {where} (H200, "
        f"{speed['date']}, [Speed]({docs}results/speed.md)).",
        "- **Size.** A dense matrix, and the LP's dense normal equations, must fit one texture",
        "  (`GL_MAX_TEXTURE_SIZE`, printed by `python -m gpgpu info`); the matrix-free method does not form them.",
        "- **The papers' GPU-vs-CPU claims do not carry over**: a multithreaded LAPACK of 2026 beats the",
        "  pass-per-step GPU code where the papers' GPUs beat their CPUs (the verdicts: "
        f"[What reproduces]({docs}results/index.md#what-reproduces-and-what-does-not))"
        + ("; the matrix-free method's whole solve above is the exception." if any("matrix-free" in x for x in large)
           else "."),
        "- **The matrix-free method's defaults** leave some problems unsolved on each renderer, and nug30",
        "  reaches eps = 1e-6, not 1e-8: the tallies by renderer are in "
        f"[the LP's defaults]({docs}lp_defaults.md) and [Matrix-free results]({docs}results/matrix-free.md).",
    ])


def _large_lp_lines(speed_csv, whole_csvs, docs) -> list:
    """The limitations' lines on the LP at 1000 normal rows and more (``experiments.netlib_speed``'s
    CSV: the GPU's time over numpy64's and over HiGHS's IPM, per problem, their ranges) and the
    matrix-free method's whole solves (``experiments.mfipm.whole``'s CSVs: each problem the GPU and
    numpy64 solved in the first CSV that has it, seconds side by side, or where numpy64 stopped at
    its time limit its seconds as the time it had not finished in, and the GPU's seconds in each
    later CSV that has the problem, a later run of the code); none for a file not given."""
    import csv

    from experiments.__main__ import short_renderer

    lines = []
    if speed_csv is not None:
        by = {}
        for r in csv.DictReader(open(speed_csv, newline="")):
            by.setdefault(r["problem"], {})[r["backend"]] = r
        pairs = [(float(d["gpu"]["seconds"]), float(d["numpy64"]["seconds"]), float(d["gpu"]["highs_ipm_seconds"]))
                 for d in by.values() if "gpu" in d and "numpy64" in d and int(d["gpu"]["normal_rows"]) >= 1000
                 and d["gpu"]["status"] == "optimal" and d["numpy64"]["status"] == "optimal"]
        if pairs:
            to_cpu = [g / c for g, c, _ in pairs]
            to_ipm = [g / h for g, _, h in pairs]
            renderer = short_renderer(next(iter(by.values()))["gpu"]["renderer"])
            lines += [f"  - the LP at 1000 normal rows and more ({renderer}, {_date_of(speed_csv)}, `{speed_csv.name}`): "
                      f"on {len(pairs)} NETLIB problems the GPU's defaults take {min(to_cpu):.2f} to {max(to_cpu):.2f} "
                      f"times numpy64's time",
                      f"    (faster on {sum(x < 1 for x in to_cpu)}) and {min(to_ipm):.1f} to {max(to_ipm):.1f} times "
                      f"HiGHS's IPM's ([the GPU against numpy64]({docs}results/lp.md#nine-problems-of-1000-normal-rows-and-more-on-an-h100));"]
    runs = [(p, _whole_runs(p)) for p in whole_csvs or []]
    seen = set()
    for i, (whole_csv, by) in enumerate(runs):
        for name, d in by.items():
            g, c = d.get("gpu"), d.get("numpy64") or d.get("numpy64-1")
            if name in seen or g is None or c is None or g["status"] != "optimal" \
                    or c["status"] not in ("optimal", "time_limit"):
                continue
            seen.add(name)
            cores = "on all cores" if "numpy64" in d else "on one thread"
            eps = f"{float(g['eps']):.0e}".replace("e-0", "e-")
            cpu = (f"{float(c['seconds']):.1f} s in numpy64 {cores}" if c["status"] == "optimal" else
                   f"numpy64 {cores} stopped unfinished at its time limit after {float(c['seconds']):.1f} s")
            later = "".join(f"; a later GPU run of the code, `{p.name}`: {float(b[name]['gpu']['seconds']):.1f} s, "
                            f"{b[name]['gpu']['status'].replace('_', ' ')}"
                            for p, b in runs[i + 1:] if "gpu" in b.get(name, {}))
            lines.append(f"  - the matrix-free method over a whole solve, faster than the CPU here "
                         f"({short_renderer(g['renderer'])}, {_date_of(whole_csv)}, `{whole_csv.name}`): {name} at "
                         f"eps = {eps} in {float(g['seconds']):.1f} s on the GPU, {cpu}{later} "
                         f"([Matrix-free results]({docs}results/matrix-free.md));")
    return lines


def _whole_runs(path) -> dict:
    """``experiments.mfipm.whole``'s CSV as {problem: {run: row}}."""
    import csv

    by = {}
    for r in csv.DictReader(open(path, newline="")):
        by.setdefault(r["problem"], {})[r["run"]] = r
    return by


def _date_of(path) -> str:
    """The date in a data file's name (NAME_MACHINE_YYYY-MM-DD.ext), or "date unknown"."""
    m = re.search(r"(\d{4}-\d\d-\d\d)", Path(path).name)
    return m.group(1) if m else "date unknown"


def _bench(paths):
    """The cost of a pass and the fill limit (results/speed.md), a column per ``python -m gpgpu
    bench --json`` file (its renderer and the date in its name)."""
    import json

    from experiments.__main__ import short_renderer

    runs = [json.loads(Path(p).read_text()) for p in paths]
    head = [f"{short_renderer(r['renderer'])}, {_date_of(p)}" for r, p in zip(runs, paths)]

    def fill(r, fmt):
        return " / ".join(f"{r['fill_limit'][f'{fmt}_reads{k}'] / 1e9:.2f}" for k in range(4))

    def written(r):
        return ", ".join(f"{r['fill_limit'][f'{fmt}_reads0'] * b / 1e9:.0f} GB/s ({fmt})"
                         for fmt, b in (("R32F", 4), ("RGBA32F", 16)))
    rows = [
        ("host time per pass, one-texel copies, same primitive", lambda r: f"{r['host_us_per_pass']:.2f} us"),
        ("host time per pass, a new primitive (vertex table) each pass, as the algorithms do",
         lambda r: f"{r['host_us_per_pass_new_primitive']:.2f} us"),
        ("host time per pass of a pre-built plan (an order-64 Cholesky)",
         lambda r: f"{r['plan_host_us_per_pass']:.2f} us ({r['plan_passes']} passes)"
         if "plan_host_us_per_pass" in r else "not measured"),
        ("host + GPU time per one-texel copy: into one target / into 8 in turn / each reading the last",
         lambda r: (f"{r['same_target_us_per_pass']:.2f} / {r['new_target_us_per_pass']:.2f} / "
                    f"{r['dependent_us_per_pass']:.2f} us" if "dependent_us_per_pass" in r else "not measured")),
        ("round trip: one pass and its read-back / 8 dependent passes and a read-back",
         lambda r: (f"{r['readback_us']:.2f} / {r['burst_readback_us']:.2f} us"
                    if "readback_us" in r else "not measured")),
        ("fill limit R32F, 0 / 1 / 2 / 3 reads (Gfragments/s)", lambda r: fill(r, "R32F")),
        ("fill limit RGBA32F, 0 / 1 / 2 / 3 reads (Gfragments/s)", lambda r: fill(r, "RGBA32F")),
        ("bytes written at the 0-read limit", written),
    ]
    lines = ["| quantity | " + " | ".join(head) + " |", "| --- |" + " --- |" * len(runs)]
    lines += [f"| {name} | " + " | ".join(f(r) for r in runs) + " |" for name, f in rows]
    return "\n".join(lines)


def _columns(line: str, head: list) -> dict:
    """A row of a tool's whitespace-aligned table as {column: text}, by the header's words."""
    return dict(zip(head, line.split()))


def _bench_lu(paths):
    """The blocked LU against sgetrf (results/speed.md) from ``python tools/bench_lu.py``'s output."""
    head = ["n", "b", "GPU s", "sgetrf s", "GPU/sgetrf", "issue s", "passes", "reads", "passes/col",
            "GPU err", "sgetrf err", "pivots"]
    lines = ["| n | b | GPU s | sgetrf s (all cores) | GPU / sgetrf | passes | backward error GPU, sgetrf |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for path in paths:
        for line in Path(path).read_text().splitlines():
            words = line.split()
            if len(words) == len(head) and words[0].isdigit():
                r = _columns(line, head)
                lines.append(f"| {r['n']} | {r['b']} | {r['GPU s']} | {r['sgetrf s']} | {r['GPU/sgetrf']} | "
                             f"{r['passes']} | {r['GPU err']}, {r['sgetrf err']} |")
    return "\n".join(lines)


def _bench_lu_kernels(paths):
    """Where the blocked LU's time goes (results/speed.md): the last per-kernel breakdown of
    ``python tools/bench_lu.py``'s output (the largest n and b)."""
    text = Path(paths[-1]).read_text()
    title, body = re.findall(r"^(n = .*)\n  kernel .*\n((?:  \S.*\n?)+)", text, re.M)[-1]
    lines = [f"{title.split(':')[0]}:", "", "| kernel | passes | fragments | GPU ms | us a pass | Gfragments/s | share |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for line in body.splitlines():
        name, *cols = line.split()
        lines.append(f"| `{name}` | " + " | ".join(cols) + " |")
    return "\n".join(lines)


def _bench_spmv(paths):
    """y = A x and x = Aᵀ y per storage format (results/sparse.md) from ``python tools/bench_spmv.py
    --rmatvec``'s output: the GPU time of one product (the fastest fold of each format; the packed
    format at its own choice of segments, not a given one) beside cuSPARSE's CSR."""
    formats = (("ellpack", "ELLPACK (002)"), ("tell", "T-ELL"), ("packed", '`format="packed"`'))
    lines = ["| matrix | " + " | ".join(f for _, f in formats) + " | cuSPARSE CSR |",
             "| --- |" + " --- |" * (len(formats) + 1)]
    for path in paths:
        matrix = cusparse = None
        best: dict = {}

        def flush():
            if matrix:
                lines.append(f"| {matrix} | " + " | ".join(f"{best[f]:.3f} ms" if f in best else "-"
                                                            for f, _ in formats) + f" | {cusparse} |")
        for line in Path(path).read_text().splitlines():
            m = re.match(r"(\w+): (\d+ x \d+), (\d+) non-zeros.*cuSPARSE CSR ([\d.]+) ms", line)
            if m:
                flush()
                matrix, cusparse, best = f"{m.group(1)} ({m.group(2)}, {int(m.group(3)):,} non-zeros)", \
                    f"{float(m.group(4)):.3f} ms", {}
            elif "rmatvec" in line:
                flush()
                matrix, cusparse, best = f"{matrix.split(' ')[0]}: Aᵀ y", "-", {}
            else:
                words = line.split()
                if len(words) >= 17 and words[0] in dict(formats) and "*" not in words[3]:
                    best[words[0]] = min(best.get(words[0], float("inf")), float(words[-7]))
        flush()
    return "\n".join(lines)


def _netlib_runs(paths):
    """Each run of ``python -m experiments.netlib``'s CSV (results/lp.md): the problems it solved
    right (optimal, objective within its tolerance of HiGHS's) and its misses with their status
    and relative objective error."""
    import csv

    runs: dict = {}
    for path in paths:
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                runs.setdefault(r["run"], []).append(r)
    lines = ["| run | right | misses (status, relative objective error) |", "| --- | --- | --- |"]
    for run, rows in runs.items():
        missed = [r for r in rows if r["right"] != "True"]
        text = ", ".join(f"{r['problem']} ({r['status'].replace('_', ' ')}, {float(r['objective_error']):.1e})"
                         for r in missed) or "none"
        lines.append(f"| `{run}` | {len(rows) - len(missed)} of {len(rows)} | {text} |")
    return "\n".join(lines)


def _chunks(paths):
    """Long matrix-free solves run in chunks (``python -m experiments.mfipm.chunks``), a row per
    log (results/matrix-free.md): the settings, machine and date, how the last chunk ended, and
    the interior point iterations, PCG iterations and seconds of solves summed over the chunks."""
    import json

    from experiments.__main__ import short_renderer

    lines = ["| problem | settings | machine, date | end | interior point iterations | PCG iterations "
             "| seconds of solves | objective |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for path in paths:
        log = json.loads(Path(path).read_text())
        settings = dict(log["settings"])
        problem = settings.pop("problem")
        where = log.get("renderer") or log.get("provenance", "")
        machine = next((m for m in ("H200", "H100") if m in where), short_renderer(where))
        date = log.get("date") or (re.search(r"\d{4}-\d\d-\d\d", where) or [None])[0] or "date unknown"
        chunks = log["chunks"]
        text = ", ".join(f"{k}={v!r}" for k, v in settings.items())
        lines.append(f"| {problem} | `{text}` | {machine}, {date} | {chunks[-1]['status']} | "
                     f"{sum(c['iterations'] for c in chunks)} | {sum(c['pcg_iterations'] for c in chunks)} | "
                     f"{sum(c['seconds'] for c in chunks):.0f} | {chunks[-1]['objective']:.6f} |")
    return "\n".join(lines)


def _bench_cg(paths):
    """CG's presets beside scipy's and cupyx's cg (results/sparse.md), from ``python
    tools/bench_cg.py``'s output: per solver the iterations, whether it reached rtol (info 0) or
    stopped at maxiter, the time, the passes an iteration and the true relative residual."""
    row = re.compile(r"^(?P<name>\S.*?)\s+(?P<its>\d+)\s+(?P<info>\d+)\s+(?P<t>[\d.]+)\s+(?P<ms>[\d.]+)"
                     r"(?:\s+(?P<passes>[\d.]+)\s+[\d.]+)?\s+(?P<res>[\d.]+e[-+]\d+)$")
    lines = ["| solver | iterations | reached rtol | time s | ms an iteration | passes an iteration "
             "| true relative residual |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for path in paths:
        for line in Path(path).read_text().splitlines():
            m = row.match(line)
            if m:
                reached = "yes" if m["info"] == "0" else f"no (maxiter {m['its']})"
                name = m["name"].replace("gpgpu ", "`cg` ").replace("[", "(").replace("]", ")")
                lines.append(f"| {name} | {m['its']} | {reached} | {m['t']} | {m['ms']} | {m['passes'] or ''} "
                             f"| {m['res']} |")
    return "\n".join(lines)


def _bench_pcg(paths):
    """The matrix-free IPM's PCG, ms a PCG iteration (results/sparse.md), from ``python
    tools/bench_pcg.py``'s output: the GPU drawn from plans with 002's pairwise sums and with fan
    sums (ELLPACK), with fan sums in the packed format, beside numpy64 on one thread."""
    runs: dict = {}
    for path in paths:
        for line in Path(path).read_text().splitlines():
            m = re.match(r"(\w+)\s+(\d+ x \d+) numpy64 1t\s+([\d.]+)", line)
            if m:
                runs.setdefault((m.group(1), m.group(2)), {})["numpy"] = float(m.group(3))
                continue
            m = re.match(r"(\w+)\s+(\d+ x \d+) (gpu planned|gpu drawn)\s+(\w+)\s+(\w+)\s+[\d.]+\s+([\d.]+)", line)
            if m:
                name, shape, who, fmt, sums, ms = m.groups()
                runs.setdefault((name, shape), {})[(who, fmt, sums)] = float(ms)
    cols = (("gpu planned", "ellpack", "pingpong"), ("gpu planned", "ellpack", "fan"), ("gpu planned", "packed", "fan"))
    lines = ["| problem | GPU, ELLPACK, 002's pairwise sums | GPU, ELLPACK, fan sums | GPU, packed, fan sums "
             "| numpy64, 1 thread | numpy64 / fastest GPU |", "| --- | --- | --- | --- | --- | --- |"]
    for (name, shape), r in runs.items():
        best = min(r[c] for c in cols if c in r)
        lines.append(f"| {name} ({shape}) | " + " | ".join(f"{r[c]:.3f}" if c in r else "-" for c in cols)
                     + f" | {r['numpy']:.3f} | {r['numpy'] / best:.2f} |")
    return "\n".join(lines)


def _floors(paths):
    from experiments.floors import markdown
    return markdown(paths)


#: renderer name -> function of the data paths, returning markdown
def _arithmetic(_paths):
    """Each kernel's arithmetic (docs/stepping.md): the one table the page's panel reads,
    gpgpu.show.arithmetic.ARITHMETIC (no data file)."""
    from gpgpu.show.arithmetic import table

    return table() + "\n"


RENDERERS = {
    "arithmetic": _arithmetic,
    "bench": _bench,
    "bench_cg": _bench_cg,
    "bench_lu": _bench_lu,
    "bench_lu_kernels": _bench_lu_kernels,
    "bench_pcg": _bench_pcg,
    "bench_spmv": _bench_spmv,
    "chunks": _chunks,
    "claims": _claims,
    "cg_options": _cg_options,
    "factor_blocks": _factor_blocks,
    "floors": _floors,
    "lp_options": _lp_options,
    "netlib_all": _netlib_all,
    "netlib_runs": _netlib_runs,
    "netlib_speed": _netlib_speed,
    "mfipm_whole": _mfipm_whole,
    "mfipm_passes": _mfipm_passes,
    "lp_speed": _lp_speed,
    "limitations": _limitations,
    "verdicts": _verdicts,
    "departures": _departures,
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
    options = dict(p.split("=", 1) for p in patterns if "=" in p)     # e.g. docs=../ (the page's path to docs/)
    patterns = [p for p in patterns if "=" not in p]
    paths = []
    for pattern in patterns:
        found = sorted(root.glob(pattern))
        if not found:
            raise FileNotFoundError(f"{name}: no data file matches {pattern!r} (paths are from the repository's root)")
        paths += found
    return RENDERERS[name](paths, **options).rstrip("\n") + "\n"


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
