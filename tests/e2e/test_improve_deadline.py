"""A run no worker starts, the page's side: it is polled until its pickup deadline, when the
poll fails it with the reason; the page stops, says why and offers "Try again", which starts
a new run."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from smartcart.models import OptimizationRun
from storefront.models import Cart
from tests.e2e.helpers import add_offer_through_search, pick_improvable_offers

pytestmark = pytest.mark.e2e


def test_polling_stops_at_the_deadline_explains_and_try_again_starts_a_new_run(
    page, demo_catalog, artifacts
):
    for offer in pick_improvable_offers():
        add_offer_through_search(page, offer)
    cart = Cart.objects.get(owner__isnull=True)
    stuck = OptimizationRun.objects.create(
        cart=cart,
        cart_version=cart.version,
        status=OptimizationRun.Status.QUEUED,
        # A queued run's lease is its deadline to be picked up.
        lease_expires_at=timezone.now() + timedelta(seconds=3),
    )
    page.goto(reverse("cart"))
    page.locator('#improve[data-state="pending"]').wait_for()
    page.locator('#improve[data-state="failed"]').wait_for(timeout=15_000)
    region = page.locator("#improve-region")
    assert "No optimiser started on your cart" in region.inner_text()
    try_again = page.get_by_role("button", name="Try again")
    assert try_again.is_visible()
    assert page.get_by_role("button", name="Improve cart").is_enabled()
    region.screenshot(path=artifacts / "e2e-improve-deadline.png")

    try_again.click()
    page.locator('#improve[data-state="saving"]').wait_for()
    stuck.refresh_from_db()
    assert stuck.status == "failed" and "No optimiser started" in stuck.error
    assert OptimizationRun.objects.filter(cart=cart).exclude(pk=stuck.pk).get().status == "done"
