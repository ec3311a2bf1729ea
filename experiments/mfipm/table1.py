"""Paper 002, Table 1: the sizes of the QAP LPs and of the Gruca problems (here: the Gruca-like
stand-ins), the Cholesky factor a direct interior point method would need, and the time columns:
a direct IPM and the dual simplex (002: Cplex 11.0.1; here HiGHS's IPM and simplex, solver
"ipm" / "simplex", default options, each stopped at ``--highs-limit`` seconds, default 240)
beside the matrix-free method's (``solve(method="matrix-free", backend="numpy64")``, serial
float64, the settings of ``experiments.mfipm.common``: the Gruca-like LPs to eps = 1e-8 with
the defaults, the QAP LPs by ``--qap-settings``; ``--preset paper``: with 002's method), all on
the machine that runs the table.

The Gruca-like stand-ins are the inequality LPs A0 x <= b of ``experiments.mfipm.common``; their
standard form has N + 1 slack columns beside A0's, so the table's rows, columns and non-zeros
are those of A (standard form) and its "model" columns and non-zeros those of A0 (columns and
non-zeros less the m slacks), which are what Table 1 is compared with.

For each problem: rows, columns and non-zeros of A (ours and the paper's), the non-zeros of
A Aᵀ (the normal equations' pattern), and the factor's non-zeros estimated with scipy's
fill-reducing orderings: SuperLU's minimum degree on A Aᵀ (``splu``, ``MMD_AT_PLUS_A``, no
pivoting: the symmetric factor's L) where that runs in reasonable time (m <= 20000), and the
envelope of the reverse Cuthill-McKee ordering (an upper bound) up to m = 60000. When A has a
dense column, A Aᵀ is full and the factor holds m (m + 1) / 2 entries whatever the ordering:
then that number is given (by construction). The paper's column is Cplex 11's.

Claims: the sizes equal Table 1 (002); the factor's size is of the paper's order (one line for the
factors measured by SuperLU, one for the m (m + 1) / 2 of a full A Aᵀ, by construction); the IPM
and simplex times; and 002's headline claim, the matrix-free IPM's "overwhelmingly superior
performance relative to the simplex method and IPM with equations solved directly" (abstract,
section 1), met where the matrix-free solve ends optimal at least ten times faster than the
faster of HiGHS's two (or HiGHS does not finish within the limit), missed elsewhere; a
budget run (``--qap-settings budget``) is not a solve and is not counted.
"""
from __future__ import annotations

import time

import numpy as np

from experiments.harness import Claim, Experiment
from experiments.mfipm.common import (GRUCA_OPTION, PRESET_OPTION, QAP_OPTION, QAP_SETTINGS_OPTION, QAP_TABLE1,
                                      highs_objective, preset, problems, settings, settings_label, worst_residual)

SPLU_ROWS = 20000
RCM_ROWS = 60000
#: "overwhelmingly superior": the matrix-free solve at least this many times faster than HiGHS's
OVERWHELMING = 10.0
#: 002's Table 1 time columns for the QAP LPs: Cplex IPM, dual simplex (seconds; None: out of
#: memory / more than 28 days)
QAP_TIMES = {"nug20": (1034.0, 79451.0), "nug30": (None, None)}
HIGHS_LIMIT_OPTION = ("--highs-limit", {"type": float, "default": 240.0,
                                        "help": "seconds after which HiGHS's IPM and simplex are each stopped "
                                                "(default 240: both within a 10-minute command)"})


def factor_estimates(A) -> dict:
    import scipy.sparse as sp
    import scipy.sparse.linalg as spl
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    m = A.shape[0]
    out = {"aat_nnz": None, "dense_normal": False, "dense_factor_nnz": None, "mmd_factor_nnz": None,
           "rcm_envelope": None, "mmd_seconds": None}
    if np.diff(A.tocsc().indptr).max() == m:          # a full column: A A^T is full
        out.update(aat_nnz=m * m, dense_normal=True, dense_factor_nnz=m * (m + 1) // 2)
        return out
    G = (A @ A.T).tocsr()
    out["aat_nnz"] = int(G.nnz)
    G = (G + sp.eye(m) * (1e-3 * abs(G).max())).tocsc()      # positive definite, same pattern
    if m <= SPLU_ROWS:
        t0 = time.perf_counter()
        lu = spl.splu(G, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options={"SymmetricMode": True})
        out["mmd_factor_nnz"] = int(lu.L.nnz)
        out["mmd_seconds"] = time.perf_counter() - t0
    if m <= RCM_ROWS:
        p = reverse_cuthill_mckee(G.tocsr(), symmetric_mode=True)
        Gp = G.tocsr()[p][:, p].tocsr()
        first = np.minimum.reduceat(Gp.indices, Gp.indptr[:-1])
        out["rcm_envelope"] = int(np.sum(np.arange(m) - np.minimum(first, np.arange(m)) + 1))
    return out


def times(p, family, ctx, limit) -> dict:
    """HiGHS's IPM and simplex (seconds, None objective where stopped at ``limit``) and the
    matrix-free method's serial numpy64 solve, on p."""
    from gpgpu.lp import solve

    out = {}
    for solver in ("ipm", "simplex"):
        obj, sec = highs_objective(p, solver, time_limit=limit)
        out[f"highs_{solver}_seconds"], out[f"highs_{solver}_finished"] = sec, obj is not None
    t0 = time.perf_counter()
    r = solve(p, method="matrix-free", backend="numpy64", eps=1e-8, preset=preset(ctx), **settings(family, ctx, p))
    out.update(mf_seconds=time.perf_counter() - t0, mf_status=r.status, mf_iterations=r.iterations,
               mf_pcg_iterations=r.pcg_iterations, mf_accuracy=worst_residual(r),
               settings=settings_label(family, ctx), preset=preset(ctx))
    return out


def run(ctx):
    from gpgpu.lp.gruca import GRUCA_TABLE1

    limit = ctx.options.get("highs_limit") or 240.0
    rows = []
    for label, family, key, p in ctx.steps(problems(ctx), unit="problem"):
        m, n = p.A.shape
        paper = QAP_TABLE1.get(key) if family == "qap" else (GRUCA_TABLE1[key][:3] + (GRUCA_TABLE1[key][3],)
                                                             if key in GRUCA_TABLE1 else None)
        paper_times = QAP_TIMES.get(key) if family == "qap" else (GRUCA_TABLE1[key][4:] if key in GRUCA_TABLE1
                                                                  else None)
        slacks = m if family == "gruca" else 0         # the stand-ins' slack columns (module notes)
        est = factor_estimates(p.A.tocsr())
        row = {"problem": label, "family": family, "rows": m, "columns": n, "nonzeros": int(p.A.nnz),
               "model_columns": n - slacks, "model_nonzeros": int(p.A.nnz) - slacks,
               "paper_rows": paper and paper[0], "paper_columns": paper and paper[1],
               "paper_nonzeros": paper and paper[2], "paper_cholesky_nonzeros": paper and paper[3], **est,
               **times(p, family, ctx, limit), "highs_limit": limit,
               "paper_ipm_seconds": paper_times and paper_times[0],
               "paper_simplex_seconds": paper_times and paper_times[1]}
        rows.append(row)
        best = est.get("dense_factor_nnz") or est["mmd_factor_nnz"] or est["rcm_envelope"]
        ctx.progress(f"{label}: {m} x {n}, {p.A.nnz} non-zeros, factor ~{best}; HiGHS IPM "
                     f"{row['highs_ipm_seconds']:.2f} s, simplex {row['highs_simplex_seconds']:.2f} s, matrix-free "
                     f"{row['mf_seconds']:.2f} s ({row['mf_status']})")
    return rows, claims(rows)


def _seconds(r, solver) -> str:
    s = r[f"highs_{solver}_seconds"]
    return f"{s:.3g} s" if r[f"highs_{solver}_finished"] else f"> {r['highs_limit']:.0f} s (stopped)"


def headline(rows) -> Claim:
    """002's headline claim, measured: the matrix-free solve vs HiGHS's IPM and simplex."""
    met, missed, figures, skipped = [], [], [], []
    for r in rows:
        if "mf_status" not in r:
            continue
        if r["mf_status"] != "optimal":
            skipped.append(f"{r['problem']} ({r['settings']}: {r['mf_status']})")
            continue
        finished = [r[f"highs_{s}_seconds"] for s in ("ipm", "simplex") if r[f"highs_{s}_finished"]]
        ratio = min(finished) / r["mf_seconds"] if finished else float("inf")
        (met if ratio >= OVERWHELMING else missed).append(r["problem"])
        figures.append(f"{r['problem']}: matrix-free {r['mf_seconds']:.3g} s, HiGHS IPM {_seconds(r, 'ipm')}, "
                       f"simplex {_seconds(r, 'simplex')} (faster HiGHS / matrix-free "
                       + (f"{ratio:.2g})" if finished else "-: neither finished)"))
    if not figures:
        verdict = "not measured: no matrix-free solve ended optimal in this run"
    elif not missed:
        verdict = f"met on all {len(met)} problems"
    elif not met:
        verdict = f"missed on all {len(missed)} problems"
    else:
        verdict = f"met on {len(met)} ({', '.join(met)}), missed on {len(missed)} ({', '.join(missed)})"
    text = verdict + ": " + "; ".join(figures) if figures else verdict
    if skipped:
        text += "; not counted (no solve): " + ", ".join(skipped)
    return Claim("matrix-free IPM vs the simplex method and an IPM with equations solved directly",
                 "\"overwhelmingly superior performance\" (abstract; Table 1 vs Table 3: nug20 1034 s Cplex IPM, "
                 "79451 s dual simplex, 2.19 s matrix-free serial)", text,
                 f"same machine, one run each; met = the matrix-free solve (numpy64, eps 1e-8) optimal and at least "
                 f"{OVERWHELMING:g} x faster than the faster of HiGHS's IPM and simplex (or neither finished)")


def claims(rows):
    with_paper = [r for r in rows if r["paper_rows"]]
    same = [r["problem"] for r in with_paper
            if (r["rows"], r.get("model_columns", r["columns"]), r.get("model_nonzeros", r["nonzeros"]))
            == (r["paper_rows"], r["paper_columns"], r["paper_nonzeros"])]
    out = [Claim("rows, columns and non-zeros equal 002's Table 1",
                 "nug20 15240 x 72600 (304,800), nug30 52260 x 379350 (1,567,800), 1kx1k0 .. 64kx64k0 N+1 square "
                 "with N sqrt(N) + 2N + 1",
                 f"equal for {len(same)} of {len(with_paper)} problems of the table in this run "
                 f"({', '.join(same) or 'none'})", "qap_lp and gruca_like built, A.shape and A.nnz; the "
                 "Gruca-like LPs' columns and non-zeros without their slack columns (A0's, module notes)")]
    measured = [f"{r['problem']} {r['mmd_factor_nnz']:.3g} vs {r['paper_cholesky_nonzeros']:.3g}"
                for r in with_paper if r["mmd_factor_nnz"]]
    full = [f"{r['problem']} {r['dense_factor_nnz']:.3g} vs {r['paper_cholesky_nonzeros']:.3g}"
            for r in with_paper if r.get("dense_factor_nnz")]
    out.append(Claim("the Cholesky factor of A Theta A^T: non-zeros (SuperLU's minimum degree ordering)",
                     "Cplex 11: 38e6 (nug20), 459e6 (nug30)", "; ".join(measured) or "no such problem in this run",
                     "SuperLU minimum degree (splu MMD_AT_PLUS_A) where m <= 20000", "measured"))
    out.append(Claim("the Cholesky factor of A Theta A^T: non-zeros (A with a dense column: A A^T full)",
                     "Cplex 11: 0.5e6 .. 2048e6 (Gruca)", "; ".join(full) or "no such problem in this run",
                     "m (m+1)/2 whatever the ordering: the dense column makes A A^T full", "by construction"))
    timed = [r for r in rows if "highs_ipm_seconds" in r]
    if timed:
        def paper_time(v):
            return "-" if v is None else f"{v:g} s"
        out.append(Claim("direct IPM and dual simplex times (Table 1's time columns)",
                         "Cplex 11.0.1 IPM, dual simplex: nug20 1034 s, 79451 s; nug30 out of memory, > 28 days; "
                         "1kx1k0 0.82 s, 0.38 s; 4kx4k0 89 s, 11 s; 16kx16k0 2351 s, 924 s; 64kx64k0 out of memory, "
                         "111 h", "; ".join(f"{r['problem']} HiGHS IPM {_seconds(r, 'ipm')}, simplex "
                                          f"{_seconds(r, 'simplex')} (paper {paper_time(r['paper_ipm_seconds'])}, "
                                          f"{paper_time(r['paper_simplex_seconds'])})" for r in timed),
                         "HiGHS (highspy) with its default options, solver 'ipm' and 'simplex', on the machine of "
                         "this run; the Gruca-like LPs are stand-ins, not Gruca's models"))
        out.append(headline(timed))
    big = [r for r in rows if r["rcm_envelope"] and not r.get("dense_factor_nnz")]
    if big:
        out.append(Claim("reverse Cuthill-McKee envelope (an upper bound on the factor)", "no figure in 002",
                         "; ".join(f"{r['problem']} {r['rcm_envelope']:.3g}" for r in big)))
    return out


def plot(rows, fig, renderer):
    ax = fig.subplots()
    labels = [r["problem"] for r in rows]
    ours = [r.get("dense_factor_nnz") or r["mmd_factor_nnz"] or r["rcm_envelope"] or np.nan for r in rows]
    paper = [r["paper_cholesky_nonzeros"] or np.nan for r in rows]
    x = np.arange(len(rows))
    ax.bar(x - 0.2, [r["nonzeros"] for r in rows], 0.2, label="nnz(A)")
    ax.bar(x, ours, 0.2, label="Cholesky factor (scipy ordering)")
    ax.bar(x + 0.2, paper, 0.2, label="Cholesky factor (002, Cplex)")
    ax.set_xticks(x, labels, rotation=20, fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("non-zeros")
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)


EXPERIMENT = Experiment(
    name="mfipm_table1", title="problem sizes and the Cholesky fill a direct IPM would need", paper="002 Table 1",
    sizes_software=[1024], sizes_gpu=[1024, 4096, 16384, 65536], run=run, plot=plot, size_name="N",
    arguments=[QAP_OPTION, QAP_SETTINGS_OPTION, GRUCA_OPTION, HIGHS_LIMIT_OPTION, PRESET_OPTION])

if __name__ == "__main__":
    raise SystemExit(EXPERIMENT.main())
