# `make demo` and `make test` work on a fresh machine with Python 3.11+ and network access to PyPI.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
DEMO := .planverify/demo
# VirtualHome's data and simulator, without the dependencies it does not use (pyproject.toml)
EAI_EVAL := eai-eval==1.0.5

.PHONY: install demo test test-llm lint format clean

# PYTHONWARNINGS: setuptools' notice on every editable install (an import-path reminder) is not for users
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	PYTHONWARNINGS='ignore:Editable installation' $(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m pip install --quiet --no-deps '$(EAI_EVAL)'
	touch $(STAMP)

install: $(STAMP)

demo: install
	@rm -rf $(DEMO)
	@echo "verifying examples/episodes.jsonl offline (rules Judge and Planner)..."
	@$(BIN)/planverify verify examples/episodes.jsonl --checkpoint $(DEMO)/checkpoints.sqlite --output $(DEMO)/results.jsonl
	@echo "one episode, pass by pass:"
	@$(BIN)/planverify show coffee-detour --checkpoint $(DEMO)/checkpoints.sqlite
	@echo "next:"
	@echo "  source .venv/bin/activate                # then planverify runs by name"
	@echo "  planverify show water-plant-microwave    # another demo episode (no --checkpoint needed)"
	@echo "  planverify review $(DEMO)/results.jsonl --episodes examples/episodes.jsonl --html review/"
	@echo "  README.md, Quick start: the same on TEACh games"

test: install
	$(BIN)/ruff check .
	PYTHON=$(BIN)/python scripts/import-contracts.sh
	$(BIN)/python -m pytest

# Opt-in: the model path against a real model server on loopback (../shared/tools/local-llm builds
# llama-cpp-python once, about 5 minutes, then serves a small model). Not part of `make test`.
LOCAL_LLM ?= ../shared/tools/local-llm
test-llm: install
	@$(LOCAL_LLM) start >/dev/null
	@set -e; eval "$$($(LOCAL_LLM) env)"; status=0; \
	PLANVERIFY_TEST_OPENAI_BASE_URL=$$BASE_URL PLANVERIFY_TEST_OPENAI_MODEL=$$MODEL \
		$(BIN)/python -m pytest -m llm tests/test_llm.py -v || status=$$?; \
	$(LOCAL_LLM) stop; exit $$status

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	MYPY=$(BIN)/mypy scripts/typecheck.sh
	PYTHON=$(BIN)/python scripts/import-contracts.sh

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) .planverify build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
