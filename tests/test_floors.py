"""The package's import graph (experiments.floors): no circle, imports inside functions counted
too; and the graph code itself on a hand-made package."""
import textwrap

import pytest

from experiments import floors


def test_the_package_has_no_import_circle():
    graph = floors.import_graph()
    assert "gpgpu.context" in graph and "gpgpu.lp.mehrotra" in graph
    assert floors.circles(graph) == []
    level = floors.floors(graph)
    assert level["gpgpu.errors"] == 0
    assert level["gpgpu.context"] < level["gpgpu.stream"] < level["gpgpu.kernel"] < level["gpgpu.cholesky"]


def _package(tmp_path, files):
    for name, text in files.items():
        path = tmp_path / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return floors.import_graph(tmp_path, "pkg")


def test_a_circle_through_a_function_import_is_found(tmp_path):
    graph = _package(tmp_path, {
        "__init__.py": "from .a import f\n",
        "a.py": "from . import b\n\ndef f():\n    return b.g()\n",
        "b.py": "def g():\n    from .a import f\n    return f\n",
        "c.py": "from .sub import d\n",
        "sub/__init__.py": "",
        "sub/d.py": "import os\nfrom ..a import f\n",
    })
    assert graph["pkg.a"] == {"pkg.b": "module"}
    assert graph["pkg.b"] == {"pkg.a": "function"}
    assert graph["pkg.c"] == {"pkg.sub.d": "module"}          # from pkg.sub import d: the submodule
    assert graph["pkg.sub.d"] == {"pkg.a": "module"}
    assert floors.circles(graph) == [["pkg.a", "pkg.b"]]
    with pytest.raises(ValueError, match="import circles"):
        floors.floors(graph)
    del graph["pkg.b"]["pkg.a"]
    assert floors.floors(graph) == {"pkg": 2, "pkg.a": 1, "pkg.b": 0, "pkg.c": 3, "pkg.sub": 0, "pkg.sub.d": 2}
