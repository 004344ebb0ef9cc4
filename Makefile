# `make run` and `make test` each do all set-up from a fresh clone.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: run qt-libs test lint typecheck unit install-check bench bench-install package clean

$(STAMP): pyproject.toml setup.py
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Ambry needs Python 3.11 or newer (set PYTHON=...)")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

# The app needs X11/xcb libraries that PySide6 does not bundle; name them before Qt fails.
# make runs in the checkout, so -m finds core there (the venv installs only the ambry launcher).
qt-libs: $(STAMP)
	@$(BIN)/python -m core.cli.qtlibs

run: qt-libs
	$(BIN)/ambry

lint: $(STAMP)
	bash -n .ci/run packaging/build.sh
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/pytest -q

# Build the sdist and wheel, install the wheel in a fresh venv (not editable) and use it.
install-check: $(STAMP)
	$(BIN)/python packaging/install_check.py

test: lint typecheck unit install-check

bench: $(STAMP)
	$(BIN)/python bench/store_search.py

bench-install: $(STAMP)
	$(BIN)/python bench/install.py

package: $(STAMP)
	$(BIN)/python -m pip install --quiet 'pyinstaller>=6.0'
	PY=$(BIN)/python packaging/build.sh

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
