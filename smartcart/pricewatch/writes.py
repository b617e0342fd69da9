"""The price watch's writes of notices: the new notices of a chunk in one COPY (PostgreSQL) or
``bulk_create``, and the saving e-mails they queue."""

import json
import time
from datetime import datetime
from typing import Any, Protocol

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
_AT = {field.attname: k for k, field in enumerate(_COPY_FIELDS)}
_dumps = json.JSONEncoder(separators=(", ", ": ")).encode


class JsonText(str):
    """A JSON column's value already encoded (``notice_text``): written as it is."""


def _copy_escaped(text: str) -> str:
    # COPY's text format: a backslash starts an escape; a tab, newline or CR ends a field.
    if "\\" in text:
        text = text.replace("\\", "\\\\")
    if "\t" in text or "\n" in text or "\r" in text:
        text = text.replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    return text


def _copy_value(value: Any, *, json_column: bool = False) -> str:
    """``value`` as a field of COPY's text format (what psycopg's ``write_row`` sends)."""
    if type(value) is int:  # most fields: the fast path first
        return str(value)
    if value is None:
        return "\\N"
    if isinstance(value, JsonText):
        return _copy_escaped(value)
    if json_column:
        return _copy_escaped(_dumps(value))
    if isinstance(value, bool):
        return "t" if value else "f"
    # The driver's wrappers (``Int2(1)``) are ints whose repr names them: the number's own.
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return float.__repr__(value)
    if isinstance(value, datetime):
        return value.isoformat()
    return _copy_escaped(str(value))


def notices_insert(
    *, run: PriceWatchRun, created: list[tuple[int, dict]], now, meter: Meter
) -> None:
    """One COPY on PostgreSQL: an INSERT of many rows with JSON columns spends most of its time
    in psycopg binding the parameters, which COPY does not do. The row of every notice is
    the row Django would write for its first one (``_notice_run``, each field's
    ``get_db_prep_save``) with the answer's own fields put in (JSON as text, which the jsonb
    column reads; ``JsonText`` as it comes), so no model instance is built per notice, and
    the chunk's rows go as one text in one write. Other databases: ``bulk_create``."""
    if not created:
        return
    if connection.vendor != "postgresql":
        notices = [_notice_run(run=run, cart_id=c, fields=_decoded(f), now=now) for c, f in created]
        OptimizationRun.objects.bulk_create(notices, batch_size=500)
        return
    quote = connection.ops.quote_name
    columns = ", ".join(quote(str(field.column)) for field in _COPY_FIELDS)
    first_cart, first_fields = created[0]
    first = _notice_run(run=run, cart_id=first_cart, fields=_decoded(first_fields), now=now)
    template = [
        # A JSON column's prepared value is the driver's wrapper: its text is the JSON.
        _copy_value(field.value_from_object(first), json_column=True)
        if field.attname in _JSON_COLUMNS
        else _copy_value(field.get_db_prep_save(field.pre_save(first, True), connection))
        for field in _COPY_FIELDS
    ]
    rows = []
    for cart_id, fields in created:
        values = template.copy()
        values[_AT["cart_id"]] = str(cart_id)
        for key, value in fields.items():
            # KeyError: an answer field without a column, a defect to surface.
            values[_AT[key]] = _copy_value(value, json_column=key in _JSON_COLUMNS)
        rows.append("\t".join(values))
    rows.append("")
    start = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(_LZ4_SQL)
        with cursor.copy(
            f"COPY {quote(OptimizationRun._meta.db_table)} ({columns}) FROM STDIN"
        ) as copy:
            copy.write("\n".join(rows))
    meter.queries += 1
    meter.seconds += time.perf_counter() - start


# A notice's suggestion (~6 kB of JSON) is stored compressed: lz4 compresses it in about
# half pglz's time, and the COPY spent a third of its time there. For this transaction only
# (``SET LOCAL``), where the server was built with lz4; readers decompress either alike.
_LZ4_SQL = (
    "SELECT set_config('default_toast_compression', 'lz4', true) FROM pg_settings "
    "WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)"
)


def _decoded(fields: dict) -> dict:
    """``fields`` with its ``JsonText`` values decoded (what a model instance holds)."""
    return {k: json.loads(v) if isinstance(v, JsonText) else v for k, v in fields.items()}


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
