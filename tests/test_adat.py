import numpy as np
import pytest

import gpgpu
from gpgpu import Stream, counters
from gpgpu import packed as pk
from gpgpu.adat import (column_scaling_rect, inner_product_square, inner_product_triangle,
                        outer_product_addition_packed, outer_product_addition_square,
                        outer_product_addition_triangle)
from gpgpu.kernel import Kernel

from conftest import rel_err

MARK = Kernel("fill", texels=1)
SHAPES = [(1, 1), (2, 4), (3, 6), (5, 10), (16, 32), (33, 66), (6, 3)]


def covered(shape, primitive):
    with Stream(*shape) as s:
        MARK.draw(s, primitive, uniforms={"value": 1.0})
        return s.to_array() == 1.0


@pytest.mark.parametrize("m", [1, 2, 3, 4, 5, 6, 7, 10, 11])
def test_primitives_cover_exactly(m):
    for k in (0, 3):
        np.testing.assert_array_equal(covered((1, m), column_scaling_rect(k, m)), np.ones((1, m), bool))
        np.testing.assert_array_equal(covered((m, m), outer_product_addition_triangle(k, m)),
                                      np.tril(np.ones((m, m), bool)))
        np.testing.assert_array_equal(covered((m, m), outer_product_addition_square(k, m)), np.ones((m, m), bool))
        np.testing.assert_array_equal(covered(pk.packed_shape(m), outer_product_addition_packed(k, m)), pk.mask(m))
    np.testing.assert_array_equal(covered((m, m), inner_product_triangle(m)), np.tril(np.ones((m, m), bool)))
    np.testing.assert_array_equal(covered((m, m), inner_product_square(m)), np.ones((m, m), bool))


@pytest.mark.parametrize("m, n", SHAPES)
def test_matches_numpy_in_every_storage(m, n, rng):
    A = rng.random((m, n))
    d = rng.random(n)
    C = A @ np.diag(d) @ A.T
    assert rel_err(gpgpu.adat(A, d), np.tril(C)) < 1e-6
    assert np.array_equal(gpgpu.adat(A, d), np.tril(gpgpu.adat(A, d)))  # the upper part is never formed
    assert rel_err(gpgpu.adat(A, d, domain="square"), C) < 1e-6
    assert rel_err(gpgpu.adat(A, d, storage="packed"), np.tril(C)) < 1e-6
    assert rel_err(gpgpu.adat(A), np.tril(A @ A.T)) < 1e-6


def _integer_case(m, n, rng):
    """A and d of small integers and A diag(d) A^T: every float32 sum exact."""
    A = rng.integers(-4, 5, (m, n)).astype(np.float64)
    d = rng.integers(1, 4, n).astype(np.float64)
    return A, d, A @ np.diag(d) @ A.T


@pytest.mark.parametrize("m, n", SHAPES)
def test_singlepass_inner_product_form_matches_numpy(m, n, rng):
    """000's singlepass inner-product adat: one pass, m(m+1)/2 fragments (the lower triangle)
    each an inner product of rows i and j of A weighted by d; integers make it exact, so a
    skipped or repeated column, a row i for j, or d read at the wrong column shows."""
    A, d, C = _integer_case(m, n, rng)
    with counters.count() as c:
        got = gpgpu.adat(A, d, product="inner")
    np.testing.assert_array_equal(got, np.tril(C))
    assert c.passes("adat_inner_product") == 1 and c.fragments("adat_inner_product") == m * (m + 1) // 2
    assert c.passes("column_scaling") == c.passes("outer_product_addition") == 0
    np.testing.assert_array_equal(gpgpu.adat(A, d, product="inner", domain="square"), C)
    np.testing.assert_array_equal(gpgpu.adat(A, product="inner"), np.tril(A @ A.T))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 9, 17, 257])
def test_pack_4x1_puts_four_columns_in_a_texel_and_zeros_past_the_end(n, rng):
    """Beyond the papers: texel (q, i) = A(i, 4q .. 4q+3) exactly, zeros past column n (a
    column off by one, a channel order swapped or garbage in the tail shows)."""
    from gpgpu.adat import pack_4x1

    A = rng.standard_normal((3, n)).astype(np.float32)
    want = np.zeros((3, -(-n // 4) * 4), np.float32)
    want[:, :n] = A
    with Stream.from_array(A) as s:
        p = pack_4x1(s)
        assert p.shape == (3, -(-n // 4)) and p.components == 4
        np.testing.assert_array_equal(p.to_array().reshape(3, -1), want)
        p.release()
    x = rng.standard_normal(n).astype(np.float32)
    with Stream.from_array(x) as v:
        p = pack_4x1(v)
        np.testing.assert_array_equal(p.to_array().reshape(-1), np.pad(x, (0, want.shape[1] - n)))
        p.release()


@pytest.mark.parametrize("m, n", SHAPES + [(5, 1), (6, 2), (7, 3), (9, 5)])
def test_inner_product_form_over_4x1_texels_matches_numpy(m, n, rng):
    """product="inner4" (beyond the papers): the singlepass inner products over 4 x 1 packed
    A and d, exact on integers (a packed column skipped or repeated, d's channels out of step
    with A's, or the zero tail read as data shows); one product pass over the lower triangle
    and two packings; A given packed already gives the same."""
    from gpgpu.adat import form, pack_4x1

    A, d, C = _integer_case(m, n, rng)
    with counters.count() as c:
        got = gpgpu.adat(A, d, product="inner4")
    np.testing.assert_array_equal(got, np.tril(C))
    assert c.passes("adat_inner_product_4x1") == 1 and c.fragments("adat_inner_product_4x1") == m * (m + 1) // 2
    assert c.passes("pack_4x1") == 2 and c.passes("adat_inner_product") == 0
    np.testing.assert_array_equal(gpgpu.adat(A, d, product="inner4", domain="square"), C)
    with Stream.from_array(A) as As, Stream.from_array(d) as ds:
        A4 = pack_4x1(As)
        C4 = form(A4, ds, product="inner4")
        np.testing.assert_array_equal(np.tril(C4.to_array()), np.tril(C))
        C4.release()
        with Stream.from_array(np.ones(n + 4)) as too_long, pytest.raises(ValueError, match="packed A"):
            form(A4, too_long, product="inner4")
        A4.release()


@pytest.mark.parametrize("m, n", [(4, 8), (7, 3), (16, 32)])
def test_fragment_counts(m, n, rng):
    A, d = rng.random((m, n)), rng.random(n)
    counts = {}
    for kw in (dict(), dict(domain="square"), dict(storage="packed")):
        with counters.count() as c:
            gpgpu.adat(A, d, **kw)
        assert c.fragments("column_scaling") == n * m
        counts[tuple(kw.items())] = c.fragments("outer_product_addition")
    assert counts[()] == n * m * (m + 1) // 2  # Table 2 of 000 / section 5.2: n m(m+1)/2
    assert counts[(("domain", "square"),)] == n * m * m
    assert counts[(("storage", "packed"),)] == counts[()]  # packed equals full


def test_stream_in_stream_out_packed_feeds_cholesky(rng):
    m, n = 9, 18
    A, d = rng.random((m, n)), rng.random(n) + 0.5
    with Stream.from_array(A) as As, Stream.from_array(d) as ds:
        C = gpgpu.adat(As, ds, storage="packed")
        assert C.shape == pk.packed_shape(m)
        L = gpgpu.cholesky(C, storage="packed")
        ref = np.linalg.cholesky(A @ np.diag(d) @ A.T)
        assert rel_err(pk.unpack(L.to_array()), ref) < 1e-4
        C.release(), L.release()


def test_errors():
    with pytest.raises(ValueError, match="length 3"):
        gpgpu.adat(np.ones((2, 3)), np.ones(2))
    with pytest.raises(ValueError, match="domain"):
        gpgpu.adat(np.ones((2, 3)), domain="circle")
    with pytest.raises(ValueError, match="packed"):
        gpgpu.adat(np.ones((2, 3)), storage="packed", domain="square")
    with pytest.raises(ValueError, match="product must be one of"):
        gpgpu.adat(np.ones((2, 3)), product="middle")
    with pytest.raises(ValueError, match="product='inner' forms the full"):
        gpgpu.adat(np.ones((2, 3)), storage="packed", product="inner")
    with pytest.raises(ValueError, match="product='inner4' forms the full"):
        gpgpu.adat(np.ones((2, 3)), storage="packed", product="inner4")
    with pytest.raises(ValueError, match="length 3"):
        gpgpu.adat(np.ones((2, 3)), np.ones(2), product="inner4")


@pytest.mark.parametrize("storage", ["full", "packed"])
@pytest.mark.parametrize("m", [4, 5])
def test_copy_to_texture_forms_the_same_matrix(storage, m, rng):
    """adat(transfer="ctt"): every pass rendered into the p-buffer and its region copied by
    glCopyTexSubImage2D; the texels copied equal the fragments each pass shaded."""
    A = rng.standard_normal((m, 2 * m))
    d = rng.random(2 * m)
    with counters.count() as c:
        C = gpgpu.adat(A, d, storage=storage, transfer="ctt")
    ref = np.tril((A * d) @ A.T)
    np.testing.assert_allclose(np.tril(C), ref, rtol=1e-5, atol=1e-5)
    trace = c.trace
    copies = [(prev, p) for prev, p in zip(trace, trace[1:]) if p.kernel == "copy_to_texture"]
    assert len(copies) == 2 * (2 * m)            # column scaling and outer product addition, n = 2m steps
    assert all(p.fragments == prev.fragments for prev, p in copies)
    assert c.fragments("copy_to_texture") == 2 * m * (m + m * (m + 1) // 2)


# ---------------------------------------------------------------------- equilibration (beyond the papers)
def test_equilibration_is_the_power_of_two_nearest_one_over_the_square_root():
    from gpgpu.adat import equilibration

    diag = np.array([4.0, 0.25, 3.0, 0.0, np.inf, 1e21, 5e-30, np.nan, -2.0, 1e-300, 1e300])
    s = equilibration(diag)
    # by hand: 4 -> 1/2, 1/4 -> 2, 3 -> 2^-round(0.79) = 1/2, 1e21 -> 2^-round(34.88) = 2^-35,
    # 5e-30 -> 2^-round(-48.6) = 2^49; 0, inf, nan and a negative entry -> 1; 1e-300 and
    # 1e300 (beyond float32) held at 2^63 and 2^-63, so that s(i) s(j) stays a float32 number
    np.testing.assert_array_equal(s, [0.5, 2.0, 0.5, 1.0, 1.0, 2.0 ** -35, 2.0 ** 49, 1.0, 1.0, 2.0 ** 63, 2.0 ** -63])
    assert np.all(np.isfinite((s.astype(np.float32)[:, None] * s.astype(np.float32)[None, :])))
    diag, s = diag[:-2], s[:-2]
    ok = np.isfinite(diag) & (diag > 0)
    assert np.all((0.5 <= s[ok] ** 2 * diag[ok]) & (s[ok] ** 2 * diag[ok] <= 2.0))


@pytest.mark.parametrize("components", [1, 2])
def test_scale_symmetric_multiplies_entry_i_j_by_s_i_s_j(components):
    """D C D exactly (powers of two), each entry by its own row's and column's s (planted: s
    read at the column for both factors would give s(j)^2: caught by the distinct s); the
    float-float matrix's low parts scale with their high parts."""
    from gpgpu import float_float as ff
    from gpgpu.adat import scale_symmetric

    rng = np.random.default_rng(5)
    m = 9
    C = rng.standard_normal((m, m))
    s = np.ldexp(1.0, np.arange(m) * 5 - 20)                          # 2^-20 .. 2^20, all distinct
    if components == 2:
        if not ff.available():
            pytest.skip("float-float needs GL_ARB_gpu_shader5")
        pairs = ff.split(C).astype(np.float64)
        want = (pairs[..., 0] + pairs[..., 1]) * s[:, None] * s[None, :]    # C as float-float holds it
        with ff.upload(C, "C") as S, scale_symmetric(S, s) as out:
            np.testing.assert_array_equal(ff.combine(out), want)      # hi and lo both exact
            assert np.any(ff.split(C)[..., 1] != 0)                    # the low parts were there to scale
    else:
        C32 = C.astype(np.float32)
        with Stream.from_array(C32, "C") as S, scale_symmetric(S, s) as out:
            np.testing.assert_array_equal(out.to_array(), (C32 * s[:, None] * s[None, :]).astype(np.float32))


def test_scale_symmetric_refuses_what_it_cannot_scale_exactly():
    from gpgpu.adat import scale_symmetric

    with Stream(3, 3) as C, Stream(3, 4) as R:
        for bad in ([1.0, 3.0, 1.0], [1.0, 1.0], [1.0, 0.0, 2.0], [1.0, np.inf, 2.0], [-2.0, 1.0, 1.0]):
            with pytest.raises(ValueError, match="powers of two"):
                scale_symmetric(C, np.array(bad))
        with pytest.raises(ValueError, match="square"):
            scale_symmetric(R, np.ones(3))
