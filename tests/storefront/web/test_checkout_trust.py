"""The checkout page and the payment page as a first-time shopper meets them."""

import re

import pytest
from django.urls import reverse

from storefront.models import Cart, Order
from tests.storefront.orders.conftest import POSTAL_CODE
from tests.storefront.web.conftest import add_to_cart, market  # noqa: F401  (fixture)

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


def _find(pattern: str, html: str, flags: int = 0) -> str:
    match = re.search(pattern, html, flags)
    assert match is not None, pattern
    return match.group(0)


def _tag(html: str, name: str) -> str:
    """The opening tag of the control named ``name``."""
    return _find(rf'<(?:input|select)[^>]*name="{name}"[^>]*>', html)


def test_the_checkout_page_shows_the_order_summary_with_each_sellers_terms(client, cart):
    response = client.get(reverse("checkout"))
    html = response.content.decode()
    assert response.status_code == 200
    assert html.count('data-testid="summary-package"') == 2
    for merchant in ("Dear Shop", "Cheap Shop"):
        assert f"Package from {merchant}" in html
        assert f"Sold and shipped by {merchant}" in html
    assert html.count("Returns: send it back within 14 days") == 2
    assert "Questions:" in html
    assert "When is my money taken?" in html and "Nothing is taken when you place" in html
    total = client.get(reverse("cart")).context["summary"].total
    assert f'data-testid="summary-total" data-cents="{total}"' in html


def test_the_page_shown_again_after_an_address_keeps_the_terms_and_money_timing(client, cart):
    assert client.post(reverse("checkout"), {**ADDRESS, "country": "AT"}).status_code == 302
    html = client.get(reverse("checkout_review")).content.decode()
    assert html.count('data-testid="package-terms"') == 2
    assert 'data-testid="payment-timing"' in html
    assert '<option value="AT" selected>Austria</option>' in html


def test_country_is_a_list_of_iso_codes_with_names_the_shops_countries_first(client, cart):
    html = client.get(reverse("checkout")).content.decode()
    select = _find(r'<select name="country".*?</select>', html, re.S)
    codes = re.findall(r'<option value="([A-Z]{2})"', select)
    assert codes[:3] == ["DE", "AT", "NL"]
    assert len(codes) == len(set(codes)) == 249
    assert '<option value="DE" selected>Germany</option>' in select
    assert '<option value="FR">France</option>' in select


@pytest.mark.parametrize(
    ("name", "token"),
    [
        ("full_name", "name"),
        ("email", "email"),
        ("address_line", "street-address"),
        ("postal_code", "postal-code"),
        ("city", "address-level2"),
        ("country", "country"),
    ],
)
def test_every_address_field_has_its_autofill_hint(client, cart, name, token):
    html = client.get(reverse("checkout")).content.decode()
    assert f'autocomplete="{token}"' in _tag(html, name)


def test_errors_are_summarised_at_the_top_focused_and_tied_to_their_fields(client, cart):
    bad = {**ADDRESS, "email": "not-an-address", "full_name": ""}
    response = client.post(reverse("checkout"), bad)
    html = response.content.decode()
    assert response.status_code == 400
    summary = _find(r'<div[^>]*data-testid="error-summary".*?</div>', html, re.S)
    assert 'tabindex="-1"' in summary and "autofocus" in summary
    assert "are 2 problems" in summary
    assert 'href="#id_email"' in summary and 'href="#id_full_name"' in summary
    # The summary comes before the form.
    assert html.index('data-testid="error-summary"') < html.index('name="email"')
    email = _tag(html, "email")
    assert 'aria-invalid="true"' in email
    assert re.search(r'aria-describedby="[^"]*id_email_error', email)
    assert 'id="id_email_error"' in html
    assert "<title>Error:" in html


@pytest.mark.parametrize("country", ["XX", "Germany", ""])
def test_a_country_not_on_the_list_is_refused(client, cart, country):
    response = client.post(reverse("checkout"), {**ADDRESS, "country": country})
    assert response.status_code == 400
    assert 'href="#id_country"' in response.content.decode()


def test_a_lower_case_code_is_the_same_country(client, cart):
    assert client.post(reverse("checkout"), {**ADDRESS, "country": "at"}).status_code == 302
    assert client.session["checkout_address"]["country"] == "AT"


def _placed_order(client) -> Order:
    html = client.get(reverse("checkout")).content.decode()
    form = {
        name: _find(rf'name="{name}" value="[^"]+"', html).split('value="')[1][:-1]
        for name in ("review_token", "idempotency_key")
    }
    assert client.post(reverse("checkout"), {**ADDRESS, **form}).status_code == 302
    return Order.objects.get()


def test_the_demo_payment_page_has_two_test_buttons_and_no_gateway_fields(client, cart):
    order = _placed_order(client)
    html = client.get(reverse("order_pay", args=[order.number])).content.decode()
    assert "Pay (test: declined)" in html and "(test: succeeds)" in html
    for raw in ("fraud", "3DS", "3-D", "Gateway", "verification_result"):
        assert raw not in html.replace('name="fraud_status"', "").replace(
            'name="gateway_response"', ""
        )
    assert "<select" not in html


@pytest.mark.parametrize(("button", "status"), [("confirmed", "paid"), ("rejected", "failed")])
def test_each_test_button_goes_through_the_provider_and_settles_the_order(
    client, cart, button, status
):
    order = _placed_order(client)
    url = reverse("order_pay", args=[order.number])
    html = client.get(url).content.decode()
    hidden = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]+)"', html))
    assert set(hidden) >= {"fraud_status", "gateway_response"}
    response = client.post(url, {**hidden, "status": button})
    assert response.status_code == 302
    assert response["Location"] == reverse("order_detail", args=[order.number])
    order.refresh_from_db()
    assert order.status == status


def test_a_payment_post_without_a_choice_says_so_instead_of_waiting_silently(client, cart):
    order = _placed_order(client)
    url = reverse("order_pay", args=[order.number])
    response = client.post(url, {"fraud_status": "accept", "gateway_response": "3ds-disabled"})
    assert response.status_code == 400
    assert 'data-testid="pay-error"' in response.content.decode()
    assert "Pay (test: declined)" in response.content.decode()
