"""Compare the installed packages with the versions the suite was last green with.

    python tools/versions.py            # print each pinned package: recorded, installed
    python tools/versions.py --write    # record the installed versions in constraints.txt

``make test`` installs exactly the versions of ``constraints.txt`` (pip's ``-c``); ``make
test-latest`` installs the newest releases into ``.venv-latest`` and prints what differs from the
record first, so that a failure there names the releases that are new. After ``make test-latest``
passes, ``make lock`` records its versions.

The record holds every extra's packages (``make lock`` runs where they are all installed). Where
an extra of setup.cfg is not installed (``make test`` leaves out ``docs``), the pinned packages
that are not installed and that nothing installed needs are its own: they are not differences,
and one line names the extra and what was left out.
"""
from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONSTRAINTS = ROOT / "constraints.txt"
SETUP_CFG = ROOT / "setup.cfg"
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


def _norm(name: str) -> str:
    """A package name as pip compares them: lower case, runs of - _ . as one -."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(text: str):
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", text)
    return _norm(m.group(1)) if m else None


def _setup_cfg_list(section: str) -> dict:
    """{key: [requirement names]} of a section of setup.cfg whose values are requirement lists."""
    import configparser

    cp = configparser.ConfigParser(interpolation=None)
    cp.read(SETUP_CFG)
    if not cp.has_section(section):
        return {}
    return {key: [n for line in value.splitlines() if (n := _requirement_name(line.split("#")[0]))]
            for key, value in cp.items(section)}


def extras() -> dict:
    """{extra: [the names of its requirements]}, setup.cfg's extras_require."""
    return _setup_cfg_list("options.extras_require")


def install_requires() -> list:
    """The names of gpgpu's own requirements, setup.cfg's install_requires."""
    return _setup_cfg_list("options").get("install_requires", [])


def required_names() -> set:
    """The names the installed distributions require (their Requires-Dist; a requirement of one
    of their extras left out, other markers evaluated for this Python where packaging imports)."""
    try:
        from packaging.requirements import Requirement
    except ImportError:
        Requirement = None
    out = set()
    for d in metadata.distributions():
        for text in d.requires or ():
            if Requirement is None:
                if ";" in text and "extra" in text.split(";", 1)[1]:
                    continue
                name = _requirement_name(text)
            else:
                try:
                    r = Requirement(text)
                except Exception:
                    name = _requirement_name(text)
                else:
                    try:
                        if r.marker is not None and not r.marker.evaluate({"extra": ""}):
                            continue
                    except Exception:
                        pass
                    name = _norm(r.name)
            if name:
                out.add(name)
    return out


def write() -> None:
    names = sorted({(d.metadata["Name"] or "").lower() for d in metadata.distributions()} - {"", "gpgpu", "pip",
                                                                                         "setuptools", "wheel"})
    lines = [f"{n}=={installed(n)}{MARKER}" for n in names]
    CONSTRAINTS.write_text(HEADER + "\n".join(lines) + "\n")
    print(f"recorded {len(lines)} versions in {CONSTRAINTS}")


def compare() -> int:
    """Print how the installed versions differ from the record: one line a difference, and one
    line for the extras not installed, whose own pinned packages are not differences."""
    rows = [(n, v, installed(n)) for n, v in sorted(recorded().items())]
    absent = sorted(e for e, names in extras().items() if any(installed(n) is None for n in names))
    needed = set(required_names()) | {_norm(n) for n in install_requires()}
    needed |= {_norm(n) for e, names in extras().items() if e not in absent for n in names}
    theirs = [r for r in rows if absent and r[2] is None and _norm(r[0]) not in needed]
    changed = [r for r in rows if r[1] != r[2] and r not in theirs]
    print(f"python {sys.version.split()[0]}; {len(rows) - len(theirs)} pinned packages, {len(changed)} differ "
          "from constraints.txt")
    if theirs:
        print(f"  extra{'s' if len(absent) > 1 else ''} {', '.join(absent)} not installed: {len(theirs)} pinned "
              f"packages that nothing installed needs left out ({', '.join(n for n, _, _ in theirs)})")
    for n, v, got in changed:
        print(f"  {n}: recorded {v}, installed {got or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(write() if "--write" in sys.argv[1:] else compare())
