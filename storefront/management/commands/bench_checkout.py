"""Benchmark: placing orders (``order_place``) with N shoppers at once on PostgreSQL.

Each shopper is a thread with its own connection. It fills its cart with lines from several
merchants through the cart services and reviews it (not timed), then places the order (timed:
cart lock, offer row locks, re-pricing, order, packages, lines, stock, payment). ``--hot``
makes every shopper buy the same few offers, so the offer row locks queue; without it each
shopper buys its own offers. Everything it creates is deleted at the end.
"""

import statistics
import threading
import time
import uuid

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, connections

from storefront.carts.pricing_summary import cart_pricing_summary
from storefront.carts.services import cart_get_or_create, cart_line_add
from storefront.checkout.address import ShippingAddress
from storefront.checkout.review import review_token_make
from storefront.checkout.services import order_place
from storefront.models import Cart, Category, Merchant, Offer, Order, Product
from storefront.validators import gtin_check_digit

PREFIX = "bench-checkout"
POSTAL_CODE = "10115"


def _gtin(n: int) -> str:
    payload = f"299{n:09d}"
    return payload + str(gtin_check_digit(payload))


def _catalog(*, merchants: int, products: int) -> list[list[Offer]]:
    """``products`` products each sold by every bench merchant with ample stock; the offers
    grouped per product."""
    category, _ = Category.objects.get_or_create(slug=PREFIX, defaults={"name": PREFIX})
    shops = [
        Merchant.objects.create(
            name=f"{PREFIX} {i}", slug=f"{PREFIX}-{i}", base_fee=399 + 50 * i, per_extra_unit=100
        )
        for i in range(merchants)
    ]
    grouped = []
    for p in range(products):
        product = Product.objects.create(
            gtin=_gtin(p), name=f"{PREFIX} product {p}", slug=f"{PREFIX}-{p}", category=category
        )
        grouped.append(
            [
                Offer.objects.create(
                    product=product,
                    merchant=shop,
                    merchant_sku=f"{PREFIX}-{p}-{m}",
                    unit_price=1000 + 37 * p + 11 * m,
                    stock=1_000_000,
                )
                for m, shop in enumerate(shops)
            ]
        )
    return grouped


def _cleanup() -> None:
    Order.objects.filter(email__endswith=f"@{PREFIX}.invalid").delete()
    Cart.objects.filter(owner__username__startswith=PREFIX).delete()
    Offer.objects.filter(merchant__slug__startswith=PREFIX).delete()
    Product.objects.filter(slug__startswith=PREFIX).delete()
    Merchant.objects.filter(slug__startswith=PREFIX).delete()
    Category.objects.filter(slug=PREFIX).delete()
    get_user_model().objects.filter(username__startswith=PREFIX).delete()


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class Command(BaseCommand):
    help = "Measures place-order latency (p50/p95) with N concurrent shoppers on PostgreSQL."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--shoppers", type=int, default=8, help="Concurrent shoppers.")
        parser.add_argument("--orders", type=int, default=25, help="Orders per shopper.")
        parser.add_argument("--lines", type=int, default=5, help="Cart lines per order.")
        parser.add_argument("--merchants", type=int, default=4, help="Merchants in a cart.")
        parser.add_argument(
            "--hot", action="store_true", help="Every shopper buys the same offers."
        )

    def handle(self, *args, shoppers, orders, lines, merchants, hot, **options) -> None:
        if connection.vendor != "postgresql":
            raise CommandError("Run it on PostgreSQL (DATABASE_URL): it measures row locks.")
        if min(shoppers, orders, lines, merchants) < 1:
            raise CommandError("--shoppers, --orders, --lines and --merchants must be >= 1.")
        _cleanup()
        products = lines if hot else lines * shoppers
        catalog = _catalog(merchants=merchants, products=products)
        users = [get_user_model().objects.create(username=f"{PREFIX}-{i}") for i in range(shoppers)]
        latencies: list[float] = []
        failures: list[str] = []
        lock = threading.Lock()
        barrier = threading.Barrier(shoppers)

        def shopper(index: int) -> None:
            try:
                first = 0 if hot else index * lines
                own = catalog[first : first + lines]
                barrier.wait()
                for n in range(orders):
                    cart = cart_get_or_create(user=users[index])
                    for k, offers in enumerate(own):
                        cart_line_add(cart=cart, offer=offers[(k + n) % merchants], quantity=1)
                    if cart.postal_code != POSTAL_CODE:
                        Cart.objects.filter(pk=cart.pk).update(postal_code=POSTAL_CODE)
                        cart.refresh_from_db()
                    token = review_token_make(cart_pricing_summary(cart=cart))
                    address = ShippingAddress(
                        email=f"shopper{index}@{PREFIX}.invalid",
                        full_name="Bench Shopper",
                        address_line="Benchstr. 1",
                        city="Berlin",
                        postal_code=POSTAL_CODE,
                        country="DE",
                    )
                    started = time.perf_counter()
                    order_place(
                        cart=cart,
                        user=users[index],
                        address=address,
                        review_token=token,
                        idempotency_key=uuid.uuid4().hex,
                    )
                    elapsed = (time.perf_counter() - started) * 1000.0
                    with lock:
                        latencies.append(elapsed)
            except Exception as error:  # reported below, never hidden
                with lock:
                    failures.append(f"shopper {index}: {error!r}")
            finally:
                connections.close_all()

        threads = [threading.Thread(target=shopper, args=(i,)) for i in range(shoppers)]
        wall = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - wall
        _cleanup()
        self._report(latencies, failures, wall, shoppers, orders, lines, merchants, hot)

    def _report(self, latencies, failures, wall, shoppers, orders, lines, merchants, hot):
        mode = "the same offers (hot rows)" if hot else "their own offers"
        self.stdout.write(
            f"bench_checkout: {shoppers} shoppers x {orders} orders, {lines} lines from up to "
            f"{merchants} merchants each, all buying {mode}, on PostgreSQL"
        )
        if latencies:
            self.stdout.write(
                f"  place order: p50 {statistics.median(latencies):.1f} ms, "
                f"p95 {_percentile(latencies, 0.95):.1f} ms, max {max(latencies):.1f} ms "
                f"over {len(latencies)} orders; {len(latencies) / wall:.1f} orders/s "
                f"(wall {wall:.1f} s including cart filling)"
            )
        for failure in failures:
            self.stderr.write(failure)
        if failures:
            raise CommandError(f"{len(failures)} shopper(s) failed.")
