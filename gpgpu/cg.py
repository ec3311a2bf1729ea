"""Conjugate gradients on the GPU (paper 003, Corrigan, after Bolz et al. 2003 and Shewchuk 1994).

Shewchuk's listing ("An Introduction to the Conjugate Gradient Method Without the Agonizing
Pain", B2/B3), which paper 003 follows, with every vector operation a kernel of this project:

    r = b - A x;  d = M r;  delta = r^T d
    repeat:
        q = A d                          sparse (or dense) matrix-vector product
        alpha = delta / d^T q            dot product, then a 1 x 1 quotient kernel
        x = x + alpha d                  saxpy with the scalar read from its 1 x 1 stream
        r = r - alpha q                  (Shewchuk: every 50 iterations r = b - A x instead)
        s = M r;  delta_old = delta;  delta = r^T s
        d = s + (delta / delta_old) d

A dot product is 003's "component-wise multiplication into a temporary vector" (Fig. 1)
followed by a sum reduction over a pyramid of textures padded to a power of two (Figs. 2-3),
or the ping-pong reduction (``reduction="pingpong"``), or (beyond 003, the "fast" preset) fan
passes that add 32 texels a fragment, the products computed in the first (``reduction="fan"``). The scalars alpha, beta and delta stay on
the GPU in 1 x 1 streams (as Vortex2D's CG keeps them); nothing is read back inside an
iteration. Every ``check_every`` iterations one read-back brings ||r||², the breakdown flag
(the first iteration with dᵀAd <= 0, kept on the GPU) and the convergence watch (the first
iteration with ||r|| <= the target, kept on the GPU): from that iteration on alpha and beta are
0, so the iterations run until the read-back change nothing, and the iteration count and x are
those of the iteration that converged, whatever ``check_every`` is.

An iteration is the same passes every time, on the same streams: every vector and scalar is
made once a solve (the vectors and the scalars carried to the next iteration in ping-pong
pairs), and the passes of an iteration are recorded the first time its pairs stand in a given
order and drawn again from that record (``gpgpu.passes.RecordedPlan``: one vertex buffer,
bindings and uniforms chosen once, temporaries of its own), so Python does little between
passes (beyond the papers: host cost per pass; ``plan=False`` draws them one by one).

Beyond the listing, for float32's range and precision:

* Power-of-two scaling. float32 squares: ||r||² and dᵀAd leave its range (about 1e-38 to 3e38)
  long before r, d or A do (||b|| = 1e-20 gives ||b||² = 0; A = 1e36 I overflows dᵀAd). CG
  therefore solves (2^-e A) x' = 2^-k b with 2^e ~ max|A| and 2^k ~ max|b| (also M is scaled
  by its own power of two, which PCG does not notice) and answers x = 2^(k-e) x' in float64.
  Multiplying by a power of two is exact in binary floating point, so the iterates are the
  ones of the unscaled system, bit for bit, wherever that one stays in range. A numpy b and a
  scipy or numpy A are scaled on the host before the upload; a Stream or SparseStream is
  scaled on the GPU only when it lies outside a safe range (a vector beyond 2^±8, a matrix
  beyond 2^±16: one pass for a vector, one more pass a product for a matrix).
* Convergence is verified. The recurrence's r drifts from b - A x in float32 (it keeps
  falling long after b - A x has stopped at its rounding level, about 1e-7 ||b|| times a
  growth with the condition number). When the recurrence's ||r|| reaches the target, the
  true residual b - A x is computed (one product, one read-back) and only it decides: info 0
  means ||b - A x|| <= max(rtol ||b||, atol) as float32 computes b - A x (its rounding error
  is about 2^-24 (||b|| + || |A| |x| ||)). When it does not hold, CG restarts from x with the
  true residual; when a restart does not lower the true residual, CG stops (info = the
  iterations done, ``.stagnated``): the target is below what float32 can reach. Unlike
  Shewchuk's periodic restart (below) this one happens only at the target, a few times a
  solve. Measured (llvmpipe), 2-D Poisson with 65536 unknowns, rtol 1e-5: scipy's float32 cg
  stops after 562 iterations at a true ||b - A x|| = 3.8e-5 ||b|| (its recurrence said 1e-5),
  this cg after 564 (one restart) at 7.3e-6 ||b||.

The fan iteration (``reduction="fan"`` with ``iteration="standard"``: the fast preset with that
option, or another preset with fan sums; beyond the papers): the same algebra
in fewer passes. Each dot product is fan passes (``glsl/cg_fan.frag``: the products, or with
Jacobi both r^T (M r) and r^T r in RGBA partials, computed in the first, the tail of a folded
vector skipped) ending in one fragment (``glsl/cg_scalars.frag``) that adds the last partial
sums and writes the iteration's state texel (delta, d^T q or ||r||^2, breakdown watch,
convergence watch); alpha and beta are computed from that texel by the vector passes that use
them (``glsl/cg_update.frag``), x + alpha d and r - alpha q in one pass with two render
targets (``passes.Targets``), d = M r + beta d reading M (no s = M r pass); the read-back is the
state texel. 9 passes an iteration for a vector in one row of 4096, Jacobi or not (14 and 18 as
the listing's passes with fan sums).

The single-reduction iteration (``iteration="single-reduction"``, the fast preset's; beyond the
papers): the conjugate gradients of Chronopoulos and Gear (1989, "s-step iterative methods for
symmetric linear systems", J. Comput. Appl. Math. 25; also in Saad's "Iterative Methods for
Sparse Linear Systems" and, as "Chronopoulos/Gear CG", in Ghysels and Vanroose's pipelined CG
paper), which gets both dot products of an iteration from one reduction by carrying s = A d by
its own recurrence:

    u = M r;  w = A u;  gamma = r^T u;  delta = w^T u
    beta = gamma / gamma_old;  alpha = gamma / (delta - beta gamma / alpha_old)
    (the first iteration after a (re)start: beta = 0, alpha = gamma / delta)
    d = u + beta d;  s = w + beta s;  x = x + alpha d;  r = r - alpha s

In exact arithmetic these are CG's iterates (delta - beta gamma / alpha_old is d^T A d); in
float32 their rounding differs, measured (llvmpipe) within a couple of iterations of the
standard iteration and of scipy's cg (2-D Poisson 128^2 and 256^2: 284 and 564 iterations, as
the standard iteration; scipy 283 and 562). Near float32's reach its recurrence drifts further
from b - A x than the standard one (s = A d is a recurrence too), and the verification restarts
more: the RBF torus of 4500 unknowns at rtol 1e-6 (scipy's float32 cg stops at a true 1.4e-6)
took 248 iterations against the standard iteration's 229 (at rtol 1e-5: 181 and 181). Without
the restarts its b - A x there stops near 1.8e-6 ||b||, the standard one's near 1.0e-6 (numpy
float32); with them it reaches the targets the standard iteration reaches (4e-7: 298 iterations
against 260; at 2.5e-7 both stop, ``.stagnated``).

Drawn as: the product w = A u; one fan reduction of (gamma, delta, and with Jacobi ||r||^2) in
RGBA partials (``glsl/cg_fan.frag``, TERM 4 and 5);
one fragment pass over a 1 x 2 RGBA state (``glsl/cg_single_reduction_scalars.frag``: alpha,
beta, ||r||^2, both watches); and one pass of four render targets, d, s, x, r (five with Jacobi:
u = M r too; ``glsl/cg_single_reduction_update.frag``): 5 passes an iteration for a vector in
one row of 4096, Jacobi or not. The watches are the same (breakdown: the first iteration whose
delta - beta gamma / alpha_old <= 0, i.e. d^T A d <= 0; convergence: alpha = beta = 0 from the
iteration that converged on, x frozen), with one difference: ||r_k|| is summed in iteration k
(the standard iteration sums it in iteration k - 1, with r_k's update), so the convergence of
x_k is seen one iteration later; the iteration that sees it changes nothing (alpha = 0), and
the iteration count, x, the callback's iterates (that iteration is not given to it) and the
verification are those of x_k. Restarts (the verification's, ``recompute_every``) rewrite r (and
u); the state then marks the first iteration again.

One deliberate departure from Shewchuk's listing, measured: his restart of the residual,
r = b - A x every 50 iterations, is off by default (``recompute_every=None``, as scipy's cg) and
can be asked for with ``recompute_every=50``. In float32 the restart breaks the recurrence's
conjugacy on ill-conditioned systems: on the RBF torus system of ``experiments.cg.rbf_surface``
(5000 points, 15000 unknowns, condition number about 3700, rtol 1e-6) float32 CG converges in 365
iterations without it, while with it the residual falls to 1e-5 by iteration 500 and then grows
without bound until it overflows (numpy float32 and this GPU code alike).

``gpgpu.cg(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None)`` is
called as scipy.sparse.linalg.cg (scipy >= 1.14) and answers ``(x, info)`` with its meaning:
success when ||r|| <= max(rtol ||b||, atol); ``info`` 0 on success, the iteration count when
``maxiter`` is reached without it (one departure: scipy answers 0 for ``maxiter=0`` whatever x0
is; this cg answers 1 there unless x0 meets the target). What the GPU cannot do is refused with
the reason: a LinearOperator A (the product runs as a fragment program over A's texture), a
preconditioner that is not diagonal (it is applied by one element-wise product pass).
Beyond scipy's arguments, ``preset="robust" | "paper" | "fast"`` picks the sums, the read-back
interval, the convergence test, the iteration and the storage of a scipy.sparse A together
(``format``: ELLPACK, paper 002's, also under "paper", or for "fast" the packed format, beyond
the papers; ``iteration``: Shewchuk's listing, or for "fast" the single-reduction iteration; see
``cg``'s docstring; an option given overrides). "paper" is 003's iteration, not its storage or
the listing's residual recomputation: docs/guide/sparse.md has the table of what it sets and
whose choice each value is.
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np

from .blas1 import KERNELS as L1, whole
from .blas2 import gemv
from .errors import CGBreakdownError
from .geometry import Texel
from .kernel import Kernel
from .options import Option
from .geometry import Rect
from .passes import NotReplayable, RecordedPlan, Targets, recording
from .reduce import FAN, dot_fan, dot_pyramid, reduce_region, reduce_regions
from .sparse import SparseStream, _as_csr, _gather
from .stream import Stream, borrow, check_array, give_back

__all__ = ["cg", "CGResult", "Float32ToleranceWarning", "FLOAT32_REACH", "KERNELS"]

KERNELS = {
    "quotient": Kernel("scalar_quotient", texels=4,
                       doc="CG scalar alpha or beta, kept on the GPU (0 once converged)"),
    "saxpy": Kernel("saxpy_gpu_scalar", texels=4, doc="003 scaled vector addition, scalar on the GPU"),
    "breakdown": Kernel("breakdown_flag", texels=3, doc="first iteration with d^T A d <= 0"),
    "breakdown_watch": Kernel("cg_breakdown_flag", texels=4,
                              doc="first iteration with d^T A d <= 0, before convergence"),
    "converged": Kernel("cg_converged", texels=3, doc="first iteration with ||r||^2 <= target^2"),
}

#: The fused iteration of ``reduction="fan"`` (beyond the papers; see ``cg``'s docstring, "The
#: fan iteration"): fan passes of dot products ending in one fragment that also updates the
#: iteration's state texel (delta, d^T q or ||r||^2, breakdown watch, convergence watch); the
#: vector updates computing alpha and beta from it, x and r in one pass of two targets.
FUSED = {
    "dq": Kernel("cg_fan", texels=2 * FAN + 1, defines={"FAN": FAN, "TERM": 1, "VEC": 0}, label="cg_dq_fan",
                 doc="d^T q, FAN products a fragment, the tail of a folded vector skipped (beyond)"),
    "rr": Kernel("cg_fan", texels=FAN + 1, defines={"FAN": FAN, "TERM": 2, "VEC": 0}, label="cg_rr_fan",
                 doc="r^T r, FAN squares a fragment (beyond)"),
    "rmr": Kernel("cg_fan", texels=2 * FAN + 4, defines={"FAN": FAN, "TERM": 3, "VEC": 1}, label="cg_rmr_fan",
                  doc="(r^T M r, r^T r) of Jacobi PCG in one pass, FAN terms a fragment (beyond)"),
    "sum": Kernel("cg_fan", texels=FAN + 1, defines={"FAN": FAN, "TERM": 0, "VEC": 0}, label="cg_sum_fan",
                  doc="FAN partial sums a fragment (beyond)"),
    "sum4": Kernel("cg_fan", texels=4 * FAN + 4, defines={"FAN": FAN, "TERM": 0, "VEC": 1}, label="cg_sum4_fan",
                   doc="FAN RGBA partial sums a fragment (beyond)"),
    "xr": Kernel("cg_update", texels=7, defines={"STEP": 1, "JACOBI": 0}, label="cg_update_xr",
                 doc="x + alpha d and r - alpha q, two render targets (beyond)"),
    "x": Kernel("cg_update", texels=4, defines={"STEP": 2, "JACOBI": 0}, label="cg_update_x",
                doc="x + alpha d, alpha from the state texel (beyond)"),
}
for _j in (0, 1):
    FUSED["d", _j] = Kernel("cg_update", texels=5 + _j, defines={"STEP": 3, "JACOBI": _j},
                            label="cg_update_d" + ("_jacobi" if _j else ""),
                            doc="d = M r + beta d, beta from the state texels (beyond)")
    for _stage in (0, 1, 2):
        FUSED["scalars", _stage, _j] = Kernel(
            "cg_scalars", texels=6, defines={"STAGE": _stage, "JACOBI": _j},
            label=f"cg_scalars{_stage}" + ("_jacobi" if _j else ""),
            doc="the last sum of a dot product and the iteration's state texel, one fragment (beyond)")
#: The single-reduction iteration of Chronopoulos and Gear (``iteration="single-reduction"``,
#: beyond the papers; see ``cg``'s docstring): one fan reduction of (gamma, delta[, ||r||^2]), a
#: state fragment computing alpha and beta and the watches into a 1 x 2 RGBA state, and one
#: update pass of four render targets (d, s, x, r; five with Jacobi: u = M r too).
for _j in (0, 1):
    FUSED["sr_fan", _j] = Kernel("cg_fan", texels=3 * FAN + 4, defines={"FAN": FAN, "TERM": 4 + _j, "VEC": 1},
                                 label="cg_sr_fan" + ("_jacobi" if _j else ""),
                                 doc="(r^T u, w^T u[, r^T r]) of single-reduction CG in one pass (beyond)")
    FUSED["sr_scalars", _j] = Kernel("cg_single_reduction_scalars", texels=6, defines={"JACOBI": _j},
                                     label="cg_sr_scalars" + ("_jacobi" if _j else ""),
                                     doc="alpha, beta and the watches of single-reduction CG, 1 x 2 (beyond)")
    FUSED["sr_update", _j] = Kernel("cg_single_reduction_update", texels=7 + 2 * _j, defines={"JACOBI": _j},
                                    label="cg_sr_update" + ("_jacobi" if _j else ""),
                                    doc="d, s, x, r (and u = M r) of single-reduction CG, one pass (beyond)")
#: the fused dot products sum along rows by fan passes while a row holds more than FAN partial
#: sums, then down the columns while more than FAN rows: the last fragment adds at most FAN^2
FUSED_LAST = FAN

REDUCTIONS = ("pyramid", "pingpong", "fan")
#: ``iteration=``: Shewchuk's listing (paper 003's, two reductions an iteration) or the
#: single-reduction CG of Chronopoulos and Gear (beyond the papers; drawn with fan sums)
ITERATIONS = ("standard", "single-reduction")

#: What each ``preset`` of :func:`cg` sets (an option given explicitly overrides it):
#: "paper" is paper 003's iteration: pyramid sums, ||r|| read back every iteration, Shewchuk's
#: listing, the recurrence's ||r|| decides convergence (as 003 and scipy's cg; ``residual_norm``
#: still reports b - A x). Two things of 003 it does not do (docs/guide/sparse.md has the table):
#: a scipy.sparse A goes to the GPU in ELLPACK (``PRESET_FORMATS``), not 003's sorted corrigan
#: format (``format=`` does not take it: pass ``SparseStream.from_scipy(A, format="corrigan",
#: sort=True)`` as A, as experiments/cg/convergence.py does), and the listing's r = b - A x every
#: 50 iterations is off (``recompute_every=None``; pass ``recompute_every=50``: in float32 it
#: diverges ill-conditioned solves, module notes). "robust" (the default) verifies b - A x at the
#: target and restarts from x when it misses; "fast" sums by fan passes (32 texels a fragment,
#: beyond 003), draws the single-reduction iteration of Chronopoulos and Gear (beyond 003) and
#: reads ||r|| back every FAST_CHECK_EVERY iterations, verified as "robust".
FAST_CHECK_EVERY = 16
PRESETS = {
    "paper": {"reduction": "pyramid", "check_every": 1, "verify": False, "iteration": "standard"},
    "robust": {"reduction": "pyramid", "check_every": 1, "verify": True, "iteration": "standard"},
    "fast": {"reduction": "fan", "check_every": FAST_CHECK_EVERY, "verify": True, "iteration": "single-reduction"},
}
#: every option of :func:`cg` (its presets, :data:`PRESETS` and :data:`PRESET_FORMATS`, are rows
#: of values over it; docs/reference/cg-options.md is rendered from it)
OPTIONS = (
    Option("x0", ("cg",), 'None, a vector or "Mb"', "the starting point (None: zeros)"),
    Option("rtol", ("cg",), "a number >= 0 (inf accepted)", "the target ‖b − A x‖ ≤ max(rtol ‖b‖, atol)"),
    Option("atol", ("cg",), "a number >= 0", "the absolute part of the target"),
    Option("maxiter", ("cg",), "an integer >= 0 or None", "iterations at most (None: 10 n)"),
    Option("M", ("cg",), "None, a vector or a diagonal matrix", "a diagonal (Jacobi) preconditioner, M ≈ A⁻¹ as scipy's"),
    Option("callback", ("cg",), "a function or None", "called with x after each iteration"),
    Option("tol", ("cg",), "a number or None", "scipy's former name of rtol"),
    Option("preset", ("cg",), '"paper", "robust" or "fast"', "the options below in one word"),
    Option("check_every", ("cg",), "a positive integer", "the convergence test read back every so many "
           "iterations"),
    Option("reduction", ("cg",), '"pyramid", "pingpong" or "fan"', "the inner products' sums: 003's "
           "pyramid, 000's halving passes, or 32 texels a fragment"),
    Option("iteration", ("cg",), '"standard" or "single-reduction"', "Shewchuk's listing, or one reduction "
           "an iteration (beyond the papers)"),
    Option("verify", ("cg",), "True or False", "convergence checked on b - A x before info 0 (restarts)"),
    Option("recompute_every", ("cg",), "a positive integer or None", "r = b - A x every so many iterations "
           "(Shewchuk's 50)"),
    Option("plan", ("cg",), "True or False", "the iterations drawn from recorded plans"),
    Option("format", ("cg",), '"ellpack", "tell", "packed" or "split"', "the SparseStream format of a "
           "scipy.sparse A"),
)
#: The SparseStream format each preset puts a scipy.sparse A on the GPU in (``format=``
#: overrides it): ELLPACK (paper 002's storage, the project's choice for "paper": 003's sorted
#: corrigan format permutes the system and compiles a program per row length, so it is a
#: SparseStream the caller builds) for "paper" and "robust", packed (beyond the papers: two
#: entries an RGBA texel, long rows in segments) for "fast".
PRESET_FORMATS = {"paper": "ellpack", "robust": "ellpack", "fast": "packed"}
#: the formats ``format=`` takes (a scipy.sparse A); the corrigan format of paper 003 sorts rows
#: and columns (``sort=True``): build that SparseStream yourself and pass it
SCIPY_FORMATS = ("ellpack", "tell", "packed", "split")

#: A Stream or SparseStream A is scaled on the GPU (a pass a product) only when max|A| is
#: outside [2^-16, 2^16]; a Stream b, x0 or M (one pass) when its max|.| is outside [2^-8, 2^8].
#: Inside, the squares of CG stay far inside float32's range: ||r||² >= 2^-76 down to the
#: freeze floor below, d^T A d >= 2^-92 / cond(A).
MATRIX_RANGE = 16
VECTOR_RANGE = 8
#: The recurrence's residual is frozen (the convergence watch set) at ||r|| <= 2^-30 ||b|| at
#: the latest, whatever the target (rtol = atol = 0 included): 2^6 below float32's unit roundoff,
#: so no reachable target is cut, and far above the underflow of ||r||² and d^T A d.
FREEZE_FLOOR = 2.0 ** -30


class CGResult(tuple):
    """``(x, info)`` like scipy's cg, with the run's figures as attributes: ``iterations``,
    ``residual_norm`` (||b - A x|| of the answer, computed on the GPU in float32; for x0 = None
    and no iteration, ||b||), ``readbacks``, ``residuals`` (each ||r|| of the recurrence read back:
    the first, then one a check), ``restarts`` (the times the recurrence reached the target but
    b - A x did not, and CG restarted from x), ``stagnated`` (CG stopped because a restart did
    not lower ||b - A x||: the target is below float32's reach) and ``format`` (the SparseStream
    format A was multiplied in, None for a dense A)."""

    def __new__(cls, x, info, **extra):
        self = super().__new__(cls, (x, info))
        for k, v in extra.items():
            setattr(self, k, v)
        return self


def _exponent(value: float) -> int:
    """e with value = m 2^e, 0.5 <= m < 1: scaling by 2^-e brings value into [0.5, 1)."""
    return int(np.frexp(value)[1])


def _read(*scalars: Stream) -> list:
    """Several 1 x 1 streams read back in one transfer (copied side by side into one row)."""
    row = borrow(1, len(scalars))
    for i, s in enumerate(scalars):
        L1["copy"].draw(row, Texel.at(i, 0, T0=(0.5, 0.5)), {"A": s})
    values = [float(v) for v in row.to_array().reshape(-1)]
    give_back(row)
    return values


def _scale_into(src: Stream, k: int, out: Stream) -> Stream:
    """out = 2^k src, exact (passes of at most 2^±100, each factor a float32 uniform)."""
    cur = src
    while True:
        step = max(-100, min(100, k))
        L1["scale"].draw(out, whole(out), {"X": cur}, {"alpha": float(2.0 ** step)})
        k -= step
        if k == 0:
            return out
        tmp = Stream.like(out)
        L1["copy"].draw(tmp, whole(tmp), {"A": out})
        if cur is not src:
            cur.release()
        cur = tmp


class _Operator:
    """What CG multiplies by: a SparseStream (sorted ones on the sorted system) or a dense
    Stream (the inner-product sgemv of paper 000), answering 2^-shift A d. ``exponent`` is the e
    of the solved system's 2^-e A (applied on the host before the upload for a matrix cg owns,
    on the GPU by ``shift`` for the user's Stream or SparseStream)."""

    def __init__(self, A, owned: bool, exponent: int = 0, shift: int = 0):
        self.A, self.owned = A, owned
        self.n = A.shape[0]
        self.exponent, self.shift = exponent, shift
        self._tmp = None

    def _product(self, d: Stream, out: Stream) -> Stream:
        if isinstance(self.A, SparseStream):
            return self.A._product(d, out, permuted=True)
        return gemv(self.A, d, out=out)

    def __call__(self, d: Stream, out: Stream) -> Stream:
        if self.shift == 0:
            return self._product(d, out)
        if self._tmp is None:
            self._tmp = Stream.like(d)
        if self.shift > 0:        # a large A: the product, then scaled down (no overflow of 2^-e A d)
            self._product(d, self._tmp)
            L1["scale"].draw(out, whole(out), {"X": self._tmp}, {"alpha": float(2.0 ** -self.shift)})
        else:                     # a small A: d scaled up first (no underflow of the product)
            L1["scale"].draw(self._tmp, whole(self._tmp), {"X": d}, {"alpha": float(2.0 ** -self.shift)})
            self._product(self._tmp, out)
        return out

    def release(self):
        if self._tmp is not None:
            self._tmp.release()
        if self.owned:
            self.A.release()


def _gpu_scale(A) -> int:
    """The shift of a user's Stream or SparseStream A: 0 inside [2^-16, 2^16], else the exponent
    of max|A| (a Stream: one read-back of max|A|, reduced on the GPU; a SparseStream: its
    ``max_abs()``, taken at the upload, every format)."""
    if isinstance(A, SparseStream):
        big = A.max_abs()
    else:
        top = reduce_region(A, "absmax", strategy="pingpong", out=borrow(1, 1))
        big = top.item()
        give_back(top)
    if not big > 0:
        raise ValueError("cg: A is zero, so singular; conjugate gradients needs a symmetric positive "
                         "definite matrix")
    if 2.0 ** -MATRIX_RANGE <= big <= 2.0 ** MATRIX_RANGE:
        return 0
    e = _exponent(big)
    if e < -100:
        raise ValueError(f"cg: max |A| = {big:.3g} is below float32's normal range (1.2e-38), where "
                         "the GPU flushes to zero; scale A (and b) up before the upload")
    return e


def _operator(A, format: str = "ellpack") -> _Operator:
    if isinstance(A, SparseStream):
        m, n = A.shape
        if m != n:
            raise ValueError(f"cg: A must be square, got a {m} x {n} SparseStream")
        host = A._host      # from_scipy's host copy (transpose="copy", until transposed() is built)
        if host is not None:
            import scipy.sparse as sp

            _check_square_symmetric(sp.csr_matrix(host, shape=A.shape))
        e = _gpu_scale(A)
        return _Operator(A, owned=False, exponent=e, shift=e)
    if isinstance(A, Stream):
        if A.vector or A.rows != A.cols:
            raise ValueError(f"cg: A must be a square matrix, got a stream of shape {A.shape}")
        e = _gpu_scale(A)
        return _Operator(A, owned=False, exponent=e, shift=e)
    import scipy.sparse as sp

    if sp.issparse(A):
        M = _as_csr(A)
        _check_square_symmetric(M)
        e = _exponent(float(abs(M.data).max()))
        M.data = np.ldexp(M.data, -e)                     # exact: 2^-e A, max |.| in [0.5, 1)
        return _Operator(SparseStream.from_scipy(M, format=format), owned=True, exponent=e)
    check_array(A, "A", ndim=(2,))
    M = _as_csr(A)
    _check_square_symmetric(M)
    e = _exponent(float(abs(M.data).max()))
    scaled = np.ldexp(np.asarray(A, dtype=np.float64), -e)
    return _Operator(Stream.from_array(scaled, "A"), owned=True, exponent=e)


def _check_square_symmetric(M) -> None:
    m, n = M.shape
    if m != n:
        raise ValueError(f"cg: A must be square, got shape {M.shape}")
    empty = np.flatnonzero(np.diff(M.indptr) == 0)
    if empty.size:
        raise ValueError(f"cg: row {int(empty[0])} of A is empty, so A is singular; conjugate gradients "
                         "needs a symmetric positive definite matrix")
    scale = float(np.abs(M.data).max()) if M.nnz else 0.0
    asym = float(abs(M - M.T).max()) if M.nnz else 0.0
    if asym > 1e-6 * scale:
        raise ValueError(f"cg: A is not symmetric (max |A - A^T| = {asym:.3g}); conjugate gradients "
                         "needs a symmetric positive definite matrix")


def _dot(x: Stream, y: Stream, reduction: str, out: Stream | None = None) -> Stream:
    """x^T y as a 1 x 1 stream (``out``, else a borrowed one): the component-wise product (003
    Fig. 1) into the pyramid's power-of-two base, then its levels (Figs. 2-3,
    ``reduce.dot_pyramid``), or the product then ping-pong halving passes; with
    ``reduction="fan"`` the products are computed in the first pass of a fan sum
    (``reduce.dot_fan``, beyond 003)."""
    out = out if out is not None else borrow(1, 1)
    if reduction == "fan":
        return dot_fan(x, y, out)
    if reduction == "pyramid":       # the products drawn straight into the pyramid's base
        return dot_pyramid(x, y, out)
    prod = borrow(x.rows, x.cols)
    L1["elementwise_product"].draw(prod, whole(x), {"X": x, "Y": y})
    res = reduce_regions(prod, "sum", x.regions(), strategy=reduction, out=out)
    give_back(prod)
    return res


def _fused_levels(rows: int, cols: int) -> list:
    """(rows, cols, axis) of each fan level of the fan iteration's dot products over a vector
    texture of rows x cols: along the rows (the first level always) while a row holds more than
    FUSED_LAST partial sums, then down the columns while more than FUSED_LAST rows are left."""
    levels, c, r = [], -(-cols // FAN), rows
    levels.append((r, c, "x"))
    while c > FUSED_LAST:
        c = -(-c // FAN)
        levels.append((r, c, "x"))
    while r > FUSED_LAST:
        r = -(-r // FAN)
        levels.append((r, c, "y"))
    return levels


def _fused_sum(first: Kernel, inputs: dict, parts: list, levels: list, stage: int, jacobi: int, out: Stream,
               uniforms: dict) -> None:
    """The fan passes of one dot product of the fan iteration over the vector ``inputs["S"]``
    (the first pass computing the terms of ``first`` from ``inputs``, the tail of a folded
    vector's last row skipped) into ``parts`` (streams of the shapes of ``levels``, from
    :func:`_fused_levels`), then the one fragment (``cg_scalars`` of ``stage``) that adds the
    last partial sums and writes the state texel ``out``; ``uniforms``: its ``state`` (input,
    stages 1 and 2), ``iteration`` and ``threshold``."""
    src = _fan_passes(first, inputs, parts, levels)
    uniforms = dict(uniforms)
    ins = {"P": src} if stage == 0 else {"P": src, "state": uniforms.pop("state")}
    FUSED["scalars", stage, jacobi].draw(out, Texel.at(0, 0), ins, {"size": (src.cols, src.rows), **uniforms},
                                         texels=src.cols * src.rows + 2)


def _fan_passes(first: Kernel, inputs: dict, parts: list, levels: list) -> Stream:
    """The fan passes of :func:`_fused_sum` (the first computing the terms of ``first`` from
    ``inputs``, over the vector ``inputs["S"]``) into ``parts``; answers the last of them."""
    v = inputs["S"]
    src, kernel = None, first
    for (h, w, axis), dst in zip(levels, parts):
        if src is None:
            ins = inputs
            u = {"width": int(v.cols), "count": int(v.length if v.vector else v.rows * v.cols),
                 "limit": (float(v.cols), float(v.rows))}
        else:
            ins, u = {"S": src}, {"limit": (float(src.cols), float(src.rows))}
        u["step"] = (1.0, 0.0) if axis == "x" else (0.0, 1.0)
        T0 = (lambda X, Y: (FAN * X - (FAN - 1) / 2, Y)) if axis == "x" else \
            (lambda X, Y: (X, FAN * Y - (FAN - 1) / 2))
        kernel.draw(dst, Rect.covering(0, 0, w, h, T0), ins, u)
        src, kernel = dst, FUSED["sum4" if dst.components == 4 else "sum"]
    return src


def _saxpy(x: Stream, y: Stream, s: Stream, sign: float, out: Stream) -> Stream:
    """out = y + sign * s x, s a 1 x 1 stream."""
    KERNELS["saxpy"].draw(out, whole(out), {"X": x, "Y": y, "s": s}, {"sign": float(sign)})
    return out


def _quotient(a: Stream, b: Stream, converged: Stream, out: Stream) -> Stream:
    """out = a / b (1 x 1 streams), 0 once the convergence watch is set."""
    KERNELS["quotient"].draw(out, Texel.at(0, 0), {"numerator": a, "denominator": b, "converged": converged})
    return out


def _host_vector(v, n: int, name: str) -> np.ndarray:
    """A numpy vector argument of length n, validated, in float64."""
    check_array(v, name, ndim=(1,))
    arr = np.asarray(v, dtype=np.float64)
    if arr.shape[0] != n:
        raise ValueError(f"cg: {name} must have length {n}, got {arr.shape[0]}")
    return arr


def _upload(arr: np.ndarray, k: int, name: str) -> Stream:
    """2^k arr (exact, in float64) as a float32 vector stream."""
    with np.errstate(over="ignore"):
        scaled = np.ldexp(arr, k).astype(np.float32)
    if not np.all(np.isfinite(scaled)):
        raise ValueError(f"cg: {name} scaled to the system's scale (by 2^{k}) overflows float32: "
                         f"{name} is far from the scale of A^-1 b; pass a smaller {name} or none")
    return Stream.vector_of(arr.shape[0], data=scaled)


def _stream_vector(v: Stream, n: int, name: str) -> Stream:
    if not v.vector or v.length != n:
        raise ValueError(f"cg: {name} must be a vector of length {n}, got {v!r}")
    return v


class _DefaultTolerance(float):
    """rtol's default, 1e-5, told apart from an rtol the caller gave (``tol`` and ``rtol``)."""

    def __repr__(self):
        return repr(float(self))


_DEFAULT_RTOL = _DefaultTolerance(1e-5)

#: The smallest relative target float32 can be held to: 2^-23 = 1.19e-7, float32's machine
#: epsilon (two units of its roundoff u = 2^-24; see ``cg``'s docstring, "Precision").
FLOAT32_REACH = 2.0 ** -23


class Float32ToleranceWarning(RuntimeWarning):
    """cg was asked for a residual below what float32 can reach (about 1.2e-7 ||b||)."""


def _module_class(obj, module: str, name: str) -> bool:
    """isinstance(obj, module.name) when that module is loaded (a user's object of that class
    means it is), without importing it here."""
    import sys

    mod = sys.modules.get(module)
    return mod is not None and isinstance(obj, getattr(mod, name))


def _check_matrix_kind(A) -> None:
    """A LinearOperator or a callable A refused, with why and what to pass instead."""
    if _module_class(A, "scipy.sparse.linalg", "LinearOperator") or \
            (callable(A) and not isinstance(A, (Stream, SparseStream, np.ndarray))):
        what = "a scipy LinearOperator" if _module_class(A, "scipy.sparse.linalg", "LinearOperator") \
            else f"a callable ({type(A).__name__})"
        raise TypeError(f"cg: A is {what}, whose product runs on the CPU; here the product A d runs on the "
                        "GPU as a fragment program over a texture holding A's entries, so cg needs the "
                        "matrix itself. Pass the scipy.sparse matrix, a dense (n, n) array, a "
                        "gpgpu.SparseStream or a gpgpu.Stream (for aslinearoperator(S), pass S)")


_PRECONDITIONER_HELP = ("the GPU applies a preconditioner only as a diagonal, by one element-wise "
                        "product pass (s = M r); pass the diagonal of M ~ A^-1 as a vector of length n "
                        "(Jacobi: 1 / A.diagonal()), or as a diagonal matrix (scipy.sparse.diags(1 / d))")


def _preconditioner(M):
    """M as cg applies it: None, a vector Stream, or the diagonal as a 1-D array. A diagonal
    scipy.sparse matrix or dense 2-D array gives its diagonal; anything else is refused."""
    if M is None or isinstance(M, Stream):
        return M
    if _module_class(M, "scipy.sparse.linalg", "LinearOperator") or callable(M):
        what = "a scipy LinearOperator" if _module_class(M, "scipy.sparse.linalg", "LinearOperator") \
            else f"a callable ({type(M).__name__})"
        raise TypeError(f"cg: M is {what}, which cannot run on the GPU: {_PRECONDITIONER_HELP}")
    import scipy.sparse as sp

    if sp.issparse(M):
        if M.ndim != 2 or M.shape[0] != M.shape[1]:
            raise ValueError(f"cg: M must be square, got a sparse matrix of shape {M.shape}: {_PRECONDITIONER_HELP}")
        C = sp.coo_array(M)
        off = (C.row != C.col) & (C.data != 0)
    else:
        arr = np.asarray(M)
        if arr.ndim == 1 or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
            return M                  # a vector (or something check_array names)
        if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
            raise ValueError(f"cg: M must be the diagonal of the preconditioner (a vector of length n) or "
                             f"a diagonal (n, n) matrix, got shape {arr.shape}: {_PRECONDITIONER_HELP}")
        C = sp.coo_array(arr)
        off = C.row != C.col
    if off.any():
        k = int(np.flatnonzero(off)[0])
        i, j = int(C.row[k]), int(C.col[k])
        raise ValueError(f"cg: M is not diagonal (M[{i}, {j}] = {C.data[k]:.6g}, and "
                         f"{int(off.sum())} entries off the diagonal in all): {_PRECONDITIONER_HELP}")
    return M.diagonal() if sp.issparse(M) else arr.diagonal()


def _check_preconditioner(M64: np.ndarray) -> float:
    """max |M| of a diagonal preconditioner (given as numpy, or a Stream's entries read back),
    after a ValueError naming its first entry that is not positive and finite: PCG needs M
    positive definite, as A is, and a zero or negative entry would break it down later, reported
    as an A that is not positive definite (or not at all)."""
    bad = np.flatnonzero(~(M64 > 0) | ~np.isfinite(M64))     # NaN is not > 0
    if not np.any(M64 != 0):
        raise ValueError("cg: M is zero; it must be the diagonal of a positive definite "
                         "preconditioner M ~ A^-1, e.g. 1 / A.diagonal() for Jacobi")
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"cg: M[{i}] = {M64[i]:.6g} (and {bad.size} entries <= 0 or not finite in all): the "
                         "preconditioner M ~ A^-1 must be positive definite, so its diagonal positive and "
                         "finite (a zero or negative entry breaks PCG down, which would be reported as an A "
                         "that is not positive definite); for Jacobi pass 1 / A.diagonal() of the positive "
                         "definite A, with no zero on A's diagonal")
    return float(np.abs(M64).max())


def _numpy_vector(v, name: str):
    """A numpy (n, 1) column given for a vector, as scipy's cg takes it: flattened."""
    if v is None or isinstance(v, Stream):
        return v
    arr = np.asarray(v)
    if arr.ndim == 2 and arr.shape[1] == 1 and arr.dtype != object:
        return arr[:, 0]
    if arr.ndim == 2:
        raise ValueError(f"cg: {name} must have shape (n,) or (n, 1), got {arr.shape}")
    return v


def cg(A, b, x0=None, *, rtol: float = _DEFAULT_RTOL, atol: float = 0.0, maxiter: int | None = None,
       M=None, callback=None, tol: float | None = None, preset: str = "robust", check_every: int | None = None,
       reduction: str | None = None, recompute_every: int | None = None, verify: bool | None = None,
       plan: bool = True, format: str | None = None, iteration: str | None = None) -> CGResult:
    """Solve A x = b for a symmetric positive definite A by conjugate gradients on the GPU.

    Called as scipy.sparse.linalg.cg (scipy >= 1.14): ``x, info = cg(A, b, rtol=1e-6)``.

    Parameters
    ----------
    A : SparseStream, scipy.sparse matrix or array, (n, n) array or Stream
        scipy matrices are put on the GPU in ``format`` (ELLPACK, or packed for the fast
        preset); a dense array or Stream is multiplied by the inner-product sgemv of paper 000. A sorted corrigan SparseStream (paper 003)
        is solved in its sorted order: b is permuted once and x unpermuted at the end. A
        ``scipy.sparse.linalg.LinearOperator`` (or any callable) is a TypeError: the product
        A d runs on the GPU as a fragment program over a texture of A's entries, so cg needs
        the matrix itself (pass the scipy.sparse matrix, a dense array, a SparseStream).
        A must be symmetric. A scipy or numpy A is checked, and so is a SparseStream that keeps
        ``from_scipy``'s host copy (``transpose="copy"``, the default, until its transposed copy
        is built): a ValueError gives max |A - A^T|. A dense Stream, or a SparseStream without
        that copy, is not checked (that would read the matrix back): there its symmetry is the
        caller's job. CG on a non-symmetric A may break down or not converge (info 0 is still
        verified on b - A x, unless verify=False).
    b : (n,) or (n, 1) array, or vector Stream
        x comes back of shape (n,) for either shape, as scipy's.
    x0 : (n,) or (n, 1) array or vector Stream, or "Mb", optional (zeros)
        ``"Mb"``, as scipy: M b (b without M), for numpy b and M.
    rtol, atol : float
        scipy's meaning: stop when ||r|| <= max(rtol ||b||, atol) (defaults 1e-5 and 0). r is
        the true residual b - A x as float32 computes it, not the recurrence's (module notes).
        See "Precision" below for the smallest target float32 reaches; a smaller one, ``rtol =
        atol = 0`` included, warns (``Float32ToleranceWarning``) and ends with info > 0 and
        ``.stagnated`` (or at maxiter) unless b - A x comes out exactly zero. ``inf`` accepts
        x0 (zeros) at once, info 0, as scipy.
    tol : float, optional
        Deprecated (as in scipy, which removed it in 1.14): the old name of ``rtol``. A
        DeprecationWarning; a ValueError when ``rtol`` is given too with another value.
    maxiter : int, optional
        Default 10 n, as scipy. ``maxiter=0`` only tests x0: info 0 when ||b - A x0|| meets the
        target, else 1 (scipy answers 0 there, which would read as success).
    M : None, (n,) or (n, 1) array, vector Stream, or a diagonal matrix
        A diagonal preconditioner M ~ A^-1 (Jacobi: 1 / diag(A)), applied on the GPU by one
        element-wise product pass. Give its diagonal as a vector, or the matrix as a diagonal
        scipy.sparse matrix or array (``scipy.sparse.diags(1 / d)``, or csr / dia / ... with
        entries on the diagonal only) or dense (n, n) array, whose diagonal is taken. A matrix
        with an entry off the diagonal is a ValueError, a LinearOperator or a callable a
        TypeError: the GPU applies only a diagonal. M is positive definite as A is: an M with
        an entry <= 0 or not finite is a ValueError naming it, before the iterations (a Stream
        M is read back once for this).
    callback : callable, optional
        ``callback(xk)`` after every iteration with x as a numpy array in A's (unsorted) order
        (one read-back of x, and one of the convergence watch, per iteration; a Stream A gets
        numpy too). The last xk is the answer's x whenever an iteration ran.
    preset : {"robust", "paper", "fast"}
        A set of the options below (``PRESETS``; ``PRESET_FORMATS`` for ``format``); an option
        given explicitly overrides its preset's value. ``"robust"`` (default): 003's pyramid sums, ||r|| read back every
        iteration, b - A x verified at the target (CG restarts from x when it misses).
        ``"paper"``: 003's iteration: pyramid sums, ||r|| read back every iteration, Shewchuk's
        listing, and the recurrence's ||r|| decides convergence, as in 003 and scipy's cg (no
        verification, no restart: info 0 may come with a ``residual_norm`` above the target,
        by float32's drift of the recurrence). Not 003's: a scipy.sparse A in ELLPACK (pass a
        corrigan SparseStream for 003's storage) and no recomputation of r every 50 iterations
        (pass ``recompute_every=50``); docs/guide/sparse.md lists each option. ``"fast"`` (beyond 003): fan sums (32 texels a
        fragment: a dot product of 4096 entries in 3 passes instead of 14) and ||r|| read back
        every ``FAST_CHECK_EVERY`` (16) iterations, verified as robust, the single-reduction
        iteration (``iteration``, module notes: 5 passes an iteration at n = 4096, Jacobi or
        not; 9 with ``iteration="standard"``), a scipy.sparse A in the packed format. All
        three keep the convergence and breakdown watches on the GPU.
    check_every : int
        Read ||r|| (and the breakdown and convergence watches) back every this many
        iterations (preset: 1, or 16 for "fast"). The iterations after convergence inside a
        window change nothing: the convergence watch sets alpha = beta = 0 on the GPU from the
        iteration that converged on, so x, the iteration count and ``residual_norm`` are those
        of that iteration, and no 0 / 0 follows (r may be exactly 0 there).
    reduction : {"pyramid", "pingpong", "fan"}
        How the dot products sum: 003's pyramid (preset "paper" and "robust"), halving
        ping-pong passes, or fan passes of 32 texels with the products computed in the first
        (preset "fast"), which also fuses the iteration's scalar and vector passes (the fan
        iteration, or the single-reduction one: ``iteration``, module notes); sums differ only by float32 rounding (the order of the
        additions).
    iteration : {"standard", "single-reduction"}
        ``"standard"`` (presets "paper" and "robust"): Shewchuk's listing, as paper 003, two
        reductions an iteration. ``"single-reduction"`` (preset "fast"; beyond the papers): the
        CG of Chronopoulos and Gear (1989, "s-step iterative methods for symmetric linear
        systems"), both dot products from one reduction, s = A d carried by a recurrence
        (module notes): the same iterates in exact arithmetic, a different rounding in float32,
        the same watches, verification, scaling and Jacobi M, in fewer passes. It is drawn with
        fan sums: given with ``reduction="pyramid"`` or ``"pingpong"`` it is a ValueError, and a
        preset's "single-reduction" gives way to "standard" where ``reduction`` asks for
        those sums; given with a preset of pyramid sums it brings fan sums. The recurrence's
        ||r|| of x_k is seen one iteration later than in the standard iteration (that
        iteration changes nothing; ``.residuals`` are read one iteration behind).
    verify : bool
        Decide convergence on b - A x, computed when the recurrence's ||r|| reaches the
        target (True in "robust" and "fast"), or on the recurrence's ||r|| (False: "paper").
    plan : bool
        Draw each iteration from a plan recorded the first time (default True; host cost
        only, ``gpgpu.passes.RecordedPlan``): the same passes in the same order on the same
        streams as ``plan=False``, which builds and binds every pass in Python each time.
    recompute_every : int, optional
        Shewchuk's restart of the residual, r = b - A x, every this many iterations (his
        listing uses 50). Off by default: in float32 it can stall or diverge an ill-conditioned
        solve (see the module docstring).
    format : {"ellpack", "tell", "packed", "split"}
        The SparseStream format a scipy.sparse A is put on the GPU in (``gpgpu.sparse``): "ellpack"
        (presets "paper" and "robust") is paper 002's storage, values and column indexes in
        m x K textures, one fragment a row; "tell" its transposed ELLPACK; "packed" (preset
        "fast", beyond the papers) two entries (value, column) an RGBA texel, 1.5 fetches a
        non-zero against ELLPACK's 3, rows longer than a segment summed by a second pass (a
        product is then two passes; Poisson's rows of at most 5 are one); "split" the packed
        segments without the packing. Paper 003's own storage, the corrigan format (values and
        column textures, one program per non-zero count, rows sorted), is a SparseStream you
        build and pass as A (``SparseStream.from_scipy(A, format="corrigan", sort=True)``).
        Given with an A that is not a scipy.sparse matrix, a ValueError (A's storage is fixed).

    Precision
    ---------
    The GPU computes in float32, whatever the input: float64 A, b, x0 and M are rounded to
    float32 (after exact power-of-two scaling) and the iterations run in float32; the numpy
    answer is float64 holding the float32 iterate, scaled back exactly. The smallest target
    float32 can be held to is about 2^-23 ||b|| = 1.19e-7 ||b|| (``FLOAT32_REACH``, float32's
    machine epsilon): x is held in float32 and info 0 is decided on b - A x computed in
    float32, where each entry of A x (about as large as b's near the solution) is rounded with
    a relative error up to u = 2^-24, so the computed residual is uncertain by about
    u || |A| |x| || >= u ||b||, and rounding x to float32 moves b - A x by as much again: 2u.
    An ill-conditioned A stops higher. When max(rtol ||b||, atol) < 2^-23 ||b||, cg warns
    once (``Float32ToleranceWarning``, a RuntimeWarning) and runs anyway; for a smaller
    residual refine its x in float64 (e.g. scipy.sparse.linalg.cg from ``x0=x``).

    Returns
    -------
    CGResult ``(x, info)``: x numpy (float64, shape (n,)) for a numpy b (a Stream for a Stream
    b); info 0 when converged (||b - A x|| <= max(rtol ||b||, atol), verified), else the
    number of iterations done (at least 1). When CG did not converge, x is the iterate of the
    smallest verified ||b - A x||. ``.iterations``, ``.residual_norm`` (||b - A x|| of the
    answer), ``.readbacks``, ``.residuals``, ``.restarts`` and ``.stagnated`` tell the run;
    ``.format`` is the SparseStream format A was multiplied in (None for a dense A).
    b = 0 answers x = 0 at once (A is nonsingular).

    Raises
    ------
    CGBreakdownError
        dᵀAd <= 0 at some iteration: A is not positive definite (the iteration is named); or
        dᵀAd, ||r|| or b - A x overflowed (``diverged``).
    TypeError
        A or M a LinearOperator or a callable (see A and M).
    ValueError
        Bad shapes, non-square or non-symmetric A (where checked, see A), a non-diagonal M or
        one with an entry <= 0 (named), NaN, complex, an empty row, a zero A or M, bad options (tol and rtol disagreeing too, iteration="single-reduction"
        with pyramid or ping-pong sums); a Stream answer whose x
        float32 cannot hold (max |x| above 3.4e38 or within 2^24 of the underflow at 1.2e-38:
        pass b as numpy to get x in float64).

    Warns
    -----
    Float32ToleranceWarning
        The target is below float32's reach (see "Precision"), or the residual stagnated above
        the target (float32's reach on that system: info > 0, ``.stagnated``).
    DeprecationWarning
        ``tol`` was used.
    """
    if tol is not None:
        warnings.warn("cg: the keyword tol is deprecated, as in scipy (removed there in 1.14); use rtol, "
                      "which means the same (stop when ||b - A x|| <= max(rtol ||b||, atol))",
                      DeprecationWarning, stacklevel=2)
        if rtol is not _DEFAULT_RTOL and rtol != tol:
            raise ValueError(f"cg: tol={tol!r} and rtol={rtol!r} disagree; tol is the deprecated name "
                             "of rtol: pass rtol alone")
        rtol = tol
    rtol = float(rtol) if isinstance(rtol, _DefaultTolerance) else rtol
    for name, v in (("tol" if tol is not None else "rtol", rtol), ("atol", atol)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or np.isnan(v) or v < 0:
            raise ValueError(f"cg: {name} must be a number >= 0 (inf: any x0 is accepted, as in scipy), "
                             f"got {v!r}")
    if preset not in PRESETS:
        raise ValueError(f"cg: preset must be one of {', '.join(map(repr, PRESETS))}, got {preset!r}")
    chosen = PRESETS[preset]
    check_every = chosen["check_every"] if check_every is None else check_every
    if iteration is not None and iteration not in ITERATIONS:
        raise ValueError(f"cg: iteration must be one of {', '.join(map(repr, ITERATIONS))}, got {iteration!r}")
    if iteration == "single-reduction" and reduction not in (None, "fan"):
        raise ValueError(f"cg: iteration='single-reduction' sums its dot products by fan passes, so it "
                         f"cannot take reduction={reduction!r}: drop reduction= (or pass reduction='fan'), "
                         "or pass iteration='standard'")
    if iteration is None:       # the preset's; single-reduction only where the sums are fan passes
        iteration = chosen["iteration"] if reduction in (None, "fan") else "standard"
    reduction = chosen["reduction"] if reduction is None else reduction
    if iteration == "single-reduction":
        reduction = "fan"
    verify = chosen["verify"] if verify is None else verify
    if not isinstance(verify, (bool, np.bool_)) or not isinstance(plan, (bool, np.bool_)):
        raise TypeError(f"cg: verify and plan must be True or False, got verify={verify!r}, plan={plan!r}")
    for name, v in (("check_every", check_every), ("recompute_every", recompute_every)):
        if name == "recompute_every" and v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
            raise ValueError(f"cg: {name} must be a positive integer, got {v!r}")
    if reduction not in REDUCTIONS:
        raise ValueError(f"cg: reduction must be one of {REDUCTIONS}, got {reduction!r}")
    if callback is not None and not callable(callback):
        raise TypeError("cg: callback must be callable")
    if maxiter is not None and (isinstance(maxiter, bool) or not isinstance(maxiter, numbers.Integral)
                                or maxiter < 0):
        raise ValueError(f"cg: maxiter must be a non-negative integer, got {maxiter!r}")
    _check_matrix_kind(A)
    import scipy.sparse as sp

    if format is not None:
        if format not in SCIPY_FORMATS:
            raise ValueError(f"cg: format must be one of {', '.join(map(repr, SCIPY_FORMATS))}, got {format!r} "
                             "(for paper 003's corrigan format pass SparseStream.from_scipy(A, format='corrigan', "
                             "sort=True) as A)")
        if not sp.issparse(A):
            kind = (f"a SparseStream (format {A.format!r})" if isinstance(A, SparseStream) else
                    f"a {type(A).__name__}, multiplied as a dense matrix")
            raise ValueError(f"cg: format={format!r} is how cg stores a scipy.sparse A, but A is {kind}: drop "
                             "format=, or pass A as a scipy.sparse matrix")
    format = PRESET_FORMATS[preset] if format is None else format
    if (M is not None and not isinstance(M, Stream) and not hasattr(M, "tocsr") and np.ndim(M) == 2
            and np.shape(M)[1] == 1):
        M = np.asarray(M)[:, 0]         # an (n, 1) column, as b may be (an (n, n) M is a matrix)
    M = _preconditioner(M)
    b = _numpy_vector(b, "b")
    if isinstance(x0, str):             # scipy's x0="Mb": M b, or b without M
        if x0 != "Mb" or isinstance(b, Stream) or isinstance(M, Stream):
            raise ValueError(f"cg: x0 must be a vector, None or 'Mb' (with numpy b and M), got {x0!r}")
        x0 = np.asarray(b, dtype=np.float64) * (1.0 if M is None else np.asarray(M, dtype=np.float64))
    x0 = _numpy_vector(x0, "x0")
    op = _operator(A, format)
    used = op.A.format if isinstance(op.A, SparseStream) else None
    n = op.n
    if maxiter is None:
        maxiter = 10 * n
    numpy_out = not isinstance(b, Stream)
    owned = []
    readbacks = 1 if isinstance(A, Stream) else 0      # max|A| of the user's dense Stream

    def own(s):
        owned.append(s)
        return s

    try:
        # ---- b, scaled to max |b'| in [0.5, 1) (a numpy b) or into [2^-8, 2^8] (a Stream b)
        if numpy_out:
            b64 = _host_vector(b, n, "b")
            bmax = float(np.abs(b64).max())
            k = _exponent(bmax) if bmax > 0 else 0
            bs = own(_upload(b64, -k, "b")) if bmax > 0 else None
            # ||b|| of the b that the GPU solves with (2^-k b rounded to float32), in float64
            # (the norm of the scaled vector, scaled back: ||b||² of a b of 1e-170 underflows)
            bnorm = float(np.ldexp(np.linalg.norm(np.ldexp(b64, -k).astype(np.float32).astype(np.float64)), k))
        else:
            bs = _stream_vector(b, n, "b")
            am = reduce_regions(bs, "absmax", bs.regions(), strategy="pingpong", out=borrow(1, 1))
            bb = _dot(bs, bs, reduction)
            bmax, bb_value = _read(am, bb)
            give_back(am, bb)
            readbacks += 1
            k = 0
            if bmax > 0 and not 2.0 ** -VECTOR_RANGE <= bmax <= 2.0 ** VECTOR_RANGE:
                k = _exponent(bmax)
                bs = own(_scale_into(bs, -k, Stream.like(bs)))
                bb = _dot(bs, bs, reduction)
                bb_value = bb.item()
                give_back(bb)
                readbacks += 1
            bnorm = float(np.ldexp(np.sqrt(bb_value), k))
        if np.isinf(rtol) and bmax > 0 or np.isinf(atol):   # any x is within an infinite target
            x = (np.zeros(n) if x0 is None else np.asarray(x0, dtype=np.float64).copy()) if numpy_out else (
                Stream.vector_of(n) if x0 is None else x0)
            return CGResult(x, 0, iterations=0, residual_norm=float("nan"), readbacks=readbacks, residuals=[],
                            format=used, restarts=0, stagnated=False)
        if not bmax > 0:            # b = 0: x = 0 exactly (A is nonsingular)
            x = np.zeros(n) if numpy_out else Stream.vector_of(n)
            return CGResult(x, 0, iterations=0, residual_norm=0.0, readbacks=readbacks, residuals=[0.0], format=used,
                            restarts=0, stagnated=False)
        shift = op.exponent - k           # x' = 2^(e - k) x solves (2^-e A) x' = 2^-k b
        # ---- x0 and M
        xs = None
        if x0 is not None:
            if isinstance(x0, Stream):
                xs = _stream_vector(x0, n, "x0")
                if shift:
                    xs = own(_scale_into(xs, shift, Stream.like(xs)))
            else:
                xs = own(_upload(_host_vector(x0, n, "x0"), shift, "x0"))
        Ms = None
        if M is not None:
            if isinstance(M, Stream):   # one read-back of M's entries, to check them as a numpy M's
                Ms = _stream_vector(M, n, "M")
                mmax = _check_preconditioner(Ms.to_array().astype(np.float64))
                readbacks += 1
                if not 2.0 ** -VECTOR_RANGE <= mmax <= 2.0 ** VECTOR_RANGE:
                    Ms = own(_scale_into(Ms, -_exponent(mmax), Stream.like(Ms)))
            else:               # PCG does not see a scalar factor of M
                M64 = _host_vector(M, n, "M")
                Ms = own(_upload(M64, -_exponent(_check_preconditioner(M64)), "M"))
        sorted_A = isinstance(op.A, SparseStream) and op.A.perm is not None
        if sorted_A:   # 003: solve the sorted system, unsort the solution at the end
            perm = op.A._streams["perm"]
            bs = own(_gather(bs, perm))
            if xs is not None:
                xs = own(_gather(xs, perm))
            if Ms is not None:
                Ms = own(_gather(Ms, perm))
        inverse = np.argsort(op.A.perm) if sorted_A else None

        def to_user(xt: Stream) -> np.ndarray:
            """x of A x = b in A's order, float64, from the GPU's x' of the scaled (sorted) system."""
            xk = xt.to_array().astype(np.float64)
            if sorted_A:
                xk = xk[inverse]
            return np.ldexp(xk, -shift)

        target = max(rtol * bnorm, atol)
        if target < FLOAT32_REACH * bnorm:
            asked = f"rtol = {rtol:.3g}" if rtol * bnorm >= atol else f"atol = {atol:.3g}"
            warnings.warn(f"cg: the target max(rtol ||b||, atol) = {target:.3g} ({asked}) is below what "
                          f"float32 can reach, about 2^-23 ||b|| = {FLOAT32_REACH * bnorm:.3g}: the GPU computes "
                          "in float32 (float64 input too), so expect info > 0 (.stagnated) unless b - A x "
                          "comes out exactly zero. Ask for rtol >= 1.2e-7, or refine the answer in float64 "
                          "(e.g. scipy.sparse.linalg.cg from x0=x)", Float32ToleranceWarning, stacklevel=2)
        try:
            x_out, info, extra = _iterate(op, bs, xs, Ms, np.ldexp(bnorm, -k), np.ldexp(target, -k), maxiter,
                                          callback, check_every, reduction, recompute_every, to_user,
                                          bool(verify), bool(plan), iteration == "single-reduction")
        except CGBreakdownError as e:
            if Ms is None or e.diverged or e.iteration < 1:
                raise
            # with a preconditioner, a breakdown after progress points at M's conditioning too
            note = (f" A preconditioner M was given: the breakdown came after {e.iteration} iterations, so "
                    "the preconditioned system (M A) may be what float32 rounding made look indefinite, "
                    "not A; try preset='robust' (the standard iteration), a better-conditioned M, or none")
            e.args = (str(e) + note + ".",)
            raise
        extra["readbacks"] += readbacks
        extra["format"] = used
        extra["residual_norm"] = float(np.ldexp(extra["residual_norm"], k))
        extra["residuals"] = [float(np.ldexp(v, k)) for v in extra["residuals"]]
        if info > 0 and extra["stagnated"] and target >= FLOAT32_REACH * bnorm:   # (below it: warned above)
            warnings.warn(f"cg: stopped at ||b - A x|| = {extra['residual_norm']:.3g} "
                          f"({extra['residual_norm'] / bnorm:.2g} ||b||), above the target {target:.3g}: the "
                          "residual stagnated, which is float32's reach on this system (its conditioning "
                          "multiplies the 1.2e-7 of float32's roundoff). Ask for a larger rtol, or refine the "
                          "answer in float64 (e.g. scipy.sparse.linalg.cg from x0=x)", Float32ToleranceWarning,
                          stacklevel=2)
        if numpy_out:
            x = to_user(x_out)
            x_out.release()
            return CGResult(x, info, **extra)
        if sorted_A:
            unsorted = _gather(x_out, op.A._streams["inverse"])
            x_out.release()
            x_out = unsorted
        if shift:
            top = reduce_regions(x_out, "absmax", x_out.regions(), strategy="pingpong", out=borrow(1, 1))
            xmax = top.item()
            give_back(top)
            extra["readbacks"] += 1
            big = float(np.ldexp(xmax, -shift))
            if big > 0 and not 2.0 ** -102 <= big <= float(np.finfo(np.float32).max):
                x_out.release()
                why = "overflows float32" if big > 1 else "is too near float32's underflow (1.2e-38)"
                raise ValueError(f"cg: the solution's max |x| = {big:.3g} {why}, so it cannot be "
                                 "answered as a Stream; pass b as a numpy array to get x in float64")
            x = _scale_into(x_out, -shift, Stream.like(x_out))
            x_out.release()
            x_out = x
        return CGResult(x_out, info, **extra)
    finally:
        for s in owned:
            s.release()
        op.release()


def _iterate(op, b, x0, Ms, bnorm, target, maxiter, callback, check_every, reduction, recompute_every,
             to_user, verify=True, plan=True, single=False):
    """CG on the scaled system from x0 (None: zeros); bnorm and target in its units. Returns
    (x, info, figures).

    Every stream of the iteration is made here, once: the vectors x, r, d in ping-pong pairs
    (the iteration renders the next x, r, d while reading the current ones), q and s, and the
    1 x 1 scalars (d^T q, alpha, beta, delta in a ping-pong pair, r^T r, the two watches in
    pairs). With ``plan`` the passes of an iteration are recorded the first time its pairs
    stand in a given order (twice a solve, more after a restart) and drawn again from that
    record (``passes.RecordedPlan``): the same passes, none of the host work of building them.
    ``single``: the single-reduction iteration (module notes), with s = A d and u = M r in
    pairs too, w = A u, and a 1 x 2 state pair."""
    x = Stream.like(b)
    xn, r, rn, d, dn, q, s = (Stream.like(b) for _ in range(7))
    created = [x, xn, r, rn, d, dn, q, s]
    scalars = [Stream(1, 1) for _ in range(11)]
    readout = Stream(1, 3)            # r^T r, the breakdown flag and the convergence watch, read at once
    created += scalars + [readout]
    flag, flag_next, conv, conv_next, delta, delta_next, dq, alpha, beta, rr_s, tt = scalars
    readbacks = 0
    residuals = []
    threshold = float(np.float32(min(max(target, FREEZE_FLOOR * bnorm) ** 2, float(np.finfo(np.float32).max))))
    plans = {}
    dynamic = ((KERNELS["breakdown_watch"], "iteration"), (KERNELS["converged"], "iteration"))
    fused = reduction == "fan"
    jac = int(Ms is not None)
    if fused:
        levels = _fused_levels(b.rows, b.cols)
        pairs = {}
    if fused and not single:   # the fan iteration: partial sums, the state pair
        dynamic = ((FUSED["scalars", 1, jac], "iteration"), (FUSED["scalars", 2, jac], "iteration"))
        state, state_mid = Stream(1, 1, components=4), Stream(1, 1, components=4)
        partials = [Stream(h, w, zero=False) for h, w, _ in levels]
        partials4 = [Stream(h, w, components=4, zero=False) for h, w, _ in levels] if jac else partials
        created += [state, state_mid] + partials + (partials4 if jac else [])
    if single:  # single-reduction: s = A d and (Jacobi) u = M r in pairs, w = A u, a 1 x 2 state pair
        dynamic = ((FUSED["sr_scalars", jac], "iteration"),)
        sv, svn, w = Stream.like(b), Stream.like(b), Stream.like(b)
        u, un = (Stream.like(b), Stream.like(b)) if jac else (None, None)
        state, state_mid = Stream(1, 2, components=4), Stream(1, 2, components=4)
        partials4 = [Stream(h, cc, components=4, zero=False) for h, cc, _ in levels]
        created += [sv, svn, w, state, state_mid] + partials4 + ([u, un] if jac else [])

    def sr_iteration(it: int, recompute: bool) -> None:
        """One iteration of single-reduction CG (Chronopoulos and Gear; see ``cg``'s docstring):
        w = A u; (gamma, delta[, ||r||^2]) by one fan reduction ending in the 1 x 2 state
        fragment (alpha, beta, watches: state -> state_mid); d, s, x, r (and u = M r) in one pass
        of four (five) render targets."""
        uv = u if jac else r
        op(uv, w)
        ins = {"S": r, "W": w}
        if jac:
            ins["U"] = u
        src = _fan_passes(FUSED["sr_fan", jac], ins, partials4, levels)
        FUSED["sr_scalars", jac].draw(state_mid, whole(state_mid), {"P": src, "state": state},
                                      {"size": (src.cols, src.rows), "iteration": float(it), "threshold": threshold},
                                      texels=src.cols * src.rows + 2)
        outs = (xn, rn, dn, svn) + ((un,) if jac else ())
        t = pairs.get(tuple(map(id, outs)))
        if t is None:
            t = pairs[tuple(map(id, outs))] = Targets(*outs)
        ins = {"state": state_mid, "X": x, "R": r, "D": d, "S": sv, "W": w}
        if jac:
            ins.update(U=u, Mdiag=Ms)
        FUSED["sr_update", jac].draw(t, whole(xn), ins)
        if recompute:                                            # r = b - A x (and u = M r)
            op(xn, w)
            L1["saxpy"].draw(rn, whole(rn), {"X": w, "Y": b}, {"alpha": -1.0})
            if jac:
                L1["elementwise_product"].draw(un, whole(un), {"X": Ms, "Y": rn})

    def fused_residual_sums(rv: Stream, stage: int, out: Stream, uniforms: dict) -> None:
        """delta = r^T M r and ||r||^2 (one sum without M) into the state texel ``out``."""
        if Ms is not None:
            _fused_sum(FUSED["rmr"], {"S": rv, "Mdiag": Ms}, partials4, levels, stage, 1, out, uniforms)
        else:
            _fused_sum(FUSED["rr"], {"S": rv}, partials, levels, stage, 0, out, uniforms)

    def fused_iteration(it: int, recompute: bool) -> None:
        """One iteration of the fan iteration (see ``cg``'s docstring): q = A d; d^T q with the
        breakdown watch (state -> state_mid); x and r in one pass of two targets, alpha from
        state_mid; delta and ||r||^2 with the convergence watch (state_mid -> state); d."""
        op(d, q)
        _fused_sum(FUSED["dq"], {"S": d, "Y": q}, partials, levels, 1, jac, state_mid,
                   {"state": state, "iteration": float(it)})
        if recompute:                                            # r = b - A x
            FUSED["x"].draw(xn, whole(xn), {"state": state_mid, "X": x, "D": d})
            op(xn, q)
            L1["saxpy"].draw(rn, whole(rn), {"X": q, "Y": b}, {"alpha": -1.0})
        else:
            t = pairs.get((id(xn), id(rn)))
            if t is None:
                t = pairs[id(xn), id(rn)] = Targets(xn, rn)
            FUSED["xr"].draw(t, whole(xn), {"state": state_mid, "X": x, "D": d, "R": r, "Q": q})
        fused_residual_sums(rn, 2, state, {"state": state_mid, "iteration": float(it + 1), "threshold": threshold})
        ins = {"state": state, "previous": state_mid, "R": rn, "D": d}
        if Ms is not None:
            ins["Mdiag"] = Ms
        FUSED["d", jac].draw(dn, whole(dn), ins)

    def true_residual(out: Stream) -> float:
        """||b - A x|| into out (one product, one read-back)."""
        nonlocal readbacks
        op(x, q)
        L1["saxpy"].draw(out, whole(out), {"X": q, "Y": b}, {"alpha": -1.0})
        value = _dot(out, out, reduction, tt).item()
        readbacks += 1
        return float(np.sqrt(value)) if np.isfinite(value) else float("inf")

    def start():
        """d = s = M r, delta = r^T s, both watches cleared: CG (re)starts from x and r.
        Single-reduction: u = M r, and the state (alpha_old = 0: the first iteration, beta = 0;
        both watches -1) written."""
        if single:
            if jac:
                L1["elementwise_product"].draw(u, whole(u), {"X": Ms, "Y": r})
            state.write(np.array([0.0, 0.0, 0.0, 0.0, -1.0, -1.0, 0.0, 0.0], dtype=np.float32))
            return
        if Ms is not None:
            L1["elementwise_product"].draw(d, whole(d), {"X": Ms, "Y": r})
        else:
            L1["copy"].draw(d, whole(d), {"A": r})
        if fused:             # (delta, ||r||^2, -1, -1)
            fused_residual_sums(r, 0, state, {})
            return
        for w in (flag, conv):
            L1["fill"].draw(w, Texel.at(0, 0), uniforms={"value": -1.0})
        _dot(r, d, reduction, delta)

    def iteration(it: int, recompute: bool, check: bool) -> None:
        """One iteration's passes, from x, r, d, delta, flag, conv into the next ones; with
        ``check``, the three scalars the host reads copied side by side into ``readout``."""
        op(d, q)                                                 # q = A d
        _dot(d, q, reduction, dq)
        KERNELS["breakdown_watch"].draw(flag_next, Texel.at(0, 0),
                                        {"flag": flag, "dAd": dq, "converged": conv}, {"iteration": float(it)})
        _quotient(delta, dq, conv, alpha)                        # alpha = delta / d^T q
        _saxpy(d, x, alpha, +1.0, xn)                            # x = x + alpha d
        if recompute:                                            # r = b - A x
            op(xn, q)
            L1["saxpy"].draw(rn, whole(rn), {"X": q, "Y": b}, {"alpha": -1.0})
        else:
            _saxpy(q, r, alpha, -1.0, rn)                        # r = r - alpha q
        if Ms is not None:                                       # s = M r
            L1["elementwise_product"].draw(s, whole(s), {"X": Ms, "Y": rn})
            sv = s
        else:
            sv = rn
        _dot(rn, sv, reduction, delta_next)                      # delta = r^T s
        rr = delta_next if Ms is None else _dot(rn, rn, reduction, rr_s)
        KERNELS["converged"].draw(conv_next, Texel.at(0, 0), {"converged": conv, "rr": rr},
                                  {"threshold": threshold, "iteration": float(it + 1)})
        _quotient(delta_next, delta, conv_next, beta)            # beta, 0 once converged
        _saxpy(d, sv, beta, +1.0, dn)                            # d = s + beta d
        if check:
            for i, v in enumerate((rr, flag_next, conv_next)):
                L1["copy"].draw(readout, Texel.at(i, 0, T0=(0.5, 0.5)), {"A": v})

    def step(it: int, recompute: bool, check: bool) -> None:
        """One iteration, from its plan when there is one; then the pairs swap."""
        nonlocal x, xn, r, rn, d, dn, flag, flag_next, conv, conv_next, delta, delta_next
        nonlocal sv, svn, u, un, state, state_mid
        key = (id(x), id(r), id(d), id(flag), id(conv), id(delta), recompute, check)
        if fused:               # its state is one texel pair, its read-back the state itself
            key = key[:3] + (recompute,)
        p = plans.get(key, False) if plan else None
        if single:
            draw = lambda: sr_iteration(it, recompute)        # noqa: E731
        elif fused:
            draw = lambda: fused_iteration(it, recompute)     # noqa: E731
        else:
            draw = lambda: iteration(it, recompute, check)    # noqa: E731
        if p:
            p.run({dynamic[0]: float(it)} if single else {dynamic[0]: float(it), dynamic[1]: float(it + 1)})
        elif p is False:
            with recording() as noted:
                draw()
            try:
                plans[key] = RecordedPlan(noted, keep=created + [b] + ([Ms] if Ms is not None else [])
                                          + ([op._tmp] if op._tmp is not None else [])
                                          + (list(pairs.values()) if fused else []), dynamic=dynamic)
            except NotReplayable:
                plans[key] = None
        else:
            draw()
        x, xn = xn, x
        r, rn = rn, r
        d, dn = dn, d
        flag, flag_next = flag_next, flag
        conv, conv_next = conv_next, conv
        delta, delta_next = delta_next, delta
        if single:
            sv, svn = svn, sv
            u, un = un, u
            state, state_mid = state_mid, state

    def state_watches() -> tuple:
        """(||r||^2, breakdown watch, convergence watch) of the state: one read-back."""
        if single:      # texel 0 (gamma, alpha, beta, ||r||^2), texel 1 (flag, converged, ...)
            v = state.to_array().reshape(-1)
            return float(v[3]), float(v[4]), float(v[5])
        return tuple(float(v) for v in state.to_array().reshape(-1)[1:])

    try:
        if x0 is None:                   # r = b (no product: A 0 = 0)
            L1["copy"].draw(r, whole(r), {"A": b})
            rnorm = bnorm
        else:
            L1["copy"].draw(x, whole(x), {"A": x0})
            rnorm = true_residual(r)
            if not np.isfinite(rnorm):
                raise ValueError("cg: the initial residual b - A x0 is not finite (overflow in A x0)")
        residuals.append(rnorm)
        start()
        it, info, restarts, stagnated, best, x_best = 0, None, 0, False, rnorm, None
        if rnorm <= target:
            info = 0
        while info is None:
            if it >= maxiter:
                break
            check = (it + 1) % check_every == 0 or it + 1 >= maxiter
            step(it, bool(recompute_every and (it + 1) % recompute_every == 0), check)
            it += 1
            rr = delta if Ms is None else rr_s
            converged_now = False
            if callback is not None:
                readbacks += 2
                converged_now = (state_watches()[2] if fused else conv.item()) >= 0
                if not (single and converged_now):
                    callback(to_user(x))                         # (then this is the converging iteration)
                # single-reduction sees r_k's norm in iteration k, so x (frozen) is the previous one's
            if not (check or converged_now):
                continue
            if fused:        # the state texel: (delta, ||r||^2, breakdown watch, convergence watch)
                rr_value, first_bad, converged_at = state_watches()
            elif check:
                rr_value, first_bad, converged_at = (float(v) for v in readout.to_array().reshape(-1))
            else:
                rr_value, first_bad, converged_at = _read(rr, flag, conv)
            readbacks += 1
            if first_bad >= 0 and first_bad != int(first_bad):     # iteration + 0.5: overflow
                raise CGBreakdownError(int(first_bad), op.n, detail=(
                    "d^T A d overflowed float32 (inf or NaN): the iteration diverged"), diverged=True)
            if first_bad >= 0:
                raise CGBreakdownError(int(first_bad), op.n)
            rnorm = float(np.sqrt(max(rr_value, 0.0))) if np.isfinite(rr_value) else float("inf")
            residuals.append(rnorm)
            if converged_at < 0:
                if not np.isfinite(rnorm):
                    raise CGBreakdownError(it - 1, op.n, detail="the residual is no longer finite: the "
                                           "iteration diverged", diverged=True)
                continue
            # the recurrence reached the target at iteration converged_at (x, r frozen since)
            it = int(converged_at)
            rnorm = true_residual(rn)
            if not np.isfinite(rnorm):
                raise CGBreakdownError(it - 1, op.n, detail="b - A x is no longer finite: the iteration "
                                       "diverged", diverged=True)
            if rnorm <= target or not verify:
                info = 0
            elif rnorm >= best:      # a restart that did not help: float32's floor
                stagnated, info = True, max(it, 1)
            else:                    # restart from x with the true residual
                best = rnorm
                if x_best is None:
                    x_best = Stream.like(b)
                    created.append(x_best)
                L1["copy"].draw(x_best, whole(x_best), {"A": x})
                restarts += 1
                r, rn = rn, r
                start()
        if info is None:             # maxiter: the answer's true residual (it may meet the target)
            rnorm = true_residual(rn) if it > 0 else rnorm
            info = 0 if rnorm <= target else max(it, 1)
        if info and x_best is not None and best < rnorm:     # answer the best iterate verified
            x, x_best, rnorm = x_best, x, best
        return x, info, {"iterations": it, "residual_norm": rnorm, "readbacks": readbacks,
                         "residuals": residuals, "restarts": restarts, "stagnated": stagnated}
    except BaseException:
        x.release()
        raise
    finally:
        for p in plans.values():
            if p is not None:
                p.release()
        if fused:
            for t in pairs.values():
                t.release()
        for t in created:
            if t is not x:
                t.release()
