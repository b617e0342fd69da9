"""Money under concurrency, on PostgreSQL (row locks): the shopper pays from a page loaded
before the cancellations while the merchant and the shopper cancel packages and refund tasks
run twice at once; the ledger ends with exactly what is due held."""

import pytest
from django.db import connection
from django.db.models import Sum

from storefront.models import MerchantOrder, Order, Refund
from storefront.orders.services import merchant_order_cancel_by_shopper
from storefront.payments.reconcile import payment_mismatches
from storefront.payments.refunds import refund_process
from storefront.payments.services import order_payment_for
from tests.factories import CartFactory, CartLineFactory, MerchantFactory, OfferFactory
from tests.storefront.orders.conftest import POSTAL_CODE, place
from tests.storefront.payments.conftest import merchant_cancel, pay_with_dummy_form
from tests.storefront.race_support import race as _race

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="needs PostgreSQL (DATABASE_URL) row locks"
    ),
]


def _three_package_order() -> Order:
    cart = CartFactory(postal_code=POSTAL_CODE)
    for price in (1250, 799, 455):
        CartLineFactory(cart=cart, offer=OfferFactory(merchant=MerchantFactory(), unit_price=price))
    cart.refresh_from_db()
    return place(cart)


@pytest.mark.parametrize("round_", range(3))
def test_paying_while_packages_are_cancelled_holds_exactly_what_is_due(round_):
    order = _three_package_order()
    stale = order_payment_for(order=order)
    first, second, _ = order.merchant_orders.order_by("pk")
    results = _race(
        [
            lambda: pay_with_dummy_form(stale),
            lambda: merchant_cancel(MerchantOrder.objects.get(pk=first.pk)),
            lambda: merchant_order_cancel_by_shopper(
                order=order, merchant_order_id=second.pk, by=None
            ),
        ]
    )
    assert not [r for r in results if isinstance(r, Exception)], results
    refunds = list(Refund.objects.filter(order=order).values_list("pk", flat=True))
    _race([lambda r=r: refund_process(refund_id=r) for r in refunds for _ in range(2)])
    order.refresh_from_db()
    live = order.merchant_orders.exclude(status=MerchantOrder.Status.CANCELLED)
    due = live.aggregate(due=Sum("cost"))["due"]
    assert order.amount_captured in (order.total, due)
    assert order.amount_net == due
    assert set(Refund.objects.filter(order=order).values_list("status", flat=True)) <= {"succeeded"}
    assert payment_mismatches() == []
