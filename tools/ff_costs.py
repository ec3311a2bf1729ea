"""What the float-float factor of the LP's normal equations costs, and what its guard catches.

    python tools/ff_costs.py [--out FILE.json] [--small]

On the current renderer, three measurements (``--small``: sizes for a quick check):

* ``adat``: the float-float A diag(d) Aᵀ of a random sparse A of each NETLIB size listed
  (degen3's 1405 x 1818 with 24,646 non-zeros, ...), with the dense loop over A's n columns and
  over the non-zeros of row i (``float_float.row_lists``): the best wall seconds of three, the
  answer read back (on a GPU the read-back waits for the pass).
* ``host``: the host's microseconds a pass issuing ``float_float.factor_with_inverse`` at m = 600,
  with moderngl's draw calls replaced by a no-op (only the plan's own work is timed).
* ``guard``: random normal matrices B Bᵀ (B m x r, so m - r dependent rows, rows scaled over
  e^-3 .. e^3), equilibrated as the LP does (``gpgpu.adat.equilibration``), factored in
  float-float with the guard at each tolerance listed: the pivots replaced, against m - r.
"""
from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ADAT_SIZES = [("degen3", 1405, 1818, 24646), ("d2q06c", 1821, 5167, 32417)]
GUARD_SIZES = [(40, 30), (120, 100), (300, 280), (300, 150)]
TOLERANCES = [1e-16, 1e-15, 1e-14, 1e-13, 1e-12]


def adat_seconds(sizes=ADAT_SIZES, repeats=3) -> list:
    import scipy.sparse as sp

    from gpgpu import float_float as ff

    rng = np.random.default_rng(0)
    rows = []
    for name, m, n, nnz in sizes:
        A = sp.random(m, n, density=nnz / (m * n), random_state=1, format="csr")
        d = np.exp(rng.uniform(-8, 8, n))
        row = {"shape_of": name, "m": m, "n": n, "nonzeros": int(A.nnz)}
        with ff.upload(A.toarray(), "A") as Aff, ff.upload(d, "d") as dff, ff.row_lists(A) as lists:
            for label, rows_arg in (("row_lists", lists), ("dense", None)):
                best = np.inf
                for _ in range(repeats + 1):             # the first run compiles the kernel
                    t = time.perf_counter()
                    with ff.adat(Aff, dff, rows=rows_arg) as C:
                        C.to_array()
                    best = min(best, time.perf_counter() - t)
                row[f"{label}_seconds"] = best
        rows.append(row)
    return rows


def host_us_per_pass(m: int = 600, repeats: int = 5) -> float:
    import moderngl

    from gpgpu import float_float as ff
    from gpgpu import passes

    noop = lambda *a, **k: None  # noqa: E731
    saved = moderngl.VertexArray.render, passes._renderer
    moderngl.VertexArray.render, passes._renderer = noop, (lambda vao: noop)
    try:
        with ff.upload(2.0 * np.eye(m), "M") as S:
            best = np.inf
            for _ in range(repeats + 1):
                t = time.perf_counter()
                L, X = ff.factor_with_inverse(S)
                best = min(best, time.perf_counter() - t)
                L.release()
                X.release()
    finally:
        moderngl.VertexArray.render, passes._renderer = saved
    return best * 1e6 / (m + 4)


def guard_counts(sizes=GUARD_SIZES, tolerances=TOLERANCES, seed=1) -> list:
    from gpgpu import float_float as ff
    from gpgpu.adat import equilibration
    from gpgpu.cholesky import count_replaced

    rng = np.random.default_rng(seed)
    rows = []
    for m, r in sizes:
        B = rng.standard_normal((m, r)) * np.exp(rng.uniform(-3, 3, (m, 1)))
        M = B @ B.T
        s = equilibration(np.diag(M))
        replaced = []
        with ff.upload(M * s[:, None] * s[None, :], "M") as S:
            for tol in tolerances:
                with ff.factor(S, tolerance=tol, huge=1e30) as L:
                    replaced.append(count_replaced(L, m, "full", 1e30))
        rows.append({"m": m, "rank": r, "dependent": m - r,
                     "replaced": dict(zip(map(str, tolerances), replaced))})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="write the facts as JSON here")
    ap.add_argument("--small", action="store_true", help="small sizes (a quick check)")
    a = ap.parse_args(argv)
    from gpgpu.context import get_context
    from gpgpu.float_float import available

    if not available():
        print("float-float needs GL_ARB_gpu_shader5, which this context lacks", file=sys.stderr)
        return 2
    small = a.small
    facts = {
        "renderer": get_context().info.get("GL_RENDERER", ""),
        "date": datetime.date.today().isoformat(),
        "command": "python tools/ff_costs.py" + (" --small" if small else ""),
        "adat": adat_seconds([("small", 40, 60, 300)] if small else ADAT_SIZES, 1 if small else 3),
        "host_us_per_pass": host_us_per_pass(40 if small else 600, 1 if small else 5),
        "guard": guard_counts([(12, 9)] if small else GUARD_SIZES),
    }
    text = json.dumps(facts, indent=1)
    print(text)
    if a.out:
        Path(a.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
