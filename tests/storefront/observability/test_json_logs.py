"""LOG_FORMAT=json: one JSON object per log line, for log shippers."""

import json
import subprocess
import sys

import pytest

from tests.live_server import ROOT, server_env


@pytest.mark.slow
def test_json_log_lines(tmp_path):
    env = server_env(database_url=f"sqlite:///{tmp_path / 'db.sqlite3'}", LOG_FORMAT="json")
    env["LOG_LEVEL"] = "INFO"
    emit = "import logging; logging.getLogger('storefront.probe').warning('hello %s', 'ops')"
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", emit],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    lines = [json.loads(line) for line in done.stderr.splitlines() if "storefront.probe" in line]
    assert len(lines) == 1
    assert lines[0]["message"] == "hello ops"
    assert lines[0]["level"] == "WARNING"
    assert lines[0]["logger"] == "storefront.probe"
    assert "time" in lines[0]
