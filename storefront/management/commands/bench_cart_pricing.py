"""Benchmark: pricing many open carts through the zone index in one batch, against the same
carts priced one by one (the cart page's path) and one by one with zones resolved in SQL (the
path the index replaced). Prints time and queries per cart and checks the totals agree."""

import os
import random
import statistics
import string
import time
from collections.abc import Callable

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, transaction
from django.db.models import Exists, OuterRef, Q

from storefront.carts.pricing_summary import (
    CartPricingSummary,
    cart_pricing_summaries,
    cart_pricing_summary,
    cart_pricing_summary_via_sql,
)
from storefront.catalog.selectors import offer_buyable_q
from storefront.catalog.zone_index import zone_index_current, zone_index_invalidate
from storefront.models import Cart, CartLine, Offer, ShippingZone

BENCH_SESSION_PREFIX = "bench-cart-pricing-"


def _carts_with_lines(count: int) -> list[Cart]:
    has_lines = Exists(CartLine.objects.filter(cart_id=OuterRef("pk")))
    return list(Cart.objects.filter(has_lines).order_by("-updated_at", "-id")[:count])


def _destination(rng: random.Random, zone_prefixes: list[str]) -> str:
    """No destination (a fifth), a code inside a seeded zone (half), or anywhere."""
    roll = rng.random()
    if roll < 0.2:
        return ""
    prefix = rng.choice(zone_prefixes) if zone_prefixes and roll < 0.7 else ""
    digits = "".join(rng.choice(string.digits) for _ in range(max(0, 5 - len(prefix))))
    return (prefix + digits)[:10]


@transaction.atomic
def bench_carts_create(*, count: int, max_lines: int, seed: int) -> int:
    """Anonymous carts (session ``bench-cart-pricing-...``) of 1 to ``max_lines`` lines of
    buyable offers, over the seeded zones' destinations; bulk writes, no cart service."""
    rng = random.Random(seed)
    offers = list(
        Offer.objects.filter(offer_buyable_q())
        .filter(Q(stock__isnull=True) | Q(stock__gte=3))
        .values_list("pk", "product_id", "unit_price")
    )
    if not offers:
        raise CommandError("No buyable offers: seed the catalog first (manage.py seed_demo).")
    prefixes = sorted(set(ShippingZone.objects.values_list("postal_prefix", flat=True)))
    start = Cart.objects.filter(session_key__startswith=BENCH_SESSION_PREFIX).count()
    carts = Cart.objects.bulk_create(
        Cart(
            session_key=f"{BENCH_SESSION_PREFIX}{start + i}",
            postal_code=_destination(rng, prefixes),
        )
        for i in range(count)
    )
    lines = []
    for cart in carts:
        chosen: dict[int, tuple[int, int]] = {}
        for offer_id, product_id, price in rng.sample(offers, rng.randint(1, max_lines)):
            chosen.setdefault(product_id, (offer_id, price))
        lines += [
            CartLine(
                cart=cart,
                product_id=product_id,
                offer_id=offer_id,
                quantity=rng.randint(1, 3),
                unit_price_snapshot=price,
            )
            for product_id, (offer_id, price) in chosen.items()
        ]
    CartLine.objects.bulk_create(lines, batch_size=2000)
    return len(carts)


def _timed(run: Callable[[], list[CartPricingSummary]], repeat: int):
    seconds = []
    for _ in range(repeat):
        began = time.perf_counter()
        summaries = run()
        seconds.append(time.perf_counter() - began)
    queries = 0

    def count(execute, sql, params, many, context):
        # Not CaptureQueriesContext: its log keeps only the last 9,000 queries.
        nonlocal queries
        queries += 1
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        run()
    return summaries, seconds, queries


class Command(BaseCommand):
    help = (
        "Prices N open carts (those with lines, newest first) three ways: in one batch through "
        "the zone index (cart_pricing_summaries), one by one through it (cart_pricing_summary, "
        "the cart page), and one by one with zones resolved in SQL (the replaced path); prints "
        "ms per cart and queries, and fails if any total differs. --create-missing adds "
        "anonymous bench carts when fewer exist. It replaces the zone index's stamp to time a "
        "rebuild, so every process sharing the cache rebuilds once."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--carts", type=int, default=1000, help="Carts to price (1000).")
        parser.add_argument("--repeat", type=int, default=3, help="Timed runs per path (3).")
        parser.add_argument(
            "--create-missing",
            action="store_true",
            help="Create anonymous bench carts when fewer than --carts have lines.",
        )
        parser.add_argument("--max-lines", type=int, default=6, help="Lines per new cart.")
        parser.add_argument("--seed", type=int, default=7, help="Seed for new carts.")

    def handle(self, *args, carts: int, repeat: int, **options) -> None:
        if carts < 1 or repeat < 1:
            raise CommandError("--carts and --repeat must be at least 1.")
        found = _carts_with_lines(carts)
        if len(found) < carts:
            if not options["create_missing"]:
                raise CommandError(
                    f"Only {len(found)} carts have lines; pass --create-missing to add "
                    f"{carts - len(found)} bench carts."
                )
            bench_carts_create(
                count=carts - len(found), max_lines=options["max_lines"], seed=options["seed"]
            )
            found = _carts_with_lines(carts)
        self._report_setup(found)
        self._run(found, repeat)

    def _report_setup(self, carts: list[Cart]) -> None:
        lines = CartLine.objects.filter(cart__in=[cart.pk for cart in carts]).count()
        rebuild_ms = []
        for _ in range(2):  # the first also loads the tree's compiled code into this process
            zone_index_invalidate()
            began = time.perf_counter()
            index = zone_index_current()
            rebuild_ms.append((time.perf_counter() - began) * 1000)
        database = connection.vendor
        cache = settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[-1]
        self.stdout.write(
            f"{len(carts):,} carts, {lines:,} lines, "
            f"{len({cart.postal_code for cart in carts}):,} destinations; "
            f"{index.merchant_ids.size:,} merchants, {index.zone_count:,} zones; "
            f"database {database}, cache {cache}; load average "
            + " ".join(f"{load:.2f}" for load in os.getloadavg())
        )
        device = index.shards[0].tree.device if index.shards and index.shards[0].tree else "-"
        self.stdout.write(
            f"zone index rebuild after a zone or merchant change: {rebuild_ms[1]:.1f} ms "
            f"({rebuild_ms[0]:.1f} ms the first time in a process), {len(index.shards)} "
            f"shard(s), tree on {device}"
        )

    def _run(self, carts: list[Cart], repeat: int) -> None:
        paths = {
            "batch, zone index": lambda: cart_pricing_summaries(carts=carts),
            "per cart, zone index": lambda: [cart_pricing_summary(cart=c) for c in carts],
            "per cart, SQL zones": lambda: [cart_pricing_summary_via_sql(cart=c) for c in carts],
        }
        for run in paths.values():
            run()  # warm: JIT-compiled pricing, connections, the index
        n = len(carts)
        self.stdout.write(
            f"{'path':<24}{'best ms':>10}{'median ms':>11}{'ms/cart':>9}{'queries':>9}"
            f"{'queries/cart':>14}"
        )
        priced = {}
        for name, run in paths.items():
            priced[name], seconds, queries = _timed(run, repeat)
            best, median = min(seconds) * 1000, statistics.median(seconds) * 1000
            self.stdout.write(
                f"{name:<24}{best:>10.1f}{median:>11.1f}{best / n:>9.3f}{queries:>9}"
                f"{queries / n:>14.2f}"
            )
        reference = priced["per cart, SQL zones"]
        differ = sum(
            1
            for summaries in priced.values()
            for got, expected in zip(summaries, reference, strict=True)
            if got != expected
        )
        self.stdout.write(
            f"load average after: {' '.join(f'{load:.2f}' for load in os.getloadavg())}"
        )
        if differ:
            raise CommandError(f"{differ} cart summaries differ from the per-cart SQL path.")
        self.stdout.write(
            self.style.SUCCESS(f"all {n:,} carts priced the same on every path, to the cent")
        )
