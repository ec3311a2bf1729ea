"""The fan iteration (``reduction="fan"`` with ``iteration="standard"``; beyond the papers): the
algebra of Shewchuk's listing in fewer passes. Each dot product is fan passes
(``glsl/cg_fan.frag``: the products, or with Jacobi both r^T (M r) and r^T r in RGBA partials,
computed in the first, the tail of a folded vector skipped) ending in one fragment
(``glsl/cg_scalars.frag``) that adds the last partial sums and writes the iteration's state
texel (delta, d^T q or ||r||^2, breakdown watch, convergence watch); alpha and beta are computed
from that texel by the vector passes that use them (``glsl/cg_update.frag``), x + alpha d and
r - alpha q in one pass with two render targets (``passes.Targets``), d = M r + beta d reading M
(no s = M r pass); the read-back is the state texel. 9 passes an iteration for a vector in one
row of 4096, Jacobi or not (14 and 18 as the listing's passes with fan sums)."""
from __future__ import annotations

from ..blas1 import KERNELS as L1, whole
from ..passes import Targets
from ..stream import Stream
from .kernels import FUSED, _fused_levels, _fused_sum
from .variant import Variant

__all__ = ["Fan"]


class Fan(Variant):
    """The fan iteration (module notes): the state texel ``state`` (read by the passes of an
    iteration's first half) and ``state_mid`` (written by d^T q, read by the second half)."""

    def setup(self) -> None:
        """The vectors, the state pair and the partial sums of each fan level."""
        super().setup()
        jac, b = self.jac, self.b
        self.dynamic = ((FUSED["scalars", 1, jac], "iteration"), (FUSED["scalars", 2, jac], "iteration"))
        self.levels = _fused_levels(b.rows, b.cols)
        self.state, self.state_mid = self.new(1, 1, components=4), self.new(1, 1, components=4)
        self.partials = [self.new(h, w, zero=False) for h, w, _ in self.levels]
        self.partials4 = [self.new(h, w, components=4, zero=False) for h, w, _ in self.levels] if jac \
            else self.partials

    def residual_sums(self, r: Stream, stage: int, out: Stream, uniforms: dict) -> None:
        """delta = r^T M r and ||r||^2 (one sum without M) into the state texel ``out``."""
        if self.M is not None:
            _fused_sum(FUSED["rmr"], {"S": r, "Mdiag": self.M}, self.partials4, self.levels, stage, 1, out, uniforms)
        else:
            _fused_sum(FUSED["rr"], {"S": r}, self.partials, self.levels, stage, 0, out, uniforms)

    def start(self) -> None:
        """d = M r and the state (delta, ||r||^2, -1, -1): CG (re)starts from x and r."""
        v = self.v
        if self.M is not None:
            L1["elementwise_product"].draw(v.d, whole(v.d), {"X": self.M, "Y": v.r})
        else:
            L1["copy"].draw(v.d, whole(v.d), {"A": v.r})
        self.residual_sums(v.r, 0, self.state, {})

    def iterate(self, it: int, recompute: bool, check: bool) -> None:
        """q = A d; d^T q with the breakdown watch (state -> state_mid); x and r in one pass of
        two targets, alpha from state_mid; delta and ||r||^2 with the convergence watch
        (state_mid -> state); d."""
        v, op = self.v, self.op
        op(v.d, v.q)
        _fused_sum(FUSED["dq"], {"S": v.d, "Y": v.q}, self.partials, self.levels, 1, self.jac, self.state_mid,
                   {"state": self.state, "iteration": float(it)})
        if recompute:                                            # r = b - A x
            FUSED["x"].draw(v.xn, whole(v.xn), {"state": self.state_mid, "X": v.x, "D": v.d})
            op(v.xn, v.q)
            L1["saxpy"].draw(v.rn, whole(v.rn), {"X": v.q, "Y": self.b}, {"alpha": -1.0})
        else:
            t = self.pairs.get((id(v.xn), id(v.rn)))
            if t is None:
                t = self.pairs[id(v.xn), id(v.rn)] = Targets(v.xn, v.rn)
            FUSED["xr"].draw(t, whole(v.xn), {"state": self.state_mid, "X": v.x, "D": v.d, "R": v.r, "Q": v.q})
        self.residual_sums(v.rn, 2, self.state, {"state": self.state_mid, "iteration": float(it + 1),
                                                 "threshold": self.threshold})
        ins = {"state": self.state, "previous": self.state_mid, "R": v.rn, "D": v.d}
        if self.M is not None:
            ins["Mdiag"] = self.M
        FUSED["d", self.jac].draw(v.dn, whole(v.dn), ins)

    def plan_key(self, recompute: bool, check: bool) -> tuple:
        """Its state is one texel pair, its read-back the state itself: check changes nothing."""
        return id(self.v.x), id(self.v.r), id(self.v.d), recompute

    def watches(self, check: bool) -> tuple:
        """The state texel (delta, ||r||^2, breakdown watch, convergence watch), one read-back."""
        return tuple(float(x) for x in self.state.to_array().reshape(-1)[1:])

    def converged(self) -> bool:
        return self.watches(False)[2] >= 0
