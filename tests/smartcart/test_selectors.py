import pytest
from django.contrib.auth.models import AnonymousUser
from django.db import connection
from django.test.utils import CaptureQueriesContext

from gpu_engine import price_assignment
from smartcart.selectors import (
    cart_current_total,
    cart_lines_find,
    cart_lines_read,
    cart_problem_build,
    optimization_run_get,
    optimization_run_latest,
)
from smartcart.services import optimization_run_create, optimization_run_dismiss
from storefront.carts.pricing_summary import cart_pricing_summary
from storefront.catalog.shipping_selectors import merchant_terms_for_destination
from storefront.errors import Conflict, NotFound, ValidationFailed
from storefront.models import Cart, CartLine, Merchant, Offer, ShippingZone
from tests.carts import cart_with_choices
from tests.factories import (
    CartFactory,
    CartLineFactory,
    MerchantFactory,
    OfferFactory,
    ShippingZoneFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


def test_problem_has_every_active_offer_and_the_way_back(cart):
    build = cart_problem_build(cart=cart)
    problem = build.problem
    assert problem.n_items == 3 and problem.n_merchants == 3
    assert build.cart_version == cart.version
    for line in build.lines:
        for merchant_id in map(int, problem.merchant_ids):
            offer = build.offers[(line.line_id, merchant_id)]
            assert Offer.objects.get(pk=offer.offer_id).merchant_id == merchant_id
    assert build.size == {"lines": 3, "merchants": 3, "offers": 9, "complexity": "27"}


def test_inactive_offers_and_merchants_are_left_out(cart):
    Merchant.objects.filter(name="Cheap Shop").update(active=False)
    line = CartLine.objects.filter(cart=cart).first()
    Offer.objects.filter(product=line.product, merchant__name="Bundle Shop").update(active=False)
    build = cart_problem_build(cart=cart)
    assert build.problem.n_merchants == 2
    assert (line.pk, Merchant.objects.get(name="Bundle Shop").pk) not in build.offers
    assert len(build.offers) == 5


def test_short_stock_offers_are_ineligible_for_the_line(shopper):
    cart = cart_with_choices(owner=shopper, quantity=60)  # Cheap Shop has 50 in stock
    problem = cart_problem_build(cart=cart).problem
    assert int(problem.cand_count.max()) == 2


def test_shipping_resolves_the_longest_zone_and_discounts(shopper):
    merchant = MerchantFactory(base_fee=499, with_discount=True)
    ShippingZoneFactory(merchant=merchant, postal_prefix="1", base_fee=300, per_extra_unit=10)
    ShippingZoneFactory(
        merchant=merchant, postal_prefix="101", base_fee=100, per_extra_unit=0, free_over=1000
    )
    cart = CartFactory(owner=shopper, postal_code="10115")
    CartLineFactory(cart=cart, offer=OfferFactory(merchant=merchant))
    problem = cart_problem_build(cart=cart).problem
    spec = problem.to_dict()["merchants"][0]
    assert spec["shipping"] == {"base_fee": 100, "per_extra_unit": 0, "free_over": 1000}
    assert spec["discount"] == {"min_units": 3, "basis_points": 500}


def test_current_total_matches_the_storefronts_pricing(cart):
    cart.postal_code = "10115"
    cart.save()
    assert cart_current_total(cart=cart) == cart_pricing_summary(cart=cart).total == 8199


@pytest.mark.parametrize("lines", [1, 12])
def test_problem_build_query_count_is_bounded(shopper, lines, django_assert_num_queries):
    cart = cart_with_choices(owner=shopper, lines=lines)
    # The cart with its lines (each line's offer and merchant), then the candidate offers
    # with their merchants' terms and matching zones: two.
    with django_assert_num_queries(2):
        build = cart_problem_build(cart=cart)
    assert build.problem.n_items == lines
    # With the cart and its lines read by the caller (the API view): one.
    found = cart_lines_find(user=shopper)
    with django_assert_num_queries(1):
        again = cart_problem_build(cart=found.cart, lines=found)
    assert again.problem.to_dict() == build.problem.to_dict()
    assert (again.cart_version, again.lines, again.offers, again.merchants) == (
        build.cart_version,
        build.lines,
        build.offers,
        build.merchants,
    )


@pytest.mark.parametrize("inline_max_ms", [5, 0], ids=["inline", "queued"])
def test_create_reads_twice_and_writes_once(
    shopper, inline_max_ms, settings, django_capture_on_commit_callbacks
):
    settings.SMARTCART_INLINE_MAX_MS = inline_max_ms
    for lines in (1, 6):
        cart = cart_with_choices(owner=UserFactory(), lines=lines)
        with (
            django_capture_on_commit_callbacks(execute=False),
            CaptureQueriesContext(connection) as queries,
        ):
            optimization_run_create(cart=cart)
        statements = [
            query["sql"].split()[0]
            for query in queries
            if not query["sql"].startswith(("SAVEPOINT", "RELEASE", "SET LOCAL"))
        ]
        # The cart with its lines, the offers with the zones; then the run itself (a run
        # already in flight for the version is the unique constraint's to find).
        assert statements == ["SELECT", "SELECT", "INSERT"]


def test_empty_and_unbuyable_carts_are_refused(shopper):
    cart = CartFactory(owner=shopper)
    with pytest.raises(ValidationFailed) as empty:
        cart_problem_build(cart=cart)
    assert empty.value.code == "cart_empty"
    with pytest.raises(ValidationFailed) as empty:
        cart_problem_build(cart=cart, lines=cart_lines_find(user=shopper))
    assert empty.value.code == "cart_empty"
    line = CartLineFactory(cart=cart, offer=OfferFactory(stock=5), quantity=3)
    Offer.objects.filter(pk=line.offer_id).update(stock=2)
    with pytest.raises(Conflict) as short:
        cart_problem_build(cart=cart)
    assert short.value.code == "line_unavailable"
    assert "only 2 in stock" in short.value.message


def test_current_assignment_prices_like_the_cart(cart):
    build = cart_problem_build(cart=cart)
    breakdown = price_assignment(build.problem, build.current_assignment)
    assert sum(cost.cost for cost in breakdown) == cart_pricing_summary(cart=cart).total


def test_run_get_only_for_its_cart(cart):
    run = optimization_run_create(cart=cart)
    assert optimization_run_get(run_id=run.pk, cart=cart) == run
    other = cart_with_choices(owner=UserFactory())
    with pytest.raises(NotFound):
        optimization_run_get(run_id=run.pk, cart=other)
    with pytest.raises(NotFound):
        optimization_run_get(run_id="nope", cart=cart)


def test_latest_skips_dismissed(cart):
    first = optimization_run_create(cart=cart)
    second = optimization_run_create(cart=cart)
    assert optimization_run_latest(cart=cart) == second
    optimization_run_dismiss(run=second)
    assert optimization_run_latest(cart=cart) == first
    assert optimization_run_latest(cart=cart, include_dismissed=True) == second


@pytest.mark.parametrize("postal_code", ["10115", "10999", "20095", "SW1A 1AA", ""])
def test_terms_agree_with_the_storefronts_resolution(shopper, postal_code):
    """Shipping resolves as ``merchant_terms_for_destination`` resolves it: the longest
    matching prefix, ``""`` everywhere, else the merchant's defaults; discounts alike."""
    cart = cart_with_choices(owner=shopper)
    dear, bundle, cheap = (
        Merchant.objects.get(name=f"{n} Shop") for n in ("Dear", "Bundle", "Cheap")
    )
    bundle.discount_min_units, bundle.discount_basis_points = 2, 300
    bundle.save()
    for merchant in (dear, bundle):
        ShippingZoneFactory(merchant=merchant, postal_prefix="10", base_fee=merchant.pk * 7)
    ShippingZoneFactory(merchant=dear, postal_prefix="101", base_fee=1, free_over=None)
    ShippingZoneFactory(merchant=cheap, postal_prefix="", base_fee=2, per_extra_unit=3)
    ShippingZoneFactory(merchant=cheap, postal_prefix="SW1", base_fee=4)
    cart.postal_code = postal_code
    cart.save()
    build = cart_problem_build(cart=cart)
    expected = merchant_terms_for_destination(
        merchant_ids=list(build.merchants), postal_code=postal_code
    )
    assert build.merchants == expected
    assert set(build.merchants) == {dear.pk, bundle.pk, cheap.pk}


def test_a_zone_or_terms_change_reaches_the_next_build(cart):
    bundle = Merchant.objects.get(name="Bundle Shop")
    assert cart_problem_build(cart=cart).merchants[bundle.pk].shipping.base_fee == 599
    ShippingZoneFactory(merchant=bundle, postal_prefix="", base_fee=1)
    assert cart_problem_build(cart=cart).merchants[bundle.pk].shipping.base_fee == 1
    # Written without signals (no cache or index to invalidate): read as it is.
    ShippingZone.objects.filter(merchant=bundle).update(base_fee=2)
    Merchant.objects.filter(pk=bundle.pk).update(discount_min_units=2, discount_basis_points=100)
    terms = cart_problem_build(cart=cart).merchants[bundle.pk]
    assert terms.shipping.base_fee == 2 and terms.discount.as_spec() == {
        "min_units": 2,
        "basis_points": 100,
    }


def test_cart_lines_read_and_find(cart, shopper):
    by_id = cart_lines_read(cart=cart)
    by_owner = cart_lines_find(user=shopper)
    assert by_id == by_owner
    assert by_owner.cart == cart and by_owner.cart.version == cart.version
    assert by_owner.cart.owner_id == shopper.pk and not by_owner.cart._state.adding
    assert [row.snapshot.line_id for row in by_owner.rows] == list(
        CartLine.objects.filter(cart=cart).order_by("created_at", "id").values_list("id", flat=True)
    )
    assert cart_lines_find(user=UserFactory()) is None
    assert cart_lines_find(user=AnonymousUser()) is None
    other = cart_with_choices(owner=UserFactory())
    with pytest.raises(ValueError):
        cart_problem_build(cart=other, lines=by_owner)
    cart_id = cart.pk
    cart.delete()
    for gone in (cart, Cart(pk=cart_id)):
        with pytest.raises(NotFound):
            cart_lines_read(cart=gone)
