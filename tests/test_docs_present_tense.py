"""User pages (README.md and docs/, CHANGELOG.md aside) say what the software does and what was
measured of it now: no runs numbered, goals, superseded states or issue numbers (those belong in
CHANGELOG.md)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: phrases of a lab notebook, not of a user's page
HISTORY = re.compile(r"\b(first run|second run|third run|predate[sd]?|as it was on|tried and not kept|"
                     r"previous defaults|goals?|issue #?\d+)\b", re.I)


def _pages():
    return [ROOT / "README.md"] + sorted(p for p in (ROOT / "docs").rglob("*.md"))


def test_user_pages_have_no_history_phrases():
    found = []
    for page in _pages():
        for n, line in enumerate(page.read_text().splitlines(), 1):
            m = HISTORY.search(line)
            if m:
                found.append(f"{page.relative_to(ROOT)}:{n}: {m.group(0)!r}")
    assert not found, "history in user pages (move it to CHANGELOG.md):\n" + "\n".join(found)


def test_the_phrases_are_caught():
    for line in ("Goals, first run: fast 0.74", "the results predate the check", "as it was on 2026-11-23",
                 "see issue 47", "The goal is 0.5 s"):
        assert HISTORY.search(line), line
    assert not HISTORY.search("the pass files of the earlier run are deleted first")
