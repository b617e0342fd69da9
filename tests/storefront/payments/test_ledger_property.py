"""A property of the money: random sequences of placing, paying, failing, cancelling (by the
merchant and the shopper, a package or the order), expiring, shipping, provider outages and
refund callbacks (the refund task and the provider's report, duplicated and out of order) over
orders of 1-4 packages. After every step: no negative stock and every unit accounted for once,
never more captured than is due once the refunds decided are made, the open payment asking
for what is due, and once settled, captured - refunded = the live packages' cost."""

import contextlib
import os
from datetime import timedelta

import pytest
from django.utils import timezone
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from payments import RedirectNeeded
from payments.dummy import DummyProvider

from storefront.checkout.review import CheckoutChanged
from storefront.errors import Conflict, DomainError
from storefront.models import MerchantOrder, Offer, Order, OrderLine, Payment, Refund
from storefront.orders.expiry import orders_unpaid_expire
from storefront.orders.services import (
    merchant_order_cancel_by_shopper,
    merchant_order_transition,
    order_cancel,
)
from storefront.payments.ledger import cents, order_amount_due
from storefront.payments.reconcile import orders_with_ledger, payment_mismatches
from storefront.payments.refunds import (
    refund_process,
    refund_provider_report,
    refund_retry_now,
)
from tests.factories import CartFactory, CartLineFactory, MerchantFactory, OfferFactory, UserFactory
from tests.storefront.orders.conftest import POSTAL_CODE, place

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

STOCK = 6
LIVE = (MerchantOrder.Status.PLACED, MerchantOrder.Status.ACCEPTED)


def _refuse(self, payment, amount=None):
    raise OSError("provider unreachable")


class Money(RuleBasedStateMachine):
    orders = Bundle("orders")

    @initialize()
    def shop(self):
        self.offers = [
            OfferFactory(merchant=MerchantFactory(), stock=STOCK, unit_price=price)
            for price in (1250, 799, 2000, 455)
        ]
        self.admin = UserFactory(is_staff=True, is_superuser=True)
        self.order_ids: list[int] = []
        self.stale: dict[int, Payment] = {}
        self.outage = False

    def teardown(self):
        DummyProvider.refund = _REAL_REFUND

    # --- the shopper ----------------------------------------------------------------------

    @rule(
        target=orders,
        quantities=st.lists(st.integers(0, 3), min_size=4, max_size=4).filter(any),
    )
    def place(self, quantities):
        cart = CartFactory(postal_code=POSTAL_CODE)
        for offer, quantity in zip(self.offers, quantities, strict=True):
            if quantity:
                CartLineFactory(cart=cart, offer=Offer.objects.get(pk=offer.pk), quantity=quantity)
        try:
            order = place(cart)
        except (CheckoutChanged, Conflict):
            return None  # sold out meanwhile: nothing ordered
        self.order_ids.append(order.pk)
        return order.pk

    @rule(order_id=orders)
    def open_payment_page(self, order_id):
        """The provider's page loaded now and submitted later, maybe after a cancellation."""
        if order_id is not None:
            self.stale[order_id] = Payment.objects.filter(order_id=order_id).latest("pk")

    @rule(order_id=orders, status=st.sampled_from(["confirmed", "confirmed", "rejected"]))
    def pay(self, order_id, status):
        if order_id is None:
            return
        payment = self.stale.pop(order_id, None) or Payment.objects.filter(
            order_id=order_id
        ).latest("pk")
        if payment.status not in ("waiting", "input"):
            return
        data = {"status": status, "fraud_status": "accept", "gateway_response": "3ds-disabled"}
        with contextlib.suppress(RedirectNeeded):
            payment.get_form(data=data)

    @rule(order_id=orders)
    def shopper_cancels_order(self, order_id):
        if order_id is not None:
            self._domain(order_cancel, order=Order.objects.get(pk=order_id), by=None)

    @rule(order_id=orders, index=st.integers(0, 3))
    def shopper_cancels_package(self, order_id, index):
        package = self._package(order_id, index)
        if package is not None:
            order = Order.objects.get(pk=order_id)
            self._domain(
                merchant_order_cancel_by_shopper,
                order=order,
                merchant_order_id=package.pk,
                by=None,
            )

    # --- merchants and time ---------------------------------------------------------------

    @rule(order_id=orders, index=st.integers(0, 3))
    def merchant_cancels_package(self, order_id, index):
        package = self._package(order_id, index)
        if package is not None:
            self._domain(
                merchant_order_transition,
                package=package,
                action="cancel",
                user=self.admin,
                reason="Out of stock",
            )

    @rule(order_id=orders, index=st.integers(0, 3))
    def merchant_ships_package(self, order_id, index):
        package = self._package(order_id, index)
        if package is not None:
            for action in ("accept", "ship"):
                self._domain(
                    merchant_order_transition,
                    package=MerchantOrder.objects.get(pk=package.pk),
                    action=action,
                    user=self.admin,
                    tracking_reference="TRACK-1",
                )

    @rule()
    def unpaid_orders_expire(self):
        orders_unpaid_expire(now=timezone.now() + timedelta(days=1))

    # --- the provider ---------------------------------------------------------------------

    @rule()
    def provider_outage_toggles(self):
        self.outage = not self.outage
        DummyProvider.refund = _refuse if self.outage else _REAL_REFUND

    @precondition(lambda self: Refund.objects.filter(order_id__in=self.order_ids).exists())
    @rule(pick=st.integers(0, 50), times=st.integers(1, 2))
    def refund_task_runs(self, pick, times):
        """The refund task, delivered late, twice or in any order."""
        refund = self._refund(pick)
        for _ in range(times):
            refund_process(refund_id=refund.pk)

    @precondition(lambda self: Refund.objects.filter(order_id__in=self.order_ids).exists())
    @rule(pick=st.integers(0, 50), succeeded=st.booleans())
    def provider_reports_refund(self, pick, succeeded):
        refund_provider_report(refund_id=self._refund(pick).pk, succeeded=succeeded, error="no")

    @precondition(lambda self: Refund.objects.filter(order_id__in=self.order_ids).exists())
    @rule(pick=st.integers(0, 50))
    def admin_retries_refund(self, pick):
        self._domain(refund_retry_now, refund_id=self._refund(pick).pk)

    # --- helpers --------------------------------------------------------------------------

    def _domain(self, service, **kwargs):
        # Refused (shipped, settled, made already): nothing may have changed.
        with contextlib.suppress(DomainError):
            service(**kwargs)

    def _package(self, order_id, index):
        if order_id is None:
            return None
        packages = list(MerchantOrder.objects.filter(order_id=order_id).order_by("pk"))
        return packages[index % len(packages)]

    def _refund(self, pick):
        refunds = list(Refund.objects.filter(order_id__in=self.order_ids).order_by("pk"))
        return refunds[pick % len(refunds)]

    # --- invariants -----------------------------------------------------------------------

    @invariant()
    def stock_is_never_negative_and_every_unit_is_sold_once(self):
        for offer in self.offers:
            stock = Offer.objects.get(pk=offer.pk).stock
            held = sum(
                OrderLine.objects.filter(offer_id=offer.pk, merchant_order__status__in=LIVE)
                .exclude(merchant_order__status=MerchantOrder.Status.CANCELLED)
                .values_list("quantity", flat=True)
            ) + sum(
                OrderLine.objects.filter(
                    offer_id=offer.pk,
                    merchant_order__status__in=[
                        MerchantOrder.Status.SHIPPED,
                        MerchantOrder.Status.DELIVERED,
                    ],
                ).values_list("quantity", flat=True)
            )
            assert stock >= 0
            assert stock + held == STOCK

    @invariant()
    def never_charged_above_what_is_due(self):
        for order in Order.objects.filter(pk__in=self.order_ids):
            due = order_amount_due(order=order)
            decided = sum(Refund.objects.filter(order=order).values_list("amount", flat=True))
            if order.amount_captured:
                assert order.amount_captured - decided == due, order.number
            else:
                for payment in Payment.objects.filter(order=order, status__in=["waiting", "input"]):
                    assert cents(payment.total) == due, order.number

    @invariant()
    def settled_orders_hold_what_is_due(self):
        mine = orders_with_ledger().filter(pk__in=self.order_ids)
        assert payment_mismatches(orders=mine.exclude(refunds__status="failed")) == []
        for order in mine:
            if order.amount_captured and not order.refunds.exclude(status="succeeded").exists():
                assert order.amount_net == order_amount_due(order=order), order.number


_REAL_REFUND = DummyProvider.refund


def test_money_holds_under_random_journeys():
    run_state_machine_as_test(
        Money,
        settings=settings(
            max_examples=int(os.environ.get("LEDGER_PROPERTY_EXAMPLES", "25")),
            stateful_step_count=25,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )
