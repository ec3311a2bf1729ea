"""The GLFW window of ``python -m gpgpu.show --window``, for real: under Xvfb, driven by key
presses sent through the X server (xdotool), its screenshots compared with the headless
rendering of the same passes. ``make test`` installs Xvfb and xdotool when run as root."""
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
from gpgpu.show.window import render_offscreen

ROOT = Path(__file__).resolve().parent.parent
needs_x = pytest.mark.skipif(not (shutil.which("Xvfb") and shutil.which("xdotool")),
                             reason="needs Xvfb and xdotool (apt-get install xvfb xdotool; make test installs them as root)")


@pytest.fixture
def xvfb():
    for n in range(91, 140):
        if not Path(f"/tmp/.X11-unix/X{n}").exists() and not Path(f"/tmp/.X{n}-lock").exists():
            break
    proc = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
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


def _env(display):
    env = dict(os.environ, DISPLAY=display, PYTHONPATH=str(ROOT))
    env.pop("WAYLAND_DISPLAY", None)
    return env


@needs_x
def test_window_steps_on_key_presses_and_shows_the_headless_frames(xvfb, tmp_path):
    size = (640, 360)
    shots = tmp_path / "shots"
    env = _env(xvfb)
    app = subprocess.Popen([sys.executable, "-m", "gpgpu.show", "cholesky", "--n", "5", "--window",
                            "--size", "640x360", "--screenshots", str(shots)],
                           cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        try:
            wid = subprocess.run(["xdotool", "search", "--sync", "--name", "^gpgpu.show"], env=env,
                                 capture_output=True, text=True, timeout=60).stdout.split()[0]
        except subprocess.TimeoutExpired:
            app.kill()
            pytest.fail("no window appeared: " + app.communicate()[1][-2000:])
        subprocess.run(["xdotool", "windowfocus", "--sync", wid], env=env, check=True, timeout=20)
        keys = ["Right"] * 5 + ["f", "Left", "q"]
        subprocess.run(["xdotool", "key", "--delay", "100", *keys], env=env, check=True, timeout=30)
        out, err = app.communicate(timeout=60)
    finally:
        if app.poll() is None:
            app.kill()
    assert app.returncode == 0, err
    steps = re.search(r"^shown: (.*)$", out, re.M).group(1).split()
    shown = [(int(s.split("@")[0]) - 1, tuple(int(v) for v in s.split("@")[1].split(","))) for s in steps]
    # one step per key: passes 1..6, then another fragment of pass 6, then pass 5
    assert [i for i, _ in shown] == [0, 1, 2, 3, 4, 5, 5, 4]
    rec = run("cholesky", 5)
    update = rec.frames[5]
    assert update.kernel == "outer_product_subtraction"
    assert shown[5][1] == update.chosen_fragment() and shown[6][1] != shown[5][1]
    assert update.covered[shown[6][1][1], shown[6][1][0]]
    files = sorted(shots.glob("shot_*.png"))
    assert len(files) == len(shown)
    from PIL import Image

    for path, (i, fragment) in zip(files, shown):
        got = np.asarray(Image.open(path).convert("RGB"), dtype=int)
        want = render_offscreen(rec.frames[i], fragment, size).astype(int)
        assert got.shape == want.shape == (size[1], size[0], 3)
        differ = np.any(np.abs(got - want) > 8, axis=2).mean()
        assert differ < 0.002, f"{path.name}: {differ:.2%} of the pixels differ from the headless frame of pass {i + 1}"
    # the screenshots are not all alike: the steps drew different passes
    assert not np.array_equal(np.asarray(Image.open(files[0])), np.asarray(Image.open(files[5])))


def test_window_without_display_says_use_out(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    r = subprocess.run([sys.executable, "-m", "gpgpu.show", "cholesky", "--n", "4", "--window"], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert "--window needs a display" in r.stderr and "use --out DIR" in r.stderr


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
