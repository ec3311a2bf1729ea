"""``python -m gpgpu.show ALGORITHM [--n 8] [--out DIR] [--fragment X,Y] [--window]``: record every
pass of an algorithm on a small problem and draw one frame per pass (PNGs and an animated GIF),
with the trace printed beside them; ``--window`` steps through them in a GLFW window instead
(:mod:`gpgpu.show.window`). ``--list`` lists the algorithms."""
from __future__ import annotations

import argparse
import os
import sys

from . import ALGORITHMS, run, write_frames
from .algorithms import MAX_N


def _fragment(text: str):
    try:
        x, y = (int(v) for v in text.split(","))
        if x < 0 or y < 0:
            raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(f"--fragment takes X,Y (column, row, from 0), got {text!r}") from None
    return x, y


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m gpgpu.show",
        description="Draw every pass of an algorithm: the target texture, the primitive with its "
                    "vertices and texture coordinates, the fragments it shaded, and one fragment's "
                    "interpolated coordinates and fetches.",
        epilog="algorithms: " + ", ".join(ALGORITHMS))
    ap.add_argument("algorithm", nargs="?", help="one of the algorithms below (--list describes them)")
    ap.add_argument("--n", type=int, default=8, help=f"problem size, 2 .. {MAX_N} (default 8)")
    ap.add_argument("--out", default=None, help="folder for the frames (default frames/ALGORITHM)")
    ap.add_argument("--fragment", type=_fragment, default=None,
                    help="X,Y of the fragment to explain in every frame that shades it "
                         "(default: the middle of each pass's covered cells)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the problem's random data")
    ap.add_argument("--no-gif", action="store_true", help="write the PNGs only")
    ap.add_argument("--window", action="store_true",
                    help="step through the passes in a GLFW window drawn by OpenGL (Right/Left: pass, "
                         "Space: play, F/C: fragment, Q: close) instead of writing files")
    ap.add_argument("--size", default="1100x560", help="window size WxH (default 1100x560)")
    ap.add_argument("--screenshots", default=None, metavar="DIR",
                    help="with --window: also save every step shown as DIR/shot_NNNN.png")
    ap.add_argument("--list", action="store_true", help="list the algorithms and what they show")
    args = ap.parse_args(argv)
    if args.list:
        for name, (what, ref, _) in ALGORITHMS.items():
            print(f"{name:22s} {what} ({ref})")
        return 0
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
    if args.window and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        ap.error("--window needs a display (DISPLAY is not set); use --out DIR to write the frames "
                 "as PNG files, which needs none")
    rec = run(args.algorithm, args.n, args.seed)
    what, ref, _ = ALGORITHMS[args.algorithm]
    if args.window:
        from ..context import release_context
        from .window import NoDisplayError, run_window

        frames = rec.frames
        print(rec.format_trace())
        release_context()    # the window's context becomes current; nothing computes any more
        try:
            shown = run_window(frames, size, heading=f"{args.algorithm}, n = {args.n}",
                               screenshots=args.screenshots)
        except NoDisplayError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print("shown: " + " ".join(f"{i + 1}@{'-' if fr is None else '%d,%d' % fr}" for i, fr in shown))
        return 0
    out = args.out or f"frames/{args.algorithm}"
    paths = write_frames(rec, out, args.fragment, gif=not args.no_gif,
                         heading=f"{args.algorithm}, n = {args.n}: {what} ({ref})")
    print(rec.format_trace())
    print(f"{len(rec.frames)} passes, {len(paths)} files in {out}/"
          + (" (passes.gif animates them)" if not args.no_gif else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
