"""The Improve cart panel on pricing contract version 2, without JavaScript: a suggestion that
joins a merchant's two parcels in one warehouse, shown with the warehouses, applied."""

import re

import pytest
from django.urls import reverse

from storefront.models import Cart, CartLine
from tests.storefront.carts.v2_market import POSTAL_CODE, v2_market

pytestmark = pytest.mark.django_db


@pytest.fixture
def cart(client):
    market = v2_market()
    client.post(reverse("cart_destination"), {"postal_code": POSTAL_CODE})
    for offer in (market.kettle, market.monitor):  # the kettle alone goes to Munich
        client.post(reverse("cart_add"), {"offer": offer.pk, "quantity": 1})
    cart = Cart.objects.get(session_key=client.session.session_key)
    cart.market = market
    return cart


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_the_panel_shows_the_warehouse_move_and_applies_it(client, cart):
    assert client.post(reverse("cart_improve")).status_code == 302
    html = client.get(reverse("cart")).content.decode()
    panel = _text(html[html.index('id="improve"') :])
    assert "You can save €3.99" in panel
    assert "Acme · Munich" in panel and "Acme · Hamburg" in panel
    assert "Ships from Hamburg · 2 items · 6.2 kg · €7.99" in panel
    run_id = int(re.search(r"/cart/improve/(\d+)/apply", html).group(1))
    applied = client.post(reverse("cart_improve_apply", args=[run_id]))
    assert applied.status_code == 302
    kettle = CartLine.objects.get(cart=cart, product=cart.market.kettle.product)
    assert kettle.warehouse_id == cart.market.hamburg.pk
    after = _text(client.get(reverse("cart")).content.decode())
    assert "Ships from Hamburg · 2 items · 6.2 kg · €7.99" in after
    assert "Ships from Munich" not in after
