"""Coverage and fragment counts of the primitives (exact, from occlusion queries)."""
import numpy as np
import pytest

from gpgpu import Kernel, Stream, counters
from gpgpu.geometry import Line, Rect, Texel, Triangle, vertex

FILL = Kernel("fill", texels=1)


def cover(shape, primitive):
    """Rasterize ``primitive`` with a marker kernel into a zero stream: the covered texels."""
    with Stream(*shape) as s, counters.count() as c:
        FILL.draw(s, primitive, uniforms={"value": 1.0})
        mask = s.to_array() == 1.0
    assert c.fragments() == mask.sum()
    return mask, c


@pytest.mark.parametrize("w, h", [(1, 1), (3, 2), (17, 5), (64, 64)])
def test_rect_shades_w_times_h_fragments(w, h):
    mask, c = cover((h + 2, w + 3), Rect.covering(1, 2, 1 + w, 2 + h))
    assert c.fragments("fill") == w * h
    expected = np.zeros((h + 2, w + 3), bool)
    expected[2:2 + h, 1:1 + w] = True
    np.testing.assert_array_equal(mask, expected)


def test_texel_shades_one_fragment_and_trace_lists_it():
    mask, c = cover((4, 4), Texel.at(2, 1))
    assert mask.sum() == 1 and mask[1, 2]
    (p,) = c.trace
    assert (p.kernel, p.primitive, p.vertices, p.fragments, p.target) == ("fill", "texel", 4, 1, (4, 4))
    assert p.bytes == 4


def test_lines_cover_a_row_and_a_column():
    mask, c = cover((5, 8), Line.row(3, 2, 7))
    assert c.fragments() == 5
    assert mask[3, 2:7].all() and mask.sum() == 5
    mask, c = cover((6, 4), Line.column(1, 0, 6))
    assert c.fragments() == 6 and mask[:, 1].all() and mask.sum() == 6


@pytest.mark.parametrize("m", [1, 2, 5, 16])
def test_oversized_triangle_covers_lower_triangle_exactly(m):
    # Fig. 2(b) of paper 001: V(0, -.5), V(0, m), V(m + .5, m)
    tri = Triangle([vertex((0, -0.5)), vertex((0, m)), vertex((m + 0.5, m))])
    mask, c = cover((m, m), tri)
    np.testing.assert_array_equal(mask, np.tril(np.ones((m, m), bool)))
    assert c.fragments() == m * (m + 1) // 2


def test_interpolated_texture_coordinates_reach_fragment_centres():
    copy = Kernel("copy", texels=2)
    src = np.arange(12, dtype=np.float32).reshape(3, 4)
    with Stream.from_array(src) as a, Stream(4, 3) as t:
        # transpose by swapping the interpolated coordinates: T0 = (y, x)
        copy.draw(t, Rect.covering(0, 0, 3, 4, T0=lambda x, y: (y, x)), {"A": a})
        np.testing.assert_array_equal(t.to_array(), src.T)


def test_primitives_check_their_vertex_counts():
    with pytest.raises(ValueError, match="3 or 3k"):
        Triangle([vertex((0, 0)), vertex((1, 1))])
    with pytest.raises(ValueError, match="4 vertices"):
        Rect([vertex((0, 0))])
    with pytest.raises(ValueError, match="at most 3"):
        Rect.covering(0, 0, 1, 1, T0=(1, 2, 3, 4))


def test_counters_are_off_by_default_and_report_per_kernel():
    assert counters.active is None
    with Stream(8, 8) as s, counters.count() as c:
        FILL.draw(s, Rect.covering(0, 0, 8, 8), uniforms={"value": 2.0})
        FILL.draw(s, Texel.at(0, 0), uniforms={"value": 2.0})
    assert counters.active is None
    st = c.stats["fill"]
    assert (st.passes, st.fragments, st.bytes) == (2, 65, 65 * 4)
    assert "fill" in c.report() and "total" in c.report()
    assert "texel" in c.format_trace()


def test_lines_cover_exactly_at_every_position():
    # rows and columns of every length and offset in a 400 x 400 target: exactly x1 - x0 texels
    with Stream(400, 400) as s:
        for y0, y1 in [(0, 400), (1, 400), (4, 397), (46, 384), (383, 384), (100, 101)]:
            with counters.count() as c:
                FILL.draw(s, Line.row(y0 % 400, y0, y1), uniforms={"value": 1.0})
                FILL.draw(s, Line.column(y1 - 1, y0, y1), uniforms={"value": 1.0})
            assert [p.fragments for p in c.trace] == [y1 - y0, y1 - y0]


def test_vertex_buffer_grows_for_large_primitives():
    # 150 one-texel squares as 300 triangles (900 vertices) in one pass: more than the buffer's
    # initial capacity
    verts = []
    for x in range(150):
        a, b, c, d = vertex((x, 0)), vertex((x, 1)), vertex((x + 1, 1)), vertex((x + 1, 0))
        verts += [a, b, c, a, c, d]
    mask, c = cover((2, 150), Triangle(verts))
    assert c.fragments() == 150 and mask[0].all() and not mask[1].any()


@pytest.mark.parametrize("axis", ["row", "column"])
def test_lines_at_every_start_and_length_up_to_64(axis):
    """Every line of every start x0 and length 1 .. 64 - x0: exactly texels x0 .. x0 + length - 1,
    as the GPU rasterizes it and as covered_spans (what copy-to-texture copies) predicts.
    The stream is 97 texels long, not a power of two, so that the window transform rounds: a
    line ending on the pixel diamond's corner instead of the next texel's centre then shades
    a wrong texel at about half of these positions on llvmpipe."""
    N = 64
    with Stream(N + 6, 97) if axis == "row" else Stream(97, N + 6) as s:
        for x0 in range(N):
            FILL.draw(s, Rect.covering(0, 0, s.cols, s.rows), uniforms={"value": 0.0})
            lengths = range(1, N - x0 + 1)
            if axis == "row":   # length L in row L
                prim = Line.join(*(Line.row(L, x0, x0 + L) for L in lengths))
            else:               # length L in column L
                prim = Line.join(*(Line.column(L, x0, x0 + L) for L in lengths))
            with counters.count() as c:
                FILL.draw(s, prim, uniforms={"value": 1.0})
            got = s.to_array() == 1.0
            want = np.zeros(s.shape, bool)
            for L in lengths:
                if axis == "row":
                    want[L, x0:x0 + L] = True
                else:
                    want[x0:x0 + L, L] = True
            np.testing.assert_array_equal(got, want, err_msg=f"x0 = {x0}")
            assert c.fragments() == want.sum()
            spans = prim.covered_spans(s.cols, s.rows)
            predicted = np.zeros(s.shape, bool)
            for y, a, b in spans:
                predicted[y, a:b] = True
            np.testing.assert_array_equal(predicted, want)


def test_texels_at_every_position_of_a_64_x_64_stream():
    """Texel.at(x, y) shades exactly texel (x, y): each texel gets its own value in one stream."""
    N = 64
    with Stream(N, N) as s:
        for y in range(N):
            for x in range(N):
                FILL.draw(s, Texel.at(x, y), uniforms={"value": float(1 + x + N * y)})
        np.testing.assert_array_equal(s.to_array(), 1 + np.arange(N * N, dtype=np.float32).reshape(N, N))


@pytest.mark.parametrize("x0", range(0, 64, 7))
def test_rects_at_every_start_and_size(x0):
    """Rect.covering(x0, y0, x1, y1) for y0 = x0 and every end up to 64: one pass per rectangle
    with its own value on a fresh stream; exactly the texels [y0, y1) x [x0, x1)."""
    N = 64
    with Stream(N, N) as s:
        for x1 in range(x0 + 1, N + 1, 3):
            FILL.draw(s, Rect.covering(0, 0, N, N), uniforms={"value": 0.0})
            y1 = N - (x1 - x0) // 2
            rect = Rect.covering(x0, x0 // 2, x1, y1)
            FILL.draw(s, rect, uniforms={"value": 1.0})
            want = np.zeros((N, N), bool)
            want[x0 // 2:y1, x0:x1] = True
            np.testing.assert_array_equal(s.to_array() == 1.0, want)
            (r,) = rect.covered_rects(N, N)
            assert r == (x0, x0 // 2, x1 - x0, y1 - x0 // 2)
