"""The pipeline made visible: every pass of a real algorithm as a picture (beyond the papers).

``python -m gpgpu.show cholesky --n 8 --out frames/`` runs the unchanged algorithm on a small
problem inside :func:`gpgpu.record.record` and draws one frame per pass, as the papers'
Figs. 2-7 of 001 and Fig. 5 of 000 do by hand:

* the target texture after the pass, a grid of cells coloured by value (labelled with the
  values when the matrix is small);
* the primitive's outline over it, its vertices numbered and labelled with V, T0 and T1;
* the fragments the pass shaded, outlined -- the GPU's own coverage, from the recorder's
  instrumented pass, whose count equals the occlusion query's;
* one chosen fragment with the T0 and T1 the rasterizer interpolated to it, and arrows to the
  texels its kernel fetched (drawn on the input texture they came from), labelled with the
  fetch as the kernel writes it (``texRECT(L, pivot_index.yx)``: the swizzle);
* a caption: the pass, the kernel file and the paper's kernel, figure or algorithm.

Frames are PNGs (matplotlib) and one animated GIF (Pillow, matplotlib's dependency);
``--window`` draws them with OpenGL in a GLFW window instead (:mod:`gpgpu.show.window`).
Frame k (counted from 1, as the captions count) is ``pass_000k.png``; each PNG also carries its
caption as text (the "Title" and "Description" entries). Writing into a folder used before
replaces that folder's frames: the files an earlier run wrote there under these names
(pass_NNNN.png and passes.gif, nothing else) are deleted first, so the folder holds this run's
frames alone.
"""
from __future__ import annotations

import numpy as np

from .algorithms import ALGORITHMS, run  # noqa: F401

__all__ = ["ALGORITHMS", "run", "draw_frame", "write_frames", "caption", "frame_name", "FRAME_PATTERN",
           "GIF_NAME"]

FRAME_PATTERN = r"pass_\d{4,}\.png"   # the frames' file names: pass_0001.png is the frame of pass 1
GIF_NAME = "passes.gif"
LABEL_LIMIT = 16      # cells labelled with their values up to this many rows and columns


def caption(frame, total: int, heading: str = "") -> str:
    """The frame's caption: the algorithm (``heading``), pass number, kernel, file, primitive
    and the paper's reference."""
    what = f"{frame.primitive} of {len(frame.vertices)} vertices" if frame.vertices else frame.primitive
    return ((heading + "\n" if heading else "") +
            f"pass {frame.index + 1} of {total}: {frame.kernel} (glsl/{frame.file}) -- {frame.doc}\n"
            f"{what} into a {frame.target[0]} x {frame.target[1]} target, "
            f"{frame.fragments} fragments (occlusion query)")


def _grid(ax, values, title, labels: bool):
    rows, cols = values.shape[:2]
    v = values if values.ndim == 2 else values[..., 0]
    finite = np.abs(v[np.abs(v) < 1e30])          # the reductions' identities (+-3.4e38) stay uncoloured
    lim = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
    v = np.clip(v, -lim, lim) if lim < 1e30 else v
    shown = values if values.ndim == 2 else values[..., 0]
    ax.imshow(v, cmap="coolwarm", vmin=-lim, vmax=lim, extent=(0, cols, rows, 0), interpolation="nearest")
    ax.set_xticks(np.arange(cols) + 0.5)
    ax.set_xticklabels([str(i) for i in range(cols)], fontsize=6)
    ax.set_yticks(np.arange(rows) + 0.5)
    ax.set_yticklabels([str(i) for i in range(rows)], fontsize=6)
    ax.set_xticks(np.arange(cols + 1), minor=True)
    ax.set_yticks(np.arange(rows + 1), minor=True)
    ax.grid(which="minor", color="0.6", linewidth=0.4)
    ax.tick_params(which="minor", length=0)
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)
    ax.set_title(title + (" -- RGBA, .r shown" if values.ndim == 3 else ""), fontsize=8)
    if labels and rows <= LABEL_LIMIT and cols <= LABEL_LIMIT:
        for y in range(rows):
            for x in range(cols):
                ax.text(x + 0.5, y + 0.5, f"{shown[y, x]:.3g}", ha="center", va="center", fontsize=5)


def _primitive(ax, frame):
    import matplotlib.patches as mpatches

    pts = [v.V for v in frame.vertices]
    if not pts:
        return
    if frame.primitive in ("triangle",):
        for t in range(0, len(pts), 3):
            ax.add_patch(mpatches.Polygon(pts[t:t + 3], closed=True, fill=False, edgecolor="k", linewidth=1.4,
                                          clip_on=False))
    elif frame.primitive in ("rect", "texel"):
        ax.add_patch(mpatches.Polygon(pts, closed=True, fill=False, edgecolor="k", linewidth=1.4, clip_on=False))
    elif frame.primitive == "line":
        for a, b in zip(pts[0::2], pts[1::2]):
            ax.plot([a[0], b[0]], [a[1], b[1]], color="k", linewidth=1.4, clip_on=False)
    if len(pts) <= 6:
        for i, v in enumerate(frame.vertices):
            ax.plot(*v.V, "ko", markersize=3, clip_on=False)
            ax.annotate(f"{i + 1}. V{_xy(v.V)}\nT0{_xy(v.T0)}\nT1{_xy(v.T1)}", v.V, fontsize=5,
                        xytext=(4, -4 if i % 2 else 4), textcoords="offset points", clip_on=False,
                        bbox=dict(boxstyle="round,pad=0.15", fc="w", ec="0.5", alpha=0.85))


def _xy(t) -> str:
    c = [f"{float(u):g}" for u in t]
    if len(c) == 3 and c[2] == "0":
        c = c[:2]
    return "(" + ", ".join(c) + ")"


def fetched_panels(frame, fragment):
    """The inputs to draw beside the target: those the chosen fragment fetched from, one sampler
    name per stream, in the order of the first fetch; and the fetches."""
    fetches = frame.fetches_at(*fragment) if fragment else []
    names, seen = [], set()
    for sampler, _, _ in fetches:
        sid = frame.input_ids[sampler]
        if sid not in seen:
            seen.add(sid)
            names.append(sampler)
    return names, fetches


def draw_frame(frame, total: int, fragment=None, path=None, figsize=(11, 5.4), heading: str = ""):
    """One frame as a matplotlib figure (saved to ``path`` when given, then closed).
    ``fragment`` is (x, y) of the fragment to explain; default: ``frame.chosen_fragment()``."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.patches as mpatches
    import matplotlib.pyplot as plt
    from matplotlib.patches import ConnectionPatch

    if fragment is None or not frame.shades(*fragment):   # not shaded by this pass: its own choice
        fragment = frame.chosen_fragment()
    panels, fetches = fetched_panels(frame, fragment)
    fig, axes = plt.subplots(1, len(panels) + 1, figsize=figsize, squeeze=False)
    axes = axes[0]
    where = {}
    for ax, sampler in zip(axes, panels):
        names = [s for s, i in frame.input_ids.items() if i == frame.input_ids[sampler]]
        _grid(ax, frame.inputs[sampler], f"input {' = '.join(names)} (read)", labels=True)
        for s in names:
            where[s] = ax
    tax = axes[-1]
    _grid(tax, frame.values, "target (written), after the pass", labels=True)
    if frame.covered is not None:
        for y, x in zip(*np.nonzero(frame.covered)):
            tax.add_patch(mpatches.Rectangle((x, y), 1, 1, fill=False, edgecolor="orange", linewidth=1.6))
    _primitive(tax, frame)
    if fragment:
        x, y = fragment
        tax.add_patch(mpatches.Rectangle((x, y), 1, 1, fill=False, edgecolor="lime", linewidth=2.4))
        t0, t1 = frame.T0[y, x], frame.T1[y, x]
        text = [f"fragment ({x}, {y}): WPOS{_xy((x + .5, y + .5))}", f"T0 = {_xy(t0)}", f"T1 = {_xy(t1)}"]
        for k, (sampler, (tx, ty), call) in enumerate(fetches):
            text.append(f"{call} -> {sampler}({tx}, {ty})")
            ax = where[sampler]
            ax.add_patch(mpatches.Rectangle((tx, ty), 1, 1, fill=False, edgecolor="lime", linewidth=2.0))
            ax.text(tx + 0.85, ty + 0.3, str(k + 1), color="darkgreen", fontsize=6, fontweight="bold")
            fig.add_artist(ConnectionPatch(xyA=(x + .5, y + .5), coordsA=tax.transData,
                                           xyB=(tx + .5, ty + .5), coordsB=ax.transData,
                                           arrowstyle="->", color="darkgreen", linewidth=0.9, alpha=0.8))
        n = int(frame.fetch_count[y, x])
        if n > len(fetches):
            text.append(f"... {n} fetches in all, the first {len(fetches)} shown")
        tax.set_xlabel("\n".join(text), fontsize=7, loc="left")
    text = caption(frame, total, heading)
    fig.suptitle(text, fontsize=8)
    fig.subplots_adjust(left=0.04, right=0.98, top=0.84, bottom=0.24, wspace=0.15)
    if path is not None:
        fig.savefig(path, dpi=100, metadata={"Title": f"pass {frame.index + 1} of {total}", "Description": text})
        plt.close(fig)
    return fig


def frame_name(frame) -> str:
    """The file name of ``frame``'s PNG: pass_0001.png for pass 1 (the captions count from 1)."""
    return f"pass_{frame.index + 1:04d}.png"


def _clear_frames(out) -> None:
    """Delete the files an earlier run of :func:`write_frames` left in ``out``: those named as it
    names them (pass_NNNN.png, passes.gif), nothing else."""
    import re

    for p in out.iterdir():
        if (re.fullmatch(FRAME_PATTERN, p.name) or p.name == GIF_NAME) and p.is_file():
            p.unlink()


def write_frames(recorder, out_dir, fragment=None, gif: bool = True, duration_ms: int = 700,
                 heading: str = "", progress: bool | None = None) -> list:
    """Draw every frame of ``recorder`` into ``out_dir`` (pass_0001.png for pass 1, ...) and,
    with ``gif``, passes.gif of them all; returns the paths written. A folder used before has
    its earlier frames replaced: the pass_NNNN.png and passes.gif files there are deleted first
    (other files are left alone), so it holds this run's frames alone. ``progress``: a bar over
    the frames on stderr (each takes about half a second to draw); None (default) shows it only
    where stderr is a terminal, True always, False never."""
    import sys
    from pathlib import Path

    from tqdm import tqdm

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    _clear_frames(out)
    frames = recorder.frames
    paths = []
    for f in tqdm(frames, desc="frames", unit="frame", file=sys.stderr, dynamic_ncols=True,
                  disable=None if progress is None else not progress):
        p = out / frame_name(f)
        draw_frame(f, len(frames), fragment, p, heading=heading)
        paths.append(p)
    if gif and paths:
        from PIL import Image

        images = [Image.open(p).convert("P", palette=Image.ADAPTIVE) for p in paths]
        g = out / GIF_NAME
        images[0].save(g, save_all=True, append_images=images[1:], duration=duration_ms, loop=0)
        paths.append(g)
    return paths
