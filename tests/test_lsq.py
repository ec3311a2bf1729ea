import numpy as np
import pytest

import gpgpu


def problem(m, ill, rng):
    """Section 5.3 of 001: uniform [0, 1] data, n = 2m; ill-conditioned D² = 10^(-4 + 8i/(n-1))."""
    n = 2 * m
    A = rng.random((m, n))
    b = rng.random(n)
    d = 10.0 ** (-4 + 8 * np.arange(n) / (n - 1)) if ill else rng.random(n)
    x = np.linalg.solve(A @ np.diag(d) @ A.T, A @ (d * b))
    return A, d, b, x


def err(x, ref):
    return np.linalg.norm(x - ref) / np.linalg.norm(ref)


@pytest.mark.parametrize("m", [64, 256])
def test_refinement_reaches_double_precision(m, rng):
    steps = {}
    for ill in (False, True):
        A, d, b, xref = problem(m, ill, rng)
        res = gpgpu.lstsq_weighted(A, d, b, refine=True, tol=1e-8)
        e0, e = err(res.x0, xref), err(res.x, xref)
        assert 1e-7 < e0 < 1e-1, (ill, e0)  # single precision: far from double
        assert e <= 1e-10, (ill, e)
        assert res.converged and res.history[-1]["criterion"] <= 1e-8
        steps[ill] = res.iterations
    assert steps[True] > steps[False]  # ill-conditioned problems need more refinement (Tables 1-2)


def test_unrefined_returns_x0_and_unpacks(rng):
    A, d, b, xref = problem(16, False, rng)
    x, history = gpgpu.lstsq_weighted(A, d, b, refine=False)
    assert history == [] and err(x, xref) < 1e-2


def test_packed_storage_gives_the_same_answer(rng):
    A, d, b, xref = problem(17, False, rng)
    assert err(gpgpu.lstsq_weighted(A, d, b, storage="packed").x, xref) < 1e-10


def test_errors():
    with pytest.raises(ValueError, match="need length 4"):
        gpgpu.lstsq_weighted(np.ones((2, 4)), np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="non-negative"):
        gpgpu.lstsq_weighted(np.eye(2), -np.ones(2), np.ones(2))
