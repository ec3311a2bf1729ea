"""The experiments of paper 002's Tables 1-3 at CI sizes: they run, write their files, and their
rows and claims carry the measured figures."""
import csv

import pytest

pytest.importorskip("highspy")

PNG = b"\x89PNG\r\n\x1a\n"


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def test_table1_sizes_and_fill(tmp_path):
    from experiments.mfipm.table1 import EXPERIMENT, factor_estimates
    import numpy as np
    import scipy.sparse as sp

    o = EXPERIMENT.execute(sizes=[16, 1024], repeat=1, out=tmp_path, quiet=True, qap="none")
    r = {x["problem"]: x for x in rows(tmp_path / "mfipm_table1.csv")}
    assert r["gruca_like_1024"]["nonzeros"] == r["gruca_like_1024"]["paper_nonzeros"] == "34817"
    assert r["gruca_like_16"]["dense_factor_nnz"] == str(17 * 18 // 2)
    assert "equal for 1 of 1" in o.claims[0].measured and "gruca_like_1024 5.26e+05 vs 5e+05" in o.claims[1].measured
    assert (tmp_path / "mfipm_table1.png").read_bytes()[:8] == PNG
    # the sparse path: a tridiagonal A A^T has a factor of 2m - 1 entries, and so has its envelope
    A = sp.diags([1.0, 1.0], [0, 1], shape=(50, 51)).tocsr()
    est = factor_estimates(A)
    assert est["aat_nnz"] == 3 * 50 - 2 and est["mmd_factor_nnz"] == 2 * 50 - 1 and est["rcm_envelope"] == 2 * 50 - 1
    assert not est["dense_normal"] and np.isfinite(est["mmd_seconds"])


def test_table3_and_table2(tmp_path):
    from experiments.mfipm import table2, table3

    o = table3.EXPERIMENT.execute(sizes=[16], repeat=1, out=tmp_path, quiet=True, qap="none")
    r = rows(tmp_path / "mfipm_table3.csv")
    assert [x["backend"] for x in r] == ["numpy64", "gpu", "gpu-fan"]
    assert {x["settings"] for x in r} == {"defaults"}
    for x in r:
        assert x["status"] == "optimal" and float(x["objective_error"]) < 1e-6
        assert int(x["products"]) > 0 and float(x["spmv_seconds"]) > 0 and float(x["seconds"]) > 0
    assert o.claims[0].text.startswith("GPU SpMV speed-up") and "gruca_like_16" in o.claims[1].measured
    assert "fan sums" in o.claims[2].text and o.claims[2].measured.startswith("gruca_like_16 ")
    o = table2.EXPERIMENT.execute(sizes=[16], repeat=1, out=tmp_path, quiet=True, qap="none")
    for x in rows(tmp_path / "mfipm_table2.csv"):
        shares = [float(x[f"{p}_percent"]) for p in ("pcg", "precondition", "fsax", "fsaty")]
        assert all(0 < s < 100 for s in shares) and shares[1] < shares[0]
    assert "gruca_like_16 gpu" in o.claims[0].measured


def test_qap_settings_budget_or_solve():
    """--qap-settings: the QAP LPs for the fixed budget (default, and without a context) or with
    the settings that solve them (k = 100, reg_min = 1e-4, 4000 / 10000 PCG iterations a solve
    below / above 10000 rows); the Gruca-like problems always with solve()'s defaults; the claim
    of Table 3 names the settings it ran."""
    from types import SimpleNamespace

    import scipy.sparse as sp

    from experiments.mfipm.common import QAP_BUDGET, settings, settings_label
    from experiments.mfipm.table3 import claims
    from gpgpu.lp import Problem

    def problem(m):
        return Problem.from_arrays(sp.eye(m, m + 1, format="csr"), [1.0] * m, [1.0] * (m + 1))

    small, large = problem(3192), problem(15240)
    solve_ctx = SimpleNamespace(options={"qap_settings": "solve"})
    budget_ctx = SimpleNamespace(options={"qap_settings": "budget"})
    assert settings("qap", solve_ctx, small) == {"rank": 100, "reg_min": 1e-4, "pcg_maxiter": 4000}
    assert settings("qap", solve_ctx, large)["pcg_maxiter"] == 10000
    assert settings("qap", budget_ctx, small) == settings("qap") == QAP_BUDGET
    assert settings("gruca", solve_ctx, small) == settings("gruca") == {}
    assert (settings_label("qap", solve_ctx), settings_label("qap", budget_ctx), settings_label("qap", None),
            settings_label("gruca", solve_ctx)) == ("solve", "budget", "budget", "defaults")
    row = {"problem": "nug20", "seconds": 2.0, "seconds_per_pcg_iteration": 1e-3, "iterations": 30,
           "pcg_iterations": 2000, "accuracy": 1e-9, "ax_seconds": 1.0, "aty_seconds": 1.0, "objective_error": None}
    rows = [dict(row, backend=b) for b in ("numpy64", "gpu", "gpu-fan")]
    solved = [c for c in claims(rows, "solved to eps = 1e-8: k = 100") if c.text == "nug20 solve time: GPU, CPU"]
    budget = [c for c in claims(rows) if c.text == "nug20 solve time: GPU, CPU"]
    assert solved[0].how.startswith("solved to eps = 1e-8") and budget[0].how.startswith("budget of 10")


def test_float32_emulation_of_the_gpu_pcg(capsys):
    """experiments.mfipm.emulate32: the GPU back end's float32 PCG in numpy. Its vectors are
    float32 and its preconditioner is 002's (against float64's on the same G); with
    solution='float64' PCG's x keeps the steps a float32 x loses (true residual against
    float64's G); the command solves afiro."""
    import numpy as np
    import scipy.sparse as sp

    from experiments.mfipm.emulate32 import Float32MatrixFree, main
    from gpgpu.lp import Problem
    from gpgpu.lp.matrix_free import pcg
    from gpgpu.lp.matrix_free_numpy import NumpyMatrixFree
    from gpgpu.lp.netlib import netlib_dir

    rng = np.random.default_rng(3)
    m, n = 60, 150
    A = sp.random(m, n, density=0.15, random_state=rng, format="csr") + sp.hstack([sp.eye(m), sp.csr_matrix((m, n - m))])
    p = Problem(A=sp.csr_matrix(A), b=np.ones(m), c=np.ones(n))
    theta = np.exp(rng.uniform(-8, 8, n))
    G = (A @ sp.diags(theta) @ A.T).toarray() + 1e-4 * np.eye(m)
    b = rng.standard_normal(m)
    ref = NumpyMatrixFree(p)
    ref.set_weights(theta, 1e-4)
    ref.build_preconditioner(3)
    true = {}
    for solution in ("float32", "float64"):
        be = Float32MatrixFree(p, solution=solution)
        be.set_weights(theta, 1e-4)
        be.build_preconditioner(3)
        r = be.vector(b)
        assert r.dtype == np.float32 and be.normal_matvec(r).dtype == np.float32
        np.testing.assert_allclose(be.precondition(r), ref.precondition(b), rtol=1e-3, atol=1e-3 * np.abs(ref.precondition(b)).max())
        res = pcg(be, r, 0.0, 300)
        assert res["x"].dtype == (np.float32 if solution == "float32" else np.float64)
        true[solution] = np.linalg.norm(b - G @ res["x"]) / np.linalg.norm(b)
    assert true["float64"] < 0.1 * true["float32"]
    with pytest.raises(ValueError, match="solution must be"):
        Float32MatrixFree(p, solution="float16")
    assert main([str(netlib_dir() / "afiro.mps.gz"), "--eps", "1e-6"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("optimal:")


def test_chunks_resume_from_the_checkpoint_as_the_uncut_run(tmp_path, capsys):
    """experiments.mfipm.chunks: a run cut by --max-iter into two commands of chunks of 2
    iterations (the second starting from the files on disk) takes the uncut run's iterations and
    residuals and ends at its objective, NETLIB's; the log records every chunk; a finished run is
    not run again. (afiro cut at 4: resumed without the regularisation's state, it would not.)"""
    import json

    import numpy as np

    from experiments.mfipm.chunks import main
    from gpgpu.lp import read_mps, solve
    from gpgpu.lp.netlib import netlib_dir

    mps = str(netlib_dir() / "afiro.mps.gz")
    p = read_mps(mps)
    uncut = solve(p, method="matrix-free", backend="numpy64", eps=1e-8, rank=100, reg_min=1e-8, pcg_maxiter=2000)
    assert uncut.status == "optimal" and uncut.iterations > 4
    args = [mps, "--backend", "numpy64", "--checkpoint", str(tmp_path), "--chunk", "2", "--reg-min", "1e-8",
            "--pcg-maxiter", "2000"]
    assert main(args + ["--max-iter", "4"]) == 3
    log = json.loads((tmp_path / "afiro_numpy64.json").read_text())
    assert [c["iterations"] for c in log["chunks"]] == [2, 2]
    with np.load(tmp_path / "afiro_numpy64.npz") as saved:
        assert sorted(saved.files) == ["rank", "regularisation_state", "s", "x", "y"]
    assert main(args) == 0
    log = json.loads((tmp_path / "afiro_numpy64.json").read_text())
    assert sum(c["iterations"] for c in log["chunks"]) == uncut.iterations
    assert log["chunks"][-1]["status"] == "optimal"
    assert log["chunks"][-1]["objective"] == pytest.approx(uncut.objective, rel=1e-9)
    assert abs(log["chunks"][-1]["objective"] - (-464.753142857)) / 464.753142857 < 1e-6     # NETLIB's
    chunked = [h for c in log["chunks"] for h in c["history"][:-1]]
    for a, b in zip(uncut.history, chunked):
        for key in ("primal_residual", "dual_residual", "gap"):
            assert b[key] == pytest.approx(a[key], rel=1e-6), key
    capsys.readouterr()
    assert main(args) == 0 and "already ended" in capsys.readouterr().out


def test_chunks_budget_and_settings(tmp_path, capsys):
    """The budget stops after the chunk that passes it (one, with a budget of 1e-9 s) and
    shortens a chunk to what fits (from the last chunk's time an iteration); the checkpoint
    refuses other settings, naming them; a gpu run (llvmpipe) in chunks with the
    float-float solution vector solves afiro to HiGHS's objective."""
    import json

    from experiments.mfipm.chunks import main
    from gpgpu.lp.netlib import netlib_dir

    mps = str(netlib_dir() / "afiro.mps.gz")
    args = [mps, "--checkpoint", str(tmp_path), "--chunk", "2", "--reg-min", "1e-8"]
    assert main(args + ["--backend", "numpy64", "--budget", "1e-9"]) == 3
    log_file = tmp_path / "afiro_numpy64.json"
    log = json.loads(log_file.read_text())
    assert len(log["chunks"]) == 1
    alone = tmp_path / "alone"                 # the log without its point
    alone.mkdir()
    (alone / log_file.name).write_text(log_file.read_text())
    capsys.readouterr()
    assert main([mps, "--checkpoint", str(alone), "--chunk", "2", "--reg-min", "1e-8", "--backend", "numpy64"]) == 2
    assert "no point" in capsys.readouterr().err
    # resumed with a last chunk of 1000 s an iteration: 1500 s fit one iteration, not --chunk 2
    log["chunks"][-1]["seconds"] = 1000.0 * log["chunks"][-1]["iterations"]
    log_file.write_text(json.dumps(log))
    assert main(args + ["--backend", "numpy64", "--budget", "1500"]) == 0
    log = json.loads(log_file.read_text())
    assert log["chunks"][1]["iterations"] == 1 and all(c["iterations"] == 2 for c in log["chunks"][2:-1])
    capsys.readouterr()
    assert main(args + ["--backend", "numpy64", "--rank", "7"]) == 2
    assert "rank" in capsys.readouterr().err
    assert main(args + ["--backend", "gpu", "--solution", "float-float"]) == 0
    log = json.loads((tmp_path / "afiro_gpu.json").read_text())
    assert log["settings"]["solution"] == "float-float" and len(log["chunks"]) >= 2
    assert abs(log["chunks"][-1]["objective"] - (-464.753142857)) / 464.753142857 < 1e-6


def test_tools_refuse_an_unknown_problem_without_a_traceback(tmp_path, capsys):
    """mfipm.chunks and mfipm.emulate32 with a name that is neither a QAPLIB file nor an MPS
    file: exit status 2 and the file looked for, not a FileNotFoundError's traceback."""
    from experiments.mfipm import chunks, emulate32

    assert chunks.main(["nosuch", "--checkpoint", str(tmp_path)]) == 2
    assert "QAPLIB file not found" in capsys.readouterr().err
    assert emulate32.main(["nosuch"]) == 2
    assert "QAPLIB file not found" in capsys.readouterr().err
