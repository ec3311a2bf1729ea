"""``python -m gpgpu info`` and ``python -m gpgpu bench``.

info   renderer, vendor, GL version, max texture size, float render targets, timer queries
bench  host time per pass for tiny passes, and fragments per second of a large copy
"""
from __future__ import annotations

import argparse
import sys
import time


def info() -> int:
    from .context import ContextError, capabilities

    try:
        caps = capabilities()
    except ContextError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for key in ("renderer", "vendor", "version", "glsl", "max_texture_size", "max_viewport_dims",
                "float_render_target", "timer_query", "backend"):
        print(f"{key:20s} {caps[key]}")
    return 0


def bench(passes: int = 20000, size: int = 4096, repeat: int = 10) -> dict:
    """Measure the per-pass host overhead and the fill rate of the copy kernel."""
    import numpy as np

    from .blas1 import KERNELS, whole
    from .context import get_context
    from .geometry import Texel
    from .stream import Stream

    ctx = get_context()
    copy = KERNELS["copy"]
    src, dst = Stream(16, 16), Stream(16, 16)
    texel = Texel.at(3, 3, T0=lambda x, y: (x, y))
    for _ in range(100):  # warm up: compile, first draws
        copy.draw(dst, texel, {"A": src})
    ctx.finish()
    t0 = time.perf_counter()
    for _ in range(passes):
        copy.draw(dst, texel, {"A": src})
    t1 = time.perf_counter()
    ctx.finish()
    t2 = time.perf_counter()
    host_us = (t1 - t0) / passes * 1e6
    total_us = (t2 - t0) / passes * 1e6

    # a new primitive per pass, as the algorithms build them (vertex table + upload)
    t0 = time.perf_counter()
    for k in range(passes):
        copy.draw(dst, Texel.at(k % 16, 3, T0=lambda x, y: (x, y)), {"A": src})
    t1 = time.perf_counter()
    ctx.finish()
    host_new_us = (t1 - t0) / passes * 1e6
    src.release(), dst.release()

    a = Stream(size, size, data=np.random.default_rng(0).random((size, size), dtype=np.float32))
    b = Stream(size, size)
    rect = whole(b)
    copy.draw(b, rect, {"A": a})
    ctx.finish()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        copy.draw(b, rect, {"A": a})
        ctx.finish()
        times.append(time.perf_counter() - t0)
    a.release(), b.release()
    best = float(np.median(times))
    return {
        "renderer": ctx.info["GL_RENDERER"],
        "passes": passes,
        "host_us_per_pass": host_us,
        "host_us_per_pass_new_primitive": host_new_us,
        "total_us_per_pass": total_us,
        "copy_size": size,
        "copy_seconds": best,
        "fragments_per_second": size * size / best,
        "copy_GBps": size * size * 8 / best / 1e9,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpgpu", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="print the GL renderer and its capabilities")
    b = sub.add_parser("bench", help="host time per pass and fragments per second")
    b.add_argument("--passes", type=int, default=20000)
    b.add_argument("--size", type=int, default=4096)
    b.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args(argv)
    if args.command == "info":
        return info()
    r = bench(args.passes, args.size, args.repeat)
    print(f"renderer                 {r['renderer']}")
    print(f"tiny passes              {r['passes']} one-texel copies")
    print(f"host time per pass       {r['host_us_per_pass']:.2f} us (same primitive)")
    print(f"host time per pass       {r['host_us_per_pass_new_primitive']:.2f} us (new primitive each pass)")
    print(f"host+GPU time per pass   {r['total_us_per_pass']:.2f} us")
    print(f"{r['copy_size']} x {r['copy_size']} copy     {r['copy_seconds'] * 1e3:.3f} ms = "
          f"{r['fragments_per_second'] / 1e9:.3f} Gfragments/s, {r['copy_GBps']:.1f} GB/s (8 bytes/fragment)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
