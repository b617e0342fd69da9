"""Celery tasks of the price watch: thin, idempotent, ``acks_late``."""

from celery import shared_task
from django.db import InterfaceError, OperationalError, close_old_connections

from smartcart.pricewatch import notify, services


@shared_task(
    name="smartcart.price_watch_run",
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    autoretry_for=(services.PriceWatchBusy, OperationalError, InterfaceError),
    # Busy: the running run may finish in a moment; the changes it did not read wait here.
    retry_backoff=2,
    retry_backoff_max=30,
    max_retries=20,
    bind=True,
)
def price_watch_run_task(self, route: str = "cpu") -> None:
    if not self.request.is_eager:
        close_old_connections()
        services.price_watch_run(route=route)
        return
    try:
        services.price_watch_run(route=route)
    except services.PriceWatchBusy:
        # In-process there is no later: the run in progress reads these changes if it has
        # not read the dirty set yet, else the next change's run does.
        return


@shared_task(
    name="smartcart.price_watch_email_send",
    acks_late=True,
    ignore_result=True,
    autoretry_for=(OSError, OperationalError, InterfaceError),
    retry_backoff=True,
    retry_backoff_max=300,
    max_retries=5,
)
def price_watch_email_send_task(run_id: int) -> None:
    notify.price_watch_email_send(run_id=run_id)
