"""The GLFW window of ``python -m gpgpu.show --window``, for real: under Xvfb, driven by key
presses sent through the X server (xdotool), its screenshots compared with the headless
rendering of the same passes, its words (the text layer, Dear ImGui through imgui-bundle: the
``window`` extra) read back from what it drew. ``make test`` installs Xvfb and xdotool when run
as root, and the extra."""
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from gpgpu.show import run
from gpgpu.show.window import _imgui_problem, captions, render_offscreen

ROOT = Path(__file__).resolve().parent.parent
NO_EXTRA = _imgui_problem()
needs_extra = pytest.mark.skipif(NO_EXTRA is not None, reason="needs the window extra (imgui-bundle): "
                                 "pip install 'gpgpu[window]' (make test installs it)")
needs_xvfb = pytest.mark.skipif(not shutil.which("Xvfb"),
                                reason="needs Xvfb (apt-get install xvfb; make test installs it as root)")
needs_x = pytest.mark.skipif(not (shutil.which("Xvfb") and shutil.which("xdotool")) or NO_EXTRA is not None,
                             reason="needs Xvfb and xdotool (apt-get install xvfb xdotool; make test installs them "
                                    "as root) and the window extra (pip install 'gpgpu[window]')")


def _free_display() -> int:
    for n in range(91, 140):
        if not Path(f"/tmp/.X11-unix/X{n}").exists() and not Path(f"/tmp/.X{n}-lock").exists():
            return n
    pytest.skip("no free X display number in :91 .. :139")


@pytest.fixture
def xvfb():
    n = _free_display()
    # -r: no autorepeat, so that a key press is one key press also while a loaded machine lags
    proc = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", "1024x768x24", "-nolisten", "tcp", "-r"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        if Path(f"/tmp/.X11-unix/X{n}").exists():
            break
        time.sleep(0.05)
    try:
        yield f":{n}"
    finally:
        proc.terminate()
        proc.wait(10)


def _env(display=None):
    """The environment of a child python: this tree first on its path, then this process's
    path (the packages may come from PYTHONPATH, as on a machine whose moderngl is not in the
    interpreter's own site-packages); DISPLAY as given (None: unset), and no Wayland."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in sys.path if p]))
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "XDG_SESSION_TYPE"):
        env.pop(name, None)
    if display is not None:
        env["DISPLAY"] = display
    return env


def _show_window(env, cwd, args, keys, pause=None):
    """Run ``python -m gpgpu.show ARGS --window`` on the display of ``env``, press ``keys``
    (xdotool names; with ``pause`` = (k, s): wait s seconds after the first k keys), and
    return its (return code, stdout, stderr)."""
    app = subprocess.Popen([sys.executable, "-m", "gpgpu.show", *args, "--window"],
                           cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        try:
            # --onlyvisible: the window once mapped, which it must be to take the focus
            wid = subprocess.run(["xdotool", "search", "--sync", "--onlyvisible", "--name", "^gpgpu.show"],
                                 env=env, capture_output=True, text=True, timeout=60).stdout.split()[0]
        except subprocess.TimeoutExpired:
            app.kill()
            pytest.fail("no window appeared: " + app.communicate()[1][-2000:])
        subprocess.run(["xdotool", "windowfocus", "--sync", wid], env=env, check=True, timeout=20)
        k = len(keys) if pause is None else pause[0]
        subprocess.run(["xdotool", "key", "--delay", "100", *keys[:k]], env=env, check=True, timeout=30)
        if keys[k:]:
            time.sleep(pause[1])
            subprocess.run(["xdotool", "key", "--delay", "100", *keys[k:]], env=env, check=True, timeout=30)
        out, err = app.communicate(timeout=60)
    finally:
        if app.poll() is None:
            app.kill()
    return app.returncode, out, err


def _shown(out):
    """The steps the window reported: [(pass index from 0, fragment (x, y) or None), ...]."""
    steps = re.search(r"^shown: (.*)$", out, re.M).group(1).split()
    return [(int(i) - 1, None if fr == "-" else tuple(int(v) for v in fr.split(",")))
            for i, fr in (s.split("@") for s in steps)]


@needs_x
def test_window_steps_on_key_presses_and_shows_the_headless_frames(xvfb, tmp_path):
    size = (640, 360)
    shots = tmp_path / "shots"
    shots.mkdir()
    (shots / "shot_0042.png").write_bytes(b"an earlier run's screenshot")
    (shots / "notes.txt").write_text("not a screenshot: kept")
    rc, out, err = _show_window(_env(xvfb), tmp_path, ["cholesky", "--n", "5", "--size", "640x360",
                                                      "--screenshots", str(shots)], ["Right"] * 5 + ["f", "Left", "q"])
    assert rc == 0, err
    shown = _shown(out)
    # one step per key: passes 1..6, then another fragment of pass 6, then pass 5
    assert [i for i, _ in shown] == [0, 1, 2, 3, 4, 5, 5, 4], out[-2000:]
    rec = run("cholesky", 5)
    caps = captions(rec.frames, "cholesky, n = 5")          # the heading python -m gpgpu.show gives
    update = rec.frames[5]
    assert update.kernel == "outer_product_subtraction"
    assert shown[5][1] == update.chosen_fragment() and shown[6][1] != shown[5][1]
    assert update.covered[shown[6][1][1], shown[6][1][0]]
    files = sorted(shots.glob("shot_*.png"))
    assert len(files) == len(shown)                  # the earlier run's shot_0042.png deleted ...
    assert (shots / "notes.txt").exists()            # ... and nothing else
    from PIL import Image

    for path, (i, fragment) in zip(files, shown):
        got = np.asarray(Image.open(path).convert("RGB"), dtype=int)
        want = render_offscreen(rec.frames[i], fragment, size, caption=caps[i]).astype(int)   # text too
        assert got.shape == want.shape == (size[1], size[0], 3)
        differ = np.any(np.abs(got - want) > 8, axis=2).mean()
        assert differ < 0.002, f"{path.name}: {differ:.2%} of the pixels differ from the headless frame of pass {i + 1}"
    # the screenshots are not all alike: the steps drew different passes
    assert not np.array_equal(np.asarray(Image.open(files[0])), np.asarray(Image.open(files[5])))


def test_window_without_display_says_use_out(tmp_path):
    """Whatever the host (a desktop, CI, a GPU server with EGL and no X server, Xvfb installed or
    not, the packages on PYTHONPATH): without DISPLAY and WAYLAND_DISPLAY the command says to use
    --out, before any work, with no traceback."""
    r = subprocess.run([sys.executable, "-m", "gpgpu.show", "cholesky", "--n", "4", "--window"], cwd=tmp_path,
                       env=_env(None), capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    assert "--window needs a display" in r.stderr and "use --out DIR" in r.stderr
    assert "Traceback" not in r.stderr
    assert "outer_product_subtraction" not in r.stdout          # refused before the algorithm ran


def test_window_on_a_display_that_is_not_there_says_use_out(tmp_path):
    """DISPLAY names a display with no X server: GLFW cannot open it (or the glfw package is
    missing): the same clear refusal, before any work."""
    r = subprocess.run([sys.executable, "-m", "gpgpu.show", "cholesky", "--n", "4", "--window"], cwd=tmp_path,
                       env=_env(f":{_free_display()}"), capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    assert "--window needs a display" in r.stderr and "use --out DIR" in r.stderr
    assert "Traceback" not in r.stderr
    assert "outer_product_subtraction" not in r.stdout


def test_glfw_failures_whatever_the_platform_are_no_display_errors(monkeypatch):
    """glfw.init failing (False, or a GLFWError raised by the package's error reporting), and
    no OpenGL 3.3 window (None, or raised): NoDisplayError saying to use --out, no GLFW traceback."""
    glfw = pytest.importorskip("glfw")
    import gpgpu.show.window as window
    from gpgpu.show.window import NoDisplayError, display_problem, run_window

    monkeypatch.setattr(window, "_imgui_problem", lambda: None)    # as if the window extra were there
    monkeypatch.setenv("DISPLAY", ":0")
    frames = run("cholesky", 2).frames

    def raise_error(*a):
        raise glfw.GLFWError("(65550) Failed to detect any supported platform")

    monkeypatch.setattr(glfw, "terminate", lambda: None)
    for init in (lambda: False, raise_error):
        monkeypatch.setattr(glfw, "init", init)
        problem = display_problem()
        assert problem.startswith("--window needs a display") and problem.endswith(
            "use --out DIR to write the frames as PNG files, which needs none")
        with pytest.raises(NoDisplayError, match="use --out DIR"):
            run_window(frames)
    monkeypatch.setattr(glfw, "init", lambda: True)
    monkeypatch.setattr(glfw, "window_hint", lambda *a: None)
    assert display_problem() is None
    for create in (lambda *a: None, raise_error):
        monkeypatch.setattr(glfw, "create_window", create)
        with pytest.raises(NoDisplayError, match="could not open an OpenGL 3.3 window.*use --out DIR"):
            run_window(frames)
    monkeypatch.delenv("DISPLAY")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert "neither DISPLAY nor WAYLAND_DISPLAY is set" in display_problem()


def test_headless_frame_draws_the_primitive_marks_and_values():
    """The renderer itself, headless: the target panel's cells carry the pass's marks."""
    rec = run("cholesky", 5)
    f = rec.frames[5]                                    # k = 0 update: 10 fragments
    img = render_offscreen(f, f.chosen_fragment(), (640, 360)).astype(int)
    orange = (np.abs(img - [255, 153, 0]) < 12).all(axis=2)
    green = (np.abs(img - [0, 217, 0]) < 12).all(axis=2)
    assert orange.sum() > 200 and green.sum() > 100
    # no fragment chosen: no green at all
    img2 = render_offscreen(f, None, (640, 360)).astype(int)
    assert not (np.abs(img2 - [0, 217, 0]) < 12).all(axis=2).any()
    assert (np.abs(img2 - [255, 153, 0]) < 12).all(axis=2).sum() > 200


def _marked_cells(img, panel, panels, shape):
    """The cells of panel ``panel`` (of ``panels`` side by side, left to right) that carry the
    green mark, as {(column, row)}: the panel's grid found from its pixels (the coloured cells,
    not the white background, black primitive or dark green arrows), split into ``shape`` =
    (rows, cols) cells, a cell marked when a tenth of it is the mark's green."""
    rows, cols = shape
    W = img.shape[1]
    sub = img[:, round(panel * W / panels):round((panel + 1) * W / panels)].astype(int)
    near = lambda rgb: (np.abs(sub - rgb) < 12).all(axis=2)   # noqa: E731
    grid = ~((sub >= 250).all(axis=2) | (sub <= 40).all(axis=2) | near([0, 115, 0]))
    ys, xs = np.nonzero(grid)
    top, left = ys.min(), xs.min()
    ch, cw = (ys.max() + 1 - top) / rows, (xs.max() + 1 - left) / cols
    assert abs(ch - cw) < 2, "cells are square"
    green = near([0, 217, 0])
    return {(c, r) for r in range(rows) for c in range(cols)
            if green[round(top + r * ch):round(top + (r + 1) * ch), round(left + c * cw):round(left + (c + 1) * cw)].mean() > 0.1}


def test_window_marks_the_chosen_fragment_and_its_fetches_in_their_cells():
    """The green marks sit on fragment (x, y) = (column 1, row 3), not on (3, 1), and on the
    texels it fetched: Fig. 5 of 001, k = 0, the fragment (j, i) = (1, 3) reads L(1, 3), its
    neighbour L(0, 3) and the pivot L(0, 1). A choice with x != y, so a swap shows."""
    f = run("cholesky", 5).frames[5]
    assert f.kernel == "outer_product_subtraction"
    img = render_offscreen(f, (1, 3), (640, 360))
    assert _marked_cells(img, 1, 2, (5, 5)) == {(1, 3)}                   # the target, right
    assert _marked_cells(img, 0, 2, (5, 5)) == {(1, 3), (0, 3), (0, 1)}   # the input L, left
    # a fragment the pass does not shade: marked, nothing fetched, the target alone
    img = render_offscreen(f, (4, 0), (640, 360))
    assert _marked_cells(img, 0, 1, (5, 5)) == {(4, 0)}


def test_steps_play_to_the_last_pass_and_stay_there():
    """Space plays pass after pass and stops on the last; Right, End and Space there stay on
    it (no step past the end); every step has a frame and a fragment to show."""
    from gpgpu.show.window import Steps

    frames = run("cholesky", 3).frames
    last = len(frames) - 1
    s = Steps(frames, play_seconds=1.0)
    seen = [s.i]
    s.key("play", now=0.0)
    assert s.playing
    for t in range(1, 3 * len(frames)):
        s.tick(float(t) + 0.5)
        s.frame, s.fragment()
        seen.append(s.i)
    assert sorted(set(seen)) == list(range(len(frames))) and seen == sorted(seen)
    assert s.i == last and not s.playing
    for action in ("next", "last", "play", "next", "next fragment"):
        s.key(action, now=100.0)
        for t in (101.0, 102.0, 103.0):
            s.tick(t)
        assert s.i == last and s.frame is frames[last]
        s.fragment()
    assert s.key("previous") and s.i == last - 1
    s.key("first")
    assert s.i == 0 and not s.key("previous") and s.i == 0
    with pytest.raises(ValueError, match="unknown action 'jump'"):
        s.key("jump")


def test_steps_start_from_the_fragment_asked_for_where_it_is_shaded():
    from gpgpu.show.window import Steps

    frames = run("cholesky", 5).frames
    s = Steps(frames, fragment=(1, 3))
    for k, f in enumerate(frames):
        assert s.i == k
        assert s.fragment() == ((1, 3) if f.shades(1, 3) else f.chosen_fragment())
        s.key("next")
    assert any(f.shades(1, 3) for f in frames) and not all(f.shades(1, 3) for f in frames)


@needs_x
def test_window_played_past_its_last_pass_stays_on_it(xvfb, tmp_path):
    """End, Left, Space: it plays from the last pass but one; after a wait of several play
    steps (0.6 s each), Right: no error, and the window stayed on the last pass."""
    last = len(run("cholesky", 3).frames) - 1
    rc, out, err = _show_window(_env(xvfb), tmp_path, ["cholesky", "--n", "3", "--size", "320x200"],
                                ["End", "Left", "space", "Right", "q"], pause=(3, 2.5))
    assert rc == 0 and "Traceback" not in err, err
    assert [i for i, _ in _shown(out)] == [0, last, last - 1, last], out[-2000:]


# Frame 6 of cholesky --n 8 in the window, in a child python (its own GLFW and GL context): the
# text layer's strings with the words on, off (T) and with the keys' help (H), and the screenshots.
_WORDS_SCRIPT = r"""
import json, sys
import glfw
import numpy as np
from gpgpu.context import release_context
from gpgpu.show import run
from gpgpu.show.window import Window

out = sys.argv[1]
frames = run("cholesky", 8).frames
release_context()                   # as python -m gpgpu.show does: the window's context comes next
with Window(frames, (1100, 560), heading="cholesky, n = 8") as w:
    for _ in range(5):
        w.press(glfw.KEY_RIGHT)
    step = w.draw()
    words = w.drawn_text
    np.save(out + "/words.npy", w.screenshot())
    w.save_screenshot(out + "/words.png")
    w.press(glfw.KEY_T)
    w.draw()
    bare = w.drawn_text
    np.save(out + "/bare.npy", w.screenshot())
    w.press(glfw.KEY_T)
    w.press(glfw.KEY_H)
    w.draw()
    helped = w.drawn_text
json.dump({"step": [step[0], list(step[1])], "words": words, "bare": bare, "help": helped},
          open(out + "/drawn.json", "w"))
"""


def _xy(t) -> str:
    return "(" + ", ".join(f"{float(c):g}" for c in t[:2]) + ")"      # the z of these passes is 0


@needs_xvfb
@needs_extra
def test_window_draws_its_words_at_frame_6_of_cholesky_8(xvfb, tmp_path):
    """The window explains itself: at frame 6 of cholesky --n 8 (Fig. 5 of 001, the k = 0
    triangle update) its text layer drew the caption (pass 6 of 41, the kernel, its paper
    reference, the primitive, 28 fragments), the legend, the three vertices with V, T0 and T1,
    the chosen fragment's WPOS, T0, T1 and its three fetches as the kernel writes them, and
    every cell's value; the screenshot holds those words (the caption bar differs from the
    screenshot without the text layer, with text pixels in it) and is saved as a PNG."""
    import json

    from PIL import Image

    import gpgpu.show as show
    from gpgpu.show.window import HELP, legend

    r = subprocess.run([sys.executable, "-c", _WORDS_SCRIPT, str(tmp_path)], cwd=tmp_path, env=_env(xvfb),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    drawn = json.loads((tmp_path / "drawn.json").read_text())
    frames = run("cholesky", 8).frames
    f = frames[5]
    assert f.kernel == "outer_product_subtraction" and f.primitive == "triangle"
    assert drawn["step"] == [5, [3, 4]] == [5, list(f.chosen_fragment())]
    words = drawn["words"]
    text = "\n".join(words)
    # the caption bar: pass k of n, kernel, file, the paper's reference, primitive, fragments
    for part in ("cholesky, n = 8", "pass 6 of 41", "outer_product_subtraction",
                 "glsl/outer_product_subtraction.frag", f.doc, "001 Kernel 5", "triangle of 3 vertices",
                 "8 x 8 target", "28 fragments"):
        assert part in text, part
    # the legend: every entry, with its meaning
    for _, name, meaning in getattr(show, "LEGEND", None) or legend():
        assert any(w.startswith(f"{name}: ") for w in words), name
        assert meaning.split()[0] in text
    # the vertices, numbered, with V, T0 and T1 (the triangle of Fig. 5: V(1, .5), V(1, 8), V(8.5, 8))
    assert [_xy(v.V) for v in f.vertices] == ["(1, 0.5)", "(1, 8)", "(8.5, 8)"]
    for i, v in enumerate(f.vertices):
        assert f"{i + 1}. V{_xy(v.V)}  T0{_xy(v.T0)}  T1{_xy(v.T1)}" in words
        assert str(i + 1) in words                                     # the number beside the point
    # the fragment (x, y) = (3, 4): WPOS, and T0, T1 worked by hand from the vertices (T0.y and
    # T1.x follow V.y and V.x; T0.x = 0.5 and T1.y = 0.5 at every vertex)
    assert "fragment (3, 4): WPOS(3.5, 4.5)" in words
    assert "T0 = (0.5, 4.5)" in words and "T1 = (3.5, 0.5)" in words
    # its fetches, as outer_product_subtraction.frag writes them: itself, its neighbour in column
    # 0 of its row, and the pivot column's entry of its column (the .yx swizzle)
    fetches = [w for w in words if "texRECT(" in w]
    assert fetches == ["1. texRECT(L, index.xy) -> L(3, 4)", "2. texRECT(L, neighbor_index.xy) -> L(0, 4)",
                       "3. texRECT(L, pivot_index.yx) -> L(0, 3)"]
    for k, (sampler, (tx, ty), call) in enumerate(f.fetches_at(3, 4)):
        assert f"{k + 1}. {call} -> {sampler}({tx}, {ty})" in words
    # the cells' values: the target's 64 and the input L's 64, as the PNG labels them
    labels = [f"{float(v):.3g}" for v in [*f.values.ravel(), *f.inputs["L"].ravel()]]
    for s in set(labels):
        assert words.count(s) >= labels.count(s), s
    # the titles
    assert "input L (read)" in words and "target (written), after the pass" in words
    # T: no text layer, nothing drawn; H: the keys' help over the frame
    assert drawn["bare"] == []
    for keys, what in HELP:
        assert any(w.startswith(keys) and w.endswith(what) for w in drawn["help"]), keys
    # the pixels: the caption bar (its 3 lines: 0 .. 59) is dark with light text where the
    # text layer drew it, white without the text layer
    img, bare = np.load(tmp_path / "words.npy"), np.load(tmp_path / "bare.npy")
    assert img.shape == bare.shape == (560, 1100, 3)
    bar_img, bar_bare = img[:55].astype(int), bare[:55].astype(int)
    assert (bar_bare >= 250).all()
    dark = (bar_img.max(axis=2) < 80).mean()
    light = (bar_img.min(axis=2) > 180).mean()
    assert dark > 0.7 and light > 0.02, (dark, light)
    assert np.any(np.abs(bar_img - bar_bare) > 100, axis=2).mean() > 0.7
    # the grids are the same with and without the words: most pixels of the panels agree
    middle = slice(80, 400)
    assert np.mean(np.all(img[middle] == bare[middle], axis=2)) > 0.8
    # and the screenshot was saved as it was read
    assert np.array_equal(np.asarray(Image.open(tmp_path / "words.png").convert("RGB")), img)


def test_window_without_the_extra_says_which_to_install(monkeypatch, capsys):
    """No imgui-bundle (the window extra): --window is refused before any work, naming the
    extra to install; the window itself raises the same NoDisplayError."""
    glfw = pytest.importorskip("glfw")
    import gpgpu.show.window as window
    from gpgpu.show.__main__ import main as show_main
    from gpgpu.show.window import NoDisplayError, Window

    monkeypatch.setitem(sys.modules, "imgui_bundle", None)      # as if not installed: import fails
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setattr(glfw, "init", lambda: True)             # as if a display were there
    monkeypatch.setattr(glfw, "terminate", lambda: None)
    problem = window.display_problem()
    assert "imgui-bundle" in problem and "pip install 'gpgpu[window]'" in problem
    with pytest.raises(NoDisplayError, match=r"pip install 'gpgpu\[window\]'"):
        Window(run("cholesky", 2).frames)
    monkeypatch.setattr("gpgpu.show.__main__.run", lambda *a: pytest.fail("the algorithm ran"))
    with pytest.raises(SystemExit) as e:
        show_main(["cholesky", "--n", "3", "--window"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "pip install 'gpgpu[window]'" in err and "Traceback" not in err


@needs_extra
def test_headless_words_have_a_caption_bar_and_keep_the_marks():
    """The text layer headless (render_offscreen with a caption): a dark caption bar on top
    with light text in it; the grids' marks (orange, green) still show under the words."""
    rec = run("cholesky", 5)
    f = rec.frames[5]
    cap = captions(rec.frames, "cholesky, n = 5")[5]
    assert "pass 6 of" in cap and "outer_product_subtraction" in cap
    from gpgpu.show.window import NoDisplayError

    try:
        img = render_offscreen(f, f.chosen_fragment(), (640, 360), caption=cap).astype(int)
    except NoDisplayError as exc:        # ImGui's GL loader finds no libGL beside this headless context
        pytest.skip(f"Dear ImGui cannot draw on this headless context: {exc}")
    bar = img[:20]
    assert (bar.max(axis=2) < 80).mean() > 0.7 and (bar.min(axis=2) > 180).mean() > 0.005
    assert (render_offscreen(f, f.chosen_fragment(), (640, 360))[:20] >= 250).all()    # no caption: no bar
    assert (np.abs(img - [255, 153, 0]) < 12).all(axis=2).sum() > 200
    assert (np.abs(img - [0, 217, 0]) < 12).all(axis=2).sum() > 100


def test_captions_and_legend_come_from_gpgpu_show():
    """The window's caption bar and legend are the PNG frames' own: gpgpu.show.describe (each
    frame's caption, explanations included) and gpgpu.show.LEGEND."""
    import gpgpu.show as show
    from gpgpu.show.window import captions, legend

    frames = run("cholesky", 2).frames
    assert captions(frames, "h") == show.describe(frames, "h")
    assert legend() == tuple(show.LEGEND)



def test_the_legend_fits_the_default_window_whole():
    """At the default 1100 x 560 every legend entry is written whole ("..." cut them before):
    its lines, joined, are the entry; each line fits the legend's column; the strip keeps to
    its 42 % of the height, leaving the grids their room; the strip says (x, y) = (col, row)."""
    import gpgpu.show as show
    from gpgpu.show.window import AXES, DEFAULT_SIZE, LEGEND_PX, FrameRenderer

    frames = run("cholesky", 8).frames
    f = frames[5]
    W, H = DEFAULT_SIZE
    cap = captions(frames, "cholesky, n = 8")[5]
    bar, bar_h, strip, legend_lines, strip_top = FrameRenderer.layout(f, f.chosen_fragment(), DEFAULT_SIZE, cap)
    assert not any("..." in line for _, line in legend_lines)
    entries, x = [], strip[2][0]
    for rgb, line in legend_lines:
        assert x + 1.5 * 13 + len(line) * LEGEND_PX / 2 <= W, line            # inside the window
        if rgb is not None:
            entries.append(line)
        else:
            entries[-1] += " " + line.strip()
    assert entries == [f"{name}: {meaning}" for _, name, meaning in show.LEGEND]
    assert H - strip_top <= 0.42 * H + 6 and strip_top - bar_h > 0.4 * H
    assert AXES in strip[0][1] and "col, row" in AXES


def test_fetch_arrows_run_from_cell_edge_to_cell_edge():
    """The window's fetch arrow leaves the chosen cell and reaches the fetched one on their
    edges (it crossed both values before), with a head at its end: hand-worked cases, a level
    arrow and a diagonal one."""
    from gpgpu.show.window import _arrow

    a, b = (100.0, 50.0, 20.0), (10.0, 50.0, 20.0)        # two grids, cells of 20 pixels
    seg = _arrow(a, (2, 1), b, (0, 1))                    # centres (150, 80) and (20, 80)
    assert seg[0] == (140.0, 80.0) and seg[1] == (30.0, 80.0)       # the left edge, the right edge
    assert seg[2] == seg[4] == seg[1] and len(seg) == 6               # the head's two strokes at the tip
    seg = _arrow(a, (0, 0), b, (0, 3))                    # centres (110, 60) and (20, 120): dx 90, dy 60
    (x0, y0), (x1, y1) = seg[0], seg[1]
    assert abs(x0 - 100.0) < 1e-9 and abs(y0 - (60 + 10 * 60 / 90)) < 1e-9    # on the left edge x = 100
    assert abs(x1 - 30.0) < 1e-9 and abs(y1 - (120 - 10 * 60 / 90)) < 1e-9    # on the right edge x = 30
