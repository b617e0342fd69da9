"""What the shopper sees: the notice on the cart page, the marker on the cart badge, the
same on the API's cart resource."""

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from smartcart.models import OptimizationRun
from tests.smartcart.pricewatch.test_services import two_shops

pytestmark = pytest.mark.django_db


def test_the_notice_and_the_badge_marker_lead_to_the_panel(client, change_prices):
    cart, _, offer_there = two_shops()
    client.force_login(cart.owner)
    catalog = client.get(reverse("catalog")).content.decode()
    assert "price-watch-marker" not in catalog
    change_prices((offer_there, 700))
    catalog = client.get(reverse("catalog")).content.decode()
    assert 'data-testid="price-watch-marker"' in catalog
    assert "Prices changed: your cart can now cost €3.00 less" in catalog
    assert 'href="/cart/#improve"' in catalog
    page = client.get(reverse("cart")).content.decode()
    assert "Prices changed: your cart can now cost €3.00 less." in page
    assert "You can save €3.00" in page  # the usual panel, with Apply
    run = OptimizationRun.objects.get(source="price_watch")
    assert reverse("cart_improve_apply", args=[run.pk]) in page
    client.post(reverse("cart_improve_apply", args=[run.pk]))
    cart.refresh_from_db()
    assert cart.lines.get().offer_id == offer_there.pk
    assert "price-watch-notice" not in client.get(reverse("cart")).content.decode()


def test_dismissing_hides_notice_and_marker(client, change_prices):
    cart, _, offer_there = two_shops()
    client.force_login(cart.owner)
    change_prices((offer_there, 700))
    run = OptimizationRun.objects.get(source="price_watch")
    client.post(reverse("cart_improve_dismiss", args=[run.pk]))
    page = client.get(reverse("cart")).content.decode()
    assert "price-watch-notice" not in page and "price-watch-marker" not in page


def test_a_price_rise_is_said_on_the_cart_page(client, change_prices):
    cart, offer_here, _ = two_shops(there_price=2000)
    client.force_login(cart.owner)
    change_prices((offer_here, 1500))
    page = client.get(reverse("cart")).content.decode()
    assert "Prices changed: your cart now costs €5.00 more" in page
    assert "price-watch-marker" not in page  # the marker is for savings


def test_the_api_cart_carries_the_notice(change_prices):
    cart, _, offer_there = two_shops()
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=cart.owner).key}")
    assert api.get("/api/v1/cart/").json()["price_watch"] is None
    change_prices((offer_there, 700))
    notice = api.get("/api/v1/cart/").json()["price_watch"]
    run = OptimizationRun.objects.get(source="price_watch")
    assert notice["optimization_id"] == run.pk
    assert (notice["savings"], notice["price_increase"], notice["current_total"]) == (300, 0, 1300)
    applied = api.post(f"/api/v1/cart/optimizations/{run.pk}/apply/")
    assert applied.status_code == 200
    assert api.get("/api/v1/cart/").json()["price_watch"] is None
