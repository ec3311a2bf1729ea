"""A numpy emulation of the GPU back end's float32 PCG, for studying why a float32 PCG does or
does not solve an LP to a tolerance (docs/results/matrix-free.md, "Why the QAP problems are
hard"; docs/lp_defaults.md, "A float32 PCG"). Beyond 002; an analysis tool, not an
implementation path: the GPU back end is :class:`gpgpu.lp.matrix_free_gpu.GPUMatrixFree`.

:class:`Float32MatrixFree` does what the GPU back end does in float32 -- G_R's products, the
vectors, the inner products, the partial Cholesky preconditioner built from float32 columns
with the GPU's guards (a pivot at or below 1e-6 of its diagonal entry replaced by 1e30, then by
its diagonal entry with ``REPLACED_DIAGONAL``, a Schur
entry at or below 1e-6 of its diagonal entry falling back to it) -- with numpy's float32
arithmetic (its sums are not the GPU's reductions; the float64 refinement rounds are the
method's own). ``solution="float64"`` keeps PCG's solution vector in float64, as the GPU's
``solution="float-float"`` keeps it in about 48 bits. On this 2-core machine nug20 takes 4-10
minutes, about a fifth of the H200's time.

    python -m experiments.mfipm.emulate32 nug20 --solution float64 --stall-window 30
    python -m experiments.mfipm.emulate32 nug20 --defaults      # what solve(p, backend="gpu") runs
    python -m experiments.mfipm.emulate32 nug12 --defaults --set matrix_free.CORRECTOR_START=True

``--set KEY=VALUE`` (repeatable) sets a constant of ``gpgpu.lp`` before the solve, as
:mod:`experiments.netlib_speed`'s back-end options do (``matrix_free.CORRECTOR_START=True``).
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import scipy.linalg as sla

from gpgpu.lp.matrix_free import matrix_free
from gpgpu.lp import matrix_free_gpu
from gpgpu.lp.matrix_free_gpu import PIVOT_TOLERANCE, SCHUR_FLOOR, HUGE_PIVOT
from gpgpu.lp.matrix_free_numpy import NumpyMatrixFree

from .common import load_problem

__all__ = ["Float32MatrixFree", "main"]

f32 = np.float32


class Float32MatrixFree(NumpyMatrixFree):
    """The GPU back end's float32 PCG in numpy (module notes)."""

    name = "numpy32-emulation"
    pcg_floor = 1e-5                                  # the GPU back end's

    def __init__(self, problem, solution: str = "float32"):
        super().__init__(problem)
        if solution not in ("float32", "float64", "auto"):
            raise ValueError(f"solution must be 'float32', 'float64' or 'auto', got {solution!r}")
        self._widen = solution == "auto"             # as the GPU's solution=None
        self.solution = "float32" if solution == "auto" else solution
        self.A32, self.AT32, self.A2_32 = (M.astype(f32) for M in (self.A, self.AT, self.A2))

    def widen_solution(self) -> bool:
        if not self._widen or self.solution == "float64":
            return False
        self.solution = "float64"
        return True

    def vector(self, arr):
        return np.array(arr, dtype=f32)

    def dot(self, x, y):
        self.readbacks += 1
        return float(f32(x @ y))

    def axpy(self, a, x, y):
        return (f32(a) * x + y).astype(f32)

    def ratio_axpy(self, num, den, sign, x, y):
        return (f32(sign) * (f32(num) / f32(den)) * x + y).astype(f32)

    def accumulator(self):
        return np.zeros(self.m, dtype=f32 if self.solution == "float32" else np.float64)

    def accumulate(self, num, den, p, x):
        alpha = f32(num) / f32(den)
        if self.solution == "float32":
            return (alpha * p + x).astype(f32)
        return x + float(alpha) * p.astype(np.float64)

    def set_weights(self, theta, delta):
        super().set_weights(theta, delta)
        self.theta32, self.delta32 = self.theta.astype(f32), f32(delta)

    def normal_matvec(self, v):
        return (self.A32 @ (self.theta32 * (self.AT32 @ v)) + self.delta32 * v).astype(f32)

    def build_preconditioner(self, rank):
        m = self.m
        diag = (self.A2_32 @ self.theta32 + self.delta32).astype(f32)
        k = min(rank, m)
        K = np.sort(np.argpartition(-diag.astype(np.float64), k - 1)[:k]) if k < m else np.arange(m)
        cols = (self.A32 @ self.A32[K].multiply(self.theta32[None, :]).T.tocsr()).toarray().astype(f32)
        cols[K, np.arange(k)] += self.delta32
        G11 = cols[K]
        S, C, replaced = G11.copy(), np.zeros_like(G11), []
        for j in range(k):                            # the GPU's guarded outer-product factor
            p = S[j, j]
            if not p > f32(PIVOT_TOLERANCE) * max(G11[j, j], f32(0)):
                p = f32(HUGE_PIVOT)
                replaced.append(j)
            C[j, j] = np.sqrt(p)
            C[j + 1:, j] = S[j + 1:, j] / C[j, j]
            S[j + 1:, j + 1:] -= np.outer(C[j + 1:, j], C[j + 1:, j]).astype(f32)
        if matrix_free_gpu.REPLACED_DIAGONAL:         # a replaced pivot then becomes its diagonal entry
            C[replaced, replaced] = np.sqrt(G11[replaced, replaced])
        B = sla.solve_triangular(C, cols.T, lower=True).T.astype(f32)
        schur = (diag - np.einsum("ij,ij->i", B, B).astype(f32)).astype(f32)
        with np.errstate(divide="ignore"):
            dinv = np.where(schur > f32(SCHUR_FLOOR) * diag, f32(1) / schur, f32(1) / diag).astype(f32)
        dinv[K] = 0
        self.pre = (K, C, B, dinv)
        self.readbacks += m
        return {"k": k, "replaced": len(replaced)}

    def precondition(self, r):
        K, C, B, dinv = self.pre
        r = r.astype(f32)
        u1 = sla.solve_triangular(C, r[K], lower=True).astype(f32)
        w = ((r - B @ u1) * dinv).astype(f32)
        v = (u1 - B.T @ w).astype(f32)
        w[K] = sla.solve_triangular(C, v, lower=True, trans="T")
        return w


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m experiments.mfipm.emulate32", description=__doc__.split("\n\n")[0])
    ap.add_argument("problem", help="a QAPLIB name (nug12, nug20, ...; GPGPU_QAPLIB_DIR) or an MPS file")
    ap.add_argument("--solution", choices=("float32", "float64", "auto"), default=None,
                    help="PCG's solution vector: float32 (the default), float64, or auto (float32 until "
                         "the first solve stopped at its limit, then float64: the GPU's default, "
                         "and the default with --defaults)")
    ap.add_argument("--stall-window", type=int, default=8)
    ap.add_argument("--eps", type=float, default=1e-8)
    ap.add_argument("--max-iter", type=int, default=100)
    ap.add_argument("--rank", type=int, default=100)
    ap.add_argument("--reg-min", type=float, default=1e-4)
    ap.add_argument("--pcg-maxiter", type=int, default=10000)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="set a constant of gpgpu.lp first (matrix_free.CORRECTOR_START=True); repeatable")
    ap.add_argument("--defaults", action="store_true",
                    help="the matrix-free method's defaults instead of the QAP settings: eps 1e-6, "
                         "reg_min and pcg_maxiter the method's own (the adaptive rule's)")
    args = ap.parse_args(argv)
    import ast

    from experiments.netlib_speed import set_constants

    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep or "." not in key:
            ap.error(f"--set {item!r}: give module.CONSTANT=value, a constant of gpgpu.lp "
                     "(matrix_free.CORRECTOR_START=True)")
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            ap.error(f"--set {item!r}: the value must be a Python literal")
        try:
            set_constants({key: value})
        except ValueError as e:                     # no such constant
            ap.error(f"--set {item!r}: {e}")
        except ImportError:
            ap.error(f"--set {item!r}: gpgpu.lp has no module {key.rpartition('.')[0]!r}")
    if args.defaults:
        args.eps, args.reg_min, args.pcg_maxiter = 1e-6, None, None
    if args.solution is None:
        args.solution = "auto" if args.defaults else "float32"
    try:
        problem = load_problem(args.problem)
    except (ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    be = Float32MatrixFree(problem, solution=args.solution)
    t0 = time.perf_counter()

    def show(h):
        print(f"{h['iteration']:3d} primal {h['primal_residual']:.2e} dual {h['dual_residual']:.2e} "
              f"gap {h['gap']:.2e} PCG {h['pcg_iterations']} residual "
              f"{'-' if h['pcg_residual'] is None else format(h['pcg_residual'], '.1e')} "
              f"{time.perf_counter() - t0:.0f} s", flush=True)

    r = matrix_free(be, problem, eps=args.eps, max_iter=args.max_iter, rank=args.rank, reg_min=args.reg_min,
                    pcg_maxiter=args.pcg_maxiter, refine=True, stall_window=args.stall_window, callback=show)
    print(f"{r.status}: {r.iterations} iterations, {r.pcg_iterations} PCG iterations, objective "
          f"{r.objective!r}, {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
