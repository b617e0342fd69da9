"""The shopper cancels: a whole order or one package not shipped, through the services and the
API; stock comes back and, where paid, the refund goes through the ledger."""

import pytest
from rest_framework.test import APIClient

from storefront.errors import Conflict, NotFound
from storefront.models import MerchantOrder, Offer, Order, OrderLine, Refund
from storefront.orders.services import (
    merchant_order_cancel_by_shopper,
    merchant_order_transition,
    order_cancel,
)
from storefront.payments.services import order_payment_for
from tests.factories import UserFactory
from tests.storefront.orders.conftest import place
from tests.storefront.payments.conftest import pay_with_dummy_form

pytestmark = pytest.mark.django_db


@pytest.fixture
def order(two_merchant_cart):
    return place(two_merchant_cart)


@pytest.fixture
def paid(order, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        pay_with_dummy_form(order_payment_for(order=order))
    order.refresh_from_db()
    return order


def test_an_unpaid_order_cancelled_gives_the_stock_back_and_closes_the_payment(order):
    offer = OrderLine.objects.get(merchant_order__order=order, quantity=2).offer
    assert Offer.objects.get(pk=offer.pk).stock == 3
    order_cancel(order=order, by=order.owner)
    order.refresh_from_db()
    assert order.status == Order.Status.CANCELLED
    assert Offer.objects.get(pk=offer.pk).stock == 5
    assert order_payment_for(order=order).status == "cancelled"
    assert not Refund.objects.exists()
    assert set(order.events.values_list("by", flat=True)) == {order.owner_id}


def test_a_paid_order_cancelled_refunds_each_package(paid, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel(order=paid, by=None)
    paid.refresh_from_db()
    assert paid.status == Order.Status.CANCELLED
    refunds = Refund.objects.filter(order=paid)
    assert sorted(refunds.values_list("amount", flat=True)) == sorted(
        paid.merchant_orders.values_list("cost", flat=True)
    )
    assert set(refunds.values_list("status", flat=True)) == {"succeeded"}
    assert paid.amount_refunded == paid.amount_captured == paid.total


def test_an_order_with_a_shipped_package_cannot_be_cancelled(paid):
    package = paid.merchant_orders.order_by("pk").first()
    admin = UserFactory(is_staff=True, is_superuser=True)
    merchant_order_transition(package=package, action="accept", user=admin)
    merchant_order_transition(package=package, action="ship", user=admin, tracking_reference="T1")
    with pytest.raises(Conflict) as error:
        order_cancel(order=paid, by=paid.owner)
    assert error.value.code == "package_shipped"
    assert not paid.merchant_orders.filter(status=MerchantOrder.Status.CANCELLED).exists()
    other = paid.merchant_orders.exclude(pk=package.pk).get()
    merchant_order_cancel_by_shopper(order=paid, merchant_order_id=other.pk, by=paid.owner)
    with pytest.raises(Conflict) as error:
        merchant_order_cancel_by_shopper(order=paid, merchant_order_id=package.pk, by=paid.owner)
    assert error.value.code == "package_shipped"


def test_one_package_cancelled_before_payment_lowers_what_is_charged(
    order, django_capture_on_commit_callbacks
):
    first, second = order.merchant_orders.order_by("pk")
    merchant_order_cancel_by_shopper(order=order, merchant_order_id=first.pk, by=None)
    with pytest.raises(Conflict):
        merchant_order_cancel_by_shopper(order=order, merchant_order_id=first.pk, by=None)
    with django_capture_on_commit_callbacks(execute=True):
        pay_with_dummy_form(order_payment_for(order=order))
    order.refresh_from_db()
    assert (order.status, order.amount_captured, order.amount_due) == (
        "paid",
        second.cost,
        second.cost,
    )


def test_a_package_of_another_order_is_not_found(order):
    with pytest.raises(NotFound):
        merchant_order_cancel_by_shopper(order=order, merchant_order_id=10**9, by=None)


def test_a_failed_order_cannot_be_cancelled(order):
    order_payment_for(order=order).change_status("rejected")
    with pytest.raises(Conflict) as error:
        order_cancel(order=order, by=None)
    assert error.value.code == "order_not_cancellable"


# --- API --------------------------------------------------------------------------------------


@pytest.fixture
def api(order):
    client = APIClient()
    client.force_authenticate(order.owner)
    return client


def test_api_cancels_a_package_then_the_order(api, order):
    package = order.merchant_orders.order_by("pk").first()
    response = api.post(f"/api/v1/orders/{order.number}/packages/{package.pk}/cancel/")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["amount_due"] == order.total - package.cost
    assert [p["status"] for p in body["packages"]] == ["cancelled", "placed"]
    again = api.post(f"/api/v1/orders/{order.number}/packages/{package.pk}/cancel/")
    assert (again.status_code, again.json()["error"]["code"]) == (409, "package_cancelled")
    response = api.post(f"/api/v1/orders/{order.number}/cancel/")
    assert (response.status_code, response.json()["status"]) == (200, "cancelled")
    again = api.post(f"/api/v1/orders/{order.number}/cancel/")
    assert (again.status_code, again.json()["error"]["code"]) == (409, "order_not_cancellable")


def test_api_another_shoppers_order_is_a_404(order):
    other = APIClient()
    other.force_authenticate(UserFactory())
    assert other.post(f"/api/v1/orders/{order.number}/cancel/").status_code == 404
    package = order.merchant_orders.first()
    path = f"/api/v1/orders/{order.number}/packages/{package.pk}/cancel/"
    assert other.post(path).status_code == 404
    order.refresh_from_db()
    assert order.status == Order.Status.PENDING
