"""The import graph of ``gpgpu`` and its floors (beyond the papers: how the code is built).

A module's floor is 0 when it imports no other module of the package, else one above the
highest module it imports, counting imports inside functions too (they are dependencies all the
same). The graph has no circle; ``tests/test_floors.py`` checks it, and
``python -m experiments.render`` draws the floors into docs/architecture.md.

    python -m experiments.floors            # the floors as text, and any circle
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def modules(root: Path = ROOT, package: str = "gpgpu") -> dict:
    """Module name -> its file, for every .py file of the package."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        name = ".".join(path.relative_to(root).with_suffix("").parts)
        found[name[: -len(".__init__")] if name.endswith(".__init__") else name] = path
    return found


def import_graph(root: Path = ROOT, package: str = "gpgpu") -> dict:
    """Module -> {module it imports: "module" (at import time) or "function" (inside a function
    only)}. ``from pkg import sub`` counts as importing ``pkg.sub``; ``from pkg import name`` as
    importing ``pkg``."""
    mods = modules(root, package)
    graph = {m: {} for m in mods}
    for m, path in mods.items():
        here = m.split(".") if path.name == "__init__.py" else m.split(".")[:-1]

        def visit(node, inside):
            for child in ast.iter_child_nodes(node):
                nested = inside or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
                targets = []
                if isinstance(child, ast.ImportFrom):
                    base = (".".join(here[: len(here) - child.level + 1] + ([child.module] if child.module else []))
                            if child.level else child.module)
                    subs = [f"{base}.{a.name}" for a in child.names if f"{base}.{a.name}" in mods]
                    targets = subs + ([base] if len(subs) < len(child.names) else [])
                elif isinstance(child, ast.Import):
                    targets = [a.name for a in child.names]
                for t in targets:
                    if t in mods and t != m and graph[m].get(t) != "module":
                        graph[m][t] = "function" if nested else "module"
                visit(child, nested)

        visit(ast.parse(path.read_text()), False)
    return graph


def circles(graph: dict) -> list:
    """The strongly connected groups of more than one module (Tarjan's algorithm), sorted."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph) + 100))
    try:
        for v in graph:
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(out)


def floors(graph: dict) -> dict:
    """Module -> floor (0: imports nothing of the package). Raises on a circle."""
    found = circles(graph)
    if found:
        raise ValueError(f"import circles, so no floors: {found}")
    floor: dict = {}

    def height(m):
        if m not in floor:
            floor[m] = 1 + max((height(t) for t in graph[m]), default=-1)
        return floor[m]

    for m in graph:
        height(m)
    return floor


def markdown(_paths=()) -> str:
    """The floors as a table: floor, its modules (each with what it stands on one floor down)."""
    graph = import_graph()
    floor = floors(graph)
    lines = ["| floor | modules |", "| ---: | --- |"]
    for f in range(max(floor.values()) + 1):
        names = sorted(m for m in floor if floor[m] == f)
        lines.append(f"| {f} | " + ", ".join(f"`{m.removeprefix('gpgpu.') or 'gpgpu'}`" for m in names) + " |")
    inner = sum(kind == "function" for deps in graph.values() for kind in deps.values())
    lines += ["", f"{len(graph)} modules on {max(floor.values()) + 1} floors; "
              f"{sum(len(d) for d in graph.values())} imports between them, {inner} of them inside functions."]
    return "\n".join(lines)


def main(argv=None) -> int:
    graph = import_graph()
    found = circles(graph)
    if found:
        print("circles: " + "; ".join(" <-> ".join(g) for g in found))
        return 1
    print(markdown())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
