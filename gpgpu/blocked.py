"""Blocked Cholesky and LU on the same pipeline (beyond the papers).

The papers' kernels do one multiply-add a fragment, and on a modern GPU the fragment pipeline's
rate, not the arithmetic, bounds them (``python -m gpgpu bench``). Later GPGPU work packed four
elements into an RGBA texel and did several updates a fragment. This module does that with the
project's own means -- fragment shaders started by rasterized primitives, no compute shaders:

* the matrix lives in an RGBA32F texture of 2 x 2 blocks (``glsl/pack_2x2.frag``: texel (X, Y)
  holds rows 2Y, 2Y+1 and columns 2X, 2X+1), padded with the identity to a multiple of the
  block size b (the factor of diag(A, I) is diag(L, I));
* Cholesky, per panel of b columns c0 .. c0+b-1 (right-looking: each panel updates the whole
  trailing matrix at once):

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

LU with partial pivoting (:func:`blocked_lu`) has the same structure with LU-GPU's passes on
the panel (with the pivots kept on the GPU, two passes a column: one ``lu_panel_step_search``
for the step and the next column's pivot search's first stage, one ``lu_pivot_pick`` for its
second), one pass for U12 = L11⁻¹A12 and one rank-b pass over the trailing square that reads
its rows through the panel's swaps; see its docstring.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .dense_common import (CHOLESKY_KERNELS, LU_PIVOTING, LU_PIVOTS, LUFactor, eliminate,
                           first_bad_pivot, pivot_steps, singular_threshold, swap_lines,
                           validate_spd_input, validate_square)
from .errors import NotPositiveDefiniteError, SingularMatrixError
from .geometry import Rect, Triangle, vertex
from .kernel import Kernel
from .passes import SWAP, Draw, compiled, run
from .reduce import ARGMAX_FAN, ARGMAX_FAN_FIRST, FAN, argmax_region
from .stream import PingPong, Stream

__all__ = ["blocked_cholesky", "blocked_lu", "dispatch", "VARIANTS", "BLOCKS", "LU_BLOCKS", "KERNELS",
           "update_fragments"]

#: the factorizations' ``variant=``: the papers' passes, or this module's
VARIANTS = ("faithful", "blocked")


def dispatch(factorization: str, variant: str, options: dict, defaults: dict):
    """The one dispatch of ``variant=`` for :func:`gpgpu.cholesky` and :func:`gpgpu.lu_factor`
    (and :func:`gpgpu.lu`): ``None`` for ``"faithful"`` (the caller draws its own passes), the
    blocked function (:func:`blocked_cholesky` or :func:`blocked_lu`) for ``"blocked"``.
    ``options``: the caller's arguments that choose among the faithful passes, which the blocked
    variant does not have: each must be at its value in ``defaults``, else a ValueError names
    them. The faithful modules import this one (not the other way round): see
    :mod:`gpgpu.dense_common` for the floors."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be 'faithful' or 'blocked', got {variant!r}")
    if variant == "faithful":
        return None
    if any(options[name] != defaults[name] for name in options):
        names = list(options)
        listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        rest = "its default" if len(names) == 1 else "their defaults"
        raise ValueError(f"variant='blocked' has its own storage and passes; leave {listed} at {rest}")
    return {"cholesky": blocked_cholesky, "lu": blocked_lu}[factorization]


#: block sizes b (panel widths): multiples of 4, since the panel is packed 4 columns a texel
BLOCKS = (4, 8, 16, 32)

KERNELS = {
    "pack": Kernel("pack_2x2", texels=5, doc="beyond the papers: 2 x 2 blocks in RGBA32F"),
    "unpack": Kernel("unpack_2x2", texels=5, doc="beyond the papers: an element of a 2 x 2-block texture"),
    "pack_panel": Kernel("pack_panel", texels=8, doc="beyond the papers: the factored panel into the blocks"),
    "panel_rgba": Kernel("panel_rgba", texels=8, doc="beyond the papers: the panel 4 columns a texel"),
}


def _update_kernel(b: int, name: str = "blocked_update", what: str = "001 Fig. 5's triangle") -> Kernel:
    """The rank-b update program for panel width b (one program per b: the loop unrolls)."""
    key = f"{name}_{b}"
    if key not in KERNELS:
        KERNELS[key] = Kernel(name, texels=b + 2, defines={"BLOCK": b},
                              doc=f"beyond the papers: rank-b update of 2 x 2 blocks, {what}")
    return KERNELS[key]


def padded_order(n: int, b: int) -> int:
    return -(-n // b) * b


def update_fragments(n: int, b: int) -> int:
    """Fragments of all the trailing updates: per panel, the lower block triangle of the
    (N - c0 - b) / 2 trailing blocks, N the padded order."""
    N = padded_order(n, b)
    return sum(t * (t + 1) // 2 for t in ((N - c0 - b) // 2 for c0 in range(0, N, b)))


def _panel_plan(b: int, R: int, panel: str = "faithful") -> list:
    """The faithful factorization of an R x b panel (rows c0 .. N-1 of columns c0 .. c0+b-1):
    per column k, Algorithm 2's four pivot passes (square root, copy, normalization of rows
    k+1 .. R-1, copy), then the outer product subtraction (001 Kernel 5, index swizzle) over
    the panel's columns k+1 .. b-1, rows k+1 .. R-1 (a rectangle: the panel's part above its
    diagonal is computed and never read). The factored panel ends in "S".

    ``panel="onepass"``: each column one ``cholesky_step`` pass instead (the pivot, its column
    and the update from the state before the step, column k - 1 copied), over column k's rows
    k .. R-1 and the rectangle of columns k+1 .. b-1, rows k+1 .. R-1: b passes, not 5b - 1."""
    K = CHOLESKY_KERNELS
    if panel == "onepass":
        plan = []
        for k in range(b):
            rects = [(k, k, k + 1, R)] + ([(k + 1, k + 1, b, R)] if k < b - 1 else []) \
                + ([(k - 1, k - 1, k, R)] if k else [])
            plan.append(Draw(K["cholesky_step"], "T", Triangle.from_rects(rects), {"L": "S", "M0": "S"},
                             {"k": k, "guarded": False, "tolerance": 0.0, "huge": 0.0}))
            plan.append(SWAP)                       # the last one too: the panel ends in "S"
        return plan
    plan = []
    for k in range(b):
        plan += pivot_steps(k, R, "full", K["square_root"])
        if k < b - 1:
            plan.append(Draw(K["swizzle"], "T", Rect.covering(k + 1, k + 1, b, R, T0=lambda x, y, k=k: (k + .5, y),
                                                              T1=lambda x, y, k=k: (x, k + .5)), {"L": "S"}))
            plan.append(SWAP)
    return plan


def _trailing_triangle(x0: int, M: int) -> Triangle:
    """Fig. 5 of 001 over the block texture: the blocks (X, Y) with x0 <= X <= Y < M."""
    return Triangle([vertex((x0, x0 - .5)), vertex((x0, M)), vertex((M + .5, M))])


def blocked_cholesky(A, block: int = 8, check: bool = True, panel: str = "faithful"):
    """The lower Cholesky factor of a symmetric positive definite A by the blocked algorithm of
    the module docstring. A numpy array gives a numpy L; a full n x n Stream (its lower triangle
    read) gives an n x n Stream whose lower triangle is L. ``panel``: the panels factored by
    the faithful kernels (default, five passes a column) or ``"onepass"``, one
    ``cholesky_step`` pass a column (:func:`_panel_plan`). The passes up to the unpacking of
    the factor are one pre-built plan (:func:`cholesky_plan`: its vertices written once per
    order, block and panel kind into one vertex buffer, :func:`gpgpu.passes.compiled`)."""
    if block not in BLOCKS:
        raise ValueError(f"block must be one of {BLOCKS}, got {block!r}")
    if panel not in ("faithful", "onepass"):
        raise ValueError(f"panel must be 'faithful' (five passes a column) or 'onepass' (one), got {panel!r}")
    if isinstance(A, Stream):
        if A.rows != A.cols or A.components != 1:
            raise ValueError(f"blocked Cholesky needs a square R32F stream, got {A!r}")
        return _factor(A, A.rows, block, check, panel)
    arr = validate_spd_input(A)
    with Stream.from_array(np.tril(arr), "A") as S:
        L = _factor(S, arr.shape[0], block, check, panel)
    out = L.to_array()
    L.release()
    return np.tril(out)


def cholesky_plan(n: int, b: int, panel: str = "faithful") -> list:
    """The passes of the blocked Cholesky of order n, panels of b columns, as one plan
    (:mod:`gpgpu.passes`; pre-built once per order, block and panel kind, as the faithful
    plans are): the packing, then per panel its unpacking, :func:`_panel_plan`, its repacking
    four columns a texel, its copy into both block textures, and the trailing update. Roles:
    "S"/"T" the panel's ping-pong pair, "A" the input, "B0"/"B1" the blocks (the update from one
    into the other, a panel each; the factor ends in "B0" for an even number of updates, else
    "B1": :func:`factor_blocks`), "P4" the panel four columns a texel."""
    K = KERNELS
    N = padded_order(n, b)
    M = N // 2
    update = _update_kernel(b)
    plan = [Draw(K["pack"], "B0", Rect.covering(0, 0, M, M), {"A": "A"}, {"n": n})]
    cur, nxt = "B0", "B1"
    for c0 in range(0, N, b):
        R = N - c0
        plan.append(Draw(K["unpack"], "S", Rect.covering(0, 0, b, R), {"P": cur}, {"origin": (c0, c0)}))
        plan += _panel_plan(b, R, panel)
        plan.append(Draw(K["panel_rgba"], "P4", Rect.covering(0, 0, b // 4, R), {"L": "S"}))
        region = Rect.covering(c0 // 2, c0 // 2, (c0 + b) // 2, M)
        for target in (cur, nxt):
            plan.append(Draw(K["pack_panel"], target, region, {"L": "S"}, {"origin": (c0, c0)}))
        x0 = (c0 + b) // 2
        if x0 < M:
            plan.append(Draw(update, nxt, _trailing_triangle(x0, M), {"A": cur, "P": "P4"}, {"c0": c0}))
            cur, nxt = nxt, cur
    return plan


def factor_blocks(n: int, b: int) -> str:
    """The role ("B0" or "B1") that holds the factor after :func:`cholesky_plan`."""
    N = padded_order(n, b)
    updates = sum((c0 + b) // 2 < N // 2 for c0 in range(0, N, b))
    return "B0" if updates % 2 == 0 else "B1"


def _factor(S: Stream, n: int, b: int, check: bool, panel_steps: str = "faithful") -> Stream:
    K = KERNELS
    N = padded_order(n, b)
    M = N // 2
    made = []

    def stream(*shape, **kw):
        made.append(Stream(*shape, **kw))
        return made[-1]

    try:
        blocks = {"B0": stream(M, M, components=4), "B1": stream(M, M, components=4)}
        panel = PingPong(stream(N, b), stream(N, b))
        P4 = stream(N, b // 4, components=4)
        plan = compiled(("blocked_cholesky", n, b, panel_steps), lambda: cholesky_plan(n, b, panel_steps))
        run(plan, panel, others={"A": S, "P4": P4, **blocks})
        L = Stream(n, n)
        try:
            K["unpack"].draw(L, Rect.covering(0, 0, n, n), {"P": blocks[factor_blocks(n, b)]}, {"origin": (0, 0)})
        except BaseException:
            L.release()
            raise
    finally:
        for st in made:
            st.release()
    if check:
        k = first_bad_pivot(L, n, "full")
        if k is not None:
            L.release()
            raise NotPositiveDefiniteError(k, n)
    return L


# ---------------------------------------------------------------------------- LU
KERNELS.update({
    "permute": Kernel("permute_rows_2x2", texels=3, doc="beyond the papers: row swaps of 2 x 2 blocks by a gather"),
    "rows_rgba": Kernel("panel_rows_rgba", texels=5, doc="beyond the papers: the row panel 4 rows a texel"),
    "panel_gather": Kernel("lu_panel_gather", texels=2,
                           doc="beyond the papers: a panel's row gather from the GPU's record of pivots"),
})

#: rows a fragment of the pivot search's first stage drawn in ``lu_panel_step_search`` scans
SEARCH_FAN = 32

#: the blocked LU's block sizes: the Cholesky's and 64 (a wider panel, fewer rank-b passes)
LU_BLOCKS = BLOCKS + (64,)


def _step_kernel(b: int) -> Kernel:
    """LU-GPU's step on the panel with the next column's pivot search (first stage) drawn in
    the same pass (``lu_panel_step_search``), one program per b."""
    key = f"lu_panel_step_search_{b}"
    if key not in KERNELS:
        KERNELS[key] = Kernel("lu_panel_step_search", texels=6, defines={"BLOCK": b, "FAN1": SEARCH_FAN},
                              doc="beyond the papers: LU-GPU's step on the panel in one pass (swap, row of "
                                  "U, normalization, elimination) and the next pivot search's first stage")
    return KERNELS[key]


def _pick_kernel(b: int) -> Kernel:
    """The pivot search's second stage into the record (``lu_pivot_pick``), one program per b."""
    key = f"lu_pivot_pick_{b}"
    if key not in KERNELS:
        KERNELS[key] = Kernel("lu_pivot_pick", texels=2 * (4096 // SEARCH_FAN),
                              defines={"BLOCK": b},
                              doc="beyond the papers: the pivot search's second stage, into the record")
    return KERNELS[key]


def search_partials(R: int, k: int) -> int:
    """The first stage's partial results for panel column k + 1 (rows k+1 .. R-1)."""
    return -(-(R - k - 1) // SEARCH_FAN)


def _solve_kernel(b: int) -> Kernel:
    """U12 = L11^-1 A12 in one pass (``row_panel_solve``), one program per b."""
    key = f"row_panel_solve_{b}"
    if key not in KERNELS:
        KERNELS[key] = Kernel("row_panel_solve", texels=b // 4 + 2, defines={"BLOCK": b},
                              doc="beyond the papers: U12 = L11^-1 A12, all b - 1 steps in one pass, "
                                  "L11 read 4 columns a texel")
    return KERNELS[key]


def _panel_lu(panel: PingPong, R: int, b: int, pivoting: str, threshold: float, c0: int, n: int) -> list:
    """LU-GPU (paper 004) on the R x b column panel with the pivots read back (or none): the
    faithful passes of gpgpu.lu per column -- the pivot search (one read-back), the swap drawn as
    two lines across the panel, the row of U, the normalization and its copy, and the
    elimination over the panel's remaining columns. Returns the panel's row swaps (k <-> p,
    panel rows); the factored panel ends in S. (With the pivots on the GPU the panels are
    passes of :func:`lu_plan`: per column one ``lu_panel_step_search`` and one
    ``lu_pivot_pick``.)"""
    swaps = []
    for k in range(b):
        if pivoting == "partial":
            value, _, p = argmax_region(panel.S, (k, k, k + 1, R), absolute=True)
            if not value > threshold and c0 + k < n:
                raise SingularMatrixError(c0 + k, n, pivoting, value, threshold)
            swaps.append(p)
            if p != k:
                swap_lines(panel, k, p, b, "row")
        eliminate(panel, k, R, "rtt", cols=b)
    return swaps


def _gather(swaps: list, c0: int, N: int) -> np.ndarray:
    """A panel's row swaps (k <-> p in panel rows, in order) as one gather of the N rows."""
    g = list(range(N))
    for k, p in enumerate(swaps):
        g[c0 + k], g[c0 + p] = g[c0 + p], g[c0 + k]
    return np.array(g)


def blocked_lu(A, pivoting: str = "partial", block: int = 8, check: bool = True, pivots: str = "readback"):
    """LU with partial pivoting (or none) by blocks of ``block`` columns (beyond the papers):
    the matrix in RGBA 2 x 2 blocks; per panel, the panel factored by LU-GPU's passes
    (``_panel_lu``), U12 = L11^-1 A12 in one pass (``row_panel_solve``) on the panel's rows
    gathered through its swaps, and the trailing matrix's swaps and rank-b update in one pass
    (``lu_blocked_update_gather``: each fragment reads its rows of A through the panel's row
    gather, so the trailing square is not gathered by a pass of its own). The swaps of later
    panels reach the L columns of earlier ones at the end, in one gather pass (as LAPACK's
    deferred laswp). Returns an :class:`gpgpu.lu.LUFactor` (P A = L U, ``row_perm``).

    ``pivots="gpu"``: no read-back per column; each panel column is two passes: one
    ``lu_panel_step_search`` (the swap, the row of U, the normalized column and the elimination
    of LU-GPU's step, and in the same pass the first stage of the next column's pivot search,
    32 rows a fragment, over the column as the step leaves it) and one ``lu_pivot_pick`` (the
    second stage, one fragment, into a record of pivots on the GPU); a panel's first column is
    searched by the fan (:func:`gpgpu.reduce.argmax_stream`'s passes). The panel's row gather
    is computed from the record by one pass (``lu_panel_gather``), and the pivots are read back
    once at the end. All the passes up to that read-back are one pre-built plan
    (:func:`lu_plan`; its vertices written once per order and block into one vertex buffer,
    :func:`gpgpu.passes.compiled`), as the Cholesky plans are. The same pivots as
    ``pivots="readback"`` where the column's values are distinct (the same float32 operations,
    up to a compiler's contraction of a multiply-add).

    ``block``: 4, 8, 16, 32 or 64 (:data:`LU_BLOCKS`): wider panels shade fewer fragments in
    the rank-b updates (about N³ / (12 b)) and more in the panels (about b N² / 2).

    Passes at n = N (a multiple of b, P = N / b panels): ``pivots="gpu"`` 2N + 10P - 5 plus
    the panels of more than 32 rows and those of more than 2048 (their first column's fan
    search has a second and third pass), read-backs 2 (the singularity threshold and the
    pivots; 1 with ``check=False``)."""
    if pivots not in LU_PIVOTS:
        raise ValueError(f"pivots must be one of {LU_PIVOTS}, got {pivots!r}")

    if block not in LU_BLOCKS:
        raise ValueError(f"block must be one of {LU_BLOCKS}, got {block!r}")
    if pivoting not in ("partial", "none"):
        raise ValueError(f"the blocked LU pivots by rows: pivoting must be 'partial' or 'none' "
                         f"(of {LU_PIVOTING}), got {pivoting!r}")
    if isinstance(A, Stream):
        return _lu(A, A.rows, pivoting, block, check, pivots)
    with Stream.from_array(validate_square(A), "A") as S:
        return _lu(S, S.rows, pivoting, block, check, pivots)


def _lu(S: Stream, n: int, pivoting: str, b: int, check: bool, pivots: str = "readback"):
    if S.rows != S.cols or S.components != 1:
        raise ValueError(f"blocked LU needs a square R32F stream, got {S!r}")
    K = KERNELS
    N = padded_order(n, b)
    M = N // 2
    threshold = singular_threshold(S, n) if check else 0.0
    update = _update_kernel(b, "lu_blocked_update_gather", "LU's trailing square, rows through the swaps")
    solve = _solve_kernel(b)
    on_gpu = pivots == "gpu" and pivoting == "partial"
    panel_swaps = {}                                     # c0 -> the panel's swaps (k <-> p, panel rows)
    made = []

    def stream(*shape, **kw):
        made.append(Stream(*shape, **kw))
        return made[-1]

    try:
        work = PingPong(stream(M, M, components=4), stream(M, M, components=4))
        F = stream(M, M, components=4)                   # the finished rows and columns
        panel = PingPong(stream(N, b + 2), stream(N, b + 2))   # + the pivot search's two columns
        rows = PingPong(stream(b, max(N - b, 1)), stream(b, max(N - b, 1)))
        L4 = stream(N, b // 4, components=4)
        U4 = stream(b // 4, max(N - b, 1), components=4)
        if on_gpu:
            # nothing to read back before the end: the whole factorization is one pre-built plan
            record = stream(1, N, components=4)
            perm = stream(1, N)                          # a panel's row gather, drawn from the record
            fan1 = stream(-(-N // FAN), 1, components=4)  # the pivot searches' partial results
            fan2 = stream(max(1, -(-N // (FAN * ARGMAX_FAN.defines["FAN"]))), 1, components=4)
            plan = compiled(("blocked_lu", n, b), lambda: lu_plan(n, b))
            run(plan, panel, others={"A": S, "W0": work.S, "W1": work.T, "F": F, "R0": rows.S, "R1": rows.T,
                                     "L4": L4, "U4": U4, "REC": record, "G": perm, "F1": fan1, "F2": fan2})
            panel_swaps = {c0: [] for c0 in range(0, N, b)}
        else:
            _panels(S, BlockedSizes(n, b, N, M), pivoting, threshold, LUTextures(work, F, panel, rows, L4, U4),
                    LUPrograms(update, solve), panel_swaps)
        if on_gpu:                                       # the one read-back of the pivots
            piv = record.to_array().reshape(N, 4)
            for c0 in panel_swaps:
                for k in range(b):
                    if c0 + k < n and check and not piv[c0 + k, 0] > threshold:
                        raise SingularMatrixError(c0 + k, n, pivoting, float(piv[c0 + k, 0]), threshold)
                panel_swaps[c0] = [int(piv[c0 + k, 2]) for k in range(b)]
        perms = [_gather(panel_swaps[c0], c0, N) for c0 in sorted(panel_swaps)]
        order = np.arange(N)                             # row r of the factor is row order[r] of A
        for g in perms:
            order = order[g]
        # the later panels' swaps reach each panel's L columns: one gather with a row of
        # source rows per panel (identity above the panel's own rows)
        # (panel p's row: perms[p + 1] composed with the later ones, built from the last panel back)
        groups = np.empty((len(perms), N), np.float32)
        src = np.arange(N)
        for p in range(len(perms) - 1, -1, -1):
            groups[p] = src
            src = perms[p][src]
        done = stream(M, M, components=4)
        with Stream.from_array(groups) as gp:
            K["permute"].draw(done, Rect.covering(0, 0, M, M), {"A": F, "perm": gp}, {"group": b})
        LU = Stream(n, n)
        try:
            K["unpack"].draw(LU, Rect.covering(0, 0, n, n), {"P": done}, {"origin": (0, 0)})
        except BaseException:
            LU.release()
            raise
    finally:
        for st in made:
            st.release()
    row_perm = order[:n]
    if pivoting == "none" and check:
        k = first_bad_pivot(LU, n, "full", magnitude=True, threshold=threshold)
        if k is not None:
            LU.release()
            raise SingularMatrixError(k, n, pivoting, None, threshold)
    return LUFactor(LU, row_perm, np.arange(n), pivoting, [], [])


@dataclass(frozen=True)
class BlockedSizes:
    """The sizes of a blocked LU: ``n`` the order, ``b`` the panel width, ``N`` the order padded
    to a multiple of b (:func:`padded_order`), ``M`` = N / 2 the 2 x 2 blocks a side."""

    n: int
    b: int
    N: int
    M: int


@dataclass(frozen=True)
class LUTextures:
    """The streams of the blocked LU with the pivots read back (:func:`_panels`): ``work`` the
    matrix in 2 x 2 blocks (the trailing square updated from S into T), ``F`` the finished rows
    and columns, ``panel`` the column panel's pair, ``rows`` the row panel and U12, ``L4`` and
    ``U4`` L21 and U12 four a texel."""

    work: PingPong
    F: Stream
    panel: PingPong
    rows: PingPong
    L4: Stream
    U4: Stream


@dataclass(frozen=True)
class LUPrograms:
    """The blocked LU's per-b programs: ``update`` the rank-b update of the trailing square
    through the swaps (``lu_blocked_update_gather``), ``solve`` U12 = L11^-1 A12 (``row_panel_solve``)."""

    update: Kernel
    solve: Kernel


def _panels(S: Stream, sizes: BlockedSizes, pivoting: str, threshold: float, tex: LUTextures,
            programs: LUPrograms, panel_swaps: dict) -> None:
    """The panels of the blocked LU with the pivots read back (or no pivoting), pass by pass."""
    K = KERNELS
    n, b, N, M = sizes.n, sizes.b, sizes.N, sizes.M
    work, F, panel = tex.work, tex.F, tex.panel
    K["pack"].draw(work.S, Rect.covering(0, 0, M, M), {"A": S}, {"n": n})
    for c0 in range(0, N, b):
        R, W = N - c0, N - c0 - b
        K["unpack"].draw(panel.S, Rect.covering(0, 0, b, R), {"P": work.S}, {"origin": (c0, c0)})
        panel_swaps[c0] = _panel_lu(panel, R, b, pivoting, threshold, c0, n)
        K["pack_panel"].draw(F, Rect.covering(c0 // 2, c0 // 2, (c0 + b) // 2, M), {"L": panel.S},
                             {"origin": (c0, c0)})
        if W == 0:
            break
        with Stream.from_array(_gather(panel_swaps[c0], c0, N).astype(np.float32)[None, :]) as gp:
            _trailing(tex, programs, gp, sizes, c0)


def _argmax_draws(k: int, R: int, at: int) -> list:
    """The passes of ``argmax_stream(S, (k, k, k + 1, R), absolute=True, fan=True, out=REC,
    at=at)`` (gpgpu.reduce's fan search down one column) as plan items: FAN candidates a
    fragment into "F1", then 2 FAN a fragment ("F1" -> "F2" -> "F1" ...), the last pass into
    texel (at, 0) of "REC"."""
    draws, kernel, src = [], ARGMAX_FAN_FIRST, "S"
    x0, y0, x1, y1 = k, k, k + 1, R
    n, temps = R - k, ("F1", "F2")
    while True:
        fan = kernel.defines["FAN"]
        n_out = -(-n // fan)
        T0 = lambda X, Y, x0=x0, y0=y0, f=fan: (x0 + X, y0 + f * Y - (f - 1) / 2)  # noqa: E731
        u = {"limit": (float(x1), float(y1)), "step": (0.0, 1.0)}
        if kernel is ARGMAX_FAN_FIRST:
            u.update({"absolute": True, "negate": False})
        if n_out == 1:
            rect = Rect.covering(at, 0, at + 1, 1, lambda X, Y, T0=T0: T0(X - at, Y))
            draws.append(Draw(kernel, "REC", rect, {"S": src}, u))
            return draws
        target = temps[len(draws) % 2]
        draws.append(Draw(kernel, target, Rect.covering(0, 0, 1, n_out, T0), {"S": src}, u))
        src, kernel, n = target, ARGMAX_FAN, n_out
        x0, y0, x1, y1 = 0, 0, 1, n_out


def lu_plan(n: int, b: int) -> list:
    """The passes of the blocked LU of order n with partial pivoting and the pivots on the GPU,
    up to the read-back of the record of pivots, as one plan (:mod:`gpgpu.passes`; beyond the
    papers: host cost). Roles: "S"/"T" the column panel's ping-pong pair, "A" the input, "W0"
    and "W1" the matrix in 2 x 2 blocks (the trailing square swapped and updated from one into
    the other, a panel each), "F" the finished rows and columns, "R0"/"R1" the row panel and
    U12, "L4"/"U4" L21 and U12 four a texel, "REC" the record of pivots, "G" the panel's row
    gather, "F1"/"F2" the pivot searches' partial results."""
    K = KERNELS
    N = padded_order(n, b)
    M = N // 2
    update = _update_kernel(b, "lu_blocked_update_gather", "LU's trailing square, rows through the swaps")
    solve = _solve_kernel(b)
    step, pick = _step_kernel(b), _pick_kernel(b)
    plan = [Draw(K["pack"], "W0", Rect.covering(0, 0, M, M), {"A": "A"}, {"n": n})]
    cur, nxt = "W0", "W1"
    for c0 in range(0, N, b):
        R, W = N - c0, N - c0 - b
        x0 = (c0 + b) // 2
        plan.append(Draw(K["unpack"], "S", Rect.covering(0, 0, b, R), {"P": cur}, {"origin": (c0, c0)}))
        plan += _argmax_draws(0, R, c0)                  # column 0's pivot: the fan search
        for k in range(b):
            # the step, and (but after the last column) the next column's search, first stage
            rects = [(0, max(k - 1, 0), b, R)]
            m = search_partials(R, k) if k < b - 1 else 0
            if m:
                rects.append((b, 0, b + 2, m))
            plan.append(Draw(step, "T", Triangle.from_rects(rects), {"A": "S", "record": "REC"},
                             {"k": k, "at": c0 + k, "rows": R}))
            plan.append(SWAP)
            if m:                                        # its second stage, into the record
                plan.append(Draw(pick, "REC", Rect.covering(c0 + k + 1, 0, c0 + k + 2, 1), {"S": "S"},
                                 {"count": m, "k": k + 1}))
        plan.append(Draw(K["pack_panel"], "F", Rect.covering(c0 // 2, c0 // 2, x0, M), {"L": "S"},
                         {"origin": (c0, c0)}))
        if W == 0:
            break
        plan += [
            Draw(K["panel_gather"], "G", Rect.covering(0, 0, N, 1), {"record": "REC"}, {"c0": c0, "b": b}),
            Draw(K["permute"], nxt, Rect.covering(x0, c0 // 2, M, x0), {"A": cur, "perm": "G"}, {"group": 0}),
            Draw(K["unpack"], "R0", Rect.covering(0, 0, W, b), {"P": nxt}, {"origin": (c0 + b, c0)}),
            Draw(K["panel_rgba"], "L4", Rect.covering(0, 0, b // 4, R), {"L": "S"}),
            Draw(solve, "R1", Rect.covering(0, 0, W, b), {"U": "R0", "L4": "L4"}),
            Draw(K["pack_panel"], "F", Rect.covering(x0, c0 // 2, M, x0), {"L": "R1"}, {"origin": (c0 + b, c0)}),
            Draw(K["rows_rgba"], "U4", Rect.covering(0, 0, W, b // 4), {"U": "R1"}),
            Draw(update, nxt, Rect.covering(x0, x0, M, M), {"A": cur, "L": "L4", "U": "U4", "perm": "G"}, {"c0": c0}),
        ]
        cur, nxt = nxt, cur
    return plan


def _trailing(tex: LUTextures, programs: LUPrograms, perm: Stream, sizes: BlockedSizes, c0: int) -> None:
    """After the panel at c0: U12 (the panel's b rows right of it, gathered through the swaps
    (``perm``) into work.T and solved with L11 in one pass), its rows into F, L21 and U12 four
    a texel, and the trailing square swapped and updated from work.S into work.T in one pass;
    then work's S and T are swapped."""
    K = KERNELS
    work, rows, panel, F, L4, U4 = tex.work, tex.rows, tex.panel, tex.F, tex.L4, tex.U4
    update, solve = programs.update, programs.solve
    b, M = sizes.b, sizes.M
    R, W = sizes.N - c0, sizes.N - c0 - b
    x0 = (c0 + b) // 2
    K["permute"].draw(work.T, Rect.covering(x0, c0 // 2, M, x0), {"A": work.S, "perm": perm}, {"group": 0})
    K["unpack"].draw(rows.S, Rect.covering(0, 0, W, b), {"P": work.T}, {"origin": (c0 + b, c0)})
    K["panel_rgba"].draw(L4, Rect.covering(0, 0, b // 4, R), {"L": panel.S})
    solve.draw(rows.T, Rect.covering(0, 0, W, b), {"U": rows.S, "L4": L4})
    rows.swap()
    K["pack_panel"].draw(F, Rect.covering(x0, c0 // 2, M, x0), {"L": rows.S}, {"origin": (c0 + b, c0)})
    K["rows_rgba"].draw(U4, Rect.covering(0, 0, W, b // 4), {"U": rows.S})
    update.draw(work.T, Rect.covering(x0, x0, M, M), {"A": work.S, "L": L4, "U": U4, "perm": perm}, {"c0": c0})
    work.swap()
