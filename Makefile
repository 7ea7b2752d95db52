# ServePlan: `make run` starts everything on a fresh machine; `make test` runs ruff and pytest.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP_RUN := $(VENV)/.installed-run
STAMP_DEV := $(VENV)/.installed-dev
STAMP_INTEGRATION := $(VENV)/.installed-integration
# One xdist worker per core; real-server tests share one worker (tests/conftest.py).
PYTEST_PARALLEL ?= -n auto --dist loadgroup

.PHONY: run test test-unit lint bench fmt integration-deps clean

$(PY):
	@py="$$(scripts/find-python)" && echo "==> Creating $(VENV) with $$py" && "$$py" -m venv $(VENV)
	@$(PY) -m pip install --quiet --upgrade pip

# Reinstall only when pyproject.toml changed, so a second `make run` starts in seconds.
$(STAMP_RUN): pyproject.toml | $(PY)
	@echo "==> Installing ServePlan into $(VENV)"
	@$(PY) -m pip install --quiet -e .
	@touch $@

$(STAMP_DEV): pyproject.toml $(STAMP_RUN)
	@echo "==> Installing development dependencies"
	@$(PY) -m pip install --quiet -e '.[dev]'
	@touch $@

run: $(STAMP_RUN)
	@scripts/run-dev

lint: $(STAMP_DEV)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# Ray, the optional aiconfigurator step backend (so its tests run), and the vLLM CPU build (in
# its own venv, made once) for the integration tests.
$(STAMP_INTEGRATION): pyproject.toml $(STAMP_DEV)
	@echo "==> Installing the integration and aiconfigurator extras and the vLLM CPU venv"
	@$(PY) -m pip install --quiet -e '.[dev,integration,aiconfigurator]'
	@scripts/ensure-vllm-venv >/dev/null
	@touch $@

integration-deps: $(STAMP_INTEGRATION)

# The whole suite: scripts/test-env finds or starts PostgreSQL and Redis and the tools the tests
# drive, and exports DATABASE_URL and REDIS_URL for the run.
test: $(STAMP_INTEGRATION)
	$(VENV)/bin/ruff check .
	DJANGO_SETTINGS_MODULE=config.settings.test $(PY) manage.py compile_translations
	scripts/test-env $(VENV)/bin/pytest $(PYTEST_PARALLEL) $(PYTEST_ARGS)

# The quick loop while coding: no real services, SQLite in memory, tests that need them skip.
test-unit: $(STAMP_DEV)
	DJANGO_SETTINGS_MODULE=config.settings.test $(PY) manage.py compile_translations
	$(VENV)/bin/pytest -m 'not (integration or ray or vllm or browser)' $(PYTEST_ARGS)

# scripts/test-env finds or starts what some benches read and write (PostgreSQL for the partition
# migration, Prometheus and VictoriaMetrics for the series stores), as for the tests.
bench: $(STAMP_DEV)
	@scripts/test-env sh -c 'for script in bench/bench_*.py; do echo "==> $$script"; $(PY) "$$script" || exit 1; done'

fmt: $(STAMP_DEV)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

clean:
	rm -rf $(VENV) var/staticfiles
