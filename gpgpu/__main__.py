"""``python -m gpgpu info`` and ``python -m gpgpu bench``.

info   renderer, vendor, GL version, max texture size, float render targets, timer queries
bench  host time per pass for tiny passes and for a pre-built plan, the time a dependent pass and a read-back
       take until the GPU has finished, and the fill limit: fragments per second of full-screen passes writing
       R32F or RGBA32F with 0 to 3 texture reads (gpgpu.bench)
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import bench as measure
from .cli import output_file_problem, positive_int, run_main, write_error
from .context import ContextError, capabilities


def info() -> int:
    try:
        caps = capabilities()
    except ContextError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for key in ("renderer", "vendor", "version", "glsl", "max_texture_size", "max_viewport_dims",
                "float_render_target", "timer_query", "backend", "threaded_gl"):
        print(f"{key:20s} {caps[key]}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpgpu", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="print the GL renderer and its capabilities")
    b = sub.add_parser("bench", help="host time per pass and the fill limit (fragments per second)")
    b.add_argument("--passes", type=positive_int, default=20000, help="tiny passes timed (default 20000)")
    b.add_argument("--size", type=positive_int, default=None,
                   help="side of the full-screen passes (default 4096 on a GPU, 512 on a software renderer)")
    b.add_argument("--repeat", type=positive_int, default=10, help="full-screen passes per measurement")
    b.add_argument("--json", type=Path, default=None,
                   help="also write the figures to this JSON file (checked before the benchmark runs: "
                        "its folder must exist and be writable; a write that fails all the same, a full "
                        "disk, is one error line, exit status 2)")
    args = parser.parse_args(argv)
    if args.command == "info":
        return info()
    if args.json is not None:
        problem = output_file_problem(args.json, "--json")
        if problem:
            b.error(problem)
    return bench(args.passes, args.size, args.repeat, args.json)


def bench(passes: int, size: int | None, repeat: int, json_path: Path | None = None) -> int:
    import json

    try:
        caps = capabilities()
    except ContextError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    size = size or measure.default_fill_size()
    if size > caps["max_texture_size"]:
        print(f"error: --size {size} is larger than GL_MAX_TEXTURE_SIZE = {caps['max_texture_size']}",
              file=sys.stderr)
        return 2
    r = measure.pass_overhead(passes)
    print(f"renderer                 {caps['renderer']}")
    print(f"tiny passes              {r['passes']} one-texel copies")
    print(f"host time per pass       {r['host_us_per_pass']:.2f} us (same primitive)")
    print(f"host time per pass       {r['host_us_per_pass_new_primitive']:.2f} us (new primitive each pass)")
    print(f"host+GPU time per pass   {r['total_us_per_pass']:.2f} us")
    plan = measure.plan_overhead()
    r.update(plan)
    print(f"pre-built plan           Cholesky of order {plan['order']} from one vertex buffer, "
          f"{plan['plan_passes']} passes")
    print(f"host time per pass       {plan['plan_host_us_per_pass']:.2f} us (pre-built plan)")
    print(f"of which Python          {plan['plan_python_us_per_pass']:.2f} us (draw calls left out)")
    print(f"host+GPU time per pass   {plan['plan_total_us_per_pass']:.2f} us (pre-built plan)")
    recorded = measure.recorded_overhead()
    r.update(recorded)
    print(f"recorded plans in turn   two plans of {recorded['recorded_passes'] // 2} passes, a ping-pong pair's two orders")
    print(f"host time per pass       {recorded['recorded_host_us_per_pass']:.2f} us (recorded plans in turn)")
    print(f"of which Python          {recorded['recorded_python_us_per_pass']:.2f} us (draw calls left out)")
    chain = measure.chain_latency(max(100, min(passes, 4000)))
    r.update(chain)
    print("one-texel copies, host+GPU time until finished:")
    print(f"  into one target        {chain['same_target_us_per_pass']:.2f} us a pass")
    print(f"  into {chain['ring']:>2d} targets, in turn {chain['new_target_us_per_pass']:.2f} us a pass")
    print(f"  each reads the last    {chain['dependent_us_per_pass']:.2f} us a pass "
          f"(host {chain['chain_host_us_per_pass']:.2f} us)")
    print(f"  a pass, its read-back  {chain['readback_us']:.2f} us a round trip")
    print(f"  {chain['burst']:>2d} passes, a read-back {chain['burst_readback_us']:.2f} us a round trip")
    print(f"threaded GL driver       {caps['threaded_gl']}")
    limits = measure.fill_limits(size, repeat)
    print(f"fill limit, {size} x {size} full-screen passes (median of {repeat}), Gfragments/s and GB/s written:")
    print(f"{'texture reads':>24s} {'0':>14s} {'1':>14s} {'2':>14s} {'3':>14s}")
    for comps, name, nbytes in ((1, "R32F", 4), (4, "RGBA32F", 16)):
        cells = [f"{limits[(comps, k)] / 1e9:6.2f} {limits[(comps, k)] * nbytes / 1e9:5.0f} GB/s"
                 for k in range(4)]
        print(f"{name:>24s} " + " ".join(f"{c:>14s}" for c in cells))
    if json_path is not None:
        data = {"renderer": caps["renderer"], "size": size, "repeat": repeat, **r,
                "fill_limit": {f"{'R32F' if c == 1 else 'RGBA32F'}_reads{k}": v for (c, k), v in limits.items()}}
        try:
            json_path.write_text(json.dumps(data, indent=1))
        except OSError as exc:          # checked before the benchmark, yet not written (a full disk)
            print("error: " + write_error("--json", json_path, exc), file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
