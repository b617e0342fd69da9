"""A price-watch notice is told at today's prices: a second price change before the price
watch's next check (it runs a few seconds after a change) never leaves the first check's
figures on the cart page, the Improve panel, the API or the apply message."""

import pytest
from django.urls import reverse

from smartcart.models import OptimizationRun, PriceWatchChange
from smartcart.pricewatch.selectors import price_watch_notice_for_cart
from smartcart.pricewatch.services import price_watch_changes_record
from storefront.models import Cart, Offer
from storefront.money import format_money
from tests.smartcart.pricewatch.test_services import notices, two_shops

pytestmark = pytest.mark.django_db


@pytest.fixture
def noticed(change_prices):
    """A notice saving 3.00 (There drops 10.00 -> 7.00), then Here's price rises 10.00 ->
    15.00, recorded but not checked yet (the watch's countdown): applying the notice now
    saves 8.00."""
    cart, offer_here, offer_there = two_shops()
    change_prices((offer_there, 700))
    run = notices(cart).get()
    assert run.savings == 300
    _change_unchecked(offer_here, 1500)
    return Cart.objects.get(pk=cart.pk), run, offer_there


def _change_unchecked(offer: Offer, price: int) -> None:
    """A price change the price watch recorded but has not checked yet (its countdown)."""
    Offer.objects.filter(pk=offer.pk).update(unit_price=price)
    price_watch_changes_record(product_ids=[offer.product_id], merchant_ids=[])


def _page(client, cart: Cart) -> str:
    client.force_login(cart.owner)
    return client.get(reverse("cart")).content.decode()


def test_the_notice_tells_the_saving_at_todays_prices(noticed):
    cart, _run, _ = noticed
    notice = price_watch_notice_for_cart(cart=cart)
    assert notice is not None and not notice.checking
    assert notice.savings == 800
    assert notice.as_dict()["current_total"] == 1800


def test_the_cart_page_and_panel_show_the_saving_now(client, noticed):
    cart, _run, _ = noticed
    page = _page(client, cart)
    assert f"your cart can now cost {format_money(800)} less" in page
    assert f"Apply and save {format_money(800)}" in page
    assert f"cost {format_money(300)} less" not in page
    assert f"save {format_money(300)}" not in page


def test_the_api_tells_the_saving_now(client, noticed):
    cart, _run, _ = noticed
    client.force_login(cart.owner)
    body = client.get("/api/v1/cart/").json()
    assert body["price_watch"]["savings"] == 800


def test_the_apply_message_states_the_saving_applied(client, noticed):
    cart, run, offer_there = noticed
    client.force_login(cart.owner)
    page = client.post(reverse("cart_improve_apply", args=[run.pk]), follow=True)
    text = page.content.decode()
    assert f"you save {format_money(800)}" in text
    assert f"you save {format_money(300)}" not in text
    assert Cart.objects.get(pk=cart.pk).lines.get().offer_id == offer_there.pk


def test_a_suggestion_that_no_longer_holds_is_not_shown_with_old_figures(client, noticed):
    cart, run, offer_there = noticed
    _change_unchecked(offer_there, 900)
    notice = price_watch_notice_for_cart(cart=cart)
    assert notice is not None and notice.checking and notice.savings == 0
    page = _page(client, cart)
    assert "Prices changed again" in page
    assert "This suggestion is out of date" in page
    assert "Apply and save" not in page
    assert client.get("/api/v1/cart/").json()["price_watch"] is None
    assert OptimizationRun.objects.get(pk=run.pk).applied_at is None


def test_a_notice_no_unchecked_change_touches_costs_one_query(noticed, django_assert_num_queries):
    cart, _run, _ = noticed
    PriceWatchChange.objects.all().delete()  # the watch's next check read them
    with django_assert_num_queries(1):
        notice = price_watch_notice_for_cart(cart=cart)
    assert notice is not None and notice.live is None
