"""The teaching page's script (gpgpu/show/page.js) is JavaScript that parses: node's ``--check``
where node is installed, else esprima (the test extra). A syntax error planted in a copy of it
fails both ways."""
import shutil
import subprocess

import pytest

from gpgpu.show.html import page
from gpgpu.show.page_js import PAGE_JS, SCRIPT


def _parse_errors(text: str, tmp_path) -> str:
    """'' when ``text`` parses as a script, else the parser's complaint."""
    node = shutil.which("node") or shutil.which("nodejs")
    if node:
        path = tmp_path / "script.js"
        path.write_text(text, encoding="utf-8")
        r = subprocess.run([node, "--check", str(path)], capture_output=True, text=True)
        return "" if r.returncode == 0 else (r.stderr or r.stdout)
    esprima = pytest.importorskip("esprima", reason="needs node or esprima (pip install -e '.[test]')")
    try:
        esprima.parseScript(text)
    except Exception as exc:              # esprima.Error
        return str(exc)
    return ""


def test_the_script_parses(tmp_path):
    assert _parse_errors(SCRIPT.read_text(encoding="utf-8"), tmp_path) == ""


def test_a_planted_syntax_error_is_caught(tmp_path):
    bad = PAGE_JS.replace("function () {", "function () {{", 1)
    assert bad != PAGE_JS and _parse_errors(bad, tmp_path) != ""


def test_the_page_embeds_the_file_as_it_is():
    assert PAGE_JS == SCRIPT.read_text(encoding="utf-8") and "window.gpgpuPage" in PAGE_JS
    assert page.__module__ == "gpgpu.show.html"


def test_the_shipped_pages_carry_the_current_script():
    """docs/show's pages (the gallery's live pages and the stepping page's example) embed the
    script as it is now: a change of page.js without `make show-pages show-page` fails here."""
    from pathlib import Path

    pages = sorted((Path(__file__).resolve().parents[1] / "docs" / "show").rglob("*.html"))
    assert len(pages) >= 20
    stale = [p.name for p in pages if PAGE_JS not in p.read_text(encoding="utf-8")]
    assert not stale, f"pages written by an older page.js (run make show-pages show-page): {stale}"
