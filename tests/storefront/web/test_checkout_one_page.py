"""The one-page checkout: the address, the order summary and the place button on one page,
placed by one POST that checks the address and the total the page showed."""

import re

import pytest
from django.urls import reverse

from storefront.catalog.services import offer_update
from storefront.checkout import services as checkout_services
from storefront.checkout.address import shipping_address_validate
from storefront.checkout.addresses import address_remember
from storefront.errors import Throttled
from storefront.models import Address, Cart, Offer, Order
from storefront.money import format_money
from tests.storefront.orders.conftest import POSTAL_CODE
from tests.storefront.web.conftest import add_to_cart, market, shopper  # noqa: F401  (fixtures)

pytestmark = pytest.mark.django_db

ADDRESS = {
    "email": "guest@example.com",
    "full_name": "Grace Hopper",
    "address_line": "Arlington Rd 1",
    "city": "Berlin",
    "postal_code": POSTAL_CODE,
    "country": "DE",
}


@pytest.fixture
def cart(client, market):  # noqa: F811
    add_to_cart(client, market.dear_offers[0])
    add_to_cart(client, market.cheap_offers[1], quantity=2)
    client.post(reverse("cart_destination"), {"postal_code": POSTAL_CODE})
    return Cart.objects.get(session_key=client.session.session_key)


def _page_form(response) -> dict:
    """The hidden fields of the page's place button."""
    html = response.content.decode()
    found = dict(re.findall(r'name="(review_token|idempotency_key)" value="([^"]+)"', html))
    assert set(found) == {"review_token", "idempotency_key"}, "the page has no place button"
    return found


def _place(client, page, **address) -> object:
    return client.post(reverse("checkout"), {**ADDRESS, **address, **_page_form(page)})


def _form_html(html: str) -> str:
    match = re.search(r'<form[^>]*id="checkout-form".*?</form>', html, re.S)
    assert match is not None
    return match.group(0)


def test_one_page_has_the_address_the_order_and_the_place_button_in_one_form(client, cart):
    page = client.get(reverse("checkout"))
    assert page.status_code == 200
    form = _form_html(page.content.decode())
    assert f'action="{reverse("checkout")}"' in form
    for name in ("email", "full_name", "address_line", "postal_code", "city", "country"):
        assert f'name="{name}"' in form
    assert 'name="review_token"' in form and 'name="idempotency_key"' in form
    assert form.count('data-testid="summary-package"') == 2
    assert 'data-testid="payment-timing"' in form
    total = page.context["summary"].total
    assert f"Place order and pay {format_money(total)}" in form
    assert 'data-testid="checkout-continue"' not in form  # no second step to continue to


def test_one_post_checks_the_address_and_places_the_order_for_the_total_shown(client, cart):
    page = client.get(reverse("checkout"))
    shown = page.context["summary"].total
    placed = _place(client, page)
    order = Order.objects.get()
    assert placed.status_code == 302
    assert placed["Location"] == reverse("order_pay", args=[order.number])
    assert (order.total, order.full_name, order.country) == (shown, "Grace Hopper", "DE")
    assert order.merchant_orders.count() == 2
    assert client.session["checkout_address"]["address_line"] == "Arlington Rd 1"


def test_a_double_submitted_page_places_one_order(client, cart):
    form = {**ADDRESS, **_page_form(client.get(reverse("checkout")))}
    first = client.post(reverse("checkout"), form)
    second = client.post(reverse("checkout"), form)
    assert first["Location"] == second["Location"]
    assert Order.objects.count() == 1


def test_a_signed_in_shoppers_address_is_kept_for_next_time(client, cart, shopper):  # noqa: F811
    client.force_login(shopper)
    assert _place(client, client.get(reverse("checkout"))).status_code == 302
    assert Address.objects.get(owner=shopper).address_line == "Arlington Rd 1"


def test_a_price_change_since_the_page_shows_the_page_again_naming_it_and_charges_nothing(
    client,
    cart,
    market,  # noqa: F811
):
    page = client.get(reverse("checkout"))
    offer_update(offer=market.dear_offers[0], unit_price=2600)
    again = _place(client, page, full_name="Grace B. Hopper")
    assert again.status_code == 409
    assert Order.objects.count() == 0
    html = again.content.decode()
    notice = re.search(r'<div[^>]*data-testid="checkout-notice".*?</div>', html, re.S).group(0)
    assert 'role="alert"' in notice and 'tabindex="-1"' in notice and "autofocus" in notice
    assert "Nothing was ordered" in notice
    assert "Voltra Widget now costs €26.00 (was €25.00)" in notice
    new_total = again.context["summary"].total
    assert f"The total is now {format_money(new_total)}" in notice
    assert f"Place order and pay {format_money(new_total)}" in html
    assert 'value="Grace B. Hopper"' in html  # what the shopper typed stays
    # The page drawn again carries the new total's token: placing it charges that.
    placed = _place(client, again, full_name="Grace B. Hopper")
    assert placed["Location"] == reverse("order_pay", args=[Order.objects.get().number])
    assert Order.objects.get().total == new_total


def test_a_new_postal_code_prices_shipping_and_shows_the_new_total_before_ordering(
    client,
    market,  # noqa: F811
):
    add_to_cart(client, market.cheap_offers[0])  # the cheap shop ships to Berlin for less
    client.post(reverse("cart_destination"), {"postal_code": "80331"})
    page = client.get(reverse("checkout"))
    munich = page.context["summary"].total
    shown = _place(client, page, postal_code=POSTAL_CODE)
    assert shown.status_code == 200 and Order.objects.count() == 0
    berlin = shown.context["summary"].total
    assert berlin < munich and shown.context["summary"].postal_code == POSTAL_CODE
    html = shown.content.decode()
    assert "Nothing was ordered yet" in html and f"now priced for {POSTAL_CODE}" in html
    assert f"Your total is now <strong>{format_money(berlin)}</strong>" in html
    placed = _place(client, shown)
    assert placed.status_code == 302 and Order.objects.get().total == berlin


def test_a_saved_address_elsewhere_says_placing_prices_its_shipping_first(
    client,
    shopper,  # noqa: F811
    market,  # noqa: F811
):
    client.force_login(shopper)
    add_to_cart(client, market.cheap_offers[0])
    client.post(reverse("cart_destination"), {"postal_code": POSTAL_CODE})
    munich = shipping_address_validate(**{**ADDRESS, "postal_code": "80331"})
    address_remember(user=shopper, address=munich)
    html = client.get(reverse("checkout")).content.decode()
    assert 'data-testid="postal-pending"' in html
    assert "Price shipping to 80331" in html and "Place order and pay" not in html


@pytest.mark.parametrize("override", [{"email": "nope"}, {"full_name": ""}, {"country": "XX"}])
def test_a_bad_address_on_the_page_is_a_400_with_the_order_still_there(client, cart, override):
    response = _place(client, client.get(reverse("checkout")), **override)
    assert response.status_code == 400 and Order.objects.count() == 0
    html = response.content.decode()
    assert 'data-testid="error-summary"' in html and 'data-testid="place-order"' in html
    assert html.count('data-testid="summary-package"') == 2
    assert "checkout_address" not in client.session


def test_a_line_sold_out_since_the_page_shows_it_without_a_place_button(client, cart, market):  # noqa: F811
    page = client.get(reverse("checkout"))
    Offer.objects.filter(pk=market.cheap_offers[1].pk).update(stock=1)
    again = _place(client, page)
    html = again.content.decode()
    assert again.status_code == 409 and Order.objects.count() == 0
    assert "Nexon Gizmo: not available in that quantity any more." in html
    assert 'data-testid="place-order"' not in html and 'name="review_token"' not in html
    assert "Nexon Gizmo: only 1 left at Cheap Shop, you have 2 in your cart." in html


def test_a_page_for_a_cart_emptied_by_another_tab_goes_to_the_cart(client, cart):
    first, second = client.get(reverse("checkout")), client.get(reverse("checkout"))
    assert _place(client, first)["Location"].endswith("/pay/")
    other = _place(client, second)
    assert other.status_code == 302 and other["Location"] == reverse("cart")
    assert Order.objects.count() == 1


def test_the_old_review_address_draws_the_same_page(client, cart):
    review = client.get(reverse("checkout_review"))
    assert review.status_code == 200
    assert review.templates[0].name == "web/checkout/checkout.html"
    assert 'name="email"' in review.content.decode()
    assert client.post(reverse("checkout_review")).status_code == 405


def test_the_page_names_each_package_once(client, cart):
    html = client.get(reverse("checkout")).content.decode()
    for merchant in ("Dear Shop", "Cheap Shop"):
        assert html.count(f"Package from {merchant}") == 1


def test_the_order_limit_answers_429_on_the_page_with_the_address_kept(client, cart, monkeypatch):
    def refuse(*, ident):
        raise Throttled("You placed orders too often: wait a minute.", retry_after=42)

    monkeypatch.setattr(checkout_services, "order_place_rate_check", refuse)
    refused = _place(client, client.get(reverse("checkout")), city="Potsdam")
    assert refused.status_code == 429 and refused["Retry-After"] == "42"
    html = refused.content.decode()
    assert "too often" in html and 'data-testid="checkout-notice"' in html
    assert 'value="Potsdam"' in html and 'data-testid="place-order"' in html
    assert Order.objects.count() == 0
