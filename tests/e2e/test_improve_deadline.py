"""Issue 15, "worker killed mid-run", the page's side: a run nobody finishes is polled until
its deadline, then the page stops, says so and offers "Try again", which replaces the run."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from smartcart.models import OptimizationRun
from storefront.models import Cart
from tests.e2e.helpers import add_offer_through_search, pick_improvable_offers

pytestmark = pytest.mark.e2e


def test_polling_stops_at_the_deadline_and_try_again_replaces_the_run(
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
    try_again = page.get_by_role("button", name="Try again")
    try_again.wait_for(state="visible", timeout=15_000)
    assert page.get_by_role("button", name="Improve cart").is_enabled()
    page.locator("#improve-region").screenshot(path=artifacts / "e2e-improve-deadline.png")

    try_again.click()
    page.locator('#improve[data-state="saving"]').wait_for()
    stuck.refresh_from_db()
    assert stuck.dismissed_at is not None
    assert OptimizationRun.objects.filter(cart=cart).exclude(pk=stuck.pk).get().status == "done"
