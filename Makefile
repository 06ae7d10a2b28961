# Set-up and everyday commands. `make demo` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEMO_DB := .demo/today.sqlite
RECORDED_DB := .demo/recorded-2020.sqlite
RECORDED ?= ../shared/data/dispa2020
SPOT_TRACES ?= ../shared/data/spot-traces
DEADLINE_DB := .demo/availability-2023.sqlite


.PHONY: demo demo-local demo-recorded demo-deadline test test-loaded lint bench docs install \
	install-dev clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# Stamps re-run the install whenever pyproject.toml or this file changes. The demo's
# install carries what the README's next commands need without a cloud account
# (DEMO_EXTRAS: the dashboard).
DEMO_EXTRAS := dashboard
# The checkout's folder goes on the venv's path (a .pth file) besides pip's import hook: a
# script beside the checkout's folder, itself named costsched, then still imports the
# package, not the folder (the hook comes after the script's folder). The modules are
# compiled once here, as pip compiles an installed package's: where the environment says
# not to write bytecode (PYTHONDONTWRITEBYTECODE, as many images set it), every command
# would compile them again.
ON_PATH = $(BIN)/python -c 'import pathlib, sysconfig; \
	pathlib.Path(sysconfig.get_paths()["purelib"], "costsched-checkout.pth").write_text("$(CURDIR)\n")'
COMPILE := $(BIN)/python -m compileall -q costsched launchers price_collectors > /dev/null
$(VENV)/.installed: pyproject.toml Makefile | $(BIN)/python
	$(BIN)/pip install -q -e '.[$(DEMO_EXTRAS)]'
	$(ON_PATH)
	$(COMPILE)
	touch $@

$(VENV)/.installed-dev: pyproject.toml Makefile | $(BIN)/python
	$(BIN)/pip install -q -e '.[dev]'
	$(ON_PATH)
	$(COMPILE)
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

demo: install
	@mkdir -p .demo
	@echo "== The cheapest offering of each GPU model (bundled catalog, no credentials needed) =="
	COSTSCHED_DB=$(DEMO_DB) $(BIN)/costsched gpus
	@echo "== Where to train a 10-epoch ResNet-50 within 24 h, cheapest first (* = estimated throughput) =="
	COSTSCHED_DB=$(DEMO_DB) $(BIN)/costsched plan examples/resnet50-anywhere.yaml --top 5
	@$(MAKE) --no-print-directory demo-local
	@if [ -d "$(RECORDED)" ]; then $(MAKE) --no-print-directory demo-recorded; else \
		echo "(recorded prices not found at $(RECORDED): set RECORDED=... for the 2020 replay)"; fi
	@if [ -d "$(SPOT_TRACES)" ]; then $(MAKE) --no-print-directory demo-deadline; else \
		echo "(spot traces not found at $(SPOT_TRACES): set SPOT_TRACES=... for the deadline replay)"; fi

# A job's life on this machine: the local launcher runs examples/train.py as a subprocess,
# in each instance's own copy of the job's code (its workdir, packed at launch). Every
# figure is real time: the job declares the speed it really has, and a move is priced
# with a local process's restart (seconds, not a cloud instance's boot).
LOCAL := $(CURDIR)/.demo/local
# The supervisor the launch starts looks at the job every 5 s (a half-minute job), and
# ends 5 s after it; the demo stops it at its end all the same.
# Its settings are exported to each command, so that the commands echo as a user types them.
demo-local: export COSTSCHED_DB := $(LOCAL)/store.sqlite
demo-local: export COSTSCHED_INSTANCES := $(LOCAL)/instances
demo-local: export COSTSCHED_MIGRATION_RESTART_MINUTES := 0.05
demo-local: export COSTSCHED_MIGRATION_WARMUP_MINUTES := 0
demo-local: export COSTSCHED_DAEMON_WATCH_SECONDS := 5
demo-local: export COSTSCHED_DAEMON_IDLE_SECONDS := 5
# The demo's prices (examples/demo/prices-*.csv), stamped with the time they are imported:
# each holds from then on, as a price collected now would (imported --whole: the spot
# market of aws, as a collection is).
demo_prices = sed -E '2,$$ s/,[0-9T:-]+Z,/,'"$$(date -u +%Y-%m-%dT%H:%M:%SZ)"',/' \
	examples/demo/prices-$(1).csv > $(LOCAL)/prices-$(1).csv
demo-local: install
	@if [ -f $(LOCAL)/store.sqlite ]; then $(BIN)/costsched daemon stop >/dev/null; fi
	@rm -rf $(LOCAL) && mkdir -p $(LOCAL)
	@echo "== Run a job locally: spot prices stored, launch from its folder on the cheapest zone =="
	@echo "   (a 4,000-step job at about 100 steps/s: half a minute, priced as such; the launch"
	@echo "   starts a supervisor in the background that watches it)"
	@$(call demo_prices,before)
	$(BIN)/costsched prices import $(LOCAL)/prices-before.csv --whole
	cd examples/demo && $(CURDIR)/$(BIN)/costsched launch train.yaml
	@echo "== Zone a's price rises and b's falls: the policy moves the job, in dollars =="
	@$(call demo_prices,after)
	$(BIN)/costsched prices import $(LOCAL)/prices-after.csv --whole
	$(BIN)/costsched migrate
	@echo "== The cloud takes the instance away without notice; the supervisor recovers the job"
	@echo "   (status only looks: --no-reconcile) =="
	$(BIN)/python -m launchers.local preempt 1 --base-dir $(LOCAL)/instances
	$(BIN)/costsched status --wait 120 --no-reconcile
	@echo "== What it cost, per job, cloud and day, against on-demand and the launch-time choice kept"
	@echo "   (each baseline over the time it would have taken at the job's measured speed) =="
	$(BIN)/costsched report --html $(LOCAL)/report.html
	@echo "== No job is left: the supervisor ends by itself within seconds (daemon stop makes sure) =="
	$(BIN)/costsched daemon stop

# The same tools on the recorded 2019-2020 AWS and Azure spot prices.
demo-recorded: install
	@echo "== Import the recorded spot prices (a second run adds nothing) =="
	$(BIN)/costsched prices import $(RECORDED)/aws/cost $(RECORDED)/azure --db $(RECORDED_DB) --new-store
	@echo "== Plans as of 2020-03-01, us-east-1 spot: ResNet-50 picks a V100, recommendation a K80 =="
	$(BIN)/costsched plan examples/resnet50.yaml examples/recommendation.yaml --at 2020-03-01 --top 3 --db $(RECORDED_DB)
	@echo "== The same plans from Python, as a notebook gets them =="
	@$(BIN)/python -c "import costsched; print(costsched.plan(['examples/resnet50.yaml', \
		'examples/recommendation.yaml'], at='2020-03-01', db='$(RECORDED_DB)').table[['job', \
		'offering', 'expected_hours', 'expected_cost']].to_string(index=False))"
	@echo "== Backtest: 4-day jobs, 30 daily starts, cost of each policy against a static choice =="
	$(BIN)/costsched backtest --db $(RECORDED_DB) --region us-east-1,us-west-2 --days 4 --starts 30 \
		--first-start 2020-02-10 --plot .demo/backtest.png
	@echo "== Six 1-GPU jobs of a sweep placed together, four sharing one 4xV100 instance =="
	$(BIN)/costsched plan examples/sweep.yaml --at 2020-02-20 --share-instances --top 1 --db $(RECORDED_DB)

demo-deadline: install
	@echo "== Spot availability of 9 AWS zones in 2023 (195 s ticks), stored as intervals =="
	$(BIN)/costsched prices import $(SPOT_TRACES)/availability --db $(DEADLINE_DB) --new-store
	@echo "== 48-hour jobs due in 52 h: never late, and how close to the hindsight optimum =="
	$(BIN)/costsched backtest-deadline --deadline 52 --restart-minutes 3 --starts 5 \
		--db $(DEADLINE_DB) --plot .demo/deadline.png

# PostgreSQL tests run when COSTSCHED_TEST_PG_URL is set, or when a local server can be
# started (scripts/start-postgres.sh, as root); otherwise they are skipped with the reason.
# The tests that compare a job's results with a run by hand run a second time with the
# BLAS kernel settings some machines need set (or unset, when the machine sets them): a job
# must compute as it would when run by hand, either way.
BLAS_ENV := OPENBLAS_CORETYPE=Haswell OPENBLAS_L2_SIZE=1048576
# A file's tests run on one worker; the longest files first, in tests/conftest.py's order
# (LONG_FILES), not xdist's own (files of most tests first), so that none starts last.
DIST := -n 3 --dist loadfile --no-loadscope-reorder
# The tests write Python's bytecode even where the environment says not to
# (PYTHONDONTWRITEBYTECODE): otherwise every worker of every pass compiles the modules
# again and pytest rewrites every test module's asserts again (about 15 s of CPU a worker),
# and so does each subprocess for the modules it imports. git ignores __pycache__.
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest
# The second pass collects only the files that mark a test `results` (each worker would
# otherwise import the whole suite for these few tests); tests/test_suite_order.py checks
# that every test so marked is in one of them.
RESULTS_FILES = $(shell grep -rlE --include='test_*.py' 'mark\.results' tests | sort)
# Its 17 tests are spread one by one (a file's tests on several workers): they are few and
# long, and test_boot_path's two alone would hold one worker for a third of the pass
# (496 s against 472 s for the pass beside it on a loaded machine).
RESULTS_DIST := -n 3 --dist load
test: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mkdocs build --strict --quiet --site-dir build/site
	export COSTSCHED_TEST_PG_URL=$${COSTSCHED_TEST_PG_URL:-$$(bash scripts/start-postgres.sh 2>/dev/null || true)}; \
		$(PYTEST) $(DIST) --durations=15 && \
		if [ -n "$${OPENBLAS_CORETYPE:-}$${OPENBLAS_L2_SIZE:-}" ]; then \
			echo "== the result-comparing tests again, without OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE"; \
			env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(PYTEST) $(RESULTS_DIST) -m results $(RESULTS_FILES); \
		else \
			echo "== the result-comparing tests again, with $(BLAS_ENV)"; \
			env $(BLAS_ENV) $(PYTEST) $(RESULTS_DIST) -m results $(RESULTS_FILES); \
		fi

# The suite on a busy machine: CPU hogs (busy loops, one per core plus two; LOAD_HOGS=N
# for another count) run beside pytest for as long as it runs. No test may depend on the
# machine being quiet. TESTS=... runs part of the suite (default: all of it).
LOAD_HOGS ?=
TESTS ?=
test-loaded: $(VENV)/.installed-dev
	export COSTSCHED_TEST_PG_URL=$${COSTSCHED_TEST_PG_URL:-$$(bash scripts/start-postgres.sh 2>/dev/null || true)}; \
		$(BIN)/python scripts/under_load.py $(if $(LOAD_HOGS),--hogs $(LOAD_HOGS)) -- \
		$(PYTEST) $(DIST) --durations=15 $(TESTS)

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .

# The docs site (docs/, mkdocs.yml) in build/site; the references are regenerated first.
docs: $(VENV)/.installed-dev
	$(BIN)/python scripts/gen_reference.py
	$(BIN)/mkdocs build --strict --site-dir build/site

bench: $(VENV)/.installed-dev
	for b in bench/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .demo .pytest_cache build *.egg-info
