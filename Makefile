# The README's commands. Each one sets up .venv when missing (with the extras it needs, at the
# versions of constraints.txt), makes sure the system EGL/Mesa libraries are there, then runs.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
EXTRAS := test,experiments,lp,window
LATEST := .venv-latest

.PHONY: test test-latest lock fig8 figures report docs pipeline-pictures show-page show-pages bench info clean-venv sysdeps pyvenv

test: $(VENV)/.installed sysdeps
	$(PY) tools/versions.py
	$(PY) -m pytest -q

# The suite against today's newest releases, in a fresh .venv-latest: what differs from
# constraints.txt is printed first, so that a failure names the releases that are new.
test-latest: pyvenv sysdeps
	rm -rf $(LATEST)
	$(PYTHON) -m venv $(LATEST)
	$(LATEST)/bin/python -m pip install -q --upgrade pip
	$(LATEST)/bin/python -m pip install -q --upgrade -e '.[$(EXTRAS)]'
	$(LATEST)/bin/python tools/versions.py
	$(LATEST)/bin/python -m pytest -q

# Record the versions of .venv-latest (after make test-latest passed) as the new constraints.
lock:
	test -x $(LATEST)/bin/python || { echo "run make test-latest first" >&2; exit 1; }
	$(LATEST)/bin/python tools/versions.py --write

fig8: $(VENV)/.installed sysdeps
	$(PY) -m experiments.fig8

figures: $(VENV)/.installed sysdeps
	$(PY) -m experiments all

# The docs rendered again from their data (docs/figures), no experiment run: REPORT.md from the
# claims files and verdicts.json, and every <!-- render: ... --> block of README.md and docs/.
report: $(VENV)/.installed
	$(PY) -m experiments report --out docs/figures --to docs/REPORT.md
	$(PY) -m experiments.render

# The documentation site (mkdocs.yml) into site/, strict: a broken link, a missing anchor or an
# unresolved cross-reference fails the build. The API pages read the docstrings statically, so
# no GL context is needed.
docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

# The pictures of docs/pipeline.md, drawn from the real passes of the real algorithms.
pipeline-pictures: $(VENV)/.installed sysdeps
	$(PY) -m gpgpu.show.docs docs/pipeline

# The page of docs/stepping.md: every pass of a small Cholesky in one self-contained HTML file.
show-page: $(VENV)/.installed sysdeps
	mkdir -p docs/show
	$(PY) -m gpgpu.show cholesky --n 4 --html docs/show/cholesky.html

# The gallery of the docs site: a live page per algorithm of --list (n = 8, without the PNG frames)
# in docs/show/live/, and docs/gallery/<algorithm>.md embedding each.
show-pages: $(VENV)/.installed sysdeps
	$(PY) -m gpgpu.show.docs gallery docs/show/live docs/gallery

bench: $(VENV)/.installed sysdeps
	$(PY) -m gpgpu bench

info: $(VENV)/.installed sysdeps
	$(PY) -m gpgpu info

sysdeps:
	@bash tools/ensure_gl.sh

$(VENV)/.installed: setup.cfg pyproject.toml constraints.txt
	@$(MAKE) -s pyvenv
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt -e '.[$(EXTRAS)]'
	touch $@

$(VENV)/.installed-docs: setup.cfg pyproject.toml constraints.txt
	@$(MAKE) -s pyvenv
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt -e '.[docs]'
	touch $@

# python3 -m venv works (Debian/Ubuntu ship it apart: python3-venv, installed when root)
pyvenv:
	@$(PYTHON) -c 'import venv, ensurepip' 2>/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null; \
	  else echo "error: $(PYTHON) cannot create virtual environments; install python3-venv" >&2; exit 1; fi; }

clean-venv:
	rm -rf $(VENV) $(LATEST)
