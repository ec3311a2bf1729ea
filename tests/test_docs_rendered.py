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


def test_the_limitations_lines_on_large_lps_and_whole_solves(tmp_path):
    """render._large_lp_lines: from netlib_speed's CSV the range of GPU / numpy64 and GPU / HiGHS
    over the problems of 1000 normal rows and more that both solved (a smaller one, a timeout left
    out), how many the GPU was faster on; from mfipm.whole's CSV a line per problem both solved;
    nothing for a file not given."""
    import csv

    from experiments.render import _large_lp_lines

    speed = tmp_path / "netlib_speed_h100_2026-12-06.csv"
    fields = ("problem", "backend", "status", "seconds", "normal_rows", "highs_ipm_seconds", "renderer")
    rows = [("a", "gpu", "optimal", "1.0", "1500", "0.5"), ("a", "numpy64", "optimal", "2.0", "1500", "0.5"),
            ("b", "gpu", "optimal", "3.0", "1200", "0.2"), ("b", "numpy64", "optimal", "2.0", "1200", "0.2"),
            ("c", "gpu", "optimal", "9.0", "999", "0.1"), ("c", "numpy64", "optimal", "1.0", "999", "0.1"),
            ("d", "gpu", "timeout", "60", "2000", "0.1"), ("d", "numpy64", "optimal", "1.0", "2000", "0.1")]
    with open(speed, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(fields)
        w.writerows([r + ("NVIDIA H100 80GB HBM3/PCIe/SSE2",) for r in rows])

    def whole_csv(name, rows):
        path = tmp_path / name
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(("problem", "run", "eps", "status", "seconds", "renderer"))
            w.writerows([(p, run, "1e-06", "optimal", sec, "NVIDIA H100 80GB HBM3/PCIe/SSE2") for p, run, sec in rows])
        return path

    whole = whole_csv("mfipm_whole_h100_2026-12-06.csv", [("nug12", "gpu", "37.29"), ("nug12", "numpy64", "104.67")])
    later = whole_csv("mfipm_whole_nug12_h100_2026-12-06-b.csv", [("nug12", "gpu", "52.83"), ("nug15", "gpu", "143.15")])
    text = "\n".join(_large_lp_lines(speed, [whole], "docs/"))
    assert "on 2 NETLIB problems the GPU's defaults take 0.50 to 1.50 times numpy64's time" in text
    assert "(faster on 1) and 2.0 to 15.0 times HiGHS's IPM's" in text
    assert "(H100, 2026-12-06, `netlib_speed_h100_2026-12-06.csv`)" in text
    assert "nug12 at eps = 1e-6 in 37.3 s on the GPU, 104.7 s in numpy64 on all cores (" in text
    # a later CSV adds the GPU's seconds of the same problem (none for a problem not paired)
    text = "\n".join(_large_lp_lines(None, [whole, later], "docs/"))
    assert ("104.7 s in numpy64 on all cores; a later GPU run of the code, "
            "`mfipm_whole_nug12_h100_2026-12-06-b.csv`: 52.8 s, optimal (") in text
    assert "nug15" not in text
    # a problem first paired in a later CSV gets its own line; numpy64 stopped at its time limit
    # is a time it had not finished in; a CPU run that crashed pairs with nothing
    bound = tmp_path / "mfipm_whole_nug20_h100_2026-12-07.csv"
    with open(bound, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(("problem", "run", "eps", "status", "seconds", "renderer"))
        w.writerows([("nug20", "gpu", "1e-06", "optimal", "216.32", "NVIDIA H100 80GB HBM3/PCIe/SSE2"),
                     ("nug20", "numpy64", "1e-06", "time_limit", "488.56", "NVIDIA H100 80GB HBM3/PCIe/SSE2"),
                     ("nug30", "gpu", "1e-06", "optimal", "900", "NVIDIA H100 80GB HBM3/PCIe/SSE2"),
                     ("nug30", "numpy64", "1e-06", "crash", "9", "NVIDIA H100 80GB HBM3/PCIe/SSE2")])
    lines = _large_lp_lines(None, [whole, bound], "docs/")
    assert len(lines) == 2 and "nug12" in lines[0]
    assert ("(H100, 2026-12-07, `mfipm_whole_nug20_h100_2026-12-07.csv`): nug20 at eps = 1e-6 in 216.3 s on "
            "the GPU, numpy64 on all cores stopped unfinished at its time limit after 488.6 s (") in lines[1]
    assert _large_lp_lines(None, None, "docs/") == []
    assert _large_lp_lines(None, [], "docs/") == []
