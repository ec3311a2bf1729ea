"""The matrix-free back end on the GPU: PCG of paper 002 in float32 fragment shaders.

Every operation on a vector of length m or n is a pass of this project's kernels; only PCG's
scalars (three inner products, read every ``pcg_check`` = 8 iterations: alpha and beta are used
on the GPU by ``saxpy_ratio``, beyond 002), the diagonal of G_R (to choose the k pivoted
columns) and the solution of each solve come back to the CPU:

=========================  =====================================================================
A x, Aᵀ y (FSAX, FSATY)    :class:`gpgpu.sparse.SparseStream` (ELLPACK by default, 002 section
                           3.2; T-ELL, DHTELL2's nearest, with the "paper" preset), Aᵀ from
                           its second, transposed copy; dense rows and columns
                           (the Gruca-like problems have one of each) in the dense part
G_R v                      FSATY, the element-wise product with Theta~, FSAX, a saxpy with delta
                           (002 (6), (9))
dot, axpy                  ``elementwise_product`` + the sum reduction (left on the GPU as a
                           1 x 1 stream); ``saxpy``, and ``saxpy_ratio`` for alpha = r^T z /
                           p^T q and beta = r'^T z' / r^T z read from those 1 x 1 streams
PCG's solution x           ``saxpy_ratio``, as the other vectors; with ``solution="float-float"``
                           (beyond 002) ``saxpy_ratio_ff``: x in float-float (RGBA32F)
diag(G_R)                  a sparse product with the squared entries A .* A, then ``add_scalar``
G_R e_i, i in K            all k at once where A is ELLPACK (:meth:`SparseStream.product_planes`:
                           FSATY on every unit plane, then FSAX with Theta~ as column weights;
                           a dense part adds two passes: its rows' chunks, then it); else k
                           products with unit vectors (``copy`` of plane i of the unit planes,
                           FSATY, scaling, FSAX, ``copy`` into plane i of the column stack)
G11 = G(K, K)              ``plane_gather`` (with delta on its diagonal), factored by
                           :func:`gpgpu.cholesky.factor` (outer form, guarded pivots): C C^T;
                           a replaced pivot then becomes its diagonal entry of G11
                           (``replaced_pivot_diagonal``, beyond 002: REPLACED_DIAGONAL)
L21, and C^-1 at K         ``plane_forward_substitution``: k passes over the column stack give
                           the planes of B = G[:, K] C^-T; k passes over the unit planes give
                           the planes of E, E_c = sum_j (C^-1)_cj e_{K_j}
D_S^-1                     ``schur_diagonal_inverse``: 1 / (diag(G)_i - sum_c B_c(i)^2), 0 at K
P^-1 r                     u1 = E^T r, w = D_S^-1 (r - B u1), v = u1 - B^T w, out = w + E v:
                           two ``_plane_dots`` (all k inner products in a few passes) and two
                           ``plane_combination`` passes
=========================  =====================================================================

P^-1 in this form is the partial Cholesky preconditioner of 002 (7)-(8): with C = L11 D_L^1/2,
the forward solve with [L11 0; L21 I] and D gives u1 = C^-1 r1 and w = D_S^-1 (r2 - L21 D_L^1/2
u1) = D_S^-1 (r2 - B2 u1); the backward solve gives out2 = w and out1 = C^-T (u1 - B2^T w). The
rows of B at K hold C itself, where w is 0, so B^T w = B2^T w; E places C^-T v at K.

Vectors are float32 textures of vector_shape(m), folded ``fold`` texels wide (beyond 002:
:func:`gpgpu.stream.folded`, the back end's :meth:`GPUMatrixFree.scope`); a pool keeps them for
reuse (a PCG iteration allocates nothing). With ``plan`` (the default) PCG's iterations are drawn from recorded plans
on vectors made once per back end, with P^-1 in fewer passes (:meth:`GPUMatrixFree.pcg_planned`). The column stacks are 2 x 2 textures of k planes (ping-pong pairs).
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ..blas1 import KERNELS as L1, whole
from ..cholesky import count_replaced, diagonal_for_replaced, factor
from ..context import get_context, max_texture_size
from ..cg.kernels import KERNELS as CG_KERNELS
from ..geometry import Rect, Texel, Triangle
from ..kernel import Kernel
from ..passes import NotReplayable, RecordedPlan, recording
from ..reduce import dot_fan_texture, plane_dots_fan, reduce_region
from ..sparse import SparseStream, _plane_dots
from ..stream import Stream, borrow, folded, give_back, vector_shape
from .matrix_free_backend import MatrixFreeBackend, SoftStop
from .matrix_free_fused import FusedPCG
from .. import float_float

__all__ = ["GPUMatrixFree", "KERNELS", "fitting_fold"]

KERNELS = {
    "plane_forward_substitution": Kernel("plane_forward_substitution", texels=4,
                                         doc="002 (8): L21 by triangular solves, all planes at once"),
    "plane_combination": Kernel("plane_combination", texels=4, doc="002 (7): y + sign P u, the columns of P"),
    "schur_diagonal_inverse": Kernel("schur_diagonal_inverse", texels=4, doc="002 (8): D_S^-1"),
    "plane_gather": Kernel("plane_gather", texels=3, doc="002 (7): the pivoted block G11"),
    "saxpy_ratio": Kernel("saxpy_ratio", texels=5, doc="PCG's alpha and beta kept on the GPU (beyond 002)"),
    "saxpy_ratio_ff": Kernel("saxpy_ratio_ff", texels=4, extensions=("GL_ARB_gpu_shader5",), library="float_float",
                             doc="PCG's solution x + alpha p in float-float (beyond 002)"),
    "plane_combination_difference": Kernel("plane_combination_difference", texels=4,
                                           doc="002 (7): w + E (u1 - g), P^-1's last pass (beyond 002: one pass)"),
    "pcg_readout": Kernel("pcg_readout", texels=5, doc="PCG's four scalars in one texel, one read-back"),
    "copy_rgba": Kernel("copy_rgba", texels=2, doc="000 Algorithm 2's copy, all four components"),
}

#: the formats of PCG's solution vector (``solution``)
SOLUTIONS = ("float32", "float-float")

#: PCG reads its residual norm every this many iterations (``pcg_check``; 1: every iteration)
PCG_CHECK = 8

#: the back end's vectors are folded this many texels wide (``fold``; None: one texture row up
#: to GL_MAX_TEXTURE_SIZE, as the papers store a vector), wider where the layouts need it
#: (:func:`fitting_fold`)
FOLD = 128
#: the preconditioner's planes a folded vector leaves room for: k planes of its rows in a texture
FOLD_PLANES = 256


def fitting_fold(width: int, A, limit: int | None = None):
    """The width the back end folds its vectors to: ``width``, doubled until a texture of
    ``limit`` (default GL_MAX_TEXTURE_SIZE) texels a side holds ELLPACK's layouts of A and Aᵀ
    (a row's K texels for each of the folded vector's rows: rows(m) x the longest row's
    non-zeros, rows(n) x the longest column's) and :data:`FOLD_PLANES` planes of a vector
    (rows(m) x 256: the preconditioner's stacks); None where no width short of ``limit``
    does (one texture row a vector). nug20 on an H100 (32768): 128; on llvmpipe (16384): 256."""
    limit = max_texture_size() if limit is None else int(limit)
    A = A.tocsr()
    m, n = A.shape
    longest_row = int(np.diff(A.indptr).max(initial=0))
    longest_column = int(np.bincount(A.indices, minlength=n).max(initial=0))
    w = int(width)
    while w < limit:
        if -(-m // w) * max(longest_row, FOLD_PLANES) <= limit and -(-n // w) * max(longest_column, 1) <= limit:
            return w
        w *= 2
    return None

#: pivots of G11 at or below this fraction of their diagonal entry are replaced (float32)
PIVOT_TOLERANCE = 1e-6
#: what a replaced pivot becomes in the guarded factor: its column of C is then ~0 ...
HUGE_PIVOT = 1e30
#: ... and then (beyond 002) G11's diagonal entry, so that P^-1 weighs that direction by
#: 1 / G11(j, j), as D_S weighs a row outside K (:func:`gpgpu.cholesky.diagonal_for_replaced`,
#: one pass where a build replaced pivots). False: the pivot stays HUGE_PIVOT, and P^-1 is
#: about 0 along its direction, where PCG's residual then cannot fall (ship12l on an H100: its
#: predictor ran to the PCG limit at the first build with replaced pivots)
REPLACED_DIAGONAL = True
#: a Schur entry below this fraction of its diagonal entry falls back to the diagonal
SCHUR_FLOOR = 1e-6


def _scoped(method):
    """The back end's method runs inside its :meth:`~GPUMatrixFree.scope`: the vectors it makes
    are folded as the back end's, whoever calls it."""
    @functools.wraps(method)
    def run(self, *args, **kwargs):
        with folded(self.fold):
            return method(self, *args, **kwargs)
    return run


class GPUMatrixFree(MatrixFreeBackend):
    """:class:`~gpgpu.lp.matrix_free.MatrixFreeBackend` in float32 on the GPU (module notes).

    Parameters
    ----------
    problem : gpgpu.lp.Problem
    format : {"ellpack", "tell", "corrigan", "packed", "split"}
        The SparseStream format of A, of its transposed copy and of A∘A; default ELLPACK, the
        storage 002's section 3.2 describes. 002's Table 3 ran DHTELL2 (a block per dense row,
        then half a warp per row over transposed ELLPACK); the nearest the pipeline can draw is
        ``"tell"`` with its dense part (the "paper" preset of ``gpgpu.lp.solve``), since a
        fragment writes one output element and cannot share a row's sum with other fragments.
        ``"packed"`` (beyond 002; the "fast" preset): two entries an RGBA texel and long rows
        cut into segments, so the transposed copy's rows of unequal length are not padded to
        the longest (docs/results/matrix-free.md); a product of split rows is two passes.
    dense : None, False or int
        SparseStream's dense-row/column threshold (None: automatic).
    profile : bool
        Wait for the GPU (``glFinish``) at the end of each timed part, so that the timers hold
        GPU time and not only the time to queue the passes (002's Table 2).
    pcg_check : int
        PCG reads its scalars (the residual norm, the breakdown test) every ``pcg_check``
        iterations (default 8); between, alpha and beta stay on the GPU (``saxpy_ratio``) and no
        pass waits for a read-back. 1 reads them every iteration, as 002's CPU did.
    sums : {"pingpong", "fan"}
        The reductions of the inner products outside the fused iteration (the interior point's
        dots; with ``fused=False`` PCG's, P^-1's plane dots and the dense part's in 002's
        products; the fused iteration and the preconditioner's columns sum in chunks):
        "pingpong" (default) is 000's level-1 halving sum (ceil(log2) passes); "fan", beyond
        the papers, adds 32 texels a fragment (ceil(log32) passes; a P^-1 of nug12 in 9 passes
        instead of 29). The results differ by float32 rounding only.
    solution : {None, "float32", "float-float"}
        The format of PCG's solution vector x, which sums the steps alpha p. None (default):
        float32 until the matrix-free method's adaptive rule widens it to float-float after the
        first solve that stopped at its iteration limit (:meth:`widen_solution`; float32 where
        the context lacks GL_ARB_gpu_shader5). "float32" keeps x as the other vectors;
        "float-float" (beyond 002, whose PCG ran in double on the CPU; ``saxpy_ratio_ff``, about
        48 bits, needs GL_ARB_gpu_shader5: OpenGL 4.0, which
        llvmpipe and NVIDIA's drivers have) keeps the steps below half an ulp of x that float32
        loses. The default widens to it only after a solve stopped at its limit: where PCG
        converges, float-float from the start can change a trajectory for the worse (what was
        measured: docs/guide/matrix-free.md, docs/results/matrix-free.md).
    plan : bool
        Draw PCG's iterations from recorded plans (default, beyond 002: host cost per pass;
        :meth:`pcg_planned`): the same algorithm and read-backs as ``plan=False``, which draws
        each pass as it goes (the loop of :func:`~gpgpu.lp.matrix_free.pcg`), with a P^-1 of
        fewer passes; the results differ by float32 rounding only. With ``profile=True`` the
        passes are drawn one by one whatever ``plan`` says, so that each part is timed.
    fused : bool
        With ``plan``: PCG's iteration in the seven passes of :mod:`gpgpu.lp.matrix_free_fused`
        (default, beyond 002: the update and P^-1's forward half one pass, every inner product
        a chunk pass and a total, the curvature sums in A's pass, x and r in one texel), the same
        algorithm up to float32 rounding. False: the recorded plans of 002's kernels
        (:meth:`pcg_planned`), about 30 dependent passes an iteration.
    fold : int or None
        The back end's vectors are folded at most this many texels wide (default :data:`FOLD`,
        128; beyond 002): entry i at texel (i mod fold, i div fold), a block of texture rows
        that the rasterizer and the texture caches use better than one long row. The width is
        doubled where A's layouts or the preconditioner's planes would not fit a texture
        (:func:`fitting_fold`; ``self.fold`` is the width used). None (or
        False, the command line's "off"): one texture row up to GL_MAX_TEXTURE_SIZE, as the
        papers store a vector. The same algorithm either way; the reductions over a folded
        vector add in another order (float32 rounding). The back end's methods make their
        vectors so whoever calls them; a caller's own streams for it are made inside :meth:`scope`.
    """

    name = "gpu"
    pcg_floor = 1e-5

    def __init__(self, problem, format: str = "ellpack", dense=None, profile: bool = False,
                 sums: str = "pingpong", pcg_check: int = PCG_CHECK, solution: str | None = None,
                 plan: bool = True, fused: bool = True, fold: int | None = FOLD):
        super().__init__(problem, profile=profile)
        if fold is False:                       # the command line's "off"
            fold = None
        if fold is not None and (isinstance(fold, (bool, np.bool_)) or not isinstance(fold, (int, np.integer))
                                 or fold < 1):
            raise ValueError(f"fold must be a positive integer (the texels a row of the back end's vectors) "
                             f"or None (one texture row each), got {fold!r}")
        self.fold = None if fold is None else fitting_fold(int(fold), problem.A)
        with self.scope():
            self._setup(problem, format, dense, sums, pcg_check, solution, plan, fused)

    def scope(self):
        """A context in which vectors are made as this back end's (folded ``fold`` wide):
        :func:`~gpgpu.lp.matrix_free.matrix_free` runs its iteration inside it."""
        return folded(self.fold)

    def _setup(self, problem, format, dense, sums, pcg_check, solution, plan, fused) -> None:
        if not isinstance(fused, (bool, np.bool_)):
            raise TypeError(f"fused must be True or False (PCG's iteration in the fused passes, or in "
                            f"002's kernels), got {fused!r}")
        if not isinstance(plan, (bool, np.bool_)):
            raise TypeError(f"plan must be True or False (draw PCG's iterations from recorded plans or "
                            f"pass by pass), got {plan!r}")
        self._plan = bool(plan)
        self._pcg = None           # the planned PCG's streams, made on first use
        self._pcg_plans = {}       # its recorded plans, valid while G_R and P^-1 stay
        if solution is not None and solution not in SOLUTIONS:
            raise ValueError(f"solution must be None or one of {', '.join(map(repr, SOLUTIONS))}, got {solution!r}")
        if solution == "float-float" and not float_float.available():
            raise ValueError("solution='float-float' needs GL_ARB_gpu_shader5 (OpenGL 4.0), which this "
                             "context lacks; use solution='float32'")
        # None: float32 until the adaptive rule widens it (widen_solution), where float-float exists
        self._widen = solution is None and float_float.available()
        self.solution = solution or "float32"
        if isinstance(pcg_check, bool) or not isinstance(pcg_check, (int, np.integer)) or pcg_check < 1:
            raise ValueError(f"pcg_check must be a positive integer (iterations between PCG's "
                             f"read-backs), got {pcg_check!r}")
        self.pcg_check = int(pcg_check)
        m, n = self.m, self.n
        if m == 0 or n == 0:
            raise ValueError(f"{problem.name}: an empty constraint matrix ({m} x {n}) has nothing to "
                             "put on the GPU; gpgpu.lp.solve answers such problems without a backend")
        A = problem.A.tocsr()
        self.sums = sums
        self.A = SparseStream.from_scipy(A, format=format, dense=dense, sums=sums)
        self.AT = self.A.transposed()
        self.A2 = SparseStream.from_scipy(A.multiply(A).tocsr(), format=format, dense=dense, sums=sums)
        self.rows, self.width = vector_shape(m)
        self._free = {m: [], n: []}
        self.theta = self._new(n)
        self.delta = 0.0
        self.k = 0
        self._stacks = None        # [[B, B spare], [E, E spare]], k planes each
        self.pre = None            # (B, E, dinv, k)
        self._mask = self._new(m)
        self._diag = None
        self._fused = FusedPCG(self, KERNELS) if fused else None
        self._n_planes = None      # the n-vector planes of the columns' products (fused, ELLPACK)

    # ------------------------------------------------------------------ vectors
    def _new(self, length: int) -> Stream:
        free = self._free.setdefault(length, [])
        while free:
            s = free.pop()
            if not s.released:
                return s
        return Stream.vector_of(length)

    def free(self, v) -> None:
        if v is not None and not v.released:
            self._free.setdefault(v.length if v.components == 1 else (v.length, v.components), []).append(v)

    def _new_ff(self) -> Stream:
        """A float-float vector of length m (RGBA32F, hi in .r, lo in .g), from the pool."""
        free = self._free.setdefault((self.m, 4), [])
        while free:
            s = free.pop()
            if not s.released:
                return s
        return Stream(self.rows, self.width, components=4, vector=True, length=self.m)

    @_scoped
    def accumulator(self):
        """A zero solution vector: float-float (``solution``) or float32."""
        if self.solution == "float32":
            return super().accumulator()
        x = self._new_ff()
        x.fbo.clear()                                # all four components, the tail too
        return x

    @_scoped
    def accumulate(self, num, den, p, x):
        if x.components == 1:
            return super().accumulate(num, den, p, x)
        out = self._new_ff()
        KERNELS["saxpy_ratio_ff"].draw(out, whole(out), {"X": p, "Y": x, "N": num, "D": den})
        return out

    def widen_solution(self) -> bool:
        """float-float from the next solve on, where ``solution`` was left None and the context
        has GL_ARB_gpu_shader5 (the planned PCG's streams and plans are made again)."""
        if not self._widen or self.solution == "float-float":
            return False
        self.solution = "float-float"
        self._release_pcg()
        return True

    @_scoped
    def vector(self, arr):
        v = self._new(self.m)
        v.write(np.asarray(arr, dtype=np.float64))
        return v

    def to_numpy(self, v):
        self.readbacks += 1
        a = v.to_array()
        if v.components == 4:                       # float-float: hi + lo
            a = a.reshape(-1, 4)[:v.length].astype(np.float64)
            return a[:, 0] + a[:, 1]
        return a.astype(np.float64)

    def sync(self) -> None:
        get_context().finish()

    @_scoped
    def dot_deferred(self, x, y):
        """x^T y left on the GPU: a 1 x 1 stream (no read-back). The product covers the whole
        texture: the tails of folded vectors are zero in every vector of the pool."""
        tmp = borrow(x.rows, x.cols)
        L1["elementwise_product"].draw(tmp, Rect.covering(0, 0, x.cols, x.rows, T0=lambda X, Y: (X, Y)),
                                       {"X": x, "Y": y})
        res = reduce_region(tmp, "sum", (0, 0, x.cols, x.rows), strategy=self.sums, out=borrow(1, 1))
        give_back(tmp)
        return res

    @_scoped
    def dot(self, x, y) -> float:
        handle = self.dot_deferred(x, y)
        value = self.read(handle)
        give_back(handle)
        return value

    def read(self, handle) -> float:
        self.readbacks += 1
        return handle.item()

    def free_scalar(self, handle) -> None:
        if handle is not None and not handle.released:
            give_back(handle)

    @_scoped
    def watch_start(self):
        """The breakdown watch as a 1 x 1 stream, -1 (conjugate gradients' ``breakdown_flag``)."""
        w = borrow(1, 1)
        L1["fill"].draw(w, Texel.at(0, 0), uniforms={"value": -1.0})
        return w

    @_scoped
    def watch_step(self, watch, pq, iteration):
        out = borrow(1, 1)
        CG_KERNELS["breakdown"].draw(out, Texel.at(0, 0), {"flag": watch, "dAd": pq}, {"iteration": float(iteration)})
        give_back(watch)
        return out

    @_scoped
    def ratio_axpy(self, num, den, sign, x, y):
        out = self._new(self.m)
        KERNELS["saxpy_ratio"].draw(out, whole(out), {"X": x, "Y": y, "N": num, "D": den},
                                    {"sign": float(sign)})
        return out

    @_scoped
    def axpy(self, a, x, y):
        out = self._new(self.m)
        L1["saxpy"].draw(out, whole(out), {"X": x, "Y": y}, {"alpha": float(a)})
        return out

    # ------------------------------------------------------------------ G_R
    @_scoped
    def set_weights(self, theta, delta):
        self._forget_plans()                          # delta is a uniform of the recorded passes
        self.theta.write(np.asarray(theta, dtype=np.float64))
        self.delta = float(delta)

    def _scaled_rows_product(self, v: Stream, out: Stream) -> Stream:
        """A (Theta~ (Aᵀ v)) into ``out``: FSATY, the scaling, FSAX."""
        t = self._new(self.n)
        with self.timed("fsaty"):
            self.AT._product(v, t)
        ts = self._new(self.n)
        L1["elementwise_product"].draw(ts, whole(ts), {"X": t, "Y": self.theta})
        self.free(t)
        with self.timed("fsax"):
            self.A._product(ts, out)
        self.free(ts)
        return out

    @_scoped
    def normal_matvec(self, v):
        u = self._scaled_rows_product(v, self._new(self.m))
        out = self._new(self.m)
        L1["saxpy"].draw(out, whole(out), {"X": v, "Y": u}, {"alpha": self.delta})
        self.free(u)
        return out

    # ------------------------------------------------------------------ preconditioner
    def _ensure_stacks(self, k: int) -> None:
        if self._stacks is not None and self.k == k:
            return
        if k * self.rows > max_texture_size():
            raise ValueError(f"a preconditioner of rank {k} stacks {k} planes of the vectors' {self.rows} texture "
                             f"rows, more than GL_MAX_TEXTURE_SIZE = {max_texture_size()}: give a rank of at most "
                             f"{max_texture_size() // self.rows}, or fold=None (the vectors in one texture row)")
        self._release_stacks()
        shape = (k * self.rows, self.width)
        self._stacks = [[Stream(*shape), Stream(*shape)] for _ in range(2)]
        self._kpos = Stream(1, k)
        self.k = k

    def _plane_rects(self, c: int, shift: bool):
        """The texels of plane c of a stack (the vector regions moved down c planes); T0 maps
        them to the vector (``shift``: window in the stack, T0 in the vector) or back."""
        o = c * self.rows
        regions = self._mask.regions()
        if shift:      # window = the stack's plane, T0 = the vector's texel
            rects, T0 = [(x0, y0 + o, x1, y1 + o) for x0, y0, x1, y1 in regions], (lambda X, Y: (X, Y - o))
        else:          # window = the vector, T0 = the stack's texel
            rects, T0 = regions, (lambda X, Y: (X, Y + o))
        return Rect.covering(*rects[0], T0=T0) if len(rects) == 1 else Triangle.from_rects(rects, T0=T0)

    def _substitute(self, pair: list, C: Stream, k: int) -> Stream:
        """C Y = R on the planes of pair[0] (k passes, ping-pong with pair[1]); the planes of Y."""
        h, W = self.rows, self.width
        src, dst = pair
        for j in range(k):
            first = max(j - 1, 0)
            KERNELS["plane_forward_substitution"].draw(
                dst, Rect.covering(0, first * h, W, k * h), {"R": src, "C": C}, {"j": j, "plane_rows": h})
            src, dst = dst, src
        pair[0], pair[1] = src, dst
        return src

    def _columns(self, units: Stream, out: Stream, k: int) -> None:
        """The k columns A Theta~ A^T e_{K_c} into the planes of ``out``: with ``fused`` and
        ELLPACK (:meth:`SparseStream.plane_products`) FSATY on all the unit planes at once,
        then FSAX with Theta~ as column weights (beyond 002): two passes, and where A has a
        dense part a few more a dense row or column (its inner products with every plane, one
        pass that adds it); else k products with the unit vectors (copy, FSATY, scaling, FSAX,
        copy)."""
        rows_n, width_n = vector_shape(self.n)
        if (self._fused is not None and self.A.plane_products() and self.AT.plane_products()
                and k * rows_n <= max_texture_size()):
            if self._n_planes is None or self._n_planes.rows != k * rows_n:
                if self._n_planes is not None:
                    self._n_planes.release()
                self._n_planes = Stream(k * rows_n, width_n)
            self.AT.product_planes(units, k, self._n_planes)
            self.A.product_planes(self._n_planes, k, out, weights=self.theta)
            return
        u = self._new(self.m)
        g = self._new(self.m)
        for c in range(k):
            L1["copy"].draw(u, self._plane_rects(c, shift=False), {"A": units})
            self._scaled_rows_product(u, g)
            L1["copy"].draw(out, self._plane_rects(c, shift=True), {"A": g})
        self.free(u)
        self.free(g)

    @_scoped
    def build_preconditioner(self, rank):
        self._forget_plans()                          # B, E, D_S^-1 and k of the recorded passes
        m, h, W = self.m, self.rows, self.width
        k = min(int(rank), m)
        # diag(G_R) = (A .* A) Theta~ + delta; read back to choose the k largest (002: the
        # pivoted columns), as 002's CPU code chose them
        d = self._new(m)
        self.A2._product(self.theta, d)
        diag = self._diag if self._diag is not None else self._new(m)
        L1["add_scalar"].draw(diag, whole(diag), {"X": d}, {"alpha": self.delta})
        self.free(d)
        self._diag = diag
        dv = diag.to_array().astype(np.float64)
        self.diagonal = dv
        self.readbacks += m
        K = np.sort(np.argpartition(-dv, k - 1)[:k]) if k < m else np.arange(m)
        self._ensure_stacks(k)
        mask = np.ones(m)
        mask[K] = 0.0
        self._mask.write(mask)
        self._kpos.write(K.astype(np.float32).reshape(1, k))
        (Bs, Bspare), (Es, Espare) = self._stacks
        # the unit planes e_{K_c}: zeros, then one texel per plane in one pass
        L1["fill"].draw(Es, Rect.covering(0, 0, W, k * h), uniforms={"value": 0.0})
        units = [(int(e % W), c * h + int(e // W), int(e % W) + 1, c * h + int(e // W) + 1) for c, e in enumerate(K)]
        L1["fill"].draw(Es, Triangle.from_rects(units), uniforms={"value": 1.0})
        # the k columns G_R e_i without delta (it only touches G11): plane c of Bs
        self._columns(Es, Bs, k)
        # G11 = G(K, K) + delta I, factored on the GPU (guarded: a non-positive pivot becomes huge,
        # then its diagonal entry)
        G11 = borrow(k, k)
        KERNELS["plane_gather"].draw(G11, Rect.covering(0, 0, k, k), {"P": Bs, "Kpos": self._kpos},
                                     {"width": W, "plane_rows": h, "delta": self.delta})
        guard = {"tolerance": PIVOT_TOLERANCE, "huge": HUGE_PIVOT}
        if self._fused is not None and self._fused.fits(k):
            # the fused PCG's: C and C^-1 in ceil(k / 4) + 5 passes, B and E as products with C^-1, F
            B, E, replaced = self._fused.prepare(G11, self._stacks, K, k, guard, REPLACED_DIAGONAL)
            give_back(G11)
            self.readbacks += 1
        else:
            C = factor(G11, k, form="outer", guarded=guard)
            replaced = count_replaced(C, k, "full", HUGE_PIVOT)
            self.readbacks += 1
            if replaced and REPLACED_DIAGONAL:
                C_old, C = C, diagonal_for_replaced(C, C, G11, k, HUGE_PIVOT, rows=False)
                C_old.release()
            give_back(G11)
            # B = G[:, K] C^-T and E = the rows of C^-1 placed at K
            B = self._substitute(self._stacks[0], C, k)
            E = self._substitute(self._stacks[1], C, k)
            C.release()
            if self._fused is not None:
                self._fused.ready = False
        dinv = self.pre[2] if self.pre is not None else self._new(m)
        KERNELS["schur_diagonal_inverse"].draw(dinv, whole(dinv), {"Gd": diag, "B": B, "mask": self._mask},
                                               {"k": k, "plane_rows": h, "floor_ratio": SCHUR_FLOOR})
        self.pre = (B, E, dinv, k)
        return {"k": k, "replaced": replaced}

    @_scoped
    def precondition(self, r):
        B, E, dinv, k = self.pre
        h = self.rows
        u1 = _plane_dots(E, k, r, self.sums)                   # C^-1 r1
        w = self._new(self.m)                                   # D_S^-1 (r - B u1), 0 at K
        KERNELS["plane_combination"].draw(w, whole(w), {"Y": r, "P": B, "U": u1, "D": dinv},
                                          {"k": k, "plane_rows": h, "sign": -1.0, "scaled": True})
        g = _plane_dots(B, k, w, self.sums)                   # B2^T w
        v = borrow(k, 1)                                        # u1 - B2^T w
        L1["saxpy"].draw(v, Rect.covering(0, 0, 1, k, T0=lambda X, Y: (X, Y)), {"X": g, "Y": u1},
                         {"alpha": -1.0})
        give_back(u1, g)
        out = self._new(self.m)                                 # w + E v: C^-T v placed at K
        KERNELS["plane_combination"].draw(out, whole(out), {"Y": w, "P": E, "U": v, "D": dinv},
                                          {"k": k, "plane_rows": h, "sign": 1.0, "scaled": False})
        give_back(v)
        self.free(w)
        return out

    # ------------------------------------------------------------------ planned PCG
    @property
    def plan(self) -> bool:
        """Whether :func:`~gpgpu.lp.matrix_free.pcg` runs :meth:`pcg_planned`: ``plan`` and not
        ``profile``, and neither ``precondition`` nor ``normal_matvec`` replaced (on the instance
        or in a subclass: the plan draws its own passes of them, so a replacement, e.g. P = I,
        is drawn by pcg's loop)."""
        own = all(getattr(type(self), name) is getattr(GPUMatrixFree, name) and name not in vars(self)
                  for name in ("precondition", "normal_matvec"))
        return self._plan and not self.profile and own

    def _dot_into(self, x: Stream, y: Stream, out: Stream) -> Stream:
        """x^T y into the 1 x 1 ``out``, over the whole texture (the tails of PCG's vectors are
        zero): with "fan" sums the products in the first fan pass, else :meth:`dot_deferred`'s
        product and sums."""
        if self.sums == "fan":
            return dot_fan_texture(x, y, out)
        tmp = borrow(x.rows, x.cols)
        L1["elementwise_product"].draw(tmp, Rect.covering(0, 0, x.cols, x.rows, T0=lambda X, Y: (X, Y)),
                                       {"X": x, "Y": y})
        reduce_region(tmp, "sum", (0, 0, x.cols, x.rows), strategy=self.sums, out=out)
        give_back(tmp)
        return out

    def _plane_dots(self, P: Stream, k: int, v: Stream) -> Stream:
        """The k inner products of P's planes with v (a borrowed k x 1 stream)."""
        if self.sums == "fan":
            return plane_dots_fan(P, k, v, borrow(k, 1))
        return _plane_dots(P, k, v, self.sums)

    def _precondition_into(self, r: Stream, out: Stream) -> Stream:
        """P^-1 r into ``out`` in the fewest passes P^-1's algebra allows (beyond 002; the
        passes of :meth:`precondition` merged where one pass can do two's work):

        1. u1 = E^T r (= C^-1 r1): the plane products and sums; with "fan" sums the products
           are made in the first sum pass (``plane_dot_fan``, ceil(log32 m) passes for a
           one-row vector), with "pingpong" one product pass and ceil(log2 m) halving passes;
        2. w = D_S^-1 (r - B u1): one ``plane_combination`` pass;
        3. g = B^T w (= B2^T w): as 1;
        4. out = w + E (u1 - g): one ``plane_combination_difference`` pass, which forms u1 - g
           itself (a pass of its own in :meth:`precondition`).

        What cannot merge: 1 and 3 are reductions over all m entries, and each of 2 and 4 needs
        every one of their k results (u1 before w, g before out), so a pass must end between
        them; 2 must be stored because 3 reduces over it and 4 adds it. So P^-1 takes two
        combinations and two k-fold inner products: 2 ceil(log32 m) + 2 passes with "fan" sums
        (4 + 2 ceil(log2 m) with "pingpong"), against 3 + 2 (ceil(log32 m) + 1) (and 5 +
        2 ceil(log2 m)) in :meth:`precondition`; for a folded vector each inner product adds the
        move of the row sums and their sum (the "fan" product pass also leaves out the clearing
        of the folded tail)."""
        B, E, dinv, k = self.pre
        h = self.rows
        u1 = self._plane_dots(E, k, r)
        w = self._new(self.m)
        KERNELS["plane_combination"].draw(w, whole(w), {"Y": r, "P": B, "U": u1, "D": dinv},
                                          {"k": k, "plane_rows": h, "sign": -1.0, "scaled": True})
        g = self._plane_dots(B, k, w)
        KERNELS["plane_combination_difference"].draw(out, whole(out), {"Y": w, "P": E, "U": u1, "G": g},
                                                     {"k": k, "plane_rows": h})
        give_back(u1, g)
        self.free(w)
        return out

    def _normal_matvec_into(self, v: Stream, out: Stream) -> Stream:
        """G_R v into ``out``: :meth:`normal_matvec`'s passes."""
        u = self._scaled_rows_product(v, self._new(self.m))
        L1["saxpy"].draw(out, whole(out), {"X": v, "Y": u}, {"alpha": self.delta})
        self.free(u)
        return out

    def _pcg_streams(self) -> dict:
        """The planned PCG's streams, made once per back end (zero, so the tails of folded
        vectors read zero): the solution x (float32 or float-float, ``solution``), the residual
        r, the direction p, the breakdown watch and r^T z in ping-pong pairs (an iteration reads
        the current and renders the next), q = G_R p, z = P^-1 r, p^T q, r^T r, the best iterate
        kept aside, and the read-out texel."""
        if self._pcg is None:
            m = self.m
            if self.solution == "float-float":
                xvec = lambda: Stream(self.rows, self.width, components=4, vector=True, length=m)  # noqa: E731
            else:
                xvec = lambda: Stream.vector_of(m)                                                # noqa: E731
            self._pcg = {"x": [xvec(), xvec()], "best": xvec(), "r": [Stream.vector_of(m), Stream.vector_of(m)],
                         "p": [Stream.vector_of(m), Stream.vector_of(m)], "q": Stream.vector_of(m),
                         "z": Stream.vector_of(m), "watch": [Stream(1, 1), Stream(1, 1)],
                         "rz": [Stream(1, 1), Stream(1, 1)], "pq": Stream(1, 1), "rr": Stream(1, 1),
                         "readout": Stream(1, 1, components=4)}
        return self._pcg

    def _forget_plans(self) -> None:
        if getattr(self, "_fused", None) is not None:
            self._fused.forget()
        for p in self._pcg_plans.values():
            if p is not None:
                p.release()
        self._pcg_plans = {}

    @_scoped
    def pcg_planned(self, b, target: float, maxiter: int, soft=None) -> dict:
        """:func:`~gpgpu.lp.matrix_free.pcg` (the same algorithm, contract and read-back points)
        with every iteration drawn from a recorded plan (beyond 002: host cost per pass).

        The vectors and scalars of the iteration are made once per back end (x, r, p, the watch
        and r^T z in ping-pong pairs; q, z, p^T q, r^T r), so an iteration is the same passes on
        the same streams each time: its two halves -- the update (q = G_R p, p^T q, the
        breakdown watch, x += alpha p, r -= alpha q; at a check also r^T r and the read-out) and
        the new direction (z = P^-1 r in :meth:`_precondition_into`'s passes, r^T z, p = z +
        beta p) -- are recorded the first time their pairs stand in a given order and drawn
        again from that record (``gpgpu.passes.RecordedPlan``: temporaries of its own, nothing
        borrowed in the loop). alpha and beta stay on the GPU (``saxpy_ratio``). At a check (the
        first iteration, every ``pcg_check``-th, the last) one read-back brings p^T q, r^T z,
        the watch and r^T r together (one ``pcg_readout`` pass): one transfer, where the loop
        of ``pcg`` reads them one by one (``readbacks`` counts the numbers, as there). The plans stay valid
        while G_R and P^-1 do (the solves of one interior point iteration share them);
        ``set_weights`` and ``build_preconditioner`` drop them.

        The answer ``x`` is a copy of the best iterate of the checks, a vector of the pool (the
        caller frees it); the vectors of the plan stay the back end's. With ``fused`` (the
        default) the iteration is :class:`~gpgpu.lp.matrix_free_fused.FusedPCG`'s instead."""
        if self._fused is not None and self._fused.ready:
            return self._fused.solve(b, target, maxiter, soft=soft)
        every = max(1, int(self.pcg_check))
        soft = SoftStop(soft, maxiter, target)
        rnorm = math.sqrt(max(self.dot(b, b), 0.0))
        out = {"iterations": 0, "converged": rnorm <= target, "breakdown": False, "stalled": False,
               "residual": rnorm}
        if out["converged"] or maxiter < 1:
            out["x"] = self.accumulator()
            return out
        st = _PlannedPCG(self._pcg_streams(), every > 1)
        self._pcg_start(st, b)                        # x = 0, r = b, p = z = P^-1 r, r^T z
        best, best_norm = None, rnorm                 # None: the zero x0
        it = 0
        while it < maxiter:
            check = it == 0 or (it + 1) % every == 0 or it + 1 in (maxiter, soft.limit)
            if best is st.xn:                         # the update renders over the best iterate: keep it
                best = self._pcg_copy(st.xn, st.streams["best"])
            self._pcg_step(st, "update", it, check)   # q = G_R p, x + alpha p, r - alpha q
            if check:
                with self.timed("pcg_reads"):
                    pqv, rzv, wv, rrv = (float(v) for v in st.readout.to_array().reshape(-1))
                self.readbacks += 4 if st.watched else 3      # numbers, as pcg's reads count them
                broke = not (math.isfinite(pqv) and pqv > 0.0 and math.isfinite(rzv) and rzv > 0.0)
                if st.watched and not broke:
                    broke = wv >= 0                   # p^T q <= 0 at an iteration since the last read
                if broke:
                    # as pcg: a breakdown, or r reached 0 since the last check; x and r are those
                    # before this iteration's update, and the residual decides
                    if st.watched:
                        rnorm = self._pcg_residual_norm(st)
                        if rnorm < best_norm:
                            best, best_norm = st.x, rnorm
                        if rnorm <= target:
                            out["converged"] = True
                            break
                    out["breakdown"] = True
                    break
            st.swap_update()
            it += 1
            if check:
                rnorm = math.sqrt(rrv) if math.isfinite(rrv) and rrv >= 0 else math.inf
                if rnorm < best_norm:
                    best, best_norm = st.x, rnorm
                if rnorm <= target:
                    out["converged"] = True
                    break
                if not math.isfinite(rnorm):          # broke down between two checks
                    out["breakdown"] = True
                    break
                if soft.stops(it, rnorm, best_norm):     # past the soft limit: enough, or stalled
                    out["stalled"] = soft.stalled
                    break
            self._pcg_step(st, "direction", it, False)    # z = P^-1 r, r^T z, p = z + beta p
            self.counts["precondition"] += 1
            st.swap_direction()
        st.keep()                                     # the pairs' next use starts where this solve left them
        answer = self.accumulator() if best is None else self._pcg_copy(
            best, self._new_ff() if best.components == 4 else self._new(self.m))
        out.update(x=answer, residual=best_norm, iterations=it)
        return out

    def _pcg_start(self, st, b) -> None:
        """x0 = 0, r = b (the plans never read b), p = z = P^-1 r, r^T z, the watch at -1."""
        st.x.fbo.clear()
        L1["copy"].draw(st.r, whole(st.r), {"A": b})
        self._precondition_into(st.r, st.p)
        self.counts["precondition"] += 1
        self._dot_into(st.r, st.p, st.rz)
        if st.watched:
            L1["fill"].draw(st.watch, Texel.at(0, 0), uniforms={"value": -1.0})

    def _pcg_update(self, st, it: int, check: bool) -> None:
        """q = G_R p, p^T q, the watch, x + alpha p, r - alpha q (and at a check r^T r and the
        read-out of the four scalars)."""
        self._normal_matvec_into(st.p, st.q)
        self._dot_into(st.p, st.q, st.pq)
        if st.watched:
            CG_KERNELS["breakdown"].draw(st.watch_n, Texel.at(0, 0), {"flag": st.watch, "dAd": st.pq},
                                         {"iteration": float(it)})
        if st.x.components == 4:
            KERNELS["saxpy_ratio_ff"].draw(st.xn, whole(st.xn), {"X": st.p, "Y": st.x, "N": st.rz, "D": st.pq})
        else:
            KERNELS["saxpy_ratio"].draw(st.xn, whole(st.xn), {"X": st.p, "Y": st.x, "N": st.rz, "D": st.pq},
                                        {"sign": 1.0})
        KERNELS["saxpy_ratio"].draw(st.rn, whole(st.rn), {"X": st.q, "Y": st.r, "N": st.rz, "D": st.pq},
                                    {"sign": -1.0})
        if check:
            self._dot_into(st.rn, st.rn, st.rr)
            KERNELS["pcg_readout"].draw(st.readout, Texel.at(0, 0),
                                        {"pq": st.pq, "rz": st.rz, "rr": st.rr,
                                         "watch": st.watch_n if st.watched else st.pq})

    def _pcg_direction(self, st, it: int, check: bool) -> None:
        """z = P^-1 r, r^T z, p = z + beta p."""
        self._precondition_into(st.r, st.z)
        self._dot_into(st.r, st.z, st.rz_n)
        KERNELS["saxpy_ratio"].draw(st.pn, whole(st.pn), {"X": st.p, "Y": st.z, "N": st.rz_n, "D": st.rz},
                                    {"sign": 1.0})

    def _pcg_step(self, st, part: str, it: int, check: bool) -> None:
        """One half of the iteration (``part``: "update" or "direction"), drawn from its recorded
        plan for the pairs' current order; recorded the first time (drawn pass by pass where the
        passes cannot be replayed)."""
        draw = self._pcg_update if part == "update" else self._pcg_direction
        key = (part, check, st.watched, id(st.x), id(st.r), id(st.p), id(st.watch), id(st.rz))
        plan = self._pcg_plans.get(key, False)
        if plan:
            plan.run({_PlannedPCG.DYNAMIC[0]: float(it)})
            if part == "update":                  # (a drawn update counts its products itself)
                self.counts["fsax"] += 1
                self.counts["fsaty"] += 1
        elif plan is False:
            with recording() as noted:
                draw(st, it, check)
            try:
                self._pcg_plans[key] = RecordedPlan(noted, keep=st.fixed, dynamic=_PlannedPCG.DYNAMIC)
            except NotReplayable:                 # e.g. a transposed product by additive blending
                self._pcg_plans[key] = None
        else:
            draw(st, it, check)

    def _pcg_residual_norm(self, st) -> float:
        """||r||_2 of the residual before this iteration's update, read back (inf where not finite)."""
        self._dot_into(st.r, st.r, st.rr)
        vv = st.rr.item()
        self.readbacks += 1
        return math.sqrt(vv) if math.isfinite(vv) and vv >= 0 else math.inf

    @staticmethod
    def _pcg_copy(src: Stream, dst: Stream) -> Stream:
        """``dst`` = ``src`` (a float-float vector all four components)."""
        (KERNELS["copy_rgba"] if src.components == 4 else L1["copy"]).draw(
            dst, Rect.covering(0, 0, src.cols, src.rows, T0=lambda X, Y: (X, Y)), {"A": src})
        return dst

    # ------------------------------------------------------------------ memory
    def _release_stacks(self) -> None:
        if self._stacks is not None:
            for pair in self._stacks:
                for s in pair:
                    s.release()
            self._kpos.release()
        self._stacks = None

    def _release_pcg(self) -> None:
        """The planned PCG's streams and plans (made again on the next solve)."""
        self._forget_plans()
        if self._pcg is not None:
            for v in self._pcg.values():
                for t in (v if isinstance(v, list) else [v]):
                    t.release()
            self._pcg = None

    def release(self) -> None:
        self._release_pcg()
        if self._fused is not None:
            self._fused.release()
        if self._n_planes is not None:
            self._n_planes.release()
            self._n_planes = None
        self._release_stacks()
        for s in (self.theta, self._mask, self._diag):
            if s is not None:
                s.release()
        if self.pre is not None:
            self.pre[2].release()
        self.pre = None
        for free in self._free.values():
            for s in free:
                s.release()
        self._free.clear()
        self.A.release()
        self.A2.release()


class _PlannedPCG:
    """The streams of one :meth:`GPUMatrixFree.pcg_planned` solve, by name: the ping-pong pairs
    (``x``/``xn``, ``r``/``rn``, ``p``/``pn``, ``watch``/``watch_n``, ``rz``/``rz_n``: the
    current and the next), q = G_R p, z = P^-1 r, p^T q, r^T r, the read-out texel; ``fixed``,
    the streams every plan keeps; ``watched``, whether the breakdown watch runs."""

    #: the uniform a recorded plan takes anew each iteration: the breakdown watch's iteration
    DYNAMIC = ((CG_KERNELS["breakdown"], "iteration"),)

    def __init__(self, streams: dict, watched: bool):
        self.streams, self.watched = streams, watched
        (self.x, self.xn), (self.r, self.rn), (self.p, self.pn) = streams["x"], streams["r"], streams["p"]
        (self.watch, self.watch_n), (self.rz, self.rz_n) = streams["watch"], streams["rz"]
        self.q, self.z, self.pq, self.rr, self.readout = (streams[k] for k in ("q", "z", "pq", "rr", "readout"))
        self.fixed = [*streams["x"], streams["best"], *streams["r"], *streams["p"], self.q, self.z,
                      *streams["watch"], *streams["rz"], self.pq, self.rr, self.readout]

    def swap_update(self) -> None:
        """After the update: the next x, r and watch become the current."""
        self.x, self.xn = self.xn, self.x
        self.r, self.rn = self.rn, self.r
        self.watch, self.watch_n = self.watch_n, self.watch

    def swap_direction(self) -> None:
        """After the new direction: the next p and r^T z become the current."""
        self.p, self.pn = self.pn, self.p
        self.rz, self.rz_n = self.rz_n, self.rz

    def keep(self) -> None:
        """The pairs in the back end's streams as this solve left them (the next solve's order)."""
        s = self.streams
        s["x"], s["r"], s["p"] = [self.x, self.xn], [self.r, self.rn], [self.p, self.pn]
        s["watch"], s["rz"] = [self.watch, self.watch_n], [self.rz, self.rz_n]
