"""cg at the edges a hostile user tries: right-hand sides far from 1, scipy's conventions
(rtol = inf, x0 = "Mb", M as a column), the warning when float32's reach stops it, and which
iteration an explicit reduction= gives. References: numpy float64 solves, scipy's cg."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import gpgpu
from gpgpu.cg import Float32ToleranceWarning

T = sp.diags([-1.0, 2.5, -1.0], [-1, 0, 1], shape=(50, 50)).tocsr()
X = np.linalg.solve(T.toarray(), np.ones(50))


@pytest.mark.parametrize("scale", [1e-170, 1e-300, 1e-17, 1e30])
def test_a_right_hand_side_far_from_one(scale, ctx):
    """b of 1e-170 answered x = 0, info 0 in 0 iterations: ||b||^2 underflowed in float64."""
    x, info = gpgpu.cg(T, np.ones(50) * scale)
    assert info == 0
    np.testing.assert_allclose(x / scale, X, rtol=0, atol=1e-4 * np.abs(X).max())


def test_an_infinite_target_accepts_the_start_as_scipy(ctx):
    from scipy.sparse.linalg import cg as scipy_cg

    for kw in ({"rtol": np.inf}, {"atol": np.inf}):
        x, info = gpgpu.cg(T, np.ones(50), **kw)
        xs, infos = scipy_cg(T, np.ones(50), **kw)
        assert info == infos == 0 and np.array_equal(x, xs)
        x, info = gpgpu.cg(T, np.ones(50), x0=np.full(50, 3.0), **kw)
        assert info == 0 and np.array_equal(x, np.full(50, 3.0))
    with pytest.raises(ValueError, match="rtol must be a number >= 0"):
        gpgpu.cg(T, np.ones(50), rtol=np.nan)


def test_x0_mb_and_a_column_m_as_scipy(ctx):
    d = 1.0 / T.diagonal()
    for kw in ({"x0": "Mb"}, {"x0": "Mb", "M": d}, {"M": d[:, None]}, {"M": d[:, None], "x0": "Mb"}):
        x, info = gpgpu.cg(T, np.ones(50), **kw)
        assert info == 0
        np.testing.assert_allclose(x, X, rtol=0, atol=1e-4 * np.abs(X).max())
    with pytest.raises(ValueError, match="x0 must be a vector, None or 'Mb'"):
        gpgpu.cg(T, np.ones(50), x0="bM")


def test_a_stagnation_above_the_target_warns(ctx):
    """The CG guide's 2-D Poisson system (4096 unknowns) stagnates at about 2e-5 ||b|| in
    float32: rtol = 1e-5 ended with info > 0 and no warning; rtol = 1e-4 converges quietly."""
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(64, 64))
    A = (sp.kron(sp.eye(64), t) + sp.kron(t, sp.eye(64))).tocsr()
    b = np.ones(A.shape[0])
    with pytest.warns(Float32ToleranceWarning, match="the residual stagnated"):
        r = gpgpu.cg(A, b, rtol=1e-6)
    assert r[1] > 0 and r.stagnated
    with warnings.catch_warnings():
        warnings.simplefilter("error", Float32ToleranceWarning)
        assert gpgpu.cg(A, b, rtol=1e-4)[1] == 0


@pytest.mark.parametrize("kw, single", [({"preset": "fast", "reduction": "fan"}, True), ({"preset": "fast"}, True),
                                        ({"preset": "robust", "reduction": "fan"}, False),
                                        ({"preset": "fast", "reduction": "pingpong"}, False)])
def test_an_explicit_fan_reduction_keeps_the_fast_presets_iteration(kw, single, ctx):
    """The fast preset's single-reduction iteration (kernels cg_sr_*) needs fan sums: an
    explicit reduction="fan" keeps it, another reduction gives the standard iteration."""
    with gpgpu.counters.count() as c:
        x, info = gpgpu.cg(T, np.ones(50), **kw)
    assert info == 0 and ("cg_sr_update" in c.stats) == single
    np.testing.assert_allclose(x, X, rtol=0, atol=1e-4 * np.abs(X).max())


def test_a_breakdown_with_a_preconditioner_names_it(ctx, monkeypatch):
    """A diagonal M spanning 1e6 broke the fast preset down after 9231 iterations on a 2-D
    Poisson system (positive definite), and the message blamed A alone."""
    import sys

    from gpgpu.errors import CGBreakdownError

    cg_module = sys.modules["gpgpu.cg.api"]       # the module that calls _iterate

    def broken(*args, **kwargs):
        raise CGBreakdownError(7, 50)

    monkeypatch.setattr(cg_module, "_iterate", broken)
    with pytest.raises(CGBreakdownError, match=r"A preconditioner M was given: .*try preset='robust'"):
        gpgpu.cg(T, np.ones(50), M=1.0 / T.diagonal(), preset="fast")
    with pytest.raises(CGBreakdownError) as info:
        gpgpu.cg(T, np.ones(50), preset="fast")
    assert "preconditioner M was given" not in str(info.value)
