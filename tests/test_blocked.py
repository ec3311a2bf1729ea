"""The blocked Cholesky (beyond the papers, issue 13): RGBA 2 x 2 blocks, faithful panels,
one rank-b pass per panel. Checked against float64 numpy, against float32 LAPACK's backward
error, and the fragment counts of its update passes against a brute-force count."""
import numpy as np
import pytest
from scipy.linalg import lapack

import gpgpu
from gpgpu import NotPositiveDefiniteError, Stream, counters
from gpgpu.blocked import BLOCKS, KERNELS, blocked_cholesky, padded_order
from gpgpu.geometry import Rect


def spd(n, seed=0, shift=1.0):
    B = np.random.default_rng(seed).standard_normal((n, n))
    return B @ B.T / n + shift * np.eye(n)


@pytest.mark.parametrize("b", BLOCKS)
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 9, 17, 33, 64, 100])
def test_blocked_factor_within_float32_lapack_backward_error(n, b):
    A = spd(n, n, shift=0.01)
    L = gpgpu.cholesky(A, variant="blocked", block=b).astype(np.float64)
    assert np.array_equal(L, np.tril(L))
    c, info = lapack.spotrf(A.astype(np.float32), lower=1)
    Lc = np.tril(c).astype(np.float64)
    err = np.linalg.norm(L @ L.T - A) / np.linalg.norm(A)
    lapack_err = np.linalg.norm(Lc @ Lc.T - A) / np.linalg.norm(A)
    assert err <= max(2.5 * lapack_err, 2 * n * 2 ** -24), (err, lapack_err)
    Lr = np.linalg.cholesky(A)
    assert np.abs(L - Lr).max() <= 200 * n * 2 ** -24 * np.abs(Lr).max() * np.linalg.cond(A) ** 0.5


def test_pack_and_unpack_2x2_blocks_with_identity_padding():
    n, M = 5, 4                                  # 5 x 5 padded to 8 x 8: 4 x 4 blocks
    A = np.arange(1.0, 26.0).reshape(n, n)
    with Stream.from_array(A) as S, Stream(M, M, components=4) as P, Stream(n, n) as back, Stream(3, 3) as part:
        KERNELS["pack"].draw(P, Rect.covering(0, 0, M, M), {"A": S}, {"n": n})
        got = P.to_array()
        full = np.eye(8)
        full[:n, :n] = A
        for Y in range(M):
            for X in range(M):
                block = full[2 * Y:2 * Y + 2, 2 * X:2 * X + 2]
                assert list(got[Y, X]) == [block[0, 0], block[0, 1], block[1, 0], block[1, 1]], (X, Y)
        KERNELS["unpack"].draw(back, Rect.covering(0, 0, n, n), {"P": P}, {"offset": 0})
        assert np.array_equal(back.to_array(), A)
        KERNELS["unpack"].draw(part, Rect.covering(0, 0, 3, 3), {"P": P}, {"offset": 2})
        assert np.array_equal(part.to_array(), full[2:5, 2:5])


@pytest.mark.parametrize("n,b", [(8, 4), (21, 4), (40, 8), (33, 16)])
def test_update_passes_shade_the_lower_block_triangle_of_each_trailing_matrix(n, b):
    with counters.count(time=False) as c:
        gpgpu.cholesky(spd(n), variant="blocked", block=b)
    updates = [p for p in c.trace if p.kernel == f"blocked_update_BLOCK{b}"]
    N = padded_order(n, b)
    want = []
    for c0 in range(0, N, b):
        first = (c0 + b) // 2
        blocks = [(X, Y) for Y in range(N // 2) for X in range(N // 2) if first <= X <= Y]
        if blocks:
            want.append(len(blocks))
    assert [p.fragments for p in updates] == want
    assert len(updates) == N // b - 1
    # fewer fragments than the faithful triangle updates, (n-1)n(n+1)/6 of them
    assert sum(want) < (n - 1) * n * (n + 1) // 6 or n < 16


@pytest.mark.parametrize("k", [0, 3, 4, 9])
def test_not_positive_definite_names_the_step(k):
    n = 12
    A = spd(n, 1)
    A[k, k] = -50.0                               # the leading minor of order k + 1 fails
    with pytest.raises(NotPositiveDefiniteError, match=f"step k = {k}|pivot {k}") as e:
        gpgpu.cholesky(A, variant="blocked", block=4)
    assert e.value.k == k


def test_stream_input_and_argument_errors():
    A = spd(10, 2)
    with Stream.from_array(np.tril(A)) as S:
        L = blocked_cholesky(S, 8)
        assert isinstance(L, Stream) and L.shape == (10, 10)
        np.testing.assert_allclose(np.tril(L.to_array()), np.linalg.cholesky(A), atol=2e-6)
        L.release()
    with pytest.raises(ValueError, match="block must be one of"):
        gpgpu.cholesky(A, variant="blocked", block=6)
    with pytest.raises(ValueError, match="variant must be"):
        gpgpu.cholesky(A, variant="fast")
    with pytest.raises(ValueError, match="leave form, update, index"):
        gpgpu.cholesky(A, variant="blocked", form="inner")
    with pytest.raises(ValueError, match="not symmetric"):
        gpgpu.cholesky(np.triu(A), variant="blocked")
