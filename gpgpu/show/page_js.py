"""The script of the page of ``python -m gpgpu.show ALGORITHM --html FILE`` (:mod:`gpgpu.show.html`),
a teaching tool beyond the papers, kept in ``gpgpu/show/page.js`` (package data, which an editor
and a JavaScript linter read; ``tests/test_show_page_script.py`` parses it) and read here as
``PAGE_JS``.

It steps through the passes (buttons, slider, keys, the address ``#pass-6``), shows each pass's
PNG frame, caption and kernel, and draws the pass again on a canvas from values: the target and
the inputs it read, cell by cell, the primitive, the shaded cells; any cell of the target under
the mouse (a click pins it) is explained: its WPOS, the interpolated T0 and T1, and its fetches,
as arrows to the texels and as the kernel's lines highlighted. In the static page the values
and the per-fragment notes are the recorder's; in live mode (the button, or ``#live`` in the
address) the browser replays the recorded passes through WebGL2 with float render targets
(:mod:`gpgpu.show.live`), draws the canvas from its own textures, explains a fragment from the
recorder's instrumented kernel run on its own GPU, mirrors the host's decisions from its own
textures (drawing LU's row and column swaps itself where its pivot moves), and lets the reader
edit the input or switch to a held n or seed and replay. Live mode starts as the page opens
unless the address has ``#static``. Where WebGL2 or EXT_color_buffer_float is missing it says so
and keeps the static frames.

``window.gpgpuPage`` is the page's interface for tests: ``show(k)``, ``fragment(x, y)`` (the
explanation shown), ``choose(n, seed)`` and ``choices()`` (the held runs), ``live``
(``replay()``, ``edit(row, col, value)``, ``state``, ``error``, ``choice()``, ``values()``: the
target after each pass the browser ran, base64 float32).
"""
from __future__ import annotations

from pathlib import Path

__all__ = ["PAGE_JS", "SCRIPT"]

#: the script's file, beside this module
SCRIPT = Path(__file__).with_name("page.js")
#: its text, as the page embeds it
PAGE_JS = SCRIPT.read_text(encoding="utf-8")
