"""Orders with a known history for statements: placed, paid, cancelled and refunded at times
the tests choose (``clock``)."""

from datetime import UTC, datetime
from unittest import mock

import pytest

from storefront.models import MerchantStaff
from storefront.payments.services import order_payment_for
from tests.factories import UserFactory
from tests.storefront.orders.conftest import place, two_merchant_cart
from tests.storefront.payments.conftest import merchant_cancel, pay_with_dummy_form

__all__ = ["two_merchant_cart"]


class Clock:
    """What ``timezone.now()`` answers, so the ledger's events carry chosen times."""

    def __init__(self) -> None:
        self.now = datetime(2026, 11, 10, 12, 0, tzinfo=UTC)

    def set(self, *args: int) -> None:
        self.now = datetime(*args, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock():
    clock = Clock()
    with mock.patch("django.utils.timezone.now", clock):
        yield clock


@pytest.fixture
def paid(run_on_commit):
    """``paid(order)`` pays the order with the dummy provider, its follow-up work run."""

    def pay(order) -> None:
        with run_on_commit():
            pay_with_dummy_form(order_payment_for(order=order))

    return pay


@pytest.fixture
def cancelled(run_on_commit):
    """``cancelled(package)``: its merchant cancels it, the refund (if any) made at once."""

    def cancel(package) -> None:
        with run_on_commit():
            merchant_cancel(package)

    return cancel


@pytest.fixture
def run_on_commit(django_capture_on_commit_callbacks):
    return lambda: django_capture_on_commit_callbacks(execute=True)


def staff_of(merchant, **extra):
    user = UserFactory(is_staff=True, **extra)
    MerchantStaff.objects.create(user=user, merchant=merchant)
    return user


def placed(cart, *, bps: tuple[int, int] = (1000, 1000)):
    """An order of ``two_merchant_cart`` with the two merchants at the given rates; returns
    the order and its two packages (A's first)."""
    lines = cart.lines.select_related("offer__merchant").order_by("pk")
    for line, rate in zip(lines, bps, strict=True):
        line.offer.merchant.commission_bps = rate
        line.offer.merchant.save(update_fields=["commission_bps"])
    order = place(cart)
    first, second = order.merchant_orders.order_by("pk")
    return order, first, second
