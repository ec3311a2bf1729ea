"""The command lines: bad arguments are argparse errors (exit 2, a usage line), never tracebacks."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.parametrize("args", [["--passes", "0"], ["--size", "0"], ["--repeat", "0"],
                                  ["--passes", "-4"], ["--size", "abc"]])
def test_bench_rejects_non_positive_arguments(args):
    r = run("gpgpu", "bench", *args)
    assert r.returncode == 2, r.stderr
    assert "usage:" in r.stderr and "positive integer" in r.stderr
    assert "Traceback" not in r.stderr


def test_bench_prints_the_fill_limit_and_writes_json(tmp_path):
    out = tmp_path / "bench.json"
    r = run("gpgpu", "bench", "--passes", "200", "--size", "64", "--repeat", "2", "--json", str(out))
    assert r.returncode == 0, r.stderr
    assert "host time per pass" in r.stdout and "fill limit" in r.stdout
    assert "R32F" in r.stdout and "RGBA32F" in r.stdout
    data = json.loads(out.read_text())
    limits = data["fill_limit"]
    assert set(limits) == {f"{f}_reads{k}" for f in ("R32F", "RGBA32F") for k in range(4)}
    assert all(v > 0 for v in limits.values())


def test_bench_size_above_the_texture_limit_is_refused():
    r = run("gpgpu", "bench", "--passes", "10", "--size", "100000")
    assert r.returncode == 2 and "GL_MAX_TEXTURE_SIZE" in r.stderr


def _bench_must_not_run(monkeypatch):
    import gpgpu.bench

    def work(*a, **k):
        raise AssertionError("the benchmark ran before the --json path was checked")

    for name in ("pass_overhead", "plan_overhead", "fill_limits"):
        monkeypatch.setattr(gpgpu.bench, name, work)


@pytest.mark.parametrize("where, message", [
    ("/proc/x", "cannot write the file"),
    ("folder", "is a folder; give a file name"),
    ("missing/x.json", "does not exist; create it or give another file"),
])
def test_bench_json_unwritable_is_refused_before_the_benchmark(where, message, tmp_path, monkeypatch, capsys):
    from gpgpu.__main__ import main

    if where == "/proc/x" and not os.path.isdir("/proc/self"):
        pytest.skip("needs Linux's /proc")
    (tmp_path / "folder").mkdir()
    path = where if where.startswith("/") else str(tmp_path / where)
    _bench_must_not_run(monkeypatch)
    with pytest.raises(SystemExit) as e:
        main(["bench", "--passes", "10", "--size", "8", "--repeat", "1", "--json", path])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "usage: python -m gpgpu bench" in err and message in err
    assert not Path(tmp_path / "missing").exists()


def test_bench_json_check_leaves_no_file_and_keeps_an_existing_one(tmp_path):
    from gpgpu.cli import output_file_problem

    new = tmp_path / "new.json"
    assert output_file_problem(new) is None and not new.exists()
    old = tmp_path / "old.json"
    old.write_text("{}")
    assert output_file_problem(old) is None and old.read_text() == "{}"


@pytest.mark.parametrize("sizes", ["0", "-5", "16,0", ",", "x"])
def test_experiment_rejects_bad_sizes(sizes, tmp_path):
    r = run("experiments.fig8", "--sizes", sizes, "--out", str(tmp_path))
    assert r.returncode == 2, r.stderr
    assert "usage:" in r.stderr and "Traceback" not in r.stderr


def test_experiment_rejects_a_bad_repeat(tmp_path):
    r = run("experiments.fig8", "--repeat", "0", "--out", str(tmp_path))
    assert r.returncode == 2 and "positive integer" in r.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_experiment_rejects_an_unwritable_out(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        r = run("experiments.fig8", "--sizes", "8", "--out", str(locked / "sub"))
        assert r.returncode == 2 and "cannot create the output folder" in r.stderr
    finally:
        locked.chmod(0o700)


def test_experiment_rejects_an_out_that_is_a_file(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    r = run("experiments.fig8", "--sizes", "8", "--out", str(f))
    assert r.returncode == 2 and "output folder" in r.stderr and "Traceback" not in r.stderr


def test_experiments_with_an_unknown_name():
    r = run("experiments", "fig99")
    assert r.returncode == 2
    assert "unknown experiment 'fig99'" in r.stderr
    assert "fig8" in r.stdout                        # the list of what exists


def test_experiments_all_rejects_unknown_names_and_bad_sizes(tmp_path):
    r = run("experiments", "all", "--only", "fig8,nope", "--out", str(tmp_path))
    assert r.returncode == 2 and "unknown experiments ['nope']" in r.stderr
    r = run("experiments", "all", "--sizes", "0", "--out", str(tmp_path))
    assert r.returncode == 2 and "positive integer" in r.stderr


def test_lp_module_with_its_default_gpu_backend():
    try:
        from gpgpu.lp.netlib import netlib_path

        path = netlib_path("afiro")
    except FileNotFoundError as e:
        pytest.skip(str(e))
    r = run("gpgpu.lp", str(path), "--eps", "1e-6", "--quiet")
    assert r.returncode == 0, r.stderr
    assert "backend gpu, cholesky outer, refine True, eps 1e-06" in r.stdout
    assert "status: optimal" in r.stdout
    objective = float(next(ln for ln in r.stdout.splitlines() if ln.startswith("objective:")).split()[1])
    assert objective == pytest.approx(-464.7531428571, rel=1e-6)
    r = run("gpgpu.lp", str(path), "--no-refine", "--quiet")    # Table 3's eps for afiro, 4e-5
    assert r.returncode == 0 and "refine False, eps 4e-05" in r.stdout


@pytest.mark.parametrize("args, match", [(["--eps", "0"], "0 < eps < 1"), (["--eps", "inf"], "0 < eps < 1"),
                                         (["--max-iter", "0"], "positive integer")])
def test_lp_module_rejects_bad_options(args, match):
    r = run("gpgpu.lp", "afiro", *args)
    assert r.returncode == 2 and match in r.stderr and "Traceback" not in r.stderr
