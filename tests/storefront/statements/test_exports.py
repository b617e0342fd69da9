import csv
import io

import pytest

from storefront.statements.exports import HEADER, statement_csv_write
from storefront.statements.periods import period_month
from storefront.statements.selectors import merchant_statement
from tests.storefront.statements.conftest import placed, staff_of

pytestmark = pytest.mark.django_db


def test_the_csv_has_a_row_per_sale_and_refund_and_totals_that_add_up(
    two_merchant_cart, clock, paid, cancelled
):
    order, first, _ = placed(two_merchant_cart, bps=(1250, 1000))
    paid(order)
    clock.set(2026, 11, 20, 8, 0)
    cancelled(first)
    statement = merchant_statement(
        user=staff_of(first.merchant),
        merchant_id=first.merchant_id,
        period=period_month(year=2026, month=11),
    )
    out = io.StringIO()
    statement_csv_write(statement=statement, out=out)
    rows = list(csv.reader(io.StringIO(out.getvalue())))
    assert tuple(rows[0]) == HEADER
    sale, refund, sales, refunds, payout = rows[1:]
    cost = f"{first.cost // 100}.{first.cost % 100:02d}"
    assert sale[:6] == ["2026-11-10", "sale", order.number, str(first.pk), "EUR", cost]
    assert refund[:6] == ["2026-11-20", "refund", order.number, str(first.pk), "EUR", f"-{cost}"]
    assert sale[6] == refund[6] == "1250"
    assert sales[1:2] + sales[5:6] == ["total sales", cost]
    assert refunds[1:2] + refunds[5:6] == ["total refunds", f"-{cost}"]
    assert payout[0] == "2026-11-01..2026-11-30"
    assert payout[1:2] + payout[5:] == ["payout due", "0.00", "", "0.00", "0.00"]


def test_amounts_keep_the_currencys_decimals():
    from storefront.statements.exports import _amount

    assert _amount(-5, "EUR") == "-0.05"
    assert _amount(123456, "EUR") == "1234.56"
    assert _amount(1234, "JPY") == "1234"
