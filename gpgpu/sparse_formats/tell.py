"""Transposed ELLPACK, T-ELL (paper 002 section 3.2, Table 3's DHTELL2): ``format="tell"``.

002 section 3.3: DHTELL2 "consists of one block to handle any dense rows separately, then a half
warp (sixteen threads) per row using a transposed ELLPACK format to store the remainder of the
matrix". A fragment cannot share a row among threads; what it can draw is the layout: ELLPACK's
arrays stored column-major, so that at every step of a fragment's loop neighbouring fragments
(rows) read neighbouring texels (``gpgpu.sparse.tell_dense_part``: this format with the dense
part).
"""
from __future__ import annotations

import numpy as np

from ..kernel import Kernel
from .common import _blocks_down, _deinterleave, _scatter_pairs
from .ellpack import Ellpack

KERNEL = Kernel("sparse_tell", texels=3, doc="002 section 3.2 transposed ELLPACK")


class Tell(Ellpack):
    """Paper 002 section 3.2's transposed ELLPACK (T-ELL, the storage of Table 3's DHTELL2): the
    ELLPACK entries (values and column indexes, float32, rows padded to the longest, K) in K x m
    textures, row i's entries down texture column i, so that neighbouring rows read neighbouring
    texels (``glsl/sparse_tell.frag``); a folded y's R blocks of W rows are stacked down the
    texture (texture rows r K .. r K + K - 1). Everything else as :class:`.ellpack.Ellpack`'s,
    ``transpose="scatter"`` included, but for the padding: value 0 and column 0, and every
    fragment walks all K texels as 002's kernel does (no ``END`` to stop at)."""

    kernel = KERNEL
    down = True
    along = "column"
    planes = False
    fours = False

    @staticmethod
    def layout(vals, cols, counts, K: int, fold: tuple):
        """(R K) x W textures: row-major R W x K, each block transposed (entry k of row r W + x
        at texel (x, r K + k))."""
        rows_y, W = fold
        i = np.arange(counts.size, dtype=np.int64)
        buf = _scatter_pairs(vals, cols, counts, i * K, K, K, rows_y * W * K)
        return tuple(_blocks_down(t, rows_y, W, K, np.float32) for t in _deinterleave(buf))

    def fetches(self, S) -> tuple:
        """3 a stored entry (value, column, x), padding included."""
        stored = S.shape[0] * self.K
        return 3 * stored, stored

    @staticmethod
    def origin(K: int):
        """T0 at the row's first entry: (x + .5, r K + .5) at the centre of texel (x, r)."""
        return lambda X, Y: (X, (Y - 0.5) * K + 0.5)

    @staticmethod
    def blocks(t: np.ndarray, fold: tuple, K: int) -> np.ndarray:
        rows_y, W = fold
        return t.reshape(rows_y, K, W).transpose(0, 2, 1).reshape(-1, K)
