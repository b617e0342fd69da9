"""The cart page's Improve panel shows only a run made for the cart as it is now: never one of
an earlier version of the cart (the last order's, a line since changed), never the checkout
review's own look for a cheaper cart."""

import pytest
from django.urls import reverse

from smartcart.models import OptimizationRun
from storefront.checkout.address import ShippingAddress
from storefront.checkout.services import checkout_review_prepare, order_place
from storefront.models import Cart, CartLine
from tests.smartcart.web.test_improve import dear_cart, latest_run, start  # noqa: F401
from tests.storefront.web.conftest import add_to_cart

pytestmark = pytest.mark.django_db

ADDRESS = ShippingAddress(
    email="guest@example.com",
    full_name="Grace Hopper",
    address_line="Arlington Rd 1",
    city="Berlin",
    postal_code="10115",
    country="DE",
)


def _cart(client) -> Cart:
    return Cart.objects.get(session_key=client.session.session_key)


def _panel_shown(client) -> bool:
    return 'id="improve"' in client.get(reverse("cart")).content.decode()


def test_the_review_check_never_appears_in_the_cart_panel(client, dear_cart):  # noqa: F811
    review = checkout_review_prepare(cart=_cart(client))
    assert review.cheaper is not None and review.cheaper.savings > 0
    run = OptimizationRun.objects.get(pk=review.cheaper.run_id)
    assert run.source == OptimizationRun.Source.CHECKOUT
    assert run.cart_version == _cart(client).version  # made for the cart as it is now
    html = client.get(reverse("cart")).content.decode()
    assert 'id="improve"' not in html
    assert "You can save" not in html and "out of date" not in html


def test_a_new_cart_after_an_order_shows_no_suggestion_of_the_last_one(
    client,
    dear_cart,  # noqa: F811
    market,
):
    client.post(reverse("cart_destination"), {"postal_code": ADDRESS.postal_code})
    review = checkout_review_prepare(cart=_cart(client))
    order_place(
        cart=_cart(client),
        user=None,
        address=ADDRESS,
        review_token=review.review_token,
        idempotency_key="fresh-cart-order-1",
    )
    assert OptimizationRun.objects.get(cart=dear_cart).source == OptimizationRun.Source.CHECKOUT
    add_to_cart(client, market.dear_offers[0])  # the same cart row, a new version
    html = client.get(reverse("cart")).content.decode()
    assert 'id="improve"' not in html
    assert "This suggestion is out of date" not in html
    assert "Improve cart" in html  # the button starts a run for this cart


@pytest.mark.parametrize("change", ["quantity", "remove", "add", "postal_code"])
def test_a_run_of_an_earlier_cart_version_is_not_shown(client, dear_cart, market, change):  # noqa: F811
    start(client)
    assert _panel_shown(client)
    line = CartLine.objects.filter(cart=dear_cart).earliest("pk")
    if change == "quantity":
        client.post(reverse("cart_line_update", args=[line.pk]), {"quantity": 2})
    elif change == "remove":
        client.post(reverse("cart_line_remove", args=[line.pk]))
    elif change == "add":
        add_to_cart(client, market.cheap_offers[0])
    else:
        client.post(reverse("cart_destination"), {"postal_code": "80331"})
    assert _cart(client).version != latest_run().cart_version
    assert not _panel_shown(client)
    start(client)  # a run for the cart as it is now is shown again
    assert latest_run().cart_version == _cart(client).version
    assert _panel_shown(client)


def test_apply_of_a_suggestion_the_cart_moved_past_says_why(client, dear_cart):  # noqa: F811
    """The page the shopper applied from was open before the cart changed (another tab):
    the refused suggestion is shown, out of date, with the reason and Recompute."""
    start(client)
    run = latest_run()
    line = CartLine.objects.filter(cart=dear_cart).earliest("pk")
    client.post(reverse("cart_line_update", args=[line.pk]), {"quantity": 2})
    response = client.post(reverse("cart_improve_apply", args=[run.pk]))
    html = response.content.decode()
    assert response.status_code == 409
    assert "This suggestion is out of date" in html
    assert "Your cart changed after this suggestion was computed." in html
    assert "Recompute for my cart now" in html
