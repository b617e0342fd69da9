import pytest
from django.urls import reverse

from tests.factories import MerchantFactory, OfferFactory, ProductFactory

pytestmark = pytest.mark.django_db


def product_url(product):
    return reverse("product", args=[product.slug])


def test_every_active_offer_with_merchant_price_stock_and_shipping(client, market):
    product = market.products[0]
    OfferFactory(
        product=product, merchant=MerchantFactory(name="Gone Shop"), unit_price=100, active=False
    )
    response = client.get(product_url(product))
    html = response.content.decode()
    assert response.status_code == 200
    # Cheapest delivered first: 23.00 + 5.99, 25.00 + 4.99, 22.00 + 8.99.
    assert [row.offer.merchant.name for row in response.context["rows"]] == [
        "Bundle Shop",
        "Dear Shop",
        "Cheap Shop",
    ]
    assert "Gone Shop" not in html
    assert "€22.00" in html and "€23.00" in html and "€25.00" in html
    assert "Only 3 left" in html
    # Each merchant's rule, with the shop currency.
    assert "€5.99 shipping, free from €50.00" in html
    assert "5% off from 3 units" in html
    assert "€8.99 shipping, +€3.00 per extra unit" in html
    assert "Add cheapest to cart" in html


def test_shipping_follows_the_shoppers_destination(client, market):
    client.post(reverse("cart_destination"), {"postal_code": "10115"})
    html = client.get(product_url(market.products[0])).content.decode()
    assert "€1.99 shipping, +€0.50 per extra unit" in html
    assert "Zone rate for 10115" in html
    assert "Shipping below is for 10115." in html


def test_unknown_product_is_404(client, db):
    response = client.get(reverse("product", args=["no-such-thing"]))
    assert response.status_code == 404
    assert "find that page" in response.content.decode()


def test_product_without_offers_says_so(client, db):
    product = ProductFactory(name="Lonely")
    html = client.get(product_url(product)).content.decode()
    assert "No offers right now" in html
    assert "Currently unavailable" in html


def test_sold_out_offer_is_shown_but_cannot_be_added(client, market):
    sold_out = market.cheap_offers[1]
    sold_out.stock = 0
    sold_out.save()
    html = client.get(product_url(market.products[1])).content.decode()
    assert "Sold out" in html
    assert f'id="qty-{sold_out.pk}"' in html
    row = html.split(f'data-offer-id="{sold_out.pk}"')[1].split("</li>")[0]
    assert "disabled" in row


def test_product_page_marks_what_is_in_the_cart(client, market):
    client.post(reverse("cart_add"), {"offer": market.dear_offers[0].pk, "quantity": 2})
    html = client.get(product_url(market.products[0])).content.decode()
    assert "In your cart: 2 from Dear Shop" in html
