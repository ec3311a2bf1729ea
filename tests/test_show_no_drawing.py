"""``python -m gpgpu.show ... --html --no-pictures`` from a plain ``pip install .``: the page has
no PNG frames, so it is written without matplotlib and Pillow (the drawing extra); the PNG frames
(``--out``, ``--html`` with pictures) still name what is missing. Run in a fresh interpreter whose
imports of matplotlib and PIL fail (a ``sys.meta_path`` blocker)."""
import json
import re
import subprocess
import sys

_BLOCKED = """
import sys
class _Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('matplotlib', 'PIL'):
            raise ImportError('blocked for the test: ' + name)
sys.meta_path.insert(0, _Blocker())
from gpgpu.show.__main__ import main
code = main(sys.argv[1:])
assert not [m for m in sys.modules if m.split('.')[0] in ('matplotlib', 'PIL')]
sys.exit(code)
"""


def _show(*argv):
    return subprocess.run([sys.executable, "-c", _BLOCKED, *argv], capture_output=True, text=True, timeout=600)


def test_a_page_without_pictures_needs_no_drawing_library(tmp_path):
    """The page is written, holds no PNG frame, and its legend has its colours (planted: the
    drawing check before --no-pictures, or matplotlib's colour names in the legend, refuse)."""
    path = tmp_path / "p.html"
    r = _show("reduce-pyramid", "--n", "4", "--html", str(path), "--no-pictures", "--no-progress")
    assert r.returncode == 0, r.stderr
    text = path.read_text(encoding="utf-8")
    assert "data:image/png" not in text
    data = json.loads(re.search(r'<script type="application/json" id="gpgpu-data">(.*?)</script>', text, re.S)[1])
    assert data["passes"] and all(p["png"] is None for p in data["passes"])
    assert 'style="background:#d62728"' in text and 'style="background:#d8bfd8"' in text


def test_pictures_without_the_drawing_library_are_refused_before_the_work(tmp_path):
    r = _show("reduce-pyramid", "--n", "4", "--html", str(tmp_path / "p.html"), "--no-progress")
    assert r.returncode == 2 and "pip install 'gpgpu[experiments]'" in r.stderr
    assert not (tmp_path / "p.html").exists()


def test_the_legends_css_colours_are_matplotlibs():
    """Every colour of the legend has its CSS form without matplotlib, the colour matplotlib
    gives it (planted: a legend colour missing from the table, or another hex)."""
    import pytest

    colors = pytest.importorskip("matplotlib.colors")
    from gpgpu.show import LEGEND
    from gpgpu.show.html import _CSS_COLOURS

    assert {c for c, _, _ in LEGEND} <= set(_CSS_COLOURS)
    assert all(colors.to_hex(c) == v for c, v in _CSS_COLOURS.items())
