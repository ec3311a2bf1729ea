"""Reductions by rasterization: sum, max, min, absmax, argmax.

Paper 000 (level 1 kernels: sum, abs-max, min and max reductions, "Multipass") and paper 003
(Figs. 2-3: pad to a power of two with the identity, then combine pairs until one is left).

Two strategies:

``"pingpong"`` (default)
    Each pass halves the length along one axis: fragment i of the output combines input
    elements 2i and 2i+1, whose indexes the rasterizer interpolates into T0 and T1 from the
    corners of one rectangle (T0.x = 2 V.x - 0.5, T1.x = 2 V.x + 0.5). An odd length is
    padded by the identity inside the kernel (the partner past the end is not read). Two
    temporaries alternate (the "ping-ponging" of buffers paper 003 heard recommended and set
    aside for its pyramid): pass 1 renders into A, pass 2 into B, pass 3 into A again, ...,
    the last into the result; ceil(log2 n) passes.
``"pyramid"`` (sum only; Corrigan, paper 003)
    The vector is copied into a texture of the next power-of-two length padded with zeros,
    then reduced through a pyramid of textures of lengths 2^(p-1), ..., 2, 1, one per level.
``"fan"`` (beyond the papers, a speed option)
    As ``"pingpong"``, but each fragment combines ``FAN`` (32) consecutive texels, whose first
    the rasterizer interpolates into T0 (T0.x = 32 V.x - 15.5): ceil(log32 n) passes instead
    of ceil(log2 n) (a row of 4096: 3 instead of 12). On a GPU where a pass costs more than the
    texels it reads (the NVIDIA H200 here) fewer passes are faster; max, min and absmax of
    finite values equal pingpong's, sums differ only by float32 rounding (another order of the
    additions). (An infinite extreme stays infinite here; pingpong's padding of an odd length
    by the largest float can turn it into that float.)

Along a whole vector, along each row (``axis=1``) or each column (``axis=0``) of a matrix,
or over a whole matrix (columns first, then the row of column results). Argmax carries the
value and its (x, y) position in an RGBA32F stream; a tie keeps the first element, so the
first maximum wins (as BLAS idamax).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .geometry import Rect
from .kernel import Kernel
from .stream import Operands, Stream, borrow, give_back

__all__ = ["reduce", "argmax", "OPS", "reduce_region", "reduce_regions", "argmax_region", "reduce_terms",
           "reduce_into", "argmin_blocking_ratio", "dot_fan", "dot_pyramid", "dot_fan_texture", "plane_dots_fan"]

#: op -> kernel for one halving pass; each fragment reads 2 texels and writes 1.
OPS = {
    "sum": Kernel("sum_reduction", texels=3, doc="000 level 1 sum reduction; 003 Fig. 3"),
    "max": Kernel("max_reduction", texels=3, doc="000 level 1 smax"),
    "min": Kernel("min_reduction", texels=3, doc="000 level 1 smin"),
    "absmax": Kernel("absmax_reduction", texels=3, doc="000 level 1 inf_norm"),
}
ARGMAX_FIRST = Kernel("argmax_reduction_first", texels=3, doc="004 pivot search, first pass")
ARGMAX_STEP = Kernel("argmax_reduction", texels=9, doc="004 pivot search, (value, x, y) pairs")
#: texels added per fragment by the "fan" strategy
FAN = 32
#: op -> kernel for one fan pass (the "fan" strategy): each fragment combines FAN texels
FAN_OPS = {op: Kernel("reduction_fan", texels=FAN + 1, defines={"FAN": FAN, "OP": i}, label=f"{op}_reduction_fan",
                      doc=f"{op} of FAN texels a fragment (beyond the papers)")
           for i, op in enumerate(("sum", "max", "min", "absmax"))}
SUM_FAN = FAN_OPS["sum"]
ARGMAX_FAN_FIRST = Kernel("argmax_reduction_fan_first", texels=FAN + 1, defines={"FAN": FAN},
                          label="argmax_reduction_fan_first", doc="pivot search, FAN texels a fragment (beyond)")
#: (term, op) -> the first pass of a fan reduction of an element-wise term of two streams
#: (beyond the papers): the term computed where it is reduced, not in a pass of its own
FAN_TERMS = {
    ("product", "sum"): Kernel("reduction_fan", texels=2 * FAN + 1, defines={"FAN": FAN, "OP": 0, "TERM": 1},
                               label="dot_reduction_fan", doc="inner product, FAN products a fragment (beyond)"),
    ("step_ratio", "min"): Kernel("reduction_fan", texels=2 * FAN + 1, defines={"FAN": FAN, "OP": 2, "TERM": 2},
                                  label="step_ratio_min_fan", doc="000 line search, FAN ratios a fragment (beyond)"),
    ("steps_product", "sum"): Kernel("reduction_fan", texels=4 * FAN + 1, defines={"FAN": FAN, "OP": 0, "TERM": 3},
                                     label="steps_dot_reduction_fan",
                                     doc="(x + a dx)^T (s + b ds), FAN terms a fragment (beyond)"),
}
#: the first pass of the k inner products of a stack of planes with a vector (beyond the papers:
#: 003's Fig. 1 product and the first fan pass in one; :func:`plane_dots_fan`)
PLANE_DOT_FAN = Kernel("plane_dot_fan", texels=2 * FAN + 1, defines={"FAN": FAN},
                       doc="002 (7)-(8): k inner products, FAN products a fragment (beyond)")
ARGMAX_FAN_FIRST_BLOCKING = Kernel("argmax_reduction_fan_first", texels=2 * FAN + 1,
                                   defines={"FAN": FAN, "BLOCKING": 1}, label="blocking_ratio_argmax_fan_first",
                                   doc="the blocking index's search, FAN ratios a fragment (beyond)")
#: (value, x, y) candidates compared a fragment by the pivot search's later passes: 2 FAN, so
#: that a column of up to 2048 (32 x 64) is searched in two passes
ARGMAX_FAN_STEP = 2 * FAN
ARGMAX_FAN = Kernel("argmax_reduction_fan", texels=4 * ARGMAX_FAN_STEP + 4, defines={"FAN": ARGMAX_FAN_STEP},
                    label="argmax_reduction_fan", doc="pivot search, 2 FAN (value, x, y) a fragment (beyond)")
STRATEGIES = ("pingpong", "pyramid", "fan")
COPY = Kernel("copy", texels=2, doc="000 Algorithm 2 copy kernel")
FILL = Kernel("fill", texels=1, doc="fill with a constant")
#: Corrigan's product of two vectors into the pyramid's base (paper 003, Figs. 1-2)
PYRAMID_PRODUCT = Kernel("pyramid_product", texels=3, doc="003 Figs. 1-2: x .* y into the pyramid's base")


def chunk_length(length: int) -> int:
    """Entries a fragment adds in the first pass of a two-pass sum (chunks of L entries a
    fragment, then one fragment a total; beyond the papers): max(32, ceil(sqrt(length)))."""
    return max(32, math.isqrt(max(int(length), 1) - 1) + 1)


class ReductionKernels(NamedTuple):
    """The kernels of a reduction's passes, as :func:`_halving` and :func:`_fan` draw them:
    ``first`` for pass 1 (with ``uniforms`` added to its own), ``step`` for every later pass,
    each texel of ``components`` (4: argmax's (value, x, y, 0)) components."""
    first: Kernel
    step: Kernel
    components: int = 1
    uniforms: dict | None = None


def _last(rows: int, cols: int, at, T0, T1=None) -> Rect:
    """The rectangle of a reduction's last pass: its rows x cols results at texel ``at`` of the
    output (the indexes interpolated as if the results began at (0, 0))."""
    ax, ay = at
    if (ax, ay) == (0, 0):
        return Rect.covering(0, 0, cols, rows, T0, T1)
    shift = lambda T: None if T is None else (lambda X, Y: T(X - ax, Y - ay))
    return Rect.covering(ax, ay, ax + cols, ay + rows, shift(T0), shift(T1))


def _halving(kernels: ReductionKernels, src: Stream, region, axis: str, out: Stream | None,
             at=(0, 0)) -> Stream:
    """Reduce ``region`` (x0, y0, x1, y1) of ``src`` along ``axis`` ('x' or 'y') by ping-pong halving,
    with ``kernels``' first and step kernels.

    Returns ``out`` (or a new stream) holding one texel per row (axis 'x') or per column, from
    texel ``at`` of ``out`` on (its last pass renders there).

    The "ping-ponging" of buffers that paper 003 heard recommended on the gpgpu.org forums (and
    set aside for its pyramid, "the intuitive (yet inefficient) route"): two temporaries, A of
    ceil(n/2) texels along the axis and B of ceil(n/4), are borrowed once; pass 1 renders into
    A, pass 2 reads A and renders into B, pass 3 reads B and renders into A again (into its
    first ceil(n/8) texels; the ``limit`` uniform stops the reads at the level's length, so
    what lies beyond in the larger texture is never read), and so on; only the last pass
    renders elsewhere, into ``out``. Whatever n, two textures are written before the result.
    """
    first, step, components, uniforms = kernels
    x0, y0, x1, y1 = region
    w, h = x1 - x0, y1 - y0
    n = w if axis == "x" else h
    cur, kernel = src, first
    pair: list = []                 # the two alternating temporaries, borrowed on first need
    level = 0
    while True:
        n_out = (n + 1) // 2
        rows, cols = (h, n_out) if axis == "x" else (n_out, w)
        if n_out == 1:
            target = out if out is not None else Stream(rows, cols, components=components, zero=False)
        else:
            if len(pair) < 2:        # A: this first level's size; B: the second level's
                pair.append(borrow(rows, cols, components))
            target = pair[level % 2]
        if axis == "x":
            T0 = lambda X, Y, x0=x0, y0=y0: (x0 + 2 * X - 0.5, y0 + Y)
            T1 = lambda X, Y, x0=x0, y0=y0: (x0 + 2 * X + 0.5, y0 + Y)
        else:
            T0 = lambda X, Y, x0=x0, y0=y0: (x0 + X, y0 + 2 * Y - 0.5)
            T1 = lambda X, Y, x0=x0, y0=y0: (x0 + X, y0 + 2 * Y + 0.5)
        u = {"limit": (float(x1), float(y1))}
        if uniforms and kernel is first:
            u.update(uniforms)
        rect = _last(rows, cols, at, T0, T1) if n_out == 1 else Rect.covering(0, 0, cols, rows, T0, T1)
        kernel.draw(target, rect, {"S": cur}, u)
        if n_out == 1:
            break
        cur, kernel, n = target, step, n_out
        x0, y0, x1, y1 = 0, 0, cols, rows
        level += 1
    give_back(*pair)
    return target


def _fan_reduce(op: str, src: Stream, region, axis: str, out: Stream | None) -> Stream:
    """Reduce ``region`` of ``src`` along ``axis`` ('x' or 'y'), FAN texels a fragment a pass
    (the ``"fan"`` strategy): as :func:`_halving`, with T0 = FAN V - (FAN - 1) / 2 along the axis."""
    return _fan(ReductionKernels(FAN_OPS[op], FAN_OPS[op]), src, region, axis, out)


def _fan(kernels: ReductionKernels, src: Stream, region, axis: str, out: Stream | None, at=(0, 0),
         others: dict | None = None) -> Stream:
    """:func:`_halving` with FAN texels a fragment: ceil(log_FAN n) passes instead of ceil(log2 n).
    (A kernel compiled with another FAN define combines that many: the pivot search's later
    passes.) ``others``: more input streams of the first pass (a term's second operand)."""
    first, step, components, uniforms = kernels
    x0, y0, x1, y1 = region
    w, h = x1 - x0, y1 - y0
    n = w if axis == "x" else h
    cur, kernel, temps = src, first, []
    while True:
        fan = kernel.defines.get("FAN", FAN)
        n_out = -(-n // fan)
        rows, cols = (h, n_out) if axis == "x" else (n_out, w)
        if n_out == 1:
            target = out if out is not None else Stream(rows, cols, components=components, zero=False)
        else:
            target = borrow(rows, cols, components)
            temps.append(target)
        if axis == "x":
            T0 = lambda X, Y, x0=x0, y0=y0, f=fan: (x0 + f * X - (f - 1) / 2, y0 + Y)
        else:
            T0 = lambda X, Y, x0=x0, y0=y0, f=fan: (x0 + X, y0 + f * Y - (f - 1) / 2)
        u = {"limit": (float(x1), float(y1)), "step": (1.0, 0.0) if axis == "x" else (0.0, 1.0)}
        if uniforms and kernel is first:
            u.update(uniforms)
        rect = _last(rows, cols, at, T0) if n_out == 1 else Rect.covering(0, 0, cols, rows, T0)
        inputs = {"S": cur}
        if others and cur is src:
            inputs.update(others)
        kernel.draw(target, rect, inputs, u)
        if n_out == 1:
            break
        cur, kernel, n = target, step, n_out
        x0, y0, x1, y1 = 0, 0, cols, rows
    give_back(*temps)
    return target


def _pyramid_base(region) -> tuple:
    """The pyramid's base (paper 003, Fig. 2) for a region (x0, y0, x1, y1): a borrowed
    texture whose sides are the next powers of two of the region's, its padding filled with the
    additive identity; returns (base, w, h), the region's data to be drawn into its
    (0, 0, w, h)."""
    x0, y0, x1, y1 = region
    w, h = x1 - x0, y1 - y0
    pw, ph = 1 << max(0, math.ceil(math.log2(w))), 1 << max(0, math.ceil(math.log2(h)))
    base = borrow(ph, pw)
    if pw > w:   # padding with the additive identity (paper 003, Fig. 2)
        FILL.draw(base, Rect.covering(w, 0, pw, ph), uniforms={"value": 0.0})
    if ph > h:
        FILL.draw(base, Rect.covering(0, h, w, ph), uniforms={"value": 0.0})
    return base, w, h


def _pyramid_levels(base: Stream, out: Stream | None) -> Stream:
    """Fig. 3 of paper 003 over a base of power-of-two sides (given back here): pairs combined
    level by level, along the rows first and then down the one column left, until one texel
    is left (in ``out``, else a new 1 x 1 stream). The levels come from the pool of
    temporaries, so the pyramid is built once per size and reused, as the paper's
    RenderTextures were."""
    cur, temps = base, [base]
    while cur.cols > 1 or cur.rows > 1:
        if cur.cols > 1:
            shape = (cur.rows, cur.cols // 2)
            T0, T1 = (lambda X, Y: (2 * X - 0.5, Y)), (lambda X, Y: (2 * X + 0.5, Y))
        else:
            shape = (cur.rows // 2, 1)
            T0, T1 = (lambda X, Y: (X, 2 * Y - 0.5)), (lambda X, Y: (X, 2 * Y + 0.5))
        last = shape == (1, 1)
        target = out if (last and out is not None) else (Stream(1, 1) if last else borrow(*shape))
        OPS["sum"].draw(target, Rect.covering(0, 0, shape[1], shape[0], T0=T0, T1=T1), {"S": cur},
                        {"limit": (float(cur.cols), float(cur.rows))})
        cur = target
        if not last:
            temps.append(target)
    if cur is base:  # a single element: the pyramid is the padded base itself
        cur = out if out is not None else Stream(1, 1)
        COPY.draw(cur, Rect.covering(0, 0, 1, 1, T0=lambda X, Y: (X, Y)), {"A": base})
    give_back(*temps)
    return cur


def _pyramid_sum(src: Stream, region, out: Stream | None) -> Stream:
    """Corrigan's pyramid (paper 003, Figs. 2-3): the region is copied into a texture whose sides
    are the next powers of two, padded with the additive identity (Fig. 2), then pairs are
    combined level by level (Fig. 3) until one texel is left (:func:`_pyramid_levels`)."""
    x0, y0 = region[:2]
    base, w, h = _pyramid_base(region)
    COPY.draw(base, Rect.covering(0, 0, w, h, T0=lambda X, Y: (x0 + X, y0 + Y)), {"A": src})
    return _pyramid_levels(base, out)


def dot_pyramid(x: Stream, y: Stream, out: Stream | None = None) -> Stream:
    """x^T y as Corrigan computes it (paper 003, Figs. 1-3): "component wise multiplication into
    a temporary vector (Figure 1) ... The temporary vector has dimension of the next highest
    power of two (Figure 2)": the products are drawn straight into the pyramid's base, padded
    with zeros, then summed by its levels (Fig. 3). One pass fewer than the product into a
    temporary of x's shape copied into the base (:func:`_pyramid_sum` of that product), with
    the same additions in the same order. A folded vector's full rows and last row are two
    pyramids whose results are added (:func:`reduce_regions`). Returns ``out`` (else a new
    1 x 1 stream)."""
    if x.shape != y.shape:
        raise ValueError(f"dot_pyramid: shapes differ, {x.shape} vs {y.shape}")
    regions = x.regions()
    parts = []
    for region in regions:
        x0, y0 = region[:2]
        base, w, h = _pyramid_base(region)
        PYRAMID_PRODUCT.draw(base, Rect.covering(0, 0, w, h, T0=lambda X, Y: (x0 + X, y0 + Y)), {"X": x, "Y": y})
        parts.append(_pyramid_levels(base, out if len(regions) == 1 else borrow(1, 1)))
    return parts[0] if len(parts) == 1 else _combine(parts, "sum", out)


def reduce_region(src: Stream, op: str, region=None, axis=None, strategy: str = "pingpong",
                  out: Stream | None = None) -> Stream:
    """Reduce a rectangular region of a stream on the GPU; returns a stream (no read-back).

    ``axis=None`` reduces everything to 1 x 1; ``axis=1`` reduces along each row (result
    rows x 1); ``axis=0`` along each column (result 1 x cols).
    """
    if op not in OPS:
        raise ValueError(f"unknown reduction {op!r}; use one of {sorted(OPS)} (or argmax())")
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(map(repr, STRATEGIES))}, got {strategy!r}")
    if region is None and axis is None and len(src.regions()) > 1:
        return reduce_regions(src, op, src.regions(), strategy, out)
    x0, y0, x1, y1 = region or (0, 0, src.cols, src.rows)
    k = ReductionKernels(OPS[op], OPS[op])       # halving passes, one kernel
    if strategy == "pyramid":
        if op != "sum" or axis is not None:
            raise ValueError("the pyramid strategy (paper 003) is a sum over everything (op='sum', axis=None)")
        return _pyramid_sum(src, (x0, y0, x1, y1), out)
    if strategy == "fan":
        if axis == 1 or (axis is None and y1 - y0 == 1):
            return _fan_reduce(op, src, (x0, y0, x1, y1), "x", out)
        if axis == 0 or (axis is None and x1 - x0 == 1):
            return _fan_reduce(op, src, (x0, y0, x1, y1), "y", out)
        if axis is not None:
            raise ValueError(f"axis must be None, 0 or 1, got {axis!r}")
        cols = _fan_reduce(op, src, (x0, y0, x1, y1), "y", borrow(1, x1 - x0))
        res = _fan_reduce(op, cols, (0, 0, x1 - x0, 1), "x", out)
        give_back(cols)
        return res
    if axis == 1:
        return _halving(k, src, (x0, y0, x1, y1), "x", out)
    if axis == 0:
        return _halving(k, src, (x0, y0, x1, y1), "y", out)
    if axis is not None:
        raise ValueError(f"axis must be None, 0 or 1, got {axis!r}")
    if y1 - y0 == 1:
        return _halving(k, src, (x0, y0, x1, y1), "x", out)
    if x1 - x0 == 1:
        return _halving(k, src, (x0, y0, x1, y1), "y", out)
    cols = _halving(k, src, (x0, y0, x1, y1), "y", borrow(1, x1 - x0))
    res = _halving(k, cols, (0, 0, x1 - x0, 1), "x", out)
    give_back(cols)
    return res


def reduce_terms(term: str, op: str, x: Stream, y: Stream, out: Stream | None = None,
                 steps: tuple | None = None, at: int = 0) -> Stream:
    """``op`` over the element-wise ``term`` of one-row streams of one shape, on the GPU, to a
    1 x 1 stream (no read-back): "product" with "sum" (x^T y), "step_ratio" with "min" (the line
    search of Algorithm 3 of 000, (4.15)-(4.16)), or "steps_product" with "sum" and ``steps =
    (a, s, b, ds)``: (a y + x)^T (b ds + s), x and s stepped along y and ds (Mehrotra's
    mu_aff). Beyond the papers: the term is computed in the first pass of the "fan" reduction
    instead of in passes of its own (``elementwise_product``, ``step_ratio``, two ``saxpy``),
    fewer passes; the same minimum, the same sums up to float32 rounding (a compiler may fuse
    a product into an addition). ``at``: the result goes to texel (at, 0) of ``out`` (several
    results in one texture, read back at once)."""
    kernel = FAN_TERMS.get((term, op))
    if kernel is None:
        raise ValueError(f"reduce_terms has {sorted(FAN_TERMS)}, not {(term, op)!r}")
    if at and (out is None or not 0 <= at < out.cols):
        raise ValueError(f"reduce_terms: at={at} needs an out stream with texel {at} (got "
                         f"{'none' if out is None else f'{out.rows} x {out.cols}'})")
    if (steps is None) != (term != "steps_product"):
        raise ValueError("reduce_terms: steps=(a, s, b, ds) goes with term 'steps_product' and only with it")
    streams = [x, y] + ([steps[1], steps[3]] if steps else [])
    if any(s.shape != x.shape for s in streams) or x.rows != 1:
        raise ValueError(f"reduce_terms takes one-row streams of one shape, got {[s.shape for s in streams]}")
    others = {"Y": y} if steps is None else {"Y": y, "Z": steps[1], "W": steps[3]}
    u = None if steps is None else {"a": float(steps[0]), "b": float(steps[2])}
    return _fan(ReductionKernels(kernel, FAN_OPS[op], 1, u), x, (0, 0, x.cols, 1), "x", out, at=(at, 0),
                others=others)


def reduce_into(op: str, x: Stream, out: Stream, at: int) -> Stream:
    """``op`` ("sum", "max", "min" or "absmax") over a one-row stream by the "fan" strategy,
    the result rendered into texel (at, 0) of ``out`` (beyond the papers: several results in one
    texture, read back at once). Answers ``out``."""
    if op not in FAN_OPS or x.rows != 1 or not 0 <= at < out.cols:
        raise ValueError(f"reduce_into: op one of {sorted(FAN_OPS)} over a one-row stream into texel {at} of "
                         f"a {out.rows} x {out.cols} stream, got {op!r} over {x.shape}")
    return _fan(ReductionKernels(FAN_OPS[op], FAN_OPS[op]), x, (0, 0, x.cols, 1), "x", out, at=(at, 0))


def argmin_blocking_ratio(x: Stream, dx: Stream) -> Stream:
    """(value, i, 0) with value = -min_i r_i and i its first argmin, r_i = -x_i / dx_i where
    dx_i < 0 and 3e38 elsewhere (the blocking index of Mehrotra's step-length heuristic), as
    ``argmax_stream(ratios, negate=True, fan=True)`` over the ``blocking_ratio`` kernel's
    output, with the ratios computed in the search's first pass (beyond the papers: one pass
    fewer, the same answer). A borrowed 1 x 1 RGBA stream; x and dx one-row streams."""
    if x.shape != dx.shape or x.rows != 1:
        raise ValueError(f"argmin_blocking_ratio takes two one-row streams of one shape, got {x.shape} and {dx.shape}")
    kernels = ReductionKernels(ARGMAX_FAN_FIRST_BLOCKING, ARGMAX_FAN, 4, {"absolute": False, "negate": True})
    return _fan(kernels, x, (0, 0, x.cols, 1), "x", borrow(1, 1, 4), others={"DX": dx})


def reduce_regions(src: Stream, op: str, regions: list, strategy: str = "pingpong",
                   out: Stream | None = None) -> Stream:
    """Reduce the union of several rectangles of ``src`` to 1 x 1 (a folded vector's full rows
    and the used part of its last row)."""
    if len(regions) == 1:
        return reduce_region(src, op, regions[0], strategy=strategy, out=out)
    return _combine([reduce_region(src, op, r, strategy=strategy, out=borrow(1, 1)) for r in regions], op, out)


def _combine(parts: list, op: str, out: Stream | None) -> Stream:
    """Reduce the 1 x 1 results of several regions (a folded vector's full rows and its last
    row) to one: copied side by side into a 1 x k stream, then reduced."""
    row = borrow(1, len(parts))
    for i, part in enumerate(parts):
        COPY.draw(row, Rect.covering(i, 0, i + 1, 1, T0=(0.5, 0.5)), {"A": part})
        give_back(part)
    res = reduce_region(row, op, out=out)
    give_back(row)
    return res


def argmax_region(src: Stream, region=None, absolute: bool = False, negate: bool = False,
                  fan: bool = False) -> tuple:
    """(value, x, y) of the largest element (largest magnitude with ``absolute``; of the negated
    values with ``negate``, so -value is the minimum and (x, y) the first argmin) of a region.

    Columns are reduced first, then the row of column winners, so a tie goes to the first
    element in column-major order. One read-back of one texel. ``fan``: as
    :func:`argmax_stream`'s.
    """
    res = argmax_stream(src, region, absolute, negate, fan)
    v = res.read_texel(0, 0)
    give_back(res)
    return float(v[0]), int(v[1]), int(v[2])


def argmax_stream(src: Stream, region=None, absolute: bool = False, negate: bool = False,
                  fan: bool = False, out: Stream | None = None, at: int = 0) -> Stream:
    """As :func:`argmax_region`, but the answer stays on the GPU: a borrowed 1 x 1 RGBA stream
    (value, x, y, 0) that the caller gives back (``gpgpu.stream.give_back``). ``fan=True``
    (beyond the papers) compares FAN (32) candidates a fragment in the first pass and 2 FAN in
    the later ones, instead of pairs: the same answer (ties to the first, column-major) in
    1 + ceil(log_64 (n / 32)) passes instead of ceil(log2 n) (two up to n = 2048).
    ``out`` (an RGBA stream of one row, kept by the caller): the last pass renders the answer
    into its texel (``at``, 0) instead, and ``out`` is returned (an LU's record of pivots)."""
    x0, y0, x1, y1 = region or (0, 0, src.cols, src.rows)
    u = {"absolute": bool(absolute), "negate": bool(negate)}
    reduce_, first, step = (_fan, ARGMAX_FAN_FIRST, ARGMAX_FAN) if fan else (_halving, ARGMAX_FIRST, ARGMAX_STEP)
    if out is not None and (out.components != 4 or out.rows != 1 or not 0 <= at < out.cols):
        raise ValueError(f"argmax_stream: out must be an RGBA stream of one row with texel {at}, got "
                         f"{out.rows} x {out.cols} of {out.components} component(s)")
    target, place = (borrow(1, 1, 4), (0, 0)) if out is None else (out, (at, 0))
    kernels = ReductionKernels(first, step, 4, u)
    if y1 - y0 == 1:
        res = reduce_(kernels, src, (x0, y0, x1, y1), "x", target, place)
    elif x1 - x0 == 1:
        res = reduce_(kernels, src, (x0, y0, x1, y1), "y", target, place)
    else:
        cols = reduce_(kernels, src, (x0, y0, x1, y1), "y", borrow(1, x1 - x0, 4))
        res = reduce_(ReductionKernels(step, step, 4), cols, (0, 0, x1 - x0, 1), "x", target, place)
        give_back(cols)
    return res


def reduce(x, op: str = "sum", axis=None, strategy: str = "pingpong"):
    """Reduce a vector or matrix by a sum, max, min, absmax or argmax on the GPU.

    Paper 000's level 1 reductions ("Multipass"): halving passes ("pingpong"), paper 003's
    padded pyramid (Figs. 2-3, "pyramid", sums over everything only) or, beyond the papers,
    32 texels a fragment ("fan"); the module docstring describes each. Over the whole array,
    along each row (``axis=1``) or down each column (``axis=0``).

    Parameters
    ----------
    x : ndarray or Stream
        The vector or matrix.
    op : {"sum", "max", "min", "absmax", "argmax"}, optional
        The reduction; "argmax" returns :func:`argmax` of x.
    axis : {None, 0, 1}, optional
        None: everything to one value; 1: along each row; 0: down each column.
    strategy : {"pingpong", "pyramid", "fan"}, optional
        The passes of the reduction.

    Returns
    -------
    float, ndarray or Stream
        For array x a float (``axis=None``) or a 1-D float64 array; for a Stream a Stream of
        1 x 1, rows x 1 or 1 x cols.

    Raises
    ------
    ValueError
        If ``op``, ``axis`` or ``strategy`` is unknown, or they do not go together.

    See Also
    --------
    argmax, gpgpu.dot, gpgpu.norm_inf

    Examples
    --------
    >>> import numpy as np
    >>> import gpgpu
    >>> A = np.arange(12.0).reshape(3, 4)
    >>> round(gpgpu.reduce(A), 3), round(gpgpu.reduce(A, "sum", strategy="pyramid"), 3)
    (66.0, 66.0)
    >>> gpgpu.reduce(A, "max", axis=0).tolist(), gpgpu.reduce(A, "min", axis=1).tolist()
    ([8.0, 9.0, 10.0, 11.0], [0.0, 4.0, 8.0])
    """
    if op == "argmax":
        if axis is not None:
            raise ValueError("argmax reduces the whole vector or matrix; axis must be None")
        return argmax(x)
    with Operands(x) as ops:
        s = ops.stream(x, "reduce input")
        res = reduce_region(s, op, axis=axis, strategy=strategy)
        if not ops.numpy:
            return res
        out = res.to_array().astype(np.float64)     # numpy in, float64 out (float32's values)
        res.release()
    return float(out.reshape(-1)[0]) if axis is None else out.reshape(-1)


def argmax(x, absolute: bool = False):
    """Find the first largest element (or largest magnitude) and its position on the GPU.

    The pivot search of paper 004: (value, x, y) triples in an RGBA stream, reduced by halving
    passes, columns first and then the row of column winners; a tie keeps the first element
    in column-major order (as BLAS idamax keeps the first). One read-back of one texel.

    Parameters
    ----------
    x : ndarray or Stream
        The vector or matrix.
    absolute : bool, optional
        Compare magnitudes |x| instead of values.

    Returns
    -------
    value : float
        The largest value (the largest magnitude with ``absolute``).
    index : int or tuple of int
        Its index for a vector, (row, col) for a matrix.

    See Also
    --------
    reduce

    Examples
    --------
    >>> import numpy as np
    >>> import gpgpu
    >>> gpgpu.argmax(np.array([1.0, 5.0, 5.0, 2.0]))
    (5.0, 1)
    >>> gpgpu.argmax(np.array([[1.0, -7.0], [3.0, 2.0]]), absolute=True)
    (7.0, (0, 1))
    """
    with Operands(x) as ops:
        s = ops.stream(x, "argmax input")
        value, col, row = argmax_region(s, absolute=absolute)
    if s.rows == 1:
        return value, col
    if s.cols == 1 and not isinstance(x, Stream) and np.ndim(x) == 1:
        return value, row
    return value, (row, col)


def dot_fan(x: Stream, y: Stream, out: Stream | None = None) -> Stream:
    """x^T y of two streams of one shape (one-row or folded vectors, or matrices) to a 1 x 1
    stream on the GPU by fan sums (beyond the papers): the products are computed in the first
    pass of the fan reduction along each row (``reduce_terms``' "product" term), FAN (32) a
    fragment, and each rectangle of the data (a folded vector's full rows and the used part of
    its last row) is then summed down its column of row sums; two rectangles' sums are added
    in one more pass. A vector of n <= 32^3 in one row: ceil(log32 n) passes (3 for n = 16384);
    folded into h rows of W: ceil(log32 W) + ceil(log32 h) (+ 1 for a partial last row). The
    same sum as 003's pyramid up to float32 rounding (another order of the additions)."""
    if x.shape != y.shape:
        raise ValueError(f"dot_fan takes two streams of one shape, got {x.shape} and {y.shape}")
    out = out if out is not None else Stream(1, 1)
    products, sums = ReductionKernels(FAN_TERMS[("product", "sum")], SUM_FAN), ReductionKernels(SUM_FAN, SUM_FAN)
    regions = x.regions()
    row = borrow(1, len(regions)) if len(regions) > 1 else None
    for i, (x0, y0, x1, y1) in enumerate(regions):
        target, at = (out, (0, 0)) if row is None else (row, (i, 0))
        if y1 - y0 == 1:
            _fan(products, x, (x0, y0, x1, y1), "x", target, at=at, others={"Y": y})
            continue
        col = borrow(y1 - y0, 1)
        _fan(products, x, (x0, y0, x1, y1), "x", col, others={"Y": y})
        _fan(sums, col, (0, 0, 1, y1 - y0), "y", target, at=at)
        give_back(col)
    if row is not None:
        _fan(sums, row, (0, 0, len(regions), 1), "x", out)
        give_back(row)
    return out


def dot_fan_texture(x: Stream, y: Stream, out: Stream) -> Stream:
    """x^T y over every texel of two streams of one shape, into the 1 x 1 ``out``: the products
    summed FAN a fragment in the first pass (``dot_fan``'s), down the columns first when there
    are several rows, then along the row of column sums (beyond the papers). Unlike
    :func:`dot_fan` it does not follow a folded vector's regions: the tail of the last row must
    read zero in x or y (as in vectors that are made zero and written over their regions only).
    ceil(log32 rows) + ceil(log32 cols) passes; a one-row stream gives ``dot_fan``'s passes."""
    if x.shape != y.shape:
        raise ValueError(f"dot_fan_texture takes two streams of one shape, got {x.shape} and {y.shape}")
    products = ReductionKernels(FAN_TERMS[("product", "sum")], SUM_FAN)
    if x.rows == 1:
        return _fan(products, x, (0, 0, x.cols, 1), "x", out, others={"Y": y})
    if x.cols == 1:
        return _fan(products, x, (0, 0, 1, x.rows), "y", out, others={"Y": y})
    cols = borrow(1, x.cols)
    _fan(products, x, (0, 0, x.cols, x.rows), "y", cols, others={"Y": y})
    _fan(ReductionKernels(SUM_FAN, SUM_FAN), cols, (0, 0, x.cols, 1), "x", out)
    give_back(cols)
    return out


def plane_dots_fan(P: Stream, k: int, v: Stream, out: Stream) -> Stream:
    """The inner products of the k planes of P (plane c at texture rows c v.rows .., each folded
    like the vector stream v) with v, into the k x 1 ``out``: ``sparse._plane_dots`` with
    ``sums="fan"`` (the products, then fan sums along each row, then, for a folded v, each
    plane's row sums moved into one row and summed), its product pass merged into the first
    fan pass (``plane_dot_fan``, which also counts the tail of a folded v's last row as 0, so
    no pass clears it): ceil(log32 v.cols) passes for a one-row v, ceil(log32 v.cols) + 1 +
    ceil(log32 v.rows) for a folded one (beyond the papers; 002's P^-1 r takes two)."""
    h, W = v.rows, v.cols
    u = {"plane_rows": h, "width": W, "entries": int(v.length)}
    products = ReductionKernels(PLANE_DOT_FAN, SUM_FAN, 1, u)
    if h == 1:
        return _fan(products, P, (0, 0, W, k), "x", out, others={"Y": v})
    row_sums = borrow(k * h, 1)
    _fan(products, P, (0, 0, W, k * h), "x", row_sums, others={"Y": v})
    by_plane = borrow(k, h)        # texel (i, r) <- row sum r h + i, as sparse._plane_dots
    COPY.draw(by_plane, Rect.covering(0, 0, h, k, T0=lambda X, Y: (0.5, (Y - 0.5) * h + X)), {"A": row_sums})
    give_back(row_sums)
    _fan(ReductionKernels(SUM_FAN, SUM_FAN), by_plane, (0, 0, h, k), "x", out)
    give_back(by_plane)
    return out
