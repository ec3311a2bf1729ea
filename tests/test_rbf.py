"""Implicit surfaces by compactly supported RBFs (gpgpu.rbf, the application of paper 003):
the system against a dense float64 reference, the fitted function's sign on either side of
the surface, and the input checks."""
import numpy as np
import pytest
from scipy.spatial.distance import cdist

from gpgpu import rbf


@pytest.mark.parametrize("smoothing", [1e-2, 0.1, 0.0])
def test_system_is_the_dense_wendland_matrix_with_diagonal_one_plus_smoothing(smoothing):
    """A_ij = phi(||c_i - c_j|| / h) + smoothing delta_ij from a dense float64 evaluation; the
    diagonal exactly phi(0) + smoothing = 1 + smoothing (a diagonal of 2 + smoothing, phi(0)
    counted twice, fails here)."""
    p, n = rbf.blob_2d(60)
    eps, h = 0.1, 0.2
    centres, values, A = rbf.rbf_system(p, n, eps, h, smoothing)
    m = len(p)
    np.testing.assert_array_equal(centres, np.concatenate([p, p + eps * n, p - eps * n]))
    np.testing.assert_array_equal(values, np.repeat([0.0, eps, -eps], m))
    assert np.all(A.diagonal() == 1.0 + smoothing)
    ref = rbf.wendland(cdist(centres, centres) / h) + smoothing * np.eye(3 * m)
    np.testing.assert_allclose(A.toarray(), ref, rtol=0, atol=1e-15)


def test_fit_is_positive_outside_and_negative_inside():
    """s > 0 at p + 0.05 n (the normals' side, where the +eps centres are) and s < 0 at
    p - 0.05 n, at more than 95 % of the points (the docstring's convention; the values'
    signs swapped fails here). The star-shaped curve's normals point away from the origin,
    so the origin is inside: s < 0 there too."""
    p, n = rbf.blob_2d(200)
    eps, h = 0.1, 0.2
    centres, lam, A, res = rbf.fit(p, n, eps, h)
    assert res[1] == 0 and np.all(A.diagonal()[:-1] == 1.01) and A.shape == (601, 601)
    assert np.all(np.sum(p * n, axis=1) > 0)                  # outward normals
    s_out = rbf.evaluate(p + 0.05 * n, centres, lam, h)
    s_in = rbf.evaluate(p - 0.05 * n, centres, lam, h)
    assert np.mean(s_out > 0) > 0.95 and np.mean(s_in < 0) > 0.95


def _points():
    return rbf.blob_2d(20)


@pytest.mark.parametrize("case, match", [
    ("fewer normals", r"normals must have the points' shape \(20, 2\).*got \(15, 2\)"),
    ("normals of another dimension", r"normals must have the points' shape \(20, 2\).*got \(20, 3\)"),
    ("NaN point", r"points has NaN or infinite coordinates \(in 1 of 20 rows, the first row 4\)"),
    ("infinite normal", r"normals has NaN or infinite coordinates"),
    ("no points", r"needs at least 1 point"),
    ("no points, 2-D", r"needs at least 1 point"),
    ("zero normal", r"1 normals are zero \(the first at row 7\).*give unit normals"),
    ("4-D points", r"d = 1, 2 or 3"),
    ("1-D array", r"must be an \(n, d\) array"),
    ("complex points", r"points must be real coordinates, got complex numbers"),
])
def test_fit_names_bad_points_and_normals(case, match):
    p, n = _points()
    if case == "fewer normals":
        n = n[:15]
    elif case == "normals of another dimension":
        n = np.hstack([n, np.zeros((20, 1))])
    elif case == "NaN point":
        p[4, 1] = np.nan
    elif case == "infinite normal":
        n[2, 0] = np.inf
    elif case == "no points":
        p, n = [], []
    elif case == "no points, 2-D":
        p, n = np.empty((0, 2)), np.empty((0, 2))
    elif case == "zero normal":
        n[7] = 0.0
    elif case == "4-D points":
        p, n = np.ones((20, 4)), np.ones((20, 4))
    elif case == "1-D array":
        p, n = p[:, 0], n[:, 0]
    elif case == "complex points":      # was fitted to the real parts, with a ComplexWarning only
        p = p + 1j * p
    with pytest.raises(ValueError, match=match):
        rbf.fit(p, n, 0.1, 0.2)


@pytest.mark.parametrize("kwargs, match", [
    (dict(rtol=1e-5), r"fit: pass the tolerance as tol= \(fit gives it to each cg solve as rtol\), not rtol="),
    (dict(eps="0.1"), r"rbf: eps must be a number, got '0.1' of type str"),
    (dict(support=None), r"rbf: support must be a number, got None"),
    (dict(smoothing=[0.01]), r"rbf: smoothing must be a number"),
])
def test_fit_names_an_argument_of_the_wrong_kind(kwargs, match):
    """rtol= (cg's name for fit's tol) was "cg() got multiple values for keyword argument
    'rtol'", eps="0.1" a "'>' not supported between 'str' and 'int'" from the comparison."""
    p, n = _points()
    args = dict(eps=0.1, support=0.2)
    args.update(kwargs)
    with pytest.raises(TypeError, match=match):
        rbf.fit(p, n, **args)


def test_evaluate_names_bad_grids():
    p, n = _points()
    centres, _, _ = rbf.rbf_system(p, n, 0.1, 0.2)
    lam = np.ones(len(centres))
    with pytest.raises(ValueError, match="have 3 coordinates, the centres 2"):
        rbf.evaluate(np.zeros((3, 3)), centres, lam, 0.2)
    with pytest.raises(ValueError, match="grid has NaN"):
        rbf.evaluate(np.array([[0.0, np.nan]]), centres, lam, 0.2)
    with pytest.raises(ValueError, match="one coefficient per centre, 60, or 61"):
        rbf.evaluate(np.zeros((3, 2)), centres, lam[:-1], 0.2)


def _saddle(A):
    """003's bordered system as printed: the last row and column ones, the corner 0."""
    import scipy.sparse as sp

    N = A.shape[0] - 1
    K = sp.lil_matrix(A)
    K[N, N] = 0.0
    return K.tocsc()


def test_constant_system_borders_A_with_003s_row_of_ones_and_stays_positive_definite():
    """constant=True: A bordered by a last row and column of ones (003's "most of the last row"
    ones) with the corner N / smoothing; SPD (the smallest eigenvalue, float64, positive), while
    the printed corner 0 makes it indefinite (one negative eigenvalue: CG is not valid there).
    A corner below e^T A^-1 e, or a border of another value, fails here."""
    p, n = rbf.blob_2d(40)
    centres, f, A = rbf.rbf_system(p, n, 0.1, 0.2)
    c2, f2, K = rbf.rbf_system(p, n, 0.1, 0.2, constant=True)
    N = len(centres)
    np.testing.assert_array_equal(c2, centres)
    np.testing.assert_array_equal(f2, np.append(f, 0.0))
    Kd = K.toarray()
    np.testing.assert_array_equal(Kd[:N, :N], A.toarray())
    np.testing.assert_array_equal(Kd[N, :N], np.ones(N))
    np.testing.assert_array_equal(Kd[:N, N], np.ones(N))
    assert Kd[N, N] == N / 0.01
    assert np.linalg.eigvalsh(Kd)[0] > 0
    ev = np.linalg.eigvalsh(_saddle(K).toarray())
    assert ev[0] < 0 < ev[1]
    with pytest.raises(ValueError, match="smoothing > 0"):
        rbf.rbf_system(p, n, 0.1, 0.2, smoothing=0.0, constant=True)


@pytest.mark.parametrize("storage", [dict(format="ellpack"), dict(format="corrigan", sort=True, max_programs=200)])
def test_fit_with_the_constant_solves_003s_system_like_float64(storage):
    """fit (constant=True, two CG solves with the SPD bordered matrix) against scipy's float64
    direct solve of 003's printed system [[A, e], [e^T, 0]]: lambda and c within float32 CG's
    reach (rtol 1e-6 times cond(A) ~ 1.5e3: 2e-3 relative), sum lambda = 0 to float32's
    rounding. The last row and column go to the dense part in both storages. A wrong t
    (the combination of the two solves) or a c of the wrong sign fails here."""
    import scipy.sparse.linalg as spl

    from gpgpu import SparseStream

    p, n = rbf.blob_2d(200)
    eps, h = 0.1, 0.2
    centres, coef, K, res = rbf.fit(p, n, eps, h, **storage)
    N = len(centres)
    assert res[1] == 0 and coef.shape == (N + 1,) and len(res.solves) == 2
    ref = spl.spsolve(_saddle(K), np.append(rbf.rbf_system(p, n, eps, h)[1], 0.0))
    assert abs(ref[:N].sum()) < 1e-12 and ref[N] != 0
    assert np.linalg.norm(coef[:N] - ref[:N]) / np.linalg.norm(ref[:N]) < 2e-3
    assert abs(coef[N] - ref[N]) < 2e-3 * abs(ref[N])
    assert abs(coef[:N].sum()) < 1e-5 * np.abs(coef[:N]).sum()
    with SparseStream.from_scipy(K, **storage) as S:
        last = N if S.perm is None else int(np.flatnonzero(S.perm == N)[0])     # its stored position
        assert last in S.dense_rows and last in S.dense_cols
    # the constant is added where the field is defined: s at the points is small against eps
    s = rbf.evaluate(p, centres, coef, h)
    E = rbf.evaluation_matrix(p, centres, h)
    np.testing.assert_allclose(s, E @ coef[:N] + coef[N], rtol=1e-4, atol=1e-6)
    assert np.abs(s).max() < 0.5 * eps


def test_support_band_masks_where_only_tails_reach():
    """support_band: True where a centre lies closer than reach x support, hand-worked on a
    line of two centres; NaN where it is False gives the drawn field. A mask that used the
    full support (the old NaN rule) keeps the point at 0.6 h and fails here."""
    centres = np.array([[0.0, 0.0], [1.0, 0.0]])
    h = 0.5
    g = np.array([[0.0, 0.1], [0.0, 0.24], [0.0, 0.26], [0.5, 0.0], [1.3, 0.0], [0.0, 0.3], [3.0, 3.0]])
    band = rbf.support_band(g, centres, h)
    np.testing.assert_array_equal(band, [True, True, False, False, False, False, False])
    np.testing.assert_array_equal(rbf.support_band(g, centres, h, reach=1.0),
                                  [True, True, True, False, True, True, False])
    s = rbf.evaluate(g, centres, np.array([1.0, 1.0, 0.25]), h)
    assert np.isnan(s[-1]) and s[3] == 0.25                        # no basis function reaches: c
    np.testing.assert_allclose(s[5], rbf.wendland(0.6) + 0.25, rtol=1e-6)
    drawn = np.where(band, s, np.nan)
    assert np.isfinite(drawn[:2]).all() and np.isnan(drawn[2:]).all()
    with pytest.raises(ValueError, match="reach is a fraction"):
        rbf.support_band(g, centres, h, reach=1.5)
    with pytest.raises(ValueError, match="3 coordinates, the centres 2"):
        rbf.support_band(np.zeros((2, 3)), centres, h)


def test_evaluate_names_a_support_that_is_not_a_number_and_coefficients_that_are_not_finite():
    """support="0.3" was "'>' not supported between 'str' and 'int'"; a NaN coefficient was
    "matvec x: contains NaN or infinity", naming an argument evaluate does not have."""
    p, n = _points()
    grid = np.zeros((4, 2))
    lam = np.ones(3 * len(p))
    for call in (lambda: rbf.evaluate(grid, p, lam[:len(p)], "0.3"),
                 lambda: rbf.support_band(grid, p, "0.3")):
        with pytest.raises(TypeError, match=r"support must be a number, got '0.3' of type str"):
            call()
    lam[5] = np.nan
    with pytest.raises(ValueError, match=r"evaluate: lam has 1 NaN or infinite coefficients \(the first at 5\)"):
        rbf.evaluate(grid, np.vstack([p, p, p]), lam, 0.3)
