# `make demo` and `make test` work on a fresh machine with Python 3.11+ and network access to PyPI.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
DEMO := .planverify/demo
# VirtualHome's data and simulator, without the dependencies it does not use (pyproject.toml)
EAI_EVAL := eai-eval==1.0.5

.PHONY: install demo test test-llm lint format clean docs figures figures-cheap

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
	PYTHON=$(BIN)/python scripts/build-docs.sh --quiet

# The documentation site, into site/ (open site/index.html): `mkdocs build --strict`, so a broken
# link, include or API reference fails. The CLI reference is written from the program itself.
docs: install
	PYTHON=$(BIN)/python scripts/build-docs.sh

# The figures the docs show (docs/figures/), each written by the command that measures it, with
# the date and the commit. `figures-cheap` runs in seconds on the bundled sample (and a test
# checks those); `figures` also runs the benchmarks over the shared TEACh games: an hour or more.
# It leaves out a blind natural test part, when one is drawn: that is scored once, by hand with
# `--held-out`, at the end of a round of Judge work (docs/annotation.md).
FIGURE := $(BIN)/python benchmarks/figures.py
RUN := $(BIN)/python benchmarks
figures-cheap: install
	$(FIGURE) --cheap

figures: figures-cheap
	$(FIGURE) judge_quality -- $(RUN)/judge_quality.py
	$(FIGURE) annotator_agreement -- $(RUN)/annotator_agreement.py
	$(FIGURE) adjudication -- $(RUN)/annotator_agreement.py --adjudication
	$(FIGURE) certify_fidelity -- $(RUN)/certify_fidelity.py
	$(FIGURE) certify_effect -- $(RUN)/certify_effect.py
	$(FIGURE) certify_effect_all -- $(RUN)/certify_effect.py --pool all
	$(FIGURE) goal_reading -- $(RUN)/goal_reading.py
	$(FIGURE) bench_verify -- $(RUN)/bench_verify.py --count 3000
	$(FIGURE) bench_repair -- $(RUN)/bench_repair.py
	$(FIGURE) bench_load -- $(RUN)/bench_load.py --count 3000
	$(FIGURE) bench_latency -- $(RUN)/bench_latency.py --repeat 3
	$(FIGURE) bench_latency_real -- $(RUN)/bench_latency.py --real 2000 --trim natural --repeat 3
	$(FIGURE) bench_concurrency -- $(RUN)/bench_concurrency.py --slots 1 4 8
	$(FIGURE) bench_review -- $(RUN)/bench_review.py --count 3000
	$(FIGURE) vh_quality -- $(RUN)/vh_quality.py --seed 1
	$(FIGURE) vh_quality_held_out -- $(RUN)/vh_quality.py --seed 1 --held-out
	$(FIGURE) vh_second_generator -- $(RUN)/vh_second_generator.py --seeds 101 102 --no-lists
	$(FIGURE) vh_second_generator_held_out -- $(RUN)/vh_second_generator.py --seeds 101 102 --no-lists --held-out

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
	rm -rf $(VENV) .planverify build dist site *.egg-info .pytest_cache .mypy_cache .ruff_cache
