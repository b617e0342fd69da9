"""The pending Improve panel carries its run's deadline, after which the page stops polling
and offers "Try again"; trying again replaces the overdue run (issue 15)."""

from datetime import timedelta

import pytest
from django.test import override_settings
from django.urls import reverse

from smartcart.models import OptimizationRun
from storefront.models import Cart
from tests.storefront.web.conftest import add_to_cart

pytestmark = pytest.mark.django_db


@pytest.fixture
def overdue_run(client, market) -> OptimizationRun:
    for offer in market.dear_offers:
        add_to_cart(client, offer)
    cart = Cart.objects.get(session_key=client.session.session_key)
    return OptimizationRun.objects.create(
        cart=cart,
        cart_version=cart.version,
        status=OptimizationRun.Status.QUEUED,
        budget_ms=100,
    )


@override_settings(SMARTCART_QUEUED_MAX_S=30)
def test_the_pending_panel_has_a_deadline_and_a_hidden_try_again(client, overdue_run):
    page = client.get(reverse("cart")).content.decode()
    # The pickup bound (SMARTCART_QUEUED_MAX_S, 30 s) after its creation, read from the run.
    deadline = overdue_run.created_at + timedelta(seconds=30)
    assert 'data-poll-deadline="' in page
    value = int(page.split('data-poll-deadline="')[1].split('"')[0])
    assert value == int(deadline.timestamp() * 1000)
    assert "data-poll-timeout hidden" in page
    assert f'name="replace" value="{overdue_run.pk}"' in page


def test_try_again_replaces_the_overdue_run(client, overdue_run):
    response = client.post(reverse("cart_improve"), {"replace": overdue_run.pk})
    assert response.status_code == 302
    overdue_run.refresh_from_db()
    assert overdue_run.dismissed_at is not None
    newest = OptimizationRun.objects.latest("created_at", "id")
    assert newest.pk != overdue_run.pk
    assert newest.status == OptimizationRun.Status.DONE
