import numpy as np
import pytest

import gpgpu
from gpgpu import PingPong, Stream
from gpgpu.context import max_texture_size
from gpgpu.stream import pool_bytes, set_pool_limit


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


# --------------------------------------------------------------------------- recycled GL objects
def test_released_stream_texture_is_reused_and_reads_zero(rng):
    """A released stream's texture serves the next stream of its shape; that stream reads zeros
    (as a new one) or the data it was made with, never the old contents."""
    gpgpu.free_temporaries()
    old = Stream.from_array(rng.random((5, 7)) + 1.0)
    texture = old.texture
    old.release()
    new = Stream(5, 7)
    try:
        assert new.texture is texture
        assert np.array_equal(new.to_array(), np.zeros((5, 7), np.float32))
    finally:
        new.release()
    data = rng.random((5, 7)).astype(np.float32)
    with Stream.from_array(data) as again:
        assert again.texture is texture
        assert np.array_equal(again.to_array(), data)


def test_recycled_textures_keep_their_shape_and_kind(rng):
    gpgpu.free_temporaries()
    s = Stream.from_array(rng.random((4, 6)) + 1.0)
    texture = s.texture
    s.release()
    for shape, kw in (((6, 4), {}), ((4, 6), {"components": 4}), ((4, 5), {})):
        with Stream(*shape, **kw) as other:
            assert other.texture is not texture
            assert np.count_nonzero(other.to_array()) == 0
    with Stream(4, 6) as same:
        assert same.texture is texture


def test_outputs_made_without_zeroing_are_covered_whole_by_their_pass():
    """Kernel outputs made with zero=False (element-wise results, reductions, gemv, the LP's step
    ratios) reuse released textures without clearing them: every texel must still be written
    by the pass. Released textures of each shape are filled with NaN first; a folded vector's
    tail, which its pass does not cover, must still come out zero."""
    from gpgpu import blas1, blas2
    from gpgpu.reduce import reduce_region
    from gpgpu.stream import fold_width, vector_shape

    gpgpu.free_temporaries()
    rng = np.random.default_rng(5)
    n_folded = fold_width() + 3
    for n in (1, 17, 100, n_folded):
        x, y = rng.standard_normal(n), rng.standard_normal(n)
        rows, cols = vector_shape(n)
        dirty = [Stream(*shape, data=np.full(shape, np.nan, np.float32))
                 for shape in ((rows, cols), (1, 1), (1, 4), (4, 1), (1, 3), (3, 1)) for _ in range(3)]
        for s in dirty:
            s.release()
        with Stream.from_array(x) as xs, Stream.from_array(y) as ys:
            for f, want in ((lambda: blas1.saxpy(2.0, xs, ys), 2.0 * x + y),
                            (lambda: blas1.multiply(xs, ys), x * y), (lambda: blas1.scale(-1.0, xs), -x)):
                with f() as out:
                    np.testing.assert_allclose(out.to_array(), want, rtol=1e-6, atol=1e-6)
                    raw = out.texture.read()
                    assert np.count_nonzero(np.isnan(np.frombuffer(raw, np.float32))) == 0
            for op, want in (("sum", x.sum()), ("absmax", np.abs(x).max())):
                with reduce_region(xs, op, strategy="fan") as r:
                    np.testing.assert_allclose(r.item(), want, rtol=1e-5, atol=1e-5)
    A = rng.standard_normal((3, 4))
    for s in [Stream(1, 3, vector=True, data=np.full(3, np.nan, np.float32)) for _ in range(3)]:
        s.release()
    v = rng.standard_normal(4)
    with Stream.from_array(A) as As, Stream.from_array(v) as vs, blas2.gemv(As, vs) as out:
        np.testing.assert_allclose(out.to_array(), A @ v, rtol=1e-6, atol=1e-6)


def test_recycling_counts_in_the_pool_and_its_limit():
    gpgpu.free_temporaries()
    Stream(8, 8).release()
    assert pool_bytes() == 8 * 8 * 4
    assert gpgpu.free_temporaries() == 8 * 8 * 4
    assert pool_bytes() == 0
    old = set_pool_limit(0)
    try:
        s = Stream(8, 8)
        texture = s.texture
        s.release()
        assert pool_bytes() == 0
        with Stream(8, 8) as t:
            assert t.texture is not texture
    finally:
        set_pool_limit(old)


def test_folded_vector_reuses_and_keeps_its_zero_tail(rng, monkeypatch):
    import gpgpu.stream as stream_module
    monkeypatch.setattr(stream_module, "FOLD_WIDTH", 8)
    gpgpu.free_temporaries()
    Stream.from_array(rng.random(21) + 1.0).release()      # 3 x 8 texels, all non-zero but 3
    x = rng.random(21).astype(np.float32)
    with Stream.vector_of(21, data=x) as v:
        assert v.shape == (3, 8)
        assert np.array_equal(v.to_array(), x)
        assert np.array_equal(np.frombuffer(v.texture.read(), np.float32)[21:], np.zeros(3, np.float32))


def test_folded_scopes_nest_inherit_and_stay_on_their_thread(rng, monkeypatch):
    """``folded(w)``: vectors made inside are at most w wide; None inherits the enclosing width;
    FOLD_WIDTH narrower still wins; a stream keeps its shape after the scope; another thread
    does not see the scope; bad widths are refused by name."""
    import threading

    import gpgpu.stream as stream_module
    from gpgpu.stream import folded, vector_shape
    assert vector_shape(300) == (1, 300)
    x = rng.random(300).astype(np.float32)
    with folded(128):
        assert vector_shape(300) == (3, 128) and vector_shape(128) == (1, 128)
        v = Stream.vector_of(300, data=x)
        with folded(None):
            assert vector_shape(300) == (3, 128)
        with folded(64):
            assert vector_shape(300) == (5, 64)
            seen = []
            t = threading.Thread(target=lambda: seen.append(vector_shape(300)))
            t.start()
            t.join()
            assert seen == [(1, 300)]
        assert vector_shape(300) == (3, 128)
        monkeypatch.setattr(stream_module, "FOLD_WIDTH", 16)
        assert vector_shape(300) == (19, 16)
        monkeypatch.setattr(stream_module, "FOLD_WIDTH", None)
    assert vector_shape(300) == (1, 300)
    with v:
        assert v.shape == (3, 128) and np.array_equal(v.to_array(), x)
    for bad in (0, -3, 2.0, True, "128"):
        with pytest.raises(ValueError, match="fold width"):
            folded(bad)


def test_stream_dropped_without_release_gives_its_texture_to_the_pool(rng):
    gpgpu.free_temporaries()
    s = Stream.from_array(rng.random((6, 5)) + 1.0)
    texture = s.texture
    del s                                   # no release(): Stream.__del__
    with Stream(6, 5) as t:
        assert t.texture is texture
        assert np.count_nonzero(t.to_array()) == 0


def test_stream_collected_in_a_cycle_keeps_its_pooled_texture_alive(rng, ctx):
    """The cyclic collector finalizes a Stream and its moderngl texture together: moderngl then
    queues the texture for deletion although the Stream handed it to the pool. The pool's
    texture must survive collect_garbage (else the next stream of the shape gets a deleted
    texture: GL_INVALID_OPERATION and wrong values)."""
    import gc

    gpgpu.free_temporaries()
    s = Stream.from_array(rng.random((6, 5)) + 1.0)
    name = s.texture.glo                   # the GL name only: no reference to the texture object
    cycle = [s]
    cycle.append(cycle)
    del s, cycle
    gc.collect()
    data = rng.random((6, 5)).astype(np.float32)
    with Stream.from_array(data) as t:
        assert t.texture.glo == name
        Stream(2, 3).release()             # runs collect_garbage again
        assert np.array_equal(t.to_array(), data)
        assert gpgpu.reduce(t, "sum").item() == pytest.approx(float(data.sum()), rel=1e-6)
    assert ctx.error == "GL_NO_ERROR"


def test_collection_inside_stream_creation_does_not_free_the_texture_it_takes(rng, ctx):
    """The cyclic collector may run inside Stream() itself, after its collect_garbage and
    before it takes a pooled texture (any allocation there can trigger it): the texture that a
    collected stream just pooled, and that moderngl just queued for deletion, must leave the
    queue with the new stream, or the next collect_garbage deletes it under the stream."""
    import gc

    gpgpu.free_temporaries()
    s = Stream.from_array(rng.random((6, 5)) + 1.0)
    name = s.texture.glo
    cycle = [s]
    cycle.append(cycle)
    del s, cycle
    data = rng.random((6, 5)).astype(np.float32)

    class CollectsWhenRead:
        def __array__(self, dtype=None, copy=None):
            gc.collect()
            return data

    enabled = gc.isenabled()
    gc.disable()
    try:
        t = Stream(6, 5, data=CollectsWhenRead())
        assert t.texture.glo == name
        Stream(2, 3).release()                        # collect_garbage again
        assert np.array_equal(t.to_array(), data)
        t.release()
    finally:
        if enabled:
            gc.enable()
    assert ctx.error == "GL_NO_ERROR"


def test_collection_while_garbage_is_freed_keeps_the_pool_intact(ctx):
    """A collection that pools a texture while collect_garbage empties the queue: the pooled
    texture is skipped there too (the pool's set is asked for every queued object)."""
    import gc

    from gpgpu.context import collect_garbage

    gpgpu.free_temporaries()
    s = Stream.from_array(np.ones((6, 5)))
    cycle = [s]
    cycle.append(cycle)
    del s, cycle

    class CollectsWhenReleased:
        def release(self):
            gc.collect()

    enabled = gc.isenabled()
    gc.disable()
    try:
        ctx.objects.append(CollectsWhenReleased())
        ctx.objects.append(CollectsWhenReleased())
        collect_garbage(ctx)
        with Stream(6, 5, data=np.full((6, 5), 3.0)) as t:
            assert np.array_equal(t.to_array(), np.full((6, 5), 3.0, np.float32))
    finally:
        if enabled:
            gc.enable()
    assert ctx.error == "GL_NO_ERROR"


def test_dropped_streams_stay_within_the_pool_limit():
    """Streams dropped without release() are pooled only while the pool stays under its byte
    limit (their finalizer may not evict: no GL call there)."""
    gpgpu.free_temporaries()
    old = set_pool_limit(3 * 10 * 10 * 4)
    try:
        streams = [Stream(10, 10) for _ in range(6)]
        del streams
        assert pool_bytes() <= 3 * 10 * 10 * 4
        assert pool_bytes() == 3 * 10 * 10 * 4      # three kept, the others left to moderngl's queue
    finally:
        set_pool_limit(old)
        gpgpu.free_temporaries()


def test_a_temporary_given_back_twice_is_pooled_once():
    """A second give_back of the same stream is a no-op: pooled twice, two later borrow()s would
    get the same texture and overwrite each other."""
    from gpgpu.stream import borrow, give_back

    s = borrow(3, 5)
    give_back(s)
    give_back(s)
    a, b = borrow(3, 5), borrow(3, 5)
    assert a is not b
    give_back(a, b)


@pytest.mark.parametrize("components", [1, 2, 4])
def test_each_kind_of_texel_round_trips_its_components(components, rng):
    a = rng.standard_normal((3, 5, components)).astype(np.float32)
    with Stream(3, 5, components=components, data=a) as s:
        back = s.to_array()
        assert s.nbytes == 3 * 5 * components * 4
        assert ("rg" in repr(s)) == (components > 1)
    np.testing.assert_array_equal(back, a[..., 0] if components == 1 else a)


def test_a_texel_of_three_components_is_refused_by_name():
    with pytest.raises(ValueError, match=r"1 \(R32F\), 2 \(RG32F\) or 4 \(RGBA32F\), got 3"):
        Stream(2, 2, components=3)
