"""A griffe extension for the docs build: the docstrings' Sphinx roles as mkdocstrings links.

The docstrings cite other objects the Sphinx way (``:func:`cholesky```, ``:mod:`.mehrotra```,
``:class:`~gpgpu.lp.backend.Backend```), which mkdocstrings would print as they are. After the
package is loaded, each role becomes a cross-reference (``[`cholesky`][gpgpu.cholesky.cholesky]``)
when its target resolves to an object that the API pages render (public, with a docstring),
resolved as Python would from where the docstring is: relative to the module's package for a
leading dot, else in the object's own scopes, its module's names and the whole package. Any
other target (numpy's, a private helper, an attribute without a docstring) becomes plain code,
so that every link the build makes points somewhere and a strict build stays meaningful.
"""
from __future__ import annotations

import re

import griffe

ROLE = re.compile(r":(?:py:)?(?:func|class|mod|meth|attr|data|exc|obj|const):`(~?)([^`<>]+?)(?:\(\))?`")


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


class SphinxRoles(griffe.Extension):
    """Rewrite Sphinx roles in every docstring of the loaded package (see the module notes)."""

    def on_package(self, *, pkg: griffe.Module, loader, **kwargs) -> None:
        self.pkg = pkg
        for obj in self._walk(pkg):
            if obj.docstring is not None and ":" in obj.docstring.value:
                obj.docstring.value = ROLE.sub(lambda m, o=obj: self._replace(m, o), obj.docstring.value)

    def _walk(self, obj):
        yield obj
        for member in list(obj.members.values()):
            if member.is_alias:
                continue
            yield from self._walk(member)

    # -- resolution
    def _get(self, path: str):
        parts = path.split(".")
        if parts[0] != self.pkg.name:
            return None
        obj = self.pkg
        for part in parts[1:]:
            try:
                obj = obj.members[part]
                if obj.is_alias:
                    obj = obj.final_target
            except Exception:  # unknown name, or an alias griffe cannot resolve
                return None
        return obj

    def _module(self, obj):
        return obj if obj.is_module else obj.module

    def _candidates(self, target: str, obj):
        module = self._module(obj)
        if target.startswith("."):
            package = module if module.is_init_module else module.parent
            dots = len(target) - len(target.lstrip("."))
            for _ in range(dots - 1):
                package = package.parent
            yield f"{package.path}.{target.lstrip('.')}"
            return
        scope = obj
        while scope is not None:                  # the object's own scopes, innermost first
            yield f"{scope.path}.{target}"
            scope = scope.parent
        yield target

    def _documented(self, obj) -> bool:
        node = obj
        while node is not None:
            if _private(node.name) or node.name == "__main__":
                return False
            if not node.is_module and not node.docstring:
                return False
            node = node.parent
        return True

    def _replace(self, match, obj) -> str:
        short, target = match.group(1), match.group(2).strip()
        shown = target.lstrip(".").rsplit(".", 1)[-1] if short else target
        for path in self._candidates(target, obj):
            found = self._get(path)
            if found is not None and self._documented(found):
                return f"[`{shown}`][{found.path}]"
        return f"``{shown}``"
