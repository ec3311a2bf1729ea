"""Shewchuk's CG listing pass by pass, as paper 003 draws it ("An Introduction to the Conjugate
Gradient Method Without the Agonizing Pain", B2/B3; the presets "paper" and "robust"):

    r = b - A x;  d = M r;  delta = r^T d
    repeat:
        q = A d                          sparse (or dense) matrix-vector product
        alpha = delta / d^T q            dot product, then a 1 x 1 quotient kernel
        x = x + alpha d                  saxpy with the scalar read from its 1 x 1 stream
        r = r - alpha q                  (every ``recompute_every`` iterations r = b - A x instead)
        s = M r;  delta_old = delta;  delta = r^T s
        d = s + (delta / delta_old) d

Every dot product is 003's component-wise product followed by a sum reduction (the pyramid,
``reduction="pyramid"``; or ping-pong halving passes, or fan passes), and every scalar stays on
the GPU in a named 1 x 1 stream (:class:`Standard`'s ``s``): delta and its next value, d^T q,
alpha, beta, ||r||^2 (with M), the breakdown watch (the first iteration with d^T A d <= 0) and
the convergence watch (the first iteration with ||r|| at the target; alpha = beta = 0 from
then on), the watches in ping-pong pairs. Nothing is read back inside an iteration; with
``check`` the three scalars the host reads are copied side by side into one 1 x 3 texture."""
from __future__ import annotations

from ..blas1 import KERNELS as L1, whole
from ..geometry import Texel
from .kernels import KERNELS, _dot, _quotient, _read, _saxpy
from .variant import Streams, Variant

__all__ = ["Standard"]


class Standard(Variant):
    """Shewchuk's listing, one pass an operation (module notes)."""

    dynamic = ((KERNELS["breakdown_watch"], "iteration"), (KERNELS["converged"], "iteration"))

    def setup(self) -> None:
        """The vectors (:meth:`Variant.setup`), the named scalars and the 1 x 3 read-out."""
        super().setup()
        self.s: Streams = self.scalars("delta", "delta_next", "dq", "alpha", "beta", "rr",
                                       "breakdown", "breakdown_next", "converged", "converged_next")
        self.readout = self.new(1, 3)   # ||r||^2, the breakdown watch and the convergence watch

    def start(self) -> None:
        """d = s = M r, delta = r^T s, both watches cleared: CG (re)starts from x and r."""
        v, s = self.v, self.s
        if self.M is not None:
            L1["elementwise_product"].draw(v.d, whole(v.d), {"X": self.M, "Y": v.r})
        else:
            L1["copy"].draw(v.d, whole(v.d), {"A": v.r})
        for watch in (s.breakdown, s.converged):
            L1["fill"].draw(watch, Texel.at(0, 0), uniforms={"value": -1.0})
        _dot(v.r, v.d, self.reduction, s.delta)

    def iterate(self, it: int, recompute: bool, check: bool) -> None:
        """One iteration's passes, from x, r, d, delta and the watches into the next ones."""
        v, s, M, op = self.v, self.s, self.M, self.op
        op(v.d, v.q)                                             # q = A d
        _dot(v.d, v.q, self.reduction, s.dq)
        KERNELS["breakdown_watch"].draw(s.breakdown_next, Texel.at(0, 0),
                                        {"flag": s.breakdown, "dAd": s.dq, "converged": s.converged},
                                        {"iteration": float(it)})
        _quotient(s.delta, s.dq, s.converged, s.alpha)           # alpha = delta / d^T q
        _saxpy(v.d, v.x, s.alpha, +1.0, v.xn)                    # x = x + alpha d
        if recompute:                                            # r = b - A x
            op(v.xn, v.q)
            L1["saxpy"].draw(v.rn, whole(v.rn), {"X": v.q, "Y": self.b}, {"alpha": -1.0})
        else:
            _saxpy(v.q, v.r, s.alpha, -1.0, v.rn)                # r = r - alpha q
        if M is not None:                                        # s = M r
            L1["elementwise_product"].draw(v.s, whole(v.s), {"X": M, "Y": v.rn})
            z = v.s
        else:
            z = v.rn
        _dot(v.rn, z, self.reduction, s.delta_next)              # delta = r^T s
        rr = s.delta_next if M is None else _dot(v.rn, v.rn, self.reduction, s.rr)
        KERNELS["converged"].draw(s.converged_next, Texel.at(0, 0), {"converged": s.converged, "rr": rr},
                                  {"threshold": self.threshold, "iteration": float(it + 1)})
        _quotient(s.delta_next, s.delta, s.converged_next, s.beta)   # beta, 0 once converged
        _saxpy(v.d, z, s.beta, +1.0, v.dn)                       # d = s + beta d
        if check:
            for i, scalar in enumerate((rr, s.breakdown_next, s.converged_next)):
                L1["copy"].draw(self.readout, Texel.at(i, 0, T0=(0.5, 0.5)), {"A": scalar})

    def plan_key(self, recompute: bool, check: bool) -> tuple:
        v, s = self.v, self.s
        return (id(v.x), id(v.r), id(v.d), id(s.breakdown), id(s.converged), id(s.delta), recompute, check)

    def swap(self) -> None:
        super().swap()
        self.s.swap("breakdown", "breakdown_next", "converged", "converged_next", "delta", "delta_next")

    def watches(self, check: bool) -> tuple:
        if check:
            return tuple(float(x) for x in self.readout.to_array().reshape(-1))
        rr = self.s.delta if self.M is None else self.s.rr
        return tuple(_read(rr, self.s.breakdown, self.s.converged))

    def converged(self) -> bool:
        return self.s.converged.item() >= 0

