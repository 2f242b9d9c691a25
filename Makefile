# Papertrade — `make help` lists the targets.
VENV ?= .venv
BIN := $(VENV)/bin
# freqtrade for its live test (tests/freqtrade), in its own virtualenv: it pins its own ccxt.
FREQTRADE_VENV := .venv-freqtrade
PYTHON ?= python3
PG_TEST_URL ?= postgresql+asyncpg://postgres@127.0.0.1:5432/test
PYTEST_ARGS ?= -n 2
# Python reads and writes its bytecode cache in every recipe, even where the environment turns
# writing off: without it each test process and each service a test starts compiles the
# project's 400 modules and the tests' assertion rewrites again (about 10 s of CPU per pytest
# worker, half a second per `papertrade serve`).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: help setup run test test-sqlite test-postgres lint fmt types bench screenshots clean

help: ## this list
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-15s %s\n", $$1, $$2}'

setup: $(VENV)/.installed frontend/node_modules/.installed ## install pinned Python and front-end dependencies

$(VENV)/.installed: requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip==26.3
	$(BIN)/pip install -q -r requirements.lock
	$(BIN)/pip install -q --no-deps -e .
	touch $@

frontend/node_modules/.installed: frontend/package.json frontend/package-lock.json frontend/editor/codemirror-entry.mjs
	cd frontend && SCARF_ANALYTICS=false npm ci --no-audit --no-fund --ignore-scripts
	# The strategy editor: the pinned CodeMirror packages bundled by the pinned esbuild into one
	# ES module, served from /static/vendor/papertrade-bundle/ (docs/web.md).
	cd frontend && node node_modules/esbuild/bin/esbuild editor/codemirror-entry.mjs --bundle \
	  --format=esm --minify --target=es2020 --log-level=warning \
	  --outfile=node_modules/papertrade-bundle/codemirror.mjs
	touch $@

# the Node.js Binance client of tests/fapi/test_node_client.py
tests/node/node_modules/.installed: tests/node/package.json tests/node/package-lock.json
	cd tests/node && npm ci --no-audit --no-fund --ignore-scripts
	touch $@

$(FREQTRADE_VENV)/.installed: tests/freqtrade/requirements.lock
	$(PYTHON) -m venv $(FREQTRADE_VENV)
	$(FREQTRADE_VENV)/bin/pip install -q --upgrade pip==26.3
	$(FREQTRADE_VENV)/bin/pip install -q -r tests/freqtrade/requirements.lock
	touch $@

run: setup ## start the service on its embedded defaults (SQLite under ./var, http://127.0.0.1:8000)
	$(BIN)/papertrade serve

lint: setup ## ruff format check and lint
	$(BIN)/ruff format --check src tests bench scripts
	$(BIN)/ruff check src tests bench scripts

fmt: setup ## format and fix what ruff can
	$(BIN)/ruff format src tests bench scripts
	$(BIN)/ruff check --fix src tests bench scripts

types: setup ## mypy (strict) over the code and the tests
	$(BIN)/mypy src/papertrade tests bench scripts

test-sqlite: setup $(FREQTRADE_VENV)/.installed tests/node/node_modules/.installed ## the test suite on SQLite
	$(BIN)/pytest $(PYTEST_ARGS)

test-postgres: setup $(FREQTRADE_VENV)/.installed tests/node/node_modules/.installed ## the same suite on PostgreSQL ($(PG_TEST_URL))
	PAPERTRADE_TEST_POSTGRES_URL=$(PG_TEST_URL) $(BIN)/pytest $(PYTEST_ARGS)

TEST_DEPS := setup $(FREQTRADE_VENV)/.installed tests/node/node_modules/.installed

# The installs side by side, then lint; then types and the two halves side by side, with the
# tests that run once shared out so the halves end together (PAPERTRADE_TEST_SPLIT,
# tests/databases.py). Each half's output is printed whole when it ends (--output-sync).
test: ## everything CI runs: lint, types, tests on SQLite and PostgreSQL
	$(MAKE) --no-print-directory -j4 $(TEST_DEPS)
	$(MAKE) --no-print-directory lint
	PAPERTRADE_TEST_SPLIT=1 $(MAKE) --no-print-directory -j3 --output-sync=target \
	  types test-sqlite test-postgres

bench: setup ## run the benchmarks and print their tables (see BENCHMARKS.md)
	$(BIN)/python bench/run_all.py

screenshots: setup ## PNGs of the main web pages, desktop and phone width, into artifacts/screenshots/
	$(BIN)/python scripts/screenshots.py

clean: ## remove the virtualenv, front-end packages and local data
	rm -rf $(VENV) $(FREQTRADE_VENV) frontend/node_modules tests/node/node_modules var
