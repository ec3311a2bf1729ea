"""The experiments of paper 001 (experiments/adat: Figs. 8-9, Tables 1-2) at tiny sizes."""
import csv

import pytest

from experiments.adat.fig8 import EXPERIMENT as FIG8
from experiments.adat.fig9 import EXPERIMENT as FIG9
from experiments.adat.table1 import EXPERIMENT as TABLE1
from experiments.adat.table2 import EXPERIMENT as TABLE2
from experiments.__main__ import load

PNG = b"\x89PNG\r\n\x1a\n"
SIZES = [16, 32]


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def check_outputs(exp, outcome, tmp_path):
    assert outcome.csv == tmp_path / f"{exp.name}.csv" and outcome.csv.exists()
    assert (tmp_path / f"{exp.name}.png").read_bytes()[:8] == PNG
    assert outcome.claims and all(c.text and c.paper and c.measured for c in outcome.claims)
    return read_csv(outcome.csv)


@pytest.mark.parametrize("name, exp", [("adat.fig8", FIG8), ("adat.fig9", FIG9), ("adat.table1", TABLE1),
                                       ("adat.table2", TABLE2)])
def test_registry_names_the_module(name, exp):
    assert load(name) is exp and exp.module_name() == name and exp.size_name == "m"


@pytest.mark.parametrize("exp, algorithms", [
    (FIG8, {"gpu_packed", "gpu_full", "cpu_ssyrk"}),
    (FIG9, {"cholesky_full", "cholesky_packed", "lu", "cpu_spotrf"}),
])
def test_figures_one_row_per_size_and_algorithm(exp, algorithms, tmp_path):
    o = exp.execute(sizes=SIZES, repeat=1, out=tmp_path, quiet=True)
    rows = check_outputs(exp, o, tmp_path)
    assert sorted((int(r["m"]), r["algorithm"]) for r in rows) == sorted((m, a) for m in SIZES for a in algorithms)
    assert all(float(r["seconds"]) > 0 for r in rows)
    # packed and full process exactly the same fragments (section 5 of 001)
    for m in SIZES:
        frags = {r["algorithm"]: r["update_fragments"] for r in rows if int(r["m"]) == m and r["update_fragments"]}
        if exp is FIG8:
            assert int(frags["gpu_packed"]) == int(frags["gpu_full"]) == 2 * m * m * (m + 1) // 2
        else:
            assert int(frags["cholesky_packed"]) == int(frags["cholesky_full"])
    assert any("fragments equal" in c.text and "equal at every size" in c.measured for c in o.claims)


@pytest.mark.parametrize("exp", [TABLE1, TABLE2])
def test_tables_refine_to_double_precision(exp, tmp_path):
    o = exp.execute(sizes=SIZES, repeat=1, out=tmp_path, quiet=True)
    rows = check_outputs(exp, o, tmp_path)
    assert [int(r["m"]) for r in rows] == SIZES
    for r in rows:
        assert float(r["refined_error"]) <= 1e-9 < float(r["x0_error"]) < 1
        assert r["converged"] == "True" and int(r["iterations"]) >= 1
        for k in ("gpu_x0_seconds", "refine_seconds", "total_seconds", "cpu_seconds", "speedup"):
            assert float(r[k]) > 0
        assert float(r["total_seconds"]) == pytest.approx(float(r["gpu_x0_seconds"]) + float(r["refine_seconds"]))
    assert any("after refinement" in c.text for c in o.claims)
    # the paper's table travels with the outputs (REPORT.md notes)
    assert any("3.11E-04" in n for n in o.notes)
    if exp is TABLE2:
        assert any("2.92E-02" in n for n in o.notes)
        assert all(int(r["iterations"]) >= int(r["iterations_random"]) for r in rows)


def test_tables_per_m_claim_where_the_paper_has_the_size():
    from experiments.adat.table1 import PAPER, per_m_claims

    row = {"m": 512, "x0_error": 1e-4, "refined_error": 1e-13, "iterations": 4, "gpu_x0_seconds": 0.5,
           "refine_seconds": 0.1, "total_seconds": 0.6, "cpu_seconds": 1.2, "speedup": 2.0}
    (c,) = per_m_claims([row, dict(row, m=100)], PAPER)
    assert c.paper == "3.11E-04, 3.37E-13, 4, 0.39, 0.02, 0.41, 0.20, 0.49"
    assert c.measured.startswith("1.00E-04, 1.00E-13, 4, 0.50")
