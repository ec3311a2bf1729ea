"""The pass recorder and the frames of ``python -m gpgpu.show`` (the pipeline made visible).

The recorder's coverage, interpolated coordinates and fetches come from the GPU (an
instrumented copy of each kernel); they are checked against the papers' figures typed in by
hand, against the occlusion queries, and against float64 arithmetic on the snapshots."""
import numpy as np
import pytest

import gpgpu
from gpgpu import counters
from gpgpu.record import MAX_FETCHES, SnapshotTooLarge, instrument, record
from gpgpu.show import ALGORITHMS, draw_frame, run, write_frames
from gpgpu.show.__main__ import main as show_main


def _spd(n, seed=0):
    a = np.random.default_rng(seed).standard_normal((n, n))
    return a @ a.T / n + np.eye(n)


@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_every_algorithm_one_frame_per_pass_and_gpu_coverage_equals_occlusion_count(name):
    for n in (5, 6):
        rec = run(name, n)
        trace = rec.trace
        assert len(rec.frames) == len(trace) > 0
        for f, p in zip(rec.frames, trace):
            assert f.kernel == p.kernel and f.target == p.target
            assert f.covered is not None, f"pass {f.index} ({f.kernel}) has no coverage"
            assert f.shaded_cells == p.fragments, (name, n, f.index, f.kernel)
            # the rasterizer's coverage equals the primitive's coverage rule (rect, triangle, line)
            rule = np.zeros(f.target, bool)
            prim = {"triangle": gpgpu.geometry.Triangle, "line": gpgpu.geometry.Line}.get(
                f.primitive, gpgpu.geometry.Rect)(f.vertices)
            for y, x0, x1 in prim.covered_spans(f.target[1], f.target[0]):
                rule[y, x0:x1] = True
            assert np.array_equal(f.covered, rule), (name, f.index, f.kernel)


# Fig. 5(a) of paper 001, typed from the figure: vertex, V, T0, T1 of the k-th outer product
# subtraction of an m x m matrix.
def _fig5(k, m):
    return [((k + 1, k + .5), (k + .5, k + .5), (k + 1, k + .5)),
            ((k + 1, m), (k + .5, m), (k + 1, k + .5)),
            ((m + .5, m), (k + .5, m), (m + .5, k + .5))]


@pytest.mark.parametrize("k", [0, 2, 5])
def test_cholesky_step_matches_fig5_of_001(k):
    m = 8
    rec = run("cholesky", m)
    updates = [f for f in rec.frames if f.kernel == "outer_product_subtraction"]
    assert len(updates) == m - 1
    f = updates[k]
    got = [(v.V, v.T0[:2], v.T1[:2]) for v in f.vertices]
    assert got == _fig5(k, m)
    assert all(v.T0[2] == 0 and v.T1[2] == 0 for v in f.vertices)
    # covered: the fragments (j, i) with k < j <= i < m (the lower triangle right of column k)
    want = np.zeros((m, m), bool)
    for i in range(k + 1, m):
        want[i, k + 1:i + 1] = True
    assert np.array_equal(f.covered, want)
    S = f.inputs["L"].astype(np.float64)
    for i in range(k + 1, m):
        for j in range(k + 1, i + 1):
            # Fig. 5(b): T0 = (k + .5, i), T1 = (j, k + .5) at the fragment's centre
            np.testing.assert_allclose(f.T0[i, j, :2], (k + .5, i + .5), atol=1e-5)
            np.testing.assert_allclose(f.T1[i, j, :2], (j + .5, k + .5), atol=1e-5)
            # the fetches: itself, the neighbour (k, i), the pivot (k, j) through T1.yx
            assert f.fetches_at(j, i) == [("L", (j, i), "texRECT(L, index.xy)"),
                                          ("L", (k, i), "texRECT(L, neighbor_index.xy)"),
                                          ("L", (k, j), "texRECT(L, pivot_index.yx)")]
            # the snapshot is the target after the pass: L(i, j) - L(i, k) L(j, k)
            assert f.values[i, j] == pytest.approx(S[i, j] - S[i, k] * S[j, k], rel=1e-6, abs=1e-6)
    assert f.fragments == (m - k - 1) * (m - k) // 2
    assert f.fetches_at(k, k) == [] and f.fetches_at(m - 1, k + 1) == []  # not shaded


def test_reduction_fragments_fetch_their_pair():
    rec = run("reduce-pingpong", 8)
    sums = [f for f in rec.frames if f.kernel == "sum_reduction"]
    assert len(sums) == 6  # 8 x 8: three halvings along each axis
    for f in sums:
        rows, cols = f.target
        src = f.inputs["S"].shape
        along_x = src[1] == 2 * cols
        assert along_x or src[0] == 2 * rows
        for y in range(rows):
            for x in range(cols):
                pair = [(2 * x, y), (2 * x + 1, y)] if along_x else [(x, 2 * y), (x, 2 * y + 1)]
                assert [t for _, t, _ in f.fetches_at(x, y)] == pair
                a, b = (f.inputs["S"][t[1], t[0]] for t in pair)
                assert f.values[y, x] == a + b  # integers: exact


def test_lu_row_swap_lines_read_the_other_row():
    A = np.array([[1., 2, 3, 4], [9, 1, 0, 2], [3, 8, 1, 1], [2, 2, 7, 1]])  # pivot rows 1, 2, 3
    with record() as rec:
        gpgpu.lu(A, pivoting="partial")
    swaps = [f for f in rec.frames if f.primitive == "line" and len(f.vertices) == 4]
    assert swaps, "no swap drawn as two lines"
    f = swaps[0]                     # k = 0, rows 0 and 1 exchange
    assert f.covered.sum() == 8 and f.covered[:2].all()
    for x in range(4):
        assert [t for _, t, _ in f.fetches_at(x, 0)] == [(x, 1)]
        assert [t for _, t, _ in f.fetches_at(x, 1)] == [(x, 0)]
        assert f.values[0, x] == f.inputs["A"][1, x] and f.values[1, x] == f.inputs["A"][0, x]


def test_recorder_passes_are_not_counted_twice():
    A = _spd(6)
    with counters.count(time=False) as plain:
        gpgpu.cholesky(A)
    with counters.count(time=False) as outer:
        with record() as rec:
            L = gpgpu.cholesky(A)
    assert outer.passes() == plain.passes() == len(rec.frames)
    assert outer.fragments() == plain.fragments() == sum(f.fragments for f in rec.frames)
    np.testing.assert_allclose(np.tril(L), np.linalg.cholesky(A), rtol=0, atol=2e-6)


def test_frames_inside_the_block_have_their_counts():
    with record() as rec:
        gpgpu.cholesky(_spd(4))
        inside = rec.frames
        assert inside and all(f.fragments == f.shaded_cells > 0 for f in inside)


def test_fetches_beyond_the_limit_are_counted():
    with record() as rec:
        gpgpu.cholesky(_spd(8), form="inner")
    inner = [f for f in rec.frames if f.kernel == "inner_product_subtraction"]
    last = inner[-1]                             # step 7: fragment (7, 7) sums 7 products
    x, y = last.chosen_fragment()
    assert last.fetch_count[y, x] > MAX_FETCHES
    assert len(last.fetches_at(x, y)) == MAX_FETCHES


def test_snapshot_limit_is_a_clear_error():
    with pytest.raises(SnapshotTooLarge, match=r"8 x 8 = 64 texels, above the snapshot limit of 16"):
        with record(max_texels=16):
            gpgpu.cholesky(_spd(8))
    with pytest.raises(ValueError, match="n must be an integer from 2 to 32"):
        run("cholesky", 64)
    with pytest.raises(ValueError, match="unknown algorithm 'qr'; valid: cholesky, "):
        run("qr")


def test_instrument_names_each_fetch_site():
    src = ("uniform sampler2D A;\nuniform sampler2D b;\nout float result;\n"
           "void main() { result = texRECT(A, T0.yx) * texelFetch(b, ivec2(WPOS), 0).r + texRECT(A, WPOS); }\n")
    body, sites = instrument(src)
    assert sites == (("A", "texRECT(A, T0.yx)"), ("b", "texelFetch(b, ivec2(WPOS), 0)"), ("A", "texRECT(A, WPOS)"))
    assert "_rec_texRECT(A, 0, T0.yx)" in body and "_rec_texelFetch(b, 1, ivec2(WPOS), 0)" in body
    assert "layout(location = 0) out float result;" in body and "void _rec_kernel_main()" in body
    with pytest.raises(ValueError, match="cannot tell which sampler 'C'"):
        instrument("uniform sampler2D A;\nout float result;\nvoid main() { result = texRECT(C, WPOS); }")
    with pytest.raises(ValueError, match="one fragment output"):
        instrument("out float a;\nout float b;\nvoid main() { a = b = 0.0; }")


def test_frames_and_gif_written(tmp_path):
    from PIL import Image

    rec = run("cholesky", 3)
    paths = write_frames(rec, tmp_path, heading="cholesky, n = 3")
    pngs = sorted(tmp_path.glob("pass_*.png"))
    assert len(pngs) == len(rec.frames) == len(paths) - 1
    with Image.open(tmp_path / "passes.gif") as g:
        assert g.n_frames == len(rec.frames)
    fig = draw_frame(rec.frames[5], len(rec.frames), heading="x")
    texts = [t.get_text() for t in fig.texts]
    assert any("pass 6 of" in t and "glsl/" in t and "fragments (occlusion query)" in t for t in texts)
    assert any("T0 = " in t and "texRECT(L, pivot_index.yx) -> L(" in t for t in texts)


def test_show_command_line(tmp_path, capsys):
    assert show_main(["reduce-pingpong", "--n", "4", "--out", str(tmp_path), "--no-gif"]) == 0
    out = capsys.readouterr().out
    assert "sum_reduction" in out and "4 passes, 4 files" in out
    assert len(list(tmp_path.glob("*.png"))) == 4
    with pytest.raises(SystemExit):
        show_main(["qr"])
    assert "valid: cholesky, cholesky-square" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        show_main(["cholesky", "--n", "100"])
    assert "--n must be from 2 to 32" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        show_main(["cholesky", "--fragment", "3"])
    assert "--fragment takes X,Y" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        show_main(["cholesky", "--fragment=-1,2"])
    assert "--fragment takes X,Y" in capsys.readouterr().err
    # a fragment off a pass's (smaller) target: that pass explains its own choice
    assert show_main(["cholesky", "--n", "3", "--fragment", "2,2", "--out", str(tmp_path / "f"), "--no-gif"]) == 0


def test_make_docs_draws_every_frame_of_the_tutorial(tmp_path):
    from pathlib import Path

    from gpgpu.show import docs

    assert docs.main(str(tmp_path)) == 0
    assert sorted(p.name for p in tmp_path.glob("*.png")) == sorted(docs.FRAMES)
    page = (Path(__file__).resolve().parent.parent / "docs" / "pipeline.md").read_text()
    for name in docs.FRAMES:                      # every frame is on the page, and only those
        assert f"(pipeline/{name})" in page
    assert page.count("](pipeline/") == len(docs.FRAMES)


def test_fetch_notes_of_texelfetch_texvector_and_texrect4():
    # blocked_update (texelFetch): rows 2Y, 2Y+1 and columns 2X, 2X+1 of the panel, then A itself
    rec = run("cholesky-blocked", 8)
    updates = [f for f in rec.frames if f.kernel == "blocked_update_BLOCK4"]
    assert updates
    for f in updates:
        c0 = f.uniforms["c0"]
        for Y, X in zip(*np.nonzero(f.covered)):
            i, j = 2 * Y - c0, 2 * X - c0
            assert [(s, t) for s, t, _ in f.fetches_at(X, Y)] == [
                ("P", (0, i)), ("P", (0, i + 1)), ("P", (0, j)), ("P", (0, j + 1)), ("A", (X, Y))]
    # sparse_ellpack (texVECTOR): the column index of entry k of row i, its value, then x at that
    # column; a row of one entry stops at its padding's column index (-1)
    f = run("sparse-product", 6).frames[0]
    cols, w = f.inputs["columns"], f.uniforms["x_width"]
    for y, i in zip(*np.nonzero(f.covered)):
        c = int(cols[i, 0])
        want = [("columns", (0, i)), ("values", (0, i)), ("X", (c % w, c // w)), ("columns", (1, i))]
        if cols[i, 1] >= 0:
            want.append(("values", (1, i)))
        assert [(s, t) for s, t, _ in f.fetches_at(i, y)][:len(want)] == want
    # argmax_reduction (texRECT4): the pair 2y, 2y+1 down the column, the partner only inside the limit
    for f in run("lu-partial", 6).frames:
        if f.kernel != "argmax_reduction":
            continue
        lx, ly = f.uniforms["limit"]
        for y, x in zip(*np.nonzero(f.covered)):
            want = [(x, 2 * y)] + ([(x, 2 * y + 1)] if 2 * y + 1 < ly else [])
            assert [t for _, t, _ in f.fetches_at(x, y)] == want


def test_instrument_ignores_fetches_in_comments():
    src = ("uniform sampler2D A;\nout float result;\n// texRECT(B, c) in a comment\n"
           "/* and texRECT(C,\n   d) here */\nvoid main() { result = texRECT(A, WPOS); }\n")
    body, sites = instrument(src)
    assert sites == (("A", "texRECT(A, WPOS)"),)
    assert body.count("\n") >= src.count("\n")           # comments blanked, line numbers kept


def test_frames_name_the_functions_that_drew_them():
    """Frame.context: the project's functions on the stack when the pass was drawn, outermost
    first, the recorder's own left out; what tells LU's opening absmax passes (its pivot
    threshold) from the pivot search's argmax passes, which the kernels alone do not."""
    frames = run("lu-partial", 4).frames
    absmax = [f for f in frames if f.kernel == "absmax_reduction"]
    assert absmax and all(f.context[0] == "gpgpu.lu.lu" and "gpgpu.dense_common.singular_threshold" in f.context
                          and f.context.index("gpgpu.lu.lu_factor") < f.context.index("gpgpu.dense_common.singular_threshold")
                          for f in absmax)
    search = [f for f in frames if f.kernel.startswith("argmax_reduction")]
    assert search and not any("gpgpu.dense_common.singular_threshold" in f.context for f in search)
    assert all("gpgpu.reduce.argmax_region" in f.context for f in search)
    assert not any(c.startswith(("gpgpu.record.", "gpgpu.counters.", "gpgpu.kernel.", "gpgpu.show."))
                   for f in frames for c in f.context)


def test_uploads_and_serials_let_the_passes_be_replayed():
    """The frames name their textures by serial number and note what the host set in them: for a
    sum reduction of a seeded integer matrix the first upload is that matrix (regenerated here),
    every other upload is what a new target held before its first pass (zeros, or what a pooled
    texture kept from an earlier stream), and every input a pass reads is what the pass before it
    that wrote that serial left there (so uploads + passes replay the run)."""
    n = 6
    frames = run("reduce-pingpong", n).frames
    want = np.random.default_rng(0).integers(-9, 10, (n, n)).astype(np.float32)
    first = frames[0]
    (sampler, serial), = first.input_serials.items()
    assert np.array_equal(first.uploads[serial], want)
    held = {}
    for f in frames:
        for s, v in f.uploads.items():
            if s != serial:
                assert s == f.target_serial and s not in held, (f.index, s)
            held[s] = v
        for k, s in f.input_serials.items():
            assert np.array_equal(held[s], f.inputs[k]), (f.index, k)
        assert f.target_serial not in f.input_serials.values()
        held[f.target_serial] = f.values
    assert len({f.target_serial for f in frames}) > 1 and frames[-1].values.shape == (1, 1)
    assert frames[-1].values[0, 0] == want.sum()
