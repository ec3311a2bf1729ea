"""LP relaxations of quadratic assignment problems from QAPLIB: the QAP problems of paper 002
(Smith, Gondzio, Hall), Tables 1-3 (nug20, nug30).

A QAP of size n places n facilities on n locations: x_ij = 1 when facility i is at location j,
minimising sum over i, k, j, l of F_ik D_jl x_ij x_kl (F the flows, D the distances). The LP is the
level-1 reformulation-linearization (Adams and Johnson 1994) that gives 002's sizes: variables
x_ij and y_ijkl = y_klij (one column per unordered pair, i != k, j != l, standing for x_ij x_kl),

    sum_j x_ij = 1 (each i),   sum_i x_ij = 1 (each j)                   2n rows
    sum_{l != j} y_ijkl = x_ij   for every (i, j) and every k != i          n²(n-1) rows
    sum_{k != i} y_ijkl = x_ij   for every (i, j) and every l != j          n²(n-1) rows
    x, y >= 0,   cost of y_ijkl: F_ik D_jl + F_ki D_lj

so rows = 2n + 2n²(n-1), columns = n² + n²(n-1)²/2 and non-zeros = 2n²(n-1)² + 2n³: for nug20
15240 x 72600 with 304800 non-zeros, for nug30 52260 x 379350 with 1567800 (002's Table 1). The
LP's optimum is a lower bound on the QAP's (about 522.89 for nug12, whose best assignment costs
578).

A QAPLIB file is ``n`` (optionally followed by the best known value), then two n x n integer
matrices: the first here is the distance matrix of the grid of locations, the second the flows
(see gpgpu/data/README.md).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from .netlib import DATA_DIR, netlib_dir
from .mps import Problem

__all__ = ["read_qaplib", "qap_lp", "qap_sizes", "qaplib_dir"]


def qaplib_dir() -> Path:
    """The folder of the QAPLIB files: ``$GPGPU_QAPLIB_DIR``, else ``qaplib`` beside the NETLIB
    folder where there is one, else the package's copy, ``gpgpu/data/qaplib`` (so a
    ``GPGPU_NETLIB_DIR`` elsewhere does not hide it)."""
    import os

    env = os.environ.get("GPGPU_QAPLIB_DIR")
    if env:
        p = Path(env).expanduser()
        if not p.is_dir():
            raise FileNotFoundError(f"GPGPU_QAPLIB_DIR={env} is not a directory")
        return p
    beside = netlib_dir().parent / "qaplib"
    for p in (beside, DATA_DIR / "qaplib"):
        if p.is_dir():
            return p
    raise FileNotFoundError(f"QAPLIB files not found: set GPGPU_QAPLIB_DIR or put them in {beside}")


class QAPLIBFormatError(ValueError):
    """A QAPLIB file that is not n followed by two n x n matrices."""


def read_qaplib(path) -> tuple:
    """(n, D, F, best): the size, the two matrices (first and second in the file) and the best
    known value when the first line gives one (else None)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"QAPLIB file not found: {path}")
    tokens = []   # (value, line number)
    for lineno, line in enumerate(path.read_text().splitlines(), start=1):
        for tok in line.split():
            tokens.append((tok, lineno))
    if not tokens:
        raise QAPLIBFormatError(f"{path}: empty file (a QAPLIB file starts with n)")

    def number(i, integer=False):
        tok, lineno = tokens[i]
        try:
            value = float(tok)
        except ValueError:
            raise QAPLIBFormatError(f"{path}, line {lineno}: {tok!r} is not a number") from None
        if integer and (value != int(value) or value < 1):
            raise QAPLIBFormatError(f"{path}, line {lineno}: the size n must be a positive integer, "
                                    f"got {tok!r}")
        return value

    n = int(number(0, integer=True))
    first_line = [t for t in tokens if t[1] == tokens[0][1]]
    best = number(1) if len(first_line) == 2 else None
    start = len(first_line)
    need = 2 * n * n
    have = len(tokens) - start
    if have != need:
        where = tokens[-1][1]
        raise QAPLIBFormatError(f"{path}: n = {n} needs two {n} x {n} matrices ({need} numbers) after "
                                f"the first line, found {have} (file ends at line {where})")
    values = np.array([number(start + i) for i in range(need)])
    D = values[:n * n].reshape(n, n)
    F = values[n * n:].reshape(n, n)
    return n, D, F, best


def qap_sizes(n: int) -> tuple:
    """(rows, columns, non-zeros) of the LP for size n (the formulas of the module notes)."""
    return 2 * n + 2 * n * n * (n - 1), n * n + n * n * (n - 1) ** 2 // 2, 2 * n * n * (n - 1) ** 2 + 2 * n ** 3


def qap_lp(source, name: str | None = None):
    """The LP relaxation of a QAP as a standard-form ``Problem`` (A sparse).

    ``source`` is a QAPLIB file or a pair ``(F, D)`` of n x n arrays (flows, distances).
    """
    import scipy.sparse as sp

    if isinstance(source, (str, Path)):
        n, D, F, _ = read_qaplib(source)
        name = name or Path(source).stem
    else:
        F, D = (np.asarray(a, dtype=np.float64) for a in source)
        if F.ndim != 2 or F.shape[0] != F.shape[1] or D.shape != F.shape:
            raise ValueError(f"qap_lp: F and D must be two n x n matrices, got {F.shape} and {D.shape}")
        n = F.shape[0]
        name = name or f"qap{n}"
    if n < 2:
        raise ValueError("qap_lp: n must be at least 2")
    N = n * n                                            # x_ij is column i n + j
    i, j, k, l = (a.ravel() for a in np.meshgrid(*(np.arange(n),) * 4, indexing="ij"))
    valid = (i != k) & (j != l)
    i, j, k, l = i[valid], j[valid], k[valid], l[valid]
    p, q = i * n + j, k * n + l                          # the two x's a y stands for
    lo, hi = np.minimum(p, q), np.maximum(p, q)
    pair_key = lo * N + hi
    keys, pair = np.unique(pair_key, return_inverse=True)      # one column per unordered pair
    ny = keys.size
    ycol = N + pair                                      # column of y_ijkl (= y_klij)
    cost = np.zeros(N + ny)
    np.add.at(cost, ycol, F[i, k] * D[j, l])             # F_ik D_jl + F_ki D_lj over both orders
    rows, cols, vals = [], [], []
    # assignment rows
    ii, jj = np.divmod(np.arange(N), n)
    rows += [ii, n + jj]
    cols += [np.arange(N), np.arange(N)]
    vals += [np.ones(N), np.ones(N)]
    r0 = 2 * n
    # sum_{l != j} y_ijkl = x_ij for (i, j, k != i): row r0 + (p (n-1) + index of k among k != i)
    kk = np.where(k > i, k - 1, k)
    row3 = r0 + p * (n - 1) + kk
    ll = np.where(l > j, l - 1, l)
    row4 = r0 + N * (n - 1) + p * (n - 1) + ll
    rows += [row3, row4]
    cols += [ycol, ycol]
    vals += [np.ones(p.size), np.ones(p.size)]
    x_rows3 = r0 + np.arange(N * (n - 1))              # -x_ij in its n-1 rows of each kind
    rows += [x_rows3, x_rows3 + N * (n - 1)]
    cols += [np.repeat(np.arange(N), n - 1)] * 2
    vals += [-np.ones(N * (n - 1))] * 2
    m = r0 + 2 * N * (n - 1)
    A = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(m, N + ny))
    A.sum_duplicates()
    b = np.concatenate([np.ones(2 * n), np.zeros(m - 2 * n)])
    return Problem.from_arrays(A, b, cost, name=name)
