"""smartcart's answer to storefront's cart optimizer hook."""

from datetime import timedelta

import pytest
from django.db.models import F
from django.test import override_settings
from django.utils import timezone

from smartcart import services
from smartcart.models import OptimizationRun
from smartcart.optimizer import cart_cheaper_assignment
from storefront.carts.optimizer import cart_cheaper_assignment_find
from storefront.errors import ValidationFailed
from storefront.models import Cart, Offer
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


def test_a_reload_reuses_the_finished_run_of_the_same_cart_version(cart):
    first = cart_cheaper_assignment(cart=cart, budget_ms=500)
    again = cart_cheaper_assignment(cart=cart, budget_ms=500)
    assert first == again
    assert OptimizationRun.objects.filter(cart=cart).count() == 1


def test_an_improve_run_of_the_same_version_is_reused(cart):
    run = services.optimization_run_solve_now(cart=cart, budget_ms=500)
    found = cart_cheaper_assignment(cart=cart, budget_ms=500)
    assert found is not None and found.run_id == run.pk


def test_a_new_cart_version_solves_again(cart):
    first = cart_cheaper_assignment(cart=cart, budget_ms=500)
    cart.lines.update(quantity=2)
    Cart.objects.filter(pk=cart.pk).update(version=F("version") + 1)
    cart.refresh_from_db()
    second = cart_cheaper_assignment(cart=cart, budget_ms=500)
    assert first is not None and second is not None and second.run_id != first.run_id
    assert second.current_total != first.current_total


def test_a_price_change_without_a_new_version_solves_again(cart):
    first = cart_cheaper_assignment(cart=cart, budget_ms=500)
    line = cart.lines.select_related("offer").first()
    Offer.objects.filter(pk=line.offer_id).update(unit_price=line.offer.unit_price + 100)
    second = cart_cheaper_assignment(cart=cart, budget_ms=500)
    assert first is not None and second is not None and second.run_id != first.run_id
    assert second.current_total == first.current_total + 100


def test_an_old_run_is_not_reused(cart):
    first = cart_cheaper_assignment(cart=cart, budget_ms=500)
    OptimizationRun.objects.filter(pk=first.run_id).update(
        finished_at=timezone.now() - timedelta(seconds=601)
    )
    with override_settings(SMARTCART_CHECKOUT_REUSE_S=600):
        second = cart_cheaper_assignment(cart=cart, budget_ms=500)
    assert second is not None and second.run_id != first.run_id


def test_a_dismissed_suggestion_is_not_offered_again_for_that_version(cart):
    first = cart_cheaper_assignment(cart=cart, budget_ms=500)
    services.optimization_run_dismiss(run=OptimizationRun.objects.get(pk=first.run_id))
    assert cart_cheaper_assignment(cart=cart, budget_ms=500) is None
    assert OptimizationRun.objects.filter(cart=cart).count() == 1
    Cart.objects.filter(pk=cart.pk).update(version=F("version") + 1)
    cart.refresh_from_db()
    assert cart_cheaper_assignment(cart=cart, budget_ms=500) is not None


def test_a_run_priced_before_a_price_change_builds_the_cart_once(cart, monkeypatch):
    """The review's last look for a cheaper cart reads the cart's problem once, also when the
    run it would reuse no longer holds: the problem that shows it is the one solved."""
    import smartcart.optimizer
    import smartcart.selectors

    first = cart_cheaper_assignment(cart=cart, budget_ms=500)
    line = cart.lines.select_related("offer").first()
    Offer.objects.filter(pk=line.offer_id).update(unit_price=line.offer.unit_price + 100)
    builds = []
    real_build = smartcart.selectors.cart_problem_build

    def counted(**kwargs):
        builds.append(kwargs["cart"].pk)
        return real_build(**kwargs)

    for module in (
        smartcart.selectors.problems,
        services.create,
        services.execute,
        services.apply,
        smartcart.optimizer,
    ):
        monkeypatch.setattr(module, "cart_problem_build", counted, raising=False)
    second = cart_cheaper_assignment(cart=cart, budget_ms=500)
    assert builds == [cart.pk]
    assert first is not None and second is not None and second.run_id != first.run_id
    assert second.current_total == first.current_total + 100
    run = OptimizationRun.objects.get(pk=second.run_id)
    assert run.build_ms is not None and run.build_ms >= 0 and run.elapsed_ms >= run.build_ms
