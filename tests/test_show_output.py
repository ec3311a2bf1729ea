"""``python -m gpgpu.show``'s outputs: the frames' names and captions, a folder used before,
output paths refused before the work, and ``--fragment`` off every pass."""
import os
import re

import pytest
from PIL import Image

from gpgpu.show import caption, run, write_frames
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
        assert text["Description"] == caption(frames[k - 1], N, "h")


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
    assert "usage:" in err and "is an existing file, not a folder; give a folder" in err
    assert f.read_text() == "x"


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
