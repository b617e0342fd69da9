"""The price-watch benchmark behind ``manage.py bench_price_watch``.

Setup (not timed): a synthetic market of bench merchants (some with shipping zones and
multi-unit discounts) and products, each product offered by a few merchants, and ``carts``
open carts of 2 to ``max_lines`` lines and random destinations, each line at its product's
cheapest offer seven times in ten, else at a random one, written with
``bulk_create``, then ``ANALYZE``. The feed (timed): one UPDATE changes the price of a share
of the bench offers (as a merchant feed's import writer would, in SQL) and the transaction
tells ``offers_changed`` its products. The job (timed): with tasks in-process (no broker), the
price-watch run starts on that commit and handles every affected cart; with a broker the
commit sends the task to the route's queue (``gpu`` or ``cpu``) after the countdown and a
worker runs it, while this process waits for its ``PriceWatchRun`` row to finish. The row
gives the counts, the statements and their time, the solver time and device, and the route.
Every bench row is deleted at the end unless kept.
"""

import random
import time
from dataclasses import dataclass

from django.db import connection, transaction
from django.db.models import F
from django.db.models.functions import Greatest
from django.utils import timezone

from smartcart.models import OptimizationRun, PriceWatchChange, PriceWatchRun
from storefront.catalog.offer_changes import offers_changed_notify
from storefront.models import Cart, CartLine, Category, Merchant, Offer, Product, ShippingZone
from storefront.validators import gtin_check_digit

PREFIX = "bench-pw-"
DESTINATIONS = ("10115", "20095", "80331", "50667", "")


@dataclass(frozen=True)
class Market:
    merchants: int
    products: int
    offers: int
    carts: int
    lines: int


def _gtin(n: int) -> str:
    payload = f"29{n:010d}"
    return payload + str(gtin_check_digit(payload))


def market_create(
    *, carts: int, products: int, merchants: int, max_lines: int, max_offers: int, seed: int
) -> Market:
    rng = random.Random(seed)
    shops = Merchant.objects.bulk_create(
        [
            Merchant(
                name=f"Bench shop {i}",
                slug=f"{PREFIX}{i}",
                base_fee=rng.choice((0, 299, 399, 499, 599)),
                per_extra_unit=rng.choice((0, 50, 100)),
                free_over=rng.choice((None, 2900, 4900, 9900)),
                discount_min_units=3 if i % 4 == 0 else None,
                discount_basis_points=500 if i % 4 == 0 else None,
            )
            for i in range(merchants)
        ]
    )
    ShippingZone.objects.bulk_create(
        [
            ShippingZone(merchant=shop, postal_prefix=prefix, base_fee=199, per_extra_unit=50)
            for shop in shops[::3]
            for prefix in ("1", "80")
        ]
    )
    category, _ = Category.objects.get_or_create(slug=f"{PREFIX}products", name="Bench products")
    items = Product.objects.bulk_create(
        [
            Product(
                gtin=_gtin(i), name=f"Bench product {i}", slug=f"{PREFIX}{i}", category=category
            )
            for i in range(products)
        ],
        batch_size=5000,
    )
    offers = []
    for product in items:
        for shop in rng.sample(shops, rng.randint(2, min(max_offers, len(shops)))):
            offers.append(
                Offer(
                    product=product,
                    merchant=shop,
                    merchant_sku=f"{PREFIX}{product.pk}",
                    unit_price=rng.randint(300, 9000),
                    stock=None,
                )
            )
    offers = Offer.objects.bulk_create(offers, batch_size=5000)
    by_product: dict[int, list[Offer]] = {}
    for offer in offers:
        by_product.setdefault(offer.product_id, []).append(offer)
    product_ids = list(by_product)
    cart_rows = Cart.objects.bulk_create(
        [
            Cart(session_key=f"{PREFIX}{i}", postal_code=rng.choice(DESTINATIONS))
            for i in range(carts)
        ],
        batch_size=5000,
    )
    lines = []
    for cart in cart_rows:
        for product_id in rng.sample(product_ids, rng.randint(2, max_lines)):
            # Shoppers mostly pick the cheapest offer they see; some pick another.
            offers_here = by_product[product_id]
            offer = (
                min(offers_here, key=lambda o: o.unit_price)
                if rng.random() < 0.7
                else rng.choice(offers_here)
            )
            lines.append(
                CartLine(
                    cart=cart,
                    product_id=product_id,
                    offer=offer,
                    quantity=rng.choice((1, 1, 1, 2, 3)),
                    unit_price_snapshot=offer.unit_price,
                )
            )
    CartLine.objects.bulk_create(lines, batch_size=10000)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            for model in (Merchant, ShippingZone, Product, Offer, Cart, CartLine, OptimizationRun):
                cursor.execute(f"ANALYZE {model._meta.db_table}")
    return Market(len(shops), len(items), len(offers), len(cart_rows), len(lines))


@dataclass(frozen=True)
class Outcome:
    feed_s: float
    end_to_end_s: float
    # This process's CPU time over feed + job: on a shared machine the wall time also holds
    # waiting for a core.
    cpu_s: float
    offers_changed: int
    run: PriceWatchRun


def feed_apply(*, share: float, seed: int, wait_s: float = 0.0) -> Outcome:
    """Changes ``share`` of the bench offers' prices in one transaction, as a feed would; the
    price-watch run happens on its commit (tasks in-process), or on a worker: then ``wait_s``
    is how long to wait for that run to finish. Timed together."""
    PriceWatchRun.objects.filter(status=PriceWatchRun.Status.RUNNING).delete()
    before = PriceWatchRun.objects.order_by("-id").values_list("id", flat=True).first() or 0
    rng = random.Random(seed)
    ids = list(Offer.objects.filter(merchant_sku__startswith=PREFIX).values_list("pk", flat=True))
    repriced = rng.sample(ids, int(len(ids) * share))
    percent = rng.choice((-20, -15, -10, 10, 15))
    start = time.perf_counter()
    cpu_start = time.process_time()
    with transaction.atomic():
        offers = Offer.objects.filter(pk__in=repriced)
        changed = list(offers.values_list("product_id", flat=True).distinct())
        offers.update(
            unit_price=Greatest(100, F("unit_price") + F("unit_price") * percent / 100),
            updated_at=timezone.now(),
        )
        offers_changed_notify(product_ids=changed)
        feed_s = time.perf_counter() - start
    run = _run_finished(before=before, start=start, wait_s=wait_s)
    end_to_end = time.perf_counter() - start
    cpu_s = time.process_time() - cpu_start
    if run is None:
        why = (
            f"that finished within {wait_s:.0f} s (does a worker serve its queue?)"
            if wait_s
            else "(is it turned off?)"
        )
        raise RuntimeError(f"The feed's commit started no price-watch run {why}")
    return Outcome(feed_s, end_to_end, cpu_s, len(repriced), run)


def _run_finished(*, before: int, start: float, wait_s: float) -> PriceWatchRun | None:
    """The first run after ``before`` once it is no longer running (polled every 0.2 s up to
    ``wait_s`` after ``start``; in-process it has finished already). On a worker, a run that
    checked no cart is the previous bench's clean-up (its deleted rows are changes too)."""
    finished = PriceWatchRun.objects.filter(id__gt=before).exclude(
        status=PriceWatchRun.Status.RUNNING
    )
    if wait_s:
        finished = finished.filter(carts_checked__gt=0)
    while True:
        run = finished.order_by("id").first()
        if run is not None or time.perf_counter() - start > wait_s:
            return run
        time.sleep(0.2)


def market_reuse() -> Market | None:
    """The bench market a kept run left, with its notices and recorded changes deleted (so
    the next feed's run starts as the first one did); ``None`` when there is none."""
    carts = Cart.objects.filter(session_key__startswith=PREFIX)
    if not carts.exists():
        return None
    OptimizationRun.objects.filter(cart__in=carts).delete()
    PriceWatchChange.objects.all().delete()
    offers = Offer.objects.filter(merchant_sku__startswith=PREFIX)
    return Market(
        merchants=Merchant.objects.filter(slug__startswith=PREFIX).count(),
        products=Product.objects.filter(slug__startswith=PREFIX).count(),
        offers=offers.count(),
        carts=carts.count(),
        lines=CartLine.objects.filter(cart__in=carts).count(),
    )


def market_delete() -> None:
    carts = Cart.objects.filter(session_key__startswith=PREFIX)
    OptimizationRun.objects.filter(cart__in=carts).delete()
    CartLine.objects.filter(cart__in=carts).delete()
    carts.delete()
    Offer.objects.filter(merchant_sku__startswith=PREFIX).delete()
    Product.objects.filter(slug__startswith=PREFIX).delete()
    Merchant.objects.filter(slug__startswith=PREFIX).delete()
    PriceWatchChange.objects.all().delete()
