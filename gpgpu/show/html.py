"""``python -m gpgpu.show ALGORITHM --html FILE``: every pass of an algorithm in one
self-contained HTML page, to step through in any browser (beyond the papers, a teaching tool).

The page needs no server and no network: the frames are the PNG frames of
:func:`gpgpu.show.draw_frame` (the same pictures as ``--out``), inline as base64 ``data:`` URLs;
the captions, the trace and the kernels' sources are inline JSON; the script and the style sheet
are inline too. It shows

* the frame of the current pass and its caption, and a legend of the frames' colours and marks;
* buttons (first, previous, play/pause, next, last), a slider over the passes, and keys:
  Right / Left the next / previous pass, Home / End the first / last, Space plays;
* the GLSL source of the pass's kernel, read from the shipped kernels (``glsl/``, installed as
  ``gpgpu/glsl``, or ``$GPGPU_GLSL_DIR``: :data:`gpgpu.kernel.GLSL_DIR`) when the page is
  written, with the chosen fragment's fetch lines highlighted and numbered as the frame numbers
  the fetched texels (the recorder's fetch calls, :attr:`gpgpu.record.Frame.sites`, located in the
  file), and the fragment's WPOS, T0, T1 and fetches beside it;
* the trace (kernel, primitive, fragments, target of every pass; numbered from 1, as the captions
  and the frames: :func:`gpgpu.show.format_trace`).

* the pass drawn again from values on a canvas (the target and the inputs it read, the
  primitive, the shaded cells), where any shaded cell of the target under the mouse (a click
  pins it) is explained: WPOS, the interpolated T0 and T1, the fetches as arrows and as the
  kernel's lines highlighted; the static page draws the recorder's snapshots and per-fragment
  notes of every cell (:attr:`gpgpu.record.Frame.fetch_texels`);
* the caption and the legend once, in HTML (the PNG frames are drawn without them where
  :func:`gpgpu.show.render_frames` can leave them out); cells are named ``(col, row)``;
* live mode (as the page opens, unless ``#static`` is in the address; ``run live`` after
  ``show the static frames``): the browser replays the recorded passes through WebGL2 with
  float render targets from the data of ``gpgpu.show.live.live_data`` (the kernels in GLSL ES
  3.00, the vertex buffers, uniforms, textures and uploads), draws the canvas from its own
  textures, explains any fragment by the recorder's instrumented kernel run on its GPU, mirrors
  the host's decisions (Cholesky's pivot check, LU-GPU's pivots and singularity check) from
  its own textures, and lets the reader edit the input, or switch to another n or seed that
  the page holds (``gpgpu.show.live.choices``), and replay: a refusal is shown at the pass
  where the run reads it back, in the words of the Python error.
  Without WebGL2 or EXT_color_buffer_float the page says so and keeps the static frames.

The address may name a pass: ``page.html#pass-6`` opens at pass 6 (the captions count from 1),
and stepping keeps the address up to date. The page weighs about 75 kB a pass, most of it the
PNG frames (the script is ``gpgpu.show.page_js``).
"""
from __future__ import annotations

import base64
import html
import io
import json
import sys
from pathlib import Path

import numpy as np

from .page_js import PAGE_JS

__all__ = ["write_html", "page", "fetch_site_lines"]


# ------------------------------------------------------------------ what the page takes from gpgpu.show
# Three small functions, so that the page follows gpgpu.show's frames, captions and legend.

def _frame_pngs(frames, fragment=None, heading: str = "", progress: bool | None = None) -> list:
    """The PNG bytes of every frame, the frames ``--out`` writes (:func:`gpgpu.show.render_frames`)."""
    from tqdm import tqdm

    from .frames import render_frames

    kw = {"legend": False} if _can_leave_out_legend() else {}
    return [png for png, _ in tqdm(render_frames(frames, fragment, heading=heading, **kw), total=len(frames),
                                   desc="frames", unit="frame", file=sys.stderr, dynamic_ncols=True,
                                   disable=None if progress is None else not progress)]


def _can_leave_out_legend() -> bool:
    """Whether :func:`gpgpu.show.render_frames` can draw the frames without caption and legend
    (the page draws them once, in HTML)."""
    import inspect

    from .frames import render_frames

    return "legend" in inspect.signature(render_frames).parameters


def _captions(frames, heading: str = "") -> list:
    """Every frame's caption, as the PNG frames carry it (:func:`gpgpu.show.describe`)."""
    from .frames import describe

    return describe(frames, heading)


def _legend() -> tuple:
    """(matplotlib colour or colormap name, short name, meaning) of every colour and mark of the
    frames (:data:`gpgpu.show.LEGEND`)."""
    from .frames import LEGEND

    return tuple(LEGEND)


# ------------------------------------------------------------------ the kernels' sources
def _kernel_file(name: str) -> Path | None:
    """The shipped kernel file called ``name`` (a frame's ``file``), or None (a copy-to-texture
    pass has no fragment program)."""
    from ..kernel import GLSL_DIR

    path = GLSL_DIR / name
    if path.is_file():
        return path
    found = sorted(GLSL_DIR.rglob(name)) if name.endswith(".frag") else []
    return found[0] if found else None


def fetch_site_lines(source: str) -> list:
    """For each fetch call of a kernel's text, in the order the recorder numbers them
    (:attr:`gpgpu.record.Frame.sites`): (first line, last line) of the call, counted from 1,
    and the call as the recorder writes it (one space between words)."""
    from ..record import _COMMENT, _FETCH, _call_text

    text = _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), source)   # as the recorder reads it
    out = []
    for m in _FETCH.finditer(text):
        call = _call_text(text, m.start())
        depth, end = 0, text.index("(", m.start())
        for end in range(end, len(text)):
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            if depth == 0:
                break
        out.append((text.count("\n", 0, m.start()) + 1, text.count("\n", 0, end) + 1, call))
    return out


def _fragment_of(frame, fragment):
    """The fragment a frame explains: ``fragment`` where the pass shades it, else the pass's own
    choice (as :func:`gpgpu.show.draw_frame` picks it)."""
    if fragment is None or not frame.shades(*fragment):
        return frame.chosen_fragment()
    return tuple(fragment)


def _b64(a, dtype) -> str:
    return base64.b64encode(np.ascontiguousarray(a, dtype=dtype).tobytes()).decode("ascii")


def _values_data(frame) -> dict:
    """What the canvas draws of a pass and what its cells explain, from the recorder: the target's
    values after it, its textures' serial numbers and uploads, the vertices, and every
    fragment's notes (fetch count, -1 where not shaded; T0, T1; fetched texels and their sites).
    A frame without snapshots (a stand-in) draws as zeros."""
    d = {"values": _b64(_snapshot(frame), np.float32), "target_serial": int(getattr(frame, "target_serial", -1)),
         "inputs": [[k, int(v)] for k, v in getattr(frame, "input_serials", {}).items()],
         "uploads": [[int(k), _b64(v, np.float32)] for k, v in getattr(frame, "uploads", {}).items()],
         "verts": [[list(map(float, v.V)), list(map(float, v.T0)), list(map(float, v.T1))] for v in frame.vertices],
         "notes": None}
    if frame.covered is not None:
        count = np.where(frame.covered, frame.fetch_count, -1)
        d["notes"] = {"count": _b64(count, np.int32), "T0": _b64(frame.T0, np.float32),
                      "T1": _b64(frame.T1, np.float32), "texels": _b64(frame.fetch_texels, np.int32),
                      "sites": _b64(frame.fetch_sites, np.int32)}
    return d


def _snapshot(frame) -> np.ndarray:
    values = getattr(frame, "values", None)
    return np.zeros(frame.target, np.float32) if values is None else values


def _textures(frames) -> dict:
    """serial -> [rows, cols, components] of every texture of the frames."""
    out = {}
    for f in frames:
        v = _snapshot(f)
        out[str(getattr(f, "target_serial", -1))] = [int(v.shape[0]), int(v.shape[1]), int(getattr(f, "components", 1))]
        for k, serial in getattr(f, "input_serials", {}).items():
            v = f.inputs[k]
            out[str(serial)] = [int(v.shape[0]), int(v.shape[1]), int(v.shape[2]) if v.ndim == 3 else 1]
    return out


def _uniform_values(uniforms: dict) -> dict:
    """name -> a number, or a list for a vector (a bool as 1 or 0): what a kernel's arithmetic
    (:mod:`gpgpu.show.arithmetic`) reads of the pass's uniforms."""
    out = {}
    for k, v in uniforms.items():
        a = np.atleast_1d(np.asarray(v, dtype=np.float64)).reshape(-1)
        out[k] = float(a[0]) if a.size == 1 else [float(u) for u in a]
    return out


def _pass_data(frame, fragment, sources: dict) -> dict:
    """What the page shows of one pass beside its frame: the kernel, its file's lines of fetch
    calls, and the explained fragment's WPOS, T0, T1 and fetches (with the lines of their calls)."""
    from ..record import MAX_FETCHES
    from .frames import _xy

    d = {"kernel": frame.kernel, "file": frame.file, "doc": frame.doc, "primitive": frame.primitive,
         "vertices": len(frame.vertices), "fragments": int(frame.fragments), "target": list(frame.target),
         "recorded": frame.covered is not None, "fragment": None, "fetches": [], "fetch_count": 0,
         "site_lines": [], "source": None, "uniforms": _uniform_values(getattr(frame, "uniforms", {}))}
    path = _kernel_file(frame.file)
    if path is None:
        return d
    d["source"] = path.name
    if path.name not in sources:
        sources[path.name] = path.read_text()
    sites = fetch_site_lines(sources[path.name])
    if frame.sites and [s[2] for s in sites] != [call for _, call in frame.sites]:
        sites = []      # the file is not the one recorded (changed since): no lines to show
    d["site_lines"] = [[a, b] for a, b, _ in sites]
    where = _fragment_of(frame, fragment)
    if where is None:
        return d
    x, y = where
    d["fragment"] = {"x": x, "y": y, "wpos": _xy((x + .5, y + .5)), "T0": _xy(frame.T0[y, x]),
                     "T1": _xy(frame.T1[y, x])}
    d["fetch_count"] = int(frame.fetch_count[y, x])
    for k in range(min(d["fetch_count"], MAX_FETCHES)):
        site = int(frame.fetch_sites[y, x, k])
        sampler, call = frame.sites[site]
        tx, ty = (int(v) for v in frame.fetch_texels[y, x, k])
        d["fetches"].append({"sampler": sampler, "texel": [tx, ty], "call": call, "site": site,
                             "lines": list(sites[site][:2]) if sites else None})
    return d


# ------------------------------------------------------------------ the page
#: the legend's matplotlib colours (:data:`gpgpu.show.LEGEND`) in CSS, so that a page without PNG
#: frames is written without matplotlib
_CSS_COLOURS = {"black": "#000000", "0.35": "#595959", "orange": "#ffa500", "lime": "#00ff00",
                "darkgreen": "#006400", "tab:red": "#d62728", "thistle": "#d8bfd8"}


def _css_colour(colour: str) -> str:
    """A CSS background for a matplotlib colour, or a gradient for a colormap's name (the
    legend's own colours without matplotlib: :data:`_CSS_COLOURS`)."""
    if colour in _CSS_COLOURS or colour.startswith("#"):
        return _CSS_COLOURS.get(colour, colour)
    import matplotlib
    from matplotlib.colors import to_hex

    try:
        return to_hex(colour)
    except ValueError:
        cmap = matplotlib.colormaps[colour]
        stops = ", ".join(to_hex(cmap(t)) for t in (0.0, 0.25, 0.5, 0.75, 1.0))
        return f"linear-gradient(90deg, {stops})"


def _run_data(run: dict, sources: dict, sites: dict) -> dict:
    """A run the page holds besides its own (:func:`gpgpu.show.live.choices`), for live mode only:
    each pass's kernel, caption and chosen fragment (its values, notes, uploads and vertices come
    from the browser's replay and the run's live data), its textures, trace and seeds."""
    from .frames import format_trace

    if run["recorder"] is None:
        return {"n": run["n"], "own": True, "seeds": run["seeds"]}
    from .story import plain_words

    frames = run["recorder"].frames
    passes = []
    words = plain_words(frames, run["recorder"].problem.get("algorithm", ""))
    for f, cap, w in zip(frames, _captions(frames), words):
        d = _pass_data(f, None, sources)
        for key in ("fetches", "fetch_count", "vertices", "fragments"):      # the page's script fills them
            d.pop(key)
        if d["fragment"]:
            d["fragment"] = {"x": d["fragment"]["x"], "y": d["fragment"]["y"]}
        d.update(caption=cap, target_serial=int(f.target_serial), inputs=[[k, int(v)] for k, v in f.input_serials.items()],
                 plain=w["plain"], answer=w["answer"])
        if d["source"] and f.sites:
            sites.setdefault(d["source"], [list(x) for x in f.sites])
        passes.append(d)
    return {"n": run["n"], "own": False, "seeds": run["seeds"], "passes": passes, "live": run["live"],
            "textures": _textures(frames), "trace": format_trace(run["recorder"])}


def page(frames, pngs, captions, legend, *, title: str, subtitle: str = "", trace: str = "",
         command: str = "", fragment=None, live: dict | None = None, runs: list | None = None,
         algorithm: str = "") -> str:
    """The page's text, from the frames (:class:`gpgpu.record.Frame`), each frame's PNG bytes and
    caption (``pngs`` None: a page without the PNG frames, whose canvas draws the recorded
    values), the legend ((colour, name, meaning) rows) and ``fragment``, the (x, y) to explain in
    every pass that shades it (None: each pass's own choice, as in the frames); ``live``: the
    data of live mode (``gpgpu.show.live.live_data``), or None for a page without it; ``runs``:
    the runs the student may switch to in live mode (:func:`gpgpu.show.live.choices`, whose
    ``shared`` programs are ``live``'s), or None; ``algorithm``: the name of --list the frames
    are a run of, whose recurrence heads the page and whose passes get their plain sentences
    (:mod:`gpgpu.show.story`)."""
    from ..record import MAX_FETCHES
    from .arithmetic import ARITHMETIC
    from .story import SUMMARIES, plain_words

    if pngs is None:
        pngs = [None] * len(frames)
    if not len(frames) == len(pngs) == len(captions):
        raise ValueError(f"{len(frames)} frames, {len(pngs)} PNGs and {len(captions)} captions: give one of each a pass")
    sources: dict = {}
    sites: dict = {}
    passes = []
    words = plain_words(frames, algorithm) if all(hasattr(f, "uniforms") for f in frames) else [{}] * len(frames)
    for frame, png, cap, w in zip(frames, pngs, captions, words):
        d = _pass_data(frame, fragment, sources)
        d.update(_values_data(frame))
        d["caption"] = cap
        d["plain"], d["answer"] = w.get("plain", ""), bool(w.get("answer"))
        d["png"] = None if png is None else "data:image/png;base64," + base64.b64encode(png).decode("ascii")
        if d["source"] and frame.sites:
            sites.setdefault(d["source"], [list(x) for x in frame.sites])
        passes.append(d)
    held = [_run_data(r, sources, sites) for r in runs] if runs and live is not None else None
    data = {"title": title, "passes": passes, "sources": {k: v.split("\n") for k, v in sources.items()},
            "trace": trace, "sites": sites, "textures": _textures(frames), "max_fetches": MAX_FETCHES,
            "live": live, "runs": held, "summary": SUMMARIES.get(algorithm, ""),
            "arithmetic": {k: e._asdict() for k, e in ARITHMETIC.items()}}
    blob = json.dumps(data, separators=(",", ":"))
    blob = blob.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")  # inert inside <script>
    rows = "\n".join(
        f'<li><span class="swatch" style="background:{_css_colour(colour)}"></span>'
        f"<b>{html.escape(name)}</b>: {html.escape(meaning)}</li>" for colour, name, meaning in legend)
    n = len(passes)
    return (_TEMPLATE.replace("@TITLE@", html.escape(title)).replace("@SUBTITLE@", html.escape(subtitle))
            .replace("@N@", str(n)).replace("@LEGEND@", rows).replace("@COMMAND@", html.escape(command))
            .replace("@CSS@", _CSS).replace("@JS@", PAGE_JS).replace("@DATA@", blob))


def write_html(recorder, path, fragment=None, heading: str = "", *, title: str | None = None,
               subtitle: str = "", command: str = "", progress: bool | None = None, live: bool = True,
               pictures: bool = True, choices: bool = True) -> Path:
    """Write the page of every pass of ``recorder`` (a :class:`gpgpu.record.Recorder`) to
    ``path`` (replaced when it exists) and return its path. ``fragment`` (x, y) is the fragment
    to explain in every pass that shades it (default: each pass's own choice), ``heading`` heads
    every caption as in the PNG frames, ``title`` and ``subtitle`` head the page (default: the
    heading's first line), ``command`` is the command line the page names as its
    source, ``progress`` a bar on stderr while the frames are drawn (None: where stderr is a
    terminal); ``live``: the page carries the data of its live mode (``gpgpu.show.live``);
    ``pictures``: the PNG frames too (without them the page is a tenth of the size: the canvas
    draws every pass from the recorded values, and live); ``choices``: with ``live``, the page also
    holds the runs of :func:`gpgpu.show.live.choices` (other orders n, other seeds), which the
    reader switches to in live mode (the recorder's ``problem`` names the algorithm)."""
    from .frames import format_trace
    from .live import choices as held_runs, live_data

    frames = recorder.frames
    if not frames:
        raise ValueError("no passes were recorded, so there is nothing to show; record a block that runs an algorithm")
    pngs = _frame_pngs(frames, fragment, heading, progress) if pictures else None
    captions = _captions(frames, heading)
    title = title or (heading.split("\n")[0] if heading else "gpgpu: the passes")
    problem = getattr(recorder, "problem", None) or {}
    shared = {"programs": [], "keys": {}}
    data = live_data(frames, problem, shared) if live else None
    runs = None
    if live and choices and problem.get("algorithm"):
        runs = held_runs(problem["algorithm"], problem["n"], problem.get("seed", 0), frames, problem=problem,
                         shared=shared, editable=not data["unmirrored"])
    text = page(frames, pngs, captions, _legend(), title=title, subtitle=subtitle,
                trace=format_trace(recorder), command=command, fragment=fragment, live=data, runs=runs,
                algorithm=problem.get("algorithm", ""))
    path = Path(path)
    path.write_text(text, encoding="utf-8")
    return path


_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>@TITLE@</title>
<link rel="icon" href="data:,">
<style>@CSS@</style>
</head>
<body>
<header>
<h1>@TITLE@</h1>
<p class="sub">@SUBTITLE@</p>
<p id="summary" hidden></p>
</header>
<nav id="controls" aria-label="passes">
<button id="first" type="button" title="first pass (Home)">&#x00AB; first</button>
<button id="prev" type="button" title="previous pass (Left)">&#x25C0; prev</button>
<button id="play" type="button" title="play / pause (Space)">&#x25B6; play</button>
<button id="next" type="button" title="next pass (Right)">next &#x25B6;</button>
<button id="last" type="button" title="last pass (End)">last &#x00BB;</button>
<input id="slider" type="range" min="1" max="@N@" value="1" step="1" aria-label="pass">
<span id="counter">pass 1 of @N@</span>
<button id="live" type="button" title="replay the passes on this browser's GPU (WebGL2)">run live (WebGL2)</button>
<select id="choice" title="the order n and the seed of the input (the runs this page holds), replayed live" hidden></select>
</nav>
<p id="live-status" aria-live="polite"></p>
<pre id="live-error" hidden></pre>
<p id="plain" aria-live="polite"></p>
<div id="caption" class="caption" aria-live="polite"></div>
<main>
<div id="views">
<figure id="figure"><img id="frame" alt="the frame of the current pass"></figure>
<canvas id="explorer" aria-label="the pass drawn from its values: point at a cell of the target"></canvas>
<pre id="vertex-list"></pre>
<section id="editor" hidden></section>
</div>
<section id="kernel">
<h2 id="kernel-title"></h2>
<p id="kernel-doc"></p>
<p class="coords">Cells and texels are named (col, row): x counts columns from the left, y rows from the top.</p>
<div id="fragment-info"></div>
<div id="arithmetic"></div>
<pre id="kernel-source"></pre>
</section>
</main>
<section id="legend">
<h2>Legend</h2>
<ul>
@LEGEND@
</ul>
</section>
<details id="trace"><summary>The trace: every pass (counted from 1, as the captions)</summary><pre id="trace-text"></pre></details>
<footer>Keys: Right / Left the next / previous pass, Home / End the first / last, Space plays.
Written by <code>@COMMAND@</code> (gpgpu); one file, no network.</footer>
<script type="application/json" id="gpgpu-data">@DATA@</script>
<script>@JS@</script>
</body>
</html>
"""

_CSS = """
body { font-family: system-ui, sans-serif; margin: 0 1rem 1rem; color: #222; background: #fff; }
h1 { font-size: 1.25rem; margin: .6rem 0 0; }
h2 { font-size: 1rem; margin: .3rem 0; }
.sub { margin: .2rem 0 .4rem; color: #555; font-size: .9rem; }
#controls { display: flex; flex-wrap: wrap; gap: .4rem; align-items: center; position: sticky; top: 0;
            background: #fff; padding: .4rem 0; z-index: 1; }
#controls button { font-size: .9rem; padding: .2rem .6rem; }
#slider { flex: 1 1 16rem; min-width: 10rem; }
#counter { font-variant-numeric: tabular-nums; min-width: 8rem; }
.caption { white-space: pre-wrap; font-family: ui-monospace, monospace; font-size: .82rem;
           background: #f4f4f4; border-left: 4px solid #888; padding: .4rem .6rem; }
main { display: grid; grid-template-columns: minmax(0, 1100px) minmax(18rem, 1fr); gap: 1rem; align-items: start; }
@media (max-width: 1400px) { main { grid-template-columns: minmax(0, 1fr); } }
figure { margin: .5rem 0; }
#frame { max-width: 100%; height: auto; border: 1px solid #ddd; }
#arithmetic { font-family: ui-monospace, monospace; font-size: .82rem; white-space: pre-wrap; background: #f6fbf3; }
#arithmetic .expr { color: #064; } #arithmetic .result { font-weight: bold; }
#fragment-info { font-family: ui-monospace, monospace; font-size: .82rem; white-space: pre-wrap; }
#kernel-source { font-size: .8rem; line-height: 1.35; background: #fafafa; border: 1px solid #ddd; white-space: pre-wrap;
                 padding: .3rem 0; overflow-x: auto; }
#kernel-source .line { display: block; padding: 0 .5rem 0 4ch; text-indent: -4ch; }
#kernel-source .no { display: inline-block; width: 3ch; text-align: right; color: #999; margin-right: 1ch;
                     user-select: none; }
#kernel-source .comment { color: #6a737d; }
#kernel-source .site { background: #eef7ee; }
#kernel-source .fetch { background: #b9f5b9; box-shadow: inset 4px 0 0 #006400; }
#kernel-source .tag { color: #006400; font-weight: bold; margin-left: 1ch; }
#legend ul { list-style: none; padding: 0; margin: 0; }
#legend li { margin: .15rem 0; font-size: .88rem; }
.swatch { display: inline-block; width: 2.2rem; height: .8rem; border: 1px solid #888; margin-right: .5rem;
          vertical-align: middle; }
details { margin: .6rem 0; }
#trace-text { font-size: .75rem; }
footer { color: #666; font-size: .8rem; margin-top: .6rem; }
#explorer { width: 100%; max-width: 1100px; display: block; border: 1px solid #ddd; margin: .5rem 0; cursor: crosshair; }
#vertex-list { font-size: .78rem; color: #333; margin: .2rem 0; }
#summary { font-size: .9rem; background: #f3f7fc; border-left: 4px solid #4a78b5; padding: .4rem .6rem; margin: .3rem 0; }
#plain { font-size: .95rem; margin: .4rem 0 .2rem; }
#plain.answer { border-left: 4px solid #1a7f37; padding-left: .5rem; background: #eefaf0; }
#live-status { font-size: .85rem; color: #333; margin: .2rem 0; }
#live-error { background: #fde8e8; border-left: 4px solid #c00; padding: .4rem .6rem; white-space: pre-wrap;
              font-size: .85rem; }
.coords { font-size: .8rem; color: #555; margin: .2rem 0; }
#editor table { border-collapse: collapse; }
#editor td { padding: 0; }
#editor input { width: 4.5rem; font: .75rem ui-monospace, monospace; }
#editor button { margin: .4rem .4rem 0 0; }
#editor input.unread { background: #eee; color: #888; }
#editor-cell { font-size: .82rem; color: #333; min-height: 2.4em; margin: .3rem 0; }
#editor-error { background: #fde8e8; border-left: 4px solid #c00; padding: .4rem .6rem; white-space: pre-wrap;
                font-size: .85rem; }
"""
