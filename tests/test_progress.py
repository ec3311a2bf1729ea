"""What the commands show while they work, and what they must not show: progress bars on
stderr (only on a terminal, or when asked), the LP command's status lines before its first
row, no HiGHS banner anywhere, whole --help texts, every experiment listed, and timings that
start after a warm-up run (the mechanism, never a time)."""
import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BANNER = ("Running HiGHS", "Copyright")


def run(args, timeout=300, **kw):
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout, **kw)


def _afiro():
    from gpgpu.lp.netlib import netlib_path

    try:
        return netlib_path("afiro")
    except FileNotFoundError as e:
        pytest.skip(str(e))


# ------------------------------------------------------------------ HiGHS's banner
def test_lp_command_never_shows_the_highs_banner():
    """HiGHS 1.16 prints its copyright banner when the first Highs() of a process is built, before
    any option can turn it off. Reading the file (HiGHS's MPS reader) and the presolve
    (eps 1e-8 turns it on) each build one; neither may reach the terminal."""
    _afiro()
    r = run(["-m", "gpgpu.lp", "afiro", "--backend", "numpy64", "--eps", "1e-8"])
    assert r.returncode == 0, r.stderr
    assert "presolve (HiGHS)" in r.stdout                 # the presolve ran (our own words name HiGHS)
    for word in BANNER:
        assert word not in r.stdout + r.stderr


def test_lp_command_error_runs_show_no_banner(tmp_path):
    """An LP file HiGHS cannot read is an error (exit 2), with HiGHS's reason, without its banner."""
    bad = tmp_path / "bad.mps"
    bad.write_text("NAME bad\nROWS\n N obj\n L c1\nCOLUMNS\n x obj 1 c1 1\nRHS\n rhs c1 1\n"
                   "BOUNDS\n XX bnd x 1\nENDATA\n")
    r = run(["-m", "gpgpu.lp", str(bad), "--backend", "numpy64"])
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "error: malformed MPS file" in r.stderr and '"XX"' in r.stderr     # HiGHS's reason
    for word in BANNER:
        assert word not in r.stdout + r.stderr


@pytest.mark.parametrize("module", ["experiments.table3", "experiments.mfipm.common"])
def test_the_experiments_highs_references_show_no_banner(module):
    """The experiments' HiGHS reference solves (a fresh process each: the banner comes once a
    process) print nothing."""
    path = _afiro()
    code = ("import sys\n"
            f"import {module} as m\n"
            "from gpgpu.lp import read_mps\n"
            f"p = {str(path)!r}\n"
            + ("print(m.highs_objective(p)[0])\n" if module.endswith("table3")
               else "print(m.highs_objective(read_mps(p))[0])\n"))
    r = run(["-c", code])
    assert r.returncode == 0, r.stderr
    assert float(r.stdout.split()[-1]) == pytest.approx(-464.7531428571, rel=1e-6)
    for word in BANNER:
        assert word not in r.stdout + r.stderr


def test_every_highs_is_built_by_the_quiet_constructor():
    """No module of the package or the experiments builds highspy.Highs() itself: each goes
    through gpgpu.lp.mps.quiet_highs, which keeps the banner off the terminal."""
    offenders = []
    for folder in ("gpgpu", "experiments"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr == "Highs"):
                    inside = path.name == "mps.py" and path.parent.name == "lp"
                    if not inside:
                        offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


def test_quiet_highs_keeps_the_banner_off_file_descriptor_1():
    """The banner is C code writing to file descriptor 1 (not sys.stdout): a fresh process's
    first quiet_highs() leaves fd 1 without it, and fd 1 works again afterwards; output_flag
    is off."""
    code = ("from gpgpu.lp.mps import quiet_highs\n"
            "h = quiet_highs()\n"
            "v = h.getOptionValue('output_flag')\n"            # (status, value) in highspy 1.16
            "print('after', v[1] if isinstance(v, tuple) else v, flush=True)\n")
    r = run(["-c", code])
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "after False"
    assert "HiGHS" not in r.stderr


# ------------------------------------------------------------------ the LP command
def _help_words(text):
    return "".join(text.split())


def test_lp_help_is_whole():
    """--help gives the module's description whole (it was cut after its first line, mid
    sentence) and every option's help in full."""
    from gpgpu.lp.__main__ import parser

    r = run(["-m", "gpgpu.lp", "--help"])
    assert r.returncode == 0, r.stderr
    out = _help_words(r.stdout)
    assert _help_words("and shows its progress") in out
    assert _help_words("the name of a shipped NETLIB problem") in out
    ap = parser()
    helps = [a.help for a in ap._actions if a.help and a.help != "==SUPPRESS=="]
    assert len(helps) > 25
    for text in helps:
        assert _help_words(text % {"default": "", "prog": ap.prog}) in out, text


def test_lp_command_says_what_it_does_before_its_first_row():
    """Status lines on stderr (the table stays on stdout): reading the file, the presolve, the
    back end being built, each before the first iteration; --quiet keeps them off."""
    _afiro()
    r = run(["-m", "gpgpu.lp", "afiro", "--backend", "numpy64", "--eps", "1e-8"])
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    reading = next(i for i, ln in enumerate(lines) if ln.startswith("reading ") and "afiro" in ln)
    presolve = next(i for i, ln in enumerate(lines) if ln.startswith("presolve"))
    build = next(i for i, ln in enumerate(lines) if ln.startswith("building the numpy64 back end"))
    assert reading < presolve < build
    assert not any(ln.startswith(" it ") or ln.startswith("  1 ") for ln in lines)   # the table is not here
    assert "  1 " in r.stdout
    r = run(["-m", "gpgpu.lp", "afiro", "--backend", "numpy64", "--quiet"])
    assert r.returncode == 0 and r.stderr == ""


def test_lp_command_puts_the_library_back_as_it_was(capsys):
    """The status lines watch solve() by wrapping the functions it calls for each step; after
    the command (an error included) they are the library's own again."""
    from gpgpu.lp import api as lp, matrix_free, presolve
    from gpgpu.lp.__main__ import main

    _afiro()
    before = (lp.get_backend, lp._check_backend_options, matrix_free.get_matrix_free_backend,
              presolve.presolve_and_solve)
    assert main(["afiro", "--backend", "numpy64", "--eps", "1e-8", "--max-iter", "2"]) == 1
    assert main(["afiro", "--backend", "numpy64", "--method", "matrix-free", "--max-iter", "1"]) == 1
    assert main(["afiro", "--backend", "numpy64", "--eps", "1e-8", "--regularize", "--reg-min", "1e-3",
                 "--reg-max", "1e-6"]) == 2                       # refused inside solve, after the presolve
    after = (lp.get_backend, lp._check_backend_options, matrix_free.get_matrix_free_backend,
             presolve.presolve_and_solve)
    assert after == before
    err = capsys.readouterr().err
    assert "presolve (HiGHS's)" in err and "building the numpy64 back end" in err


# ------------------------------------------------------------------ the experiments' list
def _modules_with_an_entry_point():
    """Dotted names of the modules under experiments/ that define EXPERIMENT or main()."""
    out = []
    for path in sorted((ROOT / "experiments").rglob("*.py")):
        rel = path.relative_to(ROOT / "experiments").with_suffix("")
        if rel.name.startswith("_"):
            continue
        tree = ast.parse(path.read_text())
        names = {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
        names |= {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        if "EXPERIMENT" in names or "main" in names:
            out.append(".".join(rel.parts))
    return out


def test_listing_names_every_module_that_runs(capsys):
    """``python -m experiments`` lists every module with EXPERIMENT or main(), the tools
    mfipm.emulate32 and mfipm.chunks included, and runs each by that name."""
    from experiments.__main__ import main

    modules = _modules_with_an_entry_point()
    assert {"fig8", "mfipm.emulate32", "mfipm.chunks"} <= set(modules)
    assert main([]) == 0
    listed = {ln.split()[0] for ln in capsys.readouterr().out.splitlines() if ln.startswith("  ")}
    assert set(modules) <= listed
    with pytest.raises(SystemExit) as e:
        main(["mfipm.chunks", "--help"])
    assert e.value.code == 0 and "usage: python -m experiments.mfipm.chunks" in capsys.readouterr().out


# ------------------------------------------------------------------ warm-up before timing
class _Clock:
    """Stands for the ``time`` module of the harness: logs each clock read by ``timed``."""

    def __init__(self, log):
        self.log = log

    def perf_counter(self):
        import time

        if sys._getframe(1).f_code.co_name == "timed":
            self.log.append(("clock",))
        return time.perf_counter()

    def __getattr__(self, name):
        import time

        return getattr(time, name)


def _timed_calls(log):
    """(key, timed?) of each call, a clock read opening and the next closing a timed region."""
    open_, out = False, []
    for event in log:
        if event[0] == "clock":
            open_ = not open_
        else:
            out.append((event[1], open_))
    return out


def test_timed_runs_the_function_once_untimed_first(monkeypatch):
    """harness.timed: one warm-up call (its cleanup too) before the repeats, each of those
    between two clock reads; the median of the repeats."""
    import experiments.harness as H

    log = []
    monkeypatch.setattr(H, "time", _Clock(log))
    monkeypatch.setattr(H, "finish", lambda: None)
    cleaned = []
    H.timed(lambda: log.append(("call", "f")) or "out", 3, cleanup=cleaned.append)
    assert _timed_calls(log) == [("f", False), ("f", True), ("f", True), ("f", True)]
    assert cleaned == ["out"] * 4


def test_fig8_warms_each_variant_up_at_each_size_before_timing_it(monkeypatch, tmp_path):
    """Fig. 8 at n = 8, 16 on this renderer: the first call of every variant at every size is
    untimed (it compiles the shaders and allocates the textures), then the timed repeats; the
    first variant timed is not charged for compiling the kernels."""
    import experiments.fig8 as F
    import experiments.harness as H

    log = []
    monkeypatch.setattr(H, "time", _Clock(log))
    chol, lu = F.cholesky_gpu, F.lu_gpu

    def cholesky_spy(S, n, **v):
        log.append(("call", (n, v["index"])))
        return chol(S, n, **v)

    def lu_spy(G, *a, **k):
        log.append(("call", (G.shape[0], "lu")))
        return lu(G, *a, **k)

    monkeypatch.setattr(F, "cholesky_gpu", cholesky_spy)
    monkeypatch.setattr(F, "lu_gpu", lu_spy)
    F.EXPERIMENT.execute(sizes=[8, 16], repeat=2, out=tmp_path, quiet=True)
    calls = _timed_calls(log)
    keys = list(dict.fromkeys(k for k, _ in calls))
    assert len(keys) == 2 * 4
    for key in keys:
        mine = [t for k, t in calls if k == key]
        assert mine[0] is False, f"{key}: timed before any untimed run"
        assert sum(mine) == 2                      # the repeats; the counted run is untimed too


def test_cg_median_time_warms_up_too(monkeypatch):
    """The sparse experiments' median_time and cpu_time: one untimed call before the timed ones."""
    import experiments.cg.common as C

    for helper in ("median_time", "cpu_time"):
        log = []

        class Clock(_Clock):
            def perf_counter(self):
                import time

                if sys._getframe(1).f_code.co_name == helper:
                    self.log.append(("clock",))
                return time.perf_counter()

        monkeypatch.setattr(C, "time", Clock(log))
        monkeypatch.setattr(C, "finish", lambda: None)
        getattr(C, helper)(lambda: log.append(("call", helper)), 3)
        calls = _timed_calls(log)
        assert calls[0] == (helper, False) and all(t for _, t in calls[1:]) and len(calls) >= 4


def test_timing_experiments_repeat_three_times_by_default():
    """A figure from the first run is a median: every experiment that times kernels repeats
    at least three times on either renderer unless told otherwise (--repeat 1 for a quick look)."""
    from experiments.__main__ import REGISTRY, load

    # whole LP or CG solves of seconds to minutes each, timed once after their warm-up
    once = {"table3", "netlib", "cg.rbf_surface", "mfipm.table1", "mfipm.table2", "mfipm.table3"}
    for name in REGISTRY:
        if name in once:
            continue
        exp = load(name)
        assert exp.repeat_software >= 3 and exp.repeat_gpu >= 2, name


# ------------------------------------------------------------------ the software renderer's caption
def test_a_software_renderer_says_what_its_figure_shows(tmp_path, capsys, monkeypatch):
    """On a software renderer the figure's title, the printed claims and the claims file say
    that it checks the algorithm and the counts, not the papers' GPU time ratios; on a GPU
    they do not."""
    import json

    import matplotlib.figure

    from experiments.fig8 import EXPERIMENT
    from experiments.harness import SOFTWARE_NOTE, is_software

    titles = []
    save = matplotlib.figure.Figure.savefig

    def savefig(fig, *a, **k):
        titles.append(fig._suptitle.get_text() if fig._suptitle is not None else "")
        return save(fig, *a, **k)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", savefig)
    o = EXPERIMENT.execute(sizes=[8], repeat=1, out=tmp_path)
    out = capsys.readouterr().out
    notes = json.loads((tmp_path / "fig8.claims.json").read_text())["notes"]
    assert "the papers' time ratios are about GPUs" in SOFTWARE_NOTE and "pass" in SOFTWARE_NOTE
    if is_software():
        assert SOFTWARE_NOTE in out and SOFTWARE_NOTE in notes and SOFTWARE_NOTE in o.notes
        assert "the papers' time ratios are about GPUs" in titles[-1]
    else:
        assert SOFTWARE_NOTE not in out and SOFTWARE_NOTE not in notes
        assert "time ratios" not in titles[-1]


# ------------------------------------------------------------------ the experiments' output
def test_experiments_are_quiet_unless_verbose(tmp_path, capsys):
    """Without --verbose: no line per measurement and no table of hundreds of rows (CG's
    convergence history has a row per iteration), the claims and where the files are; with
    it, today's lines. No bar when stderr is no terminal (pytest's capture)."""
    from experiments.cg.convergence import EXPERIMENT

    o = EXPERIMENT.execute(sizes=[8], repeat=1, out=tmp_path / "a")
    captured = capsys.readouterr()
    assert "[cg_convergence]" not in captured.out and captured.err == ""
    assert "claims (paper vs here)" in captured.out and "wrote " in captured.out
    assert len(captured.out.splitlines()) < 20 < len(o.rows)
    EXPERIMENT.execute(sizes=[8], repeat=1, out=tmp_path / "b", verbose=True)
    out = capsys.readouterr().out
    assert "[cg_convergence] k=8 gpu_corrigan_pyramid" in out
    assert len(out.splitlines()) > len(o.rows)


def test_experiment_bar_over_its_sizes_when_asked(tmp_path, capsys):
    """--progress forces the bar (stderr is no terminal here): one bar, over the sizes, on
    stderr; stdout as without it."""
    from experiments.fig8 import EXPERIMENT

    assert EXPERIMENT.main(["--sizes", "8,16", "--repeat", "1", "--out", str(tmp_path), "--progress"]) == 0
    captured = capsys.readouterr()
    assert "fig8" in captured.err and "2/2" in captured.err
    assert "2/2" not in captured.out and "claims (paper vs here)" in captured.out


def test_experiment_command_line_has_verbose_and_progress():
    from experiments.fig8 import EXPERIMENT

    text = _help_words(EXPERIMENT.parser().format_help())
    assert "--verbose" in text and "--progress" in text and "--no-progress" in text


# ------------------------------------------------------------------ gpgpu.show and mfipm.chunks
def test_show_writes_frames_under_a_bar_when_asked(tmp_path, capsys):
    """write_frames(progress=True): a bar over the frames on stderr; the default (None) shows
    it only on a terminal, so nothing here."""
    from gpgpu.show import run as record, write_frames

    rec = record("reduce-pyramid", 2)
    write_frames(rec, tmp_path / "a", gif=False, progress=True)
    err = capsys.readouterr().err
    assert "frames" in err and "3/3" in err
    write_frames(rec, tmp_path / "b", gif=False)
    assert capsys.readouterr().err == ""


def test_show_command_prints_the_trace_before_drawing(tmp_path, capsys, monkeypatch):
    """The trace is known once the passes are recorded: it comes first, then the frames are
    drawn (the command printed nothing for the whole drawing before)."""
    import gpgpu.show.__main__ as cli

    order = []
    real = cli.write_frames

    def spy(*a, **k):
        order.append(("draw", len(capsys.readouterr().out)))
        return real(*a, **k)

    monkeypatch.setattr(cli, "write_frames", spy)
    assert cli.main(["reduce-pyramid", "--n", "2", "--out", str(tmp_path), "--no-gif"]) == 0
    assert order and order[0][1] > 0                  # the trace was out before the drawing began


def test_chunks_bar_over_the_iterations(tmp_path, capsys):
    """mfipm.chunks --progress: a bar over the interior point iterations, on stderr."""
    from experiments.mfipm.chunks import main

    path = _afiro()
    assert main([str(path), "--backend", "numpy64", "--checkpoint", str(tmp_path), "--chunk", "3",
                 "--max-iter", "3", "--reg-min", "1e-8", "--progress"]) == 3
    err = capsys.readouterr().err
    assert "afiro" in err and "3/3" in err
