"""The recorded passes drawn by OpenGL itself, in a GLFW window (``python -m gpgpu.show ... --window``).

The same frames as the PNGs, without the text: each texture a textured quad whose fragment
program colours every texel by value (blue negative, red positive) and draws the cell grid,
the shaded fragments outlined in orange, the chosen fragment and the texels it fetched in
green; the primitive's outline, its vertices and the fetch arrows as lines and points. The
caption (pass, kernel, paper) is the window's title and is printed, with the chosen
fragment's T0, T1 and fetches, at every step.

Keys: Right / Left (or N / P) the next / previous pass, Home / End the first / last, Space
plays and pauses (playing stops on the last pass; Right there stays on it), F the next fragment
of the pass (C the previous), Q or Escape closes. :class:`Steps` holds what the keys move.

Without a display (neither DISPLAY nor WAYLAND_DISPLAY set, no glfw package, or GLFW unable to
open the display or an OpenGL 3.3 window, whatever its platform) the window is refused with
:class:`NoDisplayError`, whose message says to use ``--out DIR`` (PNG files need no display);
:func:`display_problem` is that check, made before any work.

:class:`FrameRenderer` draws into whatever framebuffer is bound, so the window and a headless
framebuffer (:func:`render_offscreen`) draw the same pixels: the tests compare the window's
screenshot under Xvfb with the headless frame of the same pass.
"""
from __future__ import annotations

import os
import struct
import time

import moderngl
import numpy as np

from . import fetched_panels

__all__ = ["FrameRenderer", "render_offscreen", "run_window", "Steps", "NoDisplayError", "display_problem",
           "DEFAULT_SIZE", "SHOT_PATTERN"]

DEFAULT_SIZE = (1100, 560)
SHOT_PATTERN = r"shot_\d{4,}\.png"   # the screenshots' names (shot_0001.png, ...)
USE_OUT = "use --out DIR to write the frames as PNG files, which needs none"

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
uniform sampler2D marks;    // R32F: 0 nothing, 1 shaded by the pass, 2 chosen fragment or fetched texel
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
    """No display to open a window on (the message says to use --out DIR instead)."""


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
    """None when a window can be opened (a display is set and GLFW initialises on it); else the
    sentence saying why not and to use --out DIR. Cheap: made before the algorithm runs."""
    try:
        glfw = _import_glfw()
        _init_glfw(glfw)
    except NoDisplayError as exc:
        return str(exc)
    glfw.terminate()
    return None


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

    def draw(self, frame, fragment, size) -> None:
        """Draw ``frame`` with ``fragment`` (x, y) explained (None: no fragment) into a viewport of
        ``size`` = (width, height) pixels of the bound framebuffer."""
        W, H = size
        ctx = self.ctx
        ctx.viewport = (0, 0, W, H)
        ctx.clear(1.0, 1.0, 1.0, 1.0)
        ctx.disable(moderngl.DEPTH_TEST | moderngl.BLEND | moderngl.CULL_FACE)
        names, fetches = fetched_panels(frame, fragment)
        panels = [(frame.inputs[n], n) for n in names] + [(frame.values, None)]
        pw = W / len(panels)
        boxes = {}
        for i, (values, name) in enumerate(panels):
            v = values if values.ndim == 2 else values[..., 0]
            rows, cols = v.shape
            cell = min((pw - 40) / (cols + 1.5), (H - 40) / (rows + 1.5))   # room for oversized primitives
            x0 = i * pw + 20 + 0.5 * cell
            y0 = 20 + 0.5 * cell
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
            finite = np.abs(v[np.abs(v) < 1e30])
            lim = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
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
        tx0, ty0, tc = boxes[None]

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
        if fragment:
            fx, fy = fragment
            arrows = []
            for sampler, (tx, ty), _ in fetches:
                box = boxes[next(n for n in names if frame.input_ids[n] == frame.input_ids[sampler])]
                arrows += [at(boxes[None], fx + .5, fy + .5), at(box, tx + .5, ty + .5)]
            self._draw(moderngl.LINES, arrows, (0.0, 0.45, 0.0))

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


def render_offscreen(frame, fragment, size=DEFAULT_SIZE, ctx=None) -> np.ndarray:
    """The frame as the window draws it, rendered headless: an (H, W, 3) uint8 array, top row first."""
    from ..context import get_context, park

    ctx = ctx or get_context()
    W, H = size
    tex = ctx.texture((W, H), 4)
    fbo = r = None
    try:
        fbo = ctx.framebuffer(color_attachments=[tex])
        r = FrameRenderer(ctx)
        fbo.use()
        r.draw(frame, fragment, size)
        img = np.frombuffer(fbo.read(components=3, alignment=1), np.uint8).reshape(H, W, 3)[::-1].copy()
    finally:
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
    from . import caption

    lines = [caption(frame, total).replace("\n", "; ")]
    if fragment:
        x, y = fragment
        lines.append(f"  fragment ({x}, {y}): T0 = {tuple(round(float(c), 4) for c in frame.T0[y, x])}, "
                     f"T1 = {tuple(round(float(c), 4) for c in frame.T1[y, x])}")
        for sampler, t, call in frame.fetches_at(x, y):
            lines.append(f"    {call} -> {sampler}{t}")
    return "\n".join(lines)


def run_window(frames, size=DEFAULT_SIZE, heading: str = "", screenshots: str | None = None,
               play_seconds: float = 0.6, fragment=None) -> list:
    """Open the window and step through ``frames`` until it is closed. Returns the steps shown,
    [(pass index, fragment), ...]. ``fragment`` (x, y) is explained first in each pass that
    shades it (see :class:`Steps`). With ``screenshots`` (a folder), each shown step is also
    saved from the window's framebuffer as shot_NNNN.png (what the tests compare); the
    screenshots an earlier run left there (files named shot_NNNN.png, nothing else) are
    deleted first, so the folder holds this run's alone. Without a display:
    :class:`NoDisplayError` (its message says to use --out DIR)."""
    steps = Steps(frames, play_seconds, fragment)
    glfw = _import_glfw()
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
    try:
        glfw.make_context_current(win)
        ctx = moderngl.create_context(require=330)
        renderer = FrameRenderer(ctx)
    except BaseException:
        glfw.destroy_window(win)
        glfw.terminate()
        raise
    if screenshots:
        _clear_screenshots(screenshots)
    actions = {glfw.KEY_RIGHT: "next", glfw.KEY_N: "next", glfw.KEY_LEFT: "previous", glfw.KEY_P: "previous",
               glfw.KEY_HOME: "first", glfw.KEY_END: "last", glfw.KEY_SPACE: "play",
               glfw.KEY_F: "next fragment", glfw.KEY_C: "previous fragment"}
    keys = []
    shown = []

    def on_key(window, key, scancode, action, mods):
        if action in (glfw.PRESS, glfw.REPEAT):
            keys.append(key)   # one key a step: each is drawn before the next is applied

    glfw.set_key_callback(win, on_key)
    dirty = True
    try:
        while not glfw.window_should_close(win):
            if keys:
                key = keys.pop(0)
                if key in (glfw.KEY_Q, glfw.KEY_ESCAPE):
                    glfw.set_window_should_close(win, True)
                elif key in actions:
                    dirty |= steps.key(actions[key], time.monotonic())
            dirty |= steps.tick(time.monotonic())
            if dirty:
                dirty = False
                f, frag = steps.frame, steps.fragment()
                ctx.screen.use()
                W, H = glfw.get_framebuffer_size(win)
                renderer.draw(f, frag, (W, H))
                shown.append((f.index, frag))
                if screenshots:              # the back buffer, just drawn, is what the swap shows
                    _screenshot(ctx, (W, H), screenshots, len(shown))
                glfw.swap_buffers(win)
                text = describe(f, frag, len(frames))
                glfw.set_window_title(win, "gpgpu.show: " + (heading + " | " if heading else "") + text.split("\n")[0][:200])
                print(text, flush=True)
            if keys:
                glfw.poll_events()
            else:
                glfw.wait_events_timeout(0.05)
    finally:
        renderer.release()
        glfw.destroy_window(win)
        glfw.terminate()
    return shown


def _clear_screenshots(folder) -> None:
    """Delete the screenshots (shot_NNNN.png) an earlier run left in ``folder``."""
    import re
    from pathlib import Path

    folder = Path(folder)
    if folder.is_dir():
        for p in folder.iterdir():
            if re.fullmatch(SHOT_PATTERN, p.name) and p.is_file():
                p.unlink()


def _screenshot(ctx, size, folder, n) -> None:
    """Save the window's framebuffer (read back before the swap) as folder/shot_NNNN.png."""
    from pathlib import Path

    from PIL import Image

    W, H = size
    raw = ctx.screen.read(viewport=(0, 0, W, H), components=3, alignment=1)
    Path(folder).mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.frombuffer(raw, np.uint8).reshape(H, W, 3)[::-1]).save(Path(folder) / f"shot_{n:04d}.png")
