"""Offer feed imports: create a job for an uploaded file, run it (on a worker, or in the
``import_offers`` command), resume it after a failure or a crash.

A run reads and validates the whole feed first (errors are known and the error report is
written before the first offer changes), then writes it batch by batch; each batch commits
with its ``ImportJobBatch`` record and the job's counters, so a crash leaves the catalog at
batch boundaries and the next run writes only the batches not recorded. Batches are cut from
the file's data rows by position, so a resumed run cuts the same ones. On PostgreSQL two
connections write batches at once (``OFFER_IMPORT_WRITERS``).
"""

import csv
import hashlib
import io
import logging
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import PurePath

import numpy as np
from django.conf import settings
from django.core.files import File
from django.core.files.base import ContentFile
from django.db import transaction
from django.db.models import Count, Exists, F, OuterRef, Q, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone

from storefront.catalog.cheapest import catalog_cheapest_recompute_request
from storefront.enqueue import task_enqueue
from storefront.errors import Conflict, NotFound, ValidationFailed
from storefront.imports.batches import Progress, batches_write
from storefront.imports.feed import FeedFormatError, feed_read
from storefront.imports.fulfillment import (
    FulfillmentCounts,
    offers_feed,
    product_weights_write,
    warehouse_stock_write,
)
from storefront.imports.plan import MerchantOffers, merchant_offers_load, offers_plan
from storefront.imports.resolve import gtin_index_build, gtin_index_lookup
from storefront.imports.validate import RowErrors, ValidatedFeed, feed_validate
from storefront.imports.validate_fulfillment import FeedContext
from storefront.imports.writers import offer_writer_for, product_gtins
from storefront.models import ImportJob, Merchant, MerchantStaff, Product, Warehouse
from storefront.money import currency_decimals

logger = logging.getLogger(__name__)

Status = ImportJob.Status
_FORMATS_BY_SUFFIX = {
    ".csv": ImportJob.Format.CSV,
    ".txt": ImportJob.Format.CSV,
    ".tsv": ImportJob.Format.CSV,
    ".jsonl": ImportJob.Format.JSONL,
    ".ndjson": ImportJob.Format.JSONL,
    ".json": ImportJob.Format.JSONL,
}
# Spreadsheet programs run cells starting with these as formulas; the report defuses them.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def import_batch_size() -> int:
    return settings.OFFER_IMPORT_BATCH_SIZE


def import_format_detect(name: str) -> str:
    """The feed format from a file name (``.gz`` allowed on top): csv, tsv, txt -> CSV;
    jsonl, ndjson, json -> JSON Lines."""
    path = PurePath(name.lower())
    suffix = PurePath(path.stem).suffix if path.suffix == ".gz" else path.suffix
    try:
        return _FORMATS_BY_SUFFIX[suffix]
    except KeyError:
        raise ValidationFailed(
            f"Cannot tell the format of {name!r} from its name; choose CSV or JSON Lines.",
            code="import_format_unknown",
            field="format",
        ) from None


# --- creating and resuming --------------------------------------------------------------


@transaction.atomic
def import_job_create(
    *,
    merchant: Merchant,
    file: File,
    format: str = "",
    created_by=None,
    batch_size: int | None = None,
    enqueue: bool = True,
) -> ImportJob:
    """Stores the uploaded feed (MEDIA_ROOT/offer-feeds/) and creates its job; with
    ``enqueue`` the import task is sent once the transaction commits."""
    name = PurePath(getattr(file, "name", "") or "feed").name
    format = format or import_format_detect(name)
    if format not in ImportJob.Format.values:
        raise ValidationFailed(f"Unknown feed format {format!r}.", field="format")
    limit = settings.OFFER_IMPORT_MAX_BYTES
    size = getattr(file, "size", None)
    if size is not None and size > limit:
        raise ValidationFailed(
            f"The file has {size:,} bytes; the limit is {limit:,} (OFFER_IMPORT_MAX_BYTES).",
            code="import_file_too_large",
            field="file",
        )
    batch_size = batch_size or import_batch_size()
    if batch_size < 1:
        raise ValidationFailed("The batch size must be at least 1.", field="batch_size")
    job = ImportJob(merchant=merchant, format=format, batch_size=batch_size, created_by=created_by)
    job.file.save(name, file, save=False)
    job.save()
    if enqueue:
        transaction.on_commit(lambda: import_job_enqueue(job_id=job.pk))
    return job


def import_job_enqueue(*, job_id: int) -> None:
    try:
        task_enqueue(
            "storefront.import_job_run",
            args=[job_id],
            queue=settings.OFFER_IMPORT_QUEUE,
            durable=False,
        )
    except Exception:
        # Runs on commit: a broker outage must not turn the saved upload into a 500 that the
        # admin retries (a second job). The job fails with the reason and can be resumed.
        logger.exception("Could not queue import %s", job_id)
        import_job_fail(
            job_id=job_id,
            reason="The import could not be queued (the job queue is down). Resume it once "
            "the queue is back.",
        )


def _stale_before():
    return timezone.now() - timedelta(seconds=settings.OFFER_IMPORT_STALE_AFTER_S)


def _crashed() -> Q:
    """A running job whose run stopped beating: its worker died."""
    return Q(status=Status.RUNNING) & (
        Q(heartbeat_at__lt=_stale_before()) | Q(heartbeat_at__isnull=True)
    )


@transaction.atomic
def import_job_resume(*, job: ImportJob, enqueue: bool = True) -> ImportJob:
    """Queues a failed job (or one whose worker died) again; its run starts at the first
    uncommitted batch."""
    resumable = Q(status=Status.FAILED) | _crashed()
    updated = ImportJob.objects.filter(resumable, pk=job.pk).update(
        status=Status.QUEUED, stage="", heartbeat_at=None
    )
    if not updated:
        job.refresh_from_db()
        raise Conflict(
            f"Import {job.pk} is {job.get_status_display().lower()}; only a failed import, or "
            "one whose worker stopped, can be resumed.",
            code="import_not_resumable",
        )
    job.refresh_from_db()
    if enqueue:
        transaction.on_commit(lambda: import_job_enqueue(job_id=job.pk))
    return job


def import_job_fail(*, job_id: int, reason: str) -> None:
    ImportJob.objects.filter(pk=job_id).exclude(status=Status.DONE).update(
        status=Status.FAILED, stage="", message=reason, finished_at=timezone.now()
    )


# --- running ----------------------------------------------------------------------------


def _claim(job_id: int) -> ImportJob | None:
    """Marks the job running if it is queued (or its previous worker died) and no other
    import of the same merchant is running; None when it is already done."""
    now = timezone.now()
    other_running = ImportJob.objects.filter(
        merchant_id=OuterRef("merchant_id"),
        status=Status.RUNNING,
        heartbeat_at__gte=_stale_before(),
    ).exclude(pk=OuterRef("pk"))
    claimed = (
        ImportJob.objects.filter(Q(status=Status.QUEUED) | _crashed(), pk=job_id)
        .filter(~Exists(other_running))
        .update(
            status=Status.RUNNING,
            attempts=F("attempts") + 1,
            heartbeat_at=now,
            started_at=Coalesce(F("started_at"), now),
            finished_at=None,
            stage="starting",
            message="",
        )
    )
    try:
        job = ImportJob.objects.select_related("merchant").get(pk=job_id)
    except ImportJob.DoesNotExist:
        raise NotFound("No such import.", code="import_not_found") from None
    if claimed:
        return job
    if job.status == Status.DONE:
        return None
    raise Conflict(
        f"Import {job.pk} is {job.get_status_display().lower()}"
        + (
            " while another import of this merchant runs; it will run after it."
            if job.status == Status.QUEUED
            else "; resume it first."
            if job.status == Status.FAILED
            else " on another worker."
        ),
        code="import_busy",
    )


def _touch(job: ImportJob, **fields) -> None:
    fields["heartbeat_at"] = timezone.now()
    ImportJob.objects.filter(pk=job.pk).update(**fields)
    for name, value in fields.items():
        setattr(job, name, value)


@contextmanager
def _timed(timings: dict[str, float], phase: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        timings[phase] = round(timings.get(phase, 0.0) + time.perf_counter() - start, 3)


def _file_bytes(job: ImportJob) -> bytes:
    with job.file.open("rb") as handle:
        data = handle.read()
    digest = hashlib.sha256(data).hexdigest()
    if job.file_sha256 and job.file_sha256 != digest:
        raise FeedFormatError(
            "The stored feed file changed since this import started; start a new import."
        )
    if not job.file_sha256:
        _touch(job, file_sha256=digest)
    return data


def _product_weights(product_ids: list[int]) -> dict[int, int]:
    found: dict[int, int] = {}
    for start in range(0, len(product_ids), 2000):
        part = product_ids[start : start + 2000]
        found.update(Product.objects.filter(pk__in=part).values_list("pk", "weight_g"))
    return found


def _feed_context(job: ImportJob) -> FeedContext:
    """The merchant's warehouses, and whether its own staff uploaded (who may set a product's
    weight only where the catalog has none: products are shared by every merchant)."""
    warehouses = Warehouse.objects.filter(merchant_id=job.merchant_id)
    return FeedContext(
        merchant_slug=job.merchant.slug,
        warehouses=dict(warehouses.values_list("name", "pk")),
        warehouse_required=warehouses.filter(active=True).exists(),
        weights_locked=job.created_by_id is not None
        and MerchantStaff.objects.filter(user_id=job.created_by_id).exists(),
        product_weights=_product_weights,
    )


def _validate(
    job: ImportJob, data: bytes, snapshot: MerchantOffers, timings: dict[str, float]
) -> ValidatedFeed:
    with _timed(timings, "parse"):
        table = feed_read(data, format=job.format)
        limit = settings.OFFER_IMPORT_MAX_ROWS
        if table.rows_total > limit:
            raise FeedFormatError(
                f"The feed has {table.rows_total:,} rows; the limit is {limit:,} "
                "(OFFER_IMPORT_MAX_ROWS). Split it into several files."
            )
    _touch(job, stage="matching GTINs to products", rows_total=table.rows_total)
    with _timed(timings, "gtin_index"):
        index = gtin_index_build()
    with _timed(timings, "validate"):
        return feed_validate(
            table,
            decimals=currency_decimals(settings.SHOP_CURRENCY),
            resolve=lambda keys: gtin_index_lookup(index, keys),
            snapshot=snapshot,
            product_gtins=product_gtins,
            context=_feed_context(job),
        )


def _report_csv(errors: RowErrors) -> bytes:
    def safe(text: str) -> str:
        text = text.replace("\0", "\\0")
        return "'" + text if text.startswith(_FORMULA_STARTS) else text

    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["row", "sku", "field", "message"])
    for line, sku, field, message in errors.sorted_rows():
        writer.writerow([line, safe(sku), field, safe(message)])
    return buffer.getvalue().encode("utf-8")


def _save_report(job: ImportJob, errors: RowErrors) -> None:
    if job.error_report:
        job.error_report.delete(save=False)
    if len(errors):
        job.error_report.save(
            f"import-{job.pk}-errors.csv", ContentFile(_report_csv(errors)), save=False
        )
    ImportJob.objects.filter(pk=job.pk).update(error_report=job.error_report.name or "")


def _summary(job: ImportJob) -> str:
    text = (
        f"{job.offers_created:,} offers created, {job.offers_updated:,} updated, "
        f"{job.offers_unchanged:,} unchanged, {job.offers_superseded:,} superseded"
    )
    if job.rows_failed:
        text += f"; {job.rows_failed:,} of {job.rows_total:,} rows failed (see the error report)"
    return text + "."


def _write(job: ImportJob, feed: ValidatedFeed, plan, progress: Progress | None) -> None:
    done = set(job.batches.values_list("index", flat=True))
    batches_write(
        job=job,
        writer=offer_writer_for(merchant_id=job.merchant_id, feed=feed, plan=plan),
        indexes=[index for index in range(job.batches_total) if index not in done],
        rows=feed.valid.size,
        progress=progress,
        committed_product_ids=_batches_products(feed, batch_size=job.batch_size, indexes=done),
    )


def _batches_products(feed: ValidatedFeed, *, batch_size: int, indexes: set[int]) -> list[int]:
    """The products of the valid rows of batches ``indexes``: on a resume, what an earlier run
    committed and, killed before its end, may never have invalidated in the page cache or
    told ``offers_changed``. A superset (rows that changed nothing count too): resumes are
    rare, and a product told once too often costs a little work, one never told a stale page
    (until ``PAGE_CACHE_TTL``) and carts never re-priced."""
    rows = np.zeros(feed.valid.size, dtype=bool)
    for index in indexes:
        rows[index * batch_size : (index + 1) * batch_size] = True
    return np.unique(feed.product_id[rows & feed.valid]).tolist()


def import_job_run(*, job_id: int, progress: Progress | None = None) -> ImportJob:
    """Runs (or continues) an import; safe to call again at any time. A queued job runs, a
    done one is returned as it is, a failed one must be resumed first. Problems of the file
    or the run are recorded on the job (status failed, ``message``), not raised."""
    job = _claim(job_id)
    if job is None:
        return ImportJob.objects.get(pk=job_id)
    timings: dict[str, float] = dict(job.timings or {}) if job.batches_committed else {}
    try:
        _touch(job, stage="reading the file")
        with _timed(timings, "read"):
            data = _file_bytes(job)
        with _timed(timings, "snapshot"):
            snapshot = merchant_offers_load(merchant_id=job.merchant_id)
        feed = _validate(job, data, snapshot, timings)
        _save_report(job, feed.errors)
        with _timed(timings, "plan"):
            offer_feed = offers_feed(feed, snapshot)
            plan = offers_plan(
                snapshot=snapshot,
                valid=feed.valid & feed.offer_row,
                sku=feed.sku,
                product_id=feed.product_id,
                price=feed.price,
                stock=offer_feed.stock,
                active=feed.active,
            )
        batches = math.ceil(feed.valid.size / job.batch_size)
        if job.batches.filter(index__gte=batches).exists():
            raise FeedFormatError("The feed no longer matches the committed batches.")
        committed = job.batches.aggregate(n=Count("pk"), rows=Sum("rows"))
        _touch(
            job,
            rows_valid=feed.rows_valid,
            rows_failed=feed.rows_failed,
            batches_total=batches,
            batches_committed=committed["n"],
            rows_processed=(committed["rows"] or 0) + feed.rows_total - feed.valid.size,
            stage="writing offers",
            timings=timings,
        )
        if progress:
            progress(job)
        with _timed(timings, "write"):
            _write(job, offer_feed, plan, progress)
        with _timed(timings, "fulfillment"):
            fulfilled = FulfillmentCounts(
                stock_rows=warehouse_stock_write(merchant_id=job.merchant_id, feed=feed),
                weights=product_weights_write(feed=feed),
            )
    except FeedFormatError as error:
        import_job_fail(job_id=job.pk, reason=str(error))
        return ImportJob.objects.get(pk=job.pk)
    except Exception as error:
        logger.exception("Offer import %s failed", job.pk)
        job.refresh_from_db()
        import_job_fail(
            job_id=job.pk,
            reason=f"Stopped after {job.batches_committed} of {job.batches_total} batches: "
            f"{type(error).__name__}: {error}. Resume to continue from there.",
        )
        ImportJob.objects.filter(pk=job.pk).update(timings=timings)
        return ImportJob.objects.get(pk=job.pk)
    job.refresh_from_db()
    _touch(
        job,
        status=Status.DONE,
        stage="",
        finished_at=timezone.now(),
        message=_summary(job) + fulfilled.summary(),
        timings=timings,
    )
    if job.offers_changed:
        catalog_cheapest_recompute_request()
    return job


def import_job_delete(*, job: ImportJob) -> None:
    """Deletes a job that is not running, with its stored feed and error report."""
    if (
        job.status == Status.RUNNING
        and not ImportJob.objects.filter(_crashed(), pk=job.pk).exists()
    ):
        raise Conflict(
            f"Import {job.pk} is running; delete it once it has finished.", code="import_running"
        )
    for stored in (job.file, job.error_report):
        if stored:
            stored.delete(save=False)
    job.delete()
