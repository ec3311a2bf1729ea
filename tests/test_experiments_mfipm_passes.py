"""experiments.mfipm.passes: a row for the fused iteration's plan and one for each of its passes, in
the iteration's order, on sctap1 (llvmpipe), and the table it prints."""
import csv

from experiments.mfipm import passes

ORDER = ["pcg_update_forward", "pcg_chunk_sums", "pcg_chunk_totals", "pcg_direction", "sparse_ellpack_four",
         "sparse_ellpack_four", "pcg_step_scalars"]


def test_the_plan_and_each_pass_in_order(tmp_path, ctx):
    out = tmp_path / "passes.csv"
    assert passes.main(["--problems", "sctap1", "--after", "5", "--repeat", "3", "--label", "now",
                        "--out", str(out)]) == 0
    rows = list(csv.DictReader(open(out)))
    assert [r["pass"] for r in rows] == ["plan"] + [str(i) for i in range(len(ORDER))]
    assert rows[0]["kernel"] == f"{len(ORDER)} passes" and float(rows[0]["host_us"]) > 0
    assert [r["kernel"] for r in rows[1:]] == ORDER
    for r in rows:
        assert (r["problem"], r["label"], r["m"], r["n"]) == ("sctap1", "now", "300", "660")
        assert float(r["wall_us"]) > 0
        assert r["gpu_us"] == "" or float(r["gpu_us"]) > 0
    # the vectors are folded 128 wide (GPUMatrixFree's fold): u = A^T p fills 6 rows of 128; the
    # second product's target holds y (3 rows) and, below it, the curvature sums
    assert int(rows[5]["texels"]) == 6 * 128 and int(rows[6]["texels"]) > 3 * 128
    assert {r["solution"] for r in rows} == {"float32"}             # early in the solve
    table = passes.markdown(out).splitlines()
    assert len(table) == 2 + len(rows) and table[3].startswith("| sctap1 | now | float32 | 0 | pcg_update_forward | ")


def test_fold_off_draws_the_vectors_in_one_row(tmp_path, ctx):
    """--fold off: the back end's vectors in one texture row, u = A^T p's 660 texels."""
    out = tmp_path / "passes.csv"
    assert passes.main(["--problems", "sctap1", "--after", "5", "--repeat", "2", "--fold", "off",
                        "--out", str(out)]) == 0
    rows = list(csv.DictReader(open(out)))
    assert [r["kernel"] for r in rows[1:]] == ORDER
    assert int(rows[5]["texels"]) == 660 and int(rows[6]["texels"]) == 2 * 300


def test_the_float_float_solution_from_the_first_solve(tmp_path, ctx):
    """--solution float-float: the measured iteration is the one that updates x in float-float (the
    solver's choice of x's format, read from the back end at the measurement), the same passes."""
    out = tmp_path / "passes.csv"
    assert passes.main(["--problems", "sctap1", "--after", "5", "--repeat", "2", "--solution", "float-float",
                        "--out", str(out)]) == 0
    rows = list(csv.DictReader(open(out)))
    assert rows and {r["solution"] for r in rows} == {"float-float"}
    assert [r["kernel"] for r in rows[1:]] == ORDER


def test_a_solve_that_ends_first_writes_no_rows(tmp_path, ctx):
    out = tmp_path / "passes.csv"
    assert passes.main(["--problems", "afiro", "--after", "100000", "--repeat", "2", "--out", str(out)]) == 0
    assert list(csv.DictReader(open(out))) == []
