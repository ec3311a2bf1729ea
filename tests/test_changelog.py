"""CHANGELOG.md: newest first, each entry headed by its version and date."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADING = re.compile(r"^## (\d+\.\d+\.\d+(?:\.dev(\d+))?) \((\d{4}-\d\d-\d\d)\): \S")


def test_every_entry_has_a_version_and_a_date_newest_first():
    heads = [line for line in (ROOT / "CHANGELOG.md").read_text().splitlines() if line.startswith("## ")]
    assert heads
    bad = [h for h in heads if not HEADING.match(h)]
    assert not bad, f"CHANGELOG entries without '## VERSION (YYYY-MM-DD): what': {bad}"
    found = [HEADING.match(h) for h in heads]
    devs = [int(m.group(2)) for m in found]
    dates = [m.group(3) for m in found]
    assert devs == sorted(devs, reverse=True) and len(set(devs)) == len(devs), devs
    assert dates == sorted(dates, reverse=True), dates
    version = re.search(r"^version = (\S+)", (ROOT / "setup.cfg").read_text(), re.M).group(1)
    assert found[0].group(1).startswith(version), (found[0].group(1), version)
