"""experiments.factor_blocks: the rows it writes and the table it prints (m = 40, llvmpipe)."""
import csv

import pytest

from experiments import factor_blocks


def test_a_row_per_way_with_its_passes_fragments_and_errors(tmp_path, ctx):
    out = tmp_path / "blocks.csv"
    assert factor_blocks.main(["--sizes", "40", "--blocks", "8", "--repeat", "1", "--out", str(out)]) == 0
    rows = list(csv.DictReader(open(out)))
    assert [(r["precision"], r["steps"], r["block"]) for r in rows] == [
        ("float32", "4", ""), ("float32", "1", ""), ("float32", "1", "8"), ("float32", "4", "8"),
        ("float-float", "1", ""), ("float-float", "1", "8")]
    # the set-up's 5 passes, then 10 of four steps, 40 of one, 40 steps and 4 packings and 4
    # trailing passes, or 10 passes of four steps and 4 packings and 4 trailing passes
    assert [int(r["passes"]) for r in rows] == [15, 45, 53, 23, 45, 53]
    one32, blocked32, oneff, blockedff = (rows[i] for i in (1, 2, 4, 5))
    assert int(rows[3]["fragments"]) < int(rows[0]["fragments"])
    # the same passes but the packings: m = 40 rows of 2 texels (four columns a texel) in
    # float32, of 4 in float-float (two a texel), 4 times
    assert one32["fragments"] == oneff["fragments"]
    assert int(blockedff["fragments"]) - int(blocked32["fragments"]) == 4 * 40 * (4 - 2)
    assert int(blocked32["fragments"]) < 0.75 * int(one32["fragments"])
    for r in rows:
        assert float(r["seconds"]) > 0 and r["m"] == "40"
        if r["gpu_seconds"]:                                  # a renderer with timer queries
            assert float(r["gpu_seconds"]) > 0 and (float(r["trailing_gpu_seconds"]) > 0) == bool(r["block"])
            assert float(r["trailing_gpu_seconds"]) < float(r["gpu_seconds"])
        u = 2.0 ** -48 if r["precision"] == "float-float" else 2.0 ** -24
        assert float(r["inverse_error"]) < 40 * 40 * u and float(r["factor_error"]) < 40 * u
    table = factor_blocks.markdown(out).splitlines()
    assert len(table) == 2 + len(rows) and table[2].startswith("| float32 | 40 | 4 | - | ")
    assert " | 1.00 | " in table[2] and " | 1.00 | " in table[6]


def test_odd_blocks_are_refused():
    with pytest.raises(SystemExit):
        factor_blocks.main(["--blocks", "7"])


def test_the_float32_panels_go_four_steps_a_pass_only_where_the_block_allows():
    """A block's panel must take an even number of passes: four steps a pass (the LP's float32
    STEPS_A_PASS) only for blocks that are multiples of 8."""
    ways = factor_blocks._ways([4, 8, 12, 16])
    assert [b for p, s, b in ways if p == "float32" and s == 4] == [None, 8, 16]
    assert [b for p, s, b in ways if p == "float-float"] == [None, 4, 8, 12, 16]
