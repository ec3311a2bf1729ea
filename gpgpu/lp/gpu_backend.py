"""The operation set of Algorithm 3 (paper 000) on the GPU: every vector and matrix operation is
a fragment-shader kernel of this project, and only the scalars the algorithm needs come back.

Section 4.2 of 000, kernel by kernel:

=====================  =====================================================================
inner product          ``blas1.dot``: element-wise product, then the sum reduction
inf_norm, smin         the abs-max and min reductions
saxpy and variants     ``saxpy``, ``scale``, ``elementwise_product``, ``elementwise_quotient``,
                       ``add_scalar`` kernels, one rectangle each
line search            ``step_ratio`` kernel, then a min reduction (or an argmin, for the
                       blocking index of Mehrotra's step-length heuristic)
sgemv                  ``gemv`` in the singlepass inner-product form, A and Aᵀ (swizzled rows)
adat                   ``adat.form`` (Algorithm 3 of 001, the triangle of Fig. 2(b)); with
                       ``adat="inner"`` 000's singlepass inner-product form (one pass); with
                       ``adat="points"`` (beyond the papers) 001's outer products over the
                       non-zeros of A, one pass of points (``adat.form_points``)
chol                   ``cholesky.factor``: outer form (triangle update) or inner form, with the
                       guarded square root of Wright ch. 11 replacing tiny or negative pivots
forward/backward       ``cholesky.solve_with_factor`` (multipass substitution; with
                       ``substitution="inner"`` one pass a step)
=====================  =====================================================================

Without refinement A stays on the GPU as an m x n stream and vectors are 1-row streams. Every
scalar read back (dot, norms, step lengths, the pivot count, entries) is counted in
``readbacks``. With bounds in the Newton system (``bounds="implicit"``, :mod:`gpgpu.lp.bounds`)
the normal matrix is formed from the main rows only, and three kernels (``bound_weights``,
``bound_elimination_terms``, ``bound_back_substitution``) eliminate the bound rows from the
float32 iterates' solves.

``refine=True`` (beyond the paper): the factor M = L Lᵀ is still formed and computed on the GPU
in float32, and each solve with it runs on the GPU, but the iterates are float64 numpy vectors
and the refinement residual r - M z is computed in float64 on the CPU (see
``backend.refine_solve``); float32 iterates could not meet eps = 1e-8. A is then never dense
(with ``adat="points"``). The factor's streams are kept from one factorization to the next, and
the passes of a solve and of the replaced-pivot count are recorded once and drawn again from
that record (:class:`gpgpu.passes.RecordedPlan`; beyond the papers: host cost per pass).
"""
from __future__ import annotations

import moderngl
import numpy as np
import scipy.sparse as sp

from .. import blas1, float_float
from ..adat import form as form_adat
from ..adat import equilibration, form_points, pack_4x1, pair_table, scale_symmetric, shift_diagonal
from ..blas2 import KERNELS as GEMV, gemv
from ..cholesky import (check_block, count_replaced, factor, factor_with_inverse, flag_replaced, lower_inverse,
                        solve_with_factor, solve_with_inverse)
from ..context import max_texture_size
from ..geometry import Rect, Texel
from ..kernel import Kernel
from ..passes import NotReplayable, RecordedPlan, recording
from ..reduce import argmax_region, argmin_blocking_ratio, reduce_into, reduce_region, reduce_terms
from ..stream import Stream, give_back
from .backend import FLOAT32_MAX, REFINE_RTOL, Backend, PrecisionExhausted, refine_solve
from .numpy_backend import NumpyBackend, default_pivot_tol, huge_pivot

#: Cholesky steps a pass of factor_with_inverse (substitution="inverse", pivot="onepass").
#: Measured on an H200 in one run (EGL; the factor and inverse alone, medians of 7): m = 173
#: 1.77-1.82 ms with 2 steps, 1.26-1.35 with 4; m = 305 2.86-2.91 / 2.57-2.60; m = 516
#: 6.65-6.76 / 6.03-6.11 (6 and 8 steps no faster at m = 516). Table 3's ten problems took the
#: same time with 2, 3, 4 or 6 (1.06-1.23 s, within the run's spread).
STEPS_A_PASS = 4
#: Cholesky steps a pass of the float-float factor and inverse (float_float.factor_with_inverse):
#: one, float_float.STEPS (several steps a pass are the slower on the H200, over whole rows and
#: over a block's panels: docs/results/lp.md, "The float-float trailing pass by Dot2")
FF_STEPS_A_PASS = float_float.STEPS
#: the block of ``factor_block="auto"`` (the robust and fast presets) where the float64 refinement
#: follows the factor. Measured on an H100 (docs/results/lp.md): the factor and its inverse at
#: m = 1503 in 0.0445 s by blocks of 16 and 0.0446 s by 32 (float32), 0.0688 s and 0.0696 s
#: (float-float); at m = 600 in float-float 0.0087 s by 16 and 0.0120 s by 32. Without
#: refinement (eps >= 3e-5) "auto" keeps the step passes over the whole matrix: blend at Table 3's
#: eps ended in numerical trouble there by blocks of 16 (optimal by 8, 32 and without blocks),
#: a factor rounded otherwise with nothing after it to make up for it
AUTO_BLOCK = 16
#: the float-float A D² Aᵀ loops over row i's non-zeros (float_float.row_lists) where A's density is
#: at most this; a denser A keeps the dense inner product (3 texels a term against 2)
FF_ROWS_DENSITY = 0.5
SAFEGUARD = Kernel("free_split_safeguard", texels=5, doc="the free-split safeguard (beyond 000)")
MULTIPLY_ADD = Kernel("multiply_add", texels=4, doc="a (x .* y) + b z in one pass (beyond 000)")
MULTIPLY_SHIFT_DIVIDE = Kernel("multiply_shift_divide", texels=4, doc="(x .* y + c) ./ z in one pass (beyond 000)")

BOUND_KERNELS = {
    "weights": Kernel("bound_weights", texels=4, doc="beyond 000: upper bounds in the Newton system, d~"),
    "terms": Kernel("bound_elimination_terms", texels=5,
                    doc="beyond 000: the bound rows' terms of the Schur system's right-hand side"),
    "back": Kernel("bound_back_substitution", texels=7,
                   doc="beyond 000: the bound rows' part of the normal equations' solution"),
}
#: the ``adat`` forms of :class:`GPUBackend`
ADATS = ("outer", "inner", "inner4", "points")

__all__ = ["GPUBackend", "upload_dense", "check_dense", "ADATS"]


def check_dense(problem, method: str, rows: int | None = None) -> None:
    """Check that the m x n constraint matrix (or its first ``rows`` rows) and the normal
    equations of those rows fit this GPU's textures (GL_MAX_TEXTURE_SIZE) and that A is not
    empty; a ValueError names the sizes."""
    from ..context import max_texture_size

    m, n = problem.A.shape
    r = m if rows is None else rows
    limit = max_texture_size()
    if m > limit or n > limit:
        raise ValueError(
            f"{problem.name}: {method} stores the {m} x {n} constraint matrix and the {r} x {r} "
            f"normal equations A D² Aᵀ as textures, but this GPU's GL_MAX_TEXTURE_SIZE is {limit}; "
            "the problem is too large for the dense normal-equation method of paper 000")
    if m == 0 or n == 0:
        raise ValueError(f"{problem.name}: an empty constraint matrix ({m} x {n}) has nothing to "
                         "put on the GPU; gpgpu.lp.solve answers such problems without a backend")


def upload_dense(problem, method: str, rows: int | None = None) -> Stream:
    """A (or its first ``rows`` rows) as a float32 stream, after :func:`check_dense` and a check
    that the dense copy fits in memory."""
    check_dense(problem, method, rows)
    A = problem.dense_A(np.float32, method=method)
    return Stream.from_array(A if rows is None else A[:rows], "A")


class GPUBackend(Backend):
    """:class:`~gpgpu.lp.backend.Backend` with streams and kernels.

    Parameters
    ----------
    problem : Problem
    cholesky : {"outer", "inner"}
        Outer-product Cholesky with the triangular update (Algorithm 2 of 000, Fig. 5 of 001)
        or the inner-product form (Algorithm 1 of 000).
    refine : bool
        Mixed-precision refinement of the normal-equation solves (see the module notes).
    update : {"triangle", "square"}
        Update domain of the outer form; the paper's BrookGPU code (Table 3) could only draw
        squares.
    pivot_tol : float
        Relative pivot tolerance of the guarded square root (default as numpy32).
    adat : {"outer", "inner", "inner4", "points"}
        How A D² Aᵀ is formed: 001's multipass outer products (default; two passes per
        column of A) or the singlepass inner-product form 000 lists for adat (one pass), or,
        beyond the paper, those inner products over A and d packed four columns an RGBA texel
        (A packed once, d each iteration: a quarter of the fetches, two passes), or 001's outer
        products over the non-zeros of each column of A only, one pass of points with additive
        blending (:func:`gpgpu.adat.form_points`; A's pairs listed once; the robust default).
    substitution : {"outer", "inner", "inverse"}
        The forward and backward substitutions: column-oriented, three passes a step
        (default), or the inner-product form, one pass a step (:func:`gpgpu.blas2.substitute`;
        beyond the paper's listing); or, with ``"inverse"`` (beyond the paper), L⁻¹ formed on
        the GPU once per factorization (m passes, :func:`gpgpu.cholesky.lower_inverse`) and each
        solve two one-pass products over the triangle
        (:class:`gpgpu.cholesky.TriangularProduct`); with ``pivot="onepass"`` four steps of the factor and of its
        inverse are one pass (:func:`gpgpu.cholesky.factor_with_inverse` with
        ``steps=STEPS_A_PASS``, four).
    pivot : {"separate", "fused", "onepass"}
        The outer Cholesky's pivot steps: Algorithm 2's square root, copy, normalization, copy
        (default), one ``pivot_column`` pass and one copy (beyond the paper), or, with
        ``"onepass"`` (beyond the paper), the pivot, its column and the update of a step in one
        ``cholesky_step`` pass.
    reductions : {"pingpong", "fan"}
        The reductions of the inner products, norms, minima and step lengths: 000's halving
        passes (default) or, beyond the paper, 32 texels a fragment (:mod:`gpgpu.reduce`'s
        ``"fan"``): ceil(log32 n) passes instead of ceil(log2 n), and the products of the
        inner products and the ratios of the line search computed in the first of them
        (:func:`gpgpu.reduce.reduce_terms`, :func:`gpgpu.reduce.argmin_blocking_ratio`) instead
        of in passes of their own; the same minima, maxima and blocking indexes, sums up to
        float32 rounding.
    fuse : bool
        Beyond the paper (default False): the composites of the iteration in one pass each --
        ``matvec_add`` / ``rmatvec_add`` by sgemv with beta = 1 (kernel
        ``matrix_vector_inner_product``), ``mul_add`` by the ``multiply_add`` kernel,
        ``mul_shift_div`` by ``multiply_shift_divide`` -- instead of two or three passes; and
        with ``reductions="fan"`` ``stepped_dot``'s two steps computed in its reduction's first
        pass (:func:`gpgpu.reduce.reduce_terms`); the same float32 operations (results equal up
        to a compiler's contraction of a product and a sum); and the entries of x, dx, s and ds
        at the blocking indexes (``entries_many``), and the inner products and norms at the top of
        an iteration (``scalars``), each written into one small texture and read back once,
        instead of one read-back a value.
    bounds : {"implicit", "rows"}
        Upper bounds in the Newton system (default, :mod:`gpgpu.lp.bounds`) or as rows of the
        normal matrix (paper 000's standard form).
    factor_precision : {"auto", "float32", "float-float"}
        Beyond the papers. With ``"float-float"`` (needs ``refine=True``)
        A Θ Aᵀ, its guarded Cholesky factor and the solves of every refinement step are
        computed in float-float arithmetic on the GPU (:mod:`gpgpu.float_float`: pairs of
        float32, about 48 bits, float32's exponent range; the inner-product adat and one-pass
        Cholesky steps whatever ``adat`` and ``pivot`` say; with ``substitution="inverse"`` the
        factor's inverse formed with it and every solve two passes, after a stall (or where the
        inverse overflows float32) block substitutions, 8 steps a pass; else block
        substitutions throughout), with relative pivot tolerance
        :data:`gpgpu.float_float.DEFAULT_PIVOT_TOL` unless ``pivot_tol`` is given. For the
        problems whose float32 factor leaves the refinement stalled near the optimum.
        ``"auto"`` (the default) is ``"float32"`` until the Mehrotra solver's iteration stalls or
        breaks down;
        with refinement the remaining iterations then use ``"float-float"``
        (:meth:`raise_precision`; the history entry of that iteration gets
        ``factor_precision``, the result's message says so), and a later stall raises its
        solves from the inverse to substitutions ("float-float (substitutions)"). Without refinement ``"auto"`` is
        ``"float32"``: the paper's path (Table 3) is unchanged.
    factor_block : None, "auto" or an even int from 2 to 128
        Beyond the papers. With ``substitution="inverse"`` and ``pivot="onepass"``, the factor and
        its inverse (float32 and float-float alike) by blocks of this many columns: the steps
        over each block's panel (``STEPS_A_PASS`` a pass in float32 where the block is a multiple
        of twice that, else one), then one pass taking the block's terms off everything below
        it (``block=`` of :func:`gpgpu.cholesky.factor_with_inverse` and
        :func:`gpgpu.float_float.factor_with_inverse`): the texels below a block are written once a
        block instead of once a step. ``"auto"`` (the presets ``robust`` and ``fast``,
        ``gpgpu.lp.FAST_GPU_KERNELS``): :data:`AUTO_BLOCK` (16) with ``refine``, else None. None
        (this class's default): ``STEPS_A_PASS`` steps a pass over the whole matrix in float32,
        one in float-float. With another ``substitution`` or ``pivot``,
        or where 2m exceeds GL_MAX_TEXTURE_SIZE, the factor and its inverse are not formed
        together, and ``factor_block`` has nothing to block (it is not used).
    """

    def __init__(self, problem, cholesky="outer", refine=False, update="triangle", pivot_tol=None,
                 refine_method="cg", adat="outer", substitution="outer", pivot="separate",
                 reductions="pingpong", fuse=False, factor_precision="auto", bounds="implicit", factor_block=None):
        super().__init__(problem, cholesky=cholesky, refine=refine, bounds=bounds)
        if factor_block == "auto":       # blocks where the float64 refinement follows the factor
            factor_block = AUTO_BLOCK if refine else None
        check_block(factor_block)
        # the blocks are those of the factor with its inverse, which only these two form together
        self.factor_block = factor_block if (substitution, pivot) == ("inverse", "onepass") else None
        if factor_precision not in ("auto", "float32", "float-float"):
            raise ValueError(f"factor_precision must be 'auto' (float32, float-float after a stall with "
                             f"refinement), 'float32' (the papers') or 'float-float' (pairs of float32, beyond "
                             f"the papers), got {factor_precision!r}")
        if factor_precision == "float-float" and not refine:
            raise ValueError("factor_precision='float-float' computes the factor for the float64 refinement "
                             "of the normal-equation solves: pass refine=True (or an eps below 3e-5 with refine=None)")
        self.factor_precision = factor_precision
        if adat not in ADATS:
            raise ValueError(f"adat must be 'outer' (001's multipass outer products), 'inner' (000's "
                             f"singlepass inner products), 'inner4' (those over 4 x 1 packed texels) or 'points' "
                             f"(001's outer products over the non-zeros of A, one pass of points), got {adat!r}")
        if substitution not in ("outer", "inner", "inverse"):
            raise ValueError(f"substitution must be 'outer' (three passes a step), 'inner' (one) or "
                             f"'inverse' (L^-1 once per factorization, two passes a solve), got {substitution!r}")
        self.name = "gpu" + ("+refine" if refine else "")
        self.update = update
        if pivot not in ("separate", "fused", "onepass"):
            raise ValueError(f"pivot must be 'separate' (Algorithm 2's four passes a step), 'fused' "
                             f"(one pass and a copy) or 'onepass' (the whole step in one pass), got {pivot!r}")
        if pivot == "onepass" and (cholesky != "outer" or update != "triangle"):
            raise ValueError("pivot='onepass' is a variant of the outer form with the triangle update")
        if reductions not in ("pingpong", "fan"):
            raise ValueError(f"reductions must be 'pingpong' (000's halving passes) or 'fan' (32 texels a "
                             f"fragment), got {reductions!r}")
        self.reductions = reductions
        self.fuse = bool(fuse)
        self.adat = adat
        self.substitution = substitution
        self.pivot = pivot
        self.pivot_tol = default_pivot_tol(np.float32) if pivot_tol is None else pivot_tol
        self.huge = huge_pivot(np.float32)
        self.A = self.A4 = self.L = self.Linv = self._partner = self.Aff = self.Xff = None
        self._normal = self._points = self._bound_info = self._bound_table = self._ff_rows = None
        self._rhs = self._sol = self._count = None     # the recorded plans' streams
        self._plans, self._factor_version = {}, 0
        check_dense(problem, "the gpu backend", self.m_normal)
        if not refine:                          # the float32 iterates' products with A and Aᵀ
            self.A = upload_dense(problem, "the gpu backend")
        self._default_pivot_tol = pivot_tol is None
        self.float_float_unavailable = None     # why "auto" could not raise the precision, if so
        # the float-float factor's solves: two passes with its inverse (substitution="inverse"),
        # until a stall raises them to block substitutions (raise_precision)
        self._ff_inverse = substitution == "inverse"
        if factor_precision == "float-float":
            self._use_float_float()
        self.refine_method = refine_method
        self.refine_stats = []
        # with refinement the vector work is float64 on the CPU (the numpy64 backend's ops)
        self._cpu = NumpyBackend.vector_operations(problem) if refine else None
        self.d64 = None
        # the float-float normal matrix is equilibrated by powers of two before its factor
        self.equilibration, self._A2 = None, None

    # No __del__: a backend that is dropped lets go of its streams, whose own finalizers keep
    # their textures for reuse or queue them for the owning thread, without a GL call (a
    # finalizer may run between two GL calls of a pass). release() frees them now.
    def release(self) -> None:
        normal = self._normal if self._normal is not self.A else None
        for _, plan in self._plans.values():
            plan.release()
        self._plans = {}
        for s in (self.A, normal, self.A4, self.L, self.Linv, self._partner, self.Aff, self.Xff, self._points,
                  self._bound_info, self._bound_table, self._rhs, self._sol, self._count, self._ff_rows):
            if s is not None:
                s.release()
        self.A = self.A4 = self.L = self.Linv = self._partner = self.Aff = self.Xff = None
        self._normal = self._points = self._bound_info = self._bound_table = self._ff_rows = None
        self._rhs = self._sol = self._count = None     # the recorded plans' streams
        self._plans, self._factor_version = {}, 0

    def _normal_rows(self) -> Stream:
        """The rows of A whose normal matrix is formed, dense on the GPU (all of A, or its main
        rows with bounds in the Newton system), uploaded on first use."""
        if self._normal is None:
            if self.bounds is None and self.A is not None:
                self._normal = self.A
            else:
                self._normal = upload_dense(self.problem, "the gpu backend", self.m_normal)
        return self._normal

    # -------------------------------------------------------------- vectors
    def vector(self, arr):
        if self._cpu is not None:
            return self._cpu.vector(arr)
        return Stream.from_array(np.asarray(arr, dtype=np.float64).ravel(), "vector")

    def to_numpy(self, x):
        self.readbacks += 1
        if self._cpu is not None:
            return np.asarray(x, dtype=np.float64).copy()
        return x.to_array().astype(np.float64)

    def free(self, x) -> None:
        if isinstance(x, Stream):
            x.release()

    def _read(self, s: Stream) -> float:
        self.readbacks += 1
        value = s.item()
        s.release()
        return value

    # -------------------------------------------------------------- level 1
    def _cpu_or(self, name, *args, **kw):
        out = getattr(self._cpu, name)(*args, **kw)
        if name in ("dot", "norm_inf", "vmin", "max_step", "entries"):
            self.readbacks += 1 if name != "entries" else len(np.atleast_1d(args[1]))
        return out

    def _fused(self, x) -> bool:
        """The fan reductions compute an element-wise term in their first pass (one-row vectors)."""
        return self.reductions == "fan" and x.rows == 1

    def dot(self, x, y):
        if self._cpu is not None:
            return self._cpu_or("dot", x, y)
        if self._fused(x):
            return self._read(reduce_terms("product", "sum", x, y))
        return self._read(blas1.dot(x, y, stream=True, strategy=self.reductions))

    def norm_inf(self, x):
        if self._cpu is not None:
            return self._cpu_or("norm_inf", x)
        return self._read(blas1.norm_inf(x, stream=True, strategy=self.reductions))

    def vmin(self, x):
        if self._cpu is not None:
            return self._cpu_or("vmin", x)
        return self._read(reduce_region(x, "min", strategy=self.reductions))

    def axpy(self, a, x, y):
        return self._cpu.axpy(a, x, y) if self._cpu is not None else blas1.saxpy(a, x, y)

    def scale(self, a, x):
        return self._cpu.scale(a, x) if self._cpu is not None else blas1.scale(a, x)

    def mul(self, x, y):
        return self._cpu.mul(x, y) if self._cpu is not None else blas1.multiply(x, y)

    def div(self, x, y):
        return self._cpu.div(x, y) if self._cpu is not None else blas1.divide(x, y)

    def add_scalar(self, x, a):
        return self._cpu.add_scalar(x, a) if self._cpu is not None else blas1.add_scalar(x, a)

    def bound_free_splits(self, x, partner, bound=1.0, s=None, floor=0.0):
        if self._cpu is not None:
            return super().bound_free_splits(x, partner, bound, s, floor)
        if self._partner is None:
            self._partner = Stream.from_array(np.asarray(partner, dtype=np.float64), "partner")
        out = Stream(1, x.cols, vector=True, zero=False)     # covered whole
        SAFEGUARD.draw(out, blas1.whole(out), {"X": x, "partner": self._partner, "S": x if s is None else s},
                       {"bound": float(bound), "centring": float(floor) if s is not None else 0.0})
        return out

    def max_step(self, x, dx, index=False):
        if self._cpu is not None:
            return self._cpu_or("max_step", x, dx, index=index)
        self.readbacks += 1
        if self._fused(x):          # the ratios computed in the reduction's first pass
            if not index:
                res = reduce_terms("step_ratio", "min", x, dx)
                try:
                    return res.item()
                finally:
                    res.release()
            res = argmin_blocking_ratio(x, dx)
            try:
                value, i = (float(v) for v in res.read_texel(0, 0)[:2])
            finally:
                give_back(res)
            return (-value, int(i)) if -value <= 1.0 else (1.0, -1)
        ratio = Stream(1, x.cols, zero=False)
        kernel = "blocking_ratio" if index else "step_ratio"
        blas1.KERNELS[kernel].draw(ratio, blas1.whole(ratio), {"X": x, "DX": dx})
        try:
            if not index:
                res = reduce_region(ratio, "min", strategy=self.reductions)
                alpha = res.item()
                res.release()
                return alpha
            # the argmin of the uncapped ratios: the argmax of their negation, first on ties
            value, i, _ = argmax_region(ratio, negate=True, fan=self.reductions == "fan")
            return (-value, i) if -value <= 1.0 else (1.0, -1)
        finally:
            ratio.release()

    def entries(self, x, idx):
        if self._cpu is not None:
            return self._cpu_or("entries", x, idx)
        idx = np.atleast_1d(np.asarray(idx, dtype=np.int64))
        self.readbacks += idx.size
        return np.array([x.read_texel(int(i), 0)[0] for i in idx], dtype=np.float64)

    # -------------------------------------------------------------- level 2
    def matvec(self, x):
        if self._cpu is not None:
            return self._cpu.matvec(x)
        return gemv(self.A, x)

    def rmatvec(self, y):
        if self._cpu is not None:
            return self._cpu.rmatvec(y)
        return gemv(self.A, y, transpose=True)

    # ------------------------------------------------------------- composites
    def matvec_add(self, x, y, alpha=1.0):
        if self._cpu is not None or not self.fuse:
            return super().matvec_add(x, y, alpha)
        return gemv(self.A, x, y=y, alpha=alpha, beta=1.0)

    def rmatvec_add(self, v, z, alpha=1.0):
        if self._cpu is not None or not self.fuse:
            return super().rmatvec_add(v, z, alpha)
        return gemv(self.A, v, y=z, alpha=alpha, beta=1.0, transpose=True)

    def mul_add(self, x, y, z, a=1.0, b=1.0):
        if self._cpu is not None or not self.fuse:
            return super().mul_add(x, y, z, a, b)
        out = Stream.like(x, zero=x.folded)               # covered whole unless folded
        MULTIPLY_ADD.draw(out, blas1.whole(out), {"X": x, "Y": y, "Z": z}, {"a": float(a), "b": float(b)})
        return out

    def mul_shift_div(self, x, y, c, z):
        if self._cpu is not None or not self.fuse:
            return super().mul_shift_div(x, y, c, z)
        out = Stream.like(x, zero=x.folded)
        MULTIPLY_SHIFT_DIVIDE.draw(out, blas1.whole(out), {"X": x, "Y": y, "Z": z}, {"c": float(c)})
        return out

    def scalars(self, requests):
        vectors = [v for r in requests for v in r[1:]]
        if self._cpu is not None or not self.fuse or not all(self._fused(v) for v in vectors) \
                or any(r[0] not in ("dot", "norm_inf") for r in requests):
            return super().scalars(requests)
        # each reduction's last pass renders into one texel of a small bank: one read-back
        bank = Stream(1, len(requests), zero=False)
        try:
            for j, r in enumerate(requests):
                if r[0] == "dot":
                    reduce_terms("product", "sum", r[1], r[2], out=bank, at=j)
                else:
                    reduce_into("absmax", r[1], bank, j)
            self.readbacks += 1
            return [float(v) for v in bank.to_array().reshape(-1)]
        finally:
            bank.release()

    def entries_many(self, vectors, idx):
        if self._cpu is not None or not self.fuse:
            return super().entries_many(vectors, idx)
        # each entry copied into one texel of a small bank (one pass each), then one read-back
        idx = [int(i) for i in np.atleast_1d(idx)]
        bank = Stream(1, len(vectors) * len(idx), zero=False)
        try:
            for a, v in enumerate(vectors):
                for b, i in enumerate(idx):
                    at = (i % v.cols + 0.5, i // v.cols + 0.5)     # entry i of a folded vector too
                    blas1.KERNELS["copy"].draw(bank, Texel.at(a * len(idx) + b, 0, T0=at), {"A": v})
            self.readbacks += 1
            values = bank.to_array().astype(np.float64).reshape(len(vectors), len(idx))
        finally:
            bank.release()
        return list(values)

    def stepped_dot(self, x, dx, a, s, ds, b):
        if self._cpu is not None or not (self.fuse and self._fused(x)):
            return super().stepped_dot(x, dx, a, s, ds, b)
        return self._read(reduce_terms("steps_product", "sum", x, dx, steps=(a, s, b, ds)))

    # -------------------------------------------------------------- level 3
    def _factor_normal(self, d, shift=0.0):
        """adat (+ shift I: one pass of points on the diagonal), then chol with the guarded
        square root; one read-back (the replaced count)."""
        self.readbacks += 1
        self.shift = float(shift)
        if self._cpu is not None:
            self.d64 = np.asarray(d, dtype=np.float64)
            big = float(np.max(np.abs(self.d64), initial=0.0))
            if not big <= FLOAT32_MAX:
                raise PrecisionExhausted(f"Theta = x/s reaches {big:.1e}, beyond float32's range (3.4e38): "
                                         "the GPU's normal equations A Theta A^T cannot hold it")
            if self.Aff is not None:
                return self._factor_float_float(shift)
            ds, owned = Stream.from_array(self.d64, "d"), True
        else:
            ds, owned = d, False
        try:
            M = self._form_normal(ds)
        finally:
            if owned:
                ds.release()
        m = self.m_normal
        guarded = {"tolerance": self.pivot_tol, "huge": self.huge}
        try:
            if self.shift:
                shift_diagonal(M, self.shift)
            if self.substitution == "inverse" and self.pivot == "onepass" and 2 * m <= max_texture_size():
                # both beyond the paper: STEPS_A_PASS steps of L and of L^-1 in one pass
                # (ceil(m / STEPS_A_PASS) + 5 passes, not 2m + 2), into the streams kept from one
                # factorization to the next (the solves' recorded plans read them)
                if self.L is None or self.Linv is None or self.Aff is not None:
                    self._new_factor(Stream(m, m), Stream(m, m))
                factor_with_inverse(M, m, guarded=guarded, steps=self._block_steps(STEPS_A_PASS),
                                    out=(self.L, self.Linv), block=self.factor_block)
            else:
                self._new_factor(factor(M, m, form=self.cholesky,
                                        update=self.update if self.cholesky == "outer" else "triangle",
                                        guarded=guarded, pivot=self.pivot if self.cholesky == "outer" else "separate"))
        finally:
            M.release()
        if self.substitution == "inverse" and self.Linv is None:
            self.Linv = lower_inverse(self.L, m)
        return self._replaced()

    def _new_factor(self, L: Stream, Linv: Stream | None = None) -> None:
        """The factor's streams replaced (the old ones released): the recorded plans that read
        them are drawn again at their next use."""
        for s in (self.L, self.Linv):
            if s is not None:
                s.release()
        self.L, self.Linv = L, Linv
        self._factor_version += 1

    def _replay(self, name: str, draw, keep) -> None:
        """Draw ``draw()``'s passes: the first time after the factor's streams changed by
        calling it under :func:`gpgpu.passes.recording`, then from that record
        (:class:`gpgpu.passes.RecordedPlan`: the same passes, none of the host work of building
        them; beyond the papers). ``keep``: the streams that carry values in and out."""
        entry = self._plans.pop(name, None)
        if entry is not None and entry[0] == self._factor_version:
            entry[1].run()
            self._plans[name] = entry
            return
        if entry is not None:
            entry[1].release()
        with recording() as noted:
            draw()
        try:
            self._plans[name] = (self._factor_version, RecordedPlan(noted, keep=keep))
        except NotReplayable:
            pass

    def _replaced(self) -> int:
        """How many pivots the factor's guard replaced (a flag pass, a sum, one read-back)."""
        m = self.m_normal
        if self._count is None:
            self._count = Stream(1, 1)
        self._replay("count", lambda: flag_replaced(self.L, m, "full", self.huge, self.reductions, self._count),
                     [self._count])
        return int(round(self._count.item()))

    def _form_normal(self, d: Stream) -> Stream:
        """A diag(d) Aᵀ of the normal rows by the ``adat`` form chosen."""
        if self.adat == "points":
            if self._points is None:
                self._points = pair_table(self.A_normal)    # A is constant: its pairs listed once
            return form_points(self._points, d)
        if self.adat == "inner4":
            if self.A4 is None:
                self.A4 = pack_4x1(self._normal_rows())     # A is constant: packed once
            return form_adat(self.A4, d, product="inner4")
        return form_adat(self._normal_rows(), d, product=self.adat)

    def _use_float_float(self) -> None:
        if not float_float.available():
            raise RuntimeError("factor_precision='float-float' needs GL_ARB_gpu_shader5 (OpenGL 4.0) for its "
                               "precise arithmetic, which this OpenGL context does not offer; use 'float32'")
        self.Aff = float_float.upload(self.A_normal.toarray(), "A")    # checked to fit by check_dense
        if self.A_normal.nnz <= FF_ROWS_DENSITY * self.A_normal.shape[0] * self.A_normal.shape[1]:
            self._ff_rows = float_float.row_lists(self.A_normal)   # A D² Aᵀ over row i's non-zeros
        self.factor_precision = "float-float"
        if self._default_pivot_tol:
            self.pivot_tol = float_float.DEFAULT_PIVOT_TOL

    def raise_precision(self):
        if self.factor_precision == "float-float" and self._ff_inverse and self._cpu is not None and not self.shift:
            # the inverse's rounding (or its overflow of float32's range) is what stalled: from
            # here the float-float solves are block substitutions, backward stable
            self._ff_inverse = False
            return "float-float (substitutions)"
        if self.factor_precision != "auto" or self._cpu is None or self.shift or not float_float.available():
            return None
        try:
            self._use_float_float()    # A as float-float: twice float32 A's texture memory
        except (MemoryError, moderngl.Error) as e:
            # no room for it: the solve ends as the float32 factor left it (numerical trouble)
            self.float_float_unavailable = f"{type(e).__name__}: {e}"
            return None
        return "float-float"

    def _factor_float_float(self, shift):
        if shift:
            raise ValueError("factor_precision='float-float' does not take the regularisation's shift "
                             "(regularize=True); use one or the other")
        with float_float.upload(self.d64, "d") as ds:
            M = self._equilibrate(float_float.adat(self.Aff, ds, rows=self._ff_rows))
        try:
            if self.Xff is not None:
                self.Xff.release()
                self.Xff = None
            if self._ff_inverse and 2 * self.m_normal <= max_texture_size():
                # the factor and its inverse in ceil(m / steps) + 5 passes: every solve two passes, not 2m
                L, self.Xff = float_float.factor_with_inverse(M, tolerance=self.pivot_tol, huge=self.huge,
                                                              steps=self._block_steps(FF_STEPS_A_PASS),
                                                              block=self.factor_block)
                self._new_factor(L)
            else:
                self._new_factor(float_float.factor(M, tolerance=self.pivot_tol, huge=self.huge))
        finally:
            M.release()
        return count_replaced(self.L, self.m_normal, "full", self.huge, self.reductions)

    def _block_steps(self, steps: int) -> int:
        """Steps a pass of the factor with its inverse: ``steps``, unless ``factor_block`` is set
        and is no multiple of 2 ``steps`` (a block's panel must take an even number of passes),
        then one."""
        return steps if self.factor_block is None or self.factor_block % (2 * steps) == 0 else 1

    def _equilibrate(self, M: Stream) -> Stream:
        """D M D for the float-float M with D = diag(s), s the powers of two of
        :func:`gpgpu.adat.equilibration` for M's diagonal (computed here in float64 from A and d;
        beyond the papers). M is released; the refined solves scale their right-hand sides and
        answers by s (:meth:`_solve_normal`), so that they solve with M's factor, exactly scaled,
        inside float32's exponent range, which float-float shares: near an optimum M's entries
        span 1e-4 to 1e21 and more, and the unscaled factor overflowed in its products or
        flushed its low parts to zero (bnl2 at mu 1e-5 on llvmpipe and the H200). The float32
        factor is left as it is: there an overflow tells that float32 is exhausted, and the
        solver moves on to float-float."""
        if self._A2 is None:
            A = sp.csr_matrix(self.A_normal, dtype=np.float64)
            self._A2 = A.multiply(A).tocsr()
        self.equilibration = equilibration(self._A2 @ self.d64 + self.shift)
        try:
            return scale_symmetric(M, self.equilibration)
        finally:
            M.release()

    def _solve_gpu(self, r: Stream, out: Stream | None = None) -> Stream:
        if self.L is None:
            raise RuntimeError("solve_normal before factor_normal")
        if self.Linv is not None:
            return solve_with_inverse(self.Linv, r, out=out)
        return solve_with_factor(self.L, r, self.m_normal, form=self.substitution, out=out)

    def _solve_read_back(self, rhs: np.ndarray) -> np.ndarray:
        """A float64 right-hand side solved with the float32 factor on the GPU: written into a
        stream kept for it, the solve's passes drawn from their recorded plan, the answer read
        back (one read-back)."""
        m = self.m_normal
        if self._rhs is None:
            self._rhs, self._sol = Stream(1, m, vector=True), Stream(1, m, vector=True)
        self._rhs.write(rhs)
        self._replay("solve", lambda: self._solve_gpu(self._rhs, out=self._sol), [self._rhs, self._sol])
        return self._sol.to_array().astype(np.float64)

    # ------------------------------------------------ bounds in the Newton system, float32 iterates
    def _bound_streams(self) -> tuple:
        """The tables of the bound-row kernels (made once): per column j, (k + 1, w, alpha, beta)
        when j is the bounded x of bound row k, (-(k + 1), x, 0, 0) when j is its slack, 0 else;
        per bound row k, (x, w, alpha, beta)."""
        if self._bound_info is None:
            b = self.bounds
            k = np.arange(b.count, dtype=np.float64)
            info = np.zeros((self.n, 4))
            info[b.x] = np.stack([k + 1, b.w, b.alpha, b.beta], axis=1)
            info[b.w] = np.stack([-(k + 1), b.x, 0 * k, 0 * k], axis=1)
            table = np.stack([b.x, b.w, b.alpha, b.beta], axis=1).astype(np.float64)
            self._bound_info = Stream(1, self.n, components=4, data=info)
            self._bound_table = Stream(1, b.count, components=4, data=table)
        return self._bound_info, self._bound_table

    def _bound_weights(self, d, shift):
        if self._cpu is not None:
            return super()._bound_weights(d, shift)
        info, _ = self._bound_streams()
        out = Stream.like(d, zero=False)
        BOUND_KERNELS["weights"].draw(out, blas1.whole(out), {"D": d, "info": info}, {"delta": float(shift)})
        return out

    def _eliminate_bounds(self, r):
        if self._cpu is not None:
            return super()._eliminate_bounds(r)
        info, _ = self._bound_streams()
        v = Stream.like(self._d, zero=False)
        BOUND_KERNELS["terms"].draw(v, blas1.whole(v), {"D": self._d, "info": info, "R": r},
                                    {"m": self.m_normal, "delta": self.shift})
        try:   # r1 - A_main v: sgemv with beta = 1 over the main rows, reading r's first m entries
            A, m = self._normal_rows(), self.m_normal
            out = Stream(1, m, vector=True, zero=False)
            GEMV["inner"].draw(out, Rect.covering(0, 0, m, 1, T0=lambda X, Y: (0.0, X), T1=(0.5, 0.5)),
                               {"A": A, "X": v, "Y": r},
                               {"n": self.n, "stride": (1.0, 0.0), "alpha": -1.0, "beta": 1.0},
                               texels=2 * self.n + 2)
            return out
        finally:
            v.release()

    def _back_substitute_bounds(self, z1, r):
        if self._cpu is not None:
            return super()._back_substitute_bounds(z1, r)
        _, table = self._bound_streams()
        t = gemv(self._normal_rows(), z1, transpose=True)               # A_mainᵀ z1
        out = Stream.like(r, zero=False)
        try:
            BOUND_KERNELS["back"].draw(out, blas1.whole(out), {"Z1": z1, "R": r, "T": t, "D": self._d,
                                                               "rows": table},
                                       {"m": self.m_normal, "delta": self.shift})
        finally:
            t.release()
        return out

    def _solve_normal(self, r, rtol=REFINE_RTOL):
        if self._cpu is None:
            return self._solve_gpu(r)
        d = self.d64

        scale = self.equilibration if self.Aff is not None else None

        def solve(rhs):
            return solve_scaled(rhs) if scale is None else scale * solve_scaled(scale * rhs)

        def solve_scaled(rhs):
            self.readbacks += 1  # each correction comes back to the CPU
            if self.Xff is not None:
                z = float_float.solve_with_inverse(self.Xff, rhs)
                if np.isfinite(z).all():
                    return z
                self.Xff.release()          # the inverse overflowed float32: substitutions for this factor
                self.Xff = None
            if self.Aff is not None:
                return float_float.solve(self.L, rhs)
            return self._solve_read_back(rhs)

        stats = {}
        z = refine_solve(solve, lambda v: self.apply_normal(d, v, self.shift), np.asarray(r, np.float64),
                         method=self.refine_method, rtol=rtol, stats=stats)
        self.refine_stats.append(stats)
        return z
