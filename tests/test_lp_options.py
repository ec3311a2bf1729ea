"""gpgpu.lp's options table (gpgpu.lp.options): every option a reader takes is in the table under
that reader and nothing else is; every preset sets only options its scope reads; solve's and
linprog's option lists are the table's."""
import inspect

import pytest

import gpgpu.lp as lp
from gpgpu.lp import PRESETS
from gpgpu.lp.backends import backend_class
from gpgpu.lp.linprog import LINPROG_OPTIONS
from gpgpu.lp.options import METHOD_OPTIONS, OPTIONS, READERS, names_read_by

#: each back-end reader and the class whose keyword arguments it is
CLASSES = {"mehrotra/gpu": ("mehrotra", "gpu"), "mehrotra/numpy": ("mehrotra", "numpy64"),
           "matrix-free/gpu": ("matrix-free", "gpu"), "matrix-free/numpy": ("matrix-free", "numpy64")}
#: a preset row's scope -> the readers whose options it may set
SCOPES = {"any": set(READERS), "mehrotra": {"solve", "mehrotra", "mehrotra/gpu", "mehrotra/numpy"},
          "mehrotra/gpu": {"solve", "mehrotra", "mehrotra/gpu"}, "mehrotra/numpy": {"solve", "mehrotra", "mehrotra/numpy"},
          "matrix-free": {"solve", "matrix-free", "matrix-free/gpu", "matrix-free/numpy"},
          "matrix-free/gpu": {"solve", "matrix-free", "matrix-free/gpu"}}


def _init_options(cls) -> set:
    params = inspect.signature(cls.__init__).parameters
    return {p for p in params if p not in ("self", "problem")
            and params[p].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD}


@pytest.mark.parametrize("reader", list(CLASSES))
def test_every_back_end_option_is_in_the_table(reader):
    assert _init_options(backend_class(*CLASSES[reader])) == set(names_read_by(reader))


def test_solve_and_linprog_read_the_table():
    params = inspect.signature(lp.solve).parameters
    own = {p for p in params if params[p].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD} - {"problem", "method",
                                                                                                "preset"}
    assert own <= set(names_read_by("solve"))
    assert set(LINPROG_OPTIONS) == set(names_read_by("solve"))
    assert set(METHOD_OPTIONS["mehrotra"]) == {"reg_min", "reg_max"}
    assert set(METHOD_OPTIONS["matrix-free"]) | {"adaptive"} == set(names_read_by("matrix-free"))
    # the table's names are unique, and each has a reader
    assert len({o.name for o in OPTIONS}) == len(OPTIONS)
    assert all(o.readers and set(o.readers) <= set(READERS) and o.doc and o.values for o in OPTIONS)


@pytest.mark.parametrize("preset", list(PRESETS))
def test_presets_set_only_options_their_scope_reads(preset):
    readers = {o.name: set(o.readers) for o in OPTIONS}
    for scope, row in PRESETS[preset].items():
        assert scope in SCOPES, scope
        for name in row:
            assert name in readers, f"{preset}/{scope}: {name!r} is not in gpgpu.lp.options.OPTIONS"
            assert readers[name] & SCOPES[scope], f"{preset}/{scope}: {name!r} is read by {readers[name]}"


def test_an_unknown_reader_is_named():
    with pytest.raises(ValueError, match="unknown reader 'gpu'"):
        names_read_by("gpu")


def test_cg_options_table_is_cgs_signature_and_covers_its_presets():
    import importlib

    cg = importlib.import_module("gpgpu.cg")
    params = inspect.signature(cg.cg).parameters
    assert [o.name for o in cg.OPTIONS] and {o.name for o in cg.OPTIONS} == set(params) - {"A", "b"}
    names = {o.name for o in cg.OPTIONS}
    assert set(cg.PRESETS) == set(cg.PRESET_FORMATS)
    for preset, row in cg.PRESETS.items():
        assert set(row) <= names, preset
    assert "format" in names and all(o.doc and o.values for o in cg.OPTIONS)


def test_solve_and_linprog_check_names_against_the_table():
    """solve and linprog take exactly the options the table gives the method and back end: one
    the chosen back end does not read is refused by name before anything is built, and one the
    table gives it (adaptive, read by the matrix-free method) passes linprog's check."""
    import pytest

    from gpgpu.lp import solve
    from gpgpu.lp.linprog import _check_options
    from gpgpu.lp.options import names_taken

    assert "substitution" in names_taken("mehrotra", "gpu")
    assert "substitution" not in names_taken("mehrotra", "numpy64")
    assert "dtype" not in names_taken("mehrotra", "numpy32")          # the back end's name sets it
    assert names_taken("mehrotra", object()) is None                  # an instance: its own check
    with pytest.raises(TypeError, match="'substitution'"):
        solve("afiro", backend="numpy64", substitution="inner")
    assert _check_options({"adaptive": False}, "matrix-free") == {"adaptive": False}
    with pytest.raises(ValueError, match="'substitution'"):
        _check_options({"backend": "numpy64", "substitution": "inner"}, "mehrotra")


def test_the_back_end_names_are_the_registrys():
    """BACKENDS and MF_BACKENDS (the names the lower modules use) are the rows of the one
    registry (docs/architecture.md: a new back end is a row of REGISTRY and its name there)."""
    from gpgpu.lp.backends import BACKENDS, MF_BACKENDS, REGISTRY

    assert set(BACKENDS) == {name for method, name in REGISTRY if method == "mehrotra"}
    assert set(MF_BACKENDS) == {name for method, name in REGISTRY if method == "matrix-free"}
