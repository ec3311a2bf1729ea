"""Each fragment's arithmetic (gpgpu/show/arithmetic.py): the one table of every kernel's
expression, checked against the recorded runs of every algorithm of ``python -m gpgpu.show``
at n = 8: where the table says exact, the expression evaluated in float64 from the fetched
float32 values gives the value the pass wrote, within float32 rounding, at every fragment."""
import numpy as np
import pytest

from gpgpu.record import MAX_FETCHES
from gpgpu.show import ALGORITHMS, run
from gpgpu.show.arithmetic import ARITHMETIC, agrees, bind, evaluate, operand_values, substituted

N = 8


def _kernel(frame) -> str:
    return frame.file.rsplit(".", 1)[0]


def _uniforms(frame) -> dict:
    out = {}
    for k, v in frame.uniforms.items():
        a = np.atleast_1d(np.asarray(v, dtype=np.float64)).reshape(-1)
        out[k] = float(a[0]) if a.size == 1 else [float(u) for u in a]
    return out


def _checked(frame, x, y):
    """(the formula's components evaluated, the written components) at fragment (x, y), or None where
    the table shows the kernel without evaluating it."""
    entry = ARITHMETIC[_kernel(frame)]
    if getattr(entry, "replay", None):   # the loop read again from the pass's recorded inputs
        from gpgpu.show.arithmetic import replayed

        names = replayed(frame, x, y)
        formula = None if names is None else entry.formula
    else:
        fetched = operand_values(frame, x, y)
        formula, names = bind(entry, fetched, int(frame.fetch_count[y, x]) <= MAX_FETCHES)
    if formula is None:
        assert not entry.exact, f"{frame.kernel} is marked exact but fragment ({x}, {y}) cannot be evaluated"
        return None
    names.update(_uniforms(frame), x=x, y=y)
    written = frame.values[y, x]
    parts = [formula] if isinstance(formula, str) else list(formula)
    values = np.atleast_1d(written).astype(np.float64)
    out = []
    for c, f in enumerate(parts):
        if f is not None:
            text = substituted(f, names, True) if getattr(entry, "replay", None) else substituted(f, names)
            out.append((f, evaluate(f, names), float(values[c]), text, list(names.values())))
    return out


@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_every_exact_kernel_evaluates_to_the_written_value_at_every_fragment(name):
    rec = run(name, N)
    checked = 0
    for frame in rec.frames:
        assert _kernel(frame) in ARITHMETIC, f"{name}: kernel {frame.kernel} ({frame.file}) has no arithmetic"
        if frame.covered is None:
            continue
        for y, x in zip(*np.nonzero(frame.covered)):
            for formula, value, result, text, numbers in _checked(frame, int(x), int(y)) or []:
                numbers = [v for v in numbers if isinstance(v, (float, list))]
                assert agrees(value, result, numbers), (
                    f"{name} pass {frame.index + 1} ({frame.kernel}) fragment ({x}, {y}): {formula} = {text} "
                    f"= {value!r}, written {result!r}")
                checked += 1
    assert checked > 0 or not any(ARITHMETIC[_kernel(f)].exact for f in rec.frames)


@pytest.mark.parametrize("name, kernel, count", [("sparse-product", "sparse_ellpack", "K"),
                                                  ("cg-iteration", "matrix_vector_inner_product", "n"),
                                                  ("cholesky-inner", "inner_product_subtraction", "count")])
def test_the_replayed_loops_evaluate_at_every_fragment(name, kernel, count):
    """A kernel whose loop fetches more than the recorder notes (MAX_FETCHES) is exact by its replay:
    every fragment evaluates, from the pass's recorded inputs, to the written value; the shown
    expression (the dot as the sum of its products) evaluates to the same."""
    rec = run(name, N)
    frames = [f for f in rec.frames if _kernel(f) == kernel and f.covered is not None]
    assert frames and ARITHMETIC[kernel].exact, f"{kernel} is shown only"
    assert any(int(f.fetch_count.max()) > MAX_FETCHES for f in frames), "the loop fits the notes: nothing replayed"
    for frame in frames:
        for y, x in zip(*np.nonzero(frame.covered)):
            checked = _checked(frame, int(x), int(y))
            assert checked, f"{name} pass {frame.index + 1} fragment ({x}, {y}) not evaluated"
            for formula, value, result, text, numbers in checked:
                numbers = [v for v in numbers if isinstance(v, (float, list))]
                assert agrees(value, result, numbers) and agrees(evaluate(text, {}), result, numbers), (
                    f"{formula} = {text} = {value!r}, written {result!r}")
                # ELLPACK's loop stops at the row's padding (column -1): a term an entry, at least one
                least = 1 if kernel == "sparse_ellpack" else int(frame.uniforms[count])
                assert "dot(" not in text and "..." not in text and text.count(" * ") >= least, text
                if kernel == "sparse_ellpack":
                    assert text.count(" * ") <= int(frame.uniforms[count]), text


def test_a_long_replayed_dot_is_shown_cut_and_evaluated_whole():
    from gpgpu.show.arithmetic import SHOWN_TERMS

    names = {"v": [1.0] * (SHOWN_TERMS + 4), "X": [2.0] * (SHOWN_TERMS + 4)}
    text = substituted("dot(v, X)", names, True)
    assert text.endswith(" + ...)") and text.count(" * ") == SHOWN_TERMS, text
    assert evaluate("dot(v, X)", names) == 2.0 * (SHOWN_TERMS + 4)
    assert substituted("dot(v, X)", {"v": [], "X": []}, True) == "0"


def test_the_table_names_every_fetch_call_of_its_kernels_files():
    from gpgpu.record import instrument
    from gpgpu.kernel import GLSL_DIR

    for kernel, entry in ARITHMETIC.items():
        _, sites = instrument((GLSL_DIR / f"{kernel}.frag").read_text())
        assert len(entry.operands) == len(sites), f"{kernel}: {entry.operands} for the calls {sites}"
        assert not {"x", "y"} & {o.rstrip("*") for o in entry.operands}, f"{kernel}: x and y are the fragment's"


def test_a_wrong_operand_order_is_caught():
    """The check has teeth: outer_product_subtraction with its operands exchanged fails it."""
    rec = run("cholesky", N)
    frame = next(f for f in rec.frames if _kernel(f) == "outer_product_subtraction")
    y, x = (int(v) for v in np.argwhere(frame.covered)[0])
    entry = ARITHMETIC["outer_product_subtraction"]
    formula, names = bind(entry._replace(formula="b - a * c"), operand_values(frame, x, y), True)
    assert not agrees(evaluate(formula, names), float(frame.values[y, x]), list(names.values()))
