# Smart Cart: `make demo` serves the seeded shop, `make test` runs lint, mypy and the whole suite.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
HOST   ?= 127.0.0.1
PORT   ?= 8000
GPU    ?= 0

.PHONY: venv demo test lint format worker worker-cpu worker-gpu beat bench calibrate clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11+ is required")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	@touch $(STAMP)

venv: $(STAMP)

# The embedded default: SQLite and in-process tasks, whatever the shell has set.
demo: venv
	env -u DATABASE_URL -u REDIS_URL DEBUG=1 $(BIN)/python manage.py migrate --noinput
	env -u DATABASE_URL -u REDIS_URL DEBUG=1 $(BIN)/python manage.py seed_demo --if-empty
	env -u DATABASE_URL -u REDIS_URL DEBUG=1 $(BIN)/python manage.py recompute_cheapest --all
	@# Compile every kernel a request can reach into Numba's on-disk cache before serving.
	env -u DATABASE_URL -u REDIS_URL DEBUG=1 $(BIN)/python manage.py warmup
	@echo ""
	@echo "  Smart Cart demo shop: http://$(HOST):$(PORT)/"
	@echo "  Demo logins (demo only, never in production):"
	@echo "    shopper: demo / demo-shopper-pass      admin: admin / demo-admin-pass  (http://$(HOST):$(PORT)/admin/)"
	@echo "    merchant staff: merchant / demo-merchant-pass  (its orders in http://$(HOST):$(PORT)/admin/)"
	@echo ""
	env -u DATABASE_URL -u REDIS_URL DEBUG=1 $(BIN)/python manage.py runserver $(HOST):$(PORT)

# Two xdist workers (CI and the dev machine have two cores); tests that must not overlap share
# an xdist_group (tests/conftest.py). PYTEST_WORKERS=0 runs serially.
PYTEST_WORKERS ?= 2

test: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadgroup

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: venv
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# Real workers need REDIS_URL (and normally DATABASE_URL) in the environment.
worker: worker-cpu

worker-cpu: venv
	$(BIN)/celery -A storefront worker -Q cpu --prefetch-multiplier=1 -n cpu@%h --loglevel=INFO

# One solo worker per GPU: CUDA does not survive fork. Start one per card: make worker-gpu GPU=1
worker-gpu: venv
	CUDA_VISIBLE_DEVICES=$(GPU) $(BIN)/celery -A storefront worker -Q gpu --pool=solo \
		--concurrency=1 --prefetch-multiplier=1 -n gpu$(GPU)@%h --loglevel=INFO

# Periodic jobs (reaping optimisation runs stuck past their time limit): run exactly one.
beat: venv
	$(BIN)/celery -A storefront beat --loglevel=INFO

bench: venv
	$(BIN)/python -m pip install --quiet -e ".[dev,bench]"
	$(BIN)/python -m gpu_engine bench

# Measures this machine's solver rates and writes the planner's profile (see README).
calibrate: venv
	$(BIN)/python -m gpu_engine calibrate

clean:
	rm -rf $(VENV) staticfiles db.sqlite3 .pytest_cache
