"""The cart pricing benchmark runs and checks its own parity; timings are its output, never
asserted here."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from storefront.models import Cart
from tests.factories import CartLineFactory, OfferFactory, ShippingZoneFactory

pytestmark = pytest.mark.django_db


def test_bench_creates_the_missing_carts_and_finds_every_path_equal():
    offers = OfferFactory.create_batch(6)
    ShippingZoneFactory(merchant=offers[0].merchant, postal_prefix="", base_fee=5)
    CartLineFactory(offer=offers[1])
    out = StringIO()
    call_command("bench_cart_pricing", carts=8, repeat=1, create_missing=True, stdout=out)
    report = out.getvalue()
    assert "8 carts" in report
    rows = {line[:24].strip(): line[24:].split() for line in report.splitlines()}
    # Queries, then queries per cart: one batch query; one a cart; three a cart in SQL.
    assert rows["batch, zone index"][3:] == ["1", "0.12"]
    assert rows["per cart, zone index"][3:] == ["8", "1.00"]
    assert rows["per cart, SQL zones"][3:] == ["24", "3.00"]
    assert "all 8 carts priced the same on every path, to the cent" in report
    assert Cart.objects.filter(session_key__startswith="bench-cart-pricing-").count() == 7


def test_bench_refuses_to_write_carts_unless_asked():
    CartLineFactory()
    with pytest.raises(CommandError, match="Only 1 carts have lines"):
        call_command("bench_cart_pricing", carts=3, stdout=StringIO())
