"""``linprog``: a front end to :func:`gpgpu.lp.solve` called as ``scipy.optimize.linprog``.

    min c^T x   s.t.   A_ub x <= b_ub,   A_eq x = b_eq,   lb <= x <= ub

The arrays become a :class:`~gpgpu.lp.Problem` by :meth:`Problem.from_inequalities`
(:func:`~gpgpu.lp.mps.standardize`: slacks, shifted, reflected and split variables, upper-bound
rows), :func:`~gpgpu.lp.solve` solves it, and the answer comes back as scipy's
``OptimizeResult`` with scipy's fields and status codes.
"""
from __future__ import annotations

import numpy as np

from .api import METHODS, SCIPY_NAMES, solve
from .mps import Problem
from .options import METHOD_OPTIONS, SOLVE_OPTIONS, names_taken

__all__ = ["linprog", "LINPROG_OPTIONS", "LINPROG_EPS"]

#: solve's own keyword options (``options`` takes these and the method's and back end's)
LINPROG_OPTIONS = SOLVE_OPTIONS
#: linprog's tolerance of (6.1)-(6.3) (solve's is 1e-6): answers to about 1e-8 relative, which is
#: what scipy's own linprog tests ask of a solver (tests/test_scipy_linprog.py)
LINPROG_EPS = 1e-9


def _check_options(options, method: str) -> dict:
    """``options`` as solve's keyword arguments; an unknown key is a ValueError naming the keys
    that this method and back end take."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise TypeError(f"linprog: options must be a dict of gpgpu.lp.solve's keyword options, got "
                        f"{type(options).__name__}")
    for key in options:
        if not isinstance(key, str):
            raise TypeError(f"linprog: the keys of options are option names (str), got {key!r}")
    if "method" in options:
        raise ValueError("linprog: give the method as linprog's method= argument, not in options")
    backend = options.get("backend", "gpu")
    taken = names_taken(method, backend)
    known = set(LINPROG_OPTIONS) | set(METHOD_OPTIONS[method]) if taken is None else set(taken)
    unknown = sorted(set(options) - known)
    if unknown:
        hints = [f"{k!r} is {SCIPY_NAMES[k]!r} here" for k in unknown if k in SCIPY_NAMES]
        where = f"method={method!r} with backend={backend!r}" if isinstance(backend, str) else f"method={method!r}"
        raise ValueError(f"linprog: unknown option{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}"
                         + (f" ({'; '.join(hints)})" if hints else "")
                         + f"; {where} takes {', '.join(sorted(known))} (gpgpu.lp.solve's keyword options)")
    return dict(options)


def _bounds(bounds, n: int) -> np.ndarray:
    """scipy's bounds as an (n, 2) float array, None -> -inf / +inf: one (lb, ub) pair for all
    variables, or one pair per variable; ``bounds=None`` is (0, None), as scipy."""
    if bounds is None:
        bounds = (0, None)
    try:
        arr = np.array(bounds, dtype=float)      # None -> nan
    except (TypeError, ValueError):
        raise ValueError(f"linprog: bounds must be a (min, max) pair or a sequence of {n} such pairs "
                         f"(None: no bound), got {bounds!r}") from None
    arr = np.atleast_2d(arr)
    if arr.shape != (n, 2) and arr.shape in ((1, 2), (2, 1)):       # scipy's order of the two readings
        arr = np.tile(arr.reshape(1, 2), (n, 1))
    if arr.shape != (n, 2):
        raise ValueError(f"linprog: bounds must be a (min, max) pair or a sequence of {n} such pairs (one per "
                         f"entry of c), got an array of shape {arr.shape}")
    arr = arr.copy()
    arr[np.isnan(arr[:, 0]), 0] = -np.inf
    arr[np.isnan(arr[:, 1]), 1] = np.inf
    return arr


def _floats(v, name: str, what: str) -> np.ndarray:
    """``v`` as a float64 array; a TypeError naming ``name`` for anything that is not numbers
    of one shape (strings, ragged lists, None inside). Python integers of any size are floats."""
    try:
        out = np.array(v, dtype=np.float64)
    except (TypeError, ValueError) as e:
        ragged = "inhomogeneous" in str(e) or "sequence" in str(e)
        raise TypeError(f"linprog: {name} must be {what} of numbers"
                        + (" with rows of one length" if ragged else "") + f", got {v!r:.80}") from None
    if out.dtype != np.float64:
        raise TypeError(f"linprog: {name} must be {what} of numbers, got {v!r:.80}")
    return out


def _constraints(A, b, kind: str, n: int):
    """(A as a matrix with n columns or None, b as a float64 vector) with their sizes checked.
    A sparse A's duplicate entries are summed (scipy's meaning of them); a scalar b goes with an
    A of one row."""
    import scipy.sparse as sp

    if A is None and b is None:
        return None, None
    if A is None or b is None:
        given, missing = (f"A_{kind}", f"b_{kind}") if b is None else (f"b_{kind}", f"A_{kind}")
        raise ValueError(f"linprog: {given} is given without {missing}; pass both or neither")
    if sp.issparse(A):
        A = sp.csr_matrix(A, dtype=np.float64, copy=True)
        A.sum_duplicates()
    else:
        A = _floats(A, f"A_{kind}", "a 2-D array")
    if A.ndim == 1 and A.size == n:
        A = A.reshape(1, n)
    if A.ndim != 2 or A.shape[1] != n:
        raise ValueError(f"linprog: A_{kind} must be a 2-D matrix with {n} columns (the entries of c), got shape "
                         f"{A.shape}")
    b = _floats(b, f"b_{kind}", "a vector")
    if b.ndim > 1 and sum(d != 1 for d in b.shape) <= 1 or b.ndim == 0:
        b = b.reshape(-1)
    if b.ndim != 1 or b.size != A.shape[0]:
        raise ValueError(f"linprog: b_{kind} must be a vector with one entry per row of A_{kind} ({A.shape[0]}), "
                         f"got shape {b.shape}")
    return A, b


def linprog(c, A_ub=None, b_ub=None, A_eq=None, b_eq=None, bounds=(0, None), method="mehrotra",
            options=None):
    """Minimise a linear objective under linear constraints, called as ``scipy.optimize.linprog``.

    Minimises ``c @ x`` s.t. ``A_ub @ x <= b_ub``, ``A_eq @ x == b_eq``, ``lb <= x <= ub``: the
    arrays become a :class:`~gpgpu.lp.Problem` (:meth:`Problem.from_inequalities`), which
    :func:`gpgpu.lp.solve` solves (Algorithm 3 of paper 000, Mehrotra's method, on the GPU by
    default, or paper 002's matrix-free method), and the answer comes back as scipy's
    ``OptimizeResult`` with scipy's fields and status codes. As in scipy, a bound of None is none,
    ``bounds=None`` is (0, None), a sparse matrix's duplicate entries are summed and a scalar
    ``b_ub`` goes with a one-row ``A_ub``; a bound beyond +-1e30 counts as infinite (MPS files' and
    HiGHS's convention; scipy's HiGHS reads 1e20 so), and the result's message says so where one
    does. The tolerance is 1e-9 (:data:`LINPROG_EPS`), for answers to about 1e-8 relative.

    Parameters
    ----------
    c : (n,) array_like
        The costs.
    A_ub : (m, n) array_like or scipy.sparse matrix, optional
        The inequality constraints' matrix.
    b_ub : (m,) array_like, optional
        Their right-hand sides (+inf: no bound).
    A_eq : (p, n) array_like or scipy.sparse matrix, optional
        The equality constraints' matrix.
    b_eq : (p,) array_like, optional
        Their right-hand sides.
    bounds : (min, max) pair, or a sequence of n pairs
        The variables' bounds: one pair for all, or one for each; None is no bound on that side.
    method : {"mehrotra", "matrix-free"}
        :func:`gpgpu.lp.solve`'s method (scipy's "highs" and its kin are not this solver's).
    options : dict, optional
        :func:`gpgpu.lp.solve`'s keyword options (``backend``, ``eps``, ``max_iter``, ...).

    Returns
    -------
    scipy.optimize.OptimizeResult
        ``x``, ``fun``, ``slack`` (``b_ub - A_ub @ x``), ``con`` (``b_eq - A_eq @ x``),
        ``success``, ``status`` (scipy's codes: 0 optimal, 1 iteration limit, 2 infeasible, 3
        unbounded, 4 numerical difficulties), ``nit``, ``message``, ``lp``, the
        :class:`~gpgpu.lp.LPResult` of :func:`~gpgpu.lp.solve`, and scipy's HiGHS fields
        ``ineqlin``, ``eqlin``, ``lower`` and ``upper``, each with ``residual`` (``slack``,
        ``con``, ``x - lb``, ``ub - x``) and ``marginals``, the objective's derivatives with
        respect to ``b_ub``, ``b_eq``, ``lb`` and ``ub`` (<= 0, any sign, >= 0, <= 0) at the
        interior point method's duals (``LPResult.marginals``, :meth:`Problem.marginals`).
        Where the duals are not unique (a degenerate LP) these are a point of their optimal
        set, which need not be the vertex HiGHS's simplex answers. An infeasible or unbounded problem has ``x``, ``fun``,
        ``slack``, ``con`` and the residuals None, as scipy's HiGHS answers; the marginals are
        None unless the status is 0.

    Raises
    ------
    TypeError
        c, A or b that are not numbers (a string, a ragged list), as scipy.
    ValueError
        Shapes that disagree, NaN in the data, an unknown method or option (the message lists the
        options taken); what :func:`gpgpu.lp.solve` raises.

    See Also
    --------
    solve : The solver, with the problem as a Problem or an MPS file.

    Examples
    --------
    >>> from gpgpu.lp import linprog
    >>> res = linprog([-1, 4], A_ub=[[-3, 1], [1, 2]], b_ub=[6, 4], bounds=[(None, None), (-3, None)])
    >>> res.status, round(res.fun, 3)
    (0, -22.0)
    >>> res.x.round(3).tolist()
    [10.0, -3.0]
    """
    from scipy.optimize import OptimizeResult


    if method not in METHODS:
        raise ValueError(f"linprog: unknown method {method!r}; gpgpu's are {', '.join(map(repr, METHODS))} "
                         "(scipy's 'highs' and its kin are scipy.optimize.linprog's)")
    opts = _check_options(options, method)
    opts.setdefault("eps", LINPROG_EPS)
    c_arr = _floats(c, "c", "a vector")
    if c_arr.ndim > 1 and sum(d != 1 for d in c_arr.shape) <= 1:
        c_arr = c_arr.reshape(-1)
    if c_arr.ndim != 1 or c_arr.size == 0:
        raise ValueError(f"linprog: c must be a non-empty vector, got shape {c_arr.shape}")
    n = c_arr.size
    A_ub, b_ub = _constraints(A_ub, b_ub, "ub", n)
    A_eq, b_eq = _constraints(A_eq, b_eq, "eq", n)
    bd = _bounds(bounds, n)
    problem = Problem.from_inequalities(c_arr, A_ub, b_ub, A_eq=A_eq, b_eq=b_eq, bounds=[tuple(r) for r in bd],
                                        name="linprog")
    lp = solve(problem, method=method, **opts)
    x = lp.x if lp.status_code not in (2, 3) else None
    fun = slack = con = None
    if x is not None:
        x = np.asarray(x, dtype=np.float64)
        fun = float(problem.source["c"] @ x)
        slack = (np.asarray(b_ub, dtype=np.float64) - A_ub @ x) if A_ub is not None else np.zeros(0)
        con = (np.asarray(b_eq, dtype=np.float64) - A_eq @ x) if A_eq is not None else np.zeros(0)
    code = int(lp.status_code)
    marginals = lp.marginals
    m_ub = 0 if A_ub is None else A_ub.shape[0]

    def part(residual, key, rows=slice(None)):
        return OptimizeResult(residual=residual, marginals=None if marginals is None else marginals[key][rows])

    lb, ub = bd[:, 0], bd[:, 1]
    return OptimizeResult(x=x, fun=fun, slack=slack, con=con, status=code, success=code == 0,
                          nit=int(lp.iterations), message=lp.message, lp=lp,
                          ineqlin=part(slack, "rows", slice(0, m_ub)), eqlin=part(con, "rows", slice(m_ub, None)),
                          lower=part(None if x is None else x - lb, "lower"),
                          upper=part(None if x is None else ub - x, "upper"))
