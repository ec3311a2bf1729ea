"""Hostile input to gpgpu.lp.solve and its CLI: bounds that no value meets, integer columns in an
MPS file, MPS numbers that are not numbers, options of the wrong type, coefficients beyond
float32's range. Each answer is either a status with its reason or an error naming the cause;
never a silent wrong answer or a traceback from inside the solver."""
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

highspy = pytest.importorskip("highspy")

from gpgpu.lp import Problem, read_mps, solve, standardize  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def cli(*args):
    return subprocess.run([sys.executable, "-m", "gpgpu.lp", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)


# --------------------------------------------------------------------------- bounds no value meets
#: (what, Problem builder, the words of the reason): a^T x <= -inf, a^T x >= +inf, x_j >= +inf,
#: x_j <= -inf, each written as an infinity or as a value beyond 1e30 (which counts as one)
IMPOSSIBLE = {
    "b_ub = -inf": (lambda: Problem.from_inequalities([1, 1], A_ub=[[1, 1]], b_ub=[-np.inf]),
                    "row 0 has upper bound -inf"),
    "b_ub = -1e30": (lambda: Problem.from_inequalities([1, 1], A_ub=[[1, 1]], b_ub=[-1e30]),
                     "row 0 has upper bound -1e+30, which counts as -inf"),
    "b_eq = 1e30": (lambda: Problem.from_inequalities([1, 1], A_ub=[[1, 0]], b_ub=[3], A_eq=[[1, 1]], b_eq=[1e30]),
                    "row 1 has lower bound 1e+30, which counts as +inf"),
    "row lower = +inf": (lambda: standardize([1, 1], [[1, 1]], [np.inf], [np.inf], col_lower=[0, 0],
                                                     col_upper=[np.inf, np.inf]),
                         "row 0 has lower bound +inf"),
    "column lower 1e30": (lambda: Problem.from_inequalities([1, 1], A_ub=[[1, 1]], b_ub=[5],
                                                            bounds=[(0, None), (1e30, None)]),
                          "column 1 has lower bound 1e+30, which counts as +inf"),
    "column upper -1e30": (lambda: Problem.from_inequalities([1, 1], A_ub=[[1, 1]], b_ub=[5],
                                                             bounds=[(None, -1e30), (0, None)]),
                           "column 0 has upper bound -1e+30, which counts as -inf"),
    "column lb = ub = +inf": (lambda: Problem.from_inequalities([1, 1], A_ub=[[1, 1]], b_ub=[5],
                                                                bounds=[(np.inf, np.inf), (0, None)]),
                              "column 0 has lower bound +inf"),
    "column lb = ub = -inf": (lambda: Problem.from_inequalities([1, 1], A_ub=[[1, 1]], b_ub=[5],
                                                                bounds=[(-np.inf, -np.inf), (0, None)]),
                              "column 0 has upper bound -inf"),
}


@pytest.mark.parametrize("case", sorted(IMPOSSIBLE))
@pytest.mark.parametrize("method, backend", [("mehrotra", "numpy64"), ("mehrotra", "gpu"),
                                             ("matrix-free", "numpy64")])
def test_a_bound_that_no_value_meets_is_infeasible_with_its_reason(case, method, backend):
    """A row a^T x <= -inf (HiGHS's presolve called it "optimal", x = 0, before) or a column
    x_j >= +inf (a traceback-like "c0 = inf is not finite" before) is infeasible: no finite x
    meets it. The presolve decides it without iterating, the reason names the row or column."""
    build, reason = IMPOSSIBLE[case]
    p = build()
    assert p.status == "infeasible" and reason in p.message and "holds for no finite x" in p.message
    r = solve(p, method=method, backend=backend)
    assert r.status == "infeasible" and r.status_code == 2 and r.iterations == 0
    assert reason in r.message
    assert r.x is None and np.isnan(r.objective)


def test_the_same_infinite_bound_in_an_mps_file_is_refused_by_highs(tmp_path):
    """In an MPS file HiGHS refuses it itself (an upper bound <= -1e20), and says which row."""
    f = tmp_path / "minf.mps"
    f.write_text("NAME MINF\nROWS\n N  COST\n L  C1\nCOLUMNS\n    X  COST  1.0  C1  1.0\n"
                 "    Y  COST  1.0  C1  1.0\nRHS\n    RHS  C1  -1e30\nENDATA\n")
    with pytest.raises(ValueError, match=r"minf.mps: .*Row C1.* upper bound of +-1e\+30"):
        read_mps(f)


def test_cli_matrix_free_on_a_problem_the_presolve_decides(tmp_path):
    """The CLI printed the matrix-free PCG statistics of every result: one the presolve decided
    (no iteration, no PCG) ended in an AttributeError traceback."""
    f = tmp_path / "infb.mps"
    f.write_text("NAME INFB\nROWS\n N  COST\n L  C1\nCOLUMNS\n    X  COST  1.0  C1  1.0\n"
                 "    Y  COST  1.0  C1  1.0\nRHS\n    RHS  C1  4.0\nBOUNDS\n LO BND  X  5\n UP BND  X  3\nENDATA\n")
    out = cli(f, "--method", "matrix-free", "--backend", "numpy64", "--quiet")
    assert out.returncode == 1, out.stderr
    assert "status: infeasible" in out.stdout and "column 0 has lower bound 5.0 > upper bound 3.0" in out.stdout
    assert "Traceback" not in out.stderr


# --------------------------------------------------------------------------- MPS integer columns
INTEGER_MPS = """NAME          INTLP
ROWS
 N  COST
 L  C1
COLUMNS
    MARKER                 'MARKER'                 'INTORG'
    X         COST            -1.0   C1             2.0
    Y         COST            -1.0   C1             2.0
    MARKER                 'MARKER'                 'INTEND'
RHS
    RHS       C1              3.0
BOUNDS
 UP BND       X               5
 UP BND       Y               5
ENDATA
"""

#: the same problem with its integrality in BOUNDS: BV (binary), UI and LI (integer)
BOUNDS_INTEGER_MPS = """NAME          BVLP
ROWS
 N  COST
 L  C1
COLUMNS
    X         COST            -1.0   C1             2.0
    Y         COST            -1.0   C1             2.0
    Z         COST             0.0   C1             1.0
RHS
    RHS       C1              3.0
BOUNDS
 BV BND       X
 UI BND       Y               5
 LI BND       Z               0
 UP BND       Z               1
ENDATA
"""


def highs_file(path, relax):
    """HiGHS's optimum of an MPS file, as a MIP or (relax) as its LP relaxation."""
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(path))
    if relax:
        h.setOptionValue("solve_relaxation", True)
    h.run()
    return h.getInfo().objective_function_value


@pytest.mark.parametrize("text, names", [(INTEGER_MPS, ("X", "Y")), (BOUNDS_INTEGER_MPS, ("X", "Y", "Z"))])
def test_integer_columns_are_reported_and_the_relaxation_named(tmp_path, text, names):
    """min -x - y, 2x + 2y <= 3, x, y integer: HiGHS's MIP optimum is -1, the LP relaxation's
    -1.5. The answer is the relaxation's -- and says so (it was reported "optimal" -1.5 with no
    word before), on the problem, the result (warnings and message) and the CLI."""
    f = tmp_path / "int.mps"
    f.write_text(text)
    assert highs_file(f, relax=False) == pytest.approx(-1.0)
    relaxed = highs_file(f, relax=True)
    assert relaxed == pytest.approx(-1.5)
    p = read_mps(f)
    assert p.integer_columns == names
    for method in ("mehrotra", "matrix-free"):
        r = solve(p, method=method, backend="numpy64", eps=1e-8)
        assert r.status == "optimal" and r.objective == pytest.approx(relaxed, abs=1e-7)
        assert len(r.warnings) == 1 and "LP relaxation" in r.warnings[0]
        assert f"marks {len(names)} of its" in r.warnings[0] and ", ".join(names) in r.warnings[0]
        assert "Warning:" in r.message and "LP relaxation" in r.message
    out = cli(f, "--backend", "numpy64", "--quiet", "--eps", "1e-8")
    assert out.returncode == 0
    assert "warning:" in out.stdout and "LP relaxation" in out.stdout


def test_a_continuous_problem_has_no_warning(tmp_path):
    f = tmp_path / "lp.mps"
    f.write_text(INTEGER_MPS.replace("    MARKER                 'MARKER'                 'INTORG'\n", "")
                 .replace("    MARKER                 'MARKER'                 'INTEND'\n", ""))
    r = solve(read_mps(f), backend="numpy64", eps=1e-8)
    assert r.status == "optimal" and r.warnings == [] and "Warning" not in r.message


def test_a_semi_continuous_column_is_relaxed_to_include_zero(tmp_path):
    """SC bound [2, 4] on x: x = 0 or 2 <= x <= 4. min x + 10 y, x + y >= 1: the MIP's optimum is
    2 (x = 2), the relaxation's 1 (x = 1, with 0 <= x <= 4); solving 2 <= x <= 4 (2) would be no
    relaxation."""
    f = tmp_path / "sc.mps"
    f.write_text("NAME SC\nROWS\n N  COST\n G  C1\nCOLUMNS\n    X  COST  1.0  C1  1.0\n"
                 "    Y  COST  10.0  C1  1.0\nRHS\n    RHS  C1  1.0\nBOUNDS\n LO BND  X  2\n SC BND  X  4\nENDATA\n")
    assert highs_file(f, relax=False) == pytest.approx(2.0)
    p = read_mps(f)
    assert p.integer_columns == ("X",)
    r = solve(p, backend="numpy64", eps=1e-8)
    assert r.status == "optimal" and r.objective == pytest.approx(1.0, abs=1e-7) and r.warnings


# --------------------------------------------------------------------------- MPS numbers
NUMBER_MPS = """NAME          NUM
ROWS
 N  COST
 L  C1
 G  C2
COLUMNS
    X         COST            -1.0   C1             {col}
    Y         COST            -1.0   C1             1.0
    Y         C2               1.0
RHS
    RHS       C1              {rhs}  C2             0.5
RANGES
    RNG       C2              {rng}
BOUNDS
 UP BND       X               {bnd}
ENDATA
"""
GOOD = {"col": "1.0", "rhs": "4.0", "rng": "2.0", "bnd": "3"}


@pytest.mark.parametrize("field, token, line", [("col", "abc", 7), ("col", "1,5", 7), ("col", "1e400", 7),
                                                ("col", "nan", 7), ("rhs", "x4", 11), ("rng", "two", 13),
                                                ("bnd", "ten", 15), ("bnd", "NaN", 15)])
def test_an_mps_number_that_is_not_one_is_refused_with_its_line(tmp_path, field, token, line):
    """HiGHS reads "abc" as 0 (the entry dropped, "optimal 0" before); read_mps refuses it with
    the line number and the token, as its docstring promises for malformed files. An infinite
    coefficient (1e400 overflows float64) and NaN are refused too."""
    f = tmp_path / "num.mps"
    f.write_text(NUMBER_MPS.format(**dict(GOOD, **{field: token})))
    with pytest.raises(ValueError) as info:
        read_mps(f)
    msg = str(info.value)
    assert "num.mps" in msg and f"line {line} " in msg and repr(token) in msg
    out = cli(f, "--backend", "numpy64")
    assert out.returncode == 2 and f"line {line} " in out.stderr and repr(token) in out.stderr


@pytest.mark.parametrize("token", ["abc", "1_0", "\uff11", "1e400", "-nan", "inf"])
@pytest.mark.parametrize("ending, gz", [("\n", False), ("\r\n", False), ("\n", True)])
def test_a_bad_first_number_of_a_columns_line_is_refused_with_its_line(tmp_path, token, ending, gz):
    """The first number of a two-entry COLUMNS line (X's COST), in a file with Windows line
    endings or gzipped too: refused with its line (7) and token; the good file reads."""
    import gzip

    text = NUMBER_MPS.format(**GOOD).replace("    X         COST            -1.0",
                                             f"    X         COST            {token}")
    assert f"COST            {token}   C1" in text
    f = tmp_path / ("num.mps.gz" if gz else "num.mps")
    data = text.replace("\n", ending).encode("utf-8")
    f.write_bytes(gzip.compress(data) if gz else data)
    with pytest.raises(ValueError) as info:
        read_mps(f)
    msg = str(info.value)
    assert "line 7 (COLUMNS section)" in msg and repr(token) in msg
    good = tmp_path / ("good.mps.gz" if gz else "good.mps")
    data = NUMBER_MPS.format(**GOOD).replace("\n", ending).encode("utf-8")
    good.write_bytes(gzip.compress(data) if gz else data)
    assert read_mps(good).c[0] == -1.0


def test_a_file_named_gz_that_is_not_gzipped_gets_highs_error(tmp_path):
    f = tmp_path / "fake.mps.gz"
    f.write_text("NAME X\nROWS\n")
    with pytest.raises(ValueError, match="malformed MPS file .*fake.mps.gz"):
        read_mps(f)


def test_the_good_numbers_read_as_highs_reads_them(tmp_path):
    """The same file with numbers (an infinite bound among them) reads and solves as HiGHS does."""
    f = tmp_path / "num.mps"
    f.write_text(NUMBER_MPS.format(**dict(GOOD, bnd="inf")))
    r = solve(read_mps(f), backend="numpy64", eps=1e-9)
    assert r.status == "optimal" and r.objective == pytest.approx(highs_file(f, relax=False), abs=1e-7)


# --------------------------------------------------------------------------- options of the wrong type
def tiny():
    return Problem.from_inequalities([-1, -2], A_ub=[[1, 1], [1, 3]], b_ub=[4, 6])


@pytest.mark.parametrize("method", ["mehrotra", "matrix-free"])
@pytest.mark.parametrize("callback", [5, "print", [1]])
def test_callback_must_be_callable(method, callback):
    """A callback that is not callable was a TypeError from inside the first iteration."""
    with pytest.raises(TypeError, match=r"callback must be a function .* got " + re.escape(repr(callback))):
        solve(tiny(), backend="numpy64", method=method, callback=callback)


@pytest.mark.parametrize("bad", ["no", "False", 1, 0, 1.0])
@pytest.mark.parametrize("name, method, backend", [
    ("refine", "mehrotra", "numpy64"), ("refine", "matrix-free", "numpy64"), ("presolve", "mehrotra", "numpy64"),
    ("correct_primal", "mehrotra", "numpy64"), ("free_safeguard", "mehrotra", "numpy64"),
    ("scale", "mehrotra", "numpy64"), ("regularize", "mehrotra", "numpy64"),
    ("fast_solve", "mehrotra", "numpy64"), ("fuse", "mehrotra", "gpu"), ("profile", "matrix-free", "numpy64"),
    ("profile", "matrix-free", "gpu")])
def test_boolean_options_must_be_booleans(bad, name, method, backend):
    """refine="no" was taken as True (a non-empty string); every flag of solve and of the back
    ends is checked, and the error names it."""
    with pytest.raises(TypeError, match=f"{name} must be True or False"):
        solve(tiny(), backend=backend, method=method, eps=1e-8, **{name: bad})


@pytest.mark.parametrize("backend", ["numpy64", "gpu"])
def test_a_matrix_free_back_end_built_directly_checks_profile(backend):
    from gpgpu.lp.matrix_free import get_matrix_free_backend

    with pytest.raises(TypeError, match="profile must be True or False, got 'no'"):
        get_matrix_free_backend(backend, tiny(), profile="no")


def test_numpy_booleans_are_booleans():
    r = solve(tiny(), backend="numpy64", eps=1e-8, refine=np.False_, presolve=np.bool_(False))
    assert r.status == "optimal" and r.objective == pytest.approx(-5.0, abs=1e-7)


# --------------------------------------------------------------------------- beyond float32
BIG = 1e39          # above float32's largest, 3.4e38; finite in float64


@pytest.mark.parametrize("backend, method", [("gpu", "mehrotra"), ("numpy32", "mehrotra"), ("gpu", "matrix-free")])
def test_a_coefficient_beyond_float32_is_named(backend, method):
    """|a| = 1e39 became inf in the float32 back ends ("contains NaN or infinity")."""
    p = Problem.from_inequalities([-1, -2], A_ub=[[1, 1], [1, BIG]], b_ub=[4, 6])
    with pytest.raises(ValueError, match=r"the coefficient A\[1, 1\] = 1e\+39 is .*float32.*backend='numpy64'"):
        solve(p, backend=backend, method=method, presolve=False)


def test_the_matrix_free_gpu_needs_the_squares_in_range():
    """A .* A (G_R's diagonal) is float32 on the GPU: a coefficient of 1e20 squares to 1e40. The
    normalisation brings A's entries to 8e-10 and 8e10, whose squares fit: min x0 + x1 with
    x0 + 1e20 x1 = 1 is 1e-20 (x1 = 1e-20) by hand; without it the coefficient is named."""
    p = Problem.from_arrays(sp.csr_matrix([[1.0, 1e20]]), [1.0], [1.0, 1.0])
    r = solve(p, backend="gpu", method="matrix-free", eps=1e-8)
    assert r.status == "optimal" and r.objective == pytest.approx(1e-20, rel=1e-5), r.message
    with pytest.raises(ValueError, match=r"the coefficient A\[0, 1\] = 1e\+20 is above 1.84e\+19, whose square"):
        solve(p, backend="gpu", method="matrix-free", normalize=False)


def test_a_cost_beyond_float32_is_named():
    p = Problem.from_inequalities([-BIG, -2], A_ub=[[1, 1], [1, 3]], b_ub=[4, 6])
    with pytest.raises(ValueError, match=r"the cost c\[0\] = -1e\+39 is 5e\+38 times the standard form's cost "
                                         r"c\[1\] = -2: more than float32 holds .*normalised, c\[0\] is 1e\+39"):
        solve(p, backend="gpu", presolve=False)
    with pytest.raises(ValueError, match=r"the cost c\[0\] = -1e\+39 is beyond float32's range"):
        solve(p, backend="gpu", presolve=False, normalize=False)


def test_highs_refusal_passes_on_its_reason():
    """HiGHS refuses coefficients of 1e15 and more for its presolve: its reason and the entry
    are in the message (it was "HiGHS refused the LP" alone), and presolve=False is suggested."""
    p = Problem.from_inequalities([-1, -2], A_ub=[[1, 1], [1, BIG]], b_ub=[4, 6])
    with pytest.raises(ValueError) as info:
        solve(p, backend="numpy64", presolve=True, normalize=False)
    msg = str(info.value)
    assert "HiGHS refused the LP for its presolve: " in msg and "1e+15" in msg
    assert "A[1, 1] = 1e+39" in msg and "presolve=False" in msg


def test_the_presolve_gets_rows_of_unit_size():
    """With the normalisation HiGHS's presolve gets each row scaled to a largest |a| near 1, so
    it takes the row x + 1e39 y <= 6 it refuses as given. By hand the optimum is -4 (x = 4,
    y <= 2e-39)."""
    p = Problem.from_inequalities([-1, -2], A_ub=[[1, 1], [1, BIG]], b_ub=[4, 6])
    r = solve(p, backend="numpy64", presolve=True, eps=1e-9)
    assert r.status == "optimal" and r.objective == pytest.approx(-4.0, rel=1e-9)
    assert r.x[0] == pytest.approx(4.0, rel=1e-9) and abs(r.x[1]) <= 2.1e-39


def test_a_non_finite_coefficient_is_named():
    with pytest.raises(ValueError, match=r"NaN or infinity \(A\[1, 0\] = inf\)"):
        Problem.from_arrays(np.array([[1.0, 2.0], [np.inf, 1.0]]), np.ones(2), np.ones(2))


def test_float32_range_is_checked_after_scaling():
    """scale=True divides the rows and columns by powers of two: the scaled LP fits float32 and
    the float32 back end iterates on it. By hand: x + 1e39 y <= 6 and x + y <= 4 hold y to
    6e-39, so min -x - 2y is -4 (x = 4). The scaled LP's optimum, y = 1.25e-27, meets (6.1) on
    the scaled LP (whose second row the scaling divides by 2^65) and misses x + 1e39 y <= 6 by
    1.3e12: the check on the problem as given says so (it was answered "optimal" before)."""
    p = Problem.from_inequalities([-1, -2], A_ub=[[1, 1], [1, BIG]], b_ub=[4, 6])
    r = solve(p, backend="numpy32", scale=True, presolve=False, eps=1e-5)
    assert r.status == "numerical_trouble" and r.check is not None and not r.check.holds
    assert r.check.primal > 1e10 and r.check.dual <= 1e-5 and r.check.gap <= 1e-5
    assert r.message.startswith("Numerical trouble: the point meets (6.1)-(6.3) on the problem the method solved "
                                "but not on the problem as given (checked in float64, gpgpu.lp.certificate: "
                                "primal residual (6.1) "), r.message
    assert r.x[1] * BIG + r.x[0] > 1e12                      # the point is kept, as scipy keeps it for 4


@pytest.mark.parametrize("kwargs, match", [
    (dict(A_ub=[[1, 1]], b_ub=[1, 2]), r"from_inequalities: b_ub has 2 entries, A_ub has 1 rows"),
    (dict(A_eq=[[1, 1], [1, -1]], b_eq=[1]), r"from_inequalities: b_eq has 1 entries, A_eq has 2 rows"),
    (dict(A_ub=[[1, 1]]), r"from_inequalities: A_ub is given without b_ub: pass both or neither"),
    (dict(A_ub=[[1, 1]], b_ub=[1], b_eq=[1]), r"from_inequalities: b_eq is given without A_eq"),
    (dict(A_ub=[[1, 1]], b_ub=[1], bounds=[(0, 1)] * 3), r"bounds must be one \(lb, ub\) pair for all variables "
                                                         r"or 2 such pairs, one per entry of c"),
    (dict(A_ub=[[1, 1]], b_ub=[1], bounds=[0, 1, 2]), r"bounds must be one \(lb, ub\) pair"),
    (dict(A_ub=[[1, 1]], b_ub=[1], bounds=[(0, 1), (0, 1, 2)]), r"bounds must be one \(lb, ub\) pair"),
])
def test_from_inequalities_names_what_does_not_fit(kwargs, match):
    """Were "inconsistent LP data sizes" (a right-hand side or bounds of another length), a raw
    "'int' object is not subscriptable" (bounds of scalars), or silence (b_eq without A_eq)."""
    with pytest.raises(ValueError, match=match):
        Problem.from_inequalities([1.0, 1.0], **kwargs)


def test_from_inequalities_takes_scipys_bounds_none_and_an_array_of_pairs():
    """bounds=None is scipy's (0, None) (was "'NoneType' object is not iterable"); an (n, 2)
    array of pairs with n = 2 was read as one pair for all variables."""
    # min x0 + 2 x1 with x0 + x1 >= 1, x >= 0: x = (1, 0); with x0 <= 0.25: x = (0.25, 0.75), 1.75
    p = Problem.from_inequalities([1.0, 2.0], A_ub=[[-1.0, -1.0]], b_ub=[-1.0], bounds=None)
    r = solve(p, backend="numpy64", eps=1e-9)
    assert r.status == "optimal" and r.objective == pytest.approx(1.0, abs=1e-8)
    np.testing.assert_allclose(r.x, [1.0, 0.0], atol=1e-8)
    p = Problem.from_inequalities([1.0, 2.0], A_ub=[[-1.0, -1.0]], b_ub=[-1.0],
                                  bounds=np.array([[0.0, 0.25], [0.0, 5.0]]))
    r = solve(p, backend="numpy64", eps=1e-9)
    assert r.status == "optimal" and r.objective == pytest.approx(0.25 + 2 * 0.75, abs=1e-8)
    np.testing.assert_allclose(r.x, [0.25, 0.75], atol=1e-8)


def test_standardize_names_the_sizes_that_disagree():
    with pytest.raises(ValueError, match=r"inconsistent LP data sizes: A is 1 x 2 and c has 2 entries, so row_lower "
                                         r"and row_upper need 1 entries and col_lower and col_upper 2; got 1, 1, 3 and 2"):
        standardize([1.0, 1.0], [[1.0, 1.0]], [0.0], [1.0], col_lower=[0.0, 0.0, 0.0], col_upper=[1.0, 1.0])
