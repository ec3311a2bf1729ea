"""The rectangular packed format of paper 001 (section 3.3, Fig. 3).

A lower triangular (or symmetric) m x m matrix is stored in a w x h texture (w wide, h high),

    w = ceil(m / 2),   h = m + mod(m + 1, 2)

(the caption of Fig. 3(a) says 3 x 6 for m = 6, but this formula and the vertex V(0, h) of
Fig. 4(a) give 3 x 7: the shift down by one row needs the extra row), with the left columns
0 .. w-1 kept in place (shifted down one row when m is even) and the
bottom-right triangle, columns w .. m-1, rotated by 180 degrees into the unused upper corner.
Derived from the texture coordinates of Fig. 4 (see ``adat.py``), with off = 1 for even m
and 0 for odd m:

    j <  w:  L(i, j) at texel (x = j,           y = i + off)
    j >= w:  L(i, j) at texel (x = m - off - j, y = m - 1 - i)

The two parts never overlap (the left part has y >= x + off, the rotated part y <= x - 1 + off)
and together they fill the texture: w h = m (m + 1) / 2.

These numpy helpers upload, download and test packed streams; the GPU algorithms address
the same texels through the vertex tables of Figs. 4, 6 and 7.
"""
from __future__ import annotations

import numpy as np

__all__ = ["packed_shape", "position", "pack", "unpack", "index_map", "order_from_shape", "mask"]


def packed_shape(m: int) -> tuple:
    """(rows, cols) = (h, w) of the packed stream of an m x m triangle."""
    if m < 1:
        raise ValueError(f"m must be positive, got {m}")
    w = (m + 1) // 2
    h = m + (m + 1) % 2
    return (h, w)


def order_from_shape(rows: int, cols: int) -> int:
    """The m whose packed stream has shape (rows, cols); ValueError if there is none."""
    w = cols
    if rows == 2 * w + 1:
        return 2 * w
    if rows == 2 * w - 1:
        return rows
    raise ValueError(f"a stream of shape {(rows, cols)} is not a rectangular packed triangle "
                     "(height must be 2w + 1 for even m or 2w - 1 for odd m)")


def position(i: int, j: int, m: int) -> tuple:
    """Texel (x, y) that holds L(i, j), i >= j, in the packed format."""
    if not 0 <= j <= i < m:
        raise ValueError(f"({i}, {j}) is not in the lower triangle of a {m} x {m} matrix")
    w = (m + 1) // 2
    off = 1 - m % 2
    if j < w:
        return (j, i + off)
    return (m - off - j, m - 1 - i)


def index_map(m: int) -> tuple:
    """Arrays (rows, cols, ys, xs): lower-triangle index (rows[t], cols[t]) lives at texel (xs[t], ys[t])."""
    rows, cols = np.tril_indices(m)
    w = (m + 1) // 2
    off = 1 - m % 2
    left = cols < w
    xs = np.where(left, cols, m - off - cols)
    ys = np.where(left, rows + off, m - 1 - rows)
    return rows, cols, ys, xs


def pack(L: np.ndarray) -> np.ndarray:
    """The packed (h, w) float32 array of the lower triangle of the square array ``L``."""
    L = np.asarray(L)
    if L.ndim != 2 or L.shape[0] != L.shape[1]:
        raise ValueError(f"pack: expected a square matrix, got shape {L.shape}")
    m = L.shape[0]
    out = np.zeros(packed_shape(m), dtype=np.float32)
    rows, cols, ys, xs = index_map(m)
    out[ys, xs] = L[rows, cols]
    return out


def unpack(P: np.ndarray, m: int | None = None) -> np.ndarray:
    """The m x m lower triangular array stored in the packed array ``P`` (upper part zero)."""
    P = np.asarray(P)
    if m is None:
        m = order_from_shape(*P.shape)
    if P.shape != packed_shape(m):
        raise ValueError(f"unpack: packed array of shape {P.shape} does not hold an {m} x {m} triangle "
                         f"(expected {packed_shape(m)})")
    out = np.zeros((m, m), dtype=P.dtype)
    rows, cols, ys, xs = index_map(m)
    out[rows, cols] = P[ys, xs]
    return out


def mask(m: int) -> np.ndarray:
    """Boolean (h, w) array of the texels that hold an element."""
    out = np.zeros(packed_shape(m), dtype=bool)
    _, _, ys, xs = index_map(m)
    out[ys, xs] = True
    return out
