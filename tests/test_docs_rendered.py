"""The docs' rendered tables (experiments.render): every block equals what its data renders to,
and the NETLIB collection's summary says what a hand-made CSV holds."""
import csv

import pytest

from experiments import netlib_all, render

FIELDS = ["problem", "rows", "columns", "nonzeros", "method", "backend", "eps", "status", "iterations", "seconds",
          "objective", "accuracy", "highs_objective", "highs_error", "netlib_objective", "objective_constant",
          "netlib_error", "right", "standard_rows", "normal_rows", "reason", "highs_seconds", "renderer", "date"]


def test_every_rendered_block_matches_its_data():
    stale = [str(page) for page in render.pages() if "<!-- render:" in page.read_text()
             and render.render_page(page.read_text()) != page.read_text()]
    assert not stale, f"rendered blocks differ from their data (run python -m experiments.render): {stale}"
    assert any("<!-- render:" in page.read_text() for page in render.pages())


def _row(problem, status, right, error, reason="", backend="gpu", nonzeros=10, renderer="R"):
    r = dict.fromkeys(FIELDS, "")
    r.update(problem=problem, status=status, right=str(right), highs_error=error, reason=reason, nonzeros=nonzeros,
             method="mehrotra", backend=backend, eps="1e-08", seconds="1.5", renderer=renderer, date="2026-01-02",
             rows="3", columns="4")
    return r


def test_the_summary_counts_and_names_the_misses(tmp_path):
    path = tmp_path / "a.csv"
    rows = [_row("big", "timeout", False, "inf", "no answer within the 45 s limit (--timeout)", nonzeros=900),
            _row("small", "optimal", True, "1e-12", nonzeros=5),
            _row("odd", "numerical_trouble", False, "0.13", "Numerical trouble: ...", nonzeros=50),
            _row("small", "optimal", True, "1e-12", backend="numpy64", renderer="llvmpipe")]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        w.writerows(rows)
    text = netlib_all.markdown([path])
    lines = text.splitlines()
    assert lines[2] == ("| mehrotra, gpu, eps 1e-08 | R, 2026-01-02 | 1 of 3 | numerical trouble: odd (1.3e-01 off); "
                        "over the 45 s limit: big |")
    assert lines[3] == "| mehrotra, numpy64, eps 1e-08 | the CPU of the llvmpipe machine, 2026-01-02 | 1 of 1 | none |"
    # each run's table lists its problems by nonzeros (small, odd, big)
    table = [line.split(" | ")[0] for line in lines if line.startswith("| ") and " | 3 | 4 | " in line]
    assert table == ["| small", "| odd", "| big", "| small"]


def test_a_block_naming_missing_data_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no data file matches 'nothing.csv'"):
        render.render_block("netlib_all nothing.csv", tmp_path)
    with pytest.raises(ValueError, match="unknown renderer 'nope'"):
        render.render_block("nope a.csv", tmp_path)
