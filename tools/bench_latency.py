"""What a pass costs when it reads the previous pass's output: the latency of a dependent pass.

Raw moderngl (no gpgpu code), R32F targets, each pass a full-viewport quad whose fragment adds
one to the texel it reads. Four patterns of N passes each, at several target sizes:

* ``chain``: pass k reads the texture pass k-1 wrote (ping-pong between two textures): every
  pass waits for the one before it, as CG's passes do;
* ``indep``: every pass reads one fixed texture and writes one of two others in turn (no pass
  reads what another wrote);
* ``chain-big-small``: a chain alternating the size given and one fragment (a product, then a
  one-texel scalar pass, as in CG);

Printed: wall microseconds a pass (the loop, then ``ctx.finish()``), and GPU microseconds a pass
from one GL_TIME_ELAPSED query around the whole loop (so gaps between passes are inside it).

    python tools/bench_latency.py
    python tools/bench_latency.py --sizes 1 64 512 --passes 2000
    python tools/bench_latency.py --readback      # also: a one-fragment pass and a read-back of it

``--readback`` times N rounds of (one one-fragment pass, then its texel read back to the host) by
several routes: ``texture.read()`` (glGetTexImage, what ``Stream.to_array`` uses), ``fbo.read``
of a 1 x 1 viewport (glReadPixels), either into a pixel buffer object read afterwards
(``read_into`` a moderngl Buffer), and ``ctx.finish()`` alone (the wait without a transfer).
"""
from __future__ import annotations

import argparse
import time

import moderngl
import numpy as np

VS = """
#version 330
in vec2 pos;
void main() { gl_Position = vec4(pos, 0.0, 1.0); }
"""
FS = """
#version 330
uniform sampler2D src;
out float value;
void main() { value = texelFetch(src, ivec2(gl_FragCoord.xy) % textureSize(src, 0), 0).r + 1.0; }
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1, 64, 256, 512])
    ap.add_argument("--passes", type=int, default=2000)
    ap.add_argument("--readback", action="store_true", help="also time read-backs (module notes)")
    args = ap.parse_args()
    ctx = moderngl.create_context(standalone=True, backend="egl", require=330)
    print("renderer:", ctx.info["GL_RENDERER"])
    prog = ctx.program(vertex_shader=VS, fragment_shader=FS)
    quad = ctx.buffer(np.array([-1, -1, 1, -1, -1, 1, 1, 1], "f4").tobytes())
    vao = ctx.vertex_array(prog, [(quad, "2f", "pos")])
    prog["src"].value = 0
    print(f"{'pattern':>16} {'size':>6} {'fragments':>10} {'wall us/pass':>13} {'GPU us/pass':>12}")
    for n in args.sizes:
        texs = [ctx.texture((n, n), 1, dtype="f4") for _ in range(3)]
        small = [ctx.texture((1, 1), 1, dtype="f4") for _ in range(2)]
        for t in texs + small:
            t.filter = (moderngl.NEAREST, moderngl.NEAREST)
        fbos = [ctx.framebuffer(color_attachments=[t]) for t in texs]
        sfbos = [ctx.framebuffer(color_attachments=[t]) for t in small]

        def chain(k):
            texs[k % 2].use(0)
            fbos[(k + 1) % 2].use()
            vao.render(moderngl.TRIANGLE_STRIP)

        def indep(k):
            texs[2].use(0)
            fbos[k % 2].use()
            vao.render(moderngl.TRIANGLE_STRIP)

        def big_small(k):
            if k % 2 == 0:
                small[0].use(0)
                fbos[0].use()
            else:
                texs[0].use(0)
                sfbos[0].use()
            vao.render(moderngl.TRIANGLE_STRIP)

        for name, step in (("chain", chain), ("indep", indep), ("chain-big-small", big_small)):
            for k in range(50):
                step(k)
            ctx.finish()
            q = ctx.query(time=True)
            t0 = time.perf_counter()
            with q:
                for k in range(args.passes):
                    step(k)
            ctx.finish()
            wall = (time.perf_counter() - t0) / args.passes * 1e6
            gpu = q.elapsed / args.passes / 1e3
            print(f"{name:>16} {n:>6} {n * n:>10} {wall:>13.2f} {gpu:>12.2f}", flush=True)
        for o in texs + small + fbos + sfbos:
            o.release()
    if args.readback:
        readback(ctx, vao, max(100, args.passes // 4))


def readback(ctx, vao, rounds: int) -> None:
    """Wall microseconds a round of one one-fragment pass and one read-back (module notes)."""
    src = ctx.texture((1, 1), 1, dtype="f4")
    dst = ctx.texture((1, 1), 1, dtype="f4")
    big = ctx.texture((512, 512), 1, dtype="f4")
    fbo = ctx.framebuffer(color_attachments=[dst])
    bfbo = ctx.framebuffer(color_attachments=[big])
    pbo = ctx.buffer(reserve=4)
    routes = {
        "texture.read()": lambda: dst.read(),
        "fbo.read (1 x 1)": lambda: fbo.read(viewport=(0, 0, 1, 1), components=1, dtype="f4"),
        "texture.read_into(PBO), PBO.read()": lambda: (dst.read_into(pbo), pbo.read()),
        "fbo.read_into(PBO), PBO.read()": lambda: (fbo.read_into(pbo, viewport=(0, 0, 1, 1), components=1,
                                                                 dtype="f4"), pbo.read()),
        "ctx.finish() (no transfer)": lambda: ctx.finish(),
    }
    print(f"\nread-backs: {rounds} rounds of a pass then a read")
    print(f"{'route':>40} {'after 1 fragment us':>20} {'after 262144 fragments us':>26}")
    for name, read in routes.items():
        out = []
        for target, f in ((src, fbo), (big, bfbo)):
            def one():
                target.use(0)
                f.use()
                vao.render(moderngl.TRIANGLE_STRIP)
                if f is bfbo:            # the small pass after the big one, as a reduction's end
                    big.use(0)
                    fbo.use()
                    vao.render(moderngl.TRIANGLE_STRIP)
                read()
            for _ in range(20):
                one()
            t0 = time.perf_counter()
            for _ in range(rounds):
                one()
            out.append((time.perf_counter() - t0) / rounds * 1e6)
        print(f"{name:>40} {out[0]:>20.1f} {out[1]:>26.1f}", flush=True)


if __name__ == "__main__":
    main()
