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
            out.append((f, evaluate(f, names), float(values[c]), substituted(f, names), list(names.values())))
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
