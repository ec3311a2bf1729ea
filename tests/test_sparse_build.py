"""The host-side build of the sparse textures (gpgpu.sparse, from_scipy and transposed): the
texture contents must be bit for bit those of a straightforward reference, the conversion as it
was first written (a lexsort of every entry, each entry's row and place fancy-indexed, the
transposed copy rebuilt from the textures read back), kept here as ``reference`` and
``reference_transposed``. A texel one off, a value and its column swapped, a segment's gap of an
odd segment length forgotten, a padded texel not zero, or a fold of y's blocks or of the
partials in the wrong order fails it; so would a transposed copy built from other values than
the textures hold (an entry that float32 rounds to zero is no entry of the copy)."""
import numpy as np
import pytest
import scipy.sparse as sp

from gpgpu import SparseStream, stream
from gpgpu.context import max_texture_size
from gpgpu.sparse import PACKED_FOLD, _auto_segment
from gpgpu.stream import fold_width, vector_shape


# ---------------------------------------------------------------------- the reference
def _positions(counts, L):
    seg = np.maximum(1, -(-counts // L))
    first = np.concatenate([[0], np.cumsum(seg)[:-1]]).astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    rows = np.repeat(np.arange(counts.size), counts)
    pos = np.arange(rows.size, dtype=np.int64) - starts[rows]
    return seg, first, first[rows] + pos // L, pos % L


def _canonical(A):
    M = sp.csr_matrix(sp.csr_matrix(A), dtype=np.float64, copy=True)
    M.sum_duplicates()
    M.eliminate_zeros()
    M.sort_indices()
    return M


def reference(A, fmt, dense_rows, dense_cols, segment=None, fold=None, perm=None):
    """The sparse part's textures of ``from_scipy(A, format=fmt)`` (name -> float32 array) as
    the first implementation built them, with the dense rows and columns given."""
    M = _canonical(A)
    m, n = M.shape
    if perm is not None:
        M = M[perm][:, perm].tocsr()
        M.sort_indices()
    coo = M.tocoo()
    in_row = np.isin(coo.row, dense_rows)
    in_col = np.isin(coo.col, dense_cols) & ~in_row
    keep = ~(in_row | in_col)
    rows, cols, vals = coo.row[keep], coo.col[keep], coo.data[keep]
    order = np.lexsort((cols, rows))
    rows, cols, vals = rows[order], cols[order], vals[order]
    counts = np.bincount(rows, minlength=m)
    limit = max_texture_size()
    out = {}
    if fmt in ("packed", "split"):
        L = int(segment) if segment is not None else _auto_segment(counts)
        H = -(-L // 2) if fmt == "packed" else L
        seg, first, at, slot = _positions(counts, L)
        S = int(seg.sum())
        split = int(seg.max())
        single = split == 1 and fold is None
        if single:
            Ws = vector_shape(m)[1]
        else:
            Ws = min(int(fold), limit) if fold else min(PACKED_FOLD, fold_width())
            Ws = max(Ws, -(-S // max(1, limit // H)))
            Ws = min(Ws, S)
        Rs = -(-S // Ws)
        if fmt == "packed":
            tex = np.zeros((Rs * H, Ws, 4), dtype=np.float32)
            ty, tx, comp = (at // Ws) * H + slot // 2, at % Ws, 2 * (slot % 2)
            tex[ty, tx, comp] = vals
            tex[ty, tx, comp + 1] = cols
            out["entries"] = tex
        else:
            tv, ti = np.zeros((Rs * H, Ws), dtype=np.float32), np.zeros((Rs * H, Ws), dtype=np.float32)
            ty, tx = (at // Ws) * H + slot, at % Ws
            tv[ty, tx], ti[ty, tx] = vals, cols
            out["values"], out["columns"] = tv, ti
        if not single and not bool(np.all(seg == split)):
            rows_y, W = vector_shape(m)
            meta = np.zeros((rows_y * W, 4), dtype=np.float32)
            meta[:m, 0], meta[:m, 1] = first, seg
            out["meta"] = meta.reshape(rows_y, W, 4)
        out["attributes"] = dict(segment=L, segments=S, split=split, p_shape=(Rs, Ws), single=single)
    elif fmt == "corrigan":
        nnz = vals.size
        width = max(1, min(nnz, fold_width()))
        height = max(1, -(-nnz // width))
        store = np.zeros(width * height, dtype=np.float32)
        store[:nnz] = vals
        index = np.zeros(width * height, dtype=np.float32)
        index[:nnz] = cols
        out["values"], out["columns"] = store.reshape(height, width), index.reshape(height, width)
    else:
        K = int(counts.max()) if counts.size and counts.max() > 0 else 1
        rows_y, W = vector_shape(m)
        end = -1.0 if fmt == "ellpack" else 0.0       # ELLPACK's padding column: where the loop stops
        slots = np.zeros((m, K), dtype=np.float32)
        idx = np.full((m, K), end, dtype=np.float32)
        pos = np.arange(rows.size) - np.concatenate([[0], np.cumsum(counts)[:-1]])[rows]
        slots[rows, pos] = vals
        idx[rows, pos] = cols
        pad = rows_y * W - m
        if pad:
            slots = np.vstack([slots, np.zeros((pad, K), np.float32)])
            idx = np.vstack([idx, np.full((pad, K), end, np.float32)])
        blocks_v = slots.reshape(rows_y, W, K)
        blocks_i = idx.reshape(rows_y, W, K)
        if fmt == "ellpack":
            out["values"] = np.concatenate(list(blocks_v), axis=1)
            out["columns"] = np.concatenate(list(blocks_i), axis=1)
        else:
            out["values"] = np.concatenate([b.T for b in blocks_v], axis=0)
            out["columns"] = np.concatenate([b.T for b in blocks_i], axis=0)
        out["attributes"] = dict(K=K)
    out["row_counts"] = counts
    return out


def reference_transposed(S):
    """The transposed copy's textures as first built: from the textures read back."""
    T = S.transposed()
    return reference(S.to_scipy().T, S.format, T.dense_rows, T.dense_cols,
                     segment=S._segment_arg, fold=S._fold_arg)


def same_bits(a, b, what):
    a, b = np.ascontiguousarray(a, np.float32), np.ascontiguousarray(b, np.float32)
    assert a.shape == b.shape, (what, a.shape, b.shape)
    diff = np.flatnonzero(a.view(np.uint32).ravel() != b.view(np.uint32).ravel())
    assert diff.size == 0, (what, diff[:5], a.ravel()[diff[:5]], b.ravel()[diff[:5]])


def check(S, ref, what):
    for name, want in ref.items():
        if name == "attributes":
            for key, value in want.items():
                assert getattr(S, key) == value, (what, key, getattr(S, key), value)
        elif name == "row_counts":
            assert np.array_equal(S.row_counts, want), what
        else:
            same_bits(S._streams[name].to_array(), want, f"{what}: {name}")
    if S.format in ("packed", "split") and "meta" not in ref:
        assert "meta" not in S._streams, what


# ---------------------------------------------------------------------- the matrices
def poisson(k):
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(k, k))
    return (sp.kron(sp.identity(k), T) + sp.kron(T, sp.identity(k))).tocsr()


def alike(rng, m=40, n=300, per=30):
    """Every row ``per`` non-zeros (nug30's A has rows of 30; its A^T rows of 4 or 60)."""
    cols = np.concatenate([rng.choice(n, per, replace=False) for _ in range(m)])
    return sp.csr_matrix((rng.standard_normal(m * per), (np.repeat(np.arange(m), per), cols)), shape=(m, n))


def messy(rng, m=53, n=81):
    """An unsorted COO with duplicates (summed; one pair cancels to zero), explicit zeros, empty
    rows first, last and inside, a row of 70 (longer than any segment, PACKED_MAX_SEGMENT = 64),
    values float32 rounds to zero (a 1e-300: stored as 0.0 with its column), and a full column."""
    counts = rng.integers(1, 9, size=m)
    counts[[0, 17, m - 1]] = 0
    counts[29] = 70
    rows = np.repeat(np.arange(m), counts)
    cols = np.concatenate([rng.choice(n, c, replace=c > n) for c in counts])
    vals = rng.standard_normal(rows.size)
    vals[::11] = 0.0                                   # explicit zeros
    vals[5], vals[9] = 1e-300, -1e-300                 # non-zero in float64, zero in float32
    rows = np.concatenate([rows, [3, 3, 3, 8, 8], np.arange(1, m - 1)])
    cols = np.concatenate([cols, [4, 4, 4, 2, 2], np.full(m - 2, 7)])
    vals = np.concatenate([vals, [1.5, 2.5, -1.0, 3.0, -3.0], rng.standard_normal(m - 2)])
    shuffle = rng.permutation(rows.size)
    return sp.coo_matrix((vals[shuffle], (rows[shuffle], cols[shuffle])), shape=(m, n))


def matrices(rng):
    A = alike(rng)
    return {"poisson": poisson(9), "alike": A, "alike^T": A.T.tocsr(), "messy": messy(rng),
            "messy^T": messy(rng).T, "one entry": sp.csr_matrix(([2.0], ([3], [1])), shape=(5, 4))}


FOLDS = [None, 7]                 # 7: y and the partials folded over texture rows of 7 texels


# ---------------------------------------------------------------------- the tests
@pytest.mark.parametrize("fold", FOLDS)
@pytest.mark.parametrize("fmt", ["packed", "split", "ellpack", "tell", "corrigan"])
def test_textures_bit_identical_to_the_reference(fmt, fold, rng, monkeypatch):
    """Every format's sparse textures (and, segmented formats, the (first, count) texels and the
    layout's attributes) equal the reference's bit for bit, folded or not, dense=False."""
    monkeypatch.setattr(stream, "FOLD_WIDTH", fold)
    for name, A in matrices(rng).items():
        opts = {"dense": False, "max_programs": 1000}
        with SparseStream.from_scipy(A, format=fmt, **opts) as S:
            check(S, reference(A, fmt, [], []), f"{fmt} {name} fold={fold}")


@pytest.mark.parametrize("fmt", ["packed", "split"])
@pytest.mark.parametrize("segment, pfold", [(1, None), (3, None), (5, 4), (7, None), (8, 3), (64, None)])
def test_segments_bit_identical_to_the_reference(fmt, segment, pfold, rng, monkeypatch):
    """Odd segments (a gap after each full segment of the packed format: ceil(L / 2) texels hold
    L entries), segment 1, the longest segment, and a given fold= (the second pass always)."""
    monkeypatch.setattr(stream, "FOLD_WIDTH", 11)
    for name, A in matrices(rng).items():
        with SparseStream.from_scipy(A, format=fmt, dense=False, segment=segment, fold=pfold) as S:
            check(S, reference(A, fmt, [], [], segment=segment, fold=pfold),
                  f"{fmt} {name} segment={segment} fold={pfold}")


@pytest.mark.parametrize("fmt", ["packed", "split", "ellpack", "tell", "corrigan"])
def test_dense_part_leaves_the_reference_sparse_part(fmt, rng, monkeypatch):
    """With dense rows and columns (dense=6): the entries left in the sparse part, in order."""
    monkeypatch.setattr(stream, "FOLD_WIDTH", 13)
    for name, A in matrices(rng).items():
        with SparseStream.from_scipy(A, format=fmt, dense=6, max_programs=1000) as S:
            M = _canonical(A)
            assert np.array_equal(S.dense_rows, np.flatnonzero(np.diff(M.indptr) > 6))
            assert np.array_equal(S.dense_cols, np.flatnonzero(np.bincount(M.indices, minlength=M.shape[1]) > 6))
            check(S, reference(A, fmt, S.dense_rows, S.dense_cols), f"{fmt} {name} dense=6")


def test_sorted_corrigan_bit_identical_to_the_reference(rng):
    """sort=True (003, Fig. 7): the permuted matrix's entries."""
    A = messy(rng, m=40, n=40)
    with SparseStream.from_scipy(A, format="corrigan", sort=True, dense=False) as S:
        check(S, reference(A, "corrigan", [], [], perm=S.perm), "corrigan sorted")


@pytest.mark.parametrize("fmt, opts", [("packed", {}), ("packed", {"segment": 3, "fold": 5}),
                                       ("split", {}), ("ellpack", {}), ("tell", {}), ("corrigan", {}),
                                       ("ellpack", {"dense": 6}), ("packed", {"dense": 6}),
                                       ("corrigan", {"sort": True}), ("ellpack", {"transpose": "scatter"}),
                                       ("tell", {"transpose": "scatter", "dense": 6})])
def test_transposed_copy_bit_identical_to_the_read_back(fmt, opts, rng, monkeypatch):
    """transposed() builds rmatvec's copy from a host copy of A; its textures are those built
    from the textures read back (the first way), values rounded to float32 as stored, entries
    that round to zero dropped. Also after a product (nothing of the host copy changed), and
    with transpose="scatter" (no host copy: the read-back itself)."""
    monkeypatch.setattr(stream, "FOLD_WIDTH", 9)
    for name, A in matrices(rng).items():
        if opts.get("sort") and A.shape[0] != A.shape[1]:
            continue
        with SparseStream.from_scipy(A, format=fmt, **opts) as S:
            S.matvec(np.ones(A.shape[1]))
            ref = reference_transposed(S)
            check(S.transposed(), ref, f"transposed {fmt} {opts} {name}")
            assert S.transposed() is S.transposed()


def test_transposed_copy_host_copy_freed(rng):
    """The host copy of A is dropped once the transposed copy is built, and on release()."""
    A = messy(rng)
    S = SparseStream.from_scipy(A, format="packed")
    assert S._host is not None
    S.transposed()
    assert S._host is None
    S.release()
    S = SparseStream.from_scipy(A, format="packed")
    S.release()
    assert S._host is None


def _auto_threshold_reference(counts, length, most=None):
    """The automatic dense threshold of the padded layouts as first written (a sort)."""
    t = np.unique(np.append(counts, 32))
    above = counts.size - np.searchsorted(np.sort(counts), t, side="right")
    cost = counts.size * t.astype(np.float64) + above * float(length)
    if most is not None:
        fits = np.maximum(t, 32) <= most
        if not fits.any():
            return int(most)
        t, cost = t[fits], cost[fits]
    return int(max(32, t[len(t) - 1 - int(np.argmin(cost[::-1]))]))


def test_auto_threshold_equals_the_sorting_reference(rng):
    """The threshold of fewest texels from a histogram of the counts is the sort's, on counts
    with and without 32 among them, with a long tail, with a ``most``."""
    from gpgpu.sparse import _auto_threshold

    cases = [np.array([4] * 900 + [60] * 30), np.array([32, 32, 5, 0, 0]), np.array([0]),
             np.array([3] * 50 + [500, 1000]), np.array([5] * 10 + [40] * 10 + [33] * 3),
             np.array([50, 60, 70])]             # all above most=40: 32 (every row dense), not 40
    cases += [rng.integers(0, hi, size=size) for hi, size in [(40, 200), (300, 50), (5, 1000), (2000, 30)]]
    for counts in cases:
        for length in (10, 100, 5000):
            for most in (None, 20, 40, 600):
                assert _auto_threshold(counts, length, True, most) == \
                    _auto_threshold_reference(counts, length, most), (counts[:10], length, most)


@pytest.mark.parametrize("fmt", ["packed", "ellpack", "corrigan"])
def test_unordered_entries_still_sorted(fmt, rng, monkeypatch):
    """_upload_sparse without ordered=True (entries in any order) sorts them first: the same
    textures as the ordered entries of a canonical CSR give."""
    original = SparseStream._upload_sparse

    def shuffled(self, rows, cols, vals, counts=None, ordered=False):
        if rows is None:
            rows = np.repeat(np.arange(self.shape[0]), counts)
        p = rng.permutation(cols.size)
        return original(self, rows[p], cols[p], vals[p])

    monkeypatch.setattr(SparseStream, "_upload_sparse", shuffled)
    for name, A in matrices(rng).items():
        with SparseStream.from_scipy(A, format=fmt, dense=False, max_programs=1000) as S:
            check(S, reference(A, fmt, [], []), f"{fmt} {name} shuffled")


@pytest.mark.parametrize("fmt", ["packed", "split", "ellpack", "tell"])
def test_int64_indexes_give_the_same_textures(fmt, rng, monkeypatch):
    """The index arithmetic in int64 (what a matrix of 2^31 places or more takes) gives the
    textures the int32 arithmetic gives (odd segments: the gap term; a fold: y's blocks)."""
    from gpgpu.sparse_formats import common

    monkeypatch.setattr(common, "_index_type", lambda *sizes: np.int64)
    monkeypatch.setattr(stream, "FOLD_WIDTH", 7)
    for name, A in matrices(rng).items():
        opts = {"segment": 3} if fmt in ("packed", "split") else {}
        with SparseStream.from_scipy(A, format=fmt, dense=False, **opts) as S:
            check(S, reference(A, fmt, [], [], **opts), f"{fmt} {name} int64")
