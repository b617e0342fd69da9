"""A line sold out at its merchant: Improve cart finds another merchant that has it instead
of refusing, and applying the suggestion leaves a cart that can be bought."""

import pytest
from django.urls import reverse

from smartcart.apis import OptimizationRunSerializer
from smartcart.models import OptimizationRun
from smartcart.selectors import cart_problem_build
from smartcart.services import optimization_run_create, optimization_run_execute
from storefront.carts.pricing_summary import cart_pricing_summary
from storefront.errors import Conflict
from storefront.models import Cart, CartLine, Offer
from tests.smartcart.web.test_improve import latest_run, start
from tests.storefront.web.conftest import add_to_cart

pytestmark = pytest.mark.django_db


@pytest.fixture
def sold_out_cart(client, market) -> Cart:
    """Voltra Widget at the cheap shop, which then sells its last one elsewhere; Nexon Gizmo
    at the dear shop."""
    add_to_cart(client, market.cheap_offers[0])
    add_to_cart(client, market.dear_offers[1])
    Offer.objects.filter(pk=market.cheap_offers[0].pk).update(stock=0)
    cart = Cart.objects.get(session_key=client.session.session_key)
    assert [line.line.product.name for line in cart_pricing_summary(cart=cart).unavailable] == [
        "Voltra Widget"
    ]
    return cart


def test_improve_moves_a_sold_out_line_to_a_merchant_that_has_it(client, sold_out_cart, market):
    response = start(client)
    assert response.status_code == 302
    run = latest_run()
    assert run.status == "done"
    line = CartLine.objects.get(cart=sold_out_cart, product=market.products[0])
    assert run.suggestion["sold_out_line_ids"] == [line.pk]
    moved = next(row for row in run.suggestion["lines"] if row["line_id"] == line.pk)
    assert moved["changed"] and moved["new_merchant_name"] != "Cheap Shop"

    html = client.get(reverse("cart")).content.decode()
    assert 'data-state="replace"' in html
    assert "Voltra Widget: sold out, found at another merchant" in html
    assert f"Cheap Shop has run out of Voltra Widget; {moved['new_merchant_name']} has it" in html
    assert "sold out at Cheap Shop, " in html
    assert "Apply: buy everything for" in html

    applied = client.post(reverse("cart_improve_apply", args=[run.pk]))
    assert applied.status_code == 302
    summary = cart_pricing_summary(cart=Cart.objects.get(pk=sold_out_cart.pk))
    assert not summary.unavailable
    assert summary.total == run.suggested_total
    assert not CartLine.objects.filter(offer__merchant=market.cheap).exists()
    page = client.get(reverse("cart")).content.decode()
    assert "Suggestion applied" in page and 'data-testid="checkout"' in page


def test_the_saving_beyond_the_sold_out_line_is_told(client, market):
    """The optimum moves more than the sold-out line: what it saves is measured against the
    cart with only that line moved, never against a cart that cannot be bought."""
    for offer in market.dear_offers:
        add_to_cart(client, offer)
    Offer.objects.filter(pk=market.dear_offers[0].pk).update(stock=0)
    start(client)
    run = latest_run()
    assert run.suggested_total == 6555  # all three at the bundle shop, 5% off, free shipping
    assert run.savings > 0 and run.current_total == run.suggested_total + run.savings
    html = client.get(reverse("cart")).content.decode()
    assert "less than moving only the sold-out line" in html


def test_a_line_no_other_merchant_has_is_still_refused(client, sold_out_cart, market):
    Offer.objects.filter(product=market.products[0]).exclude(pk=market.cheap_offers[0].pk).update(
        active=False
    )
    response = start(client)
    assert response.status_code == 409
    assert "no other merchant has 1 in stock" in response.content.decode()
    assert not OptimizationRun.objects.exists()


def test_other_readers_still_refuse_a_sold_out_line(sold_out_cart):
    """The checkout's last look, the live figures and apply's own check price the cart as it
    stands: a line that cannot be bought there is refused as before."""
    with pytest.raises(Conflict) as refused:
        cart_problem_build(cart=sold_out_cart)
    assert refused.value.code == "line_unavailable"


def test_a_queued_run_moves_a_sold_out_line_too(sold_out_cart, market):
    """The worker's path reads the cart again and keeps a sold-out line for another seller."""
    run = OptimizationRun.objects.create(
        cart=sold_out_cart,
        cart_version=Cart.objects.get(pk=sold_out_cart.pk).version,
        route=OptimizationRun.Route.CPU,
        budget_ms=2000,
    )
    run = optimization_run_execute(run_id=run.pk)
    assert run.status == "done", run.error
    line = CartLine.objects.get(cart=sold_out_cart, product=market.products[0])
    assert run.suggestion["sold_out_line_ids"] == [line.pk]


def test_the_api_names_the_sold_out_lines(sold_out_cart, market):
    run = optimization_run_create(cart=sold_out_cart)
    data = OptimizationRunSerializer(run).data
    line = CartLine.objects.get(cart=sold_out_cart, product=market.products[0])
    assert data["suggestion"]["sold_out_line_ids"] == [line.pk]
