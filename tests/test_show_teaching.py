"""The teaching page as a student meets it, in headless Chromium (SwiftShader's
WebGL2): the counter and the caption agree after an edit that changes the pass count; the static
and the live mode say which they are; a singular or indefinite input typed into the editor is
refused as Python refuses it; bad entries are refused with a message naming the cell. Needs
chromium, chromedriver and selenium (else the tests skip); the pages are written as in
test_show_live.py (one-pixel stand-ins for the PNG frames)."""
import re

import numpy as np
import pytest
from test_show_live import N, _chrome, _input, _live, _open, _page, _problems, _python
from test_show_live import browser  # noqa: F401  (the module's headless Chromium, a fixture)


def _text(driver, id_):
    from selenium.webdriver.common.by import By

    return driver.find_element(By.ID, id_).text


def _counted(text):
    """(k, of) of the first "pass k of N" in a text."""
    m = re.search(r"pass (\d+) of (\d+)", text)
    return (int(m[1]), int(m[2])) if m else None


# ---------------------------------------------------------------------------- the counter and the caption
def test_the_counter_and_the_caption_agree_after_an_edit_changes_the_pass_count(browser, tmp_path):
    """LU with partial pivoting: an edit that moves step 0's pivot adds the swaps the recording
    lacks, and a zero column stops the run early; at the first, a middle and the last pass the
    caption counts "pass k of N" as the counter does (it said the recorded run's count)."""
    path, frames = _page(tmp_path, "lu-partial")
    _open(browser, path)
    _live(browser)
    a = _input(frames)
    r = int(np.argmin(np.abs(a[:, 0])))
    moved = a.copy()
    moved[r, 0] = 0.9990234375 * (1 if a[r, 0] >= 0 else -1)
    zero = a.copy()
    zero[:, 3] = 0.0
    for edited, edit in ((moved, f"gpgpuPage.live.edit({r}, 0, {moved[r, 0]});"),
                         (zero, f"for (var i = 0; i < {N}; i++) gpgpuPage.live.edit(i, 3, 0);")):
        want, _ = _python("lu-partial", edited)
        assert len(want) != len(frames)
        browser.execute_script("gpgpuPage.live.edits = {};" + edit + "gpgpuPage.replay()")
        total = len(browser.execute_script("return gpgpuPage.live.values()"))
        assert total == len(want)
        for k in (0, total // 2, total - 1):
            browser.execute_script(f"gpgpuPage.show({k})")
            assert _counted(_text(browser, "counter")) == (k + 1, total)
            assert _counted(_text(browser, "caption")) == (k + 1, total), _text(browser, "caption")
    assert [e for e in _problems(browser) if "live replay" in e["message"]] == []


# ---------------------------------------------------------------------------- static and live say which
def test_static_mode_says_it_is_static(browser, tmp_path):
    """Opened with #static, and after "show the static frames", the status line says the passes
    are the Python run's as recorded, not "Live: ..." (it kept the live run's line)."""
    from selenium.webdriver.common.by import By

    path, frames = _page(tmp_path, "cholesky", 4)
    _open(browser, path, "#static")
    status = _text(browser, "live-status")
    assert status.startswith(f"Static: the {len(frames)} passes as the Python run recorded them"), status
    _open(browser, path)
    _live(browser)
    assert _text(browser, "live-status").startswith("Live: ")
    browser.find_element(By.ID, "live").click()
    assert not browser.execute_script("return gpgpuPage.isLive()")
    status = _text(browser, "live-status")
    assert status.startswith("Static: ") and "Live" not in status.split(";")[0], status


def test_without_webgl2_the_live_button_is_disabled_with_the_reason(tmp_path):
    """No WebGL2: the "run live" button is disabled, its title saying why, whether the page opens
    live (it falls back) or #static (it was enabled and did nothing)."""
    driver = _chrome(("--disable-webgl", "--disable-3d-apis"))
    from selenium.webdriver.common.by import By

    path, _ = _page(tmp_path, "reduce-pingpong", 4)
    try:
        for hash_ in ("", "#static"):
            _open(driver, path, hash_)
            button = driver.find_element(By.ID, "live")
            assert not button.is_enabled(), hash_
            assert "no WebGL2" in button.get_attribute("title"), hash_
        assert _problems(driver) == []
    finally:
        driver.quit()


def _first_read(frames, serial, x, y):
    """(pass index, fragment, fetch number from 1) of the first fetch of texel (x, y) of texture
    ``serial`` that the recorder noted."""
    for f in frames:
        names = [k for k, s in f.input_serials.items() if s == serial]
        if not names or f.covered is None:
            continue
        for fy, fx in zip(*np.nonzero(f.covered)):
            for i, (sampler, texel, _) in enumerate(f.fetches_at(int(fx), int(fy))):
                if sampler in names and tuple(texel) == (x, y):
                    return f.index, (int(fx), int(fy)), i + 1
    return None


def test_pointing_at_an_input_cell_says_what_it_holds_and_who_reads_it(browser, tmp_path):
    """Cholesky n = 8, live: the editor's cell (col 2, row 5) names A(5, 2), scaled as uploaded,
    and the first pass whose fragment fetches it (found here in the recorder's notes); a cell
    above the diagonal says that the algorithm reads only the lower triangle."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    path, frames = _page(tmp_path, "cholesky")
    _open(browser, path)
    _live(browser)
    I = browser.execute_script("return gpgpuPage.live.input()")
    k, (fx, fy), i = _first_read(frames, I["texture"], 2, 5)
    cell = browser.find_element(By.CSS_SELECTOR, '#editor input[data-row="5"][data-col="2"]')
    ActionChains(browser).move_to_element(cell).perform()
    story = _text(browser, "editor-cell")
    assert f"cell (col 2, row 5) of the input texture: 2^{I['exponent']} A(5, 2) = " in story, story
    assert f"Pass {k + 1} ({frames[k].kernel}) reads it first: fragment ({fx}, {fy}), its fetch {i}." in story
    upper = browser.find_element(By.CSS_SELECTOR, '#editor input[data-row="2"][data-col="5"]')
    ActionChains(browser).move_to_element(upper).perform()
    assert "reads only the lower triangle of A" in _text(browser, "editor-cell")


# ---------------------------------------------------------------------------- typed inputs refused as Python refuses
def _cell(driver, r, c):
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, f'#editor input[data-row="{r}"][data-col="{c}"]')


def _type(driver, cells):
    """Type each (row, col, text) into the editor's grid, then press "replay with these values"."""
    from selenium.webdriver.common.by import By

    for r, c, text in cells:
        box = _cell(driver, r, c)
        box.clear()
        box.send_keys(text)
    driver.find_element(By.ID, "editor-replay").click()


def test_an_exactly_singular_typed_input_is_refused_as_gpgpu_lu_refuses_it(browser, tmp_path):
    """Issue 61's input: LU with partial pivoting, n = 6, row 1 typed equal to row 0 as the grid
    shows row 0. The page replays these float32 values (the grid shows every digit a float32
    needs, so a row typed from what it shows is the same row) and stops where gpgpu.lu on the same
    values stops, zero pivot at step k = 5, in the same words and at the pass of its last pivot
    search (it ran 50 passes to U(5,5) = 4.48e-5: the grid showed 3 digits)."""
    import gpgpu
    from gpgpu.errors import SingularMatrixError

    n = 6
    path, frames = _page(tmp_path, "lu-partial", n)
    _open(browser, path)
    _live(browser)
    shown = [_cell(browser, 0, c).get_attribute("value") for c in range(n)]
    _type(browser, [(1, c, shown[c]) for c in range(n)])
    edited = _input(frames)
    edited[1] = edited[0]
    with pytest.raises(SingularMatrixError) as raised:
        gpgpu.lu(edited, pivoting="partial")
    error = raised.value
    assert error.k == n - 1 and "zero pivot" in str(error)
    got = browser.execute_script("return gpgpuPage.live.error")
    assert got is not None, browser.execute_script("return gpgpuPage.live.values().length")
    assert got["message"] == str(error) and got["step"] == error.k
    from gpgpu.record import record
    with record() as rec, pytest.raises(SingularMatrixError):
        gpgpu.lu(edited, pivoting="partial")
    assert got["pass"] == len(rec.frames) - 1 and rec.frames[-1].kernel.startswith("argmax_reduction")
    assert str(error) in _text(browser, "live-error")


def test_a_typed_cholesky_input_with_a_zero_pivot_is_refused_as_gpgpu_cholesky_refuses_it(browser, tmp_path):
    """Cholesky, n = 8: cells (col 0, row 1) and (col 1, row 1) typed as the grid shows cell
    (col 0, row 0), a; the leading 2 x 2 minor [[a, a], [a, a]] is singular, gpgpu.cholesky on the
    same float32 values raises NotPositiveDefiniteError at step k = 1, and the page stops there in
    the same words, at the pass that reads the pivot flags back."""
    import gpgpu
    from gpgpu.errors import NotPositiveDefiniteError

    path, frames = _page(tmp_path, "cholesky")
    _open(browser, path)
    _live(browser)
    a = _cell(browser, 0, 0).get_attribute("value")
    _type(browser, [(1, 0, a), (1, 1, a)])
    edited = np.tril(_input(frames))
    edited[1, 0] = edited[1, 1] = edited[0, 0]
    with pytest.raises(NotPositiveDefiniteError) as raised:
        gpgpu.cholesky(edited + np.tril(edited, -1).T)
    assert raised.value.k == 1
    got = browser.execute_script("return gpgpuPage.live.error")
    readback = max(f.index for f in frames if any(c.endswith(".first_bad_pivot") for c in f.context))
    assert got is not None and got["message"] == str(raised.value) and got["step"] == 1 and got["pass"] == readback


# ---------------------------------------------------------------------------- bad entries refused
@pytest.mark.parametrize("text, says", [("abc", '"abc" is not a number'), ("", "empty"), ("inf", '"inf" is not a number'),
                                        ("nan", '"nan" is not a number'), ("1e39", "beyond float32's range")])
def test_a_bad_entry_is_refused_with_a_message_naming_the_cell(browser, tmp_path, text, says):
    """Cholesky n = 4: a cell typed as text that is not a finite float32 is not replayed (the
    replay ignored it silently and ran the original input); the message names the cell."""
    path, _ = _page(tmp_path, "cholesky", 4)
    _open(browser, path)
    _live(browser)
    before = browser.execute_script("return gpgpuPage.live.seconds")
    _type(browser, [(3, 1, text)])
    shown = _text(browser, "editor-error")
    assert shown.startswith("Not replayed: cell (col 1, row 3): ") and says in shown, shown
    assert browser.execute_script("return gpgpuPage.live.edits") == {}
    assert browser.execute_script("return gpgpuPage.live.seconds") == before        # no replay


def test_an_edit_the_algorithm_never_reads_is_refused(browser, tmp_path):
    """Cholesky reads only the lower triangle of A: a cell above the diagonal typed is refused,
    with the cell to edit instead (it was accepted and changed nothing)."""
    path, _ = _page(tmp_path, "cholesky", 4)
    _open(browser, path)
    _live(browser)
    _type(browser, [(1, 3, "0.5")])
    shown = _text(browser, "editor-error")
    assert shown.startswith("Not replayed: cell (col 3, row 1) holds no entry the algorithm reads: it reads only the "
                            "lower triangle of A"), shown
    assert "edit cell (col 1, row 3) instead" in shown
    assert browser.execute_script("return gpgpuPage.live.edits") == {}


# ---------------------------------------------------------------------------- two voices
def test_the_page_says_each_pass_in_plain_words_before_the_bookkeeping(browser, tmp_path):
    """Cholesky n = 8 (static and live): the recurrence heads the page; each pass shows its plain
    sentence (gpgpu.show.story) above the caption; the first ping-pong copy explains the
    ping-pong; the pass that holds L is marked as the answer, the pivot check after it is not."""
    from gpgpu.show import describe, run
    from gpgpu.show.html import page
    from gpgpu.show.live import live_data
    from gpgpu.show.story import SUMMARIES, plain_words

    rec = run("cholesky", N)
    frames = rec.frames
    path = tmp_path / "c.html"
    path.write_text(page(frames, None, describe(frames), [("orange", "o", "m")], title="c",
                         live=live_data(frames, rec.problem), algorithm="cholesky"), encoding="utf-8")
    words = plain_words(frames, "cholesky")
    answer = next(i for i, w in enumerate(words) if w["answer"])
    copy = next(f.index for f in frames if f.kernel == "copy")
    for hash_ in ("#static", ""):
        _open(browser, path, hash_)
        assert _text(browser, "summary") == "What the passes compute: " + SUMMARIES["cholesky"]
        for k in (0, copy, answer, answer + 1):
            browser.execute_script(f"gpgpuPage.show({k})")
            assert _text(browser, "plain") == words[k]["plain"]
            marked = browser.execute_script("return document.getElementById('plain').classList.contains('answer')")
            assert marked == (k == answer), k
        browser.execute_script(f"gpgpuPage.show({copy})")
        assert "a pass cannot read the texture it writes" in _text(browser, "plain")
    assert _problems(browser) == []
