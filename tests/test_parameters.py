"""Parameter lists a reader can hold: no private function in gpgpu/ takes more than PRIVATE_LIMIT
parameters (related values travel as a record: a dataclass or a named tuple), and a public one
with more than PRIVATE_LIMIT takes at most POSITIONAL of them positionally, the rest keyword-only
after ``*`` (as scipy's ``cg(A, b, x0=None, *, rtol=...)``). ``self`` and ``cls`` are not counted;
``*args`` and ``**kwargs`` count one each."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRIVATE_LIMIT = 8
POSITIONAL = 4


def signatures():
    """(where, name, parameter count, positional count) of every function in gpgpu/."""
    for path in sorted((ROOT / "gpgpu").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                positional = [x.arg for x in a.posonlyargs + a.args if x.arg not in ("self", "cls")]
                count = len(positional) + len(a.kwonlyargs) + bool(a.vararg) + bool(a.kwarg)
                yield f"{path.relative_to(ROOT)}:{node.lineno}", node.name, count, len(positional)


def test_no_private_function_takes_more_than_the_limit():
    long = [f"{where} {name} ({n})" for where, name, n, _ in signatures()
            if name.startswith("_") and not name.startswith("__") and n > PRIVATE_LIMIT]
    assert not long, (f"private functions with more than {PRIVATE_LIMIT} parameters (pass a record): "
                      + ", ".join(long))


def test_public_options_are_keyword_only():
    loose = [f"{where} {name} ({p} positional of {n})" for where, name, n, p in signatures()
             if not name.startswith("_") and n > PRIVATE_LIMIT and p > POSITIONAL]
    assert not loose, (f"public functions with more than {PRIVATE_LIMIT} parameters must take their options "
                       f"keyword-only after at most {POSITIONAL} positional: " + ", ".join(loose))
