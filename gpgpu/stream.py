"""Streams: a matrix is a float32 texture, plus the framebuffer that renders into it.

Paper 000, section 2.2: "To represent a matrix, a 2 dimensional, single channel texture or
stream of the same size is created. In specifying the domain of a output or input stream,
x-coordinates correspond to column indexes, and y-coordinates to row indexes."

So element ``A[i, j]`` of a numpy array lives in texel ``(x=j, y=i)``, whose centre is at
``(j + 0.5, i + 0.5)``; ``Stream.shape`` is ``(rows, cols) = (height, width)``, and a vector
of length n is a 1-row stream (width n, height 1), as the papers store b.
"""
from __future__ import annotations

import moderngl
import numpy as np

from .context import get_context, max_texture_size, park

__all__ = ["Stream", "PingPong", "as_stream", "check_array", "Operands", "borrow", "give_back"]


def check_array(a, name: str = "input", ndim=(1, 2)) -> np.ndarray:
    """Validate an array for upload: real, finite, 1-D or 2-D; returns float32 C-contiguous.

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
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(f"{name}: contains NaN or infinity (first at index {tuple(int(b) for b in bad)})")
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


class Stream:
    """A float32 texture (R32F, or RGBA32F with ``components=4``) and its framebuffer.

    Parameters
    ----------
    rows, cols : int
        Shape of the matrix; the texture is ``cols`` wide and ``rows`` high.
    components : int
        1 (default, R32F) or 4 (RGBA32F, used internally for argmax reductions that
        carry a value and its position).
    vector : bool
        Remember that the stream holds a 1-D vector, so that ``to_array`` returns 1-D.

    Use as a context manager, or call ``release()``, to free the GL objects deterministically.
    """

    __slots__ = ("rows", "cols", "components", "vector", "texture", "_fbo", "__weakref__")

    def __init__(self, rows: int, cols: int, *, components: int = 1, vector: bool = False,
                 data: np.ndarray | None = None):
        if components not in (1, 4):
            raise ValueError("components must be 1 (R32F) or 4 (RGBA32F)")
        rows, cols = int(rows), int(cols)
        _check_size(rows, cols)
        self.rows, self.cols, self.components, self.vector = rows, cols, components, vector
        ctx = get_context()
        payload = None if data is None else np.ascontiguousarray(data, dtype=np.float32).tobytes()
        self.texture = ctx.texture((cols, rows), components, payload, dtype="f4")
        self.texture.filter = (moderngl.NEAREST, moderngl.NEAREST)
        self.texture.repeat_x = False
        self.texture.repeat_y = False
        if payload is None:
            self.texture.write(np.zeros((rows, cols, components), dtype=np.float32).tobytes())
        self._fbo = None

    # ------------------------------------------------------------------ creation
    @classmethod
    def from_array(cls, a, name: str = "input") -> "Stream":
        """Upload a 1-D (as a 1-row stream) or 2-D real, finite array."""
        arr = check_array(a, name)
        if arr.ndim == 1:
            return cls(1, arr.shape[0], vector=True, data=arr)
        return cls(arr.shape[0], arr.shape[1], data=arr)

    @classmethod
    def zeros(cls, rows: int, cols: int, **kw) -> "Stream":
        return cls(rows, cols, **kw)

    @classmethod
    def like(cls, other: "Stream") -> "Stream":
        """A zero stream of the same shape and kind."""
        return cls(other.rows, other.cols, components=other.components, vector=other.vector)

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
            self._fbo = get_context().framebuffer(color_attachments=[self.texture])
        return self._fbo

    @property
    def released(self) -> bool:
        return self.texture is None

    # ------------------------------------------------------------------ transfer
    def write(self, a) -> None:
        """Overwrite the whole stream from an array of the same shape."""
        arr = check_array(a, "write")
        if arr.reshape(-1).size != self.rows * self.cols * self.components:
            raise ValueError(f"write: array of shape {arr.shape} does not fit stream of shape {self.shape}")
        self.texture.write(arr.tobytes())

    def to_array(self) -> np.ndarray:
        """Download: a (rows, cols) float32 array, or 1-D for a vector stream."""
        self._check_alive()
        data = np.frombuffer(self.texture.read(), dtype=np.float32)
        if self.components == 1:
            out = data.reshape(self.rows, self.cols).copy()
            return out[0] if self.vector else out
        return data.reshape(self.rows, self.cols, self.components).copy()

    def item(self) -> float:
        """The value of a 1 x 1 stream, as a Python float (one read-back)."""
        if self.rows * self.cols != 1:
            raise ValueError(f"item() needs a 1 x 1 stream, this one is {self.shape}")
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

    def release(self) -> None:
        if self._fbo is not None:
            park()
            self._fbo.release()
            self._fbo = None
        if self.texture is not None:
            self.texture.release()
            self.texture = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

    def __repr__(self) -> str:
        kind = "vector" if self.vector else "matrix"
        state = " released" if self.texture is None else ""
        return f"<Stream {kind} {self.rows}x{self.cols}{'' if self.components == 1 else ' rgba'}{state}>"


class PingPong:
    """Two streams S and T of the same shape: kernels read S and render T, then ``swap()``.

    Paper 000, section 3.1 and Fig. 4: reading and writing the same texture in one pass is
    undefined, so a temporary of the size of A is used to "pingpong the intermediate result".
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
    not a Stream, else returns ``s``.
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
            out = s.to_array()
            s.release()
            return out
        return s

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for s in self.owned:
            s.release()
        self.owned.clear()


# A small pool of temporaries per shape, so that multipass algorithms (reductions, solves)
# do not create and delete textures on every call.
_pool: dict = {}


def borrow(rows: int, cols: int, components: int = 1) -> Stream:
    """A temporary stream of the given shape (contents undefined); return it with give_back()."""
    key = (get_context(), rows, cols, components)
    free = _pool.get(key)
    while free:
        s = free.pop()
        if not s.released:
            return s
    return Stream(rows, cols, components=components)


def give_back(*streams: Stream) -> None:
    for s in streams:
        if s is None or s.released:
            continue
        key = (get_context(), s.rows, s.cols, s.components)
        free = _pool.setdefault(key, [])
        if len(free) < 4:
            free.append(s)
        else:
            s.release()


def clear_pool() -> None:
    for free in _pool.values():
        for s in free:
            s.release()
    _pool.clear()
