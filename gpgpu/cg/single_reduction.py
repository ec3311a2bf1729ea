"""Single-reduction CG (``iteration="single-reduction"``, the fast preset's; beyond the papers):
the conjugate gradients of Chronopoulos and Gear (1989, "s-step iterative methods for symmetric
linear systems", J. Comput. Appl. Math. 25; also in Saad's "Iterative Methods for Sparse Linear
Systems" and, as "Chronopoulos/Gear CG", in Ghysels and Vanroose's pipelined CG paper), which
gets both dot products of an iteration from one reduction by carrying s = A d by its own
recurrence:

    u = M r;  w = A u;  gamma = r^T u;  delta = w^T u
    beta = gamma / gamma_old;  alpha = gamma / (delta - beta gamma / alpha_old)
    (the first iteration after a (re)start: beta = 0, alpha = gamma / delta)
    d = u + beta d;  s = w + beta s;  x = x + alpha d;  r = r - alpha s

In exact arithmetic these are CG's iterates (delta - beta gamma / alpha_old is d^T A d); in
float32 their rounding differs (docs/guide/sparse.md compares them). Drawn as: the product
w = A u; one fan reduction of (gamma, delta, and with Jacobi ||r||^2) in RGBA partials
(``glsl/cg_fan.frag``, TERM 4 and 5); one fragment pass over a 1 x 2 RGBA state
(``glsl/cg_single_reduction_scalars.frag``: alpha, beta, ||r||^2, both watches); and one pass of
four render targets, d, s, x, r (five with Jacobi: u = M r too;
``glsl/cg_single_reduction_update.frag``): 5 passes an iteration for a vector in one row of
4096, Jacobi or not. The watches are the standard iteration's (breakdown: the first iteration
whose delta - beta gamma / alpha_old <= 0, i.e. d^T A d <= 0; convergence: alpha = beta = 0 from
the iteration that converged on, x frozen), with one difference: ||r_k|| is summed in iteration
k (the standard iteration sums it in iteration k - 1, with r_k's update), so the convergence of
x_k is seen one iteration later; the iteration that sees it changes nothing (alpha = 0).
Restarts (the verification's, ``recompute_every``) rewrite r (and u); the state then marks the
first iteration again."""
from __future__ import annotations

import numpy as np

from ..blas1 import KERNELS as L1, whole
from ..passes import Targets
from .kernels import FUSED, _fan_passes, _fused_levels
from .variant import Variant

__all__ = ["SingleReduction"]


class SingleReduction(Variant):
    """Chronopoulos and Gear's CG (module notes): besides the standard vectors, s = A d (``sv``)
    and with Jacobi u = M r in ping-pong pairs, w = A u, and the 1 x 2 RGBA state pair
    ``state`` / ``state_mid`` (texel 0: gamma, alpha, beta, ||r||^2; texel 1: breakdown watch,
    convergence watch)."""

    late_watch = True

    def setup(self) -> None:
        super().setup()
        jac, b = self.jac, self.b
        self.dynamic = ((FUSED["sr_scalars", jac], "iteration"),)
        self.levels = _fused_levels(b.rows, b.cols)
        self.v.sv, self.v.svn, self.v.w = self.new(), self.new(), self.new()
        self.v.u, self.v.un = (self.new(), self.new()) if jac else (None, None)
        self.state, self.state_mid = self.new(1, 2, components=4), self.new(1, 2, components=4)
        self.partials4 = [self.new(h, c, components=4, zero=False) for h, c, _ in self.levels]

    def start(self) -> None:
        """u = M r, and the state written: alpha_old = 0 (the first iteration, beta = 0), both
        watches -1."""
        if self.jac:
            L1["elementwise_product"].draw(self.v.u, whole(self.v.u), {"X": self.M, "Y": self.v.r})
        self.state.write(np.array([0.0, 0.0, 0.0, 0.0, -1.0, -1.0, 0.0, 0.0], dtype=np.float32))

    def iterate(self, it: int, recompute: bool, check: bool) -> None:
        """w = A u; (gamma, delta[, ||r||^2]) by one fan reduction ending in the 1 x 2 state
        fragment (alpha, beta, watches: state -> state_mid); d, s, x, r (and u = M r) in one pass
        of four (five) render targets."""
        v, jac, op = self.v, self.jac, self.op
        op(v.u if jac else v.r, v.w)
        ins = {"S": v.r, "W": v.w}
        if jac:
            ins["U"] = v.u
        src = _fan_passes(FUSED["sr_fan", jac], ins, self.partials4, self.levels)
        FUSED["sr_scalars", jac].draw(self.state_mid, whole(self.state_mid), {"P": src, "state": self.state},
                                      {"size": (src.cols, src.rows), "iteration": float(it),
                                       "threshold": self.threshold}, texels=src.cols * src.rows + 2)
        outs = (v.xn, v.rn, v.dn, v.svn) + ((v.un,) if jac else ())
        t = self.pairs.get(tuple(map(id, outs)))
        if t is None:
            t = self.pairs[tuple(map(id, outs))] = Targets(*outs)
        ins = {"state": self.state_mid, "X": v.x, "R": v.r, "D": v.d, "S": v.sv, "W": v.w}
        if jac:
            ins.update(U=v.u, Mdiag=self.M)
        FUSED["sr_update", jac].draw(t, whole(v.xn), ins)
        if recompute:                                            # r = b - A x (and u = M r)
            op(v.xn, v.w)
            L1["saxpy"].draw(v.rn, whole(v.rn), {"X": v.w, "Y": self.b}, {"alpha": -1.0})
            if jac:
                L1["elementwise_product"].draw(v.un, whole(v.un), {"X": self.M, "Y": v.rn})

    def plan_key(self, recompute: bool, check: bool) -> tuple:
        return id(self.v.x), id(self.v.r), id(self.v.d), recompute

    def swap(self) -> None:
        super().swap()
        self.v.swap("sv", "svn", "u", "un")
        self.state, self.state_mid = self.state_mid, self.state

    def watches(self, check: bool) -> tuple:
        """(||r||^2, breakdown watch, convergence watch) from the 1 x 2 state, one read-back."""
        s = self.state.to_array().reshape(-1)
        return float(s[3]), float(s[4]), float(s[5])

    def converged(self) -> bool:
        return self.watches(False)[2] >= 0
