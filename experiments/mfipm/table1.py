"""Paper 002, Table 1: the sizes of the QAP LPs and of the Gruca problems (here: the Gruca-like
stand-ins), and the Cholesky factor a direct interior point method would need.

For each problem: rows, columns and non-zeros of A (ours and the paper's), the non-zeros of
A Aᵀ (the normal equations' pattern), and the factor's non-zeros estimated with scipy's
fill-reducing orderings: SuperLU's minimum degree on A Aᵀ (``splu``, ``MMD_AT_PLUS_A``, no
pivoting: the symmetric factor's L) where that runs in reasonable time (m <= 20000), and the
envelope of the reverse Cuthill-McKee ordering (an upper bound) up to m = 60000. When A has a
dense column, A Aᵀ is full and the factor holds m (m + 1) / 2 entries whatever the ordering:
then that number is given (by construction). The paper's column is Cplex 11's.

Claims: the sizes equal Table 1 (002); the factor's size is of the paper's order.
"""
from __future__ import annotations

import time

import numpy as np

from experiments.harness import Claim, Experiment
from experiments.mfipm.common import QAP_OPTION, QAP_TABLE1, problems

SPLU_ROWS = 20000
RCM_ROWS = 60000


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


def run(ctx):
    from gpgpu.lp.gruca import GRUCA_TABLE1

    rows = []
    for label, family, key, p in ctx.steps(problems(ctx), unit="problem"):
        m, n = p.A.shape
        paper = QAP_TABLE1.get(key) if family == "qap" else (GRUCA_TABLE1[key][:3] + (GRUCA_TABLE1[key][3],)
                                                             if key in GRUCA_TABLE1 else None)
        est = factor_estimates(p.A.tocsr())
        row = {"problem": label, "family": family, "rows": m, "columns": n, "nonzeros": int(p.A.nnz),
               "paper_rows": paper and paper[0], "paper_columns": paper and paper[1],
               "paper_nonzeros": paper and paper[2], "paper_cholesky_nonzeros": paper and paper[3], **est}
        rows.append(row)
        best = est.get("dense_factor_nnz") or est["mmd_factor_nnz"] or est["rcm_envelope"]
        ctx.progress(f"{label}: {m} x {n}, {p.A.nnz} non-zeros, factor ~{best}")
    return rows, claims(rows)


def claims(rows):
    with_paper = [r for r in rows if r["paper_rows"]]
    same = [r["problem"] for r in with_paper
            if (r["rows"], r["columns"], r["nonzeros"]) == (r["paper_rows"], r["paper_columns"], r["paper_nonzeros"])]
    out = [Claim("rows, columns and non-zeros equal 002's Table 1",
                 "nug20 15240 x 72600 (304800), nug30 52260 x 379350 (1567800), 1kx1k0 .. 64kx64k0 N+1 square "
                 "with N sqrt(N) + 2N + 1",
                 f"equal for {len(same)} of {len(with_paper)} problems of the table in this run "
                 f"({', '.join(same) or 'none'})", "qap_lp and gruca_like built, A.shape and A.nnz")]
    ratios = []
    for r in with_paper:
        ours = r.get("dense_factor_nnz") or r["mmd_factor_nnz"]
        if ours:
            ratios.append(f"{r['problem']} {ours:.3g} vs {r['paper_cholesky_nonzeros']:.3g}")
    kind = "measured" if any(r["mmd_factor_nnz"] for r in with_paper) else "by construction"
    out.append(Claim("the Cholesky factor of A Theta A^T: non-zeros", "Cplex 11: 38e6 (nug20), 459e6 (nug30), "
                     "0.5e6 .. 2048e6 (Gruca)", "; ".join(ratios) or "no problem of the table in this run",
                     "SuperLU minimum degree (splu MMD_AT_PLUS_A) where m <= 20000; m (m+1)/2 when A has a dense "
                     "column (A A^T full: by construction)", kind))
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
    arguments=[QAP_OPTION])

if __name__ == "__main__":
    raise SystemExit(EXPERIMENT.main())
