"""Why a float-float factor of the normal equations overflowed, and what equilibrating it does.

    python tools/ff_equilibration.py PROBLEM [--out FILE.json]

Solves PROBLEM (a NETLIB name or an MPS path) with the LP's defaults at eps = 1e-8 on the GPU
back end with the float-float normal matrix left unscaled, as before the equilibration, and
keeps the first refined solve whose float-float factor overflowed: A's normal rows, the weights
d and the right-hand side. Then, on the same renderer, it factors that M = A diag(d) Aᵀ in
float-float (``float_float.factor``) as it is and scaled by the powers of two of
``gpgpu.adat.equilibration`` (D M D), solves M z = r with each, and reports M's diagonal range,
the condition numbers of M and of D M D (float64; null where an eigenvalue is not positive),
the pivots each factor replaced, its entries that are not finite and the solve's relative
residual ||r - M z||_inf / ||r||_inf (null where z is not finite).
On llvmpipe bnl2 takes about five minutes.
"""
from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


class _Captured(Exception):
    pass


def capture(problem: str) -> dict:
    """The first float-float refined solve that overflowed, with the equilibration switched off."""
    from gpgpu.lp import solve
    from gpgpu.lp.backend import PrecisionExhausted
    from gpgpu.lp.gpu_backend import GPUBackend

    seen = {}
    equilibrate, solve_normal = GPUBackend._equilibrate, GPUBackend._solve_normal

    def unscaled(self, M):
        self.equilibration = None
        return M

    def watched(self, r, *args, **kw):
        try:
            return solve_normal(self, r, *args, **kw)
        except PrecisionExhausted:
            if self.Aff is not None:
                seen.update(A=self.A_normal, d=np.array(self.d64), r=np.asarray(r, dtype=np.float64))
                raise _Captured
            raise

    GPUBackend._equilibrate, GPUBackend._solve_normal = unscaled, watched
    try:
        r = solve(problem, eps=1e-8)
        seen["unscaled_status"] = r.status
    except _Captured:
        pass
    finally:
        GPUBackend._equilibrate, GPUBackend._solve_normal = equilibrate, solve_normal
    return seen


def factor_facts(M: np.ndarray, r: np.ndarray, s: np.ndarray | None) -> dict:
    """The float-float factor of M (or of D M D, D = diag(s)) and its solve of M z = r."""
    from gpgpu import float_float as ff
    from gpgpu.adat import scale_symmetric

    with ff.upload(M, "M") as S:
        scaled = S if s is None else scale_symmetric(S, s)
        L = ff.factor(scaled)
        if s is not None:
            scaled.release()
    try:
        Ld = np.tril(ff.combine(L))
        z = ff.solve(L, r if s is None else s * r)
    finally:
        L.release()
    if s is not None:
        z = s * z
    with np.errstate(all="ignore"):
        residual = float(np.max(np.abs(r - M @ z)) / np.max(np.abs(r)))
    pivots = np.diag(Ld)
    return {"replaced_pivots": int(np.sum(~np.isfinite(pivots) | (pivots ** 2 >= 1e29))),
            "entries_not_finite": int(np.sum(~np.isfinite(Ld))),
            "relative_residual": residual if np.isfinite(residual) else None}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("problem")
    ap.add_argument("--out", default=None, help="write the facts as JSON here")
    args = ap.parse_args(argv)
    from gpgpu.adat import equilibration
    from gpgpu.context import get_context

    seen = capture(args.problem)
    if "A" not in seen:
        print(f"{args.problem}: no float-float solve overflowed without the equilibration "
              f"(status {seen.get('unscaled_status')})")
        return 1
    A = seen["A"].toarray() if hasattr(seen["A"], "toarray") else np.asarray(seen["A"])
    d, r = seen["d"], seen["r"]
    M = (A * d) @ A.T
    diag = np.diag(M)
    s = equilibration(diag)
    eig = np.linalg.eigvalsh(M)
    eig_scaled = np.linalg.eigvalsh(M * s[:, None] * s[None, :])
    facts = {"problem": args.problem, "rows": int(M.shape[0]),
             "diagonal_min": float(diag.min()), "diagonal_max": float(diag.max()),
             "condition": float(eig.max() / eig.min()) if eig.min() > 0 else None,
             "condition_equilibrated": float(eig_scaled.max() / eig_scaled.min()) if eig_scaled.min() > 0 else None,
             "unscaled": factor_facts(M, r, None), "equilibrated": factor_facts(M, r, s),
             "renderer": get_context().info.get("GL_RENDERER", "?"), "date": datetime.date.today().isoformat(),
             "command": f"python tools/ff_equilibration.py {args.problem}"}
    print(json.dumps(facts, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(facts, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
