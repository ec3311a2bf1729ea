"""Primal-dual proximal regularisation (paper 002, (5)-(6)), shared by both LP methods.

The regularised pair of 002 (5) adds 1/2 (x - x0)^T R_p (x - x0) to the primal and
1/2 (y - y0)^T R_d (y - y0) to the dual, R_p = rho I, R_d = delta I. With the reference points
the current iterate (x0 = x_k, y0 = y_k: the proximal-point choice of Friedlander and Orban and
of Pougkakiotis and Gondzio's IP-PMM) the terms leave the right-hand sides alone and change only
the Newton matrix:

    A dx + delta dy = xi_p,   -rho dx + A^T dy + ds = xi_d,   S dx + X ds = xi_mu,

whose normal equations are G_R dy = ..., G_R = A (Theta^-1 + rho I)^-1 A^T + delta I (002 (6)).
G_R >= delta I and Theta~ = (Theta^-1 + rho)^-1 <= 1 / rho: the regularisation bounds both the
normal matrix's smallest eigenvalue and the weights, which is what rank-deficient A and the
last iterations (Theta spanning 10^20) need.

After a step of lengths (alpha_p, alpha_d) the residuals become (1 - alpha_p) xi_p +
alpha_p delta dy and (1 - alpha_d) xi_d - alpha_d rho dx: the terms leak into them. The schedule
(:class:`ProximalRegularisation`) therefore keeps rho = delta = clip(mu, reg_min, reg_max)
(in units where ||b||_inf, ||c||_inf <= 1) and cuts either ten-fold, for the next iteration,
when its leak exceeds a tenth of the residual it would hold back.

Units: rho has the units of c / x and delta those of b / y. A solver working on b and c as
given (the Mehrotra solver) passes ``b_scale = max(1, ||b||_inf)`` and ``c_scale = max(1,
||c||_inf)``, and gets rho = rho' c_scale / b_scale, delta = delta' b_scale / c_scale, where rho',
delta' follow mu' = mu / (b_scale c_scale); the matrix-free solver, which iterates on the
normalised b and c, passes 1 and 1.
"""
from __future__ import annotations

__all__ = ["ProximalRegularisation", "REG_MIN", "REG_MAX", "FIXED_REG_MIN", "MEHROTRA_REG_MIN", "MEHROTRA_REG_MAX"]

#: default bounds of rho' = delta' (normalised units) of the matrix-free method. With its
#: adaptive rule (the default) the floor is 1e-12: a floor of 1e-8 holds finnis's and forplan's
#: residuals, whose large multipliers turn them into a gap above 1e-6 (docs/lp_defaults.md); the
#: rule raises the floor where PCG needs it. Without the rule (``adaptive=False``, the "paper"
#: preset) the floor is FIXED_REG_MIN, the schedule as it was before the rule.
REG_MIN, REG_MAX = 1e-12, 1e-2
FIXED_REG_MIN = 1e-8
#: and of the Mehrotra solver's option: measured (numpy64, eps = 1e-8, presolve, correction and
#: safeguard on the 42 NETLIB problems) 39 optimal with (1e-12, 1e-6), 37 with (1e-10, 1e-4), 42
#: without the option; with (1e-8, 1e-2) forplan and pilot4 lose centrality too (the proximal
#: terms hold the residuals while mu falls)
MEHROTRA_REG_MIN, MEHROTRA_REG_MAX = 1e-12, 1e-6


def _clip(v: float, lo: float, hi: float) -> float:
    return float(min(hi, max(lo, v)))


class ProximalRegularisation:
    """The schedule of rho and delta (module notes).

    ``current(mu)`` answers (rho_k, delta_k) for an iteration with complementarity ``mu``;
    after its step, ``after_step(rho_k, delta_k, dx_max, dy_max, nrc, nrb, floor_c, floor_b)``
    cuts rho (delta) ten-fold when rho_k ||dx||_inf (delta_k ||dy||_inf) exceeds a tenth of
    max(||r_c||_inf, floor_c) (max(||r_b||_inf, floor_b)); all in the solver's own units. It
    answers whether each term held its residual so (rho's, delta's), whether or not reg_min let
    it be cut.
    """

    def __init__(self, reg_min: float = REG_MIN, reg_max: float = REG_MAX, b_scale: float = 1.0,
                 c_scale: float = 1.0):
        if not (0.0 < reg_min <= reg_max):
            raise ValueError(f"regularisation bounds need 0 < reg_min <= reg_max, got {reg_min}, {reg_max}")
        self.reg_min, self.reg_max = float(reg_min), float(reg_max)
        self.b_scale, self.c_scale = float(b_scale), float(c_scale)
        self.rho = self.delta = self.reg_max                  # normalised units

    @property
    def start(self) -> tuple:
        """(rho, delta) at their largest, in the solver's units."""
        return self._units(self.reg_max, self.reg_max)

    def _units(self, rho_n: float, delta_n: float) -> tuple:
        return rho_n * self.c_scale / self.b_scale, delta_n * self.b_scale / self.c_scale

    def current(self, mu: float) -> tuple:
        mu_n = mu / (self.b_scale * self.c_scale)
        self._k = (_clip(min(self.rho, mu_n), self.reg_min, self.reg_max),
                   _clip(min(self.delta, mu_n), self.reg_min, self.reg_max))
        return self._units(*self._k)

    def after_step(self, rho_k: float, delta_k: float, dx_max: float, dy_max: float, nrc: float,
                   nrb: float, floor_c: float, floor_b: float) -> None:
        rho_n, delta_n = self._k
        held = (rho_k * dx_max > 0.1 * max(nrc, floor_c), delta_k * dy_max > 0.1 * max(nrb, floor_b))
        if held[0]:
            self.rho = max(self.reg_min, rho_n / 10.0)
        if held[1]:
            self.delta = max(self.reg_min, delta_n / 10.0)
        return held
