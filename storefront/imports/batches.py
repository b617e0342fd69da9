"""Writing an import's batches: each in one transaction with its ``ImportJobBatch`` record
and the job's counters, on one connection or (PostgreSQL) several at once.

Batches do not depend on each other (a SKU is on one row, a product has one active row, an
offer is superseded by one row), so they may commit in any order; the records say which did.
"""

import queue
import threading
import time
from collections.abc import Callable, Iterable

from django.conf import settings
from django.db import connection, connections, transaction
from django.db.models import F
from django.utils import timezone

from storefront.catalog.offer_changes import DeferredChanges, offers_changed_deferred
from storefront.models import ImportJob, ImportJobBatch

Progress = Callable[[ImportJob], None]


def _write_one(
    job: ImportJob, writer, index: int, rows_total: int, changes: DeferredChanges
) -> None:
    """Writes batch ``index`` and records it, in one transaction."""
    lo, hi = index * job.batch_size, min((index + 1) * job.batch_size, rows_total)
    start = time.perf_counter()
    with transaction.atomic():
        counts = writer.write_batch(lo, hi)
        ImportJobBatch.objects.create(
            job_id=job.pk,
            index=index,
            rows=hi - lo,
            created=counts.created,
            updated=counts.updated,
            unchanged=counts.unchanged,
            superseded=counts.superseded,
            seconds=round(time.perf_counter() - start, 3),
        )
        ImportJob.objects.filter(pk=job.pk).update(
            heartbeat_at=timezone.now(),
            batches_committed=F("batches_committed") + 1,
            rows_processed=F("rows_processed") + (hi - lo),
            offers_created=F("offers_created") + counts.created,
            offers_updated=F("offers_updated") + counts.updated,
            offers_unchanged=F("offers_unchanged") + counts.unchanged,
            offers_superseded=F("offers_superseded") + counts.superseded,
        )
    changes.add(product_ids=counts.product_ids)


def _writer_threads() -> int:
    """Connections writing batches at once. More than one only on PostgreSQL (where the
    database's work is the bottleneck and batches do not depend on each other) and only in
    autocommit: other connections cannot see a caller's uncommitted transaction."""
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        return 1
    return max(1, settings.OFFER_IMPORT_WRITERS)


def batches_write(
    *,
    job: ImportJob,
    writer,
    indexes: list[int],
    rows: int,
    progress: Progress | None,
    committed_product_ids: Iterable[int] = (),
) -> None:
    """Writes the batches ``indexes`` of ``rows`` data rows, each in its own transaction with
    its record; raises the first error after the other writers stopped at a batch boundary.
    ``offers_changed`` (and with it the page cache's versions) goes out once for all the
    batches that committed, at the end: one price-watch run per import, not one per batch.
    ``committed_product_ids``: products of batches an earlier run committed, told again with
    these (that run may have been killed before its end told anyone)."""
    with offers_changed_deferred() as changes:
        changes.add(product_ids=committed_product_ids)
        _batches_write(job, writer, indexes, rows, progress, changes)


def _batches_write(
    job: ImportJob,
    writer,
    indexes: list[int],
    rows: int,
    progress: Progress | None,
    changes: DeferredChanges,
) -> None:
    todo = indexes
    threads = min(_writer_threads(), len(todo))
    if threads <= 1:
        for index in todo:
            _write_one(job, writer, index, rows, changes)
            if progress:
                job.refresh_from_db()
                progress(job)
        return
    pending = iter(todo)
    lock = threading.Lock()
    failed = threading.Event()
    finished: queue.Queue = queue.Queue()

    def work() -> None:
        try:
            while not failed.is_set():
                with lock:
                    index = next(pending, None)
                if index is None:
                    return
                _write_one(job, writer, index, rows, changes)
                finished.put(None)
        except BaseException as error:  # handed to the caller's thread below
            failed.set()
            finished.put(error)
        finally:
            connections.close_all()

    workers = [threading.Thread(target=work, daemon=True) for _ in range(threads)]
    for worker in workers:
        worker.start()
    errors = []
    for _ in todo:
        outcome = finished.get()
        if isinstance(outcome, BaseException):
            errors.append(outcome)
            break
        if progress:
            job.refresh_from_db()
            progress(job)
    for worker in workers:
        worker.join()
    while not finished.empty():
        outcome = finished.get()
        if isinstance(outcome, BaseException):
            errors.append(outcome)
    if errors:
        raise errors[0]
