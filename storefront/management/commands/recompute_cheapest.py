from django.core.management.base import BaseCommand, CommandParser

from storefront.catalog.cheapest import catalog_cheapest_recompute


class Command(BaseCommand):
    help = (
        "Recomputes the stored cheapest offer of products (what the catalog pages read): by "
        "default those with a pending refresh or never computed; --all for every product "
        "(after writes that bypassed the ORM, or to check nothing drifted); --products for "
        "some. Runs here, synchronously; workers run the same code after imports and edits."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        group = parser.add_mutually_exclusive_group()
        group.add_argument("--all", action="store_true", help="Every product.")
        group.add_argument("--products", type=int, nargs="+", metavar="ID")

    def handle(self, *args, products: list[int] | None, **options) -> None:
        result = catalog_cheapest_recompute(product_ids=products, all_products=options["all"])
        self.stdout.write(
            self.style.SUCCESS(
                f"{result.products:,} products recomputed ({result.written:,} changed, "
                f"{result.offers:,} buyable offers read) in {result.seconds:.2f}s on "
                f"{result.device or 'cpu'}."
            )
        )
