"""Compare the installed packages with the versions the suite was last green with.

    python tools/versions.py            # print each pinned package: recorded, installed
    python tools/versions.py --write    # record the installed versions in constraints.txt

``make test`` installs exactly the versions of ``constraints.txt`` (pip's ``-c``); ``make
test-latest`` installs the newest releases into ``.venv-latest`` and prints what differs from the
record first, so that a failure there names the releases that are new. After ``make test-latest``
passes, ``make lock`` records its versions.
"""
from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

CONSTRAINTS = Path(__file__).resolve().parents[1] / "constraints.txt"
MARKER = '; python_version >= "3.11"'
HEADER = """\
# The exact versions `make test` installs: the suite was last green with these (CI, 2-core
# machine, Mesa llvmpipe). `make test-latest` tries the newest releases instead; once it passes,
# `make lock` rewrites this file from them. The pins apply on Python 3.11 and newer (numpy 2.4
# needs 3.11); older Pythons get the newest releases that support them.
"""


def recorded() -> dict:
    out = {}
    for line in CONSTRAINTS.read_text().splitlines():
        m = re.match(r"\s*([A-Za-z0-9_.\-]+)==([^\s;]+)", line)
        if m:
            out[m.group(1).lower()] = m.group(2)
    return out


def installed(name: str):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def write() -> None:
    names = sorted({(d.metadata["Name"] or "").lower() for d in metadata.distributions()} - {"", "gpgpu", "pip",
                                                                                         "setuptools", "wheel"})
    lines = [f"{n}=={installed(n)}{MARKER}" for n in names]
    CONSTRAINTS.write_text(HEADER + "\n".join(lines) + "\n")
    print(f"recorded {len(lines)} versions in {CONSTRAINTS}")


def compare() -> int:
    rows = [(n, v, installed(n)) for n, v in sorted(recorded().items())]
    changed = [r for r in rows if r[1] != r[2]]
    print(f"python {sys.version.split()[0]}; {len(rows)} pinned packages, {len(changed)} differ from constraints.txt")
    for n, v, got in changed:
        print(f"  {n}: recorded {v}, installed {got or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(write() if "--write" in sys.argv[1:] else compare())
