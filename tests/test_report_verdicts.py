"""docs/REPORT.md is rendered from data: every claim has a verdict, and the file is what
``python -m experiments report --out docs/figures --to docs/REPORT.md`` writes now."""
import json
from pathlib import Path

from experiments.__main__ import count_line, load_claims, report
from experiments.verdicts import source_text, verdict_problems

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "docs" / "figures"


def claims_files():
    return [json.loads(p.read_text()) for p in sorted(FIGURES.glob("*.claims.json"))]


def test_every_verdict_keeps_the_rule():
    # the rule of experiments/verdicts.py: a paper verdict quotes the paper's sentence (paper,
    # section, quote) and names its data rows; "holds" its tolerance and kind of problem; a claim
    # beyond the papers gets no paper verdict
    verdicts = json.loads((FIGURES / "verdicts.json").read_text())
    broken = verdict_problems(verdicts, load_claims(FIGURES), FIGURES)
    assert not broken, "verdicts.json breaks the verdict rule:\n" + "\n".join(map(str, broken))
    for nc in verdicts.get("not_checked", []):
        assert nc["paper"] in ("000", "001", "002", "003", "004") and nc["reason"] and nc["paper_says"]


def _rule_case(tmp_path, claim_text="GPU / CPU time", claim_paper="about 0.5", **verdict):
    """One claim, its CSV and its verdict: the rule's problems."""
    (tmp_path / "fig8.csv").write_text("n,solver,seconds\n64,gpu,0.52\n64,cpu,1.0\n")
    found = {"fig8": {"gpu": {"name": "fig8", "claims": [{"text": claim_text, "paper": claim_paper,
                                                          "measured": "0.52"}]}}}
    good = {"verdict": "holds", "reason": "0.52 at n = 64, the paper's 0.5", "paper": "000",
            "section": "section 5, Fig. 8", "quote": "the GPU takes about half the CPU's time",
            "rows": [{"n": "64", "solver": "gpu"}], "tolerance": "within 10 %",
            "problem": "random SPD matrices as the paper's"}
    good.update(verdict)
    good = {k: v for k, v in good.items() if v is not None}
    return [what for *_, what in verdict_problems({"claims": {"fig8": {claim_text: good}}}, found, tmp_path)]


def test_the_verdict_rule_catches_each_break(tmp_path):
    assert _rule_case(tmp_path) == []
    assert _rule_case(tmp_path, quote=None) == ["no quotation of the paper's sentence ('quote')"]
    assert _rule_case(tmp_path, section=None) == ["no section for the quotation"]
    assert _rule_case(tmp_path, paper="005")[0].startswith("no paper")
    assert _rule_case(tmp_path, rows=None) == ["no data rows ('rows')"]
    assert _rule_case(tmp_path, rows=[{"n": "128"}]) == ["no row of fig8.csv has {'n': '128'}"]
    assert _rule_case(tmp_path, rows=[{"size": "64"}]) == ["fig8.csv has no column ['size']"]
    assert _rule_case(tmp_path, tolerance=None)[0].startswith("'holds' without the tolerance")
    assert _rule_case(tmp_path, problem=None)[0].startswith("'holds' without the tolerance")
    # holds in direction needs the source, not the tolerance
    assert _rule_case(tmp_path, verdict="holds in direction", tolerance=None, problem=None) == []
    assert _rule_case(tmp_path, reason="") == ["no reason"]
    # a claim beyond the papers: only "beyond the papers", which needs no quotation
    beyond = "GPU / CPU time, fast preset (beyond the papers)"
    assert _rule_case(tmp_path, beyond) == ["a claim beyond the papers has the paper verdict 'holds'"]
    assert _rule_case(tmp_path, "fill", claim_paper="not in the text", verdict="does not hold")[0].startswith(
        "a claim beyond the papers")
    assert _rule_case(tmp_path, beyond, verdict="beyond the papers", quote=None, rows=None) == []
    assert _rule_case(tmp_path, verdict="not checked")[0].startswith("verdict 'not checked' is not one of")


def test_report_prints_the_source_under_a_paper_verdict():
    assert source_text({"verdict": "holds", "paper": "000", "section": "section 5.2, Fig. 11",
                        "quote": "measured on Linux\nwith OpenGL backend"}) == (
        "000, section 5.2, Fig. 11: \u201cmeasured on Linux with OpenGL backend\u201d")
    assert source_text({"verdict": "beyond the papers", "quote": "x" * 30}) == ""


def test_claims_files_say_date_and_command():
    for data in claims_files():
        assert data.get("renderer") and data.get("command"), data["name"]
        assert len(data.get("date", "")) == 10 and data["date"][4] == "-", data["name"]


def test_report_md_is_rendered_from_the_data(tmp_path):
    # the same layout as docs/ (figures/ beside REPORT.md), so the links come out as in docs/REPORT.md
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "figures").symlink_to(FIGURES, target_is_directory=True)
    fresh = report(tmp_path / "docs" / "figures", to=tmp_path / "docs" / "REPORT.md").read_text()
    assert fresh == (ROOT / "docs" / "REPORT.md").read_text(), (
        "docs/REPORT.md is stale: python -m experiments report --out docs/figures --to docs/REPORT.md")


def test_report_is_deterministic(tmp_path):
    a = report(FIGURES, to=tmp_path / "a.md").read_text()
    b = report(FIGURES, to=tmp_path / "b.md").read_text()
    assert a == b


def test_report_links_resolve():
    import re

    text = (ROOT / "docs" / "REPORT.md").read_text()
    links = re.findall(r"\]\((figures/[^)]+)\)", text)
    assert links
    assert all((ROOT / "docs" / link).exists() for link in links), [
        link for link in links if not (ROOT / "docs" / link).exists()]


def _claims(renderer, date, measured, text="GPU / CPU time"):
    return {"name": "fig8", "title": "a test", "renderer": renderer, "date": date,
            "command": "python -m experiments.fig8", "size_name": "n", "sizes": [64], "seconds": 1.0,
            "notes": ["a note"],
            "claims": [{"text": text, "paper": "about 0.5", "measured": measured, "how": "", "kind": "measured"},
                       {"text": "fill", "paper": "no figure (beyond the papers)", "measured": "90%",
                        "how": "", "kind": "measured"}]}


def test_synthetic_verdict_table(tmp_path):
    (tmp_path / "fig8.claims.json").write_text(json.dumps(_claims("NVIDIA H200/PCIe/SSE2", "2026-11-25", "0.52")))
    (tmp_path / "fig8.llvmpipe.claims.json").write_text(
        json.dumps(_claims("llvmpipe (LLVM 15.0.6, 256 bits)", "2026-11-20", "0.61")))
    verdicts = {"claims": {"fig8": {"GPU / CPU time": {"verdict": "holds", "reason": "0.52, the paper's 0.5"},
                                    "fill": {"verdict": "beyond the papers", "reason": "no figure"}}},
                "not_checked": [{"paper": "000", "claim": "minimum feedback", "paper_says": "no figure",
                                 "reason": "no experiment"}]}
    (tmp_path / "v.json").write_text(json.dumps(verdicts))
    text = report(tmp_path, to=tmp_path / "R.md", verdicts=tmp_path / "v.json").read_text()
    assert ("| fig8: GPU / CPU time | about 0.5 | H200, 2026-11-25: 0.52 | 2026-11-20: 0.61 | "
            "**holds**: 0.52, the paper's 0.5 |") in text
    assert "| fig8: fill | no figure (beyond the papers) | H200, 2026-11-25: 90% | 2026-11-20: 90% |" in text
    assert "| minimum feedback | no figure | not checked | not checked | **not checked**: no experiment |" in text
    assert "1 holds, 1 beyond the papers, 1 not checked." in text
    # the header comes from the data: renderers, dates, commands; the newest date, no clock time
    assert "the newest of 2026-11-25" in text
    assert "- llvmpipe (LLVM 15.0.6, 256 bits), 2026-11-20, `python -m experiments.fig8`: fig8" in text
    # one section per experiment, from the GPU's run, with its renderer, date and command
    assert text.count("## fig8: a test") == 1
    assert "Renderer: NVIDIA H200/PCIe/SSE2. Date: 2026-11-25. Command: `python -m experiments.fig8`." in text
    assert text.index("## Verdicts") < text.index("## fig8: a test")
    assert report(tmp_path, to=tmp_path / "R2.md", verdicts=tmp_path / "v.json").read_text() == text


def test_count_line():
    assert count_line(["holds"] * 12 + ["holds in direction"] * 3 + ["does not hold"]) == (
        "12 hold, 3 hold in direction, 1 does not hold.")
