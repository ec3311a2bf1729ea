import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gpgpu import Kernel, KernelCompileError, Stream, capabilities
from gpgpu.geometry import Texel

ROOT = Path(__file__).resolve().parent.parent


def run(*args, env=None):
    e = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, "-m", "gpgpu", *args], cwd=ROOT, env=e,
                          capture_output=True, text=True, timeout=300)


def test_capabilities_report_float_targets(ctx):
    caps = capabilities()
    assert caps["float_render_target"] is True
    assert caps["max_texture_size"] >= 2048
    assert caps["renderer"]


def test_info_command_prints_renderer():
    r = run("info")
    assert r.returncode == 0, r.stderr
    assert "renderer" in r.stdout and "max_texture_size" in r.stdout and "timer_query" in r.stdout


def test_unknown_backend_gives_clear_error():
    r = run("info", env={"GPGPU_BACKEND": "vulkan"})
    assert r.returncode == 1
    assert "GPGPU_BACKEND='vulkan' is not a known backend" in r.stderr


def test_glfw_without_display_gives_clear_error():
    r = run("info", env={"GPGPU_BACKEND": "glfw", "DISPLAY": "", "WAYLAND_DISPLAY": ""})
    if r.returncode == 0:
        pytest.skip("a display is available here")
    assert "GPGPU_BACKEND=glfw" in r.stderr
    assert "libegl1" in r.stderr or "needs the glfw package" in r.stderr


def test_bench_command_reports_pass_time_and_fill_rate():
    r = run("bench", "--passes", "200", "--size", "64", "--repeat", "2")
    assert r.returncode == 0, r.stderr
    assert "host time per pass" in r.stdout and "Gfragments/s" in r.stdout
    assert re.search(r"host time per pass +\d+\.\d+ us \(pre-built plan\)", r.stdout), r.stdout
    assert "Cholesky of order 64 from one vertex buffer, 316 passes" in r.stdout


def test_plan_overhead_draws_the_cholesky_plan_passes():
    """The pre-built plan row times exactly the passes of Algorithm 2's plan (5 a step, then
    the last square root), as factor() draws them."""
    from gpgpu import counters
    from gpgpu.bench import plan_overhead
    from gpgpu.cholesky import factor

    for m in (1, 2, 9):
        r = plan_overhead(m, repeat=1)
        a = np.eye(m) * 4.0
        with Stream.from_array(a) as s, counters.count(time=False) as c:
            factor(s, m, check=False).release()  # no pivot check: only the plan
        # factor() draws the "Copy A to S" pass before the plan's passes
        assert r["plan_passes"] == c.passes() - 1 == 5 * (m - 1) + 1, (m, r, c.passes())
        assert r["plan_host_us_per_pass"] > 0 and r["plan_total_us_per_pass"] >= r["plan_host_us_per_pass"]


def test_recorded_overhead_runs_two_plans_in_turn_without_uniform_writes(monkeypatch):
    """The recorded plans' row: two plans of four passes (one a kernel), a ping-pong pair's two
    orders, run in turn; once each program holds its values (the warm-up), the runs write and
    compare no uniform (the plans share their passes' writes), and the bench prints the row."""
    import gpgpu.passes as passes
    from gpgpu.bench import recorded_overhead

    real = passes._write_uniforms
    calls = []

    def spy(cache, writes):
        calls.append(writes)
        real(cache, writes)

    monkeypatch.setattr(passes, "_write_uniforms", spy)
    r = recorded_overhead(repeat=3)
    assert r["recorded_passes"] == 8
    assert r["recorded_host_us_per_pass"] > 0 and r["recorded_python_us_per_pass"] > 0
    # the warm-up of each timing (two plans) writes four programs' values once, the runs none
    assert len(calls) <= 2 * 4
    # the draw calls left out: a plan's run inside the block draws nothing
    from gpgpu.bench import _draw_calls_left_out
    from gpgpu.blas1 import KERNELS as L1, whole
    from gpgpu.passes import RecordedPlan, recording

    with Stream(1, 4) as out:
        with recording() as noted:
            L1["fill"].draw(out, whole(out), uniforms={"value": 2.0})
        plan = RecordedPlan(noted, keep=[out])
        try:
            L1["fill"].draw(out, whole(out), uniforms={"value": 7.0})
            with _draw_calls_left_out(plan._fast, 5):
                plan.run()
            np.testing.assert_array_equal(out.to_array().ravel(), 7.0)
            plan.run()
            np.testing.assert_array_equal(out.to_array().ravel(), 2.0)
        finally:
            plan.release()
    out = run("bench", "--passes", "20", "--size", "16", "--repeat", "1")
    assert re.search(r"host time per pass +\d+\.\d+ us \(recorded plans in turn\)", out.stdout), out.stdout


@pytest.mark.parametrize("setting,expected", [(None, "1"), ("0", None), ("off", None)])
def test_threaded_gl_is_asked_of_the_driver_unless_turned_off(setting, expected):
    """Importing gpgpu sets NVIDIA's __GL_THREADED_OPTIMIZATIONS=1 (host cost per pass) unless
    GPGPU_THREADED_GL turns it off; a value the user set stays."""
    env = {k: v for k, v in os.environ.items() if k not in ("GPGPU_THREADED_GL", "__GL_THREADED_OPTIMIZATIONS")}
    if setting is not None:
        env["GPGPU_THREADED_GL"] = setting
    code = ("import os, gpgpu.context as c; "
            "print(os.environ.get('__GL_THREADED_OPTIMIZATIONS'), c.THREADED_GL_SET_HERE)")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [str(expected), str(expected is not None)]
    env["__GL_THREADED_OPTIMIZATIONS"] = "0"
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert r.stdout.split() == ["0", "False"]


def test_compile_error_names_file_and_line(tmp_path):
    bad = Kernel("broken_for_test")
    bad.path = tmp_path / "broken_for_test.frag"
    bad.path.write_text("out float result;\nvoid main() {\n    result = undefined_name;\n}\n")
    with Stream(1, 1) as s, pytest.raises(KernelCompileError, match="broken_for_test.frag") as e:
        bad.draw(s, Texel.at(0, 0))
    # the driver's line number counts from the file's first line: Mesa "0:3(11)", NVIDIA "0(3)"
    assert re.search(r"\b0[:(]3\b", str(e.value)), str(e.value)


def test_input_that_is_also_target_is_refused():
    copy = Kernel("copy")
    with Stream(2, 2) as s, pytest.raises(ValueError, match="both input and target"):
        copy.draw(s, Texel.at(0, 0), {"A": s})
