"""``python -m gpgpu.show.docs`` (``make pipeline-pictures``): the frames of ``docs/pipeline.md``, drawn from
the real passes of the real algorithms into ``docs/pipeline/``.

``python -m gpgpu.show.docs gallery`` (``make show-pages``): the gallery of the docs site, one page per
algorithm of ``python -m gpgpu.show --list``: ``docs/show/live/<algorithm>.html`` (n = 8, the page of
:mod:`gpgpu.show.html` without its PNG frames: its canvas draws every pass from the recorded values,
and live through WebGL2) and ``docs/gallery/<algorithm>.md`` embedding it, with ``docs/gallery/index.md``
listing them."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from .algorithms import ALGORITHMS, run
from .frames import draw_frame

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


GALLERY_N = 8


def gallery(pages: str = "docs/show/live", markdown: str = "docs/gallery", n: int = GALLERY_N) -> int:
    """Write the gallery (see the module docstring); prints each page and its size."""
    from .html import write_html

    pages_dir, md_dir = Path(pages), Path(markdown)
    pages_dir.mkdir(parents=True, exist_ok=True)
    md_dir.mkdir(parents=True, exist_ok=True)
    rows, total = [], 0
    for name, (what, ref, _) in ALGORITHMS.items():
        rec = run(name, n)
        page = write_html(rec, pages_dir / f"{name}.html", heading=f"{name}, n = {n}: {what} ({ref})",
                          title=f"{name}, n = {n}", subtitle=f"{what} ({ref})",
                          command=f"python -m gpgpu.show {name} --n {n} --html {name}.html --no-pictures",
                          progress=False, pictures=False)
        size = page.stat().st_size
        total += size
        passes = len(rec.frames)
        link = Path(os.path.relpath(pages_dir / f"{name}.html", md_dir)).as_posix()
        rel = "../" + link          # the site puts gallery/<name>.md at gallery/<name>/index.html
        (md_dir / f"{name}.md").write_text(
            f"# {name}\n\n{what} ({ref}), n = {n}: {passes} passes.\n\n"
            f"**[Open the page]({link})** (one file of {size // 1024} kB). "
            "The page replays the passes on your browser's GPU by itself (WebGL2; else it draws the recorded "
            "values); point at any cell of the target to see what its fragment fetched, switch to n = 4, 6 or 8 "
            "and, where the page mirrors every decision the run reads back, to another seed or your own input.\n\n"
            f'<iframe src="{rel}" title="every pass of {name}, n = {n}" '
            'style="width: 100%; height: 1200px; border: 1px solid #ccc"></iframe>\n', encoding="utf-8")
        rows.append(f"| [{name}]({name}.md) | {what} | {ref} | {passes} | {size // 1024} kB |")
        print(page, f"{passes} passes, {size // 1024} kB")
    (md_dir / "index.md").write_text(
        "# Gallery: every algorithm, live\n\n"
        f"One page per algorithm of `python -m gpgpu.show --list`, at n = {n}, written by `make show-pages`. "
        "Each page replays the recorded passes in the browser through WebGL2 as it opens (see "
        "[Stepping through in the browser](../stepping.md)); where WebGL2 or float render targets are missing "
        "it says so and draws every pass from the values the recorder kept.\n\n"
        "| algorithm | what it shows | paper | passes | page |\n| --- | --- | --- | --- | --- |\n"
        + "\n".join(rows) + f"\n\nThe {len(rows)} pages weigh {total / 2 ** 20:.1f} MB together.\n",
        encoding="utf-8")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["gallery"]:
        sys.exit(gallery(*sys.argv[2:]))
    sys.exit(main(*sys.argv[1:]))
