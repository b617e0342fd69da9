"""A sold-out cart line offers one button, "Buy from <seller> for EUR x", a plain POST form
that moves the line to the other offer that adds least to the cart delivered (through
``cart_line_set_offer``), keeping its quantity; a stale or foreign request is refused."""

import re

import pytest
from django.urls import reverse

from storefront.models import CartLine, Offer
from tests.storefront.web.conftest import add_to_cart

pytestmark = pytest.mark.django_db

FORM = re.compile(
    r'<form method="post" action="(?P<action>[^"]+)" class="cart-line__switch"[^>]*>.*?'
    r'name="offer" value="(?P<offer>\d+)".*?<button[^>]*>(?P<label>.*?)<span',
    re.S,
)


def switch_form(client) -> dict[str, str]:
    html = client.get(reverse("cart")).content.decode()
    forms = [match.groupdict() for match in FORM.finditer(html)]
    assert len(forms) == 1, forms
    return forms[0]


def sold_out_line(client, market, quantity: int = 1) -> CartLine:
    offer = market.cheap_offers[0]
    add_to_cart(client, offer, quantity)
    Offer.objects.filter(pk=offer.pk).update(stock=0)
    return CartLine.objects.get(offer=offer)


def test_the_button_names_the_cheapest_delivered_other_seller(client, market):
    line = sold_out_line(client, market)
    form = switch_form(client)
    # 23.00 + 5.99 at the bundle shop beats 25.00 + 4.99 at the dear shop.
    assert form["label"] == "Buy from Bundle Shop for €23.00"
    assert int(form["offer"]) == market.bundle_offers[0].pk
    assert form["action"] == reverse("cart_line_switch", args=[line.pk])


def test_pressing_it_switches_the_line_and_keeps_its_quantity(client, market):
    line = sold_out_line(client, market, quantity=2)
    form = switch_form(client)
    assert form["label"] == "Buy from Bundle Shop for €23.00 each"
    response = client.post(form["action"], {"offer": form["offer"]})
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('cart')}#line-{line.pk}"
    line.refresh_from_db()
    assert line.offer_id == market.bundle_offers[0].pk
    assert (line.quantity, line.unit_price_snapshot) == (2, 2300)
    html = client.get(response["Location"]).content.decode()
    assert "Now buying 2 from Bundle Shop at €23.00 each." in html
    assert 'data-testid="line-problem"' not in html
    assert "cart-line__switch" not in html


def test_the_alternative_follows_the_destination(client, market):
    """In Berlin the cheap shop's zone rate (1.99) makes it the cheapest delivered, so when the
    bundle shop's line sells out the button names the cheap shop, not the dear one."""
    client.post(reverse("cart_destination"), {"postal_code": "10115"})
    offer = market.bundle_offers[1]
    add_to_cart(client, offer)
    Offer.objects.filter(pk=offer.pk).update(stock=0)
    form = switch_form(client)
    assert form["label"] == "Buy from Cheap Shop for €22.00"
    client.post(form["action"], {"offer": form["offer"]})
    assert CartLine.objects.get(product=offer.product).offer_id == market.cheap_offers[1].pk


def test_a_seller_that_sold_out_meanwhile_is_refused(client, market):
    line = sold_out_line(client, market)
    form = switch_form(client)
    Offer.objects.filter(pk=form["offer"]).update(stock=0)
    response = client.post(form["action"], {"offer": form["offer"]})
    assert response.status_code == 409
    html = response.content.decode()
    assert 'data-testid="switch-error"' in html
    assert "Only 0 in stock at Bundle Shop" in html
    line.refresh_from_db()
    assert line.offer_id == market.cheap_offers[0].pk
    # The page offers the next seller that can still supply the line.
    assert "Buy from Dear Shop for €25.00" in html


def test_an_offer_of_another_product_is_refused(client, market):
    line = sold_out_line(client, market)
    response = client.post(
        reverse("cart_line_switch", args=[line.pk]), {"offer": market.bundle_offers[1].pk}
    )
    assert response.status_code == 400
    line.refresh_from_db()
    assert line.offer_id == market.cheap_offers[0].pk


def test_an_unknown_offer_is_a_404_page_with_the_cart(client, market):
    line = sold_out_line(client, market)
    for value in ["", "999999", "x", "²", "-1"]:
        response = client.post(reverse("cart_line_switch", args=[line.pk]), {"offer": value})
        assert response.status_code == 404
        assert "That seller&#x27;s offer is gone." in response.content.decode()


def test_someone_elses_line_is_a_404(client, market):
    line = sold_out_line(client, market)
    other = client.__class__()
    add_to_cart(other, market.dear_offers[2])
    response = other.post(
        reverse("cart_line_switch", args=[line.pk]), {"offer": market.bundle_offers[0].pk}
    )
    assert response.status_code == 404
    line.refresh_from_db()
    assert line.offer_id == market.cheap_offers[0].pk


def test_without_a_cart_it_is_a_404_and_get_is_refused(client, market):
    url = reverse("cart_line_switch", args=[1])
    assert client.post(url, {"offer": market.bundle_offers[0].pk}).status_code == 404
    assert client.get(url).status_code == 405
