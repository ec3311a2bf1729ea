import numpy as np
import pytest

from gpgpu import packed as pk


@pytest.mark.parametrize("m", range(1, 12))
def test_pack_unpack_roundtrip_and_shape(m):
    L = np.tril(np.arange(1, m * m + 1, dtype=float).reshape(m, m))
    P = pk.pack(L)
    h, w = pk.packed_shape(m)
    assert P.shape == (h, w) == (m + (m + 1) % 2, (m + 1) // 2)
    np.testing.assert_array_equal(pk.unpack(P), L)
    assert pk.order_from_shape(h, w) == m
    # every texel is used exactly once: w h = m (m + 1) / 2
    assert pk.mask(m).all() and h * w == m * (m + 1) // 2


def test_positions_follow_figure_3():
    # Fig. 3(a): a 6 x 6 matrix; its caption says a 3 x 6 texture, but the formula of section 3.3
    # (h = m + mod(m + 1, 2)) and the vertices of Fig. 4(a) (V(0, h) with h = m + 1) give 3 x 7:
    # the left columns shift down one row and the bottom-right triangle, rotated by 180 degrees,
    # fills the upper corner
    assert pk.position(0, 0, 6) == (0, 1)
    assert pk.position(5, 2, 6) == (2, 6)
    assert pk.position(5, 5, 6) == (0, 0)
    assert pk.position(3, 3, 6) == (2, 2)
    # Fig. 3(b): 7 x 7 in 4 x 7, no shift; the rotated part starts at column 1
    assert pk.position(0, 0, 7) == (0, 0)
    assert pk.position(6, 6, 7) == (1, 0)
    assert pk.position(4, 4, 7) == (3, 2)


def test_bad_shapes_raise():
    with pytest.raises(ValueError, match="not a rectangular packed"):
        pk.order_from_shape(4, 3)
    with pytest.raises(ValueError, match="square"):
        pk.pack(np.ones((2, 3)))
    with pytest.raises(ValueError, match="lower triangle"):
        pk.position(0, 1, 3)
