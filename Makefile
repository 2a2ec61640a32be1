# overlap-check developer tasks. `make help` lists them.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
FUZZ_CASES ?= 2000
FUZZ_START ?= 0

.DEFAULT_GOAL := help
.PHONY: help install test test-min fuzz lint format typecheck bench fixtures demo docs-images check clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

install: $(PY) ## Create .venv and install overlap-check with its dev tools
	$(PY) -m pip install -q -e '.[dev]'

test: ## Run the test suite (real captures in ../shared/real-profiles are used when present)
	$(PY) -m pytest

# The fixture tests under the oldest versions pyproject.toml declares.
MIN_VENV  ?= .venv-min
MIN_TESTS ?= tests/test_readers.py tests/test_cli_analyze.py tests/test_pipeline.py \
	tests/test_verdict.py tests/test_config.py tests/test_synth.py tests/test_packaging.py \
	tests/test_csvblocks.py
test-min: ## Install the declared minimum versions in .venv-min (MIN_VENV) and run the fixture tests
	rm -rf $(MIN_VENV)
	$(PYTHON) -m venv $(MIN_VENV)
	$(PYTHON) scripts/min_constraints.py > $(MIN_VENV)/constraints.txt
	$(MIN_VENV)/bin/python -m pip install -q --constraint $(MIN_VENV)/constraints.txt -e . 'pytest>=8' 'hypothesis>=6.100'
	$(MIN_VENV)/bin/python -m pip list --format=freeze | grep -iE '^(polars|numpy|click|msgspec)=='
	$(MIN_VENV)/bin/python -m pytest -p no:cacheprovider -m 'not slow' $(MIN_TESTS)

fuzz: ## Mutation-fuzz the CLI with FUZZ_CASES damaged captures (default 2000; FUZZ_START=n replays case n)
	FUZZ_CASES=$(FUZZ_CASES) FUZZ_START=$(FUZZ_START) $(PY) -m pytest -q -s -p no:cacheprovider tests/test_fuzz.py

lint: ## ruff: lint and format check
	$(PY) -m ruff check overlap_check synth tests bench scripts
	$(PY) -m ruff format --check overlap_check synth tests bench scripts

format: ## ruff: apply formatting and safe fixes
	$(PY) -m ruff check --fix overlap_check synth tests bench scripts
	$(PY) -m ruff format overlap_check synth tests bench scripts

typecheck: ## mypy --strict on the package, for Python 3.11 and for the oldest supported, 3.10
	$(PY) -m mypy overlap_check synth
	$(PY) -m mypy --python-version 3.10 overlap_check synth

check: lint typecheck test ## lint + typecheck + test

bench: ## Benchmarks; writes docs/benchmarks.md (inputs cached in bench/.cache)
	$(PY) bench/run.py

fixtures: ## Regenerate fixtures/ with the project's own generator
	$(PY) -m synth fixtures

demo: ## Judge the bundled fake dual-stream example (exits 0: the expected verdict is fake)
	$(VENV)/bin/overlap-check analyze fixtures/fake-dual-stream --side SharedExpert --dominator GroupedMatmul \
		|| test $$? -eq 1

docs-images: ## Regenerate the README pictures from fixtures/
	$(PY) scripts/make_docs_images.py

clean: ## Remove caches and build output
	rm -rf build dist .venv-min *.egg-info .mypy_cache .ruff_cache .pytest_cache .hypothesis bench/.cache
