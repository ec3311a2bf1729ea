"""The live mode of the page of ``python -m gpgpu.show ALGORITHM --html FILE``: the recorded passes
replayed in headless Chromium through WebGL2 (its software renderer, SwiftShader, with float render
targets), checked against the Python run that recorded them, against numpy for a refused input,
and against the recorder's per-fragment notes.

The pages are written by :func:`gpgpu.show.html.page` from the recorded frames with a one-pixel
stand-in for each PNG frame (the frames' drawing is tested in test_show_html.py), so that a page
costs no matplotlib time. Needs chromium, chromedriver and selenium (else the tests skip)."""
import base64
import io
import shutil

import numpy as np
import pytest
from PIL import Image

from browser_console import problems as _problems

from gpgpu.errors import NotPositiveDefiniteError, SingularMatrixError
from gpgpu.show import ALGORITHMS, describe, run
from gpgpu.show.html import page
from gpgpu.show.live import choices, fragment_es, live_data, to_es

N = 8
#: |live - Python| <= BOUND * max(1, |Python|) for every texel of every pass's target: 256 units
#: of float32's roundoff (2^-24). Measured on SwiftShader against llvmpipe (2024-2025 Chromium,
#: this machine): at most 1 unit, in the blocked forms; the rest are bit-equal. A driver that
#: contracts multiply-adds (NVIDIA) rounds differently in a few passes, which the bound covers.
BOUND = 2.0 ** -16


def _chrome(extra=()):
    chromium = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
    chromedriver = shutil.which("chromedriver")
    if not (chromium and chromedriver):
        pytest.skip("needs a headless Chromium and its driver: apt-get install chromium chromium-driver")
    try:
        from selenium import webdriver
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("needs selenium: pip install -e '.[test]'")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1500,1100",
                "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
                "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>", *extra):   # no network
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        return webdriver.Chrome(service=Service(chromedriver), options=opts)
    except WebDriverException as exc:
        pytest.skip(f"{chromium} with {chromedriver} does not start headless ({exc.msg})")


@pytest.fixture(scope="module")
def browser():
    driver = _chrome()
    try:
        yield driver
    finally:
        driver.quit()


_PNG = io.BytesIO()
Image.new("RGB", (8, 4), (200, 30, 30)).save(_PNG, format="PNG")


def _page(folder, name: str, n: int = N, held: bool = False):
    """The page of ``name`` at n; ``held``: holding the runs of gpgpu.show.live.choices too."""
    rec = run(name, n)
    frames = rec.frames
    path = folder / f"{name}.html"
    shared = {"programs": [], "keys": {}}
    live = live_data(frames, rec.problem, shared)
    runs = (choices(name, n, 0, frames, problem=rec.problem, shared=shared, editable=not live["unmirrored"])
            if held else None)
    path.write_text(page(frames, [_PNG.getvalue()] * len(frames), describe(frames), [("orange", "o", "m")], title=name,
                         live=live, runs=runs), encoding="utf-8")
    return path, frames


def _open(driver, path, hash_=""):
    driver.get("about:blank")
    driver.get_log("browser")
    driver.get(path.as_uri() + hash_)


def _live(driver):
    state, why = driver.execute_script("var L = gpgpuPage.live; return [L.state, L.why]")
    if state == "unavailable":
        pytest.skip(f"this Chromium has no WebGL2 with float render targets: {why}")
    assert state == "done", why
    return driver.execute_script("return gpgpuPage.live.values()")


def _array(b64, shape):
    return np.frombuffer(base64.b64decode(b64), dtype=np.float32).reshape(shape)


# ---------------------------------------------------------------------------- the translation rule
def test_the_es_rule_changes_only_the_version_line_and_noperspective():
    text = "#version 330\nnoperspective out vec3 T0;\nuniform vec2 limit;\nvoid main() {}\n"
    assert to_es(text) == "out vec3 T0;\nuniform vec2 limit;\nvoid main() {}\n"
    fs, sites = fragment_es("outer_product_subtraction.frag", {}, None, instrumented=True)
    assert fs.startswith("#version 300 es\nprecision highp float;")
    assert "noperspective" not in fs and "#version 330" not in fs
    assert [s for s, _ in sites] == ["L", "L", "L"] and "uniform int _rec_slot;" in fs


# ---------------------------------------------------------------------------- (a) every algorithm live
@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_every_algorithm_replays_live_equal_to_the_python_run(browser, tmp_path, name):
    """The page replays every pass in the browser; after each pass (the last one included) the
    target texture read back from WebGL2 equals the recorded run's within BOUND, NaN where it is
    NaN; nothing is fetched from outside the page and the console has no error or warning."""
    path, frames = _page(tmp_path, name)
    _open(browser, path, "#live")
    values = _live(browser)
    assert len(values) == len(frames)
    for f, b in zip(frames, values):
        assert b is not None, (name, f.index, f.kernel)
        got = _array(b, f.values.shape).astype(np.float64)
        want = f.values.astype(np.float64)
        assert np.array_equal(np.isnan(got), np.isnan(want)), (name, f.index, f.kernel)
        ok = np.isnan(want) | (np.abs(got - want) <= BOUND * np.maximum(1.0, np.abs(want)))
        assert ok.all(), (name, f.index, f.kernel, np.abs(got - want).max())
    assert browser.execute_script("return gpgpuPage.live.error") is None
    assert _problems(browser) == []
    fetched = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert [u for u in fetched if not u.startswith("data:")] == []


# ---------------------------------------------------------------------------- (b) any fragment explained
def _expected(frame, x, y):
    return [{"sampler": s, "texel": [tx, ty], "call": call} for s, (tx, ty), call in frame.fetches_at(x, y)]


@pytest.mark.parametrize("mode", ["static", "live"])
def test_three_cells_under_the_mouse_explain_the_recorders_fetches(browser, tmp_path, mode):
    """Cholesky n = 8, the third triangle update (k = 2, Fig. 5 of 001): three cells of the
    target, chosen by the test and not the page's own choice, explain their WPOS, T0, T1 and
    fetches as the recorder noted them on the GPU (texels and calls equal, T0/T1 within float32
    interpolation); one is pointed at with the mouse, the kernel pane marks its fetch lines; an
    unshaded cell says so."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    path, frames = _page(tmp_path, "cholesky")
    _open(browser, path, "#live" if mode == "live" else "#static")      # live starts by itself unless #static
    if mode == "live":
        _live(browser)
    k = [f.index for f in frames if f.kernel == "outer_product_subtraction"][2]
    frame = frames[k]
    for x, y in [(4, 6), (3, 3), (3, 7)]:
        assert frame.shades(x, y)
        got = browser.execute_script(f"return gpgpuPage.fragment({k}, {x}, {y})")
        assert got["shaded"] and got["wpos"] == f"({x + .5:g}, {y + .5:g})"
        assert [{key: q[key] for key in ("sampler", "texel", "call")} for q in got["fetches"]] == _expected(frame, x, y)
        assert got["fetch_count"] == int(frame.fetch_count[y, x]) == 3
        for name, want in (("T0", frame.T0[y, x]), ("T1", frame.T1[y, x])):
            vals = [float(v) for v in got[name].strip("()").split(",")]
            assert np.allclose(vals, want[:len(vals)], atol=1e-5), (name, got[name], want)
        marked = {int(e.get_attribute("data-line")): e.get_attribute("data-fetches")
                  for e in browser.find_elements(By.CSS_SELECTOR, "#kernel-source .fetch")}
        assert marked == {12: "1", 13: "2", 14: "3"}
    assert browser.execute_script(f"return gpgpuPage.fragment({k}, 0, 0)")["shaded"] is False
    assert "not shaded by this pass" in browser.find_element(By.ID, "fragment-info").text
    # the mouse itself: over cell (5, 7) of the target
    browser.execute_script("gpgpuPage.unpin()")
    cx, cy, w, h = browser.execute_script("return gpgpuPage.cellCentre(5, 7)")
    canvas = browser.find_element(By.ID, "explorer")
    ActionChains(browser).move_to_element_with_offset(canvas, int(cx - w / 2), int(cy - h / 2)).perform()
    info = browser.find_element(By.ID, "fragment-info").text.split("\n")
    assert info[0] == "fragment (5, 7): WPOS(5.5, 7.5)"
    assert info[3].startswith("1. texRECT(L, index.xy) -> L(5, 7)")
    assert _problems(browser) == []


# ---------------------------------------------------------------------------- (c) a refused input
def test_an_indefinite_edit_is_refused_at_the_pass_that_reads_the_pivots_back(browser, tmp_path):
    """A diagonal cell of the uploaded matrix made negative: the replay stops at the pass whose
    value the host reads back (the last min reduction of the pivot flags), with the words of
    NotPositiveDefiniteError at the step numpy (float64) finds first failing, and the first NaN
    at that step's square root; reset, the run succeeds again."""
    from selenium.webdriver.common.by import By

    path, frames = _page(tmp_path, "cholesky")
    _open(browser, path, "#live")
    _live(browser)
    upload = frames[0].uploads[frames[0].input_serials["A"]].astype(np.float64)
    j, value = 5, -0.25
    edited = np.tril(upload)
    edited[j, j] = value
    full = edited + np.tril(edited, -1).T
    step = next(k for k in range(N) if np.any(np.linalg.eigvalsh(full[:k + 1, :k + 1]) <= 0))
    assert step == j
    browser.execute_script(f"gpgpuPage.live.edit({j}, {j}, {value}); gpgpuPage.replay()")
    error = browser.execute_script("return gpgpuPage.live.error")
    readback = max(f.index for f in frames if any(c.endswith(".first_bad_pivot") for c in f.context))
    assert error["pass"] == readback and error["step"] == step
    assert error["message"] == str(NotPositiveDefiniteError(step, N))
    root = [f.index for f in frames if f.kernel == "square_root"][step]
    assert browser.execute_script("return gpgpuPage.live.firstNonFinite") == root
    shown = browser.find_element(By.ID, "live-error").text
    assert f"stops at pass {readback + 1} " in shown and str(NotPositiveDefiniteError(step, N)) in shown
    assert browser.find_element(By.ID, "counter").text == f"pass {readback + 1} of {len(frames)}"
    browser.execute_script("gpgpuPage.live.edits = {}; gpgpuPage.replay()")
    assert browser.execute_script("return gpgpuPage.live.error") is None
    assert [e for e in _problems(browser) if "live replay" in e["message"]] == []


def test_editing_is_refused_where_the_host_decisions_are_not_mirrored(browser, tmp_path):
    """Blocked LU's pivots are read back by the host and applied by a host-made permutation: the
    page replays them as recorded and so offers no editing, saying why."""
    from selenium.webdriver.common.by import By

    path, _ = _page(tmp_path, "lu-blocked", 4)
    _open(browser, path, "#live")
    _live(browser)
    text = browser.find_element(By.ID, "editor").text
    assert "pivot's position, read back" in text and not browser.find_elements(By.CSS_SELECTOR, "#editor input")


# ---------------------------------------------------------------------------- (d) LU's decisions mirrored
def _passes_equal(values, frames, what):
    """Every pass the page ran equals the Python run's pass within BOUND, and there are as many."""
    assert len(values) == len(frames), (what, len(values), len(frames))
    for f, b in zip(frames, values):
        got = _array(b, f.values.shape).astype(np.float64)
        want = f.values.astype(np.float64)
        assert np.array_equal(np.isnan(got), np.isnan(want)), (what, f.index, f.kernel)
        ok = np.isnan(want) | (np.abs(got - want) <= BOUND * np.maximum(1.0, np.abs(want)))
        assert ok.all(), (what, f.index, f.kernel, np.abs(got - want).max())


def _python(name, a):
    """The Python run of ``name`` (n = N, seed 0) on matrix ``a`` instead of its own: the frames
    recorded and the SingularMatrixError raised, or None."""
    import gpgpu
    from gpgpu.record import record

    error = None
    with record() as rec:
        try:
            if name == "gauss-jordan":
                rng = np.random.default_rng(0)
                rng.standard_normal((N, N))
                gpgpu.gauss_jordan(a, rng.standard_normal((N, 1)))      # algorithms.py's B for seed 0
            else:
                gpgpu.lu(a, pivoting=name.split("-")[1])
        except SingularMatrixError as exc:
            error = exc
    return rec.frames, error


def _input(frames):
    serial = next(s for f in frames for s in f.uploads if s in f.input_serials.values())
    return next(f.uploads[serial] for f in frames if serial in f.uploads).astype(np.float64)


@pytest.mark.parametrize("name", ["lu-partial", "lu-full", "gauss-jordan"])
def test_an_edit_that_moves_the_pivot_replays_as_python_runs_the_edited_matrix(browser, tmp_path, name):
    """The entry of smallest magnitude in column 0 (in the whole matrix, full pivoting) made the
    largest: step 0's pivot moves there, so the page chooses it from its own textures and draws
    the row (and column) swaps the recording does not have; every pass it runs equals the Python
    run on the edited matrix (as many passes, each within BOUND), and the factor is A's."""
    from selenium.webdriver.common.by import By

    path, frames = _page(tmp_path, name)
    _open(browser, path)                                   # live by itself
    _live(browser)
    a = _input(frames)
    region = np.abs(a[:, :1]) if name != "lu-full" else np.abs(a)
    r, c = np.unravel_index(np.argmin(region), region.shape)
    edited = a.copy()
    edited[r, c] = 0.9990234375 * (1 if a[r, c] >= 0 else -1)         # above every |entry|: max|A| stays in [0.5, 1)
    assert np.abs(a).max() < 0.999
    want, error = _python(name, edited)
    assert error is None
    swaps = lambda fs: [tuple(v.V for v in f.vertices) for f in fs if any(x.endswith(".swap_lines") for x in f.context)]
    assert swaps(want) != swaps(frames)                    # the pivot order changed
    browser.execute_script(f"gpgpuPage.live.edit({r}, {c}, {edited[r, c]}); gpgpuPage.replay()")
    assert browser.execute_script("return gpgpuPage.live.error") is None
    _passes_equal(browser.execute_script("return gpgpuPage.live.values()"), want, name)
    assert f"pass 1 of {len(want)}" == browser.find_element(By.ID, "counter").text
    if name != "gauss-jordan":                             # L U = P A Q of the edited matrix (numpy, float64)
        LU = want[-1].values.astype(np.float64)
        import gpgpu
        parts = gpgpu.lu(edited, pivoting=name.split("-")[1])
        P, L, U = parts[:3]
        Q = parts[3] if len(parts) == 4 else np.eye(N)
        assert np.allclose(np.tril(LU, -1) + np.eye(N), L) and np.allclose(np.triu(LU), U)
        assert np.abs(P @ L @ U @ Q - edited).max() < 1e-5
    assert [e for e in _problems(browser) if "live replay" in e["message"]] == []


@pytest.mark.parametrize("name", ["lu-partial", "lu-full", "gauss-jordan"])
def test_a_zero_column_is_refused_at_the_pivot_read_back_with_pythons_words(browser, tmp_path, name):
    """Column 3 of the uploaded matrix made zero: the matrix is singular (rank 7), Python's run
    raises SingularMatrixError ("zero pivot") at step 3 (with full pivoting at the last step,
    7: the zero column is swapped to the end) after the argmax whose texel it reads back; the
    page stops at that same pass (the Python run's last recorded pass) with the same words, and
    shows them."""
    from selenium.webdriver.common.by import By

    path, frames = _page(tmp_path, name)
    _open(browser, path)
    _live(browser)
    j = 3
    edited = _input(frames)
    edited[:, j] = 0.0
    want, error = _python(name, edited)
    step = N - 1 if name == "lu-full" else j
    assert error is not None and error.k == step and "zero pivot" in str(error)
    assert np.linalg.matrix_rank(edited) == N - 1
    browser.execute_script(f"for (var i = 0; i < {N}; i++) gpgpuPage.live.edit(i, {j}, 0); gpgpuPage.replay()")
    got = browser.execute_script("return gpgpuPage.live.error")
    assert got["message"] == str(error) and got["step"] == step
    assert got["pass"] == len(want) - 1 and want[-1].kernel.startswith("argmax_reduction")
    values = browser.execute_script("return gpgpuPage.live.values()")
    _passes_equal(values, want, name)
    shown = browser.find_element(By.ID, "live-error").text
    assert f"stops at pass {len(want)} " in shown and str(error) in shown
    assert browser.find_element(By.ID, "counter").text == f"pass {len(want)} of {len(want)}"


# ---------------------------------------------------------------------------- (e) another n, another seed
def test_another_n_and_another_seed_replay_as_their_python_runs(browser, tmp_path):
    """The page of LU (n = 8, seed 0) holds n = 4, 6, 8 and seeds 0, 1, 2: n = 4 replays as
    Python's run at n = 4, and seed 1 at n = 8 (another matrix, other pivots) as Python's run
    with seed 1, pass for pass within BOUND."""
    path, frames = _page(tmp_path, "lu-partial", held=True)
    _open(browser, path)
    _live(browser)
    assert browser.execute_script("return gpgpuPage.choices()") == [[4, [0, 1, 2]], [6, [0, 1, 2]], [8, [0, 1, 2]]]
    assert browser.execute_script("return gpgpuPage.choose(4, 0)")
    _passes_equal(_live(browser), run("lu-partial", 4).frames, "n = 4")
    assert browser.execute_script("return gpgpuPage.choose(8, 1)")
    seed1 = run("lu-partial", N, 1).frames
    swaps = lambda fs: [tuple(v.V for v in f.vertices) for f in fs if any(x.endswith(".swap_lines") for x in f.context)]
    assert swaps(seed1) != swaps(frames)
    _passes_equal(_live(browser), seed1, "seed 1")
    assert browser.execute_script("return gpgpuPage.live.choice()") == {"n": 8, "seed": 1}
    assert [e for e in _problems(browser) if "live replay" in e["message"]] == []


def test_live_starts_by_itself_and_static_stays_static(browser, tmp_path):
    """Opened plainly, the page replays live by itself (WebGL2 with float targets here); with
    #static it keeps the static frames until asked."""
    path, _ = _page(tmp_path, "reduce-pingpong", 4)
    _open(browser, path)
    _live(browser)
    assert browser.execute_script("return gpgpuPage.isLive()")
    _open(browser, path, "#static")
    assert not browser.execute_script("return gpgpuPage.isLive()")
    assert browser.execute_script("return gpgpuPage.live.state") == "off"


# ---------------------------------------------------------------------------- fallback
def test_without_webgl_the_page_says_so_and_keeps_the_static_frames(tmp_path):
    driver = _chrome(("--disable-webgl", "--disable-3d-apis"))     # skips without Chromium or selenium
    from selenium.webdriver.common.by import By

    path, _ = _page(tmp_path, "reduce-pingpong", 4)
    try:
        _open(driver, path, "#live")
        assert driver.execute_script("return gpgpuPage.live.state") == "unavailable"
        status = driver.find_element(By.ID, "live-status").text
        assert status.startswith("Live mode is not available here: this browser gives no WebGL2 context")
        assert "static frames" in status
        assert driver.find_element(By.ID, "frame").is_displayed()
        assert not driver.execute_script("return gpgpuPage.isLive()")
        assert _problems(driver) == []
    finally:
        driver.quit()
