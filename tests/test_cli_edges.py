"""The command lines at their edges: ``python -m gpgpu.lp`` given a folder or an empty name,
an MPS number Python reads but an MPS reader does not, ``python -m gpgpu bench --json`` on a
full disk, and ``tools/versions.py`` where an extra is not installed."""
import importlib.util
import os
from pathlib import Path

import pytest

from gpgpu.lp import read_mps
from gpgpu.lp.__main__ import main as lp_main

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------ gpgpu.lp's FILE
@pytest.mark.parametrize("name, message", [(None, "is a folder, not an MPS file"), ("", "FILE is an empty name"),
                                           (" ", "FILE is an empty name")])
def test_lp_a_folder_or_an_empty_name_is_one_error_line(name, message, tmp_path, capsys, monkeypatch):
    """A folder (an empty name meant the current folder) was an IsADirectoryError traceback."""
    monkeypatch.chdir(tmp_path)
    arg = str(tmp_path) if name is None else name
    assert lp_main([arg, "--backend", "numpy64", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err
    assert "give an MPS file (.mps or .mps.gz) or the name of a shipped NETLIB problem" in err


def test_lp_a_device_is_not_a_file_that_was_not_found(capsys):
    """/dev/null exists: "MPS file not found" sent the user looking for a missing file."""
    assert lp_main(["/dev/null", "--backend", "numpy64", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err == "error: /dev/null is not a regular file (a device or a pipe): pass the path of a .mps or " \
                  ".mps.gz file\n"


def test_lp_output_read_by_a_reader_that_stops_early_ends_quietly():
    """``python -m gpgpu.lp afiro | head -1`` ended in a BrokenPipeError traceback."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "gpgpu.lp", "afiro", "--backend", "numpy64"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()                      # the reader is gone before the first line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141 and "Traceback" not in err and "BrokenPipe" not in err


# ------------------------------------------------------------------ MPS numbers
MPS = """NAME          NUM
ROWS
 N  COST
 L  C1
COLUMNS
    X         COST            -1.0   C1             {col}
    Y         COST            -1.0   C1             1.0
RHS
    RHS       C1              4.0
ENDATA
"""


@pytest.mark.parametrize("token", ["1_0", "1_000.5", "\uff11", "1e1_0"])
def test_an_mps_number_python_reads_but_mps_does_not_is_refused(token, tmp_path, capsys):
    """Python's float() takes 1_0 (as 10) and non-ASCII digits (a fullwidth 1); an MPS number
    is ASCII digits, sign, point and exponent: refused with the line and the token."""
    f = tmp_path / "num.mps"
    f.write_text(MPS.format(col=token), encoding="utf-8")
    with pytest.raises(ValueError) as info:
        read_mps(f)
    msg = str(info.value)
    assert "num.mps" in msg and "line 6 (COLUMNS section)" in msg and f"{token!r} is not a number" in msg
    assert lp_main([str(f), "--backend", "numpy64", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "line 6 (COLUMNS section)" in err and repr(token) in err and err.count("\n") == 1


def test_the_mps_numbers_of_every_form_read(tmp_path):
    """Signs, a point at either end, exponents: each is read as the number it is (the standard
    form's row: the coefficient, Y's 1 and the slack's 1)."""
    for token, value in (("+.5e1", 5.0), ("1.", 1.0), ("-2E-0", -2.0), ("3", 3.0), ("-.25", -0.25)):
        f = tmp_path / "num.mps"
        f.write_text(MPS.format(col=token))
        assert read_mps(f).dense_A().tolist() == [[value, 1.0, 1.0]]


# ------------------------------------------------------------------ bench --json on a full disk
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs Linux's /dev/full")
def test_bench_json_on_a_full_disk_is_one_error_line(monkeypatch, capsys):
    """/dev/full passes the check before the benchmark (it can be opened for writing) and
    fails the write: one line naming the file and the cause, exit status 2."""
    import gpgpu.bench
    from gpgpu.__main__ import main

    monkeypatch.setattr(gpgpu.bench, "pass_overhead", lambda passes: {
        "passes": passes, "host_us_per_pass": 1.0, "host_us_per_pass_new_primitive": 1.0, "total_us_per_pass": 1.0})
    monkeypatch.setattr(gpgpu.bench, "plan_overhead", lambda: {
        "order": 2, "plan_passes": 1, "plan_host_us_per_pass": 1.0, "plan_total_us_per_pass": 1.0,
        "plan_python_us_per_pass": 1.0})
    monkeypatch.setattr(gpgpu.bench, "recorded_overhead", lambda: {
        "recorded_passes": 8, "recorded_host_us_per_pass": 1.0, "recorded_python_us_per_pass": 1.0})
    monkeypatch.setattr(gpgpu.bench, "fill_limits", lambda size, repeat: {(c, k): 1e9 for c in (1, 4)
                                                                          for k in range(4)})
    assert main(["bench", "--passes", "1", "--size", "8", "--repeat", "1", "--json", "/dev/full"]) == 2
    err = capsys.readouterr().err
    assert err == ("error: --json '/dev/full': cannot write the file (No space left on device); free some "
                   "space or give a path on another disk\n")


# ------------------------------------------------------------------ tools/versions.py
def _versions():
    spec = importlib.util.spec_from_file_location("versions_under_test", ROOT / "tools" / "versions.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_versions_leaves_out_the_packages_of_an_extra_not_installed(monkeypatch, capsys):
    """The docs extra not installed: its packages (and theirs, which nothing installed needs)
    are one line, not differences; a package something installed needs, missing, and a new
    release are differences."""
    v = _versions()
    pins = {"numpy": "2.4.6", "mkdocs": "1.6.1", "babel": "2.18.0", "pyyaml_env_tag": "1.1", "pytest": "9.2.0",
            "pluggy": "1.7.0", "iniconfig": "2.3.1"}
    have = {"numpy": "2.5.0", "pytest": "9.2.0", "iniconfig": "2.3.1"}
    monkeypatch.setattr(v, "recorded", lambda: dict(pins))
    monkeypatch.setattr(v, "installed", lambda name: have.get(name))
    monkeypatch.setattr(v, "extras", lambda: {"test": ["pytest"], "docs": ["mkdocs", "mkdocs-material"]},
                        raising=False)
    monkeypatch.setattr(v, "install_requires", lambda: ["numpy"], raising=False)
    monkeypatch.setattr(v, "required_names", lambda: {"pluggy", "iniconfig"}, raising=False)    # pytest's
    assert v.compare() == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("4 pinned packages, 2 differ from constraints.txt")
    assert out[1] == ("  extra docs not installed: 3 pinned packages that nothing installed needs left out "
                      "(babel, mkdocs, pyyaml_env_tag)")
    assert out[2:] == ["  numpy: recorded 2.4.6, installed 2.5.0", "  pluggy: recorded 1.7.0, installed none"]


def test_versions_with_every_extra_installed_reports_a_missing_package(monkeypatch, capsys):
    """With no extra left out, a pinned package that is not installed is a difference."""
    v = _versions()
    monkeypatch.setattr(v, "recorded", lambda: {"numpy": "2.4.6", "babel": "2.18.0"})
    monkeypatch.setattr(v, "installed", lambda name: {"numpy": "2.4.6", "mkdocs": "1.6.1"}.get(name))
    monkeypatch.setattr(v, "extras", lambda: {"docs": ["mkdocs"]})
    monkeypatch.setattr(v, "install_requires", lambda: ["numpy"])
    monkeypatch.setattr(v, "required_names", lambda: set())
    v.compare()
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("2 pinned packages, 1 differ from constraints.txt")
    assert out[1:] == ["  babel: recorded 2.18.0, installed none"]


def test_versions_reads_the_extras_and_requirements_of_setup_cfg():
    v = _versions()
    extras = v.extras()
    assert {"test", "docs", "window"} <= set(extras) and extras["docs"][0] == "mkdocs"
    assert "mkdocstrings" in extras["docs"] and "numpy" in v.install_requires()
