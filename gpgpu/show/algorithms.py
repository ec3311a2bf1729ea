"""The algorithms ``python -m gpgpu.show`` can record: each runs the project's unchanged code
on a small, well-conditioned problem of size n (seeded) inside :func:`gpgpu.record.record`."""
from __future__ import annotations

import numpy as np

from ..record import DEFAULT_MAX_TEXELS, record

__all__ = ["ALGORITHMS", "run", "MAX_N"]

MAX_N = 32   # 32 x 32 = 1024 texels a stream, well inside the snapshot limit; frames stay legible


def _spd(n, rng):
    a = rng.standard_normal((n, n))
    return a @ a.T / n + np.eye(n)


def _general(n, rng):
    """Gaussian entries: pivoting then swaps rows at most steps (a diagonal shift would hide them)."""
    return rng.standard_normal((n, n))


_SCALED = " (scaled by an even power of two so that max|A| is near 1, as gpgpu.cholesky uploads it)"


def _exponent(a, even: bool = False) -> int:
    """The e of the upload 2^e A (:func:`gpgpu.dense_common.power_of_two_exponent`)."""
    from ..dense_common import power_of_two_exponent

    return power_of_two_exponent(float(np.abs(a).max()), even)


def _cholesky(**kw):
    def go(n, rng):
        import gpgpu
        a = _spd(n, rng)
        gpgpu.cholesky(a, **kw)
        return {"m": n, "input": "the lower triangle of A" + _SCALED, "exponent": _exponent(a, True), "even": True,
                "layout": "lower"}
    return go


def _packed(parity):
    def go(n, rng):
        import gpgpu
        m = n if n % 2 == parity else n + 1
        a = _spd(m, rng)
        gpgpu.cholesky(a, storage="packed")
        return {"m": m, "input": "the lower triangle of A in the rectangular packed format" + _SCALED,
                "exponent": _exponent(a, True), "even": True, "layout": "packed"}
    return go


_SCALED_LU = " (scaled by a power of two so that max|A| is in [0.5, 1), as gpgpu.lu uploads it)"


def _lu(pivoting):
    def go(n, rng):
        import gpgpu
        a = _general(n, rng)
        gpgpu.lu(a, pivoting=pivoting)
        return {"m": n, "pivoting": pivoting, "input": "A" + _SCALED_LU, "exponent": _exponent(a), "layout": "full"}
    return go


def _lu_blocked(n, rng):
    import gpgpu
    gpgpu.lu(_general(n, rng), variant="blocked", block=4)


def _gauss_jordan(n, rng):
    import gpgpu
    a = _general(n, rng)
    gpgpu.gauss_jordan(a, rng.standard_normal((n, 1)))
    return {"m": n, "pivoting": "partial", "input": "A" + _SCALED_LU, "exponent": _exponent(a), "layout": "full"}


def _adat(storage):
    def go(n, rng):
        import gpgpu
        gpgpu.adat(rng.standard_normal((n, n + 2)), rng.uniform(0.5, 2.0, n + 2), storage=storage)
    return go


def _reduce(strategy):
    def go(n, rng):
        import gpgpu
        gpgpu.reduce(rng.integers(-9, 10, (n, n)).astype(float), "sum", strategy=strategy)
    return go


def _sparse_product(n, rng):
    import scipy.sparse as sp

    from ..sparse import SparseStream
    A = sp.random(n, n, density=0.3, random_state=int(rng.integers(1 << 30)), format="csr") + sp.eye(n)
    with SparseStream.from_scipy(A, format="ellpack") as S:
        S.matvec(rng.standard_normal(n))


def _cg_iteration(n, rng):
    import gpgpu
    gpgpu.cg(_spd(n, rng), rng.standard_normal(n), maxiter=1, rtol=1e-6)


#: name -> (what it shows, the paper's reference, runner(n, rng))
ALGORITHMS = {
    "cholesky": ("outer-product Cholesky, triangle update (the default)", "001 Algorithm 5, Fig. 5",
                 _cholesky()),
    "cholesky-square": ("outer-product Cholesky, square update (BrookGPU)", "000 Table 1(c)", _cholesky(update="square")),
    "cholesky-columns": ("outer-product Cholesky, update column by column", "000 section 3.2",
                         _cholesky(update="columns")),
    "cholesky-computed": ("outer-product Cholesky, the pivot's index computed in the kernel", "000 section 6.1.3",
                          _cholesky(index="computed")),
    "cholesky-triad": ("outer-product Cholesky with index triads", "000 section 3.2", _cholesky(index="triad")),
    "cholesky-inner": ("inner-product (left-looking) Cholesky", "000 Algorithm 1, Fig. 4(a)", _cholesky(form="inner")),
    "cholesky-packed-even": ("Cholesky in the rectangular packed format, m even", "001 section 4.3, Fig. 6",
                             _packed(0)),
    "cholesky-packed-odd": ("Cholesky in the rectangular packed format, m odd", "001 section 4.3, Fig. 7",
                            _packed(1)),
    "cholesky-blocked": ("blocked Cholesky: RGBA 2 x 2 blocks, panels of 4 columns, one rank-4 pass "
                         "per panel", "beyond the papers", _cholesky(variant="blocked", block=4)),
    "lu-partial": ("LU with partial pivoting (row swaps drawn as lines)", "004 (LU-GPU)", _lu("partial")),
    "lu-full": ("LU with full pivoting (row and column swaps)", "004 (LU-GPU)", _lu("full")),
    "lu-blocked": ("blocked LU with partial pivoting: RGBA 2 x 2 blocks, panels of 4 columns, one rank-4 "
                   "pass per panel", "beyond the papers", _lu_blocked),
    "gauss-jordan": ("Gauss-Jordan elimination with partial pivoting", "004", _gauss_jordan),
    "adat": ("A D^2 A^T by column scaling and outer-product addition", "001 Algorithm 3, Fig. 2", _adat("full")),
    "adat-packed": ("A D^2 A^T into the packed format", "001 Fig. 4", _adat("packed")),
    "reduce-pingpong": ("sum reduction, halving by ping-pong", "000 level 1 kernels", _reduce("pingpong")),
    "reduce-pyramid": ("sum reduction, 003's pyramid", "003 Figs. 2-3", _reduce("pyramid")),
    "sparse-product": ("sparse matrix-vector product, ELLPACK", "002 FSAX (9)", _sparse_product),
    "cg-iteration": ("one conjugate-gradient iteration", "003, after Shewchuk B2", _cg_iteration),
}


def run(algorithm: str, n: int = 8, seed: int = 0, max_texels: int = DEFAULT_MAX_TEXELS):
    """Record ``algorithm`` (a key of :data:`ALGORITHMS`) on a problem of size n whose random
    data ``seed`` (an integer >= 0) seeds; returns the :class:`gpgpu.record.Recorder` (its
    ``frames`` and ``trace``; its ``problem`` says what was run: the algorithm, n, seed, and where
    the page's live mode needs them the order m of the matrix factored and what the first
    uploaded texture holds)."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {algorithm!r}; valid: {', '.join(ALGORITHMS)}")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 2 <= n <= MAX_N:
        raise ValueError(f"n must be an integer from 2 to {MAX_N} (frames hold a snapshot of every pass), got {n!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0 (numpy's random generators take no negative seed), "
                         f"got {seed!r}")
    rng = np.random.default_rng(int(seed))
    with record(max_texels) as rec:
        problem = ALGORITHMS[algorithm][2](int(n), rng)
    rec.problem = dict(problem or {}, algorithm=algorithm, n=int(n), seed=int(seed))
    return rec
