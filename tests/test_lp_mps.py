"""MPS reading and the conversion to the standard form (4.1)-(4.3) of paper 000."""
import gzip

import numpy as np
import pytest

highspy = pytest.importorskip("highspy")

from gpgpu.lp import Problem, read_mps, solve, standardize  # noqa: E402
from gpgpu.lp.netlib import PAPER_TABLE3, PROBLEMS, netlib_dir, netlib_path  # noqa: E402


def _netlib_or_skip():
    try:
        return netlib_dir()
    except FileNotFoundError as e:
        pytest.skip(str(e))


def highs_solve(path):
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(path))
    h.run()
    return h.getModelStatus(), h.getInfo().objective_function_value, \
        np.array(h.getSolution().col_value)


# --------------------------------------------------------------------------- NETLIB
SIZES = {  # (rows, cols) as HiGHS reads them; standard form (m, n)
    "afiro": ((27, 32), (27, 51)),
    "sc50b": ((50, 48), (48, 76)),       # two empty rows dropped by the presolve
    "blend": ((74, 83), (74, 114)),
    "adlittle": ((56, 97), (56, 138)),
}


@pytest.mark.parametrize("name", sorted(SIZES))
def test_netlib_sizes_and_objective(name):
    _netlib_or_skip()
    path = netlib_path(name)
    p = read_mps(path)
    orig, std = SIZES[name]
    assert p.name.lower() == name
    assert p.original_size == orig
    assert p.standard_size == std
    # Table 3 prints rows + 1 (the objective row) x columns
    r, c = PAPER_TABLE3[name]["size"].split("x")
    assert (int(r) - 1, int(c)) == orig
    status, obj, x = highs_solve(path)
    assert status == highspy.HighsModelStatus.kOptimal
    xs = p.from_original(x)
    assert np.abs(p.A @ xs - p.b).max() <= 1e-9 * (1 + np.abs(p.b).max())
    assert xs.min() >= -1e-9
    assert p.original_objective(xs) == pytest.approx(obj, rel=1e-12, abs=1e-9)
    np.testing.assert_allclose(p.to_original(xs), x, atol=1e-12)


def test_netlib_objective_constant_kept():
    _netlib_or_skip()
    p = read_mps(netlib_path("e226"))          # its RHS on the objective row is a constant
    assert p.c0 == pytest.approx(7.113)
    _, obj, x = highs_solve(netlib_path("e226"))
    assert p.original_objective(p.from_original(x)) == pytest.approx(obj, rel=1e-10)


def test_netlib_dir_env(monkeypatch, tmp_path):
    monkeypatch.setenv("GPGPU_NETLIB_DIR", str(tmp_path))
    assert netlib_dir() == tmp_path
    with pytest.raises(FileNotFoundError, match="afiro"):
        netlib_path("afiro")
    monkeypatch.setenv("GPGPU_NETLIB_DIR", str(tmp_path / "nope"))
    with pytest.raises(FileNotFoundError, match="GPGPU_NETLIB_DIR"):
        netlib_dir()


def paper_table3_rows():
    """Table 3 as printed in the text of paper 000, copied line for line into
    ``tests/data/paper000_table3.tsv`` and parsed here: an independent source for the constants
    typed into ``PAPER_TABLE3``."""
    import re
    from pathlib import Path

    lines = (Path(__file__).parent / "data" / "paper000_table3.tsv").read_text(encoding="utf-8").splitlines()
    rows = {}
    for line in lines:
        cells = line.split("\t")
        if len(cells) == 8 and re.fullmatch(r"\d+×\d+", cells[1]):
            mant, exp = re.fullmatch(r"(\d+)×10\^\{(-?\d+)\}", cells[2]).groups()
            rows[cells[0]] = {"size": cells[1].replace("×", "x"), "eps": float(f"{mant}e{exp}"),
                              "iterations": int(cells[3]), "time_inner": float(cells[4]),
                              "time_outer": float(cells[5]), "matlab_iterations": int(cells[6]),
                              "matlab_time": float(cells[7])}
    return rows


def test_paper_table3_transcribed():
    printed = paper_table3_rows()
    assert tuple(printed) == PROBLEMS                  # the ten problems, in the paper's order
    assert printed == PAPER_TABLE3


# --------------------------------------------------------------------------- tiny files
BOUNDS_MPS = """NAME          TINY
OBJSENSE
    MAX
ROWS
 N  OBJ
 L  LIM1
 G  LIM2
 E  MYEQN
 L  RNG
COLUMNS
    X1        OBJ       1.0        LIM1      1.0
    X1        LIM2      1.0        RNG       1.0
    X2        OBJ       2.0        LIM1      1.0
    X2        MYEQN     -1.0       RNG       1.0
    X3        OBJ       -1.0       MYEQN     1.0
    X4        OBJ       1.0        LIM2      1.0
    X4        LIM1      1.0
    X5        OBJ       3.0        LIM1      1.0
RHS
    RHS       OBJ       -2.5
    RHS       LIM1      10.0       LIM2      1.0
    RHS       MYEQN     7.0        RNG       8.0
RANGES
    RNG       RNG       5.0
BOUNDS
 UP BND       X1        4.0
 LO BND       X2        -1.0
 UP BND       X2        1.0
 MI BND       X3
 UP BND       X3        8.0
 FR BND       X4
 FX BND       X5        2.0
ENDATA
"""


def test_every_bound_type(tmp_path):
    """UP, LO+UP (shift + bound row), MI+UP (reflection), FR (split), FX (substituted),
    L/G/E rows, a ranged row, maximisation and an objective constant."""
    f = tmp_path / "tiny.mps"
    f.write_text(BOUNDS_MPS)
    p = read_mps(f)
    assert p.original_size == (4, 5)
    assert p.sense == -1
    st = p.presolve
    assert st["fixed_columns"] == 1 and st["free_splits"] == 1
    assert st["slacks"] == 3                    # L, G and the ranged row
    assert st["upper_bound_rows"] == 3          # X1, X2 and the range of RNG
    assert p.standard_size == (4 + 3, 4 + 1 + 3 + 3)
    status, obj, x = highs_solve(f)
    assert status == highspy.HighsModelStatus.kOptimal
    xs = p.from_original(x)
    assert np.abs(p.A @ xs - p.b).max() < 1e-12
    assert xs.min() >= -1e-12
    assert p.original_objective(xs) == pytest.approx(obj)
    np.testing.assert_allclose(p.to_original(xs), x)
    r = solve(p, backend="numpy64", eps=1e-9)
    assert r.status == "optimal"
    assert r.objective == pytest.approx(obj, rel=1e-7)
    assert r.x.shape == (5,) and r.x[4] == 2.0          # the fixed column
    # the answer satisfies the source bounds
    assert -1e-7 <= r.x[0] <= 4 + 1e-7 and -1 - 1e-7 <= r.x[1] <= 1 + 1e-7
    assert r.x[2] <= 8 + 1e-7


def test_gzipped_file(tmp_path):
    f = tmp_path / "tiny.mps.gz"
    with gzip.open(f, "wt") as fh:
        fh.write(BOUNDS_MPS)
    assert read_mps(f).standard_size == (7, 11)


def test_reflected_and_shifted_objective():
    # min x0 - x1 with x0 in [2, inf), x1 in (-inf, 3]; x0 + x1 <= 10 -> x0 = 2, x1 = 3
    p = Problem.from_inequalities([1, -1], A_ub=[[1, 1]], b_ub=[10], bounds=[(2, None),
                                                                              (None, 3)])
    assert p.c0 == pytest.approx(2 - 3)
    r = solve(p, backend="numpy64", eps=1e-10)
    assert r.status == "optimal"
    np.testing.assert_allclose(r.x, [2, 3], atol=1e-7)
    assert r.objective == pytest.approx(-1, abs=1e-8)


def test_presolve_empty_row_infeasible():
    p = standardize([1, 1], [[1, 1], [0, 0]], [-np.inf, 1], [5, 2], col_lower=[0, 0], col_upper=[np.inf, np.inf])
    assert p.status == "infeasible" and "empty row" in p.message
    r = solve(p, backend="numpy64")
    assert r.status == "infeasible" and r.status_code == 2 and r.iterations == 0


def test_presolve_empty_row_dropped_and_free_row():
    p = standardize([1, 1], [[1, 1], [0, 0], [1, 2]], [1, -1, -np.inf], [np.inf, 2, np.inf],
                    col_lower=[0, 0], col_upper=[np.inf, np.inf])
    assert p.status is None
    assert p.presolve["empty_rows"] == 1 and p.presolve["free_rows"] == 1
    assert p.standard_size == (1, 3)


def test_presolve_empty_column():
    # empty column with positive cost sits at its lower bound (a constant)
    p = standardize([1, 2], [[1, 0]], [1], [np.inf], col_lower=[0, 3], col_upper=[np.inf, 7])
    assert p.status is None and p.presolve["empty_columns"] == 1
    assert p.c0 == pytest.approx(6)
    r = solve(p, backend="numpy64", eps=1e-10)
    np.testing.assert_allclose(r.x, [1, 3], atol=1e-7)
    assert r.objective == pytest.approx(7, rel=1e-8)
    # ... with negative cost and no upper bound it makes the problem unbounded
    # when the rest of it is feasible, which solve decides by solving the rest
    p = standardize([1, -2], [[1, 0]], [1], [np.inf], col_lower=[0, 0], col_upper=[np.inf, np.inf])
    assert p.status is None and p.presolve["unbounded_column"] == (1, -2.0)
    for presolve in (False, True):
        r = solve(p, backend="numpy64", presolve=presolve)
        assert r.status == "unbounded" and r.x is None and "empty column 1 with cost -2" in r.message


@pytest.mark.parametrize("method", ["mehrotra", "matrix-free"])
def test_an_empty_unbounded_column_of_an_infeasible_problem(method):
    """Both the primal and the dual are infeasible: x0 + x1 = -1 has no x >= 0, and the empty
    column 2 with cost -1 makes the dual infeasible. scipy and HiGHS say infeasible (scipy's
    test_enzo_example_c_with_infeasibility); the presolve's empty column said unbounded."""
    p = standardize([1, 1, -1], [[1, 1, 0]], [-1], [-1], col_lower=[0, 0, 0], col_upper=[np.inf] * 3)
    for presolve in ((False, True) if method == "mehrotra" else (False,)):
        r = solve(p, backend="numpy64", method=method, presolve=presolve, eps=1e-8)
        assert r.status == "infeasible", r.message


def test_presolve_fixed_column_substituted():
    p = standardize([1, 5], [[1, 1]], [4], [4], col_lower=[0, 1.5], col_upper=[np.inf, 1.5])
    assert p.presolve["fixed_columns"] == 1
    assert p.standard_size == (1, 1)
    np.testing.assert_allclose(p.b, [2.5])
    r = solve(p, backend="numpy64", eps=1e-10)
    np.testing.assert_allclose(r.x, [2.5, 1.5], atol=1e-8)
    assert r.objective == pytest.approx(2.5 + 7.5)


def test_from_arrays_is_identity():
    A = np.array([[1.0, 2.0, 1.0]])
    p = Problem.from_arrays(A, [4.0], [1.0, 1.0, 0.0], c0=3.0, name="t")
    x = np.array([1.0, 1.0, 1.0])
    np.testing.assert_array_equal(p.to_original(x), x)
    np.testing.assert_array_equal(p.from_original(x), x)
    assert p.objective(x) == 5.0 and p.original_objective(x) == 5.0
    with pytest.raises(ValueError):
        Problem.from_arrays(A, [1.0, 2.0], [1.0, 1.0, 0.0])


# --------------------------------------------------------------------------- errors
def test_missing_file(tmp_path):
    f = tmp_path / "nothere.mps"
    with pytest.raises(FileNotFoundError, match="nothere.mps"):
        read_mps(f)


def test_malformed_file(tmp_path):
    f = tmp_path / "broken.mps"
    f.write_text("NAME BROKEN\nROWS\n N  OBJ\n Q  R1\nCOLUMNS\n    X1  OBJ  1.0  R1  2.0\n"
                 "ENDATA\n")
    with pytest.raises(ValueError) as info:
        read_mps(f)
    msg = str(info.value)
    assert "broken.mps" in msg
    assert "ROWS" in msg and "Q  R1" in msg           # HiGHS's cause: the bad ROWS entry


def test_garbage_file(tmp_path):
    f = tmp_path / "garbage.mps"
    f.write_text("this is not an MPS file\n")
    with pytest.raises(ValueError, match="garbage.mps"):
        read_mps(f)


TINY_MPS = ("NAME TINY\nROWS\n N  OBJ\n L  R1\nCOLUMNS\n    X1  OBJ  -1.0  R1  1.0\n"
            "    X2  OBJ  -2.0  R1  1.0\nRHS\n    RHS  R1  4.0\nBOUNDS\n UP BND  X2  3.0\nENDATA\n")


@pytest.mark.parametrize("name", ["tiny.txt", "tiny", "tiny.gz"])
def test_a_good_mps_file_with_another_ending_is_refused_for_its_name(tmp_path, name):
    """HiGHS picks its reader by the file name: a good MPS file named .txt was reported as
    "malformed MPS file ...: Model file ... not supported"; the message now names the ending."""
    good = tmp_path / "tiny.mps"
    good.write_text(TINY_MPS)
    p = read_mps(good)
    assert p.original_objective(p.from_original(np.array([1.0, 3.0]))) == pytest.approx(-7.0)   # read as MPS
    f = tmp_path / name
    f.write_bytes(gzip.compress(TINY_MPS.encode()) if name.endswith(".gz") else TINY_MPS.encode())
    with pytest.raises(ValueError, match=rf"cannot read .*{name}: HiGHS chooses its reader by the file name's "
                                         rf"ending and has none for '{name}'.* must be named \*\.mps or "
                                         r"\*\.mps\.gz: rename or copy it") as err:
        read_mps(f)
    assert "malformed" not in str(err.value)


def test_a_good_mps_file_named_lp_is_read_as_the_lp_format_and_says_so(tmp_path):
    """HiGHS reads a .lp file as CPLEX's LP format: the MPS text was "malformed MPS file:
    expected a section keyword, found `NAME`" with no word about the name."""
    f = tmp_path / "tiny.lp"
    f.write_text(TINY_MPS)
    with pytest.raises(ValueError, match=r"malformed MPS file .*tiny\.lp: .*\(HiGHS chose its reader by the "
                                         r"name's ending, '\.lp': if the file is MPS, name it \*\.mps or "
                                         r"\*\.mps\.gz\)"):
        read_mps(f)


def test_a_directory_or_a_path_that_is_not_one_is_named(tmp_path):
    with pytest.raises(IsADirectoryError, match="is a directory, not an MPS file"):
        read_mps(tmp_path)
    for bad in (None, 3):
        with pytest.raises(TypeError, match=f"read_mps: path must be a str or pathlib.Path naming an MPS "
                                            f"file, got {type(bad).__name__}"):
            read_mps(bad)


def test_a_shipped_netlib_problem_is_found_by_its_name():
    """solve("afiro") and the CLI read the package's copy; netlib-more's problems too."""
    from gpgpu.lp import solve
    from gpgpu.lp.netlib import DATA_DIR, netlib_path

    assert netlib_path("afiro") == DATA_DIR / "netlib" / "afiro.mps.gz"
    assert netlib_path("pilot4") == DATA_DIR / "netlib-more" / "pilot4.mps.gz"
    r = solve("afiro", backend="numpy64", eps=1e-8)
    assert r.status == "optimal" and abs(r.objective + 464.7531428571) < 1e-6
    with pytest.raises(FileNotFoundError, match="'nosuch' not found"):
        solve("nosuch", backend="numpy64")


def test_a_netlib_folder_elsewhere_keeps_the_shipped_problems_by_name(tmp_path, monkeypatch):
    """With GPGPU_NETLIB_DIR pointing to a folder of one's own, the package's netlib-more
    problems and QAPLIB instances are still found by name (they were looked up beside that
    folder only)."""
    from gpgpu.lp.netlib import DATA_DIR, netlib_path
    from gpgpu.lp.qap import qaplib_dir

    mine = tmp_path / "mine" / "netlib"
    mine.mkdir(parents=True)
    monkeypatch.delenv("GPGPU_QAPLIB_DIR", raising=False)
    monkeypatch.setenv("GPGPU_NETLIB_DIR", str(mine))
    assert netlib_path("pilot4") == DATA_DIR / "netlib-more" / "pilot4.mps.gz"
    assert qaplib_dir() == DATA_DIR / "qaplib"
    with pytest.raises(FileNotFoundError, match="afiro.*not found in"):
        netlib_path("afiro")                       # Table 3's are looked up in the folder given
    (mine.parent / "qaplib").mkdir()               # a qaplib beside it is preferred
    assert qaplib_dir() == mine.parent / "qaplib"


def test_the_command_line_takes_a_qaplib_name(capsys):
    """python -m gpgpu.lp nug12 reads the LP relaxation, as solve("nug12") does."""
    from gpgpu.lp.__main__ import main

    code = main(["nug12", "--method", "matrix-free", "--backend", "numpy64", "--max-iter", "1", "--quiet"])
    out = capsys.readouterr().out
    assert code in (0, 1) and "3192" in out and "8856" in out, out
