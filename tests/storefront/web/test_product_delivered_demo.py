"""Over the demo catalog: on every product page the offer marked cheapest adds least to the
shopper's cart, delivered to its postal code, as the cart itself prices it after the add
(``cart_line_add`` then the cart's pricing summary); "Add cheapest" adds that offer."""

import io
import re

import pytest
from django.core.management import call_command
from django.db import transaction
from django.urls import reverse

from storefront.carts.pricing_summary import cart_pricing_summary
from storefront.carts.services import cart_line_add
from storefront.errors import DomainError
from storefront.models import Cart, CartLine, Offer, Product

pytestmark = pytest.mark.django_db

SMALL = ["--seed", "11", "--merchants", "12", "--products", "40"]
BEST = re.compile(r'<li class="offer offer--best[^"]*"[^>]*data-offer-id="(\d+)"')


@pytest.fixture
def demo(db):
    call_command("seed_demo", *SMALL, stdout=io.StringIO(), stderr=io.StringIO())


class _Rollback(Exception):
    pass


def increments(cart: Cart, product: Product) -> dict[int, int]:
    """What adding one unit of each offer the cart can take adds to its total, measured on
    the cart itself (each add rolled back)."""
    before = cart_pricing_summary(cart=cart).total
    found = {}
    for offer in Offer.objects.filter(product=product).select_related("merchant"):
        try:
            with transaction.atomic():
                cart_line_add(cart=cart, offer=offer, quantity=1)
                found[offer.pk] = cart_pricing_summary(cart=Cart.objects.get(pk=cart.pk)).total
                raise _Rollback
        except (_Rollback, DomainError):
            pass
    return {offer_id: total - before for offer_id, total in found.items()}


def marked_cheapest(client, product: Product) -> int | None:
    html = client.get(reverse("product", args=[product.slug])).content.decode()
    found = BEST.findall(html)
    assert len(found) <= 1
    return int(found[0]) if found else None


def check_every_product(client, products) -> int:
    cart = Cart.objects.get(session_key=client.session.session_key)
    checked = 0
    for product in products:
        costs = increments(cart, product)
        marked = marked_cheapest(client, product)
        if not costs:
            assert marked is None, product.name
            continue
        assert marked is not None, product.name
        assert costs[marked] == min(costs.values()), (product.name, costs, marked)
        # "Add cheapest" adds the marked offer; the cart is put back as it was after.
        held = CartLine.objects.filter(cart=cart, product=product).values().first()
        client.post(reverse("cart_add"), {"product": product.pk, "quantity": 1})
        line = CartLine.objects.get(cart=cart, product=product)
        assert costs[line.offer_id] == costs[marked], product.name
        if held is None:
            line.delete()
        else:
            CartLine.objects.filter(pk=line.pk).update(
                offer_id=held["offer_id"],
                quantity=held["quantity"],
                unit_price_snapshot=held["unit_price_snapshot"],
            )
        checked += 1
    return checked


@pytest.mark.slow
@pytest.mark.parametrize("postal_code", ["", "10115", "18055", "80331"])
def test_cheapest_is_cheapest_delivered_for_an_empty_cart(client, demo, postal_code):
    client.post(reverse("cart_destination"), {"postal_code": postal_code})
    html = client.get(reverse("product", args=[Product.objects.first().slug])).content.decode()
    if postal_code:
        assert f"with shipping to {postal_code}" in html
    else:
        assert "with each merchant&#x27;s standard shipping" in html
    assert check_every_product(client, Product.objects.order_by("pk")) > 30


@pytest.mark.slow
@pytest.mark.parametrize("postal_code", ["10115", "25980"])
def test_cheapest_counts_what_the_cart_already_buys(client, demo, postal_code):
    """A cart that already buys from a few merchants (one near its free-shipping threshold
    when the demo has one): their parcels, thresholds and discounts count."""
    client.post(reverse("cart_destination"), {"postal_code": postal_code})
    products = list(Product.objects.order_by("pk"))
    held = products[:4]
    for index, product in enumerate(held):
        offer = (
            Offer.objects.filter(product=product, active=True, merchant__active=True, stock=None)
            .order_by("-merchant__free_over", "merchant_id")
            .first()
        )
        if offer is not None:
            client.post(reverse("cart_add"), {"offer": offer.pk, "quantity": 1 + index % 2})
    cart = Cart.objects.get(session_key=client.session.session_key)
    assert cart.lines.exists()
    # A product already in the cart is ranked too (its line would grow and may move).
    assert check_every_product(client, [*held[:2], *products[4:]]) > 30
