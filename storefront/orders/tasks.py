"""Celery tasks of orders and their money (thin: they take ids and call services; each may
run twice, late or out of order)."""

from celery import shared_task

from storefront.config.celery import MAIL_TASK_OPTIONS
from storefront.orders.emails import order_confirmation_mail_send, package_shipped_mail_send
from storefront.orders.expiry import orders_unpaid_expire
from storefront.payments.refunds import refund_process, refunds_due_process
from storefront.payments.services import merchant_order_refund


@shared_task(name="storefront.order_confirmation_mail_send", **MAIL_TASK_OPTIONS)
def order_confirmation_mail_send_task(order_id: int) -> None:
    order_confirmation_mail_send(order_id=order_id)


@shared_task(name="storefront.package_shipped_mail_send", **MAIL_TASK_OPTIONS)
def package_shipped_mail_send_task(merchant_order_id: int) -> None:
    package_shipped_mail_send(merchant_order_id=merchant_order_id)


@shared_task(name="storefront.orders_unpaid_expire", ignore_result=True, acks_late=True)
def orders_unpaid_expire_task() -> int:
    return orders_unpaid_expire()


# Provider errors are kept on the refund row and retried by the beat sweep, not by Celery.
@shared_task(
    name="storefront.refund_process", acks_late=True, reject_on_worker_lost=True, ignore_result=True
)
def refund_process_task(refund_id: int) -> None:
    refund_process(refund_id=refund_id)


@shared_task(
    name="storefront.refunds_due_process",
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
)
def refunds_due_process_task() -> int:
    return refunds_due_process()


@shared_task(
    name="storefront.merchant_order_refund",
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
)
def merchant_order_refund_task(merchant_order_id: int) -> None:
    merchant_order_refund(merchant_order_id=merchant_order_id)
