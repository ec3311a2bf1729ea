"""Shared code of the experiments: flags, sizes for the renderer found, timing, CSV, PNG, claims.

An experiment module defines ``EXPERIMENT = Experiment(...)`` with a ``run(ctx)`` function
that measures and returns rows (dicts, one per (size, algorithm) or per table line) and
claims, and a ``plot(rows, fig)`` function; ``python -m experiments.<name>`` calls
``EXPERIMENT.main()``.

Timing follows the papers: the input is uploaded first and not timed ("the time spent to
transfer data between CPU and GPU is not considered", section 6.1 of 000); the GPU is idle
before the timed region (``ctx.finish()``), the region ends with ``ctx.finish()``, and the
median of the repeats is reported (3 by default; ``--repeat 1`` for a quick look). Before the
repeats, one untimed run of the same call at the same size (:func:`timed`): it compiles the
shaders at their first use and allocates the textures, which would otherwise be charged to
whichever variant a size times first.

While it runs, an experiment shows one bar over its sizes (or problems) on stderr, where
stderr is a terminal (``--progress`` shows it anyway, ``--no-progress`` never), and prints its
claims at the end; ``--verbose`` prints a line per measurement instead of the bar, and every
row of the table. On a software renderer (llvmpipe) the figure, the printed claims and
REPORT.md say what such a renderer can show (:data:`SOFTWARE_NOTE`).
"""
from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from gpgpu.cli import positive_int

__all__ = ["Experiment", "Claim", "RunContext", "timed", "renderer_name", "counted", "finish", "release",
           "positive_int", "size_list", "writable_dir", "update_rate", "limit_claims", "progress_bar",
           "SOFTWARE_NOTE"]

#: what a figure made on a software renderer can and cannot show (its caption, the printed
#: claims and REPORT.md say it)
SOFTWARE_NOTE = ("a software renderer (such as llvmpipe) checks the algorithm and the pass/fragment counts; "
                 "the papers' time ratios are about GPUs")

#: the printed table has every row with --verbose, else only when it has at most this many
#: (CG's convergence history has a row per iteration: the CSV holds them)
TABLE_ROWS = 25


def progress_bar(iterable=None, *, total=None, initial=0, desc=None, unit="it", show=None, leave=True):
    """A tqdm bar on stderr. ``show``: None shows it only where stderr is a terminal (so logs
    and tests stay clean), True always, False never."""
    from tqdm import tqdm

    return tqdm(iterable, total=total, initial=initial, desc=desc, unit=unit, file=sys.stderr, leave=leave,
                disable=None if show is None else not show, dynamic_ncols=True)


@dataclass
class Claim:
    """A claim of the paper, the paper's figure, ours, how ours was computed, and its kind:
    "measured" (times, fragment counts from occlusion queries, iterations, errors) or
    "by construction" (follows from other numbers by the code's own formulas, e.g. bytes =
    declared texels per fragment x counted fragments: it can only disagree if those do)."""

    text: str
    paper: str
    measured: str
    how: str = ""
    kind: str = "measured"


@dataclass
class RunContext:
    sizes: list
    repeat: int
    out: Path
    renderer: str
    software: bool
    #: a line about the measurement just made: printed with --verbose, else the bar's tail
    progress: Callable[[str], None]
    options: dict = field(default_factory=dict)  # the experiment's own flags (Experiment.arguments)
    name: str = ""
    #: the bar of :meth:`steps`: None where stderr is a terminal, True always, False never
    show_bar: bool | None = None
    bar: object = None

    def steps(self, items, unit: str = "size"):
        """``items`` (the sizes, or the problems) under the experiment's bar: call it once, on
        the loop that measures."""
        items = list(items)
        if self.show_bar is False:
            return items
        self.bar = progress_bar(items, desc=self.name, unit=unit, show=self.show_bar)
        return self.bar


@dataclass
class Outcome:
    name: str
    title: str
    renderer: str
    rows: list
    claims: list
    csv: Path
    png: Path
    notes: list = field(default_factory=list)
    seconds: float = 0.0
    size_name: str = "n"
    software: bool = False


def size_list(text: str) -> list:
    """argparse type: comma-separated positive integers."""
    values = [v.strip() for v in text.split(",") if v.strip()]
    if not values:
        raise argparse.ArgumentTypeError("expected comma-separated sizes, e.g. 64,128")
    return [positive_int(v) for v in values]


def writable_dir(text: str) -> Path:
    """argparse type: a folder that exists and is writable, or can be created."""
    path = Path(text)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"cannot create the output folder {text!r}: {exc.strerror}") from None
    if not path.is_dir() or not os.access(path, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"the output folder {text!r} is not writable")
    return path


def renderer_name() -> str:
    from gpgpu.context import get_context

    return str(get_context().info["GL_RENDERER"])


def is_software() -> bool:
    from gpgpu.context import is_software_renderer

    return is_software_renderer()


def finish() -> None:
    from gpgpu.context import get_context

    get_context().finish()


def timed(fn: Callable[[], object], repeat: int, cleanup: Callable[[object], None] | None = None,
          warmup: int = 1) -> float:
    """Median wall time of ``fn()`` over ``repeat`` runs, GPU idle before, ``finish()`` after,
    after ``warmup`` untimed runs (the first run of a kernel compiles it and the first at a size
    allocates its textures: neither is the algorithm's time)."""
    for _ in range(warmup):
        out = fn()
        finish()
        if cleanup is not None:
            cleanup(out)
    times = []
    for _ in range(max(1, repeat)):
        finish()
        t0 = time.perf_counter()
        out = fn()
        finish()
        times.append(time.perf_counter() - t0)
        if cleanup is not None:
            cleanup(out)
    return statistics.median(times)


def counted(fn: Callable[[], object], cleanup: Callable[[object], None] | None = None):
    """Run ``fn`` once under the counters (occlusion queries for fragments, timer queries for
    each kernel's GPU time where the driver has them); returns the Counter."""
    from gpgpu import counters

    with counters.count(time=True, trace=False) as c:
        out = fn()
    if cleanup is not None:
        cleanup(out)
    return c


def release(obj) -> None:
    """Release a Stream (or each Stream of a tuple/list); ignore anything else."""
    from gpgpu import Stream

    if isinstance(obj, Stream):
        obj.release()
    elif isinstance(obj, (tuple, list)):
        for o in obj:
            release(o)
    elif hasattr(obj, "release"):
        obj.release()


def update_rate(c, kernel: str) -> dict:
    """Row fields for an update kernel: its fragments, its GPU time (timer queries) and the
    fragments per second they give."""
    frags, gpu = c.fragments(kernel), c.gpu_seconds(kernel)
    return {"update_gpu_seconds": gpu, "update_fragments_per_second": frags / gpu if gpu > 0 else None}


def limit_claims(rows: list, size_key: str, kernels: dict, key: str = "algorithm") -> list:
    """For each algorithm -> update kernel, at the largest size: the kernel's fragment rate
    (occlusion and timer queries) as a fraction of the fill limit ``python -m gpgpu bench``
    measures on the same GPU for a full-screen R32F pass with one texture read
    (gpgpu.bench.fill_limit(1)). The update kernels stream one texel, their own element, and
    fetch two more (neighbour and pivot, or l and u) that whole rows or columns of fragments
    share; the one-read pass is the comparable limit (the probe with 3 reads streams three
    distinct textures, which no update kernel does)."""
    from gpgpu.bench import fill_limit

    rated = [r for r in rows if r.get("update_fragments_per_second")]
    if not rated:
        return []
    n = max(r[size_key] for r in rated)
    limit = fill_limit(1)
    out = []
    for algorithm, kernel in kernels.items():
        row = next((r for r in rated if r[size_key] == n and r.get(key) == algorithm), None)
        if row is None:
            continue
        rate = row["update_fragments_per_second"]
        out.append(Claim(f"{kernel} fragment rate / fill limit ({algorithm})",
                         "no figure (beyond the papers): the fill limit of this GPU, "
                         "a full-screen R32F pass with 1 read",
                         f"{rate / 1e9:.3g} / {limit / 1e9:.3g} Gfragments/s = {rate / limit:.0%} at "
                         f"{size_key} = {n}", "occlusion and timer queries; gpgpu.bench.fill_limit(1)"))
    return out


def fmt(value) -> str:
    if isinstance(value, float):
        if value == 0 or 1e-3 <= abs(value) < 1e5:
            return f"{value:.4g}"
        return f"{value:.3e}"
    return str(value)


def ratio_text(a: float | None, b: float | None, digits: int = 2) -> str:
    if a is None or b is None or b == 0:
        return "n/a"
    return f"{a / b:.{digits}f}"


@dataclass
class Experiment:
    """One figure or table of a paper."""

    name: str  # file stem of the outputs, e.g. "fig8" or "adat_fig9"
    title: str  # the paper's caption, shortened
    paper: str  # e.g. "000 Fig. 8"
    sizes_software: list
    sizes_gpu: list
    run: Callable[[RunContext], tuple]  # -> (rows, claims) or (rows, claims, notes)
    plot: Callable[[list, object, str], None]  # (rows, figure, renderer)
    #: the repeats (their median is reported) on a software renderer and on a GPU
    repeat_software: int = 3
    repeat_gpu: int = 3
    size_name: str = "n"
    #: extra command-line flags: (flag, argparse keyword arguments); values go to ctx.options
    arguments: list = field(default_factory=list)

    def parser(self) -> argparse.ArgumentParser:
        p = argparse.ArgumentParser(prog=f"python -m experiments.{self.module_name()}",
                                    description=f"{self.paper}: {self.title}")
        p.add_argument("--sizes", type=size_list,
                       help=f"comma-separated sizes ({self.size_name}); default: chosen for the renderer "
                            f"(software: {self.sizes_software}; GPU: {self.sizes_gpu})")
        p.add_argument("--repeat", type=positive_int,
                       help=f"timed repeats per measurement, after one untimed warm-up run; the median is "
                            f"reported (default: {self.repeat_software} on a software renderer, "
                            f"{self.repeat_gpu} on a GPU; 1 for a quick look)")
        p.add_argument("--out", type=writable_dir, default=os.environ.get("GPGPU_RESULTS", "results"),
                       help="output folder (default: results/)")
        add_output_flags(p)
        for flag, kwargs in self.arguments:
            p.add_argument(flag, **kwargs)
        return p

    def module_name(self) -> str:
        return self.name.replace("_", ".", 1) if self.name.startswith(("adat_", "lu_", "cg_", "mfipm_")) else self.name

    def execute(self, sizes=None, repeat=None, out: Path = Path("results"), quiet: bool = False,
                verbose: bool = False, progress: bool | None = None, **options) -> Outcome:
        """Run, write NAME.csv, NAME.claims.json and NAME.png into ``out`` and print the claims.
        ``quiet``: print nothing; ``verbose``: a line per measurement and every row of the
        table; ``progress``: the bar over the sizes (None: where stderr is a terminal; never
        with ``quiet`` or ``verbose``)."""
        renderer = renderer_name()
        software = is_software()
        sizes = sizes or (self.sizes_software if software else self.sizes_gpu)
        repeat = repeat or (self.repeat_software if software else self.repeat_gpu)
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        show_bar = False if quiet or verbose else progress

        def line(msg: str) -> None:
            if verbose and not quiet:
                print(f"  [{self.name}] {msg}", flush=True)
            elif ctx.bar is not None:
                ctx.bar.set_postfix_str(msg)

        t0 = time.perf_counter()
        defaults = {flag.lstrip("-").replace("-", "_"): kw.get("default") for flag, kw in self.arguments}
        defaults.update({k: v for k, v in options.items() if v is not None})
        ctx = RunContext(list(sizes), repeat, out, renderer, software, line, defaults, self.name, show_bar)
        try:
            res = self.run(ctx)
        finally:
            if ctx.bar is not None:
                ctx.bar.close()
        rows, claims = res[0], res[1]
        notes = ([SOFTWARE_NOTE] if software else []) + (list(res[2]) if len(res) > 2 else [])
        outcome = Outcome(self.name, self.title, renderer, rows, claims, out / f"{self.name}.csv",
                          out / f"{self.name}.png", notes, time.perf_counter() - t0, self.size_name, software)
        write_csv(outcome.csv, rows)
        write_claims(outcome)
        self.write_png(outcome)
        if not quiet:
            print_outcome(self, outcome, verbose)
        return outcome

    def write_png(self, outcome: Outcome) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig = plt.figure(figsize=(7.5, 5))
        self.plot(outcome.rows, fig, outcome.renderer)
        fig.suptitle(f"{self.paper}: {self.title}\n{outcome.renderer}"
                     + ("\n" + SOFTWARE_NOTE.replace("; ", ";\n") if outcome.software else ""), fontsize=9)
        fig.tight_layout()
        fig.savefig(outcome.png, dpi=110)
        plt.close(fig)

    def main(self, argv=None) -> int:
        args = vars(self.parser().parse_args(argv))
        sizes, repeat, out = args.pop("sizes"), args.pop("repeat"), args.pop("out")
        self.execute(sizes, repeat, out, **args)
        return 0


def add_output_flags(p: argparse.ArgumentParser) -> None:
    """--verbose and --progress / --no-progress (an experiment's and ``experiments all``'s)."""
    p.add_argument("--verbose", action="store_true",
                   help="a line per measurement as it is made (instead of the bar) and every row of the table")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="the bar over the sizes on stderr (default: only where stderr is a terminal)")


def sort_sizes(values) -> list:
    """Numbers in numeric order, anything else (problem names) as text."""
    values = list(values)
    if all(isinstance(v, (int, float)) for v in values):
        return sorted(values)
    return sorted(values, key=str)


def command_line(name: str) -> str:
    """The command that runs now, as NAME.claims.json records it: ``python -m experiments.fig8 --sizes
    64`` or ``python -m experiments all ...`` where a module of this package is the program, else
    (called from Python, e.g. a test) the experiment's own module."""
    import shlex

    main = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] else None
    root = Path(__file__).resolve().parent
    if main is not None and main.suffix == ".py" and root in main.parents:
        parts = main.relative_to(root.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__main__" else parts)
        return " ".join(["python -m", module, shlex.join(sys.argv[1:])]).strip()
    module = name.replace("_", ".", 1) if name.startswith(("adat_", "lu_", "cg_", "mfipm_")) else name
    return f"python -m experiments.{module}"


def write_claims(o: Outcome) -> None:
    """NAME.claims.json beside the CSV: what REPORT.md is assembled from (``experiments report``)."""
    import json

    data = {"name": o.name, "title": o.title, "renderer": o.renderer, "date": time.strftime("%Y-%m-%d"),
            "command": command_line(o.name), "size_name": o.size_name,
            "sizes": sort_sizes({r[o.size_name] for r in o.rows if r.get(o.size_name) is not None}),
            "seconds": o.seconds, "notes": o.notes,
            "claims": [{"text": c.text, "paper": c.paper, "measured": c.measured, "how": c.how, "kind": c.kind}
                       for c in o.claims]}
    o.csv.with_suffix(".claims.json").write_text(json.dumps(data, indent=1, default=str))


def write_csv(path: Path, rows: list) -> None:
    keys = []
    for r in rows:
        for k in r:
            if k not in keys:
                keys.append(k)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow(r)


def print_outcome(exp: Experiment, o: Outcome, verbose: bool = True) -> None:
    """The table (every row with ``verbose``, else only a short one), the claims, the notes."""
    print(f"\n{exp.paper}: {exp.title}  [{o.renderer}]")
    if o.rows and not verbose and len(o.rows) > TABLE_ROWS:
        print(f"{len(o.rows)} rows in {o.csv} (--verbose prints them)")
    elif o.rows:
        keys = list(o.rows[0].keys())
        widths = [max(len(k), *(len(fmt(r.get(k, ""))) for r in o.rows)) for k in keys]
        print("  ".join(k.rjust(w) for k, w in zip(keys, widths)))
        for r in o.rows:
            print("  ".join(fmt(r.get(k, "")).rjust(w) for k, w in zip(keys, widths)))
    if o.claims:
        print("\nclaims (paper vs here):")
        for c in o.claims:
            print(f"  - {c.text}: paper {c.paper}; here {c.measured}" + (f" ({c.how})" if c.how else "")
                  + ("" if c.kind == "measured" else f" [{c.kind}]"))
    for n in o.notes:
        print(f"  note: {n}")
    print(f"\nwrote {o.csv} and {o.png} ({o.seconds:.1f} s)")


def line_plot(rows: list, ax, x: str, y: str, series: str, label_map: dict | None = None,
              logy: bool = False) -> None:
    """Plot y against x, one line per value of the ``series`` column."""
    groups: dict = {}
    for r in rows:
        if r.get(y) in (None, ""):
            continue
        groups.setdefault(r[series], []).append((r[x], r[y]))
    for name, pts in groups.items():
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=(label_map or {}).get(name, name))
    if logy:
        ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)


def median_by(rows: list, key: str, where: dict) -> float | None:
    """The value of ``key`` in the row matching ``where`` (None if absent)."""
    for r in rows:
        if all(r.get(k) == v for k, v in where.items()):
            return r.get(key)
    return None


def cli(exp: Experiment) -> None:
    sys.exit(exp.main())
