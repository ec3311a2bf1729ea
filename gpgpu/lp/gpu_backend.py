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
                       ``adat="inner"`` 000's singlepass inner-product form (one pass)
chol                   ``cholesky.factor``: outer form (triangle update) or inner form, with the
                       guarded square root of Wright ch. 11 replacing tiny or negative pivots
forward/backward       ``cholesky.solve_with_factor`` (multipass substitution; with
                       ``substitution="inner"`` one pass a step)
=====================  =====================================================================

A stays on the GPU as an m x n stream; vectors are 1-row streams. Every scalar read back
(dot, norms, step lengths, the pivot count, entries) is counted in ``readbacks``.

``refine=True`` (beyond the paper): the factor M = L Lᵀ is still formed and computed on the GPU
in float32, and each solve with it runs on the GPU, but the iterates are float64 numpy vectors
and the refinement residual r - M z is computed in float64 on the CPU (see
``backend.refine_solve``); float32 iterates could not meet eps = 1e-8.
"""
from __future__ import annotations

import moderngl
import numpy as np

from .. import blas1, float_float
from ..adat import form as form_adat
from ..adat import pack_4x1, shift_diagonal
from ..blas2 import gemv
from ..cholesky import (count_replaced, factor, factor_with_inverse, lower_inverse, solve_with_factor,
                        solve_with_inverse)
from ..context import max_texture_size
from ..geometry import Texel
from ..kernel import Kernel
from ..reduce import argmax_region, argmin_blocking_ratio, reduce_into, reduce_region, reduce_terms
from ..stream import Stream, give_back
from .backend import FLOAT32_MAX, Backend, PrecisionExhausted, refine_solve, shifted
from .numpy_backend import NumpyBackend, default_pivot_tol, huge_pivot

#: Cholesky steps a pass of factor_with_inverse (substitution="inverse", pivot="onepass").
#: Measured on an H200 in one run (EGL; the factor and inverse alone, medians of 7): m = 173
#: 1.77-1.82 ms with 2 steps, 1.26-1.35 with 4; m = 305 2.86-2.91 / 2.57-2.60; m = 516
#: 6.65-6.76 / 6.03-6.11 (6 and 8 steps no faster at m = 516). Table 3's ten problems took the
#: same time with 2, 3, 4 or 6 (1.06-1.23 s, within the run's spread).
STEPS_A_PASS = 4
SAFEGUARD = Kernel("free_split_safeguard", texels=3, doc="the free-split safeguard (beyond 000)")
MULTIPLY_ADD = Kernel("multiply_add", texels=4, doc="a (x .* y) + b z in one pass (beyond 000)")
MULTIPLY_SHIFT_DIVIDE = Kernel("multiply_shift_divide", texels=4, doc="(x .* y + c) ./ z in one pass (beyond 000)")

__all__ = ["GPUBackend", "upload_dense"]


def upload_dense(problem, method: str) -> Stream:
    """A as an m x n float32 stream, after checking that its texture and the m x m normal
    equations fit this GPU (GL_MAX_TEXTURE_SIZE) and that the dense copy fits in memory."""
    from ..context import max_texture_size

    m, n = problem.A.shape
    limit = max_texture_size()
    if m > limit or n > limit:
        raise ValueError(
            f"{problem.name}: {method} stores the {m} x {n} constraint matrix and the {m} x {m} "
            f"normal equations A D² Aᵀ as textures, but this GPU's GL_MAX_TEXTURE_SIZE is {limit}; "
            "the problem is too large for the dense normal-equation method of paper 000")
    if m == 0 or n == 0:
        raise ValueError(f"{problem.name}: an empty constraint matrix ({m} x {n}) has nothing to "
                         "put on the GPU; gpgpu.lp.solve answers such problems without a backend")
    return Stream.from_array(problem.dense_A(np.float32, method=method), "A")


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
    adat : {"outer", "inner", "inner4"}
        How A D² Aᵀ is formed: 001's multipass outer products (default; two passes per
        column of A) or the singlepass inner-product form 000 lists for adat (one pass), or,
        beyond the paper, those inner products over A and d packed four columns an RGBA texel
        (A packed once, d each iteration: a quarter of the fetches, two passes).
    substitution : {"outer", "inner", "inverse"}
        The forward and backward substitutions: column-oriented, three passes a step
        (default), or the inner-product form, one pass a step (:func:`gpgpu.blas2.substitute`;
        beyond the paper's listing); or, with ``"inverse"`` (beyond the paper), L⁻¹ formed on
        the GPU once per factorization (m passes, :func:`gpgpu.cholesky.lower_inverse`) and each
        solve two one-pass products; with ``pivot="onepass"`` four steps of the factor and of its
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
    factor_precision : {"auto", "float32", "float-float"}
        Beyond the papers. With ``"float-float"`` (needs ``refine=True``)
        A Θ Aᵀ, its guarded Cholesky factor and the substitutions of every refinement step are
        computed in float-float arithmetic on the GPU (:mod:`gpgpu.float_float`: pairs of
        float32, about 48 bits, float32's exponent range; the inner-product adat, one-pass
        Cholesky steps and one-pass column substitutions, whatever ``adat``, ``pivot`` and
        ``substitution`` say), with relative pivot tolerance
        :data:`gpgpu.float_float.DEFAULT_PIVOT_TOL` unless ``pivot_tol`` is given. For the
        problems whose float32 factor leaves the refinement stalled near the optimum.
        ``"auto"`` (the default) is ``"float32"`` until the Mehrotra solver's iteration stalls or
        breaks down;
        with refinement the remaining iterations then use ``"float-float"``
        (:meth:`raise_precision`; the history entry of that iteration gets
        ``factor_precision``, the result's message says so). Without refinement ``"auto"`` is
        ``"float32"``: the paper's path (Table 3) is unchanged.
    """

    def __init__(self, problem, cholesky="outer", refine=False, update="triangle", pivot_tol=None,
                 refine_method="cg", adat="outer", substitution="outer", pivot="separate",
                 reductions="pingpong", fuse=False, factor_precision="auto"):
        super().__init__(problem, cholesky=cholesky, refine=refine)
        if factor_precision not in ("auto", "float32", "float-float"):
            raise ValueError(f"factor_precision must be 'auto' (float32, float-float after a stall with "
                             f"refinement), 'float32' (the papers') or 'float-float' (pairs of float32, beyond "
                             f"the papers), got {factor_precision!r}")
        if factor_precision == "float-float" and not refine:
            raise ValueError("factor_precision='float-float' computes the factor for the float64 refinement "
                             "of the normal-equation solves: pass refine=True (or an eps below 3e-5 with refine=None)")
        self.factor_precision = factor_precision
        if adat not in ("outer", "inner", "inner4"):
            raise ValueError(f"adat must be 'outer' (001's multipass outer products), 'inner' (000's "
                             f"singlepass inner products) or 'inner4' (those over 4 x 1 packed texels), got {adat!r}")
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
        self.A = self.A4 = self.L = self.Linv = self._partner = self.Aff = None
        self.A = upload_dense(problem, "the gpu backend")
        self._default_pivot_tol = pivot_tol is None
        self.float_float_unavailable = None     # why "auto" could not raise the precision, if so
        if factor_precision == "float-float":
            self._use_float_float()
        self.refine_method = refine_method
        self.refine_stats = []
        # with refinement the vector work is float64 on the CPU (the numpy64 backend's ops)
        self._cpu = NumpyBackend(problem, dtype=np.float64) if refine else None
        self.d64 = None

    # No __del__: a backend that is dropped lets go of its streams, whose own finalizers keep
    # their textures for reuse or queue them for the owning thread, without a GL call (a
    # finalizer may run between two GL calls of a pass). release() frees them now.
    def release(self) -> None:
        for s in (self.A, self.A4, self.L, self.Linv, self._partner, self.Aff):
            if s is not None:
                s.release()
        self.A = self.A4 = self.L = self.Linv = self._partner = self.Aff = None

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

    def bound_free_splits(self, x, partner, bound=1.0):
        if self._cpu is not None:
            return super().bound_free_splits(x, partner, bound)
        if self._partner is None:
            self._partner = Stream.from_array(np.asarray(partner, dtype=np.float64), "partner")
        out = Stream(1, x.cols, vector=True, zero=False)     # covered whole
        SAFEGUARD.draw(out, blas1.whole(out), {"X": x, "partner": self._partner}, {"bound": float(bound)})
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
    def factor_normal(self, d, shift=0.0):
        """adat (+ shift I: one pass of points on the diagonal), then chol with the guarded
        square root; one read-back (the replaced count)."""
        self.readbacks += 1
        self.shift = float(shift)
        for s in (self.L, self.Linv):
            if s is not None:
                s.release()
        self.L = self.Linv = None
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
            if self.adat == "inner4":
                if self.A4 is None:
                    self.A4 = pack_4x1(self.A)          # A is constant: packed once
                M = form_adat(self.A4, ds, product="inner4")
            else:
                M = form_adat(self.A, ds, product=self.adat)
        finally:
            if owned:
                ds.release()
        guarded = {"tolerance": self.pivot_tol, "huge": self.huge}
        try:
            if self.shift:
                shift_diagonal(M, self.shift)
            if self.substitution == "inverse" and self.pivot == "onepass" and 2 * self.m <= max_texture_size():
                # both beyond the paper: STEPS_A_PASS steps of L and of L^-1 in one pass
                # (ceil(m / STEPS_A_PASS) + 5 passes, not 2m + 2)
                self.L, self.Linv = factor_with_inverse(M, self.m, guarded=guarded, steps=STEPS_A_PASS)
            else:
                self.L = factor(M, self.m, form=self.cholesky,
                                update=self.update if self.cholesky == "outer" else "triangle",
                                guarded=guarded, pivot=self.pivot if self.cholesky == "outer" else "separate")
        finally:
            M.release()
        if self.substitution == "inverse" and self.Linv is None:
            self.Linv = lower_inverse(self.L, self.m)
        return count_replaced(self.L, self.m, "full", self.huge, self.reductions)

    def _use_float_float(self) -> None:
        if not float_float.available():
            raise RuntimeError("factor_precision='float-float' needs GL_ARB_gpu_shader5 (OpenGL 4.0) for its "
                               "precise arithmetic, which this OpenGL context does not offer; use 'float32'")
        self.Aff = float_float.upload(self.problem.A.toarray(), "A")    # checked to fit by upload_dense
        self.factor_precision = "float-float"
        if self._default_pivot_tol:
            self.pivot_tol = float_float.DEFAULT_PIVOT_TOL

    def raise_precision(self):
        if self.factor_precision != "auto" or self._cpu is None or self.shift or not float_float.available():
            return None
        try:
            self._use_float_float()    # A as float-float: four times float32 A's texture memory
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
            M = float_float.adat(self.Aff, ds)
        try:
            self.L = float_float.factor(M, tolerance=self.pivot_tol, huge=self.huge)
        finally:
            M.release()
        return count_replaced(self.L, self.m, "full", self.huge, self.reductions)

    def _solve_gpu(self, r: Stream) -> Stream:
        if self.L is None:
            raise RuntimeError("solve_normal before factor_normal")
        if self.Linv is not None:
            return solve_with_inverse(self.Linv, r)
        return solve_with_factor(self.L, r, self.m, form=self.substitution)

    def solve_normal(self, r):
        if self._cpu is None:
            return self._solve_gpu(r)
        A, d = self.problem.A, self.d64

        def solve(rhs):
            self.readbacks += 1  # each correction comes back to the CPU
            if self.Aff is not None:
                return float_float.solve(self.L, rhs)
            with Stream.from_array(np.asarray(rhs, dtype=np.float64), "rhs") as rs:
                z = self._solve_gpu(rs)
            out = z.to_array().astype(np.float64)
            z.release()
            return out

        stats = {}
        z = refine_solve(solve, lambda v: shifted(A @ (d * (A.T @ v)), self.shift, v), np.asarray(r, np.float64),  # sparse A
                         method=self.refine_method, stats=stats)
        self.refine_stats.append(stats)
        return z
