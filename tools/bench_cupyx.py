"""cupyx's CG on 2-D Poisson, alone: how much its time varies, with and without a GL context in
the process (the baseline ``tools/bench_cg.py`` compares against).

    python tools/bench_cupyx.py nogl        # no GL context in the process
    python tools/bench_cupyx.py gl          # gpgpu's context created first
    python tools/bench_cupyx.py glbusy      # ... and one gpgpu.cg solve drawn before

Prints each of ``--solves`` solves' wall time (rtol 1e-5, float32, the device synchronized after
each) and the median without the first (its set-up). Needs cupy and a CUDA device.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=("nogl", "gl", "glbusy"))
    ap.add_argument("--side", type=int, default=512, help="grid side k (n = k^2)")
    ap.add_argument("--solves", type=int, default=8)
    args = ap.parse_args(argv)
    k = args.side
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(k, k))
    A = (sp.kron(sp.eye(k), T) + sp.kron(T, sp.eye(k))).tocsr().astype(np.float32)
    b = np.random.default_rng(k).standard_normal(A.shape[0]).astype(np.float32)
    import cupy
    import cupyx.scipy.sparse as csp
    import cupyx.scipy.sparse.linalg as cspla
    if args.mode != "nogl":
        import gpgpu
        gpgpu.get_context()
        if args.mode == "glbusy":
            gpgpu.cg(A.astype(np.float64), b.astype(np.float64), rtol=1e-5, preset="fast")
    Ac, bc = csp.csr_matrix(A), cupy.asarray(b)
    times = []
    for _ in range(args.solves):
        t = time.perf_counter()
        cspla.cg(Ac, bc, rtol=1e-5, maxiter=10 * k * k)
        cupy.cuda.Device().synchronize()
        times.append(time.perf_counter() - t)
    print(args.mode, " ".join(f"{v:.3f}" for v in times), f"median {statistics.median(times[1:]):.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
