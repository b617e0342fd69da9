"""Checks the payment ledger's invariant for every order and prints each mismatch with the
order's number; exits 1 when there is any (for cron and CI), 0 when none."""

from django.core.management.base import BaseCommand, CommandParser

from storefront.payments.reconcile import payment_mismatches


class Command(BaseCommand):
    help = (
        "Every order: its sums equal its ledger events, and once settled captured - refunded "
        "equals the cost of its packages not cancelled. Exits 1 when any order breaks it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--quiet", action="store_true", help="Print only the count.")

    def handle(self, *args, quiet: bool = False, **options) -> None:
        mismatches = payment_mismatches()
        if not quiet:
            for mismatch in mismatches:
                self.stdout.write(f"{mismatch.order_number}\t{mismatch.code}\t{mismatch.message}")
        self.stdout.write(f"{len(mismatches)} mismatch(es)")
        if mismatches:
            raise SystemExit(1)
