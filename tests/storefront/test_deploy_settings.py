"""Production settings: the documented variables pass ``check --deploy``; no secret default."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    # A deployment's environment: no test-only switches inherited from this test process.
    test_only = {"DEBUG", "SECRET_KEY", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    clean = {k: v for k, v in os.environ.items() if k not in test_only}
    clean["DJANGO_SETTINGS_MODULE"] = "storefront.config.settings.base"
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_production_settings_pass_check_deploy():
    done = _manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        SECRET_KEY=secrets.token_urlsafe(64),
        ALLOWED_HOSTS="shop.example.com",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout


def test_no_secret_key_default_outside_debug():
    done = _manage("check", ALLOWED_HOSTS="shop.example.com")
    assert done.returncode != 0
    assert "SECRET_KEY must be set" in done.stderr


def test_production_pool_checks_connections_and_pages_send_a_policy():
    probe = (
        "from django.conf import settings as s; d = s.DATABASES['default']; "
        "print(d['CONN_HEALTH_CHECKS'], 'pool' in d['OPTIONS'], "
        "'csp.middleware.CSPMiddleware' in s.MIDDLEWARE, s.STAFF_TOTP_REQUIRED)"
    )
    done = _manage(
        "shell",
        "-c",
        probe,
        SECRET_KEY=secrets.token_urlsafe(64),
        ALLOWED_HOSTS="shop.example.com",
        # Never connected to: the settings are only read.
        DATABASE_URL="postgres://shop@127.0.0.1:9/shop",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-4:] == ["True", "True", "True", "False"]
