"""Presets of gpgpu.lp.solve: "paper" (the paper's algorithm as printed), "robust" (the
default) and "fast" (robust with the speed options that keep the answer), for both methods;
an option given to solve overrides its preset."""
import numpy as np
import pytest

import gpgpu.lp.api as lp
from gpgpu.lp import Problem, preset_options, solve
from gpgpu.lp.netlib import PAPER_TABLE3, PROBLEMS

highspy = pytest.importorskip("highspy")

from test_lp_mehrotra import netlib, rel  # noqa: E402

#: what each preset must set, written out here (not read from PRESETS)
MEHROTRA = {
    "paper": {"refine": False, "presolve": False, "scale": False, "normalize": False, "correct_primal": False,
              "free_safeguard": False, "regularize": False, "bounds": "rows"},
    "robust": {},
    "fast": {"correct_primal": True},
}
#: the numpy back ends: the paper's Cholesky loop on the dense A under "paper", LAPACK otherwise
MEHROTRA_NUMPY = {
    "paper": {"factorization": "loop", "adat": "dense"},
    "robust": {},
    "fast": {},
}
#: robust and fast draw the same fast kernels on the GPU, the factor with its inverse by blocks of 16
#: where the refinement follows it
FAST_KERNELS = {"adat": "points", "substitution": "inverse", "pivot": "onepass", "reductions": "fan", "fuse": True,
                "factor_block": "auto"}
MEHROTRA_GPU = {
    "paper": {"adat": "inner", "substitution": "outer", "pivot": "separate", "update": "square", "reductions": "pingpong",
              "fuse": False, "factor_precision": "float32"},
    "robust": FAST_KERNELS,
    "fast": FAST_KERNELS,
}
MATRIX_FREE = {
    "paper": {"refine": False, "presolve": False, "scale": False, "normalize": False, "adaptive": False,
              "bounds": "rows"},
    "robust": {"adaptive": True},
    "fast": {"adaptive": True},
}
MATRIX_FREE_GPU = {
    # paper: T-ELL with the dense rows split off, the nearest to 002's DHTELL2; vectors in one row
    "paper": {"format": "tell", "sums": "pingpong", "pcg_check": 1, "solution": "float32", "fused": False,
              "fold": None},
    # robust: the dense part's sums by fans of 32 texels (beyond 000's halving passes)
    "robust": {"sums": "fan"},
    # fast: the packed format (beyond 002) for A, its transposed copy and A∘A
    "fast": {"format": "packed", "sums": "fan"},
}


@pytest.mark.parametrize("preset", ["paper", "robust", "fast"])
def test_each_preset_sets_its_options(preset):
    assert preset_options(preset, "mehrotra", "numpy64") == {**MEHROTRA[preset], **MEHROTRA_NUMPY[preset]}
    assert preset_options(preset, "mehrotra", "gpu") == {**MEHROTRA[preset], **MEHROTRA_GPU[preset]}
    assert preset_options(preset, "matrix-free", "numpy64") == MATRIX_FREE[preset]
    assert preset_options(preset, "matrix-free", "gpu") == {**MATRIX_FREE[preset], **MATRIX_FREE_GPU[preset]}
    # "onepass" is a variant of the outer Cholesky: with cholesky="inner" fast leaves the pivots alone
    inner = preset_options(preset, "mehrotra", "gpu", cholesky="inner")
    assert "pivot" not in inner or inner["pivot"] == "separate"
    assert preset_options(preset) == preset_options(preset, "mehrotra", "gpu")


def test_an_option_overrides_its_preset_and_none_leaves_it():
    assert preset_options("paper", "mehrotra", "gpu", presolve=True, adat="outer")["presolve"] is True
    assert preset_options("paper", "mehrotra", "gpu", adat="outer")["adat"] == "outer"
    assert preset_options("paper", "mehrotra", "gpu", refine=None)["refine"] is False
    assert preset_options("robust", "matrix-free", "numpy64", adaptive=False)["adaptive"] is False


def spy(monkeypatch, module, name):
    """Record the keyword arguments of module.name's calls, and call it."""
    calls = []
    real = getattr(module, name)

    def wrapper(*a, **k):
        calls.append(k)
        return real(*a, **k)

    monkeypatch.setattr(module, name, wrapper)
    return calls


@pytest.mark.parametrize("preset", ["paper", "robust", "fast"])
def test_mehrotra_runs_with_its_presets_options(monkeypatch, preset):
    """What reaches the back end and Algorithm 3 (numpy64 at 1e-8, where robust is the robust
    solver); robust: the presolve, correction and safeguard on; paper: all off."""
    p, ref = netlib("afiro")
    algo = spy(monkeypatch, lp, "mehrotra")
    backends = spy(monkeypatch, lp, "get_backend")
    r = solve(p, backend="numpy64", eps=1e-8, preset=preset)
    assert r.status == "optimal" and rel(r.objective, ref) <= 1e-6
    assert r.preset == preset and r.options == {**MEHROTRA[preset], **MEHROTRA_NUMPY[preset]}
    assert r.method == "mehrotra"
    on = preset != "paper"
    assert algo[-1]["correct_primal"] is on and algo[-1]["free_safeguard"] is (preset == "robust" or on)
    assert backends[-1]["refine"] is False and (r.presolve is not None) is on
    # an option given overrides the preset
    r = solve(p, backend="numpy64", eps=1e-8, preset=preset, correct_primal=not on, presolve=not on)
    assert algo[-1]["correct_primal"] is (not on) and (r.presolve is not None) is (not on)
    assert r.status == "optimal" and rel(r.objective, ref) <= 1e-6


@pytest.mark.parametrize("preset", ["paper", "fast"])
def test_mehrotra_gpu_presets_reach_the_back_end(monkeypatch, preset):
    p, ref = netlib("afiro")
    backends = spy(monkeypatch, lp, "get_backend")
    eps = PAPER_TABLE3["afiro"]["eps"]
    r = solve(p, backend="gpu", eps=eps, preset=preset)
    assert r.status == "optimal" and rel(r.objective, ref) <= eps
    for k, v in MEHROTRA_GPU[preset].items():
        assert backends[-1][k] == v, k
    solve(p, backend="gpu", eps=eps, preset=preset, reductions="pingpong" if preset == "fast" else "fan")
    assert backends[-1]["reductions"] == ("pingpong" if preset == "fast" else "fan")


@pytest.mark.parametrize("preset", ["paper", "robust", "fast"])
def test_matrix_free_runs_with_its_presets_options(monkeypatch, preset):
    import gpgpu.lp.matrix_free as mf

    p, ref = netlib("afiro")
    algo = spy(monkeypatch, mf, "matrix_free")
    r = solve(p, method="matrix-free", backend="numpy64", eps=1e-8, preset=preset)
    assert r.status == "optimal" and rel(r.objective, ref) <= 1e-6
    assert r.options == MATRIX_FREE[preset] and algo[-1]["adaptive"] is (preset != "paper")
    assert r.method == "matrix-free"
    solve(p, method="matrix-free", backend="numpy64", eps=1e-8, preset=preset, adaptive=preset == "paper")
    assert algo[-1]["adaptive"] is (preset == "paper")


@pytest.mark.parametrize("preset", ["paper", "fast"])
def test_matrix_free_gpu_presets_reach_the_back_end(monkeypatch, preset):
    import gpgpu.lp.matrix_free as mf

    p, ref = netlib("afiro")
    backends = spy(monkeypatch, mf, "get_matrix_free_backend")
    r = solve(p, method="matrix-free", backend="gpu", eps=1e-6, preset=preset)
    assert r.status == "optimal" and rel(r.objective, ref) <= 1e-6
    for k, v in MATRIX_FREE_GPU[preset].items():
        assert backends[-1][k] == v, k
    solve(p, method="matrix-free", backend="gpu", eps=1e-6, preset=preset, pcg_check=4)
    assert backends[-1]["pcg_check"] == 4


@pytest.mark.parametrize("name", PROBLEMS)
def test_table3_of_000_reproduces_with_the_paper_preset(name):
    """Table 3 of paper 000 (tests/data/paper000_table3.tsv, checked in test_lp_mps) at the
    paper's eps with preset="paper": numpy32, the paper's "MATLAB version" in single precision."""
    p, ref = netlib(name)
    eps = PAPER_TABLE3[name]["eps"]
    r = solve(p, backend="numpy32", eps=eps, preset="paper")
    assert r.status == "optimal", r.message
    assert rel(r.objective, ref) <= eps
    assert r.iterations <= 1.5 * PAPER_TABLE3[name]["iterations"]
    assert r.presolve is None and r.backend == "numpy32"


@pytest.mark.parametrize("name", ["afiro", "sc50b"])
def test_table3_of_000_on_the_gpu_with_the_paper_preset(name):
    p, ref = netlib(name)
    eps = PAPER_TABLE3[name]["eps"]
    r = solve(p, backend="gpu", eps=eps, preset="paper")
    assert r.status == "optimal", r.message
    assert rel(r.objective, ref) <= eps and r.iterations <= 1.5 * PAPER_TABLE3[name]["iterations"]
    assert r.backend == "gpu"                         # no refinement


def test_unknown_preset_is_named():
    with pytest.raises(ValueError, match="unknown preset 'fastest'.*'paper', 'robust', 'fast'"):
        solve("afiro", backend="numpy64", preset="fastest")
    with pytest.raises(ValueError, match="adaptive is an option of method='matrix-free'"):
        solve("afiro", backend="numpy64", adaptive=True)
    with pytest.raises(TypeError, match="adaptive must be True or False"):
        solve("afiro", backend="numpy64", method="matrix-free", adaptive="yes")


def test_cli_preset(capsys):
    from gpgpu.lp.__main__ import main

    netlib("afiro")
    assert main(["afiro", "--backend", "numpy64", "--eps", "1e-8", "--preset", "paper", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "preset paper" in out and "refine False" in out
    assert "options: refine=False, presolve=False, scale=False, normalize=False, bounds=rows, correct_primal=False" in out
    assert main(["afiro", "--backend", "numpy64", "--eps", "1e-8", "--preset", "paper", "--presolve",
                 "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "presolve=True" in out and "presolve (HiGHS)" in out
    assert main(["afiro", "--backend", "numpy64", "--eps", "1e-8", "--quiet"]) == 0
    assert "preset robust" in capsys.readouterr().out


@pytest.mark.parametrize("method", ["mehrotra", "matrix-free"])
@pytest.mark.parametrize("presolve", [False, True])
def test_the_result_names_its_method_where_no_iteration_ran(method, presolve):
    """An LP that the reductions of the standard form (presolve=False) or HiGHS's presolve solve
    whole: no method iterates, and the result still says which one was asked (a field of every
    LPResult, not an attribute that only the matrix-free iteration sets)."""
    p = Problem.from_inequalities(np.array([1.0, 2.0]), bounds=[(5, 5), (-1, -1)])
    r = solve(p, method=method, backend="numpy64", presolve=presolve)
    assert r.status == "optimal" and r.iterations == 0 and r.objective == 3.0
    assert r.method == method


MATRIX_FREE_FIELDS = ("pcg_iterations", "pcg_unconverged", "pcg_stops", "rank", "last_point",
                      "regularisation_state", "adaptive_state", "timers", "counts")


@pytest.mark.parametrize("method", ["mehrotra", "matrix-free"])
def test_every_result_has_the_same_fields(method):
    """One shape for every answer: the fields of LPResult on both methods' results (no attribute
    that only one method sets), the matrix-free iteration's None where it did not run (Mehrotra's
    method, an LP decided before any iteration) and filled where it did."""
    import dataclasses

    from gpgpu.lp import LPResult

    names = {f.name for f in dataclasses.fields(LPResult)}
    assert set(MATRIX_FREE_FIELDS) | {"method", "preset", "options", "warnings"} <= names
    p, _ = netlib("afiro")
    iterated = solve(p, method=method, backend="numpy64")
    decided = solve(Problem.from_inequalities(np.array([1.0, 2.0]), bounds=[(5, 5), (-1, -1)]), method=method,
                    backend="numpy64")
    for r in (iterated, decided):
        assert set(vars(r)) == names, set(vars(r)) ^ names     # nothing set beside the fields
        assert r.preset == "robust" and isinstance(r.options, dict) and r.warnings == []
    assert all(getattr(decided, f) is None for f in MATRIX_FREE_FIELDS)
    ran = [getattr(iterated, f) is not None for f in MATRIX_FREE_FIELDS]
    assert all(ran) if method == "matrix-free" else not any(ran)
    if method == "matrix-free":
        assert iterated.pcg_iterations > 0 and iterated.rank >= 1 and len(iterated.last_point) == 3
