"""A production-like server in a subprocess (``DEBUG`` off, its own database) for tests that
need a real server: schemathesis over HTTP, connection counts under runserver."""

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def server_env(*, database_url: str, **overrides: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE", "DEBUG"}
    }
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "storefront.config.settings.base",
            "SECRET_KEY": "live-test-secret-key-" + "x" * 40,
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "DATABASE_URL": database_url,
            "SECURE_SSL_REDIRECT": "0",
            "EMAIL_BACKEND": "django.core.mail.backends.locmem.EmailBackend",
            "SMARTCART_WARMUP": "0",
            "NUMBA_ENABLE_CUDASIM": "1",
            "LOG_LEVEL": "WARNING",
            "PYTHONPATH": str(ROOT),
        }
    )
    env.update(overrides)
    return env


def manage(env: dict[str, str], *args: str, timeout: float = 300) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@contextlib.contextmanager
def serve(env: dict[str, str], command: list[str], *, port: int) -> Iterator[str]:
    """Starts ``command`` (it must listen on ``port``), waits until ``/health/`` answers and
    yields the base URL; the server is stopped on exit."""
    log = open(os.devnull, "w")  # noqa: SIM115 (closed below)
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, f"{command[0]} exited with {process.returncode}"
            try:
                requests.get(f"{base}/health/", timeout=10)
                break
            except requests.RequestException:
                assert time.monotonic() < deadline, "the server did not start within 120 s"
                time.sleep(0.3)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def gunicorn(port: int, *, workers: int = 2, threads: int = 1) -> list[str]:
    return [
        sys.executable,
        "-m",
        "gunicorn",
        "storefront.config.wsgi:application",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--threads",
        str(threads),
    ]
