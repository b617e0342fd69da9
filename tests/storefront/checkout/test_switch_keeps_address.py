""" "Switch and save" and "Keep my cart" on the checkout page are buttons of its one form: what
the shopper typed and did not submit comes back with the page (no JavaScript needed: the
post goes on to Improve cart's apply or dismiss by a 307, which keeps its body), and Enter in
a field still presses Place order."""

import re

import pytest
from django.urls import reverse

from storefront.models import Cart
from tests.storefront.web.conftest import add_to_cart, market  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db

POSTAL_CODE = "10115"
# Typed, never submitted: no e-mail yet, so placing would be refused.
TYPED = {
    "email": "",
    "full_name": "Ada Lovelace",
    "address_line": "Invalidenstr. 1",
    "postal_code": POSTAL_CODE,
    "city": "Berlin",
    "country": "DE",
}


@pytest.fixture
def page(client, market):  # noqa: F811
    for offer in market.dear_offers:
        add_to_cart(client, offer)
    client.post(reverse("cart_destination"), {"postal_code": POSTAL_CODE})
    page = client.get(reverse("checkout"))
    assert page.context["cheaper"] is not None
    return page


def _hidden(html: str) -> dict[str, str]:
    return dict(re.findall(r'name="(review_token|idempotency_key|next)" value="([^"]*)"', html))


def _button(html: str, label: str) -> str:
    """The ``cheaper_action`` value of the button whose text starts with ``label``."""
    found = re.search(rf'name="cheaper_action" value="([^"]+)"[^>]*>{label}', html)
    assert found, label
    return found.group(1)


def _press(client, page, label: str, typed: dict):
    html = page.content.decode()
    data = {**typed, **_hidden(html), "cheaper_action": _button(html, label)}
    return client.post(reverse("checkout"), data)


def _form_values(response) -> dict:
    form = response.context["form"]
    return {name: form[name].value() for name in TYPED}


def test_switch_keeps_what_was_typed(client, page):
    cheaper = page.context["cheaper"]
    pressed = _press(client, page, "Switch and save", TYPED)
    # The same post goes on to the apply URL the button names, body and all.
    assert pressed.status_code == 307
    assert pressed["Location"] == reverse("cart_improve_apply", args=[cheaper.run_id])
    back = client.post(pressed["Location"], {"next": reverse("checkout")})
    assert back.status_code == 302 and back["Location"] == reverse("checkout")
    shown = client.get(back["Location"])
    assert shown.status_code == 200
    assert _form_values(shown) == TYPED
    assert not shown.context["form"].errors  # typed, not submitted: no errors shown
    html = shown.content.decode()
    assert 'value="Ada Lovelace"' in html and "Suggestion applied" in html
    assert shown.context["summary"].total == cheaper.cheaper_total
    assert shown.context["cheaper"] is None
    # Kept once: the next visit starts from the shopper's usual address again.
    assert client.get(reverse("checkout")).context["form"]["full_name"].value() in (None, "")


def test_switch_followed_by_the_browser_ends_on_the_page_with_the_address(client, page):
    """What a browser does without JavaScript: follow the 307 with the same body."""
    cheaper = page.context["cheaper"]
    shown = _press_followed(client, page, "Switch and save")
    assert [status for _, status in shown.redirect_chain] == [307, 302]
    assert shown.request["PATH_INFO"] == reverse("checkout")
    assert _form_values(shown) == TYPED
    assert shown.context["summary"].total == cheaper.cheaper_total


def _press_followed(client, page, label):
    html = page.content.decode()
    data = {**TYPED, **_hidden(html), "cheaper_action": _button(html, label)}
    return client.post(reverse("checkout"), data, follow=True)


def test_keep_my_cart_keeps_what_was_typed_and_the_cart(client, page, market):  # noqa: F811
    cheaper = page.context["cheaper"]
    shown = _press_followed(client, page, "Keep my cart")
    assert _form_values(shown) == TYPED
    assert shown.context["cheaper"] is None
    assert shown.context["summary"].total == cheaper.current_total
    cart = Cart.objects.get(session_key=client.session.session_key)
    assert set(cart.lines.values_list("offer__merchant", flat=True)) == {market.dear.pk}


def test_a_refused_switch_comes_back_with_what_was_typed(client, page, market):  # noqa: F811
    add_to_cart(client, market.cheap_offers[0])  # the cart changed since the offer was drawn
    shown = _press_followed(client, page, "Switch and save")
    assert shown.request["PATH_INFO"] == reverse("checkout")
    assert _form_values(shown) == TYPED
    assert "Your cart changed" in shown.content.decode()


@pytest.mark.parametrize(
    "target",
    ["https://evil.example/cart/improve/1/apply/", "//evil.example/", "/admin/", "/checkout/"],
)
def test_the_buttons_post_on_only_to_the_cheaper_carts_answers(client, page, target):
    html = page.content.decode()
    data = {**TYPED, **_hidden(html), "cheaper_action": target}
    refused = client.post(reverse("checkout"), data)
    assert refused.status_code == 400
    assert "checkout_typed" not in client.session


def test_enter_in_a_field_still_places_the_order(page):
    """Implicit submission presses the form's first submit button: Place order, which comes
    before the switch in the document, and the switch sits inside the one form."""
    html = page.content.decode()
    form = html[
        html.index('id="checkout-form"') : html.index("</form>", html.index("checkout-form"))
    ]
    first = re.search(r"<button[^>]*>", form).group(0)
    assert 'data-testid="place-order"' in first
    assert 'name="cheaper_action"' in form
    assert 'data-testid="cheaper-link"' in html  # the head still points at the offer
