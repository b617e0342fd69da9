import pytest

from smartcart.checkout import checkout_cart_optimize
from smartcart.models import OptimizationRun
from smartcart.services import optimization_run_dismiss
from storefront.orders.optimizer import cart_cheaper_find
from storefront.services import cart_line_add
from tests.factories import CartFactory
from tests.storefront.web.conftest import market  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def dear_cart(market):  # noqa: F811
    cart = CartFactory()
    for offer in market.dear_offers:
        cart_line_add(cart=cart, offer=offer, quantity=1)
    cart.refresh_from_db()
    return cart


def test_a_cheaper_cart_is_offered_as_an_appliable_run(dear_cart):
    found = checkout_cart_optimize(cart=dear_cart, budget_ms=300)
    run = OptimizationRun.objects.get()
    assert (found.run_id, found.savings, found.suggested_total) == (
        run.pk,
        run.savings,
        run.suggested_total,
    )
    assert found.savings > 0 and found.changed_lines == 3
    assert dear_cart.lines.filter(offer__merchant__name="Dear Shop").count() == 3  # untouched


def test_the_finished_run_of_this_cart_version_is_reused(dear_cart):
    first = checkout_cart_optimize(cart=dear_cart, budget_ms=300)
    again = checkout_cart_optimize(cart=dear_cart, budget_ms=300)
    assert again.run_id == first.run_id
    assert OptimizationRun.objects.count() == 1


def test_a_dismissed_suggestion_is_not_offered_again(dear_cart):
    found = checkout_cart_optimize(cart=dear_cart, budget_ms=300)
    optimization_run_dismiss(run=OptimizationRun.objects.get(pk=found.run_id))
    assert checkout_cart_optimize(cart=dear_cart, budget_ms=300) is None


def test_an_optimal_cart_gets_nothing(market):  # noqa: F811
    cart = CartFactory()
    cart_line_add(cart=cart, offer=market.bundle_offers[0], quantity=1)
    cart.refresh_from_db()
    assert checkout_cart_optimize(cart=cart, budget_ms=300) is None


def test_the_storefront_hook_finds_it_through_the_setting(dear_cart, settings):
    assert cart_cheaper_find(cart=dear_cart).savings > 0
    settings.STOREFRONT_CART_OPTIMIZER = ""
    assert cart_cheaper_find(cart=dear_cart) is None
