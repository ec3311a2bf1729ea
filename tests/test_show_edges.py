"""``python -m gpgpu.show`` at its edges: a negative seed, empty names, ``--screenshots``
without a window, matplotlib or Pillow missing, a full disk; the trace numbered as the frames;
the page's escaping; the window's coordinates and legend lines."""
import errno
import json
import os
import re
import sys
from types import SimpleNamespace

import numpy as np
import pytest

import gpgpu.show as show
import gpgpu.show.frames as show_frames
from gpgpu.show import DRAWING_EXTRA, format_trace, frame_name, run
from gpgpu.show.__main__ import main as show_main


def _no_work(monkeypatch):
    """Make the command's algorithm run fail the test: the check must come before it."""
    import gpgpu.show.__main__ as cli

    def work(*a, **k):
        raise AssertionError("the algorithm ran before the arguments were checked")

    monkeypatch.setattr(cli, "run", work)


def _refused(argv, capsys) -> str:
    with pytest.raises(SystemExit) as e:
        show_main(argv)
    err = capsys.readouterr().err
    assert e.value.code == 2 and "usage:" in err and "Traceback" not in err
    return err


def _fake_pngs(monkeypatch):
    """The page's frames as stand-in PNG bytes (the drawing is tested elsewhere): fast."""
    import gpgpu.show.html as html

    monkeypatch.setattr(html, "_frame_pngs", lambda frames, *a, **k: [b"png"] * len(frames))


# ------------------------------------------------------------------ arguments refused before the work
def test_a_negative_seed_is_refused_before_the_work(monkeypatch, capsys):
    _no_work(monkeypatch)
    err = _refused(["cholesky", "--n", "4", "--seed", "-1"], capsys)
    assert "argument --seed: expected an integer >= 0" in err and "got '-1'" in err
    with pytest.raises(ValueError, match=r"seed must be an integer >= 0 .* got -1"):
        run("cholesky", 2, seed=-1)


@pytest.mark.parametrize("argv", [["--html", ""], ["--out", ""], ["--out", " "], ["--window", "--screenshots", ""]])
def test_an_empty_output_name_is_refused(argv, monkeypatch, capsys):
    """An empty name was taken as no option (--html "" wrote PNGs into frames/ALGORITHM)."""
    _no_work(monkeypatch)
    err = _refused(["cholesky", "--n", "3", *argv], capsys)
    assert f"{argv[-2]} got an empty name" in err


def test_screenshots_without_the_window_are_refused(tmp_path, monkeypatch, capsys):
    _no_work(monkeypatch)
    err = _refused(["cholesky", "--n", "3", "--out", str(tmp_path), "--screenshots", str(tmp_path / "s")], capsys)
    assert "--screenshots saves the steps shown in the window: give --window" in err
    assert not (tmp_path / "s").exists()


def test_out_with_the_window_is_refused(tmp_path, monkeypatch, capsys):
    """--out beside --window was ignored (the window writes no frames)."""
    _no_work(monkeypatch)
    err = _refused(["cholesky", "--n", "3", "--window", "--out", str(tmp_path / "f")], capsys)
    assert "--out writes every pass's frame as files, --window shows them: give one of them" in err
    assert not (tmp_path / "f").exists()


@pytest.mark.parametrize("module, package", [("PIL", "Pillow"), ("matplotlib", "matplotlib")])
@pytest.mark.parametrize("output", ["--out", "--html"])
def test_missing_drawing_packages_are_named_before_the_trace(module, package, output, tmp_path, monkeypatch,
                                                             capsys):
    """Without matplotlib or Pillow (pip install . with no extra) the command names the package
    and the extra before recording anything (it ended in ModuleNotFoundError after the work)."""
    import matplotlib.colors  # noqa: F401  (whole before the other is hidden: no half-imported module stays)
    import PIL.Image  # noqa: F401

    monkeypatch.setitem(sys.modules, module, None)          # import PIL / matplotlib fails
    _no_work(monkeypatch)
    target = str(tmp_path / ("page.html" if output == "--html" else "frames"))
    err = _refused(["cholesky", "--n", "3", output, target], capsys)
    needs = re.search(r"drawing the frames \(--out, --html\) needs (.*?), which (is|are) not installed", err)
    assert needs and needs[1] == package
    assert f"pip install 'gpgpu[{DRAWING_EXTRA}]'" in err
    assert not os.path.exists(target) or not os.listdir(target)


# ------------------------------------------------------------------ a full disk
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs Linux's /dev/full")
def test_html_on_a_full_disk_is_one_error_line(monkeypatch, capsys):
    _fake_pngs(monkeypatch)
    assert show_main(["reduce-pyramid", "--n", "2", "--html", "/dev/full", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err == ("error: --html '/dev/full': cannot write the file (No space left on device); free some "
                   "space or give a path on another disk\n")


def test_frames_on_a_full_disk_are_one_error_line(tmp_path, monkeypatch, capsys):
    from pathlib import Path

    def frames(frames, *a, **k):            # stand-ins for the drawn frames (fast)
        for f in frames:
            yield f, np.zeros((4, 4, 3), np.uint8), b"png", ""

    def full(self, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(show_frames, "_render", frames)
    monkeypatch.setattr(Path, "write_bytes", full)
    out = tmp_path / "frames"
    assert show_main(["reduce-pyramid", "--n", "2", "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err == (f"error: --out {str(out)!r}: cannot write the frames ({os.strerror(errno.ENOSPC)}); free some "
                   "space or give a path on another disk\n")


# ------------------------------------------------------------------ the trace counts as the frames do
def test_the_trace_numbers_the_passes_as_the_frames_and_files(tmp_path, monkeypatch, capsys):
    """Pass k of the trace is the frame captioned "pass k of N" and the file pass_000k.png,
    in the printed trace and in the page's trace (both counted from 0 before)."""
    rec = run("reduce-pyramid", 2)
    frames = rec.frames
    lines = format_trace(rec).split("\n")
    assert len(lines) == len(frames) == 3
    for line, f in zip(lines, frames):
        k = int(line.split()[0])
        assert frame_name(f) == f"pass_{k:04d}.png" and line.split()[1] == f.kernel
        assert show.caption(f, len(frames)).startswith(f"pass {k} of 3: {f.kernel} ")
    _fake_pngs(monkeypatch)
    page = tmp_path / "p.html"
    assert show_main(["reduce-pyramid", "--n", "2", "--html", str(page), "--no-progress"]) == 0
    out = capsys.readouterr().out.split("\n")
    assert [int(s.split()[0]) for s in out[:3]] == [1, 2, 3] and out[0].split()[1] == frames[0].kernel
    text = page.read_text()
    data = json.loads(re.search(r'<script type="application/json" id="gpgpu-data">(.*?)</script>', text, re.S)[1])
    assert [int(s.split()[0]) for s in data["trace"].split("\n")] == [1, 2, 3]
    assert "counted from 0" not in text


# ------------------------------------------------------------------ the page's escaping
EVIL = "</script><b>&x"


def test_the_page_escapes_titles_and_data_that_would_break_out():
    """A title, caption, legend, trace or command holding </script>, < and & cannot end the
    data's script element or add markup: the data carries them as JSON escapes and reads back
    whole, the visible texts as HTML entities."""
    from gpgpu.show.html import page

    frame = SimpleNamespace(kernel=EVIL, file="glCopyTexSubImage2D", doc=EVIL, primitive="rect", vertices=(),
                            fragments=1, target=(1, 1), covered=None)
    text = page([frame], [b"png"], [EVIL], [("#ff0000", EVIL, EVIL)], title=EVIL, subtitle=EVIL, trace=EVIL,
                command=EVIL)
    assert EVIL not in text and "<b>&x" not in text
    assert text.lower().count("</script") == 2                # the template's own two script elements
    blob = re.search(r'<script type="application/json" id="gpgpu-data">(.*?)</script>', text, re.S)[1]
    assert "<" not in blob and ">" not in blob and "&" not in blob
    data = json.loads(blob)
    assert data["title"] == data["trace"] == data["passes"][0]["caption"] == data["passes"][0]["kernel"] == EVIL
    escaped = "&lt;/script&gt;&lt;b&gt;&amp;x"
    assert f"<title>{escaped}</title>" in text and f"<h1>{escaped}</h1>" in text
    assert f"<code>{escaped}</code>" in text and f"<b>{escaped}</b>: {escaped}</li>" in text


# ------------------------------------------------------------------ the window's words
@pytest.mark.parametrize("t, text", [((1, 0.5, 2), "(1, 0.5, 2)"), ((0, 0, -0.25), "(0, 0, -0.25)"),
                                     ((1, 0.5, 0), "(1, 0.5)"), ((3, 4), "(3, 4)"),
                                     ((0.5, 1.5, 0, 1), "(0.5, 1.5, 0, 1)")])
def test_coordinates_keep_a_non_zero_z(t, text):
    """A vertex's z is written unless it is 0, in the window's strip and in the PNG frames."""
    from gpgpu.show.window import _vertex_lines, _xy

    assert _xy(t) == show_frames._xy(t) == text
    v = SimpleNamespace(V=np.array(t, np.float32), T0=(0.5, 0.5), T1=(1.5, 2.5, 0.0))
    lines = _vertex_lines(SimpleNamespace(primitive="triangle", vertices=(v,)))
    assert lines == ["primitive: triangle, 1 vertices:", f"1. V{text}  T0(0.5, 0.5)  T1(1.5, 2.5)"]


def test_a_legend_line_never_exceeds_its_width():
    """Cut to the width exactly: whole up to it, "..." marking a cut beyond it (a text of
    width + 1 characters is the boundary); below 4 characters no room for the mark."""
    from gpgpu.show.window import _one_line

    for width in range(0, 24):
        for n in range(0, 30):
            text = "abcdefghijklmnopqrstuvwxyz0123"[:n]
            got = _one_line(text, width)
            assert len(got) <= width, (text, width, got)
            if n <= width:
                assert got == text
            elif width >= 4:
                assert got == text[:width - 3] + "..." and len(got) == width
            else:
                assert got == text[:width]
    assert _one_line("legend: a b", 11) == "legend: a b"
    assert _one_line("legend: a bc", 11) == "legend:..."            # the space before the cut dropped
