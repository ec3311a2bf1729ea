"""experiments.netlib_speed: the rows it writes and the table it prints, on afiro (llvmpipe)."""
import csv

import pytest

pytest.importorskip("highspy")
from experiments import netlib_speed  # noqa: E402


def test_a_row_per_back_end_with_its_figures_and_the_filter_by_rows(tmp_path, ctx):
    out = tmp_path / "speed.csv"
    assert netlib_speed.main(["--problems", "afiro", "--min-rows", "0", "--out", str(out)]) == 0
    rows = list(csv.DictReader(open(out)))
    assert [r["backend"] for r in rows] == ["gpu", "numpy64"]
    for r in rows:
        assert r["problem"] == "afiro" and r["status"] == "optimal" and float(r["error"]) < 1e-8
        assert int(r["normal_rows"]) == 7 and float(r["highs_ipm_seconds"]) > 0
    gpu, cpu = rows
    assert int(gpu["passes"]) > 0 and float(gpu["passes_per_iteration"]) == pytest.approx(
        int(gpu["passes"]) / int(gpu["iterations"]))
    assert int(cpu["passes"]) == 0
    assert float(gpu["readbacks_per_iteration"]) >= 2        # a solve with the factor at least, per direction
    table = netlib_speed.markdown(out).splitlines()
    ratio = float(gpu["seconds"]) / float(cpu["seconds"])
    assert table[2].startswith(f"| afiro | 7 | ") and f" | {ratio:.2f} | " in table[2]
    gpu_only = tmp_path / "gpu_only.csv"                   # a GPU-only run: numpy64's cells "-"
    with open(out) as f, open(gpu_only, "w") as g:
        g.writelines(line for line in f if ",numpy64," not in line)
    row = netlib_speed.markdown(gpu_only).splitlines()[2].split(" | ")
    assert row[0] == "| afiro" and row[4:6] == ["-", "-"] and row[3].endswith(f"({gpu['iterations']})")
    skipped = tmp_path / "none.csv"
    netlib_speed.main(["--problems", "afiro", "--out", str(skipped)])          # afiro's 7 rows < 1000
    assert list(csv.DictReader(open(skipped))) == []


def test_a_back_end_takes_its_options_after_a_plus():
    assert netlib_speed.backend_options("gpu") == ("gpu", {})
    assert netlib_speed.backend_options("gpu+factor_block=16+fuse=False") == ("gpu", {"factor_block": 16,
                                                                                     "fuse": False})
    with pytest.raises(ValueError, match="each option after '\\+' is key=value"):
        netlib_speed.backend_options("gpu+factor_block")
    with pytest.raises(SystemExit):
        netlib_speed.main(["--backends", "gpu+16", "--problems", "afiro"])


def test_an_option_with_a_dot_sets_a_constant_of_gpgpu_lp_in_the_run(monkeypatch):
    import gpgpu.lp.mehrotra as mehrotra

    monkeypatch.setattr(mehrotra, "NEWTON_RTOL", mehrotra.NEWTON_RTOL)     # restored after the test
    name, options = netlib_speed.backend_options("gpu+mehrotra.NEWTON_RTOL=1e-13+fuse=False")
    assert netlib_speed.set_constants(options, check_only=True) == {"fuse": False}
    assert mehrotra.NEWTON_RTOL == 1e-8
    assert netlib_speed.set_constants(options) == {"fuse": False} and mehrotra.NEWTON_RTOL == 1e-13
    with pytest.raises(ValueError, match="gpgpu.lp.mehrotra has no constant NEWTON_RTOLL"):
        netlib_speed.set_constants({"mehrotra.NEWTON_RTOLL": 1.0})
    with pytest.raises(SystemExit):
        netlib_speed.main(["--backends", "gpu+mehrotra.NO_SUCH=1", "--problems", "afiro"])
    with pytest.raises(SystemExit):
        netlib_speed.main(["--backends", "gpu+no_such_module.X=1", "--problems", "afiro"])


def test_the_warm_up_compiles_the_float_float_kernels_too(monkeypatch):
    """_child's warm-up: WARM_UP with the back end's options, and for gpu a second one with
    float-float factors (the kernels a raise of the precision uses), unless the options name a
    factor precision; a context without float-float (RuntimeError) or options that allow none
    (ValueError: refine=False, a large eps) skip it. Then the timed solve."""
    from types import SimpleNamespace

    import gpgpu.lp

    from experiments import netlib_speed

    calls = []
    result = SimpleNamespace(status="optimal", iterations=3, objective=1.0, passes=30, host_us_per_pass=2.0,
                             readbacks_per_iteration=4.0, normal_rows=5, message="")

    def fake(problem, **kw):
        calls.append((problem, kw))
        if kw.get("factor_precision") == "float-float" and refuse:
            raise refuse("no float-float here")
        return result

    monkeypatch.setattr(gpgpu.lp, "solve", fake)
    W = netlib_speed.WARM_UP
    for backend, refuse, expected in (
            ("gpu", False, [(W, {}), (W, {"factor_precision": "float-float"}), ("p", {})]),
            ("gpu", RuntimeError, [(W, {}), (W, {"factor_precision": "float-float"}), ("p", {})]),
            ("gpu", ValueError, [(W, {}), (W, {"factor_precision": "float-float"}), ("p", {})]),
            ("numpy64", False, [(W, {}), ("p", {})]),
            ("gpu+factor_precision='float32'", False, [(W, {"factor_precision": "float32"}),
                                                     ("p", {"factor_precision": "float32"})])):
        calls.clear()
        out = netlib_speed._child("p", backend, 1e-8)
        assert out["status"] == "optimal" and out["iterations"] == 3
        name = backend.split("+")[0]
        assert [(p, {k: v for k, v in kw.items() if k not in ("backend", "eps")}) for p, kw in calls] == expected
        assert all(kw["backend"] == name and kw["eps"] == 1e-8 for _, kw in calls)


def test_the_warm_up_compiles_the_blocked_factors_kernels_float32_and_float_float(ctx):
    from gpgpu import float_float
    from gpgpu.kernel import context_state
    from gpgpu.lp.gpu_backend import AUTO_BLOCK
    from gpgpu.lp import solve

    # the warm-up problem's normal matrix spans more than one block of the GPU's factor
    assert solve(netlib_speed.WARM_UP, backend="numpy64", eps=1e-8, max_iter=1).normal_rows > 2 * AUTO_BLOCK
    blocked = {"cholesky_inverse_trailing", "cholesky_inverse_panel_rgba"}
    if float_float.available():
        blocked |= {"cholesky_inverse_trailing_ff", "cholesky_inverse_panel_rgba_ff"}
    programs = context_state().programs
    for key in [k for k in programs if k[0] in blocked]:   # compiled by an earlier test: forgotten here
        programs.pop(key)                                    # (not released: a kept plan may draw them)
    netlib_speed.warm_up("gpu", 1e-8, {})
    assert blocked <= {key[0] for key in programs}
