"""The experiment harness and Fig. 8 at tiny sizes (the other experiments have their own files)."""
import csv
import subprocess
import sys
from pathlib import Path

import pytest

from experiments.__main__ import REGISTRY, main as experiments_main
from experiments.fig8 import EXPERIMENT as FIG8

ROOT = Path(__file__).resolve().parent.parent
PNG = b"\x89PNG\r\n\x1a\n"


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def test_fig8_writes_csv_png_and_matches_table_2(tmp_path):
    o = FIG8.execute(sizes=[16, 32], repeat=1, out=tmp_path, quiet=True)
    rows = read_csv(tmp_path / "fig8.csv")
    assert len(rows) == 2 * 4  # one row per (size, algorithm)
    for r in rows:
        n = int(r["n"])
        assert float(r["seconds"]) > 0
        want = (n - 1) * n * (2 * n - 1) // 6 if r["algorithm"] == "lu" else (n - 1) * n * (n + 1) // 6
        assert int(r["update_fragments"]) == want == int(r["table2_update"])
    assert (tmp_path / "fig8.png").read_bytes()[:8] == PNG
    assert any("Table 2" in c.text and "equal at every size" in c.measured for c in o.claims)


def test_listing_names_every_experiment(capsys):
    assert experiments_main([]) == 0
    out = capsys.readouterr().out
    for name in REGISTRY:
        assert name in out


def test_all_writes_report(tmp_path):
    r = subprocess.run([sys.executable, "-m", "experiments", "all", "--only", "fig8", "--sizes", "8,16",
                        "--repeat", "1", "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    report = (tmp_path / "REPORT.md").read_text()
    assert "## fig8" in report
    assert "| claim | paper | here |" in report
    assert "Renderer: " in report


def test_fig8_command_line(tmp_path):
    r = subprocess.run([sys.executable, "-m", "experiments.fig8", "--sizes", "8", "--repeat", "1",
                        "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "claims (paper vs here)" in r.stdout
    assert (tmp_path / "fig8.csv").exists() and (tmp_path / "fig8.png").exists()


def test_report_is_rebuilt_from_the_claims_files(tmp_path):
    FIG8.execute(sizes=[8], repeat=1, out=tmp_path, quiet=True)
    assert (tmp_path / "fig8.claims.json").exists()
    assert experiments_main(["report", "--out", str(tmp_path)]) == 0
    assert "## fig8" in (tmp_path / "REPORT.md").read_text()


def test_table3_runs_on_one_problem(tmp_path):
    import pytest

    from experiments.table3 import EXPERIMENT as TABLE3
    from gpgpu.lp.netlib import netlib_dir

    try:
        netlib_dir()
    except FileNotFoundError:
        pytest.skip("NETLIB problems not found (GPGPU_NETLIB_DIR)")

    o = TABLE3.execute(out=tmp_path, quiet=True, problems=["afiro"], no_refine=True)
    (row,) = read_csv(tmp_path / "table3.csv")
    assert row["problem"] == "afiro"
    for run in ("gpu_inner", "gpu_outer_square", "gpu_outer", "gpu_fast", "gpu_onepass"):   # both outer updates run
        assert row[f"{run}_status"] == "optimal"
        assert float(row[f"{run}_rel_error"]) <= float(row["eps"])
    assert int(row["gpu_outer_iterations"]) == int(row["paper_iterations"]) == 7
    assert abs(int(row["gpu_outer_square_iterations"]) - 7) <= 1
    assert abs(int(row["gpu_fast_iterations"]) - 7) <= 1 and float(row["highs_seconds"]) > 0
    assert (tmp_path / "table3.png").read_bytes()[:8] == PNG
    assert any("one-pass forms" in c.text for c in o.claims)
    assert any("4 steps of L and of L^-1 a pass" in c.text for c in o.claims)
    assert "baseline_seconds" not in row and not any("--baseline tree" in c.text for c in o.claims)


def test_table3_times_a_baseline_tree_in_the_same_run(tmp_path):
    """--baseline DIR: that source tree's faithful path timed in a subprocess (here this tree
    itself), its times in the rows and issue 11's ratio among the claims."""
    import pytest

    from experiments.table3 import EXPERIMENT as TABLE3
    from gpgpu.lp.netlib import netlib_dir

    try:
        netlib_dir()
    except FileNotFoundError:
        pytest.skip("NETLIB problems not found (GPGPU_NETLIB_DIR)")
    tree = Path(__file__).resolve().parents[1]
    o = TABLE3.execute(out=tmp_path, quiet=True, problems=["afiro"], no_refine=True, baseline=tree)
    (row,) = read_csv(tmp_path / "table3.csv")
    assert row["baseline_status"] == "optimal" and float(row["baseline_seconds"]) > 0
    (claim,) = [c for c in o.claims if "faithful path (the --baseline tree" in c.text]
    assert row["baseline_tree"] and "/ the fastest options above" in claim.text
    with pytest.raises(SystemExit, match="no gpgpu/lp there"):
        TABLE3.execute(out=tmp_path, quiet=True, problems=["afiro"], no_refine=True, baseline=tmp_path)


def test_table3_baseline_script_imports_only_what_the_issue_11_tree_has():
    """The baseline subprocess runs an older tree's gpgpu (1fe4a5f, the code when issue 11 was
    filed): its script may import only what that tree has. A name added since fails there
    with an ImportError (it happened: STEPS_A_PASS), which the test above, whose baseline is
    this tree, cannot see."""
    import ast

    from experiments.table3 import _BASELINE

    at_1fe4a5f = {("gpgpu.lp", "read_mps"), ("gpgpu.lp", "solve"), ("gpgpu.lp.netlib", "PAPER_TABLE3")}
    imported = {(node.module, a.name) for node in ast.walk(ast.parse(_BASELINE))
                if isinstance(node, ast.ImportFrom) and node.module.startswith("gpgpu") for a in node.names}
    assert imported and imported <= at_1fe4a5f, imported - at_1fe4a5f


def test_fig11_tiny(tmp_path):
    from experiments.fig11 import EXPERIMENT as FIG11

    FIG11.execute(sizes=[8, 16], repeat=1, out=tmp_path, quiet=True)
    rows = read_csv(tmp_path / "fig11.csv")
    assert len(rows) == 2 * 3
    assert all(r["status"] == "optimal" and float(r["seconds"]) > 0 for r in rows)
    assert (tmp_path / "fig11.png").read_bytes()[:8] == PNG


def test_netlib_experiment_runs_every_back_end_on_two_problems(tmp_path):
    """experiments.netlib on afiro and sc50b: a row per problem and run, the GPU without
    refinement at the smallest eps it reaches, the claims counting what was right."""
    from experiments.netlib import EXPERIMENT as NETLIB, RUNS

    try:
        from gpgpu.lp.netlib import netlib_dir

        netlib_dir()
    except FileNotFoundError as e:
        pytest.skip(str(e))
    o = NETLIB.execute(out=tmp_path, quiet=True, problems="afiro,sc50b")
    rows = read_csv(tmp_path / "netlib.csv")
    assert [(r["problem"], r["run"]) for r in rows] == [(p, k) for p in ("afiro", "sc50b") for k in RUNS]
    for r in rows:
        assert r["status"] == "optimal" and r["right"] == "True", r
        assert float(r["objective_error"]) <= max(1e-6, float(r["eps"]))
        if r["run"] != "gpu":
            assert float(r["eps"]) == 1e-8 and float(r["accuracy"]) <= 1e-8
    gpu = [r for r in rows if r["run"] == "gpu"]
    assert all(float(r["eps"]) in (1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8) for r in gpu)
    assert all(r["float_float_from"] == "-1" for r in rows)           # neither needs float-float factors
    refine = next(c for c in o.claims if c.text.startswith("gpu-refine: optimal"))
    assert refine.measured.endswith("no solve switched to float-float factors")
    assert o.claims[0].measured.startswith("2 of 2")
    assert (tmp_path / "netlib.png").read_bytes()[:8] == PNG
    with pytest.raises(ValueError, match="no MPS file"):
        NETLIB.execute(out=tmp_path, quiet=True, problems="nosuch")


def test_speed_experiment_rows_and_claims(tmp_path):
    from experiments.speed import EXPERIMENT as SPEED, GPU_ROWS

    o = SPEED.execute(sizes=[16, 32], repeat=1, out=tmp_path, quiet=True, parts="dense")
    rows = read_csv(tmp_path / "speed.csv")
    assert {r["part"] for r in rows} == {"dense"}                   # --parts dense: no sparse rows
    for n in (16, 32):
        got = {r["algorithm"] for r in rows if int(r["n"]) == n}
        assert set(GPU_ROWS) | {"spotrf", "sgetrf", "sgetc2"} <= got
        for r in rows:
            if int(r["n"]) == n and r["device"] == "gpu":
                assert float(r["residual"]) < 1e-5            # every timed factor is right
                assert int(r["fragments"]) > 0 and 0 < float(r["fill_fraction"])
                flops = n ** 3 / 3 if r["algorithm"].startswith("cholesky") else 2 * n ** 3 / 3
                assert float(r["gflops"]) == pytest.approx(flops / float(r["seconds"]) / 1e9, rel=1e-6)
    # the pivot kept on the GPU: three passes a step after a search of one or two fan passes,
    # fewer than the read-back path's (log2 of the column's length for the search alone)
    by = {(int(r["n"]), r["algorithm"]): r for r in rows}
    assert int(by[32, "lu_partial_gpu"]["passes"]) < int(by[32, "lu_partial"]["passes"])
    assert any("pivot on the GPU" in c.text for c in o.claims)
    assert (tmp_path / "speed.png").read_bytes()[:8] == PNG


def test_speed_lp_rows_and_claims(tmp_path):
    """experiments.speed --parts lp on two small NETLIB problems: HiGHS's IPM, the GPU's defaults
    and numpy64 each a row with its status, time, passes and host time a pass, the normal matrix's
    order and the standard form's; the claims say what they could not measure."""
    from experiments.speed import EXPERIMENT as SPEED

    o = SPEED.execute(out=tmp_path, quiet=True, parts="lp", lp_problems=["afiro", "sc50b"])
    rows = read_csv(tmp_path / "speed.csv")
    assert [(r["problem"], r["algorithm"]) for r in rows] == [
        (p, a) for p in ("afiro", "sc50b") for a in ("highs_ipm", "gpu_defaults", "numpy64")]
    for r in rows:
        assert r["part"] == "lp" and r["status"] == "optimal" and float(r["seconds"]) > 0
        if r["algorithm"] != "highs_ipm":
            assert r["right"] == "True" and float(r["objective_error"]) <= 1e-6
            assert 0 < int(r["normal_rows"]) <= int(r["standard_rows"])
    gpu = {r["problem"]: r for r in rows if r["algorithm"] == "gpu_defaults"}
    assert all(int(r["passes"]) > 0 and float(r["host_us_per_pass"]) > 0 for r in gpu.values())
    assert all(int(r["passes"]) == 0 for r in rows if r["algorithm"] == "numpy64")
    text = {c.text: c.measured for c in o.claims}
    assert text["Table 3's ten at eps 1e-8 with the GPU's defaults: total time"].startswith("not measured")
    assert text["gpu_defaults: optimal at eps 1e-8, objective within 1e-6 of HiGHS"] == "2 of 2"
    assert (tmp_path / "speed.png").read_bytes()[:8] == PNG


def test_speed_sparse_rows_against_scipy_and_claims_without_cupy(tmp_path, monkeypatch):
    """The sparse half at tiny sizes: CG, SpMV and PCG rows, each answer checked against scipy
    in float64, the GPU rows' passes and fill fractions, and the claims; without cupy
    (made unimportable here, whatever is installed) no CUDA rows and "not measured"."""
    import numpy as np
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla

    from experiments.speed import EXPERIMENT as SPEED, SPARSE_ROWS

    # cupy made unimportable through the import statement itself: a None in sys.modules would also
    # hide it, but scipy's array-API checks read sys.modules["cupy"] and fail on a None there
    import builtins
    real_import = builtins.__import__

    def no_cupy(name, *args, **kwargs):
        if name.split(".")[0] in ("cupy", "cupyx"):
            raise ImportError(f"{name} hidden by the test")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_cupy)
    o = SPEED.execute(repeat=1, out=tmp_path, quiet=True, parts="sparse", cg_sizes=[8], spmv_sizes=[16],
                      spmv_problems=["gruca_like_16"], pcg_problems=["gruca_like_64"], pcg_ipm_iterations=1,
                      pcg_maxiter=10, pcg_check=2)
    rows = read_csv(tmp_path / "speed.csv")
    assert {r["part"] for r in rows} == {"cg", "spmv", "pcg"}          # no dense rows with --parts sparse
    got = {(r["part"], r["problem"], r["algorithm"]) for r in rows}
    assert got == {("cg", "poisson8", a) for a in ("cg_paper", "cg_fast", "scipy_cg_1t", "scipy_cg_threads")} \
        | {("spmv", p, a) for p in ("poisson16", "gruca_like_16") for a in ("spmv_ellpack", "spmv_packed", "scipy_csr")} \
        | {("pcg", "gruca_like_64", a) for a in ("pcg_gpu_fan", "pcg_gpu_pingpong", "pcg_numpy64")}
    assert {a for _, _, a in got} <= set(SPARSE_ROWS)
    # CG: scipy float64's own solve of the same system, the answers' true residuals
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(8, 8))
    A = (sp.kron(sp.eye(8), T) + sp.kron(T, sp.eye(8))).tocsr()
    b = np.random.default_rng(8).standard_normal(64)
    x64, _ = spla.cg(A, b, rtol=1e-5)
    ref = np.linalg.norm(b - A @ x64) / np.linalg.norm(b)
    cg = {r["algorithm"]: r for r in rows if r["part"] == "cg"}
    for name, r in cg.items():
        assert int(r["info"]) == 0 and int(r["size"]) == 64 and int(r["nnz"]) == A.nnz
        assert float(r["residual"]) < 2e-5 and ref < 1e-5                  # rtol 1e-5, float32 answers
        assert float(r["seconds_per_iteration"]) == pytest.approx(float(r["seconds"]) / int(r["iterations"]))
    for name in ("cg_paper", "cg_fast"):
        assert abs(int(cg[name]["iterations"]) - int(cg["scipy_cg_1t"]["iterations"])) <= 2
        assert float(cg[name]["passes_per_iteration"]) > 0 and int(float(cg[name]["written_bytes"])) > 0
        assert 0 < float(cg[name]["fill_fraction"])
    # the fan iteration draws fewer passes than 003's pyramid iteration
    assert float(cg["cg_fast"]["passes_per_iteration"]) < float(cg["cg_paper"]["passes_per_iteration"])
    for r in rows:
        if r["part"] == "spmv":
            assert float(r["error"]) < 1e-5, r                          # against scipy's float64 product
            assert float(r["gnnz"]) == pytest.approx(int(r["nnz"]) / float(r["seconds"]) / 1e9, rel=1e-6)
            if r["device"] == "gpu":
                assert int(r["passes"]) >= 1 and 0 < float(r["fill_fraction"])
    pcg = {r["algorithm"]: r for r in rows if r["part"] == "pcg"}
    assert all(int(r["iterations"]) > 0 and int(r["ipm_iterations"]) == 1 for r in pcg.values())
    # the fused iteration draws fewer passes than 002's kernels with their pairwise sums
    assert 0 < float(pcg["pcg_gpu_fan"]["passes_per_iteration"]) < float(pcg["pcg_gpu_pingpong"]["passes_per_iteration"])
    assert 0 < float(pcg["pcg_gpu_fan"]["fill_fraction"]) and pcg["pcg_numpy64"]["fill_fraction"] == ""
    by = {c.text: c.measured for c in o.claims}
    assert by["CG, preset fast / cupyx CG total time, Poisson 512²"] == "not measured (cupyx not importable)"
    assert by["CG, preset paper / cupyx CG total time, Poisson 512²"] == "not measured (cupyx not importable)"
    its = by["CG iterations / scipy float32 cg's, presets paper and fast"]
    assert its.startswith("paper ") and ", fast " in its and its.endswith("at 8²")
    assert by["y = A x on nug30's A / cuSPARSE CSR time"].startswith("not measured")
    for problem in ("nug20", "nug30"):
        assert by[f"PCG of the matrix-free IPM, numpy64 (1 thread) / GPU time a PCG iteration, {problem}"] \
            == f"not measured ({problem} not run)"
    assert (tmp_path / "speed.png").read_bytes()[:8] == PNG


def test_speed_parts_flag_names_the_choices():
    from experiments.speed import EXPERIMENT as SPEED, part_list

    assert part_list("dense,sparse") == ("dense", "cg", "spmv", "pcg") and part_list("pcg, cg") == ("cg", "pcg")
    with pytest.raises(SystemExit):
        SPEED.parser().parse_args(["--parts", "dense,sprase"])
    import argparse
    with pytest.raises(argparse.ArgumentTypeError, match="unknown part 'sprase'.*dense, sparse.*--parts dense,sparse"):
        part_list("dense,sprase")


def test_table3_baseline_runs_without_the_threaded_driver_variable_gpgpu_set(monkeypatch, tmp_path):
    """The earlier tree ran with the driver's own choice: the variable gpgpu sets on import is
    taken out of the baseline's environment (a value the user set stays)."""
    import types

    import experiments.table3 as t3
    from gpgpu import context

    (tmp_path / "gpgpu" / "lp").mkdir(parents=True)
    seen = []

    def fake_run(cmd, env=None, **kw):
        seen.append(env)
        return types.SimpleNamespace(stdout='{"problem": "afiro", "seconds": 1.0, "status": "optimal"}\n',
                                     returncode=0)

    monkeypatch.setattr(t3.subprocess, "run", fake_run)
    monkeypatch.setenv(context.THREADED_GL_VARIABLE, "1")
    for set_here, kept in ((True, False), (False, True)):
        monkeypatch.setattr(context, "THREADED_GL_SET_HERE", set_here)
        seen.clear()
        times, label = t3.baseline_times(tmp_path, ["afiro.mps.gz"])
        assert times == {"afiro": (1.0, "optimal")} and label == tmp_path.name
        assert (context.THREADED_GL_VARIABLE in seen[0]) == kept


def test_table3_baseline_failure_names_the_trees_error(tmp_path):
    """A tree whose faithful path cannot run: SystemExit with the child's own error, not a bare
    exit status."""
    import experiments.table3 as t3
    from gpgpu.lp.netlib import netlib_dir

    try:
        afiro = netlib_dir() / "afiro.mps.gz"
    except FileNotFoundError:
        pytest.skip("NETLIB problems not found (GPGPU_NETLIB_DIR)")
    (tmp_path / "gpgpu" / "lp").mkdir(parents=True)
    (tmp_path / "gpgpu" / "__init__.py").write_text("raise ImportError('a broken tree')\n")
    with pytest.raises(SystemExit, match="its faithful path failed:(.|\n)*a broken tree"):
        t3.baseline_times(tmp_path, [afiro])


def test_netlib_claims_name_the_solves_that_switched_to_float_float():
    from experiments.netlib import claims

    def row(problem, switched):
        return {"problem": problem, "run": "gpu-refine", "right": True, "status": "optimal",
                "objective_error": 1e-10, "float_float_from": switched, "seconds": 1.0, "highs_seconds": 0.01}

    out = claims([row("afiro", -1), row("forplan", 28), row("shell", 29)])
    assert out[0].measured == "3 of 3" + \
        "; float-float factors after a stall (iteration): forplan (28), shell (29)"
