"""Per-request cost of the home, product and search paths, in-process (Django's test client,
one request at a time), with the shared page cache on or off; optionally a cProfile of one.

    DATABASE_URL=... REDIS_URL=... SECRET_KEY=x ALLOWED_HOSTS=testserver SECURE_SSL_REDIRECT=0 \\
        python scripts/profile_pages.py uncached [home product search categories]
    PROFILE=1 python scripts/profile_pages.py uncached home   # + the top of a cProfile

The product is the demo's product with the most active offers. Not a test: it prints numbers.
On a shared machine the CPU time swings with the load: compare revisions by alternating runs
and taking each one's minimum.
"""

import cProfile
import os
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "storefront.config.settings.base")

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from scripts.page_paths import DEFAULT_SEARCH, page_paths  # noqa: E402


def main(mode: str, names: list[str]) -> None:
    paths = page_paths(search=os.environ.get("SEARCH", DEFAULT_SEARCH))
    settings.PAGE_CACHE = mode == "cached"
    client = Client()
    for name in names or list(paths):
        for _ in range(5):
            assert client.get(paths[name]).status_code == 200
        count = int(os.environ.get("COUNT", 200 if mode == "cached" else 40))
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(count):
            client.get(paths[name])
        elapsed = (time.perf_counter() - start) / count * 1000
        # CPU time of this process: what a render costs, without the waits on PostgreSQL
        # and Redis or the time other processes take the cores (a shared machine).
        used = (time.process_time() - cpu) / count * 1000
        with CaptureQueriesContext(connection) as queries:
            client.get(paths[name])
        sql_ms = sum(float(query["time"]) for query in queries.captured_queries) * 1000
        print(
            f"{mode} {name}: {elapsed:.2f} ms/request wall, {used:.2f} ms CPU, "
            f"{len(queries)} queries ({sql_ms:.1f} ms SQL wall)",
            flush=True,
        )
    if os.environ.get("PROFILE"):
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(20):
            client.get(paths[(names or list(paths))[0]])
        profile.disable()
        pstats.Stats(profile).sort_stats(os.environ.get("SORT", "tottime")).print_stats(40)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
