"""The price-watch run: which carts get which notice, idempotence, batching."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from smartcart.models import OptimizationRun, PriceWatchChange, PriceWatchRun
from smartcart.pricewatch.selectors import price_watch_notice_for_cart
from smartcart.pricewatch.services import (
    price_watch_changes_record,
    price_watch_run,
)
from smartcart.services import optimization_run_apply, optimization_run_dismiss
from storefront.carts.services import cart_line_set_quantity
from storefront.errors import Conflict
from storefront.models import Cart, Offer
from tests.factories import (
    CartFactory,
    CartLineFactory,
    MerchantFactory,
    OfferFactory,
    ProductFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


def two_shops(*, here_price=1000, there_price=1000, quantity=1):
    """One product at two merchants with the same shipping; a cart buying it ``here``."""
    here = MerchantFactory(name="Here", base_fee=300, per_extra_unit=0)
    there = MerchantFactory(name="There", base_fee=300, per_extra_unit=0)
    product = ProductFactory(name="Kettle")
    offer_here = OfferFactory(product=product, merchant=here, unit_price=here_price)
    offer_there = OfferFactory(product=product, merchant=there, unit_price=there_price)
    cart = CartFactory(owner=UserFactory())
    CartLineFactory(cart=cart, offer=offer_here, quantity=quantity)
    return cart, offer_here, offer_there


def notices(cart):
    return OptimizationRun.objects.filter(cart=cart, source=OptimizationRun.Source.PRICE_WATCH)


def test_a_price_drop_elsewhere_makes_a_saving_notice_that_applies(change_prices):
    cart, _offer_here, offer_there = two_shops()
    change_prices((offer_there, 700))
    run = PriceWatchRun.objects.get()
    assert (run.status, run.carts_checked, run.carts_improvable, run.carts_notified) == (
        "done",
        1,
        1,
        1,
    )
    notice = price_watch_notice_for_cart(cart=Cart.objects.get(pk=cart.pk))
    assert notice is not None and notice.savings == 300 and notice.price_increase == 0
    assert notice.run.status == "done" and notice.run.cart_version == cart.version
    applied = optimization_run_apply(run=notice.run)
    assert applied.lines.get().offer_id == offer_there.pk
    assert not PriceWatchChange.objects.exists()


def test_apply_is_refused_when_the_market_moved_again(change_prices):
    cart, _, offer_there = two_shops()
    change_prices((offer_there, 700))
    run = notices(cart).get()
    Offer.objects.filter(pk=offer_there.pk).update(unit_price=800)  # no signal: the 409 rule
    with pytest.raises(Conflict) as refused:
        optimization_run_apply(run=run)
    assert refused.value.code == "price_changed"


@pytest.mark.parametrize(
    ("there_price", "floors", "expected"),
    [
        (999, (100, 1.0), False),  # saves 1 cent: under the absolute floor
        (900, (100, 1.0), True),  # saves 100 of 1300 (7.7%)
        (900, (100, 10.0), False),  # ... but under a 10% floor
        (900, (101, 1.0), False),  # ... and under a 101-cent floor
    ],
)
def test_only_savings_over_both_floors_count(
    change_prices, settings, there_price, floors, expected
):
    settings.SMARTCART_PRICE_WATCH_MIN_CENTS, settings.SMARTCART_PRICE_WATCH_MIN_PERCENT = floors
    cart, _, offer_there = two_shops(there_price=1200)
    change_prices((offer_there, there_price))
    assert (price_watch_notice_for_cart(cart=cart) is not None) is expected
    assert PriceWatchRun.objects.get().carts_improvable == int(expected)


def test_no_notice_for_a_cart_already_optimal(change_prices):
    cart, _offer_here, offer_there = two_shops(here_price=800, there_price=1000)
    change_prices((offer_there, 900))  # still dearer than the cart's own offer
    assert not notices(cart).exists()
    run = PriceWatchRun.objects.get()
    assert (run.carts_checked, run.carts_improvable, run.carts_notified) == (1, 0, 0)


def test_a_price_rise_is_told_even_when_nothing_is_cheaper(change_prices):
    cart, offer_here, _offer_there = two_shops(here_price=1000, there_price=2000)
    change_prices((offer_here, 1500))
    notice = price_watch_notice_for_cart(cart=cart)
    assert notice is not None
    assert (notice.savings, notice.price_increase) == (0, 500)
    assert notice.run.suggested_total == notice.run.current_total == 1800
    assert PriceWatchRun.objects.get().carts_price_up == 1


def test_a_rise_and_a_cheaper_merchant_give_both_numbers(change_prices):
    cart, offer_here, offer_there = two_shops(here_price=1000, there_price=2000)
    change_prices((offer_here, 1500), (offer_there, 1100))
    notice = price_watch_notice_for_cart(cart=cart)
    assert (notice.savings, notice.price_increase) == (400, 500)


def test_a_dismissed_notice_stays_dismissed_for_that_cart_version(change_prices):
    cart, _offer_here, offer_there = two_shops()
    change_prices((offer_there, 700))
    optimization_run_dismiss(run=notices(cart).get())
    change_prices((offer_there, 600))  # a bigger saving, same cart version
    assert price_watch_notice_for_cart(cart=cart) is None
    assert notices(cart).count() == 1
    cart_line_set_quantity(cart=cart, line_id=cart.lines.get().pk, quantity=2)
    change_prices((offer_there, 650))
    cart.refresh_from_db()
    notice = price_watch_notice_for_cart(cart=cart)
    assert notice is not None and notice.run.cart_version == cart.version


def test_rerunning_is_harmless_and_a_gone_saving_is_withdrawn(change_prices):
    cart, _, offer_there = two_shops()
    change_prices((offer_there, 700))
    first = notices(cart).get()
    price_watch_changes_record(product_ids=[offer_there.product_id], merchant_ids=[])
    price_watch_run()
    assert list(notices(cart)) == [first]  # unchanged: kept, not rewritten
    change_prices((offer_there, 1000))
    first.refresh_from_db()
    assert first.superseded_at is not None
    assert price_watch_notice_for_cart(cart=cart) is None


def test_a_notice_moves_with_the_market(change_prices):
    cart, _, offer_there = two_shops()
    change_prices((offer_there, 700))
    change_prices((offer_there, 500))
    assert notices(cart).filter(superseded_at__isnull=True).get().savings == 500
    assert notices(cart).count() == 2


def test_merchant_terms_changes_reach_carts(django_capture_on_commit_callbacks):
    cart, _, offer_there = two_shops()
    there = offer_there.merchant
    with django_capture_on_commit_callbacks(execute=True):
        there.base_fee = 0
        there.save()
    assert price_watch_notice_for_cart(cart=cart).savings == 300


def test_inactive_carts_are_not_checked(change_prices):
    cart, _, offer_there = two_shops()
    Cart.objects.filter(pk=cart.pk).update(updated_at=timezone.now() - timezone.timedelta(days=15))
    change_prices((offer_there, 700))
    assert PriceWatchRun.objects.get().carts_checked == 0
    assert not notices(cart).exists()


def test_unbuyable_carts_are_skipped(change_prices):
    _cart, offer_here, offer_there = two_shops()
    Offer.objects.filter(pk=offer_here.pk).update(active=False)
    change_prices((offer_there, 700))
    run = PriceWatchRun.objects.get()
    assert (run.carts_checked, run.carts_skipped, run.carts_notified) == (1, 1, 0)


def _market(n_carts: int):
    merchants = [MerchantFactory(base_fee=300 + 50 * i, per_extra_unit=0) for i in range(3)]
    products = [ProductFactory() for _ in range(4)]
    offers = {
        (p.pk, m.pk): OfferFactory(product=p, merchant=m, unit_price=1000 + 10 * i)
        for i, m in enumerate(merchants)
        for p in products
    }
    for n in range(n_carts):
        cart = CartFactory(owner=UserFactory(), postal_code="1011" if n % 2 else "")
        for p in products[: 2 + n % 3]:
            CartLineFactory(cart=cart, offer=offers[(p.pk, merchants[n % 3].pk)])
    return products


def _queries_of_a_run(n_carts: int) -> tuple[int, PriceWatchRun]:
    products = _market(n_carts)
    price_watch_changes_record(product_ids=[p.pk for p in products], merchant_ids=[])
    with CaptureQueriesContext(connection) as captured:
        run = price_watch_run()
    assert run.carts_checked == n_carts and run.carts_notified > 0
    return len(captured), run


def test_queries_do_not_grow_with_the_number_of_carts(django_assert_max_num_queries):
    few, run = _queries_of_a_run(3)
    OptimizationRun.objects.all().delete()
    many, run_many = _queries_of_a_run(40)
    assert many == few
    # Claim, changes, affected carts, notices, carts, lines, offers (the run's book), names,
    # retire, insert, e-mail opt-ins, delete changes, finish; the zone index's two on a
    # rebuild; savepoints and PostgreSQL's two SET LOCAL around the writes (no WAL flush wait,
    # lz4 compression).
    assert few <= 20
    assert run.queries == run_many.queries <= 20
