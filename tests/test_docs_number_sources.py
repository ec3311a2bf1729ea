"""Every measured number in a table of README.md, CHANGELOG.md and every page of docs/ has a source row: a table
is either rendered from its data (a ``<!-- render: ... -->`` block, checked by
test_docs_rendered.py) or typed, and then each number in it must be found, at the precision it
is printed with, in the data files its section names (``figures/NAME.csv``, ``.json``, ``.txt``).
A number typed from a run whose data is not in docs/figures, or left behind when its data
changed, fails here. The same holds for the numbers of every prose paragraph (its section's
data files; a number the page derives from one, a sum or a median, is computed in DERIVED).
(docs/REPORT.md is rendered whole from the claims files: its own test.)

Not measured numbers, so not looked up: code (`...`), links, dates, the papers' tables, figures
and sections, names with digits (nug20, gruca_like(1024), 25fv47), sizes written "m x n",
settings that are powers of ten (1e-8), whole numbers below 100 (counts such as "42 of 42") and
the columns that give a paper's figure (headed with a paper's number, "paper" or "Cplex")."""
import bisect
import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ROOT / "docs" / "figures"
#: pages whose tables are written by a program, not typed: REPORT.md (rendered from the claims
#: files, its own test) and the gallery (``make show-pages`` writes it from the recordings)
GENERATED = ("docs/REPORT.md", "docs/gallery/")
PAGES = ["README.md", "CHANGELOG.md"] + sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md")
                                               if not str(p.relative_to(ROOT)).startswith(GENERATED))
#: tables of settings, not measurements: an option's or a constant's value, checked against the
#: code by tests/test_presets_say_what_they_do.py and the options tables' tests
SETTINGS = ("option", "constant", "setting")

BLOCK = re.compile(r"<!-- render: .*?<!-- /render -->", re.S)
CITE = re.compile(r"figures/([\w.\-]+\.(?:csv|jsonl|json|txt))")
NUMBER = re.compile(r"(?<![\w.\-/^,])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w(]|\.\d|-\d\d|,\d)")
IN_DATA = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
PAPER_COLUMN = re.compile(r"\b00\d\b|paper|Cplex", re.I)
NOT_MEASURED = re.compile(r"`[^`]*`|\]\([^)]*\)|\d{4}-\d\d-\d\d|\b\w+\(\d+\)|\d[\d,]* x \d[\d,]*"
                          r"|\b(?:Tables?|Figs?\.?|Algorithms?|sections?|Kernels?)\s+[\d.,\- and]+"
                          r"|\(\d\.\d{1,2}\)(?:\s*-\s*\(\d\.\d{1,2}\))?")      # equations: (6.1), (6.1)-(6.3)


def data_values(names) -> list:
    """Every number written in the data files named, sorted."""
    values = set()
    for name in names:
        for token in IN_DATA.findall((FIGURES / name).read_text(errors="ignore")):
            try:
                values.add(float(token))
            except ValueError:
                pass
    return sorted(values)


def found(token: str, values: list) -> bool:
    """Whether some value of the data prints as ``token`` at the token's precision (also as a
    percentage, or in ms/us of a value in seconds)."""
    token = token.replace(",", "")
    x = float(token)
    m = re.match(r"[-+]?\d+(?:\.(\d+))?(?:[eE]([-+]?\d+))?", token)
    half = 0.5 * 10 ** (int(m.group(2) or 0) - len(m.group(1) or ""))
    for scale in (1, 0.01, 1e-3, 1e-6, 100, 1e3, 1e6):
        lo, hi = sorted(((x - half) * scale, (x + half) * scale))
        i = bisect.bisect_left(values, lo - 1e-12 * abs(lo))
        if i < len(values) and values[i] <= hi + 1e-12 * abs(hi):
            return True
    return False


def typed_tables(page: Path):
    """(line, rows, cited files) of each table outside rendered blocks: the files are those named
    in its section, from the section's heading to the paragraph after the table."""
    lines = BLOCK.sub("", page.read_text()).splitlines()
    section, i = 0, 0
    while i < len(lines):
        if lines[i].startswith("#"):
            section = i
        if not lines[i].lstrip().startswith("|"):          # a table, indented in a list item too
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].lstrip().startswith("|"):
            j += 1
        k = j
        while k < len(lines) and lines[k].strip() and not lines[k].startswith("#"):
            k += 1
        cited = sorted(set(CITE.findall("\n".join(lines[section:k]))))
        yield i + 1, [row.strip() for row in lines[i:j]], cited
        i = j


def measured_numbers(row: str, header: list) -> list:
    cells = [c.strip() for c in row.strip().strip("|").split("|")]
    out = []
    for j, text in enumerate(cells):
        if j < len(header) and PAPER_COLUMN.search(header[j]):
            continue
        for token in NUMBER.findall(NOT_MEASURED.sub("", text)):
            whole = not re.search(r"[.eE]", token)
            if (whole and abs(float(token.replace(",", ""))) < 100) or re.fullmatch(r"1[eE][-+]?\d+", token):
                continue
            out.append(token)
    return out


@pytest.mark.parametrize("page", PAGES)
def test_every_typed_number_has_a_source(page):
    missing = []
    for line, rows, cited in typed_tables(ROOT / page):
        absent = [c for c in cited if not (FIGURES / c).exists()]
        assert not absent, f"{page}:{line}: the table's section names data files that do not exist: {absent}"
        values = data_values(cited)
        header = [c.strip() for c in rows[0].strip().strip("|").split("|")]
        if header[0].lower() in SETTINGS:
            continue
        for row in rows[2:]:
            lost = [t for t in measured_numbers(row, header) if not found(t, values)]
            if lost:
                missing.append(f"{page}:{line}: {', '.join(lost)} in {row[:90]!r}"
                               + ("" if cited else " (its section names no data file)"))
    assert not missing, ("numbers with no source row in the data files their section names (render the table "
                         "from its data, or name the file that holds them):\n" + "\n".join(missing))


def test_the_check_finds_a_planted_number(tmp_path):
    """A number changed in a typed table is caught; the same number as in its cited file passes."""
    (FIGURES / "bench_lu_h200_2026-11-29.txt").read_text()  # the file the page below cites
    page = tmp_path / "page.md"
    good = ("## s\n\nFrom `figures/bench_lu_h200_2026-11-29.txt`:\n\n| n | GPU s |\n| --- | --- |\n"
            "| 4096 | 0.4042 |\n")
    page.write_text(good)
    for line, rows, cited in typed_tables(page):
        assert all(found(t, data_values(cited)) for t in measured_numbers(rows[2], ["n", "GPU s"]))
    page.write_text(good.replace("0.4042", "0.4142"))
    for line, rows, cited in typed_tables(page):
        assert not all(found(t, data_values(cited)) for t in measured_numbers(rows[2], ["n", "GPU s"]))


# --------------------------------------------------------------------------- prose

#: what a paragraph's numbers are when they are not measurements: years, versions, sizes and
#: settings written "n = 4096" or "k <= 16", texel-centre coordinates and intervals, and a
#: paper's figure named as such ("the paper's 1.26", "000: 68.24 s", "Table 3's 7")
PROSE_NOT_MEASURED = re.compile(
    r"\b(?:19|20)\d\d\b(?!-\d)"
    r"|(?:OpenGL|GLSL(?: ES)?|ES|Python|CUDA|numpy|scipy|HiGHS|LLVM|driver|Mesa|setuptools|moderngl)\s+[\d.]+\+?"
    r"|\(\s*[^()]*\d\.5\s*,[^()]*\)|\[[-+\d.,\s]+[\])]"
    r"|\b[A-Za-zκμ]\w{0,2}\s*(?:=|≤|<=|>=|≥|<|>)\s*[-+]?[\d,.]+(?:[eE][-+]?\d+)?"
    r"|(?:paper(?:'s)?|00[0-4](?:'s)?|Cplex|MATLAB|Table \d)\D{0,24}?[-+]?\d[\d,.]*(?:[eE][-+]?\d+)?"
    r"(?:\s*(?:\.\.|-|to|and)\s*[\d,.]+(?:[eE][-+]?\d+)?)?")
#: float32's and the code's constants as the pages write them in prose (not measurements)
CONSTANTS = {"3e+38", "3.4e38", "1.2e-38", "3.4e+38", "1.19e-7", "120", "0.5", "1.5", "2.5"}


def _csv(name):
    import csv

    with (FIGURES / name).open(newline="") as f:
        return list(csv.DictReader(f))


def _json(name):
    import json

    return json.loads((FIGURES / name).read_text())


def _chunks(name, key):
    return sum(c.get(key) or 0 for c in _json(name)["chunks"])


def _table3_gpu_seconds():
    from gpgpu.lp.netlib import PAPER_TABLE3

    return sum(float(r["seconds"]) for r in _csv("lp_speed_h200_2026-11-28.csv")
               if r["part"] == "lp" and r["algorithm"] == "gpu_defaults" and r["problem"] in PAPER_TABLE3)


def _median_gpu_over_numpy64():
    by = {(r["problem"], r["backend"]): r for r in _csv("netlib_speed_h200_2026-12-04.csv")}
    ratios = [float(g["seconds"]) / float(by[p, "numpy64"]["seconds"]) for (p, b), g in by.items()
              if b == "gpu" and g["status"] != "timeout" and (p, "numpy64") in by]     # the runs it finishes
    return float(np.median(ratios))


NUG20_H100 = "mfipm_nug20_chunks_gpu_defaults_h100.json"

#: numbers a page derives from a data file its section names (a sum, a median, a quotient):
#: (page, the number as the page prints it) -> the value computed from that file
DERIVED = {
    ("docs/results/lp.md", "1.25"): _table3_gpu_seconds,
    ("docs/results/lp.md", "1,649"): lambda: sum(int(r["passes"] or 0) for r in _csv("lp_speed_h200_2026-11-28.csv")
                                                 if r["part"] == "lp" and r["algorithm"] == "gpu_defaults"),
    ("docs/results/lp.md", "17.9"): lambda: sum(r["seconds"] for r in _json("netlib_gpu_defaults_h200_2026-12-04.json")),
    ("docs/results/lp.md", "2.1"): _median_gpu_over_numpy64,
    ("docs/lp_defaults.md", "868,128"): lambda: _chunks(NUG20_H100, "pcg_iterations"),
    ("docs/lp_defaults.md", "1676"): lambda: _chunks(NUG20_H100, "seconds"),
    ("docs/lp_defaults.md", "1.93"): lambda: 1e3 * _chunks(NUG20_H100, "seconds") / _chunks(NUG20_H100, "pcg_iterations"),
    ("docs/results/matrix-free.md", "1676"): lambda: _chunks(NUG20_H100, "seconds"),
    ("docs/results/matrix-free.md", "771"): lambda: _chunks("mfipm_nug20_chunks_gpu_ff_h200.json", "pcg_iterations"),
}


def prose_lines(page: Path):
    """(line, text, cited files) of each prose line outside code blocks, tables, headings and
    rendered blocks: the files are those named in its section (heading to heading)."""
    lines = BLOCK.sub("", page.read_text()).splitlines()
    heads = [i for i, line in enumerate(lines) if line.startswith("#")] + [len(lines)]
    in_code = False
    for i, line in enumerate(lines):
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code or line.lstrip().startswith(("|", "#", "<")) or "</" in line or not line.strip():   # HTML too
            continue
        start = max([h for h in heads if h <= i], default=0)
        end = min(h for h in heads if h > i)
        yield i + 1, line, sorted(set(CITE.findall("\n".join(lines[start:end]))))


def prose_numbers(text: str) -> list:
    return [t for t in measured_numbers("|" + PROSE_NOT_MEASURED.sub("", NOT_MEASURED.sub("", text)) + "|", ["x"])
            if t not in CONSTANTS]


@pytest.mark.parametrize("page", PAGES)
def test_every_number_in_prose_has_a_source(page):
    missing = []
    for line, text, cited in prose_lines(ROOT / page):
        values = data_values([c for c in cited if (FIGURES / c).exists()])
        lost = [t for t in prose_numbers(text) if not found(t, values)
                and not ((page, t) in DERIVED and found(t, [DERIVED[page, t]()]))]
        if lost:
            missing.append(f"{page}:{line}: {', '.join(lost)} in {text.strip()[:90]!r}")
    assert not missing, ("measured numbers in prose with no source row in the data files their section names "
                         "(name the file, or say the number is a setting):\n" + "\n".join(missing))


def test_every_derived_number_is_still_found_on_its_page():
    """A derived number whose page changed (or whose data changed) fails here, not silently."""
    for (page, token), value in DERIVED.items():
        assert token in (ROOT / page).read_text(), (page, token)
        assert found(token, [value()]), (page, token, value())


def test_the_prose_check_finds_a_planted_number(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("## s\n\nFrom `figures/bench_lu_h200_2026-11-29.txt`: n = 4096 took 0.4042 s "
                    "(the paper's 1.26), in OpenGL 3.3.\n")
    (line, text, cited), = prose_lines(page)
    assert prose_numbers(text) == ["0.4042"] and found("0.4042", data_values(cited))
    assert not found("0.4142", data_values(cited))
