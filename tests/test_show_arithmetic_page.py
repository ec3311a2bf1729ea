"""Each fragment's arithmetic on the page of ``python -m gpgpu.show ALGORITHM --html`` in headless
Chromium: for every algorithm of ``--list`` at n = 8, three cells of three passes each, pinned as
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
    return ARITHMETIC[_kernel(frame)].exact and int(frame.fetch_count[y, x]) <= MAX_FETCHES


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
    if mode == "live" and name not in ("cholesky", "lu-blocked", "cg-iteration"):
        pytest.skip("live mode: three algorithms (the recorded textures are the live ones, test_show_live.py)")
    path, frames = _page(tmp_path, name)
    _open(browser, path, "#live" if mode == "live" else "#static")
    if mode == "live":
        _live(browser)
    evaluated = 0
    for frame, cells in _chosen(frames):
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
    assert evaluated >= 9 or not any(ARITHMETIC[_kernel(f)].exact for f in frames), name
    assert _problems(browser) == []
