"""Linear programming by Mehrotra's predictor-corrector interior-point method on the GPU.

Section 4 and 6.2 of paper 000 (Jung & O'Leary): Algorithm 3 (:mod:`.mehrotra`) written
against a small set of kernels (:mod:`.backend`), run on the GPU (``gpu_backend``) or on numpy
in float32 / float64 (:mod:`.numpy_backend`, the paper's "MATLAB version"). Problems come from
MPS files (:mod:`.mps`, via HiGHS) in the standard form (4.1)-(4.3).

Examples
--------
The package's tables: the methods and back ends ``solve`` takes, its presets and defaults, and
the statuses it answers (scipy's linprog codes).

>>> from gpgpu import lp
>>> lp.METHODS, lp.BACKENDS
(('mehrotra', 'matrix-free'), ('gpu', 'numpy32', 'numpy64'))
>>> sorted(lp.PRESETS), lp.DEFAULT_EPS, lp.REFINE_BELOW
(['fast', 'paper', 'robust'], 1e-06, 3e-05)
>>> lp.FAST_GPU_KERNELS["substitution"], lp.FAST_GPU_KERNELS["reductions"]
('inverse', 'fan')
>>> lp.STATUS[0], lp.STATUS_CODES["numerical_trouble"], lp.MESSAGES[1].split(" before")[0]
('optimal', 4, 'Iteration limit reached')
>>> r = lp.solve("afiro", backend="numpy64", eps=1e-8)
>>> r.status, round(r.objective, 4)
('optimal', -464.7531)
"""
from __future__ import annotations

from .api import (DEFAULT_EPS, FAST_GPU_KERNELS, METHODS, PRESETS, REFINE_BELOW, paper_eps, preset_options,
                  solve)
from .backend import BACKENDS, Backend
from .backends import get_backend
from .gruca import gruca_like
from .linprog import linprog
from .mehrotra import MESSAGES, STATUS, STATUS_CODES, LPResult
from .mps import Problem, read_mps, standardize

__all__ = ["solve", "METHODS", "PRESETS", "FAST_GPU_KERNELS", "preset_options", "paper_eps", "DEFAULT_EPS",
           "gruca_like", "read_mps", "Problem", "standardize", "LPResult", "Backend", "get_backend", "BACKENDS",
           "STATUS", "STATUS_CODES", "MESSAGES", "REFINE_BELOW", "linprog"]
