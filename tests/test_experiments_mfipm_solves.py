"""experiments.mfipm.solves: a row for each PCG solve of a whole matrix-free solve and one for the
whole solve, on sctap1 (llvmpipe), against the solver's own counts."""
import csv

import pytest

from experiments.mfipm import solves
from gpgpu.lp import solve
from gpgpu.lp.matrix_free_fused import CHECK_LAG


def test_each_pcg_solve_and_the_whole_solve(tmp_path, ctx):
    out = tmp_path / "solves.csv"
    assert solves.main(["--problems", "sctap1", "--max-iter", "3", "--out", str(out)]) == 0
    rows = list(csv.DictReader(open(out)))
    each, whole = rows[:-1], rows[-1]
    assert [r["solve"] for r in each] == [str(i) for i in range(len(each))] and whole["solve"] == "all"
    assert (whole["status"], whole["interior_iterations"]) == ("iteration_limit", "3")
    for r in each:
        assert r["problem"] == "sctap1" and r["solution"] in ("float32", "float-float") and r["k"] == "100"
        its, seconds = int(r["iterations"]), float(r["seconds"])
        assert its >= 1 and seconds > 0 and r["converged"] in ("True", "False")
        assert float(r["us_per_iteration"]) == pytest.approx(seconds / its * 1e6)
    drawn = sum(int(r["iterations"]) for r in each)
    assert int(whole["iterations"]) == drawn
    # each solve draws one iteration more than it counts (its last is drawn for the update and
    # the residual the check reads), and a solve that converged CHECK_LAG more (drawn before
    # its check was read): the solver's count of the same run is the drawn less those
    ref = solve("sctap1", method="matrix-free", backend="gpu", eps=1e-6, max_iter=3)
    converged = sum(r["converged"] == "True" for r in each)
    assert converged > 0
    assert drawn - len(each) - CHECK_LAG * converged == ref.pcg_iterations
    pcg = sum(float(r["seconds"]) for r in each)
    assert float(whole["us_per_iteration"]) == pytest.approx(pcg / drawn * 1e6)
    assert float(whole["seconds"]) >= pcg
    table = solves.markdown(out).splitlines()
    assert len(table) == 2 + len(rows) and table[-1].startswith(f"| sctap1 | all | {drawn} | ")
    assert table[2].startswith(f"| sctap1 | 0 | {each[0]['iterations']} | ")


def test_checks_read_at_once_and_their_spacing(tmp_path, ctx):
    """--check-lag 0: each solve draws one iteration more than it counts, as the solver counts
    them with CHECK_LAG = 0; --pcg-check 4 is passed to the solve (the checks of a converged
    solve fall on multiples of 4). The settings are in each row, and CHECK_LAG is restored."""
    import gpgpu.lp.matrix_free_fused as mff

    out = tmp_path / "solves.csv"
    lag = mff.CHECK_LAG
    assert solves.main(["--problems", "sctap1", "--max-iter", "2", "--check-lag", "0", "--pcg-check", "4",
                        "--out", str(out)]) == 0
    assert mff.CHECK_LAG == lag
    rows = list(csv.DictReader(open(out)))
    each = rows[:-1]
    assert all((r["pcg_check"], r["check_lag"]) == ("4", "0") for r in rows)
    drawn = sum(int(r["iterations"]) for r in each)
    try:
        mff.CHECK_LAG = 0
        ref = solve("sctap1", method="matrix-free", backend="gpu", eps=1e-6, max_iter=2, pcg_check=4)
    finally:
        mff.CHECK_LAG = lag
    assert drawn - len(each) == ref.pcg_iterations
    counted = [int(r["iterations"]) - 1 for r in each if r["converged"] == "True"]
    assert counted and all(c <= 1 or c % 4 == 0 for c in counted)
