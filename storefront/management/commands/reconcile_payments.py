"""Checks the payment ledger's invariant for every order and prints each mismatch with the
order's number; exits 1 when there is any (for cron and CI), 0 when none. ``--settle`` first
queues the refunds of money held beyond what is due."""

from django.core.management.base import BaseCommand, CommandParser

from storefront.payments.reconcile import order_settle_by_number, payment_mismatches


class Command(BaseCommand):
    help = (
        "Every order: its sums equal its ledger events, and once settled captured - refunded "
        "equals the cost of its packages not cancelled. Exits 1 when any order breaks it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--quiet", action="store_true", help="Print only the count.")
        parser.add_argument(
            "--settle",
            action="store_true",
            help="First refund what each mismatching order holds beyond what is due (orders "
            "paid before the ledger whose refunds never happened); then check again.",
        )

    def handle(self, *args, quiet: bool = False, settle: bool = False, **options) -> None:
        if settle:
            for mismatch in payment_mismatches():
                refund = order_settle_by_number(number=mismatch.order_number)
                if refund is not None:
                    self.stdout.write(f"{mismatch.order_number}\trefund {refund.pk} queued")
        mismatches = payment_mismatches()
        if not quiet:
            for mismatch in mismatches:
                self.stdout.write(f"{mismatch.order_number}\t{mismatch.code}\t{mismatch.message}")
        self.stdout.write(f"{len(mismatches)} mismatch(es)")
        if mismatches:
            raise SystemExit(1)
