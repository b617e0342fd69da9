"""Database connections stay bounded under the threaded runserver: 100 requests (ten at a
time, each on a new server thread) leave at most the pool's size open, not one per thread
(87 of them were seen, then PostgreSQL's "too many clients"). A pooled connection the server
closed is replaced before a request gets it (psycopg_pool's ``check``), so terminating every
connection costs no request a 500."""

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


def _fresh_database(suffix: str):
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        pytest.skip("needs a PostgreSQL DATABASE_URL (CI sets it)")
    parts = urlsplit(url)
    name = f"{parts.path.lstrip('/') or 'postgres'}_{suffix}"
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    yield urlunsplit(parts._replace(path=f"/{name}")), admin, name
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def server_database():
    yield from _fresh_database("connections")


@pytest.fixture
def checked_pool_database():
    yield from _fresh_database("pool_check")


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


def _terminate_connections(admin: str, name: str) -> int:
    with psycopg.connect(admin, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
            [name],
        ).fetchall()
    return sum(1 for (terminated,) in rows if terminated)


def test_connections_the_server_closed_never_reach_a_request(checked_pool_database):
    url, admin, name = checked_pool_database
    # No page cache: every request must read the database.
    env = server_env(
        database_url=url,
        DB_POOL_MIN_SIZE=str(POOL_MAX),
        DB_POOL_MAX_SIZE=str(POOL_MAX),
        PAGE_CACHE="0",
    )
    manage(env, "migrate", "--noinput")
    port = free_port()
    command = [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"]
    with serve(env, command, port=port) as base:

        def fetch(_):
            return requests.get(f"{base}/api/v1/categories/", timeout=30).status_code

        with ThreadPoolExecutor(max_workers=POOL_MAX * 2) as pool:
            assert list(pool.map(fetch, range(40))) == [200] * 40
        assert _terminate_connections(admin, name) >= POOL_MAX
        codes = [fetch(n) for n in range(3 * POOL_MAX)]
        with ThreadPoolExecutor(max_workers=POOL_MAX * 2) as pool:
            codes += list(pool.map(fetch, range(40)))
        assert codes == [200] * len(codes)
