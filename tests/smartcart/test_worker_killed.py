"""Issue 15, "worker killed mid-run": a real Celery worker is SIGKILLed while it solves. Its
run's lease lapses within seconds and the next poll puts the run back on its queue (its one
retry); a fresh worker then finishes it. Before leases the run stayed ``running`` until the
broker's 3,900 s visibility timeout or the reaper's 150 s.

Needs PostgreSQL (``DATABASE_URL``; the worker shares pytest's test database) and starts its
own ``redis-server`` as the broker (``tests.redis_server``), so no shared Redis is touched.
"""

import os
import signal
import subprocess
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from django.test import override_settings
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from smartcart.models import OptimizationRun
from tests.carts import cart_with_choices
from tests.redis_server import private_redis  # noqa: F401  (fixture)
from tests.smartcart.test_integration import (
    ROOT,
    _publishing_to,
    _stop,
    _test_database_url,
    _wait_ready,
)

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

LEASE_S = 3
HEARTBEAT_S = 0.5


@pytest.fixture
def broker(private_redis):  # noqa: F811
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        pytest.skip("needs a PostgreSQL DATABASE_URL shared with the worker; CI sets it")
    url = private_redis.url(6)
    keyprefix = f"killtest-{uuid.uuid4().hex}:"
    with _publishing_to(url, keyprefix=keyprefix):
        yield url, keyprefix


def _start_worker(broker_url: str, keyprefix: str, log: Path, *, sleep_s: float):
    env = {
        **os.environ,
        "DATABASE_URL": _test_database_url(),
        "REDIS_URL": broker_url,
        "ITEST_BROKER_KEYPREFIX": keyprefix,
        "ITEST_SOLVE_SLEEP_S": str(sleep_s),
        "SMARTCART_LEASE_S": str(LEASE_S),
        "SMARTCART_HEARTBEAT_S": str(HEARTBEAT_S),
        "SMARTCART_WARMUP": "0",
        "SECRET_KEY": "worker-killed-test-only",
        "DEBUG": "0",
        "CONN_MAX_AGE": "0",
        "DJANGO_SETTINGS_MODULE": "tests.smartcart.worker_settings_slow",
        "PYTHONUNBUFFERED": "1",
    }
    command = [
        str(Path(sys.executable).with_name("celery")),
        *("-A", "storefront", "worker", "-Q", "cpu,gpu", "--pool=solo", "--concurrency=1"),
        *("--prefetch-multiplier=1", "--without-gossip", "--without-mingle"),
        *("--without-heartbeat", "-n", f"kill-{uuid.uuid4().hex[:8]}@%h", "--loglevel=INFO"),
    ]
    with log.open("ab") as out:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    _wait_ready(process, log)
    return process


def _poll(client: APIClient, url: str, until, timeout_s: float, log: Path) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        body = client.get(url).json()
        if until(body):
            return body
        time.sleep(0.2)
    pytest.fail(f"no change within {timeout_s} s (last: {body['status']}):\n{log.read_text()}")


@override_settings(
    SMARTCART_INLINE_MAX_MS=0, SMARTCART_LEASE_S=LEASE_S, SMARTCART_HEARTBEAT_S=HEARTBEAT_S
)
def test_a_killed_workers_run_is_retried_within_seconds(broker, tmp_path):
    broker_url, keyprefix = broker
    log = tmp_path / "worker.log"
    cart = cart_with_choices(lines=4)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=cart.owner).key}")

    slow = _start_worker(broker_url, keyprefix, log, sleep_s=120)
    try:
        created = client.post("/api/v1/cart/optimizations/", {"budget_ms": 100}, format="json")
        assert created.status_code == 202, created.json()
        url = created["Location"]
        run = OptimizationRun.objects.get(pk=created.json()["id"])
        _poll(client, url, lambda body: body["status"] == "running", 30, log)
        first_lease = OptimizationRun.objects.get(pk=run.pk).lease_expires_at
        # Alive and solving past its first lease: the heartbeat renews it.
        while timezone.now() <= first_lease:
            time.sleep(0.1)
        assert client.get(url).json()["status"] == "running"
        assert OptimizationRun.objects.get(pk=run.pk).lease_expires_at > first_lease
        os.killpg(slow.pid, signal.SIGKILL)
        slow.wait(timeout=10)
        # The lease the dead worker left lapses within LEASE_S, and the first poll after it
        # puts the run back on its queue (those before it see it running).
        lapses_at = OptimizationRun.objects.get(pk=run.pk).lease_expires_at
        assert lapses_at <= timezone.now() + timedelta(seconds=LEASE_S)
        while True:
            asked_at = timezone.now()
            requeued = client.get(url).json()
            if asked_at > lapses_at or requeued["status"] != "running":
                break
            time.sleep(0.2)
    finally:
        _stop(slow)
    assert requeued["status"] == "queued", requeued
    assert OptimizationRun.objects.get(pk=requeued["id"]).attempts == 1

    fresh = _start_worker(broker_url, keyprefix, log, sleep_s=0)
    try:
        done = _poll(client, url, lambda body: body["status"] in ("done", "failed"), 60, log)
    finally:
        _stop(fresh)
    assert done["status"] == "done", done
    assert OptimizationRun.objects.get(pk=done["id"]).attempts == 2
