"""The matrix-free back end on the GPU: PCG of paper 002 in float32 fragment shaders.

Every operation on a vector of length m or n is a pass of this project's kernels; only PCG's
scalars (three inner products, read every ``pcg_check`` = 8 iterations: alpha and beta are used
on the GPU by ``saxpy_ratio``, beyond 002), the diagonal of G_R (to choose the k pivoted
columns) and the solution of each solve come back to the CPU:

=========================  =====================================================================
A x, Aᵀ y (FSAX, FSATY)    :class:`gpgpu.sparse.SparseStream` (ELLPACK by default, 002 section
                           3.2), Aᵀ from its second, transposed copy; dense rows and columns
                           (the Gruca-like problems have one of each) in the dense part
G_R v                      FSATY, the element-wise product with Theta~, FSAX, a saxpy with delta
                           (002 (6), (9))
dot, axpy                  ``elementwise_product`` + the sum reduction (left on the GPU as a
                           1 x 1 stream); ``saxpy``, and ``saxpy_ratio`` for alpha = r^T z /
                           p^T q and beta = r'^T z' / r^T z read from those 1 x 1 streams
PCG's solution x           ``saxpy_ratio``, as the other vectors; with ``solution="float-float"``
                           (beyond 002) ``saxpy_ratio_ff``: x in float-float (RGBA32F)
diag(G_R)                  a sparse product with the squared entries A .* A, then ``add_scalar``
G_R e_i, i in K            k products with unit vectors (``copy`` of plane i of the unit planes,
                           FSATY, scaling, FSAX, ``copy`` into plane i of the column stack)
G11 = G(K, K)              ``plane_gather`` (with delta on its diagonal), factored by
                           :func:`gpgpu.cholesky.factor` (outer form, guarded pivots): C C^T
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

Vectors are float32 textures of vector_shape(m); a pool keeps them for reuse (a PCG iteration
allocates nothing). The column stacks are 2 x 2 textures of k planes (ping-pong pairs).
"""
from __future__ import annotations

import numpy as np

from ..blas1 import KERNELS as L1, whole
from ..cholesky import count_replaced, factor
from ..context import get_context
from ..cg import KERNELS as CG_KERNELS
from ..geometry import Rect, Texel, Triangle
from ..kernel import Kernel
from ..reduce import reduce_region
from ..sparse import SparseStream, _plane_dots
from ..stream import Stream, borrow, give_back, vector_shape
from .matrix_free import MatrixFreeBackend

__all__ = ["GPUMatrixFree", "KERNELS"]

KERNELS = {
    "plane_forward_substitution": Kernel("plane_forward_substitution", texels=4,
                                         doc="002 (8): L21 by triangular solves, all planes at once"),
    "plane_combination": Kernel("plane_combination", texels=4, doc="002 (7): y + sign P u, the columns of P"),
    "schur_diagonal_inverse": Kernel("schur_diagonal_inverse", texels=4, doc="002 (8): D_S^-1"),
    "plane_gather": Kernel("plane_gather", texels=3, doc="002 (7): the pivoted block G11"),
    "saxpy_ratio": Kernel("saxpy_ratio", texels=5, doc="PCG's alpha and beta kept on the GPU (beyond 002)"),
    "saxpy_ratio_ff": Kernel("saxpy_ratio_ff", texels=4, extensions=("GL_ARB_gpu_shader5",), library="float_float",
                             doc="PCG's solution x + alpha p in float-float (beyond 002)"),
}

#: the formats of PCG's solution vector (``solution``)
SOLUTIONS = ("float32", "float-float")

#: PCG reads its residual norm every this many iterations (``pcg_check``; 1: every iteration)
PCG_CHECK = 8

#: pivots of G11 at or below this fraction of their diagonal entry are replaced (float32)
PIVOT_TOLERANCE = 1e-6
#: what a replaced pivot becomes: its column of C is then ~0, that direction left to D_S
HUGE_PIVOT = 1e30
#: a Schur entry below this fraction of its diagonal entry falls back to the diagonal
SCHUR_FLOOR = 1e-6


class GPUMatrixFree(MatrixFreeBackend):
    """:class:`~gpgpu.lp.matrix_free.MatrixFreeBackend` in float32 on the GPU (module notes).

    Parameters
    ----------
    problem : gpgpu.lp.Problem
    format : {"ellpack", "tell", "corrigan"}
        The SparseStream format of A and of its transposed copy (002 uses ELLPACK).
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
        The reductions of the inner products (PCG's dots, P^-1's plane dots, the dense part's):
        "pingpong" (default) is 000's level-1 halving sum (ceil(log2) passes); "fan", beyond
        the papers, adds 32 texels a fragment (ceil(log32) passes; a P^-1 of nug12 in 9 passes
        instead of 29). The results differ by float32 rounding only.
    solution : {"float32", "float-float"}
        The format of PCG's solution vector x, which sums the steps alpha p. "float32" (default)
        keeps x as the other vectors; "float-float" (beyond 002, whose PCG ran in double on the
        CPU; ``saxpy_ratio_ff``, about 48 bits, needs GL_ARB_gpu_shader5: OpenGL 4.0, which
        llvmpipe and NVIDIA's drivers have) keeps the steps below half an ulp of x that float32
        loses. Measured (docs/results/matrix-free.md): PCG's true residual 20 times smaller after 10000 iterations at
        nug20's tenth interior point iteration, and nug20 optimal at eps = 1e-8 with it and
        ``stall_window=30``, not without it (both in a float32 emulation,
        ``experiments.mfipm.emulate32``); nug12 optimal either way on the H200; but agg3 ends in
        numerical trouble with it (its trajectory differs from iteration 9), so it is not the
        default.
    """

    name = "gpu"
    pcg_floor = 1e-5

    def __init__(self, problem, format: str = "ellpack", dense=None, profile: bool = False,
                 sums: str = "pingpong", pcg_check: int = PCG_CHECK, solution: str = "float32"):
        super().__init__(problem, profile=profile)
        from ..float_float import available

        if solution not in SOLUTIONS:
            raise ValueError(f"solution must be one of {', '.join(map(repr, SOLUTIONS))}, got {solution!r}")
        if solution == "float-float" and not available():
            raise ValueError("solution='float-float' needs GL_ARB_gpu_shader5 (OpenGL 4.0), which this "
                             "context lacks; use solution='float32'")
        self.solution = solution
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

    def accumulator(self):
        """A zero solution vector: float-float (``solution``) or float32."""
        if self.solution == "float32":
            return super().accumulator()
        x = self._new_ff()
        x.fbo.clear()                                # all four components, the tail too
        return x

    def accumulate(self, num, den, p, x):
        if x.components == 1:
            return super().accumulate(num, den, p, x)
        out = self._new_ff()
        KERNELS["saxpy_ratio_ff"].draw(out, whole(out), {"X": p, "Y": x, "N": num, "D": den})
        return out

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

    def dot_deferred(self, x, y):
        """x^T y left on the GPU: a 1 x 1 stream (no read-back). The product covers the whole
        texture: the tails of folded vectors are zero in every vector of the pool."""
        tmp = borrow(x.rows, x.cols)
        L1["elementwise_product"].draw(tmp, Rect.covering(0, 0, x.cols, x.rows, T0=lambda X, Y: (X, Y)),
                                       {"X": x, "Y": y})
        res = reduce_region(tmp, "sum", (0, 0, x.cols, x.rows), strategy=self.sums, out=borrow(1, 1))
        give_back(tmp)
        return res

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

    def watch_start(self):
        """The breakdown watch as a 1 x 1 stream, -1 (conjugate gradients' ``breakdown_flag``)."""
        w = borrow(1, 1)
        L1["fill"].draw(w, Texel.at(0, 0), uniforms={"value": -1.0})
        return w

    def watch_step(self, watch, pq, iteration):
        out = borrow(1, 1)
        CG_KERNELS["breakdown"].draw(out, Texel.at(0, 0), {"flag": watch, "dAd": pq}, {"iteration": float(iteration)})
        give_back(watch)
        return out

    def ratio_axpy(self, num, den, sign, x, y):
        out = self._new(self.m)
        KERNELS["saxpy_ratio"].draw(out, whole(out), {"X": x, "Y": y, "N": num, "D": den},
                                    {"sign": float(sign)})
        return out

    def axpy(self, a, x, y):
        out = self._new(self.m)
        L1["saxpy"].draw(out, whole(out), {"X": x, "Y": y}, {"alpha": float(a)})
        return out

    # ------------------------------------------------------------------ G_R
    def set_weights(self, theta, delta):
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

    def build_preconditioner(self, rank):
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
        u = self._new(m)
        g = self._new(m)
        for c in range(k):
            L1["copy"].draw(u, self._plane_rects(c, shift=False), {"A": Es})
            self._scaled_rows_product(u, g)
            L1["copy"].draw(Bs, self._plane_rects(c, shift=True), {"A": g})
        self.free(u)
        self.free(g)
        # G11 = G(K, K) + delta I, factored on the GPU (guarded: a non-positive pivot becomes huge)
        G11 = borrow(k, k)
        KERNELS["plane_gather"].draw(G11, Rect.covering(0, 0, k, k), {"P": Bs, "Kpos": self._kpos},
                                     {"width": W, "plane_rows": h, "delta": self.delta})
        C = factor(G11, k, form="outer", guarded={"tolerance": PIVOT_TOLERANCE, "huge": HUGE_PIVOT})
        give_back(G11)
        replaced = count_replaced(C, k, "full", HUGE_PIVOT)
        self.readbacks += 1
        # B = G[:, K] C^-T and E = the rows of C^-1 placed at K
        B = self._substitute(self._stacks[0], C, k)
        E = self._substitute(self._stacks[1], C, k)
        C.release()
        dinv = self.pre[2] if self.pre is not None else self._new(m)
        KERNELS["schur_diagonal_inverse"].draw(dinv, whole(dinv), {"Gd": diag, "B": B, "mask": self._mask},
                                               {"k": k, "plane_rows": h, "floor_ratio": SCHUR_FLOOR})
        self.pre = (B, E, dinv, k)
        return {"k": k, "replaced": replaced}

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

    # ------------------------------------------------------------------ memory
    def _release_stacks(self) -> None:
        if self._stacks is not None:
            for pair in self._stacks:
                for s in pair:
                    s.release()
            self._kpos.release()
        self._stacks = None

    def release(self) -> None:
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
