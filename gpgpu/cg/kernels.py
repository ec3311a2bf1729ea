"""The kernels of conjugate gradients (paper 003) and the passes that draw them: the table of
the 1 x 1 scalar kernels of Shewchuk's listing (``KERNELS``), the fused kernels of the fan and
single-reduction iterations (``FUSED``, beyond the papers), and the dot products, scalar
quotients and scaled additions each iteration variant draws with them (``_dot``, ``_quotient``,
``_saxpy``, the fan passes ``_fan_passes`` / ``_fused_sum``). Every GLSL program is in
``glsl/``; the iterations that use these are in :mod:`gpgpu.cg.standard`,
:mod:`gpgpu.cg.fan` and :mod:`gpgpu.cg.single_reduction`."""
from __future__ import annotations

from ..blas1 import KERNELS as L1, whole
from ..geometry import Rect, Texel
from ..kernel import Kernel
from ..reduce import FAN, dot_fan, dot_pyramid, reduce_regions
from ..stream import Stream, borrow, give_back

__all__ = ["KERNELS", "FUSED", "FUSED_LAST"]

KERNELS = {
    "quotient": Kernel("scalar_quotient", texels=4,
                       doc="CG scalar alpha or beta, kept on the GPU (0 once converged)"),
    "saxpy": Kernel("saxpy_gpu_scalar", texels=4, doc="003 scaled vector addition, scalar on the GPU"),
    "breakdown": Kernel("breakdown_flag", texels=3, doc="first iteration with d^T A d <= 0"),
    "breakdown_watch": Kernel("cg_breakdown_flag", texels=4,
                              doc="first iteration with d^T A d <= 0, before convergence"),
    "converged": Kernel("cg_converged", texels=3, doc="first iteration with ||r||^2 <= target^2"),
}

#: The fused iteration of ``reduction="fan"`` (beyond the papers; :mod:`gpgpu.cg.fan`): fan
#: passes of dot products ending in one fragment that also updates the iteration's state texel
#: (delta, d^T q or ||r||^2, breakdown watch, convergence watch); the vector updates computing
#: alpha and beta from it, x and r in one pass of two targets.
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
#: beyond the papers; :mod:`gpgpu.cg.single_reduction`): one fan reduction of (gamma,
#: delta[, ||r||^2]), a state fragment computing alpha and beta and the watches into a 1 x 2
#: RGBA state, and one update pass of four render targets (d, s, x, r; five with Jacobi: u = M r too).
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


def _read(*scalars: Stream) -> list:
    """Several 1 x 1 streams read back in one transfer (copied side by side into one row)."""
    row = borrow(1, len(scalars))
    for i, s in enumerate(scalars):
        L1["copy"].draw(row, Texel.at(i, 0, T0=(0.5, 0.5)), {"A": s})
    values = [float(v) for v in row.to_array().reshape(-1)]
    give_back(row)
    return values


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
