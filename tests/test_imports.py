"""The dense modules import in one direction (dense_common <- blas2 <- blocked <- cholesky, lu):
no import cycle among them, counting imports inside functions too, and each imports on its own
in any order."""
import itertools
import json
import subprocess
import sys
from pathlib import Path

import gpgpu
from experiments import floors

PACKAGE = Path(gpgpu.__file__).resolve().parent
DENSE = ("gpgpu.blocked", "gpgpu.cholesky", "gpgpu.lu", "gpgpu.blas2", "gpgpu.dense_common")


def import_graph() -> dict:
    """gpgpu.X -> the gpgpu modules it imports anywhere in its text (module level or inside a
    function): experiments.floors' graph."""
    return floors.import_graph()


def cycles(graph: dict) -> list:
    return floors.circles({v: set(graph.get(v, ())) for v in set(graph) | {w for d in graph.values() for w in d}})


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


def _packages():
    """Every gpgpu package (a folder with an __init__.py), by its dotted name."""
    return sorted(".".join(("gpgpu",) + p.parent.relative_to(PACKAGE).parts)
                  for p in PACKAGE.rglob("__init__.py") if "__pycache__" not in p.parts)


def test_no_package_exports_a_private_name():
    import importlib
    names = _packages()
    assert {"gpgpu", "gpgpu.cg", "gpgpu.lp", "gpgpu.show"} <= set(names)
    private = {name: [n for n in getattr(importlib.import_module(name), "__all__", ()) if n.startswith("_")]
               for name in names}
    assert {k: v for k, v in private.items() if v} == {}, "private names in __all__ (tests import them from their module)"
    for name in names:
        module = importlib.import_module(name)
        missing = [n for n in getattr(module, "__all__", ()) if not hasattr(module, n)]
        assert missing == [], f"{name}.__all__ names what it does not define: {missing}"
