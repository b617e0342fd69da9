"""smartcart's answer to storefront's cart optimizer hook."""

import pytest
from django.test import override_settings

from smartcart import services
from smartcart.models import OptimizationRun
from smartcart.optimizer import cart_cheaper_assignment
from storefront.cart_optimizer import cart_cheaper_assignment_find
from storefront.errors import ValidationFailed
from tests.factories import CartFactory

pytestmark = pytest.mark.django_db


def test_finds_the_cheaper_assignment_as_an_appliable_run(cart):
    found = cart_cheaper_assignment(cart=cart, budget_ms=500)
    assert found is not None
    assert found.current_total == 8199  # the lines at Dear Shop
    assert found.cheaper_total < found.current_total
    assert found.savings == found.current_total - found.cheaper_total
    run = OptimizationRun.objects.get(pk=found.run_id)
    assert (run.status, run.route, run.suggested_total) == ("done", "inline", found.cheaper_total)
    services.optimization_run_apply(run=run)
    run.refresh_from_db()
    assert run.cart_id == cart.pk and run.applied_at is not None


@override_settings(SMARTCART_INLINE_MAX_MS=0)
def test_solves_in_the_request_even_when_routing_would_queue(cart):
    found = cart_cheaper_assignment(cart=cart, budget_ms=500)
    assert found is not None
    assert OptimizationRun.objects.get(pk=found.run_id).route == "inline"


def test_none_once_the_cart_is_the_cheapest(cart):
    first = cart_cheaper_assignment(cart=cart, budget_ms=500)
    assert first is not None
    services.optimization_run_apply(run=OptimizationRun.objects.get(pk=first.run_id))
    cart.refresh_from_db()
    assert cart_cheaper_assignment(cart=cart, budget_ms=500) is None


def test_none_for_an_empty_cart():
    assert cart_cheaper_assignment(cart=CartFactory(), budget_ms=500) is None


def test_a_bad_budget_is_the_callers_error(cart):
    with pytest.raises(ValidationFailed):
        cart_cheaper_assignment(cart=cart, budget_ms=0)


def test_storefront_reaches_it_through_the_setting(cart):
    found = cart_cheaper_assignment_find(cart=cart, budget_ms=500)
    assert found is not None
    assert OptimizationRun.objects.filter(pk=found.run_id, cart=cart).exists()
