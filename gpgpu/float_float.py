"""Float-float arithmetic for the normal equations (beyond the papers).

The interior point method's normal matrix A Θ Aᵀ becomes as ill-conditioned as Θ = x/s is
spread (1e-16 .. 1e19 on the NETLIB problems near eps = 1e-8). Its float32 factor, even with
float64 refinement, then misses directions the refinement cannot recover (the float32 factor
replaces every pivot below 1e-7 of its diagonal entry). Here every number of the factorization
is a float-float pair hi + lo of two float32 (an RG32F texel, hi in .r, lo in .g): about 48
significant bits, float32's exponent range (``glsl/float_float.glsl``, the double-word
algorithms of Joldes, Muller and Popescu 2017, with ``fma`` and ``precise`` of
GL_ARB_gpu_shader5; 2Prod by one fma() where the context's rounds once, :data:`TWO_PROD`).
The kernels are the project's own with float-float arithmetic:

* :func:`adat` -- 000's singlepass inner-product adat (kernel ``adat_inner_product_ff``),
  one pass over the lower triangle of Fig. 2(b) of 001; with the :func:`row_lists` of a sparse A,
  the same pass looping over the non-zeros of row i only (``adat_rows_ff``: the same sums, a
  fragment's loop as long as its row's non-zeros instead of A's columns);
* :func:`factor` -- the one-pass outer Cholesky steps (``cholesky_step_ff``, the geometry of
  :func:`gpgpu.cholesky.onepass_plan`), guarded pivots as on the float32 path; the vertex
  program ``cholesky_pivot_ff`` computes the pivot, its root and their reciprocals once a
  vertex, and the fragments multiply by the reciprocals;
* :func:`solve` -- forward and backward substitution, a block of 8 steps a pass
  (``substitution_block_ff``, 2 ceil(m / 8) passes), or one pass a step: column-oriented
  (``substitution_column_ff``, every fragment one division and one product) or in the
  inner-product form (``substitution_inner_product_ff``);
* :func:`factor_with_inverse` and :func:`solve_with_inverse` -- the factor and its inverse
  X = L⁻¹ together, step k of both in one pass (``cholesky_inverse_step_ff``, the geometry of
  :func:`gpgpu.cholesky.cholesky_inverse_plan`), m + 5 passes a factorization, or ``steps`` = 2 ..
  5 steps a pass (``cholesky_inverse_steps_ff``, the block's pivots replayed by the vertex
  program ``cholesky_block_pivots_ff``); then every solve is two passes, z = Xᵀ (X r)
  (``triangular_product_ff``; or, by chunks of the triangle, four:
  ``triangular_product_chunks_ff`` and ``column_sums_ff``), where the substitutions take 2m.

Float-float on GPUs is contemporary with the papers (Göddeke, Strzodka and Turek 2005;
Da Graça and Defour 2006), but none of the five papers uses it: it is an option
(``solve(..., factor_precision="float-float")``), off by default.
"""
from __future__ import annotations

import numpy as np

from .adat import inner_product_triangle
from .blas1 import whole
from .cholesky import Trailing, TriangularProduct, blocked_inverse_draws, check_block, inverse_step_draws, onepass_plan, packed_panel
from .kernel import PRELUDES, Kernel
from .geometry import Rect
from .passes import SWAP, Draw, compiled, run
from .stream import PingPong, Stream, check_array
from .context import get_context, max_texture_size

__all__ = ["FF", "available", "split", "upload", "combine", "adat", "row_lists", "RowLists", "factor", "solve", "factor_with_inverse",
           "solve_with_inverse", "KERNELS", "STEPS_KERNELS", "STEPS", "MAX_STEPS", "DEFAULT_PIVOT_TOL", "SOLVE_FORMS",
           "BLOCK"]

_EXT = ("GL_ARB_gpu_shader5",)
KERNELS = {
    "adat": Kernel("adat_inner_product_ff", texels=3, extensions=_EXT, library="float_float",
                   doc="000 level 3 adat, singlepass inner product, in float-float (beyond)"),
    "adat_rows": Kernel("adat_rows_ff", texels=5, extensions=_EXT, library="float_float",
                        doc="000 level 3 adat, singlepass inner product over row i's non-zeros, in "
                            "float-float (beyond)"),
    "cholesky_step": Kernel("cholesky_step_ff", texels=4, extensions=_EXT, library="float_float",
                            vertex="cholesky_pivot_ff",
                            doc="000 Algorithm 2, one outer-product step a pass, in float-float (beyond)"),
    "substitution": Kernel("substitution_inner_product_ff", texels=3, extensions=_EXT, library="float_float",
                           doc="000 level 2 substitution, inner-product form, in float-float (beyond)"),
    "substitution_column": Kernel("substitution_column_ff", texels=4, extensions=_EXT, library="float_float",
                                  doc="000 level 2 substitution, column-oriented, one pass a step, in float-float "
                                      "(beyond)"),
    "substitution_block": Kernel("substitution_block_ff", texels=4, extensions=_EXT, library="float_float",
                                 doc="000 level 2 substitution, a block of steps a pass, in float-float (beyond)"),
    "copy": Kernel("copy_rgba", texels=2, doc="000 Algorithm 2's copy, all four components"),
    "cholesky_inverse_step": Kernel("cholesky_inverse_step_ff", texels=6, extensions=_EXT, library="float_float",
                                    vertex="cholesky_pivot_ff",
                                    doc="a one-pass Cholesky step and a step of L^-1 together, in float-float "
                                        "(beyond)"),
    "identity": Kernel("identity_ff", texels=0, doc="the identity matrix drawn on the GPU, float-float (beyond)"),
}

#: the trailing passes of the blocked factor with its inverse (``block=``), float-float: the
#: panel two columns a texel (``cholesky_inverse_panel_rgba_ff``), then
#: ``cholesky_inverse_trailing_ff`` (:class:`gpgpu.cholesky.Trailing`)
TRAILING = Trailing(Kernel("cholesky_inverse_panel_rgba_ff", texels=3,
                           doc="beyond the papers: a block's panel and X's block rows, two float-float "
                               "columns a texel"),
                    "cholesky_inverse_trailing_ff", columns=2, extensions=_EXT, library="float_float")

#: X v and Xᵀ v in float-float for :func:`solve_with_inverse` (:class:`gpgpu.cholesky.TriangularProduct`)
TRIANGULAR_PRODUCT = TriangularProduct(Kernel("triangular_product_ff", texels=2, extensions=_EXT,
                                              library="float_float",
                                              doc="000 level 2 sgemv, singlepass inner product over a triangle, "
                                                  "in float-float (beyond)"),
                                       "triangular_product_chunks_ff",
                                       Kernel("column_sums_ff", texels=2, extensions=_EXT, library="float_float",
                                              doc="beyond the papers: the sums of a float-float stream's columns"),
                                       extensions=_EXT, library="float_float")

#: the most Cholesky steps one pass of :func:`factor_with_inverse` draws: the vertex program hands
#: 3 s + s (s - 1) / 2 float-float pairs to the fragments (the roots, the two reciprocals and the
#: block's columns), 13 vec4 at s = 5: with T0 and T1, 58 of OpenGL 3.3's 60 guaranteed varying
#: components (s = 6 would need 17 vec4)
MAX_STEPS = 5
#: steps a pass of :func:`factor_with_inverse` by default: one. The blocked passes draw s times
#: fewer passes but each fragment does about s times the float-float arithmetic; on the H200 they
#: took 6.5 to 14 times as long at m = 600 and 1503 (docs/results/lp.md, "Float-float factors
#: from reciprocals and fma")
STEPS = 1
#: ``cholesky_inverse_steps_ff`` with its vertex program ``cholesky_block_pivots_ff``, one program
#: per number of steps s; texels a fragment: its row's and column's s entries (or X's s rows of
#: the block), its own entry and the result
STEPS_KERNELS = {s: Kernel("cholesky_inverse_steps_ff", texels=2 * s + 2, defines={"STEPS": s}, extensions=_EXT,
                           library="float_float", vertex="cholesky_block_pivots_ff",
                           doc=f"beyond the papers: steps k .. k + {s - 1} of cholesky_inverse_step_ff in one pass, "
                               "the pivots from the vertex program, in float-float")
                 for s in range(2, MAX_STEPS + 1)}

#: channels of a float-float stream: RG32F, hi in .r and lo in .g (8 bytes a number, where
#: RGBA32F wrote 16: the factor's passes are bound by the bytes they write)
FF = 2


def available() -> bool:
    """Whether this context can compile the float-float kernels (``precise`` needs
    GL_ARB_gpu_shader5, part of OpenGL 4.0; Mesa's llvmpipe and NVIDIA's drivers have it)."""
    return _EXT[0] in get_context().extensions


#: how the float-float library computes a product's exact rounding error (2Prod, the cost of
#: every float-float product): ``"auto"`` -- one fma() where a probe of the context finds that its
#: fma() rounds once (:func:`fused_fma`; NVIDIA's drivers), Dekker's product elsewhere (llvmpipe);
#: ``"dekker"`` -- Dekker's product everywhere. Read when a context first compiles a float-float
#: kernel.
TWO_PROD = "auto"
TWO_PROD_FORMS = ("auto", "dekker")

_PROBE_VERTEX = """#version 330
void main() { gl_Position = vec4(gl_VertexID == 1 ? 3.0 : -1.0, gl_VertexID == 2 ? 3.0 : -1.0, 0.0, 1.0); }
"""
_PROBE_FRAGMENT = """#version 330
#extension GL_ARB_gpu_shader5 : require
uniform vec4 a;
uniform vec4 b;
out vec4 result;
void main() {
    precise vec4 p = a * b;
    precise vec4 e = fma(a, b, -p);
    result = e;
}
"""
#: the probe's factors: float32 numbers whose products are not float32 numbers
_PROBE_A = np.float32([1 + 2 ** -12, 3.1415927, -1.9999999, 1e-3])
_PROBE_B = np.float32([1 - 2 ** -13, 2.7182817, 1.0000001, -7.7777777])


def fused_fma(ctx=None) -> bool:
    """Whether fma() rounds once in this context (``ctx``, default this thread's): a pass computes
    e = fma(a, b, -a b) for four pairs of float32, compared with the exact rounding errors of the
    products (float64). NVIDIA's drivers: True; Mesa's llvmpipe: False (it rounds the product and
    the sum, e comes out 0). False where GL_ARB_gpu_shader5 is missing."""
    ctx = get_context() if ctx is None else ctx
    if _EXT[0] not in ctx.extensions:
        return False
    prog = ctx.program(vertex_shader=_PROBE_VERTEX, fragment_shader=_PROBE_FRAGMENT)
    texture = ctx.texture((1, 1), 4, data=np.zeros(4, np.float32).tobytes(), dtype="f4")
    fbo = ctx.framebuffer([texture])
    vao = ctx.vertex_array(prog, [])
    previous = ctx.fbo
    try:
        prog["a"].value, prog["b"].value = tuple(map(float, _PROBE_A)), tuple(map(float, _PROBE_B))
        fbo.use()
        vao.render(mode=ctx.TRIANGLES, vertices=3)
        e = np.frombuffer(fbo.read(components=4, dtype="f4"), np.float32)
    finally:
        previous.use()
        for obj in (vao, fbo, texture, prog):
            obj.release()
    a, b = _PROBE_A.astype(np.float64), _PROBE_B.astype(np.float64)
    exact = a * b - (_PROBE_A * _PROBE_B).astype(np.float64)   # exact: 48-bit products in float64
    return bool(np.all(exact != 0) and np.array_equal(e.astype(np.float64), exact))


def _library_prelude(ctx) -> str:
    """The text before ``glsl/float_float.glsl`` in context ``ctx``: FF_FMA where :data:`TWO_PROD`
    allows fma() and it rounds once there."""
    if TWO_PROD not in TWO_PROD_FORMS:
        raise ValueError(f"gpgpu.float_float.TWO_PROD must be one of {TWO_PROD_FORMS}, got {TWO_PROD!r}")
    return _FF_FMA if TWO_PROD == "auto" and fused_fma(ctx) else ""


_FF_FMA = "#ifndef FF_FMA\n#define FF_FMA 1\n#endif\n"   # (a kernel's own defines may have it already)


PRELUDES["float_float"] = _library_prelude


#: relative pivot tolerance of the float-float factor: about 2^-46.5, three times its unit
#: roundoff 2^-48 and far below float32's 1e-7 (float64's guard uses 1e-13). The LP's normal
#: matrix is equilibrated before its float-float factor (diagonal near 1). At 1e-12 the factor
#: replaced meaningful pivots (cycle's, two an iteration, and its primal residual stalled); at
#: 1e-14 it catches somewhat fewer of the pivots of dependent rows, which the refinement then
#: solves with (docs/results/lp.md, "The restart point and the float-float pivot tolerance")
DEFAULT_PIVOT_TOL = 1e-14


def split(a) -> np.ndarray:
    """The float-float pairs of a float64 array: ``(..., 2)`` float32, hi and lo."""
    a = np.asarray(a, dtype=np.float64)
    hi = a.astype(np.float32)
    lo = (a - hi.astype(np.float64)).astype(np.float32)
    return np.stack([hi, lo], axis=-1)


def upload(a, name: str = "input") -> Stream:
    """A float64 vector (one row) or matrix as a float-float stream (RG32F: hi, lo)."""
    check_array(a, name)                     # shape, finiteness, float32's range and texture size
    arr = np.asarray(a, dtype=np.float64)    # (check_array's copy is float32: the low parts are here)
    if arr.ndim == 1:
        arr = arr[None, :]
    return Stream(arr.shape[0], arr.shape[1], components=FF, data=split(arr))


def combine(s: Stream) -> np.ndarray:
    """Read a float-float stream back as a rows x cols float64 array (hi + lo)."""
    data = s.to_array().astype(np.float64)
    return data[..., 0] + data[..., 1]


class RowLists:
    """The non-zeros of a sparse m x n matrix, row after row, on the GPU (for :func:`adat`):
    ``entries`` holds (k, hi, lo, 0) per non-zero, ``width`` texels a row, rows in order and
    columns k ascending within a row; ``starts`` (1 x (m + 1), R32F) where row i begins. Indexes
    are float32 numbers, exact below 2^24."""

    def __init__(self, entries: Stream, starts: Stream, m: int, n: int, count: int):
        self.entries, self.starts, self.m, self.n, self.count = entries, starts, m, n, count

    @property
    def width(self) -> int:
        return self.entries.cols

    def release(self) -> None:
        self.entries.release()
        self.starts.release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

    def __repr__(self) -> str:
        return f"RowLists({self.m} x {self.n}, {self.count} non-zeros)"


def row_lists(A) -> RowLists:
    """The :class:`RowLists` of A (a scipy.sparse matrix or a numpy array, m x n; explicit zeros
    and entries whose float32 high part is zero are left out, as the dense kernel skips them)."""
    import scipy.sparse as sp
    if not (sp.issparse(A) or isinstance(A, np.ndarray)) or len(A.shape) != 2:
        raise TypeError(f"float_float.row_lists: A must be a 2-d scipy.sparse matrix or numpy array, "
                        f"got {type(A).__name__}")
    A = sp.csr_matrix(A, dtype=np.float64)
    A.sum_duplicates()
    A.sort_indices()
    check_array(A.data, "A")
    pairs = split(A.data)
    keep = pairs[:, 0] != 0.0
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))[keep]
    cols, pairs = A.indices[keep], pairs[keep]
    m, n, count = A.shape[0], A.shape[1], int(keep.sum())
    if max(count, m + 1, n) >= 2 ** 24:
        raise ValueError(f"float_float.row_lists: {count} non-zeros of a {m} x {n} matrix: indexes must stay "
                         "below 2^24 to be exact in float32")
    limit = max_texture_size()
    if m + 1 > limit:
        raise ValueError(f"float_float.row_lists: {m} rows need a 1 x {m + 1} stream, beyond this context's "
                         f"texture size {limit}")
    width = max(1, min(limit, int(np.ceil(np.sqrt(max(count, 1))))))
    height = max(1, -(-count // width))
    data = np.zeros((height * width, 4), dtype=np.float32)
    data[:count, 0], data[:count, 1:3] = cols, pairs
    starts = np.zeros(m + 1, dtype=np.float32)
    starts[1:] = np.cumsum(np.bincount(rows, minlength=m))
    return RowLists(Stream(height, width, components=4, data=data.reshape(height, width, 4)),
                    Stream(1, m + 1, data=starts[None, :]), m, n, count)


def adat(A: Stream, d: Stream, rows: RowLists | None = None) -> Stream:
    """The lower triangle of A diag(d) Aᵀ (m x m) from float-float A (m x n) and d (1 x n).

    With ``rows`` (A's :func:`row_lists`) each fragment (j, i) loops over the non-zeros of row i
    (kernel ``adat_rows``) instead of all n columns: the same terms in the same order, so the
    same sums, in far fewer steps where A is sparse."""
    if A.components != FF or d.components != FF or d.cols != A.cols:
        raise ValueError(f"float_float.adat: A and d must be float-float (RG32F) streams with as many "
                         f"columns, got {A!r} and {d!r}")
    m = A.rows
    if rows is not None and (not isinstance(rows, RowLists) or (rows.m, rows.n) != (m, A.cols)):
        raise ValueError(f"float_float.adat: rows must be the RowLists of the {m} x {A.cols} A, got {rows!r}")
    C = Stream(m, m, components=FF)
    if rows is None:
        KERNELS["adat"].draw(C, inner_product_triangle(m), {"A": A, "d": d}, {"n": int(A.cols)})
    else:
        KERNELS["adat_rows"].draw(C, inner_product_triangle(m),
                                  {"A": A, "d": d, "entries": rows.entries, "starts": rows.starts},
                                  {"W": rows.width})
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
    if M.components != FF or M.cols != m:
        raise ValueError(f"float_float.factor: M must be a square float-float (RG32F) stream, got {M!r}")
    plan = compiled(("cholesky_ff", m, float(tolerance), float(huge)), lambda: _plan(m, tolerance, huge))
    pp = PingPong(Stream.like(M, zero=False), Stream.like(M, zero=False))
    KERNELS["copy"].draw(pp.S, whole(pp.S), {"A": M})
    run(plan, pp, others={"M0": M})
    pp.S.release()
    return pp.T


SOLVE_FORMS = ("block", "column", "inner")
#: the block of :func:`solve`'s default form: 2 ceil(m / BLOCK) passes a solve
BLOCK = 8
#: the largest block the kernel holds (``MAX_BLOCK`` of substitution_block_ff.frag)
MAX_BLOCK = 32


def solve_plan(m: int, form: str = "block", block: int = BLOCK) -> list:
    """The passes of :func:`solve` for an order-m factor: a forward then a backward substitution
    over the whole vector, one pass a step (``"column"``, ``"inner"``) or a block of ``block``
    steps a pass (``"block"``); "S"/"T" the vector's ping-pong pair (the answer in "S"), "L" the
    factor."""
    everything = Rect.covering(0, 0, m, 1, T0=lambda x, y: (x, y))
    plan = []
    if form == "block":
        starts = list(range(0, m, block))
        for forward, order in ((True, starts), (False, starts[::-1])):
            for k0 in order:
                uniforms = {"k0": k0, "bsize": block, "m": m, "forward": forward, "by_rows": not forward}
                plan += [Draw(KERNELS["substitution_block"], "T", everything, {"X": "S", "T": "L"}, uniforms), SWAP]
        return plan
    kernel = KERNELS["substitution_column" if form == "column" else "substitution"]
    for forward, steps in ((True, range(m)), (False, range(m - 1, -1, -1))):
        for k in steps:
            uniforms = {"k": k, "forward": forward, "by_rows": not forward}
            if form == "inner":
                uniforms["n"] = m
            plan += [Draw(kernel, "T", everything, {"X": "S", "T": "L"}, uniforms), SWAP]
    return plan


def _square_and_vector(who: str, name: str, what: str, T, r) -> int:
    """The order m of the square float-float stream ``T``, after checking it and that ``r`` is a
    vector of length m (a ValueError naming ``who``'s argument otherwise)."""
    if not isinstance(T, Stream) or T.components != FF or T.cols != T.rows:
        raise ValueError(f"float_float.{who}: {name} must be a square float-float (RG32F) stream ({what}), "
                         f"got {T!r}")
    m = T.rows
    shape = np.shape(r)
    if len(shape) != 1 or shape[0] != m:
        raise ValueError(f"float_float.{who}: r must be a vector of length {m} ({name} is {m} x {m}), got shape "
                         f"{shape}")
    return m


def solve(L: Stream, r, form: str = "block", block: int = BLOCK) -> np.ndarray:
    """z with L Lᵀ z = r, r and z float64 (uploaded and read back as float-float): a forward
    then a backward substitution, drawn from a plan pre-built once per order (:func:`solve_plan`).

    ``form="block"`` (default): ``block`` steps a pass (``substitution_block_ff``: each fragment
    solves the block with its diagonal part, then takes the block's terms off its own entry),
    2 ceil(m / block) passes; ``"column"``: one step a pass, each step dividing entry k and
    updating every unfinished entry from the state before it (``substitution_column_ff``), 2m
    passes; ``"inner"``: one step a pass, fragment k taking the inner product of row k with the
    finished entries (``substitution_inner_product_ff``). The three differ by float-float rounding.

    ``ValueError`` when L is not a square float-float stream, r not a vector of L's order, or
    ``block`` not an integer in 1 .. MAX_BLOCK (32).
    """
    if form not in SOLVE_FORMS:
        raise ValueError(f"form must be one of {SOLVE_FORMS}, got {form!r}")
    if isinstance(block, bool) or not isinstance(block, int) or not 1 <= block <= MAX_BLOCK:
        raise ValueError(f"block must be an integer from 1 to {MAX_BLOCK} (steps a pass), got {block!r}")
    m = _square_and_vector("solve", "L", "the factor from float_float.factor", L, r)
    pp = PingPong(upload(np.asarray(r, dtype=np.float64), "r"), Stream(1, m, components=FF, zero=False))
    try:
        # the 2m passes as one pre-built plan (its vertices written once per order and form)
        run(compiled(("float_float_solve", m, form, block), lambda: solve_plan(m, form, block)), pp, others={"L": L})
        return combine(pp.S)[0]
    finally:
        pp.S.release()
        pp.T.release()



def _check_steps(steps) -> None:
    if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= MAX_STEPS:
        raise ValueError(f"steps must be an integer from 1 to {MAX_STEPS} (Cholesky steps a pass), got {steps!r}")


def inverse_plan(m: int, tolerance: float, huge: float, steps: int = 1, block: int | None = None) -> list:
    """The passes of :func:`factor_with_inverse`: [0 | I] drawn into both halves of the ping-pong
    pair ("S", "T", m x 2m), M ("M0") copied into S's left half, the steps
    (:func:`gpgpu.cholesky.inverse_step_draws`: with ``steps=1`` one ``cholesky_inverse_step_ff``
    pass a step, m passes; with ``steps`` = 2 .. :data:`MAX_STEPS` one
    ``cholesky_inverse_steps_ff`` pass each ``steps`` steps, ceil(m / steps) passes; with
    ``block`` = b, :func:`gpgpu.cholesky.blocked_inverse_draws`: those passes over each block's
    panel, then the panel packed into "P4" and a ``cholesky_inverse_trailing_ff`` pass), then L
    and X copied out of T."""
    _check_steps(steps)
    check_block(block, steps)
    u = {"guarded": True, "tolerance": float(tolerance), "huge": float(huge), "m": m}
    identity = Rect.covering(m, 0, 2 * m, m)
    plan = [Draw(KERNELS["identity"], role, identity, {}, {"offset": float(m)}) for role in ("S", "T")]
    plan.append(Draw(KERNELS["copy"], "S", Rect.covering(0, 0, m, m, T0=lambda x, y: (x, y)), {"A": "M0"}))
    inputs = {"L": "S", "M0": "M0"}
    if block is None:
        plan += inverse_step_draws(m, steps, KERNELS["cholesky_inverse_step"], STEPS_KERNELS, inputs, u)
    else:
        plan += blocked_inverse_draws(m, block, KERNELS["cholesky_inverse_step"], TRAILING,
                                      inputs, u, steps, STEPS_KERNELS)
    plan += [Draw(KERNELS["copy"], "L", Rect.covering(0, 0, m, m, T0=lambda x, y: (x, y)), {"A": "T"}),
             Draw(KERNELS["copy"], "X", Rect.covering(0, 0, m, m, T0=lambda x, y: (x + m, y)), {"A": "T"})]
    return plan


def factor_with_inverse(M: Stream, tolerance: float = DEFAULT_PIVOT_TOL, huge: float = 1e30,
                        steps: int = STEPS, block: int | None = None) -> tuple:
    """(L, X = L⁻¹) of the float-float matrix M, guarded as :func:`factor`, in ceil(m / steps) + 5
    passes: ``steps`` steps of the factor and of its inverse in one pass over an m x 2m texture
    holding both (the float32 :func:`gpgpu.cholesky.factor_with_inverse` in float-float
    arithmetic; ``steps=1``: ``cholesky_inverse_step_ff``, a pass a step; 2 .. :data:`MAX_STEPS`:
    ``cholesky_inverse_steps_ff``, the block's pivots replayed by its vertex program), drawn from
    a plan pre-built once per order (:func:`inverse_plan`). L is the same factor as
    :func:`factor`'s (the same operations in the same order, whatever ``steps``). M is unchanged.

    ``block`` = b (an even number from 2 to ``gpgpu.cholesky.MAX_BLOCK``, a multiple of 2
    ``steps``): blocks of b columns, each a pass a step (or ``steps`` steps) over the block's panel
    and X's block rows, then the panel packed two columns a texel
    (``cholesky_inverse_panel_rgba_ff``) and one ``cholesky_inverse_trailing_ff`` pass taking the
    block's b terms off everything below it (:func:`gpgpu.cholesky.blocked_inverse_draws`),
    m + 2 ceil(m / b) + 3 passes with one step a pass: the texels below a block are written once a block instead of
    once a step. The same factor up to the order of float-float roundings.

    ``ValueError`` when M is not square float-float, 2m exceeds GL_MAX_TEXTURE_SIZE, ``steps``
    is not an integer from 1 to :data:`MAX_STEPS` or ``block`` not None or an even integer
    from 2 to ``gpgpu.cholesky.MAX_BLOCK`` that is a multiple of 2 ``steps``."""
    from . import context

    m = M.rows
    if M.components != FF or M.cols != m:
        raise ValueError(f"float_float.factor_with_inverse: M must be a square float-float (RG32F) stream, got {M!r}")
    if 2 * m > context.max_texture_size():
        raise ValueError(f"float_float.factor_with_inverse keeps the factor and its inverse side by side in one "
                         f"{m} x {2 * m} texture, wider than GL_MAX_TEXTURE_SIZE = {context.max_texture_size()}; "
                         "use float_float.factor and float_float.solve")
    inverse_plan(1, tolerance, huge, steps, block)          # the arguments' errors before any texture
    plan = compiled(("cholesky_inverse_ff", m, float(tolerance), float(huge), steps, block),
                    lambda: inverse_plan(m, tolerance, huge, steps, block))
    L, X = Stream(m, m, components=FF, zero=False), Stream(m, m, components=FF, zero=False)
    pp = P4 = None
    try:
        pp = PingPong(Stream(m, 2 * m, components=FF), Stream(m, 2 * m, components=FF))
        P4 = packed_panel(m, block, TRAILING)
        run(plan, pp, others={"M0": M, "L": L, "X": X, "P4": P4})
    except BaseException:
        L.release()
        X.release()
        raise
    finally:
        for s in (pp, P4):
            if s is not None:
                s.release()
    return L, X


def solve_with_inverse(X: Stream, r) -> np.ndarray:
    """z with L Lᵀ z = r from X = L⁻¹ (:func:`factor_with_inverse`): y = X r, z = Xᵀ y, each a
    :data:`TRIANGULAR_PRODUCT` (by default one ``triangular_product_ff`` pass); r and z float64 (uploaded and read back as float-float).
    ``ValueError`` for an X that is not square float-float or an r of another length."""
    m = _square_and_vector("solve_with_inverse", "X", "the inverse from float_float.factor_with_inverse", X, r)
    with upload(np.asarray(r, dtype=np.float64), "r") as v, Stream(1, m, components=FF, zero=False) as y, \
            Stream(1, m, components=FF, zero=False) as z:
        TRIANGULAR_PRODUCT.draw(X, v, y)
        TRIANGULAR_PRODUCT.draw(X, y, z, transposed=True)
        return combine(z)[0]
