"""Shoppers cancel on the order page: a signed-in owner, or a guest who found the order by
number and e-mail; an unpaid order or a package not shipped yet, after a confirm page, by a
POST with the CSRF token. Stock comes back; a paid package's refund shows on the page."""

import pytest
from django.test import Client
from django.urls import reverse

from storefront.models import MerchantOrder, Offer, Order, Refund
from storefront.money import format_money
from storefront.orders.services import merchant_order_transition
from storefront.payments.services import order_payment_for
from tests.factories import UserFactory
from tests.storefront.orders.conftest import place, two_merchant_cart  # noqa: F401
from tests.storefront.payments.conftest import pay_with_dummy_form

pytestmark = pytest.mark.django_db


@pytest.fixture
def order(two_merchant_cart):  # noqa: F811
    return place(two_merchant_cart)


@pytest.fixture
def owner(client, order):
    client.force_login(order.owner)
    return client


@pytest.fixture
def run_on_commit(django_capture_on_commit_callbacks):
    return lambda: django_capture_on_commit_callbacks(execute=True)


def packages(order) -> list[MerchantOrder]:
    return list(order.merchant_orders.order_by("pk"))


def cancel_url(order, package=None) -> str:
    if package is None:
        return reverse("order_cancel", args=[order.number])
    return reverse("order_package_cancel", args=[order.number, package.pk])


def stock_of(package) -> int | None:
    return Offer.objects.get(pk=package.lines.get().offer_id).stock


def paid(order, run_on_commit) -> None:
    with run_on_commit():
        pay_with_dummy_form(order_payment_for(order=order))


def test_the_owner_cancels_a_package_before_paying_and_pays_less(owner, order):
    first, second = packages(order)
    stock = stock_of(first)
    page = owner.get(order.get_absolute_url()).content.decode()
    assert page.count('data-testid="package-cancel"') == 2
    confirm = owner.get(cancel_url(order, first))
    assert confirm.status_code == 200
    assert "you will not be charged for this package" in confirm.content.decode()
    first.refresh_from_db()
    assert first.status == MerchantOrder.Status.PLACED  # a GET changes nothing

    response = owner.post(cancel_url(order, first), follow=True)
    assert response.redirect_chain == [(order.get_absolute_url(), 302)]
    html = response.content.decode()
    assert f"The package from {first.merchant_name} is cancelled" in html
    first.refresh_from_db()
    assert first.status == MerchantOrder.Status.CANCELLED
    assert stock_of(first) == stock + first.lines.get().quantity
    assert f'data-testid="order-amount-due" data-cents="{second.cost}"' in html
    pay = owner.get(reverse("order_pay", args=[order.number])).content.decode()
    assert f'data-testid="pay-amount" data-cents="{second.cost}"' in pay
    assert f"Pay {format_money(second.cost)}" in pay


def test_after_paying_the_lower_amount_the_page_says_what_was_never_charged(
    owner, order, run_on_commit
):
    first, second = packages(order)
    owner.post(cancel_url(order, first))
    paid(order, run_on_commit)
    page = owner.get(order.get_absolute_url()).content.decode()
    assert f'data-testid="order-paid" data-cents="{second.cost}"' in page
    assert f'data-testid="order-cancelled-amount" data-cents="{first.cost}"' in page
    assert 'data-testid="order-refund"' not in page


def test_a_package_cancelled_after_payment_shows_its_refund(owner, order, run_on_commit):
    paid(order, run_on_commit)
    first, _ = packages(order)
    confirm = owner.get(cancel_url(order, first)).content.decode()
    assert f"{format_money(first.cost)}</strong> will be refunded" in confirm
    with run_on_commit():
        response = owner.post(cancel_url(order, first))
    page = owner.get(response["Location"]).content.decode()
    # The message is written when the cancel commits: here (a test's transaction) before the
    # refund task ran; with eager tasks in production after it, saying "has been refunded".
    amount = format_money(first.cost)
    assert f"A refund of {amount} to your payment method is on its way" in page
    refund = Refund.objects.get(merchant_order=first)
    assert refund.status == Refund.Status.SUCCEEDED
    assert 'data-testid="order-refund" data-status="succeeded"' in page
    assert f'data-testid="order-refunded" data-cents="{first.cost}"' in page
    assert 'data-testid="package-refunded"' in page


def test_a_refund_not_made_yet_shows_as_on_its_way(owner, order, run_on_commit):
    paid(order, run_on_commit)
    first, _ = packages(order)
    owner.post(cancel_url(order, first))  # the refund task runs after a commit that never comes
    page = owner.get(order.get_absolute_url()).content.decode()
    assert "A refund of" in page and "is on its way" in page
    assert 'data-testid="order-refund" data-status="pending"' in page
    assert "On its way" in page


def test_the_owner_cancels_the_whole_unpaid_order(owner, order):
    first, _ = packages(order)
    stock = stock_of(first)
    assert 'data-testid="order-cancel"' in owner.get(order.get_absolute_url()).content.decode()
    assert owner.get(cancel_url(order)).status_code == 200
    response = owner.post(cancel_url(order), follow=True)
    assert f"Order {order.number} is cancelled" in response.content.decode()
    order.refresh_from_db()
    assert order.status == Order.Status.CANCELLED
    assert all(p.status == MerchantOrder.Status.CANCELLED for p in packages(order))
    assert stock_of(first) == stock + first.lines.get().quantity
    assert order_payment_for(order=order).status == "cancelled"


def test_a_guest_cancels_after_finding_the_order_by_number_and_email(order, run_on_commit):
    Order.objects.filter(pk=order.pk).update(owner=None)
    guest = Client()
    assert guest.get(cancel_url(order)).status_code == 404
    assert guest.post(cancel_url(order)).status_code == 404
    found = guest.post(reverse("order_lookup"), {"number": order.number, "email": order.email})
    assert found.status_code == 302
    paid(order, run_on_commit)
    with run_on_commit():
        response = guest.post(cancel_url(order), follow=True)
    assert "to your payment method is on its way" in response.content.decode()
    order.refresh_from_db()
    assert (order.status, order.amount_refunded) == (Order.Status.CANCELLED, order.total)


def test_nobody_else_cancels(order):
    first, _ = packages(order)
    stranger = Client()
    stranger.force_login(UserFactory())
    for url in (cancel_url(order), cancel_url(order, first)):
        assert stranger.get(url).status_code == 404
        assert stranger.post(url).status_code == 404
    assert Client().post(cancel_url(order, first)).status_code == 404
    first.refresh_from_db()
    assert first.status == MerchantOrder.Status.PLACED


def test_a_package_of_another_order_is_a_404(owner, order):
    first, _ = packages(order)
    Order.objects.filter(pk=order.pk).update(owner=UserFactory())
    assert owner.post(cancel_url(order, first)).status_code == 404
    url = reverse("order_package_cancel", args=[order.number, 10**9])
    Order.objects.filter(pk=order.pk).update(owner=owner.session["_auth_user_id"])
    assert owner.get(url).status_code == 404
    assert owner.post(url).status_code == 404


def test_cancelling_needs_the_csrf_token(order):
    first, _ = packages(order)
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(order.owner)
    assert browser.post(cancel_url(order, first)).status_code == 403
    first.refresh_from_db()
    assert first.status == MerchantOrder.Status.PLACED


def test_a_shipped_package_cannot_be_cancelled(owner, order, run_on_commit):
    paid(order, run_on_commit)
    first, second = packages(order)
    admin = UserFactory(is_staff=True, is_superuser=True)
    merchant_order_transition(package=first, action="accept", user=admin)
    merchant_order_transition(package=first, action="ship", user=admin, tracking_reference="T-1")
    page = owner.get(order.get_absolute_url()).content.decode()
    assert page.count('data-testid="package-cancel"') == 1
    assert 'data-testid="order-cancel"' not in page  # one package has shipped
    response = owner.get(cancel_url(order, first), follow=True)
    assert "can no longer be cancelled" in response.content.decode()
    response = owner.post(cancel_url(order, first), follow=True)
    assert "it can no longer be cancelled" in response.content.decode()
    response = owner.post(cancel_url(order), follow=True)
    assert "it can no longer be cancelled" in response.content.decode()
    first.refresh_from_db()
    assert first.status == MerchantOrder.Status.SHIPPED
    assert owner.post(cancel_url(order, second)).status_code == 302
    second.refresh_from_db()
    assert second.status == MerchantOrder.Status.CANCELLED


def test_a_cancelled_package_again_is_a_clear_message(owner, order):
    first, _ = packages(order)
    owner.post(cancel_url(order, first))
    response = owner.post(cancel_url(order, first), follow=True)
    assert "This package is cancelled already." in response.content.decode()
