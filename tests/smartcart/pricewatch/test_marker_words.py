"""The cart badge's price-watch marker says the saving in words anyone can see, not only a
coloured dot with hidden text."""

import re

import pytest
from django.urls import reverse

from tests.smartcart.pricewatch.test_services import two_shops

pytestmark = pytest.mark.django_db

MARKER = re.compile(
    r'<span class="badge-marker" data-testid="price-watch-marker"[^>]*>(.*?)</a>', re.S
)


def _visible_text(html: str) -> str:
    html = re.sub(r'<span class="visually-hidden">.*?</span>', "", html, flags=re.S)
    return re.sub(r"<[^>]+>", "", html).strip()


def test_the_marker_shows_the_saving_in_words(client, change_prices):
    cart, _, offer_there = two_shops()
    client.force_login(cart.owner)
    change_prices((offer_there, 700))
    catalog = client.get(reverse("catalog")).content.decode()
    marker = MARKER.search(catalog)
    assert marker, "no price-watch marker on the cart badge"
    assert _visible_text(marker.group(1)) == "Save €3.00"
