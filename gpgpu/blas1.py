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
    """Copy a vector or matrix on the GPU.

    The copy kernel of Algorithm 2 of paper 000: one rectangle over the whole stream, each
    fragment fetching its texel at WPOS. ``label="copy_input"`` counts the pass as the "Copy A
    to S" that starts a factorization, apart from the copies of each step.

    Parameters
    ----------
    x : ndarray or Stream
        The vector or matrix to copy.
    out : Stream, optional
        A stream of x's shape to render into (not x itself); default a new stream.
    label : {"copy", "copy_input"}, optional
        The name the pass is counted under.

    Returns
    -------
    ndarray or Stream
        The copy: a float64 array for array input, else a Stream (``out`` when given).

    Raises
    ------
    ValueError
        If ``out`` does not have x's shape.

    See Also
    --------
    fill, scale

    Examples
    --------
    >>> import numpy as np
    >>> import gpgpu
    >>> x = np.arange(6.0).reshape(2, 3)
    >>> y = gpgpu.copy(x)
    >>> y.shape, bool(np.array_equal(y, x))
    ((2, 3), True)
    """
    return _elementwise("copy" if label == "copy" else "copy_input", x, {"A": x}, out=out)


def fill(shape, value: float, out: Stream | None = None) -> Stream:
    """Fill a stream with a constant.

    One pass of the constant kernel over the whole stream (paper 000, level 1 kernels). A
    length n makes a vector stream (folded into rows when n is long); the texels past a folded
    vector's end are left alone.

    Parameters
    ----------
    shape : int or tuple of int
        A vector's length n, or (rows, cols).
    value : float
        The value of every texel.
    out : Stream, optional
        The stream to fill instead of a new one (``shape`` is then ignored).

    Returns
    -------
    Stream
        The filled stream (``out`` when given), which the caller releases.

    See Also
    --------
    copy

    Examples
    --------
    >>> import numpy as np
    >>> import gpgpu
    >>> s = gpgpu.fill((2, 3), 2.5)
    >>> s.shape, bool(np.all(s.to_array() == 2.5))
    ((2, 3), True)
    >>> s.release()
    """
    if out is None:
        if isinstance(shape, int):
            out = Stream.vector_of(shape)
        else:
            out = Stream(*shape)
    KERNELS["fill"].draw(out, whole(out), uniforms={"value": float(value)})
    return out


def saxpy(a: float, x, y, out: Stream | None = None):
    """Compute a * x + y element by element.

    The saxpy kernel of paper 000's level 1 operations: one pass, each fragment reading x and
    y at its position.

    Parameters
    ----------
    a : float
        The scalar.
    x : ndarray or Stream
        The vector or matrix scaled.
    y : ndarray or Stream
        The vector or matrix added, of x's shape.
    out : Stream, optional
        A stream of x's shape to render into (neither x nor y); default a new stream.

    Returns
    -------
    ndarray or Stream
        a * x + y: a float64 array for array x, else a Stream (``out`` when given).

    Raises
    ------
    ValueError
        If x, y and ``out`` do not have one shape.

    See Also
    --------
    scale, add_scalar

    Examples
    --------
    >>> import numpy as np
    >>> import gpgpu
    >>> x, y = np.arange(4.0), np.ones(4)
    >>> bool(np.allclose(gpgpu.saxpy(2.0, x, y), 2.0 * x + y))
    True
    """
    return _elementwise("saxpy", x, {"X": x, "Y": y}, {"alpha": float(a)}, out)


def scale(a: float, x, out: Stream | None = None):
    """Compute a * x element by element.

    A variant of paper 000's level 1 saxpy kernel without the added vector: one pass over the
    whole stream.

    Parameters
    ----------
    a : float
        The scalar.
    x : ndarray or Stream
        The vector or matrix scaled.
    out : Stream, optional
        A stream of x's shape to render into (not x itself); default a new stream.

    Returns
    -------
    ndarray or Stream
        a * x: a float64 array for array x, else a Stream (``out`` when given).

    Raises
    ------
    ValueError
        If ``out`` does not have x's shape.

    See Also
    --------
    saxpy, add_scalar

    Examples
    --------
    >>> import numpy as np
    >>> import gpgpu
    >>> x = np.array([1.0, -2.0, 3.0])
    >>> bool(np.allclose(gpgpu.scale(0.5, x), 0.5 * x))
    True
    """
    return _elementwise("scale", x, {"X": x}, {"alpha": float(a)}, out)


def add_scalar(x, a: float, out: Stream | None = None):
    """Add a scalar to every element: x + a.

    A variant of paper 000's level 1 saxpy kernel with a constant in place of the vector: one
    pass over the whole stream.

    Parameters
    ----------
    x : ndarray or Stream
        The vector or matrix.
    a : float
        The scalar added.
    out : Stream, optional
        A stream of x's shape to render into (not x itself); default a new stream.

    Returns
    -------
    ndarray or Stream
        x + a: a float64 array for array x, else a Stream (``out`` when given).

    Raises
    ------
    ValueError
        If ``out`` does not have x's shape.

    See Also
    --------
    saxpy, scale

    Examples
    --------
    >>> import numpy as np
    >>> import gpgpu
    >>> x = np.arange(4.0)
    >>> bool(np.allclose(gpgpu.add_scalar(x, 1.5), x + 1.5))
    True
    """
    return _elementwise("add_scalar", x, {"X": x}, {"alpha": float(a)}, out)


def multiply(x, y, out: Stream | None = None):
    """Compute the element-wise product x .* y.

    Paper 000's level 1 element-wise product, the first step of paper 003's inner product
    (Fig. 1): one pass over the whole stream.

    Parameters
    ----------
    x : ndarray or Stream
        The first factor.
    y : ndarray or Stream
        The second factor, of x's shape.
    out : Stream, optional
        A stream of x's shape to render into (neither x nor y); default a new stream.

    Returns
    -------
    ndarray or Stream
        x .* y: a float64 array for array x, else a Stream (``out`` when given).

    Raises
    ------
    ValueError
        If x, y and ``out`` do not have one shape.

    See Also
    --------
    divide, dot

    Examples
    --------
    >>> import numpy as np
    >>> import gpgpu
    >>> x, y = np.arange(4.0), np.array([2.0, 2.0, -1.0, 0.5])
    >>> bool(np.allclose(gpgpu.multiply(x, y), x * y))
    True
    """
    return _elementwise("elementwise_product", x, {"X": x, "Y": y}, out=out)


def divide(x, y, out: Stream | None = None):
    """Compute the element-wise quotient x ./ y.

    A variant of paper 000's level 1 saxpy kernel: one pass over the whole stream. A zero in y
    gives what the GPU's division gives (no error is raised).

    Parameters
    ----------
    x : ndarray or Stream
        The dividend.
    y : ndarray or Stream
        The divisor, of x's shape.
    out : Stream, optional
        A stream of x's shape to render into (neither x nor y); default a new stream.

    Returns
    -------
    ndarray or Stream
        x ./ y: a float64 array for array x, else a Stream (``out`` when given).

    Raises
    ------
    ValueError
        If x, y and ``out`` do not have one shape.

    See Also
    --------
    multiply

    Examples
    --------
    >>> import numpy as np
    >>> import gpgpu
    >>> x, y = np.array([1.0, 4.0, 9.0]), np.array([2.0, 4.0, 3.0])
    >>> bool(np.allclose(gpgpu.divide(x, y), x / y))
    True
    """
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
    """Compute the inner product x^T y on the GPU.

    The element-wise product, then a sum reduction (paper 000, level 1; paper 003, Figs. 1-3).
    ``strategy`` picks the reduction: 000's halving passes ("pingpong"), 003's pyramid
    ("pyramid": the products drawn straight into its power-of-two base,
    :func:`gpgpu.reduce.dot_pyramid`) or, beyond the papers, "fan" (:mod:`gpgpu.reduce`).

    Parameters
    ----------
    x : ndarray or Stream
        The first vector (or matrix, all its elements).
    y : ndarray or Stream
        The second, of x's shape.
    stream : bool, optional
        True: answer the 1 x 1 Stream, False: a float; default by the kind of x.
    strategy : {"pingpong", "pyramid", "fan"}, optional
        The reduction's passes.

    Returns
    -------
    float or Stream
        A float for array x (one read-back), else the 1 x 1 Stream that holds it (none).

    Raises
    ------
    ValueError
        If x and y differ in shape, or ``strategy`` is unknown.

    See Also
    --------
    multiply, reduce

    Examples
    --------
    >>> import numpy as np
    >>> import gpgpu
    >>> x, y = np.arange(8.0), np.ones(8)
    >>> round(gpgpu.dot(x, y), 3)
    28.0
    >>> round(gpgpu.dot(x, x, strategy="pyramid"), 3)
    140.0
    """
    if strategy == "pyramid":       # 003: the products drawn straight into the pyramid's base
        return _reduce(x, None, {"X": x, "Y": y}, "sum", stream, strategy, dot_pyramid)
    return _reduce(x, "elementwise_product", {"X": x, "Y": y}, "sum", stream, strategy)


def norm_inf(x, stream: bool | None = None, strategy: str = "pingpong"):
    """Compute the infinity norm max_i |x_i| on the GPU.

    Paper 000's level 1 inf_norm: the abs-max reduction, with no element-wise pass before it.

    Parameters
    ----------
    x : ndarray or Stream
        The vector (or matrix, all its elements).
    stream : bool, optional
        True: answer the 1 x 1 Stream, False: a float; default by the kind of x.
    strategy : {"pingpong", "fan"}, optional
        The reduction's passes (:func:`reduce`).

    Returns
    -------
    float or Stream
        A float for array x (one read-back), else the 1 x 1 Stream that holds it (none).

    Raises
    ------
    ValueError
        If ``strategy`` is unknown or "pyramid" (a sum only).

    See Also
    --------
    dot, reduce

    Examples
    --------
    >>> import numpy as np
    >>> import gpgpu
    >>> round(gpgpu.norm_inf(np.array([1.0, -3.5, 2.0])), 3)
    3.5
    """
    return _reduce(x, None, {"X": x}, "absmax", stream, strategy)


def max_step(x, dx, stream: bool | None = None):
    """Compute the largest step alpha in [0, 1] with x + alpha dx >= 0.

    The line search of Algorithm 3 of paper 000, (4.15)-(4.16): the ratio kernel, then a min
    reduction by halving passes.

    Parameters
    ----------
    x : ndarray or Stream
        The current point, x >= 0.
    dx : ndarray or Stream
        The direction, of x's shape.
    stream : bool, optional
        True: answer the 1 x 1 Stream, False: a float; default by the kind of x.

    Returns
    -------
    float or Stream
        A float for array x (one read-back), else the 1 x 1 Stream that holds it (none).

    Raises
    ------
    ValueError
        If x and dx differ in shape.

    See Also
    --------
    dot

    Examples
    --------
    >>> import numpy as np
    >>> import gpgpu
    >>> x, dx = np.array([1.0, 2.0, 3.0]), np.array([-4.0, 1.0, -1.0])
    >>> round(gpgpu.max_step(x, dx), 3)
    0.25
    >>> round(gpgpu.max_step(x, np.ones(3)), 3)
    1.0
    """
    return _reduce(x, "step_ratio", {"X": x, "DX": dx}, "min", stream)
