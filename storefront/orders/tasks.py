"""Celery tasks of checkout (thin: they take ids and call services)."""

from celery import shared_task

from storefront.config.celery import MAIL_TASK_OPTIONS
from storefront.orders.emails import order_confirmation_mail_send
from storefront.orders.expiry import orders_unpaid_expire
from storefront.payments.services import merchant_order_refund


@shared_task(name="storefront.order_confirmation_mail_send", **MAIL_TASK_OPTIONS)
def order_confirmation_mail_send_task(order_id: int) -> None:
    order_confirmation_mail_send(order_id=order_id)


@shared_task(name="storefront.orders_unpaid_expire", ignore_result=True, acks_late=True)
def orders_unpaid_expire_task() -> int:
    return orders_unpaid_expire()


@shared_task(
    name="storefront.merchant_order_refund",
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    autoretry_for=(OSError,),
    retry_backoff=True,
    retry_backoff_max=300,
    max_retries=5,
)
def merchant_order_refund_task(merchant_order_id: int) -> None:
    merchant_order_refund(merchant_order_id=merchant_order_id)
