"""Matrices and timings shared by the sparse experiments."""
from __future__ import annotations

import statistics
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from experiments.harness import finish


def poisson2d(k: int):
    """The 5-point Laplacian on a k x k grid (k² unknowns), SPD."""
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(k, k))
    return (sp.kron(sp.eye(k), T) + sp.kron(T, sp.eye(k))).tocsr()


def poisson3d(k: int):
    """The 7-point Laplacian on a k x k x k grid (k³ unknowns), SPD."""
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(k, k))
    I = sp.eye(k)
    return (sp.kron(sp.kron(I, I), T) + sp.kron(sp.kron(I, T), I) + sp.kron(sp.kron(T, I), I)).tocsr()


def netlib_matrices(software: bool) -> list:
    """(name, A) of the standard forms of gpgpu/data/netlib (all of netlib-more too on a GPU)."""
    from gpgpu.lp import read_mps
    from gpgpu.lp.netlib import netlib_dir

    try:
        base = netlib_dir()
    except FileNotFoundError:
        return []
    files = sorted(base.glob("*.mps.gz"))
    more = base.parent / "netlib-more"
    if not software and more.is_dir():
        files += sorted(more.glob("*.mps.gz"))
    out = []
    for f in files:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append((f.name.split(".")[0], read_mps(f).A))
    return out


def qap_matrices(software: bool) -> list:
    """(name, A) of the QAP LPs of gpgpu/data/qaplib (nug12 only on a software renderer)."""
    from gpgpu.lp.qap import qap_lp, qaplib_dir

    try:
        base = qaplib_dir()
    except FileNotFoundError:
        return []
    names = ["nug12"] if software else ["nug12", "nug15", "nug20", "nug30"]
    return [(n, qap_lp(base / f"{n}.dat").A) for n in names if (base / f"{n}.dat").exists()]


def median_time(fn, repeat: int) -> float:
    """Median of ``repeat`` runs of fn(), GPU idle before and finish() after each, after one
    untimed run (it compiles the programs and builds what the first call builds)."""
    fn()
    finish()
    times = []
    for _ in range(max(1, repeat)):
        finish()
        t0 = time.perf_counter()
        fn()
        finish()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def cpu_time(fn, repeat: int) -> float:
    """Median of at least 3 runs of fn() on the CPU, after one untimed run."""
    fn()
    times = []
    for _ in range(max(3, repeat)):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def out_path(ctx, name: str) -> Path:
    return Path(ctx.out) / name
