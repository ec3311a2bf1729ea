"""Shewchuk's residual recomputation, r = b - A x every 50 iterations, in float32: his listing
(B2, which paper 003 follows and ``gpgpu.cg(preset="paper")`` draws) emulated in numpy float32
on the RBF torus systems of ``experiments.cg.rbf_surface``, with and without the recomputation,
beside the GPU's ``cg`` with the paper preset (docs/guide/sparse.md, "The paper preset, option
by option"). Beyond 003; an analysis tool, not an implementation path.

At each recomputation it prints what the listing assumes of r: the listing takes
alpha = r^T r / d^T A d, which is the exact line search r^T d / d^T A d only while r is
orthogonal to the previous direction. The recurrence keeps r^T d_old = 0 to rounding; the true
residual b - A x differs from the recurrence's r by float32's drift, and the column
``r.d/r.r`` is r^T d / r^T r of the direction built from it (1 in exact arithmetic). That ratio
is carried unchanged by the iterations that follow (each multiplies r^T d_old by beta, and r^T r
by beta too), and below 1/2 every step raises the energy (x - x*)^T A (x - x*).

    python -m experiments.cg.recompute                   # 1500 torus points, rtol 1e-5 and 3e-7
    python -m experiments.cg.recompute --points 5000 --rtol 1e-6 --gpu
"""
from __future__ import annotations

import argparse

import numpy as np

from experiments.cg.rbf_surface import TORUS_NOISE, scaled_parameters


def torus_system(points: int):
    """The bordered, scaled RBF system (K, f) that ``gpgpu.rbf.fit`` solves first on the noisy
    torus of ``experiments.cg.rbf_surface`` (as ``fit`` scales it: D K D, D = diag(1, .., 1,
    beta^-1/2))."""
    import scipy.sparse as sp

    from gpgpu import rbf

    par = scaled_parameters("torus_3d", points)
    p, nrm = rbf.torus_3d(points, noise=TORUS_NOISE)
    centres, f, K = rbf.rbf_system(p, nrm, par["eps"], par["support"], constant=True)
    d = np.ones(len(centres) + 1)
    d[-1] = 1.0 / np.sqrt(K[-1, -1])
    return (sp.diags(d) @ K @ sp.diags(d)).tocsr(), f


def shewchuk32(A, b, rtol: float, recompute_every: int | None, maxiter: int, report=None) -> tuple:
    """Shewchuk's listing in numpy float32 from x0 = 0 until the recurrence's ||r|| <= rtol
    ||b||: (iterations, the true ||b - A x|| / ||b|| in float64). ``report(i, row)`` is called at
    each recomputation with the figures the module notes describe."""
    A32, b32 = A.astype(np.float32), b.astype(np.float32)
    A64, b64 = A32.astype(np.float64), b32.astype(np.float64)
    bnorm = float(np.linalg.norm(b64))
    x, r = np.zeros_like(b32), b32.copy()
    d, delta = r.copy(), np.float32(r @ r)
    i = 0
    while i < maxiter and np.isfinite(delta) and np.sqrt(delta) > rtol * bnorm:
        q = A32 @ d
        alpha = np.float32(delta / np.float32(d @ q))
        x = (x + alpha * d).astype(np.float32)
        again = bool(recompute_every) and (i + 1) % recompute_every == 0
        if again:
            recurrence = (r - alpha * q).astype(np.float32)
            r = (b32 - A32 @ x).astype(np.float32)
        else:
            r = (r - alpha * q).astype(np.float32)
        delta_old, delta = delta, np.float32(r @ r)
        beta = np.float32(delta / delta_old)
        d_next = (r + beta * d).astype(np.float32)
        if again and report is not None:
            true = b64 - A64 @ x.astype(np.float64)
            r64, d64 = r.astype(np.float64), d.astype(np.float64)
            report(i + 1, {"true": np.linalg.norm(true) / bnorm,
                           "drift": np.linalg.norm(recurrence - true) / np.linalg.norm(true),
                           "cos_r_dold": (r64 @ d64) / np.linalg.norm(r64) / np.linalg.norm(d64),
                           "rd_rr": (r64 @ d_next.astype(np.float64)) / (r64 @ r64)})
        d = d_next
        i += 1
    true = np.linalg.norm(b64 - A64 @ x.astype(np.float64)) / bnorm
    return i, float(true)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m experiments.cg.recompute", description=__doc__.split("\n\n")[0])
    ap.add_argument("--points", type=int, default=1500, help="torus points (unknowns: 3 x points + 1)")
    ap.add_argument("--rtol", type=float, action="append", help="targets (default 1e-5 and 3e-7)")
    ap.add_argument("--maxiter", type=int, default=2000)
    ap.add_argument("--gpu", action="store_true", help="also gpgpu.cg(preset='paper'), with and without")
    args = ap.parse_args(argv)
    K, f = torus_system(args.points)
    print(f"torus, {args.points} points: {K.shape[0]} unknowns, {K.nnz} non-zeros")
    for rtol in args.rtol or [1e-5, 3e-7]:
        for every in (None, 50):
            rows = []
            its, true = shewchuk32(K, f, rtol, every, args.maxiter, report=lambda i, row: rows.append((i, row)))
            print(f"rtol {rtol:g}, numpy float32, recompute_every={every}: {its} iterations, "
                  f"true ||b - A x|| / ||b|| = {true:.2e}")
            for i, row in rows[:12]:
                print(f"    iteration {i:5d}: true {row['true']:.2e}, drift of the recurrence {row['drift']:.2e}, "
                      f"cos(r, d_old) {row['cos_r_dold']:+.2e}, r.d/r.r {row['rd_rr']:+.3f}")
            if args.gpu:
                import gpgpu

                res = gpgpu.cg(K, f, rtol=rtol, preset="paper", maxiter=args.maxiter,
                               recompute_every=every if every else False)
                true = np.linalg.norm(f - K @ res[0]) / np.linalg.norm(f)
                print(f"    gpgpu.cg(preset='paper', recompute_every={every if every else False}): info {res[1]}, "
                      f"{res.iterations} iterations, true {true:.2e} ({res.format})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
