"""The experiments of paper 000 Figs. 6, 7, 9 and 10 at tiny sizes (fig8 is in test_experiments.py).

No timing assertions: only that each writes its CSV (one row per (size, algorithm), positive
times), its PNG and its claims, and that the counted fragments and bytes follow Tables 1-2.
"""
import csv

import pytest

from experiments.__main__ import load
from experiments.fig6 import EXPERIMENT as FIG6
from experiments.fig7 import EXPERIMENT as FIG7
from experiments.fig9 import EXPERIMENT as FIG9
from experiments.fig10 import EXPERIMENT as FIG10

PNG = b"\x89PNG\r\n\x1a\n"
SIZES = [16, 32]


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def execute(exp, tmp_path):
    o = exp.execute(sizes=SIZES, repeat=1, out=tmp_path, quiet=True)
    assert o.csv == tmp_path / f"{exp.name}.csv" and o.csv.exists()
    assert (tmp_path / f"{exp.name}.png").read_bytes()[:8] == PNG
    assert o.claims and all(c.text and c.paper and c.measured for c in o.claims)
    rows = read_csv(o.csv)
    assert all(float(r["seconds"]) > 0 for r in rows)
    return o, rows


def keys(rows, size="n"):
    return sorted((int(r[size]), r["algorithm"]) for r in rows)


def square(n):
    return (n - 1) * n * (2 * n - 1) // 6


@pytest.mark.parametrize("name, exp", [("fig6", FIG6), ("fig7", FIG7), ("fig9", FIG9), ("fig10", FIG10)])
def test_registry_names_the_module(name, exp):
    assert load(name) is exp and exp.module_name() == name


@pytest.mark.parametrize("exp, transfer", [(FIG6, "ctt"), (FIG7, "rtt")])
def test_fig6_fig7_rows_and_table_2(exp, transfer, tmp_path):
    o, rows = execute(exp, tmp_path)
    algorithms = ("cholesky_inner", "cholesky_outer_square", "lu")
    assert keys(rows) == sorted((n, a) for n in SIZES for a in algorithms)
    for r in rows:
        n = int(r["n"])
        assert r["transfer"] == transfer
        want = (n - 1) * n // 2 if r["algorithm"] == "cholesky_inner" else square(n)
        assert int(r["update_fragments"]) == want == int(r["table2_update"])
    assert any("Table 2" in c.text and "equal at every size" in c.measured for c in o.claims)
    assert any("outer (square update) / inner" in c.text for c in o.claims)
    if transfer == "ctt":
        # with copy to texture the outer form copies sum (n-1-k)² texels more (section 6.1.1)
        for n in SIZES:
            ctt = {r["algorithm"]: int(r["ctt_fragments"]) for r in rows if int(r["n"]) == n}
            assert ctt["cholesky_outer_square"] - ctt["cholesky_inner"] == square(n)
    else:
        assert "ctt_fragments" not in rows[0]


def test_fig9_bandwidth_and_table_1(tmp_path):
    o, rows = execute(FIG9, tmp_path)
    assert keys(rows) == sorted((n, a) for n in SIZES for a in ("cholesky", "lu"))
    for r in rows:
        n, counted = int(r["n"]), int(r["bytes"]) - int(r["input_copy_bytes"])
        assert int(r["input_copy_bytes"]) == 8 * n * n
        assert float(r["GB/s"]) == pytest.approx(int(r["bytes"]) / float(r["seconds"]) / 1e9, rel=1e-3)
        if r["algorithm"] == "cholesky":  # Table 1(d): 8n + 8(n-1) + 10(n-1)n + 16(n-1)n(n+1)/6
            assert counted == int(r["table1_bytes"]) == (8 * n + 8 * (n - 1) + 10 * (n - 1) * n
                                                         + 16 * (n - 1) * n * (n + 1) // 6)
        else:  # Table 1(a) counts n(n+1)/2 normalization and copyback fragments, we shade (n-1)n/2
            assert int(r["table1_bytes"]) == 14 * n * (n + 1) + 16 * square(n)
            assert counted == int(r["table1_bytes"]) - 20 * n
    texts = [c.text for c in o.claims]
    assert any("smallest n" in t for t in texts) and any("largest n" in t for t in texts)


def test_fig10_forming_and_factoring_fragments(tmp_path):
    o, rows = execute(FIG10, tmp_path)
    algorithms = ("form_square", "form_triangle", "factor_square", "factor_triangle")
    assert keys(rows, "m") == sorted((m, a) for m in SIZES for a in algorithms)
    for r in rows:
        m, n = int(r["m"]), int(r["n"])
        assert n == 2 * m
        want = {"form_square": n * m * m, "form_triangle": n * m * (m + 1) // 2,
                "factor_square": square(m), "factor_triangle": (m - 1) * m * (m + 1) // 6}[r["algorithm"]]
        assert int(r["update_fragments"]) == want == int(r["formula"])
    assert any("equal the formulas" in c.text and "equal at every size" in c.measured for c in o.claims)
    assert any("square domains" in c.text for c in o.claims)
    assert FIG10.size_name == "m"
