"""experiments.netlib_all: problems run at once with --jobs, each row saying so."""
import csv

import pytest

from experiments import netlib_all


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_jobs_run_problems_at_once_and_each_row_says_so(tmp_path, jobs):
    """Two shipped problems, one at a time and two at once: a row each (with two jobs written
    as they end, so in either order), both right against HiGHS, each with its jobs."""
    out = tmp_path / "all.csv"
    netlib_all.main(["--source", "gpgpu/data/netlib", "--problems", "afiro,sc50b", "--methods", "mehrotra",
                     "--backends", "numpy64", "--jobs", jobs, "--timeout", "120", "--out", str(out)])
    rows = list(csv.DictReader(open(out)))
    assert sorted(r["problem"] for r in rows) == ["afiro", "sc50b"]
    assert all(r["jobs"] == jobs and r["right"] == "True" and r["status"] == "optimal" for r in rows)
    assert {r["problem"]: round(float(r["objective"]), 4) for r in rows} == {"afiro": -464.7531, "sc50b": -70.0}
    assert all(r["precision_raised_at"] == r["precision_raised_by"] == "" for r in rows)   # float64: no raise


def test_a_row_says_where_the_precision_first_rose():
    """first_raise: the first entry with ``factor_precision`` (not a later one), its iteration and
    why; ("", "") without one; make_row carries both into the row."""
    history = [{"iteration": 0}, {"iteration": 1},
               {"iteration": 2, "factor_precision": "float-float", "precision_raised_by": "the factor replaced 9"},
               {"iteration": 3, "factor_precision": "float-float (substitutions)", "precision_raised_by": "stall"}]
    assert netlib_all.first_raise(history) == (2, "the factor replaced 9")
    assert netlib_all.first_raise(history[:2]) == ("", "") and netlib_all.first_raise(None) == ("", "")
    ref = {"rows": 1, "columns": 2, "nonzeros": 2, "highs_objective": 1.0, "objective_constant": 0.0,
           "highs_seconds": 0.1}
    row = netlib_all.make_row("p", ref, "mehrotra", "gpu", 1e-8,
                              {"status": "optimal", "objective": 1.0, "precision_raised_at": 2,
                               "precision_raised_by": "the factor replaced 9"}, "r", "d")
    assert row["precision_raised_at"] == 2 and row["precision_raised_by"] == "the factor replaced 9"
    assert set(row) | {"jobs"} == set(netlib_all.FIELDS)


@pytest.mark.parametrize("jobs", ["0", "-1"])
def test_jobs_below_one_are_refused(jobs):
    with pytest.raises(SystemExit, match="--jobs must be 1 or more"):
        netlib_all.main(["--source", "gpgpu/data/netlib", "--jobs", jobs])
