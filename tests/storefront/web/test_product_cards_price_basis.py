"""Catalog and search cards show each product's cheapest delivered price for the shopper's
postal code and say which one they assume; their "Add cheapest" adds the cheapest delivered
offer for that postal code and the shopper's cart."""

import pytest
from django.urls import reverse

from storefront.models import CartLine

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("query", [{}, {"q": "widget"}])
def test_cards_say_their_price_is_delivered_and_which_postal_code_it_assumes(client, market, query):
    html = client.get(reverse("catalog"), query).content.decode()
    assert "Prices are delivered, with each merchant&#x27;s standard shipping" in html
    # The bundle shop's 23.00 + 5.99 beats the cheap shop's 22.00 + 8.99.
    assert 'From <span class="price">€28.99</span> delivered at Bundle Shop' in html
    client.post(reverse("cart_destination"), {"postal_code": "10115"})
    html = client.get(reverse("catalog"), query).content.decode()
    assert "Prices are delivered, with shipping to 10115</summary>" in html
    # In Berlin the cheap shop's zone rate: 22.00 + 1.99.
    assert 'From <span class="price">€23.99</span> delivered at Cheap Shop' in html
    assert "€22.00 + €1.99 shipping" in html


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
