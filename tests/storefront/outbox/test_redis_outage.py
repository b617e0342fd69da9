"""Redis down (cache and broker, a private ``redis-server`` stopped): paying an order, a
merchant's cancel before and after payment and an admin price edit answer as usual; once Redis
is back and the relay runs, a Celery worker (in this process, so ``mail.outbox`` is shared)
sends the confirmation mail once, makes the refund once and runs the price watch once.

Against the real PostgreSQL (``DATABASE_URL``): the worker's thread reads the committed rows
through a connection of its own, as a worker process would.
"""

import logging
import os
import time
from collections.abc import Callable
from contextlib import contextmanager

import pytest
from celery.contrib.testing.worker import start_worker
from celery.signals import task_postrun
from django.apps import apps
from django.core import mail
from django.core.management import call_command
from django.db import connections
from django.test import Client, override_settings
from django.urls import reverse

from storefront.caching.cache import cache_outage_forget
from storefront.config.celery import app
from storefront.models import MerchantStaff, Order, Payment, Refund
from storefront.outbox.models import OutboxMessage
from storefront.outbox.services import outbox_relay
from tests.factories import CartFactory, CartLineFactory, MerchantFactory, OfferFactory, UserFactory
from tests.redis_server import broker_pools_drop, private_redis, redis_down  # noqa: F401
from tests.storefront.orders.conftest import POSTAL_CODE, place

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

CHANGELIST = reverse("admin:storefront_merchantorder_changelist")
DUMMY_PAID = {"status": "confirmed", "fraud_status": "accept", "gateway_response": "3ds-disabled"}


@pytest.fixture(autouse=True)
def _postgres():
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        pytest.skip("the outage test needs a PostgreSQL DATABASE_URL; CI sets it")


def _two_merchant_cart():
    cart = CartFactory(postal_code=POSTAL_CODE, owner=UserFactory())
    CartLineFactory(cart=cart, offer=OfferFactory(merchant=MerchantFactory(), stock=5), quantity=2)
    CartLineFactory(cart=cart, offer=OfferFactory(merchant=MerchantFactory()), quantity=1)
    cart.refresh_from_db()
    return cart


def _staff_client(merchant) -> Client:
    user = UserFactory(is_staff=True)
    MerchantStaff.objects.create(user=user, merchant=merchant)
    client = Client()
    client.force_login(user)
    return client


def _cancel_in_admin(package) -> int:
    response = _staff_client(package.merchant).post(
        CHANGELIST,
        {"action": "cancel_selected", "_selected_action": [package.pk], "text": "Out of stock"},
    )
    return response.status_code


def _wait_for(what: str, done: Callable[[], bool], timeout_s: float = 90) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > deadline:
            pending = list(OutboxMessage.objects.values("task_name", "status", "last_error"))
            raise AssertionError(f"{what}: not done after {timeout_s} s; outbox: {pending}")
        outbox_relay()
        time.sleep(0.2)


@contextmanager
def _unpooled_connections():
    """New connections (the worker's thread's) made directly rather than from psycopg's pool,
    whose connection check stalled for a thread started inside a test."""
    options = connections.settings["default"].get("OPTIONS", {})
    pool = options.pop("pool", None)
    try:
        yield
    finally:
        connections.close_all()  # this thread's, made while unpooled
        if pool is not None:
            options["pool"] = pool


def _price_watch_runs(*, finished: bool = False) -> int:
    # The price watch is the project's listener of offers_changed (smartcart), named by its
    # label only: the storefront's tests import nothing of smartcart.
    runs = apps.get_model("smartcart", "PriceWatchRun").objects.all()
    return runs.filter(finished_at__isnull=False).count() if finished else runs.count()


def _close_worker_connections(**kwargs) -> None:
    # The worker's thread has its own database connections: closed after each task, so the
    # test database can be flushed and dropped afterwards.
    connections.close_all()


@override_settings(SMARTCART_PRICE_WATCH_COUNTDOWN_S=0.5, STOREFRONT_CHEAPEST_DEBOUNCE_S=0.2)
def test_writes_answer_with_redis_down_and_their_work_runs_once_it_is_back(
    redis_down,  # noqa: F811
):
    paid_cart, unpaid_cart = _two_merchant_cart(), _two_merchant_cart()
    to_pay, unpaid = place(paid_cart), place(unpaid_cart)
    runs_before = _price_watch_runs()

    # Redis is down from here.
    shopper = Client()
    shopper.force_login(paid_cart.owner)
    paid = shopper.post(reverse("order_pay", args=[to_pay.number]), DUMMY_PAID)
    assert paid.status_code == 302, paid.content[:2000]
    to_pay.refresh_from_db()
    assert to_pay.status == Order.Status.PAID

    before_payment = unpaid.merchant_orders.order_by("pk").first()
    assert _cancel_in_admin(before_payment) == 302
    after_payment = to_pay.merchant_orders.order_by("pk").first()
    assert _cancel_in_admin(after_payment) == 302

    offer = unpaid.merchant_orders.order_by("pk").last().lines.first().offer
    admin = Client()
    admin.force_login(UserFactory(is_staff=True, is_superuser=True))
    edited = admin.post(
        reverse("admin:storefront_offer_change", args=[offer.pk]),
        {
            "product": offer.product_id,
            "merchant": offer.merchant_id,
            "merchant_sku": offer.merchant_sku,
            "unit_price": "3.33",
            "stock": "",
            "active": "on",
        },
    )
    assert edited.status_code == 302, edited.content[:2000]

    assert mail.outbox == []
    assert not Refund.objects.filter(status=Refund.Status.SUCCEEDED).exists()
    assert _price_watch_runs() == runs_before
    kept = OutboxMessage.objects.filter(status=OutboxMessage.Status.PENDING)
    assert set(kept.values_list("task_name", flat=True)) >= {
        "storefront.order_confirmation_mail_send",
        "smartcart.price_watch_run",
    }
    assert kept.filter(task_name="smartcart.price_watch_run").count() == 1  # coalesced

    # Redis is back: the relay sends what was kept, a worker runs it.
    redis_down.start()
    broker_pools_drop()
    cache_outage_forget()
    OutboxMessage.objects.update(next_attempt_at=OutboxMessage.objects.first().created_at)
    task_postrun.connect(_close_worker_connections, weak=False)
    # The embedded worker sets up Celery's logging (the root logger's handlers replaced).
    root_handlers, root_level = logging.root.handlers[:], logging.root.level
    try:
        with (
            _unpooled_connections(),
            start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30),
        ):
            _wait_for(
                "the outbox drained",
                lambda: not OutboxMessage.objects.filter(status="pending").exists(),
            )
            _wait_for("the mail", lambda: len(mail.outbox) >= 1)
            _wait_for(
                "the refund",
                lambda: Refund.objects.filter(
                    merchant_order=after_payment, status=Refund.Status.SUCCEEDED
                ).exists(),
            )
            _wait_for(
                "the price watch",
                lambda: _price_watch_runs(finished=True) > runs_before,
            )
            # Another relay run and a moment for anything sent twice to arrive.
            assert outbox_relay().delivered == 0
            time.sleep(2)
    finally:
        task_postrun.disconnect(_close_worker_connections)
        logging.root.handlers[:], logging.root.level = root_handlers, root_level

    confirmations = [m for m in mail.outbox if to_pay.number in m.subject + m.body]
    assert len(confirmations) == 1, [m.subject for m in mail.outbox]
    assert Refund.objects.filter(merchant_order=after_payment).count() == 1
    assert not Refund.objects.filter(merchant_order=before_payment).exists()
    assert _price_watch_runs() == runs_before + 1
    assert Payment.objects.filter(order=to_pay).count() == 1
    call_command("reconcile_payments")  # exits non-zero on a mismatch
