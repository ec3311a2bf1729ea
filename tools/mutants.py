"""A mutation run: plant one small bug at a time in the given modules, run the tests that cover
them, and say which planted bugs no test caught.

    python tools/mutants.py --module gpgpu/lp/units.py --tests tests/test_lp_certificate.py \\
        --sample 20 --seed 0 --out mutants.json

Each mutant changes one site of the module's code (its docstrings and logging untouched): a
comparison turned (``<`` into ``<=``, ``==`` into ``!=``), an arithmetic operator swapped
(``+``/``-``, ``*``/``/``), ``and``/``or`` swapped, ``not`` dropped, a number changed (0 and 1
swapped, others times 2), or a ``return`` of a name replaced by ``return None``. The mutant is
written into a copy of the checkout (``--copy``), never into the working tree, and the tests run
there with ``-x`` and a time limit. A mutant that no test fails "survives"; which survivors change
an answer a user sees (and which are equivalent) is a judgement the run's report leaves to its
reader, with the changed line shown.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

SWAP_COMPARE = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
                ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
SWAP_BINARY = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult}


def _docstring_nodes(tree) -> set:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(
                    first.value.value, str):
                out.add(id(first.value))
    return out


def sites(tree) -> list:
    """(kind, node id, line) of every mutable site of the module's functions."""
    skip = _docstring_nodes(tree)
    out = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Compare) and type(node.ops[0]) in SWAP_COMPARE:
                out.append(("compare", node))
            elif isinstance(node, ast.BinOp) and type(node.op) in SWAP_BINARY:
                out.append(("binary", node))
            elif isinstance(node, ast.BoolOp):
                out.append(("boolean", node))
            elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
                out.append(("not", node))
            elif isinstance(node, ast.Constant) and type(node.value) in (int, float) and \
                    not isinstance(node.value, bool) and id(node) not in skip:
                out.append(("number", node))
            elif isinstance(node, ast.Return) and isinstance(node.value, ast.Name):
                out.append(("return", node))
    seen, unique = set(), []
    for kind, node in out:
        if id(node) not in seen:
            seen.add(id(node))
            unique.append((kind, node))
    return unique


class _Mutate(ast.NodeTransformer):
    def __init__(self, target):
        self.target = target

    def visit(self, node):
        if node is self.target:
            return _mutated(node)
        return super().visit(node)


def _mutated(node):
    if isinstance(node, ast.Compare):
        node.ops = [SWAP_COMPARE[type(node.ops[0])]()] + node.ops[1:]
    elif isinstance(node, ast.BinOp):
        node.op = SWAP_BINARY[type(node.op)]()
    elif isinstance(node, ast.BoolOp):
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif isinstance(node, ast.UnaryOp):
        return node.operand
    elif isinstance(node, ast.Constant):
        v = node.value
        node.value = 1 if v == 0 else 0 if v == 1 else v * 2
    elif isinstance(node, ast.Return):
        node.value = ast.Constant(None)
    return node


def mutant(source: str, index: int) -> tuple:
    """(the module's text with site ``index`` mutated, what changed: the site's line before and
    after)."""
    tree = ast.parse(source)
    kind, node = sites(tree)[index]
    before = ast.unparse(node)
    line = node.lineno                       # the line in the module as written
    original = source.splitlines()[line - 1].strip()
    replaced = _mutated(ast.parse(before, mode="eval").body if kind != "return" else ast.parse(before).body[0])
    after = ast.unparse(replaced)
    tree = _Mutate(node).visit(tree)
    ast.fix_missing_locations(tree)
    return ast.unparse(tree), {"kind": kind, "line": line, "source": original, "before": before, "after": after}


def run_one(copy: Path, module: str, text: str, tests: list, timeout: int) -> tuple:
    """(killed?, seconds, the failing test or why) for one mutant text of ``module`` in ``copy``."""
    target = copy / module
    original = target.read_text()
    target.write_text(text)
    t0 = time.time()
    try:
        proc = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
                              cwd=copy, capture_output=True, text=True, timeout=timeout,
                              env=dict(os.environ, PYTHONPATH=str(copy)))
        failed = [ln for ln in proc.stdout.splitlines() if ln.startswith(("FAILED", "ERROR"))]
        return proc.returncode != 0, time.time() - t0, failed[0] if failed else proc.stdout[-200:]
    except subprocess.TimeoutExpired:
        return True, time.time() - t0, f"timeout {timeout} s (counted as killed: the tests hang)"
    finally:
        target.write_text(original)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--module", action="append", required=True, help="a module's path (repeat for several)")
    ap.add_argument("--tests", nargs="+", required=True, help="the test files or node ids to run")
    ap.add_argument("--sample", type=int, default=20, help="mutants a module (a random sample of its sites)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--copy", default="/tmp/gpgpu-mutants", help="the checkout copy the mutants are run in")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--out", default=None, help="a JSON file for the results")
    args = ap.parse_args(argv)
    root = Path(__file__).resolve().parent.parent
    copy = Path(args.copy)
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".git", ".venv*", "site", "__pycache__", "results"))
    rng = random.Random(args.seed)
    results = []
    for module in args.module:
        source = (root / module).read_text()
        count = len(sites(ast.parse(source)))
        for index in sorted(rng.sample(range(count), min(args.sample, count))):
            text, what = mutant(source, index)
            killed, seconds, why = run_one(copy, module, text, args.tests, args.timeout)
            row = dict(module=module, site=index, killed=killed, seconds=round(seconds, 1), why=why, **what)
            results.append(row)
            print(f"{'killed  ' if killed else 'SURVIVED'} {module}:{what['line']} {what['kind']}: "
                  f"{what['before'][:70]!r} -> {what['after'][:70]!r}  ({seconds:.0f} s)", flush=True)
    killed = sum(r["killed"] for r in results)
    print(f"{killed} of {len(results)} killed")
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
