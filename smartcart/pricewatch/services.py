"""Writes of the price watch: record changed offers, request one run per burst, run it.

A run (``price_watch_run``) re-optimises every open cart the recorded changes affect, in
chunks of ``SMARTCART_PRICE_WATCH_CHUNK`` carts: one read fetches the chunk's current
notices, two read the chunk as arrays (``packed.carts_packed_read``; the offers of products
no earlier chunk met are read into the run's ``offer_book``, once; carts a warehouse
merchant's offer reaches are built one at a time by the single-cart builder,
``selectors.carts_v2_build``, never priced as version 1), one ``solve_packed`` call solves
them all (``checks``; carts too large for the batch, or near the money limit, go through
``selectors.carts_problems_build`` and the normal planner), the floors are decided on the
arrays, and only the carts that get or lose a notice become rows: one read of their names,
their answers built together as JSON text from the chunk's arrays (``notice_text``), and at
most two writes (``writes.notices_insert``: one COPY on PostgreSQL) store the new notices
and retire the replaced ones. On PostgreSQL a chunk's reads and writes run on two threads
with their own connections (``lanes``) while the chunk before or after it is computed. A
saving at or above both floors (``SMARTCART_PRICE_WATCH_MIN_CENTS`` and ``..._MIN_PERCENT``
of the total) is stored as a done ``OptimizationRun`` of source ``price_watch``: the Improve
panel shows it and ``optimization_run_apply`` applies it with its usual 409 rules. A cart
whose lines cost more than when added (by the same floors) gets a notice too. A notice the
shopper dismissed is not shown again for that cart version; an unchanged notice is kept, not
rewritten; a cart that no longer qualifies has its notice withdrawn (``superseded_at``).
Re-running is harmless: it finds the same notices.

Coalescing: changes are rows in ``PriceWatchChange`` (the dirty set). With a broker the first
change of a burst schedules one task ``SMARTCART_PRICE_WATCH_COUNTDOWN_S`` later (a cache key
lives as long as the countdown); in-process (no broker) the run happens on commit, once per
committed transaction. One run at a time: a ``running`` row is unique; a task that finds one
retries later. A run removes exactly the change rows it read, so changes committed meanwhile
wait for the next run.
"""

import json
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from functools import partial

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from smartcart.models import OptimizationRun, PriceWatchChange, PriceWatchRun
from smartcart.pricewatch.checks import Checked, Counts, checked_packed, notice_answers
from smartcart.pricewatch.columns import ChunkRows, chunk_rows_read
from smartcart.pricewatch.lanes import Lane
from smartcart.pricewatch.offer_book import OfferBook
from smartcart.pricewatch.selectors import (
    price_watch_carts_affected,
    price_watch_changes_pending,
    price_watch_notices_current,
)
from smartcart.pricewatch.writes import JsonText, emails_queue, notices_insert
from smartcart.routing import gpu_queue_enabled
from smartcart.services.common import run_write, tasks_run_in_process
from storefront.caching.cache import CacheUnavailable
from storefront.enqueue import task_enqueue

logger = logging.getLogger(__name__)

Route = OptimizationRun.Route
_SCHEDULED_KEY = "smartcart:price-watch-scheduled"
# Its task (``smartcart.pricewatch.tasks``), sent by its registered name; the e-mail's is
# sent by ``writes``.
PRICE_WATCH_RUN = "smartcart.price_watch_run"


# --- recording changes and requesting a run --------------------------------------------


def price_watch_changes_record(*, product_ids: Sequence[int], merchant_ids: Sequence[int]) -> int:
    """Adds changed products and merchants to the dirty set (one INSERT); returns the rows."""
    rows = [PriceWatchChange(product_id=i) for i in sorted(set(product_ids))]
    rows += [PriceWatchChange(merchant_id=i) for i in sorted(set(merchant_ids))]
    if rows:
        PriceWatchChange.objects.bulk_create(rows, batch_size=1000)
    return len(rows)


def price_watch_route() -> str:
    """``gpu`` when GPU workers serve the gpu queue (``SMARTCART_GPU_QUEUE``), else ``cpu``."""
    return Route.GPU if gpu_queue_enabled() else Route.CPU


def price_watch_request() -> None:
    """Has the recorded changes handled by one run: now when tasks run in-process, else one
    task per burst after the countdown (later requests within it add nothing)."""
    route = str(price_watch_route())
    if tasks_run_in_process():
        task_enqueue(PRICE_WATCH_RUN, kwargs={"route": route})
        return
    countdown = settings.SMARTCART_PRICE_WATCH_COUNTDOWN_S
    # The key lives as long as the countdown: a change recorded while it exists was
    # committed before the scheduled task starts, so that task reads it.
    try:
        first = cache.add(_SCHEDULED_KEY, True, timeout=countdown)
    except CacheUnavailable:
        # No shared cache to coalesce on: schedule anyway (one run at a time holds; a
        # task that finds nothing recorded does nothing).
        first = True
    if first:
        # Coalesced: while the broker is down one kept request covers every change.
        task_enqueue(
            PRICE_WATCH_RUN,
            kwargs={"route": route},
            countdown=countdown,
            queue=route,
            coalesce=True,
        )


def price_watch_offers_changed(*, product_ids: Sequence[int], merchant_ids: Sequence[int]) -> None:
    """What ``storefront.catalog.offer_changes.offers_changed`` triggers (after the commit)."""
    if not settings.SMARTCART_PRICE_WATCH:
        return
    if price_watch_changes_record(product_ids=product_ids, merchant_ids=merchant_ids):
        price_watch_request()


# --- the run ----------------------------------------------------------------------------


class PriceWatchBusy(Exception):
    """Another run is running; try again later."""


class _QueryMeter:
    """Counts statements and their time on the default connection (an execute wrapper)."""

    def __init__(self) -> None:
        self.queries = 0
        self.seconds = 0.0

    def __call__(self, execute, sql, params, many, context):
        start = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.queries += 1
            self.seconds += time.perf_counter() - start

    def add(self, other: "_QueryMeter | None") -> None:
        if other is not None:
            self.queries += other.queries
            self.seconds += other.seconds


def _claim(*, route: str) -> PriceWatchRun:
    stale = timezone.now() - timedelta(
        seconds=settings.CELERY_TASK_TIME_LIMIT + settings.SMARTCART_REAPER_GRACE_S
    )
    for _ in range(2):
        try:
            with transaction.atomic():
                return PriceWatchRun.objects.create(route=route)
        except IntegrityError:
            # A run whose worker died would hold the slot forever: past the task's time
            # limit it cannot be alive.
            PriceWatchRun.objects.filter(
                status=PriceWatchRun.Status.RUNNING, started_at__lt=stale
            ).update(
                status=PriceWatchRun.Status.FAILED,
                error="Stopped: still running past the task time limit (its worker was lost).",
                finished_at=timezone.now(),
            )
    raise PriceWatchBusy()


def _chunks(ids: list[int], size: int) -> Iterator[list[int]]:
    for start in range(0, len(ids), size):
        yield ids[start : start + size]


def price_watch_run(*, route: str = Route.CPU) -> PriceWatchRun:
    """Checks every open cart the recorded changes affect (see the module docstring).
    Raises ``PriceWatchBusy`` when another run holds the slot."""
    t0 = time.perf_counter()
    run = _claim(route=route)
    meter = _QueryMeter()
    counts = Counts()
    try:
        with connection.execute_wrapper(meter):
            changes = price_watch_changes_pending()
            since = timezone.now() - timedelta(days=settings.SMARTCART_PRICE_WATCH_ACTIVE_DAYS)
            cart_ids = price_watch_carts_affected(changes=changes, active_since=since)
            device = "auto" if route == Route.GPU else "cpu"
            _check_chunks(
                run=run,
                chunks=list(_chunks(cart_ids, settings.SMARTCART_PRICE_WATCH_CHUNK)),
                device=device,
                counts=counts,
                meter=meter,
            )
            if counts.v2:
                logger.info(
                    "Price-watch run %s: %d carts with warehouse merchants (pricing version 2) "
                    "built one at a time",
                    run.pk,
                    counts.v2,
                )
            PriceWatchChange.objects.filter(id__lte=changes.upto).delete()
    except Exception as error:
        logger.exception("Price-watch run %s failed", run.pk)
        _finish(run, counts, meter, t0, status=PriceWatchRun.Status.FAILED, error=repr(error))
        raise
    run.changes_upto = changes.upto
    run.products_changed = len(changes.product_ids)
    run.merchants_changed = len(changes.merchant_ids)
    return _finish(run, counts, meter, t0, status=PriceWatchRun.Status.DONE)


def _finish(run, counts: Counts, meter: _QueryMeter, t0: float, *, status, error=""):
    run.status = status
    run.error = error
    run.device = counts.device
    run.carts_checked = counts.checked
    run.carts_skipped = counts.skipped
    run.carts_improvable = counts.improvable
    run.carts_price_up = counts.price_up
    run.carts_notified = counts.notified
    run.emails_queued = counts.emails
    run.queries = meter.queries + 1  # this write
    run.db_ms = meter.seconds * 1000.0
    run.solve_ms = counts.solve_ms
    run.duration_ms = (time.perf_counter() - t0) * 1000.0
    run.finished_at = timezone.now()
    run.save()
    return run


def _counts_as(amount: int, total: int) -> bool:
    """At or above both floors: the absolute one and the share of ``total``."""
    return (
        amount >= settings.SMARTCART_PRICE_WATCH_MIN_CENTS
        and amount * 100.0 >= settings.SMARTCART_PRICE_WATCH_MIN_PERCENT * total
    )


def _notice_wanted(cart: Checked, counts: Counts) -> tuple[bool, int | None] | None:
    """Whether this cart gets a notice now, decided on the totals (the stored answer is
    built only for a notice): ``(improvable, price_increase)``, or ``None``: nothing worth
    saying."""
    current = cart.current_total
    savings = max(0, current - cart.suggested_total)
    increase = max(0, current - cart.added_total)
    improvable = _counts_as(savings, current)
    price_up = _counts_as(increase, cart.added_total)
    counts.improvable += improvable
    counts.price_up += price_up
    if not improvable and not price_up:
        return None
    return improvable, increase if price_up else None


def _suggested_lines(fields: dict) -> list:
    suggestion = fields["suggestion"]
    if isinstance(suggestion, JsonText):
        suggestion = json.loads(suggestion)
    return suggestion["lines"]


def _same(run: OptimizationRun, fields: dict) -> bool:
    return (
        run.cart_version == fields["cart_version"]
        and run.current_total == fields["current_total"]
        and run.suggested_total == fields["suggested_total"]
        and run.price_increase == fields["price_increase"]
        and run.suggestion.get("lines") == _suggested_lines(fields)
    )


@dataclass(frozen=True)
class _ChunkRead:
    """A chunk's reads that need nothing of the chunks before it: its carts' current notices,
    its carts and lines."""

    cart_ids: list[int]
    notices: list[OptimizationRun]
    rows: ChunkRows


def _chunk_read(cart_ids: list[int]) -> _ChunkRead:
    return _ChunkRead(
        cart_ids=cart_ids,
        notices=list(price_watch_notices_current(cart_ids=cart_ids)),
        rows=chunk_rows_read(cart_ids=cart_ids),
    )


def _check_chunks(
    *, run: PriceWatchRun, chunks: list[list[int]], device: str, counts: Counts, meter
) -> None:
    """Checks the chunks in order. Each chunk's reads are made on a reader lane while the
    chunk before it is checked, and its notices written on a writer lane while the next one
    is (``lanes.Lane``; in line where a lane has no thread): the server reads and writes
    while this thread packs, solves and builds notices. One write at a time."""
    reader, writer = Lane(meter_factory=_QueryMeter), Lane(meter_factory=_QueryMeter)
    book = OfferBook()
    written: Callable[[], None] | None = None
    try:
        upcoming = [reader.submit(partial(_chunk_read, chunk)) for chunk in chunks[:1]]
        for k in range(len(chunks)):
            read = upcoming.pop()()
            upcoming += [
                reader.submit(partial(_chunk_read, chunk)) for chunk in chunks[k + 1 : k + 2]
            ]
            write = _check_chunk(
                run=run,
                read=read,
                device=device,
                counts=counts,
                meter=meter if writer.meter is None else writer.meter,
                book=book,
            )
            if write is not None:
                if written is not None:
                    written()  # the chunk before's write is done (its error raised here)
                written = writer.submit(write)
        if written is not None:
            written()
    finally:
        reader.close()
        writer.close()
        meter.add(reader.meter)
        meter.add(writer.meter)


def _check_chunk(
    *,
    run: PriceWatchRun,
    read: _ChunkRead,
    device: str,
    counts: Counts,
    meter: "_QueryMeter",
    book: OfferBook,
) -> Callable[[], None] | None:
    """Checks a chunk's carts; returns the chunk's writes (``None``: nothing to write)."""
    counts.checked += len(read.cart_ids)
    existing: dict[int, list[OptimizationRun]] = {}
    for notice in read.notices:
        existing.setdefault(notice.cart_id, []).append(notice)
    carts, fresh = checked_packed(
        cart_ids=read.cart_ids,
        device=device,
        counts=counts,
        noticed=set(existing),
        book=book,
        rows=read.rows,
    )
    now = timezone.now()
    created: list[tuple[int, dict]] = []  # (cart id, run fields) of each new notice
    owners: dict[int, int | None] = {}
    for batch in fresh:
        created += batch.notices()
        owners |= batch.owners()
    retired: list[int] = []
    wanted: list[tuple[Checked, bool, int | None]] = []
    for cart in carts:
        notices = existing.get(cart.cart_id, [])
        if any(n.dismissed_at and n.cart_version == cart.cart_version for n in notices):
            continue  # the shopper said no to this cart version
        decided = _notice_wanted(cart, counts)
        if decided is None:
            retired += [n.pk for n in notices]
        else:
            wanted.append((cart, *decided))
    for (cart, _, _), fields in zip(wanted, notice_answers(wanted), strict=True):
        notices = existing.get(cart.cart_id, [])
        shown = [n for n in notices if n.dismissed_at is None and n.applied_at is None]
        if any(_same(n, fields) for n in shown):
            continue  # unchanged: keep the notice the shopper may be looking at
        retired += [n.pk for n in notices]
        created.append((cart.cart_id, fields))
    if not created and not retired:
        return None
    counts.notified += len(created)
    owners |= {cart.cart_id: cart.owner_id for cart in carts}
    return partial(
        _write_chunk,
        run=run,
        created=created,
        retired=retired,
        owners=owners,
        now=now,
        counts=counts,
        meter=meter,
    )


def _write_chunk(
    *,
    run: PriceWatchRun,
    created: list[tuple[int, dict]],
    retired: list[int],
    owners: dict[int, int | None],
    now,
    counts: Counts,
    meter: "_QueryMeter",
) -> None:
    """A chunk's writes: the replaced notices retired, the new ones stored (one transaction),
    then their e-mails queued (``counts.emails``: only this writes it while a run runs)."""
    with run_write():
        if retired:
            OptimizationRun.objects.filter(pk__in=retired).update(superseded_at=now)
        notices_insert(run=run, created=created, now=now, meter=meter)
    counts.emails += emails_queue(run=run, created=created, owners=owners)
