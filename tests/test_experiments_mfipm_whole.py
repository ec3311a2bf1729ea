"""experiments.mfipm.whole: the rows it writes and the table it prints, on afiro (llvmpipe)."""
import csv

import pytest

pytest.importorskip("highspy")
from experiments.mfipm import whole  # noqa: E402


def test_a_row_per_run_with_its_figures_and_the_cpu_over_gpu_ratios(tmp_path, ctx):
    out = tmp_path / "whole.csv"
    assert whole.main(["--problems", "afiro", "--out", str(out)]) == 0
    rows = list(csv.DictReader(open(out)))
    assert [r["run"] for r in rows] == ["gpu", "gpu-002", "numpy64", "numpy64-1"]
    for r in rows:
        assert r["problem"] == "afiro" and r["status"] == "optimal" and float(r["error"]) < 1e-6
        assert float(r["highs_objective"]) == pytest.approx(-464.7531428571)      # NETLIB's afiro
        assert int(r["pcg_iterations"]) > 0 and float(r["seconds"]) > 0
    by = {r["run"]: r for r in rows}
    for run in ("gpu", "gpu-002"):
        g = by[run]
        assert int(g["passes"]) > 0 and float(g["passes_per_pcg"]) == pytest.approx(
            int(g["passes"]) / int(g["pcg_iterations"]))
    # the fused iteration draws fewer passes than 002's kernels
    assert float(by["gpu"]["passes_per_pcg"]) < float(by["gpu-002"]["passes_per_pcg"])
    assert int(by["numpy64"]["passes"]) == 0
    table = whole.markdown(out).splitlines()
    assert len(table) == 2 + 4
    ratio = float(by["numpy64-1"]["seconds"]) / float(by["gpu"]["seconds"])
    assert table[2].startswith("| afiro | gpu | optimal | ") and table[2].endswith(f", {ratio:.2f} |")
    assert table[4].endswith("| - | - | -, - |")                 # a CPU run: no passes, no ratio


def test_an_unknown_run_is_refused(tmp_path, ctx):
    with pytest.raises(SystemExit):
        whole.main(["--problems", "afiro", "--runs", "gpu,cuda", "--out", str(tmp_path / "x.csv")])
