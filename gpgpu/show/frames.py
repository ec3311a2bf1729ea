"""The frames of :mod:`gpgpu.show` drawn with matplotlib (beyond the papers): one picture per pass,
its caption (:func:`describe`) and legend (:data:`LEGEND`), written as PNG frames and a GIF
(:func:`write_frames`) or given in memory (:func:`render_frames`). The package's notes say what a
frame shows; the window (:mod:`gpgpu.show.window`) and the page (:mod:`gpgpu.show.html`) draw the
same passes.
"""
from __future__ import annotations

import io
import textwrap

import numpy as np

__all__ = ["draw_frame", "write_frames", "render_frames", "describe", "caption", "LEGEND",
           "frame_name", "format_trace", "drawing_problem", "values_meaning", "FRAME_PATTERN", "GIF_NAME", "SENTINEL",
           "DRAWING_EXTRA"]

FRAME_PATTERN = r"pass_\d{4,}\.png"   # the frames' file names: pass_0001.png is the frame of pass 1
GIF_NAME = "passes.gif"
LABEL_LIMIT = 16      # cells labelled with their values up to this many rows and columns
_SENTINEL_COLOUR = "thistle"
BOX_FONT = 8.0        # points, the vertex boxes' text
SENTINEL = 1e37       # |values| from here on are sentinels (flags, a reduction's identity), not entries
#: the pip extra of gpgpu that installs matplotlib (and with it Pillow), which draw the PNG frames
DRAWING_EXTRA = "experiments"

#: What a frame's marks mean: (matplotlib colour, short name, meaning), in the legend's order.
#: Every PNG frame draws this legend; other views (the window, a page) may draw it too.
LEGEND: tuple[tuple[str, str, str], ...] = (
    ("black", "primitive", "the triangle, rectangle or lines drawn for the pass (they may reach past the grid)"),
    ("0.35", "vertex boxes", "vertex k: window position V and texture coordinates T0, T1; a line leads to it"),
    ("orange", "shaded fragments", "the cells the pass shaded, read from the GPU (as many as the occlusion "
                                   "query counted)"),
    ("lime", "chosen fragment", "the fragment explained under the target, and the texels it fetched "
                                "(numbered in fetch order)"),
    ("darkgreen", "fetch arrows", "from the chosen fragment to each texel its kernel fetched"),
    ("tab:red", "cell colour", "the value after the pass: red positive, blue negative, pale near zero"),
    (_SENTINEL_COLOUR, "violet cells", "sentinels of about +-3e+38 (flags, a reduction's identity; the "
                                       "caption says which), not matrix entries"),
)


def caption(frame, total: int, heading: str = "") -> str:
    """The frame's caption: the algorithm (``heading``), pass number, kernel, file, primitive
    and the paper's reference; on every frame that shows sentinels, a line saying what they
    mean there (:func:`values_meaning`). :func:`describe` adds what a pass is for, once."""
    what = f"{frame.primitive} of {len(frame.vertices)} vertices" if frame.vertices else frame.primitive
    meaning = values_meaning(frame)
    return ((heading + "\n" if heading else "") +
            f"pass {frame.index + 1} of {total}: {frame.kernel} (glsl/{frame.file}) -- {frame.doc}\n"
            f"{what} into a {frame.target[0]} x {frame.target[1]} target, "
            f"{frame.fragments} fragments (occlusion query)" + ("\n" + meaning if meaning else ""))


def format_trace(recorder, limit: int | None = None) -> str:
    """The recorded passes, a line each: the pass number, counted from 1 as the captions, the
    frames and their files count (pass 1 is pass_0001.png), the kernel, the primitive and its
    vertices, the fragments it shaded and the target's rows x columns."""
    lines = []
    for i, p in enumerate(recorder.trace[:limit], start=1):
        lines.append(f"{i:6d} {p.kernel:32s} {p.primitive:8s} {p.vertices:2d} vertices -> "
                     f"{p.fragments:9d} fragments into {p.target[0]}x{p.target[1]}")
    return "\n".join(lines)


def drawing_problem() -> str | None:
    """None when the PNG frames can be drawn (matplotlib and Pillow import); else the sentence
    saying what is missing and the pip extra that installs it. ``python -m gpgpu.show`` asks
    before recording anything, so that ``--out`` or ``--html`` without them fails at once."""
    missing = []
    for module, package in (("matplotlib", "matplotlib"), ("PIL", "Pillow")):
        try:
            __import__(module)
        except ImportError:
            missing.append(package)
    if not missing:
        return None
    return (f"drawing the frames (--out, --html) needs {' and '.join(missing)}, which "
            f"{'is' if len(missing) == 1 else 'are'} not installed: pip install 'gpgpu[{DRAWING_EXTRA}]' "
            f"(or pip install matplotlib pillow)")


# ---------------------------------------------------------------------------- explanations
def _within(frame, function: str) -> bool:
    """Whether ``function`` (a dotted name) was on the stack when the pass was drawn; matched by
    the function's own name, so that a helper moved to another module is still found."""
    name = function.rsplit(".", 1)[-1]
    return any(c.rsplit(".", 1)[-1] == name for c in getattr(frame, "context", ()))


def _passes(a: int, b: int) -> str:
    return f"pass {a}" if a == b else f"passes {a} to {b}"


#: (test(frame), sentence(passes), explains the sentinels): each sentence is said once, on the
#: first frame its test accepts; ``passes`` names that frame and the ones after it it accepts.
_NOTES = (
    (lambda f: f.kernel == "absmax_reduction" and _within(f, "gpgpu.lu.singular_threshold"),
     lambda p: f"Why {p}: the absmax reduction halves the candidates each pass, keeping the larger |value| of "
               "each pair, down to max|A| in one texel; from it the elimination takes its pivot threshold "
               "n u max|A| (u = 2^-24): a pivot not above it cannot be told from zero in float32, and the matrix "
               "is reported singular.", False),
    (lambda f: f.kernel.startswith("argmax_reduction") and _within(f, "gpgpu.reduce.argmax_region"),
     lambda p: f"The pivot search ({p}): each pass keeps, of each pair, the entry of larger magnitude with its "
               "position (an RGBA texel: value, column, row), down to one texel, the pivot, read back to "
               "choose the row swap.", False),
    (lambda f: f.kernel == "pivot_check",
     lambda p: "The 3e+38 cells are flags, not matrix entries: pivot_check writes 3.0e38 (near float32's "
               "largest value, 3.4e38) into cell k when pivot k passed the check (above the threshold, finite) "
               "and k when it failed, so that a min reduction finds the first failed step.", True),
    (lambda f: f.kernel == "min_reduction" and _within(f, "gpgpu.cholesky.first_bad_pivot"),
     lambda p: f"Why {p}: the min reduction of the pivot flags, read back: the first step whose pivot failed, "
               "or 3e+38 when every pivot passed (the factorization succeeded).", True),
    (lambda f: f.kernel == "min_reduction" and _within(f, "gpgpu.adat.adat"),
     lambda p: f"Why {p}: the smallest entry of d, found on the GPU: d is the diagonal of D^2, so a negative "
               "entry is refused before the product is formed.", False),
    (lambda f: f.kernel == "absmax_reduction" and _within(f, "gpgpu.adat.adat"),
     lambda p: f"Why {p}: max|C| of the product, read back to check that A D^2 A^T did not overflow "
               "float32.", False),
    (lambda f: f.kernel == "min_reduction",
     lambda p: "A cell without a partner (an odd-length input) is compared with the identity of min, "
               "+3.4e38 (float32's largest value), which never wins.", False),
    (lambda f: f.kernel == "max_reduction",
     lambda p: "A cell without a partner (an odd-length input) is compared with the identity of max, "
               "-3.4e38 (minus float32's largest value), which never wins.", False),
)

_SENTINEL_NOTE = ("Cells of about +-3e+38 (float32's largest value is 3.4e38), drawn violet, are sentinels, not "
                  "matrix entries: a reduction's padding or identity, which never wins a comparison, or a flag "
                  "meaning 'none'.")


#: (test(frame), what its sentinel values mean): the first test that accepts a frame showing
#: sentinels gives its line (:func:`values_meaning`); the last entry accepts every frame.
_MEANINGS = (
    (lambda f: f.kernel == "pivot_check",
     "values: 3e+38 = pivot k passed the check (a flag, not a matrix entry); a small number k = step k's pivot "
     "failed (not positive, or not finite)"),
    (lambda f: f.kernel == "min_reduction" and _within(f, "gpgpu.cholesky.first_bad_pivot"),
     "values: 3e+38 = no failed pivot found among the flags reduced (a flag, not a matrix entry); a small "
     "number k = the first step whose pivot failed"),
    (lambda f: f.kernel == "min_reduction",
     "values: +3.4e38 = the identity of min (padding that never wins), not a matrix entry"),
    (lambda f: f.kernel == "max_reduction",
     "values: -3.4e38 = the identity of max (padding that never wins), not a matrix entry"),
    (lambda f: True,
     "values: about +-3e+38 (violet) = a sentinel (a reduction's padding or identity, or a flag), not a "
     "matrix entry"),
)


def values_meaning(frame) -> str:
    """What the sentinel values of ``frame`` (cells of about +-3e+38, drawn violet) mean in its
    pass, one line starting "values: "; "" where the frame shows none. Said on every frame that
    shows them, so that each frame explains its own values."""
    if not _has_sentinel(frame):
        return ""
    return next(line for test, line in _MEANINGS if test(frame))


def _has_sentinel(frame) -> bool:
    arrays = [frame.values] + list(frame.inputs.values())
    return any(np.any(np.abs(np.asarray(a, dtype=np.float64)) >= SENTINEL) for a in arrays)


def _notes(frames) -> list:
    """For each frame, the sentences said first on it (see :data:`_NOTES`)."""
    frames = list(frames)
    out = [[] for _ in frames]
    said = set()
    sentinel_said = False
    for i, f in enumerate(frames):
        for k, (test, sentence, sentinel) in enumerate(_NOTES):
            if k in said or not test(f):
                continue
            said.add(k)
            j = i
            while j + 1 < len(frames) and test(frames[j + 1]):
                j += 1
            out[i].append(sentence(_passes(f.index + 1, frames[j].index + 1)))
            sentinel_said |= sentinel
        if not sentinel_said and _has_sentinel(f):
            out[i].append(_SENTINEL_NOTE)
            sentinel_said = True
    return out


def describe(frames, heading: str = "") -> list:
    """The full caption of each frame: :func:`caption` (``heading``, pass k of n, kernel, file,
    primitive, fragments) and, on the first frame where it applies only, a sentence on what the
    pass is for where the kernel alone does not say (the absmax passes with which LU opens: its
    pivot threshold) and on any sentinel value that appears (+-3.4e38, a reduction's identity;
    Cholesky's 3e+38 pivot flags). One string per frame, lines separated by newlines; the
    frames are taken as one run (n is their number)."""
    frames = list(frames)
    notes = _notes(frames)
    return [caption(f, len(frames), heading) + "".join("\n" + s for s in n) for f, n in zip(frames, notes)]


# ---------------------------------------------------------------------------- drawing
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


def _wrap(text: str, width: int = 160) -> str:
    return "\n".join(w for line in text.split("\n") for w in (textwrap.wrap(line, width) or [""]))


def _legend_handle(colour: str, name: str):
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    if name == "fetch arrows":
        return Line2D([], [], color=colour, linewidth=1.2, marker=">", markevery=[1], markersize=5)
    if name in ("cell colour", "violet cells"):
        return Patch(facecolor=colour, edgecolor="0.6", linewidth=0.4)
    if name == "vertex boxes":
        return Patch(facecolor="w", edgecolor=colour, linewidth=0.8)
    return Patch(fill=False, edgecolor=colour, linewidth=1.8)


class _Stamps:
    """Texts stamped onto the drawn frame from bitmaps rendered once (FreeType, through
    matplotlib's own font and hinting, as its Agg renderer draws text): the cells' values and
    the row and column numbers, some 200 a frame, most of them the same from frame to frame,
    the panels' titles, the caption and the chosen fragment's lines. Drawing them as matplotlib
    texts cost most of a frame's time. (The texts stamped are also matplotlib artists of the
    figure, animated, so that the figure's own draw leaves them out.)"""

    def __init__(self, dpi: int):
        from matplotlib.backends.backend_agg import get_hinting_flag
        from matplotlib.font_manager import FontProperties, findfont, get_font

        self.font = get_font(findfont(FontProperties()))
        self.flags = get_hinting_flag()
        self.dpi = dpi
        self.cache = {}

    def bitmap(self, text: str, size: float) -> np.ndarray:
        key = (text, size)
        a = self.cache.get(key)
        if a is None:
            f = self.font
            f.clear()
            f.set_size(size, self.dpi)
            f.set_text(text, 0.0, flags=self.flags)
            f.draw_glyphs_to_bitmap(antialiased=True)
            a = self.cache[key] = np.asarray(f.get_image(), dtype=np.float32)[..., None] / 255.0
        return a

    def box(self, text: str, size: float, x: float, y: float, ha: str = "center", va: str = "center",
            rotate: bool = False) -> tuple:
        """(first row, first column, rows, columns) of the pixels :meth:`stamp` covers (rows
        from the top), before clipping to the picture."""
        h, w = self.bitmap(text, size).shape[:2]
        if rotate:
            h, w = w, h
        return (int(round(-y - {"top": 0, "center": h / 2, "bottom": h}[va])),
                int(round(x - {"left": 0, "center": w / 2, "right": w}[ha])), h, w)

    def stamp(self, rgb: np.ndarray, text: str, size: float, xy: tuple, *, colour=(0, 0, 0),
              ha: str = "center", va: str = "center", rotate: bool = False, halo=None, within=None):
        """Draw ``text`` at display point ``xy`` = (x, y) (pixels from the bottom left), aligned there as
        ``ha`` ("left", "center", "right") and ``va`` ("top", "center", "bottom") say; with
        ``rotate``, turned a quarter left (read from bottom to top). ``halo`` (an RGB colour):
        the text's box, one pixel wider each side, is first filled with it, so that no line drawn
        under the text crosses it; ``within`` (row0, row1, col0, col1) bounds that fill."""
        if not text:
            return
        x, y = xy
        a = self.bitmap(text, size)
        if rotate:
            a = np.rot90(a)
        H, W = rgb.shape[:2]
        r0, c0, h, w = self.box(text, size, x, y, ha, va, rotate)
        r0 += H
        if halo is not None:
            lo_r, hi_r, lo_c, hi_c = within or (0, H, 0, W)
            rgb[max(r0 - 1, lo_r, 0):min(r0 + h + 1, hi_r, H), max(c0 - 1, lo_c, 0):min(c0 + w + 1, hi_c, W)] = halo
        r1, c1 = min(r0 + h, H), min(c0 + w, W)
        if r0 < 0 or c0 < 0 or r1 <= r0 or c1 <= c0:
            return
        a = a[:r1 - r0, :c1 - c0]
        region = rgb[r0:r1, c0:c1]
        region[...] = (region * (1.0 - a) + np.asarray(colour, np.float32) * a + 0.5).astype(np.uint8)

    def lines(self, rgb: np.ndarray, text: str, size: float, x: float, y: float, ha: str = "left"):
        """A block of lines, its top at display point (x, y), 1.25 lines apart."""
        step = size * 1.25 * self.dpi / 72
        for k, line in enumerate(text.split("\n")):
            self.stamp(rgb, line, size, (x, y - k * step), ha=ha, va="top")


class _Panel:
    """One texture's grid in the figure: an image, the grid lines, a title, and the values and
    indexes (stamped by :class:`_Stamps` once the figure is drawn); updated in place from frame
    to frame."""

    def __init__(self, fig, rect, anchor):
        import matplotlib
        from matplotlib.collections import LineCollection

        self.ax = ax = fig.add_axes(rect)
        ax.set_anchor(anchor)
        ax.set_xticks([])
        ax.set_yticks([])
        cmap = matplotlib.colormaps["coolwarm"].with_extremes(bad=_SENTINEL_COLOUR)
        self.image = ax.imshow(np.zeros((1, 1)), cmap=cmap, vmin=-1, vmax=1, extent=(0, 1, 1, 0),
                               interpolation="nearest", interpolation_stage="rgba")
        self.grid = LineCollection([], colors="0.6", linewidths=0.4)
        ax.add_collection(self.grid, autolim=False)
        self.title = ""                        # stamped above the grid (see _Stamps)
        self.value_size = None                 # the values' font size in points, once stamped
        self.shape = None
        self.texts, self.light = [], []
        self.marks = []       # per-frame artists (fetched texels, their numbers), removed at the next frame

    def show(self, values, title):
        self._unmark()
        ax = self.ax
        ax.set_visible(True)
        v = np.asarray(values if values.ndim == 2 else values[..., 0], dtype=np.float64)
        rows, cols = v.shape
        if self.shape != (rows, cols):
            self.shape = (rows, cols)
            ax.set_xlim(0, cols)
            ax.set_ylim(rows, 0)
            self.image.set_extent((0, cols, rows, 0))
            self.grid.set_segments([[(x, 0), (x, rows)] for x in range(1, cols)] +
                                   [[(0, y), (cols, y)] for y in range(1, rows)])
        bad = ~np.isfinite(v) | (np.abs(v) >= SENTINEL)        # sentinels: their own colour, off the scale
        finite = np.abs(v[~bad])
        lim = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
        self.image.set_data(np.ma.masked_array(v, bad))
        self.image.set_clim(-lim, lim)
        self.title = title + (" -- RGBA, .r shown" if values.ndim == 3 else "")
        labelled = rows <= LABEL_LIMIT and cols <= LABEL_LIMIT
        self.texts = [f"{u:.3g}" for u in v.ravel()] if labelled else []
        self.light = (~bad & (np.abs(v) > 0.65 * lim)).ravel()   # white on the darkest cells

    def _unmark(self):
        for a in self.marks:
            a.remove()
        self.marks = []

    def hide(self):
        self._unmark()
        self.ax.set_visible(False)

    def _cell(self) -> float:
        """A cell's size in points (the smaller side)."""
        rows, cols = self.shape
        fig = self.ax.figure
        box = self.ax.get_position()
        return min(box.width * fig.get_figwidth() / cols, box.height * fig.get_figheight() / rows) * 72

    def label_size(self) -> float | None:
        """The largest font size, in points, at which every value fits its cell; None when the
        panel shows no values."""
        if not self.ax.get_visible() or not self.texts:
            return None
        cell = self._cell()
        longest = max(map(len, self.texts))
        return max(3.0, min(12.0, cell / (0.64 * longest + 1.0), cell * 0.42))

    def stamp(self, rgb, stamps: _Stamps, size: float | None):
        """The values (at font ``size``) and the row and column numbers, onto the drawn figure
        ``rgb``."""
        if not self.ax.get_visible():
            return
        rows, cols = self.shape
        cell = self._cell()
        fig = self.ax.figure
        box = self.ax.get_position()
        W, H = fig.bbox.width, fig.bbox.height
        room = box.width * W + 0.8 * _Renderer.GAP * fig.dpi        # the grid's width and most of a gap
        lines = [self.title]
        if stamps.bitmap(self.title, 9.0).shape[1] > room:           # wrapped over the narrow grid
            chars = max(8, int(len(self.title) * room / stamps.bitmap(self.title, 9.0).shape[1]))
            lines = textwrap.wrap(self.title, chars)
        for k, line in enumerate(reversed(lines)):
            stamps.stamp(rgb, line, 9.0, ((box.x0 + box.x1) / 2 * W, box.y1 * H + 5 + k * 15), va="bottom")
        at = self.ax.transData.transform
        index = round(min(8.0, max(4.0, cell * 0.45)) * 2) / 2
        for x in range(cols):
            px, py = at((x + 0.5, rows))
            stamps.stamp(rgb, str(x), index, (px, py - index * 0.9), colour=(0, 0, 0))
        px, py = at((cols / 2, rows))                 # the axes named: x counts columns, y rows
        stamps.stamp(rgb, "col", index, (px, py - index * 2.3), colour=(80, 80, 80))
        widest = 0
        for y in range(rows):
            px, py = at((0, y + 0.5))
            stamps.stamp(rgb, str(y), index, (px - index * 0.4, py), colour=(0, 0, 0), ha="right")
            widest = max(widest, stamps.bitmap(str(y), index).shape[1])
        px, py = at((0, rows / 2))
        stamps.stamp(rgb, "row", index, (px - index * 0.9 - widest, py), colour=(80, 80, 80), ha="right",
                     rotate=True)
        if not self.texts or size is None:
            return
        H = rgb.shape[0]
        colours = self.image.to_rgba(self.image.get_array(), bytes=True)[..., :3].reshape(-1, 3)
        margin = 3                                    # pixels inside the cell that the halo leaves to its outline
        half = cell * fig.dpi / 72 / 2
        centres = at(np.array([(x + 0.5, y + 0.5) for y in range(rows) for x in range(cols)]))
        for (px, py), text, light, colour in zip(centres, self.texts, self.light, colours):
            within = (int(np.ceil(H - py - half)) + margin, int(H - py + half) - margin + 1,
                      int(np.ceil(px - half)) + margin, int(px + half) - margin + 1)
            stamps.stamp(rgb, text, size, (px, py), colour=(255, 255, 255) if light else (0, 0, 0), halo=colour,
                         within=within)


class _Renderer:
    """One Agg figure for a run's frames (matplotlib without pyplot): the panels, the overlays
    and the texts are artists made once and updated for each frame; the legend is drawn once
    and pasted, the cells' values stamped (:class:`_Stamps`). A figure built per frame spent
    most of its time making ticks and laying out text."""

    MAX_VERTEX_BOXES = 6
    BOX_LINES = 4             # a vertex box's lines: the vertex and its axes, V, T0, T1

    def __init__(self, slots: int, figsize=(12, 8), dpi: int = 100, legend: bool = True):
        import matplotlib.patches as mpatches
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.collections import LineCollection, PolyCollection
        from matplotlib.figure import Figure
        from matplotlib.lines import Line2D

        self.fig = fig = Figure(figsize=figsize, dpi=dpi)
        FigureCanvasAgg(fig)
        self.dpi = dpi
        self.stamps = _Stamps(dpi)
        self.with_legend = legend          # the caption and the legend drawn (else left to the page around)
        self.area = self.AREA if legend else self.AREA[:3] + (self.TOP_BARE,)
        self.inputs = [_Panel(fig, (0.1, 0.3, 0.2, 0.5), "C") for _ in range(slots - 1)]
        self.target = _Panel(fig, (0.6, 0.3, 0.2, 0.5), "C")
        tax = self.target.ax
        self.shaded = PolyCollection([], facecolors="none", edgecolors="orange", linewidths=1.6)
        self.outline = PolyCollection([], facecolors="none", edgecolors="k", linewidths=1.4, clip_on=False)
        self.lines = LineCollection([], colors="k", linewidths=1.4, clip_on=False)
        self.dots = Line2D([], [], color="k", marker="o", markersize=3.5, linestyle="none", clip_on=False)
        self.chosen = mpatches.Rectangle((0, 0), 1, 1, fill=False, edgecolor="lime", linewidth=2.4)
        for a in (self.shaded, self.outline, self.lines):
            tax.add_collection(a, autolim=False)
        tax.add_line(self.dots)
        tax.add_patch(self.chosen)
        # the vertex boxes: a white box, its lines stamped, a leader line to the vertex (figure coordinates)
        self.boxes = [(fig.add_artist(mpatches.Rectangle((0, 0), 0, 0, transform=fig.transFigure, facecolor="w",
                                                         edgecolor="0.35", linewidth=0.8, zorder=5)),
                       fig.add_artist(Line2D([], [], transform=fig.transFigure, color="0.35", linewidth=0.7,
                                             zorder=4)))
                      for _ in range(self.MAX_VERTEX_BOXES)]
        self.box_texts = []        # (text, x, y top) in figure fractions, stamped
        self.explain = fig.text(0.01, 0.215, "", fontsize=8.5, va="top", ha="left", animated=True)
        self.caption = fig.text(0.01, 0.99, "", fontsize=9.0, va="top", ha="left", animated=True)
        self.legend = None if not legend else fig.legend(
            [_legend_handle(c, n) for c, n, _ in LEGEND], [f"{n}: {m}" for _, n, m in LEGEND], loc="lower right",
            bbox_to_anchor=(0.995, 0.005), fontsize=7.5, title="legend", title_fontsize=8, frameon=True,
            handlelength=1.6, borderaxespad=0.2)
        self.arrows = []
        self._legend = None        # (row slice, column slice, pixels) once drawn

    def draw(self, frame, fragment, text: str):
        """Update the artists to ``frame`` (the figure is drawn by :meth:`rgb`)."""
        import matplotlib.patches as mpatches
        from matplotlib.patches import ConnectionPatch

        fig = self.fig
        for a in self.arrows:
            a.remove()
        self.arrows = []
        if fragment is None or not frame.shades(*fragment):   # not shaded by this pass: its own choice
            fragment = frame.chosen_fragment()
        panels, fetches = fetched_panels(frame, fragment)
        if len(panels) > len(self.inputs):
            raise ValueError(f"{len(panels)} input panels, the figure has room for {len(self.inputs)}")
        where = {}
        for i, panel in enumerate(self.inputs):
            k = i - (len(self.inputs) - len(panels))            # the inputs sit next to the target
            if k < 0:
                panel.hide()
                continue
            sampler = panels[k]
            names = [s for s, j in frame.input_ids.items() if j == frame.input_ids[sampler]]
            panel.show(frame.inputs[sampler], f"input {' = '.join(names)} (read)")
            for s in names:
                where[s] = panel
        self.target.show(frame.values, "target (written), after the pass")
        self._layout([p for p in self.inputs if p.ax.get_visible()] + [self.target])
        tax = self.target.ax
        cells = [] if frame.covered is None else [
            [(x, y), (x + 1, y), (x + 1, y + 1), (x, y + 1)] for y, x in zip(*np.nonzero(frame.covered))]
        self.shaded.set_verts(cells)
        self._primitive(frame)
        lines = []
        if fragment:
            x, y = fragment
            self.chosen.set_xy((x, y))
            self.chosen.set_visible(True)
            t0, t1 = frame.T0[y, x], frame.T1[y, x]
            lines = [f"chosen fragment (col, row) = ({x}, {y}): WPOS = {_xy((x + .5, y + .5))}",
                     f"T0 = {_xy(t0)}", f"T1 = {_xy(t1)}"]
            for k, (sampler, (tx, ty), call) in enumerate(fetches):
                lines.append(f"{k + 1}. {call} -> {sampler}(col {tx}, row {ty})")
                panel = where[sampler]
                ax = panel.ax
                panel.marks.append(ax.add_patch(mpatches.Rectangle((tx, ty), 1, 1, fill=False, edgecolor="lime",
                                                                   linewidth=2.0)))
                # the fetch's number: a badge in the cell's top right corner, clear of the value
                badge = min(7.0, 0.2 * panel._cell())
                panel.marks.append(ax.text(tx + 0.95, ty + 0.06, str(k + 1), color="w", fontsize=badge,
                                           fontweight="bold", ha="right", va="top", bbox=dict(
                                               boxstyle="round,pad=0.12", facecolor="darkgreen", linewidth=0)))
                # the arrow from cell edge to cell edge: its line and head off both cells' values
                a, b = self._edges(tax, (x + .5, y + .5), ax, (tx + .5, ty + .5))
                self.arrows.append(fig.add_artist(ConnectionPatch(
                    xyA=(x + .5, y + .5), coordsA=tax.transData, xyB=(tx + .5, ty + .5), coordsB=ax.transData,
                    arrowstyle="->", color="darkgreen", linewidth=0.9, alpha=0.8, shrinkA=a, shrinkB=b)))
            n = int(frame.fetch_count[y, x])
            if n > len(fetches):
                lines.append(f"... {n} fetches in all, the first {len(fetches)} shown")
        else:
            self.chosen.set_visible(False)
            lines = ["no fragment to explain: the pass shaded none the recorder could see"]
        self.explain.set_text("\n".join(lines))
        self.caption.set_text(_wrap(text) if self.with_legend else "")
        return fig

    def _edges(self, ax_a, a, ax_b, b) -> tuple:
        """How far (points) the arrow from the centre of cell ``a`` of ``ax_a`` to the centre of
        cell ``b`` of ``ax_b`` (data coordinates) runs inside each of the two cells, so that it
        starts and ends on their edges (ConnectionPatch's shrinkA, shrinkB)."""
        ax_a.apply_aspect()
        ax_b.apply_aspect()
        p = ax_a.transData.transform(a)
        q = ax_b.transData.transform(b)
        d = q - p
        length = float(np.hypot(*d))
        if length == 0:
            return 0.0, 0.0
        u = np.abs(d) / length
        out = []
        for ax, c in ((ax_a, a), (ax_b, b)):
            half = ax.transData.transform((c[0] + .5, c[1] + .5)) - ax.transData.transform(c)    # pixels
            out.append(float(min(abs(half[0]) / max(u[0], 1e-9), abs(half[1]) / max(u[1], 1e-9))) * 72 / self.dpi)
        return out[0], out[1]

    #: where the grids go (figure fractions; the vertex boxes go right of them), the gap between
    #: two grids and the largest cell (inches)
    AREA, GAP, MAX_CELL = (0.035, 0.27, 0.85, 0.845), 0.5, 0.9
    TOP_BARE = 0.93           # the grids' top without the caption (``legend=False``)

    def _layout(self, panels):
        """Place the grids side by side, the target last, every cell the same size: the largest
        that lets them all fit (so a texel of an input and one of the target look alike)."""
        left, bottom, right, top = self.area
        W, H = self.fig.get_figwidth(), self.fig.get_figheight()
        width, height = (right - left) * W - self.GAP * (len(panels) - 1), (top - bottom) * H
        cols = sum(p.shape[1] for p in panels)
        rows = max(p.shape[0] for p in panels)
        cell = min(width / cols, height / rows, self.MAX_CELL)
        x = left * W + (width - cell * cols) / 2
        for p in panels:
            r, c = p.shape
            y = bottom * H + (height - cell * r) / 2
            p.ax.set_position((x / W, y / H, cell * c / W, cell * r / H))
            x += cell * c + self.GAP

    def _primitive(self, frame):
        pts = [(float(v.V[0]), float(v.V[1])) for v in frame.vertices]
        polys, segs = [], []
        if frame.primitive == "triangle":
            polys = [pts[t:t + 3] for t in range(0, len(pts), 3)]
        elif frame.primitive in ("rect", "texel"):
            polys = [pts] if pts else []
        elif frame.primitive == "line":
            segs = [[a, b] for a, b in zip(pts[0::2], pts[1::2])]
        self.outline.set_verts(polys)
        self.lines.set_segments(segs)
        boxed = frame.vertices if 0 < len(pts) <= self.MAX_VERTEX_BOXES else ()
        self.dots.set_data([p[0] for p in pts[:len(boxed)]], [p[1] for p in pts[:len(boxed)]])
        tax = self.target.ax
        tax.apply_aspect()
        box = tax.get_position()                       # after the panel's aspect was applied
        pad = 4.0                                      # pixels
        # a box's height and a gap (figure fraction); where the boxes may go (below the title)
        step = (self.BOX_LINES * BOX_FONT * 1.25 * self.dpi / 72 + 2 * pad) / self.fig.bbox.height + 0.006
        low, high = 0.25, box.y1
        to_fig = self.fig.transFigure.inverted().transform
        want = {i: float(to_fig(tax.transData.transform(pts[i]))[1]) + step / 2 for i in range(len(boxed))}
        order = sorted(want, key=lambda i: (-want[i], pts[i][0]))
        tops, last = [], high + step
        for i in order:                                # each box beside its vertex, none overlapping
            last = min(want[i], last - step, high)
            tops.append(last)
        if tops and tops[-1] - step < low:
            tops = [t + (low - (tops[-1] - step)) for t in tops]
        self.box_texts = []
        W, H = self.fig.bbox.width, self.fig.bbox.height
        # right of the grid and of the primitive (an oversized triangle reaches past the grid)
        right = max([box.x1] + [float(to_fig(tax.transData.transform(p))[0]) for p in pts[:len(boxed)]])
        for slot, (rect, leader) in enumerate(self.boxes):
            if slot >= len(boxed):
                rect.set_visible(False)
                leader.set_visible(False)
                continue
            i = order[slot]
            v = boxed[i]
            text = f"vertex {i + 1}: x = col, y = row\nV = {_xy(v.V)}\nT0 = {_xy(v.T0)}\nT1 = {_xy(v.T1)}"
            lines = text.split("\n")
            w = max(self.stamps.bitmap(t, BOX_FONT).shape[1] for t in lines) + 2 * pad
            h = len(lines) * BOX_FONT * 1.25 * self.dpi / 72 + 2 * pad
            x0 = min(right + 0.014, 1 - w / W - 0.004)
            top = tops[slot]
            rect.set_bounds(x0, top - h / H, w / W, h / H)
            rect.set_visible(True)
            vx, vy = to_fig(tax.transData.transform(pts[i]))
            leader.set_data([x0, vx], [top - h / H / 2, vy])
            leader.set_visible(True)
            self.box_texts.append((text, x0 + pad / W, top - pad / H))

    def rgb(self) -> np.ndarray:
        """The figure drawn, as an (H, W, 3) uint8 array."""
        canvas = self.fig.canvas
        canvas.draw()
        rgb = np.asarray(canvas.buffer_rgba())[..., :3].copy()
        if self.legend is None:                # none (the page around the frames draws it)
            pass
        elif self._legend is None:             # drawn this once; pasted from now on
            x0, y0, x1, y1 = self.legend.get_window_extent().extents
            H = rgb.shape[0]
            rs = slice(max(0, int(H - y1) - 2), min(H, int(np.ceil(H - y0)) + 2))
            cs = slice(max(0, int(x0) - 2), min(rgb.shape[1], int(np.ceil(x1)) + 2))
            self._legend = (rs, cs, rgb[rs, cs].copy())
            self.legend.set_visible(False)
        else:
            rs, cs, pixels = self._legend
            rgb[rs, cs] = pixels
        panels = self.inputs + [self.target]
        fits = [(p.shape, p.label_size()) for p in panels]
        for panel in panels:               # the largest that fits; one size for the grids of one shape
            same = [f for shape, f in fits if shape == panel.shape and f is not None]
            size = np.floor(min(same) * 2) / 2 if same and panel.label_size() is not None else None
            panel.stamp(rgb, self.stamps, size)
            panel.value_size = size
        self.value_size = self.target.value_size
        W, H = self.fig.bbox.width, self.fig.bbox.height
        for t in (self.caption, self.explain):        # texts that are stamped, not drawn (see _Stamps); "": none
            x, y = t.get_position()
            text = t.get_text()
            size = t.get_fontsize() if text.count("\n") < 6 else 8.0     # a long caption stays above the grids
            self.stamps.lines(rgb, text, size, x * W, y * H)
        for text, x, y in self.box_texts:
            self.stamps.lines(rgb, text, BOX_FONT, x * W, y * H)
        return rgb


def _panels(frames, fragment) -> list:
    """For each frame, the shapes of the grids it draws: its inputs', then its target's."""
    out = []
    for f in frames:
        fr = fragment if fragment is not None and f.shades(*fragment) else f.chosen_fragment()
        out.append([f.inputs[s].shape[:2] for s in fetched_panels(f, fr)[0]] + [f.target])
    return out


def _slots(frames, fragment) -> int:
    """The panels a run's figure needs: the target and the most inputs any frame draws."""
    return max(len(p) for p in _panels(frames, fragment))


def _figsize(frames, fragment, height: float = 8.0, cell: float = 0.45, widest: float = 20.0) -> tuple:
    """(width, height) in inches: 12 wide, wider (up to ``widest``) where a frame's grids side by
    side need it for cells of ``cell`` inches (the values stay readable)."""
    left, bottom, right, top = _Renderer.AREA
    need = 0.0
    for shapes in _panels(frames, fragment):
        c = min(cell, (top - bottom) * height / max(r for r, _ in shapes))
        need = max(need, (c * sum(k for _, k in shapes) + _Renderer.GAP * (len(shapes) - 1)) / (right - left))
    return (float(min(widest, max(12.0, need))), height)


def _png(rgb: np.ndarray, title: str, text: str) -> bytes:
    from PIL import Image
    from PIL.PngImagePlugin import PngInfo

    info = PngInfo()
    info.add_text("Title", title)
    info.add_text("Description", text)
    buf = io.BytesIO()
    Image.fromarray(rgb).save(buf, format="png", pnginfo=info, compress_level=6)
    return buf.getvalue()


def _render(frames, fragment=None, heading: str = "", figsize=None, dpi: int = 100, legend: bool = True):
    """(frame, rgb array, png bytes, caption) for each frame (see :func:`render_frames`)."""
    frames = list(frames)
    if not frames:
        return
    texts = describe(frames, heading)
    r = _Renderer(_slots(frames, fragment), figsize or _figsize(frames, fragment), dpi, legend)
    for f, text in zip(frames, texts):
        r.draw(f, fragment, text)
        rgb = r.rgb()
        yield f, rgb, _png(rgb, f"pass {f.index + 1} of {len(frames)}", text), text


def render_frames(frames, fragment=None, heading: str = "", figsize=None, dpi: int = 100, legend: bool = True):
    """Draw each of ``frames`` (a run's, in order: ``recorder.frames``) in memory: an iterator of
    ``(png_bytes, caption)``, one per frame, lazily (each drawn when asked for). The PNG is what
    :func:`write_frames` writes to pass_NNNN.png (its "Title" and "Description" text entries
    included); ``caption`` is that frame's :func:`describe` text. ``fragment`` (x, y) is the
    fragment to explain in every frame that shades it (elsewhere the frame's own choice);
    ``heading`` starts every caption. ``figsize`` (inches, at ``dpi`` pixels an inch): by default
    12 x 8, wider (up to 20) where a frame has many grids side by side, the same for every frame
    of the run. One figure is made for the run and updated from frame to frame, so this is how
    to draw many frames (a page embedding them, for instance). ``legend=False`` leaves the caption
    and the legend out of the pictures, for a page that writes them itself (the grids take the
    caption's room; the PNG still carries the caption as its "Description" text)."""
    for _, _, png, text in _render(frames, fragment, heading, figsize, dpi, legend):
        yield png, text


def draw_frame(frame, total: int, fragment=None, path=None, figsize=None, heading: str = "", legend: bool = True):
    """One frame as a matplotlib figure (saved to ``path`` when given). ``fragment`` is (x, y)
    of the fragment to explain; default: ``frame.chosen_fragment()``. Its caption is
    :func:`caption` with the frame's own explanations (:func:`describe` as if the frame came
    first). To draw a whole run use :func:`render_frames` or :func:`write_frames` (faster: one
    figure for all frames). The picture is the PNG written to ``path``: the figure returned holds
    the frame's artists for inspection (the caption and the chosen fragment's lines as its
    ``texts``, the legend in ``legends``), but its texts are stamped onto the PNG rather than
    drawn by matplotlib, so ``fig.savefig`` would leave them out. ``legend=False``: the caption
    and the legend left out of the picture (as :func:`render_frames` does)."""
    text = caption(frame, total, heading) + "".join("\n" + s for s in _notes([frame])[0])
    r = _Renderer(_slots([frame], fragment), figsize or _figsize([frame], fragment), legend=legend)
    fig = r.draw(frame, fragment, text)
    rgb = r.rgb()
    if path is not None:
        with open(path, "wb") as fh:
            fh.write(_png(rgb, f"pass {frame.index + 1} of {total}", text))
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
    """Draw every frame of ``recorder`` into ``out_dir`` (pass_0001.png for pass 1, ...; the
    PNGs of :func:`render_frames`, captions of :func:`describe`) and, with ``gif``, passes.gif of
    them all; returns the paths written. A folder used before has its earlier frames replaced:
    the pass_NNNN.png and passes.gif files there are deleted first (other files are left alone),
    so it holds this run's frames alone. ``progress``: a bar over the frames on stderr; None
    (default) shows it only where stderr is a terminal, True always, False never."""
    import sys
    from pathlib import Path

    from PIL import Image
    from tqdm import tqdm

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    _clear_frames(out)
    frames = recorder.frames
    paths, images = [], []
    with tqdm(total=len(frames), desc="frames", unit="frame", file=sys.stderr, dynamic_ncols=True,
              disable=None if progress is None else not progress) as bar:
        for f, rgb, png, _ in _render(frames, fragment, heading):
            p = out / frame_name(f)
            p.write_bytes(png)
            paths.append(p)
            if gif:       # each frame its own palette (one shared palette lost the colours frames add)
                images.append(Image.fromarray(rgb).quantize(256, method=Image.Quantize.FASTOCTREE,
                                                            dither=Image.Dither.NONE))
            bar.update()
    if gif and images:
        g = out / GIF_NAME
        images[0].save(g, save_all=True, append_images=images[1:], duration=duration_ms, loop=0)
        paths.append(g)
    return paths
