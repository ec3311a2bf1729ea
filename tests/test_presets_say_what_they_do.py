"""The "paper" presets do what their documentation says: each guide page's table of the paper
preset (docs/guide/lp.md, docs/guide/matrix-free.md, docs/guide/sparse.md) lists every option
the preset sets with the value it sets, and every constant it says stays the project's with its
value in the code; each row says whose choice the value is. A preset or a constant changed
without its table (or the other way round) fails here."""
import importlib
import inspect
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import gpgpu
import gpgpu.lp as lp
from gpgpu.lp import PRESETS, paper_eps, preset_options
from gpgpu.lp.gpu_backend import GPUBackend
from gpgpu.lp.netlib import PAPER_TABLE3

# the modules (gpgpu.cg and gpgpu.lp.mehrotra are also the names of functions)
cg_module = importlib.import_module("gpgpu.cg")
mf = importlib.import_module("gpgpu.lp.matrix_free")
mehrotra = importlib.import_module("gpgpu.lp.mehrotra")
regularisation = importlib.import_module("gpgpu.lp.regularisation")

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "guide"
HEADING = "The paper preset, option by option"
ROW = re.compile(r"^\| `([^`]+)`(?: `([^`]+)`)?((?: \|[^|`]*)?) \| `([^`]+)` \| (.+) \|$")


def tables(page: str) -> list:
    """The tables of the page's section HEADING: a list of tables, each a list of rows
    (name, applies to or None, value, whose)."""
    text = (GUIDE / page).read_text()
    m = re.search(rf"^(#+) {re.escape(HEADING)}\n", text, re.M)
    assert m, f"{page} has no section '{HEADING}'"
    level = len(m.group(1))
    rest = text[m.end():]
    end = re.search(rf"^#{{1,{level}}} ", rest, re.M)
    body = rest[:end.start()] if end else rest
    out, current = [], None
    for line in body.splitlines():
        if not line.startswith("|"):
            current = None
            continue
        if current is None:
            current = []
            out.append(current)
        row = ROW.match(line)
        if row:
            name = row.group(1) + (f" {row.group(2)}" if row.group(2) else "")
            applies = row.group(3).strip(" |") or None
            current.append((name, applies, row.group(4), row.group(5)))
    return [t for t in out if t]


def value(text: str):
    """A table's value: a Python literal, or a constant expression such as 1.0 - 1e-6."""
    return eval(text, {"__builtins__": {}})          # noqa: S307 -- the docs' own table


def check_whose(rows):
    for name, _, _, whose in rows:
        assert whose.startswith(("paper", "the project's")), (name, whose)


def options_of(rows, kind):
    """{option: value} of the rows that apply to ``kind`` ("gpu" or "numpy") or to all."""
    return {name: value(v) for name, applies, v, _ in rows if applies in ("all", kind)}


def default(function, name):
    return inspect.signature(function).parameters[name].default


# --------------------------------------------------------------------------- Mehrotra's method

def test_the_lp_guide_lists_every_option_of_the_paper_preset():
    options, constants = tables("lp.md")
    check_whose(options + constants)
    for backend, kind in (("gpu", "gpu"), ("numpy32", "numpy"), ("numpy64", "numpy")):
        documented = options_of(options, kind)
        assert documented.pop("eps") is None is default(lp.solve, "eps")
        assert preset_options("paper", "mehrotra", backend) == documented, backend
    # every option the table names is one the preset sets (or eps)
    listed = {(name, applies) for name, applies, _, _ in options}
    for section, kind in (("any", "all"), ("mehrotra", "all"), ("mehrotra/gpu", "gpu"), ("mehrotra/numpy", "numpy")):
        for name in PRESETS["paper"].get(section, {}):
            assert (name, kind) in listed, (section, name)
    assert len(listed) == len(options)


def test_the_lp_guide_lists_what_stays_the_projects():
    _, constants = tables("lp.md")
    actual = {
        "max_iter": default(lp.solve, "max_iter"),
        "gpgpu.lp.mehrotra.ETA_MAX": mehrotra.ETA_MAX,
        "gpgpu.lp.mehrotra.starting_point floor_rel": default(mehrotra.starting_point, "floor_rel"),
        "gpgpu.lp.mehrotra.mehrotra stall_window": default(mehrotra.mehrotra, "stall_window"),
        "pivot_tol": default(GPUBackend, "pivot_tol"),
    }
    assert {name: value(v) for name, _, v, _ in constants} == actual
    assert all(whose.startswith("the project's") for *_, whose in constants)


def test_the_paper_preset_draws_table_3s_square_update():
    assert preset_options("paper", "mehrotra", "gpu")["update"] == "square"
    # the square update is the outer form's with separate pivots: the preset leaves it out where
    # the caller asks for another form or for the one-pass steps, and an update given is kept
    assert "update" not in preset_options("paper", "mehrotra", "gpu", cholesky="inner")
    assert "update" not in preset_options("paper", "mehrotra", "gpu", pivot="onepass")
    assert preset_options("paper", "mehrotra", "gpu", update="triangle")["update"] == "triangle"
    for preset in ("robust", "fast"):
        assert "update" not in preset_options(preset, "mehrotra", "gpu")
    for backend in ("numpy32", "numpy64"):
        assert "update" not in preset_options("paper", "mehrotra", backend)


def test_the_paper_preset_takes_table_3s_eps():
    for name, row in PAPER_TABLE3.items():
        assert paper_eps(SimpleNamespace(name=name.upper())) == row["eps"]
        assert paper_eps(SimpleNamespace(name=name), "robust") == lp.DEFAULT_EPS == 1e-6
        assert paper_eps(SimpleNamespace(name=name), "paper", "matrix-free") == 1e-6
    assert paper_eps(SimpleNamespace(name="nug12")) == 1e-6
    assert 3e-5 <= min(r["eps"] for r in PAPER_TABLE3.values()) <= max(r["eps"] for r in PAPER_TABLE3.values()) <= 2e-3


def _need_afiro():
    pytest.importorskip("highspy")
    from gpgpu.lp.netlib import netlib_path

    try:
        netlib_path("afiro")
    except FileNotFoundError:
        pytest.skip("afiro is not shipped")


def test_solve_with_the_paper_preset_runs_at_table_3s_eps():
    _need_afiro()
    r = lp.solve("afiro", backend="numpy32", preset="paper")
    assert r.status == "optimal" and "eps = 4e-05" in r.message
    r = lp.solve("afiro", backend="numpy64")                      # robust: 1e-6
    assert r.status == "optimal" and "eps = 1e-06" in r.message
    r = lp.solve("afiro", backend="numpy32", preset="paper", eps=1e-4)
    assert "eps = 0.0001" in r.message
    with pytest.raises(TypeError, match="eps must be a number"):
        lp.solve("afiro", backend="numpy64", eps="1e-6")


def test_the_square_update_gives_the_triangle_updates_factor(ctx):
    _need_afiro()
    square = lp.solve("afiro", backend="gpu", preset="paper")
    triangle = lp.solve("afiro", backend="gpu", preset="paper", update="triangle")
    assert square.status == triangle.status == "optimal" and square.options["update"] == "square"
    # the same factor up to float32 rounding (bit-identical on llvmpipe; a driver may contract
    # the two programs' multiply-adds differently)
    assert abs(square.iterations - triangle.iterations) <= 1
    np.testing.assert_allclose(square.x_std, triangle.x_std, rtol=0, atol=1e-4 * np.abs(triangle.x_std).max())


# --------------------------------------------------------------------------- the matrix-free method

def test_the_matrix_free_guide_lists_every_option_of_the_paper_preset():
    options, constants = tables("matrix-free.md")
    check_whose(options + constants)
    for backend, kind in (("gpu", "gpu"), ("numpy64", "numpy")):
        assert preset_options("paper", "matrix-free", backend) == options_of(options, kind), backend
    listed = {(name, applies) for name, applies, _, _ in options}
    for section, kind in (("any", "all"), ("matrix-free", "all"), ("matrix-free/gpu", "gpu"),
                          ("matrix-free/numpy", "numpy")):
        for name in PRESETS["paper"].get(section, {}):
            assert (name, kind) in listed, (section, name)
    assert len(listed) == len(options)
    # ELLPACK is documented as the project's choice (002's Table 3 ran DHTELL2), not as 002's
    whose = {name: w for name, _, _, w in options}
    assert whose["format"].startswith("the project's") and "DHTELL2" in whose["format"]


def test_the_matrix_free_guide_lists_what_stays_the_projects():
    _, constants = tables("matrix-free.md")
    mf_gpu = importlib.import_module("gpgpu.lp.matrix_free_gpu")
    actual = {
        "gpgpu.lp.matrix_free.DEFAULT_RANK": mf.DEFAULT_RANK,
        "gpgpu.lp.regularisation.FIXED_REG_MIN": regularisation.FIXED_REG_MIN,
        "gpgpu.lp.regularisation.REG_MAX": regularisation.REG_MAX,
        "gpgpu.lp.matrix_free.PCG_REL_FIXED": mf.PCG_REL_FIXED,
        "gpgpu.lp.matrix_free.PCG_PRIMAL_SHARE": mf.PCG_PRIMAL_SHARE,
        "gpgpu.lp.matrix_free_gpu.GPUMatrixFree.pcg_floor": mf_gpu.GPUMatrixFree.pcg_floor,
        "gpgpu.lp.matrix_free.STEP_TO_BOUNDARY": mf.STEP_TO_BOUNDARY,
        "gpgpu.lp.matrix_free.START_SHIFT": mf.START_SHIFT,
        "gpgpu.lp.matrix_free_gpu.PIVOT_TOLERANCE": mf_gpu.PIVOT_TOLERANCE,
        "gpgpu.lp.matrix_free_gpu.HUGE_PIVOT": mf_gpu.HUGE_PIVOT,
        "gpgpu.lp.matrix_free_gpu.REPLACED_DIAGONAL": mf_gpu.REPLACED_DIAGONAL,
        "gpgpu.lp.matrix_free_gpu.SCHUR_FLOOR": mf_gpu.SCHUR_FLOOR,
        "gpgpu.lp.matrix_free_fused.FACTOR_STEPS": importlib.import_module("gpgpu.lp.matrix_free_fused").FACTOR_STEPS,
        "gpgpu.lp.matrix_free.STALL_RAY_RATIO": mf.STALL_RAY_RATIO,
        "gpgpu.lp.matrix_free.matrix_free stall_window": default(mf.matrix_free, "stall_window"),
        "max_iter": default(lp.solve, "max_iter"),
    }
    documented = {name: value(v) for name, _, v, _ in constants}
    assert documented == actual
    assert all(whose.startswith("the project's") for *_, whose in constants)


# --------------------------------------------------------------------------- conjugate gradients

def test_the_sparse_guide_lists_every_option_of_cgs_paper_preset():
    options, _ = tables("sparse.md")
    check_whose(options)
    documented = {name: value(v) for name, _, v, _ in options}
    actual = dict(cg_module.PRESETS["paper"], format=cg_module.PRESET_FORMATS["paper"])
    assert documented == actual
    # 003's sorted corrigan storage and Shewchuk's recomputation every 50 are the preset's, 003's
    assert actual["format"] == "corrigan" and actual["recompute_every"] == 50
    whose = {name: w for name, _, _, w in options}
    assert whose["format"].startswith("paper") and "sorted" in whose["format"]
    assert whose["recompute_every"].startswith("paper") and "Shewchuk" in whose["recompute_every"]
    # the row says where the recomputation cannot converge, with the measured case
    assert "3e-7" in whose["recompute_every"] and "maxiter" in whose["recompute_every"]


def test_the_sparse_guide_lists_what_cgs_paper_preset_adds():
    from gpgpu import SparseStream

    _, constants = tables("sparse.md")
    actual = {
        "gpgpu.cg.MATRIX_RANGE": cg_module.MATRIX_RANGE,
        "gpgpu.cg.VECTOR_RANGE": cg_module.VECTOR_RANGE,
        "gpgpu.cg.FREEZE_FLOOR": cg_module.FREEZE_FLOOR,
        "gpgpu.cg.STALL_WINDOW": cg_module.STALL_WINDOW,
        "gpgpu.sparse.SparseStream.from_scipy dense_split": default(SparseStream.from_scipy, "dense_split"),
        "maxiter": default(gpgpu.cg, "maxiter"),
        "plan": default(gpgpu.cg, "plan"),
    }
    assert {name: value(v) for name, _, v, _ in constants} == actual
    assert all(whose.startswith("the project's") for *_, whose in constants)


def _poisson(k):
    import scipy.sparse as sp

    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(k, k))
    return (sp.kron(sp.eye(k), T) + sp.kron(T, sp.eye(k))).tocsr()


def test_cgs_paper_preset_recomputes_every_50_in_003s_sorted_storage(ctx):
    """The paper preset stores a scipy A sorted in the corrigan format (one program per count:
    2-D Poisson's rows have 3, 4 or 5 non-zeros, 3 passes a product) and draws r = b - A x at
    iterations 50 and 100: products = iterations + 2 (+ 1 for the answer's b - A x). The answer
    against numpy's float64 solve."""
    from gpgpu import counters

    A = _poisson(64)                                   # 120 iterations reach no rtol of 1e-6
    b = np.random.default_rng(3).standard_normal(A.shape[0])
    with counters.count(time=False, trace=False) as c:
        res = gpgpu.cg(A, b, rtol=1e-6, maxiter=120, preset="paper")
    assert res.format == "corrigan" and res.iterations == 120 and res[1] == 120
    assert c.passes("gather_vector") == 1     # b sorted on the GPU (x is unsorted on the host)
    products = [c.passes(f"sparse_corrigan_NNZ{k}") for k in (3, 4, 5)]
    assert products == [120 + 2 + 1] * 3 and c.passes() == sum(s.passes for s in c.stats.values())
    with counters.count(time=False, trace=False) as c:
        gpgpu.cg(A, b, rtol=1e-6, maxiter=120, preset="paper", recompute_every=False)
    assert [c.passes(f"sparse_corrigan_NNZ{k}") for k in (3, 4, 5)] == [120 + 1] * 3
    x = gpgpu.cg(A, b, rtol=1e-5, preset="paper")[0]
    exact = np.linalg.solve(A.toarray(), b)
    assert np.linalg.norm(x - exact) <= 1e-4 * np.linalg.norm(exact)


def test_cgs_paper_preset_compiles_every_program_as_003(ctx):
    """A matrix with more distinct row counts than from_scipy's default limit (64): the paper
    preset still stores it in the corrigan format, a program per count, as 003 did."""
    import scipy.sparse as sp

    # dense blocks of 1 .. 66 unknowns (I + 0.5/s off the diagonal: SPD): rows of 1 .. 66 entries
    A = sp.block_diag([np.eye(k) + 0.5 / k * (np.ones((k, k)) - np.eye(k)) for k in range(1, 67)]).tocsr()
    assert np.unique(np.diff(A.indptr)).size > 64
    b = np.random.default_rng(4).standard_normal(A.shape[0])
    res = gpgpu.cg(A, b, rtol=1e-6, preset="paper")
    assert res.format == "corrigan" and res[1] == 0
    exact = np.linalg.solve(A.toarray(), b)
    assert np.linalg.norm(res[0] - exact) <= 1e-5 * np.linalg.norm(exact)


def test_no_module_docstring_of_the_lp_methods_carries_a_measurement_log():
    """Module docstrings say what the code does and point to the docs for what was measured."""
    for module in (mf, mehrotra):
        doc = module.__doc__
        assert "docs/" in doc, module.__name__
        for log in ("Measured", "measured", "nug20 (", "fffff800", "agg3", "from 36 to 37"):
            assert log not in doc, (module.__name__, log)
    assert "from 36 to 37" not in inspect.getsource(mehrotra)


def test_no_module_docstring_of_cg_carries_a_measurement_log():
    """The cg package's modules say what they do; the measurements are in docs/guide/sparse.md."""
    import pkgutil

    docs = {"gpgpu.cg": cg_module.__doc__}
    for info in pkgutil.iter_modules(cg_module.__path__):
        docs[f"gpgpu.cg.{info.name}"] = importlib.import_module(f"gpgpu.cg.{info.name}").__doc__
    assert {"gpgpu.cg.api", "gpgpu.cg.standard", "gpgpu.cg.fan", "gpgpu.cg.single_reduction"} <= set(docs)
    for name, doc in docs.items():
        assert doc, name
        for log in ("Measured", "measured", "llvmpipe", "H200", "scipy 283", "365 iterations"):
            assert log not in doc, (name, log)


# --------------------------------------------------------------------------- the dense functions

DENSE_HEADING = "The papers' settings, option by option"
FUNCTION = re.compile(r"^#+ `gpgpu\.(\w+)`$")
DENSE = ("cholesky", "lu", "lu_factor", "gauss_jordan", "adat", "lstsq_weighted", "cho_solve", "lu_solve")


def defaults_of(function) -> dict:
    """{name: default} of every parameter of ``function`` that has one."""
    return {name: p.default for name, p in inspect.signature(function).parameters.items()
            if p.default is not inspect.Parameter.empty}


def dense_tables() -> dict:
    """{function name: rows (name, None, value, whose)} of dense.md's section DENSE_HEADING."""
    text = (GUIDE / "dense.md").read_text()
    m = re.search(rf"^(#+) {re.escape(DENSE_HEADING)}\n", text, re.M)
    assert m, f"dense.md has no section '{DENSE_HEADING}'"
    rest = text[m.end():]
    end = re.search(rf"^#{{1,{len(m.group(1))}}} ", rest, re.M)
    out, function = {}, None
    for line in (rest[:end.start()] if end else rest).splitlines():
        head = FUNCTION.match(line)
        if head:
            function = head.group(1)
            continue
        row = ROW.match(line)
        if row:
            assert function, line
            name = row.group(1) + (f" {row.group(2)}" if row.group(2) else "")
            out.setdefault(function, []).append((name, row.group(3).strip(" |") or None, row.group(4), row.group(5)))
    return out


def test_the_dense_guide_lists_every_default():
    tables = dense_tables()
    for name in DENSE:
        rows = tables.get(name, [])
        check_whose(rows)
        assert all(applies is None for _, applies, _, _ in rows), name
        assert [r[0] for r in rows] == list(defaults_of(getattr(gpgpu, name))), name     # each once, in order
        assert {option: value(v) for option, _, v, _ in rows} == defaults_of(getattr(gpgpu, name)), name
    assert set(tables) <= set(DENSE)


def test_a_planted_departure_fails_its_table(monkeypatch):
    """A paper preset (or a dense default) changed in the code and not in its guide's table fails
    the table's test (and so docs/departures.md, rendered from the tables, cannot drift)."""
    monkeypatch.setitem(PRESETS["paper"]["matrix-free"], "adaptive", True)
    with pytest.raises(AssertionError):
        test_the_matrix_free_guide_lists_every_option_of_the_paper_preset()
    monkeypatch.undo()
    monkeypatch.setitem(cg_module.PRESETS["paper"], "recompute_every", 25)
    with pytest.raises(AssertionError):
        test_the_sparse_guide_lists_every_option_of_cgs_paper_preset()
    monkeypatch.undo()
    original = gpgpu.lu_factor

    def lu_factor(A, pivoting="partial", transfer="rtt", check=False, pivots="readback", variant="faithful",
                  block=8):
        return original(A, pivoting, transfer, check, pivots, variant, block)
    monkeypatch.setattr(gpgpu, "lu_factor", lu_factor)
    with pytest.raises(AssertionError):
        test_the_dense_guide_lists_every_default()
    monkeypatch.undo()
    test_the_dense_guide_lists_every_default()
