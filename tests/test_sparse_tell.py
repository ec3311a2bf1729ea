"""T-ELL plus the dense part (gpgpu.sparse.tell_dense_part): the nearest the pipeline draws to
paper 002's DHTELL2 kernel (Table 3), against scipy in float64, and as the matrix-free GPU back
end's storage (format="tell")."""
import numpy as np
import pytest
import scipy.sparse as sp

from gpgpu import stream

U32 = 2.0 ** -24


def gruca_shaped(rng, N=40, r=4):
    """A Gruca-like pattern (002 section 3.2: rows and columns of r non-zeros, one dense row and
    one dense column), with mixed signs, and a row left empty."""
    rows = np.repeat(np.arange(N), r)
    cols = (rows * 7 + np.tile(np.arange(r) * 3, N)) % N
    A = sp.csr_matrix((rng.uniform(0.5, 1.5, rows.size) * rng.choice([-1.0, 1.0], rows.size), (rows, cols)),
                      shape=(N + 1, N + 1)).tolil()
    A[N, :] = rng.standard_normal(N + 1)            # the dense row
    A[:N, N] = rng.standard_normal((N, 1))          # the dense column
    A[3, :] = 0                                     # an empty row: its texel must read the dense column only
    A[3, N] = 0.75
    return A.tocsr()


def within_float32(got, A, x, what):
    """|got - A x| <= gamma_(k+2) (|A| |x|) entry by entry (k the non-zeros of the entry's row:
    k - 1 additions in any tree order, one product, a and x rounded to float32), A x in
    float64. A texel read one off, a swapped coordinate or a dense row added twice is O(1)
    wrong and fails it."""
    A = sp.csr_matrix(A)
    k = np.maximum(np.diff(A.indptr), 1)
    g = (k + 2) * U32 / (1 - (k + 2) * U32)
    err = np.abs(np.asarray(got, dtype=np.float64) - A @ x)
    bound = g * (abs(A) @ np.abs(x)) + 1e-300
    assert np.all(err <= bound), (what, float((err / bound).max()), int(np.argmax(err / bound)))


@pytest.mark.parametrize("fold", [None, 6])
def test_tell_dense_part_against_scipy_float64(fold, rng, monkeypatch):
    """fold=6 folds y and x into rows of 6 texels, so T-ELL's blocks of W rows are stacked and
    the dense row's plane and the dense column's are folded too."""
    from gpgpu.sparse import tell_dense_part

    monkeypatch.setattr(stream, "FOLD_WIDTH", fold)
    A = gruca_shaped(rng)
    m, n = A.shape
    with tell_dense_part(A, dense=8) as S:
        assert S.format == "tell" and list(S.dense_rows) == [m - 1] and list(S.dense_cols) == [n - 1]
        assert S.K == 4                              # the regular rows only: no row padded to the dense one
        x, y = rng.standard_normal(n), rng.standard_normal(m)
        within_float32(S.matvec(x), A, x, "A x")
        within_float32(S.rmatvec(y), A.T, y, "A^T y")
    with tell_dense_part(A) as S:           # the automatic threshold also moves them out
        assert S.dense_rows.size and S.dense_cols.size
        within_float32(S.matvec(x), A, x, "A x (automatic threshold)")


def test_tell_dense_part_docstring_says_why_a_fragment_cannot_split_a_row():
    from gpgpu.sparse import tell_dense_part

    doc = " ".join(tell_dense_part.__doc__.split())
    assert "DHTELL2" in doc and "half warp" in doc
    assert "each fragment computes the one output texel" in doc and "a row's sum cannot be shared out" in doc


def test_matrix_free_gpu_with_tell_solves_a_gruca_like_lp():
    """The matrix-free GPU back end with format='tell' (Table 3's gpu-tell row) solves the
    inequality stand-in to HiGHS's objective, in ELLPACK's iterations (the same products up to
    rounding)."""
    from experiments.mfipm.common import highs_objective
    from gpgpu.lp import gruca_like, solve

    p = gruca_like(16, seed=2, slack=True)
    ref, _ = highs_objective(p)
    tell = solve(p, method="matrix-free", backend="gpu", eps=1e-8, format="tell")
    ell = solve(p, method="matrix-free", backend="gpu", eps=1e-8)
    assert tell.status == "optimal" and abs(tell.objective - ref) <= 1e-6 * abs(ref)
    assert abs(tell.iterations - ell.iterations) <= 1
