"""Concurrency of placing orders, on PostgreSQL (row locks; SQLite has none to test)."""

import copy
import re

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db import IntegrityError, transaction
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from storefront.carts.services import cart_get_or_create, cart_merge
from storefront.checkout.review import CheckoutChanged
from storefront.errors import Conflict
from storefront.models import MerchantOrder, Offer, Order
from storefront.payments.services import order_payment_for
from tests.factories import CartFactory, CartLineFactory, OfferFactory, UserFactory
from tests.storefront.orders.conftest import POSTAL_CODE, new_key, place, review_token
from tests.storefront.race_support import POSTGRES_RACE_MARKS, race

pytestmark = POSTGRES_RACE_MARKS


@pytest.mark.parametrize("shoppers", [2, 6])
def test_shoppers_racing_for_the_last_unit_get_one_order(shoppers):
    last = OfferFactory(stock=1, unit_price=999)
    carts = [CartFactory(postal_code=POSTAL_CODE) for _ in range(shoppers)]
    for cart in carts:
        CartLineFactory(cart=cart, offer=last, quantity=1)
        cart.refresh_from_db()
    tokens = [review_token(cart) for cart in carts]
    results = race([lambda c=c, t=t: place(c, token=t) for c, t in zip(carts, tokens, strict=True)])
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
    results = race([lambda c=c, t=t: place(c, token=t) for c, t in zip(carts, tokens, strict=True)])
    assert all(isinstance(r, Order) for r in results), results
    assert sorted(Offer.objects.values_list("stock", flat=True)) == [6, 6]


def test_a_double_click_places_one_order():
    cart = CartLineFactory(
        cart=CartFactory(postal_code=POSTAL_CODE), offer=OfferFactory(stock=3), quantity=1
    ).cart
    cart.refresh_from_db()
    token, key = review_token(cart), new_key()
    results = race([lambda: place(cart, token=token, key=key)] * 3)
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
    results = race([lambda: payment.change_status("rejected"), lambda: place(cart, token=token)])
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


# --- the same races through the web pages and the API ---------------------------------------

ADDRESS = {
    "email": "racer@example.com",
    "full_name": "Ray Sir",
    "address_line": "Rennbahnstr. 1",
    "city": "Berlin",
    "postal_code": POSTAL_CODE,
    "country": "DE",
}


def _guest_at_the_review(offer) -> tuple[Client, dict]:
    """A guest with ``offer`` in the cart at the review step, and the review's place form."""
    client = Client()
    client.post(reverse("cart_add"), {"offer": offer.pk, "quantity": 1})
    assert client.post(reverse("checkout"), ADDRESS).status_code == 302
    html = client.get(reverse("checkout_review")).content.decode()
    form = dict(re.findall(r'name="(review_token|idempotency_key)" value="([^"]+)"', html))
    assert len(form) == 2, html
    return client, form


def _messages(response) -> list[str]:
    return [str(message) for message in response.context["messages"]]


def test_two_guests_placing_the_last_unit_at_once_get_an_order_and_a_review_saying_why():
    """The load test's lone 400: the loser's next review has no place button, and what it
    posted anyway was a bare 400. Now both answers are redirects a shopper can follow."""
    last = OfferFactory(stock=1, unit_price=999)
    shoppers = [_guest_at_the_review(last) for _ in range(2)]
    url = reverse("checkout_place")
    results = race([lambda c=c, f=f: c.post(url, f) for c, f in shoppers])
    assert [r.status_code for r in results] == [302, 302], results
    order = Order.objects.get()
    pay, review = reverse("order_pay", args=[order.number]), reverse("checkout_review")
    assert sorted(r["Location"] for r in results) == sorted([pay, review])
    loser = shoppers[[r["Location"] for r in results].index(review)][0]
    page = loser.get(review)
    assert any("not available in that quantity any more" in m for m in _messages(page))
    assert 'data-testid="place-order"' not in page.content.decode()
    blind = loser.post(url, {})  # the review had no form: the load test posted nothing
    assert blind.status_code == 302 and blind["Location"] == review
    assert Order.objects.count() == 1 and Offer.objects.get(pk=last.pk).stock == 0


def test_two_tabs_placing_one_guest_cart_at_once_get_one_order():
    client, first = _guest_at_the_review(OfferFactory(stock=5))
    html = client.get(reverse("checkout_review")).content.decode()
    second = dict(re.findall(r'name="(review_token|idempotency_key)" value="([^"]+)"', html))
    other_tab = Client()
    other_tab.cookies = copy.deepcopy(client.cookies)  # one browser session, two requests
    url = reverse("checkout_place")
    results = race([lambda: client.post(url, first), lambda: other_tab.post(url, second)])
    order = Order.objects.get()
    assert sorted(r["Location"] for r in results) == sorted(
        [reverse("order_pay", args=[order.number]), reverse("checkout_review")]
    ), results
    assert Offer.objects.get().stock == 4


def test_two_api_clients_placing_one_cart_at_once_get_a_201_and_a_409_with_a_code():
    user = UserFactory()
    apis = [APIClient(), APIClient()]
    for api in apis:
        api.force_authenticate(user)
    offer = OfferFactory(stock=1)
    assert apis[0].post("/api/v1/cart/").status_code == 201
    apis[0].post("/api/v1/cart/lines/", {"offer_id": offer.pk, "quantity": 1}, format="json")
    review = apis[0].post("/api/v1/checkout/review/", {"postal_code": POSTAL_CODE}, format="json")
    body = {**ADDRESS, "review_token": review.json()["review_token"]}
    results = race(
        [
            lambda api=api, key=key: api.post(
                "/api/v1/orders/", body, format="json", HTTP_IDEMPOTENCY_KEY=key
            )
            for api, key in zip(apis, ("phone-key-0001", "tablet-key-0002"), strict=True)
        ]
    )
    assert sorted(r.status_code for r in results) == [201, 409], results
    (refused,) = [r for r in results if r.status_code == 409]
    assert refused.json()["error"]["code"] in {"cart_empty", "checkout_changed"}
    assert Order.objects.count() == 1 and Offer.objects.get().stock == 0


@pytest.mark.parametrize("cities", [("Berlin", "Berlin"), ("Berlin", "Hamburg")])
def test_one_key_sent_twice_at_once_places_once_and_the_twin_replays_or_is_a_422(cities):
    """The twin waits for the first's cart lock, finds its order, loses the key row's race
    and answers from the stored row: a replay for the same body, a 422 for another."""
    user = UserFactory()
    apis = [APIClient(), APIClient()]
    for api in apis:
        api.force_authenticate(user)
    offer = OfferFactory(stock=5)
    assert apis[0].post("/api/v1/cart/").status_code == 201
    apis[0].post("/api/v1/cart/lines/", {"offer_id": offer.pk, "quantity": 1}, format="json")
    review = apis[0].post("/api/v1/checkout/review/", {"postal_code": POSTAL_CODE}, format="json")
    token = review.json()["review_token"]
    results = race(
        [
            lambda api=api, city=city: api.post(
                "/api/v1/orders/",
                {**ADDRESS, "city": city, "review_token": token},
                format="json",
                HTTP_IDEMPOTENCY_KEY="one-key-two-calls",
            )
            for api, city in zip(apis, cities, strict=True)
        ]
    )
    order = Order.objects.get()
    assert Offer.objects.get().stock == 4
    if cities[0] == cities[1]:
        assert [r.status_code for r in results] == [201, 201], results
        assert results[0].json() == results[1].json()
        assert sorted(r.get("Idempotent-Replayed", "") for r in results) == ["", "true"]
    else:
        by_city = dict(zip(cities, results, strict=True))
        assert by_city[order.city].status_code == 201, results
        (other,) = [r for city, r in by_city.items() if city != order.city]
        assert other.status_code == 422 and other.json()["error"]["code"] == (
            "idempotency_key_reused"
        )


def test_signing_in_while_the_payment_fails_puts_the_lines_in_the_account_cart_either_way():
    """A sign-in's merge locks the carts, then moves the order to the account's cart; the
    failing payment locks the cart, then the order: whichever comes first, no deadlock."""
    guest = CartFactory(owner=None, session_key="racing-guest", postal_code=POSTAL_CODE)
    line = CartLineFactory(cart=guest, offer=OfferFactory(stock=4), quantity=3)
    guest.refresh_from_db()
    order = place(guest, user=AnonymousUser())
    account = cart_get_or_create(user=UserFactory())
    payment = order_payment_for(order=order)
    results = race(
        [
            lambda: cart_merge(source=guest, target=account),
            lambda: payment.change_status("rejected"),
        ]
    )
    assert not any(isinstance(r, Exception) for r in results), results
    order.refresh_from_db()
    assert order.status == Order.Status.FAILED and order.cart_id == account.pk
    assert set(account.lines.values_list("offer_id", "quantity")) == {(line.offer_id, 3)}
    assert Offer.objects.get(pk=line.offer_id).stock == 4
