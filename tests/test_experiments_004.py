"""The three LU experiments of paper 004 at tiny sizes: CSV, PNG, claims and notes (no timing)."""
import csv

import pytest

from experiments.lu.full_pivoting import EXPERIMENT as FULL
from experiments.lu.no_pivoting import EXPERIMENT as NONE
from experiments.lu.partial_pivoting import EXPERIMENT as PARTIAL

PNG = b"\x89PNG\r\n\x1a\n"
SIZES = [16, 32]
CASES = [(NONE, "cpu_sgetrf", 0), (PARTIAL, "cpu_sgetrf", 1), (FULL, "cpu_sgetc2", 1)]


@pytest.mark.parametrize("exp, cpu, readbacks_per_step", CASES, ids=lambda v: getattr(v, "name", None))
def test_lu_experiment(tmp_path, exp, cpu, readbacks_per_step):
    o = exp.execute(sizes=SIZES, repeat=1, out=tmp_path, quiet=True)
    with open(tmp_path / f"{exp.name}.csv") as f:
        rows = list(csv.DictReader(f))
    assert sorted((int(r["n"]), r["implementation"]) for r in rows) == sorted(
        (n, impl) for n in SIZES for impl in ("gpu", cpu))
    for r in rows:
        n = int(r["n"])
        assert float(r["seconds"]) > 0
        assert float(r["residual"]) < 1e-4
        if r["implementation"] == "gpu":
            assert int(r["elimination_fragments"]) == (n - 1) * n * (2 * n - 1) // 6 == int(r["formula_elimination"])
            assert int(r["pivot_readbacks"]) == readbacks_per_step * n
    assert (tmp_path / f"{exp.name}.png").read_bytes()[:8] == PNG
    assert len(o.claims) >= 2
    assert all(c.measured and "n/a" not in c.measured for c in o.claims)
    assert any("Table 1(a)" in c.text and c.measured == "equal at every size" for c in o.claims)
    assert any("fragment-processor scaling figure" in n for n in o.notes)
    assert exp.module_name() == "lu." + exp.name.removeprefix("lu_")
