"""The price watch's writes of notices: the new notices of a chunk in one COPY (PostgreSQL) or
``bulk_create``, and the saving e-mails they queue."""

import json
import time
from typing import Protocol

from django.db import connection, transaction
from django.db.models import JSONField

from smartcart.models import OptimizationRun, PriceWatchEmailOptIn, PriceWatchRun
from storefront.enqueue import task_enqueue

Route = OptimizationRun.Route
# Its task (``smartcart.pricewatch.tasks``), sent by its registered name.
PRICE_WATCH_EMAIL_SEND = "smartcart.price_watch_email_send"


class Meter(Protocol):
    """Statements and their seconds (``services._QueryMeter``): a COPY is not seen by the
    connection's execute wrappers."""

    queries: int
    seconds: float


_COPY_FIELDS = tuple(f for f in OptimizationRun._meta.concrete_fields if not f.primary_key)
_JSON_COLUMNS = frozenset(f.attname for f in _COPY_FIELDS if isinstance(f, JSONField))


def notices_insert(
    *, run: PriceWatchRun, created: list[tuple[int, dict]], now, meter: Meter
) -> None:
    """One COPY on PostgreSQL: an INSERT of many rows with JSON columns spends most of its time
    in psycopg binding the parameters, which COPY does not do. The row of every notice is
    the row Django would write for its first one (``_notice_run``, each field's
    ``get_db_prep_save``) with the answer's own fields put in (JSON as text, which the jsonb
    column reads), so no model instance is built per notice. Other databases:
    ``bulk_create``."""
    if not created:
        return
    if connection.vendor != "postgresql":
        notices = [_notice_run(run=run, cart_id=c, fields=f, now=now) for c, f in created]
        OptimizationRun.objects.bulk_create(notices, batch_size=500)
        return
    quote = connection.ops.quote_name
    columns = ", ".join(quote(str(field.column)) for field in _COPY_FIELDS)
    first_cart, first_fields = created[0]
    first = _notice_run(run=run, cart_id=first_cart, fields=first_fields, now=now)
    template = [
        field.get_db_prep_save(field.pre_save(first, True), connection) for field in _COPY_FIELDS
    ]
    at = {field.attname: k for k, field in enumerate(_COPY_FIELDS)}
    dumps = json.JSONEncoder(separators=(", ", ": ")).encode
    start = time.perf_counter()
    with (
        connection.cursor() as cursor,
        cursor.copy(f"COPY {quote(OptimizationRun._meta.db_table)} ({columns}) FROM STDIN") as copy,
    ):
        for cart_id, fields in created:
            values = template.copy()
            values[at["cart_id"]] = cart_id
            for key, value in fields.items():
                # KeyError: an answer field without a column, a defect to surface.
                values[at[key]] = dumps(value) if key in _JSON_COLUMNS else value
            copy.write_row(values)
    meter.queries += 1
    meter.seconds += time.perf_counter() - start


def _notice_run(*, run: PriceWatchRun, cart_id: int, fields: dict, now) -> OptimizationRun:
    return OptimizationRun(
        cart_id=cart_id,
        source=OptimizationRun.Source.PRICE_WATCH,
        price_watch_run=run,
        status=OptimizationRun.Status.DONE,
        route=run.route,
        route_reason="Price watch: offers changed",
        attempts=1,
        started_at=now,
        finished_at=now,
        **fields,
    )


def emails_queue(
    *, run: PriceWatchRun, created: list[tuple[int, dict]], owners: dict[int, int | None]
) -> int:
    """Queues the saving e-mail of each new notice whose cart's owner opted in (one read, two
    when some did); the task itself keeps to one e-mail per cart per day."""
    owned = {c: owners[c] for c, fields in created if fields["savings"] and owners.get(c)}
    if not owned:
        return 0
    opted = set(
        PriceWatchEmailOptIn.objects.filter(
            user_id__in=set(owned.values()), enabled=True
        ).values_list("user_id", flat=True)
    )
    carts = [cart_id for cart_id, owner in owned.items() if owner in opted]
    if not carts:
        return 0
    run_ids = list(
        OptimizationRun.objects.filter(
            price_watch_run=run, cart_id__in=carts, superseded_at__isnull=True
        ).values_list("pk", flat=True)
    )

    def send() -> None:
        for run_id in run_ids:
            task_enqueue(PRICE_WATCH_EMAIL_SEND, kwargs={"run_id": run_id}, queue=str(Route.CPU))

    transaction.on_commit(send, robust=True)
    return len(run_ids)
