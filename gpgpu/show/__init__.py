"""The pipeline made visible: every pass of a real algorithm as a picture (beyond the papers).

``python -m gpgpu.show cholesky --n 8 --out frames/`` runs the unchanged algorithm on a small
problem inside :func:`gpgpu.record.record` and draws one frame per pass, as the papers'
Figs. 2-7 of 001 and Fig. 5 of 000 do by hand:

* the target texture after the pass, a grid of cells coloured by value and labelled with the
  values (up to 16 x 16 cells; the font grows with the cells, so n <= 8 reads easily);
* the primitive's outline over it, its vertices numbered; each vertex's V, T0 and T1 in a box
  beside the grid, off the cells, with a leader line to the vertex;
* the fragments the pass shaded, outlined -- the GPU's own coverage, from the recorder's
  instrumented pass, whose count equals the occlusion query's;
* one chosen fragment with the T0 and T1 the rasterizer interpolated to it, and arrows to the
  texels its kernel fetched (drawn on the input texture they came from), labelled with the
  fetch as the kernel writes it (``texRECT(L, pivot_index.yx)``: the swizzle);
* a caption (:func:`describe`): the pass, the kernel file and the paper's kernel, figure or
  algorithm, and, the first time they appear, what a pass is for where its kernel does not say
  it (the absmax passes with which LU opens compute its pivot threshold) and what a sentinel
  value means (the 3e+38 flags of Cholesky's pivot check, a reduction's +-3.4e38 identity);
* a legend (:data:`LEGEND`): what the colours, the outline, the arrows and the boxes mean.

Frames are PNGs (matplotlib's Agg, one figure whose artists are updated from frame to frame:
about 0.1 s a frame) and one animated GIF (Pillow); :func:`render_frames` gives the PNGs in
memory (for a page that embeds them). ``--window`` draws them with OpenGL in a GLFW window
instead (:mod:`gpgpu.show.window`). The frames are drawn by :mod:`gpgpu.show.frames`; this module
hands its names on. Frame k (counted from 1, as the captions count) is
``pass_000k.png``; each PNG also carries its caption as text (the "Title" and "Description"
entries). Writing into a folder used before replaces that folder's frames: the files an earlier
run wrote there under these names (pass_NNNN.png and passes.gif, nothing else) are deleted
first, so the folder holds this run's frames alone.
"""
from __future__ import annotations

from .algorithms import ALGORITHMS, run
from .frames import (DRAWING_EXTRA, FRAME_PATTERN, GIF_NAME, LEGEND, SENTINEL, caption, describe, draw_frame,
                     drawing_problem, format_trace, frame_name, render_frames, values_meaning, write_frames)

__all__ = ["ALGORITHMS", "run", "draw_frame", "write_frames", "render_frames", "describe", "caption", "LEGEND",
           "frame_name", "format_trace", "drawing_problem", "values_meaning", "FRAME_PATTERN", "GIF_NAME", "SENTINEL",
           "DRAWING_EXTRA"]
