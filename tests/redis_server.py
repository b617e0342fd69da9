"""A private ``redis-server`` a test starts and stops itself, on a free port of 16400-16499,
so an outage can be simulated without touching the shared Redis, and ``redis_down``: the
deployment's cache and broker pointed at one that is then stopped."""

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import kombu.pools
import pytest
import redis
from django.test import override_settings

PORTS = range(16400, 16500)
# Each xdist worker draws from its own slice: a stopped server's port, free again, must never
# be taken by another worker's server while a test still expects nothing to answer there.
_SLICE = 10


def _worker_ports() -> range:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    index = int(worker) if worker.isdigit() else 0
    start = PORTS.start + (index * _SLICE) % len(PORTS)
    return range(start, start + _SLICE)


def _free_port() -> int:
    for port in _worker_ports():
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {_worker_ports()}")


class PrivateRedis:
    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = _free_port()
        self.process: subprocess.Popen | None = None

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                shutil.which("redis-server") or "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.workdir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if redis.Redis(port=self.port, socket_connect_timeout=0.2).ping():
                    return
            except redis.exceptions.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server did not start on {self.port}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        self.process = None


@pytest.fixture
def private_redis(tmp_path):
    if shutil.which("redis-server") is None:
        pytest.skip("needs redis-server on PATH")
    server = PrivateRedis(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def broker_pools_drop() -> None:
    """Forgets this process's broker connections, so the next publish connects to the
    broker the configuration names now."""
    from storefront.config.celery import app

    # Not app.close(): that also unregisters the app, and tasks imported later would then
    # never be added to it.
    app._pool = None
    app.amqp._producer_pool = None
    # kombu keeps one pool per broker URL for the whole process, and hands the same one back
    # for the same URL: a pool closed only here would be the next test's closed memory:// pool.
    kombu.pools.reset()


@pytest.fixture
def redis_down(private_redis):
    """The deployment's settings (cache and broker on one Redis) pointed at a private Redis,
    which is then stopped."""
    from storefront.caching.cache import cache_outage_forget
    from storefront.config.celery import app

    caches = {
        "default": {
            "BACKEND": "storefront.caching.cache.ResilientRedisCache",
            "LOCATION": private_redis.url(6),
            "KEY_PREFIX": "outage-test",
        }
    }
    conf = app.conf
    saved = conf.task_always_eager, conf.broker_url
    conf.task_always_eager, conf.broker_url = False, private_redis.url(6)
    broker_pools_drop()
    try:
        with override_settings(CACHES=caches):
            private_redis.stop()
            cache_outage_forget()
            yield private_redis
    finally:
        broker_pools_drop()
        conf.task_always_eager, conf.broker_url = saved
        cache_outage_forget()
