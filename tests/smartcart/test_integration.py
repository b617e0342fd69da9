"""The whole improve-cart flow against real services: PostgreSQL, Redis and a Celery worker
process (``celery -A storefront worker -Q cpu,gpu --pool=solo``).

CI sets ``DATABASE_URL`` (PostgreSQL) and ``REDIS_URL``; without both the test is skipped
and says why. The worker reads pytest-django's test database (the test is transactional, so
the worker sees committed rows). Every Redis key of this run, on the publishing side and the
worker's, carries a prefix of its own (kombu's ``global_keyprefix``), so test runs, workers
and deployments sharing the Redis never see each other's queues, and nothing is deleted but
this run's own keys.
"""

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest
import redis
from django.db import connection
from django.test import override_settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from storefront.config.celery import app
from tests.carts import cart_from_problem, cart_with_choices
from tests.redis_server import broker_pools_drop

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
WORKER_START_S = 90
STOP_S = 20
WORKER_SETTINGS = "tests.smartcart.worker_settings"


def _require_services() -> str:
    database_url = os.environ.get("DATABASE_URL", "")
    redis_url = os.environ.get("REDIS_URL", "")
    if not redis_url.startswith(("redis://", "rediss://")):
        pytest.skip("integration test needs REDIS_URL (a Redis broker); CI sets it")
    if not database_url.startswith(("postgres://", "postgresql://")):
        pytest.skip("integration test needs a PostgreSQL DATABASE_URL; CI sets it")
    return redis_url


def _test_database_url() -> str:
    db = connection.settings_dict
    user = db.get("USER") or "postgres"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    host = db.get("HOST") or "127.0.0.1"
    port = db.get("PORT") or 5432
    return f"postgres://{user}{password}@{host}:{port}/{db['NAME']}"


@contextmanager
def _publishing_to(url: str, *, keyprefix: str):
    """Makes this process publish tasks to ``url``, under ``keyprefix``, instead of running
    them in-process.

    The broker connection pools are created on first publish from the configuration; they
    are dropped on the way in and out so neither side keeps a connection to the other broker.
    """
    conf = app.conf
    saved = conf.task_always_eager, conf.broker_url, conf.broker_transport_options
    broker_pools_drop()
    conf.task_always_eager, conf.broker_url = False, url
    conf.broker_transport_options = {**saved[2], "global_keyprefix": keyprefix}
    try:
        yield
    finally:
        broker_pools_drop()
        conf.task_always_eager, conf.broker_url, conf.broker_transport_options = saved


@pytest.fixture
def broker():
    """``(url, keyprefix)``: the shared Redis, with a key prefix unique to this test run."""
    url = _require_services()
    keyprefix = f"itest-{uuid.uuid4().hex}:"
    with _publishing_to(url, keyprefix=keyprefix):
        yield url, keyprefix
    client = redis.Redis.from_url(url)
    own_keys = list(client.scan_iter(match=f"{keyprefix}*"))
    if own_keys:
        client.delete(*own_keys)


@pytest.fixture
def worker(broker, tmp_path):
    broker_url, keyprefix = broker
    log = tmp_path / "worker.log"
    env = {
        **os.environ,
        "DATABASE_URL": _test_database_url(),
        "REDIS_URL": broker_url,
        "ITEST_BROKER_KEYPREFIX": keyprefix,
        "SECRET_KEY": os.environ.get("SECRET_KEY", "integration-test-only"),
        "DEBUG": "0",
        "CONN_MAX_AGE": "0",
        "DJANGO_SETTINGS_MODULE": WORKER_SETTINGS,
        "PYTHONUNBUFFERED": "1",
    }
    command = [
        str(Path(sys.executable).with_name("celery")),
        "-A",
        "storefront",
        "worker",
        "-Q",
        "cpu,gpu",
        "--pool=solo",
        "--concurrency=1",
        "--prefetch-multiplier=1",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
        "-n",
        f"itest-{uuid.uuid4().hex[:8]}@%h",
        "--loglevel=INFO",
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _wait_ready(process, log)
        yield process, log
    finally:
        _stop(process)


def _wait_ready(process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + WORKER_START_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the worker exited with {process.returncode}:\n{log.read_text()}")
        if "ready." in log.read_text(errors="replace"):
            return
        time.sleep(0.2)
    pytest.fail(f"the worker was not ready within {WORKER_START_S} s:\n{log.read_text()}")


def _stop(process: subprocess.Popen) -> None:
    """Warm shutdown (SIGTERM), then SIGKILL if it has not exited within STOP_S."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=STOP_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=STOP_S)


def _poll_until_finished(client: APIClient, url: str, log: Path, timeout_s: float = 60) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        body = client.get(url).json()
        if body["status"] in ("done", "failed"):
            return body
        time.sleep(0.05)
    pytest.fail(f"the run did not finish within {timeout_s} s; worker log:\n{log.read_text()}")


@override_settings(SMARTCART_INLINE_MAX_MS=0)  # every run goes through the queue
def test_optimize_on_a_real_worker_then_apply(worker):
    process, log = worker
    cart = cart_with_choices(lines=4)
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=cart.owner)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    before = client.get("/api/v1/cart/").json()

    created = client.post("/api/v1/cart/optimizations/", {}, format="json")
    assert created.status_code == 202, created.json()
    assert created.json()["route"] == "cpu"
    run = _poll_until_finished(client, created["Location"], log)
    assert run["status"] == "done", run["error"]
    assert run["current_total"] == before["total"]
    assert run["suggested_total"] < run["current_total"]
    assert run["timings"]["queue_wait_ms"] is not None

    applied = client.post(run["apply_url"])
    assert applied.status_code == 200, applied.json()
    cart_after = client.get("/api/v1/cart/").json()
    assert cart_after["total"] == run["suggested_total"]
    assert cart_after["version"] == run["cart_version"] + 1
    assert process.poll() is None, log.read_text()
    assert "smartcart.optimization_run_execute[" in log.read_text()


@override_settings(SMARTCART_INLINE_MAX_MS=0)  # every run goes through the queue
def test_a_real_worker_answers_the_cart_that_crashed_highs_and_lives_on(worker):
    """Issue 25: ``highs-segfault-9e7`` took the solving process down inside HiGHS."""
    process, log = worker
    repro = ROOT / "tests" / "gpu_engine" / "repro" / "highs-segfault-9e7.json"
    cart = cart_from_problem(json.loads(repro.read_text()))
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=cart.owner)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    created = client.post("/api/v1/cart/optimizations/", {}, format="json")
    assert created.status_code == 202, created.json()
    run = _poll_until_finished(client, created["Location"], log)
    assert run["status"] == "done", run["error"]
    assert run["suggested_total"] == 45_794_863
    assert process.poll() is None, log.read_text()
    # And it answers the next shopper.
    other = cart_with_choices(lines=2)
    token, _ = Token.objects.get_or_create(user=other.owner)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    created = client.post("/api/v1/cart/optimizations/", {}, format="json")
    assert _poll_until_finished(client, created["Location"], log)["status"] == "done"
    assert process.poll() is None, log.read_text()
