"""Level 2 kernels (paper 000, section 4.2): sgemv in its singlepass inner-product and multipass
outer-product forms, and forward/backward substitution with a triangular stream.

A vector is a 1-row stream. Functions take numpy arrays or Streams and answer in the kind of
the matrix argument.
"""
from __future__ import annotations

from .blas1 import KERNELS as L1, whole
from .geometry import Rect, Texel
from .kernel import Kernel
from .stream import Operands, PingPong, Stream, borrow, give_back
from .dense_common import first_bad_pivot
from .errors import SingularMatrixError

__all__ = ["gemv", "trsv", "KERNELS"]

KERNELS = {
    "inner": Kernel("matrix_vector_inner_product", texels=3, doc="000 level 2 sgemv, inner product form"),
    "outer": Kernel("matrix_vector_outer_product", texels=4, doc="000 level 2 sgemv, outer product form"),
    "division": Kernel("substitution_division", texels=3, doc="000 level 2 substitution, x_k = b_k / T_kk"),
    "update": Kernel("substitution_update", texels=4, doc="000 level 2 substitution, b_i -= T_ik x_k"),
    "update_transposed": Kernel("substitution_update_transposed", texels=4,
                                doc="000 level 2 substitution with T^T by the swizzle .yx"),
    "inner_substitution": Kernel("substitution_inner_product", texels=3,
                                 doc="000 level 2 substitution, inner-product form, one pass a step"),
}

SUBSTITUTION_FORMS = ("outer", "inner")


def _vector(s: Stream, n: int, what: str) -> None:
    if s.rows != 1 or s.cols != n:
        raise ValueError(f"{what}: expected a vector of length {n}, got a stream of shape {s.shape}")


def gemv(A, x, y=None, alpha: float = 1.0, beta: float = 0.0, transpose: bool = False,
         form: str = "inner", out: Stream | None = None):
    """Compute the matrix-vector product alpha * op(A) x + beta * y, op(A) = A or A^T.

    Paper 000's level 2 sgemv in its two forms. ``form="inner"`` (singlepass): one pass, each
    fragment of the result looping along its row of A (its column for A^T). ``form="outer"``
    (multipass): one pass per column of op(A), ping-ponging the partial result.

    Parameters
    ----------
    A : ndarray or Stream
        The m x n matrix.
    x : ndarray or Stream
        The vector multiplied, of length n (m with ``transpose``).
    y : ndarray or Stream, optional
        The vector added, of length m (n with ``transpose``); read only when beta != 0.
    alpha : float, optional
        The factor of op(A) x.
    beta : float, optional
        The factor of y.
    transpose : bool, optional
        Multiply by A^T instead of A (the same texture, read along its columns).
    form : {"inner", "outer"}, optional
        The singlepass inner-product or multipass outer-product form.
    out : Stream, optional
        A vector stream of the result's length to render into; default a new one.

    Returns
    -------
    ndarray or Stream
        The result vector: a float64 array for array A, else a Stream (``out`` when given).

    Raises
    ------
    ValueError
        If ``form`` is unknown or a vector's length does not fit A.

    See Also
    --------
    trsv, dot

    Examples
    --------
    >>> import numpy as np
    >>> import gpgpu
    >>> A, x = np.arange(12.0).reshape(3, 4), np.ones(4)
    >>> y = gpgpu.gemv(A, x)
    >>> y.shape, bool(np.allclose(y, A @ x))
    ((3,), True)
    >>> bool(np.allclose(gpgpu.gemv(A, np.ones(3), transpose=True, form="outer"), A.T @ np.ones(3)))
    True
    """
    if form not in ("inner", "outer"):
        raise ValueError(f"form must be 'inner' or 'outer', got {form!r}")
    with Operands(A) as ops:
        As = ops.stream(A, "A")
        xs = ops.stream(x, "x")
        m, n = As.shape
        rows_out, inner = (n, m) if transpose else (m, n)
        _vector(xs, inner, "gemv x")
        ys = None
        if y is not None and beta != 0.0:
            ys = ops.stream(y, "y")
            _vector(ys, rows_out, "gemv y")
        target = out if out is not None else Stream(1, rows_out, vector=True, zero=False)   # covered whole
        _vector(target, rows_out, "gemv out")
        if form == "inner":
            # T0 at vertex x: the start of row x of A, (0, x), or of column x for A^T, (x, 0)
            T0 = (lambda X, Y: (X, 0.0)) if transpose else (lambda X, Y: (0.0, X))
            KERNELS["inner"].draw(
                target, Rect.covering(0, 0, rows_out, 1, T0=T0, T1=(0.5, 0.5)),
                {"A": As, "X": xs, "Y": ys if ys is not None else xs},
                {"n": inner, "stride": (0.0, 1.0) if transpose else (1.0, 0.0),
                 "alpha": float(alpha), "beta": float(beta) if ys is not None else 0.0},
                texels=2 * inner + 2)
        else:
            pp = PingPong(borrow(1, rows_out), borrow(1, rows_out))
            if ys is not None:
                L1["scale"].draw(pp.S, whole(pp.S), {"X": ys}, {"alpha": float(beta)})
            else:
                L1["fill"].draw(pp.S, whole(pp.S), uniforms={"value": 0.0})
            for j in range(inner):
                last = j == inner - 1
                dst = target if last else pp.T
                # column j of A (row j for A^T), interpolated along the output vector
                T0 = (lambda X, Y, j=j: (X, j + 0.5)) if transpose else (lambda X, Y, j=j: (j + 0.5, X))
                KERNELS["outer"].draw(dst, Rect.covering(0, 0, rows_out, 1, T0=T0, T1=(j + 0.5, 0.5)),
                                      {"A": As, "X": xs, "Y": pp.S}, {"alpha": float(alpha)})
                pp.swap()
            give_back(pp.S, pp.T)
        return ops.result(target)


class FullLayout:
    """Where T(i, j) of an n x n triangular stream lives: texel (j, i)."""

    def __init__(self, n: int):
        self.n = n

    def diagonal(self, k: int) -> tuple:
        return (k + 0.5, k + 0.5)

    def column(self, k: int, i0: int, i1: int):
        """Rectangles [x0, x1) of the vector and T0 generators reading T(i, k), i in [i0, i1)."""
        return [(i0, i1, lambda X, Y, k=k: (k + 0.5, X), KERNELS["update"])]

    def row(self, k: int, i0: int, i1: int):
        """... reading T(k, i): column coordinates, swizzled to the row by the kernel (.yx)."""
        return [(i0, i1, lambda X, Y, k=k: (k + 0.5, X), KERNELS["update_transposed"])]


def substitute(Ts: Stream, bs: Stream, forward: bool, by_rows: bool, unit_diagonal: bool,
               layout, out: Stream | None = None, form: str = "outer") -> Stream:
    """Forward (``forward``) or backward substitution, multipass, with ping-pong.

    ``form="outer"`` (column-oriented, the default): step k (1) the texel x_k = b_k / T(k, k)
    into T, (2) a copy of that texel back into S, (3) a rectangle over the remaining entries
    b_i -= T(i, k) x_k (``by_rows``: T(k, i)) into T, (4) swap. Every finished x_k is written
    to both streams, as the finished columns are in Algorithm 2 of paper 000, so after the
    last step either stream holds x. Three passes a step.

    ``form="inner"`` (row-oriented; beyond the paper's listing, full layout only): step k is
    one pass over the whole vector into T, whose fragment k computes x_k = (b_k - sum_j T(k, j)
    x_j) / T(k, k) over the finished j as an inner product and whose other fragments copy S;
    then swap. One pass a step (n fragments each), no update rectangles.
    """
    if form not in SUBSTITUTION_FORMS:
        raise ValueError(f"substitution form must be one of {SUBSTITUTION_FORMS}, got {form!r}")
    n = bs.cols
    pp = PingPong(borrow(1, n), borrow(1, n))
    L1["copy"].draw(pp.S, whole(pp.S), {"A": bs})
    steps = range(n) if forward else range(n - 1, -1, -1)
    if form == "inner":
        if not isinstance(layout, FullLayout):
            raise ValueError("the inner-product substitution reads the full m x m layout; the packed "
                             "format uses form='outer'")
        for k in steps:
            KERNELS["inner_substitution"].draw(
                pp.T, whole(pp.T), {"X": pp.S, "T": Ts},
                {"k": k, "n": n, "forward": bool(forward), "by_rows": bool(by_rows),
                 "unit_diagonal": bool(unit_diagonal)})
            pp.swap()
    else:
        for k in steps:
            KERNELS["division"].draw(pp.T, Texel.at(k, 0, T0=layout.diagonal(k)), {"B": pp.S, "T": Ts},
                                     {"unit_diagonal": bool(unit_diagonal)})
            L1["copy"].draw(pp.S, Texel.at(k, 0, T0=lambda X, Y: (X, Y)), {"A": pp.T})
            i0, i1 = (k + 1, n) if forward else (0, k)
            if i1 > i0:
                pieces = layout.row(k, i0, i1) if by_rows else layout.column(k, i0, i1)
                for x0, x1, T0, kernel in pieces:
                    kernel.draw(pp.T, Rect.covering(x0, 0, x1, 1, T0=T0, T1=(k + 0.5, 0.5)), {"B": pp.S, "T": Ts})
            pp.swap()
    target = out if out is not None else Stream(1, n, vector=True)
    L1["copy"].draw(target, whole(target), {"A": pp.S})
    give_back(pp.S, pp.T)
    return target


def trsv(T, b, lower: bool = True, transpose: bool = False, unit_diagonal: bool = False,
         out: Stream | None = None, form: str = "outer"):
    """Solve the triangular system op(T) x = b, op(T) = T or T^T.

    Paper 000's level 2 forward and backward substitution: forward for a lower T (or T^T with
    T upper), backward for an upper T (or T^T with T lower). With ``transpose`` the kernel
    reads row k of T through the swizzle ``.yx`` of the column coordinates, so L^T x = y is
    solved while only L is stored. Only the triangle named by ``lower`` is read. The diagonal
    is checked on the GPU first, unless ``unit_diagonal``.

    Parameters
    ----------
    T : ndarray or Stream
        The n x n triangular matrix.
    b : ndarray or Stream
        The right-hand side, of length n.
    lower : bool, optional
        T is lower triangular (else upper).
    transpose : bool, optional
        Solve T^T x = b.
    unit_diagonal : bool, optional
        Take the diagonal of T as ones without reading it.
    out : Stream, optional
        A vector stream of length n to render x into; default a new one.
    form : {"outer", "inner"}, optional
        Three passes a step (column-oriented) or one (row-oriented, :func:`substitute`).

    Returns
    -------
    ndarray or Stream
        x: a float64 array for array T, else a Stream (``out`` when given).

    Raises
    ------
    SingularMatrixError
        If a diagonal entry of T is zero or not finite.
    ValueError
        If T is not square, b's length does not fit, or ``form`` is unknown.

    See Also
    --------
    gemv, gpgpu.cho_solve

    Examples
    --------
    >>> import numpy as np
    >>> import gpgpu
    >>> L = np.tril(np.ones((4, 4))) + 3.0 * np.eye(4)
    >>> b = np.arange(1.0, 5.0)
    >>> bool(np.allclose(L @ gpgpu.trsv(L, b), b, atol=1e-5))
    True
    >>> bool(np.allclose(L.T @ gpgpu.trsv(L, b, transpose=True, form="inner"), b, atol=1e-5))
    True
    """
    with Operands(T) as ops:
        Ts = ops.stream(T, "T")
        bs = ops.stream(b, "b")
        n = Ts.rows
        if Ts.cols != n:
            raise ValueError(f"trsv: T must be square, got shape {Ts.shape}")
        _vector(bs, n, "trsv b")
        if not unit_diagonal:  # a zero on the diagonal would divide by zero: a named error

            k = first_bad_pivot(Ts, n, "full", magnitude=True)
            if k is not None:
                raise SingularMatrixError(k, n, what=f"the triangular solve with the {n} x {n} "
                                          f"matrix T (T[{k}, {k}] is zero or not finite)")
        forward = lower != transpose
        x = substitute(Ts, bs, forward=forward, by_rows=transpose, unit_diagonal=unit_diagonal,
                       layout=FullLayout(n), out=out, form=form)
        return ops.result(x)
