# Smart Cart: `make demo` serves the seeded shop, `make test` runs lint, mypy and the whole suite
# (`make test-fast`: the same without the browser, worker, CUDA simulator and slow tests).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
HOST   ?= 127.0.0.1
PORT   ?= 8000
GPU    ?= 0
# numba host threads per gpu worker: with N workers on a host, cores // N (empty: every core).
HOST_THREADS ?=

.PHONY: venv demo test test-fast lint format worker worker-cpu worker-gpu beat bench calibrate clean prod-local loadtest

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

# The production-like stack on this machine from the Procfile (honcho): gunicorn, a cpu
# worker and beat, after migrate and collectstatic. DEBUG off, plain HTTP on loopback.
# Needs DATABASE_URL (PostgreSQL) and REDIS_URL. SECRET_KEY comes from the environment, else from
# .prod-local-secret (generated once, mode 600, git-ignored), so restarts keep sessions and the
# key is never printed: the commands echo the file's name, not its content. Beat keeps its
# schedule in this checkout (.celerybeat-schedule), so two checkouts never share one file.
# SEED=1 seeds the demo catalog and logins into an empty database (local use only). Mail is
# printed by the worker unless EMAIL_BACKEND says otherwise.
SECRET_FILE := .prod-local-secret
PROD_ENV = env -u DEBUG PATH="$(abspath $(BIN)):$$PATH" \
	SECRET_KEY="$${SECRET_KEY:-$$(cat $(SECRET_FILE))}" \
	CELERY_BEAT_SCHEDULE_FILE="$${CELERY_BEAT_SCHEDULE_FILE:-$(abspath .celerybeat-schedule)}" \
	ALLOWED_HOSTS="$${ALLOWED_HOSTS:-127.0.0.1,localhost}" SECURE_SSL_REDIRECT=0 \
	SECURE_HSTS_SECONDS=0 SECURE_COOKIES=0 WEB_BIND="$(HOST):$(PORT)" \
	EMAIL_BACKEND="$${EMAIL_BACKEND:-django.core.mail.backends.console.EmailBackend}"

$(SECRET_FILE):
	@umask 077 && $(PYTHON) -c 'import secrets; print(secrets.token_urlsafe(50))' > $@
	@echo "  A new SECRET_KEY is in $@ (kept across restarts; delete it to log everyone out)."

prod-local: venv $(SECRET_FILE)
	@test -n "$$DATABASE_URL" -a -n "$$REDIS_URL" || \
		{ echo "prod-local needs DATABASE_URL and REDIS_URL, e.g. DATABASE_URL=postgres://postgres@127.0.0.1:5432/smartcart REDIS_URL=redis://127.0.0.1:6379/0 make prod-local"; exit 1; }
	$(PROD_ENV) $(BIN)/python manage.py migrate --noinput
	$(PROD_ENV) $(BIN)/python manage.py collectstatic --noinput
	@if [ "$(SEED)" = "1" ]; then $(PROD_ENV) $(BIN)/python manage.py seed_demo --if-empty && \
		$(PROD_ENV) $(BIN)/python manage.py recompute_cheapest --all; fi
	$(PROD_ENV) $(BIN)/python manage.py warmup
	@echo "  Production-like stack: http://$(HOST):$(PORT)/  health: /health/  metrics: /metrics"
	$(PROD_ENV) $(BIN)/honcho -f Procfile start

# Load test against a running `make prod-local` on HOST:PORT: each scenario (shopper, trivial
# view) stepped through LOAD_USERS for LOAD_STEP_S seconds each; stops by itself.
LOAD_USERS  ?= 1,2,4,8
LOAD_STEP_S ?= 30
loadtest: venv
	$(BIN)/python loadtest/run.py --host http://$(HOST):$(PORT) --users $(LOAD_USERS) \
		--step-s $(LOAD_STEP_S)

# Two xdist workers (CI and the dev machine have two cores); tests that must not overlap share
# an xdist_group (tests/conftest.py). PYTEST_WORKERS=0 runs serially.
PYTEST_WORKERS ?= 2

test: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadgroup

# The inner loop: lint, types and the unit tests, leaving out the markers that need browsers,
# Celery workers, the CUDA simulator or many examples (tests/conftest.py, pyproject.toml).
FAST_TESTS ?= not e2e and not integration and not cudasim and not slow and not gpu

# Bytecode and pytest's rewritten test modules are kept in __pycache__ (git-ignored) even where
# the environment turns them off: compiling the suite afresh costs each worker ~10 s.
test-fast: export PYTHONDONTWRITEBYTECODE :=
test-fast: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadgroup -m "$(FAST_TESTS)"

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
# With N cards on one host give each its share of the cores: HOST_THREADS=$$(( $$(nproc) / N )).
worker-gpu: venv
	CUDA_VISIBLE_DEVICES=$(GPU) GPU_ENGINE_HOST_THREADS=$(HOST_THREADS) $(BIN)/celery -A storefront worker -Q gpu --pool=solo \
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
