"""Implicit surfaces from points with normals by compactly supported radial basis functions:
the application paper 003 solved its sparse systems for ("Reconstruction of implicit surfaces
... with radial basis functions requires a large sparse system to be solved").

The classic construction (Carr et al. 2001; Morse et al. 2001 for compact support): on-surface
points p_i get the value 0, and off-surface points p_i +- eps n_i along the normals the values
+-eps. The interpolant s(x) = sum_j lambda_j phi(||x - c_j|| / h) through all these centres
c_j solves A lambda = f with A_ij = phi(||c_i - c_j|| / h), Wendland's function

    phi(r) = (1 - r)^4_+ (4 r + 1)        (phi_{3,1}: C^2, positive definite in R^1..R^3)

so A is sparse (only centres closer than h interact), symmetric and positive definite: the
system for conjugate gradients (``gpgpu.cg``). Pure interpolation is badly conditioned (for
300 points on the 2-D curve, eps = 0.1 and h = 0.2, cond(A) = 5e9: no float32 solver gets
anywhere), so, as Carr et al. do for noisy data, a smoothing term rho I is added:
(A + rho I) lambda = f, cond 1.5e3 at the default rho = 0.01, and s then approximates the
values instead of interpolating them. The surface is the zero level set of s,
evaluated on a grid as another sparse product, E lambda with E_gj = phi(||g - c_j|| / h) (a
``SparseStream.matvec``). Building A and E (which centres are near which) is set-up on the CPU
with scipy's k-d tree; the solve and the evaluation run on the GPU.

The point sets are generated here, no downloads: ``blob_2d`` (a smooth star-shaped curve) and
``torus_3d`` (a torus sampled with noise), each with exact normals.
"""
from __future__ import annotations

import numpy as np

__all__ = ["wendland", "blob_2d", "torus_3d", "rbf_system", "evaluation_matrix", "fit", "evaluate"]


def wendland(r):
    """Wendland's phi_{3,1}(r) = (1 - r)^4_+ (4 r + 1)."""
    r = np.asarray(r, dtype=np.float64)
    t = np.clip(1.0 - r, 0.0, None)
    return t ** 4 * (4.0 * r + 1.0)


def blob_2d(n: int = 200, noise: float = 0.0, seed: int = 0):
    """(points, normals): n points on the curve r(t) = 1 + 0.3 cos 3t (t uniform), with noise
    of standard deviation ``noise`` along the normal."""
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0, 2 * np.pi, n))
    r = 1.0 + 0.3 * np.cos(3 * t)
    dr = -0.9 * np.sin(3 * t)
    p = np.stack([r * np.cos(t), r * np.sin(t)], axis=1)
    tangent = np.stack([dr * np.cos(t) - r * np.sin(t), dr * np.sin(t) + r * np.cos(t)], axis=1)
    normal = np.stack([tangent[:, 1], -tangent[:, 0]], axis=1)
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    return p + noise * rng.standard_normal((n, 1)) * normal, normal


def torus_3d(n: int = 1500, R: float = 1.0, r: float = 0.35, noise: float = 0.0, seed: int = 0):
    """(points, normals): n points on a torus (major radius R, minor r), area-uniform, with
    noise along the normal."""
    rng = np.random.default_rng(seed)
    u = rng.uniform(0, 2 * np.pi, 4 * n)
    v = rng.uniform(0, 2 * np.pi, 4 * n)
    keep = rng.uniform(0, 1, 4 * n) < (R + r * np.cos(v)) / (R + r)     # uniform in area
    u, v = u[keep][:n], v[keep][:n]
    center = np.stack([R * np.cos(u), R * np.sin(u), np.zeros_like(u)], axis=1)
    normal = np.stack([np.cos(v) * np.cos(u), np.cos(v) * np.sin(u), np.sin(v)], axis=1)
    p = center + r * normal
    return p + noise * rng.standard_normal((len(u), 1)) * normal, normal


def _points_array(a, name: str, what: str, empty: bool = True) -> np.ndarray:
    """``a`` as an (n, d) float64 array of finite coordinates, d = 1, 2 or 3 (n >= 1 unless
    ``empty``); ValueError else."""
    try:
        arr = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: {name} must be an (n, d) array of numbers, got {type(a).__name__}") from None
    if arr.size == 0 and not empty:
        raise ValueError(f"{what}: needs at least 1 point with its normal, got none ({name} of shape {arr.shape})")
    if arr.ndim != 2 or arr.shape[1] not in (1, 2, 3):
        raise ValueError(f"{what}: {name} must be an (n, d) array with d = 1, 2 or 3 coordinates (Wendland's "
                         f"phi_3,1 is positive definite up to R^3), got shape {arr.shape}")
    bad = ~np.isfinite(arr).all(axis=1)
    if bad.any():
        raise ValueError(f"{what}: {name} has NaN or infinite coordinates (in {int(bad.sum())} of {len(arr)} "
                         f"rows, the first row {int(np.argmax(bad))}); drop or repair those rows")
    return arr


def rbf_system(points, normals, eps: float, support: float, smoothing: float = 1e-2):
    """(centres, values, A): the on- and off-surface centres, their values (0, +eps, -eps) and
    the sparse SPD matrix A_ij = phi(||c_i - c_j|| / support) + smoothing delta_ij (scipy CSR;
    its diagonal is exactly 1 + smoothing, phi(0) = 1).

    The centres are the n points, then p_i + eps n_i (value +eps: s > 0 on the normals'
    side, "outside"), then p_i - eps n_i (value -eps). ``points`` and ``normals`` are (n, d)
    arrays of the same shape, d = 1, 2 or 3, n >= 1, finite, the normals nonzero (unit length
    for s to approximate the signed distance near the surface); ``ValueError`` otherwise."""
    if not (eps > 0 and support > 0 and smoothing >= 0):
        raise ValueError("rbf_system: eps and support must be positive, smoothing >= 0")
    import scipy.sparse as sp
    from scipy.spatial import cKDTree

    points = _points_array(points, "points", "rbf", empty=False)
    normals = _points_array(normals, "normals", "rbf", empty=False)
    if normals.shape != points.shape:
        raise ValueError(f"rbf: normals must have the points' shape {points.shape} (one normal per "
                         f"point), got {normals.shape}")
    zero = ~(np.abs(normals) > 0).any(axis=1)
    if zero.any():
        raise ValueError(f"rbf: {int(zero.sum())} normals are zero (the first at row {int(np.argmax(zero))}); "
                         "the off-surface points p +- eps n need a direction: give unit normals")
    centres = np.concatenate([points, points + eps * normals, points - eps * normals])
    n = len(points)
    values = np.concatenate([np.zeros(n), np.full(n, eps), np.full(n, -eps)])
    tree = cKDTree(centres)
    pairs = tree.sparse_distance_matrix(tree, support, output_type="coo_matrix")
    rows, cols, dist = pairs.row, pairs.col, pairs.data
    m = len(centres)
    A = sp.coo_matrix((wendland(dist / support), (rows, cols)), shape=(m, m)).tocsr()
    # the diagonal set to phi(0) + smoothing = 1 + smoothing exactly (not phi(0) + (1 + smoothing) - phi(0))
    A = A - sp.diags(A.diagonal()) + (1.0 + smoothing) * sp.identity(m, format="csr")
    A.sort_indices()
    return centres, values, A.tocsr()


def evaluation_matrix(grid, centres, support: float):
    """E_gj = phi(||g - c_j|| / support) for grid points g (scipy CSR). ``ValueError`` for a
    grid that is not an (n, d) array of finite points of the centres' dimension d."""
    import scipy.sparse as sp
    from scipy.spatial import cKDTree

    if not support > 0:
        raise ValueError(f"evaluation_matrix: support must be positive, got {support!r}")
    grid = _points_array(grid, "grid", "evaluate")
    centres = _points_array(centres, "centres", "evaluate")
    if grid.shape[1] != centres.shape[1]:
        raise ValueError(f"evaluate: the grid's points have {grid.shape[1]} coordinates, the centres "
                         f"{centres.shape[1]}; give points of the fitted dimension")
    gt, ct = cKDTree(grid), cKDTree(centres)
    pairs = gt.sparse_distance_matrix(ct, support, output_type="coo_matrix")
    E = sp.coo_matrix((wendland(pairs.data / support), (pairs.row, pairs.col)),
                      shape=(len(grid), len(centres))).tocsr()
    return E


def fit(points, normals, eps: float, support: float, smoothing: float = 1e-2, tol: float = 1e-6,
        format: str = "ellpack", **cg_options):
    """Solve A lambda = f on the GPU by conjugate gradients; returns (centres, lambda, A, result)
    where result is gpgpu.cg's CGResult. The system is :func:`rbf_system`'s (whose
    ``ValueError`` names bad points or normals); s = :func:`evaluate` is positive on the side
    the normals point to and negative on the other."""
    from .cg import cg
    from .sparse import SparseStream

    centres, values, A = rbf_system(points, normals, eps, support, smoothing)
    with SparseStream.from_scipy(A, format=format) as S:
        res = cg(S, values, rtol=tol, **cg_options)
    return centres, res[0], A, res


def evaluate(grid, centres, lam, support: float, format: str = "ellpack", outside=np.nan):
    """s(g) = sum_j lambda_j phi(||g - c_j|| / support) at the grid points, on the GPU. Points
    farther than ``support`` from every centre get ``outside`` (NaN by default): s is 0 there
    only because no basis function reaches, and its zero set is not the surface."""
    from .sparse import SparseStream

    E = evaluation_matrix(grid, centres, support)
    lam = np.asarray(lam, dtype=np.float64)
    if lam.shape != (E.shape[1],):
        raise ValueError(f"evaluate: lam must hold one coefficient per centre, {E.shape[1]}, got shape {lam.shape}")
    with SparseStream.from_scipy(E, format=format) as S:
        s = S.matvec(np.asarray(lam, dtype=np.float64))
    far = np.diff(E.indptr) == 0
    if far.any():
        s = s.astype(np.float64)
        s[far] = outside
    return s
