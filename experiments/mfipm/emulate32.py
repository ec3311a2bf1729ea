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

``--defaults`` runs the method's default settings on the problem as given, PCG checked every
iteration. The GPU back end reads PCG's residual every ``PCG_CHECK`` (8) iterations, so its
solves run up to 7 iterations past their target, and ``solve`` hands the method the problem in
its units (:class:`gpgpu.lp.scaling.Units`) with its bound rows eliminated
(:class:`gpgpu.lp.bounds.BoundRows`): ``--as-solve`` (implies ``--defaults``) does both, as
``solve(p, method="matrix-free", backend="gpu")`` does (:func:`solve_as_solve_does`;
docs/results/matrix-free.md, "The float32 emulation as solve runs it"):

    python -m experiments.mfipm.emulate32 finnis.mps.gz --as-solve
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import scipy.linalg as sla

from gpgpu.lp import Problem
from gpgpu.lp.bounds import BoundRows
from gpgpu.lp.matrix_free import matrix_free
from gpgpu.lp import matrix_free_gpu
from gpgpu.lp.matrix_free_gpu import PCG_CHECK, PIVOT_TOLERANCE, SCHUR_FLOOR, HUGE_PIVOT
from gpgpu.lp.scaling import Units
from gpgpu.lp.matrix_free_numpy import NumpyMatrixFree

from .common import load_problem

__all__ = ["Float32MatrixFree", "solve_as_solve_does", "main"]

f32 = np.float32


def _ratio(num, den):
    """num / den in float32 as the GPU's ``saxpy_ratio`` takes it: 0 where den is 0 or the ratio
    is not finite (r reached 0 between two of PCG's checks; ``--as-solve`` checks every 8)."""
    d = f32(den)
    if d == 0:
        return f32(0)
    with np.errstate(all="ignore"):
        ratio = f32(num) / d
    return ratio if abs(ratio) < f32(3.0e38) else f32(0)


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
        return (f32(sign) * _ratio(num, den) * x + y).astype(f32)

    def accumulator(self):
        return np.zeros(self.m, dtype=f32 if self.solution == "float32" else np.float64)

    def accumulate(self, num, den, p, x):
        alpha = _ratio(num, den)
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


def solve_as_solve_does(problem, make_backend, *, eps=1e-6, max_iter=100, callback=None, refine=True):
    """The matrix-free method as ``gpgpu.lp.solve(problem, method="matrix-free", eps=eps)`` runs
    it with its defaults, on the back end ``make_backend(main)`` (a class such as
    :class:`Float32MatrixFree`): the problem in the units ``solve`` picks (powers of two,
    :class:`~gpgpu.lp.scaling.Units`), its bound rows eliminated (``bounds="implicit"``,
    :class:`~gpgpu.lp.bounds.BoundRows`) with the back end built on the main rows, and the
    result in the problem's own units. ``refine`` as ``solve`` sets it for a float32 PCG at
    eps below 3e-5 (True); numpy64's PCG is float64 and ``solve`` turns it off there."""
    units = Units.of(problem)
    p = problem if units.identity else units.problem(problem)
    rows = BoundRows.detect(p.A)
    main = p if rows is None else Problem.from_arrays(rows.A_main, p.b[:rows.m], p.c, name=p.name)
    be = make_backend(main)
    try:
        r = matrix_free(be, p, eps=eps, max_iter=max_iter, callback=callback, refine=refine, bounds=rows)
    finally:
        be.release()
    return r if units.identity else units.result(r, problem)


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
                         "reg_min and pcg_maxiter the method's own (the adaptive rule's), on the "
                         "problem as given, PCG checked every iteration")
    ap.add_argument("--as-solve", action="store_true",
                    help="the defaults as solve(p, method='matrix-free', backend='gpu') runs them: the "
                         "problem in solve's units, its bound rows eliminated, PCG checked every "
                         f"{PCG_CHECK} iterations as the GPU back end checks it (implies --defaults)")
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
    if args.defaults or args.as_solve:
        args.eps, args.reg_min, args.pcg_maxiter = 1e-6, None, None
    if args.solution is None:
        args.solution = "auto" if args.defaults or args.as_solve else "float32"
    try:
        problem = load_problem(args.problem)
    except (ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.as_solve and (args.rank != 100 or args.stall_window != 8):
        ap.error("--as-solve runs solve's defaults; --rank and --stall-window are for the other modes")
    t0 = time.perf_counter()

    def show(h):
        print(f"{h['iteration']:3d} primal {h['primal_residual']:.2e} dual {h['dual_residual']:.2e} "
              f"gap {h['gap']:.2e} PCG {h['pcg_iterations']} residual "
              f"{'-' if h['pcg_residual'] is None else format(h['pcg_residual'], '.1e')} "
              f"{time.perf_counter() - t0:.0f} s", flush=True)

    if args.as_solve:
        def gpu_like(main):                         # PCG checked every PCG_CHECK iterations, as on the GPU
            be = Float32MatrixFree(main, solution=args.solution)
            be.pcg_check = PCG_CHECK
            return be

        r = solve_as_solve_does(problem, gpu_like, eps=args.eps, max_iter=args.max_iter, callback=show)
    else:
        be = Float32MatrixFree(problem, solution=args.solution)
        r = matrix_free(be, problem, eps=args.eps, max_iter=args.max_iter, rank=args.rank, reg_min=args.reg_min,
                        pcg_maxiter=args.pcg_maxiter, refine=True, stall_window=args.stall_window, callback=show)
    print(f"{r.status}: {r.iterations} iterations, {r.pcg_iterations} PCG iterations, objective "
          f"{r.objective!r}, {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
