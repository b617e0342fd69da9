"""Catalog and search cards show each product's lowest item price and say so; what their
"Add cheapest" adds (the cheapest delivered offer for the shopper's postal code and cart) is
stated with the postal code it assumes."""

import pytest
from django.urls import reverse

from storefront.models import CartLine

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("query", [{}, {"q": "widget"}])
def test_cards_say_their_price_is_an_item_price_and_which_postal_code_add_assumes(
    client, market, query
):
    html = client.get(reverse("catalog"), query).content.decode()
    assert "Card prices are each product's lowest item price, before shipping." in html
    assert "with each merchant&#x27;s standard shipping" in html
    client.post(reverse("cart_destination"), {"postal_code": "10115"})
    html = client.get(reverse("catalog"), query).content.decode()
    assert "costs least delivered, with shipping to 10115" in html
    assert 'Item from <span class="price">€22.00</span> at Cheap Shop, plus shipping' in html


def test_add_cheapest_from_a_card_adds_the_cheapest_delivered(client, market):
    # The card's lowest item price is the cheap shop's 22.00; with its 8.99 shipping the bundle
    # shop's 23.00 + 5.99 costs less delivered, so that is what the card's button adds. In
    # Berlin the cheap shop's zone rate (1.99) makes it the cheapest delivered.
    product = market.products[0]
    client.post(reverse("cart_add"), {"product": product.pk, "quantity": 1})
    assert CartLine.objects.get().offer == market.bundle_offers[0]
    CartLine.objects.all().delete()
    client.post(reverse("cart_destination"), {"postal_code": "10115"})
    client.post(reverse("cart_add"), {"product": product.pk, "quantity": 1})
    assert CartLine.objects.get().offer == market.cheap_offers[0]
