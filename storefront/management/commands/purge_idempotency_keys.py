from django.core.management.base import BaseCommand

from storefront.security.idempotency import idempotency_keys_purge


class Command(BaseCommand):
    help = "Delete expired Idempotency-Key records (celery beat does it hourly too)."

    def handle(self, *args, **options) -> None:
        self.stdout.write(f"Deleted {idempotency_keys_purge()} expired idempotency keys.")
