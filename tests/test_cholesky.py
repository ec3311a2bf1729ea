import numpy as np
import pytest

import gpgpu
from gpgpu import NotPositiveDefiniteError, Stream, counters
from gpgpu import packed as pk
from gpgpu.cholesky import cholesky_plan, outer_product_triangle
from gpgpu.kernel import Kernel
from gpgpu.passes import SWAP

from conftest import rel_err

MARK = Kernel("fill", texels=1)
SIZES = [1, 2, 3, 5, 16, 33, 100]


def spd(n, rng):
    B = rng.standard_normal((n, n))
    return B @ B.T / n + np.eye(n)


def covered(shape, primitive):
    with Stream(*shape) as s, counters.count() as c:
        MARK.draw(s, primitive, uniforms={"value": 1.0})
        mask = s.to_array() == 1.0
    assert c.fragments() == mask.sum()
    return mask


def texels(cells, m, storage):
    """Boolean texture mask of the matrix cells {(i, j)} in full or packed storage."""
    shape = pk.packed_shape(m) if storage == "packed" else (m, m)
    mask = np.zeros(shape, bool)
    for i, j in cells:
        x, y = pk.position(i, j, m) if storage == "packed" else (j, i)
        mask[y, x] = True
    return mask


def expected_outer(k, m, update):
    """Matrix cells each pass of step k of the outer form must cover, in order."""
    col = [(i, k) for i in range(k + 1, m)]
    passes = [[(k, k)], [(k, k)], col, col]
    if update == "triangle":
        passes.append([(i, j) for j in range(k + 1, m) for i in range(j, m)])
    elif update == "square":
        passes.append([(i, j) for j in range(k + 1, m) for i in range(k + 1, m)])  # upper half too
    else:
        passes += [[(i, j) for i in range(j, m)] for j in range(k + 1, m)]
    return passes


def split_steps(plan):
    """The draws of each step of an outer-form plan (up to each SWAP), and the draws after the
    last SWAP (the last square root)."""
    steps, current = [], []
    for item in plan:
        if item is SWAP:
            steps.append(current)
            current = []
        else:
            current.append(item)
    return steps, current


@pytest.mark.parametrize("m", [1, 2, 3, 4, 5, 6, 7, 8, 11, 16])
@pytest.mark.parametrize("variant", [
    dict(update="triangle", index="swizzle"), dict(update="triangle", index="computed"),
    dict(update="triangle", index="triad"), dict(update="square"), dict(update="columns"),
    dict(storage="packed"),
])
def test_every_primitive_of_the_outer_form_covers_exactly_its_texels(m, variant):
    storage = variant.get("storage", "full")
    update = variant.get("update", "triangle")
    plan = cholesky_plan(m, **variant)
    shape = pk.packed_shape(m) if storage == "packed" else (m, m)
    steps, current = split_steps(plan)
    assert len(steps) == m - 1  # the last square root stands alone
    assert len(current) == 1 and current[0].kernel.name == "square_root"
    np.testing.assert_array_equal(covered(shape, current[0].primitive), texels([(m - 1, m - 1)], m, storage))
    for k, draws in enumerate(steps):
        want = expected_outer(k, m, update)
        assert len(draws) == len(want)
        for draw, cells in zip(draws, want):
            np.testing.assert_array_equal(covered(shape, draw.primitive), texels(cells, m, storage),
                                          err_msg=f"step {k}, kernel {draw.kernel.name}")


@pytest.mark.parametrize("m", [1, 2, 3, 4, 7, 8, 11])
@pytest.mark.parametrize("storage", ["full", "packed"])
def test_fused_pivot_steps_cover_the_pivot_and_its_column(m, storage):
    """pivot="fused" (beyond the paper): step k is pivot_column and one copy, each over L(k, k)
    and the column below it (a vertical run in both storages), then the update as before."""
    plan = cholesky_plan(m, storage=storage, pivot="fused")
    shape = pk.packed_shape(m) if storage == "packed" else (m, m)
    steps, current = split_steps(plan)
    assert len(steps) == m - 1
    for step, draws in enumerate(steps):
        k = step
        if storage == "packed":                # the second half counts the texel columns down
            h, w = pk.packed_shape(m)
            half = min(w, m - 1)
            if step >= half:
                kt = w - 1 - (step - half)
                k = m - kt if m % 2 else m - 1 - kt
        assert [d.kernel.name for d in draws[:2]] == ["pivot_column", "copy"]
        cells = [(k, k)] + [(i, k) for i in range(k + 1, m)]
        for draw in draws[:2]:
            np.testing.assert_array_equal(covered(shape, draw.primitive), texels(cells, m, storage),
                                          err_msg=f"step {step} (column {k}), {draw.kernel.name}")
    with pytest.raises(ValueError, match="pivot must be one of"):
        cholesky_plan(4, pivot="joined")
    with pytest.raises(ValueError, match="pivot='fused' joins"):
        cholesky_plan(4, form="inner", pivot="fused")


@pytest.mark.parametrize("m", [1, 2, 5, 16, 33])
@pytest.mark.parametrize("storage", ["full", "packed"])
def test_fused_pivot_steps_factor_as_numpy_in_fewer_passes(m, storage, rng):
    from gpgpu.cholesky import factor

    B = rng.standard_normal((m, m))
    A = B @ B.T + m * np.eye(m)
    src = pk.pack(np.tril(A)) if storage == "packed" else np.tril(A)
    with Stream.from_array(src) as S:
        with counters.count() as c:
            L = factor(S, m, storage=storage, pivot="fused")
        out = L.to_array()
        L.release()
    got = pk.unpack(out, m) if storage == "packed" else np.tril(out)
    assert rel_err(got, np.linalg.cholesky(A)) < 1e-5
    # 3 passes a step (pivot column, copy, update) instead of 5, and the last square root
    assert c.passes("pivot_column") == m - 1 and c.passes("normalization") == 0
    steps = sum(c.passes(k) for k in ("pivot_column", "copy", "outer_product_subtraction", "square_root"))
    assert steps == 3 * (m - 1) + 1                            # Algorithm 2's passes: 5 (m - 1) + 1


def test_fused_pivot_column_guards_tiny_pivots():
    from gpgpu.cholesky import count_replaced, factor

    v = np.array([1.0, 2.0, 3.0, 4.0])
    A = np.outer(v, v) + np.diag([0.0, 0.0, 1.0, 1.0])  # step 1's pivot is 4 - 2^2 = 0
    huge = 1e30
    with Stream.from_array(np.tril(A)) as S:
        L = factor(S, 4, guarded={"tolerance": 1e-6, "huge": huge}, pivot="fused")
        assert count_replaced(L, 4, "full", huge) == 1
        out = np.tril(L.to_array())
        L.release()
    assert out[1, 1] == pytest.approx(np.sqrt(huge), rel=1e-6)
    assert abs(out[2, 1]) < 1e-10 and abs(out[3, 1]) < 1e-10
    assert out[0, 0] == 1.0 and out[2, 0] == 3.0                # an unguarded step as before


@pytest.mark.parametrize("m", [1, 2, 5, 9])
def test_every_primitive_of_the_inner_form_covers_exactly_its_texels(m):
    plan = cholesky_plan(m, form="inner")
    assert SWAP not in plan
    for k in range(m - 1):
        draws = plan[4 * k:4 * k + 4]
        want = [[(k, k)], [(k, k)], [(i, k) for i in range(k + 1, m)], [(i, k + 1) for i in range(k + 1, m)]]
        assert [d.kernel.name for d in draws] == ["square_root", "copy", "normalization", "inner_product_subtraction"]
        for draw, cells in zip(draws, want):
            np.testing.assert_array_equal(covered((m, m), draw.primitive), texels(cells, m, "full"))


@pytest.mark.parametrize("n", [1, 2, 7, 16])
def test_fragment_counts_equal_table_2_of_paper_000(n, rng):
    A = spd(n, rng)
    tri = (n - 1) * n * (n + 1) // 6
    sq = (n - 1) * n * (2 * n - 1) // 6
    for kw, update_kernel, update_count in [
        (dict(), "outer_product_subtraction", tri),
        (dict(index="computed"), "outer_product_subtraction_computed", tri),
        (dict(index="triad"), "outer_product_subtraction_triad", tri),
        (dict(update="square"), "outer_product_subtraction", sq),
        (dict(update="columns"), "outer_product_subtraction", tri),
        (dict(storage="packed"), "outer_product_subtraction", tri),  # packed equals full
    ]:
        with counters.count() as c:
            gpgpu.cholesky(A, **kw)
        assert c.fragments("square_root") == n
        assert c.fragments("normalization") == (n - 1) * n // 2
        assert c.fragments(update_kernel) == update_count, kw
        # copies: the pivot (n - 1) and the normalized columns ((n - 1) n / 2), Table 1(c)-(d),
        # and apart from them "Copy A to S" at the start of Algorithm 2 (every texel of the input)
        stored = n * (n + 1) // 2 if kw.get("storage") == "packed" else n * n
        assert c.fragments("copy") == (n - 1) + (n - 1) * n // 2
        assert c.fragments("copy_input") == stored
    with counters.count() as c:
        gpgpu.cholesky(A, form="inner")
    assert c.fragments("square_root") == n
    assert c.fragments("normalization") == (n - 1) * n // 2
    assert c.fragments("inner_product_subtraction") == (n - 1) * n // 2
    # bytes of the inner product subtraction: 4 (2k + 2) per fragment at the k-th (1-based) step
    assert c.bytes("inner_product_subtraction") == sum(4 * (2 * k + 2) * (n - k) for k in range(1, n))


@pytest.mark.parametrize("n", SIZES)
def test_all_variants_match_numpy(n, rng):
    A = spd(n, rng)
    ref = np.linalg.cholesky(A)
    variants = [dict(), dict(index="computed"), dict(index="triad"), dict(update="square"),
                dict(update="columns"), dict(form="inner"), dict(storage="packed"), dict(transfer="ctt"),
                dict(form="inner", transfer="ctt")]
    if n == 100:  # keep the suite quick on a software renderer
        variants = [dict(), dict(update="square"), dict(form="inner"), dict(storage="packed")]
    for kw in variants:
        L = gpgpu.cholesky(A, **kw)
        assert np.array_equal(L, np.tril(L)), kw
        assert rel_err(L, ref) < 1e-5, kw
        assert rel_err(L @ L.T, A) < 1e-5, kw


def test_copy_to_texture_adds_one_copy_per_pass(rng):
    A = spd(6, rng)
    with counters.count() as rtt:
        gpgpu.cholesky(A)
    with counters.count() as ctt:
        gpgpu.cholesky(A, transfer="ctt")
    # every pass of Algorithm 2 is copied once more; the input copy and the breakdown check are not
    algorithm = rtt.fragments() - rtt.fragments("copy_input") - rtt.fragments("pivot_check") - rtt.fragments("min_reduction")
    assert ctt.fragments("copy_to_texture") == algorithm
    assert ctt.fragments("outer_product_subtraction") == rtt.fragments("outer_product_subtraction")


def _copies_follow_their_passes(trace):
    """In a copy-to-texture run every shaded pass into a work stream is followed by one copy of
    the region it covered: the copy's texels (glCopyTexSubImage2D, from covered_spans) equal
    the pass's fragments (occlusion query)."""
    copies = 0
    for prev, p in zip(trace, trace[1:]):
        if p.kernel == "copy_to_texture":
            assert p.primitive == "copy" and p.copied
            assert p.fragments == prev.fragments, (prev.kernel, prev.primitive, prev.fragments, p.fragments)
            copies += 1
    return copies


@pytest.mark.parametrize("kw", [dict(), dict(update="square"), dict(update="columns"), dict(form="inner"),
                                dict(storage="packed"), dict(index="triad")])
@pytest.mark.parametrize("n", [6, 7])
def test_copy_to_texture_copies_exactly_the_region_each_pass_rendered(kw, n, rng):
    A = spd(n, rng)
    with counters.count() as c:
        L = gpgpu.cholesky(A, transfer="ctt", **kw)
    trace = c.trace
    shaded = [p for p in trace if p.kernel not in ("copy_to_texture", "copy_input", "pivot_check", "min_reduction")]
    assert _copies_follow_their_passes(trace) == len(shaded)
    assert rel_err(L, np.linalg.cholesky(A)) < 1e-5


def test_copy_to_texture_is_a_copy_call_not_a_shader():
    from gpgpu.kernel import GLSL_DIR

    assert not (GLSL_DIR / "copy_to_texture.frag").exists()


def test_index_triad_carries_k_in_z():
    """Section 3.2 of 000: the invariant k "at a z coordinate"; x and y interpolate like the
    window position, so the swizzles .zy and .zx give (k, i) and (k, j)."""
    for k, m in ((0, 5), (3, 9)):
        tri = outer_product_triangle(k, m, "triad")
        for v in tri.vertices:
            assert v.T0 == (v.V[0], v.V[1], k + 0.5)
            assert v.T1 == (0.0, 0.0, 0.0)


def test_stream_in_stream_out_full_and_packed(rng):
    A = spd(7, rng)
    ref = np.linalg.cholesky(A)
    with Stream.from_array(np.tril(A)) as s:
        L = gpgpu.cholesky(s)
        assert isinstance(L, Stream)
        assert rel_err(np.tril(L.to_array()), ref) < 1e-5
        L.release()
    with Stream.from_array(pk.pack(A)) as s:
        L = gpgpu.cholesky(s, storage="packed")
        assert L.shape == pk.packed_shape(7)
        assert rel_err(pk.unpack(L.to_array()), ref) < 1e-5
        L.release()


@pytest.mark.parametrize("kw", [dict(), dict(form="inner"), dict(storage="packed"), dict(update="square")])
def test_non_positive_definite_names_the_step(kw):
    A = np.diag([4.0, 1.0, -2.0, 3.0, 5.0])
    with pytest.raises(NotPositiveDefiniteError, match="step k = 2") as e:
        gpgpu.cholesky(A, **kw)
    assert e.value.k == 2
    # an indefinite 2 x 2 leading minor: 1 - 4 < 0 at step 1
    B = np.array([[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    with pytest.raises(NotPositiveDefiniteError, match="step k = 1"):
        gpgpu.cholesky(B, **kw)


def test_semidefinite_zero_pivot_is_caught():
    v = np.array([1.0, 2.0, 3.0])
    with pytest.raises(NotPositiveDefiniteError, match="step k = 1"):
        gpgpu.cholesky(np.outer(v, v))


def _exactly_singular():
    """Singular semi-definite matrices whose zero pivot float32 computes exactly on any GPU:
    every pivot is a power of two squared (exact square roots, divisions by powers of two) and
    every other value a small integer times a power of two, so no step rounds (with or without
    fused multiply-adds). (A, the zero pivot's column)."""
    L = np.array([[1, 0, 0, 0, 0, 0, 0, 0, 0], [3, 2, 0, 0, 0, 0, 0, 0, 0], [-1, 2, 1, 0, 0, 0, 0, 0, 0],
                  [2, 0, -3, 4, 0, 0, 0, 0, 0], [1, 1, 1, -2, 2, 0, 0, 0, 0], [0, -2, 3, 1, 1, 1, 0, 0, 0],
                  [2, 1, -1, 3, 0, 2, 0, 0, 0], [1, 0, 2, -1, 3, 1, 0, 2, 0],
                  [-3, 1, 0, 2, 1, -1, 0, 1, 1]], dtype=float)     # L[6, 6] = 0, and below it
    v = np.array([1.0, 2.0, 3.0])
    return {"[[1, 1], [1, 1]]": (np.ones((2, 2)), 1), "[[4, 2], [2, 1]]": (np.array([[4.0, 2.0], [2.0, 1.0]]), 1),
            "v v^T": (np.outer(v, v), 1), "L L^T, 9 x 9": (L @ L.T, 6)}


#: every way to factor a full numpy matrix: the papers' forms and variants
ALL_FORMS = [dict(form="outer"), dict(form="inner"), dict(form="outer", update="square"),
             dict(form="outer", update="columns"), dict(form="outer", index="computed"),
             dict(form="outer", index="triad"), dict(form="outer", storage="packed"),
             dict(form="outer", transfer="ctt"), dict(form="inner", transfer="ctt"),
             dict(variant="blocked", block=4), dict(variant="blocked", block=4, panel="onepass")]


@pytest.mark.parametrize("case", sorted(_exactly_singular()))
def test_every_form_refuses_an_exactly_singular_matrix_at_its_zero_pivot(case):
    """An exactly singular semi-definite A whose zero pivot float32 computes exactly: every form
    (outer, inner, their variants, the blocked one, the outer form's fused and one-pass pivot
    steps) raises NotPositiveDefiniteError at that column, as numpy.linalg.cholesky raises
    LinAlgError. (A singular A whose zero pivot float32 rounds to +-tiny is factored or refused
    by the sign of that rounding, which differs between forms: the docstring says so.)"""
    from gpgpu.cholesky import factor

    A, k = _exactly_singular()[case]
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.cholesky(A)
    for kw in ALL_FORMS:
        with pytest.raises(NotPositiveDefiniteError, match=f"step k = {k} ") as e:
            gpgpu.cholesky(A, **kw)
        assert e.value.k == k, kw
    with Stream.from_array(np.tril(A)) as S:
        for pivot in ("fused", "onepass"):
            with pytest.raises(NotPositiveDefiniteError) as e:
                factor(S, A.shape[0], pivot=pivot)
            assert e.value.k == k, pivot


def test_input_errors():
    with pytest.raises(ValueError, match="square"):
        gpgpu.cholesky(np.ones((2, 3)))
    with pytest.raises(ValueError, match="not symmetric"):
        gpgpu.cholesky(np.array([[2.0, 1.0], [0.0, 2.0]]))
    with pytest.raises(ValueError, match="NaN"):
        gpgpu.cholesky(np.array([[np.nan]]))
    with pytest.raises(ValueError, match="form"):
        gpgpu.cholesky(np.eye(2), form="diagonal")
    with pytest.raises(ValueError, match="packed"):
        gpgpu.cholesky(np.eye(2), storage="packed", update="square")
    with pytest.raises(ValueError, match="transfer"):
        gpgpu.cholesky(np.eye(2), transfer="pbuffer")


def test_too_large_for_textures(monkeypatch):
    import gpgpu.context
    import gpgpu.stream

    monkeypatch.setattr(gpgpu.context, "max_texture_size", lambda: 64)
    monkeypatch.setattr(gpgpu.stream, "max_texture_size", lambda: 64)
    # packed storage of m = 64 needs height 65 (the m = 4096 remark of section 5.2 of 001)
    with pytest.raises(ValueError, match="packed storage of m = 64 needs a texture 65 high"):
        gpgpu.cholesky(np.eye(64), storage="packed")
    with pytest.raises(ValueError, match="GL_MAX_TEXTURE_SIZE = 64"):
        gpgpu.cholesky(np.eye(65))


@pytest.mark.parametrize("storage", ["full", "packed"])
@pytest.mark.parametrize("m", [1, 2, 3, 8, 17])
def test_cho_solve(m, storage, rng):
    A = spd(m, rng)
    b = rng.standard_normal(m)
    L = np.linalg.cholesky(A)
    assert rel_err(gpgpu.cho_solve(L, b, storage=storage), np.linalg.solve(A, b)) < 1e-5
    B = rng.standard_normal((m, 2))
    assert rel_err(gpgpu.cho_solve(L, B, storage=storage), np.linalg.solve(A, B)) < 1e-5


def test_cho_solve_on_a_gpu_factor(rng):
    A = spd(9, rng)
    b = rng.standard_normal(9)
    with Stream.from_array(pk.pack(A)) as s:
        L = gpgpu.cholesky(s, storage="packed")
        with Stream.from_array(b) as bs:
            x = gpgpu.cho_solve(L, bs, storage="packed")
            assert rel_err(x.to_array(), np.linalg.solve(A, b)) < 1e-5
            x.release()
        L.release()


@pytest.mark.parametrize("form", ["outer", "inner"])
def test_guarded_square_root_replaces_tiny_pivots_and_counts_them(form):
    from gpgpu.cholesky import count_replaced, factor

    v = np.array([1.0, 2.0, 3.0, 4.0])
    A = np.outer(v, v) + np.diag([0.0, 0.0, 1.0, 1.0])  # rank-deficient leading 2 x 2 block
    huge = 1e30
    with Stream.from_array(np.tril(A)) as S:
        L = factor(S, 4, form=form, guarded={"tolerance": 1e-6, "huge": huge})
        assert count_replaced(L, 4, "full", huge) == 1  # step 1: pivot 4 - 2^2 = 0
        out = np.tril(L.to_array())
        L.release()
    assert out[1, 1] == pytest.approx(np.sqrt(huge), rel=1e-6)
    assert np.all(np.isfinite(out))
    assert abs(out[2, 1]) < 1e-10 and abs(out[3, 1]) < 1e-10  # the column normalizes to about zero


def test_argmin_by_negated_argmax():
    from gpgpu.reduce import argmax_region

    x = np.array([3.0, 0.5, 2.0, 0.5, 7.0])
    with Stream.from_array(x) as s:
        value, i, _ = argmax_region(s, negate=True)
    assert (-value, i) == (0.5, 1)


# ---------------------------------------------------------------- plans drawn from one vertex buffer
VARIANTS = [dict(), dict(update="square"), dict(update="columns"), dict(form="inner"), dict(index="computed"),
            dict(index="triad"), dict(pivot="fused"), dict(guarded={"tolerance": 1e-8, "huge": 1e30}),
            dict(storage="packed")]


@pytest.mark.parametrize("m", [1, 2, 7, 33])
def test_vertex_buffer_plans_give_the_same_passes_and_factor_bit_for_bit(m):
    from gpgpu.cholesky import factor

    A = spd(m, np.random.default_rng(m))
    for kw in VARIANTS:
        if kw.get("storage") == "packed" and m == 1:
            continue
        data = pk.pack(np.tril(A)) if kw.get("storage") == "packed" else np.tril(A)
        with Stream.from_array(data) as S:
            with counters.count(time=False) as plain:
                want = factor(S, m, vertex_buffer=False, **kw)
            for _ in range(2):                          # building the buffer, then reusing it
                with counters.count(time=False) as drawn:
                    got = factor(S, m, **kw)
                assert np.array_equal(got.to_array(), want.to_array()), kw
                assert [(p.kernel, p.primitive, p.vertices, p.fragments, p.target) for p in drawn.trace] == \
                       [(p.kernel, p.primitive, p.vertices, p.fragments, p.target) for p in plain.trace], kw
                got.release()
            got = factor(S, m, transfer="ctt", **kw)     # copy-to-texture: the plan's passes one by one
            assert np.array_equal(got.to_array(), want.to_array()), kw
            got.release()
            want.release()


def test_plans_are_built_once_per_order_and_kept_lru(monkeypatch):
    import importlib

    from gpgpu import passes
    from gpgpu.kernel import context_state

    ch = importlib.import_module("gpgpu.cholesky")   # the module, not the function gpgpu.cholesky
    built = []
    real = ch.cholesky_plan
    monkeypatch.setattr(ch, "cholesky_plan", lambda m, *a, **k: built.append(m) or real(m, *a, **k))
    monkeypatch.setattr(passes, "PLAN_CACHE", 3)
    plans = context_state().plans
    for plan in plans.values():
        plan.release_buffer()
    plans.clear()
    rng = np.random.default_rng(0)
    mats = {m: spd(m, rng) for m in (5, 6, 7, 8)}
    seen = {}
    for m in (5, 5, 6, 5, 7, 8, 5, 6):
        with Stream.from_array(np.tril(mats[m])) as S:
            L = ch.factor(S, m)
        np.testing.assert_allclose(np.tril(L.to_array()), np.linalg.cholesky(mats[m]), atol=1e-5)
        L.release()
        seen.setdefault(m, []).append(next(p for k, p in plans.items() if k[1] == m))
    # 5 once; 6; 7; 8 evicts 6 (least recent), 5 still there; 6 rebuilt
    assert built == [5, 6, 7, 8, 6]
    assert len(plans) == 3 and [k[1] for k in plans] == [8, 5, 6]
    assert all(p.buffer is not None for p in plans.values())
    evicted = seen[6][0]
    assert evicted is not seen[6][-1] and evicted.buffer is None       # its GL buffer was released
    assert seen[5][0] is seen[5][-1]                                   # reused, never rebuilt


# ---------------------------------------------------------------- a whole step in one pass
@pytest.mark.parametrize("m", [1, 2, 3, 7, 33, 100])
def test_onepass_steps_factor_like_the_separate_passes(m):
    from gpgpu.cholesky import factor

    A = spd(m, np.random.default_rng(m))
    with Stream.from_array(np.tril(A)) as S:
        with counters.count(time=False) as c:
            L = factor(S, m, pivot="onepass")
        got = np.tril(L.to_array()).astype(np.float64)
        L.release()
        ref = factor(S, m)
        sep = np.tril(ref.to_array())
        ref.release()
    assert c.passes("cholesky_step") == m
    np.testing.assert_allclose(got, sep, rtol=0, atol=8 * m * 6e-8 * np.abs(sep).max())
    assert rel_err(got @ got.T, A) < 4 * m * 6e-8


def test_onepass_step_covers_its_columns_and_copies_the_last_one():
    from gpgpu.record import record

    m = 6
    from gpgpu.cholesky import factor

    with record() as rec:
        with Stream.from_array(np.tril(spd(m, np.random.default_rng(0)))) as S:
            factor(S, m, pivot="onepass").release()
    steps = [f for f in rec.frames if f.kernel == "cholesky_step"]
    assert len(steps) == m
    for k, f in enumerate(steps):
        want = np.zeros((m, m), bool)
        for i in range(k, m):
            want[i, k:i + 1] = True                    # the pivot, its column and the update
        if k:
            want[k - 1:, k - 1] = True                 # column k - 1, copied
        assert np.array_equal(f.covered, want), k
        assert f.fragments == want.sum()
        S = f.inputs["L"].astype(np.float64)
        d = S[k, k]
        for i in range(k, m):                          # every covered cell against float64
            assert f.values[i, k] == pytest.approx(np.sqrt(d) if i == k else S[i, k] / np.sqrt(d), rel=2e-6)
            for j in range(k + 1, i + 1):
                assert f.values[i, j] == pytest.approx(S[i, j] - S[i, k] * S[j, k] / d, rel=1e-5, abs=1e-6)
        if k:
            assert np.array_equal(f.values[k - 1:, k - 1], f.inputs["L"][k - 1:, k - 1])


def test_onepass_guarded_replaces_the_same_pivots_and_reports_breakdown():
    from gpgpu.cholesky import count_replaced, factor

    m = 8
    A = np.zeros((m, m))
    A[:5, :5] = spd(5, np.random.default_rng(2))      # pivots 5, 6, 7 exactly zero
    A[5:, :5] = 0.0
    huge = 1e30
    with Stream.from_array(np.tril(A)) as S:
        g = {"tolerance": 1e-6, "huge": huge}
        L1, L2 = factor(S, m, guarded=g), factor(S, m, guarded=g, pivot="onepass")
        assert count_replaced(L1, m, "full", huge) == count_replaced(L2, m, "full", huge) == 3
        a, b = np.tril(L1.to_array()), np.tril(L2.to_array())
        np.testing.assert_allclose(b[:, :5], a[:, :5], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(np.diag(b)[5:], np.sqrt(huge), rtol=1e-6)
        L1.release(), L2.release()
    bad = spd(m, np.random.default_rng(3))
    bad[4, 4] = -20.0
    with Stream.from_array(np.tril(bad)) as S, pytest.raises(NotPositiveDefiniteError) as e:
        factor(S, m, pivot="onepass")
    assert e.value.k == 4
    with pytest.raises(ValueError, match="pivot='onepass' draws each step"):
        factor(Stream.from_array(np.tril(spd(4, np.random.default_rng(0)))), 4, pivot="onepass", update="square")


# ---------------------------------------------------------------- L^-1 on the GPU
@pytest.mark.parametrize("m", [1, 2, 3, 17, 64])
def test_lower_inverse_and_its_solves_against_numpy(m):
    from gpgpu.cholesky import factor, lower_inverse, solve_with_inverse

    A = spd(m, np.random.default_rng(m))
    b = np.random.default_rng(m + 1).standard_normal(m)
    with Stream.from_array(np.tril(A)) as S:
        L = factor(S, m)
        X = lower_inverse(L, m)
        Ln = np.tril(L.to_array()).astype(np.float64)
        Xn = X.to_array().astype(np.float64)
        assert np.all(np.triu(Xn, 1) == 0)
        np.testing.assert_allclose(Xn, np.linalg.inv(Ln), rtol=0, atol=4 * m * 6e-8 * np.abs(np.linalg.inv(Ln)).max()
                                   * np.linalg.cond(Ln))
        with Stream.from_array(b) as bs:
            x = solve_with_inverse(X, bs)
            got = x.to_array()
            x.release()
        X.release(), L.release()
    want = np.linalg.solve(A, b)
    assert np.abs(got - want).max() <= 8 * m * 6e-8 * np.linalg.cond(A) * np.abs(want).max()


def test_lower_inverse_step_covers_its_rows_and_copies_the_last_one():
    from gpgpu.cholesky import factor, lower_inverse
    from gpgpu.record import record

    m = 6
    with Stream.from_array(np.tril(spd(m, np.random.default_rng(4)))) as S:
        L = factor(S, m)
        with record() as rec:
            lower_inverse(L, m).release()
        Ln = L.to_array().astype(np.float64)
        L.release()
    steps = [f for f in rec.frames if f.kernel == "lower_inverse_step"]
    assert len(steps) == m
    for k, f in enumerate(steps):
        want = np.zeros((m, m), bool)
        want[k:, :k + 1] = True                          # rows k .., columns 0 .. k
        if k:
            want[k - 1, :k] = True                       # row k - 1, copied
        assert np.array_equal(f.covered, want), k
        X = f.inputs["S"].astype(np.float64)
        for i in range(k, m):
            for j in range(k + 1):
                xk = X[k, j] / Ln[k, k]
                assert f.values[i, j] == pytest.approx(xk if i == k else X[i, j] - Ln[i, k] * xk, rel=1e-5, abs=1e-6)


# ---------------------------------------------------------------- factor and L^-1 together
@pytest.mark.parametrize("m", [1, 2, 3, 17, 64])
def test_factor_with_inverse_equals_the_separate_passes_and_numpy(m):
    """Beyond the papers: cholesky_step and lower_inverse_step of each step in one pass. The
    factor and the inverse against the two separate calls (the same float32 operations: equal
    up to a compiler's rounding of a / sqrt(d), measured bit-identical on llvmpipe) and against
    numpy float64, upper triangles included; m passes of the joined kernel, 3 copies."""
    from gpgpu.cholesky import factor, factor_with_inverse, lower_inverse

    A = spd(m, np.random.default_rng(m))
    with Stream.from_array(np.tril(A)) as S:
        with counters.count(time=False) as c:
            L, X = factor_with_inverse(S, m)
        L1 = factor(S, m, pivot="onepass")
        X1 = lower_inverse(L1, m)
        got_L, got_X, sep_L, sep_X = (s.to_array().astype(np.float64) for s in (L, X, L1, X1))
        for s in (L, X, L1, X1):
            s.release()
    assert c.passes("cholesky_inverse_step") == m and c.passes() == m + 5   # 2 identities, 1 input, 2 copies out
    assert c.passes("identity") == 2
    assert c.passes("cholesky_step") == c.passes("lower_inverse_step") == 0
    u = 6e-8
    np.testing.assert_allclose(got_L, sep_L, rtol=0, atol=4 * u * np.abs(sep_L).max())
    np.testing.assert_allclose(got_X, sep_X, rtol=0, atol=4 * u * np.abs(sep_X).max())
    assert np.all(np.triu(got_X, 1) == 0)
    Lr = np.linalg.cholesky(A)
    Ln = np.tril(got_L)
    assert rel_err(Ln @ Ln.T, A) < 4 * m * u
    Xr = np.linalg.inv(Ln)
    np.testing.assert_allclose(got_X, Xr, rtol=0, atol=4 * m * u * np.abs(Xr).max() * np.linalg.cond(Ln))
    np.testing.assert_allclose(Ln, Lr, rtol=0, atol=4 * m * u * np.linalg.cond(A) * np.abs(Lr).max())


def test_compiled_plans_sharing_a_program_each_write_their_own_uniforms():
    """Two compiled plans of one program (m = 6 and m = 9: the uniforms m and k differ), run
    alternately, and a pass of the same kernel drawn by itself between them: a plan run checks
    the values the program holds (it skips them only when its own pass wrote them last); each
    factor is numpy's."""
    from gpgpu.cholesky import factor_with_inverse

    As = {m: spd(m, np.random.default_rng(10 + m)) for m in (6, 9)}
    with Stream.from_array(np.tril(As[6])) as S6, Stream.from_array(np.tril(As[9])) as S9:
        for m, S in ((6, S6), (9, S9), (6, S6), (9, S9)):
            L, X = factor_with_inverse(S, m, steps=1)
            got = np.tril(L.to_array().astype(np.float64))
            L.release()
            X.release()
            assert rel_err(got, np.linalg.cholesky(As[m])) < 1e-5, m


def test_factor_with_inverse_covers_both_halves_and_copies_the_last_row_and_column():
    """Every cell of the joined pass against float64: the Cholesky half as cholesky_step's
    (columns k .. i of rows i >= k, column k - 1 copied), the inverse half moved m columns
    right as lower_inverse_step's (rows >= k over columns 0 .. k, row k - 1 copied), with the
    factor's column k computed in the same pass from the state before the step."""
    from gpgpu.cholesky import factor_with_inverse
    from gpgpu.record import record

    m = 6
    with Stream.from_array(np.tril(spd(m, np.random.default_rng(5)))) as S:
        with record() as rec:
            L, X = factor_with_inverse(S, m)
        L.release(), X.release()
    steps = [f for f in rec.frames if f.kernel == "cholesky_inverse_step"]
    assert len(steps) == m
    for k, f in enumerate(steps):
        want = np.zeros((m, 2 * m), bool)
        for i in range(k, m):
            want[i, k:i + 1] = True
        if k:
            want[k - 1:, k - 1] = True
        want[k:, m:m + k + 1] = True
        if k:
            want[k - 1, m:m + k] = True
        assert np.array_equal(f.covered, want), k
        S0 = f.inputs["L"].astype(np.float64)
        d = S0[k, k]
        lk = S0[:, k] / np.sqrt(d)
        for i in range(k, m):
            assert f.values[i, k] == pytest.approx(np.sqrt(d) if i == k else lk[i], rel=2e-6)
            for j in range(k + 1, i + 1):
                assert f.values[i, j] == pytest.approx(S0[i, j] - S0[i, k] * S0[j, k] / d, rel=1e-5, abs=1e-6)
            for j in range(k + 1):
                xk = S0[k, m + j] / np.sqrt(d)
                assert f.values[i, m + j] == pytest.approx(xk if i == k else S0[i, m + j] - lk[i] * xk,
                                                           rel=1e-5, abs=1e-6)
        if k:
            assert np.array_equal(f.values[k - 1:, k - 1], f.inputs["L"][k - 1:, k - 1])
            assert np.array_equal(f.values[k - 1, m:m + k], f.inputs["L"][k - 1, m:m + k])


def _one_step_and(A, **kw):
    """(L, X) of factor_with_inverse(tril(A)) one step a pass and with ``kw`` (steps=, block=),
    float64 arrays, and the counters of the second."""
    from gpgpu.cholesky import factor_with_inverse

    m = A.shape[0]
    with Stream.from_array(np.tril(A)) as S:
        L1, X1 = factor_with_inverse(S, m)
        with counters.count(time=False) as c:
            L2, X2 = factor_with_inverse(S, m, **kw)
        pairs = [tuple(s.to_array().astype(np.float64) for s in pair) for pair in ((L1, X1), (L2, X2))]
        for s in (L1, X1, L2, X2):
            s.release()
    return pairs[0], pairs[1], c


@pytest.mark.parametrize("steps", [2, 3, 4, 8])
@pytest.mark.parametrize("m", [1, 2, 3, 4, 5, 9, 17, 64, 65])
def test_steps_a_pass_equal_one_step_a_pass_and_numpy(m, steps):
    """steps = s: steps k .. k + s - 1 in one cholesky_inverse_steps pass, ceil(m/s) of them,
    the pivots from the vertex program. The same float32 operations as the one-step passes
    (measured bit-identical on llvmpipe; a compiler may contract them differently, hence 4 u)
    and the factor and inverse of numpy; m not a multiple of s ends with a shorter pass."""
    from gpgpu.cholesky import STEPS_KERNELS

    A = spd(m, np.random.default_rng(m + 100))
    one, many, c = _one_step_and(A, steps=steps)
    passes = -(-m // steps)
    assert c.passes(STEPS_KERNELS[steps].label) == passes and c.passes() == passes + 5
    u = 6e-8
    for a, b in zip(one, many):
        np.testing.assert_allclose(b, a, rtol=0, atol=4 * u * np.abs(a).max())
    Ln, X = np.tril(many[0]), many[1]
    assert np.all(np.triu(X, 1) == 0)
    assert rel_err(Ln @ Ln.T, A) < 4 * m * u
    Xr = np.linalg.inv(Ln)
    np.testing.assert_allclose(X, Xr, rtol=0, atol=4 * m * u * np.abs(Xr).max() * np.linalg.cond(Ln))


@pytest.mark.parametrize("steps", [0, 9, 2.0, True, "2"])
def test_steps_out_of_range_are_refused(steps):
    from gpgpu.cholesky import cholesky_inverse_plan

    with pytest.raises(ValueError, match="steps must be an integer from 1 to 8"):
        cholesky_inverse_plan(4, steps=steps)


def _joined_step(S, k, m):
    """Step k of the joined Cholesky and L^-1 in float64, on the m x 2m state S."""
    S, d = S.copy(), S[k, k]
    X_k = S[k, m:m + k + 1] / np.sqrt(d)
    S[k:, k] = S[k:, k] / np.sqrt(d)
    for i in range(k + 1, m):
        S[i, k + 1:i + 1] -= S[i, k] * S[k + 1:i + 1, k]          # S(i,k) S(j,k) / d, normalized
        S[i, m:m + k + 1] -= S[i, k] * X_k
    S[k, m:m + k + 1] = X_k
    return S


@pytest.mark.parametrize("block, steps", [(2, 1), (4, 1), (8, 1), (16, 1), (4, 2), (16, 4), (16, 8)])
@pytest.mark.parametrize("m", [1, 2, 3, 8, 9, 17, 40, 65])
def test_blocked_factor_with_inverse_is_numpys_in_m_plus_blocks_passes(m, block, steps):
    """block = b: a cholesky_inverse_step pass a column (or a cholesky_inverse_steps pass each
    ``steps`` columns) over each block's panel, a cholesky_inverse_panel_rgba pass and a
    cholesky_inverse_trailing pass after every block but the last: ceil(m / steps) +
    2 ceil(m / b) - 2 passes (m a multiple of b) and the 5 of
    the set-up; the factor and inverse of float64 and of the one-step passes (the block's terms
    taken off in another order: float32 rounding apart); X's upper triangle zero; m below b (one
    block, no trailing pass), m a multiple of b, and a last block that is shorter."""
    from gpgpu.cholesky import STEPS_KERNELS, TRAILING

    A = spd(m, np.random.default_rng(m + 300))
    one, blocked, c = _one_step_and(A, block=block, steps=steps)
    blocks = -(-m // block)
    panel = sum(-(-(min(k0 + block, m) - k0) // steps) for k0 in range(0, m, block))
    label = "cholesky_inverse_step" if steps == 1 else STEPS_KERNELS[steps].label
    assert c.passes(TRAILING.label) == c.passes(TRAILING.panel.label) == blocks - 1 and c.passes(label) == panel
    assert c.passes() == panel + 2 * (blocks - 1) + 5
    u = 6e-8
    for a, b in zip(one, blocked):
        np.testing.assert_allclose(np.tril(b), np.tril(a), rtol=0, atol=4 * m * u * np.abs(a).max())
    Ln, X = np.tril(blocked[0]), blocked[1]
    assert np.all(np.triu(X, 1) == 0) and np.all(np.triu(blocked[0], 1) == 0)
    assert rel_err(Ln @ Ln.T, A) < 4 * m * u
    Xr = np.linalg.inv(np.linalg.cholesky(A))
    np.testing.assert_allclose(X, Xr, rtol=0, atol=4 * m * u * np.abs(Xr).max() * np.linalg.cond(Ln))


def test_blocked_passes_cover_and_compute_every_cell():
    """Every cell of every pass of block = 4 at m = 10 (blocks 0-3, 4-7 and a short 8-9) against
    float64 from the pass's input: a panel step covers its block's columns k .. k1-1 from the
    diagonal down, the copy of column k - 1, X's rows k .. k1-1 over columns 0 .. k and the copy
    of row k - 1, and computes cholesky_inverse_step's values there; a trailing pass covers the
    trailing lower triangle, the block's panel (copied) and X's rows k0 .. m-1 over columns
    0 .. k1-1, and takes the block's four terms off every texel below it; the packing before it
    writes L's rows k1 .. m-1 of the block's columns and X's block rows by columns 0 .. k1-1."""
    from gpgpu.cholesky import TRAILING, factor_with_inverse
    from gpgpu.record import record

    m, b = 10, 4
    with Stream.from_array(np.tril(spd(m, np.random.default_rng(8)))) as S:
        with record() as rec:
            L, X = factor_with_inverse(S, m, block=b)
        L.release(), X.release()
    frames = [f for f in rec.frames if f.kernel in ("cholesky_inverse_step", TRAILING.label)]
    kinds = [f.kernel == TRAILING.label for f in frames]
    assert kinds == [False] * 4 + [True] + [False] * 4 + [True] + [False] * 2
    packs = [f for f in rec.frames if f.kernel == TRAILING.panel.label]
    assert len(packs) == 2
    for k0, f in zip((0, 4), packs):
        k1, S0 = k0 + b, f.inputs["L"]
        want = np.zeros((2 * m, 1), bool)
        want[k1:m + k1] = True
        assert f.values.shape == (2 * m, 1, 4) and np.array_equal(f.covered, want), k0
        np.testing.assert_array_equal(f.values[k1:m, 0], S0[k1:m, k0:k1])          # L(i, k0 .. k1-1)
        np.testing.assert_array_equal(f.values[m:m + k1, 0], S0[k0:k1, m:m + k1].T)  # X(k0 .. k1-1, j)
    k = 0
    for f in frames:
        S0 = f.inputs["L"].astype(np.float64)
        want = np.zeros((m, 2 * m), bool)
        if not f.kernel == TRAILING.label:
            k1 = min((k // b + 1) * b, m)
            for i in range(k, m):
                want[i, k:min(i + 1, k1)] = True
            want[k:k1, m:m + k + 1] = True
            if k:
                want[k - 1:, k - 1] = True
                want[k - 1, m:m + k] = True
            assert np.array_equal(f.covered, want), k
            step = _joined_step(S0, k, m)
            fresh = want.copy()
            if k:
                fresh[k - 1:, k - 1] = fresh[k - 1, m:m + k] = False
                assert np.array_equal(f.values[~fresh & want], f.inputs["L"][~fresh & want])
            np.testing.assert_allclose(f.values[fresh], step[fresh], rtol=1e-5, atol=1e-6)
            k += 1
            continue
        k0, k1 = k - b, k
        for i in range(k1, m):
            want[i, k1:i + 1] = True
        for i in range(k0, m):
            want[i, k0:min(i + 1, k1)] = True
        want[k0:, m:m + k1] = True
        assert np.array_equal(f.covered, want), k
        P, Xb = S0[:, k0:k1], S0[k0:k1, m:m + k1]
        new = S0.copy()
        new[k1:, k1:m] -= P[k1:] @ P[k1:m].T
        new[k1:, m:m + k1] -= P[k1:] @ Xb
        updated = want.copy()
        updated[:k1, :] = False
        updated[:, k0:k1] = False
        np.testing.assert_allclose(f.values[updated], new[updated], rtol=1e-5, atol=1e-6)
        assert np.array_equal(f.values[want & ~updated], f.inputs["L"][want & ~updated])


@pytest.mark.parametrize("block, steps", [(2, 1), (4, 1), (4, 2), (8, 4)])
def test_blocked_factor_with_inverse_guards_as_the_one_step_passes(block, steps):
    """Dependent rows 4 and 7 (a pivot after a trailing pass or inside a panel, whatever the
    block): each pivot is compared with tolerance x its own diagonal of M (M0, not the working
    matrix, whose dependent pivot is rounding-sized and would pass a guard relative to itself):
    the blocked passes replace the pivots that float64's guard and the one-step passes replace,
    and give the one-step passes' L elsewhere; exactly zero pivots (rows 9 .. 11) too."""
    import importlib

    from gpgpu.lp.numpy_backend import cholesky_outer

    ch = importlib.import_module("gpgpu.cholesky")
    m = 12
    B = np.zeros((m, 8))
    B[:9] = np.random.default_rng(3).standard_normal((9, 8))
    B[4] = B[1] - 2.0 * B[2]
    B[7] = B[0] + B[3]
    A = B @ B.T
    huge, tol = 1e30, 1e-5
    want, replaced = cholesky_outer(A, pivot_tol=tol, huge=huge)
    assert replaced == 5
    g = {"tolerance": tol, "huge": huge}
    with Stream.from_array(np.tril(A).astype(np.float32)) as S:
        L1, X1 = ch.factor_with_inverse(S, m, guarded=g)
        L, X = ch.factor_with_inverse(S, m, guarded=g, block=block, steps=steps)
        assert ch.count_replaced(L, m, "full", huge) == ch.count_replaced(L1, m, "full", huge) == 5
        l, l1 = (np.tril(s.to_array().astype(np.float64)) for s in (L, L1))
        for s in (L, X, L1, X1):
            s.release()
    huge_cols = np.diag(want) > 1e14
    np.testing.assert_array_equal(np.diag(l) > 1e14, huge_cols)
    ok = ~huge_cols[None, :] & np.tri(m, dtype=bool)
    np.testing.assert_allclose(l[ok], l1[ok], rtol=0, atol=4 * m * 6e-8 * np.abs(l1[ok]).max())
    np.testing.assert_allclose(l[ok], want[ok], rtol=0, atol=1e-4 * np.abs(want[ok]).max())


@pytest.mark.parametrize("block", [0, 1, 3, 130, 2.0, True, "4"])
def test_blocks_that_are_not_even_or_too_wide_are_refused(block):
    from gpgpu.cholesky import cholesky_inverse_plan, factor_with_inverse

    with pytest.raises(ValueError, match="block must be None or an even integer from 2 to 128"):
        cholesky_inverse_plan(4, block=block)
    with Stream.from_array(np.eye(3, dtype=np.float32)) as S:
        with pytest.raises(ValueError, match="block must be None or an even integer"):
            factor_with_inverse(S, 3, block=block)


@pytest.mark.parametrize("block, steps", [(4, 4), (6, 2), (8, 3)])
def test_a_block_whose_panel_takes_an_odd_number_of_passes_is_refused(block, steps):
    """The trailing pass reads the buffer that the previous trailing pass wrote only after an even
    number of panel passes: b must be a multiple of 2 steps."""
    from gpgpu.cholesky import factor_with_inverse

    with Stream.from_array(np.eye(3, dtype=np.float32)) as S:
        with pytest.raises(ValueError, match=f"give a block that is a multiple of {2 * steps}"):
            factor_with_inverse(S, 3, steps=steps, block=block)


@pytest.mark.parametrize("steps", [2, 3, 4])
def test_steps_a_pass_cover_and_compute_every_cell(steps):
    """Every cell of every s-step pass against float64 from the pass's input: the s pivots and
    columns, the update by all s steps, the inverse's rows by all s steps, the copies of the s
    columns and rows finished by the pass before; m = 7 is no multiple of s, so the last pass
    has fewer steps."""
    from gpgpu.cholesky import STEPS_KERNELS, factor_with_inverse
    from gpgpu.record import record

    m = 7
    with Stream.from_array(np.tril(spd(m, np.random.default_rng(6)))) as S:
        with record() as rec:
            L, X = factor_with_inverse(S, m, steps=steps)
        L.release(), X.release()
    passes = [f for f in rec.frames if f.kernel == STEPS_KERNELS[steps].label]
    assert len(passes) == -(-m // steps)
    for f, k in zip(passes, range(0, m, steps)):
        want = np.zeros((m, 2 * m), bool)
        for i in range(k, m):
            want[i, k:i + 1] = True
        for c in range(k - steps, k):
            if c >= 0:
                want[c:, c] = True
                want[c, m:m + c + 1] = True
        want[k:, m:m + min(k + steps, m)] = True
        assert np.array_equal(f.covered, want), k
        S0 = f.inputs["L"].astype(np.float64)
        want_v = S0
        for q in range(k, min(k + steps, m)):
            want_v = _joined_step(want_v, q, m)
        np.testing.assert_allclose(f.values[want], want_v[want], rtol=1e-5, atol=1e-6)
        for c in range(k - steps, k):
            if c >= 0:
                assert np.array_equal(f.values[c:, c], f.inputs["L"][c:, c])
                assert np.array_equal(f.values[c, m:m + c + 1], f.inputs["L"][c, m:m + c + 1])


@pytest.mark.parametrize("steps", [1, 2, 3, 4, 8])
def test_factor_with_inverse_guard_and_width_limit(monkeypatch, steps):
    """Guarded as factor(): the same replaced pivots (huge), counted on L; and a clear error when
    the 2m-wide texture would not fit."""
    import importlib

    ch = importlib.import_module("gpgpu.cholesky")   # the module (gpgpu.cholesky is also the function)
    m = 8 + steps - 1                                 # replaced pivots at several places of a pass
    A = np.zeros((m, m))
    A[:5, :5] = spd(5, np.random.default_rng(2))      # pivots 5, 6, 7 (, 8) exactly zero
    huge = 1e30
    g = {"tolerance": 1e-6, "huge": huge}
    with Stream.from_array(np.tril(A)) as S:
        L1 = ch.factor(S, m, guarded=g, pivot="onepass")
        X1 = ch.lower_inverse(L1, m)
        L, X = ch.factor_with_inverse(S, m, guarded=g, steps=steps)
        assert ch.count_replaced(L, m, "full", huge) == m - 5
        np.testing.assert_allclose(np.diag(L.to_array())[5:], np.sqrt(huge), rtol=1e-6)
        np.testing.assert_allclose(L.to_array(), L1.to_array(), rtol=1e-6, atol=1e-30)
        np.testing.assert_allclose(X.to_array(), X1.to_array(), rtol=1e-6, atol=1e-30)
        for s in (L, X, L1, X1):
            s.release()
        monkeypatch.setattr("gpgpu.context.max_texture_size", lambda: 2 * m - 1)
        with pytest.raises(ValueError, match="wider than GL_MAX_TEXTURE_SIZE"):
            ch.factor_with_inverse(S, m)


@pytest.mark.parametrize("steps", [2, 3, 4, 8])
def test_steps_a_pass_guard_each_pivot_against_its_own_diagonal(steps):
    """The guard compares pivot k + t with tolerance x its own original diagonal M0(k+t, k+t),
    not the block's first: column 5 is 1000 x column 4 plus an independent part, so its pivot
    (about 4) is tiny beside its diagonal (about 8e6) and large beside column 4's (about 8).
    With tolerance 1e-5 the one-step guard replaces it (and only it); so must every s-step
    pass, in which pivot 5 is not the first of its block."""
    import importlib

    ch = importlib.import_module("gpgpu.cholesky")
    rng = np.random.default_rng(21)
    m = 9
    C = rng.standard_normal((m + 3, m))
    C[:, 5] = 1000.0 * C[:, 4] + C[:, 5]
    A = C.T @ C
    huge = 1e30
    g = {"tolerance": 1e-5, "huge": huge}
    with Stream.from_array(np.tril(A)) as S:
        L1 = ch.factor(S, m, guarded=g, pivot="onepass")
        L, X = ch.factor_with_inverse(S, m, guarded=g, steps=steps)
        d1, d = np.diag(L1.to_array()), np.diag(L.to_array())
        assert ch.count_replaced(L1, m, "full", huge) == 1 and d1[5] == pytest.approx(np.sqrt(huge), rel=1e-6)
        assert ch.count_replaced(L, m, "full", huge) == 1 and d[5] == pytest.approx(np.sqrt(huge), rel=1e-6)
        np.testing.assert_allclose(d, d1, rtol=1e-5)
        for s in (L1, L, X):
            s.release()


@pytest.mark.parametrize("joined", [False, True])
def test_prebuilt_plan_draws_the_same_without_and_with_counters(joined):
    """A pre-built plan skips binding what the previous pass bound, except under the counters
    and the recorder, which draw each pass as draw_range does: both paths give the same factor
    bit for bit (a stale framebuffer or texture in the fast path would not)."""
    from gpgpu.cholesky import factor, factor_with_inverse

    m = 17
    A = spd(m, np.random.default_rng(11))
    with Stream.from_array(np.tril(A)) as S:
        def run():
            if joined:
                L, X = factor_with_inverse(S, m)
                out = (L.to_array(), X.to_array())
                L.release(), X.release()
                return out
            L = factor(S, m, pivot="onepass")
            out = (L.to_array(),)
            L.release()
            return out
        fast = run()
        with counters.count(time=False):
            counted = run()
    for a, b in zip(fast, counted):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("chunk", [None, 1, 3, 64])
@pytest.mark.parametrize("m", [1, 5, 64, 65, 130])
@pytest.mark.parametrize("precision", ["float32", "float-float"])
def test_triangular_products_against_float64(m, chunk, precision):
    """X v and Xᵀ v for a lower triangular X with random entries (its upper triangle holding
    garbage the products must not read: 1e30): one pass over the triangle (``chunk=None``), or
    partial sums over chunks of ``chunk`` terms and then the column sums (two passes), against
    float64 to the precision's rounding; m below, at and past the chunk, the last chunk short."""
    from gpgpu import counters, float_float
    from gpgpu.cholesky import TRIANGULAR_PRODUCT

    rng = np.random.default_rng(m + (chunk or 0))
    X = np.tril(rng.standard_normal((m, m))) + np.triu(np.full((m, m), 1e30), 1)
    v = rng.standard_normal(m)
    Xl = np.tril(X)
    for transposed, want in ((False, Xl @ v), (True, Xl.T @ v)):
        if precision == "float32":
            with Stream.from_array(X.astype(np.float32)) as Xs, Stream.from_array(v.astype(np.float32)) as vs, \
                    Stream(1, m, vector=True) as out, counters.tally() as t:
                TRIANGULAR_PRODUCT.draw(Xs, vs, out, transposed=transposed, chunk=chunk)
                got = out.to_array().astype(np.float64)
            u = 6e-8
        else:
            with float_float.upload(X, "X") as Xs, float_float.upload(v, "v") as vs, \
                    Stream(1, m, components=2) as out, counters.tally() as t:
                float_float.TRIANGULAR_PRODUCT.draw(Xs, vs, out, transposed=transposed, chunk=chunk)
                got = float_float.combine(out)[0]
            u = 2.0 ** -46
        assert t.passes == (1 if chunk is None else 2)
        scale = np.abs(Xl) @ np.abs(v) if not transposed else np.abs(Xl.T) @ np.abs(v)
        assert np.all(np.abs(got - want) <= 2 * m * u * scale + 1e-300), (transposed, np.abs(got - want).max())


def test_the_packed_panel_is_zero_past_the_block():
    """block = 6 (two texels a row, the second half full): each packing pass writes L(r, k0 + 4),
    L(r, k0 + 5) and two zeros in the second texel of the rows k1 .. m-1, X(k0 + 4, j),
    X(k0 + 5, j) and two zeros in the rows m + j, j < k1."""
    from gpgpu.cholesky import TRAILING, factor_with_inverse
    from gpgpu.record import record

    m, b = 14, 6
    with Stream.from_array(np.tril(spd(m, np.random.default_rng(9)))) as S:
        with record() as rec:
            L, X = factor_with_inverse(S, m, block=b)
        L.release(), X.release()
    packs = [f for f in rec.frames if f.kernel == TRAILING.panel.label]
    assert len(packs) == 2
    for k0, f in zip((0, 6), packs):
        k1, S0 = k0 + b, f.inputs["L"]
        assert f.values.shape == (2 * m, 2, 4)
        np.testing.assert_array_equal(f.values[k1:m, 1, :2], S0[k1:m, k0 + 4:k1])
        np.testing.assert_array_equal(f.values[m:m + k1, 1, :2], S0[k0 + 4:k1, m:m + k1].T)
        assert np.all(f.values[k1:m + k1, 1, 2:] == 0)


def test_triangular_products_refuse_vectors_of_another_shape_and_bad_chunks():
    from gpgpu.cholesky import TRIANGULAR_PRODUCT

    with Stream.from_array(np.eye(4, dtype=np.float32)) as X, Stream(1, 5, vector=True) as v5, \
            Stream(1, 4, vector=True) as v, Stream(1, 4, vector=True) as out:
        with pytest.raises(ValueError, match="v must be a vector of length 4 in one texture row"):
            TRIANGULAR_PRODUCT.draw(X, v5, out)
        with pytest.raises(ValueError, match="out must be a vector of length 4"):
            TRIANGULAR_PRODUCT.draw(X, v, v5)
        for chunk in (0, -2, 2.5, True):
            with pytest.raises(ValueError, match="chunk must be None or a positive integer"):
                TRIANGULAR_PRODUCT.draw(X, v, out, chunk=chunk)
