import re

import pytest
from django.db.models import F
from django.template.loader import render_to_string
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from storefront.carts.services import cart_destination_set, cart_get_or_create, cart_line_add
from storefront.catalog.services import offer_update
from storefront.models import Cart, Offer, Order
from storefront.money import format_money
from tests.factories import TEST_PASSWORD, UserFactory
from tests.storefront.orders.conftest import POSTAL_CODE
from tests.storefront.web.conftest import add_to_cart, market  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db

ADDRESS = {
    "email": "guest@example.com",
    "full_name": "Grace Hopper",
    "address_line": "Arlington Rd 1",
    "city": "Berlin",
    "postal_code": POSTAL_CODE,
    "country": "de",
}
PAID = {"status": "confirmed", "fraud_status": "accept", "gateway_response": "3ds-disabled"}


@pytest.fixture
def cart_two_merchants(client, market):  # noqa: F811
    add_to_cart(client, market.dear_offers[0])
    add_to_cart(client, market.cheap_offers[1], quantity=2)
    client.post(reverse("cart_destination"), {"postal_code": POSTAL_CODE})
    return Cart.objects.get(session_key=client.session.session_key)


def _review(client):
    assert client.post(reverse("checkout"), ADDRESS).status_code == 302
    response = client.get(reverse("checkout_review"))
    assert response.status_code == 200
    return response


def _place_form(response) -> dict:
    html = response.content.decode()
    return {
        name: re.search(rf'name="{name}" value="([^"]+)"', html).group(1)
        for name in ("review_token", "idempotency_key")
    }


def test_guest_checkout_from_cart_to_paid_order(client, cart_two_merchants):
    cart_total = client.get(reverse("cart")).context["summary"].total
    assert 'data-testid="checkout"' in client.get(reverse("cart")).content.decode()
    review = _review(client)
    assert review.context["summary"].total == cart_total
    assert len(review.context["summary"].groups) == 2
    placed = client.post(reverse("checkout_place"), _place_form(review))
    order = Order.objects.get()
    assert placed["Location"] == reverse("order_pay", args=[order.number])
    assert client.get(placed["Location"]).status_code == 200
    paid = client.post(placed["Location"], PAID)
    assert paid["Location"] == reverse("order_detail", args=[order.number])
    page = client.get(paid["Location"])
    order.refresh_from_db()
    assert order.status == "paid" and order.total == cart_total and order.owner is None
    assert order.country == "DE"
    assert len(page.context["order"].merchant_orders.all()) == 2
    assert "Paid" in page.content.decode()
    assert "you get an e-mail with the tracking number" in page.content.decode()
    # The shopper reads the country's name, on the page and in the mail, never its code.
    assert "Germany" in page.content.decode()
    mail_body = render_to_string("web/orders/confirmation_email.txt", {"order": order})
    assert "Germany" in mail_body


def test_a_double_submitted_review_places_one_order(client, cart_two_merchants):
    form = _place_form(_review(client))
    first = client.post(reverse("checkout_place"), form)
    second = client.post(reverse("checkout_place"), form)
    assert first["Location"] == second["Location"]
    assert Order.objects.count() == 1


def test_the_review_offers_a_cheaper_cart_without_changing_it(client, market):  # noqa: F811
    for offer in market.dear_offers:
        add_to_cart(client, offer)
    client.post(reverse("cart_destination"), {"postal_code": POSTAL_CODE})
    cart = Cart.objects.get(session_key=client.session.session_key)
    version = cart.version
    review = _review(client)
    cheaper = review.context["cheaper"]
    assert cheaper is not None and cheaper.savings > 0
    html = review.content.decode()
    assert "Switch and save" in html
    # It says what changes: one sentence per line that moves.
    assert cheaper.moves and all(escape(move) in html for move in cheaper.moves)
    assert reverse("cart_improve_apply", args=[cheaper.run_id]) in html
    cart.refresh_from_db()
    assert cart.version == version
    assert set(cart.lines.values_list("offer__merchant", flat=True)) == {market.dear.pk}


def _dear_cart_review(client, market):  # noqa: F811
    for offer in market.dear_offers:
        add_to_cart(client, offer)
    client.post(reverse("cart_destination"), {"postal_code": POSTAL_CODE})
    return _review(client)


def test_switch_and_save_on_the_review_comes_back_to_the_review_with_the_new_total(
    client,
    market,  # noqa: F811
):
    cheaper = _dear_cart_review(client, market).context["cheaper"]
    review_url = reverse("checkout_review")
    assert f'name="next" value="{review_url}"' in _review(client).content.decode()
    switched = client.post(
        reverse("cart_improve_apply", args=[cheaper.run_id]), {"next": review_url}
    )
    assert switched.status_code == 302 and switched["Location"] == review_url
    review = client.get(review_url)
    assert review.context["summary"].total == cheaper.cheaper_total
    assert review.context["cheaper"] is None
    assert "Suggestion applied" in review.content.decode()
    placed = client.post(reverse("checkout_place"), _place_form(review))
    assert Order.objects.get().total == cheaper.cheaper_total
    assert placed.status_code == 302


@pytest.mark.parametrize(
    "next_url", ["https://evil.example/", "//evil.example/review/", "javascript:alert(1)"]
)
def test_switch_and_save_never_redirects_off_site(client, market, next_url):  # noqa: F811
    cheaper = _dear_cart_review(client, market).context["cheaper"]
    switched = client.post(reverse("cart_improve_apply", args=[cheaper.run_id]), {"next": next_url})
    assert switched["Location"] == reverse("cart")


def test_keep_my_cart_on_the_review_stays_on_the_review_and_is_not_offered_again(
    client,
    market,  # noqa: F811
):
    cheaper = _dear_cart_review(client, market).context["cheaper"]
    review_url = reverse("checkout_review")
    kept = client.post(reverse("cart_improve_dismiss", args=[cheaper.run_id]), {"next": review_url})
    assert kept["Location"] == review_url
    review = client.get(review_url)
    assert review.context["cheaper"] is None
    assert review.context["summary"].total == cheaper.current_total


def test_a_stale_switch_from_the_review_comes_back_to_the_review_saying_why(
    client,
    market,  # noqa: F811
):
    cheaper = _dear_cart_review(client, market).context["cheaper"]
    Cart.objects.filter(session_key=client.session.session_key).update(version=F("version") + 1)
    review_url = reverse("checkout_review")
    switched = client.post(
        reverse("cart_improve_apply", args=[cheaper.run_id]), {"next": review_url}
    )
    assert switched["Location"] == review_url
    assert "Your cart changed" in client.get(review_url).content.decode()


def test_signing_in_between_review_and_place_sends_back_to_a_fresh_review(
    client,
    cart_two_merchants,
    market,  # noqa: F811
):
    shopper = UserFactory(username="alice")
    theirs = cart_get_or_create(user=shopper)
    cart_line_add(cart=theirs, offer=market.bundle_offers[2], quantity=1)
    cart_destination_set(cart=theirs, postal_code="80331")
    form = _place_form(_review(client))
    client.post(reverse("login"), {"username": "alice", "password": TEST_PASSWORD})
    assert not Cart.objects.filter(pk=cart_two_merchants.pk).exists()  # merged

    placed = client.post(reverse("checkout_place"), form)

    assert placed.status_code == 302 and placed["Location"] == reverse("checkout_review")
    assert Order.objects.count() == 0
    theirs.refresh_from_db()
    assert theirs.postal_code == POSTAL_CODE  # priced for the checkout's address again
    review = client.get(placed["Location"])
    assert "Signing in added your cart" in review.content.decode()
    assert review.context["summary"].cart_id == theirs.pk
    assert len(review.context["summary"].groups) == 3  # the guest's lines and the account's
    again = client.post(reverse("checkout_place"), _place_form(review))
    order = Order.objects.get()
    assert again["Location"] == reverse("order_pay", args=[order.number])
    assert order.owner == shopper and order.total == review.context["summary"].total


def _messages(response) -> list[str]:
    return [str(message) for message in response.context["messages"]]


def test_a_price_change_before_placing_goes_back_to_the_review_naming_it_and_the_new_total(
    client,
    cart_two_merchants,
    market,  # noqa: F811
):
    form = _place_form(_review(client))
    offer_update(offer=market.dear_offers[0], unit_price=2600)
    response = client.post(reverse("checkout_place"), form)
    assert response.status_code == 302 and response["Location"] == reverse("checkout_review")
    assert Order.objects.count() == 0
    review = client.get(response["Location"])
    (message,) = _messages(review)
    assert message.startswith("Nothing was ordered. Your cart changed since you reviewed it")
    assert "Voltra Widget now costs €26.00 (was €25.00)" in message
    new_total = review.context["summary"].total
    assert f"The total is now {format_money(new_total)}" in message
    again = client.post(reverse("checkout_place"), _place_form(review))
    assert again["Location"] == reverse("order_pay", args=[Order.objects.get().number])
    assert Order.objects.get().total == new_total


def test_the_last_unit_sold_after_the_review_goes_back_to_a_review_without_a_place_button(
    client,
    cart_two_merchants,
    market,  # noqa: F811
):
    form = _place_form(_review(client))
    Offer.objects.filter(pk=market.cheap_offers[1].pk).update(stock=1)  # another shopper's
    response = client.post(reverse("checkout_place"), form)
    assert response.status_code == 302 and response["Location"] == reverse("checkout_review")
    review = client.get(response["Location"])
    html = review.content.decode()
    (message,) = _messages(review)
    assert "Nexon Gizmo: not available in that quantity any more." in message
    assert 'data-testid="place-order"' not in html and 'name="review_token"' not in html
    assert "Nexon Gizmo: only 1 left at Cheap Shop, you have 2 in your cart." in html
    # What the load test did: post the review's (absent) place form anyway.
    blind = client.post(reverse("checkout_place"), {})
    assert blind.status_code == 302 and blind["Location"] == reverse("checkout_review")
    assert "Nothing was ordered" in _messages(client.get(blind["Location"]))[0]
    assert Order.objects.count() == 0


def test_a_key_that_placed_an_order_already_paid_answers_that_order_page(
    client,
    cart_two_merchants,
):
    form = _place_form(_review(client))
    pay_url = client.post(reverse("checkout_place"), form)["Location"]
    client.post(pay_url, PAID)
    order = Order.objects.get()
    again = client.post(reverse("checkout_place"), form)  # the back button, then place
    assert again.status_code == 302 and again["Location"] == order.get_absolute_url()
    assert Order.objects.count() == 1


def test_placing_from_a_review_of_a_cart_emptied_by_another_tab_goes_back_to_the_cart(
    client,
    cart_two_merchants,
):
    first_tab = _place_form(_review(client))
    second_tab = _place_form(_review(client))
    placed = client.post(reverse("checkout_place"), first_tab)
    assert placed["Location"].endswith("/pay/")
    other = client.post(reverse("checkout_place"), second_tab)
    assert other.status_code == 302 and other["Location"] == reverse("checkout_review")
    page = client.get(other["Location"], follow=True)
    assert page.redirect_chain[-1][0] == reverse("cart")
    assert "Nothing was ordered. Your cart is empty." in _messages(page)
    assert Order.objects.count() == 1


@pytest.mark.parametrize(
    "override",
    [
        {"email": "not-an-address"},
        {"postal_code": "!!"},
        {"country": "Germany"},
        {"full_name": ""},
        {"address_line": "x" * 201},
    ],
)
def test_bad_address_is_a_400_and_changes_nothing(client, cart_two_merchants, override):
    response = client.post(reverse("checkout"), {**ADDRESS, **override})
    assert response.status_code == 400
    cart_two_merchants.refresh_from_db()
    assert cart_two_merchants.postal_code == POSTAL_CODE
    assert "checkout_address" not in client.session


@pytest.mark.parametrize(
    "form",
    [
        {},
        {"review_token": "x", "idempotency_key": "key-12345678"},
        {"review_token": "x"},
        {"review_token": "x", "idempotency_key": "bad key!"},
    ],
)
def test_bad_place_posts_go_back_to_the_review_and_place_nothing(client, cart_two_merchants, form):
    _review(client)
    response = client.post(reverse("checkout_place"), form)
    assert response.status_code == 302 and response["Location"] == reverse("checkout_review")
    review = client.get(response["Location"])
    assert _messages(review)[0].startswith("Nothing was ordered")
    assert 'data-testid="place-order"' in review.content.decode()
    assert Order.objects.count() == 0


def test_checkout_of_an_empty_cart_goes_back_to_the_cart(client, db):
    assert client.get(reverse("checkout"))["Location"] == reverse("cart")
    assert client.post(reverse("checkout_place"), {})["Location"] == reverse("cart")


def test_bad_payment_form_is_a_400(client, cart_two_merchants):
    client.post(reverse("checkout_place"), _place_form(_review(client)))
    order = Order.objects.get()
    response = client.post(reverse("order_pay", args=[order.number]), {"status": "nonsense"})
    assert response.status_code == 400
    order.refresh_from_db()
    assert order.status == "pending"


def test_rejected_payment_shows_the_failure_and_gives_the_stock_back(
    client,
    cart_two_merchants,
    market,  # noqa: F811
):
    client.post(reverse("checkout_place"), _place_form(_review(client)))
    order = Order.objects.get()
    assert Offer.objects.get(pk=market.cheap_offers[1].pk).stock == 1
    response = client.post(
        reverse("order_pay", args=[order.number]), {**PAID, "status": "rejected"}
    )
    page = client.get(response["Location"])
    assert "payment failed" in page.content.decode().lower()
    assert "back in your cart" in page.content.decode()
    assert Offer.objects.get(pk=market.cheap_offers[1].pk).stock == 3
    cart = client.get(reverse("cart")).context["summary"]
    assert cart.total == order.total  # the same lines again: check out once more
    again = client.post(reverse("checkout_place"), _place_form(_review(client)))
    assert again.status_code == 302 and Order.objects.count() == 2


def test_a_guest_who_signs_in_before_a_rejected_payment_finds_the_lines_in_their_cart(
    client,
    cart_two_merchants,
):
    UserFactory(username="alice")
    placed = client.post(reverse("checkout_place"), _place_form(_review(client)))
    order = Order.objects.get()
    client.post(reverse("login"), {"username": "alice", "password": TEST_PASSWORD})
    assert not Cart.objects.filter(pk=cart_two_merchants.pk).exists()  # merged at sign-in
    failed = client.post(placed["Location"], {**PAID, "status": "rejected"})
    assert "back in your cart" in client.get(failed["Location"]).content.decode()
    cart = client.get(reverse("cart")).context["summary"]
    assert cart.cart_id == Cart.objects.get(owner__username="alice").pk
    assert cart.total == order.total  # the same lines again, in the account's cart
    again = client.post(reverse("checkout_place"), _place_form(_review(client)))
    assert again.status_code == 302 and Order.objects.count() == 2


def test_placing_again_after_signing_in_answers_the_order_that_key_placed_as_a_guest(
    client,
    cart_two_merchants,
):
    UserFactory(username="alice")
    form = _place_form(_review(client))
    placed = client.post(reverse("checkout_place"), form)
    client.post(reverse("login"), {"username": "alice", "password": TEST_PASSWORD})
    again = client.post(reverse("checkout_place"), form)  # the back button, then place
    assert again.status_code == 302 and again["Location"] == placed["Location"]
    assert Order.objects.count() == 1
    assert client.get(again["Location"]).status_code == 200


def test_other_browsers_and_shoppers_get_404_guests_find_it_with_their_email(
    client, cart_two_merchants
):
    client.post(reverse("checkout_place"), _place_form(_review(client)))
    order = Order.objects.get()
    detail = reverse("order_detail", args=[order.number])
    stranger = Client()
    assert stranger.get(detail).status_code == 404
    assert stranger.get(reverse("order_pay", args=[order.number])).status_code == 404
    signed_in = Client()
    signed_in.force_login(UserFactory())
    assert signed_in.get(detail).status_code == 404
    wrong = stranger.post(reverse("order_lookup"), {"number": order.number, "email": "x@y.zz"})
    assert wrong.status_code == 404
    assert stranger.post(reverse("order_lookup"), {"number": "", "email": ""}).status_code == 400
    found = stranger.post(
        reverse("order_lookup"), {"number": order.number.lower(), "email": "GUEST@example.com"}
    )
    assert found["Location"] == detail
    assert stranger.get(detail).status_code == 200


def test_my_orders_lists_only_mine_and_needs_sign_in(client, market):  # noqa: F811
    shopper = UserFactory()
    client.force_login(shopper)
    add_to_cart(client, market.dear_offers[0])
    client.post(reverse("cart_destination"), {"postal_code": POSTAL_CODE})
    client.post(reverse("checkout_place"), _place_form(_review(client)))
    other = Client()
    assert other.get(reverse("order_list"))["Location"].startswith(reverse("login"))
    other.force_login(UserFactory())
    assert list(other.get(reverse("order_list")).context["orders"]) == []
    listed = client.get(reverse("order_list"))
    mine = listed.context["orders"]
    assert [order.owner_id for order in mine] == [shopper.pk]
    # Each order says what is in it, not only where from.
    assert f"1 \u00d7 {market.dear_offers[0].product.name}" in listed.content.decode()
    detail = client.get(mine[0].get_absolute_url()).content.decode()
    assert "What happens next" in detail and "Pay by" in detail


def test_a_new_postal_code_in_the_address_reprices_the_cart_before_the_review(client, market):  # noqa: F811
    add_to_cart(client, market.cheap_offers[0])
    before = client.get(reverse("cart")).context["summary"].total
    review = _review(client)
    assert review.context["summary"].postal_code == POSTAL_CODE
    assert review.context["summary"].total < before  # the cheap shop's Berlin zone
