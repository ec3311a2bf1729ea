# The README's commands. Each one sets up .venv when missing (with the extras it needs),
# makes sure the system EGL/Mesa libraries are there, then runs.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
EXTRAS := test,experiments,lp

.PHONY: test fig8 figures docs bench info clean-venv sysdeps

test: $(VENV)/.installed sysdeps
	$(PY) -m pytest -q

fig8: $(VENV)/.installed sysdeps
	$(PY) -m experiments.fig8

figures: $(VENV)/.installed sysdeps
	$(PY) -m experiments all

docs: $(VENV)/.installed sysdeps
	$(PY) -m gpgpu.show.docs docs/pipeline

bench: $(VENV)/.installed sysdeps
	$(PY) -m gpgpu bench

info: $(VENV)/.installed sysdeps
	$(PY) -m gpgpu info

sysdeps:
	@bash tools/ensure_gl.sh

$(VENV)/.installed: setup.cfg pyproject.toml
	@$(PYTHON) -c 'import venv, ensurepip' 2>/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null; \
	  else echo "error: $(PYTHON) cannot create virtual environments; install python3-venv" >&2; exit 1; fi; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[$(EXTRAS)]'
	touch $@

clean-venv:
	rm -rf $(VENV)
