"""Paper 003's (Corrigan's) sparse storage: ``SparseStream.from_scipy(A, format="corrigan")``.

003, Figs. 4-7: "only nonzero values are stored (Figure 4) ... which column each entry is stored
in ... is also stored (Figure 5). The number of nonzero entries is hard coded into each fragment
program" (Fig. 6); rows are sorted by their number of non-zeros "to allow for as many rows to be
drawn at once", and the columns with them so that a symmetric positive definite matrix stays
one (Fig. 7: ``sort=True``, done by ``gpgpu.sparse`` for a format with ``sorts = True``).

A first product that compiles more than ``gpgpu.sparse.LOG_PROGRAMS`` programs says so first,
once per matrix, on stderr and on the ``gpgpu.sparse`` logger (INFO).
"""
from __future__ import annotations

import logging
import sys

import numpy as np

from ..context import max_texture_size
from ..geometry import Rect, Triangle
from ..kernel import Kernel, context_state as _kernel_state
from ..stream import Stream, fold_width
from .common import Format, _auto_threshold

#: what the corrigan format says it compiles goes to the logger of the module users call
log = logging.getLogger("gpgpu.sparse")

#: The longest row the corrigan format unrolls into one program (003: "the Cg compiler simply
#: fails when compiling the corresponding fragment programs for those rows"); longer rows must
#: go to the dense part.
CORRIGAN_MAX_NNZ = 1024

#: The default ``max_programs`` of the corrigan format: distinct non-zero counts (one fragment
#: program each, compiled by the first product) beyond which ``from_scipy`` refuses the matrix
#: and names ``format="ellpack"``; every NETLIB matrix has at most 51.
CORRIGAN_MAX_PROGRAMS = 64

_CORRIGAN: dict = {}


class Corrigan(Format):
    """Paper 003's storage (Figs. 4-7): the non-zeros row after row in one float32 texture
    (values, Fig. 4) and their column indexes in another (Fig. 5), ``store_width`` texels wide;
    the rows grouped into runs of consecutive rows with the same non-zero count, each run one
    rectangle over its part of y (a few where it wraps a folded y's texture row), drawn with the
    program for its count (``glsl/sparse_corrigan.frag`` with ``NNZ`` compiled in, Fig. 6). With
    ``sort=True`` (Fig. 7) the rows and columns are permuted by count, so each count is one run.

    Limits: a row of more than ``CORRIGAN_MAX_NNZ`` non-zeros (003's compiler failed on such
    rows) and more distinct counts than ``max_programs`` are refused; so are 2^24 non-zeros or
    more (the storage index is float32). Nothing is padded, so the automatic dense threshold is
    max(32, 10 x the median count), at most ``CORRIGAN_MAX_NNZ`` (the dense part is beyond 003:
    its future work 4). Layout attributes: ``runs`` ((count, first row, end row, first entry)
    each), ``programs`` (distinct counts), ``rectangles`` (runs), ``store_width``; ``K`` is None.
    Rows without non-zeros have no run: ``draws_every_row`` is False.
    """

    sorts = True
    draws_every_row = False

    @classmethod
    def auto_dense(cls, M, row_nnz: np.ndarray, long_row: int):
        """max(32, 10 x the median count) for rows (at most ``CORRIGAN_MAX_NNZ``) and columns."""
        m, n = M.shape
        col_nnz = np.bincount(M.indices, minlength=n)
        return (_auto_threshold(row_nnz, n, False, CORRIGAN_MAX_NNZ), _auto_threshold(col_nnz, m, False),
                col_nnz)

    def upload(self, S, cols: np.ndarray, vals: np.ndarray, counts: np.ndarray) -> None:
        """The entries row after row into the values and columns textures; the runs."""
        m = S.shape[0]
        self._check_programs(S, counts)
        limit = max_texture_size()
        nnz = vals.size
        if nnz >= 2 ** 24:
            raise ValueError(f"{nnz} non-zeros: the storage index is not exact in float32 beyond 2^24")
        width = max(1, min(nnz, fold_width()))
        height = max(1, -(-nnz // width))
        if height > limit:
            raise ValueError(f"{nnz} non-zeros do not fit a {width} x {limit} texture "
                             f"(GL_MAX_TEXTURE_SIZE = {limit})")
        store = np.zeros(width * height, dtype=np.float32)
        store[:nnz] = vals
        index = np.zeros(width * height, dtype=np.float32)
        index[:nnz] = cols
        S._streams["values"] = Stream(height, width, data=store)
        S._streams["columns"] = Stream(height, width, data=index)
        self.store_width = width
        # runs of consecutive rows with the same count: one rectangle (or a few, where the
        # run wraps to the next texture row of the folded y) per run
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        change = np.flatnonzero(np.diff(counts)) + 1
        bounds = np.concatenate([[0], change, [m]])
        self.runs = [(int(counts[a]), int(a), int(b), int(starts[a]))
                     for a, b in zip(bounds[:-1], bounds[1:]) if counts[a] > 0]
        self.programs = len({c for c, *_ in self.runs})
        self.rectangles = len(self.runs)
        self.K = None

    @staticmethod
    def _check_programs(S, counts: np.ndarray) -> None:
        """Refuse a row longer than one program unrolls, or more distinct counts than
        ``max_programs``, in the words of the copy of A it is about."""
        noun = "columns" if S._of_transpose else "rows"
        big = np.flatnonzero(counts > CORRIGAN_MAX_NNZ)
        if big.size:
            raise ValueError(f"{S._where()}{S._line(big[0])} has {int(counts[big[0]])} non-zeros, "
                             f"more than one fragment program of the corrigan format unrolls ({CORRIGAN_MAX_NNZ}); "
                             f"(paper 003: \"the Cg compiler simply fails\" on such rows); leave dense=None and "
                             f"dense_split=True (the defaults, beyond 003: such {noun} go to the dense part) or "
                             f"set dense= at most {CORRIGAN_MAX_NNZ} (got dense={S._source_dense!r}), or use "
                             f"format='ellpack'")
        distinct = np.unique(counts[counts > 0]).size
        if distinct > S._max_programs:
            raise ValueError(
                f"{S._where()}the corrigan format compiles one fragment program per distinct non-zero "
                f"count (paper 003, Fig. 6), and {S._lines()} have {distinct} distinct counts, more than "
                f"max_programs={S._max_programs}: the first product would compile {distinct} programs "
                "(slow: seconds to minutes). Use format='ellpack' (one program for every row), or pass "
                f"max_programs={distinct} (or more) to compile them all")

    def announce(self, S, most: int) -> None:
        """Before the first product: say how many programs it compiles, when more than ``most``
        (``gpgpu.sparse.LOG_PROGRAMS``): one line on stderr and the same on the logger (INFO)."""
        programs = _kernel_state().programs
        new = sorted({c for c, *_ in self.runs if corrigan_kernel(c).key not in programs})
        if len(new) > most:
            m, n = S.shape
            text = ("compiling %d fragment programs of the corrigan format (one per non-zero count, "
                    "%d .. %d; paper 003) for the first product of this %d x %d matrix%s; "
                    "format='ellpack' compiles one" % (len(new), new[0], new[-1], m, n,
                                                       " (rmatvec's transposed copy)" if S._of_transpose else ""))
            print(f"gpgpu.sparse: {text}", file=sys.stderr, flush=True)
            log.info(text)

    def product(self, S, xs: Stream, y: Stream) -> None:
        """y = A x: a rectangle a run, drawn with its count's program (rows without a run, no
        non-zeros, are drawn by no pass: ``draws_every_row`` is False)."""
        st = S._streams
        for count, r0, r1, first in self.runs:
            prim = _run_rectangles(r0, r1, y.cols)
            corrigan_kernel(count).draw(y, prim, {"values": st["values"], "columns": st["columns"], "X": xs},
                                        {"first": first, "store_width": self.store_width, "x_width": xs.cols})

    def fetches(self, S) -> tuple:
        """3 a non-zero (value, column, x): nothing padded."""
        stored = int(S.row_counts.sum())
        return 3 * stored, stored

    def to_scipy(self, S) -> tuple:
        """The first nnz texels of the two textures read back, row after row."""
        m = S.shape[0]
        nnz = int(S.row_counts.sum())
        v = S._streams["values"].to_array().reshape(-1)[:nnz]
        c = S._streams["columns"].to_array().reshape(-1)[:nnz]
        return np.repeat(np.arange(m), S.row_counts), c.astype(np.int64), v


def corrigan_kernel(nnz: int) -> Kernel:
    """The fragment program for rows of ``nnz`` non-zeros (003: hard-coded count), one per count."""
    k = _CORRIGAN.get(nnz)
    if k is None:
        k = _CORRIGAN[nnz] = Kernel("sparse_corrigan", texels=2 * nnz + 1,
                                    doc=f"003 Fig. 6: rows of {nnz} non-zeros", defines={"NNZ": nnz})
    return k


def _run_rectangles(r0: int, r1: int, W: int):
    """The rectangles over entries r0 .. r1-1 of a y folded W wide (one when they share a
    texture row, else up to three), with T0.x interpolated to the row's index in the run:
    index + .5 at the fragment's centre."""
    rects = []
    i = r0
    while i < r1:
        y, x = divmod(i, W)
        if x == 0 and r1 - i >= W:                       # whole texture rows
            full = (r1 - i) // W
            rects.append((0, y, W, y + full))
            i += full * W
        else:
            end = min(r1, (y + 1) * W)
            rects.append((x, y, x + end - i, y + 1))
            i = end
    # T0.x = (Y - .5) W + (X - .5) - r0 + .5, affine in the window position
    T0 = lambda X, Y: ((Y - 0.5) * W + X - r0, 0.0)     # noqa: E731
    if len(rects) == 1:
        return Rect.covering(*rects[0], T0=T0)
    return Triangle.from_rects(rects, T0=T0)
