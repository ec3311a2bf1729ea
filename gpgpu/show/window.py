"""The recorded passes drawn by OpenGL itself, in a GLFW window (``python -m gpgpu.show ... --window``).

The same frames as the PNGs, words included. Each texture is a textured quad whose fragment
program colours every texel by value (blue negative, red positive) and draws the cell grid,
the shaded fragments outlined in orange, the chosen fragment and the texels it fetched in
green; the primitive's outline, its vertices and the fetch arrows are lines and points. Over
them a text layer, drawn with Dear ImGui (the ``imgui-bundle`` package, its OpenGL 3 backend
rendering into the same framebuffer; install it with ``pip install 'gpgpu[window]'``) writes:

* a caption bar on top: the pass (k of n), the kernel, its file and the paper's reference, the
  primitive and its fragments (:func:`captions`);
* the panels' titles, the cells' values (up to 16 x 16 cells, where they fit), the vertices'
  numbers beside their points, the fetched texels' numbers;
* a strip below: the vertices with V, T0 and T1; the chosen fragment with its WPOS, T0, T1 and
  its fetches, each as its kernel writes it (``texRECT(L, pivot_index.yx) -> L(0, 3)``); the
  legend of the colours;
* with H or F1, an overlay listing the keys.

The caption is also the window's title and is printed, with the chosen fragment's T0, T1 and
fetches, at every step. What the text layer drew last is :attr:`Window.drawn_text` (one string a
call), which the tests read.

Keys: Right / Left (or N / P) the next / previous pass, Home / End the first / last, Space
plays and pauses (playing stops on the last pass; Right there stays on it), F the next fragment
of the pass (C the previous), H or F1 the help overlay, T the text layer on or off, Q or Escape
closes. :class:`Steps` holds what the keys move.

Without a display (neither DISPLAY nor WAYLAND_DISPLAY set, no glfw package, or GLFW unable to
open the display or an OpenGL 3.3 window, whatever its platform) the window is refused with
:class:`NoDisplayError`, whose message says to use ``--out DIR`` (PNG files need no display);
without imgui-bundle, with the same error saying ``pip install 'gpgpu[window]'``.
:func:`display_problem` is that check, made before any work.

:class:`FrameRenderer` draws into whatever framebuffer is bound, so the window and a headless
framebuffer (:func:`render_offscreen`) draw the same pixels, text included: the tests compare
the window's screenshot under Xvfb with the headless frame of the same pass.
"""
from __future__ import annotations

import os
import struct
import time
from pathlib import Path
from typing import NamedTuple

import moderngl
import numpy as np

from .frames import SENTINEL, fetched_panels

__all__ = ["FrameRenderer", "TextLayer", "Window", "render_offscreen", "run_window", "Steps", "NoDisplayError",
           "display_problem", "captions", "legend", "DEFAULT_SIZE", "SHOT_PATTERN", "HELP", "INSTALL_EXTRA"]

DEFAULT_SIZE = (1100, 560)
SHOT_PATTERN = r"shot_\d{4,}\.png"   # the screenshots' names (shot_0001.png, ...)
USE_OUT = "use --out DIR to write the frames as PNG files, which needs none"
#: how the strip's coordinates read: every (x, y) is (column, row), as WPOS and texRECT take them
AXES = "(x, y) = (col, row) throughout"

_GRID_VS = """
#version 330
in vec2 in_pos;        // NDC
in vec2 in_texel;      // texel coordinates (x = column, y = row) at this corner
out vec2 texel;
void main() { texel = in_texel; gl_Position = vec4(in_pos, 0.0, 1.0); }
"""

_GRID_FS = """
#version 330
uniform sampler2D values;   // R32F, the texture's values
uniform sampler2D marks;    // R32F: 0 nothing, 1 shaded by the pass, 2 chosen fragment or fetched texel;
                            // 4 more where the value is a sentinel (about +-3e+38), drawn violet (thistle)
uniform float lim;          // |value| that gets the full colour
uniform float line;         // width of a grid line, in texel units (one pixel)
in vec2 texel;
out vec4 color;
void main() {
    ivec2 cell = ivec2(floor(texel));
    float v = clamp(texelFetch(values, cell, 0).r / lim, -1.0, 1.0);
    vec3 c = v < 0.0 ? mix(vec3(0.93), vec3(0.23, 0.30, 0.75), -v) : mix(vec3(0.93), vec3(0.71, 0.02, 0.15), v);
    vec2 f = fract(texel);
    float edge = min(min(f.x, 1.0 - f.x), min(f.y, 1.0 - f.y));
    float mark = texelFetch(marks, cell, 0).r;
    if (mark > 3.5) { c = vec3(0.847, 0.749, 0.847); mark -= 4.0; }
    if (mark > 1.5 && edge < 3.0 * line) c = vec3(0.0, 0.85, 0.0);
    else if (mark > 0.5 && edge < 2.0 * line) c = vec3(1.0, 0.6, 0.0);
    else if (edge < 0.5 * line) c = vec3(0.6);
    color = vec4(c, 1.0);
}
"""

_LINE_VS = """
#version 330
in vec2 in_pos;
void main() { gl_Position = vec4(in_pos, 0.0, 1.0); }
"""

_LINE_FS = """
#version 330
uniform vec3 rgb;
out vec4 color;
void main() { color = vec4(rgb, 1.0); }
"""


class NoDisplayError(RuntimeError):
    """No window can open: no display (the message says to use --out DIR instead), or no
    imgui-bundle for its text (the message says ``pip install 'gpgpu[window]'``)."""


def _no_display(cause: str) -> NoDisplayError:
    return NoDisplayError(f"--window needs a display: {cause}; {USE_OUT}")


def _glfw_errors(glfw) -> list:
    """GLFW's error messages from now on, collected (not warned or raised, whatever the package's
    ERROR_REPORTING), to quote in :class:`NoDisplayError`."""
    errors = []
    glfw.set_error_callback(lambda code, text: errors.append(
        text.decode(errors="replace") if isinstance(text, bytes) else str(text)))
    return errors


def _import_glfw():
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        raise _no_display("neither DISPLAY nor WAYLAND_DISPLAY is set")
    try:
        import glfw
    except Exception as exc:            # ImportError, or the package's own "failed to load GLFW3"
        raise _no_display(f"the glfw package is not usable ({exc}; pip install glfw)") from None
    return glfw


def _init_glfw(glfw) -> list:
    """glfw.init(), or NoDisplayError naming GLFW's reason; returns the error list."""
    errors = _glfw_errors(glfw)
    try:
        ok = glfw.init()
    except Exception as exc:            # GLFWError raised by the package's error reporting
        errors.append(str(exc))
        ok = False
    if not ok:
        where = os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
        raise _no_display(f"GLFW could not open the display {where!r}"
                          + (f" ({errors[-1]})" if errors else ""))
    return errors


def display_problem() -> str | None:
    """None when a window can be opened (a display is set, GLFW initialises on it, and
    imgui-bundle, the ``window`` extra, imports); else the sentence saying why not and what to do
    (use --out DIR; or ``pip install 'gpgpu[window]'``). Cheap: made before the algorithm runs."""
    try:
        glfw = _import_glfw()
        _init_glfw(glfw)
    except NoDisplayError as exc:
        return str(exc)
    glfw.terminate()
    return _imgui_problem()


class Steps:
    """What the window shows: the pass ``i`` and the fragment explained in it, moved by the
    keys (:meth:`key`) and by the play clock (:meth:`tick`). Never leaves the passes: Right or
    playing on the last pass stays there (playing stops), Left on the first stays there.
    ``fragment`` (x, y) is explained first in every pass that shades it, as ``--fragment`` is
    in the PNG frames; elsewhere the pass's own choice (:meth:`Frame.chosen_fragment`)."""

    ACTIONS = ("next", "previous", "first", "last", "play", "next fragment", "previous fragment")

    def __init__(self, frames, play_seconds: float = 0.6, fragment=None):
        if not frames:
            raise ValueError("nothing to show: the algorithm drew no passes")
        self.frames = list(frames)
        self.play_seconds = float(play_seconds)
        self.start_fragment = fragment
        self.i = 0               # the pass shown (index into frames)
        self.frag = 0            # offset from the pass's first fragment, among its shaded ones
        self.playing = False
        self.due = 0.0           # when playing: the time of the next step

    @property
    def frame(self):
        return self.frames[self.i]

    def fragment(self):
        """The fragment explained now: (x, y), or None when the pass shaded nothing recordable."""
        f = self.frame
        frags = _fragments(f)
        if not frags:
            return None
        first = self.start_fragment if self.start_fragment and f.shades(*self.start_fragment) else f.chosen_fragment()
        return frags[(frags.index(first) + self.frag) % len(frags)]

    def _go(self, i: int) -> bool:
        i = min(max(i, 0), len(self.frames) - 1)
        if i == self.i:
            return False
        self.i, self.frag = i, 0
        return True

    def key(self, action: str, now: float = 0.0) -> bool:
        """Apply one of :attr:`ACTIONS`; returns whether what is shown changed."""
        if action == "next":
            return self._go(self.i + 1)
        if action == "previous":
            return self._go(self.i - 1)
        if action == "first":
            return self._go(0)
        if action == "last":
            return self._go(len(self.frames) - 1)
        if action == "play":
            self.playing = not self.playing and self.i < len(self.frames) - 1
            self.due = now + self.play_seconds
            return False
        if action in ("next fragment", "previous fragment"):
            self.frag += 1 if action == "next fragment" else -1
            return True          # drawn again, also where the pass has one fragment: a step per key
        raise ValueError(f"unknown action {action!r}; valid: {', '.join(self.ACTIONS)}")

    def tick(self, now: float) -> bool:
        """Playing: the next pass once its time has come (stops on the last); returns whether
        what is shown changed."""
        if not self.playing or now < self.due:
            return False
        self.due = now + self.play_seconds
        changed = self._go(self.i + 1)
        if self.i == len(self.frames) - 1:
            self.playing = False
        return changed


INSTALL_EXTRA = "pip install 'gpgpu[window]'"

# The keys, as the help overlay (H or F1) lists them.
HELP = (("Right / N", "next pass"), ("Left / P", "previous pass"), ("Home / End", "first / last pass"),
        ("Space", "play / pause"), ("F / C", "next / previous fragment of the pass"),
        ("T", "text layer on / off"), ("H / F1", "this help on / off"), ("Q / Esc", "close"))

_NAMED = {"orange": (1.0, 0.647, 0.0), "lime": (0.0, 1.0, 0.0), "green": (0.0, 0.5, 0.0),
          "darkgreen": (0.0, 0.39, 0.0), "black": (0.0, 0.0, 0.0), "k": (0.0, 0.0, 0.0),
          "white": (1.0, 1.0, 1.0), "red": (1.0, 0.0, 0.0), "blue": (0.0, 0.0, 1.0), "grey": (0.5, 0.5, 0.5),
          "gray": (0.5, 0.5, 0.5)}

LABEL_LIMIT = 16      # cells labelled with their values up to this many rows and columns, as in the PNGs
CAPTION_PX, STRIP_PX, TITLE_PX = 14.0, 13.0, 13.0   # text sizes, pixels (the font's advance is half of it)
LEGEND_PX = 11.0                                    # the legend's text: its entries wrapped, whole, under it
_BAR_RGB = (0.16, 0.18, 0.23)                       # the caption bar's background


def captions(frames, heading: str = "") -> list:
    """Each frame's caption, as the PNG frames have it: pass k of n, kernel, file, the paper's
    reference, primitive and fragments, with the explanations of :func:`gpgpu.show.describe`."""
    from .frames import describe

    return list(describe(frames, heading))


def legend() -> tuple:
    """(colour, short name, meaning) of each colour a frame uses (:data:`gpgpu.show.LEGEND`)."""
    from .frames import LEGEND

    return tuple(LEGEND)


def _rgb(colour) -> tuple:
    """A matplotlib colour (name, '#rrggbb' or a tuple) as (r, g, b) floats."""
    if isinstance(colour, (tuple, list)):
        return tuple(float(c) for c in colour[:3])
    if isinstance(colour, str) and colour.startswith("#") and len(colour) == 7:
        return tuple(int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    if colour in _NAMED:
        return _NAMED[colour]
    try:
        from matplotlib.colors import to_rgb

        return tuple(to_rgb(colour))
    except Exception:                   # no matplotlib, or a colour it does not know either
        return (0.5, 0.5, 0.5)


def _one_line(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters (a legend entry a line): whole when it fits, else
    cut, "..." marking the cut (below 4 characters the first ``width`` alone, no room for it)."""
    width = max(int(width), 0)
    if len(text) <= width:
        return text
    if width < 4:
        return text[:width]
    return text[:width - 3].rstrip() + "..."


def _legend_lines(width: float, height: float) -> list:
    """The legend as lines of (swatch colour or None, text) in ``width`` x ``height`` pixels at
    :data:`LEGEND_PX`: each entry whole, wrapped onto lines of its own (no swatch) where it is
    longer than a line. Only where the wrapped legend is taller than ``height`` (a small window)
    is an entry cut to one line, "..." marking the cut, and the entries past the room left out."""
    chars = int(width / (LEGEND_PX / 2))
    lines = []
    for colour, name, meaning in legend():
        pieces = _wrap(f"{name}: {meaning}", chars)
        lines += [(_rgb(colour), pieces[0])] + [(None, p) for p in pieces[1:]]
    most = max(1, int(height / (LEGEND_PX + 3)))
    if len(lines) <= most:
        return lines
    return [(_rgb(colour), _one_line(f"{name}: {meaning}", chars)) for colour, name, meaning in legend()][:most]


def _cell_rgb(value: float, lim: float) -> tuple:
    """The colour _GRID_FS gives a cell of ``value`` (``lim`` the full colour's |value|)."""
    if not abs(value) < SENTINEL:
        return (0.847, 0.749, 0.847)
    v = max(-1.0, min(1.0, value / lim))
    end = (0.23, 0.30, 0.75) if v < 0 else (0.71, 0.02, 0.15)
    return tuple(0.93 + (e - 0.93) * abs(v) for e in end)


def _arrow(box_a, a, box_b, b) -> list:
    """The fetch arrow from cell ``a`` (x, y) of the grid at ``box_a`` (x0, y0, cell: pixels)
    to cell ``b`` of the grid at ``box_b``: from the first cell's edge to the second's, so that
    it crosses neither value, and a head at its end; line segments' ends, pixels."""
    (ax0, ay0, ac), (bx0, by0, bc) = box_a, box_b
    p = np.array([ax0 + (a[0] + .5) * ac, ay0 + (a[1] + .5) * ac])
    q = np.array([bx0 + (b[0] + .5) * bc, by0 + (b[1] + .5) * bc])
    d = q - p
    length = float(np.hypot(*d))
    if length == 0:
        return []
    u = d / length
    edge = max(abs(u[0]), abs(u[1]))
    p, q = p + u * (ac / 2 / edge), q - u * (bc / 2 / edge)
    head = min(8.0, 0.3 * bc)
    n = np.array([-u[1], u[0]])
    return [tuple(p), tuple(q), tuple(q), tuple(q - head * u + 0.5 * head * n), tuple(q),
            tuple(q - head * u - 0.5 * head * n)]


def _xy(t) -> str:
    """(x, y) or (x, y, z) as the PNG frames write it: (1, 0.5); a z of 0 left out."""
    c = [f"{float(u):g}" for u in t]
    return "(" + ", ".join(c[:2] if len(c) == 3 and c[2] == "0" else c) + ")"


def _u32(rgb, alpha: float = 1.0) -> int:
    r, g, b = (min(255, max(0, round(255 * c))) for c in rgb)
    return (round(255 * alpha) << 24) | (b << 16) | (g << 8) | r


def _wrap(line: str, chars: int) -> list:
    """``line`` cut into pieces of at most ``chars`` characters, at spaces where there are any."""
    import textwrap

    return textwrap.wrap(line, max(chars, 8), subsequent_indent="  ", break_on_hyphens=False) or [""]


def _imgui_problem() -> str | None:
    """None when Dear ImGui (imgui-bundle, the window extra) imports; else what to install."""
    try:
        import imgui_bundle  # noqa: F401
    except Exception as exc:            # ImportError, or a native library it cannot load
        return (f"--window draws its text with Dear ImGui, and the imgui-bundle package is not usable "
                f"({exc}): {INSTALL_EXTRA}; or {USE_OUT}")
    return None


class TextLayer:
    """Words over a frame: Dear ImGui draw lists (imgui-bundle), rendered by ImGui's OpenGL 3
    backend into the framebuffer bound in the OpenGL context current when it was made (the
    window's, or the headless one of :func:`render_offscreen`). Between :meth:`begin` and
    :meth:`end`, :meth:`text` and :meth:`box` add to the frame; :attr:`drawn` is every string
    written since :meth:`begin`. The font is Inconsolata (imgui-bundle ships it), monospaced:
    a character is half as wide as the text is high, so the layout needs no measuring."""

    def __init__(self):
        problem = _imgui_problem()
        if problem:
            raise NoDisplayError(problem)
        import imgui_bundle
        from imgui_bundle import imgui

        self.imgui = imgui
        self.context = imgui.create_context()
        imgui.set_current_context(self.context)
        io = imgui.get_io()
        io.set_ini_filename(None)              # no imgui.ini written into the current folder
        path = os.path.join(os.path.dirname(imgui_bundle.__file__), "assets", "fonts", "Inconsolata-Medium.ttf")
        self.font = io.fonts.add_font_from_file_ttf(path, CAPTION_PX) if os.path.exists(path) else None
        if not imgui.backends.opengl3_init("#version 330"):
            imgui.destroy_context(self.context)
            raise NoDisplayError("Dear ImGui's OpenGL 3 backend could not start on this OpenGL context; " + USE_OUT)
        self.drawn = []
        self._list = None

    def begin(self, size) -> None:
        imgui = self.imgui
        imgui.set_current_context(self.context)
        io = imgui.get_io()
        io.display_size = (float(size[0]), float(size[1]))
        io.delta_time = 1.0 / 60.0
        imgui.backends.opengl3_new_frame()
        imgui.new_frame()
        self._list = imgui.get_foreground_draw_list()
        self.drawn = []

    def text(self, x: float, y: float, s: str, rgb=(0.0, 0.0, 0.0), px: float = STRIP_PX) -> None:
        self._list.add_text(self.font or self.imgui.get_font(), px, (float(x), float(y)), _u32(rgb), s)
        self.drawn.append(s)

    def box(self, x0, y0, x1, y1, rgb, alpha: float = 1.0, edge=None) -> None:
        self._list.add_rect_filled((float(x0), float(y0)), (float(x1), float(y1)), _u32(rgb, alpha))
        if edge is not None:
            self._list.add_rect((float(x0), float(y0)), (float(x1), float(y1)), _u32(edge))

    def end(self) -> None:
        imgui = self.imgui
        imgui.render()
        imgui.backends.opengl3_render_draw_data(imgui.get_draw_data())
        self._list = None

    def release(self) -> None:
        self.imgui.set_current_context(self.context)
        self.imgui.backends.opengl3_shutdown()
        self.imgui.destroy_context(self.context)


def _vertex_lines(frame) -> list:
    pts = frame.vertices
    head = f"primitive: {frame.primitive}, {len(pts)} vertices" + (":" if 0 < len(pts) <= 6 else "")
    if len(pts) > 6:
        return [head + " (not listed)"]
    return [head] + [f"{i + 1}. V{_xy(v.V)}  T0{_xy(v.T0)}  T1{_xy(v.T1)}" for i, v in enumerate(pts)]


def _fragment_lines(frame, fragment, fetches) -> list:
    if not fragment:
        return ["no fragment: the pass shaded none that was recorded"]
    x, y = fragment
    if not frame.shades(x, y):
        return [f"fragment ({x}, {y}): not shaded by this pass"]
    lines = [f"fragment ({x}, {y}): WPOS{_xy((x + .5, y + .5))}",
             f"T0 = {_xy(frame.T0[y, x])}", f"T1 = {_xy(frame.T1[y, x])}"]
    lines += [f"{k + 1}. {call} -> {sampler}({tx}, {ty})" for k, (sampler, (tx, ty), call) in enumerate(fetches)]
    n = int(frame.fetch_count[y, x])
    if n > len(fetches):
        lines.append(f"... {n} fetches in all, the first {len(fetches)} shown")
    return lines


class _Layout(NamedTuple):
    """Where the words go (:meth:`FrameRenderer.layout`): the caption's lines and its bar's
    height, the strip's columns [(x, lines)], the legend's lines and the strip's top."""
    bar: list
    bar_h: float
    strip: list
    legend_lines: list
    strip_top: float


class _Grids(NamedTuple):
    """The frame's drawn grids, by panel name (None: the target): ``boxes`` (x0, y0, cell size)
    and ``shown`` (the values drawn, the |value| of full colour)."""
    boxes: dict
    shown: dict


class FrameRenderer:
    """Draws one recorded frame into the framebuffer bound in ``ctx`` (see module docstring)."""

    def __init__(self, ctx: moderngl.Context):
        self.ctx = ctx
        self.grid = ctx.program(vertex_shader=_GRID_VS, fragment_shader=_GRID_FS)
        self.lines = ctx.program(vertex_shader=_LINE_VS, fragment_shader=_LINE_FS)
        self.quad = ctx.buffer(reserve=4 * 4 * 4)
        self.grid_vao = ctx.vertex_array(self.grid, [(self.quad, "2f 2f", "in_pos", "in_texel")])
        self.line_buf = ctx.buffer(reserve=1 << 16)
        self.line_vao = ctx.vertex_array(self.lines, [(self.line_buf, "2f", "in_pos")])
        self._textures = []

    def release(self) -> None:
        for o in (self.grid_vao, self.line_vao, self.quad, self.line_buf, self.grid, self.lines, *self._textures):
            o.release()
        self._textures = []

    def _texture(self, a: np.ndarray):
        a = np.ascontiguousarray(a, dtype=np.float32)
        t = self.ctx.texture((a.shape[1], a.shape[0]), 1, a.tobytes(), dtype="f4")
        t.filter = (moderngl.NEAREST, moderngl.NEAREST)
        self._textures.append(t)
        return t

    @staticmethod
    def layout(frame, fragment, size, caption: str = ""):
        """Where things go: a :class:`_Layout` (caption lines, caption bar height, strip columns
        [(x, lines)], legend lines, strip top). The same with or without the text layer, so that
        the grids do not move."""
        W, H = size
        bar = [piece for line in caption.splitlines() for piece in _wrap(line, int((W - 16) / (CAPTION_PX / 2)))]
        most = max(1, int(0.3 * H / (CAPTION_PX + 3)))         # the bar takes at most 30 % of the height
        bar = bar if len(bar) <= most else bar[:most - 1] + [bar[most - 1][:-4] + " ..."]
        bar_h = len(bar) * (CAPTION_PX + 3) + 8 if bar else 0
        _, fetches = fetched_panels(frame, fragment)
        xs = (0.0, 0.25 * W, 0.54 * W, W)                   # vertices, fragment, legend: 25, 29, 46 %
        chars = [int((b - a - 16) / (STRIP_PX / 2)) for a, b in zip(xs, xs[1:])]
        cols = [_vertex_lines(frame) + [AXES], _fragment_lines(frame, fragment, fetches), ["legend (H: the keys)"]]
        cols = [[piece for line in c for piece in _wrap(line, n)] for c, n in zip(cols, chars)]
        line_h, room = STRIP_PX + 3, 0.42 * H                  # the strip takes at most 42 % of the height
        most = max(2, int(room / line_h) - 1)
        cols = [c[:most] for c in cols]
        legend_lines = _legend_lines(W - xs[2] - 16 - 1.5 * STRIP_PX, room - line_h)
        high = max(len(cols[0]) * line_h, len(cols[1]) * line_h, line_h + len(legend_lines) * (LEGEND_PX + 3))
        strip_top = H - high - 6
        return _Layout(bar, bar_h, [(x + 8, c) for x, c in zip(xs, cols)], legend_lines, strip_top)

    def draw(self, frame, fragment, size, text: TextLayer | None = None, caption: str = "",
             help: bool = False) -> None:
        """Draw ``frame`` with ``fragment`` (x, y) explained (None: no fragment) into a viewport of
        ``size`` = (width, height) pixels of the bound framebuffer; with ``text``, the words too:
        ``caption`` in the bar on top, and with ``help`` the keys' overlay."""
        W, H = size
        ctx = self.ctx
        ctx.viewport = (0, 0, W, H)
        ctx.clear(1.0, 1.0, 1.0, 1.0)
        ctx.disable(moderngl.DEPTH_TEST | moderngl.BLEND | moderngl.CULL_FACE)
        names, fetches = fetched_panels(frame, fragment)
        lay = self.layout(frame, fragment, size, caption)
        top = lay.bar_h + TITLE_PX + 8
        gh = lay.strip_top - top - 4
        panels = [(frame.inputs[n], n) for n in names] + [(frame.values, None)]
        pw = W / len(panels)
        boxes, shown = {}, {}
        for i, (values, name) in enumerate(panels):
            v = values if values.ndim == 2 else values[..., 0]
            rows, cols = v.shape
            cell = max(1.0, min((pw - 40) / (cols + 1.5), gh / (rows + 1.5)))   # room for oversized primitives
            x0 = i * pw + (pw - cols * cell) / 2
            y0 = top + 0.75 * cell
            boxes[name] = (x0, y0, cell)
            marks = np.zeros((rows, cols), np.float32)
            if name is None:
                if frame.covered is not None:
                    marks[frame.covered] = 1.0
                if fragment:
                    marks[fragment[1], fragment[0]] = 2.0
            else:
                for sampler, (tx, ty), _ in fetches:
                    if frame.input_ids[sampler] == frame.input_ids[name]:
                        marks[ty, tx] = 2.0
            marks[np.abs(v) >= SENTINEL] += 4.0
            finite = np.abs(v[np.abs(v) < SENTINEL])
            lim = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
            shown[name] = (v, lim)
            tv, tm = self._texture(np.clip(v, -lim, lim)), self._texture(marks)
            tv.use(0)
            tm.use(1)
            self.grid["values"].value, self.grid["marks"].value = 0, 1
            self.grid["lim"].value = lim
            self.grid["line"].value = 1.0 / cell
            corners = [(0, 0), (0, rows), (cols, 0), (cols, rows)]
            data = []
            for u, w in corners:
                data += [*self._ndc(x0 + u * cell, y0 + w * cell, W, H), u, w]
            self.quad.write(struct.pack("16f", *data))
            self.grid_vao.render(moderngl.TRIANGLE_STRIP)
        for t in self._textures:
            t.release()
        self._textures = []

        def at(box, u, w):
            bx, by, c = box
            return self._ndc(bx + u * c, by + w * c, W, H)

        pts = [v.V for v in frame.vertices]
        segs = []
        if frame.primitive == "triangle":
            for t in range(0, len(pts), 3):
                tri = pts[t:t + 3]
                segs += [p for a, b in zip(tri, tri[1:] + tri[:1]) for p in (a, b)]
        elif frame.primitive in ("rect", "texel"):
            segs += [p for a, b in zip(pts, pts[1:] + pts[:1]) for p in (a, b)]
        elif frame.primitive == "line":
            segs += pts
        self._draw(moderngl.LINES, [at(boxes[None], *p) for p in segs], (0.0, 0.0, 0.0))
        self._draw(moderngl.POINTS, [at(boxes[None], *p) for p in pts], (0.0, 0.0, 0.0), point=5.0)
        arrows = []
        if fragment:
            fx, fy = fragment
            for sampler, (tx, ty), _ in fetches:
                box = boxes[self._panel_of(frame, names, sampler)]
                arrows += [self._ndc(*p, W, H) for p in _arrow(boxes[None], (fx, fy), box, (tx, ty))]
            self._draw(moderngl.LINES, arrows, (0.0, 0.45, 0.0))
        if text is None:
            return
        text.begin(size)
        self._words(text, frame, fragment, size, names, fetches, _Grids(boxes, shown), lay)
        if help:
            self._help(text, size)
        text.end()

    @staticmethod
    def _panel_of(frame, names, sampler):
        return next(n for n in names if frame.input_ids[n] == frame.input_ids[sampler])

    def _words(self, text, frame, fragment, size, names, fetches, grids: _Grids, lay: _Layout) -> None:
        W, H = size
        boxes, shown = grids.boxes, grids.shown
        bar, bar_h, strip, legend_lines, strip_top = lay
        if bar:                                             # the caption bar
            text.box(0, 0, W, bar_h, _BAR_RGB)
            for k, line in enumerate(bar):
                text.text(8, 4 + k * (CAPTION_PX + 3), line, (1.0, 1.0, 1.0), CAPTION_PX)
        for name, (x0, y0, cell) in boxes.items():          # titles, indices, values
            v, lim = shown[name]
            rows, cols = v.shape
            if name is None:
                title = "target (written), after the pass"
                rgba = frame.values.ndim == 3
            else:
                title = "input " + " = ".join(s for s, i in frame.input_ids.items()
                                              if i == frame.input_ids[name]) + " (read)"
                rgba = frame.inputs[name].ndim == 3
            title += " -- RGBA, .r shown" if rgba else ""
            text.text(max(4.0, x0 + cols * cell / 2 - len(title) * TITLE_PX / 4), bar_h + 4, title, (0.1, 0.1, 0.1),
                      TITLE_PX)
            idx_px = min(11.0, 0.5 * cell)
            if idx_px >= 7 and max(rows, cols) <= LABEL_LIMIT:
                for c in range(cols):
                    s = str(c)
                    text.text(x0 + (c + .5) * cell - len(s) * idx_px / 4, y0 - idx_px - 2, s, (0.45, 0.45, 0.45), idx_px)
                for r in range(rows):
                    s = str(r)
                    text.text(x0 - len(s) * idx_px / 2 - 4, y0 + (r + .5) * cell - idx_px / 2, s, (0.45, 0.45, 0.45),
                              idx_px)
                # the axes named: x counts columns (along the top), y rows (down the left)
                text.text(x0 + cols * cell + 3, y0 - idx_px - 2, "col", (0.3, 0.3, 0.3), idx_px)
                text.text(x0 - 1.5 * idx_px - 4, y0 + rows * cell + 2, "row", (0.3, 0.3, 0.3), idx_px)
            if max(rows, cols) > LABEL_LIMIT:
                continue
            labels = [[f"{float(v[r, c]):.3g}" for c in range(cols)] for r in range(rows)]
            longest = max(len(s) for row in labels for s in row)
            px = min(12.0, 0.4 * cell, 2 * 0.94 * cell / longest)
            if px < 6.5:
                continue
            inset = 3.5                      # pixels of the cell's edge (its marks) that a value's halo leaves
            for r in range(rows):
                for c in range(cols):
                    s = labels[r][c]
                    t = min(1.0, abs(float(v[r, c])) / lim) if abs(float(v[r, c])) < SENTINEL else 0.0
                    rgb = (1.0, 1.0, 1.0) if t > 0.6 else (0.05, 0.05, 0.05)
                    x, y = x0 + (c + .5) * cell - len(s) * px / 4, y0 + (r + .5) * cell - px / 2
                    # a halo of the cell's colour under the value: no line drawn over the cell crosses it
                    cx, cy = x0 + c * cell, y0 + r * cell
                    hx, hy = max(x - 1, cx + inset), max(y, cy + inset)
                    hx1, hy1 = min(x + len(s) * px / 2 + 1, cx + cell - inset), min(y + px + 1, cy + cell - inset)
                    if hx1 > hx and hy1 > hy:
                        text.box(hx, hy, hx1, hy1, _cell_rgb(float(v[r, c]), lim))
                    text.text(x, y, s, rgb, px)
        tx0, ty0, tc = boxes[None]                          # the vertices' numbers, beside their points
        pts = [v.V for v in frame.vertices]
        if 0 < len(pts) <= 6:
            cx, cy = np.mean([p[0] for p in pts]), np.mean([p[1] for p in pts])
            for k, (px_, py_) in enumerate(pts):
                dx, dy = px_ - cx, py_ - cy
                norm = max(1e-9, (dx * dx + dy * dy) ** 0.5)
                x = tx0 + px_ * tc + 12 * dx / norm - 5
                y = ty0 + py_ * tc + 12 * dy / norm - 8
                text.box(x - 2, y, x + 12, y + 15, (1.0, 1.0, 1.0), 0.9, edge=(0.3, 0.3, 0.3))
                text.text(x + 1, y + 1, str(k + 1), (0.0, 0.0, 0.0), 13.0)
        for k, (sampler, (fx, fy), _) in enumerate(fetches):   # the fetched texels' numbers
            bx, by, c = boxes[self._panel_of(frame, names, sampler)]
            px = min(10.0, 0.28 * c)
            if px >= 6:                                         # a badge in the cell's corner, above its value
                s = str(k + 1)
                x, y = bx + (fx + 1) * c - len(s) * px / 2 - 5, by + fy * c + 4
                text.box(x - 1, y, x + len(s) * px / 2 + 1, y + px, (0.0, 0.39, 0.0))
                text.text(x, y - 0.1 * px, s, (1.0, 1.0, 1.0), px)
        text.box(0, strip_top - 2, W, H, (0.96, 0.96, 0.96))    # the strip: vertices, fragment, legend
        line_h = STRIP_PX + 3
        for x, lines in strip[:2]:
            for k, line in enumerate(lines):
                text.text(x, strip_top + k * line_h, line, (0.05, 0.05, 0.05), STRIP_PX)
        x, (head,) = strip[2][0], strip[2][1][:1]
        text.text(x, strip_top, head, (0.05, 0.05, 0.05), STRIP_PX)
        for k, (rgb, line) in enumerate(legend_lines):
            y = strip_top + line_h + k * (LEGEND_PX + 3)
            if rgb is not None:
                text.box(x, y + 2, x + 11, y + 2 + LEGEND_PX, rgb, edge=(0.3, 0.3, 0.3))
            text.text(x + 3 * STRIP_PX / 2, y, line, (0.05, 0.05, 0.05), LEGEND_PX)

    @staticmethod
    def _help(text, size) -> None:
        W, H = size
        lines = ["keys"] + [f"{keys:<12s}{what}" for keys, what in HELP]
        w = max(len(s) for s in lines) * STRIP_PX / 2 + 32
        h = len(lines) * (STRIP_PX + 5) + 20
        x, y = (W - w) / 2, (H - h) / 2
        text.box(x, y, x + w, y + h, (0.1, 0.1, 0.12), edge=(0.8, 0.8, 0.8))
        for k, line in enumerate(lines):
            text.text(x + 16, y + 10 + k * (STRIP_PX + 5), line, (1.0, 0.85, 0.3) if k == 0 else (1.0, 1.0, 1.0),
                      STRIP_PX)

    def _draw(self, mode, points, rgb, point=1.0) -> None:
        if not points:
            return
        self.ctx.point_size = point
        self.lines["rgb"].value = rgb
        self.line_buf.orphan(max(len(points) * 8, 8))
        self.line_buf.write(np.asarray(points, np.float32).tobytes())
        self.line_vao.render(mode, vertices=len(points))

    @staticmethod
    def _ndc(x, y, W, H):
        return 2.0 * x / W - 1.0, 1.0 - 2.0 * y / H


def render_offscreen(frame, fragment, size=DEFAULT_SIZE, ctx=None, caption: str | None = None,
                     help: bool = False) -> np.ndarray:
    """The frame as the window draws it, rendered headless: an (H, W, 3) uint8 array, top row
    first. With ``caption`` (a string, "" for none), the text layer too (needs imgui-bundle);
    None (default): the pictures alone, laid out as with a caption-less text layer."""
    from ..context import get_context, park

    ctx = ctx or get_context()
    W, H = size
    tex = ctx.texture((W, H), 4)
    fbo = r = text = None
    try:
        fbo = ctx.framebuffer(color_attachments=[tex])
        r = FrameRenderer(ctx)
        fbo.use()
        if caption is not None:
            text = TextLayer()
        r.draw(frame, fragment, size, text, caption or "", help)
        img = np.frombuffer(fbo.read(components=3, alignment=1), np.uint8).reshape(H, W, 3)[::-1].copy()
    finally:
        if text is not None:
            text.release()
        if r is not None:
            r.release()
        park(ctx)
        if fbo is not None:
            fbo.release()
        tex.release()
    return img


def _fragments(frame) -> list:
    if frame.covered is None:
        return []
    ys, xs = np.nonzero(frame.covered)
    return [(int(x), int(y)) for y, x in sorted(zip(ys, xs))]


def describe(frame, fragment, total) -> str:
    """What the window's title and the terminal show for a step."""
    from .frames import caption

    lines = [caption(frame, total).replace("\n", "; ")]
    if fragment:
        x, y = fragment
        lines.append(f"  fragment (col, row) = ({x}, {y}): T0 = {tuple(round(float(c), 4) for c in frame.T0[y, x])}, "
                     f"T1 = {tuple(round(float(c), 4) for c in frame.T1[y, x])}")
        for sampler, (tx, ty), call in frame.fetches_at(x, y):
            lines.append(f"    {call} -> {sampler}(col {tx}, row {ty})")
    return "\n".join(lines)


class Window:
    """The GLFW window, its OpenGL 3.3 context, the renderer and the text layer: what
    :func:`run_window` steps through, and what the tests drive directly. :meth:`press` applies a
    key (a GLFW key code) as the window's key callback does; :meth:`draw` draws the step shown
    into the back buffer and notes the text layer's strings in :attr:`drawn_text`;
    :meth:`screenshot` reads that back buffer; :meth:`swap` shows it. ``show_text`` (T) and
    ``show_help`` (H or F1) switch the text layer and the keys' overlay. Without a display or
    without imgui-bundle: :class:`NoDisplayError`, saying what to do.

    Release the thread's headless context first (:func:`gpgpu.context.release_context`, once the
    frames are recorded), as ``python -m gpgpu.show`` does: on X, the window's context cannot be
    made current while an EGL one is (GLX BadAccess)."""

    def __init__(self, frames, size=DEFAULT_SIZE, heading: str = "", play_seconds: float = 0.6, fragment=None):
        self.steps = Steps(frames, play_seconds, fragment)
        self.heading = heading
        self.captions = captions(self.steps.frames, heading)
        self.show_text, self.show_help = True, False
        self.drawn_text = []
        glfw = self.glfw = _import_glfw()
        problem = _imgui_problem()
        if problem:
            raise NoDisplayError(problem)
        errors = _init_glfw(glfw)
        try:
            glfw.window_hint(glfw.CONTEXT_VERSION_MAJOR, 3)
            glfw.window_hint(glfw.CONTEXT_VERSION_MINOR, 3)
            glfw.window_hint(glfw.OPENGL_PROFILE, glfw.OPENGL_CORE_PROFILE)
            glfw.window_hint(glfw.OPENGL_FORWARD_COMPAT, glfw.TRUE)
            glfw.window_hint(glfw.RESIZABLE, glfw.FALSE)
            win = glfw.create_window(size[0], size[1], "gpgpu.show", None, None)
        except Exception as exc:            # GLFWError raised by the package's error reporting
            errors.append(str(exc))
            win = None
        if not win:
            glfw.terminate()
            raise _no_display("GLFW could not open an OpenGL 3.3 window" + (f" ({errors[-1]})" if errors else ""))
        self.win = win
        self.renderer = self.text = None
        try:
            glfw.make_context_current(win)
            self.ctx = moderngl.create_context(require=330)
            self.renderer = FrameRenderer(self.ctx)
            self.text = TextLayer()
        except BaseException:
            self.close()
            raise
        self.actions = {glfw.KEY_RIGHT: "next", glfw.KEY_N: "next", glfw.KEY_LEFT: "previous",
                        glfw.KEY_P: "previous", glfw.KEY_HOME: "first", glfw.KEY_END: "last",
                        glfw.KEY_SPACE: "play", glfw.KEY_F: "next fragment", glfw.KEY_C: "previous fragment"}

    @property
    def size(self) -> tuple:
        return tuple(self.glfw.get_framebuffer_size(self.win))

    def press(self, key: int, now: float | None = None) -> bool:
        """Apply a key press (GLFW key code); returns whether the window must be drawn again."""
        glfw = self.glfw
        if key in (glfw.KEY_Q, glfw.KEY_ESCAPE):
            glfw.set_window_should_close(self.win, True)
            return False
        if key in (glfw.KEY_H, glfw.KEY_F1):
            self.show_help = not self.show_help
            return True
        if key == glfw.KEY_T:
            self.show_text = not self.show_text
            return True
        if key in self.actions:
            return self.steps.key(self.actions[key], time.monotonic() if now is None else now)
        return False

    def draw(self) -> tuple:
        """Draw the step shown into the back buffer; returns it, (pass index, fragment)."""
        f, frag = self.steps.frame, self.steps.fragment()
        self.glfw.make_context_current(self.win)
        self.ctx.screen.use()
        self.renderer.draw(f, frag, self.size, self.text if self.show_text else None,
                           self.captions[self.steps.i], self.show_help)
        self.drawn_text = list(self.text.drawn) if self.show_text else []
        return f.index, frag

    def screenshot(self) -> np.ndarray:
        """The back buffer (what :meth:`draw` drew, before :meth:`swap`): (H, W, 3) uint8, top row first."""
        W, H = self.size
        self.glfw.make_context_current(self.win)
        raw = self.ctx.screen.read(viewport=(0, 0, W, H), components=3, alignment=1)
        return np.frombuffer(raw, np.uint8).reshape(H, W, 3)[::-1].copy()

    def save_screenshot(self, path) -> None:
        from pathlib import Path

        from PIL import Image

        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(self.screenshot()).save(path)

    def swap(self) -> None:
        self.glfw.swap_buffers(self.win)

    def close(self) -> None:
        for part in (self.text, self.renderer):
            if part is not None:
                part.release()
        self.text = self.renderer = None
        if self.win is not None:
            self.glfw.destroy_window(self.win)
            self.glfw.terminate()
            self.win = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def run_window(frames, size=DEFAULT_SIZE, heading: str = "", screenshots: str | None = None,
               play_seconds: float = 0.6, fragment=None) -> list:
    """Open the window and step through ``frames`` until it is closed. Returns the steps shown,
    [(pass index, fragment), ...]. ``fragment`` (x, y) is explained first in each pass that
    shades it (see :class:`Steps`). With ``screenshots`` (a folder), each shown step is also
    saved from the window's framebuffer as shot_NNNN.png (what the tests compare); the
    screenshots an earlier run left there (files named shot_NNNN.png, nothing else) are
    deleted first, so the folder holds this run's alone. Without a display or without
    imgui-bundle: :class:`NoDisplayError` (its message says to use --out DIR, or what to install)."""
    window = Window(frames, size, heading, play_seconds, fragment)
    glfw = window.glfw
    if screenshots:
        _clear_screenshots(screenshots)
    keys = []
    shown = []

    def on_key(win, key, scancode, action, mods):
        if action in (glfw.PRESS, glfw.REPEAT):
            keys.append(key)   # one key a step: each is drawn before the next is applied

    glfw.set_key_callback(window.win, on_key)
    dirty = True
    try:
        while not glfw.window_should_close(window.win):
            if keys:
                dirty |= window.press(keys.pop(0))
            dirty |= window.steps.tick(time.monotonic())
            if dirty:
                dirty = False
                shown.append(window.draw())
                if screenshots:              # the back buffer, just drawn, is what the swap shows
                    window.save_screenshot(Path(screenshots) / f"shot_{len(shown):04d}.png")
                window.swap()
                f, frag = window.steps.frame, window.steps.fragment()
                text = describe(f, frag, len(frames))
                glfw.set_window_title(window.win, "gpgpu.show: " + (heading + " | " if heading else "")
                                      + text.split("\n")[0][:200])
                print(text, flush=True)
            if keys:
                glfw.poll_events()
            else:
                glfw.wait_events_timeout(0.05)
    finally:
        window.close()
    return shown


def _clear_screenshots(folder) -> None:
    """Delete the screenshots (shot_NNNN.png) an earlier run left in ``folder``."""
    import re

    folder = Path(folder)
    if folder.is_dir():
        for p in folder.iterdir():
            if re.fullmatch(SHOT_PATTERN, p.name) and p.is_file():
                p.unlink()
