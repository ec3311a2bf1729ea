import numpy as np
import pytest

import gpgpu
from gpgpu import Stream, counters
from gpgpu.reduce import argmax_region, reduce_region

from conftest import LENGTHS

NUMPY = {"sum": np.sum, "max": np.max, "min": np.min, "absmax": lambda a, axis=None: np.max(np.abs(a), axis=axis)}


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("op", ["sum", "max", "min", "absmax"])
def test_vector_reductions_exact_on_integers(n, op, rng):
    x = rng.integers(-50, 50, n).astype(np.float64)
    assert gpgpu.reduce(x, op) == NUMPY[op](x)


@pytest.mark.parametrize("n", LENGTHS)
def test_pyramid_sum_exact_on_integers(n, rng):
    x = rng.integers(-50, 50, n).astype(np.float64)
    assert gpgpu.reduce(x, "sum", strategy="pyramid") == x.sum()


def test_pingpong_takes_ceil_log2_passes():
    with counters.count() as c:
        gpgpu.reduce(np.ones(257), "sum")
    assert c.passes("sum_reduction") == 9
    # the first pass shades ceil(257/2) fragments, then 65, 33, ... 1
    assert [p.fragments for p in c.trace] == [129, 65, 33, 17, 9, 5, 3, 2, 1]


@pytest.mark.parametrize("n", LENGTHS + [32, 33, 1025])
def test_fan_sum_exact_on_integers(n, rng):
    x = rng.integers(-50, 50, n).astype(np.float64)
    assert gpgpu.reduce(x, "sum", strategy="fan") == x.sum()


def test_fan_sum_counts_every_position_once():
    """A one-hot vector at every position of a three-level fan (70 -> 3 -> 1): a texel read
    twice, skipped or read past the end (T0 off by one, the limit test wrong) gives 0 or 2."""
    n = 70
    for j in range(n):
        e = np.zeros(n)
        e[j] = 1.0
        assert gpgpu.reduce(e, "sum", strategy="fan") == 1.0, j
    a = np.zeros((40, 3))
    for j in range(40):               # down a column, each row in turn
        a[:] = 0.0
        a[j, 1] = 1.0
        np.testing.assert_array_equal(gpgpu.reduce(a, "sum", axis=0, strategy="fan"), [0.0, 1.0, 0.0])


def test_fan_takes_ceil_log32_passes():
    with counters.count() as c:
        assert gpgpu.reduce(np.ones(4097), "sum", strategy="fan") == 4097.0
    assert [p.fragments for p in c.trace] == [129, 5, 1]


@pytest.mark.parametrize("shape", [(3, 70), (40, 2), (1, 5), (6, 1)])
def test_fan_matrix_sums_along_rows_columns_and_whole(shape, rng):
    a = rng.integers(-9, 9, shape).astype(np.float64)
    np.testing.assert_array_equal(gpgpu.reduce(a, "sum", axis=0, strategy="fan"), a.sum(axis=0))
    np.testing.assert_array_equal(gpgpu.reduce(a, "sum", axis=1, strategy="fan"), a.sum(axis=1))
    assert gpgpu.reduce(a, "sum", strategy="fan") == a.sum()


def test_fan_sum_of_an_interior_region(rng):
    a = rng.integers(-9, 10, (50, 70)).astype(np.float64)
    with Stream.from_array(a) as s:
        r = reduce_region(s, "sum", (3, 2, 68, 47), axis=1, strategy="fan")
        np.testing.assert_array_equal(r.to_array().reshape(-1), a[2:47, 3:68].sum(axis=1))
        r.release()
        r = reduce_region(s, "sum", (3, 2, 68, 47), strategy="fan")
        assert r.item() == a[2:47, 3:68].sum()
        r.release()


@pytest.mark.parametrize("op,ref", [("max", np.max), ("min", np.min), ("absmax", lambda a, **k: np.abs(a).max(**k))])
def test_fan_max_min_absmax_equal_numpy_at_every_position(op, ref):
    """Beyond the papers: max, min and absmax by the fan (32 texels a fragment). The extreme at
    every position of a three-level fan (70 -> 3 -> 1), of either sign, among values of the
    other sign and larger magnitude for absmax: a texel skipped or read past the end, the
    identity wrong (0.0 for max or min) or the abs forgotten gives another answer."""
    n = 70
    base = np.linspace(-1.0, 1.0, n)
    for j in range(n):
        for sign in (1.0, -1.0):
            x = base * 0.5
            x[j] = sign * 5.0
            assert gpgpu.reduce(x, op, strategy="fan") == np.float32(ref(x)), (op, j, sign)
    neg = -np.arange(1.0, 71.0)            # all negative: a max whose identity were 0 says 0
    assert gpgpu.reduce(neg, op, strategy="fan") == np.float32(ref(neg))
    assert gpgpu.reduce(-neg, op, strategy="fan") == np.float32(ref(-neg))
    a = np.random.default_rng(7).normal(size=(40, 37))
    with Stream.from_array(a) as s:
        for axis in (0, 1):
            r = reduce_region(s, op, (2, 3, 35, 38), axis=axis, strategy="fan")
            np.testing.assert_array_equal(r.to_array().reshape(-1),
                                          ref(a[3:38, 2:35].astype(np.float32), axis=axis))
            r.release()
        r = reduce_region(s, op, (2, 3, 35, 38), strategy="fan")
        assert r.item() == ref(a[3:38, 2:35].astype(np.float32))
        r.release()


def test_fan_min_and_max_keep_an_infinity():
    """The fan starts from each fragment's first texel, not from an identity: the min of +inf's
    is +inf and the max of -inf's is -inf (an identity of +-3.4e38 would answer that)."""
    for n in (5, 70):
        with Stream(1, n) as s:
            s.texture.write(np.full(n, np.inf, np.float32).tobytes())      # past the checks
            r = reduce_region(s, "min", strategy="fan")
            assert r.item() == np.inf
            r.release()
            s.texture.write(np.full(n, -np.inf, np.float32).tobytes())
            r = reduce_region(s, "max", strategy="fan")
            assert r.item() == -np.inf
            r.release()


def test_fan_absmax_passes_a_nan_on():
    """As the halving absmax: an infinity norm never hides a NaN (GLSL's max may drop it)."""
    with Stream(1, 70) as s:
        s.texture.write(np.where(np.arange(70) == 40, np.nan, -2.0).astype(np.float32).tobytes())  # past the checks
        for strategy in ("pingpong", "fan"):
            r = reduce_region(s, "absmax", strategy=strategy)
            assert np.isnan(r.item()), strategy
            r.release()


def test_pyramid_pads_to_power_of_two():
    with counters.count() as c:
        assert gpgpu.reduce(np.ones(5), "sum", strategy="pyramid") == 5.0
    assert c.fragments("fill") == 3 and c.fragments("copy") == 5
    assert [p.fragments for p in c.trace if p.kernel == "sum_reduction"] == [4, 2, 1]


@pytest.mark.parametrize("shape", [(3, 7), (17, 2), (1, 5), (6, 1)])
@pytest.mark.parametrize("op", ["sum", "max", "min", "absmax"])
def test_matrix_reductions_along_rows_columns_and_whole(shape, op, rng):
    a = rng.integers(-9, 9, shape).astype(np.float64)
    np.testing.assert_array_equal(gpgpu.reduce(a, op, axis=0), NUMPY[op](a, axis=0))
    np.testing.assert_array_equal(gpgpu.reduce(a, op, axis=1), NUMPY[op](a, axis=1))
    assert gpgpu.reduce(a, op) == NUMPY[op](a)


def test_stream_in_stream_out():
    with Stream.from_array(np.arange(10.0)) as s:
        r = gpgpu.reduce(s, "sum")
        assert isinstance(r, Stream) and r.shape == (1, 1) and r.item() == 45.0
        r.release()


@pytest.mark.parametrize("n", LENGTHS)
def test_argmax_returns_first_maximum(n, rng):
    x = rng.integers(0, 5, n).astype(np.float64)
    value, index = gpgpu.argmax(x)
    assert value == x.max() and index == int(np.argmax(x))
    value, index = gpgpu.argmax(-x, absolute=True)
    assert value == x.max() and index == int(np.argmax(x))


def test_argmax_of_matrix_is_first_in_column_major_order():
    a = np.zeros((4, 5))
    a[2, 3] = a[1, 4] = a[3, 3] = 7.0
    assert gpgpu.argmax(a) == (7.0, (2, 3))


def test_argmax_region_column_for_pivot_search(rng):
    a = rng.standard_normal((9, 6))
    with Stream.from_array(a) as s:
        value, x, y = argmax_region(s, (2, 3, 3, 9), absolute=True)  # column 2, rows 3..8
    assert x == 2 and y == 3 + int(np.argmax(np.abs(a[3:, 2])))
    assert value == pytest.approx(np.abs(a[3:, 2]).max(), rel=1e-6)


def test_reduce_region_of_submatrix(rng):
    a = rng.integers(-9, 9, (8, 8)).astype(np.float64)
    with Stream.from_array(a) as s:
        r = reduce_region(s, "sum", (2, 3, 7, 8))
        assert r.item() == a[3:8, 2:7].sum()
        r.release()


def test_unknown_op_and_bad_strategy_raise():
    with pytest.raises(ValueError, match="unknown reduction"):
        gpgpu.reduce(np.ones(3), "median")
    with pytest.raises(ValueError, match="strategy"):
        gpgpu.reduce(np.ones(3), "sum", strategy="tree")
    with pytest.raises(ValueError, match="pyramid"):
        gpgpu.reduce(np.ones(3), "max", strategy="pyramid")


# Regions that touch no edge of the stream: a kernel that checks the partner texel against the
# region's end on one axis only reads texels outside the region and gets these wrong.
INTERIOR = [(1, 1, 4, 4), (2, 1, 5, 2), (1, 3, 2, 6), (0, 0, 5, 3), (0, 2, 6, 3), (3, 0, 4, 7),
            (1, 2, 6, 5)]


@pytest.mark.parametrize("region", INTERIOR)
@pytest.mark.parametrize("op", ["sum", "max", "min", "absmax"])
def test_reduce_region_inside_the_stream(region, op, rng):
    a = rng.integers(-9, 10, (7, 8)).astype(np.float64)
    x0, y0, x1, y1 = region
    sub = a[y0:y1, x0:x1]
    with Stream.from_array(a) as s:
        for axis, want in ((None, NUMPY[op](sub)), (1, NUMPY[op](sub, axis=1)), (0, NUMPY[op](sub, axis=0))):
            r = reduce_region(s, op, region, axis=axis)
            got = r.to_array().reshape(-1)
            r.release()
            np.testing.assert_array_equal(got, np.ravel(want), err_msg=f"axis={axis}")


@pytest.mark.parametrize("region", INTERIOR)
def test_argmax_region_inside_the_stream(region, rng):
    a = rng.integers(-9, 10, (7, 8)).astype(np.float64)
    a[a == 9] = 8              # the only 9s are planted: one inside, one just outside the region
    x0, y0, x1, y1 = region
    a[y1 - 1, x1 - 1] = 9.0
    a[min(y1, 6), min(x1, 7)] = 9.5 if (y1 < 7 or x1 < 8) else a[min(y1, 6), min(x1, 7)]
    with Stream.from_array(a) as s:
        value, x, y = argmax_region(s, region)
    assert (value, x, y) == (9.0, x1 - 1, y1 - 1)


def test_pyramid_sum_of_an_interior_row(rng):
    a = rng.integers(-9, 10, (3, 11)).astype(np.float64)
    with Stream.from_array(a) as s:
        r = reduce_region(s, "sum", (2, 1, 9, 2), strategy="pyramid")
        assert r.item() == a[1, 2:9].sum()
        r.release()


def test_reduce_argmax_op(rng):
    x = rng.integers(0, 50, 37).astype(np.float64)
    assert gpgpu.reduce(x, "argmax") == (x.max(), int(np.argmax(x)))
    with pytest.raises(ValueError, match="axis must be None"):
        gpgpu.reduce(x, "argmax", axis=0)


@pytest.mark.parametrize("shape", [(1, 1), (1, 7), (9, 1), (33, 1), (1, 100), (40, 70), (100, 3), (1100, 1), (2200, 1), (1, 2200)])
def test_fan_argmax_is_numpys_first_maximum_in_column_major_order(shape):
    from gpgpu.reduce import argmax_stream
    from gpgpu.stream import give_back

    rng = np.random.default_rng(shape[0] * 1000 + shape[1])
    A = rng.integers(-5, 6, shape).astype(float)          # many ties
    regions = [None] + ([(1, 2, shape[1] - 1, shape[0] - 1)] if min(shape) > 3 else [])
    with Stream.from_array(A) as S:
        for region in regions:
            x0, y0, x1, y1 = region or (0, 0, shape[1], shape[0])
            sub = A[y0:y1, x0:x1]
            for absolute, negate in ((False, False), (True, False), (False, True)):
                v = np.abs(sub) if absolute else (-sub if negate else sub)
                j = int(np.argmax(v.T.ravel()))               # columns first, then rows: the first maximum
                want = (float(v.T.ravel()[j]), x0 + j // v.shape[0], y0 + j % v.shape[0])
                res = argmax_stream(S, region, absolute, negate, fan=True)
                got = res.to_array().reshape(-1)
                give_back(res)
                assert (float(got[0]), int(got[1]), int(got[2])) == want, (region, absolute, negate)


@pytest.mark.parametrize("fan", [False, True])
@pytest.mark.parametrize("shape", [(1, 5), (40, 1), (1100, 1), (9, 13)])
def test_argmax_into_a_record_writes_its_texel_only(fan, shape):
    """argmax_stream(out=record, at=k) renders the answer into texel (k, 0) of the record (LU's
    record of pivots, issue 13) and leaves every other texel as it was: the last pass placed by
    its rectangle, the other passes in their own temporaries."""
    from gpgpu.reduce import argmax_stream

    rng = np.random.default_rng(shape[0] + shape[1])
    A = rng.standard_normal(shape)
    want = np.full((1, 7, 4), -3.0)
    with Stream.from_array(A) as S, Stream(1, 7, components=4, data=want.astype(np.float32)) as record:
        for at in (0, 3, 6):
            assert argmax_stream(S, None, absolute=True, fan=fan, out=record, at=at) is record
            j = int(np.argmax(np.abs(A).T.ravel()))
            want[0, at] = (np.float32(np.abs(A).T.ravel()[j]), j // shape[0], j % shape[0], 0.0)
            np.testing.assert_array_equal(record.to_array(), want.astype(np.float32))
        with pytest.raises(ValueError, match="RGBA stream of one row with texel 7"):
            argmax_stream(S, out=record, at=7)


@pytest.mark.parametrize("n", [1, 2, 31, 32, 33, 1025, 2100])
def test_terms_computed_in_the_first_fan_pass_equal_their_own_kernels(n):
    """reduce_terms / argmin_blocking_ratio (beyond the papers: the LP's inner products and line
    searches with the element-wise term in the reduction's first pass): the minimum and the
    blocking index equal those of the step_ratio / blocking_ratio kernels followed by the fan
    reductions, bit for bit; the inner product is numpy's to float32 rounding. Integer data:
    ties among the ratios, so the first argmin must win."""
    from gpgpu import blas1
    from gpgpu.reduce import argmax_stream, argmin_blocking_ratio, reduce_terms
    from gpgpu.stream import give_back

    rng = np.random.default_rng(n)
    x = rng.integers(1, 4, n).astype(float)
    dx = rng.integers(-3, 3, n).astype(float)
    with Stream.from_array(x) as X, Stream.from_array(dx) as DX:
        got = reduce_terms("product", "sum", X, DX)
        np.testing.assert_allclose(got.item(), x @ dx, rtol=0, atol=1e-6 * np.abs(x * dx).sum())
        got.release()
        for kernel, term in (("step_ratio", "step_ratio"),):
            ratios = Stream.like(X)
            blas1.KERNELS[kernel].draw(ratios, blas1.whole(ratios), {"X": X, "DX": DX})
            want = reduce_region(ratios, "min", strategy="fan").item()
            with reduce_terms(term, "min", X, DX) as got:
                assert got.item() == want == np.float32(min(1.0, np.min(np.where(dx < 0, x / np.maximum(-dx, 1), 1.0))))
            blas1.KERNELS["blocking_ratio"].draw(ratios, blas1.whole(ratios), {"X": X, "DX": DX})
            want = argmax_stream(ratios, negate=True, fan=True)
            got = argmin_blocking_ratio(X, DX)
            assert np.array_equal(got.to_array(), want.to_array())
            if (dx < 0).any():
                r = np.where(dx < 0, x / np.maximum(-dx, 1), np.inf)
                assert int(got.read_texel(0, 0)[1]) == int(np.argmin(r))
            give_back(got, want)
            ratios.release()
        with pytest.raises(ValueError, match="not"):
            reduce_terms("product", "min", X, DX)
        with Stream.from_array(np.ones(n + 1)) as other, pytest.raises(ValueError, match="one shape"):
            reduce_terms("product", "sum", X, other)


def test_reduce_into_writes_its_texel_only_and_equals_the_fan_reduction():
    """reduce_into / reduce_terms(at=): a fan reduction's last pass rendered into one texel of a
    bank (the LP's scalars read back at once): the values of reduce_region(strategy="fan") and
    reduce_terms bit for bit, the other texels untouched."""
    from gpgpu.reduce import reduce_into, reduce_terms

    rng = np.random.default_rng(9)
    x, y = rng.standard_normal(1500), rng.standard_normal(1500)
    with Stream.from_array(x) as X, Stream.from_array(y) as Y, \
            Stream(1, 5, data=np.full(5, -7.0, np.float32)) as bank:
        reduce_into("absmax", X, bank, 3)
        reduce_terms("product", "sum", X, Y, out=bank, at=1)
        want_abs = reduce_region(X, "absmax", strategy="fan").item()
        want_dot = reduce_terms("product", "sum", X, Y).item()
        got = bank.to_array().reshape(-1)
        assert got[3] == want_abs == np.float32(np.abs(x).max())
        assert got[1] == want_dot
        assert list(got[[0, 2, 4]]) == [-7.0, -7.0, -7.0]
        with pytest.raises(ValueError, match="reduce_into"):
            reduce_into("absmax", X, bank, 5)
        with pytest.raises(ValueError, match="at=3 needs an out stream"):
            reduce_terms("product", "sum", X, Y, at=3)
        with pytest.raises(ValueError, match="at=5 needs an out stream with texel 5"):
            reduce_terms("product", "sum", X, Y, out=bank, at=5)


@pytest.mark.parametrize("shape", [(3, 3), (3, 5), (5, 3)])
def test_pyramid_fills_its_whole_padding_not_reading_a_pooled_texture(shape):
    """Corrigan's pyramid (003, Fig. 2) pads to the next powers of two with zeros, the corner
    right of and below the data included: its base is a pooled texture, so with NaN-filled
    textures of that shape given back to the pool first, a padding texel left unfilled reads NaN.
    A rows x cols block of ones sums to rows x cols."""
    from gpgpu.stream import give_back

    rows, cols = shape
    side = lambda k: 1 << (k - 1).bit_length()                       # noqa: E731
    base = (side(rows), side(cols))
    gpgpu.free_temporaries()              # the pool's streams of that shape: only these
    give_back(*(Stream(*base, data=np.full(base, np.nan, np.float32)) for _ in range(4)))
    assert gpgpu.reduce(np.ones(shape), "sum", strategy="pyramid") == rows * cols


@pytest.mark.parametrize("shape, axis", [((1, 257), None), ((300, 1), None), ((5, 77), 1), ((77, 5), 0)])
def test_pingpong_alternates_exactly_two_textures(shape, axis, rng):
    """The ping-pong reduction renders its levels into TWO temporaries, A, B, A, B, ... (not a
    texture borrowed per level), and only its last pass into the result; the sums agree with
    numpy's float64 within float32's bound (log2 n additions of rounding 2^-24 each, relative
    to the sum of magnitudes, and the upload's). A texture per level (9 of them for 257) fails here."""
    from gpgpu import record

    x = rng.standard_normal(shape)
    with record.record(max_texels=4096) as rec:
        got = gpgpu.reduce(x, "sum", axis=axis)
    frames = [f for f in rec.frames if f.kernel == "sum_reduction"]
    n = max(shape) if axis is None else shape[axis]
    assert len(frames) == int(np.ceil(np.log2(n)))
    levels = [f.target_id for f in frames[:-1]]
    assert len(set(levels)) == 2, levels
    assert all(a != b for a, b in zip(levels, levels[1:]))          # they alternate
    assert frames[-1].target_id not in levels
    ref = x.sum() if axis is None else x.sum(axis=axis)
    # the upload's rounding to float32, then one rounding a level, each at most 2^-24 of the
    # sum of magnitudes
    bound = (np.ceil(np.log2(n)) + 1) * 2.0 ** -24 * (np.abs(x).sum() if axis is None else np.abs(x).sum(axis=axis))
    assert np.all(np.abs(np.asarray(got) - ref) <= bound), (got, ref)


@pytest.mark.parametrize("n, fold", [(1, None), (5, None), (64, None), (1000, None), (100, 16), (4096, 1000)])
def test_dot_pyramid_is_the_exact_inner_product_of_integers(monkeypatch, rng, n, fold):
    """Corrigan's inner product (003, Figs. 1-3): the products drawn into the pyramid's base,
    padded to the next powers of two with zeros, then its levels. Small integers multiply and
    add exactly in float32, so the answer is numpy's; a folded vector (rows of ``fold``: its
    full rows and its partial last row, each a pyramid, at a row offset) reads each region at
    its place (a product read a row off, or the last row's pyramid reading the full rows', is
    another integer). Against the NaN-poisoned pool, so an unfilled padding texel is NaN."""
    from gpgpu import stream
    from gpgpu.reduce import dot_pyramid
    from gpgpu.stream import give_back

    if fold:
        monkeypatch.setattr(stream, "FOLD_WIDTH", fold)
    x64 = rng.integers(-8, 9, n).astype(np.float64)
    y64 = rng.integers(-8, 9, n).astype(np.float64)
    x, y = Stream.vector_of(n, data=x64.astype(np.float32)), Stream.vector_of(n, data=y64.astype(np.float32))
    side = lambda k: 1 << (k - 1).bit_length()                       # noqa: E731
    gpgpu.free_temporaries()
    give_back(*(Stream(side(r1 - r0), side(c1 - c0), data=np.full((side(r1 - r0), side(c1 - c0)), np.nan, np.float32))
                for c0, r0, c1, r1 in x.regions() for _ in range(2)))
    try:
        if fold:
            assert len(x.regions()) == 2
        assert dot_pyramid(x, y).item() == float(x64 @ y64)
        assert gpgpu.dot(x64, y64, strategy="pyramid") == float(x64 @ y64)
    finally:
        x.release()
        y.release()


def test_dot_pyramid_draws_the_products_into_the_base():
    """003 Fig. 2: "The temporary vector has dimension of the next highest power of two": the
    product pass renders the base itself, no copy of a product into it. 4096 entries in a row:
    1 product pass + 12 halving levels; 3000: 1 fill of the padding + 1 + 12."""
    from gpgpu import counters
    from gpgpu.reduce import dot_pyramid

    for n, passes in ((4096, 13), (3000, 14)):
        x = Stream.vector_of(n, data=np.ones(n, np.float32))
        try:
            with counters.count(time=False, trace=True) as c:
                assert dot_pyramid(x, x).item() == n
            assert c.passes() == passes
            assert [p.kernel for p in c.trace].count("copy") == 0
        finally:
            x.release()


def test_dot_pyramid_refuses_vectors_of_different_shapes():
    from gpgpu.reduce import dot_pyramid

    x, y = Stream.vector_of(4, data=np.ones(4, np.float32)), Stream.vector_of(5, data=np.ones(5, np.float32))
    try:
        with pytest.raises(ValueError, match="dot_pyramid: shapes differ"):
            dot_pyramid(x, y)
    finally:
        x.release()
        y.release()
