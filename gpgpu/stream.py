"""Streams: a matrix is a float32 texture, plus the framebuffer that renders into it.

Paper 000, section 2.2: "To represent a matrix, a 2 dimensional, single channel texture or
stream of the same size is created. In specifying the domain of a output or input stream,
x-coordinates correspond to column indexes, and y-coordinates to row indexes."

So element ``A[i, j]`` of a numpy array lives in texel ``(x=j, y=i)``, whose centre is at
``(j + 0.5, i + 0.5)``; ``Stream.shape`` is ``(rows, cols) = (height, width)``, and a vector
of length n is a 1-row stream (width n, height 1), as the papers store b.

A vector longer than the GPU's widest texture (the sparse problems of papers 002 and 003 have
vectors of 10^5 entries; paper 003 lists "use of 2D textures" as its way past the 1-D limit) is
folded row by row into a texture W = GL_MAX_TEXTURE_SIZE wide: entry i at texel
(i mod W, i div W), the tail of the last row zero. ``Stream.length`` is the vector's length;
``to_array`` answers the 1-D vector. Inside ``with folded(w):`` (beyond the papers) vectors are
folded ``w`` wide whatever their length: a block of rows the rasterizer and the texture caches
treat as two-dimensional, where a row thousands of texels long leaves them half idle (the
matrix-free method's GPU back end folds its vectors so: :class:`gpgpu.lp.matrix_free_gpu.GPUMatrixFree`).
"""
from __future__ import annotations

import operator
import os
import threading
from collections import OrderedDict

import moderngl
import numpy as np

from . import context as _context_module
from .context import (check_owner, collect_garbage, current_context, get_context, max_texture_size, on_release,
                      park)

__all__ = ["Stream", "PingPong", "as_stream", "folded", "check_array", "check_shape", "vector_shape", "Operands",
           "borrow", "give_back", "free_temporaries", "set_pool_limit", "pool_bytes"]


def check_array(a, name: str = "input", ndim=(1, 2), texture: bool = True, dtype=np.float32) -> np.ndarray:
    """Validate an array for upload: real, finite, 1-D or 2-D; returns float32 C-contiguous.

    The shape is checked against GL_MAX_TEXTURE_SIZE first (``texture=True``: the array will
    be one texture, a vector as one row), before anything is converted or copied.
    ``dtype=np.float64`` returns the float64 values instead and leaves out the float32 range
    check: for an input that is scaled by a power of two before its upload, where only the
    scaled values must fit float32.
    Raises ``ValueError`` naming what was wrong.
    """
    arr = np.asarray(a)
    if arr.dtype == object:
        raise ValueError(f"{name}: expected a numeric array, got an object array")
    if np.iscomplexobj(arr):
        raise ValueError(f"{name}: complex values are not supported (streams are real float32)")
    if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValueError(f"{name}: expected a real numeric array, got dtype {arr.dtype}")
    if arr.ndim not in ndim:
        want = " or ".join(f"{d}-D" for d in ndim)
        raise ValueError(f"{name}: expected a {want} array, got {arr.ndim}-D with shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name}: empty array (shape {arr.shape})")
    if texture:
        check_shape(arr.shape, name)
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(f"{name}: contains NaN or infinity (first at index {tuple(int(b) for b in bad)})")
    if np.dtype(dtype) == np.float64:
        return np.ascontiguousarray(arr, dtype=np.float64)
    with np.errstate(over="ignore"):
        out = np.ascontiguousarray(arr, dtype=np.float32)
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{name}: values overflow float32 (|x| > 3.4e38)")
    return out


def _check_size(rows: int, cols: int, what: str = "stream") -> None:
    limit = max_texture_size()
    if rows < 1 or cols < 1:
        raise ValueError(f"{what}: shape ({rows}, {cols}) must be at least 1 x 1")
    if rows > limit or cols > limit:
        raise ValueError(
            f"{what}: shape ({rows}, {cols}) needs a {cols} x {rows} texture, larger than this "
            f"GPU's GL_MAX_TEXTURE_SIZE = {limit}; use a smaller problem or a GPU with larger textures"
        )


#: Width of a folded vector's rows; None: GL_MAX_TEXTURE_SIZE. Tests set it small to fold
#: short vectors and reach the row boundaries cheaply.
FOLD_WIDTH = None


_scoped = threading.local()       # folded()'s widths on this thread, innermost last


def fold_width() -> int:
    """The width vectors are folded to: the narrowest of GL_MAX_TEXTURE_SIZE, ``FOLD_WIDTH``
    and the innermost :func:`folded` width on this thread."""
    widths = [max_texture_size(), *(() if FOLD_WIDTH is None else (int(FOLD_WIDTH),))]
    stack = getattr(_scoped, "widths", ())
    if stack and stack[-1] is not None:
        widths.append(stack[-1])
    return min(widths)


class folded:
    """``with folded(width):`` vectors made inside (``vector_shape``, ``Stream.vector_of``) are
    folded at most ``width`` texels wide (None: as outside). Streams made inside keep their
    shape after it. Scopes nest, on this thread."""

    __slots__ = ("width",)

    def __init__(self, width):
        if width is not None and (isinstance(width, (bool, np.bool_)) or not isinstance(width, (int, np.integer))
                                  or width < 1):
            raise ValueError(f"a fold width must be a positive integer or None, got {width!r}")
        self.width = None if width is None else int(width)

    def __enter__(self):
        stack = _scoped.__dict__.setdefault("widths", [])
        stack.append((stack[-1] if stack else None) if self.width is None else self.width)
        return self

    def __exit__(self, *exc):
        _scoped.widths.pop()
        return False


def vector_shape(n: int) -> tuple:
    """(rows, cols) of the texture that holds a vector of length n: (1, n) when n fits one
    texture row, else n folded into rows W = GL_MAX_TEXTURE_SIZE wide."""
    n = int(n)
    if n < 1:
        raise ValueError(f"a vector needs at least 1 entry, got {n}")
    width = fold_width()
    if n <= width:
        return (1, n)
    rows = -(-n // width)
    if rows > max_texture_size():
        raise ValueError(f"a vector of length {n} does not fit a texture of {width} x "
                         f"{max_texture_size()} (GL_MAX_TEXTURE_SIZE = {max_texture_size()}); "
                         "use a smaller problem")
    return (rows, width)


def vector_regions(n: int, cols: int | None = None) -> list:
    """The rectangles (x0, y0, x1, y1) that hold a vector of length n folded ``cols`` wide
    (default: its vector_shape(n)): its full rows and the used part of the last row."""
    if cols is None:
        cols = vector_shape(n)[1]
    rows = -(-n // cols)
    if n == rows * cols:
        return [(0, 0, cols, rows)]
    full, rest = divmod(n, cols)
    out = [(0, 0, cols, full)] if full else []
    return out + ([(0, full, rest, full + 1)] if rest else [])


def check_shape(shape, what: str = "input") -> None:
    """Refuse a texture shape (rows, cols) that this GPU cannot hold, before any data is copied.

    The public functions call this first, on ``np.shape`` of their input (free for an array),
    so that an input too large for GL_MAX_TEXTURE_SIZE fails at once instead of after the
    conversions and copies that come before the upload. A 1-D shape is a vector (folded when
    longer than a texture row).
    """
    shape = tuple(int(v) for v in shape)
    if len(shape) == 1:
        if shape[0] >= 1:
            vector_shape(shape[0])
        return
    if len(shape) == 2 and min(shape) >= 1:
        _check_size(*shape, what=what)


def _count(value, name: str) -> int:
    """An integer size; a float such as 2.7 is refused rather than truncated."""
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"Stream: {name} must be an integer, got {value!r} "
                        f"({type(value).__name__})") from None


class Stream:
    """A matrix or vector on the GPU: a float32 texture and the framebuffer that renders into it.

    Paper 000, section 2.2: a matrix is a 2-D single-channel texture ("stream") of its size,
    x-coordinates indexing columns and y-coordinates rows, so ``A[i, j]`` lives in texel
    ``(x=j, y=i)``. A vector is a 1-row stream, folded row by row into a texture
    GL_MAX_TEXTURE_SIZE wide when it is longer (paper 003's "use of 2D textures"). The texture
    is R32F, RG32F with ``components=2`` (a float-float number's high and low parts,
    :mod:`gpgpu.float_float`) or RGBA32F with ``components=4`` (argmax reductions carry a value
    and its position). ``Stream.from_array`` uploads an array, ``to_array`` downloads it.

    Parameters
    ----------
    rows, cols : int
        Shape of the matrix; the texture is ``cols`` wide and ``rows`` high.
    components : {1, 2, 4}, optional
        Channels per texel: 1 (R32F, default), 2 (RG32F) or 4 (RGBA32F).
    vector : bool, optional
        The stream holds a 1-D vector, so that ``to_array`` returns 1-D.
    data : ndarray, optional
        Initial values (``rows * cols * components`` of them, or a vector's ``length``).
    length : int, optional
        A vector's length, default ``rows * cols``; the texels past it are zero.
    zero : bool, optional
        Start from zeros (default); False lets a recycled texture keep its old contents.

    Raises
    ------
    ValueError
        If the shape exceeds GL_MAX_TEXTURE_SIZE, ``components`` is not 1, 2 or 4, or ``data``
        does not fill the stream.
    TypeError
        If ``rows`` or ``cols`` is not an integer.
    ContextError
        If no OpenGL context can be made (see ``get_context``).

    See Also
    --------
    PingPong : two streams, one read and one rendered by each pass.
    Kernel : a fragment program that renders into a stream.

    Notes
    -----
    ``zero=False`` is for a kernel's output that its pass covers whole: a texture reused from
    a released stream of the same shape then keeps its old contents instead of being cleared
    (a clear is a framebuffer switch more for the driver: the interior point methods make
    thousands of such outputs). Use a stream as a context manager, or call ``release()``, to
    free the GL objects deterministically. A stream belongs to the thread that made it
    (``WrongThreadError`` elsewhere).

    Examples
    --------
    >>> import numpy as np
    >>> import gpgpu
    >>> A = np.arange(6.0).reshape(2, 3)
    >>> with gpgpu.Stream.from_array(A) as S:
    ...     print(S.shape, S.size, np.array_equal(S.to_array(), A))
    (2, 3) (3, 2) True
    """

    __slots__ = ("rows", "cols", "components", "vector", "length", "texture", "_fbo", "ctx", "__weakref__")

    def __init__(self, rows: int, cols: int, *, components: int = 1, vector: bool = False,
                 data: np.ndarray | None = None, length: int | None = None, zero: bool = True):
        if components not in (1, 2, 4):
            raise ValueError(f"components must be 1 (R32F), 2 (RG32F) or 4 (RGBA32F), got {components!r}")
        rows, cols = _count(rows, "rows"), _count(cols, "cols")
        _check_size(rows, cols)
        self.rows, self.cols, self.components, self.vector = rows, cols, components, vector
        self.length = (rows * cols if length is None else int(length)) if vector else None
        if vector and not 0 < self.length <= rows * cols:
            raise ValueError(f"Stream: a vector of length {self.length} does not fit {rows} x {cols} texels")
        self.texture = self._fbo = None
        ctx = self.ctx = get_context()
        collect_garbage(ctx)  # free what was dropped without release() before allocating more
        _shrink(_pools.get(ctx), _pool_limit)  # and what collected streams left in the pool
        payload = None
        if data is not None:
            data = np.ascontiguousarray(data, dtype=np.float32)
            if vector and data.size == self.length * components and self.length < rows * cols:
                data = np.concatenate([data.reshape(-1), np.zeros((rows * cols - self.length) * components,
                                                                  dtype=np.float32)])
            if data.size != rows * cols * components:
                raise ValueError(f"Stream: data of shape {data.shape} does not fill a {rows} x {cols} "
                                 f"stream of {components} component(s)")
            payload = data.tobytes()
        recycled = _take_recycled(ctx, (rows, cols, components))
        if recycled is not None:  # a released stream's texture and framebuffer, reused
            self.texture, self._fbo = recycled
            if payload is not None:
                self.texture.write(payload)
            elif zero:
                self.fbo.clear()  # zeros, as a new stream's
            return
        self.texture = ctx.texture((cols, rows), components, payload, dtype="f4")
        self.texture.filter = (moderngl.NEAREST, moderngl.NEAREST)
        self.texture.repeat_x = False
        self.texture.repeat_y = False
        self._fbo = None
        if payload is None and zero:
            self.fbo.clear()   # zeros drawn on the GPU, not uploaded (a new texture's are undefined)

    # ------------------------------------------------------------------ creation
    @classmethod
    def from_array(cls, a, name: str = "input") -> "Stream":
        """Upload a 1-D (as a 1-row stream, folded when longer than the widest texture) or a 2-D
        real, finite array."""
        arr = check_array(a, name)
        if arr.ndim == 1:
            return cls.vector_of(arr.shape[0], data=arr)
        return cls(arr.shape[0], arr.shape[1], data=arr)

    @classmethod
    def vector_of(cls, n: int, data=None) -> "Stream":
        """A vector of length n: one row, or folded rows when n exceeds GL_MAX_TEXTURE_SIZE."""
        rows, cols = vector_shape(n)
        return cls(rows, cols, vector=True, data=data, length=n)

    @classmethod
    def zeros(cls, rows: int, cols: int, **kw) -> "Stream":
        return cls(rows, cols, **kw)

    @classmethod
    def like(cls, other: "Stream", zero: bool = True) -> "Stream":
        """A zero stream of the same shape and kind (``zero`` as the constructor's)."""
        return cls(other.rows, other.cols, components=other.components, vector=other.vector,
                   length=other.length, zero=zero)

    @property
    def folded(self) -> bool:
        """A vector that spans more than one texture row."""
        return self.vector and self.rows > 1

    # ------------------------------------------------------------------ properties
    @property
    def shape(self) -> tuple:
        """(rows, cols): y counts rows, x counts columns, as in the papers."""
        return (self.rows, self.cols)

    @property
    def size(self) -> tuple:
        """(width, height) of the texture, i.e. (cols, rows)."""
        return (self.cols, self.rows)

    @property
    def fbo(self):
        """The framebuffer whose single colour attachment is this texture."""
        if self._fbo is None:
            self._check_alive()
            self._fbo = self.ctx.framebuffer(color_attachments=[self.texture])
        return self._fbo

    @property
    def released(self) -> bool:
        return self.texture is None

    # ------------------------------------------------------------------ transfer
    def write(self, a) -> None:
        """Overwrite the whole stream from an array of the same shape."""
        self._check_alive()
        arr = check_array(a, "write", texture=False)
        size = arr.reshape(-1).size
        if self.vector and size == self.length * self.components and self.length < self.rows * self.cols:
            arr = np.concatenate([arr.reshape(-1), np.zeros(self.rows * self.cols * self.components - size,
                                                            dtype=np.float32)])
        elif size != self.rows * self.cols * self.components:
            raise ValueError(f"write: array of shape {arr.shape} does not fit stream of shape {self.shape}")
        self.texture.write(arr.tobytes())

    def to_array(self) -> np.ndarray:
        """Download: a (rows, cols) float32 array, or 1-D for a vector stream."""
        self._check_alive()
        data = np.frombuffer(self.texture.read(), dtype=np.float32)
        if self.components == 1:
            if self.vector:
                return data[:self.length].copy()
            return data.reshape(self.rows, self.cols).copy()
        return data.reshape(self.rows, self.cols, self.components).copy()

    def item(self) -> float:
        """The value of a 1 x 1 stream, as a Python float (one read-back)."""
        if self.rows * self.cols != 1:
            raise ValueError(f"item() needs a 1 x 1 stream, this one is {self.shape}")
        self._check_alive()
        return float(np.frombuffer(self.texture.read(), dtype=np.float32)[0])

    def read_texel(self, x: int, y: int, components: int | None = None) -> np.ndarray:
        """Read back the single texel (x, y) (a feedback to the CPU of one value)."""
        self._check_alive()
        comps = components or self.components
        raw = self.fbo.read(viewport=(int(x), int(y), 1, 1), components=comps, dtype="f4")
        return np.frombuffer(raw, dtype=np.float32)

    # ------------------------------------------------------------------ lifetime
    def _check_alive(self):
        if self.texture is None:
            raise ValueError("this stream has been released")
        if self.ctx is not current_context():
            check_owner(self.ctx, f"this {self.rows} x {self.cols} Stream")

    def release(self) -> None:
        """Free the texture and framebuffer now. From a thread other than the owner (or after
        the owner's context is gone) the GL objects are only dropped: the owning context frees
        them later in its own thread, since GL calls here would reach another context."""
        fbo, tex = self._fbo, self.texture
        self._fbo = self.texture = None
        if self.ctx is not current_context() or self.ctx.extra is None or self.ctx.extra.released:
            return
        if tex is not None and _recycle(self.ctx, (self.rows, self.cols, self.components), self.nbytes, tex, fbo):
            return
        _release_gl(self.ctx, tex, fbo)

    def __del__(self):
        # a stream dropped without release(): its texture and framebuffer go to the pool for the
        # next stream of its shape when this is the owning thread. No GL call here: a collection
        # can happen between a pass's binding and its draw. Otherwise moderngl queues them for
        # the owner to free (collect_garbage).
        try:
            tex = self.texture
            if tex is not None and self.ctx is current_context() and not self.ctx.extra.released:
                self.texture = None
                if not _recycle(self.ctx, (self.rows, self.cols, self.components), self.nbytes, tex, self._fbo,
                                collected=True):
                    self.texture = tex
        except Exception:  # interpreter shutdown, half-made stream
            pass

    def _release_now(self) -> None:
        """Free the texture and framebuffer, never keeping them for reuse (the pool's own
        evictions)."""
        fbo, tex = self._fbo, self.texture
        self._fbo = self.texture = None
        if self.ctx is current_context() and self.ctx.extra is not None and not self.ctx.extra.released:
            _release_gl(self.ctx, tex, fbo)

    @property
    def nbytes(self) -> int:
        """Bytes of texture memory: rows x cols x components x 4."""
        return self.rows * self.cols * self.components * 4

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

    def __repr__(self) -> str:
        kind = f"vector of {self.length}" if self.vector else "matrix"
        state = " released" if self.texture is None else ""
        return f"<Stream {kind} {self.rows}x{self.cols}{('', '', ' rg', '', ' rgba')[self.components]}{state}>"

    def regions(self) -> list:
        """The rectangles (x0, y0, x1, y1) of the texels that hold data: the whole texture, or
        for a folded vector its full rows and the used part of the last row."""
        if not self.vector:
            return [(0, 0, self.cols, self.rows)]
        return vector_regions(self.length, self.cols)


class PingPong:
    """Two streams of one shape: kernels read ``S`` and render ``T``, then ``swap()``.

    Paper 000, section 3.1 and Fig. 4: reading and writing the same texture in one pass is
    undefined, so a temporary of the size of A is used to "pingpong the intermediate result".
    ``swap()`` exchanges S and T after each pass; ``PingPong.like(S)`` pairs S with a new zero
    stream of its shape; ``release()``, or the end of a ``with`` block, frees both.

    Parameters
    ----------
    S : Stream
        The stream the next pass reads.
    T : Stream
        The stream the next pass renders into, of S's shape.

    Raises
    ------
    ValueError
        If S and T differ in shape.

    See Also
    --------
    Stream, Kernel

    Examples
    --------
    >>> import gpgpu
    >>> from gpgpu.geometry import Rect
    >>> add = gpgpu.Kernel("add_scalar")         # glsl/add_scalar.frag: X + alpha
    >>> with gpgpu.PingPong.like(gpgpu.Stream(2, 2)) as pp:
    ...     for _ in range(3):
    ...         add.draw(pp.T, Rect.covering(0, 0, 2, 2), {"X": pp.S}, {"alpha": 1.0})
    ...         pp.swap()
    ...     print(pp.S.to_array().tolist())
    [[3.0, 3.0], [3.0, 3.0]]
    """

    def __init__(self, S: Stream, T: Stream):
        if S.shape != T.shape:
            raise ValueError(f"PingPong: shapes differ, {S.shape} vs {T.shape}")
        self.S, self.T = S, T

    @classmethod
    def like(cls, S: Stream) -> "PingPong":
        return cls(S, Stream.like(S))

    def swap(self) -> None:
        self.S, self.T = self.T, self.S

    def release(self) -> None:
        self.S.release()
        self.T.release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()


def as_stream(a, name: str = "input"):
    """(stream, owned): wrap an array as a new stream (owned=True) or pass a Stream through."""
    if isinstance(a, Stream):
        a._check_alive()
        return a, False
    return Stream.from_array(a, name), True


class Operands:
    """Accept numpy arrays or Streams; answer in the kind the caller gave.

    ``with Operands(first) as ops``: ``ops.stream(a)`` uploads arrays (released on exit) and
    passes Streams through; ``ops.result(s)`` downloads and releases ``s`` when ``first`` was
    not a Stream (as float64: numpy in, float64 numpy out, the values float32's), else returns
    ``s``.
    """

    def __init__(self, first=None):
        self.numpy = not isinstance(first, Stream)
        self.owned = []

    def stream(self, a, name: str = "input") -> Stream:
        s, owned = as_stream(a, name)
        if owned:
            self.owned.append(s)
        return s

    def result(self, s: Stream):
        if self.numpy:
            out = s.to_array().astype(np.float64)
            s.release()
            return out
        return s

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for s in self.owned:
            s.release()
        self.owned.clear()


# A pool of temporaries per context, so that multipass algorithms (reductions, solves) do
# not create and delete textures on every call. Bounded by bytes: when the streams kept exceed
# the limit, the least recently returned shapes are released first.
#
# The same pool keeps the GL objects of released streams (beyond the papers, host cost only):
# creating a texture and its framebuffer costs 140-670 us on an NVIDIA H200 (measured for a
# 1 x 305 and a 305 x 305 stream, created, rendered into once and released), about as much as
# 15-70 passes, and the interior point methods make and drop dozens of vectors an iteration. A
# new stream of a shape released before takes its texture and framebuffer and clears it to
# zero (a new stream's contents), or writes its data into it.
_pools: dict = {}            # context -> _Pool
_pool_limit = int(os.environ.get("GPGPU_POOL_BYTES", 64 * 2 ** 20))
_PER_SHAPE = 4               # at most this many free streams of one shape
_PER_SHAPE_GL = 16           # at most this many released textures of one shape


class _Pool:
    __slots__ = ("free", "gl", "ids", "bytes")

    def __init__(self):
        self.free = OrderedDict()   # (rows, cols, components) -> [Stream], least recent first
        self.gl = OrderedDict()     # (rows, cols, components) -> [(texture, framebuffer or None)]
        self.ids = set()            # id() of the moderngl objects (mglo) of the pairs in gl
        self.bytes = 0


def _mglos(pair) -> list:
    return [o.mglo for o in pair if o is not None]


def _nbytes(key) -> int:
    rows, cols, components = key
    return rows * cols * components * 4


def _release_gl(ctx, texture, fbo) -> None:
    if fbo is not None:
        park(ctx)
        fbo.release()
    if texture is not None:
        texture.release()


def _recycle(ctx, key, nbytes: int, texture, fbo, collected: bool = False) -> bool:
    """Keep a released stream's GL objects for a new stream of its shape; False when the pool
    has no room for them (the caller releases them). ``collected`` (a garbage-collected stream,
    which may be collected between two GL calls of a pass): no GL call, so nothing is evicted
    either, and the pair is kept only if it fits under the limit as it is."""
    if nbytes > _pool_limit:
        return False
    pool = _pools.get(ctx)
    if pool is None:
        pool = _pools[ctx] = _Pool()
    if collected and pool.bytes + nbytes > _pool_limit:
        return False
    kept = pool.gl.get(key)
    if kept is None:
        kept = pool.gl[key] = []
    elif len(kept) >= _PER_SHAPE_GL:
        return False
    kept.append((texture, fbo))
    pool.ids.update(id(o) for o in _mglos((texture, fbo)))
    pool.gl.move_to_end(key)
    pool.bytes += nbytes
    if not collected:
        _shrink(pool, _pool_limit)
    return True


def _unpool(pool, pair) -> None:
    for o in _mglos(pair):
        pool.ids.discard(id(o))


def _take_recycled(ctx, key):
    """(texture, framebuffer) of a released stream of shape ``key``, or None."""
    pool = _pools.get(ctx)
    kept = pool.gl.get(key) if pool is not None else None
    if not kept:
        return None
    pool.bytes -= _nbytes(key)
    texture, fbo = pair = kept.pop()
    _unpool(pool, pair)
    # the cyclic collector may have finalized these objects while they were pooled, which
    # queued them for deletion (collect_garbage skips pooled ones): out of the queue now
    mglos = _mglos(pair)
    if ctx.objects and any(o is m for o in ctx.objects for m in mglos):
        kept_queue = [o for o in ctx.objects if not any(o is m for m in mglos)]
        ctx.objects.clear()
        ctx.objects.extend(kept_queue)
    if fbo is None:
        fbo = ctx.framebuffer(color_attachments=[texture])
    return texture, fbo


def _pooled_objects(ctx):
    """ids of the moderngl objects (``mglo``) of the textures and framebuffers kept in ctx's
    pool (the pool's own set, kept up to date as pairs come and go)."""
    pool = _pools.get(ctx)
    return () if pool is None else pool.ids


_context_module.pooled_objects = _pooled_objects


def set_pool_limit(nbytes: int) -> int:
    """Set the most bytes of texture memory that the pool of temporaries keeps per context.

    Beyond the papers (host cost only): multipass algorithms borrow temporary streams from a
    per-context pool, and released streams leave their textures there for the next stream of
    their shape. When the pool holds more than the limit, the least recently returned shapes
    are released first. The default is 64 MiB, or ``$GPGPU_POOL_BYTES``; 0 keeps none.

    Parameters
    ----------
    nbytes : int
        The new limit in bytes, 0 or more.

    Returns
    -------
    int
        The previous limit.

    Raises
    ------
    ValueError
        If ``nbytes`` is negative.
    TypeError
        If ``nbytes`` is not an integer.

    See Also
    --------
    free_temporaries : empty the pool now.

    Examples
    --------
    >>> import gpgpu
    >>> old = gpgpu.set_pool_limit(0)       # keep nothing for reuse
    >>> gpgpu.set_pool_limit(old)           # put the old limit back; returns the one just set
    0
    """
    global _pool_limit
    nbytes = operator.index(nbytes)
    if nbytes < 0:
        raise ValueError(f"the pool limit must be >= 0 bytes, got {nbytes}")
    old, _pool_limit = _pool_limit, nbytes
    _shrink(_pools.get(current_context()), _pool_limit)
    return old


def pool_bytes() -> int:
    """Bytes of texture memory held by this thread's pool of free temporaries and released
    streams' textures."""
    pool = _pools.get(current_context())
    return 0 if pool is None else pool.bytes


def _shrink(pool, limit: int) -> None:
    """Release the least recently kept textures, then temporaries, until ``limit`` holds."""
    while pool is not None and pool.bytes > limit and pool.gl:
        key, kept = next(iter(pool.gl.items()))
        if kept:
            texture, fbo = pair = kept.pop(0)
            pool.bytes -= _nbytes(key)
            _unpool(pool, pair)
            _release_gl(texture.ctx, texture, fbo)
        if not kept:
            del pool.gl[key]
    while pool is not None and pool.bytes > limit and pool.free:
        key, free = next(iter(pool.free.items()))
        if free:
            s = free.pop(0)
            pool.bytes -= s.nbytes
            s._release_now()
        if not free:
            del pool.free[key]


def borrow(rows: int, cols: int, components: int = 1) -> Stream:
    """A temporary stream of the given shape (contents undefined); return it with give_back()."""
    pool = _pools.get(get_context())
    free = pool.free.get((rows, cols, components)) if pool is not None else None
    while free:
        s = free.pop()
        pool.bytes -= s.nbytes
        if not s.released:
            return s
    return Stream(rows, cols, components=components)


def give_back(*streams: Stream) -> None:
    """Return temporaries to this thread's pool (or release them when it is full)."""
    for s in streams:
        if s is None or s.released:
            continue
        ctx = current_context()
        if s.ctx is not ctx:
            s.release()
            continue
        pool = _pools.get(ctx)
        if pool is None:
            pool = _pools[ctx] = _Pool()
        key = (s.rows, s.cols, s.components)
        free = pool.free.get(key, ())
        if any(f is s for f in free):
            continue                 # given back twice: pooled once, or two borrowers would share it
        if len(free) >= _PER_SHAPE or s.nbytes > _pool_limit:
            s.release()
            continue
        pool.free.setdefault(key, []).append(s)
        pool.free.move_to_end(key)
        pool.bytes += s.nbytes
        _shrink(pool, _pool_limit)


def clear_pool(ctx=None) -> None:
    """Release every free temporary of ``ctx`` (default: this thread's context)."""
    ctx = ctx or current_context()
    pool = _pools.pop(ctx, None)
    if pool is None:
        return
    for kept in pool.gl.values():
        for texture, fbo in kept:
            _release_gl(ctx, texture, fbo)
    for free in pool.free.values():
        for s in free:
            s._release_now()


on_release(clear_pool)


def free_temporaries() -> int:
    """Release the temporaries and textures that this thread's pool keeps for reuse.

    Beyond the papers (host cost only): multipass algorithms (reductions, solves) borrow
    temporary streams from a per-context pool instead of creating and deleting textures on
    every call, and released streams leave their textures there for the next stream of their
    shape. This frees them all now, e.g. before another program needs the GPU's memory.

    Returns
    -------
    int
        The bytes of texture memory freed.

    See Also
    --------
    set_pool_limit : bound the pool instead of emptying it.

    Examples
    --------
    >>> import gpgpu
    >>> gpgpu.Stream(4, 4).release()        # its 64-byte texture stays in the pool
    >>> gpgpu.free_temporaries() >= 64, gpgpu.free_temporaries()
    (True, 0)
    """
    freed = pool_bytes()
    clear_pool()
    return freed
