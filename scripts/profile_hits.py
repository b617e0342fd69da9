"""CPU cost of one request through the whole WSGI stack (Django's handler and every
middleware, no socket), for the static file and the cached page paths, interleaved in rounds
so that a busy machine skews them alike. Not a test: it prints numbers.

    DATABASE_URL=... REDIS_URL=... SECRET_KEY=x ALLOWED_HOSTS=127.0.0.1 SECURE_SSL_REDIRECT=0 \\
        python scripts/profile_hits.py [ROUNDS] [COUNT]
    PROFILE=product python scripts/profile_hits.py   # + a cProfile of that path's hits

Requests carry no cookie (an anonymous first visit, as wrk sends them); the first of each
path fills the cache. The product is the demo's product with the most active offers.
"""

import cProfile
import io
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "storefront.config.settings.base")

import django

django.setup()

from django.core.wsgi import get_wsgi_application  # noqa: E402

from scripts.page_paths import DEFAULT_SEARCH, page_paths  # noqa: E402

application = get_wsgi_application()


def _environ(path: str) -> dict:
    path_info, _, query = path.partition("?")
    return {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path_info,
        "QUERY_STRING": query,
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8018",
        "HTTP_HOST": "127.0.0.1:8018",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(b""),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
        "wsgi.version": (1, 0),
    }


def hit(path: str) -> tuple[str, int]:
    status = []

    def start_response(line, headers, exc_info=None):
        status.append(line)

    body = application(_environ(path), start_response)
    size = 0
    try:
        for chunk in body:
            size += len(chunk)
    finally:
        if hasattr(body, "close"):
            body.close()
    return status[0], size


def main(rounds: int = 5, count: int = 200) -> None:
    pages = page_paths(search=os.environ.get("SEARCH", DEFAULT_SEARCH))
    # The static file first (the baseline the others are compared with), then the pages.
    order = ("categories", "search", "product", "home")
    paths = {"static": "/static/web/shop.css", **{name: pages[name] for name in order}}
    for name, path in paths.items():
        for _ in range(3):
            status, size = hit(path)
        assert status.startswith("200"), (name, status)
        print(f"{name}: {path} -> {status}, {size} bytes")
    cpu: dict[str, list[float]] = {name: [] for name in paths}
    wall: dict[str, list[float]] = {name: [] for name in paths}
    for _ in range(rounds):
        for name, path in paths.items():
            start, used = time.perf_counter(), time.process_time()
            for _ in range(count):
                hit(path)
            wall[name].append((time.perf_counter() - start) / count * 1e6)
            cpu[name].append((time.process_time() - used) / count * 1e6)
    base = statistics.median(cpu["static"])
    print(f"\nmedian of {rounds} rounds x {count} requests (microseconds per request)")
    for name in paths:
        c, w = statistics.median(cpu[name]), statistics.median(wall[name])
        print(f"{name:>11}: {c:7.0f} us CPU ({c / base:4.1f}x static)  {w:7.0f} us wall")
    target = os.environ.get("PROFILE")
    if target:
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(count):
            hit(paths[target])
        profile.disable()
        stats = pstats.Stats(profile)
        stats.sort_stats(os.environ.get("SORT", "cumulative")).print_stats(45)


if __name__ == "__main__":
    args = [int(arg) for arg in sys.argv[1:3]]
    main(*args)
