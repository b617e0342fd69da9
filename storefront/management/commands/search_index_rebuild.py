from django.conf import settings
from django.contrib.postgres.indexes import GinIndex
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction

from storefront.models import Product
from storefront.search.postgres import FULL_TEXT_INDEX, search_vector


class Command(BaseCommand):
    help = (
        "Rebuilds the product full-text index on PostgreSQL with the current SEARCH_CONFIG "
        "(the index is on the search's own expression, so it must use the same configuration)."
    )

    def handle(self, *args, **options) -> None:
        if connection.vendor != "postgresql":
            raise CommandError("Only PostgreSQL has a full-text index; SQLite needs none.")
        index = GinIndex(search_vector(settings.SEARCH_CONFIG), name=FULL_TEXT_INDEX)
        with transaction.atomic(), connection.schema_editor() as editor:
            editor.execute(f"DROP INDEX IF EXISTS {editor.quote_name(FULL_TEXT_INDEX)}")
            editor.add_index(Product, index)
        self.stdout.write(
            f"Rebuilt {FULL_TEXT_INDEX} with configuration {settings.SEARCH_CONFIG!r}."
        )
