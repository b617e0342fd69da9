import pytest
from django.core.management import call_command
from django.db import connection

on_postgres = connection.vendor == "postgresql"
postgres_only = pytest.mark.skipif(
    not on_postgres,
    reason="full-text ranking and pg_trgm typo tolerance exist only on PostgreSQL: run with "
    "DATABASE_URL=postgres://... (the SQLite fallback has its own tests)",
)
sqlite_only = pytest.mark.skipif(
    on_postgres, reason="tests the SQLite fallback's own typo tolerance (difflib)"
)


@pytest.fixture
def demo(db):
    """A small demo catalog from the real seed, with the demo shopper's cart (to 10115)."""
    call_command("seed_demo", "--seed", "7", "--merchants", "10", "--products", "300", verbosity=0)
