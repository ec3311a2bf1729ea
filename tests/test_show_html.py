"""``python -m gpgpu.show ALGORITHM --html FILE``: one self-contained page of every pass, tried in
a real browser (headless Chromium driven by selenium; ``make test`` installs Debian's chromium and
chromium-driver when run as root, the test extra installs selenium; otherwise those tests skip).
The page is a small Cholesky (n = 4: 20 passes), written once for the module."""
import base64
import io
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from browser_console import problems

from gpgpu.show import describe, render_frames, run
from gpgpu.show.__main__ import main as show_main

ROOT = Path(__file__).resolve().parent.parent
HEADING = "cholesky, n = 4: outer-product Cholesky, triangle update (the default) (001 Algorithm 5, Fig. 5)"
UPDATE = 6          # pass 6 of cholesky n = 4: the first outer_product_subtraction (Fig. 5 of 001)


def _browser_paths():
    browser = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
    return browser, shutil.which("chromedriver")


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    path = tmp_path_factory.mktemp("page") / "cholesky.html"
    assert show_main(["cholesky", "--n", "4", "--html", str(path), "--no-progress"]) == 0
    return path


@pytest.fixture(scope="module")
def frames():
    return run("cholesky", 4).frames


@pytest.fixture(scope="module")
def browser():
    chromium, chromedriver = _browser_paths()
    if not (chromium and chromedriver):
        pytest.skip("needs a headless Chromium and its driver: apt-get install chromium chromium-driver "
                    "(make test installs them when run as root)")
    try:
        from selenium import webdriver
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("needs selenium: pip install -e '.[test]'")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1500,1100",
                "--use-angle=swiftshader", "--enable-unsafe-swiftshader",   # the page asks for WebGL2 (its live button)
                "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>"):   # no network either way
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        driver = webdriver.Chrome(service=Service(chromedriver), options=opts)
    except WebDriverException as exc:      # e.g. Ubuntu's chromium-browser, a stub that asks for the snap
        pytest.skip(f"{chromium} with {chromedriver} does not start headless ({exc.msg}); "
                    "install Debian's chromium and chromium-driver")
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def loaded(browser, page):
    """The page freshly loaded at pass 1, the browser's console emptied of earlier pages' messages;
    ``#static``: its PNG frames (where WebGL2 is there the page replays live by itself, a canvas
    in place of the picture: test_show_live.py)."""
    browser.get("about:blank")
    browser.get_log("browser")
    browser.get(page.as_uri() + "#static")
    return browser


def _by_id(driver, id_):
    from selenium.webdriver.common.by import By

    return driver.find_element(By.ID, id_)


def _pixels(data_url: str) -> np.ndarray:
    assert data_url.startswith("data:image/png;base64,")
    with Image.open(io.BytesIO(base64.b64decode(data_url.split(",", 1)[1]))) as im:
        return np.asarray(im.convert("RGB"))


_RENDERED = {}


def _drawn(frames, k: int) -> np.ndarray:
    """Frame k (from 0) as ``render_frames`` draws it for a page (its PNG, without the caption and
    the legend, which the page writes once in HTML), as pixels."""
    key = id(frames)
    if key not in _RENDERED:
        _RENDERED[key] = [png for png, _ in render_frames(frames, heading=HEADING, legend=False)]
    with Image.open(io.BytesIO(_RENDERED[key][k])) as im:
        return np.asarray(im.convert("RGB"))


def _state(driver):
    return (_by_id(driver, "counter").text, _by_id(driver, "caption").text, _by_id(driver, "frame").get_attribute("src"))


# ---------------------------------------------------------------------------- the file itself
class _Refs(HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs, self.scripts, self.styles = [], [], 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name in ("src", "href", "srcset", "poster", "data", "action"):
            if attrs.get(name) is not None:
                self.refs.append((tag, name, attrs[name]))
        if tag == "script":
            self.scripts.append(attrs)


def test_the_page_is_one_file_that_names_nothing_outside_it(page, frames):
    """No src/href but data: URLs (one PNG a pass); no external script or style sheet, no CSS
    url() or @import; the frames inline are the PNG frames of the same passes, in order."""
    text = page.read_text()
    refs = _Refs()
    refs.feed(text)
    assert refs.refs and all(v.startswith("data:") for _, _, v in refs.refs), refs.refs
    assert refs.scripts == [{"type": "application/json", "id": "gpgpu-data"}, {}]     # both inline
    assert not re.search(r"@import|url\(|<link[^>]+stylesheet", text)
    pngs = re.findall(r"data:image/png;base64,[A-Za-z0-9+/=]+", text)
    assert len(pngs) == len(frames) == 20
    for k in (0, UPDATE - 1, 19):      # pass k + 1's picture is pass k + 1's frame as --out draws it
        assert np.array_equal(_pixels(pngs[k]), _drawn(frames, k))


def test_html_options_are_checked_before_the_work(tmp_path, monkeypatch, capsys):
    """--html naming a folder, a file in a missing folder, or given with --window: an argparse
    error (status 2) that names the cause, before anything runs."""
    import gpgpu.show.__main__ as cli

    def work(*a, **k):
        raise AssertionError("the algorithm ran before --html was checked")

    monkeypatch.setattr(cli, "run", work)
    cases = [([str(tmp_path)], "is a folder; give a file name"),
             ([str(tmp_path / "missing" / "p.html")], "does not exist; create it or give another file"),
             ([str(tmp_path / "p.html"), "--window"], "--html writes a page, --window opens a window: give one")]
    for args, message in cases:
        with pytest.raises(SystemExit) as exc:
            show_main(["cholesky", "--n", "4", "--html", *args])
        assert exc.value.code == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "p.html").exists()


# ---------------------------------------------------------------------------- in the browser
def test_the_console_counts_every_error_and_warning_but_the_drivers_performance_hints():
    """A page's warnings and errors count; the driver's performance hint that Chromium passes on
    from a machine with a GPU (the live page reads its textures back on purpose) does not."""
    class Log:
        def get_log(self, kind):
            assert kind == "browser"
            return [{"level": "WARNING", "message": "x.html 1247 [.WebGL-0x1]GL Driver Message (OpenGL, "
                                                    "Performance, GL_CLOSE_PATH_NV, High): GPU stall due to ReadPixels"},
                    {"level": "WARNING", "message": "x.html 12 [.WebGL-0x1]GL_INVALID_OPERATION: glDrawArrays"},
                    {"level": "SEVERE", "message": "x.html 3 Uncaught TypeError"},
                    {"level": "INFO", "message": "x.html 4 live replay done"}]
    assert [e["message"][-12:] for e in problems(Log())] == ["glDrawArrays", "ht TypeError"]


def test_the_page_loads_without_console_errors_or_requests(loaded, frames):
    """Loaded from file: (behind a proxy that answers nothing), the console has no error or
    warning, nothing was fetched, and the first frame is decoded and shown."""
    assert problems(loaded) == []
    fetched = loaded.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert [u for u in fetched if not u.startswith("data:")] == []
    assert loaded.execute_script("var i = document.getElementById('frame'); return [i.complete, i.naturalWidth]") \
        == [True, _drawn(frames, 0).shape[1]]
    assert _by_id(loaded, "counter").text == "pass 1 of 20"


def test_next_and_the_keys_step_the_frame_and_caption(loaded, frames):
    """"next" shows pass 2: its caption (the PNG's), its picture; the keys step too (Right, Left,
    End, Home), and stop at either end."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    first = _state(loaded)
    assert first[1] == describe(frames, HEADING)[0]
    _by_id(loaded, "next").click()
    second = _state(loaded)
    assert second[0] == "pass 2 of 20" and second[1] == describe(frames, HEADING)[1] != first[1]
    assert second[2] != first[2]
    assert np.array_equal(_pixels(second[2]), _drawn(frames, 1))
    _by_id(loaded, "prev").click()
    assert _state(loaded) == first
    body = _by_id(loaded, "caption")          # keys go to the page, not to a control
    ActionChains(loaded).move_to_element(body).click().perform()
    for key, counter in [(Keys.ARROW_RIGHT, 2), (Keys.ARROW_RIGHT, 3), (Keys.ARROW_LEFT, 2), (Keys.END, 20),
                         (Keys.ARROW_RIGHT, 20), (Keys.HOME, 1), (Keys.ARROW_LEFT, 1)]:
        ActionChains(loaded).send_keys(key).perform()
        assert _by_id(loaded, "counter").text == f"pass {counter} of 20", key
        assert _by_id(loaded, "caption").text == describe(frames, HEADING)[counter - 1]
    _by_id(loaded, "last").click()
    assert _by_id(loaded, "counter").text == "pass 20 of 20"
    _by_id(loaded, "first").click()
    assert _state(loaded) == first


def test_the_slider_jumps_and_play_steps(loaded, frames):
    """Moving the slider to pass 6 shows pass 6; End on the slider, the last pass; play moves on
    by itself and pause stops it."""
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    slider = _by_id(loaded, "slider")
    assert slider.get_attribute("max") == "20"
    loaded.execute_script("arguments[0].value = '6'; arguments[0].dispatchEvent(new Event('input'))", slider)
    assert _by_id(loaded, "counter").text == "pass 6 of 20"
    assert _by_id(loaded, "caption").text == describe(frames, HEADING)[5]
    slider.send_keys(Keys.END)                  # the slider's own keys
    assert _by_id(loaded, "counter").text == "pass 20 of 20" and slider.get_attribute("value") == "20"
    _by_id(loaded, "first").click()
    _by_id(loaded, "play").click()
    WebDriverWait(loaded, 10).until(lambda d: _by_id(d, "counter").text != "pass 1 of 20")
    _by_id(loaded, "play").click()
    stopped = _by_id(loaded, "counter").text
    loaded.execute_script("return new Promise(r => setTimeout(r, 1500))")
    assert _by_id(loaded, "counter").text == stopped and stopped != "pass 1 of 20"


def test_the_kernel_pane_shows_the_source_with_the_fetch_lines(browser, page, frames):
    """At pass 6 (the triangle update of Fig. 5 of 001), the pane holds glsl/outer_product_subtraction.frag
    line for line, the lines of the fragment's three fetches highlighted and numbered (found here
    by their call text), and the fragment's T0 and T1 as Fig. 5 has them: fragment (2, 2) at
    k = 0 reads its neighbour at T0 = (k + .5, i + .5) and, swizzled, the pivot at T1 = (j + .5, k + .5)."""
    from selenium.webdriver.common.by import By

    browser.get("about:blank")
    browser.get(page.as_uri() + f"#pass-{UPDATE}&static")       # the address names a pass (the PNG frames)
    frame = frames[UPDATE - 1]
    assert frame.kernel == "outer_product_subtraction"
    assert _by_id(browser, "kernel-title").text == "glsl/outer_product_subtraction.frag"
    source = (ROOT / "glsl" / "outer_product_subtraction.frag").read_text().rstrip("\n").split("\n")
    shown = browser.find_elements(By.CSS_SELECTOR, "#kernel-source .line")
    assert [e.get_attribute("textContent").removeprefix(str(k + 1)).split("\u2190")[0].rstrip()
            for k, e in enumerate(shown)] == [s.rstrip() for s in source]
    fetches = frame.fetches_at(2, 2)
    expected = {}
    for k, (_, _, call) in enumerate(fetches):
        lines = [i + 1 for i, s in enumerate(source) if call in " ".join(s.split())]
        assert len(lines) == 1, call
        expected[lines[0]] = str(k + 1)
    assert expected == {12: "1", 13: "2", 14: "3"}
    marked = {int(e.get_attribute("data-line")): e.get_attribute("data-fetches")
              for e in browser.find_elements(By.CSS_SELECTOR, "#kernel-source .fetch")}
    assert marked == expected
    assert all(e.value_of_css_property("background-color") not in ("rgba(0, 0, 0, 0)", "transparent")
               for e in browser.find_elements(By.CSS_SELECTOR, "#kernel-source .fetch"))
    info = _by_id(browser, "fragment-info").text
    assert info.split("\n")[:3] == ["fragment (2, 2): WPOS(2.5, 2.5)", "T0 = (0.5, 2.5)", "T1 = (2.5, 0.5)"]
    assert "3. texRECT(L, pivot_index.yx) -> L(0, 2)   line 14" in info
    browser.find_element(By.ID, "next").click()          # pass 7, square_root: its own file and lines
    assert _by_id(browser, "kernel-title").text == "glsl/square_root.frag"
    assert len(browser.find_elements(By.CSS_SELECTOR, "#kernel-source .fetch")) == 1


def test_a_screenshot_is_not_blank(loaded):
    """The page as drawn: many colours, and the frame's box on screen is not one colour."""
    shot = Image.open(io.BytesIO(loaded.get_screenshot_as_png())).convert("RGB")
    pixels = np.asarray(shot)
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 200
    r = loaded.execute_script("var b = document.getElementById('frame').getBoundingClientRect();"
                              "return [b.left, b.top, b.width, b.height, window.devicePixelRatio]")
    s = r[4]
    box = pixels[int(r[1] * s):int((r[1] + r[3]) * s), int(r[0] * s):int((r[0] + r[2]) * s)]
    assert box.size and box.reshape(-1, 3).std(axis=0).max() > 20


def test_every_algorithms_fetches_are_found_on_their_kernels_lines():
    """For every algorithm of --list (n = 4), every pass's fetches as the page lists them carry
    the lines of the kernel file where that call is written (found here by its text)."""
    from gpgpu.show import ALGORITHMS
    from gpgpu.show.html import _pass_data

    checked = 0
    for name in ALGORITHMS:
        sources = {}
        for f in run(name, 4).frames:
            d = _pass_data(f, None, sources)
            assert d["source"] == f.file and d["recorded"], (name, f.kernel)
            lines = [" ".join(s.split()) for s in (ROOT / "glsl" / f.file).read_text().split("\n")]
            for q in d["fetches"]:
                a, b = q["lines"]
                assert q["call"] in " ".join(lines[a - 1:b]), (name, f.kernel, q)
                assert a == b or q["call"] not in " ".join(lines[a - 1:b - 1]), (name, f.kernel, q)
                checked += 1
            where = f.chosen_fragment()
            assert len(d["fetches"]) == (len(f.fetches_at(*where)) if where else 0), (name, f.kernel)
    assert checked > 300


def test_a_copy_and_an_unrecorded_pass_say_why_they_have_no_fetches(browser, tmp_path):
    """A copy-to-texture pass (no fragment program) and a pass whose vertex program places the
    primitive (not instrumented) each get a sentence instead of fetches, with no console error."""
    import dataclasses

    from gpgpu.show.html import page

    f = run("reduce-pingpong", 2).frames[0]
    frames = [f, dataclasses.replace(f, file="glCopyTexSubImage2D", covered=None),
              dataclasses.replace(f, covered=None)]
    buf = io.BytesIO()
    Image.new("RGB", (8, 4), (200, 30, 30)).save(buf, format="PNG")
    path = tmp_path / "p.html"
    path.write_text(page(frames, [buf.getvalue()] * 3, ["a", "b", "c"], [("orange", "o", "m")], title="t"))
    browser.get("about:blank")
    browser.get_log("browser")
    browser.get(path.as_uri() + "#pass-2&static")
    assert _by_id(browser, "fragment-info").text == "A copy into the texture (glCopyTexSubImage2D): no fragment program runs."
    assert _by_id(browser, "kernel-source").text == ""
    _by_id(browser, "next").click()
    assert _by_id(browser, "fragment-info").text.startswith("Its vertex program places this pass's primitive")
    assert "texRECT" in _by_id(browser, "kernel-source").text
    assert problems(browser) == []
