"""Every problem of the NETLIB LP collection with the defaults of both LP methods, one subprocess a
run (beyond the papers: a robustness table, not a figure).

    python -m experiments.netlib_all --source DIR [DIR ...] [--methods mehrotra,matrix-free]
        [--backends numpy64,gpu] [--out docs/figures/netlib_all_<renderer>_<date>.csv]
        [--problems a,b,c] [--timeout S] [--jobs N]
    python -m experiments.netlib_all --markdown CSV [CSV ...] [--out FILE.md]

``--source`` names folders of ``NAME.mps.gz`` (or ``.mps``) files: ``gpgpu/data/netlib`` and
``gpgpu/data/netlib-more`` (the 42 problems the package ships), or the whole collection, the 91
problems of coin-or-tools/Data-Netlib (NETLIB's lp/data less pilot.ja, pilot.we, qap8, qap12,
qap15, stocfor3 and truss; 4.9 MB gzipped, not shipped), exported from a clone::

    git clone https://github.com/coin-or-tools/Data-Netlib && mkdir -p /tmp/netlib \
        && cp Data-Netlib/*.mps.gz /tmp/netlib/
    python -m experiments.netlib_all --source /tmp/netlib --backends numpy64

Each problem runs once per method and back end, ``solve(path, method=..., backend=..., eps=...)``
and nothing else: Mehrotra's method at eps = 1e-8, the matrix-free method at eps = 1e-6, every
other option the default (the same for every problem). Each run is a subprocess with a wall-clock
limit (``--timeout``, 300 s by default): a hang or a crash is a row (status ``timeout`` or
``crash``, its reason the limit or the last line of the error), not the end of the table.
Problems run smallest first (by the MPS file's nonzeros), so a partial table covers the most
problems; the CSV is written a row at a time. ``--jobs N`` runs N problems at once (default 1),
their rows written as they end: the runs then share the GPU and the CPU's cores, so each run's
seconds bound from above what it takes alone. That answers "does every problem finish within
the limit" in a fraction of the time; time runs with one job. Each row records its jobs.

Each row: the problem, HiGHS's original size (rows without the objective row, columns,
nonzeros), the method, back end and eps, status, iterations, seconds (the solve, reading the MPS
file included), objective, the accuracy reached (the worst of (6.1)-(6.3) at the point
returned), the objective's error relative to the reference (max(1, |reference|)), ``right``
(optimal and the error at most 1e-6), and ``reason``: the solver's message when the run is not
right. The references: HiGHS through ``scipy.optimize.linprog(method="highs")`` on the LP that
HiGHS reads from the same file (its objective constant included), and the optimum published in
NETLIB's lp/data readme (MINOS 5.3, :data:`NETLIB_OPTIMA`), which leaves out the objective row's
right-hand side: ``netlib_error`` compares it with the objective less that constant
(``objective_constant``). Some published values are not the optimum: HiGHS's, less the
constant, differs by 1.3e-3 on greenbea, 1.5e-4 on pilot and 2.6e-6 to 2.6e-5 on greenbeb,
80bau3b, ganges, scrs8 and nesm (relative), so ``right`` goes by HiGHS's. Every row has the jobs
(``--jobs``) it ran among, the iteration at which the factor's precision first rose and why
(``precision_raised_at``, ``precision_raised_by``: blank where it never did, :func:`first_raise`),
the renderer and the date.
"""
from __future__ import annotations

import argparse
import csv
import datetime
import gzip
import json
import math
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from experiments.netlib import TARGET, accuracy

#: eps of each method's run: Mehrotra's as the netlib experiment's, the matrix-free method's at
#: the 1e-6 of paper 002's runs
METHOD_EPS = {"mehrotra": 1e-8, "matrix-free": 1e-6}
BACKENDS = ("numpy64", "gpu")
DEFAULT_TIMEOUT = 300.0

#: the optimal values of NETLIB's lp/data readme (David M. Gay; "from MINOS version 5.3 (of Sept.
#: 1988) running on a VAX with default options"), lower-case names as Data-Netlib's files; the
#: objective row's right-hand side (an objective constant to HiGHS) is not in them. dfl001's is
#: printed to 6 digits only.
NETLIB_OPTIMA = {
    "25fv47": 5.5018458883E+03, "80bau3b": 9.8723216072E+05, "adlittle": 2.2549496316E+05,
    "afiro": -4.6475314286E+02, "agg": -3.5991767287E+07, "agg2": -2.0239252356E+07,
    "agg3": 1.0312115935E+07, "bandm": -1.5862801845E+02, "beaconfd": 3.3592485807E+04,
    "blend": -3.0812149846E+01, "bnl1": 1.9776292856E+03, "bnl2": 1.8112365404E+03,
    "boeing1": -3.3521356751E+02, "boeing2": -3.1501872802E+02, "bore3d": 1.3730803942E+03,
    "brandy": 1.5185098965E+03, "capri": 2.6900129138E+03, "cycle": -5.2263930249E+00,
    "czprob": 2.1851966989E+06, "d2q06c": 1.2278423615E+05, "d6cube": 3.1549166667E+02,
    "degen2": -1.4351780000E+03, "degen3": -9.8729400000E+02, "dfl001": 1.12664E+07,
    "e226": -1.8751929066E+01, "etamacro": -7.5571521774E+02, "fffff800": 5.5567961165E+05,
    "finnis": 1.7279096547E+05, "fit1d": -9.1463780924E+03, "fit1p": 9.1463780924E+03,
    "fit2d": -6.8464293294E+04, "fit2p": 6.8464293232E+04, "forplan": -6.6421873953E+02,
    "ganges": -1.0958636356E+05, "gfrd-pnc": 6.9022359995E+06, "greenbea": -7.2462405908E+07,
    "greenbeb": -4.3021476065E+06, "grow15": -1.0687094129E+08, "grow22": -1.6083433648E+08,
    "grow7": -4.7787811815E+07, "israel": -8.9664482186E+05, "kb2": -1.7499001299E+03,
    "lotfi": -2.5264706062E+01, "maros": -5.8063743701E+04, "maros-r7": 1.4971851665E+06,
    "modszk1": 3.2061972906E+02, "nesm": 1.4076073035E+07, "perold": -9.3807580773E+03,
    "pilot": -5.5740430007E+02, "pilot.ja": -6.1131344111E+03, "pilot.we": -2.7201027439E+06,
    "pilot4": -2.5811392641E+03, "pilot87": 3.0171072827E+02, "pilotnov": -4.4972761882E+03,
    "qap8": 2.0350000000E+02, "qap12": 5.2289435056E+02, "qap15": 1.0409940410E+03,
    "recipe": -2.6661600000E+02, "sc105": -5.2202061212E+01, "sc205": -5.2202061212E+01,
    "sc50a": -6.4575077059E+01, "sc50b": -7.0000000000E+01, "scagr25": -1.4753433061E+07,
    "scagr7": -2.3313892548E+06, "scfxm1": 1.8416759028E+04, "scfxm2": 3.6660261565E+04,
    "scfxm3": 5.4901254550E+04, "scorpion": 1.8781248227E+03, "scrs8": 9.0429998619E+02,
    "scsd1": 8.6666666743E+00, "scsd6": 5.0500000078E+01, "scsd8": 9.0499999993E+02,
    "sctap1": 1.4122500000E+03, "sctap2": 1.7248071429E+03, "sctap3": 1.4240000000E+03,
    "seba": 1.5711600000E+04, "share1b": -7.6589318579E+04, "share2b": -4.1573224074E+02,
    "shell": 1.2088253460E+09, "ship04l": 1.7933245380E+06, "ship04s": 1.7987147004E+06,
    "ship08l": 1.9090552114E+06, "ship08s": 1.9200982105E+06, "ship12l": 1.4701879193E+06,
    "ship12s": 1.4892361344E+06, "sierra": 1.5394362184E+07, "stair": -2.5126695119E+02,
    "standata": 1.2576995000E+03, "standgub": 1.2576995000E+03, "standmps": 1.4060175000E+03,
    "stocfor1": -4.1131976219E+04, "stocfor2": -3.9024408538E+04, "stocfor3": -3.9976661576E+04,
    "truss": 4.5881584719E+05, "tuff": 2.9214776509E-01, "vtpbase": 1.2983146246E+05,
    "wood1p": 1.4429024116E+00, "woodw": 1.3044763331E+00,
}

#: the columns of the CSV, in order
FIELDS = ("problem", "rows", "columns", "nonzeros", "method", "backend", "eps", "status", "iterations",
          "seconds", "objective", "accuracy", "highs_objective", "highs_error", "netlib_objective",
          "objective_constant", "netlib_error", "right", "standard_rows", "normal_rows", "reason",
          "highs_seconds", "jobs", "precision_raised_at", "precision_raised_by", "renderer", "date")


def problem_files(sources) -> list:
    """[(name, path)] of the ``*.mps.gz`` / ``*.mps`` files in the folder ``sources`` (or each
    folder of a list), by name; a name in two folders is the first folder's."""
    out = {}
    for source in [sources] if isinstance(sources, (str, Path)) else sources:
        source = Path(source)
        if not source.is_dir():
            raise FileNotFoundError(f"--source {source} is not a folder: give a folder of NETLIB .mps.gz files "
                                    "(the Data-Netlib checkout, or gpgpu/data/netlib)")
        found = 0
        for p in sorted(source.iterdir()):
            low = p.name.lower()
            for suffix in (".mps.gz", ".mps"):
                if low.endswith(suffix) and p.is_file():
                    out.setdefault(p.name[: -len(suffix)], p)
                    found += 1
                    break
        if not found:
            raise FileNotFoundError(f"no .mps.gz or .mps file in {source}")
    return sorted(out.items())


def _nonzeros_from_file(path) -> int:
    """The COLUMNS section's entries: a cheap size to order the problems by (smallest first)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    count, section = 0, None
    with opener(path, "rt", errors="replace") as f:
        for line in f:
            if not line.strip() or line.startswith("*"):
                continue
            if not line[0].isspace():
                section = line.split()[0].upper()
                continue
            if section == "COLUMNS":
                tok = line.split()
                if "'MARKER'" in tok:
                    continue
                count += (len(tok) - 1) // 2
    return count


def highs_reference(path, time_limit=DEFAULT_TIMEOUT) -> dict:
    """HiGHS's answer through ``scipy.optimize.linprog(method="highs")`` on the LP HiGHS reads from
    the MPS file (rows with equal bounds as equalities, a finite bound of another row as an
    inequality, the objective constant added): its size, objective, seconds and status."""
    import highspy
    import numpy as np
    import scipy.sparse as sp
    from scipy.optimize import linprog

    from gpgpu.lp.mps import quiet_highs

    h = quiet_highs()
    h.readModel(str(path))
    lp = h.getLp()
    m, n = lp.num_row_, lp.num_col_
    mat = lp.a_matrix_
    args = (np.asarray(mat.value_, float), np.asarray(mat.index_), np.asarray(mat.start_))
    A = (sp.csc_matrix(args, shape=(m, n)) if mat.format_ == highspy.MatrixFormat.kColwise
         else sp.csr_matrix(args, shape=(m, n))).tocsr()
    lo, up = np.asarray(lp.row_lower_, float), np.asarray(lp.row_upper_, float)
    sense = -1.0 if lp.sense_ == highspy.ObjSense.kMaximize else 1.0
    c = sense * np.asarray(lp.col_cost_, float)
    eq = lo == up
    ub = ~eq & np.isfinite(up)
    lb = ~eq & np.isfinite(lo)
    A_ub = sp.vstack([A[ub], -A[lb]]).tocsr()
    b_ub = np.concatenate([up[ub], -lo[lb]])
    bounds = np.column_stack([lp.col_lower_, lp.col_upper_]).astype(float)
    t0 = time.perf_counter()
    res = linprog(c, A_ub=A_ub if A_ub.shape[0] else None, b_ub=b_ub if A_ub.shape[0] else None,
                  A_eq=A[eq] if eq.any() else None, b_eq=lo[eq] if eq.any() else None, bounds=bounds,
                  method="highs", options={"time_limit": float(time_limit)})
    seconds = time.perf_counter() - t0
    objective = sense * float(res.fun) + float(lp.offset_) if res.status == 0 else float("nan")
    return {"rows": m, "columns": n, "nonzeros": int(A.nnz), "highs_objective": objective,
            "highs_status": int(res.status), "highs_message": str(res.message), "highs_seconds": seconds,
            "objective_constant": float(lp.offset_)}


def first_raise(history) -> tuple:
    """(iteration, why) of the first history entry at which the factor's precision rose
    (``factor_precision``: after a stall, a breakdown, a slip of the pace, or before a step at a
    jump in replaced pivots), or ("", "") where it never did."""
    entry = next((h for h in history or () if "factor_precision" in h), None)
    if entry is None:
        return "", ""
    return entry.get("iteration", ""), entry.get("precision_raised_by", "")


def _child(path, method, backend, eps) -> dict:
    """One run, in the subprocess: ``solve(path, method, backend, eps)`` and its row fields."""
    from gpgpu.lp import solve

    t0 = time.perf_counter()
    r = solve(str(path), method=method, backend=backend, eps=eps)
    seconds = time.perf_counter() - t0
    raised_at, raised_by = first_raise(r.history)
    return {"status": r.status, "iterations": r.iterations, "seconds": seconds,
            "objective": float(r.objective), "accuracy": accuracy(r),
            "standard_rows": getattr(r, "standard_rows", ""), "normal_rows": getattr(r, "normal_rows", ""),
            "precision_raised_at": raised_at, "precision_raised_by": raised_by, "message": r.message}


def run_one(path, method, backend, eps, timeout) -> dict:
    """One run in a subprocess with a wall-clock limit; a timeout or a crash is a result too."""
    cmd = [sys.executable, "-m", "experiments.netlib_all", "--child", str(path), "--methods", method,
           "--backends", backend, "--child-eps", repr(eps)]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           cwd=Path(__file__).resolve().parents[1])
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "seconds": time.perf_counter() - t0,
                "message": f"no answer within the {timeout:g} s limit (--timeout)"}
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("NETLIB_ALL ")]
    if p.returncode != 0 or not lines:
        err = [ln for ln in p.stderr.strip().splitlines() if ln.strip()]
        return {"status": "crash", "seconds": time.perf_counter() - t0,
                "message": f"exit status {p.returncode}: " + (err[-1] if err else "no error output")}
    return json.loads(lines[-1][len("NETLIB_ALL "):])


def _relative(a, ref) -> float:
    if not (isinstance(a, float) and math.isfinite(a) and math.isfinite(ref)):
        return float("inf")
    return abs(a - ref) / max(1.0, abs(ref))


def make_row(name, ref, method, backend, eps, res, renderer, date) -> dict:
    """A CSV row from the reference (:func:`highs_reference`) and a run's result."""
    obj = res.get("objective", float("nan"))
    obj = float(obj) if obj is not None else float("nan")
    herr = _relative(obj, ref["highs_objective"])
    published = NETLIB_OPTIMA.get(name.lower().replace(".", ""), NETLIB_OPTIMA.get(name.lower()))
    nerr = _relative(obj - ref["objective_constant"], published) if published is not None else ""
    right = res.get("status") == "optimal" and herr <= TARGET
    reason = ""
    if not right:
        reason = res.get("message", "")
        if not math.isfinite(ref["highs_objective"]):
            reason = f"no HiGHS reference ({ref.get('highs_message', '')}); " + reason
        elif res.get("status") == "optimal":
            reason = f"optimal by (6.1)-(6.3) but the objective is {herr:.1e} from HiGHS's"
    return {"problem": name, "rows": ref["rows"], "columns": ref["columns"], "nonzeros": ref["nonzeros"],
            "method": method, "backend": backend, "eps": eps, "status": res.get("status"),
            "iterations": res.get("iterations", ""), "seconds": res.get("seconds"), "objective": obj,
            "accuracy": res.get("accuracy", ""), "highs_objective": ref["highs_objective"], "highs_error": herr,
            "netlib_objective": published if published is not None else "",
            "objective_constant": ref["objective_constant"], "netlib_error": nerr, "right": right,
            "standard_rows": res.get("standard_rows", ""), "normal_rows": res.get("normal_rows", ""),
            "reason": reason, "highs_seconds": ref["highs_seconds"],
            "precision_raised_at": res.get("precision_raised_at", ""),
            "precision_raised_by": res.get("precision_raised_by", ""), "renderer": renderer, "date": date}


def _renderer() -> str:
    try:
        from experiments.harness import renderer_name

        return renderer_name()
    except Exception as e:                      # no GL at all: the numpy64 runs still mean something
        return f"no OpenGL context ({type(e).__name__})"


def _slug(text) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "renderer"


def _split(text, known, what) -> list:
    items = [s.strip() for s in text.split(",") if s.strip()]
    unknown = [s for s in items if s not in known]
    if unknown or not items:
        raise SystemExit(f"--{what}: unknown {unknown or text!r}; choose among {', '.join(known)}")
    return items


def run_all(args) -> Path:
    files = problem_files(args.source)
    if args.problems:
        names = [s.strip() for s in args.problems.split(",") if s.strip()]
        missing = sorted(set(names) - {f[0] for f in files})
        if missing:
            raise SystemExit(f"--problems: no MPS file for {missing} in {', '.join(args.source)}")
        files = [f for f in files if f[0] in names]
    methods = _split(args.methods, tuple(METHOD_EPS), "methods")
    backends = _split(args.backends, BACKENDS, "backends")
    renderer = _renderer()
    date = datetime.date.today().isoformat()
    out = Path(args.out) if args.out else Path("docs/figures") / f"netlib_all_{_slug(renderer)}_{date}.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    files.sort(key=lambda f: (_nonzeros_from_file(f[1]), f[0]))
    t_all = time.perf_counter()

    def problem_rows(name, path) -> list:
        """The rows of one problem: its HiGHS reference, then each method and back end in turn."""
        try:
            ref = highs_reference(path, args.timeout)
        except Exception as e:        # no reference: the runs are still rows, their errors inf
            ref = {"rows": "", "columns": "", "nonzeros": "", "highs_objective": float("nan"),
                   "highs_seconds": "", "objective_constant": 0.0,
                   "highs_message": f"{type(e).__name__}: {e}"}
            print(f"{name}: no HiGHS reference ({ref['highs_message']})", flush=True)
        return [dict(make_row(name, ref, method, backend, METHOD_EPS[method],
                              run_one(path, method, backend, METHOD_EPS[method], args.timeout), renderer, date),
                     jobs=args.jobs)
                for method in methods for backend in backends]

    with open(out, "w", newline="") as fh, ThreadPoolExecutor(max_workers=args.jobs) as pool:
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        w.writeheader()
        pending = [pool.submit(problem_rows, name, path) for name, path in files]   # run in this order
        for done in (as_completed(pending) if args.jobs > 1 else pending):
            for row in done.result():
                w.writerow(row)
                fh.flush()
                print(f"{row['problem']:10s} {row['method']:11s} {row['backend']:8s} {row['status']:18s} "
                      f"it {row['iterations']!s:>4} {row['seconds']:8.2f} s  err {row['highs_error']:.1e}"
                      + ("" if row["right"] else f"  | {row['reason'][:150]}"), flush=True)
    print(f"wrote {out} ({time.perf_counter() - t_all:.0f} s)")
    return out


def _num(v, fmt) -> str:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return v or ""
    return "" if math.isnan(x) else format(x, fmt)


def _runs(rows) -> list:
    """The rows grouped by run: (method, back end, eps, renderer, date), runs in the order met,
    problems by nonzeros (as they run)."""
    runs = {}
    for r in rows:
        runs.setdefault((r["method"], r["backend"], r["eps"], r["renderer"], r["date"]), []).append(r)
    return [(key, sorted(sel, key=lambda r: int(r["nonzeros"] or 0))) for key, sel in runs.items()]


def _misses(sel) -> str:
    """The runs not right, by status: each problem with its error against HiGHS where it has one,
    timeouts with their limit."""
    by = {}
    for r in sel:
        if r["right"] == "True":
            continue
        err = _num(r["highs_error"], ".1e")
        label = r["problem"] + (f" ({err} off)" if err and err != "inf" else "")
        if r["status"] == "timeout":
            limit = re.search(r"within the ([0-9.]+) s limit", r["reason"])
            key = f"over the {limit.group(1)} s limit" if limit else "timeout"
        else:
            key = r["status"].replace("_", " ")
        by.setdefault(key, []).append(label)
    return "; ".join(f"{k}: {', '.join(v)}" for k, v in by.items()) or "none"


def markdown(csv_paths) -> str:
    """The CSVs (one path or several) as markdown: a summary table (a row per run: method, back
    end, eps, renderer and date, how many right, the misses and why), then per run a table of
    every problem. Runs are told apart by renderer and date too, so one problem set measured on
    two machines gives two rows."""
    rows = []
    for path in [csv_paths] if isinstance(csv_paths, (str, Path)) else csv_paths:
        with open(path, newline="") as f:
            rows += list(csv.DictReader(f))
    if not rows:
        return f"(no rows in {csv_paths})\n"
    runs = _runs(rows)
    out = ["| run | machine, date | right | not right |", "| --- | --- | --- | --- |"]
    for (method, backend, eps, renderer, date), sel in runs:
        right = sum(r["right"] == "True" for r in sel)
        machine = f"the CPU of the {renderer} machine" if backend.startswith("numpy") else renderer
        out.append(f"| {method}, {backend}, eps {eps} | {machine}, {date} | {right} of {len(sel)} | "
                   f"{_misses(sel)} |")
    out.append("")
    for (method, backend, eps, renderer, date), sel in runs:
        right = sum(r["right"] == "True" for r in sel)
        optimal = sum(r["status"] == "optimal" for r in sel)
        machine = f"the CPU of the {renderer} machine" if backend.startswith("numpy") else renderer
        out += [f"#### {method}, {backend}, eps {eps}: {machine}, {date}", "",
                f"{right} of {len(sel)} right (optimal, objective within 1e-6 of HiGHS's); {optimal} optimal; "
                f"{sum(float(r['seconds'] or 0) for r in sel):.0f} s in all.", "",
                "| problem | rows | cols | status | iterations | time (s) | objective | error vs HiGHS "
                "| error vs NETLIB | reason |",
                "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
        for r in sel:
            reason = r["reason"].replace("|", "/").replace("\n", " ")
            out.append(f"| {r['problem']} | {r['rows']} | {r['columns']} | {r['status']} | {r['iterations']} | "
                       f"{_num(r['seconds'], '.2f')} | {_num(r['objective'], '.10g')} | "
                       f"{_num(r['highs_error'], '.1e')} | {_num(r['netlib_error'], '.1e')} | {reason} |")
        out.append("")
    return "\n".join(out)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.netlib_all", description=__doc__.split("\n\n")[0])
    p.add_argument("--source", nargs="+", help="folders of NETLIB .mps.gz / .mps files")
    p.add_argument("--methods", default="mehrotra,matrix-free", help="comma-separated: mehrotra, matrix-free")
    p.add_argument("--backends", default="numpy64,gpu", help="comma-separated: numpy64, gpu")
    p.add_argument("--out", default=None, help="the CSV (default docs/figures/netlib_all_<renderer>_<date>.csv); "
                                               "with --markdown, the markdown file (default: stdout)")
    p.add_argument("--problems", default=None, help="comma-separated problem names (default: every file)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds a run (default 300)")
    p.add_argument("--jobs", type=int, default=1, help="problems run at once (default 1; more: each run's "
                                                        "seconds an upper bound, see the module notes)")
    p.add_argument("--markdown", default=None, nargs="+", metavar="CSV",
                   help="render the CSVs (one or more) as markdown tables")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    p.add_argument("--child-eps", type=float, default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.timeout <= 0:
        raise SystemExit("--timeout must be a positive number of seconds")
    if args.jobs < 1:
        raise SystemExit(f"--jobs must be 1 or more (problems run at once), got {args.jobs}")
    if args.child:
        res = _child(args.child, args.methods, args.backends, args.child_eps)
        print("NETLIB_ALL " + json.dumps(res), flush=True)
        return 0
    if args.markdown:
        text = markdown(args.markdown)
        if args.out:
            Path(args.out).write_text(text)
        else:
            print(text)
        return 0
    if not args.source:
        raise SystemExit("--source DIR is required (a folder of NETLIB .mps.gz files), or --markdown CSV")
    try:
        run_all(args)
    except FileNotFoundError as e:
        raise SystemExit(str(e)) from None
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
