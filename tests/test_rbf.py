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
    assert res[1] == 0 and np.all(A.diagonal() == 1.01)
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
    with pytest.raises(ValueError, match=match):
        rbf.fit(p, n, 0.1, 0.2)


def test_evaluate_names_bad_grids():
    p, n = _points()
    centres, _, _ = rbf.rbf_system(p, n, 0.1, 0.2)
    lam = np.ones(len(centres))
    with pytest.raises(ValueError, match="have 3 coordinates, the centres 2"):
        rbf.evaluate(np.zeros((3, 3)), centres, lam, 0.2)
    with pytest.raises(ValueError, match="grid has NaN"):
        rbf.evaluate(np.array([[0.0, np.nan]]), centres, lam, 0.2)
    with pytest.raises(ValueError, match="one coefficient per centre, 60"):
        rbf.evaluate(np.zeros((3, 2)), centres, lam[:-1], 0.2)
