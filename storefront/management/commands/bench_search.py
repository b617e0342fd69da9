import time

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

from storefront.demo.catalog import catalog_is_empty
from storefront.search.bench import (
    bench_catalog_build,
    bench_catalog_prepare,
    bench_search_run,
)


class Command(BaseCommand):
    help = (
        "Measures product search latency (p50/p95 of a search page: count + first 24, and of "
        "its facets) on PostgreSQL over a generated catalog. Builds the catalog (COPY) into "
        "an EMPTY catalog, or measures the existing one with --existing. Use a scratch "
        "database: DATABASE_URL=postgres://.../bench python manage.py migrate && "
        "python manage.py bench_search."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--products", type=int, default=100_000)
        parser.add_argument("--merchants", type=int, default=40)
        parser.add_argument("--seed", type=int, default=42)
        parser.add_argument("--repeat", type=int, default=50, help="Timed runs per query.")
        parser.add_argument(
            "--existing", action="store_true", help="Measure the catalog already there."
        )

    def handle(self, *args, **options) -> None:
        if connection.vendor != "postgresql":
            raise CommandError("bench_search measures PostgreSQL: set DATABASE_URL.")
        if not options["existing"]:
            if not catalog_is_empty():
                raise CommandError(
                    "The catalog is not empty: use a scratch database, or --existing."
                )
            started = time.perf_counter()
            products, offers = bench_catalog_build(
                products=options["products"], merchants=options["merchants"], seed=options["seed"]
            )
            bench_catalog_prepare()
            self.stdout.write(
                f"Built {products:,} products, {offers:,} offers "
                f"in {time.perf_counter() - started:.1f} s (COPY, cheapest offers, ANALYZE)."
            )
        self.stdout.write(f"{'measure':<40} {'query':<16} {'p50 ms':>8} {'p95 ms':>8} {'found':>7}")
        for timing in bench_search_run(repeat=options["repeat"]):
            self.stdout.write(
                f"{timing.label:<40} {timing.query[:16]:<16} "
                f"{timing.p50_ms:>8.1f} {timing.p95_ms:>8.1f} {timing.results:>7,}"
            )
