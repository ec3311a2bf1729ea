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

003's dense last row. Paper 003 (future work 5): "In our application there are a lot of
entries guaranteed to be one. This includes the diagonal, and the most of the last row." The
diagonal is phi(0) = 1; the last row is the side condition of the constant term of Carr et al.'s
interpolant s(x) = sum_j lambda_j phi(||x - c_j|| / h) + c, whose system is bordered by a row
and a column of ones:

    [ A   e ] [lambda]   [f]          e = (1, ..., 1):  s(c_i) + rho lambda_i = f_i,
    [ e^T 0 ] [  c   ] = [0]          and sum_j lambda_j = 0

(with smoothing rho, A = Phi + rho I, this is the minimiser of lambda^T Phi lambda + ||s - f||^2 /
rho over lambda and a free constant). That matrix is symmetric but INDEFINITE (one negative
eigenvalue: its Schur complement -e^T A^-1 e < 0), so conjugate gradients is not valid on it
(float64 CG meets d^T K d < 0 within a few iterations on the curve of ``experiments.cg``; this
project's cg stops there with CGBreakdownError). ``rbf_system(..., constant=True)`` therefore
returns the SPD bordered matrix

    K = [ A    e ]      beta = N / rho > e^T A^-1 e   (A >= rho I, Phi being positive definite),
        [ e^T beta ]

positive definite because its Schur complement beta - e^T A^-1 e > 0, its last row 003's row of
ones (all but the corner). :func:`fit` gets the constrained solution from two CG solves with K,
which is uploaded once: K (lambda1, c1) = (f, 0) and K (lambda2, c2) = (e, 0). Every solution
of the first block row A lambda + c e = f is u - t v with u = A^-1 f, v = A^-1 e; lambda1 =
u - c1 v and lambda2 = (1 - c2) v, so lambda = lambda1 - t lambda2 with t = e^T lambda1 /
e^T lambda2 satisfies sum lambda = 0, and c = c1 + t (1 - c2) (from A lambda + c e = f). The
right-hand side (e, 0) keeps the second solution at the scale of v (the right-hand side
(0, 1) would give lambda2 = -v / (beta - e^T A^-1 e), some 1e-5 of it, and float32 CG loses two
digits on it). On the GPU the last row and column go to the sparse storage's dense part (a
dense row's inner product, a dense column's plane; ``gpgpu.sparse``): the row of N + 1
non-zeros is the row 003's compiler could not take. :func:`evaluate` adds c to the sum where
the field is defined. ``fit`` solves with D K D, D = diag(1, .., 1, beta^-1/2) (a symmetric
scaling, so still SPD, the last row still dense), and answers D times the solutions: with beta =
N / rho some 1e4 to 1e6 times the other diagonal entries, float32 CG on K itself stalls above
rtol = 1e-6 in the true residual (measured with scipy's float32 cg on the curve and the torus
of ``experiments.cg.rbf_surface``: 1.7e-6 to 2.6e-6; 8.5e-7 to 1.1e-6 after the scaling).

The point sets are generated here, no downloads: ``blob_2d`` (a smooth star-shaped curve) and
``torus_3d`` (a torus sampled with noise), each with exact normals.
"""
from __future__ import annotations

import numbers

import numpy as np
from .cg import cg, CGResult
from .sparse import SparseStream

__all__ = ["wendland", "blob_2d", "torus_3d", "rbf_system", "evaluation_matrix", "fit", "evaluate",
           "support_band", "BAND_REACH"]

#: :func:`support_band`'s default: the field is drawn where a centre lies within this fraction
#: of the support radius (measured on the torus of ``experiments.cg.rbf_surface``, 1500 points:
#: at 1.0 or 0.75 the zero set has pieces more than 2 eps from the surface, where only the tails
#: of the basis functions reach and s decays to 0 or to c; at 0.5 none, and the surface's own
#: zero set is kept whole)
BAND_REACH = 0.5


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
    if np.iscomplexobj(a):              # float64 would drop the imaginary parts with a ComplexWarning only
        raise ValueError(f"{what}: {name} must be real coordinates, got complex numbers")
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


def _check_numbers(what: str, **values) -> None:
    """A TypeError naming an argument that is not a real number (a str "0.1" failed at ``>``)."""
    for name, v in values.items():
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"{what}: {name} must be a number, got {v!r} of type {type(v).__name__}")


def rbf_system(points, normals, eps: float, support: float, smoothing: float = 1e-2,
               constant: bool = False):
    """(centres, values, A): the on- and off-surface centres, their values (0, +eps, -eps) and
    the sparse SPD matrix A_ij = phi(||c_i - c_j|| / support) + smoothing delta_ij (scipy CSR;
    its diagonal is exactly 1 + smoothing, phi(0) = 1).

    ``constant=True``: 003's system with the constant term (module notes): A bordered by a
    last row and column of ones and the corner beta = N / smoothing (N centres), an
    (N + 1) x (N + 1) SPD matrix, and values with a 0 appended. Needs smoothing > 0 (beta's
    bound); ``ValueError`` otherwise.

    The centres are the n points, then p_i + eps n_i (value +eps: s > 0 on the normals'
    side, "outside"), then p_i - eps n_i (value -eps). ``points`` and ``normals`` are (n, d)
    arrays of the same shape, d = 1, 2 or 3, n >= 1, finite, the normals nonzero (unit length
    for s to approximate the signed distance near the surface); ``ValueError`` otherwise."""
    _check_numbers("rbf", eps=eps, support=support, smoothing=smoothing)
    if not (eps > 0 and support > 0 and smoothing >= 0):
        raise ValueError("rbf_system: eps and support must be positive, smoothing >= 0")
    if constant and not smoothing > 0:
        raise ValueError("rbf_system: constant=True borders A with 003's row of ones and the corner "
                         "N / smoothing, which keeps the matrix positive definite only for smoothing > 0; "
                         "pass smoothing > 0 (e.g. 0.01) or constant=False")
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
    if constant:
        e = np.ones((m, 1))
        A = sp.bmat([[A, e], [e.T, np.array([[m / smoothing]])]], format="csr")
        A.sort_indices()
        values = np.append(values, 0.0)
    return centres, values, A.tocsr()


def evaluation_matrix(grid, centres, support: float):
    """E_gj = phi(||g - c_j|| / support) for grid points g (scipy CSR). ``ValueError`` for a
    grid that is not an (n, d) array of finite points of the centres' dimension d."""
    import scipy.sparse as sp
    from scipy.spatial import cKDTree

    _check_numbers("evaluation_matrix", support=support)
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


def fit(points, normals, eps: float, support: float, *, smoothing: float = 1e-2, tol: float = 1e-6,
        format: str = "ellpack", constant: bool = True, sort: bool = False, max_programs: int | None = None,
        dense_split: bool = True, **cg_options):
    """Solve the RBF system on the GPU by conjugate gradients; returns (centres, coef, A, result).

    ``constant=True`` (the default, paper 003's system with its dense last row): A is the
    bordered SPD matrix of :func:`rbf_system` (``constant=True``), solved twice (module notes),
    and coef = (lambda_1 .. lambda_N, c), N + 1 numbers, sum lambda = 0; ``result`` is a
    :class:`gpgpu.cg.CGResult` whose ``iterations`` are both solves', ``solves`` the two
    results and ``residual_norm`` ||f - A lambda - c e|| (float64, on the host). ``constant=False``: the plain system (A + rho I) lambda = f, one solve, coef =
    lambda. ``format``, ``sort``, ``max_programs`` and ``dense_split`` are
    ``SparseStream.from_scipy``'s (``format="corrigan", sort=True``: paper 003's storage; the
    last row and column then go to the dense part, beyond 003, unless ``dense_split=False``).
    The system's ``ValueError`` names bad points or normals (a ``TypeError`` an ``eps``,
    ``support`` or ``smoothing`` that is not a number); s = :func:`evaluate` is positive
    on the side the normals point to and negative on the other. ``tol`` is each cg solve's
    ``rtol``; ``cg_options`` are :func:`gpgpu.cg`'s other keywords (``rtol=`` there is a
    ``TypeError`` naming ``tol``)."""
    import scipy.sparse as sp


    if "rtol" in cg_options:          # fit's tol is cg's rtol (otherwise a TypeError from the call to cg)
        raise TypeError("fit: pass the tolerance as tol= (fit gives it to each cg solve as rtol), not rtol=")
    centres, values, A = rbf_system(points, normals, eps, support, smoothing, constant=constant)
    K = A
    if constant:                    # the last unknown scaled: D K D with D = diag(1, .., 1, beta^-1/2)
        N = len(centres)
        d = np.ones(N + 1)
        d[N] = 1.0 / np.sqrt(A[N, N])
        K = (sp.diags(d) @ A @ sp.diags(d)).tocsr()
        K.sort_indices()
    with SparseStream.from_scipy(K, format=format, sort=sort, max_programs=max_programs,
                                 dense_split=dense_split) as S:
        if not constant:
            res = cg(S, values, rtol=tol, **cg_options)
            return centres, res[0], A, res
        first = cg(S, values, rtol=tol, **cg_options)             # D (f, 0) = (f, 0)
        second = cg(S, np.append(np.ones(N), 0.0), rtol=tol, **cg_options)
    x1, x2 = d * np.asarray(first[0], np.float64), d * np.asarray(second[0], np.float64)
    t = x1[:N].sum() / x2[:N].sum()
    coef = np.append(x1[:N] - t * x2[:N], x1[N] + t * (1.0 - x2[N]))
    info = first[1] or second[1]
    B = A[:N, :N]                   # the residual of the first block row, in float64 on the host
    res = CGResult(coef, info, iterations=first.iterations + second.iterations, solves=(first, second),
                   residual_norm=float(np.linalg.norm(values[:N] - B @ coef[:N] - coef[N])),
                   readbacks=first.readbacks + second.readbacks, restarts=first.restarts + second.restarts,
                   stagnated=first.stagnated or second.stagnated)
    return centres, coef, A, res


def evaluate(grid, centres, lam, support: float, format: str = "ellpack", outside=np.nan):
    """s(g) = sum_j lambda_j phi(||g - c_j|| / support) (+ c) at the grid points, on the GPU.
    ``lam``: one coefficient per centre, or N + 1 with the constant term c last (what
    :func:`fit` answers with ``constant=True``). Points farther than ``support`` from every
    centre get ``outside`` (NaN by default): no basis function reaches them, and s there (0,
    or c) says nothing of the surface. For a picture of the zero set, mask more: see
    :func:`support_band`."""
    E = evaluation_matrix(grid, centres, support)
    lam = np.asarray(lam, dtype=np.float64)
    N = E.shape[1]
    if lam.shape not in ((N,), (N + 1,)):
        raise ValueError(f"evaluate: lam must hold one coefficient per centre, {N}, or {N + 1} with the "
                         f"constant term last, got shape {lam.shape}")
    if not np.isfinite(lam).all():      # (matvec's own message named its argument "x")
        raise ValueError(f"evaluate: lam has {int((~np.isfinite(lam)).sum())} NaN or infinite coefficients "
                         f"(the first at {int(np.flatnonzero(~np.isfinite(lam))[0])}); pass the finite "
                         "coefficients of fit")
    with SparseStream.from_scipy(E, format=format) as S:
        s = S.matvec(lam[:N])
    s = s.astype(np.float64)
    if lam.shape == (N + 1,):
        s += lam[N]
    far = np.diff(E.indptr) == 0
    s[far] = outside
    return s


def support_band(grid, centres, support: float, reach: float = BAND_REACH) -> np.ndarray:
    """Where the field is defined well enough to draw its zero set: True at the grid points
    with a centre closer than ``reach`` x ``support`` (a boolean array, one per point). Beyond,
    only the tails of the basis functions reach (phi(1/2) = 0.19, phi(3/4) = 0.016), s decays
    to 0 (or to the constant c) and its sign changes there draw pieces of zero set that are
    not the surface. Use it as ``np.where(support_band(g, centres, h), s, np.nan)``.
    ``ValueError`` for reach outside (0, 1] or a grid of the wrong dimension."""
    from scipy.spatial import cKDTree

    _check_numbers("support_band", support=support, reach=reach)
    if not (0 < reach <= 1):
        raise ValueError(f"support_band: reach is a fraction of the support radius in (0, 1], got {reach!r}")
    if not support > 0:
        raise ValueError(f"support_band: support must be positive, got {support!r}")
    grid = _points_array(grid, "grid", "support_band")
    centres = _points_array(centres, "centres", "support_band", empty=False)
    if grid.shape[1] != centres.shape[1]:
        raise ValueError(f"support_band: the grid's points have {grid.shape[1]} coordinates, the centres "
                         f"{centres.shape[1]}")
    d, _ = cKDTree(centres).query(grid, distance_upper_bound=reach * support)
    return d < reach * support
