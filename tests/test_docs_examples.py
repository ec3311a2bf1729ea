"""Every Python example of the README and the docs pages runs as written.

Each page's ```python blocks run in order in one namespace (as a reader pastes them), from an
empty folder outside the clone (a path under the clone, such as gpgpu/data/..., would work there
only), with DeprecationWarning an error: the first thing a user copies must work. A
block right after the comment ``<!-- example: long ... -->`` runs only with GPGPU_LONG_TESTS=1.
"""
import os
import re
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted(p for p in [ROOT / "README.md", *ROOT.glob("docs/**/*.md")] if "```python" in p.read_text())
BLOCK = re.compile(r"(<!-- example: long[^>]*-->\s*\n)?```python\n(.*?)```", re.S)


def test_the_pages_have_examples():
    names = {p.relative_to(ROOT).as_posix() for p in PAGES}
    assert {"README.md", "docs/guide/lp.md", "docs/guide/sparse.md", "docs/guide/dense.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_examples_of_a_page_run(page, ctx, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    namespace = {}
    ran = 0
    for k, (long, code) in enumerate(BLOCK.findall(page.read_text())):
        if long and not os.environ.get("GPGPU_LONG_TESTS"):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            exec(compile(code, f"{page.name} example {k}", "exec"), namespace)
        ran += 1
    if not ran:
        pytest.skip("only long examples on this page; set GPGPU_LONG_TESTS=1")
