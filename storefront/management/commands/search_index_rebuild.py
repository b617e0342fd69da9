from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction

from storefront.search.postgres import document_trigger_sql


class Command(BaseCommand):
    help = (
        "Rewrites the products' full-text documents on PostgreSQL with the current "
        "SEARCH_CONFIG: the trigger that keeps them and every stored document (the search "
        "must query with the configuration the documents were made with)."
    )

    def handle(self, *args, **options) -> None:
        if connection.vendor != "postgresql":
            raise CommandError("Only PostgreSQL stores full-text documents; SQLite needs none.")
        with transaction.atomic(), connection.cursor() as cursor:
            for statement in document_trigger_sql(settings.SEARCH_CONFIG):
                cursor.execute(statement)
        self.stdout.write(f"Rebuilt the search documents with {settings.SEARCH_CONFIG!r}.")
