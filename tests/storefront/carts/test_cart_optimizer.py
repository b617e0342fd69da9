"""The cart optimizer hook: storefront calls whatever the setting names, and nothing without it."""

import pytest
from django.test import override_settings

from storefront.carts.optimizer import CheaperAssignment, cart_cheaper_assignment_find
from tests.factories import CartFactory

pytestmark = pytest.mark.django_db

calls: list[dict] = []


def fake_optimizer(*, cart, budget_ms):
    calls.append({"cart": cart, "budget_ms": budget_ms})
    return CheaperAssignment(run_id=7, current_total=1000, cheaper_total=900)


@override_settings(STOREFRONT_CART_OPTIMIZER="")
def test_none_when_no_optimizer_is_configured():
    assert cart_cheaper_assignment_find(cart=CartFactory(), budget_ms=100) is None


@override_settings(STOREFRONT_CART_OPTIMIZER=f"{__name__}.fake_optimizer")
def test_calls_the_configured_optimizer_with_keywords():
    calls.clear()
    cart = CartFactory()
    found = cart_cheaper_assignment_find(cart=cart, budget_ms=250)
    assert found == CheaperAssignment(run_id=7, current_total=1000, cheaper_total=900)
    assert found.savings == 100
    assert calls == [{"cart": cart, "budget_ms": 250}]
