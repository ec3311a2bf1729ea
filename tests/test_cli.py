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
    assert "each reads the last" in r.stdout and "read-back" in r.stdout
    chain = ("same_target_us_per_pass", "new_target_us_per_pass", "dependent_us_per_pass",
             "chain_host_us_per_pass", "readback_us", "burst_readback_us")
    assert all(data[k] > 0 for k in chain)
    # a round trip of eight dependent passes and a read-back waits for more than one pass does
    assert data["burst_readback_us"] > data["dependent_us_per_pass"]


def test_bench_size_above_the_texture_limit_is_refused():
    r = run("gpgpu", "bench", "--passes", "10", "--size", "100000")
    assert r.returncode == 2 and "GL_MAX_TEXTURE_SIZE" in r.stderr


def _bench_must_not_run(monkeypatch):
    import gpgpu.bench

    def work(*a, **k):
        raise AssertionError("the benchmark ran before the --json path was checked")

    for name in ("pass_overhead", "plan_overhead", "recorded_overhead", "fill_limits"):
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


# ------------------------------------------------------------------ the LP command's flags: the options table
#: a reader of the options table -> the method and back end of a run that reads its options
_RUN_OF = {"solve": ("mehrotra", "numpy64"), "mehrotra": ("mehrotra", "numpy64"),
           "mehrotra/gpu": ("mehrotra", "gpu"), "mehrotra/numpy": ("mehrotra", "numpy64"),
           "matrix-free": ("matrix-free", "numpy64"), "matrix-free/gpu": ("matrix-free", "gpu"),
           "matrix-free/numpy": ("matrix-free", "numpy64")}


class _Solved(Exception):
    """Raised by the stand-in for solve: the command got as far as solving."""


def _lp_flags():
    from gpgpu.lp.__main__ import parser

    return {s: a for a in parser()._actions for s in a.option_strings}


def test_every_lp_option_is_a_flag_with_the_tables_doc_or_is_named_as_none():
    """Each option of gpgpu.lp.options.OPTIONS is a flag of python -m gpgpu.lp, --name (dashes
    for underscores) unless the table names another flag, whose help begins with the table's
    doc and whose value lands under the option's name; or it is one of NOT_FLAGS, with a reason,
    and then the table gives no way to read it from a command line."""
    from gpgpu.lp.__main__ import NOT_FLAGS
    from gpgpu.lp.options import OPTIONS

    flags = _lp_flags()
    names = {o.name for o in OPTIONS}
    assert set(NOT_FLAGS) <= names and all(len(why) > 20 for why in NOT_FLAGS.values())
    assert {o.name for o in OPTIONS if o.parse is None} == set(NOT_FLAGS)
    for o in OPTIONS:
        dashed = "--" + o.name.replace("_", "-")
        if o.name in NOT_FLAGS:
            assert dashed not in flags, o.name
            continue
        flag = o.flag or dashed
        assert flag in flags, f"{o.name}: no flag {flag}"
        action = flags[flag]
        assert action.dest == o.name and action.help.startswith(o.doc), (o.name, action.help)
    assert flags["--pcg-solution"].dest == "solution"        # the table's name for the flag of old
    assert "--solution" not in flags


def test_the_lp_flags_words_are_the_tables_and_the_back_ends():
    """A flag's choices are the words its option's table row gives (quoted in its values text,
    as the docs' options page shows them), and the words the back ends check, where they keep
    them in a constant."""
    from gpgpu.lp.backend import BACKENDS
    from gpgpu.lp.bounds import BOUNDS
    from gpgpu.lp.gpu_backend import ADATS
    from gpgpu.lp.matrix_free_gpu import SOLUTIONS
    from gpgpu.lp.numpy_backend import FACTORIZATIONS, NUMPY_ADATS
    from gpgpu.lp.options import OPTIONS
    from gpgpu.sparse import FORMATS

    flags = _lp_flags()
    table = {o.name: o for o in OPTIONS}
    for o in OPTIONS:
        if isinstance(o.parse, (tuple, dict)):
            words = o.parse if isinstance(o.parse, tuple) else sum(o.parse.values(), ())
            assert all(f'"{w}"' in o.values for w in words), o.name
            assert set(flags[o.flag or "--" + o.name.replace("_", "-")].choices) == set(words), o.name
    assert table["backend"].parse == BACKENDS and set(table["bounds"].parse) == set(BOUNDS)
    assert table["adat"].parse == {"mehrotra/gpu": ADATS, "mehrotra/numpy": NUMPY_ADATS}
    assert set(table["factorization"].parse) == set(FACTORIZATIONS) and table["solution"].parse == SOLUTIONS
    assert set(table["format"].parse) == set(FORMATS)
    for o in OPTIONS:                                         # a word per reader: each reader reads it
        if isinstance(o.parse, dict):
            assert set(o.parse) <= set(o.readers), o.name


def _one_value(option, reader):
    """Command-line words for one valid value of ``option`` read by ``reader``, and that value."""
    if option.parse is bool:
        return [], True
    if isinstance(option.parse, tuple):
        return [option.parse[-1]], option.parse[-1]
    if isinstance(option.parse, dict):
        return [option.parse[reader][-1]], option.parse[reader][-1]
    text = "0.5" if option.name == "eps" else "3"
    return [text], option.parse(text)


def _solve_spy(monkeypatch):
    import gpgpu.lp.__main__ as command

    calls = []

    def solve(problem, **kw):
        calls.append(kw)
        raise _Solved

    monkeypatch.setattr(command, "solve", solve)
    return command.main, calls


def test_each_lp_flag_reaches_solve_under_its_options_name(monkeypatch, capsys):
    """Every flag of the table, given to a run whose method and back end read its option,
    hands solve the value parsed (the last word, True, or the text read by the table's parse)
    under the option's name; the flags not given are left out (the preset's, solve's own)."""
    from gpgpu.lp.__main__ import flag_options

    main, calls = _solve_spy(monkeypatch)
    for o in flag_options():
        reader = next((r for r in o.readers if r != "solve"), "solve")
        method, backend = _RUN_OF[reader]
        words, value = _one_value(o, reader)
        extra = ["--regularize"] if o.name in ("reg_min", "reg_max") and method == "mehrotra" else []
        argv = ["afiro", "--method", method, "--quiet", *extra, o.cli_flag, *words]
        if o.name != "backend":
            argv += ["--backend", backend]
        with pytest.raises(_Solved):
            main(argv)
        kw = calls[-1]
        assert kw[o.name] == value and type(kw[o.name]) is type(value), (o.name, kw)
        given = {o.name, "backend", "max_iter", "eps", "method", "preset", "callback"} | ({"regularize"} if extra else set())
        assert set(kw) == given, (o.name, sorted(kw))
    err = capsys.readouterr().err
    assert "error" not in err, err


def test_a_flag_its_run_does_not_read_is_refused_by_the_tables_readers(monkeypatch, capsys):
    """A flag given to a method or back end that does not read its option (by the table's
    readers) is one error line naming the flag and where it is read; solve is not called."""
    from gpgpu.lp.__main__ import flag_options

    main, calls = _solve_spy(monkeypatch)
    runs = {("mehrotra", "gpu"), ("mehrotra", "numpy64"), ("matrix-free", "gpu"), ("matrix-free", "numpy64")}
    refused = 0
    for o in flag_options():
        for method, backend in sorted(runs):
            side = "gpu" if backend == "gpu" else "numpy"
            if {"solve", method, f"{method}/{side}"} & set(o.readers) or o.name == "backend":
                continue
            reader = next(r for r in o.readers if r != "solve")
            words, _ = _one_value(o, reader)
            assert main(["afiro", "--method", method, "--backend", backend, o.cli_flag, *words, "--quiet"]) == 2
            err = capsys.readouterr().err
            assert f"error: {o.cli_flag} is an option of " in err, (o.name, method, backend, err)
            refused += 1
    assert refused > 40 and not calls


def test_a_new_option_of_the_table_is_a_flag_with_no_other_edit(monkeypatch):
    """An option added to the table is a flag of the command: its words as choices, its doc as
    help, refused where its reader is not the run's."""
    import gpgpu.lp.__main__ as command
    from gpgpu.lp.options import Option

    new = (Option("splines", ("mehrotra/gpu",), '"cubic" or "linear"', "a made-up option", ("cubic", "linear")),
           Option("knots", ("matrix-free",), "a positive integer", "another made-up option",
                  command.OPTIONS[2].parse))             # max_iter's: a positive integer
    monkeypatch.setattr(command, "OPTIONS", command.OPTIONS + new)
    flags = _lp_flags()
    assert flags["--splines"].choices == ("cubic", "linear") and flags["--splines"].help.startswith("a made-up")
    assert flags["--knots"].type(" 7") == 7
    main, calls = _solve_spy(monkeypatch)
    with pytest.raises(_Solved):
        main(["afiro", "--splines", "linear", "--quiet"])
    assert calls[-1]["splines"] == "linear"
    assert main(["afiro", "--knots", "4", "--quiet"]) == 2
    with pytest.raises(SystemExit):
        main(["afiro", "--splines", "quintic"])


@pytest.mark.parametrize("args, match", [(["--dense", "0"], "positive integer or off"),
                                         (["--threads", "two"], "positive integer"),
                                         (["--pivot-tol", "-1"], "positive finite"),
                                         (["--update", "columns"], "invalid choice")])
def test_the_lp_flags_parse_their_values_as_the_table_says(args, match, capsys):
    from gpgpu.lp.__main__ import main

    with pytest.raises(SystemExit) as e:
        main(["afiro", *args])
    assert e.value.code == 2 and match in capsys.readouterr().err
