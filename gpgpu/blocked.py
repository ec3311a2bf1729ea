"""Blocked Cholesky on the same pipeline (beyond the papers; issue 13).

The papers' kernels do one multiply-add a fragment, and on a modern GPU the fragment pipeline's
rate, not the arithmetic, bounds them (``python -m gpgpu bench``). Later GPGPU work packed four
elements into an RGBA texel and did several updates a fragment. This module does that with the
project's own means -- fragment shaders started by rasterized primitives, no compute shaders:

* the matrix lives in an RGBA32F texture of 2 x 2 blocks (``glsl/pack_2x2.frag``: texel (X, Y)
  holds rows 2Y, 2Y+1 and columns 2X, 2X+1), padded with the identity to a multiple of the
  block size b (the factor of diag(A, I) is diag(L, I));
* per panel of b columns c0 .. c0+b-1 (right-looking, as LAPACK's potrf):

  1. the panel, rows c0 .. N-1, is unpacked into an R32F ping-pong pair (``unpack_2x2``);
  2. it is factored there by the faithful kernels of 000/001 -- square root, copy,
     normalization, copy (Algorithm 2's pivot steps) and the outer product subtraction with the
     index swizzle over the rectangle of the panel's remaining columns (001 Kernel 5);
  3. it is repacked 4 columns a texel (``panel_rgba``) and written back into both textures of
     the block pair (``pack_panel``);
  4. the trailing matrix gets the rank-b update in one pass, drawn as 001's oversized triangle
     (Fig. 5) over the lower block triangle of the block texture: each fragment updates a 2 x 2
     block with b texel fetches and 4b multiply-adds (``blocked_update``), where the faithful
     kernel does one.

A fragment of the update writes 4 elements, so the trailing updates shade about n³/(24 b)
fragments instead of the faithful n³/6. Numerically it is the same right-looking algorithm in
float32, the sums of each update in a different order.
"""
from __future__ import annotations

import numpy as np

from .cholesky import KERNELS as CHOLESKY_KERNELS, NotPositiveDefiniteError, _pivot_steps, first_bad_pivot
from .geometry import Rect, Triangle, vertex
from .kernel import Kernel
from .passes import SWAP, Draw, run
from .stream import PingPong, Stream

__all__ = ["blocked_cholesky", "BLOCKS", "KERNELS", "update_fragments"]

#: block sizes b (panel widths): multiples of 4, since the panel is packed 4 columns a texel
BLOCKS = (4, 8, 16, 32)

KERNELS = {
    "pack": Kernel("pack_2x2", texels=5, doc="beyond the papers: 2 x 2 blocks in RGBA32F"),
    "unpack": Kernel("unpack_2x2", texels=5, doc="beyond the papers: an element of a 2 x 2-block texture"),
    "pack_panel": Kernel("pack_panel", texels=8, doc="beyond the papers: the factored panel into the blocks"),
    "panel_rgba": Kernel("panel_rgba", texels=8, doc="beyond the papers: the panel 4 columns a texel"),
}


def _update_kernel(b: int) -> Kernel:
    key = f"update_{b}"
    if key not in KERNELS:
        KERNELS[key] = Kernel("blocked_update", texels=b + 8, defines={"BLOCK": b},
                              doc="beyond the papers: rank-b update of 2 x 2 blocks, 001 Fig. 5's triangle")
    return KERNELS[key]


def padded_order(n: int, b: int) -> int:
    return -(-n // b) * b


def update_fragments(n: int, b: int) -> int:
    """Fragments of all the trailing updates: per panel, the lower block triangle of the
    (N - c0 - b) / 2 trailing blocks, N the padded order."""
    N = padded_order(n, b)
    return sum(t * (t + 1) // 2 for t in ((N - c0 - b) // 2 for c0 in range(0, N, b)))


def _panel_plan(b: int, R: int) -> list:
    """The faithful factorization of an R x b panel (rows c0 .. N-1 of columns c0 .. c0+b-1):
    per column k, Algorithm 2's four pivot passes (square root, copy, normalization of rows
    k+1 .. R-1, copy), then the outer product subtraction (001 Kernel 5, index swizzle) over
    the panel's columns k+1 .. b-1, rows k+1 .. R-1 (a rectangle: the panel's part above its
    diagonal is computed and never read). The factored panel ends in "S"."""
    K = CHOLESKY_KERNELS
    plan = []
    for k in range(b):
        plan += _pivot_steps(k, R, "full", K["square_root"])
        if k < b - 1:
            plan.append(Draw(K["swizzle"], "T", Rect.covering(k + 1, k + 1, b, R, T0=lambda x, y, k=k: (k + .5, y),
                                                              T1=lambda x, y, k=k: (x, k + .5)), {"L": "S"}))
            plan.append(SWAP)
    return plan


def _trailing_triangle(x0: int, M: int) -> Triangle:
    """Fig. 5 of 001 over the block texture: the blocks (X, Y) with x0 <= X <= Y < M."""
    return Triangle([vertex((x0, x0 - .5)), vertex((x0, M)), vertex((M + .5, M))])


def blocked_cholesky(A, block: int = 8, check: bool = True):
    """The lower Cholesky factor of a symmetric positive definite A by the blocked algorithm of
    the module docstring. A numpy array gives a numpy L; a full n x n Stream (its lower triangle
    read) gives an n x n Stream whose lower triangle is L."""
    if block not in BLOCKS:
        raise ValueError(f"block must be one of {BLOCKS}, got {block!r}")
    if isinstance(A, Stream):
        if A.rows != A.cols or A.components != 1:
            raise ValueError(f"blocked Cholesky needs a square R32F stream, got {A!r}")
        return _factor(A, A.rows, block, check)
    from .cholesky import _validate_spd_input

    arr = _validate_spd_input(A)
    with Stream.from_array(np.tril(arr), "A") as S:
        L = _factor(S, arr.shape[0], block, check)
    out = L.to_array()
    L.release()
    return np.tril(out)


def _factor(S: Stream, n: int, b: int, check: bool) -> Stream:
    K = KERNELS
    N = padded_order(n, b)
    M = N // 2
    blocks = PingPong(Stream(M, M, components=4), Stream(M, M, components=4))
    panel = PingPong(Stream(N, b), Stream(N, b))
    P4 = Stream(N, b // 4, components=4)
    update = _update_kernel(b)
    try:
        K["pack"].draw(blocks.S, Rect.covering(0, 0, M, M), {"A": S}, {"n": n})
        for c0 in range(0, N, b):
            R = N - c0
            K["unpack"].draw(panel.S, Rect.covering(0, 0, b, R), {"P": blocks.S}, {"offset": c0})
            run(_panel_plan(b, R), panel)
            K["panel_rgba"].draw(P4, Rect.covering(0, 0, b // 4, R), {"L": panel.S})
            region = Rect.covering(c0 // 2, c0 // 2, (c0 + b) // 2, M)
            for target in (blocks.S, blocks.T):
                K["pack_panel"].draw(target, region, {"L": panel.S}, {"c0": c0})
            x0 = (c0 + b) // 2
            if x0 < M:
                update.draw(blocks.T, _trailing_triangle(x0, M), {"A": blocks.S, "P": P4}, {"c0": c0})
                blocks.swap()
        L = Stream(n, n)
        K["unpack"].draw(L, Rect.covering(0, 0, n, n), {"P": blocks.S}, {"offset": 0})
    finally:
        blocks.release()
        panel.release()
        P4.release()
    if check:
        k = first_bad_pivot(L, n, "full")
        if k is not None:
            L.release()
            raise NotPositiveDefiniteError(k, n)
    return L
