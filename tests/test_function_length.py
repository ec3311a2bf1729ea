"""No function in gpgpu/ is longer than LIMIT lines of code (its docstring not counted), so that
each reads top to bottom on one screen and its parts have names. The exceptions are drivers that
lay a paper's listing out step by step, where splitting would hide the listing; each is named in
EXEMPT with its reason (docs/architecture.md lists them too)."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 120

#: "module path:function" -> why it may be longer than LIMIT
EXEMPT: dict = {}


def code_lines(node) -> int:
    """Lines from the first statement after the docstring to the function's end."""
    body = node.body
    first = body[0]
    if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)):
        if len(body) == 1:
            return 0
        first = body[1]
    start = min([first.lineno] + [d.lineno for d in getattr(first, "decorator_list", [])])
    return node.end_lineno - start + 1


def functions():
    for path in sorted((ROOT / "gpgpu").rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield f"{path.relative_to(ROOT)}:{node.name}", code_lines(node)


def test_no_function_is_longer_than_the_limit():
    long = {name: n for name, n in functions() if n > LIMIT and name not in EXEMPT}
    assert not long, (f"functions over {LIMIT} lines of code (split them into named parts, or name them in "
                      f"EXEMPT with the paper's listing they lay out): "
                      + ", ".join(f"{k} ({v})" for k, v in sorted(long.items(), key=lambda kv: -kv[1])))


def test_exemptions_are_still_needed():
    lengths = dict(functions())
    stale = [name for name in EXEMPT if lengths.get(name, 0) <= LIMIT]
    assert not stale, f"EXEMPT names functions that are gone or short now: {stale}"


def test_the_count_leaves_out_the_docstring(tmp_path):
    source = 'def f():\n    """doc\n\n    more doc"""\n    a = 1\n    return a\n'
    node = ast.parse(source).body[0]
    assert code_lines(node) == 2
