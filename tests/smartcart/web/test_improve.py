import pytest
from django.urls import reverse

from smartcart.models import OptimizationRun
from storefront.carts.pricing_summary import cart_pricing_summary
from storefront.carts.services import cart_get_or_create, cart_line_add
from storefront.models import Cart, CartLine
from tests.storefront.web.conftest import add_to_cart

pytestmark = pytest.mark.django_db

FETCH = {"HTTP_X_REQUESTED_WITH": "fetch"}


@pytest.fixture
def dear_cart(client, market) -> Cart:
    """Every product at the dear shop: 75.03 + 6.99 shipping = 82.02. The bundle shop sells
    all three for 69.00 - 5% = 65.55 with free shipping: 16.47 cheaper, the optimum."""
    for offer in market.dear_offers:
        add_to_cart(client, offer)
    return Cart.objects.get(session_key=client.session.session_key)


def start(client):
    return client.post(reverse("cart_improve"))


def latest_run() -> OptimizationRun:
    return OptimizationRun.objects.latest("created_at", "id")


def test_improve_shows_the_suggestion(client, dear_cart):
    response = start(client)
    assert response.status_code == 302
    assert response["Location"] == reverse("cart") + "#improve"
    run = latest_run()
    assert (run.status, run.current_total, run.suggested_total, run.savings) == (
        "done",
        8202,
        6555,
        1647,
    )
    html = client.get(reverse("cart")).content.decode()
    assert "You can save €16.47" in html
    assert "20.1% less" in html
    assert "3 of 3 lines move to another merchant" in html
    assert '<span class="cell__main">Dear Shop</span> <span class="cell__sub">€25.00 each' in html
    assert '<span class="cell__main">Bundle Shop</span> <span class="cell__sub">€23.00 each' in html
    assert "No longer needed: saves €6.99 shipping" in html
    # Shopper words on the badge; the engine's words wait behind a disclosure.
    assert "Cheapest combination, checked" in html
    assert "<summary>How was this found?</summary>" in html
    assert "found in" in html
    assert "Apply and save €16.47" in html
    assert "Keep my cart" in html
    assert "data-poll-url" not in html


def test_apply_rewrites_the_cart_and_the_total_drops_by_the_savings(client, dear_cart):
    start(client)
    run = latest_run()
    before = cart_pricing_summary(cart=dear_cart).total
    response = client.post(reverse("cart_improve_apply", args=[run.pk]))
    assert response.status_code == 302
    after = cart_pricing_summary(cart=dear_cart).total
    assert before - after == run.savings
    assert set(CartLine.objects.values_list("offer__merchant__name", flat=True)) == {"Bundle Shop"}
    html = client.get(reverse("cart")).content.decode()
    assert "Suggestion applied: you save €16.47. Your cart now costs €65.55." in html
    assert 'id="improve"' not in html  # the applied suggestion is not offered again


def test_already_optimal_cart_says_so(client, market):
    for offer in market.bundle_offers:
        add_to_cart(client, offer)
    start(client)
    html = client.get(reverse("cart")).content.decode()
    assert "Your cart is already the cheapest way to buy these items" in html
    assert "Apply" not in html


def test_a_suggestion_for_an_earlier_cart_is_not_offered_and_cannot_be_applied(client, dear_cart):
    start(client)
    run = latest_run()
    line = CartLine.objects.filter(cart=dear_cart).first()
    client.post(reverse("cart_line_update", args=[line.pk]), {"quantity": 2})
    html = client.get(reverse("cart")).content.decode()
    assert 'id="improve"' not in html  # the panel shows runs of the cart as it is now only
    response = client.post(reverse("cart_improve_apply", args=[run.pk]))
    assert response.status_code == 409
    html = response.content.decode()
    assert "Your cart changed after this suggestion was computed." in html
    assert "Recompute for my cart now" in html
    # Recompute gives a fresh run for the new version.
    start(client)
    fresh = latest_run()
    assert fresh.pk != run.pk and fresh.cart_version == Cart.objects.get(pk=dear_cart.pk).version


def test_apply_refused_when_a_suggested_price_changed(client, dear_cart, market):
    start(client)
    run = latest_run()
    offer = market.bundle_offers[0]
    offer.unit_price = 2350
    offer.save()
    response = client.post(reverse("cart_improve_apply", args=[run.pk]))
    html = response.content.decode()
    assert response.status_code == 409
    assert "The price of Voltra Widget at Bundle Shop changed." in html
    assert "Recompute for my cart now" in html
    assert CartLine.objects.filter(offer__merchant=market.dear).count() == 3


def test_keep_my_cart_dismisses_the_suggestion(client, dear_cart):
    start(client)
    run = latest_run()
    response = client.post(reverse("cart_improve_dismiss", args=[run.pk]))
    assert response.status_code == 302
    run.refresh_from_db()
    assert run.dismissed_at is not None
    html = client.get(reverse("cart")).content.decode()
    assert "Kept your cart as it is." in html
    assert 'id="improve"' not in html
    assert CartLine.objects.filter(offer__merchant__name="Dear Shop").count() == 3


def test_another_carts_run_is_404(client, dear_cart, market, shopper):
    theirs = cart_get_or_create(user=shopper)
    cart_line_add(cart=theirs, offer=market.dear_offers[0], quantity=1)
    client.force_login(shopper)
    start(client)
    their_run = latest_run()
    assert their_run.cart == theirs
    client.logout()
    for offer in market.dear_offers:  # a fresh anonymous shopper with a cart of their own
        add_to_cart(client, offer)
    assert (
        client.get(reverse("cart_improve_status", args=[their_run.pk]), **FETCH).status_code == 404
    )
    assert client.post(reverse("cart_improve_apply", args=[their_run.pk])).status_code == 404
    assert client.post(reverse("cart_improve_dismiss", args=[their_run.pk])).status_code == 404
    their_run.refresh_from_db()
    assert their_run.applied_at is None and their_run.dismissed_at is None


def test_improve_without_a_cart_or_with_an_empty_one(client, market):
    response = start(client)
    assert response.status_code == 400
    add_to_cart(client, market.dear_offers[0])
    line = CartLine.objects.get()
    client.post(reverse("cart_line_remove", args=[line.pk]))
    response = start(client)
    assert response.status_code == 400
    assert not OptimizationRun.objects.exists()


def test_improve_refuses_a_cart_with_an_unavailable_line(client, market):
    add_to_cart(client, market.cheap_offers[0], 3)
    add_to_cart(client, market.dear_offers[1])
    offer = market.cheap_offers[0]
    offer.active = False  # no longer sold there (a line only sold out moves elsewhere)
    offer.save()
    response = start(client)
    assert response.status_code == 409
    assert "Change or remove them first." in response.content.decode()


def queued_run(cart: Cart, **fields) -> OptimizationRun:
    return OptimizationRun.objects.create(
        cart=cart,
        cart_version=Cart.objects.get(pk=cart.pk).version,
        status=fields.pop("status", OptimizationRun.Status.QUEUED),
        problem_size={"lines": 3, "merchants": 3, "offers": 9, "complexity": "27"},
        **fields,
    )


def test_a_running_job_shows_progress_and_polls(client, dear_cart):
    run = queued_run(dear_cart, status=OptimizationRun.Status.RUNNING)
    html = client.get(reverse("cart")).content.decode()
    status_url = reverse("cart_improve_status", args=[run.pk])
    assert f'data-poll-url="{status_url}"' in html
    assert 'aria-live="polite"' in html
    assert "Finding the cheapest way to buy your cart" in html
    assert "for 3 products across 3 merchants" in html
    # Without JavaScript the page refreshes itself; the button waits.
    assert '<noscript><meta http-equiv="refresh" content="2"></noscript>' in html
    assert "Improving…" in html

    fragment = client.get(status_url, **FETCH)
    assert fragment.status_code == 200
    assert fragment["Cache-Control"] == "no-store"
    body = fragment.content.decode()
    assert body.lstrip().startswith("<section") and "<html" not in body
    assert 'data-state="pending"' in body

    # Opening the status URL itself leads to the cart page.
    assert client.get(status_url)["Location"] == reverse("cart") + "#improve"


def test_status_fragment_of_a_finished_run_stops_polling(client, dear_cart):
    start(client)
    run = latest_run()
    body = client.get(reverse("cart_improve_status", args=[run.pk]), **FETCH).content.decode()
    assert 'data-state="saving"' in body
    assert "data-poll-url" not in body
    assert "You can save €16.47" in body


def test_failed_run_says_why_and_offers_a_retry(client, dear_cart):
    queued_run(
        dear_cart,
        status=OptimizationRun.Status.FAILED,
        error="Stopped: no worker picked this job up within 900 s. Please try again.",
    )
    html = client.get(reverse("cart")).content.decode()
    assert "We couldn’t improve your cart" in html  # noqa: RUF001
    assert "no worker picked this job up" in html
    assert "Try again" in html


def test_apply_of_an_unfinished_run_is_refused(client, dear_cart):
    run = queued_run(dear_cart)
    response = client.post(reverse("cart_improve_apply", args=[run.pk]))
    assert response.status_code == 409
    assert "not finished yet" in response.content.decode()
