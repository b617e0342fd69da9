"""The improve-cart round-trip benchmark behind ``manage.py bench_optimize``.

Each run is one shopper's cart of random demo products, optimized through the real API stack
in this process (URL routing, token auth, DRF, the exception handler) with Django's test
client; queued runs go through the real broker to a real worker. Measured per run:

- ``round_trip``: from sending the POST to seeing the run ``done`` (inline: the POST itself;
  queued: the POST, then polling the run's row every ``poll_ms``, so up to ``poll_ms`` late).
  ``round_trip_server``: from sending the POST to the run's ``finished_at`` (same host, same
  clock), free of polling delay but without the final commit.
- ``request``: the POST alone, and ``request_db`` the SQL time inside it (an execute
  wrapper on the connection): reading the cart, inserting the run, the commit.
- ``queue_wait``: the run's ``created_at`` to ``started_at`` (commit, broker, the worker
  taking the message and marking the run running).
- ``worker_db``: the worker reading the cart (``build_ms``); ``solve``: ``gpu_engine.solve``;
  ``finish``: the rest of the worker's time (pricing the answer, writing it).

Setup (carts, tokens, then ``VACUUM (ANALYZE)`` of the tables it wrote) is not timed; every
bench user is deleted at the end.
"""

import random
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Count, Q
from django.test import Client
from rest_framework.authtoken.models import Token

from smartcart.models import OptimizationRun
from storefront.models import Cart, CartLine, Offer, Product
from storefront.models.catalog import stock_covers

USER_PREFIX = "bench-optimize-"
DESTINATIONS = ("10115", "20095", "80331", "50667", "")
URL = "/api/v1/cart/optimizations/"


@dataclass
class Sample:
    round_trip: float
    round_trip_server: float
    request: float
    request_db: float
    queue_wait: float | None
    worker_db: float | None
    solve: float | None
    finish: float | None
    route: str
    algorithm: str
    optimal: bool
    lines: int


@dataclass
class Series:
    name: str
    samples: list[Sample] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    COLUMNS = (
        "round_trip",
        "round_trip_server",
        "request",
        "request_db",
        "queue_wait",
        "worker_db",
        "solve",
        "finish",
    )

    def stats(self) -> dict[str, dict[str, float]]:
        out = {}
        for column in self.COLUMNS:
            values = [getattr(s, column) for s in self.samples]
            values = sorted(v for v in values if v is not None)
            if values:
                out[column] = {
                    "p50": percentile(values, 50),
                    "p95": percentile(values, 95),
                    "p99": percentile(values, 99),
                    "max": values[-1],
                    "mean": statistics.fmean(values),
                }
        return out

    def routes(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for sample in self.samples:
            key = f"{sample.route}/{sample.algorithm}" + ("" if sample.optimal else " (not proven)")
            counts[key] = counts.get(key, 0) + 1
        return counts


def percentile(sorted_values: list[float], pct: float) -> float:
    """Nearest-rank percentile: the smallest value with at least pct% of values at or below."""
    rank = max(1, -(-len(sorted_values) * pct // 100))
    return sorted_values[int(rank) - 1]


@contextmanager
def sql_timer() -> Iterator[list[float]]:
    spent = [0.0]

    def wrapper(execute, sql, params, many, context):
        start = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            spent[0] += time.perf_counter() - start

    with connection.execute_wrapper(wrapper):
        yield spent


# --- setup --------------------------------------------------------------------------------


def _candidate_products(min_offers: int = 2) -> list[int]:
    return list(
        Product.objects.annotate(
            buyable=Count("offers", filter=Q(offers__active=True, offers__merchant__active=True))
        )
        .filter(buyable__gte=min_offers)
        .values_list("id", flat=True)
    )


def carts_create(*, count: int, lines: int, rng: random.Random, label: str) -> list[str]:
    """``count`` users, each with a cart of ``lines`` distinct random products (a random
    buyable offer each, quantity 1-3), and an API token; returns the tokens."""
    products = _candidate_products()
    if len(products) < lines:
        raise ValueError(
            f"The catalog has {len(products)} products with 2+ offers; run seed_demo first."
        )
    offers_by_product: dict[int, list[tuple[int, int, int | None]]] = {}
    for offer_id, product_id, price, stock in Offer.objects.filter(
        product_id__in=products, active=True, merchant__active=True
    ).values_list("id", "product_id", "unit_price", "stock"):
        offers_by_product.setdefault(product_id, []).append((offer_id, price, stock))
    tokens = []
    user_model = get_user_model()
    with transaction.atomic():
        for index in range(count):
            user = user_model.objects.create(username=f"{USER_PREFIX}{label}-{index}")
            cart = Cart.objects.create(owner=user, postal_code=rng.choice(DESTINATIONS))
            rows = []
            for product_id in rng.sample(products, lines):
                quantity = rng.randint(1, 3)
                choices = [
                    offer
                    for offer in offers_by_product[product_id]
                    if stock_covers(offer[2], quantity)
                ] or [min(offers_by_product[product_id], key=lambda offer: offer[1])]
                offer_id, price, stock = rng.choice(choices)
                if stock is not None and not stock_covers(stock, quantity):
                    quantity = max(stock, 1)
                rows.append(
                    CartLine(
                        cart=cart,
                        product_id=product_id,
                        offer_id=offer_id,
                        quantity=quantity,
                        unit_price_snapshot=price,
                    )
                )
            CartLine.objects.bulk_create(rows)
            tokens.append(Token.objects.create(user=user).key)
    _analyze()
    return tokens


_BENCH_TABLES = (Cart, CartLine, OptimizationRun, Token, get_user_model())


def _analyze() -> None:
    """Vacuum and fresh planner statistics for the tables the benchmark fills (and empties
    again at the end of every run). On a server with autovacuum off (as here) they are never
    vacuumed nor analyzed: the planner then takes a 3-line cart for hundreds of lines and
    hash-joins every offer (10-30 ms for a query that runs in 0.2 ms), and planning itself
    takes ~8 ms probing index ends full of dead rows. Production runs autovacuum; this is
    its steady state. Needs autocommit (VACUUM cannot run in a transaction)."""
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        return
    tables = ", ".join(connection.ops.quote_name(m._meta.db_table) for m in _BENCH_TABLES)
    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM (ANALYZE) {tables}")


def bench_users_delete() -> int:
    deleted, _ = get_user_model().objects.filter(username__startswith=USER_PREFIX).delete()
    return deleted


# --- measuring ----------------------------------------------------------------------------


def _wait_done(run_id: int, poll_s: float, timeout_s: float) -> str | None:
    """The run's final status, else its status at the timeout (None: the row is gone)."""
    deadline = time.perf_counter() + timeout_s
    status: str | None = OptimizationRun.Status.QUEUED
    while time.perf_counter() < deadline:
        status = OptimizationRun.objects.filter(pk=run_id).values_list("status", flat=True).first()
        if status in (OptimizationRun.Status.DONE, OptimizationRun.Status.FAILED):
            return status
        time.sleep(poll_s)
    return status


def api_host() -> str:
    """A host the deployment's ALLOWED_HOSTS accepts, so requests pass like a real one."""
    for host in settings.ALLOWED_HOSTS:
        if host and "*" not in host:
            return host.lstrip(".")
    return "localhost"


def optimize_once(token: str, *, poll_ms: float = 1.0, timeout_s: float = 60) -> Sample:
    # HTTPS, as behind the production proxy (no SSL redirect on the way).
    client = Client(HTTP_AUTHORIZATION=f"Token {token}", HTTP_HOST=api_host())
    with sql_timer() as sql:
        wall_start = time.time()
        start = time.perf_counter()
        response = client.post(URL, {}, content_type="application/json", secure=True)
        request_s = time.perf_counter() - start
    if response.status_code not in (201, 202):
        raise RuntimeError(f"POST answered {response.status_code}: {response.content[:300]!r}")
    run_id = response.json()["id"]
    if response.status_code == 202:
        status = _wait_done(run_id, poll_ms / 1000.0, timeout_s)
        if status != OptimizationRun.Status.DONE:
            raise RuntimeError(f"run {run_id} ended {status}")
    round_trip_s = time.perf_counter() - start
    run = OptimizationRun.objects.get(pk=run_id)
    if run.status != OptimizationRun.Status.DONE:
        raise RuntimeError(f"run {run_id} ended {run.status}: {run.error}")
    assert run.finished_at is not None and run.elapsed_ms is not None  # a done run has both
    inline = run.route == OptimizationRun.Route.INLINE
    worker_total = None if inline else run.elapsed_ms - (run.queue_wait_ms or 0.0)
    return Sample(
        round_trip=round_trip_s * 1000,
        round_trip_server=(run.finished_at.timestamp() - wall_start) * 1000,
        request=request_s * 1000,
        request_db=sql[0] * 1000,
        queue_wait=None if inline else run.queue_wait_ms,
        worker_db=None if inline else run.build_ms,
        solve=run.solve_ms,
        finish=None
        if worker_total is None
        else worker_total - (run.build_ms or 0) - (run.solve_ms or 0),
        route=run.route,
        algorithm=run.algorithm,
        optimal=run.optimal,
        lines=int(run.problem_size.get("lines", 0)),
    )


def series_run(
    name: str,
    tokens: list[str],
    *,
    warmup: int,
    poll_ms: float,
    progress: Callable[[str], None] | None = None,
) -> Series:
    """Runs sequentially; the first ``warmup`` runs are not recorded."""
    series = Series(name)
    for index, token in enumerate(tokens):
        try:
            sample = optimize_once(token, poll_ms=poll_ms)
        except RuntimeError as error:
            series.failures.append(str(error))
            continue
        if index >= warmup:
            series.samples.append(sample)
        if progress and (index + 1) % 50 == 0:
            progress(f"{name}: {index + 1}/{len(tokens)}")
    return series


def table(series_list: list[Series]) -> str:
    keys = ("p50", "p95", "p99", "max", "mean")
    header = f"{'series':<16} {'column':<17} " + " ".join(f"{key:>8}" for key in keys)
    lines = [header, "-" * len(header)]
    for series in series_list:
        for column, values in series.stats().items():
            lines.append(
                f"{series.name:<16} {column:<17} " + " ".join(f"{values[key]:8.2f}" for key in keys)
            )
        lines.append(
            f"{series.name:<16} runs={len(series.samples)} failures={len(series.failures)} "
            f"routes={series.routes()}"
        )
    return "\n".join(lines)
