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
    from gpgpu.show.frames import _Renderer, _slots

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


# ------------------------------------------------------------------ what a student tripped on
def _value_boxes(r):
    """Each value stamped on the drawn figure: (text, rows, columns) of its text's pixels, from
    the cell's centre and the text's bitmap (rows counted from the top)."""
    H = int(r.fig.bbox.height)
    out = []
    for panel in r.inputs + [r.target]:
        if not panel.ax.get_visible() or not panel.texts:
            continue
        rows, cols = panel.shape
        for k, text in enumerate(panel.texts):
            px, py = panel.ax.transData.transform((k % cols + 0.5, k // cols + 0.5))
            h, w = r.stamps.bitmap(text, panel.value_size).shape[:2]
            r0, c0 = int(round(H - py - h / 2)), int(round(px - w / 2))
            out.append((text, slice(r0, r0 + h), slice(c0, c0 + w)))
    return out


def test_fetch_arrows_and_numbers_leave_the_values_readable():
    """The same pass drawn explaining two different fragments: the arrows, the fetched texels'
    numbers and outlines move, yet no pixel of any value's text changes (the arrows and numbers
    printed over the values before: "0.368" could not be read). The arrows are there: the two
    pictures differ, also between the grids where only an arrow can be."""
    from gpgpu.show.frames import _Renderer, _slots

    frames = run("cholesky", 8).frames
    f = [g for g in frames if g.kernel == "outer_product_subtraction"][1]          # k = 1, Fig. 5
    picks = [(4, 6), (2, 5)]
    assert all(f.shades(*p) for p in picks)
    r = _Renderer(_slots([f], None))
    pictures, boxes = [], []
    for p in picks:
        r.draw(f, p, "caption")
        pictures.append(r.rgb().astype(int))
        boxes.append(_value_boxes(r))
    assert boxes[0] == boxes[1] and len(boxes[0]) == 2 * 64            # input L and the target, 8 x 8 each
    a, b = pictures
    assert (np.abs(a - b).max(axis=2) > 60).sum() > 300                  # the marks moved
    for text, rs, cs in boxes[0]:
        assert np.array_equal(a[rs, cs], b[rs, cs]), text
    # the arrows run from cell edge to cell edge: fetch 1, L(col 4, row 6) of the fragment (4, 6),
    # lies level with it, so its arrow leaves and enters each cell half a cell from the centre
    r.draw(f, (4, 6), "caption")
    half = r.target._cell() / 2                                        # points; the cells are one size
    assert abs(r.inputs[-1]._cell() / 2 - half) < 1e-6
    assert abs(r.arrows[0].shrinkA - half) < 1e-6 and abs(r.arrows[0].shrinkB - half) < 1e-6
    assert all(a.shrinkA >= half - 1e-6 and a.shrinkB >= half - 1e-6 for a in r.arrows)


def test_legend_false_leaves_the_caption_and_the_legend_to_the_page():
    """render_frames(legend=False): the PNG has no legend (its bottom right is blank) and no
    caption (its top is blank), for a page that writes both once; the caption is still the
    PNG's Description; the default keeps both, as --out writes them."""
    frames = run("cholesky", 3).frames
    with_, without = (list(render_frames(frames[4:6], heading="h", legend=flag)) for flag in (True, False))
    assert [t for _, t in with_] == [t for _, t in without]
    for (png_a, text), (png_b, _) in zip(with_, without):
        a = np.asarray(Image.open(io.BytesIO(png_a)).convert("RGB")).astype(int)
        im = Image.open(io.BytesIO(png_b))
        assert im.text["Description"] == text
        b = np.asarray(im.convert("RGB")).astype(int)
        assert a.shape == b.shape
        H, W = b.shape[:2]
        corner = (slice(int(H * 0.8), H), slice(W // 2, W))
        top = (slice(0, int(H * 0.035)), slice(0, W))
        assert (b[corner] >= 250).all() and (b[top] >= 250).all()
        assert (a[corner] < 160).all(axis=2).sum() > 200 and (a[top] < 160).all(axis=2).sum() > 50
    fig = draw_frame(frames[5], len(frames), legend=False)
    assert not fig.legends
    assert draw_frame(frames[5], len(frames)).legends


def test_each_frame_says_what_its_sentinels_mean():
    """Every frame showing Cholesky's 3e+38 flags says on itself what they mean (the last min
    reduction said nothing, the explanation being three frames earlier): pivot_check's frame
    that a flag is a passed pivot, the min reduction's that 3e+38 is no failed pivot found;
    frames without sentinels have no such line. A max reduction's -3.4e38 is its identity."""
    from gpgpu.show import values_meaning

    frames = run("cholesky", 8).frames
    texts = describe(frames, "h")
    for f, text in zip(frames, texts):
        shows = np.abs(f.values).max() >= 1e37 or any(np.abs(v).max() >= 1e37 for v in f.inputs.values())
        lines = [s for s in text.split("\n") if s.startswith("values: ")]
        if not shows:
            assert lines == [], f.index
        elif f.kernel == "pivot_check":
            assert lines == ["values: 3e+38 = pivot k passed the check (a flag, not a matrix entry); a small "
                             "number k = step k's pivot failed (not positive, or not finite)"]
        else:
            assert f.kernel == "min_reduction"
            assert len(lines) == 1 and lines[0].startswith("values: 3e+38 = no failed pivot found")
    assert "3e+38 = no failed pivot found" in texts[-1] and frames[-1].kernel == "min_reduction"
    assert sum("values: 3e+38" in t for t in texts) == 4                  # pivot_check and its 3 min passes

    def frame(kernel, values):
        return SimpleNamespace(index=0, kernel=kernel, file="k.frag", doc="d", primitive="rect", vertices=(),
                               target=values.shape, fragments=1, values=values, inputs={}, context=())

    assert "-3.4e38 = the identity of max" in values_meaning(frame("max_reduction", np.array([[2.0, -3.4e38]])))
    assert values_meaning(frame("max_reduction", np.array([[2.0, -3.0]]))) == ""
    assert "sentinel" in caption(frame("some_kernel", np.array([[3.4e38]])), 1).split("\n")[-1]


def test_coordinates_are_labelled_col_row():
    """(x, y) read as (row, column): every pair printed on a frame says that x is the column:
    the chosen fragment, its fetches (Fig. 5 of 001, k = 1: fragment (4, 6) reads L at column 1,
    row 4 through pivot_index.yx, worked by hand) and the vertex boxes."""
    frames = run("cholesky", 8).frames
    f = [g for g in frames if g.kernel == "outer_product_subtraction"][1]
    fig = draw_frame(f, len(frames), (4, 6))
    text = "\n".join(t.get_text() for t in fig.texts)
    assert "chosen fragment (col, row) = (4, 6): WPOS = (4.5, 6.5)" in text
    assert "1. texRECT(L, index.xy) -> L(col 4, row 6)" in text
    assert "2. texRECT(L, neighbor_index.xy) -> L(col 1, row 6)" in text
    assert "3. texRECT(L, pivot_index.yx) -> L(col 1, row 4)" in text
    from gpgpu.show.frames import _Renderer, _slots

    r = _Renderer(_slots([f], None))
    r.draw(f, (4, 6), "")
    assert len(r.box_texts) == 3 and all(t.split("\n")[0].endswith(": x = col, y = row") for t, _, _ in r.box_texts)
