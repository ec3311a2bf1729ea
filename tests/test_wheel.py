"""The wheel that ``pip install .`` builds works outside the checkout, and the sdist can rebuild it.

The checkout is copied to a temporary folder (without what .gitignore names: .venv, build/, ...)
and built there, so that the build neither writes build/ and gpgpu.egg-info into the checkout nor
picks up stale files a former build left in build/lib. Three things are built, as a release would:
the sdist (setuptools' PEP 517 hook, what ``python -m build --sdist`` calls), the wheel from the
tree (``pip wheel .``, what ``pip install .`` does) and the wheel from the unpacked sdist (what
``python -m build`` does). Both use the running environment's setuptools (``--no-build-isolation``:
no download; the test extra requires setuptools>=70.1, which builds wheels by itself).

The installed wheel runs in a fresh virtual environment that cannot see the checkout:

* it is made by the base interpreter (``venv`` uses ``sys._base_executable`` even when run from a
  virtual environment) without ``--system-site-packages``;
* numpy, scipy, moderngl, highspy and pip come from the running environment through a ``.pth``
  file listing its site-packages folders and any other folder a dependency is imported from
  (PYTHONPATH's, on the lent GPU machine). A folder named in a .pth file is only appended to
  sys.path: the .pth files inside it are not run, so the editable install's finder
  (``__editable__.gpgpu-*.pth``, which ``make test``'s ``pip install -e`` puts there) stays off,
  and the temporary environment's own site-packages, where the wheel goes, comes first;
* the wheel is installed with ``pip install --no-deps --no-index --ignore-installed`` (nothing
  downloaded; pip leaves the editable gpgpu it can see through the .pth alone);
* the check runs with ``python -I`` (no PYTHONPATH, no user site, not the current directory on
  sys.path) from a folder in tmp_path, without GPGPU_GLSL_DIR and GPGPU_NETLIB_DIR, and asserts
  that gpgpu, its kernels and its NETLIB file all lie in the temporary site-packages.
"""
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: float32's unit roundoff
U = 2.0 ** -24

#: the optimum of NETLIB's afiro (NETLIB's lp/data readme: -4.6475314286E+02)
AFIRO_OPTIMUM = -464.75314286


def _ignored():
    """.gitignore's names (build/, .venv/, __pycache__/, ...) and .git, as shutil patterns."""
    names = {".git", ".venv*"}
    for line in (ROOT / ".gitignore").read_text().splitlines():
        line = line.strip().rstrip("/")
        if line and not line.startswith(("#", "!")) and "/" not in line:
            names.add(line)
    return shutil.ignore_patterns(*sorted(names))


def _run(cmd, cwd, env=None, timeout=600):
    r = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=timeout)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    return r


def _pip_wheel(src: Path, out: Path) -> tuple:
    """(the wheel pip builds from ``src``, the build's output: pip's and the backend's)."""
    out.mkdir()
    r = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
              "--disable-pip-version-check", "-v", "-w", out, src], cwd=src.parent)
    (wheel,) = out.glob("gpgpu-*.whl")
    return wheel, r.stdout + r.stderr


def _files(folder: Path, prefix: str) -> set:
    return {prefix + p.relative_to(folder).as_posix() for p in folder.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}


def _require_setuptools_that_builds_wheels():
    try:
        version = metadata.version("setuptools")
    except metadata.PackageNotFoundError:
        version = None
    parts = [int(p) if p.isdigit() else 0 for p in (version or "0").split(".")[:2]]
    if parts < [70, 1]:
        pytest.fail(f"setuptools {version or '(none)'} in {sys.prefix}: this test builds with the running "
                    "environment's setuptools, which must be 70.1 or newer to build a wheel by itself; "
                    "install the test extra again: pip install -c constraints.txt -e '.[test,experiments,lp]' "
                    "(make test does it when setup.cfg changes)")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    _require_setuptools_that_builds_wheels()
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"
    shutil.copytree(ROOT, src, ignore=_ignored(), symlinks=True)
    sdist_dir = base / "sdist"
    sdist_dir.mkdir()
    r = _run([sys.executable, "-c", "import sys; from setuptools import build_meta; "
              "print(build_meta.build_sdist(sys.argv[1]))", sdist_dir], cwd=src)
    sdist = sdist_dir / r.stdout.strip().splitlines()[-1]
    wheel, log = _pip_wheel(src, base / "dist")
    unpacked = base / "unpacked"
    with tarfile.open(sdist) as tar:
        top = {m.name.split("/")[0] for m in tar.getmembers()}
        tar.extractall(unpacked, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    (top,) = top
    wheel_from_sdist, _ = _pip_wheel(unpacked / top, base / "dist-from-sdist")
    return dict(src=src, sdist=sdist, wheel=wheel, wheel_from_sdist=wheel_from_sdist, log=log)


def test_the_build_says_no_packaging_warning(built):
    """setuptools warns when a folder of the package is absent from setup.cfg's ``packages``
    ("Package would be ignored"): gpgpu.cg was, and reached the wheel only as data."""
    warnings = [ln.strip() for ln in built["log"].splitlines() if "Warning" in ln or "would be ignored" in ln]
    assert warnings == [], warnings


def test_every_python_folder_of_the_package_is_listed():
    """setup.cfg's ``packages`` names every folder of gpgpu/ that holds Python modules, and the
    data folders and glsl that its comment lists."""
    import configparser

    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    listed = set(cfg["options"]["packages"].split())
    python = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "gpgpu").rglob("__init__.py")}
    assert python <= listed, sorted(python - listed)
    assert {"gpgpu.data", "gpgpu.data.netlib", "gpgpu.data.qaplib", "gpgpu.glsl"} <= listed


def test_wheel_holds_the_package_its_data_and_the_kernels_and_nothing_else(built):
    """gpgpu/ (modules and data) and glsl/ (as gpgpu/glsl), file for file; no experiments, no
    other top-level name; the NETLIB and QAPLIB data included."""
    names = zipfile.ZipFile(built["wheel"]).namelist()
    top = {n.split("/")[0] for n in names}
    dist_info = {t for t in top if t.endswith(".dist-info")}
    assert len(dist_info) == 1 and top - dist_info == {"gpgpu"}, sorted(top)
    src = built["src"]
    want = _files(src / "gpgpu", "gpgpu/") | _files(src / "glsl", "gpgpu/glsl/")
    got = {n for n in names if n.split("/")[0] == "gpgpu"}
    assert got == want, f"missing {sorted(want - got)[:10]}, extra {sorted(got - want)[:10]}"
    for needed in ("gpgpu/glsl/pass.vert", "gpgpu/glsl/common.glsl", "gpgpu/data/netlib/afiro.mps.gz",
                   "gpgpu/data/netlib-more/", "gpgpu/data/qaplib/", "gpgpu/data/README.md"):
        assert any(n.startswith(needed) for n in names), needed


def test_sdist_holds_glsl_data_and_what_runs_from_a_checkout_and_rebuilds_the_same_wheel(built):
    with tarfile.open(built["sdist"]) as tar:
        names = {m.name.split("/", 1)[1] for m in tar.getmembers() if m.isfile()}
    src = built["src"]
    for folder in ("glsl", "gpgpu", "experiments", "tests"):
        want = _files(src / folder, folder + "/")
        assert want and want <= names, f"{folder}: missing {sorted(want - names)[:10]}"
    assert {"setup.cfg", "pyproject.toml", "MANIFEST.in", "README.md", "constraints.txt"} <= names
    assert (sorted(zipfile.ZipFile(built["wheel_from_sdist"]).namelist())
            == sorted(zipfile.ZipFile(built["wheel"]).namelist()))


CHECK = r"""
import json, sys, sysconfig
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import gpgpu
import gpgpu.kernel
from gpgpu.lp import solve
from gpgpu.lp.netlib import netlib_path

out = dict(site=sysconfig.get_paths()["purelib"], gpgpu=gpgpu.__file__,
           glsl=str(gpgpu.kernel.GLSL_DIR), afiro=str(netlib_path("afiro")))

rng = np.random.default_rng(7)
M = rng.standard_normal((24, 24))
A = M @ M.T + 24 * np.eye(24)
L = gpgpu.cholesky(A.astype(np.float32))
ref = np.linalg.cholesky(A)
out["cholesky_rel_err"] = float(np.linalg.norm(L - ref) / np.linalg.norm(ref))

r = solve(netlib_path("afiro"))
out["lp_status"], out["lp_objective"] = r.status, float(r.objective)

n = 60
T = sp.diags([-np.ones(n - 1), 2.5 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1], format="csr")
b = rng.standard_normal(n)
x, info = gpgpu.cg(T, b)
x = np.asarray(x, dtype=np.float64)
out.update(cg_info=int(info), cg_residual=float(np.linalg.norm(b - T @ x)), b_norm=float(np.linalg.norm(b)),
           x_norm=float(np.linalg.norm(x)), a_norm=float(abs(T).sum(axis=1).max()))  # ||T||_inf >= ||T||_2
print("RESULT " + json.dumps(out))
"""

MISSING = r"""
import numpy as np
import gpgpu
try:
    gpgpu.cholesky(np.eye(2, dtype=np.float32))
except FileNotFoundError as e:
    print("ERROR", e)
"""


def _child_env() -> dict:
    """This process's environment without gpgpu's variables. PYTHONPATH stays: where the
    dependencies come through it (the lent GPU machine installs moderngl there), a child run
    by sys.executable needs it; the temporary venv's runs use -I, which ignores it."""
    env = {k: v for k, v in os.environ.items() if k not in ("GPGPU_GLSL_DIR", "GPGPU_NETLIB_DIR", "PYTHONHOME")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _base_python() -> str:
    """The interpreter the running virtual environment was made from (``venv`` resolves it this way
    too); a venv made by it starts without the running environment's packages."""
    return getattr(sys, "_base_executable", None) or sys.executable


#: what the installed wheel imports, and pip (the temporary venv has none of its own)
DEPENDENCIES = ("numpy", "scipy", "moderngl", "glcontext", "glfw", "highspy", "tqdm", "pip")


def _site_packages() -> list:
    """The running environment's folders that hold the dependencies, in sys.path order: its
    site-packages, and any other sys.path entry a dependency is imported from (PYTHONPATH's,
    on a machine that installs packages there). Never the checkout, nor any folder that holds
    a gpgpu package of its own."""
    import importlib.util

    holders = set()
    for name in DEPENDENCIES:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin:
            holders.add(Path(spec.origin).resolve().parent.parent)
    out = []
    for p in sys.path:
        if not p or not Path(p).is_dir():
            continue
        q = Path(p).resolve()
        if q == ROOT or (q / "gpgpu").exists():
            continue
        if q.name in ("site-packages", "dist-packages") or q in holders:
            out.append(p)
    return out


def test_installed_wheel_factors_solves_afiro_and_runs_cg_outside_the_checkout(built, tmp_path):
    """The wheel in a fresh venv, run from tmp_path: gpgpu.cholesky, gpgpu.lp.solve on the packaged
    afiro, gpgpu.cg on a scipy matrix, against independent references; then, with the packaged
    kernels removed, the error says where they were looked for and how to fix it."""
    venv = tmp_path / "venv"
    _run([_base_python(), "-m", "venv", "--without-pip", venv], cwd=tmp_path)
    python = venv / "bin" / "python"
    site = Path(_run([python, "-I", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     cwd=tmp_path).stdout.strip())
    (site / "_gpgpu_test_deps.pth").write_text("\n".join(_site_packages()) + "\n")
    env = _child_env()
    _run([python, "-I", "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--ignore-installed",
          built["wheel"]], cwd=tmp_path, env=env)

    run = tmp_path / "run"
    run.mkdir()
    r = _run([python, "-I", "-c", CHECK], cwd=run, env=env)
    out = json.loads(r.stdout.split("RESULT ", 1)[1])
    assert not (site / "experiments").exists() and not (site / "glsl").exists()
    site = Path(out["site"]).resolve()
    for key in ("gpgpu", "glsl", "afiro"):
        assert Path(out[key]).resolve().is_relative_to(site), (key, out[key], site)
    assert Path(out["glsl"]).resolve() == site / "gpgpu" / "glsl"

    # float32 Cholesky of a well-conditioned 24 x 24 matrix: tests/test_cholesky.py's bound
    assert out["cholesky_rel_err"] < 1e-5
    assert out["lp_status"] == "optimal"
    assert abs(out["lp_objective"] - AFIRO_OPTIMUM) <= 1e-6 * abs(AFIRO_OPTIMUM), out["lp_objective"]
    # cg's target ||b - A x|| <= 1e-5 ||b|| holds for float32's b - A x; float64's differs from it
    # by the rounding of that residual, a few u ||A|| ||x||
    assert out["cg_info"] == 0
    assert out["cg_residual"] <= 1e-5 * out["b_norm"] + 8 * U * out["a_norm"] * out["x_norm"], out

    shutil.move(site / "gpgpu" / "glsl", tmp_path / "glsl-gone")
    r = _run([python, "-I", "-c", MISSING], cwd=run, env=env)
    assert "ERROR" in r.stdout, r.stdout + r.stderr
    assert "reinstall gpgpu" in r.stdout and "GPGPU_GLSL_DIR" in r.stdout and str(site / "gpgpu" / "glsl") in r.stdout


GLSL_DIR_OF = r"""
import json
import numpy as np
import gpgpu, gpgpu.kernel
print("GLSL_DIR", gpgpu.kernel.GLSL_DIR)
try:
    L = gpgpu.cholesky(np.array([[4.0, 2.0], [2.0, 5.0]], dtype=np.float32))
    print("L", json.dumps(np.asarray(L, dtype=float).tolist()))
except FileNotFoundError as e:
    print("ERROR", e)
"""


def _factor(stdout: str):
    """The L a GLSL_DIR_OF run printed (None when it printed an error)."""
    for line in stdout.splitlines():
        if line.startswith("L "):
            return json.loads(line[2:])
    return None


def _is_hand_worked_factor(L) -> bool:
    """[[4, 2], [2, 5]] = L L^T with L = [[2, 0], [1, 2]] (float32 rounding allowed)."""
    return L is not None and all(abs(a - b) <= 4 * U * 2 for ra, rb in zip(L, [[2, 0], [1, 2]])
                                 for a, b in zip(ra, rb))


def test_gpgpu_glsl_dir_overrides_where_the_kernels_are_read(tmp_path):
    """$GPGPU_GLSL_DIR names the kernels' folder (a copy works; a folder without them is a clear
    error naming the variable); unset, a checkout reads its top-level glsl/."""
    env = _child_env()
    r = _run([sys.executable, "-c", GLSL_DIR_OF], cwd=ROOT, env=env)
    assert f"GLSL_DIR {ROOT / 'glsl'}\n" in r.stdout and _is_hand_worked_factor(_factor(r.stdout)), r.stdout

    copy = tmp_path / "kernels"
    shutil.copytree(ROOT / "glsl", copy)
    r = _run([sys.executable, "-c", GLSL_DIR_OF], cwd=ROOT, env={**env, "GPGPU_GLSL_DIR": str(copy)})
    assert f"GLSL_DIR {copy}\n" in r.stdout and _is_hand_worked_factor(_factor(r.stdout)), r.stdout

    empty = tmp_path / "empty"
    empty.mkdir()
    r = _run([sys.executable, "-c", GLSL_DIR_OF], cwd=ROOT, env={**env, "GPGPU_GLSL_DIR": str(empty)})
    assert "ERROR" in r.stdout and f"$GPGPU_GLSL_DIR = {empty} is not the folder" in r.stdout, r.stdout
