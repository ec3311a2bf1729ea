"""Float-float arithmetic for the normal equations (beyond the papers).

The interior point method's normal matrix A Θ Aᵀ becomes as ill-conditioned as Θ = x/s is
spread (1e-16 .. 1e19 on the NETLIB problems near eps = 1e-8). Its float32 factor, even with
float64 refinement, then misses directions the refinement cannot recover (the float32 factor
replaces every pivot below 1e-7 of its diagonal entry). Here every number of the factorization
is a float-float pair hi + lo of two float32 (an RGBA32F texel, hi in .r, lo in .g): about 48
significant bits, float32's exponent range (``glsl/float_float.glsl``, the double-word
algorithms of Joldes, Muller and Popescu 2017, with ``fma`` and ``precise`` of
GL_ARB_gpu_shader5). The kernels are the project's own with float-float arithmetic:

* :func:`adat` -- 000's singlepass inner-product adat (kernel ``adat_inner_product_ff``),
  one pass over the lower triangle of Fig. 2(b) of 001;
* :func:`factor` -- the one-pass outer Cholesky steps (``cholesky_step_ff``, the geometry of
  :func:`gpgpu.cholesky.onepass_plan`), guarded pivots as on the float32 path;
* :func:`solve` -- forward and backward substitution, one pass a step: column-oriented
  (``substitution_column_ff``, every fragment one division and one product) or in the
  inner-product form (``substitution_inner_product_ff``).

Float-float on GPUs is contemporary with the papers (Göddeke, Strzodka and Turek 2005;
Da Graça and Defour 2006), but none of the five papers uses it: it is an option
(``solve(..., factor_precision="float-float")``), off by default.
"""
from __future__ import annotations

import numpy as np

from .adat import inner_product_triangle
from .blas1 import whole
from .cholesky import onepass_plan
from .kernel import Kernel
from .geometry import Rect
from .passes import SWAP, Draw, compiled, run
from .stream import PingPong, Stream, check_array
from .context import get_context

__all__ = ["available", "split", "upload", "combine", "adat", "factor", "solve", "KERNELS", "DEFAULT_PIVOT_TOL"]

_EXT = ("GL_ARB_gpu_shader5",)
KERNELS = {
    "adat": Kernel("adat_inner_product_ff", texels=3, extensions=_EXT, library="float_float",
                   doc="000 level 3 adat, singlepass inner product, in float-float (beyond)"),
    "cholesky_step": Kernel("cholesky_step_ff", texels=4, extensions=_EXT, library="float_float",
                            doc="000 Algorithm 2, one outer-product step a pass, in float-float (beyond)"),
    "substitution": Kernel("substitution_inner_product_ff", texels=3, extensions=_EXT, library="float_float",
                           doc="000 level 2 substitution, inner-product form, in float-float (beyond)"),
    "substitution_column": Kernel("substitution_column_ff", texels=4, extensions=_EXT, library="float_float",
                                  doc="000 level 2 substitution, column-oriented, one pass a step, in float-float "
                                      "(beyond)"),
    "copy": Kernel("copy_rgba", texels=2, doc="000 Algorithm 2's copy, all four components"),
}

def available() -> bool:
    """Whether this context can compile the float-float kernels (``precise`` needs
    GL_ARB_gpu_shader5, part of OpenGL 4.0; Mesa's llvmpipe and NVIDIA's drivers have it)."""
    return _EXT[0] in get_context().extensions


#: relative pivot tolerance of the float-float factor: about 2^-40, well above its unit roundoff
#: 2^-48 and far below float32's 1e-7 (float64's guard uses 1e-13)
DEFAULT_PIVOT_TOL = 1e-12


def split(a) -> np.ndarray:
    """The float-float pairs of a float64 array: ``(..., 4)`` float32 with hi, lo, 0, 0."""
    a = np.asarray(a, dtype=np.float64)
    hi = a.astype(np.float32)
    lo = (a - hi.astype(np.float64)).astype(np.float32)
    out = np.zeros(a.shape + (4,), dtype=np.float32)
    out[..., 0], out[..., 1] = hi, lo
    return out


def upload(a, name: str = "input") -> Stream:
    """A float64 vector (one row) or matrix as an RGBA32F float-float stream."""
    check_array(a, name)                     # shape, finiteness, float32's range and texture size
    arr = np.asarray(a, dtype=np.float64)    # (check_array's copy is float32: the low parts are here)
    if arr.ndim == 1:
        arr = arr[None, :]
    return Stream(arr.shape[0], arr.shape[1], components=4, data=split(arr))


def combine(s: Stream) -> np.ndarray:
    """Read a float-float stream back as a rows x cols float64 array (hi + lo)."""
    data = s.to_array().astype(np.float64)
    return data[..., 0] + data[..., 1]


def adat(A: Stream, d: Stream) -> Stream:
    """The lower triangle of A diag(d) Aᵀ (m x m) from float-float A (m x n) and d (1 x n)."""
    if A.components != 4 or d.components != 4 or d.cols != A.cols:
        raise ValueError(f"float_float.adat: A and d must be float-float (RGBA) streams with as many "
                         f"columns, got {A!r} and {d!r}")
    m = A.rows
    C = Stream(m, m, components=4)
    KERNELS["adat"].draw(C, inner_product_triangle(m), {"A": A, "d": d}, {"n": int(A.cols)})
    return C


def _plan(m: int, tolerance: float, huge: float) -> list:
    """The float32 path's one-pass plan (:func:`gpgpu.cholesky.onepass_plan`, guarded) with the
    float-float step kernel: the same triangles, roles and swaps."""
    u = {"tolerance": float(tolerance), "huge": float(huge)}
    return [d if d is SWAP else d._replace(kernel=KERNELS["cholesky_step"], uniforms=dict(d.uniforms, **u))
            for d in onepass_plan(m, guarded=True)]


def factor(M: Stream, tolerance: float = DEFAULT_PIVOT_TOL, huge: float = 1e30) -> Stream:
    """The guarded Cholesky factor (lower triangle) of the float-float matrix M, m passes.

    A pivot whose high part is not above ``tolerance`` times its diagonal entry of M (or is not
    finite) becomes ``huge``, as on the float32 path (``gpgpu.cholesky.factor(guarded=...)``);
    :func:`gpgpu.cholesky.count_replaced` counts them from the high parts. M is unchanged.
    """
    m = M.rows
    if M.components != 4 or M.cols != m:
        raise ValueError(f"float_float.factor: M must be a square float-float (RGBA) stream, got {M!r}")
    plan = compiled(("cholesky_ff", m, float(tolerance), float(huge)), lambda: _plan(m, tolerance, huge))
    pp = PingPong(Stream.like(M, zero=False), Stream.like(M, zero=False))
    KERNELS["copy"].draw(pp.S, whole(pp.S), {"A": M})
    run(plan, pp, others={"M0": M})
    pp.S.release()
    return pp.T


SOLVE_FORMS = ("column", "inner")


def solve_plan(m: int, form: str = "column") -> list:
    """The passes of :func:`solve` for an order-m factor: a forward then a backward substitution,
    one pass a step over the whole vector, "S"/"T" the vector's ping-pong pair (the answer in "S"),
    "L" the factor."""
    kernel = KERNELS["substitution_column" if form == "column" else "substitution"]
    everything = Rect.covering(0, 0, m, 1, T0=lambda x, y: (x, y))
    plan = []
    for forward, steps in ((True, range(m)), (False, range(m - 1, -1, -1))):
        for k in steps:
            uniforms = {"k": k, "forward": forward, "by_rows": not forward}
            if form == "inner":
                uniforms["n"] = m
            plan += [Draw(kernel, "T", everything, {"X": "S", "T": "L"}, uniforms), SWAP]
    return plan


def solve(L: Stream, r, form: str = "column") -> np.ndarray:
    """z with L Lᵀ z = r, r and z float64 (uploaded and read back as float-float): a forward
    then a backward substitution, one pass a step (2m passes, drawn from a plan pre-built once
    per order: :func:`solve_plan`).

    ``form="column"`` (default): each step divides entry k and updates every unfinished entry
    from the state before it (``substitution_column_ff``: each fragment one division and one
    product); ``"inner"``: fragment k takes the inner product of row k with the finished
    entries (``substitution_inner_product_ff``: k products in one fragment, the others copy).

    ``ValueError`` when L is not a square float-float stream or r not a vector of L's order.
    """
    if form not in SOLVE_FORMS:
        raise ValueError(f"form must be one of {SOLVE_FORMS}, got {form!r}")
    if not isinstance(L, Stream) or L.components != 4 or L.cols != L.rows:
        raise ValueError(f"float_float.solve: L must be a square float-float (RGBA) stream (the factor "
                         f"from float_float.factor), got {L!r}")
    m = L.rows
    shape = np.shape(r)
    if len(shape) != 1 or shape[0] != m:
        raise ValueError(f"float_float.solve: r must be a vector of length {m} (L is {m} x {m}), got shape "
                         f"{shape}")
    pp = PingPong(upload(np.asarray(r, dtype=np.float64), "r"), Stream(1, m, components=4, zero=False))
    try:
        # the 2m passes as one pre-built plan (its vertices written once per order and form)
        run(compiled(("float_float_solve", m, form), lambda: solve_plan(m, form)), pp, others={"L": L})
        return combine(pp.S)[0]
    finally:
        pp.S.release()
        pp.T.release()

