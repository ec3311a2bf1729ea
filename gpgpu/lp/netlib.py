"""Where the NETLIB problems are, and Table 3 of paper 000 for comparison.

The ten NETLIB problems of Table 3 (``*.mps.gz``) ship with the package, in ``gpgpu/data/netlib``
(32 more in ``gpgpu/data/netlib-more`` and QAPLIB's nug instances in ``gpgpu/data/qaplib``; their
provenance and terms are in ``gpgpu/data/README.md``). ``GPGPU_NETLIB_DIR`` points elsewhere.
"""
from __future__ import annotations

import os
from pathlib import Path

__all__ = ["netlib_dir", "netlib_path", "PAPER_TABLE3", "PROBLEMS", "DATA_DIR"]

#: Table 3 of paper 000, transcribed: problem -> size as printed (rows x columns, the
#: objective row counted), termination eps, GPU iterations, GPU time (s) with the inner and
#: outer product Cholesky, MATLAB (MPC, single precision) iterations and time (s).
PAPER_TABLE3 = {
    "adlittle": {"size": "57x97", "eps": 3e-5, "iterations": 12, "time_inner": 0.60,
                 "time_outer": 0.62, "matlab_iterations": 9, "matlab_time": 0.10},
    "afiro": {"size": "28x32", "eps": 4e-5, "iterations": 7, "time_inner": 0.20,
              "time_outer": 0.20, "matlab_iterations": 7, "matlab_time": 0.03},
    "agg2": {"size": "517x302", "eps": 5e-5, "iterations": 18, "time_inner": 22.77,
             "time_outer": 17.14, "matlab_iterations": 17, "matlab_time": 5.02},
    "agg3": {"size": "517x302", "eps": 6e-4, "iterations": 20, "time_inner": 25.30,
             "time_outer": 19.02, "matlab_iterations": 17, "matlab_time": 5.05},
    "bandm": {"size": "306x472", "eps": 2e-3, "iterations": 12, "time_inner": 5.22,
              "time_outer": 4.45, "matlab_iterations": 12, "matlab_time": 1.12},
    "beaconfd": {"size": "174x262", "eps": 3e-4, "iterations": 7, "time_inner": 1.23,
                 "time_outer": 1.18, "matlab_iterations": 6, "matlab_time": 0.21},
    "blend": {"size": "75x83", "eps": 2e-3, "iterations": 11, "time_inner": 0.70,
              "time_outer": 0.88, "matlab_iterations": 8, "matlab_time": 0.08},
    "e226": {"size": "224x282", "eps": 9e-4, "iterations": 18, "time_inner": 4.94,
             "time_outer": 4.39, "matlab_iterations": 16, "matlab_time": 1.19},
    "sc50b": {"size": "51x48", "eps": 3e-5, "iterations": 6, "time_inner": 0.28,
              "time_outer": 0.29, "matlab_iterations": 6, "matlab_time": 0.04},
    "sctap1": {"size": "301x480", "eps": 5e-4, "iterations": 15, "time_inner": 7.00,
               "time_outer": 6.02, "matlab_iterations": 13, "matlab_time": 1.88},
}

#: The problems of Table 3, in its order.
PROBLEMS = tuple(PAPER_TABLE3)

_ENV = "GPGPU_NETLIB_DIR"


#: The data shipped with the package (NETLIB, NETLIB-more, QAPLIB): ``gpgpu/data``.
DATA_DIR = Path(__file__).resolve().parents[1] / "data"


def netlib_dir() -> Path:
    """The folder holding the NETLIB ``.mps.gz`` files of Table 3.

    ``$GPGPU_NETLIB_DIR`` when set, else the package's own copy, ``gpgpu/data/netlib`` (the
    folder ``netlib-more`` beside it holds 32 more problems).

    Raises
    ------
    FileNotFoundError
        When ``$GPGPU_NETLIB_DIR`` is not a folder, or the package's copy is missing.
    """
    env = os.environ.get(_ENV)
    if env:
        p = Path(env).expanduser()
        if p.is_dir():
            return p
        raise FileNotFoundError(f"{_ENV}={env} is not a directory")
    p = DATA_DIR / "netlib"
    if p.is_dir():
        return p
    raise FileNotFoundError(f"NETLIB problems not found in {p} (an incomplete installation?): set {_ENV} "
                            "to a folder of .mps.gz files")


def netlib_path(name: str) -> Path:
    """Path of NETLIB problem ``name`` (``afiro`` -> ``.../afiro.mps.gz``, or ``.mps``), looked
    up in :func:`netlib_dir`, then in the ``netlib-more`` folder beside it, then in the package's
    own ``gpgpu/data/netlib-more`` (so its 32 problems are found with ``GPGPU_NETLIB_DIR`` set too).

    Examples
    --------
    >>> from gpgpu.lp.netlib import netlib_path
    >>> netlib_path("afiro").name, netlib_path("pilot4").parent.name
    ('afiro.mps.gz', 'netlib-more')
    """
    d = netlib_dir()
    folders = list(dict.fromkeys((d, d.parent / "netlib-more", DATA_DIR / "netlib-more")))
    for folder in folders:
        for suffix in (".mps.gz", ".mps", ".MPS.gz", ".MPS"):
            p = folder / f"{name}{suffix}"
            if p.is_file():
                return p
    raise FileNotFoundError(f"NETLIB problem {name!r} not found in {', '.join(map(str, folders))}")
