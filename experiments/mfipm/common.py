"""The problems of paper 002's Tables 1-3 and the solve settings the experiments share.

QAP LP relaxations from QAPLIB (``--qap``, default nug12 on a software renderer, nug12, nug20
and nug30 on a GPU; 002 section 2 and Table 1) and the Gruca-like stand-ins (``--sizes`` = N,
or ``--gruca`` with the names of 002's Table 3). The stand-ins are
``gruca_like(N, slack=True)`` (:mod:`gpgpu.lp.gruca`): Table 1's structure (N + 1 rows, one
dense row and one dense column, the other rows and columns of sqrt(N) non-zeros) as the
inequalities A0 x <= b, so the standard form is A = [A0 I], (N + 1) x (2N + 2) with N + 1 slack
columns, and the feasible set a polytope of dimension N + 1 with an interior point (x0, w0)
by construction, the optimum finite (a strictly dual-feasible point by construction) and
found by the solvers, not planted. Table 1's sizes are compared with A0's (the model's
columns; a solver counts a row's slack with the row).

``--gruca`` names (``GRUCA_NAMED``): 1kx1k0 .. 64kx64k0 are Table 1's N = 1024 .. 65536. 002
gives no sizes for Table 3's 96kx128-0 and 256x256-0; their stand-ins read the names as N rows
of r non-zeros (96k rows of 128; 256k rows of 256): 12.8e6 and 67e6 non-zeros, 0.76 and 4.0
times 64kx64k0's 16.9e6, against 0.81 and 6.1 times its serial SpMV time in Table 3 (the only
figure 002 gives for them). An assumption, not 002's data: the rows they make are marked so.
On one 80 GB GPU all fit (256x256-0: about 2 GB of textures for A, its transposed copy and
A .* A). Solve settings: the
Gruca-like problems to eps = 1e-8 with the defaults of ``gpgpu.lp.solve``; the QAP LPs, on
which the partial Cholesky preconditioner is weak (PCG stalls as Theta spreads, see the
docs/results/matrix-free.md), by ``--qap-settings``:

* ``budget`` (default): a fixed amount of work, ``QAP_BUDGET`` (at most 10 interior point
  iterations and 300 PCG iterations a solve, no float64 refinement rounds: they could not reach
  their target within the budget), the same for every back end; their accuracy is reported.
* ``solve``: to eps = 1e-8 with the settings that solve nug12, nug15 and nug20 on numpy64
  (``qap_solve_settings``: k = 100, ``reg_min=1e-4``, 4000 PCG iterations a solve below 10000
  rows, 10000 above). Measured: nug12 optimal in 14 s on numpy64 here, 201 s on the H200's GPU
  and 1895 s on llvmpipe; nug20 1000 s and more on either back end (docs/results/matrix-free.md).

``--preset paper`` runs every solve with ``preset="paper"`` (``PRESET_OPTION``): 002's method as
the project draws it (on the GPU A in T-ELL with its dense rows and columns apart, DHTELL2's
nearest); the settings above still apply, and the CSV's ``preset`` column says which ran.
"""
from __future__ import annotations

import time

import numpy as np

#: 002's Table 1 for the QAP problems: rows, columns, non-zeros, Cplex's Cholesky non-zeros
QAP_TABLE1 = {"nug20": (15240, 72600, 304800, 38e6), "nug30": (52260, 379350, 1567800, 459e6)}
#: 002's Table 2 (percent of the solution time): PCG, P^-1, A x, A^T y
PAPER_TABLE2 = {"nug20": (89, 55, 17, 15), "nug30": (90, 54, 18, 17), 1024: (62, 41, 12, 11),
                4096: (89, 42, 19, 28), 16384: (87, 30, 30, 29), 65536: (87, 19, 37, 34)}
#: 002's Table 3: solve time serial, 8 core, GPU; SpMV time serial, 8 core, GPU (seconds)
PAPER_TABLE3 = {"nug20": (2.19, 1.18, 1.60, 1.49, 0.495, 0.945), "nug30": (20.5, 15.8, 15.4, 15.1, 9.69, 9.45),
                1024: (0.244, 0.177, 0.217, 0.0360, 0.0128, 0.0506), 4096: (3.03, 2.06, 2.15, 1.06, 0.218, 0.336),
                16384: (24.9, 18.4, 13.5, 13.1, 6.70, 1.72), 65536: (170.0, 109.0, 74.0, 115.0, 47.4, 12.2),
                "96kx128-0": (137.0, 71.1, 58.8, 93.4, 28.6, 15.3),
                "256x256-0": (866.0, 283.0, 222.0, 699.0, 119.0, 56.4)}
#: HiGHS 1.16 on the QAP LPs (computed once with highspy on the 2-core development machine): its
#: IPM for nug12 (3.5 s), nug15 (23.8 s) and nug20 (173 s); for nug30, which the IPM did not
#: finish in 85 minutes, its PDLP (solver="pdlp", one thread, 310 s, primal-dual objective error
#: 2.7e-9; on nug20 the PDLP's objective is 6.0e-9 from the IPM's)
HIGHS_QAP = {"nug12": 522.8943505590742, "nug15": 1040.9940409579829, "nug20": 2181.60332164399,
             "nug30": 4804.857631565358}
#: Table 3's Gruca problems by name: (N, non-zeros of a regular row); the last two are this
#: project's reading of the names (module notes), 002 gives no sizes for them
GRUCA_NAMED = {"1kx1k0": (1024, 32), "4kx4k0": (4096, 64), "16kx16k0": (16384, 128),
               "64kx64k0": (65536, 256), "96kx128-0": (98304, 128), "256x256-0": (262144, 256)}
#: which of GRUCA_NAMED are sized by this project's reading of the name, not by 002
GRUCA_ASSUMED = ("96kx128-0", "256x256-0")
GRUCA_OPTION = ("--gruca", {"type": str, "default": None,
                            "help": "comma-separated Gruca-like problems by 002's names (" + ", ".join(GRUCA_NAMED)
                                    + "), besides --sizes; the last two sized by the project (module notes)"})
QAP_BUDGET = {"max_iter": 10, "pcg_maxiter": 300, "refine": False}
QAP_OPTION = ("--qap", {"type": str, "default": None,
                        "help": "comma-separated QAPLIB problems (default: nug12 on a software renderer, "
                                "nug12,nug20,nug30 on a GPU; 'none' for none)"})


def load_problem(name: str):
    """A QAPLIB name (nug12, nug20, ...; read from GPGPU_QAPLIB_DIR) as its LP relaxation, or an
    MPS file, as a standard-form Problem."""
    if name.lower().endswith((".mps", ".mps.gz")):
        from gpgpu.lp import read_mps

        return read_mps(name)
    from gpgpu.lp.qap import qap_lp, qaplib_dir

    return qap_lp(qaplib_dir() / f"{name}.dat")


def qap_names(ctx) -> list:
    text = ctx.options.get("qap")
    if text is None:
        return ["nug12"] if ctx.software else ["nug12", "nug20", "nug30"]
    return [] if text.strip().lower() == "none" else [t.strip() for t in text.split(",") if t.strip()]


def gruca_names(ctx) -> list:
    """The ``--gruca`` names (none by default); an unknown name is a ValueError naming the known."""
    text = (getattr(ctx, "options", None) or {}).get("gruca")
    names = [t.strip() for t in (text or "").split(",") if t.strip()]
    bad = [n for n in names if n not in GRUCA_NAMED]
    if bad:
        raise ValueError(f"--gruca: unknown problem(s) {', '.join(bad)}; 002's Table 3 names are "
                         f"{', '.join(GRUCA_NAMED)}")
    return names


def gruca_problem(N: int, per_row: int | None = None):
    """The Gruca-like stand-in of the experiments: ``gruca_like(N, seed=0, slack=True)``."""
    from gpgpu.lp import gruca_like

    return gruca_like(N, seed=0, per_row=per_row, slack=True)


def problems(ctx) -> list:
    """[(label, family, key, Problem)]: key is the N or the QAP name (the papers' row)."""
    from gpgpu.lp.qap import qap_lp, qaplib_dir

    out = []
    for name in qap_names(ctx):
        out.append((name, "qap", name, qap_lp(qaplib_dir() / f"{name}.dat")))
    for N in ctx.sizes:
        out.append((f"gruca_like_{N}", "gruca", N, gruca_problem(N)))
    for name in gruca_names(ctx):
        N, r = GRUCA_NAMED[name]
        label = name + (" (sizes assumed)" if name in GRUCA_ASSUMED else "")
        key = name if name in GRUCA_ASSUMED else N
        out.append((label, "gruca", key, gruca_problem(N, None if r * r == N else r)))
    return out


#: ``--preset``: the preset of every solve (``gpgpu.lp.solve``'s ``preset``): "robust" (the
#: defaults) or "paper" (002's method where the project has it: A in T-ELL with the dense rows
#: apart, 000's halving sums, the fixed regularisation schedule; docs/guide/matrix-free.md)
PRESET_OPTION = ("--preset", {"choices": ("robust", "paper"), "default": "robust",
                              "help": "the preset of every matrix-free solve: robust (the defaults) or paper "
                                      "(002's method as the project draws it)"})


def preset(ctx) -> str:
    """The ``--preset`` of the run ("robust" without a context or without the option)."""
    return ((getattr(ctx, "options", None) or {}).get("preset")) or "robust"


QAP_SETTINGS_OPTION = ("--qap-settings", {"choices": ("budget", "solve"), "default": "budget",
                                           "help": "the QAP LPs for a fixed budget of iterations (default) "
                                                   "or solved to eps = 1e-8 (long: see the module notes)"})


def qap_solve_settings(p) -> dict:
    """The settings that solve the QAP LPs with 002's preconditioner (docs/results/matrix-free.md, measured on numpy64:
    nug12 and nug15 with 4000 PCG iterations a solve, nug20 with 10000)."""
    return {"rank": 100, "reg_min": 1e-4, "pcg_maxiter": 4000 if p.A.shape[0] < 10000 else 10000}


def settings(family: str, ctx=None, p=None) -> dict:
    """The solve options of a problem of ``family`` (module notes); ``ctx.options['qap_settings']``
    chooses the QAP LPs' ("budget" without a context)."""
    if family != "qap":
        return {}
    if ctx is not None and ctx.options.get("qap_settings", "budget") == "solve":
        return qap_solve_settings(p)
    return dict(QAP_BUDGET)


def settings_label(family: str, ctx) -> str:
    """The CSV's ``settings`` column: "defaults" (Gruca-like), "budget" or "solve" (QAP)."""
    if family != "qap":
        return "defaults"
    return ctx.options.get("qap_settings", "budget") if ctx is not None else "budget"


def settings_text(ctx) -> str:
    """How the QAP LPs were run, for the claims."""
    if ctx is not None and ctx.options.get("qap_settings", "budget") == "solve":
        return ("solved to eps = 1e-8: k = 100, reg_min = 1e-4, 4000 PCG iterations a solve below 10000 rows, "
                "10000 above")
    return "budget of 10 interior point and 300 PCG iterations a solve"


def highs_objective(p, solver: str = "ipm", time_limit: float | None = None) -> tuple:
    """(objective, seconds) of HiGHS on the standard-form Problem p (its IPM by default; solver
    "simplex" for its simplex, which HiGHS runs as the dual simplex, as 002's Cplex did). With
    ``time_limit`` (seconds): (None, seconds) when HiGHS stops at the limit."""
    import highspy

    from gpgpu.lp.mps import quiet_highs

    A = p.A.tocsc()
    m, n = A.shape
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n, m
    lp.col_cost_ = p.c
    lp.col_lower_, lp.col_upper_ = np.zeros(n), np.full(n, highspy.kHighsInf)
    lp.row_lower_ = lp.row_upper_ = p.b
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = A.indptr, A.indices, A.data
    h = quiet_highs()
    h.setOptionValue("solver", solver)
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    h.passModel(lp)
    t0 = time.perf_counter()
    h.run()
    seconds = time.perf_counter() - t0
    if time_limit is not None and h.getModelStatus() == highspy.HighsModelStatus.kTimeLimit:
        return None, seconds
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        raise RuntimeError(f"HiGHS did not solve {p.name}: {h.modelStatusToString(h.getModelStatus())}")
    return h.getInfo().objective_function_value + p.c0, seconds


def highs_reference(p, family, key, limit_rows=5000):
    """(objective, seconds) from HiGHS's IPM where it solves the problem in this run's time:
    the QAP constants above; Gruca-like problems up to ``limit_rows`` rows solved here."""
    if family == "qap":
        return HIGHS_QAP.get(key), None
    if p.A.shape[0] > limit_rows:
        return None, None
    return highs_objective(p)


def worst_residual(res) -> float:
    h = res.history[res.point_iteration] if res.point_iteration < len(res.history) else res.history[-1]
    return max(h["primal_residual"], h["dual_residual"], h["gap"])


def bar_axis(ax, labels, title, ylabel=None, log=False) -> None:
    """The look the mfipm figures share: problem names under the bars, a small title and
    legend, a light grid (log scale with ``log``)."""
    ax.set_xticks(np.arange(len(labels)), labels, rotation=20, fontsize=7)
    if ylabel:
        ax.set_ylabel(ylabel)
    if log:
        ax.set_yscale("log")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(True, axis="y", alpha=0.3)
