"""A statement as CSV: one row per sale and refund, then the totals, amounts in major units
with the currency's exact decimals (``12.34``), never floats."""

import csv
from typing import Protocol

from django.utils import timezone

from storefront.money import currency_decimals
from storefront.statements.selectors import Statement

HEADER = (
    "date",
    "type",
    "order",
    "package",
    "currency",
    "amount",
    "commission_rate_bps",
    "commission",
    "payout",
)


class _Writable(Protocol):
    def write(self, text: str, /) -> object: ...


def _amount(cents: int, currency: str) -> str:
    decimals = currency_decimals(currency)
    sign = "-" if cents < 0 else ""
    major, minor = divmod(abs(cents), 10**decimals)
    return f"{sign}{major}.{minor:0{decimals}d}" if decimals else f"{sign}{major}"


def statement_csv_write(*, statement: Statement, out: _Writable) -> None:
    """Writes ``statement`` to ``out`` (a text stream or an ``HttpResponse``)."""
    writer = csv.writer(out, lineterminator="\r\n")
    currency = statement.currency
    writer.writerow(HEADER)
    for line in statement.lines:
        writer.writerow(
            (
                timezone.localtime(line.at).date().isoformat(),
                line.kind,
                line.order_number,
                line.package_id,
                currency,
                _amount(line.amount, currency),
                line.commission_bps,
                _amount(line.commission, currency),
                _amount(line.payout, currency),
            )
        )
    first, last = statement.period.first_day.isoformat(), statement.period.last_day.isoformat()
    # Each total's payout is its amount less its commission; the last is the payout due.
    for kind, amount, commission in (
        ("total sales", statement.sales, statement.commission_on_sales),
        ("total refunds", -statement.refunds, -statement.commission_returned),
        ("payout due", statement.sales - statement.refunds, statement.commission),
    ):
        writer.writerow(
            (
                f"{first}..{last}",
                kind,
                "",
                "",
                currency,
                _amount(amount, currency),
                "",
                _amount(commission, currency),
                _amount(amount - commission, currency),
            )
        )
