# Fate Bridge: `make run` serves the bridge, `make test` runs every suite.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8765
DATA ?= data

.PHONY: run test test-python test-js fuzz lint schemas schemas-check module release bench clean

# `make run` installs the bridge and its runtime dependencies only; the suites and linters
# add the development tools ([dev]), which also satisfy the runtime's marker. Both install
# the versions the suites passed with (constraints.txt).
$(VENV)/.runtime: pyproject.toml setup.py constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e .
	touch $@

$(VENV)/.installed: pyproject.toml setup.py constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev]'
	touch $@ $(VENV)/.runtime

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

# Serves without Node: the module's zip then leaves out the socket.io-client fallback, which
# Foundry's page never needs (it has its own `io`).
run: $(VENV)/.runtime
	$(VENV)/bin/fate-bridge --data-dir $(DATA) serve --host $(HOST) --port $(PORT)

# The three parts run side by side, each one's output printed whole as it ends (make -O), and
# make fails when any of them does. Most tests wait on sockets and timers, not the CPU. The
# schema drift check (tests/test_schemas.py, `make schemas-check` alone) is among pytest's.
test: $(VENV)/.installed node_modules/.installed
	@echo "make test: lint, test-python (the schema check among its tests) and test-js run" \
	  "side by side; each one's output shows when it ends"
	@$(MAKE) --no-print-directory -j3 --output-sync=target lint test-python test-js

# Python workers (pytest-xdist), more than the cores for the same reason; each has its own
# redis-server, temporary folders and ports. PYTEST_WORKERS=0 runs the suites in one process.
PYTEST_WORKERS ?= 3
test-python: $(VENV)/.installed node_modules/.installed
	$(PY) -m pytest -q -n $(PYTEST_WORKERS) --dist worksteal --durations=10

# Long randomized runs of every property test (rules, chain, views, the socket fuzzer), not
# derandomized; add what they find as @example.
PROPERTY_TESTS = $(shell grep -l '@given' tests/test_*.py)
fuzz: $(VENV)/.installed node_modules/.installed
	HYPOTHESIS_PROFILE=fuzz $(PY) -m pytest -q $(PROPERTY_TESTS)

test-js: $(VENV)/.installed node_modules/.installed
	npm test

# The GitHub workflows too: actionlint (syntax, expressions, job wiring) and zizmor's offline
# security audits (pinned actions, permissions, credentials, template injection).
lint: $(VENV)/.installed
	$(VENV)/bin/ruff check bridge tests bench packaging
	$(VENV)/bin/ruff format --check bridge tests bench packaging
	$(VENV)/bin/mypy
	$(VENV)/bin/actionlint .github/workflows/*.yml
	$(VENV)/bin/zizmor --offline --quiet .github/workflows

schemas: $(VENV)/.installed
	$(PY) -m bridge schemas --out schemas

schemas-check: $(VENV)/.installed
	$(PY) -m pytest -q tests/test_schemas.py

module: $(VENV)/.installed node_modules/.installed
	$(PY) -m bridge module --out dist --url http://$(HOST):$(PORT)

# What the release workflow builds: the module's zip and module.json for the repository
# pyproject.toml names (dist/module), and this machine's one-file executable (dist/fate-bridge;
# tests/test_executable.py builds and starts one in make test).
release: $(VENV)/.installed
	$(PY) -m bridge module --release --out dist/module
	$(PY) -m PyInstaller --noconfirm --log-level WARN --distpath dist \
	  --workpath build/pyinstaller packaging/fate-bridge.spec

bench: $(VENV)/.installed
	$(PY) -m bench

clean:
	rm -rf $(VENV) node_modules dist build .pytest_cache .mypy_cache .ruff_cache
