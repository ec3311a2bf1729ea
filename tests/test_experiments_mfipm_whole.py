"""experiments.mfipm.whole: the rows it writes and the table it prints, on afiro (llvmpipe)."""
import csv
import os

import pytest

pytest.importorskip("highspy")
from experiments.mfipm import whole  # noqa: E402


def test_a_row_per_run_with_its_figures_and_the_cpu_over_gpu_ratios(tmp_path, ctx):
    out = tmp_path / "whole.csv"
    assert whole.main(["--problems", "afiro", "--out", str(out)]) == 0
    rows = list(csv.DictReader(open(out)))
    assert [r["run"] for r in rows] == ["gpu", "gpu-002", "numpy64", "numpy64-1"]
    for r in rows:
        assert r["problem"] == "afiro" and r["status"] == "optimal" and float(r["error"]) < 1e-6
        assert float(r["highs_objective"]) == pytest.approx(-464.7531428571)      # NETLIB's afiro
        assert int(r["pcg_iterations"]) > 0 and float(r["seconds"]) > 0
    by = {r["run"]: r for r in rows}
    for run in ("gpu", "gpu-002"):
        g = by[run]
        assert int(g["passes"]) > 0 and float(g["passes_per_pcg"]) == pytest.approx(
            int(g["passes"]) / int(g["pcg_iterations"]))
        # where the seconds went: PCG's check reads within PCG, within the solve; the passes' issue
        assert 0 < float(g["read_seconds"]) < float(g["pcg_seconds"]) < float(g["seconds"])
        assert 0 < float(g["build_seconds"]) < float(g["seconds"])
        assert float(g["issue_seconds"]) == pytest.approx(float(g["host_us_per_pass"]) * int(g["passes"]) * 1e-6)
    for run in ("numpy64", "numpy64-1"):                # its reads are the floats themselves
        c = by[run]
        assert float(c["read_seconds"]) == 0 and float(c["issue_seconds"]) == 0
        assert 0 < float(c["pcg_seconds"]) < float(c["seconds"])
    # the fused iteration draws fewer passes than 002's kernels
    assert float(by["gpu"]["passes_per_pcg"]) < float(by["gpu-002"]["passes_per_pcg"])
    assert int(by["numpy64"]["passes"]) == 0
    table = whole.markdown(out).splitlines()
    assert len(table) == 2 + 4
    ratio = float(by["numpy64-1"]["seconds"]) / float(by["gpu"]["seconds"])
    assert table[2].startswith("| afiro | gpu | optimal | ") and table[2].endswith(f", {ratio:.2f} |")
    assert table[4].endswith("| - | - | -, - |")                 # a CPU run: no passes, no ratio


def test_the_reference_objective_from_an_earlier_csv(tmp_path, ctx, monkeypatch):
    """--reference: a problem whose HiGHS objective an earlier CSV holds is not solved by HiGHS
    again, and its rows carry that objective and the error against it; another problem's is
    solved."""
    first = tmp_path / "first.csv"
    assert whole.main(["--problems", "afiro", "--runs", "numpy64", "--out", str(first)]) == 0
    solved = []
    real = whole.highs_objective
    monkeypatch.setattr(whole, "highs_objective", lambda p: solved.append(p) or real(p))
    rows = [dict(r) for r in csv.DictReader(open(first))]
    rows[0]["highs_objective"] = "-464.0"                 # a planted reference: the rows must carry it
    with open(tmp_path / "ref.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    out = tmp_path / "again.csv"
    assert whole.main(["--problems", "afiro,sc50b", "--runs", "numpy64", "--out", str(out),
                       "--reference", str(tmp_path / "ref.csv")]) == 0
    assert solved == ["sc50b"]
    again = {r["problem"]: r for r in csv.DictReader(open(out))}
    assert float(again["afiro"]["highs_objective"]) == -464.0
    assert float(again["afiro"]["error"]) == pytest.approx(abs(float(again["afiro"]["objective"]) + 464.0) / 464.0)
    assert float(again["sc50b"]["error"]) < 1e-6


def test_the_runs_rows_are_kept_when_highs_fails(tmp_path, ctx, monkeypatch):
    """HiGHS's reference is solved after a problem's runs: when it fails (or is interrupted) the
    error goes on up, and the runs' rows are in the CSV with no reference."""
    def fail(problem):
        raise RuntimeError("HiGHS failed")

    monkeypatch.setattr(whole, "highs_objective", fail)
    out = tmp_path / "kept.csv"
    with pytest.raises(RuntimeError, match="HiGHS failed"):
        whole.main(["--problems", "afiro", "--runs", "numpy64", "--out", str(out)])
    rows = list(csv.DictReader(open(out)))
    assert [r["run"] for r in rows] == ["numpy64"] and rows[0]["status"] == "optimal"
    assert rows[0]["highs_objective"] == "nan" and float(rows[0]["seconds"]) > 0


def test_a_netlib_folder_without_afiro_still_warms_up_and_a_crash_says_why(tmp_path, monkeypatch, capsys):
    """The warm-up solves the package's own afiro, so a run goes on where GPGPU_NETLIB_DIR names
    a folder without it (a folder of the larger problems alone); a run whose subprocess fails
    prints the error's last line after its status ("crash")."""
    import shutil

    from gpgpu.lp.netlib import DATA_DIR

    mine = tmp_path / "netlib"
    mine.mkdir()
    shutil.copy(DATA_DIR / "netlib" / "sc50b.mps.gz", mine)
    monkeypatch.setenv("GPGPU_NETLIB_DIR", str(mine))
    out = tmp_path / "mine.csv"
    assert whole.main(["--problems", "sc50b", "--runs", "numpy64", "--out", str(out)]) == 0
    rows = list(csv.DictReader(open(out)))
    assert [(r["problem"], r["status"]) for r in rows] == [("sc50b", "optimal")]
    capsys.readouterr()
    with pytest.raises(FileNotFoundError):          # HiGHS's reference after the runs: no such file
        whole.main(["--problems", "nosuch", "--runs", "numpy64", "--out", str(tmp_path / "crash.csv")])
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("nosuch ") and "crash" in ln)
    assert "FileNotFoundError" in line and "'nosuch' not found" in line


def test_an_unknown_run_is_refused(tmp_path, ctx):
    with pytest.raises(SystemExit):
        whole.main(["--problems", "afiro", "--runs", "gpu,cuda", "--out", str(tmp_path / "x.csv")])


#: the columns of the rows the table tests write (a subset of the experiment's)
RUN_FIELDS = ("problem", "run", "status", "iterations", "pcg_iterations", "seconds", "passes_per_pcg",
              "host_us_per_pass", "renderer", "date")


def _runs_csv(path, rows):
    """A CSV of this experiment's runs, ``rows`` of RUN_FIELDS less the renderer and date (an H100's)."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(RUN_FIELDS)
        w.writerows([r + ("NVIDIA H100/PCIe/SSE2", "2026-12-07") for r in rows])
    return path


def test_a_cpu_run_stopped_at_its_time_limit_is_a_lower_bound(tmp_path):
    """A CPU run that stopped at its time limit took longer than its seconds: the table says "> r"
    and the claims leave the problem out; a GPU run stopped so gets no ratio."""
    rows = [("p1", "gpu", "optimal", "23", "500", "200.0", "7.1", "1.9"),
            ("p1", "numpy64", "time_limit", "20", "400", "500.0", "0", "0"),
            ("p2", "gpu", "time_limit", "5", "100", "60.0", "7.1", "1.9"),
            ("p2", "numpy64", "optimal", "9", "300", "30.0", "0", "0")]
    path = _runs_csv(tmp_path / "runs.csv", rows)
    table = whole.markdown(path).splitlines()
    assert table[2] == "| p1 | gpu | optimal | 23 | 500 | 200.00 | 7.1 | 1.9 | > 2.50, - |"
    assert table[3].startswith("| p1 | numpy64 | time limit | 20 |") and table[3].endswith("| -, - |")
    assert table[4].endswith("| -, - |")                          # the GPU stopped: no ratio at all
    assert whole.claims(path) == []


def test_a_run_without_an_answer_gets_no_speed_ratio(tmp_path):
    """A speed-up is a ratio of two solves: a GPU run that ended in numerical trouble (or at its
    iteration limit) gets no ratio in the table nor in the claims, however fast it stopped; nor
    does a solved GPU run beside a CPU run in numerical trouble."""
    rows = [("p1", "gpu", "numerical_trouble", "65", "500", "30.0", "10.2", "1.1"),
            ("p1", "numpy64", "optimal", "20", "400", "31.0", "0", "0"),
            ("p2", "gpu", "optimal", "12", "100", "2.0", "7.1", "1.9"),
            ("p2", "numpy64", "numerical_trouble", "9", "300", "30.0", "0", "0"),
            ("p3", "gpu", "iteration_limit", "100", "100", "1.0", "7.1", "1.9"),
            ("p3", "numpy64", "optimal", "9", "300", "3.0", "0", "0"),
            ("p4", "gpu", "optimal", "12", "100", "2.0", "7.1", "1.9"),
            ("p4", "gpu-presolve", "optimal", "12", "100", "1.0", "7.1", "1.9"),
            ("p4", "numpy64", "optimal", "9", "300", "3.0", "0", "0"),
            ("p4", "numpy64-presolve", "optimal", "9", "300", "0.5", "0", "0")]
    path = _runs_csv(tmp_path / "runs.csv", rows)
    table = whole.markdown(path).splitlines()[2:]
    assert table[0] == "| p1 | gpu | numerical trouble | 65 | 500 | 30.00 | 10.2 | 1.1 | -, - |"
    assert table[2].startswith("| p2 | gpu | optimal |") and table[2].endswith("| -, - |")
    assert table[4].startswith("| p3 | gpu | iteration limit |") and table[4].endswith("| -, - |")
    # p4: gpu against numpy64, gpu-presolve against numpy64-presolve (the same presolved LP)
    assert table[6].endswith("| 1.50, - |") and table[7].endswith("| 0.50, - |")
    multi = {c.text: c.measured for c in whole.claims(path)}
    assert multi == {"whole solves: multi-core CPU solve time / GPU solve time": "p4 1.50"}


def test_claims_from_a_csv(tmp_path):
    """--claims: 002 Table 3's two ratios over whole solves, CPU seconds over the GPU defaults',
    per problem where both runs ended in a status of their own; a ratio without such a problem is
    left out; the claims file is named for the renderer, and a GPU's rows are copied as the
    verdicts' mfipm_whole.csv."""
    import json

    fields = ("problem", "run", "status", "seconds", "renderer", "date")
    rows = [("p1", "gpu", "optimal", "2.0"), ("p1", "numpy64", "optimal", "5.0"), ("p1", "numpy64-1", "optimal", "9.0"),
            ("p2", "gpu", "timeout", "60.0"), ("p2", "numpy64", "optimal", "3.0"),
            ("p3", "gpu", "optimal", "4.0"), ("p3", "numpy64", "optimal", "1.0")]
    for renderer, name in (("NVIDIA H100/PCIe/SSE2", "mfipm_whole.claims.json"),
                           ("llvmpipe (LLVM 15.0.6, 256 bits)", "mfipm_whole.llvmpipe.claims.json")):
        folder = tmp_path / name.split(".")[1]
        folder.mkdir()
        path = folder / "runs.csv"
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(fields)
            w.writerows([r + (renderer, "2026-12-05") for r in rows])
        assert whole.main(["--claims", str(path), "--command", "the command", "--note", "a note"]) == 0
        data = json.loads((folder / name).read_text())
        assert (data["name"], data["command"], data["renderer"]) == ("mfipm_whole", "the command", renderer)
        assert data["notes"] == ["rows: runs.csv", "a note"]
        assert data["seconds"] == pytest.approx(84.0)
        claims = {c["text"]: c["measured"] for c in data["claims"]}
        assert claims == {"whole solves: serial CPU solve time / GPU solve time": "p1 4.50",
                          "whole solves: multi-core CPU solve time / GPU solve time": "p1 2.50; p3 0.25"}
        assert (folder / "mfipm_whole.csv").exists() == (name == "mfipm_whole.claims.json")
    only_gpu = tmp_path / "only.csv"
    with open(only_gpu, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(fields)
        w.writerow(("p1", "gpu", "optimal", "2.0", "NVIDIA H100/PCIe/SSE2", "2026-12-05"))
    assert whole.claims(only_gpu) == []
    # two runs: each ratio within its own CSV (p1's serial ratio from the second run's GPU row,
    # the multi-core one from the first's), both CSVs' rows copied, the newest date
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    for path, body, date in ((first, [("p1", "gpu", "optimal", "2.0"), ("p1", "numpy64", "optimal", "5.0")], "2026-12-05"),
                             (second, [("p1", "gpu", "optimal", "3.0"), ("p1", "numpy64-1", "optimal", "9.0")],
                              "2026-12-06")):
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(fields)
            w.writerows([r + ("NVIDIA H100/PCIe/SSE2", date) for r in body])
    assert whole.main(["--claims", str(first), str(second), "--command", "two commands"]) == 0
    data = json.loads((tmp_path / "mfipm_whole.claims.json").read_text())
    assert {c["text"]: c["measured"] for c in data["claims"]} == {
        "whole solves: serial CPU solve time / GPU solve time": "p1 3.00",
        "whole solves: multi-core CPU solve time / GPU solve time": "p1 2.50"}
    assert data["notes"] == ["rows: first.csv, second.csv"] and data["date"] == "2026-12-06"
    assert len(list(csv.DictReader(open(tmp_path / "mfipm_whole.csv")))) == 4
    # an older CSV without the later columns: the union of the columns, blanks where missing
    with open(first, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(fields)
        w.writerow(("p1", "gpu", "optimal", "2.0", "NVIDIA H100/PCIe/SSE2", "2026-12-05"))
    with open(second, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(fields + ("pcg_seconds",))
        w.writerow(("p1", "numpy64", "optimal", "5.0", "NVIDIA H100/PCIe/SSE2", "2026-12-06", "4.5"))
    whole.write_claims([first, second])
    merged = list(csv.DictReader(open(tmp_path / "mfipm_whole.csv")))
    assert [(r["run"], r["pcg_seconds"]) for r in merged] == [("gpu", ""), ("numpy64", "4.5")]
    # a CSV with its header only is refused
    empty = tmp_path / "empty.csv"
    empty.write_text(",".join(fields) + "\n")
    with pytest.raises(ValueError, match="no rows"):
        whole.write_claims([empty])
    # runs of two renderers are refused
    with open(second, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(fields)
        w.writerow(("p1", "gpu", "optimal", "3.0", "llvmpipe (LLVM 15.0.6, 256 bits)", "2026-12-06"))
    with pytest.raises(ValueError, match="different renderers"):
        whole.write_claims([first, second])


def test_the_one_row_run_keeps_the_vectors_unfolded(tmp_path, ctx, monkeypatch):
    """--runs gpu-one-row: the defaults with fold=None (the back end's vectors in one texture row);
    not among the default runs."""
    from gpgpu.lp import matrix_free_gpu
    folds = []
    real = matrix_free_gpu.GPUMatrixFree.__init__

    def spy(self, *a, **k):
        real(self, *a, **k)
        folds.append(self.fold)

    monkeypatch.setattr(matrix_free_gpu.GPUMatrixFree, "__init__", spy)
    monkeypatch.setattr(whole, "run_one", lambda problem, run, eps, timeout: whole._child(problem, run, eps))
    assert "gpu-one-row" not in whole.DEFAULT_RUNS
    out = tmp_path / "whole.csv"
    assert whole.main(["--problems", "afiro", "--runs", "gpu-one-row", "--out", str(out)]) == 0
    rows = list(csv.DictReader(open(out)))
    assert [(r["run"], r["status"]) for r in rows] == [("gpu-one-row", "optimal")] and folds[-1] is None


def test_the_halving_run_sums_the_dense_part_by_pairs(tmp_path, ctx, monkeypatch):
    """--runs gpu-halving: the defaults with sums="pingpong" (000's halving passes for the dense
    part's sums, where the defaults sum 32 texels a fragment); not among the default runs."""
    from gpgpu.lp import matrix_free_gpu
    sums = []
    real = matrix_free_gpu.SparseStream.from_scipy

    def spy(A, *a, **k):
        sums.append(k.get("sums"))
        return real(A, *a, **k)

    monkeypatch.setattr(matrix_free_gpu.SparseStream, "from_scipy", staticmethod(spy))
    monkeypatch.setattr(whole, "run_one", lambda problem, run, eps, timeout: whole._child(problem, run, eps))
    assert "gpu-halving" not in whole.DEFAULT_RUNS
    out = tmp_path / "whole.csv"
    assert whole.main(["--problems", "afiro", "--runs", "gpu-halving,gpu", "--out", str(out)]) == 0
    rows = list(csv.DictReader(open(out)))
    assert [(r["run"], r["status"]) for r in rows] == [("gpu-halving", "optimal"), ("gpu", "optimal")]
    half = len(sums) // 2                     # each run: its warm-up solve and its solve, A and A∘A each
    assert len(sums) == 2 * half and set(sums[:half]) == {"pingpong"} and set(sums[half:]) == {"fan"}


@pytest.mark.parametrize("run, backend, presolve", [("gpu", "gpu", None), ("numpy64", "numpy64", None),
                                                    ("gpu-presolve", "gpu", True),
                                                    ("numpy64-presolve", "numpy64", True)])
def test_the_presolve_runs_solve_the_presolved_lp_on_their_back_end(monkeypatch, run, backend, presolve):
    """``gpu-presolve`` and ``numpy64-presolve`` are ``gpu`` and ``numpy64`` with
    ``presolve=True`` (the warm-up and the timed solve); the others leave the presolve to
    ``solve``'s default (off for the matrix-free method)."""
    import gpgpu.lp

    calls = []

    class Result:
        status, iterations, pcg_iterations, passes, host_us_per_pass, readbacks = "optimal", 1, 1, 0, 0.0, 0
        objective, pass_seconds, timers = 1.0, 0.0, {"pcg": 0.0, "pcg_reads": 0.0, "build": 0.0}

    monkeypatch.setattr(gpgpu.lp, "solve", lambda problem, **kw: calls.append((problem, kw)) or Result())
    row = whole._child("sc50b", run, 1e-6)
    assert row["status"] == "optimal" and [p for p, _ in calls] == [str(whole.WARM_UP), "sc50b"]
    for _, kw in calls:
        assert kw["backend"] == backend and kw["method"] == "matrix-free" and kw.get("presolve") is presolve
        assert kw.get("threads") == (None if backend == "gpu" else os.cpu_count())


def test_a_run_sets_the_constants_and_options_named_after_a_plus(ctx, monkeypatch, capsys):
    """``gpu+matrix_free.CORRECTOR_START=True+maxiter=7``: the constant set in the run's process,
    the key without a dot passed to solve beside the run's own options; an unknown constant or
    run is refused before anything runs."""
    import gpgpu.lp
    from gpgpu.lp import matrix_free

    monkeypatch.setattr(matrix_free, "CORRECTOR_START", False)
    calls = []
    real = gpgpu.lp.solve
    monkeypatch.setattr(gpgpu.lp, "solve", lambda *a, **k: calls.append((a, k, matrix_free.CORRECTOR_START))
                        or real(*a, **k))
    row = whole._child("afiro", "numpy64-1+matrix_free.CORRECTOR_START=True+pcg_maxiter=50", 1e-6)
    assert row["status"] == "optimal"
    assert matrix_free.CORRECTOR_START is True
    assert [c[0] for c in calls] == [(str(whole.WARM_UP),), ("afiro",)]   # the warm-up, then the timed solve
    assert all(c[1]["threads"] == 1 and c[1]["pcg_maxiter"] == 50 and c[2] is True for c in calls)
    for bad, why in (("gpu+matrix_free.NO_SUCH=1", "has no constant NO_SUCH"), ("gpu+x", "key=value"),
                     ("cpu+matrix_free.CORRECTOR_START=True", "unknown runs cpu")):
        with pytest.raises(SystemExit):
            whole.main(["--problems", "afiro", "--runs", f"gpu,{bad}"])
        assert why in capsys.readouterr().err
