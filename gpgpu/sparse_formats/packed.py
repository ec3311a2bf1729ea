"""The packed format (beyond papers 002 and 003, this project's): ``format="packed"``.

Each entry's value and column index share one RGBA32F texel, two entries a texel, (value,
column, value, column), so a fragment fetches one texel for two entries (ELLPACK and TELL fetch
a value texel and a column texel for each): 1.5 fetches a non-zero with the gather of x,
against 3. The rows are cut into segments (:mod:`.segmented`).
"""
from __future__ import annotations

import numpy as np

from ..kernel import Kernel
from ..stream import Stream
from .common import _blocks_down
from .segmented import Segmented

_PACKED: dict = {}


class Packed(Segmented):
    """The packed format (beyond papers 002 and 003; the layout of 002 section 3.2's T-ELL with
    rows cut into segments): a segment of L entries in ceil(L / 2) RGBA32F texels of one
    texture (``entries``), two (value, column) pairs a texel, float32 column indexes (exact up
    to 2^24 columns); pass 1 is ``glsl/sparse_packed.frag`` with L compiled in (its loop
    unrolled), pass 2 ``glsl/sparse_packed_sum.frag``. An odd L leaves a spare place after each
    full segment. Everything else as :class:`.segmented.Segmented`'s."""

    def texels(self, L: int) -> int:
        return -(-L // 2)

    def places(self, L: int) -> int:
        return 2 * self.texels(L)

    def textures(self, S, buf: np.ndarray, layout: tuple, L: int) -> None:
        Rs, Ws = layout
        H = self.texels(L)
        tex = _blocks_down(buf, Rs, Ws, H, "V16").view(np.float32).reshape(Rs * H, Ws, 4)
        S._streams["entries"] = Stream(Rs * H, Ws, components=4, data=tex)

    def kernel(self, L: int) -> Kernel:
        return packed_kernel(L)

    def inputs(self, S) -> dict:
        return {"entries": S._streams["entries"]}

    def read(self, S, at: np.ndarray, slot: np.ndarray) -> tuple:
        tex, H, Ws = S._streams["entries"].to_array(), self.texels(self.segment), self.p_shape[1]
        ty, tx, comp = (at // Ws) * H + slot // 2, at % Ws, 2 * (slot % 2)
        return tex[ty, tx, comp + 1], tex[ty, tx, comp]

    def fetches_a_segment(self, L: int) -> int:
        """ceil(L / 2) texels of entries and L gathers of x."""
        return -(-L // 2) + L


def packed_kernel(L: int) -> Kernel:
    """The packed format's fragment program for segments of ``L`` entries (L compiled in)."""
    k = _PACKED.get(L)
    if k is None:
        k = _PACKED[L] = Kernel("sparse_packed", texels=-(-L // 2) + L + 1, defines={"L": L},
                                doc=f"beyond 002: segments of {L} entries, two a RGBA texel")
    return k
