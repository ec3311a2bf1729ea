"""Every public function and class of ``gpgpu``, ``gpgpu.lp`` and ``gpgpu.cg`` has a numpydoc
docstring with an Examples section, and the examples run (doctest, on the GL context of the
suite: llvmpipe in CI, any GPU on a lent machine), so that what a user copies works. Printed
values are rounded or compared with a tolerance, so that they hold on every renderer."""
import doctest
import importlib
import inspect

import numpy as np
import pytest

import gpgpu
import gpgpu.lp

PACKAGES = (gpgpu, gpgpu.lp, importlib.import_module("gpgpu.cg"))


def public_callables():
    seen, out = set(), []
    for package in PACKAGES:
        for name in package.__all__:
            obj = getattr(package, name)
            if inspect.ismodule(obj) or not callable(obj) or id(obj) in seen:
                continue
            seen.add(id(obj))
            out.append((f"{package.__name__}.{name}", obj))
    return out


CALLABLES = public_callables()


@pytest.mark.parametrize("name,obj", CALLABLES, ids=[n for n, _ in CALLABLES])
def test_the_docstring_has_examples_that_run(name, obj, ctx):
    doc = inspect.getdoc(obj) or ""
    assert "Examples\n--------" in doc and ">>>" in doc, f"{name}: no Examples section with a doctest"
    tests = doctest.DocTestFinder(recurse=False).find(obj, name, globs={"np": np, "gpgpu": gpgpu})
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    with np.printoptions(precision=4, suppress=True, legacy=False):
        for t in tests:
            runner.run(t)
    failed, attempted = runner.summarize(verbose=False)
    assert attempted and not failed, f"{name}: {failed} of {attempted} doctest lines failed (see the output above)"


@pytest.mark.parametrize("package", PACKAGES, ids=[p.__name__ for p in PACKAGES])
def test_the_package_docstring_shows_every_table_and_module(package, ctx):
    """The names that are not callables (the tables, constants and modules a package exports)
    are shown in the package docstring's Examples, which run as the functions' do."""
    doc = package.__doc__ or ""
    assert "Examples\n--------" in doc, package.__name__
    tests = doctest.DocTestFinder(recurse=False).find(package, package.__name__, globs={})
    source = "\n".join(ex.source for t in tests for ex in t.examples)
    missing = [n for n in package.__all__ if (inspect.ismodule(getattr(package, n)) or not callable(getattr(package, n)))
               and n not in source]
    assert not missing, f"{package.__name__}: no example shows {missing}"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for t in tests:
        runner.run(t)
    failed, attempted = runner.summarize(verbose=False)
    assert attempted and not failed, f"{package.__name__}: {failed} of {attempted} doctest lines failed"
