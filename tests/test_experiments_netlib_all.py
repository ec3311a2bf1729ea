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


@pytest.mark.parametrize("jobs", ["0", "-1"])
def test_jobs_below_one_are_refused(jobs):
    with pytest.raises(SystemExit, match="--jobs must be 1 or more"):
        netlib_all.main(["--source", "gpgpu/data/netlib", "--jobs", jobs])
