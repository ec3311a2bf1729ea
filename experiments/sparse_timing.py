"""Timing pieces of the sparse solvers, shared by ``experiments.speed`` and the tools that time
them in more detail (``tools/bench_cg.py``, ``tools/bench_pcg.py``).

* :func:`cg_per_iteration`: the passes, fragments and bytes written of one CG iteration of
  ``gpgpu.cg``, from the difference of two solves that stop at ``maxiter`` (the set-up and the
  final read-out drop out; the read-backs' copies are in, once every ``check_every``);
* :func:`pcg_per_iteration`: the same for the matrix-free IPM's PCG on the gpu back end, from
  solves of 2 and 3 check windows on G_R = A A^T + 1e-2 I;
* :func:`timed_ipm_solve`: one matrix-free IPM solve for a fixed budget of iterations, after a
  warm-up solve of one IPM iteration (programs compiled, pools filled);
* :func:`cupyx_cg`: cupyx's CG (cuSPARSE) on the same system, where cupy imports and finds a
  CUDA device;
* :func:`blas_threads`: BLAS limited to some threads (threadpoolctl) for the CPU rows.

Bytes written are counted as the fill limit is measured (:mod:`gpgpu.bench`): 4 bytes a
channel of each render target a fragment writes (an RGBA32F target 16), fragments from the
occlusion queries, copies to texture included (their texels copied).
"""
from __future__ import annotations

import contextlib
import warnings
from dataclasses import dataclass, field

import numpy as np

from gpgpu import counters

__all__ = ["WriteCounter", "cg_per_iteration", "cg_passes_per_iteration", "pcg_per_iteration",
           "pcg_passes_per_iteration", "timed_ipm_solve", "cupyx_cg", "blas_threads", "load_problem"]


@dataclass
class WriteCounter(counters.Counter):
    """A counter that also notes the bytes each pass writes (see the module notes)."""

    _writes: list = field(default_factory=list)

    def measure(self, kernel, primitive, target, texels, render, inputs=None, uniforms=None):
        p = super().measure(kernel, primitive, target, texels, render, inputs, uniforms)
        self._writes.append((p, _bytes_per_fragment(target)))
        return p

    def measure_copy(self, label, primitive, target, copy):
        p = super().measure_copy(label, primitive, target, copy)
        self._writes.append((p, _bytes_per_fragment(target)))
        return p

    def written(self) -> int:
        """Bytes written by the passes counted so far."""
        self._resolve()
        return sum(p.fragments * b for p, b in self._writes)


def _bytes_per_fragment(target) -> int:
    return 4 * sum(int(getattr(s, "components", 1)) for s in getattr(target, "streams", (target,)))


def _counted(fn) -> tuple:
    """(passes, fragments, bytes written, fn's result) of ``fn()``."""
    with counters.activated(WriteCounter(time=False, keep_trace=False)) as c:
        out = fn()
    return c.passes(), c.fragments(), c.written(), out


def cg_per_iteration(A, b, kw: dict, short: int = 32, long: int = 64, iterations: int | None = None) -> dict:
    """Passes, fragments and bytes written by one iteration of ``gpgpu.cg(A, b, **kw)``: the
    difference of solves of ``long`` and ``short`` iterations (rtol 0: both stop at maxiter),
    divided by ``long - short``. ``iterations``: those CG takes on this system; where fewer than
    ``long`` (a tiny system converges before), ``long`` becomes the largest multiple of 16 below
    them (or them less one) and ``short`` half of it, so that both solves still stop at maxiter."""
    import gpgpu

    if iterations is not None and iterations <= long:
        long = 16 * (iterations // 16) if iterations >= 16 else max(2, iterations - 1)
        short = long // 2
    runs = []
    for m in (short, long):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runs.append(_counted(lambda: gpgpu.cg(A, b, rtol=0.0, maxiter=m, **kw))[:3])
    its = long - short
    return {"passes": (runs[1][0] - runs[0][0]) / its, "fragments": (runs[1][1] - runs[0][1]) / its,
            "written": (runs[1][2] - runs[0][2]) / its}


def cg_passes_per_iteration(A, b, kw: dict) -> float:
    """Passes of one iteration of ``gpgpu.cg(A, b, **kw)`` (:func:`cg_per_iteration`)."""
    return cg_per_iteration(A, b, kw)["passes"]


def pcg_per_iteration(p, sums: str, plan: bool, check: int, rank: int = 100, format: str = "ellpack",
                      fused: bool = True) -> dict:
    """Passes, fragments and bytes written by one PCG iteration of the gpu back end on
    G_R = A A^T + 1e-2 I (theta = 1), P^-1 of rank ``rank`` (at most a quarter of the rows, so
    that PCG on a small problem still iterates): a solve of 3 check windows less one of 2
    (both stop at maxiter; a first solve records the plans and is not counted), divided by the
    iterations between them."""
    from gpgpu.lp.matrix_free import pcg
    from gpgpu.lp.matrix_free_gpu import GPUMatrixFree

    be = GPUMatrixFree(p, sums=sums, plan=plan, pcg_check=check, format=format, fused=fused)
    try:
        be.set_weights(np.ones(p.A.shape[1]), 1e-2)
        be.build_preconditioner(max(1, min(rank, p.A.shape[0] // 4)))   # a small problem: PCG still iterates
        b = be.vector(np.random.default_rng(0).standard_normal(p.A.shape[0]))
        runs = []
        for windows in (2, 2, 3):
            passes, frags, written, res = _counted(lambda: pcg(be, b, 0.0, windows * check))
            be.free(res["x"])
            runs.append((passes, frags, written, res["iterations"]))
        (p2, f2, w2, i2), (p3, f3, w3, i3) = runs[1], runs[2]
        its = max(i3 - i2, 1)
        return {"passes": (p3 - p2) / its, "fragments": (f3 - f2) / its, "written": (w3 - w2) / its}
    finally:
        be.release()


def pcg_passes_per_iteration(p, sums: str, plan: bool, check: int, rank: int = 100,
                             format: str = "ellpack") -> float:
    """Passes of one PCG iteration of the gpu back end (:func:`pcg_per_iteration`)."""
    return pcg_per_iteration(p, sums, plan, check, rank, format)["passes"]


def timed_ipm_solve(p, backend: str, ipm_iterations: int, pcg_maxiter: int, **kw) -> tuple:
    """(result, wall seconds) of ``solve(p, method="matrix-free", backend=backend, eps=1e-8,
    max_iter=ipm_iterations, pcg_maxiter=pcg_maxiter, **kw)`` after one untimed solve of one
    IPM iteration (programs compiled, pools filled). ``result.timers["pcg"] /
    result.pcg_iterations`` is the time a PCG iteration (set-up, read-backs and the float64
    refinement's CPU product included)."""
    import time

    from gpgpu.lp import solve

    solve(p, method="matrix-free", backend=backend, eps=1e-8, max_iter=1, pcg_maxiter=pcg_maxiter, **kw)
    t = time.perf_counter()
    r = solve(p, method="matrix-free", backend=backend, eps=1e-8, max_iter=ipm_iterations,
              pcg_maxiter=pcg_maxiter, **kw)
    return r, time.perf_counter() - t


def cupyx_cg(A, b, rtol: float, maxiter: int):
    """A function that solves A x = b (float32) by ``cupyx.scipy.sparse.linalg.cg`` and answers
    (x as numpy, info, iterations), the device synchronized; None where cupy does not import
    or finds no CUDA device. Newer cupy takes ``rtol`` (as scipy >= 1.12), older ``tol``."""
    try:
        import cupy
        import cupyx.scipy.sparse as csp
        import cupyx.scipy.sparse.linalg as cspla

        Ac, bc = csp.csr_matrix(A.astype(np.float32)), cupy.asarray(np.asarray(b, dtype=np.float32))
    except Exception:            # not installed, or no CUDA device
        return None

    def solve():
        its = [0]

        def count(xk):
            its[0] += 1
        try:
            x, info = cspla.cg(Ac, bc, rtol=rtol, maxiter=maxiter, callback=count)
        except TypeError:
            its[0] = 0
            x, info = cspla.cg(Ac, bc, tol=rtol, maxiter=maxiter, callback=count)
        cupy.cuda.Device().synchronize()
        return cupy.asnumpy(x), int(info), its[0]
    return solve


def cusparse_product(A, x):
    """A function that runs y = A x (float32 CSR) by cupyx (cuSPARSE) ``batch`` times and
    synchronizes; None where cupy does not import or finds no CUDA device."""
    try:
        import cupy
        import cupyx.scipy.sparse as csp

        Ad, xd = csp.csr_matrix(A.astype(np.float32)), cupy.asarray(np.asarray(x, dtype=np.float32))
        Ad @ xd
        cupy.cuda.Device().synchronize()
    except Exception:
        return None

    def run(batch: int = 1):
        for _ in range(batch):
            y = Ad @ xd
        cupy.cuda.Device().synchronize()
        return y
    return run


def blas_threads(n: int):
    """A context that limits BLAS (and OpenMP) to n threads (threadpoolctl), or does nothing
    without it; answers (context, the threads as the CSV says them)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext(), "default"
    return threadpool_limits(limits=n), str(n)


def load_problem(name: str):
    """An LP by name: ``gruca_like_N`` (the Gruca-like stand-in of N rows of the mfipm
    experiments), a QAPLIB name (nug12, nug20, nug30: their LP relaxations) or an MPS file."""
    from experiments.mfipm.common import gruca_problem, load_problem as qap_or_mps

    if name.startswith("gruca_like_"):
        try:
            N = int(name[len("gruca_like_"):])
        except ValueError:
            raise ValueError(f"{name!r}: a Gruca-like problem is named gruca_like_N with N its rows, "
                             f"e.g. gruca_like_64") from None
        return gruca_problem(N)
    return qap_or_mps(name)
