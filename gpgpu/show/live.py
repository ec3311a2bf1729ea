"""The live half of the page of ``python -m gpgpu.show ALGORITHM --html FILE`` (beyond the papers,
a teaching tool): the recorded run as data that a browser replays through WebGL2.

One recording, three renderers: the :class:`gpgpu.record.Recorder` whose frames the PNG frames
(:func:`gpgpu.show.render_frames`) and the window (:mod:`gpgpu.show.window`) draw also gives,
for every pass, what :func:`live_data` lists here:

* the program: the kernel's own file (``glsl/``), with ``common.glsl`` and its library, put into
  GLSL ES 3.00 by :func:`to_es` (the rule below); the vertex program likewise; and the
  recorder's instrumented copy of the kernel (:func:`gpgpu.record.instrument` with ``slots``),
  whose notes (coverage, the interpolated T0 and T1, the texels fetched) the page reads for any
  fragment under the mouse;
* the primitive: its mode and vertex buffer (V, T0, T1 of every vertex, float32, as the
  project's vertex buffer holds them), the target and input textures by their serial numbers
  in the recording, the uniforms with their GLSL types;
* the uploads: the contents the host gave a texture before the pass (the input matrix, a new
  stream's zeros), exact float32 bits;
* the host's decisions that the page mirrors from its own textures (:func:`decisions`): where
  the run reads a value back and refuses its input, the page reads the same texel after the
  same pass and stops there with the words of the Python error.

The rule from the project's GLSL 3.30 to GLSL ES 3.00 (:func:`to_es`): the ``#version 330``
line becomes ``#version 300 es`` followed by ``precision highp float; precision highp int;
precision highp sampler2D;``; the ``noperspective`` qualifier is dropped (every vertex has
w = 1, so the perspective-correct interpolation of ES is the linear one of the papers);
``common.glsl``'s helpers (``WPOS``, ``texRECT``, ``texRECT4``, ``texVECTOR``) are kept as
they are, a macro and functions over ``texelFetch``, which ES 3.00 has. Nothing else changes:
a kernel that needs an extension (``GL_ARB_gpu_shader5``'s ``fma``) has no ES form and is
replayed from its recorded snapshot instead.
"""
from __future__ import annotations

import base64
import re

import numpy as np

__all__ = ["to_es", "fragment_es", "vertex_es", "uniform_types", "live_data", "decisions", "choices", "ES_HEADER",
           "CHOICE_N", "CHOICE_SEEDS", "input_entries"]

ES_HEADER = "#version 300 es\nprecision highp float;\nprecision highp int;\nprecision highp sampler2D;\n"

_VERSION = re.compile(r"^[ \t]*#version[^\n]*\n", re.M)
_NOPERSPECTIVE = re.compile(r"\bnoperspective\s+")
_UNIFORM = re.compile(r"\buniform\s+(?:(?:lowp|mediump|highp)\s+)?(\w+)\s+(\w+)\s*;")


def to_es(text: str) -> str:
    """A GLSL 3.30 text of the project in GLSL ES 3.00's words (the rule of the module
    docstring), without its version line (:data:`ES_HEADER` goes first)."""
    return _NOPERSPECTIVE.sub("", _VERSION.sub("", text))


def _defines(defines: dict) -> str:
    return "".join(f"#define {k} {v}\n" for k, v in sorted(defines.items()))


def fragment_es(file: str, defines: dict, library: str | None, instrumented: bool = False) -> tuple:
    """(the ES 3.00 text of the fragment program of kernel file ``file`` with ``defines`` and
    ``library``, its fetch sites): with ``instrumented``, the recorder's copy that notes every
    fetch, one vector per pass chosen by the uniform ``_rec_slot``."""
    from ..kernel import GLSL_DIR
    from ..record import MAX_FETCHES, instrument

    text = (GLSL_DIR / file).read_text()
    sites = ()
    if instrumented:
        text, sites = instrument(text, slots=True)
        defines = dict(defines, MAX_FETCHES=MAX_FETCHES)
    common = (GLSL_DIR / "common.glsl").read_text()
    lib = "" if library is None else (GLSL_DIR / f"{library}.glsl").read_text()
    return ES_HEADER + _defines(defines) + to_es(common) + to_es(lib) + "\n#line 1\n" + to_es(text), sites


def vertex_es(vertex: str, defines: dict) -> str:
    """The ES 3.00 text of the vertex program ``glsl/<vertex>.vert`` with ``defines``."""
    from ..kernel import GLSL_DIR

    return ES_HEADER + _defines(defines) + "#line 2\n" + to_es((GLSL_DIR / f"{vertex}.vert").read_text())


def uniform_types(*texts: str) -> dict:
    """name -> GLSL type of every uniform the texts declare."""
    return {name: kind for text in texts for kind, name in _UNIFORM.findall(text)}


def _b64(a) -> str:
    return base64.b64encode(np.ascontiguousarray(a, dtype=np.float32).tobytes()).decode("ascii")


def _uniform(kind: str, value) -> list:
    v = [float(u) for u in np.atleast_1d(np.asarray(value, dtype=np.float64)).reshape(-1)]
    return [kind, v]


def _program(frame, programs: dict, keys: dict) -> int | None:
    """The index of the frame's program in ``programs`` (added when new), or None where it has
    no ES form (a copy to texture, an extension)."""
    if not frame.file.endswith(".frag") or frame.extensions:
        return None
    key = (frame.file, tuple(sorted(frame.defines.items())), frame.library, frame.vertex)
    if key not in keys:
        fs, _ = fragment_es(frame.file, frame.defines, frame.library)
        vs = vertex_es(frame.vertex, frame.defines)
        recorded = frame.covered is not None
        inst = fragment_es(frame.file, frame.defines, frame.library, instrumented=True)[0] if recorded else None
        keys[key] = len(programs)
        programs.append({"file": frame.file, "fs": fs, "vs": vs, "inst": inst,
                         "attributes": frame.vertex == "pass" or "in vec2 V;" in vs,
                         "types": uniform_types(fs, vs)})
    return keys[key]


def _pass(frame, program, programs, textures) -> dict:
    for serial, shape in [(frame.target_serial, frame.values.shape)] + [
            (frame.input_serials[k], v.shape) for k, v in frame.inputs.items()]:
        textures[serial] = [int(shape[0]), int(shape[1]), int(shape[2]) if len(shape) == 3 else 1]
    types = programs[program]["types"] if program is not None else {}
    data = np.asarray([c for v in frame.vertices for c in (*v.V, *v.T0, *v.T1)], dtype=np.float32)
    return {"program": program, "mode": int(frame.mode), "count": int(frame.count), "vertices": _b64(data),
            "target": frame.target_serial, "inputs": [[k, s] for k, s in frame.input_serials.items()],
            "uniforms": [[k] + _uniform(types.get(k, "float"), v) for k, v in frame.uniforms.items()],
            "uploads": [[s, _b64(v)] for s, v in frame.uploads.items()], "blend": bool(frame.blending),
            "snapshot": None if program is not None else _b64(frame.values)}


class _Slot(float):
    """A number that formats as a placeholder (``{pivot}``): the error's own text with a hole where
    the page writes the value it read back (Python's ``%.3g``, as the error formats it)."""

    def __new__(cls, name: str):
        self = super().__new__(cls, 1.0)
        self.name = name
        return self

    def __format__(self, spec: str) -> str:
        return "{" + self.name + "}"


def _groups(frames, inside) -> list:
    """(first, last) frame index of each maximal run of consecutive frames for which
    ``inside(frame)`` holds."""
    out, start = [], None
    for i, f in enumerate(frames):
        if inside(f) and start is None:
            start = i
        if start is not None and (i + 1 == len(frames) or not inside(frames[i + 1])):
            out.append((start, i))
            start = None
    return out


def _has(frame, name: str) -> bool:
    return any(c.endswith(name) for c in frame.context)


#: The functions whose pivot search the page mirrors (LU-GPU's readback loop, paper 004; its
#: blocked form permutes rows by a host-made table instead, which is not mirrored).
_PIVOTING = ("gpgpu.lu._factor", "gpgpu.lu.gauss_jordan")


def _mirrored_lu(f) -> bool:
    return any(c in _PIVOTING for c in f.context) and not any(c.startswith("gpgpu.blocked") for c in f.context)


def _pivot_decisions(frames, problem: dict) -> list:
    """LU-GPU's host decisions (paper 004, :func:`gpgpu.lu._factor`, :func:`gpgpu.lu.gauss_jordan`):
    the threshold n u max|A| from the abs-max reduction's texel (0, 0), and at every step k the
    pivot (value, col, row) from texel (0, 0) of the argmax's last pass: not above the threshold,
    the run stops with the words of :class:`gpgpu.errors.SingularMatrixError`; else rows k and p
    (and, full pivoting, columns k and q) are swapped by two passes of two lines each
    (:func:`gpgpu.dense_common.swap_lines`), which the page draws itself where its pivot differs
    from the recorded one (``skip``: how many recorded swap passes follow)."""
    from ..errors import SingularMatrixError

    out = []
    for a, b in _groups(frames, lambda f: _mirrored_lu(f) and _has(f, ".singular_threshold")):
        out.append({"after": b, "kind": "threshold", "texture": frames[b].target_serial,
                    "order": int(frames[a].inputs["S"].shape[0])})
    searches = _groups(frames, lambda f: _mirrored_lu(f) and _has(f, ".argmax_region"))
    copy = next((f for f in frames if f.kernel == "copy" and f.file == "copy.frag" and _mirrored_lu(f)), None)
    for k, (a, b) in enumerate(searches):
        f = frames[b]
        gj = any(c == "gpgpu.lu.gauss_jordan" for c in f.context)
        S = frames[a].input_serials["S"]
        rows, length = (int(v) for v in frames[a].inputs["S"].shape[:2])
        skip = 0
        while b + 1 + skip < len(frames) and _has(frames[b + 1 + skip], ".swap_lines"):
            skip += 1
        after = frames[b + 1 + skip] if b + 1 + skip < len(frames) else None
        T = after.target_serial if after is not None else None
        pivoting = "partial" if gj else (problem or {}).get("pivoting", "partial")
        what = f"Gauss-Jordan elimination of the {rows} x {rows} matrix" if gj else None
        value, q, p = (float(v) for v in f.values[0, 0, :3])
        out.append({"after": b, "kind": "pivot", "texture": f.target_serial, "step": k, "order": rows,
                    "length": length, "pivoting": pivoting, "S": S, "T": T, "skip": skip,
                    "recorded": [int(p), int(q)], "copy": copy.index if copy is not None else None,
                    "messages": {"zero": str(SingularMatrixError(k, rows, pivoting, 0.0, 1.0, what)),
                                 "small": str(SingularMatrixError(k, rows, pivoting, _Slot("pivot"),
                                                                  _Slot("threshold"), what))}})
    return out


def decisions(frames, problem: dict | None) -> list:
    """The host's data-dependent decisions that the page mirrors from its own textures: a list of
    ``{"after": pass index (from 0), "kind", "texture", ...}`` in pass order. Mirrored:

    * ``pivot_flags``, Cholesky's pivot check (:func:`gpgpu.dense_common.first_bad_pivot`): after
      the min reduction of the pivot flags, texel (0, 0) read back; at most 1e38 means pivot
      k = int(value) failed, and the run stops with ``messages[k]``, the text of
      :class:`gpgpu.errors.NotPositiveDefiniteError` (k, m);
    * ``threshold`` and ``pivot``, LU-GPU's pivot search and singularity check
      (:func:`_pivot_decisions`)."""
    from ..errors import NotPositiveDefiniteError

    out = []
    m = (problem or {}).get("m")
    for i, f in enumerate(frames):
        inside = _has(f, ".first_bad_pivot")
        last = i + 1 == len(frames) or not _has(frames[i + 1], ".first_bad_pivot")
        if inside and last and f.kernel == "min_reduction" and m:
            out.append({"after": i, "kind": "pivot_flags", "texture": f.target_serial,
                        "messages": [str(NotPositiveDefiniteError(k, m)) for k in range(m)]})
    out += _pivot_decisions(frames, problem)
    return sorted(out, key=lambda d: d["after"])


#: Host decisions that an edited input would change but that the page replays as recorded, by the
#: functions of the run that make them (their last name): editing is offered only where none is.
UNMIRRORED = {
    "argmax_region": "the pivot's position, read back to place the row swaps",
    "singular_threshold": "max|A|, read back for the pivot threshold",
    "adat": "min d and max|C|, read back to refuse a negative d or an overflow",
    "iteration": "CG's scalars and flags, read back between passes",
    "cg": "CG's scalars and flags, read back between passes",
}


def unmirrored(frames) -> list:
    """What the run decides from values read back that the page does not mirror (see
    :data:`UNMIRRORED`; LU-GPU's own pivot search is mirrored, :func:`_pivot_decisions`), one
    sentence each."""
    said = []
    for f in frames:
        if _mirrored_lu(f):
            continue
        for c in f.context:
            why = UNMIRRORED.get(c.rsplit(".", 1)[-1])
            if why and why not in said:
                said.append(why)
    return said


def input_entries(layout: str | None, rows: int, cols: int) -> list | None:
    """For each texel of the input texture (row-major), the entry [i, j] of A it holds, or None
    where it holds none the algorithm reads (the Cholesky forms read only A's lower triangle:
    ``layout`` "lower", or "packed", the rectangular packed format of :mod:`gpgpu.packed`;
    "full": every entry, LU and Gauss-Jordan); None for another layout."""
    if layout == "full":
        return [[i, j] for i in range(rows) for j in range(cols)]
    if layout == "lower":
        return [[i, j] if j <= i else None for i in range(rows) for j in range(cols)]
    if layout == "packed":
        from ..packed import index_map, order_from_shape

        out = [None] * (rows * cols)
        for i, j, y, x in zip(*index_map(order_from_shape(rows, cols))):
            out[int(y) * cols + int(x)] = [int(i), int(j)]
        return out
    return None


def live_data(frames, problem: dict | None = None, shared: dict | None = None) -> dict:
    """What the page's live mode replays: ``programs`` (the ES texts, see the module docstring),
    ``textures`` (serial -> rows, cols, components), ``passes`` (one per frame), ``decisions``
    and ``unmirrored`` (see :func:`decisions`, :func:`unmirrored`), and ``input``: the texture the
    student may edit (the first the host uploaded; ``exponent`` e: it holds 2^e A, ``even``: e is
    kept even, as Cholesky scales; ``entries``: :func:`input_entries`) or None. ``shared``: a ``{"programs": [], "keys": {}}`` that
    several runs of one page fill together (their ``programs`` are its list)."""
    shared = {"programs": [], "keys": {}} if shared is None else shared
    programs, keys, textures, passes = shared["programs"], shared["keys"], {}, []
    for f in frames:
        program = _program(f, programs, keys)
        passes.append(_pass(f, program, programs, textures))
    first = next((s for f in frames for s in f.uploads if s in f.input_serials.values()), None)
    editable = None
    if first is not None:
        rows, cols, comps = textures[first]
        problem = problem or {}
        editable = {"texture": first, "rows": rows, "cols": cols, "components": comps,
                    "what": problem.get("input", "the input texture as uploaded"),
                    "exponent": int(problem.get("exponent", 0)), "even": bool(problem.get("even", False)),
                    "layout": problem.get("layout"), "entries": input_entries(problem.get("layout"), rows, cols)}
    return {"programs": programs, "textures": {str(k): v for k, v in textures.items()}, "passes": passes,
            "decisions": decisions(frames, problem), "unmirrored": unmirrored(frames), "input": editable}


#: What a page holds besides its own run, for the student to switch to: these orders n (each a
#: recording of its own, live only) and these seeds (each the first upload of the input texture,
#: replayed through the same passes and mirrored decisions: offered where the page mirrors every
#: decision of the run).
CHOICE_N = (4, 6, 8)
CHOICE_SEEDS = (0, 1, 2)


def _first_uploads(frames) -> dict:
    """serial -> the first contents the host gave each texture that a pass reads."""
    out = {}
    for f in frames:
        read = set(f.input_serials.values())
        for serial, values in f.uploads.items():
            if serial in read and serial not in out:
                out[serial] = values
    return out


def _seed_data(frames, problem, other) -> dict:
    """A held seed of a run whose frames are ``frames``: the seed run's (``other``, a Recorder)
    first uploads that differ from the run's (the input matrix; Gauss-Jordan's B too), base64
    float32, and the exponent of its input (see :func:`live_data`)."""
    mine, theirs = _first_uploads(frames), _first_uploads(other.frames)
    ups = [[s, _b64(v)] for s, v in sorted(theirs.items())
           if s not in mine or mine[s].shape != v.shape or mine[s].tobytes() != v.tobytes()]
    return {"seed": other.problem["seed"], "uploads": ups, "exponent": int(other.problem.get("exponent", 0))}


def choices(algorithm: str, n: int, seed: int, frames, *, problem: dict, shared: dict, editable: bool,
            ns=CHOICE_N, seeds=CHOICE_SEEDS) -> list:
    """The runs a page of ``algorithm`` at (n, seed), whose recorded ``frames`` and ``problem``
    it shows, holds (see :data:`CHOICE_N`): one ``{"n", "seed", "recorder", "live", "seeds"}`` per
    order of ``ns`` and n itself, in increasing n; ``recorder`` and ``live`` are None for the
    page's own run (n); ``seeds``: the held seeds (``seeds`` and ``seed``, see :func:`_seed_data`)
    where the page mirrors every decision of the run (``editable``), else ``seed`` alone."""
    from .algorithms import run

    out = []
    for m in sorted(set(ns) | {n}):
        rec = None if m == n else run(algorithm, m, seed)
        live = None
        if rec is not None:
            live = live_data(rec.frames, rec.problem, shared)
            live.pop("programs")
        own, own_problem = (frames, problem) if rec is None else (rec.frames, rec.problem)
        held = []
        for s in sorted(set(seeds) | {seed}) if editable else [seed]:
            held.append({"seed": seed, "uploads": [], "exponent": int(own_problem.get("exponent", 0))}
                        if s == seed else _seed_data(own, own_problem, run(algorithm, m, s)))
        out.append({"n": m, "seed": seed, "recorder": rec, "live": live, "seeds": held})
    return out
