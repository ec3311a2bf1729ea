"""The LP's factor with its inverse by blocks of columns, against a step a pass (beyond the papers).

    python -m experiments.factor_blocks [--sizes 600,1503] [--blocks 8,16,32,64] [--repeat 3]
        [--out docs/figures/factor_blocks_<date>.csv]
    python -m experiments.factor_blocks --markdown CSV

For each order m, M = Q Qᵀ + m I (Q standard normal, seed 0) is factored with its inverse
(:func:`gpgpu.cholesky.factor_with_inverse`, float32, and
:func:`gpgpu.float_float.factor_with_inverse`, float-float) the ways the LP can draw it: float32
four steps a pass (``STEPS_A_PASS``, the LP's float32 default) and one, float-float one step a
pass (its default), and both with ``block=`` b for each of ``--blocks`` (a pass a column over the
block's panel, then the panel packed and one pass over everything below the block), float32 also with four steps a
pass over the panels (blocks that are multiples of 8). Each is drawn once to compile and
build its plan, then ``--repeat`` times between two ``finish()`` calls (seconds: the fastest);
once more under ``gpgpu.counters`` (passes, fragments and, where the renderer has timer queries,
each pass's GPU time: all passes', and the trailing passes' alone, the panel packing included).
Each row: precision, m, steps, block, seconds, passes, fragments, GPU seconds, the trailing
passes' GPU seconds, max |X L - I|
and max |L - L64| / max |L64| against numpy's float64 Cholesky, renderer and date.
"""
from __future__ import annotations

import csv
import time

from experiments.figures import printed_markdown, rows_to, tool_parser

FIELDS = ("precision", "m", "steps", "block", "seconds", "passes", "fragments", "gpu_seconds",
          "trailing_gpu_seconds", "inverse_error", "factor_error", "renderer", "date")


def _ways(blocks) -> list:
    """(precision, steps, block) in the order of the rows."""
    from gpgpu import float_float
    from gpgpu.lp.gpu_backend import STEPS_A_PASS

    ways = [("float32", STEPS_A_PASS, None), ("float32", 1, None)] + [("float32", 1, b) for b in blocks]
    ways += [("float32", STEPS_A_PASS, b) for b in blocks if b % (2 * STEPS_A_PASS) == 0]
    return ways + [("float-float", float_float.STEPS, None)] + [("float-float", 1, b) for b in blocks]


def measure(m: int, blocks, repeat: int = 3) -> list:
    """The rows of one order m (see the module notes)."""
    import numpy as np

    from gpgpu import counters, float_float
    from gpgpu.cholesky import factor_with_inverse
    from gpgpu.cholesky import TRAILING
    from gpgpu.context import get_context, has_timer_query
    from gpgpu.stream import Stream

    ctx = get_context()
    Q = np.random.default_rng(0).standard_normal((m, m))
    M = Q @ Q.T + m * np.eye(m)
    L64 = np.linalg.cholesky(M)
    rows = []
    with float_float.upload(M, "M") as Mff, Stream.from_array(np.tril(M).astype(np.float32)) as M32:
        for precision, steps, block in _ways(blocks):
            if precision == "float32":
                def draw():
                    return factor_with_inverse(M32, m, steps=steps, block=block)

                def values(L, X):
                    return np.tril(L.to_array().astype(np.float64)), X.to_array().astype(np.float64)
            else:
                def draw():
                    return float_float.factor_with_inverse(Mff, steps=steps, block=block)

                def values(L, X):
                    return np.tril(float_float.combine(L)), float_float.combine(X)
            seconds = []
            for i in range(repeat + 1):
                ctx.finish()
                t0 = time.perf_counter()
                L, X = draw()
                ctx.finish()
                seconds.append(time.perf_counter() - t0)
                if i < repeat:
                    L.release(), X.release()
            l, x = values(L, X)
            L.release(), X.release()
            with counters.count(time=True) as c:
                for s in draw():
                    s.release()
            trailing = TRAILING if precision == "float32" else float_float.TRAILING
            timed = has_timer_query()
            rows.append({"precision": precision, "m": m, "steps": steps, "block": block or "",
                         "seconds": min(seconds[1:]), "passes": c.passes(), "fragments": c.fragments(),
                         "gpu_seconds": c.gpu_seconds() if timed else "",
                         "trailing_gpu_seconds": c.gpu_seconds(trailing.label) + c.gpu_seconds(trailing.panel.label)
                         if timed else "",
                         "inverse_error": float(np.abs(x @ l - np.eye(m)).max()),
                         "factor_error": float(np.abs(l - L64).max() / np.abs(L64).max())})
    return rows


def markdown(path) -> str:
    """The CSV as a table: per precision and m, each way's seconds, its speed-up over the
    precision's LP default (float32 four steps a pass, float-float one), passes and fragments."""
    rows = list(csv.DictReader(open(path)))
    out = ["| precision | m | steps a pass | block | seconds | speed-up | passes | fragments | GPU s (trailing passes) "
           "| max abs(X L - I) |", "| --- " * 10 + "|"]

    def gpu(r):
        if not r.get("gpu_seconds"):
            return "-"
        return f"{float(r['gpu_seconds']):.4f} ({float(r['trailing_gpu_seconds']):.4f})"

    base = {}
    for r in rows:
        key = (r["precision"], r["m"])
        if not r["block"] and key not in base:
            base[key] = float(r["seconds"])
        gain = base[key] / float(r["seconds"])
        out.append(f"| {r['precision']} | {r['m']} | {r['steps']} | {r['block'] or '-'} | {float(r['seconds']):.4f} "
                   f"| {gain:.2f} | {r['passes']} | {int(r['fragments']):,} | {gpu(r)} | {float(r['inverse_error']):.2e} |")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = tool_parser(__doc__)
    ap.add_argument("--sizes", default="600,1503", help="orders m, comma-separated")
    ap.add_argument("--blocks", default="8,16,32,64", help="blocks b, comma-separated (even, 2 .. 128)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    if printed_markdown(args, markdown):
        return 0
    from gpgpu.cholesky import check_block

    blocks = [int(b) for b in args.blocks.split(",") if b]
    for b in blocks:
        try:
            check_block(b)
        except ValueError as e:
            ap.error(f"--blocks: {e}")
    with rows_to(args.out, "factor_blocks", FIELDS) as write:
        for m in (int(s) for s in args.sizes.split(",")):
            for r in measure(m, blocks, args.repeat):
                write(r)
                print(f"{r['precision']:11s} m {m:5d} steps {r['steps']} block {r['block'] or '-':>3} "
                      f"{r['seconds']:.4f} s  {r['passes']} passes  {r['fragments']:,} fragments  "
                      f"XL-I {r['inverse_error']:.1e}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
