"""The split format (beyond papers 002 and 003, this project's): ``format="split"``.

The packed format's segments and second pass without the packing (:mod:`.segmented`), so that a
measurement can tell the row splitting's gain from the packing's.
"""
from __future__ import annotations

import numpy as np

from ..kernel import Kernel
from ..stream import Stream
from .common import _blocks_down, _deinterleave
from .segmented import Segmented

_SPLIT: dict = {}


class Split(Segmented):
    """The split format (beyond papers 002 and 003): the rows cut into segments of L entries as
    the packed format's, but values and column indexes in two float32 textures (``values``,
    ``columns``), one entry a texel each, a segment L texels down a texture column (002 section
    3.2's T-ELL layout, a segment a column): 3 fetches a non-zero, as ELLPACK's. Pass 1 is
    ``glsl/sparse_split.frag`` with L compiled in. Everything else as
    :class:`.segmented.Segmented`'s."""

    def texels(self, L: int) -> int:
        return L

    def places(self, L: int) -> int:
        return L

    def textures(self, S, buf: np.ndarray, layout: tuple, L: int) -> None:
        Rs, Ws = layout
        tv, ti = (_blocks_down(t, Rs, Ws, L, np.float32) for t in _deinterleave(buf))
        S._streams["values"] = Stream(Rs * L, Ws, data=tv)
        S._streams["columns"] = Stream(Rs * L, Ws, data=ti)

    def kernel(self, L: int) -> Kernel:
        return split_kernel(L)

    def inputs(self, S) -> dict:
        return {"values": S._streams["values"], "columns": S._streams["columns"]}

    def read(self, S, at: np.ndarray, slot: np.ndarray) -> tuple:
        L, Ws = self.segment, self.p_shape[1]
        ty, tx = (at // Ws) * L + slot, at % Ws
        return S._streams["columns"].to_array()[ty, tx], S._streams["values"].to_array()[ty, tx]

    def fetches_a_segment(self, L: int) -> int:
        """A value, a column and x for each of the L entries."""
        return 3 * L


def split_kernel(L: int) -> Kernel:
    """The split format's fragment program for segments of ``L`` entries (no packing)."""
    k = _SPLIT.get(L)
    if k is None:
        k = _SPLIT[L] = Kernel("sparse_split", texels=3 * L + 1, defines={"L": L},
                               doc=f"beyond 002: segments of {L} entries, value and column apart")
    return k
