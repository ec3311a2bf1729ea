"""experiments.figures: the CSV every measuring tool writes (renderer and date in each row, the
default path under docs/figures) and its --out and --markdown flags."""
import csv
import datetime

from experiments import figures


def test_rows_carry_the_renderer_and_the_date_and_go_to_docs_figures_by_default(tmp_path, monkeypatch, ctx, capsys):
    monkeypatch.chdir(tmp_path)
    with figures.rows_to(None, "tool", ("a", "renderer", "date")) as write:
        write({"a": 1})
        write({"a": 2})
    date = datetime.date.today().isoformat()
    path = tmp_path / "docs" / "figures" / f"tool_{date}.csv"
    rows = list(csv.DictReader(open(path)))
    assert [r["a"] for r in rows] == ["1", "2"]
    assert all(r["renderer"] == figures.renderer() and r["date"] == date for r in rows)
    assert capsys.readouterr().out.strip().endswith(f"wrote docs/figures/tool_{date}.csv")
    with figures.rows_to(tmp_path / "given.csv", "tool", ("a", "renderer", "date"), extrasaction="ignore") as write:
        write({"a": 3, "extra": 4})
    assert list(csv.DictReader(open(tmp_path / "given.csv")))[0]["a"] == "3"


def test_the_markdown_flag_prints_the_table_of_a_csv(capsys):
    ap = figures.tool_parser("A tool.\n\nMore notes.")
    assert ap.description == "A tool."
    assert figures.printed_markdown(ap.parse_args(["--markdown", "x.csv"]), lambda path: f"table of {path}")
    assert capsys.readouterr().out == "table of x.csv\n"
    assert not figures.printed_markdown(ap.parse_args(["--out", "y.csv"]), lambda path: "never")
    assert capsys.readouterr().out == ""
