"""Error tracking is opt-in: SENTRY_DSN set turns the client on, unset sends nothing."""

import subprocess
import sys

import pytest

from tests.live_server import ROOT, server_env

PROBE = "import sentry_sdk; print(sentry_sdk.get_client().is_active())"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("dsn", "active"), [("", "False"), ("https://public@sentry.example.invalid/1", "True")]
)
def test_sentry_only_with_a_dsn(tmp_path, dsn, active):
    env = server_env(database_url=f"sqlite:///{tmp_path / 'db.sqlite3'}", SENTRY_DSN=dsn)
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", PROBE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.strip().splitlines()[-1] == active
