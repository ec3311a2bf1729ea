"""Conjugate gradients on the GPU (paper 003, Corrigan, after Bolz et al. 2003 and Shewchuk 1994).

``gpgpu.cg(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None, ...)``
is called as scipy.sparse.linalg.cg (scipy >= 1.14) and answers ``(x, info)`` with its meaning;
every vector operation of the iteration is a fragment program drawn over float32 textures, and
the scalars stay on the GPU in 1 x 1 streams, read back every ``check_every`` iterations.
``preset="paper" | "robust" | "fast"`` picks the options together (docs/guide/sparse.md lists
the paper preset's option by option, docs/reference/cg-options.md all of them).

The package, one module a part (in the manner of PETSc's KSP and pyamg's krylov):

* ``gpgpu.cg.api``: :func:`cg` and the loop around the iterations (read-backs, breakdown,
  verification of b - A x and restarts, the answer scaled back);
* ``gpgpu.cg.options``: the options table ``OPTIONS``, the presets ``PRESETS`` and
  ``PRESET_FORMATS`` over it, and the checks that resolve them;
* ``gpgpu.cg.operator`` and ``gpgpu.cg.inputs``: A, b, x0 and M checked, scaled by
  powers of two (exact) into float32's safe range, and uploaded;
* ``gpgpu.cg.variant``: what every iteration variant shares (``setup``, ``start``,
  ``iterate``, recorded plans, named streams);
* the variants, chosen by name (``api.VARIANTS``): ``gpgpu.cg.standard`` (Shewchuk's
  listing pass by pass, paper 003's), ``gpgpu.cg.fan`` (the fan iteration) and
  ``gpgpu.cg.single_reduction`` (Chronopoulos and Gear's), the last two beyond the papers;
* ``gpgpu.cg.kernels``: the kernels' table and the passes that draw them.

Examples
--------
The package's tables and constants: the presets and their storage formats, the options, the
variants, sums and formats ``cg`` takes, and the float32 limits it works within.

>>> from gpgpu.cg import (FAST_CHECK_EVERY, FLOAT32_REACH, FREEZE_FLOOR, FUSED, FUSED_LAST, ITERATIONS,
...                       KERNELS, MATRIX_RANGE, OPTIONS, PRESET_FORMATS, PRESETS, REDUCTIONS, REFINE_PROGRESS,
...                       REFINE_RTOL, RETARGET, SCIPY_FORMATS, SHEWCHUK_RECOMPUTE_EVERY, STALL_WINDOW, VARIANTS,
...                       VECTOR_RANGE)
>>> sorted(PRESETS), PRESET_FORMATS["paper"], PRESETS["paper"]["recompute_every"]
(['fast', 'paper', 'robust'], 'corrigan', 50)
>>> SHEWCHUK_RECOMPUTE_EVERY, FAST_CHECK_EVERY, STALL_WINDOW
(50, 16, 500)
>>> ITERATIONS, REDUCTIONS, sorted(VARIANTS)
(('standard', 'single-reduction'), ('pyramid', 'pingpong', 'fan'), ['fan', 'single-reduction', 'standard'])
>>> SCIPY_FORMATS
('corrigan', 'ellpack', 'tell', 'packed', 'split')
>>> [o.name for o in OPTIONS][:4]
['x0', 'rtol', 'atol', 'maxiter']
>>> FLOAT32_REACH == 2.0 ** -23, FREEZE_FLOOR == 2.0 ** -30, RETARGET
(True, True, 0.5)
>>> REFINE_RTOL, REFINE_PROGRESS         # cg(refine=True): each round's target, and the least gain
(1e-05, 0.5)
>>> MATRIX_RANGE, VECTOR_RANGE, FUSED_LAST
(16, 8, 32)
>>> KERNELS["quotient"].name, FUSED["dq"].name
('scalar_quotient', 'cg_fan')
"""
from __future__ import annotations

from .api import FREEZE_FLOOR, REFINE_PROGRESS, REFINE_RTOL, RETARGET, STALL_WINDOW, VARIANTS, CGResult, cg
from .inputs import FLOAT32_REACH, VECTOR_RANGE, Float32ToleranceWarning
from .kernels import FUSED, FUSED_LAST, KERNELS
from .operator import MATRIX_RANGE
from .options import (FAST_CHECK_EVERY, ITERATIONS, OPTIONS, PRESET_FORMATS, PRESETS, REDUCTIONS,
                      SCIPY_FORMATS, SHEWCHUK_RECOMPUTE_EVERY)

__all__ = ["cg", "CGResult", "Float32ToleranceWarning", "FLOAT32_REACH", "KERNELS", "FUSED", "FUSED_LAST",
           "OPTIONS", "PRESETS", "PRESET_FORMATS", "FAST_CHECK_EVERY", "ITERATIONS", "REDUCTIONS",
           "SCIPY_FORMATS", "SHEWCHUK_RECOMPUTE_EVERY", "MATRIX_RANGE", "VECTOR_RANGE", "FREEZE_FLOOR",
           "STALL_WINDOW", "RETARGET", "REFINE_RTOL", "REFINE_PROGRESS",
           "VARIANTS"]
