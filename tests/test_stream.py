import numpy as np
import pytest

from gpgpu import PingPong, Stream
from gpgpu.context import max_texture_size


def test_roundtrip_vector_is_one_row_stream(rng):
    x = rng.standard_normal(17).astype(np.float32)
    with Stream.from_array(x) as s:
        assert s.shape == (1, 17)
        assert s.size == (17, 1)
        np.testing.assert_array_equal(s.to_array(), x)


def test_roundtrip_matrix_keeps_rows_and_columns(rng):
    a = rng.standard_normal((3, 5)).astype(np.float32)
    with Stream.from_array(a) as s:
        assert s.shape == (3, 5)
        np.testing.assert_array_equal(s.to_array(), a)
        # element A[i, j] lives in texel (x=j, y=i)
        assert s.read_texel(4, 2)[0] == a[2, 4]
        assert s.read_texel(0, 1)[0] == a[1, 0]


def test_integer_and_float64_inputs_are_converted():
    with Stream.from_array(np.arange(6).reshape(2, 3)) as s:
        np.testing.assert_array_equal(s.to_array(), np.arange(6, dtype=np.float32).reshape(2, 3))


@pytest.mark.parametrize("bad, match", [
    (np.array([1.0, np.nan]), "NaN or infinity"),
    (np.array([[1.0, np.inf]]), "NaN or infinity"),
    (np.zeros((2, 2, 2)), "1-D or 2-D"),
    (np.zeros(3, dtype=complex), "complex"),
    (np.array(["a", "b"]), "numeric"),
    (np.zeros((0, 3)), "empty"),
    (np.array([1e300]), "overflow float32"),
])
def test_bad_input_raises_value_error_naming_the_cause(bad, match):
    with pytest.raises(ValueError, match=match):
        Stream.from_array(bad)


def test_too_large_for_textures_names_the_limit():
    limit = max_texture_size()
    with pytest.raises(ValueError, match="GL_MAX_TEXTURE_SIZE"):
        Stream(1, limit + 1)
    with pytest.raises(ValueError, match="GL_MAX_TEXTURE_SIZE"):
        Stream(limit + 1, 1)


def test_release_is_deterministic_and_checked():
    s = Stream(2, 2)
    with s:
        assert not s.released
    assert s.released
    with pytest.raises(ValueError, match="released"):
        s.to_array()


def test_pingpong_swaps_roles():
    S, T = Stream(2, 3), Stream(2, 3)
    with PingPong(S, T) as pp:
        assert pp.S is S and pp.T is T
        pp.swap()
        assert pp.S is T and pp.T is S
    assert S.released and T.released
    with pytest.raises(ValueError, match="shapes differ"):
        PingPong(Stream(1, 2), Stream(2, 1))


def test_write_checks_shape():
    with Stream(2, 2) as s:
        s.write(np.ones((2, 2)))
        np.testing.assert_array_equal(s.to_array(), np.ones((2, 2)))
        with pytest.raises(ValueError, match="does not fit"):
            s.write(np.ones(3))


def test_item_only_for_single_texel():
    with Stream.from_array([[2.5]]) as s:
        assert s.item() == 2.5
    with Stream(1, 2) as s, pytest.raises(ValueError, match="1 x 1"):
        s.item()
