# `make demo` and `make test` work on a fresh machine with Python 3.11+ and network access to PyPI.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
DEMO := .planverify/demo

.PHONY: install demo test lint format clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: install
	rm -rf $(DEMO)
	$(BIN)/planverify verify examples/episodes.jsonl --checkpoint $(DEMO)/checkpoints.sqlite --output $(DEMO)/results.jsonl
	$(BIN)/planverify show coffee-detour --checkpoint $(DEMO)/checkpoints.sqlite

test: install
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	MYPY=$(BIN)/mypy scripts/typecheck.sh

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) .planverify build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
