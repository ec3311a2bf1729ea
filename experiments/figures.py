"""What the measuring tools share (``python -m experiments.<tool>``, beyond the papers'
experiments): a CSV under ``docs/figures`` whose every row names the renderer and the date, and
the ``--out`` and ``--markdown`` flags that go with it."""
from __future__ import annotations

import argparse
import csv
import datetime
from contextlib import contextmanager
from pathlib import Path


def renderer() -> str:
    """GL_RENDERER of this process's context."""
    from gpgpu import context

    return context.get_context().info.get("GL_RENDERER", "unknown")


def tool_parser(doc: str) -> argparse.ArgumentParser:
    """A tool's argument parser, described by the first paragraph of its module notes ``doc``,
    with ``--out`` (the CSV to write) and ``--markdown`` (print a CSV as the tool's table)."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--out", default=None, help="the CSV to write (default docs/figures/<tool>_<date>.csv)")
    ap.add_argument("--markdown", default=None, help="print a CSV of this experiment as a markdown table")
    return ap


def printed_markdown(args, markdown) -> bool:
    """Whether ``--markdown`` was given; if so its CSV has been printed as ``markdown(path)``."""
    if args.markdown:
        print(markdown(args.markdown))
    return bool(args.markdown)


@contextmanager
def rows_to(out, stem: str, fields, extrasaction: str = "raise"):
    """Open ``out`` (default ``docs/figures/<stem>_<date>.csv``) for the CSV of ``fields`` and
    yield ``write(row)``, which adds the renderer and the date to the row, writes and flushes
    it; "wrote PATH" is printed at the end."""
    name, date = renderer(), datetime.date.today().isoformat()
    path = Path(out or f"docs/figures/{stem}_{date}.csv")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, extrasaction=extrasaction)
        writer.writeheader()

        def write(row: dict) -> None:
            writer.writerow(dict(row, renderer=name, date=date))
            f.flush()

        yield write
    print(f"wrote {path}")
