"""``python -m gpgpu.show.docs`` (``make pipeline-pictures``): the frames of ``docs/pipeline.md``, drawn from
the real passes of the real algorithms into ``docs/pipeline/``."""
from __future__ import annotations

import sys
from pathlib import Path

from . import ALGORITHMS, draw_frame, run

#: file name -> (algorithm, n, kernel, which pass of that kernel (0 = first), fragment or None)
FRAMES = {
    "cholesky_step.png": ("cholesky", 8, "outer_product_subtraction", 1, (4, 6)),
    "cholesky_normalization.png": ("cholesky", 8, "normalization", 1, None),
    "packed_two_triangles.png": ("cholesky-packed-even", 8, "outer_product_subtraction", 0, None),
    "packed_one_triangle.png": ("cholesky-packed-even", 8, "outer_product_subtraction", 5, None),
    "lu_pivot_search.png": ("lu-partial", 6, "argmax_reduction_first", 1, None),
    "lu_row_swap.png": ("lu-partial", 6, "copy", 0, None),
    "reduction_pyramid_1.png": ("reduce-pyramid", 8, "sum_reduction", 0, None),
    "reduction_pyramid_2.png": ("reduce-pyramid", 8, "sum_reduction", 1, None),
    "adat_column_scaling.png": ("adat", 6, "column_scaling", 2, None),
    "adat_outer_product_addition.png": ("adat", 6, "outer_product_addition", 2, None),
}


def pick(rec, kernel: str, which: int, lines: bool = False):
    """The ``which``-th pass of ``kernel`` (with ``lines``: of those drawn as two lines, a swap)."""
    frames = [f for f in rec.frames if f.kernel == kernel and (not lines or (f.primitive == "line" and len(f.vertices) == 4))]
    if which >= len(frames):
        raise LookupError(f"only {len(frames)} passes of {kernel}")
    return frames[which]


def main(out: str = "docs/pipeline") -> int:
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    runs = {}
    for name, (algorithm, n, kernel, which, fragment) in FRAMES.items():
        rec = runs.get((algorithm, n))
        if rec is None:
            rec = runs[algorithm, n] = run(algorithm, n)
        f = pick(rec, kernel, which, lines=name == "lu_row_swap.png")
        what, ref, _ = ALGORITHMS[algorithm]
        draw_frame(f, len(rec.frames), fragment, out_dir / name, heading=f"{algorithm}, n = {n}: {what} ({ref})")
        print(out_dir / name, f"pass {f.index + 1} of {len(rec.frames)}: {f.kernel}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
