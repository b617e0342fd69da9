"""Concurrency of placing orders, on PostgreSQL (row locks; SQLite has none to test)."""

import threading

import pytest
from django.db import IntegrityError, connection, connections, transaction

from storefront.errors import Conflict
from storefront.models import MerchantOrder, Offer, Order
from storefront.orders.review import CheckoutChanged
from storefront.orders.services import order_payment_for
from tests.factories import CartFactory, CartLineFactory, OfferFactory
from tests.storefront.orders.conftest import POSTAL_CODE, new_key, place, review_token

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="needs PostgreSQL (DATABASE_URL) row locks"
    ),
]


def _race(calls):
    """Runs the calls at once, one thread and connection each; their results or errors."""
    barrier = threading.Barrier(len(calls))
    results = [None] * len(calls)

    def run(index, call):
        try:
            barrier.wait()
            results[index] = call()
        except Exception as error:  # the test inspects every outcome
            results[index] = error
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


@pytest.mark.parametrize("shoppers", [2, 6])
def test_shoppers_racing_for_the_last_unit_get_one_order(shoppers):
    last = OfferFactory(stock=1, unit_price=999)
    carts = [CartFactory(postal_code=POSTAL_CODE) for _ in range(shoppers)]
    for cart in carts:
        CartLineFactory(cart=cart, offer=last, quantity=1)
        cart.refresh_from_db()
    tokens = [review_token(cart) for cart in carts]
    results = _race(
        [lambda c=c, t=t: place(c, token=t) for c, t in zip(carts, tokens, strict=True)]
    )
    orders = [r for r in results if isinstance(r, Order)]
    refusals = [r for r in results if isinstance(r, Conflict)]
    assert len(orders) == 1, results
    assert len(refusals) == shoppers - 1, results
    assert all("insufficient_stock" in {c["code"] for c in r.changes} for r in refusals), results
    assert Order.objects.count() == 1
    assert Offer.objects.get(pk=last.pk).stock == 0


def test_two_offers_locked_in_opposite_cart_orders_do_not_deadlock():
    first, second = OfferFactory(stock=10), OfferFactory(stock=10)
    carts = []
    for offers in ((first, second), (second, first)):
        cart = CartFactory(postal_code=POSTAL_CODE)
        for offer in offers:
            CartLineFactory(cart=cart, offer=offer, quantity=2)
        cart.refresh_from_db()
        carts.append(cart)
    tokens = [review_token(cart) for cart in carts]
    results = _race(
        [lambda c=c, t=t: place(c, token=t) for c, t in zip(carts, tokens, strict=True)]
    )
    assert all(isinstance(r, Order) for r in results), results
    assert sorted(Offer.objects.values_list("stock", flat=True)) == [6, 6]


def test_a_double_click_places_one_order():
    cart = CartLineFactory(
        cart=CartFactory(postal_code=POSTAL_CODE), offer=OfferFactory(stock=3), quantity=1
    ).cart
    cart.refresh_from_db()
    token, key = review_token(cart), new_key()
    results = _race([lambda: place(cart, token=token, key=key)] * 3)
    assert all(isinstance(r, Order) for r in results), results
    assert len({r.pk for r in results}) == 1
    assert Order.objects.count() == 1
    assert Offer.objects.get().stock == 2


def test_a_failed_payment_restoring_the_cart_while_it_is_placed_again_does_not_deadlock():
    """Payment failure locks order, cart, offers; placing locks cart, offers: one order."""
    first, second = OfferFactory(stock=10), OfferFactory(stock=10)
    cart = CartFactory(postal_code=POSTAL_CODE)
    CartLineFactory(cart=cart, offer=first, quantity=2)
    cart.refresh_from_db()
    pending = place(cart)
    CartLineFactory(cart=cart, offer=second, quantity=3)
    cart.refresh_from_db()
    token = review_token(cart)
    payment = order_payment_for(order=pending)
    results = _race([lambda: payment.change_status("rejected"), lambda: place(cart, token=token)])
    placed = results[1]
    assert isinstance(placed, Order | CheckoutChanged), results
    pending.refresh_from_db()
    assert pending.status == Order.Status.FAILED
    stock = dict(Offer.objects.values_list("pk", "stock"))
    assert stock[first.pk] == 10  # given back
    lines = set(cart.lines.values_list("offer_id", "quantity"))
    if isinstance(placed, Order):  # placed first: the restore came after and refilled it
        assert stock[second.pk] == 7 and lines == {(first.pk, 2)}
    else:  # the restore changed the cart under the review: nothing placed
        assert stock[second.pk] == 10 and lines == {(first.pk, 2), (second.pk, 3)}


def test_the_database_refuses_packages_that_do_not_add_up_to_the_order_total():
    cart = CartLineFactory(cart=CartFactory(postal_code=POSTAL_CODE), quantity=1).cart
    cart.refresh_from_db()
    order = place(cart)
    with pytest.raises(IntegrityError), transaction.atomic():
        MerchantOrder.objects.filter(order=order).update(subtotal=1, shipping=0, cost=1)
    assert sum(order.merchant_orders.values_list("cost", flat=True)) == order.total
