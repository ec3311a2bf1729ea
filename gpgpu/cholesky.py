"""Cholesky decomposition by rasterization, in every form the papers compare.

Papers: 000 (Jung & O'Leary 2006) Algorithms 1-2, Figs. 3-5, Tables 1-2; 001 (Jung & O'Leary,
AD²Aᵀ) Kernels 3-5, Algorithm 5, Figs. 5-7.

``form="outer"`` (Algorithm 2 of 000 / Algorithm 5 of 001), per step k = 0 .. n-2::

    bind T, square root kernel on (k, k)              Texel
    bind S, copy the rooted pivot back                Texel
    bind T, normalization kernel on column k          Rect (k, k+1) .. (k+1, n)
    bind S, copy the normalized column back           Rect
    bind T, submatrix update                          one oversized Triangle (Fig. 5 of 001),
                                                      a square Rect (BrookGPU), or one Rect per
                                                      column (multipass)
    swap S and T
    finally the square root of (n-1, n-1) into T: the lower triangle of T is L.

``form="inner"`` (Algorithm 1 of 000, Fig. 4(a)): square root, one copy of one element,
normalization, then the inner product subtraction kernel (a dynamic loop) on column k+1.

``storage="packed"``: the rectangular packed format of 001 (section 4.3, Figs. 6 and 7),
two triangles per step in the first half of the iterations, one in the second.

``transfer="ctt"``: every pass renders into a separate framebuffer and is then copied into
its texture (copy-to-texture, BrookGPU's p-buffers on Linux, section 6.1.1 of 000).

Breakdown: after the factorization a kernel reads every pivot and a min reduction finds the
first that is not positive, on the GPU; one value comes back. ``NotPositiveDefiniteError``
names that step k.

What they return: numpy in, float64 numpy out -- the GPU computes in float32, so the values
are float32 values (scaled back by exact powers of two), given the width that numpy code
expects; Streams in, Streams out (float32 textures, left on the GPU).
"""
from __future__ import annotations

import numpy as np

from . import packed as pk
from .errors import NotPositiveDefiniteError, SingularMatrixError
from .geometry import Rect, Texel, Triangle, vertex
from .blocked import dispatch
from .dense_common import (CHOLESKY_KERNELS, WPOS, column_below_diagonal, diagonal_pieces,  # noqa: F401 (public here too)
                           first_bad_pivot, pivot_steps, power_of_two_exponent, scaled_back, scaled_float64,
                           scaled_input, scaled_stream, sqrt_inputs, validate_spd_input)
from .kernel import Kernel
from .passes import SWAP, Draw, compiled, run
from .reduce import reduce_region
from .stream import PingPong, Stream, borrow, check_array, give_back
from .blas1 import copy as copy_stream, KERNELS as BLAS1
from . import context
from .blas2 import FullLayout, gemv, KERNELS as L2, substitute

__all__ = ["cholesky", "NotPositiveDefiniteError", "cholesky_plan", "KERNELS", "factor"]


#: Kernels with their texels read + written per fragment (Table 1 of 000: bytes/frag / 4); the
#: dict of :mod:`gpgpu.dense_common`, which the blocked variant's panels draw too.
KERNELS = CHOLESKY_KERNELS

FORMS = ("outer", "inner")
UPDATES = ("triangle", "square", "columns")
INDEXES = ("swizzle", "computed", "triad")
STORAGES = ("full", "packed")
TRANSFERS = ("rtt", "ctt")
#: the pivot steps of the outer form: Algorithm 2's four passes, or one pass and one copy
PIVOTS = ("separate", "fused", "onepass")


# ---------------------------------------------------------------------------- geometry
def outer_product_triangle(k: int, m: int, index: str = "swizzle") -> Triangle:
    """The oversized triangle covering L(k+1:m, k+1:m), lower part, for step k.

    Fig. 5 of 000 draws it through P(k+1, k), P(k+1, n) and P(n+1, n); those printed
    vertices lack the half-texel offsets: their hypotenuse y = x - 1 runs through the centres
    of the superdiagonal texels, which the rasterizer may then shade or not. Fig. 5(a) of 001
    gives the same triangle with the offsets, V(k+1, k+.5), V(k+1, m), V(m+.5, m) (hypotenuse
    y = x - .5: diagonal centres inside, superdiagonal centres outside), and those are used.
    An active fragment at (j, i) gets T0 = (k+.5, i) (its neighbour L(i, k)) and T1 =
    (j, k+.5), swizzled by the kernel to the pivot (k+.5, j) = L(j, k).

    ``index="triad"`` (section 3.2 of 000): the two pairs share the invariant k, so they are
    packed into one 3-D coordinate with k "at a z coordinate which is invariant to the x and y
    coordinates": T0 = (j, i, k+.5), i.e. (T1.x, T0.y, k+.5) of the pair version, restored by
    the swizzles .zy (neighbour, (k, i)) and .zx (pivot, (k, j)).
    """
    if index == "triad":
        return Triangle([
            vertex((k + 1, k + .5), T0=(k + 1,  k + .5, k + .5)),
            vertex((k + 1, m),      T0=(k + 1,  m,      k + .5)),
            vertex((m + .5, m),     T0=(m + .5, m,      k + .5)),
        ])
    # Fig. 5(a) of 001, vertices 1, 2, 3 (the computed-index kernel ignores T1)
    return Triangle([
        vertex((k + 1, k + .5), T0=(k + .5, k + .5), T1=(k + 1, k + .5)),
        vertex((k + 1, m),      T0=(k + .5, m),      T1=(k + 1, k + .5)),
        vertex((m + .5, m),     T0=(k + .5, m),      T1=(m + .5, k + .5)),
    ])


def outer_product_square(k: int, m: int) -> Rect:
    """The square (k+1, k+1) .. (m, m) that BrookGPU had to update (Table 1(c) of 000)."""
    return Rect.covering(k + 1, k + 1, m, m, T0=lambda x, y: (k + .5, y), T1=lambda x, y: (x, k + .5))


def outer_product_columns(k: int, m: int) -> list:
    """The column-wise multipass update (section 3.2 of 000): column j, rows j .. m-1, one pass each."""
    return [Rect.covering(j, j, j + 1, m, T0=lambda x, y: (k + .5, y), T1=lambda x, y: (x, k + .5))
            for j in range(k + 1, m)]


def packed_triangles_first_half(k: int, m: int) -> Triangle:
    """The two triangles of the k-th outer product subtraction, packed format, k = 0 .. w-1.

    Fig. 6(a) of 001 (m even: h = m + 1, w = m/2) and Fig. 7(a) (m odd: h = m, w = (m+1)/2).
    Vertices 1-3 cover the left trapezoid, 4-6 the rotated upper triangle. The text of
    Fig. 7(a) lost the positions of vertices 4 and 5 and the coordinates of vertex 5; they are
    derived from the packed index map (``packed.position``): in the rotated part texel (x, y)
    holds L(m-1-y, m-x), so the neighbour L(i, k) is at (k, i) = (k, m-1-y), i.e. T0.y = m - V.y,
    and the pivot L(j, k) at (k, j) = (k, m-x), i.e. T1.x = m + 1 - V.x. At V = (w, w-.5)
    that gives T0 = (k+.5, w-.5), T1 = (w, k+.5), the surviving text of vertex 4, and at
    V = (w, 0) it gives T0 = (k+.5, m), T1 = (w, k+.5).
    """
    h, w = pk.packed_shape(m)
    if m % 2 == 0:  # Fig. 6(a)
        return Triangle([
            vertex((k + 1, k + 1.5), T0=(k + .5, k + 1.5), T1=(k + 2, k + .5)),     # 1
            vertex((k + 1, h),       T0=(k + .5, h),       T1=(k + 2, k + .5)),     # 2
            vertex((m + .5, h),      T0=(k + .5, h),       T1=(m + 1.5, k + .5)),   # 3
            vertex((w, w + .5),      T0=(k + .5, w + .5),  T1=(w + 1, k + .5)),     # 4
            vertex((w, 0),           T0=(k + .5, h),       T1=(w + 1, k + .5)),     # 5
            vertex((-.5, 0),         T0=(k + .5, h),       T1=(m + 1.5, k + .5)),   # 6
        ])
    return Triangle([  # Fig. 7(a)
        vertex((k + 1, k + .5),  T0=(k + .5, k + .5),  T1=(k + 1, k + .5)),     # 1
        vertex((k + 1, m),       T0=(k + .5, m),       T1=(k + 1, k + .5)),     # 2
        vertex((m + .5, m),      T0=(k + .5, m),       T1=(m + .5, k + .5)),    # 3
        vertex((w, w - .5),      T0=(k + .5, w - .5),  T1=(w, k + .5)),         # 4 (derived)
        vertex((w, 0),           T0=(k + .5, m),       T1=(w, k + .5)),         # 5 (derived)
        vertex((.5, 0),          T0=(k + .5, m),       T1=(m + .5, k + .5)),    # 6
    ])


def packed_triangle_second_half(k: int, m: int) -> Triangle:
    """The single triangle of the second half of the iterations, packed format.

    Here k counts down (w-1 .. 1 for even m, Fig. 6(b); w-1 .. 2 for odd m, Fig. 7(b)) and is
    the texel column of the pivot column K = m-1-k (even) or K = m-k (odd), which lives in the
    rotated part; the triangle covers the trailing submatrix, all of it rotated too.
    """
    if m % 2 == 0:  # Fig. 6(b)
        return Triangle([
            vertex((k, k + .5), T0=(k + .5, k + .5), T1=(k, k + .5)),       # 1
            vertex((k, 0),      T0=(k + .5, 0),      T1=(k, k + .5)),       # 2
            vertex((-.5, 0),    T0=(k + .5, 0),      T1=(-.5, k + .5)),     # 3
        ])
    return Triangle([  # Fig. 7(b)
        vertex((k, k - .5), T0=(k + .5, k - .5), T1=(k - 1, k + .5)),       # 1
        vertex((k, 0),      T0=(k + .5, 0),      T1=(k - 1, k + .5)),       # 2
        vertex((.5, 0),     T0=(k + .5, 0),      T1=(-.5, k + .5)),         # 3
    ])


def cholesky_plan(m: int, form: str = "outer", update: str = "triangle", index: str = "swizzle",
                  storage: str = "full", guarded: bool = False, pivot: str = "separate") -> list:
    """The passes of a factorization of order m, as ``Draw`` items and ``SWAP`` (see passes.py).

    Roles: "S" starts with the lower triangle of the matrix (for ``form="inner"`` so does
    "T"); the factor ends in "T".
    """
    _check_variant(form, update, index, storage)
    if pivot not in PIVOTS:
        raise ValueError(f"pivot must be one of {PIVOTS}, got {pivot!r}")
    if pivot == "fused" and form != "outer":
        raise ValueError("pivot='fused' joins the pivot steps of the outer-product form; form='inner' "
                         "has its own (leave pivot='separate')")
    if pivot == "onepass":
        if (form, update, index, storage) != ("outer", "triangle", "swizzle", "full"):
            raise ValueError("pivot='onepass' draws each step of the outer form with the triangle update, "
                             "swizzled index and full storage as one pass; leave form, update, index and "
                             "storage at their defaults")
        return onepass_plan(m, guarded)
    K = KERNELS
    sqrt = K["square_root_guarded"] if guarded else K["square_root"]
    plan = []
    if form == "inner":
        for k in range(m - 1):
            plan += [
                Draw(sqrt, "T", Texel.at(k, k), sqrt_inputs(sqrt)),
                Draw(K["copy"], "S", Texel.at(k, k, T0=WPOS), {"A": "T"}),
                Draw(K["normalization"], "T", Rect.covering(k, k + 1, k + 1, m, T0=(k + .5, k + .5)), {"L": "S"}),
                # column k+1, rows k+1 .. m-1: T0 at the start of row j, T1 at the start of row k+1
                Draw(K["inner_product_subtraction"], "S",
                     Rect.covering(k + 1, k + 1, k + 2, m, T0=lambda x, y: (.5, y), T1=(.5, k + 1.5)),
                     {"L": "T"}, {"count": k + 1}, 2 * (k + 1) + 2),
            ]
        plan.append(Draw(sqrt, "T", Texel.at(m - 1, m - 1), sqrt_inputs(sqrt)))
        return plan

    if storage == "full":
        for k in range(m - 1):
            plan += pivot_steps(k, m, storage, sqrt, pivot)
            if update == "triangle":
                plan.append(Draw(K[index], "T", outer_product_triangle(k, m, index), {"L": "S"}))
            elif update == "square":
                plan.append(Draw(K["swizzle"], "T", outer_product_square(k, m), {"L": "S"}))
            else:
                plan += [Draw(K["swizzle"], "T", r, {"L": "S"}) for r in outer_product_columns(k, m)]
            plan.append(SWAP)
        plan.append(Draw(sqrt, "T", Texel.at(m - 1, m - 1), sqrt_inputs(sqrt)))
        return plan

    # packed storage (section 4.3 of 001): first half k = 0 .. w-1, second half counting down
    h, w = pk.packed_shape(m)
    odd = m % 2
    for k in range(min(w, m - 1)):
        plan += pivot_steps(k, m, storage, sqrt, pivot)
        plan.append(Draw(K["swizzle"], "T", packed_triangles_first_half(k, m), {"L": "S"}))
        plan.append(SWAP)
    last = 2 if odd else 1
    for k in range(w - 1, last - 1, -1):
        Kcol = m - k if odd else m - 1 - k  # the pivot column whose texel column is k
        plan += pivot_steps(Kcol, m, storage, sqrt, pivot)
        plan.append(Draw(K["swizzle"], "T", packed_triangle_second_half(k, m), {"L": "S"}))
        plan.append(SWAP)
    x, y = pk.position(m - 1, m - 1, m)
    plan.append(Draw(sqrt, "T", Texel.at(x, y), sqrt_inputs(sqrt)))
    return plan


def onepass_step(k: int, m: int) -> Triangle:
    """Step k of ``pivot="onepass"``: Fig. 5 of 001's oversized triangle moved one column left,
    so that it covers the columns k .. i of the rows i >= k (the pivot, its column and the
    update), joined with the rectangle over column k - 1's rows k-1 .. m-1 (the copy), in one
    draw."""
    tri = Triangle([vertex((k, k - .5)), vertex((k, m)), vertex((m + .5, m))])
    if k == 0:
        return tri
    return Triangle.join(tri, Triangle.from_rects([(k - 1, k - 1, k, m)]))


def onepass_plan(m: int, guarded: bool = False) -> list:
    """The passes of ``pivot="onepass"`` (beyond the papers): one ``cholesky_step`` pass per
    step, S and T swapped between them; the factor ends in T."""
    K = KERNELS
    u = {"guarded": bool(guarded), "tolerance": 0.0, "huge": 0.0}
    plan = []
    for k in range(m):
        plan.append(Draw(K["cholesky_step"], "T", onepass_step(k, m), {"L": "S", "M0": "M0" if guarded else "S"},
                         dict(u, k=k)))
        if k < m - 1:
            plan.append(SWAP)
    return plan


def inverse_step_rectangles(k: int, m: int, x0: int = 0) -> list:
    """Step k of X = L^-1 (:func:`lower_inverse`): the rows k .. m-1 over columns 0 .. k, and row
    k - 1 (finished at the step before, copied), with X's column 0 at texel column ``x0``."""
    return [(x0, k, x0 + k + 1, m)] + ([(x0, k - 1, x0 + k, k)] if k else [])


def steps_primitive(k: int, m: int, steps: int = 2) -> Triangle:
    """Steps k .. k + steps - 1 of :func:`factor_with_inverse` in one pass (``steps`` >= 2):
    Fig. 5's triangle moved to column k (columns k .. i of the rows i >= k: the pivots, their
    columns and the update), the copies of columns k - steps .. k - 1 (rows from the diagonal
    down), and m columns right the inverse's rows k .. m-1 over its columns 0 .. k + steps - 1
    and the copies of rows k - steps .. k - 1 (columns 0 .. the diagonal)."""
    tri = Triangle([vertex((k, k - .5)), vertex((k, m)), vertex((m + .5, m))])
    done = [c for c in range(k - steps, k) if c >= 0]
    rects = [(c, c, c + 1, m) for c in done]
    rects += [(m, k, m + min(k + steps, m), m)] + [(m, r, m + r + 1, r + 1) for r in done]
    return Triangle.join(tri, Triangle.from_rects(rects))


#: the most Cholesky steps one pass of :func:`factor_with_inverse` draws
MAX_STEPS = 8
#: ``cholesky_inverse_steps`` with its vertex program ``cholesky_block_pivots``, one program per
#: number of steps s (their STEPS); texels a fragment: its row's and column's s entries (or X's
#: s rows of the block), its own entry and the result
STEPS_KERNELS = {s: Kernel("cholesky_inverse_steps", texels=2 * s + 2, defines={"STEPS": s},
                           vertex="cholesky_block_pivots",
                           doc=f"beyond the papers: steps k .. k + {s - 1} of cholesky_inverse_step in one pass, "
                               "the pivots from the vertex program")
                 for s in range(2, MAX_STEPS + 1)}


def cholesky_inverse_plan(m: int, guarded: bool = False, steps: int = 1, block: int | None = None) -> list:
    """The passes of :func:`factor_with_inverse` (beyond the papers): with ``steps=1`` step k
    draws :func:`onepass_step` (the Cholesky half, columns 0 .. m-1) joined with
    :func:`inverse_step_rectangles` moved m columns right (the inverse half), one
    ``cholesky_inverse_step`` pass; with ``steps`` = 2 .. 8 the steps k .. k + steps - 1 are
    one ``cholesky_inverse_steps`` pass over :func:`steps_primitive` (k = 0, steps,
    2 steps, ...; ceil(m / steps) passes); with ``block`` = b (even, a multiple of 2 ``steps``)
    the blocked passes of :func:`blocked_inverse_draws`. S and T are swapped between passes; the result ends in T."""
    if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= MAX_STEPS:
        raise ValueError(f"steps must be an integer from 1 to {MAX_STEPS} (Cholesky steps a pass), got {steps!r}")
    check_block(block, steps)
    u = {"guarded": bool(guarded), "tolerance": 0.0, "huge": 0.0, "m": m}
    if block is not None:
        return blocked_inverse_draws(m, block, KERNELS["cholesky_inverse_step"], TRAILING,
                                     {"L": "S", "M0": "M0" if guarded else "S"}, u, steps, STEPS_KERNELS)
    return inverse_step_draws(m, steps, KERNELS["cholesky_inverse_step"], STEPS_KERNELS,
                              {"L": "S", "M0": "M0" if guarded else "S"}, u)


def inverse_step_draws(m: int, steps: int, one_step: Kernel, steps_kernels: dict, inputs: dict,
                       uniforms: dict) -> list:
    """The steps of a factor-and-inverse plan into "T", S and T swapped between them: with
    ``steps=1`` step k is ``one_step`` over :func:`onepass_step` joined with
    :func:`inverse_step_rectangles` moved m columns right; else steps k .. k + steps - 1 are
    ``steps_kernels[steps]`` over :func:`steps_primitive`. Each pass's uniforms are ``uniforms``
    with its k (float32's and float-float's plans share this)."""
    plan = []
    for k in range(0, m, steps):
        if steps == 1:
            kernel = one_step
            primitive = Triangle.join(onepass_step(k, m), Triangle.from_rects(inverse_step_rectangles(k, m, m)))
        else:
            kernel, primitive = steps_kernels[steps], steps_primitive(k, m, steps)
        plan.append(Draw(kernel, "T", primitive, inputs, dict(uniforms, k=k)))
        if k + steps < m:
            plan.append(SWAP)
    return plan


class Trailing:
    """The two passes that end a block of the blocked factor with its inverse (beyond the
    papers): ``panel`` packs the block's b columns of L and X's b block rows ``columns`` to a
    texel into "P4" (2m rows of ceil(b / columns) RGBA32F texels, :func:`packed_panel`), then
    ``update(b)`` (one program per number of packed texels, its loop unrolled) takes the block's
    b terms off the trailing matrix and X's rows below the block, both factors of each term read
    from "P4". The counters count every ``update(b)`` as ``label``."""

    def __init__(self, panel: Kernel, update: str, columns: int, **kernel):
        self.panel, self.name, self.columns, self.kernel = panel, update, columns, kernel
        self.label = update
        self._updates = {}

    def packed(self, block: int) -> int:
        """Texels a row of "P4" for a block of ``block`` columns."""
        return -(-block // self.columns)

    def update(self, block: int) -> Kernel:
        n = self.packed(block)
        if n not in self._updates:
            self._updates[n] = Kernel(self.name, texels=2 * n + 2, label=self.label, defines={"PACKED": n},
                                      doc=f"beyond the papers: the trailing matrix and X's rows below a block of "
                                          f"{block} Cholesky steps updated by the block's columns in one pass",
                                      **self.kernel)
        return self._updates[n]


#: the trailing passes of the blocked factor with its inverse (``block=``), float32: the panel
#: four columns a texel (``cholesky_inverse_panel_rgba``: 4 texels read, 1 written a fragment),
#: then ``cholesky_inverse_trailing`` (its own texel, ceil(b / 4) of its row's and of its
#: column's, the result)
TRAILING = Trailing(Kernel("cholesky_inverse_panel_rgba", texels=5,
                           doc="beyond the papers: a block's panel and X's block rows, four columns a texel"),
                    "cholesky_inverse_trailing", columns=4)
#: the widest block of ``factor_with_inverse(block=...)`` (a fragment of the trailing pass
#: takes off one term a column of the block)
MAX_BLOCK = 128


def check_block(block, steps: int = 1) -> None:
    """``ValueError`` unless ``block`` is None or an even integer from 2 to :data:`MAX_BLOCK`
    whose panel takes an even number of passes of ``steps`` steps: a block's panel passes end in
    the buffer its trailing pass must read only when they are even in number (the ping-pong
    pair's other buffer holds the trailing matrix of the block before)."""
    if block is None:
        return
    if isinstance(block, bool) or not isinstance(block, int) or not 2 <= block <= MAX_BLOCK or block % 2:
        raise ValueError(f"block must be None or an even integer from 2 to {MAX_BLOCK} (columns a block of "
                         f"the factor with its inverse), got {block!r}")
    if block % (2 * steps):
        raise ValueError(f"block={block} with steps={steps}: a block's panel must take an even number of passes "
                         f"of {steps} steps; give a block that is a multiple of {2 * steps}")


def _lower_columns(k: int, k1: int, m: int) -> list:
    """The lower part of columns k .. k1-1 (the rows i >= j of column j): Fig. 5's triangle over
    the rows k .. k1-1, the rectangle below it."""
    parts = [Triangle([vertex((k, k - .5)), vertex((k, k1)), vertex((k1 + .5, k1))])]
    if k1 < m:
        parts.append(Triangle.from_rects([(k, k1, k1, m)]))
    return parts


def panel_step_primitive(k: int, k1: int, m: int, steps: int = 1) -> Triangle:
    """Steps k .. k + steps - 1 of the blocked factor with its inverse, in the block that ends
    before column k1: the one-step (or s-step) pass's primitive cut to the block, i.e. the
    columns k .. k1-1 of the rows from the diagonal down (the pivots, their columns, the rest of
    the block's panel), the copies of columns k - steps .. k - 1, and m columns right X's rows
    k .. k1-1 over columns 0 .. k + steps - 1 and the copies of rows k - steps .. k - 1. The
    texels right of the block and X's rows below it wait for the block's trailing pass."""
    done = [c for c in range(k - steps, k) if c >= 0]
    rects = [(c, c, c + 1, m) for c in done] + [(m, k, m + min(k + steps, m), k1)]
    rects += [(m, c, m + c + 1, c + 1) for c in done]
    return Triangle.join(*_lower_columns(k, k1, m), Triangle.from_rects(rects))


def trailing_primitive(k0: int, k1: int, m: int) -> Triangle:
    """The trailing pass of the block of columns k0 .. k1-1: Fig. 5's triangle from column k1
    (the trailing matrix), the block's panel (copied), and m columns right X's rows k0 .. m-1
    over columns 0 .. k1-1 (rows below k1 updated, the block's rows copied)."""
    tri = Triangle([vertex((k1, k1 - .5)), vertex((k1, m)), vertex((m + .5, m))])
    return Triangle.join(tri, *_lower_columns(k0, k1, m), Triangle.from_rects([(m, k0, m + k1, m)]))


def blocked_inverse_draws(m: int, block: int, one_step: Kernel, trailing: Trailing, inputs: dict,
                          uniforms: dict, steps: int = 1, steps_kernels: dict | None = None) -> list:
    """The steps of a blocked factor-and-inverse plan into "T", S and T swapped between passes
    (beyond the papers): for each block of ``block`` columns k0 .. k1-1, one ``one_step`` pass
    a column (or one ``steps_kernels[steps]`` pass each ``steps`` columns) over
    :func:`panel_step_primitive` (the block's panel and X's block rows), then, unless the block
    is the last, the block's panel packed into "P4" (``trailing.panel``: L's rows k1 .. m-1 and
    X's columns 0 .. k1-1, rows k1 .. m + k1 - 1 of "P4") and one ``trailing.update`` pass over
    :func:`trailing_primitive`. ceil(m / steps) + 2 ceil(m / block) - 2 passes, each reading
    what the pass before it wrote (one chain of dependent passes: a packing reads the panel's
    last pass, its trailing pass the packing); the texels below a block are written once a block, not once a step (about
    m³ / (3 block) + block m² / 2 texels a factorization with one step a pass, the panel's share
    about block m² / (2 steps) with more, where the one-step passes write m³ / 3)."""
    check_block(block, steps)
    kernel = one_step if steps == 1 else steps_kernels[steps]
    update = trailing.update(block)
    plan = []
    for k0 in range(0, m, block):
        k1 = min(k0 + block, m)
        for k in range(k0, k1, steps):
            plan += [Draw(kernel, "T", panel_step_primitive(k, k1, m, steps), inputs, dict(uniforms, k=k)), SWAP]
        if k1 < m:
            plan += [Draw(trailing.panel, "P4", Rect.covering(0, k1, trailing.packed(block), m + k1),
                          {"L": inputs["L"]}, {"k0": k0, "k1": k1, "m": m}),
                     Draw(update, "T", trailing_primitive(k0, k1, m), {"L": inputs["L"], "P": "P4"},
                          {"k1": k1, "m": m}), SWAP]
    return plan[:-1]


def packed_panel(m: int, block: int | None, trailing: Trailing) -> Stream | None:
    """The "P4" stream of a blocked factor with its inverse (None without blocks): 2m rows of
    ``trailing.packed(block)`` RGBA32F texels."""
    return None if block is None else Stream(2 * m, trailing.packed(block), components=4, zero=False)


def _check_variant(form, update, index, storage):
    for name, value, allowed in (("form", form, FORMS), ("update", update, UPDATES),
                                 ("index", index, INDEXES), ("storage", storage, STORAGES)):
        if value not in allowed:
            raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    if storage == "packed" and (form != "outer" or update != "triangle" or index != "swizzle"):
        raise ValueError("storage='packed' is the outer-product form with the triangle update and "
                         "the index swizzle (section 4.3 of paper 001); use form='outer', "
                         "update='triangle', index='swizzle'")
    if form == "inner" and (update != "triangle" or index != "swizzle"):
        raise ValueError("update= and index= choose variants of the outer-product form; "
                         "form='inner' has neither (leave them at their defaults)")
    if update != "triangle" and index != "swizzle":
        raise ValueError(f"index={index!r} is a variant of the triangle update; update={update!r} "
                         "uses the swizzle")


# ---------------------------------------------------------------------------- execution
def count_replaced(L: Stream, m: int, storage: str, huge: float, strategy: str = "pingpong") -> int:
    """How many pivots the guarded square root replaced (:func:`flag_replaced`, one read-back)."""
    res = flag_replaced(L, m, storage, huge, strategy, borrow(1, 1))
    value = res.item()
    give_back(res)
    return int(round(value))


def diagonal_for_replaced(M: Stream, L: Stream, S: Stream, m: int, huge: float, rows: bool) -> Stream:
    """The factor of a guarded Cholesky whose replaced pivots (``huge``) become their diagonal
    entries of ``S`` (beyond the papers; the partial Cholesky preconditioner of paper 002, where a
    pivot replaced by ``huge`` left P^-1 blind to its direction). A replaced pivot's column of
    the m x m factor ``L`` is about 0 below the diagonal, so L(j, j) -> sqrt(S(j, j)) is L times
    a diagonal matrix: with ``rows`` ``M`` is L^-1, whose row j is scaled by L(j, j) / sqrt(S(j,
    j)); else ``M`` is L, whose diagonal entry is set. One pass (``replaced_pivot_diagonal``)
    into a new m x m stream; ``M`` is left as it is."""
    out = Stream(m, m, zero=False)
    try:
        KERNELS["replaced_pivot_diagonal"].draw(out, Rect.covering(0, 0, m, m), {"M": M, "C": L, "G": S},
                                                {"threshold": float(np.sqrt(huge)) * 0.5, "rows": bool(rows)})
    except BaseException:
        out.release()
        raise
    return out


def flag_replaced(L: Stream, m: int, storage: str, huge: float, strategy: str = "pingpong",
                  out: Stream | None = None) -> Stream:
    """The number of pivots the guarded square root replaced, in a 1 x 1 stream (``out``): a flag
    kernel on the diagonal, then a sum by ``strategy``'s passes (:func:`gpgpu.reduce.reduce_region`)."""
    flags = borrow(1, m)
    for piece in diagonal_pieces(m, storage):
        KERNELS["huge_pivot_flag"].draw(flags, piece, {"L": L}, {"threshold": float(np.sqrt(huge)) * 0.5})
    res = reduce_region(flags, "sum", strategy=strategy, out=out if out is not None else borrow(1, 1))
    give_back(flags)
    return res


def factor(S: Stream, m: int, *, form: str = "outer", update: str = "triangle", index: str = "swizzle",
           storage: str = "full", transfer: str = "rtt", guarded: dict | None = None,
           check: bool = True, pivot: str = "separate", vertex_buffer: bool = True) -> Stream:
    """Factor the lower triangle held by stream ``S`` (full m x m or packed); returns a new
    stream with L (its upper part is not meaningful for the square update).

    ``guarded={"tolerance": t, "huge": H}`` uses the IPM safeguard square root instead of
    raising on breakdown: a pivot not above t times its diagonal entry of ``S`` becomes H
    (its square root, sqrt(H), is what ``count_replaced`` finds). ``S`` is left unchanged.
    ``pivot="fused"`` (outer form, beyond the paper): each step's square root and
    normalization in one pass and one copy instead of Algorithm 2's four passes;
    ``pivot="onepass"`` (outer form, triangle update, full storage; beyond the paper): the whole
    step, pivot, column and update, in one ``cholesky_step`` pass (:func:`onepass_plan`).
    ``vertex_buffer`` (default True; beyond the papers, host cost only): the plan's vertices
    are written into one vertex buffer the first time this order and variant is factored in
    the thread's context (:func:`gpgpu.passes.compiled`) and every pass is drawn as a range
    of it; ``False`` builds the primitives and writes each pass's vertices as it draws it.
    The passes and the results are the same.
    """
    if transfer not in TRANSFERS:
        raise ValueError(f"transfer must be one of {TRANSFERS}, got {transfer!r}")
    u = None if guarded is None else {"tolerance": float(guarded["tolerance"]), "huge": float(guarded["huge"])}

    def build():
        plan = cholesky_plan(m, form, update, index, storage, guarded=guarded is not None, pivot=pivot)
        if u is None:
            return plan
        return [d._replace(uniforms=dict(d.uniforms or {}, **u))
                if d is not SWAP and d.kernel in (KERNELS["square_root_guarded"], KERNELS["pivot_column"],
                                                  KERNELS["cholesky_step"]) else d
                for d in plan]

    key = ("cholesky", m, form, update, index, storage, pivot, None if u is None else tuple(sorted(u.items())))
    plan = compiled(key, build) if vertex_buffer else build()
    work = copy_stream(S, label="copy_input")  # "Copy A to S" (Algorithm 2 of 000)
    other = copy_stream(S, label="copy_input") if form == "inner" else Stream.like(S)
    pp = PingPong(work, other)
    run(plan, pp, others={"M0": S}, transfer=transfer)
    result, spare = pp.T, pp.S
    spare.release()
    if check and guarded is None:
        k = first_bad_pivot(result, m, storage)
        if k is not None:
            result.release()
            raise NotPositiveDefiniteError(k, m)
    return result


def cholesky(A, *, form: str = "outer", update: str = "triangle", index: str = "swizzle",
             storage: str = "full", transfer: str = "rtt", variant: str = "faithful", block: int = 8,
             panel: str = "faithful"):
    """Cholesky factor of a symmetric positive definite matrix, on the GPU.

    Computes the lower triangular L with A = L Lᵀ by rasterization, in the forms that papers 000
    and 001 compare: the outer-product form (Algorithm 2 of 000, Algorithm 5 of 001) with the
    oversized-triangle update of Fig. 5 of 001, BrookGPU's square update or one rectangle a
    column; the inner-product form (Algorithm 1 of 000, Fig. 4(a)); the rectangular packed format
    of 001 (section 3.3, Figs. 6-7); and, beyond the papers, the blocked variant of
    :mod:`gpgpu.blocked`. The GPU computes in float32; a numpy A is scaled by exact powers of two
    before the upload and L scaled back, so that tiny or widely spread entries keep their digits.

    Parameters
    ----------
    A : (n, n) array_like or Stream
        Symmetric positive definite matrix; only its lower triangle is read.
    form : {"outer", "inner"}, optional
        Outer-product form (Algorithm 2 of 000) or inner-product form (Algorithm 1).
    update : {"triangle", "square", "columns"}, optional
        Outer form's update: Fig. 5's triangle, the square (BrookGPU), or a rectangle a column.
    index : {"swizzle", "computed", "triad"}, optional
        Triangle update's pivot index: swizzled ``T1.yx``, computed in the kernel, or triads.
    storage : {"full", "packed"}, optional
        Full n x n texture, or 001's packed format (a Stream A is then a packed stream).
    transfer : {"rtt", "ctt"}, optional
        Render to texture or copy to texture (section 6.1.1 of 000).
    variant : {"faithful", "blocked"}, optional
        The papers' passes, or RGBA 2 x 2 blocks with one rank-b update a panel (beyond the papers).
    block : {4, 8, 16, 32}, optional
        Panel width of ``variant="blocked"``.
    panel : {"faithful", "onepass"}, optional
        How ``variant="blocked"`` factors a panel: five passes a column, or one.

    Returns
    -------
    L : (n, n) ndarray or Stream
        float64 array of the float32 factor for a numpy A; a Stream (upper triangle 0) for a Stream.

    Raises
    ------
    NotPositiveDefiniteError
        A pivot was not positive (found on the GPU); its ``k`` names the column of L.
    ValueError
        A not square, not symmetric, not finite, too large for the textures, or a bad option.

    See Also
    --------
    cho_solve : Solve A x = b with the factor.
    numpy.linalg.cholesky : The float64 reference.

    Examples
    --------
    >>> import numpy as np
    >>> import gpgpu
    >>> A = np.array([[4.0, 2.0, 0.0], [2.0, 5.0, 3.0], [0.0, 3.0, 10.0]])
    >>> L = gpgpu.cholesky(A)
    >>> L.shape
    (3, 3)
    >>> np.allclose(L @ L.T, A, atol=1e-4)
    True
    >>> np.allclose(gpgpu.cholesky(A, form="inner"), L, atol=1e-5)
    True
    """
    _check_variant(form, update, index, storage)
    blocked = dispatch("cholesky", variant, {"form": form, "update": update, "index": index, "storage": storage,
                                             "transfer": transfer},
                       {"form": "outer", "update": "triangle", "index": "swizzle", "storage": "full", "transfer": "rtt"})
    if blocked is not None:
        if isinstance(A, Stream):
            return _upper_cleared(blocked(A, block, panel=panel))
        arr, d = _diagonal_scaled(A)
        return _unscaled_factor(np.asarray(blocked(arr, block, panel=panel), dtype=np.float64), d)
    if panel != "faithful":
        raise ValueError("panel= chooses how variant='blocked' factors its panels; leave it at 'faithful'")
    if isinstance(A, Stream):
        m = pk.order_from_shape(*A.shape) if storage == "packed" else A.rows
        if storage == "full" and A.cols != A.rows:
            raise ValueError(f"cholesky: A must be square, got a stream of shape {A.shape}")
        L = factor(A, m, form=form, update=update, index=index, storage=storage, transfer=transfer)
        return _upper_cleared(L) if storage == "full" else L
    # scaled by powers of two so that max|A| is near 1 (and, where A's diagonal spans more than
    # float32 holds, symmetrically): L = D^-1 L_s (_diagonal_scaled)
    arr, d = _diagonal_scaled(A)
    m = arr.shape[0]
    if storage == "packed":
        h, w = pk.packed_shape(m)
        if h > context.max_texture_size():
            raise ValueError(f"cholesky: packed storage of m = {m} needs a texture {h} high, more than "
                             f"GL_MAX_TEXTURE_SIZE = {context.max_texture_size()} (cf. the m = 4096 remark in "
                             "section 5.2 of paper 001); use storage='full'")
        upload = pk.pack(np.tril(arr))
    else:
        upload = np.tril(arr)
    with Stream.from_array(upload, "A") as S:
        L = factor(S, m, form=form, update=update, index=index, storage=storage, transfer=transfer)
    out = L.to_array().astype(np.float64)                            # float64: the module's rule
    L.release()
    return _unscaled_factor(pk.unpack(out, m) if storage == "packed" else np.tril(out), d)


#: a diagonal whose smallest entry 2^-e max|A| scaling leaves below 2^DIAGONAL_FLOOR is scaled
#: symmetrically (entry by entry): float32 holds 2^-126 .. 2^128, and the pivots' products need
#: room below them
DIAGONAL_FLOOR = -60


def _diagonal_scaled(A) -> tuple:
    """(the float32 matrix uploaded, the exponents e_i) for a numpy A: 2^e A with the even power
    of two that brings max|A| near 1 (:func:`scaled_input`), all e_i = e / 2; where A's positive
    diagonal spans more than float32 holds after it (below 2^DIAGONAL_FLOOR), D A D with
    D = diag(2^e_i) bringing each a_ii near 1 instead. Either way L = D^-1 L_s, exactly."""
    arr = validate_spd_input(A)
    a64 = np.asarray(A, dtype=np.float64)
    scaled, e = scaled_input(A, arr, even=True)
    diag = np.diagonal(a64)
    if not (diag > 0).all() or np.ldexp(diag.min(), e) >= 2.0 ** DIAGONAL_FLOOR:
        return scaled, np.full(a64.shape[0], e // 2)
    half = -np.round(0.5 * np.log2(diag)).astype(np.int64)
    return np.ldexp(a64, half[:, None] + half[None, :]).astype(np.float32), half


def _unscaled_factor(L_s: np.ndarray, d: np.ndarray) -> np.ndarray:
    """L = D^-1 L_s for the exponents of :func:`_diagonal_scaled` (row i times 2^-d_i)."""
    return np.ldexp(L_s, -d[:, None])


def _upper_cleared(L: Stream) -> Stream:
    """``L`` with its strictly upper triangle set to 0 (one ``fill`` pass over the triangle
    x >= y + 1), so that a Stream's factor holds L alone, as a numpy one does."""
    m = L.rows
    if m > 1:
        upper = Triangle([vertex((0.5, 0.0)), vertex((float(m), 0.0)), vertex((float(m), m - 0.5))])
        BLAS1["fill"].draw(L, upper, uniforms={"value": 0.0})
    return L


# ---------------------------------------------------------------------------- solves
class PackedLayout:
    """Where L(i, j) of the packed format lives, for forward and backward substitution
    (the interface of ``blas2.FullLayout``): columns and rows of L as rectangles over the
    vector, with T0 interpolated along the texels that hold them (``packed.position``)."""

    def __init__(self, m: int):
        self.m = m
        self.h, self.w = pk.packed_shape(m)
        self.off = 1 - m % 2

    def diagonal(self, k: int) -> tuple:
        x, y = pk.position(k, k, self.m)
        return (x + .5, y + .5)

    def column(self, k: int, i0: int, i1: int):
        """L(i, k), i in [i0, i1), i > k: a texel column, increasing (left part) or decreasing y."""
        m, off = self.m, self.off
        if k < self.w:  # (k, i + off)
            return [(i0, i1, lambda X, Y: (k + .5, X + off), L2["update"])]
        x = m - off - k  # (x, m - 1 - i)
        return [(i0, i1, lambda X, Y: (x + .5, m - X), L2["update"])]

    def row(self, k: int, i0: int, i1: int):
        """L(k, i), i in [i0, i1), i < k: along texel row k + off in the left part (i < w), and
        along texel row m-1-k, right to left, in the rotated part (i >= w)."""
        m, off, w = self.m, self.off, self.w
        pieces = []
        if i0 < min(i1, w):
            pieces.append((i0, min(i1, w), lambda X, Y: (X, k + off + .5), L2["update"]))
        if max(i0, w) < i1:
            pieces.append((max(i0, w), i1, lambda X, Y: (m - off + 1 - X, m - 1 - k + .5), L2["update"]))
        return pieces


def solve_with_factor(L: Stream, b: Stream, m: int, storage: str = "full", out: Stream | None = None,
                      form: str = "outer") -> Stream:
    """x with L Lᵀ x = b on the GPU: forward substitution L y = b, then backward Lᵀ x = y,
    reading L only (full: the swizzle ``.yx`` gives its rows; packed: ``PackedLayout``).
    ``form``: the substitution's form (:func:`gpgpu.blas2.substitute`; "inner" full only)."""
    layout = FullLayout(m) if storage == "full" else PackedLayout(m)
    y = substitute(L, b, forward=True, by_rows=False, unit_diagonal=False, layout=layout, form=form)
    x = substitute(L, y, forward=False, by_rows=True, unit_diagonal=False, layout=layout, out=out, form=form)
    y.release()
    return x


def _identity(m: int, cols: int, offset: int) -> Stream:
    """An m x ``cols`` stream of zeros with the m x m identity from column ``offset`` on, drawn
    on the GPU (kernel ``identity``)."""
    s = Stream(m, cols, zero=offset > 0)      # the pass covers columns offset .. offset + m - 1
    try:
        KERNELS["identity"].draw(s, Rect.covering(offset, 0, offset + m, m), uniforms={"offset": float(offset)})
    except BaseException:
        s.release()
        raise
    return s


def _identity_pair(m: int, cols: int, offset: int) -> PingPong:
    """Two :func:`_identity` streams as a ping-pong pair (the first released if the second fails)."""
    first = _identity(m, cols, offset)
    try:
        return PingPong(first, _identity(m, cols, offset))
    except BaseException:
        first.release()
        raise


def lower_inverse(L: Stream, m: int) -> Stream:
    """X = L^-1 of the lower triangular m x m factor in stream ``L`` (its lower triangle read),
    on the GPU in m passes and two that draw the identity (beyond the papers; kernel
    ``lower_inverse_step``): Gauss-Jordan by
    columns of L from the identity, each step one rectangle over the rows k .. m-1 and columns
    0 .. k joined with the copy of row k - 1. The upper triangle of X is zero. With it a solve
    with L Lᵀ is two one-pass products (:func:`solve_with_inverse`)."""
    pp = _identity_pair(m, m, 0)
    try:
        for k in range(m):
            KERNELS["lower_inverse_step"].draw(pp.T, Triangle.from_rects(inverse_step_rectangles(k, m)),
                                               {"S": pp.S, "L": L}, {"k": k})
            pp.swap()
    except BaseException:
        pp.release()
        raise
    pp.T.release()
    return pp.S


def factor_with_inverse(S: Stream, m: int, guarded: dict | None = None, steps: int = 1,
                        out: tuple | None = None, block: int | None = None) -> tuple:
    """(L, X = L^-1) of the lower triangle held by the m x m stream ``S`` in m + 5 passes (beyond
    the papers): the one-pass Cholesky steps of ``factor(pivot="onepass")`` and the steps of
    :func:`lower_inverse` drawn together, step k of both in one ``cholesky_inverse_step`` pass
    over a 2m-wide texture that holds the working matrix beside X (:func:`cholesky_inverse_plan`),
    then the two halves copied out. The same operations as the two separate calls, so the same
    factor and inverse up to float32 rounding (a compiler may round ``a / sqrt(d)`` differently
    in the two kernels); about m passes fewer than the two separate calls. ``guarded`` as
    :func:`factor`'s (no breakdown check: the guard replaces bad pivots). ``steps`` = 2 .. 8
    (beyond the papers too) draws that many steps a pass (kernel ``cholesky_inverse_steps``,
    vertex program ``cholesky_block_pivots``): ceil(m / steps) + 5 passes, each fragment
    computing the steps from the state before them with the same float32 operations as the
    one-step passes, the pass's pivots computed once per vertex and handed to the fragments
    as flat values. ``block`` = b (an even number from 2 to :data:`MAX_BLOCK`, a multiple of
    2 ``steps``; beyond the papers too) factors by blocks of b columns: the step passes drawn
    over the block's panel and X's block rows only, then the block's panel packed four columns a
    texel (``cholesky_inverse_panel_rgba``) and one ``cholesky_inverse_trailing`` pass taking the
    block's b terms off the trailing matrix and X's rows below the block, four products a fetch
    (:func:`blocked_inverse_draws`): ceil(m / steps) + 2 ceil(m / b) + 3 passes, the texels below
    a block written once a block instead of once a step; the same factor up to float32 rounding
    (the block's terms L(i, c) L(j, c) are rounded as products of finished entries where the
    step passes round S(i, c) S(j, c) / d).

    ``out``: two m x m streams (L, X) to render the answer into (an interior point method
    keeps them from one factorization to the next), else new ones.

    Raises ``ValueError`` when 2m exceeds GL_MAX_TEXTURE_SIZE (use :func:`factor` and
    :func:`lower_inverse`)."""
    if 2 * m > context.max_texture_size():
        raise ValueError(f"factor_with_inverse keeps the factor and its inverse side by side in one {m} x {2 * m} "
                         f"texture, wider than GL_MAX_TEXTURE_SIZE = {context.max_texture_size()}; factor and invert "
                         "separately (factor(..., pivot='onepass'), lower_inverse)")
    u = None if guarded is None else {"tolerance": float(guarded["tolerance"]), "huge": float(guarded["huge"])}

    def build():
        steps_plan = cholesky_inverse_plan(m, guarded=u is not None, steps=steps, block=block)
        if u is not None:
            steps_plan = [d if d is SWAP or "guarded" not in d.uniforms else d._replace(uniforms=dict(d.uniforms, **u))
                          for d in steps_plan]
        identity = Rect.covering(m, 0, 2 * m, m)
        # [0 | I] in both buffers (the inverse half of both is read), A into S's left half, the
        # steps, then the two halves of T copied out: every pass of the factorization one plan
        return ([Draw(KERNELS["identity"], role, identity, {}, {"offset": float(m)}) for role in ("S", "T")]
                + [Draw(BLAS1["copy_input"], "S", Rect.covering(0, 0, m, m, T0=WPOS), {"A": "M0"})]
                + steps_plan
                + [Draw(BLAS1["copy"], "L", Rect.covering(0, 0, m, m, T0=WPOS), {"A": "T"}),
                   Draw(BLAS1["copy"], "X", Rect.covering(0, 0, m, m, T0=lambda x, y: (x + m, y)), {"A": "T"})])

    cholesky_inverse_plan(1, steps=steps, block=block)       # the arguments' errors before any texture
    plan = compiled(("cholesky_inverse", m, steps, block, None if u is None else tuple(sorted(u.items()))), build)
    pp = L = X = P4 = None
    try:
        if out is not None:
            L, X = out
            if L.shape != (m, m) or X.shape != (m, m):
                raise ValueError(f"factor_with_inverse: out must be two {m} x {m} streams, got {L.shape}, {X.shape}")
        else:
            L, X = Stream(m, m), Stream(m, m)
        first = Stream(m, 2 * m)                   # zeros
        try:
            pp = PingPong(first, Stream(m, 2 * m))
        except BaseException:
            first.release()
            raise
        P4 = packed_panel(m, block, TRAILING)
        run(plan, pp, others={"M0": S, "L": L, "X": X, "P4": P4})
    except BaseException:
        if out is None:
            for s in (L, X):
                if s is not None:
                    s.release()
        raise
    finally:
        for s in (pp, P4):
            if s is not None:
                s.release()
    return L, X


#: how :class:`TriangularProduct` draws a product by default: None, one pass (m fragments, each
#: its whole row or column of the triangle), or an integer c, two passes (partial sums of c
#: terms, then their sums); read at each draw
PRODUCT_CHUNK = None
_DEFAULT = object()


class TriangularProduct:
    """y = X v or y = Xᵀ v for a lower triangular m x m X (the factor's inverse; beyond the
    papers): paper 000's singlepass inner-product sgemv over the triangle only. With
    ``chunk=None`` one pass (``one_pass``: m fragments, fragment i adding its row's (column's)
    products); with ``chunk`` = c two passes: ``chunks(c)``, m x ceil(m / c) fragments each
    adding up to c products into a borrowed stream of partial sums, then ``sums`` adding each
    column of partial sums in order (m fragments)."""

    def __init__(self, one_pass: Kernel, chunks: str, sums: Kernel, **kernel):
        self.one_pass, self.name, self.sums, self.kernel = one_pass, chunks, sums, kernel
        self._chunks = {}

    def chunks(self, chunk: int) -> Kernel:
        if chunk not in self._chunks:
            self._chunks[chunk] = Kernel(self.name, texels=2 * chunk + 1, label=self.name, defines={"CHUNK": chunk},
                                         doc="beyond the papers: a triangular matrix-vector product's partial sums, "
                                             f"{chunk} terms a fragment", **self.kernel)
        return self._chunks[chunk]

    def draw(self, X: Stream, v: Stream, out: Stream, transposed: bool = False, chunk=_DEFAULT) -> None:
        """Render X v (Xᵀ v with ``transposed``) into the vector stream ``out`` (``chunk``: None
        or a positive integer, default :data:`PRODUCT_CHUNK`). ``ValueError`` for a v or out
        that is not one texture row of X's order, or a chunk that is not a positive integer."""
        m = X.rows
        chunk = PRODUCT_CHUNK if chunk is _DEFAULT else chunk
        for name, s in (("v", v), ("out", out)):
            if (s.rows, s.cols) != (1, m):
                raise ValueError(f"triangular product: {name} must be a vector of length {m} in one texture row "
                                 f"(1 x {m}), got {s.rows} x {s.cols}; a folded vector (FOLD_WIDTH) does not fit here")
        if chunk is not None and (isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1):
            raise ValueError(f"triangular product: chunk must be None or a positive integer, got {chunk!r}")
        uniforms = {"m": m, "transposed": bool(transposed)}
        if chunk is None:
            self.one_pass.draw(out, Rect.covering(0, 0, m, 1), {"X": X, "V": v}, uniforms, texels=2 * m + 1)
            return
        rows = -(-m // chunk)
        P = borrow(rows, m, X.components)
        try:
            self.chunks(chunk).draw(P, Rect.covering(0, 0, m, rows), {"X": X, "V": v}, uniforms)
            self.sums.draw(out, Rect.covering(0, 0, m, 1), {"P": P}, {"rows": rows}, texels=rows + 1)
        finally:
            give_back(P)


#: X v and Xᵀ v in float32 for :func:`solve_with_inverse`
TRIANGULAR_PRODUCT = TriangularProduct(
    Kernel("triangular_product", texels=2, doc="beyond the papers: 000 level 2 sgemv, singlepass inner product "
                                               "over a triangle"),
    "triangular_product_chunks",
    Kernel("column_sums", texels=2, doc="beyond the papers: the sums of a stream's columns, each fragment adding "
                                        "its column in order"))


def solve_with_inverse(X: Stream, b: Stream, out: Stream | None = None) -> Stream:
    """x with L Lᵀ x = b from X = L^-1 (:func:`lower_inverse`): y = X b, x = Xᵀ y, each a
    :class:`TriangularProduct` over the triangle (by default one pass each)."""
    m = X.rows
    y = Stream(1, m, vector=True, zero=False)
    x = None
    try:
        x = out if out is not None else Stream(1, m, vector=True, zero=False)
        TRIANGULAR_PRODUCT.draw(X, b, y)
        TRIANGULAR_PRODUCT.draw(X, y, x, transposed=True)
    except BaseException:
        if out is None and x is not None:
            x.release()
        raise
    finally:
        y.release()
    return x


def _check_factor_diagonal(Ls: Stream, m: int, storage: str) -> None:
    """A zero (or non-finite) on L's diagonal makes L Lᵀ singular: substitution would divide
    by it. Checked on the GPU (flag kernel, min reduction, one read-back)."""
    k = first_bad_pivot(Ls, m, storage, magnitude=True)
    if k is not None:
        raise SingularMatrixError(k, m, what=f"the substitution with the {m} x {m} factor L "
                                  f"(L[{k}, {k}] is zero or not finite; L must come from a "
                                  "successful Cholesky factorization)")


def cho_solve(L, b, storage: str = "full"):
    """Solve A x = b given the Cholesky factor L of A, on the GPU.

    Forward substitution L y = b, then backward substitution Lᵀ x = y, both on the GPU (the
    "forward and backward substitution" of 000, section 4.2; with ``storage="packed"`` on 001's
    packed factor, section 4.3), reading L only. A numpy L and each column of a numpy b are
    scaled by exact powers of two before the upload and x scaled back in float64, so that b may
    be any finite float64 array whose solution fits float32 above.

    Parameters
    ----------
    L : (m, m) array_like or Stream
        Lower Cholesky factor (only its lower triangle is read), e.g. from :func:`cholesky`.
    b : (m,) or (m, r) array_like, or Stream
        Right-hand side(s); a Stream is a vector of length m.
    storage : {"full", "packed"}, optional
        Layout of a Stream L: full m x m or 001's packed format.

    Returns
    -------
    x : ndarray or Stream
        float64 array of the float32 solution for a numpy b; a Stream for a Stream b.

    Raises
    ------
    SingularMatrixError
        L has a zero (or non-finite) diagonal entry (checked on the GPU before the solve).
    FloatingPointError
        The solution overflows float32 (numpy b; a tiny pivot of L).
    ValueError
        Shapes that do not match, or a bad ``storage``.

    See Also
    --------
    cholesky : The factor L.
    scipy.linalg.cho_solve : The float64 reference.

    Examples
    --------
    >>> import numpy as np
    >>> import gpgpu
    >>> A = np.array([[4.0, 2.0], [2.0, 3.0]])
    >>> b = np.array([2.0, 1.0])
    >>> x = gpgpu.cho_solve(gpgpu.cholesky(A), b)
    >>> np.allclose(A @ x, b, atol=1e-5)
    True
    """
    if storage not in STORAGES:
        raise ValueError(f"storage must be one of {STORAGES}, got {storage!r}")
    eL = 0                                   # L_s = 2^eL L, so L_s L_sᵀ = 2^(2 eL) A
    if isinstance(L, Stream):
        Ls, owned = L, False
        m = pk.order_from_shape(*L.shape) if storage == "packed" else L.rows
        if storage == "full" and L.cols != L.rows:
            raise ValueError(f"cho_solve: L must be square, got a stream of shape {L.shape}")
    else:
        arr = check_array(L, "L", ndim=(2,))
        if arr.shape[0] != arr.shape[1]:
            raise ValueError(f"cho_solve: L must be square, got shape {arr.shape}")
        m = arr.shape[0]
        arr, eL = scaled_input(np.tril(np.asarray(L)), np.tril(arr))
        Ls, owned = Stream.from_array(pk.pack(arr) if storage == "packed" else arr, "L"), True
    try:
        _check_factor_diagonal(Ls, m, storage)
        if not isinstance(b, Stream):
            # float64: each column is scaled before its upload, so only 2^eb b must fit float32
            barr = check_array(b, "b", texture=False, dtype=np.float64)
            if barr.shape[0] != m:
                raise ValueError(f"cho_solve: b must have {m} rows, got shape {barr.shape}" if barr.ndim == 2
                                 else f"cho_solve: b must have length {m}, got {barr.shape[0]}")
            columns = [barr] if barr.ndim == 1 else [barr[:, j] for j in range(barr.shape[1])]
            xs = []
            for col in columns:
                bs_arr, eb = scaled_float64(col)
                with Stream.from_array(bs_arr, "b") as bs:
                    x = solve_with_factor(Ls, bs, m, storage)
                out = x.to_array()
                x.release()
                if not np.all(np.isfinite(out)):
                    raise FloatingPointError("cho_solve: the solution overflows float32 (L has a tiny "
                                             "diagonal entry, or b is huge); scale the problem")
                # L_s L_sᵀ x_s = 2^eb b with L_s = 2^eL L: x = 2^(2 eL - eb) x_s
                xs.append(scaled_back(out, 2 * eL - eb, "cho_solve: the solution").astype(np.float64))
            return xs[0] if barr.ndim == 1 else np.stack(xs, axis=1)
        if b.shape != (1, m):
            raise ValueError(f"cho_solve: b must be a vector of length {m}, got a stream of shape {b.shape}")
        return scaled_stream(solve_with_factor(Ls, b, m, storage), 2 * eL)
    finally:
        if owned:
            Ls.release()
