"""``python -m gpgpu.show ALGORITHM [--n 8] [--out DIR] [--fragment X,Y] [--window]``: record every
pass of an algorithm on a small problem and draw one frame per pass (PNGs and an animated GIF),
with the trace printed beside them; ``--window`` steps through them in a GLFW window instead
(:mod:`gpgpu.show.window`). ``--list`` lists the algorithms. The trace comes first; a bar on
stderr follows the frames as they are drawn (about a tenth of a second each on a software
renderer) where stderr is a terminal (``--progress`` shows it anyway, ``--no-progress`` never).

Checked before any work, as argparse errors (exit status 2, no traceback): the output folder
(``--out``, ``--screenshots``) must be a folder that can be created and written, the page
(``--html``) a file that can be written, none of them an empty name; ``--screenshots`` goes
with ``--window``, which needs a display; ``--out`` and ``--html`` need matplotlib and Pillow
(the extra :data:`gpgpu.show.DRAWING_EXTRA` installs them), except ``--html --no-pictures``,
whose page has no PNG frames; ``--seed`` is an integer >= 0.
A file that cannot be written after all (a full disk) ends the command with one line naming
it and the cause, exit status 2. ``--fragment`` must lie inside a pass's target (the valid range is
in the message) and be shaded by at least one pass. A folder used before has its earlier frames
replaced (pass_NNNN.png and passes.gif deleted first, nothing else), and the count printed is
this run's files. Each frame has a legend, and its caption says, the first time, what a
sentinel value such as 3e+38 means and what a pass is for where its kernel does not say
(:func:`gpgpu.show.describe`).

``--html FILE`` writes every pass into one self-contained page instead, to step through in any
browser (:mod:`gpgpu.show.html`); with ``--out`` as well, the PNGs too. The page carries the
run's kernels and passes for its live mode (replayed in the browser through WebGL2,
``gpgpu.show.live``) unless ``--no-live`` is given.
"""
from __future__ import annotations

import argparse
import shlex
import sys

from ..cli import output_file_problem, output_folder_problem, run_main, write_error
from .algorithms import ALGORITHMS, run
from .frames import drawing_problem, format_trace, write_frames
from .algorithms import MAX_N


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0 (numpy's random generators take no "
                                         f"negative seed), got {text!r}")
    return value


def _fragment(text: str):
    try:
        x, y = (int(v) for v in text.split(","))
        if x < 0 or y < 0:
            raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(f"--fragment takes X,Y (column, row, from 0), got {text!r}") from None
    return x, y


def _valid_range(frames) -> str:
    """Where a fragment may lie: inside the targets' (rows, cols), said as ranges of X and Y."""
    shapes = sorted({f.target for f in frames}, key=lambda t: (-t[0] * t[1], t))
    rows, cols = max(r for r, _ in shapes), max(c for _, c in shapes)
    if (rows, cols) in shapes:                      # one target holds all the others
        return f"X (column) from 0 to {cols - 1} and Y (row) from 0 to {rows - 1}"
    listed = ", ".join(f"{r} x {c}" for r, c in shapes[:6]) + (", ..." if len(shapes) > 6 else "")
    return f"X (column) from 0 to cols - 1 and Y (row) from 0 to rows - 1 of a pass's target, rows x cols: {listed}"


def fragment_problem(frames, fragment) -> str | None:
    """None when ``fragment`` (x, y) is shaded by some pass of ``frames``; else why not, with
    the valid range (the passes' targets)."""
    x, y = fragment
    if not frames or any(f.shades(x, y) for f in frames):
        return None
    if not any(x < f.target[1] and y < f.target[0] for f in frames):
        return f"--fragment {x},{y} is outside every pass's target; give {_valid_range(frames)}"
    return (f"--fragment {x},{y} is shaded by no pass; give one that a pass shades (the frames outline "
            f"the shaded fragments in orange), with {_valid_range(frames)}")


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m gpgpu.show",
        description="Draw every pass of an algorithm: the target texture, the primitive with its "
                    "vertices and texture coordinates, the fragments it shaded, and one fragment's "
                    "interpolated coordinates and fetches.",
        epilog="algorithms: " + ", ".join(ALGORITHMS))
    ap.add_argument("algorithm", nargs="?", help="one of the algorithms below (--list describes them)")
    ap.add_argument("--n", type=int, default=8, help=f"problem size, 2 .. {MAX_N} (default 8)")
    ap.add_argument("--out", default=None,
                    help="folder for the frames (default frames/ALGORITHM); created if missing. A folder used "
                         "before has its frames replaced: the pass_NNNN.png and passes.gif files there are "
                         "deleted first (no other file)")
    ap.add_argument("--fragment", type=_fragment, default=None,
                    help="X,Y (column, row, from 0) of the fragment to explain in every frame that shades it; "
                         "it must be shaded by some pass (default: the middle of each pass's covered cells)")
    ap.add_argument("--seed", type=_seed, default=0, help="seed of the problem's random data, an integer >= 0 "
                                                         "(default 0)")
    ap.add_argument("--no-gif", action="store_true", help="write the PNGs only")
    ap.add_argument("--window", action="store_true",
                    help="step through the passes in a GLFW window drawn by OpenGL (Right/Left: pass, "
                         "Space: play, F/C: fragment, Q: close) instead of writing files")
    ap.add_argument("--size", default="1100x560", help="window size WxH (default 1100x560)")
    ap.add_argument("--screenshots", default=None, metavar="DIR",
                    help="with --window: also save every step shown as DIR/shot_NNNN.png (the shot_NNNN.png "
                         "files of an earlier run there are deleted first)")
    ap.add_argument("--html", default=None, metavar="FILE",
                    help="write every pass into one self-contained HTML page to step through in a browser (frames, "
                         "captions, legend, the kernels' sources; no server or network needed), replaced if it "
                         "exists, instead of the PNGs; with --out, both")
    ap.add_argument("--live", action=argparse.BooleanOptionalAction, default=True,
                    help="with --html: the page also carries the run's kernels (in GLSL ES 3.00) and passes, to "
                         "replay them in the browser through WebGL2 and to edit the input (default; --no-live: "
                         "the static frames only)")
    ap.add_argument("--pictures", action=argparse.BooleanOptionalAction, default=True,
                    help="with --html: the page carries the PNG frames (default); --no-pictures: a page a tenth "
                         "the size whose canvas draws every pass from the recorded values (and live)")
    ap.add_argument("--choices", action=argparse.BooleanOptionalAction, default=True,
                    help="with --html and --live: the page also holds the runs at n = 4, 6, 8 and seeds 0, 1, 2 "
                         "(the seeds where it mirrors every host decision), to switch to live (default; "
                         "--no-choices: the run itself only)")
    ap.add_argument("--list", action="store_true", help="list the algorithms and what they show")
    ap.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="a bar on stderr while the frames are drawn (default: only where stderr is a terminal; "
                         "--no-progress: never)")
    return ap


def main(argv=None) -> int:
    ap = parser()
    args = ap.parse_args(argv)
    if args.list:
        for name, (what, ref, _) in ALGORITHMS.items():
            print(f"{name:22s} {what} ({ref})")
        return 0
    size, out = _checked(ap, args)
    rec = run(args.algorithm, args.n, args.seed)
    if args.fragment is not None:
        problem = fragment_problem(rec.frames, args.fragment)
        if problem:
            ap.error(problem)
    if args.window:
        return _show_window(rec, args, size)
    print(format_trace(rec), flush=True)          # known once recorded: before the drawing, which takes longer
    if args.html is not None:
        code = _write_page(rec, args, argv)
        if code is not None or args.out is None:
            return code or 0
    return _write_frames(rec, args, out)


def _checked(ap, args):
    """The window size and the frames' folder, once every argument and output is checked (before
    the work, not found unusable after it); ``ap.error`` on the first problem."""
    if args.algorithm is None:
        ap.error("name an algorithm (or --list); valid: " + ", ".join(ALGORITHMS))
    if args.algorithm not in ALGORITHMS:
        ap.error(f"unknown algorithm {args.algorithm!r}; valid: " + ", ".join(ALGORITHMS))
    if not 2 <= args.n <= MAX_N:
        ap.error(f"--n must be from 2 to {MAX_N} (every pass is snapshotted), got {args.n}")
    try:
        size = tuple(int(v) for v in args.size.lower().split("x"))
        assert len(size) == 2 and min(size) >= 64
    except (ValueError, AssertionError):
        ap.error(f"--size takes WxH, each at least 64 pixels, got {args.size!r}")
    # the outputs are checked before the work, not found unusable after it
    for option, value, what in (("--out", args.out, "folder"), ("--html", args.html, "file"),
                                ("--screenshots", args.screenshots, "folder")):
        if value is not None and not value.strip():
            ap.error(f"{option} got an empty name; give a {what}")
    out = args.out or f"frames/{args.algorithm}"
    if args.screenshots is not None and not args.window:
        ap.error("--screenshots saves the steps shown in the window: give --window with it (without a window, "
                 "--out DIR writes every pass's frame)")
    if args.out is not None and args.window:
        ap.error("--out writes every pass's frame as files, --window shows them: give one of them")
    if args.html is not None:
        problem = ("--html writes a page, --window opens a window: give one of them" if args.window
                   else output_file_problem(args.html, "--html"))
        if problem:
            ap.error(problem)
    if args.window:
        from .window import display_problem

        problem = display_problem()
        if problem:
            ap.error(problem)
        if args.screenshots is not None:
            problem = output_folder_problem(args.screenshots, "--screenshots")
            if problem:
                ap.error(problem)
    else:
        problem = drawing_problem() if args.out is not None or args.html is None or args.pictures else None
        if problem:                     # a page without its PNG frames draws nothing in Python
            ap.error(problem)
        if args.out is not None or args.html is None:
            problem = output_folder_problem(out, "--out")
            if problem:
                ap.error(problem)
    return size, out


def _show_window(rec, args, size) -> int:
    """Step through the recorded passes in a GLFW window."""
    from ..context import release_context
    from .window import NoDisplayError, run_window

    frames = rec.frames
    print(format_trace(rec))
    release_context()    # the window's context becomes current; nothing computes any more
    try:
        shown = run_window(frames, size, heading=f"{args.algorithm}, n = {args.n}",
                           screenshots=args.screenshots, fragment=args.fragment)
    except NoDisplayError as exc:       # the display went away, or no OpenGL 3.3 window on it
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:              # a screenshot could not be written (a full disk)
        print("error: " + write_error("--screenshots", args.screenshots, exc, "the screenshots"),
              file=sys.stderr)
        return 2
    print("shown: " + " ".join(f"{i + 1}@{'-' if fr is None else '%d,%d' % fr}" for i, fr in shown))
    return 0


def _write_page(rec, args, argv):
    """The HTML page of every pass; 2 if it could not be written, else None."""
    from .html import write_html

    what, ref, _ = ALGORITHMS[args.algorithm]
    try:
        page = write_html(rec, args.html, args.fragment,
                          heading=f"{args.algorithm}, n = {args.n}: {what} ({ref})",
                          title=f"{args.algorithm}, n = {args.n}", subtitle=f"{what} ({ref})",
                          command="python -m gpgpu.show " + shlex.join(sys.argv[1:] if argv is None else argv),
                          progress=args.progress, live=args.live, pictures=args.pictures,
                          choices=args.choices)
    except OSError as exc:              # checked before the work, yet not written (a full disk)
        print("error: " + write_error("--html", args.html, exc), file=sys.stderr)
        return 2
    print(f"{len(rec.frames)} passes in {page} ({page.stat().st_size // 1024} kB; open it in a browser)")
    return None


def _write_frames(rec, args, out) -> int:
    """The PNG frames (and the GIF) of every pass into ``out``."""
    what, ref, _ = ALGORITHMS[args.algorithm]
    try:
        paths = write_frames(rec, out, args.fragment, gif=not args.no_gif,
                             heading=f"{args.algorithm}, n = {args.n}: {what} ({ref})", progress=args.progress)
    except OSError as exc:
        print("error: " + write_error("--out", out, exc, "the frames"), file=sys.stderr)
        return 2
    print(f"{len(rec.frames)} passes, {len(paths)} files of this run in {out}/"
          + (" (passes.gif animates them)" if not args.no_gif else ""))
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
