"""Sends the outbox's due messages now, as the beat task does (with no beat running, or to
drain a backlog by hand once the broker is back)."""

from django.core.management.base import BaseCommand

from storefront.outbox.selectors import outbox_backlog
from storefront.outbox.services import outbox_relay


class Command(BaseCommand):
    help = "Sends the outbox's due messages (retries, and those left by a dead process)."

    def add_arguments(self, parser):
        parser.add_argument("--limit", type=int, default=None, help="at most this many")

    def handle(self, *args, limit: int | None = None, **options):
        result = outbox_relay(limit=limit)
        backlog = outbox_backlog()
        self.stdout.write(
            f"{result.delivered} delivered, {result.failed} failed; "
            f"{backlog['pending']} pending, {backlog['failed']} given up"
        )
