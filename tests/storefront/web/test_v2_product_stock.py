"""The product page quotes what one cart line can have: for a merchant with warehouses, the most
one of them that ships to the shopper holds, never the offer's stock (their sum)."""

import re

import pytest
from django.urls import reverse

from storefront.fulfillment.stock import warehouse_stock_set
from tests.storefront.carts.v2_market import v2_market

pytestmark = pytest.mark.django_db


def _row(html: str, offer_id: int) -> str:
    found = re.search(rf'data-offer-id="{offer_id}">(.*?)</li>', html, re.S)
    assert found is not None
    return re.sub(r"\s+", " ", found.group(1))


def test_the_offer_row_says_one_warehouse_and_caps_the_quantity(client):
    market = v2_market()
    warehouse_stock_set(offer=market.kettle, warehouse=market.hamburg, stock=2)
    warehouse_stock_set(offer=market.kettle, warehouse=market.munich, stock=2)
    market.kettle.refresh_from_db()
    assert market.kettle.stock == 4
    html = client.get(reverse("product", args=[market.kettle.product.slug])).content.decode()
    acme = _row(html, market.kettle.pk)
    assert "Only 2 can ship from one warehouse" in acme and "Only 4" not in acme
    assert 'max="2"' in acme
    assert "one warehouse" not in _row(html, market.kettle_bolt.pk)


def test_one_warehouse_holding_it_all_reads_as_before(client):
    market = v2_market()
    warehouse_stock_set(offer=market.monitor, warehouse=market.hamburg, stock=2)
    html = client.get(reverse("product", args=[market.monitor.product.slug])).content.decode()
    row = _row(html, market.monitor.pk)
    assert "Only 2 left" in row and "one warehouse" not in row
