"""Primitives that launch kernels: rectangles, oversized triangles, single texels, lines.

A primitive is a list of vertices; a vertex is a window position ``V`` plus its texture
coordinate sets ``T0`` and ``T1`` (vec3 each, unused components 0), all in texel units of
the target stream, exactly as the papers' figures give them (for example the triangle
``V(k+1, k+.5), V(k+1, m), V(m+.5, m)`` of Fig. 5 of paper 001). The rasterizer shades every
fragment whose centre ``(x + .5, y + .5)`` lies inside the primitive and interpolates T0 and
T1 linearly to that centre. The half-texel offsets of the papers keep every centre off the
edges, so coverage is exact.

These objects are pure and cheap; the algorithms build one per pass.
"""
from __future__ import annotations

import struct
from typing import Callable, Iterable, NamedTuple, Sequence, Union

__all__ = ["Vertex", "Primitive", "Rect", "Triangle", "Texel", "Line", "vertex"]

# OpenGL primitive modes (moderngl.TRIANGLES etc. have these values)
_POINTS, _LINES, _TRIANGLES, _TRIANGLE_FAN = 0x0000, 0x0001, 0x0004, 0x0006

Coord = Union[float, int]
TexGen = Union[None, Sequence[Coord], Callable[[float, float], Sequence[Coord]]]


class Vertex(NamedTuple):
    """A window position V = (x, y) with texture coordinates T0 and T1 (3 components each)."""

    V: tuple
    T0: tuple = (0.0, 0.0, 0.0)
    T1: tuple = (0.0, 0.0, 0.0)


def _vec3(t) -> tuple:
    t = tuple(float(c) for c in t)
    if len(t) > 3:
        raise ValueError(f"texture coordinates have at most 3 components, got {t}")
    return t + (0.0,) * (3 - len(t))


def vertex(V, T0=(), T1=()) -> Vertex:
    """A vertex as the figures write it: ``vertex((k+1, k+.5), T0=(k+.5, k+.5), T1=(k+1, k+.5))``."""
    x, y = V
    return Vertex((float(x), float(y)), _vec3(T0), _vec3(T1))


def _vec3_padded(t) -> tuple:
    n = len(t)
    if n == 2:
        return (t[0], t[1], 0.0)
    if n == 3:
        return tuple(t)
    if n > 3:
        raise ValueError(f"texture coordinates have at most 3 components, got {tuple(t)}")
    return (*t, *(0.0,) * (3 - n))


_ZERO3 = (0.0, 0.0, 0.0)


def _flat(corners, T0: TexGen, T1: TexGen) -> bytes:
    """Vertex buffer contents for corner positions with generated texture coordinates.

    This runs for every pass, so it is written for speed: a flat list of floats per vertex
    (V.xy, T0.xyz, T1.xyz) packed as float32.
    """
    c0, c1 = callable(T0), callable(T1)
    t0 = _ZERO3 if T0 is None or c0 else _vec3_padded(T0)
    t1 = _ZERO3 if T1 is None or c1 else _vec3_padded(T1)
    out = []
    for x, y in corners:
        out += (x, y)
        if c0:
            a = T0(x, y)
            out += (a[0], a[1], 0.0) if len(a) == 2 else _vec3_padded(a)
        else:
            out += t0
        if c1:
            b = T1(x, y)
            out += (b[0], b[1], 0.0) if len(b) == 2 else _vec3_padded(b)
        else:
            out += t1
    return _pack(out)


_structs: dict = {}


def _pack(floats: list) -> bytes:
    """float32 bytes of a list of numbers (struct is the fastest way for a few dozen)."""
    n = len(floats)
    st = _structs.get(n)
    if st is None:
        st = _structs[n] = struct.Struct(f"{n}f")
    return st.pack(*floats)


class Primitive:
    """Vertices drawn with one OpenGL primitive mode in one pass."""

    mode = _TRIANGLES
    kind = "primitive"

    __slots__ = ("_vertices", "_data")

    def __init__(self, vertices: Iterable[Vertex] = (), *, _data: bytes | None = None):
        if _data is not None:
            self._data, self._vertices = _data, None
        else:
            self._vertices = tuple(v if isinstance(v, Vertex) else vertex(*v) for v in vertices)
            self._data = _pack([c for v in self._vertices for c in (*v.V, *v.T0, *v.T1)])
        self._validate()

    @property
    def vertices(self) -> tuple:
        """The vertices, in the order of the figure they come from."""
        if self._vertices is None:
            d = struct.unpack(f"{len(self._data) // 4}f", self._data)
            self._vertices = tuple(Vertex(tuple(d[i:i + 2]), tuple(d[i + 2:i + 5]), tuple(d[i + 5:i + 8]))
                                   for i in range(0, len(d), 8))
        return self._vertices

    def _validate(self) -> None:
        pass

    @classmethod
    def join(cls, *parts: "Primitive") -> "Primitive":
        """One primitive drawing the vertices of several, in one pass (e.g. two lines)."""
        return cls(_data=b"".join(p.data() for p in parts))

    def data(self) -> bytes:
        """The vertex buffer contents: per vertex V.xy, T0.xyz, T1.xyz as float32."""
        return self._data

    def __len__(self) -> int:
        return len(self._data) // 32

    def __iter__(self):
        return iter(self.vertices)

    def __repr__(self) -> str:
        pts = ", ".join(f"({v.V[0]:g}, {v.V[1]:g})" for v in self.vertices)  # noqa: E501
        return f"{type(self).__name__}({pts})"


class Triangle(Primitive):
    """One triangle (3 vertices) or several drawn in one pass (3k vertices, e.g. Fig. 4 of 001)."""

    mode = _TRIANGLES
    kind = "triangle"
    __slots__ = ()

    def _validate(self) -> None:
        if len(self) == 0 or len(self) % 3:
            raise ValueError(f"a Triangle needs 3 or 3k vertices, got {len(self)}")


class Rect(Primitive):
    """A quadrilateral given by its 4 corners in order around it (drawn as a triangle fan)."""

    mode = _TRIANGLE_FAN
    kind = "rect"
    __slots__ = ()

    def _validate(self) -> None:
        if len(self) != 4:
            raise ValueError(f"a Rect needs 4 vertices, got {len(self)}")

    @classmethod
    def covering(cls, x0: Coord, y0: Coord, x1: Coord, y1: Coord, T0: TexGen = None,
                 T1: TexGen = None) -> "Rect":
        """The rectangle [x0, x1] x [y0, y1], corners in the order (x0,y0), (x0,y1), (x1,y1), (x1,y0)
        (as Fig. 2(a) of 001 lists them). T0 and T1 are constants or functions of the corner (x, y).
        """
        return cls(_data=_flat(((x0, y0), (x0, y1), (x1, y1), (x1, y0)), T0, T1))


class Texel(Rect):
    """The unit square over the single texel (x, y): one fragment."""

    kind = "texel"
    __slots__ = ()

    @classmethod
    def at(cls, x: int, y: int, T0: TexGen = None, T1: TexGen = None) -> "Texel":
        return cls.covering(x, y, x + 1, y + 1, T0, T1)


class Line(Primitive):
    """A row or column of texels drawn as a line through the texel centres.

    ``Line.row(y, x0, x1)`` shades texels x0 .. x1-1 of row y; ``Line.column(x, y0, y1)``
    likewise down a column. This is how LU-GPU (paper 004) swaps rows and columns: each line
    reads the texels of the other ("parallel data transfer").

    The segment runs from the centre of the first texel to the centre of the texel just past
    the last, (x0+.5, y+.5) to (x1+.5, y+.5). By the diamond-exit rule a line shades the
    fragments whose diamond it leaves, so it shades x0 (it starts inside that diamond and
    leaves) but not x1 (it ends inside). Ending on the diamond's corner instead, at (x1, y+.5),
    leaves the decision to rounding: llvmpipe then shades x1 at some positions.
    """

    mode = _LINES
    kind = "line"
    __slots__ = ()

    def _validate(self) -> None:
        if len(self) % 2 or not len(self):
            raise ValueError(f"a Line needs 2 (or 2k) vertices, got {len(self)}")

    @classmethod
    def row(cls, y: Coord, x0: Coord, x1: Coord, T0: TexGen = None, T1: TexGen = None) -> "Line":
        return cls(_data=_flat(((x0 + 0.5, y + 0.5), (x1 + 0.5, y + 0.5)), T0, T1))

    @classmethod
    def column(cls, x: Coord, y0: Coord, y1: Coord, T0: TexGen = None, T1: TexGen = None) -> "Line":
        return cls(_data=_flat(((x + 0.5, y0 + 0.5), (x + 0.5, y1 + 0.5)), T0, T1))
