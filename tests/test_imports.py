"""The dense modules import in one direction (dense_common <- blas2 <- blocked <- cholesky, lu):
no import cycle among them, counting imports inside functions too, and each imports on its own
in any order."""
import ast
import itertools
import json
import subprocess
import sys
from pathlib import Path

import gpgpu

PACKAGE = Path(gpgpu.__file__).resolve().parent
DENSE = ("gpgpu.blocked", "gpgpu.cholesky", "gpgpu.lu", "gpgpu.blas2", "gpgpu.dense_common")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict:
    """gpgpu.X -> the gpgpu modules it imports anywhere in its text (module level or inside a
    function), the package itself left out (every submodule's import runs it first)."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        here = name.split(".") if is_package else name.split(".")[:-1]
        found = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = here[:len(here) - node.level + 1] if node.level else []
                stem = ".".join(base + ([node.module] if node.module else []))
                # "from . import packed" imports the module gpgpu.packed; "from .lu import lu" gpgpu.lu
                targets = [stem] + [f"{stem}.{a.name}" for a in node.names]
            for t in targets:
                if t in modules and t != "gpgpu":
                    found.add(t)
        graph[name] = found - {name}
    return graph


def cycles(graph: dict) -> list:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle_through_the_dense_modules():
    graph = import_graph()
    assert set(DENSE) <= set(graph)
    assert "gpgpu.passes" in graph["gpgpu.blocked"]             # the graph sees imports at all
    tangled = [c for c in cycles(graph) if set(c) & set(DENSE)]
    assert tangled == [], f"import cycles through the dense modules: {tangled}"
    # the floors: the faithful entry points above blocked, blocked above the shared helpers
    for low, high in (("gpgpu.blocked", "gpgpu.cholesky"), ("gpgpu.blocked", "gpgpu.lu"),
                      ("gpgpu.dense_common", "gpgpu.blocked"), ("gpgpu.dense_common", "gpgpu.blas2")):
        assert high not in graph[low], f"{low} imports {high}, a floor above it"


def test_cycle_finder_sees_a_function_level_cycle():
    # the planted bug: a lazy import back, as cholesky's of blocked was
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


_ORDERS = r"""
import importlib, itertools, json, sys, types
names = json.loads(sys.argv[1])
root = sys.argv[2]
failures = []
for order in itertools.permutations(names):
    for m in [m for m in sys.modules if m == "gpgpu" or m.startswith("gpgpu.")]:
        del sys.modules[m]
    # the package without its __init__ (which imports everything in its own order)
    pkg = types.ModuleType("gpgpu")
    pkg.__path__ = [root]
    sys.modules["gpgpu"] = pkg
    try:
        for name in order:
            importlib.import_module(name)
    except Exception as exc:
        failures.append([list(order), repr(exc)])
print(json.dumps(failures))
"""


def test_each_dense_module_imports_first_in_every_order():
    names = ["gpgpu.blocked", "gpgpu.cholesky", "gpgpu.lu", "gpgpu.blas2"]
    out = subprocess.run([sys.executable, "-c", _ORDERS, json.dumps(names), str(PACKAGE)],
                         capture_output=True, text=True, timeout=120, cwd=str(PACKAGE.parent))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
    assert len(list(itertools.permutations(names))) == 24
