"""Database connections stay bounded under the threaded runserver: 100 requests (ten at a
time, each on a new server thread) leave at most the pool's size open, not one per thread
(87 of them were seen, then PostgreSQL's "too many clients")."""

import os
import sys
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
import requests

from tests.live_server import free_port, manage, serve, server_env

pytestmark = pytest.mark.integration

POOL_MAX = 4


@pytest.fixture
def server_database():
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        pytest.skip("needs a PostgreSQL DATABASE_URL (CI sets it)")
    parts = urlsplit(url)
    name = f"{parts.path.lstrip('/') or 'postgres'}_connections"
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    yield urlunsplit(parts._replace(path=f"/{name}")), admin, name
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _open_connections(admin: str, name: str) -> int:
    with psycopg.connect(admin, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", [name]
        ).fetchone()
    return int(row[0])


def test_runserver_threads_share_a_bounded_pool(server_database):
    url, admin, name = server_database
    env = server_env(database_url=url, DB_POOL_MAX_SIZE=str(POOL_MAX))
    manage(env, "migrate", "--noinput")
    port = free_port()
    command = [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"]
    with serve(env, command, port=port) as base:

        def fetch(_):
            return requests.get(f"{base}/api/v1/categories/", timeout=30).status_code

        with ThreadPoolExecutor(max_workers=10) as pool:
            codes = list(pool.map(fetch, range(100)))
        assert codes == [200] * 100
        assert _open_connections(admin, name) <= POOL_MAX
