"""Each fragment's arithmetic (beyond the papers, a teaching tool): for every kernel of the
algorithms of ``python -m gpgpu.show``, the expression its fragment computes, stated once here,
read by the page of ``--html`` (the panel under the mouse shows it with the fetched values
substituted and the result written) and by ``docs/stepping.md`` (the table rendered from
:data:`ARITHMETIC`).

An entry names the kernel's fetch calls (:attr:`gpgpu.record.Frame.sites`, in the order of the
kernel's text) by ``operands``, one name per call: the name stands for the value that call
fetched (a number from a one-component texture, the four components ``[r, g, b, a]`` from an
RGBA one); a name ending in ``*`` stands for the list of every value its call fetched, in the
order fetched (a loop, or one call made several times). ``formula`` is the result in a small
language that Python and JavaScript read alike: numbers, the operands, the pass's uniforms by
name (a vector uniform is a list), ``x`` and ``y`` (the fragment's column and row; no operand
is named so), ``+ - * /
%``, comparisons, parentheses, indexing ``v[i]``, and the functions of :data:`FUNCTIONS`
(``where(c, a, b)`` is ``c ? a : b``, ``pick(v, i)`` is ``v[i]`` for a computed i); an RGBA result has one formula per component, None for
a component that is no arithmetic on fetched values (an argmax's position). ``short`` is the
formula where the kernel skipped its last fetch (a reduction's partner outside the region).

``exact``: whether the formula evaluates to the written value (:func:`evaluate`) from the
recorder's notes, or from the ``replay``; where a kernel fetches more texels than the recorder
notes (:data:`gpgpu.record.MAX_FETCHES`: the blocked LU's update and panel solve) and has no
``replay``, the panel shows the expression and the fetched values it
has, and the count of the rest.

``replay``: a kernel whose loop fetches more than the recorder notes, read again from the
pass's own input textures (the recorded ones; live, this browser's): ``count`` names the uniform
of the loop's length; ``walk`` maps a list operand to its step (a pair, or a vec2 uniform's
name): it holds ``count`` texels of its call's sampler, from the texel of that call's first
noted fetch on; ``gather`` maps a list operand to (an index operand, the uniform of the folded
row width): the texels of its call's sampler at those indexes, as ``texVECTOR`` fetches them;
``here`` names operands read at the fragment's own texel; ``until`` names a walked index
operand (walked first) whose first negative entry ends the loop (ELLPACK's padding). :func:`replayed` (and page.js alike)
evaluate it; the panel shows each ``dot(a, b)`` of such a kernel as the sum of its products
(the first :data:`SHOWN_TERMS`, then ``+ ...``; the value is of them all).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

__all__ = ["Arithmetic", "ARITHMETIC", "FUNCTIONS", "evaluate", "bind", "operand_values", "agrees",
           "substituted", "number", "table", "replayed", "SHOWN_TERMS"]

#: the products of a replayed kernel's dot that the panel shows before "+ ..."
SHOWN_TERMS = 16


class Arithmetic(NamedTuple):
    """One kernel's arithmetic (see the module docstring)."""

    expression: str           # the general form, in the algorithm's names
    operands: tuple           # one name per fetch call of the kernel's file, in its text's order
    formula: object           # str, or a tuple of 4 (str or None) for an RGBA result
    exact: bool = True
    short: object = None      # the formula where the last fetch call was not made
    replay: object = None     # dict: the loop's operands read again from the pass's inputs (see REPLAY)


_SENTINEL = "3.4028234663852886e+38"   # float32's largest, the min reduction's partner outside the region

#: kernel (its glsl/ file's name) -> its arithmetic
ARITHMETIC = {
    "copy": Arithmetic("A(i, j): the texel copied (ping-pong: the next pass reads it)", ("a",), "a"),
    "square_root": Arithmetic("sqrt(L(k, k)): the pivot's square root", ("a",), "sqrt(a)"),
    "normalization": Arithmetic("L(i, k) / L(k, k): the column divided by its pivot", ("a", "p"), "a / p"),
    "outer_product_subtraction": Arithmetic("L(i, j) - L(i, k) * L(j, k): the rank-1 update",
                                            ("a", "b", "c"), "a - b * c"),
    "outer_product_subtraction_computed": Arithmetic("L(i, j) - L(i, k) * L(j, k): the rank-1 update",
                                                     ("a", "b", "c"), "a - b * c"),
    "outer_product_subtraction_triad": Arithmetic("L(i, j) - L(i, k) * L(j, k): the rank-1 update",
                                                  ("a", "b", "c"), "a - b * c"),
    "inner_product_subtraction": Arithmetic(
        "L(i, j) - (L(j, 0) L(i, 0) + ... + L(j, k) L(i, k)): the inner product of finished columns",
        ("r*", "p*", "a"), "a - dot(r, p)", replay=dict(count="count", walk=dict(r=(1, 0), p=(1, 0)), here=("a",))),
    "pivot_check": Arithmetic("where(d > threshold and finite, 3e38 (ok), k (the failed pivot's column)), "
                              "d = L(k, k) or |L(k, k)|", ("d",),
                              "where(finite(d) * (where(magnitude, abs(d), d) > threshold), 3e+38, x)"),
    "min_reduction": Arithmetic("min(a, b): the smallest flag of two", ("a", "b"), "min(a, b)",
                                short=f"min(a, {_SENTINEL})"),
    "absmax_reduction": Arithmetic("max(|a|, |b|): the larger magnitude of two", ("a", "b"), "max(abs(a), abs(b))",
                                   short="max(abs(a), 0)"),
    "sum_reduction": Arithmetic("a + b: the sum of two", ("a", "b"), "a + b", short="a + 0"),
    "argmax_reduction_first": Arithmetic(
        "max(s |a|, s |b|) with its position (s = -1 where negated; |.| where absolute)", ("a", "b"),
        ("max(where(absolute, abs(a), a) * where(negate, -1, 1), where(absolute, abs(b), b) * where(negate, -1, 1))",
         None, None, None), short=("where(absolute, abs(a), a) * where(negate, -1, 1)", None, None, None)),
    "argmax_reduction": Arithmetic("the larger of a.r and b.r, with its position", ("a", "b"),
                                   ("max(a[0], b[0])", None, None, None), short=("a[0]", None, None, None)),
    "elimination": Arithmetic("A(i, j) - A(i, k) * A(k, j): the elimination step", ("a", "b", "c"), "a - b * c"),
    "pack_2x2": Arithmetic("[A(2r, 2c), A(2r, 2c+1), A(2r+1, 2c), A(2r+1, 2c+1)]: a 2 x 2 block in one RGBA texel",
                           ("a*",), ("a[0]", "a[1]", "a[2]", "a[3]")),
    "unpack_2x2": Arithmetic("P(e / 2)[2 (e.y % 2) + e.x % 2], e = (x, y) + origin: an element out of its block",
                             ("t",), "pick(t, 2 * ((y + origin[1]) % 2) + (x + origin[0]) % 2)"),
    "panel_rgba": Arithmetic("[L(y, 4x), L(y, 4x+1), L(y, 4x+2), L(y, 4x+3)]: four columns of a row in one texel",
                             ("a", "b", "c", "d"), ("a", "b", "c", "d")),
    "pack_panel": Arithmetic("[L(e), L(e + (1, 0)), L(e + (0, 1)), L(e + (1, 1))]: a 2 x 2 block of the panel",
                             ("a", "b", "c", "d"), ("a", "b", "c", "d")),
    "panel_rows_rgba": Arithmetic("[U(4y, x), U(4y+1, x), U(4y+2, x), U(4y+3, x)]: four rows of a column in one texel",
                                  ("a", "b", "c", "d"), ("a", "b", "c", "d")),
    "blocked_update": Arithmetic(
        "A(block) - [r0.s0, r0.s1, r1.s0, r1.s1]: the rank-4 update of a 2 x 2 block (r: the panel's rows i, i+1; "
        "s: rows j, j+1)", ("r0", "r1", "s0", "s1", "A"),
        ("A[0] - dot(r0, s0)", "A[1] - dot(r0, s1)", "A[2] - dot(r1, s0)", "A[3] - dot(r1, s1)")),
    "permute_rows_2x2": Arithmetic(
        "[A(p0)'s half, A(p1)'s half]: rows p0 and p1 of the permutation gathered into a block",
        ("p", "q", "a", "b"),
        ("where(p % 2 == 0, a[0], a[2])", "where(p % 2 == 0, a[1], a[3])",
         "where(q % 2 == 0, b[0], b[2])", "where(q % 2 == 0, b[1], b[3])")),
    "row_panel_solve": Arithmetic("u_i = U(i, x) - sum over k < i of L(i, k) u_k, for i = 0 .. y: "
                                  "forward substitution with the panel's unit lower triangle",
                                  ("U*", "L*"), "U[0]", exact=False),
    "lu_blocked_update_gather": Arithmetic(
        "A(rows p0, p1 of the block) - [l0.u0, l0.u1, l1.u0, l1.u1]: the rank-4 update, rows gathered by the "
        "permutation", ("l0", "l1", "u0", "u1", "p", "q", "a", "b"),
        ("where(p % 2 == 0, a[0], a[2]) - dot(l0, u0)", "where(p % 2 == 0, a[1], a[3]) - dot(l0, u1)",
         "where(q % 2 == 0, b[0], b[2]) - dot(l1, u0)", "where(q % 2 == 0, b[1], b[3]) - dot(l1, u1)"), exact=False),
    "column_scaling": Arithmetic("A(j, i) * d(i): a column of A scaled by d", ("a", "d"), "a * d"),
    "outer_product_addition": Arithmetic("C(i, j) + A(i, k) * b(j, k): the rank-1 addition", ("c", "a", "b"),
                                         "c + a * b"),
    "pyramid_product": Arithmetic("X(i) * Y(i): the elementwise product", ("a", "b"), "a * b"),
    "sparse_ellpack": Arithmetic("sum over k < K of values(i, k) * x(columns(i, k)), up to the row's padding "
                                 "(column -1): a row of the sparse product", ("c*", "v*", "X*"), "dot(v, X)",
                                 replay=dict(count="K", walk=dict(c=(1, 0), v=(1, 0)), gather=dict(X=("c", "x_width")),
                                             until="c")),
    "fill": Arithmetic("value: the constant", (), "value"),
    "matrix_vector_inner_product": Arithmetic(
        "alpha (A(i, 0) x(0) + ... + A(i, n-1) x(n-1)) + beta Y(i): a row's inner product", ("A*", "X*", "Y"),
        "alpha * dot(A, X) + where(beta != 0, beta * Y, 0)",
        replay=dict(count="n", walk=dict(A="stride", X=(1, 0)), here=("Y",))),
    "cg_breakdown_flag": Arithmetic(
        "the old flag if set or converged, else the iteration where d.Ad is not positive (+ 0.5 where not finite), "
        "else -1", ("f", "v", "c"),
        "where((f >= 0) + (c >= 0), f, where(finite(v), where(v > 0, -1, iteration), iteration + 0.5))"),
    "scalar_quotient": Arithmetic("where(converged, 0, numerator / denominator): CG's step length",
                                  ("c", "a", "b"), "where(c >= 0, 0, a / b)"),
    "saxpy_gpu_scalar": Arithmetic("Y(i) + sign * s * X(i): the update by a scalar on the GPU", ("Y", "s", "X"),
                                   "Y + sign * s * X"),
    "cg_converged": Arithmetic("the old iteration if converged, else the iteration where r.r <= threshold, else -1",
                               ("c", "r"), "where(c >= 0, c, where(r <= threshold, iteration, -1))", short="c"),
    "saxpy": Arithmetic("alpha * X(i) + Y(i)", ("X", "Y"), "alpha * X + Y"),
}


def _where(c, a, b):
    return a if c else b


#: the functions a formula may call, as Python evaluates them (page.js defines the same names)
FUNCTIONS = {"sqrt": math.sqrt, "abs": abs, "min": min, "max": max, "where": _where,
             "pick": lambda v, i: v[int(i)], "finite": lambda v: bool(np.isfinite(v)), "dot": lambda a, b: sum(float(p) * float(q) for p, q in zip(a, b))}


def number(v) -> str:
    """A float32 value in the fewest digits that read back as the same float32 (as page.js's
    ``exact`` writes it)."""
    v = float(v)
    if not math.isfinite(v):
        return "nan" if v != v else ("inf" if v > 0 else "-inf")
    return np.format_float_positional(np.float32(v), unique=True, trim="-") if 1e-4 <= abs(v) < 1e16 or v == 0 \
        else np.format_float_scientific(np.float32(v), unique=True, trim="-")


def _uniform(v):
    a = np.atleast_1d(np.asarray(v, dtype=np.float64)).reshape(-1)
    return float(a[0]) if a.size == 1 else [float(u) for u in a]


def _texel(values, tx: int, ty: int):
    v = values[ty, tx]
    return float(v) if np.ndim(v) == 0 else [float(u) for u in v]


def operand_values(frame, x: int, y: int) -> list:
    """[(site, value), ...]: the fetches the recorder noted for fragment (x, y), in the order
    made, each with the value it read (from the pass's input snapshot)."""
    out = []
    for i in range(min(int(frame.fetch_count[y, x]), _max_fetches())):
        site = int(frame.fetch_sites[y, x, i])
        sampler = frame.sites[site][0]
        tx, ty = (int(c) for c in frame.fetch_texels[y, x, i])
        out.append((site, _texel(frame.inputs[sampler], tx, ty)))
    return out


def _site(entry: Arithmetic, name: str) -> int:
    return [o.rstrip("*") for o in entry.operands].index(name)


def replayed(frame, x: int, y: int):
    """name -> value of every operand of fragment (x, y) of a pass whose kernel has a ``replay``
    (the module docstring), read from the pass's input snapshots, with its uniforms, x and y; None
    where a texel it needs is not there (no input, outside it, a walk's first fetch not noted)."""
    entry = ARITHMETIC[frame.file.rsplit(".", 1)[0]]
    r, names = entry.replay, {k: _uniform(v) for k, v in frame.uniforms.items()}
    n = int(names[r["count"]])
    first = {}
    for i in range(min(int(frame.fetch_count[y, x]), _max_fetches())):
        first.setdefault(int(frame.fetch_sites[y, x, i]), tuple(int(c) for c in frame.fetch_texels[y, x, i]))

    def at(name, tx, ty):
        values = frame.inputs.get(frame.sites[_site(entry, name)][0])
        ok = values is not None and 0 <= tx < values.shape[1] and 0 <= ty < values.shape[0]
        return _texel(values, tx, ty) if ok else None

    cut = n
    for name, step in r.get("walk", {}).items():
        d = names[step] if isinstance(step, str) else step
        s = first.get(_site(entry, name)) if cut else (0, 0)
        names[name] = None if s is None else [at(name, s[0] + k * int(d[0]), s[1] + k * int(d[1])) for k in range(cut)]
        if name == r.get("until") and names[name] is not None:     # the loop stops at a negative index
            cut = next((k for k, j in enumerate(names[name]) if j is not None and j < 0), cut)
            names[name] = names[name][:cut]
    for name, (index, width) in r.get("gather", {}).items():
        w = int(names[width])
        names[name] = None if names[index] is None else [at(name, int(j) % w, int(j) // w) for j in names[index]]
    for name in r.get("here", ()):
        names[name] = at(name, x, y)
    flat = [u for v in names.values() for u in (v if isinstance(v, list) else [v])]
    return None if any(u is None for u in flat) else dict(names, x=x, y=y)


def _max_fetches() -> int:
    from ..record import MAX_FETCHES
    return MAX_FETCHES


def bind(entry: Arithmetic, fetched: list, complete: bool):
    """(the formula to evaluate, name -> value) from ``fetched`` [(site, value)] (every fetch of
    the fragment where ``complete``), or (None, the names bound) where the operands do not all
    hold one recorded value (the formula is then shown, not evaluated)."""
    names, made = {}, {}
    for site, value in fetched:
        made.setdefault(site, []).append(value)
    ok = complete
    formula = entry.formula
    for site, name in enumerate(entry.operands):
        values = made.get(site, [])
        if name.endswith("*"):
            names[name[:-1]] = values
        elif len(values) == 1:
            names[name] = values[0]
        elif not values and site == len(entry.operands) - 1 and entry.short is not None:
            formula = entry.short
        else:
            ok = False
    return (formula if ok and entry.exact else None), names


def evaluate(formula: str, names: dict) -> float:
    """The formula's value in float64 (Python's arithmetic, :data:`FUNCTIONS`)."""
    with np.errstate(all="ignore"):
        return float(eval(formula, {"__builtins__": {}}, dict(FUNCTIONS, **names)))   # the table's own text


def _text(v) -> str:
    return "[" + ", ".join(number(u) for u in v) + "]" if isinstance(v, list) else (
        "(" + number(v) + ")" if float(v) < 0 else number(v))


def _sum_text(a: list, b: list) -> str:
    terms = [f"{_text(p)} * {_text(q)}" for p, q in zip(a, b)]
    more = " + ..." if len(terms) > SHOWN_TERMS else ""
    return "(" + " + ".join(terms[:SHOWN_TERMS]) + more + ")" if terms else "0"


def substituted(formula: str, names: dict, expand: bool = False) -> str:
    """The formula with each name replaced by its value (float32 digits; a list as [a, b, ...]);
    where ``expand`` (a replayed kernel), ``dot(a, b)`` of two lists as the sum of its products."""
    import re

    def name(w):
        return _text(names[w]) if w in names else w

    def one(m):
        a, b = m.group(1), m.group(2)
        if a is None:
            return name(m.group(0))
        if expand and isinstance(names.get(a), list) and isinstance(names.get(b), list):
            return _sum_text(names[a], names[b])
        return "dot(" + name(a) + ", " + name(b) + ")"

    return re.sub(r"\bdot\(\s*([A-Za-z_]\w*)\s*,\s*([A-Za-z_]\w*)\s*\)|\b[A-Za-z_]\w*\b(?!\s*\()", one, formula)


def agrees(value: float, result: float, numbers) -> bool:
    """Whether a float64 evaluation and a float32 written value agree within float32 rounding: a few
    units of 2^-24 of the largest magnitude among the result, the operands and their products."""
    flat = [abs(float(u)) for v in numbers for u in (v if isinstance(v, list) else [v]) if np.isfinite(u)]
    m = max(flat + [abs(result), 1e-30])
    scale = max(abs(result), m, m * m) * (len(flat) + 2)
    return value == result or abs(value - result) <= 4 * 2.0 ** -24 * scale


def _panel(e: Arithmetic) -> str:
    if not e.exact:
        return "shown, with the fetched values the recorder notes"
    return "evaluated, its loop read again from the pass's inputs" if e.replay else "evaluated"


def table() -> str:
    """The expression table of docs/stepping.md: one row per kernel."""
    rows = ["| kernel | what a fragment computes | operands (its fetch calls, in the file's order) | the panel |",
            "|---|---|---|---|"]
    for name, e in ARITHMETIC.items():
        formula = e.formula if isinstance(e.formula, str) else "[" + ", ".join(f or "position" for f in e.formula) + "]"
        ops = ", ".join(e.operands) or "none"
        what = e.expression.replace("|", "\\|")
        rows.append(f"| `{name}` | {what} (`{formula}`) | {ops} | "
                    f"{_panel(e)} |")
    return "\n".join(rows)
