import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from storefront.demo.catalog import (
    DEMO_ADMIN,
    DEMO_SHOPPER,
    catalog_counts,
    catalog_is_empty,
    catalog_reset,
    catalog_seed,
    demo_accounts_ensure,
)
from storefront.demo.orders import (
    DEMO_MERCHANT_STAFF,
    demo_merchant_staff_ensure,
    demo_orders_seed,
)


def _positive(minimum: int):
    def parse(text: str) -> int:
        value = int(text)
        if value < minimum:
            raise ValueError(f"must be at least {minimum}")
        return value

    parse.__name__ = f"integer >= {minimum}"
    return parse


class Command(BaseCommand):
    help = (
        "Builds the deterministic demo marketplace (categories, merchants with shipping rules, "
        "zones and discounts, products with valid GTINs, offers) and the demo-only accounts "
        f"{DEMO_SHOPPER[0]} and {DEMO_ADMIN[0]}. Refuses a non-empty catalog unless --reset."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--seed", type=int, default=42, help="Random seed (default 42).")
        parser.add_argument("--merchants", type=_positive(1), default=40)
        parser.add_argument("--products", type=_positive(0), default=2000)
        group = parser.add_mutually_exclusive_group()
        group.add_argument(
            "--reset",
            action="store_true",
            help="Delete every cart and the whole catalog first.",
        )
        group.add_argument(
            "--if-empty",
            action="store_true",
            help="Do nothing (exit 0) when a catalog exists; for `make demo`.",
        )

    def handle(self, *args, seed: int, merchants: int, products: int, **options) -> None:
        verbosity = options["verbosity"]
        if not catalog_is_empty():
            if options["if_empty"]:
                if verbosity >= 2:
                    self.stdout.write("A catalog exists; nothing to seed (--if-empty).")
                return
            if not options["reset"]:
                counts = ", ".join(f"{n} {name}" for name, n in catalog_counts().items())
                raise CommandError(
                    f"The catalog is not empty ({counts}). "
                    "Pass --reset to delete it and every cart, then seed."
                )
        started = time.perf_counter()
        if options["reset"]:
            catalog_reset()
        result = catalog_seed(seed=seed, merchants=merchants, products=products)
        demo_accounts_ensure()
        merchant = demo_merchant_staff_ensure()
        demo_orders_seed(merchant=merchant)
        elapsed = time.perf_counter() - started
        if verbosity >= 1:
            self._report(result, seed=seed, elapsed=elapsed)

    def _report(self, result, *, seed: int, elapsed: float) -> None:
        self.stdout.write(
            self.style.SUCCESS(
                f"Seeded demo catalog (seed {seed}) in {elapsed:.1f} s: "
                f"{result.categories} categories, {result.merchants} merchants, "
                f"{result.zones} shipping zones, {result.products} products, "
                f"{result.offers} offers."
            )
        )
        self.stdout.write(f"Catalog checksum: {result.checksum}")
        self.stdout.write(
            "Demo accounts (DEMO ONLY, public passwords, never on a production database):\n"
            f"  shopper: {DEMO_SHOPPER[0]} / {DEMO_SHOPPER[1]}\n"
            f"  admin:   {DEMO_ADMIN[0]} / {DEMO_ADMIN[1]}  (superuser, /admin/)\n"
            f"  merchant staff: {DEMO_MERCHANT_STAFF[0]} / {DEMO_MERCHANT_STAFF[1]}  "
            "(its orders in /admin/)"
        )
        if not settings.DEBUG:
            self.stderr.write(
                self.style.WARNING(
                    "DEBUG is off: if this is a production database, delete these accounts now."
                )
            )
