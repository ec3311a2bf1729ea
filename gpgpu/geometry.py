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

import math
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

    def covered_spans(self, width: int, height: int) -> list:
        """The texels this primitive covers in a width x height target, as row spans
        ``(y, x0, x1)`` (texels x0 .. x1-1 of row y), computed from the vertices by the rule
        the rasterizer applies: a fragment is shaded when its centre lies inside. The
        half-texel offsets of the papers keep centres off the edges, so there are no ties.
        Copy-to-texture uses it to know which region of the p-buffer to copy; the tests
        check it against the GPU's own rasterization."""
        raise NotImplementedError(f"{type(self).__name__} has no coverage rule")

    def covered_rects(self, width: int, height: int) -> list:
        """``covered_spans`` merged into rectangles ``(x, y, w, h)``: consecutive rows with the
        same span become one rectangle (a Rect is always one)."""
        rects = []
        for y, x0, x1 in sorted(self.covered_spans(width, height), key=lambda t: (t[1], t[2], t[0])):
            last = rects[-1] if rects else None
            if last is not None and last[0] == x0 and last[2] == x1 - x0 and last[1] + last[3] == y:
                rects[-1] = (x0, last[1], x1 - x0, last[3] + 1)
            else:
                rects.append((x0, y, x1 - x0, 1))
        return rects


class Triangle(Primitive):
    """One triangle (3 vertices) or several drawn in one pass (3k vertices, e.g. Fig. 4 of 001)."""

    mode = _TRIANGLES
    kind = "triangle"
    __slots__ = ()

    def _validate(self) -> None:
        if len(self) == 0 or len(self) % 3:
            raise ValueError(f"a Triangle needs 3 or 3k vertices, got {len(self)}")

    @classmethod
    def from_rects(cls, rects, T0: TexGen = None, T1: TexGen = None) -> "Triangle":
        """Several rectangles (x0, y0, x1, y1) drawn in one pass, two triangles each. The shared
        diagonal of a rectangle's triangles is covered once: GL's fill rule assigns a centre on
        a shared edge to exactly one of the two."""
        corners = []
        for x0, y0, x1, y1 in rects:
            corners += [(x0, y0), (x0, y1), (x1, y1), (x0, y0), (x1, y1), (x1, y0)]
        return cls(_data=_flat(corners, T0, T1))

    def covered_spans(self, width: int, height: int) -> list:
        pts = [v.V for v in self.vertices]
        spans = []
        for t in range(0, len(pts), 3):
            tri = pts[t:t + 3]
            ys = [p[1] for p in tri]
            for y in range(max(0, math.floor(min(ys))), min(height, math.ceil(max(ys)))):
                cy = y + 0.5
                xs = []
                for (xa, ya), (xb, yb) in ((tri[0], tri[1]), (tri[1], tri[2]), (tri[2], tri[0])):
                    if (ya <= cy < yb) or (yb <= cy < ya):
                        xs.append(xa + (cy - ya) * (xb - xa) / (yb - ya))
                if len(xs) < 2:
                    continue
                x0 = max(0, math.floor(min(xs) - 0.5) + 1)       # first centre right of the left edge
                x1 = min(width, math.ceil(max(xs) - 0.5))        # one past the last centre left of the right edge
                if x1 > x0:
                    spans.append((y, x0, x1))
        return spans


class Rect(Primitive):
    """A quadrilateral given by its 4 corners in order around it (drawn as a triangle fan)."""

    mode = _TRIANGLE_FAN
    kind = "rect"
    __slots__ = ()

    def _validate(self) -> None:
        if len(self) != 4:
            raise ValueError(f"a Rect needs 4 vertices, got {len(self)}")

    def covered_spans(self, width: int, height: int) -> list:
        """An axis-aligned rectangle covers the centres strictly inside its bounding box."""
        xs = [v.V[0] for v in self.vertices]
        ys = [v.V[1] for v in self.vertices]
        x0 = max(0, math.floor(min(xs) - 0.5) + 1)
        x1 = min(width, math.ceil(max(xs) - 0.5))
        y0 = max(0, math.floor(min(ys) - 0.5) + 1)
        y1 = min(height, math.ceil(max(ys) - 0.5))
        return [(y, x0, x1) for y in range(y0, y1)] if x1 > x0 else []

    def covered_rects(self, width: int, height: int) -> list:
        spans = self.covered_spans(width, height)
        if not spans:
            return []
        return [(spans[0][1], spans[0][0], spans[0][2] - spans[0][1], len(spans))]

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

    def covered_spans(self, width: int, height: int) -> list:
        """Axis-aligned segments from texel centre to texel centre: by the diamond-exit rule
        the first texel is shaded and the last one, where the segment ends, is not."""
        pts = [v.V for v in self.vertices]
        spans = []
        for (xa, ya), (xb, yb) in zip(pts[0::2], pts[1::2]):
            a = (math.floor(xa), math.floor(ya))
            b = (math.floor(xb), math.floor(yb))
            if ya == yb:                                   # a row
                lo, hi = (a[0], b[0]) if xb >= xa else (b[0] + 1, a[0] + 1)
                if 0 <= a[1] < height:
                    spans.append((a[1], max(0, lo), min(width, hi)))
            elif xa == xb:                                 # a column
                lo, hi = (a[1], b[1]) if yb >= ya else (b[1] + 1, a[1] + 1)
                if 0 <= a[0] < width:
                    spans += [(y, a[0], a[0] + 1) for y in range(max(0, lo), min(height, hi))]
            else:
                raise NotImplementedError("coverage of a slanted line")
        return [t for t in spans if t[2] > t[1]]

    @classmethod
    def row(cls, y: Coord, x0: Coord, x1: Coord, T0: TexGen = None, T1: TexGen = None) -> "Line":
        return cls(_data=_flat(((x0 + 0.5, y + 0.5), (x1 + 0.5, y + 0.5)), T0, T1))

    @classmethod
    def column(cls, x: Coord, y0: Coord, y1: Coord, T0: TexGen = None, T1: TexGen = None) -> "Line":
        return cls(_data=_flat(((x + 0.5, y0 + 0.5), (x + 0.5, y1 + 0.5)), T0, T1))
