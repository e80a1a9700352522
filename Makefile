# Two commands for a fresh machine: `make demo` and `make test` (lint, type check, then the tests).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed

.PHONY: demo test lint install clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(VENV)/bin/python pyproject.toml setup.py constraints.txt
	$(PIP) install --quiet --upgrade pip -c constraints.txt
	$(PIP) install --quiet -c constraints.txt torch==2.13.0
	$(PIP) install --quiet -c constraints.txt -e ".[test,plot,dev,fast,view]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/ggik demo --out runs/demo/solutions.png

test: lint
	$(PY) -m pytest -q -n auto --maxprocesses 4

# Lint, format check and type check (settings in pyproject.toml; mypy checks ggik/).
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) build *.egg-info
