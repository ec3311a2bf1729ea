"""Each fragment's arithmetic on the page of ``python -m gpgpu.show ALGORITHM --html`` in headless
Chromium: for every algorithm of ``--list`` at n = 8, three cells of three passes each (all its
passes where it has fewer; sparse-product has one, its loop replayed from the inputs), pinned as
the mouse pins them; the panel's substituted expression, read as the page displays it, evaluates in
float64 (from the displayed float32 values) to the displayed written value within float32
rounding, wherever the table (gpgpu/show/arithmetic.py) says the kernel's arithmetic is exact;
elsewhere the panel shows the expression with the values the recorder noted and says so."""
import numpy as np
import pytest

from gpgpu.record import MAX_FETCHES
from gpgpu.show import ALGORITHMS
from gpgpu.show.arithmetic import ARITHMETIC, agrees, evaluate

from test_show_live import _live, _open, _page, _problems, browser  # noqa: F401 (the fixture)


def _kernel(frame) -> str:
    return frame.file.rsplit(".", 1)[0]


def _exact_at(frame, x, y) -> bool:
    """Exact where the recorder notes every fetch, or where the kernel's loop is replayed from the
    pass's inputs (the table's ``replay``)."""
    entry = ARITHMETIC[_kernel(frame)]
    return entry.exact and (bool(getattr(entry, "replay", None)) or int(frame.fetch_count[y, x]) <= MAX_FETCHES)


def _chosen(frames):
    """Three passes (of different kernels where the run has three whose arithmetic is exact, those with
    the most operands first; else the passes of any kernel), three covered cells each."""
    exact = [f for f in frames if f.covered is not None and f.covered.any() and ARITHMETIC[_kernel(f)].exact]
    pool = exact or [f for f in frames if f.covered is not None and f.covered.any()]
    pool = sorted(pool, key=lambda f: -len(ARITHMETIC[_kernel(f)].operands))   # the most operands first
    picked, kernels = [], set()
    for f in pool:
        if _kernel(f) not in kernels:
            picked.append(f)
            kernels.add(_kernel(f))
    picked += [f for f in pool if f not in picked]
    out = []
    for f in picked[:3]:
        cells = np.argwhere(f.covered)
        take = [cells[0], cells[len(cells) // 2], cells[-1]]
        out.append((f, [(int(c[1]), int(c[0])) for c in take]))
    return out


def _panel(driver, k, x, y):
    driver.execute_script(f"gpgpuPage.fragment({k}, {x}, {y})")
    return driver.execute_script(
        "return Array.prototype.map.call(document.querySelectorAll('#arithmetic .arith'), function (e) {"
        " return [e.classList.contains('exact'), e.querySelector('.expr').textContent,"
        " e.querySelector('.result').textContent]; })")


def _numbers(text):
    import re
    return [float(t) for t in re.findall(r"-?\d+\.?\d*(?:e[+-]?\d+)?", text)]


@pytest.mark.parametrize("mode", ["static", "live"])
@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_the_panels_expression_evaluates_to_the_written_value(browser, tmp_path, name, mode):
    if mode == "live" and name not in ("cholesky", "lu-blocked", "cg-iteration", "sparse-product"):
        pytest.skip("live mode: four algorithms (the recorded textures are the live ones, test_show_live.py)")
    path, frames = _page(tmp_path, name)
    _open(browser, path, "#live" if mode == "live" else "#static")
    if mode == "live":
        _live(browser)
    evaluated, chosen = 0, _chosen(frames)
    for frame, cells in chosen:
        for x, y in cells:
            lines = _panel(browser, frame.index, x, y)
            assert lines, f"{name} pass {frame.index + 1} ({frame.kernel}) fragment ({x}, {y}): no arithmetic shown"
            for exact, expr, result in lines:
                assert exact == _exact_at(frame, x, y), (name, frame.kernel, x, y, exact)
                if not exact:
                    continue
                value, written = evaluate(expr, {}), float(result)
                assert agrees(value, written, _numbers(expr)), (
                    f"{name} pass {frame.index + 1} ({frame.kernel}) fragment ({x}, {y}): {expr} = {value!r}, "
                    f"the panel says {result}")
                evaluated += 1
    # every algorithm evaluates: three cells of three passes (all its passes where it has fewer)
    assert evaluated >= 3 * len(chosen) and len(chosen) == min(3, len(frames)), (name, evaluated, len(chosen))
    assert _problems(browser) == []


@pytest.mark.parametrize("name, kernel", [("sparse-product", "sparse_ellpack"),
                                          ("cg-iteration", "matrix_vector_inner_product"),
                                          ("cholesky-inner", "inner_product_subtraction")])
def test_a_replayed_loop_is_evaluated_on_the_page(browser, tmp_path, name, kernel):
    """The kernels whose loops fetch more than the recorder notes: the panel reads the loop again from
    the pass's input textures and shows the dot as the sum of its products, which evaluates to the
    written value (three cells of the kernel's last pass, the longest loop)."""
    path, frames = _page(tmp_path, name)
    _open(browser, path, "#static")
    frame = [f for f in frames if _kernel(f) == kernel and f.covered is not None and f.covered.any()][-1]
    assert int(frame.fetch_count.max()) > MAX_FETCHES, "the loop fits the recorder's notes: nothing replayed"
    cells = np.argwhere(frame.covered)
    for y, x in (cells[0], cells[len(cells) // 2], cells[-1]):
        lines = _panel(browser, frame.index, int(x), int(y))
        assert lines and all(exact for exact, _, _ in lines), (name, kernel, x, y, lines)
        for _, expr, result in lines:
            assert "dot(" not in expr and "..." not in expr, expr
            assert agrees(evaluate(expr, {}), float(result), _numbers(expr)), (expr, result)
    assert _problems(browser) == []
