# Set-up and everyday commands. `make demo` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEMO_DB := .demo/prices.sqlite


.PHONY: demo test lint bench install install-dev clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# Stamps re-run the install whenever pyproject.toml changes.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[dev]'
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

demo: install
	@mkdir -p .demo
	@echo "== The cheapest offering of each GPU model (bundled catalog, no credentials needed) =="
	$(BIN)/costsched prices show --db $(DEMO_DB) --cheapest-per-gpu
	@echo "== The ten cheapest V100 and A100 offerings per GPU-hour =="
	$(BIN)/costsched prices show --db $(DEMO_DB) --gpu V100,A100 --top 10

# PostgreSQL tests run when COSTSCHED_TEST_PG_URL is set, or when a local server can be
# started (scripts/start-postgres.sh, as root); otherwise they are skipped with the reason.
test: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	COSTSCHED_TEST_PG_URL=$${COSTSCHED_TEST_PG_URL:-$$(bash scripts/start-postgres.sh 2>/dev/null || true)} \
		$(BIN)/pytest -n 2 --dist loadfile

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .

bench: $(VENV)/.installed-dev
	for b in bench/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .demo .pytest_cache build *.egg-info
