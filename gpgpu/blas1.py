"""Level 1 kernels (paper 000, section 4.2): copy, fill, saxpy and its variants, inner product,
infinity norm and the line-search kernel of Algorithm 3.

Each function takes numpy arrays or Streams and answers in the kind of its first argument.
Element-wise kernels draw one rectangle over the whole stream and fetch at WPOS; ``out=``
renders into a given stream instead of a new one (it must not be an input).
"""
from __future__ import annotations

from .geometry import Rect, Triangle
from .kernel import Kernel
from .reduce import dot_pyramid, reduce_region
from .stream import Operands, Stream, borrow, give_back

__all__ = ["copy", "fill", "saxpy", "scale", "add_scalar", "multiply", "divide", "dot", "norm_inf",
           "max_step", "KERNELS"]

KERNELS = {
    "copy": Kernel("copy", texels=2, doc="000 Algorithm 2 copy kernel"),
    "fill": Kernel("fill", texels=1, doc="constant"),
    "saxpy": Kernel("saxpy", texels=3, doc="000 level 1 saxpy"),
    "scale": Kernel("scale", texels=2, doc="000 level 1 saxpy variant a*x"),
    "add_scalar": Kernel("add_scalar", texels=2, doc="000 level 1 saxpy variant x+a"),
    "elementwise_product": Kernel("elementwise_product", texels=3, doc="000 level 1; 003 Fig. 1"),
    "elementwise_quotient": Kernel("elementwise_quotient", texels=3, doc="000 level 1 saxpy variant"),
    "step_ratio": Kernel("step_ratio", texels=3, doc="000 Algorithm 3 line search, (4.15)-(4.16)"),
    "blocking_ratio": Kernel("blocking_ratio", texels=3, doc="line search with the blocking index"),
    "copy_input": Kernel("copy", texels=2, doc="000 Algorithm 2: Copy A to S", label="copy_input"),
}


_WHOLE: dict = {}   # (rows, cols, length) -> the primitive; primitives are immutable


def whole(s: Stream):
    """The rectangle over every texel of ``s``, with T0 = the window position; for a folded
    vector, the texels that hold its entries (full rows and the used part of the last row, two
    rectangles as four triangles), so that element-wise kernels leave the zero tail alone.
    Built once per shape (host cost: the interior point methods draw thousands)."""
    key = (s.rows, s.cols, s.length if s.vector else None)
    prim = _WHOLE.get(key)
    if prim is None:
        regions = s.regions()
        if len(regions) == 1:
            prim = Rect.covering(*regions[0], T0=lambda x, y: (x, y))
        else:
            prim = Triangle.from_rects(regions, T0=lambda x, y: (x, y))
        if len(_WHOLE) > 256:
            _WHOLE.clear()
        _WHOLE[key] = prim
    return prim


def _same_shape(*streams: Stream) -> None:
    shapes = {s.shape for s in streams}
    if len(shapes) > 1:
        raise ValueError(f"operands must have the same shape, got {sorted(shapes)}")


def _target(like: Stream, out: Stream | None) -> Stream:
    if out is None:
        # whole() covers every texel unless the vector is folded with a tail (kept zero)
        return Stream.like(like, zero=like.vector and like.length < like.rows * like.cols)
    if out.shape != like.shape:
        raise ValueError(f"out has shape {out.shape}, expected {like.shape}")
    return out


def _elementwise(kernel: str, first, arrays: dict, uniforms=None, out=None):
    with Operands(first) as ops:
        streams = {name: ops.stream(a, name.lower()) for name, a in arrays.items()}
        _same_shape(*streams.values())
        like = next(iter(streams.values()))
        target = _target(like, out)
        KERNELS[kernel].draw(target, whole(target), streams, uniforms)
        return ops.result(target)


def copy(x, out: Stream | None = None, label: str = "copy"):
    """A copy of x (the copy kernel of Algorithm 2 of 000). ``label="copy_input"`` counts it as
    the "Copy A to S" that starts a factorization, apart from the copies of each step."""
    return _elementwise("copy" if label == "copy" else "copy_input", x, {"A": x}, out=out)


def fill(shape, value: float, out: Stream | None = None) -> Stream:
    """A new stream of ``shape`` (rows, cols) or length n, every texel ``value``."""
    if out is None:
        if isinstance(shape, int):
            out = Stream.vector_of(shape)
        else:
            out = Stream(*shape)
    KERNELS["fill"].draw(out, whole(out), uniforms={"value": float(value)})
    return out


def saxpy(a: float, x, y, out: Stream | None = None):
    """a * x + y."""
    return _elementwise("saxpy", x, {"X": x, "Y": y}, {"alpha": float(a)}, out)


def scale(a: float, x, out: Stream | None = None):
    """a * x."""
    return _elementwise("scale", x, {"X": x}, {"alpha": float(a)}, out)


def add_scalar(x, a: float, out: Stream | None = None):
    """x + a, element by element."""
    return _elementwise("add_scalar", x, {"X": x}, {"alpha": float(a)}, out)


def multiply(x, y, out: Stream | None = None):
    """The element-wise product x .* y."""
    return _elementwise("elementwise_product", x, {"X": x, "Y": y}, out=out)


def divide(x, y, out: Stream | None = None):
    """The element-wise quotient x ./ y."""
    return _elementwise("elementwise_quotient", x, {"X": x, "Y": y}, out=out)


def _reduce(first, kernel: str | None, arrays: dict, op: str, stream: bool | None, strategy: str = "pingpong",
            reduction=None):
    """Optional element-wise kernel, then a reduction to 1 x 1 (``strategy`` as in
    :func:`gpgpu.reduce.reduce_region`); or ``reduction(*streams)``, both in one. Answers a
    float for numpy input (one read-back) and the 1 x 1 Stream for Stream input, unless
    ``stream`` says otherwise."""
    with Operands(first) as ops:
        streams = {name: ops.stream(a, name.lower()) for name, a in arrays.items()}
        _same_shape(*streams.values())
        like = next(iter(streams.values()))
        if reduction is not None:
            res = reduction(*streams.values())
        elif kernel is None:
            res = reduce_region(like, op, strategy=strategy)
        else:
            tmp = borrow(like.rows, like.cols)
            KERNELS[kernel].draw(tmp, whole(tmp), streams)
            res = reduce_region(tmp, op, strategy=strategy)
            give_back(tmp)
        if (not ops.numpy) if stream is None else stream:
            return res
        value = res.item()
        res.release()
        return value


def dot(x, y, stream: bool | None = None, strategy: str = "pingpong"):
    """The inner product: element-wise product, then sum reduction (paper 000 level 1;
    paper 003 Figs. 1-3). A float for numpy input (one read-back); for Stream input the 1 x 1
    stream that holds it (no read-back). ``stream=True/False`` forces either. ``strategy``:
    the reduction's, 000's halving passes ("pingpong"), 003's pyramid ("pyramid": the products
    drawn straight into its power-of-two base, ``gpgpu.reduce.dot_pyramid``) or, beyond the
    papers, "fan" (:mod:`gpgpu.reduce`)."""
    if strategy == "pyramid":       # 003: the products drawn straight into the pyramid's base
        return _reduce(x, None, {"X": x, "Y": y}, "sum", stream, strategy, dot_pyramid)
    return _reduce(x, "elementwise_product", {"X": x, "Y": y}, "sum", stream, strategy)


def norm_inf(x, stream: bool | None = None, strategy: str = "pingpong"):
    """max_i |x_i| by the abs-max reduction (paper 000 inf_norm); returns like ``dot``."""
    return _reduce(x, None, {"X": x}, "absmax", stream, strategy)


def max_step(x, dx, stream: bool | None = None):
    """The largest alpha in [0, 1] with x + alpha dx >= 0 (Algorithm 3 of 000, (4.15)-(4.16)):
    the ratio kernel, then a min reduction; returns like ``dot``."""
    return _reduce(x, "step_ratio", {"X": x, "DX": dx}, "min", stream)
