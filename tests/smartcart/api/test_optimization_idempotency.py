"""``Idempotency-Key`` on ``POST cart/optimizations/``: a retry starts no second run."""

import pytest

from smartcart.models import OptimizationRun
from tests.carts import cart_with_choices

pytestmark = pytest.mark.django_db


@pytest.mark.slow
def test_a_retried_optimization_post_starts_one_run(alice_api, shopper):
    cart_with_choices(owner=shopper)
    first = alice_api.post(
        "/api/v1/cart/optimizations/", {}, format="json", HTTP_IDEMPOTENCY_KEY="o"
    )
    again = alice_api.post(
        "/api/v1/cart/optimizations/", {}, format="json", HTTP_IDEMPOTENCY_KEY="o"
    )
    assert first.status_code == again.status_code
    assert again.json()["id"] == first.json()["id"]
    assert again["Idempotent-Replayed"] == "true"
    assert OptimizationRun.objects.count() == 1
