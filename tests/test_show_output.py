"""``python -m gpgpu.show``'s outputs: the frames' names and captions, the legend, the values
and vertex boxes, the captions' explanations of sentinels and of what a pass is for, a folder
used before, output paths refused before the work, and ``--fragment`` off every pass."""
import io
import os
import re
from types import SimpleNamespace

import numpy as np
import pytest
from PIL import Image

from gpgpu.show import LEGEND, caption, describe, draw_frame, render_frames, run, write_frames
from gpgpu.show.__main__ import main as show_main


def _no_work(monkeypatch):
    """Make the show command's algorithm run fail the test: a check must come before it."""
    import gpgpu.show.__main__ as cli

    def work(*a, **k):
        raise AssertionError("the algorithm ran before the output path was checked")

    monkeypatch.setattr(cli, "run", work)


def test_frame_files_are_numbered_as_their_captions(tmp_path):
    """pass_0001.png holds pass 1's frame, whose caption reads "pass 1 of N" (the captions count
    from 1), and so on: each PNG's caption text, and the kernel in it, against the file's name."""
    rec = run("reduce-pyramid", 2)
    frames = rec.frames
    N = len(frames)
    assert N == 3 and len({caption(f, N) for f in frames}) == N          # three different captions
    paths = write_frames(rec, tmp_path, gif=False, heading="h")
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(p.name for p in paths) == [f"pass_{k:04d}.png" for k in range(1, N + 1)]
    for k in range(1, N + 1):
        with Image.open(tmp_path / f"pass_{k:04d}.png") as im:
            text = im.text
        assert text["Title"] == f"pass {k} of {N}"
        assert text["Description"].startswith(f"h\npass {k} of {N}: {frames[k - 1].kernel} (glsl/")
        assert text["Description"].startswith(caption(frames[k - 1], N, "h"))
        assert text["Description"] == describe(frames, "h")[k - 1]


def test_a_folder_used_before_holds_this_runs_frames_alone(tmp_path, capsys):
    """An earlier, longer run's frames and GIF are deleted; files not named as the frames are
    kept; the count printed is this run's files, which are what the folder's frames are."""
    stale = [f"pass_{k:04d}.png" for k in range(1, 21)] + ["passes.gif"]
    for name in stale:
        (tmp_path / name).write_bytes(b"an earlier run's frame")
    keep = ["notes.txt", "pass_1.png", "pass_0001.png.bak", "my_pass_0002.png"]
    for name in keep:
        (tmp_path / name).write_text("not the tool's")
    assert show_main(["reduce-pingpong", "--n", "4", "--out", str(tmp_path), "--no-gif"]) == 0
    out = capsys.readouterr().out
    passes = len(run("reduce-pingpong", 4).frames)
    frames = sorted(p.name for p in tmp_path.glob("pass_*.png") if re.fullmatch(r"pass_\d{4}\.png", p.name))
    assert frames == [f"pass_{k:04d}.png" for k in range(1, passes + 1)]
    assert not (tmp_path / "passes.gif").exists()          # --no-gif: the earlier GIF is gone too
    assert all((tmp_path / name).read_text() == "not the tool's" for name in keep)
    assert f"{passes} passes, {passes} files of this run" in out
    assert all((tmp_path / name).read_bytes() != b"an earlier run's frame" for name in frames)


def test_show_out_an_existing_file_is_refused_before_the_work(tmp_path, monkeypatch, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    _no_work(monkeypatch)
    with pytest.raises(SystemExit) as e:
        show_main(["cholesky", "--n", "3", "--out", str(f)])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "usage:" in err and f"--out {str(f)!r} is an existing file, not a folder; give a folder" in err
    assert "Traceback" not in err
    assert f.read_text() == "x"
    # a folder inside that file cannot be made either: said, not a traceback
    with pytest.raises(SystemExit) as e:
        show_main(["cholesky", "--n", "3", "--out", str(f / "frames")])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert f"--out {str(f / 'frames')!r}: cannot create the folder" in err and "give a folder you can write" in err


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
@pytest.mark.parametrize("out", ["/proc", "/proc/self/gpgpu-frames"])
def test_show_out_where_nothing_can_be_written_is_refused_before_the_work(out, monkeypatch, capsys):
    """/proc exists and is a folder, yet no file can be made there, also by root."""
    _no_work(monkeypatch)
    with pytest.raises(SystemExit) as e:
        show_main(["cholesky", "--n", "3", "--out", out])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert f"--out {out!r}: cannot" in err and "give a folder you can write" in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_show_out_unwritable_folder_is_refused(tmp_path, monkeypatch, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    _no_work(monkeypatch)
    try:
        with pytest.raises(SystemExit) as e:
            show_main(["cholesky", "--n", "3", "--out", str(locked)])
        assert e.value.code == 2 and "cannot write files there" in capsys.readouterr().err
    finally:
        locked.chmod(0o700)


def test_show_screenshots_folder_is_checked_too(tmp_path, monkeypatch, capsys):
    import gpgpu.show.window as window

    f = tmp_path / "file"
    f.write_text("x")
    monkeypatch.setattr(window, "display_problem", lambda: None)     # as if a display were there
    _no_work(monkeypatch)
    with pytest.raises(SystemExit) as e:
        show_main(["cholesky", "--n", "3", "--window", "--screenshots", str(f)])
    assert e.value.code == 2 and "--screenshots" in capsys.readouterr().err


def test_fragment_outside_every_target_is_an_error_naming_the_range(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        show_main(["cholesky", "--n", "3", "--fragment", "100,100", "--out", str(tmp_path)])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "--fragment 100,100 is outside every pass's target" in err
    assert "X (column) from 0 to 2 and Y (row) from 0 to 2" in err
    assert not list(tmp_path.glob("pass_*.png"))                # nothing drawn
    # one coordinate off is enough
    with pytest.raises(SystemExit):
        show_main(["cholesky", "--n", "3", "--fragment", "1,3", "--out", str(tmp_path)])
    assert "from 0 to 2" in capsys.readouterr().err


def test_fragment_inside_the_targets_but_shaded_by_no_pass_is_an_error():
    from gpgpu.show.__main__ import fragment_problem

    frames = run("cholesky", 4).frames
    updates = [f for f in frames if f.kernel == "outer_product_subtraction"]
    assert fragment_problem(updates, (1, 3)) is None                  # the lower triangle: shaded
    problem = fragment_problem(updates, (3, 1))                       # the upper: never
    assert problem.startswith("--fragment 3,1 is shaded by no pass; give one that a pass shades")
    assert problem.endswith("X (column) from 0 to 3 and Y (row) from 0 to 3")
    assert fragment_problem(frames, (3, 1)) is None                   # copy_input shades every cell
    # targets of which none holds the others (as adat-packed's): (3, 3) is inside the ranges of
    # X and Y but in no target; each target listed, largest first
    from types import SimpleNamespace

    frames = [SimpleNamespace(target=t, shades=lambda x, y, t=t: x < t[1] and y < t[0]) for t in [(1, 4), (5, 2)]]
    assert fragment_problem(frames, (3, 0)) is None and fragment_problem(frames, (1, 4)) is None
    problem = fragment_problem(frames, (3, 3))
    assert problem.startswith("--fragment 3,3 is outside every pass's target")
    assert problem.endswith("of a pass's target, rows x cols: 5 x 2, 1 x 4")


def test_a_second_run_writing_fewer_frames_leaves_only_its_own(tmp_path, capsys):
    """Two real runs into one folder: the second, shorter, replaces the first's frames and GIF
    (none of the first's pass_NNNN.png is left), and a file of the user's stays."""
    (tmp_path / "notes.txt").write_text("mine")
    assert show_main(["reduce-pyramid", "--n", "4", "--out", str(tmp_path)]) == 0
    first = sorted(p.name for p in tmp_path.glob("pass_*.png"))
    n = len(run("reduce-pyramid", 2).frames)
    assert len(first) > n
    assert show_main(["reduce-pyramid", "--n", "2", "--out", str(tmp_path)]) == 0
    assert f"{n} passes, {n + 1} files of this run" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [f"pass_{k:04d}.png" for k in range(1, n + 1)] + ["passes.gif", "notes.txt"])
    assert (tmp_path / "notes.txt").read_text() == "mine"
    with Image.open(tmp_path / "passes.gif") as g:
        assert g.n_frames == n
    with Image.open(tmp_path / "pass_0001.png") as im:
        assert "reduce-pyramid, n = 2" in im.text["Description"]


def _rgb(colour) -> np.ndarray:
    from matplotlib.colors import to_rgb

    return np.round(np.array(to_rgb(colour)) * 255).astype(int)


def test_legend_entries_and_on_every_frame():
    """LEGEND names what each mark means, in matplotlib colours; every frame draws it (the
    legend is drawn once and pasted on the frames after the first: the last frame has it too)."""
    from matplotlib.colors import is_color_like

    colours = {n: c for c, n, _ in LEGEND}
    assert colours["primitive"] == "black" and colours["shaded fragments"] == "orange"
    assert colours["chosen fragment"] == "lime" and "fetch arrows" in colours and "vertex boxes" in colours
    assert all(is_color_like(c) and len(m) > 20 for c, _, m in LEGEND)
    assert "3e+38" in dict((n, m) for _, n, m in LEGEND)["violet cells"]
    frames = run("cholesky", 3).frames
    fig = draw_frame(frames[5], len(frames))
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [f"{n}: {m}" for _, n, m in LEGEND]
    pngs = [png for png, _ in render_frames(frames)]
    assert len(pngs) == len(frames)
    for png in (pngs[0], pngs[-1]):
        a = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
        corner = a[int(a.shape[0] * 0.8):, a.shape[1] // 2:]           # the legend's place, bottom right
        for c in (colours["violet cells"], colours["cell colour"], colours["shaded fragments"]):
            assert (np.abs(corner - _rgb(c)).max(axis=2) <= 2).sum() >= 20, c


def test_values_readable_and_vertex_boxes_beside_the_grid():
    """At n = 8 the values are written at >= 6.5 pt (5 pt before) and each fits its cell; the
    vertex boxes sit right of the target's grid, off its cells, each with a line to its vertex."""
    from gpgpu.show import _Renderer, _slots

    frames = run("cholesky", 8).frames
    r = _Renderer(_slots(frames, None))
    tri = next(f for f in frames if f.kernel == "outer_product_subtraction")
    for f in (frames[0], tri):
        r.draw(f, None, "caption")
        r.rgb()
        assert r.value_size >= 6.5
        target = r.target.ax
        grid = target.get_position()
        cell_px = grid.width * r.fig.bbox.width / f.target[1]
        widest = max(r.stamps.bitmap(t, r.value_size).shape[1] for t in r.target.texts)
        assert widest < cell_px
        shown = [(rect, line) for rect, line in r.boxes if rect.get_visible()]
        assert len(shown) == len(f.vertices)
        to_fig = r.fig.transFigure.inverted().transform
        corners = {tuple(np.round(to_fig(target.transData.transform(v.V)), 6)) for v in f.vertices}
        for rect, line in shown:
            assert rect.get_x() > grid.x1                                 # off the cells
            end = tuple(np.round([line.get_xdata()[1], line.get_ydata()[1]], 6))
            assert end in corners                                        # the leader ends at a vertex
        texts = sorted(t.split(":")[0] for t, _, _ in r.box_texts)
        assert texts == [f"vertex {k}" for k in range(1, len(f.vertices) + 1)]


def test_sentinels_named_in_the_caption_where_they_first_appear():
    """Cholesky's 3e+38 (pivot_check's flags, then their min reduction) is explained on the
    first pass that shows it and on no other; no caption before it mentions it."""
    frames = run("cholesky", 8).frames
    texts = describe(frames, "h")
    big = [i for i, f in enumerate(frames)
           if np.abs(f.values).max() >= 1e37 or any(np.abs(v).max() >= 1e37 for v in f.inputs.values())]
    first = big[0]
    assert frames[first].kernel == "pivot_check" and first == len(frames) - 4
    for i, (f, t) in enumerate(zip(frames, texts)):
        base = caption(f, len(frames), "h")
        assert t.startswith(base)
        if i < first:
            assert t == base and "3e+38" not in t
    flags = [i for i, t in enumerate(texts) if "The 3e+38 cells are flags" in t]
    assert flags == [first]
    assert [i for i, t in enumerate(texts) if "min reduction of the pivot flags" in t] == [first + 1]
    assert "passes 39 to 41" in texts[first + 1]
    assert texts[first + 2] == caption(frames[first + 2], len(frames), "h")       # said once


def test_lu_opening_absmax_passes_are_explained_once():
    """lu-partial opens with absmax passes: the first caption says they compute max|A| for the
    pivot threshold, and names them all; no later caption repeats it."""
    frames = run("lu-partial", 6).frames
    k = next(i for i, f in enumerate(frames) if f.kernel != "absmax_reduction")
    assert k >= 3
    texts = describe(frames)
    assert f"Why passes 1 to {k}:" in texts[0] and "pivot threshold n u max|A|" in texts[0]
    assert sum("pivot threshold" in t for t in texts) == 1
    search = next(i for i, f in enumerate(frames) if f.kernel.startswith("argmax_reduction"))
    assert "The pivot search" in texts[search] and sum("The pivot search" in t for t in texts) == 1


def test_an_unexplained_sentinel_gets_the_general_sentence_once():
    """A sentinel from a kernel without its own sentence: the general one, on its first frame."""
    def frame(i, values):
        return SimpleNamespace(index=i, kernel="some_kernel", file="some_kernel.frag", doc="d", primitive="rect",
                               vertices=(), target=values.shape, fragments=1, values=values, inputs={},
                               context=())

    frames = [frame(0, np.ones((1, 2))), frame(1, np.array([[1.0, -3.4e38]])), frame(2, np.array([[3.4e38, 1]]))]
    texts = describe(frames)
    assert texts[0] == caption(frames[0], 3) and texts[2] == caption(frames[2], 3)
    assert texts[1].startswith(caption(frames[1], 3) + "\nCells of about +-3e+38")


def test_render_frames_gives_the_pngs_write_frames_writes(tmp_path):
    """render_frames: the same PNG bytes as the files, the captions of describe, lazily."""
    rec = run("reduce-pyramid", 2)
    frames = rec.frames
    it = render_frames(frames, heading="h")
    assert iter(it) is it                                   # an iterator, drawn when asked for
    got = list(it)
    write_frames(rec, tmp_path, gif=False, heading="h")
    assert [text for _, text in got] == describe(frames, "h")
    assert [png for png, _ in got] == [(tmp_path / f"pass_{k:04d}.png").read_bytes()
                                       for k in range(1, len(frames) + 1)]


def test_each_algorithm_names_its_reference_once():
    # --list and the page headings print "what (reference)": a reference repeated inside
    # "what" read "... (beyond the papers) (beyond the papers)"
    from gpgpu.show.algorithms import ALGORITHMS

    for name, (what, ref, _) in ALGORITHMS.items():
        assert ref not in what, (name, what)
