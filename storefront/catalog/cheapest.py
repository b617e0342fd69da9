"""The stored cheapest offer of every product (``ProductCheapest``): marking products stale,
and recomputing them with ``gpu_engine.catalog.cheapest_offer.select`` (GPU when the worker has
one, its numba twin otherwise).

"Cheapest" is exactly what the catalog selectors mean: the cheapest offer that is active, in
stock (or unlimited) and sold by an active merchant, ties to the lowest merchant id (then the
lowest offer id); ``offer_count`` counts those offers. Both sides build their filter from
``selectors.offer_buyable_q``.

Freshness. A write that can change a product's cheapest offer inserts a
``CheapestOfferRefresh`` row in its own transaction (``catalog_cheapest_mark_stale``); the ORM
signal receivers in ``storefront.catalog.receivers`` do it for every ``save()`` and ``delete()`` of
offers and merchants, the feed import does it in SQL. Selectors use the stored values only for
products that have them and no pending refresh; the others are read live, so results are
always right and only their speed depends on the refresh task keeping up.

The recompute reads the refresh rows first, then the offers, writes the results and deletes
exactly the refresh rows it read, all in one transaction per chunk. A writer that commits
meanwhile leaves its own refresh row behind, so the next run picks the product up again.
Chunks are serialised by a PostgreSQL advisory lock, so two workers never interleave a stale
write over a fresh one.
"""

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils import timezone

from gpu_engine.catalog import cheapest_offer_device, cheapest_offers
from storefront.caching.cache import CacheUnavailable
from storefront.catalog.cheapest_io import chunk_io
from storefront.enqueue import task_enqueue, tasks_run_in_process
from storefront.models import CheapestOfferRefresh, Offer, Product

logger = logging.getLogger(__name__)

# Any constant works; it only has to be the same for every worker of the deployment.
_ADVISORY_LOCK_KEY = 0x5C_C4EA_9E57
_INT32_MAX = np.iinfo(np.int32).max
# The task (``storefront.catalog.tasks``) that runs ``catalog_cheapest_recompute``, by its name.
RECOMPUTE_TASK = "storefront.catalog_cheapest_recompute"
_ENQUEUED_KEY = "storefront:cheapest-recompute-enqueued"


@dataclass(frozen=True)
class CheapestRecomputeResult:
    products: int = 0
    written: int = 0
    offers: int = 0
    seconds: float = 0.0
    device: str = ""

    def __add__(self, other: "CheapestRecomputeResult") -> "CheapestRecomputeResult":
        return CheapestRecomputeResult(
            products=self.products + other.products,
            written=self.written + other.written,
            offers=self.offers + other.offers,
            seconds=self.seconds + other.seconds,
            device=other.device or self.device,
        )


# --- marking stale ----------------------------------------------------------------------


def _mark_from(products: QuerySet) -> int:
    """Inserts one refresh row per distinct product id selected by ``products`` (a queryset
    of ``product_id`` values), in one INSERT ... SELECT."""
    sql, params = products.order_by().values("product_id").distinct().query.sql_with_params()
    table = connection.ops.quote_name(CheapestOfferRefresh._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {table} (product_id) {sql}", params)
        return cursor.rowcount


def catalog_cheapest_mark_stale(
    *,
    product_ids: Iterable[int] = (),
    merchant_ids: Iterable[int] = (),
    offers: QuerySet[Offer] | None = None,
    page_cache: bool = True,
) -> int:
    """Marks products for a cheapest-offer refresh, in the caller's transaction: the given
    products, every product a merchant offers, and the products of an offer queryset. Returns
    the rows written. Call it for writes that bypass ``save()`` (``QuerySet.update``, raw SQL),
    then ``catalog_cheapest_recompute_request()``.

    The page cache's versions of the same products are recorded too, unless ``page_cache`` is
    off: for a writer that has them replaced itself, later (the feed import, once per import
    through ``offers_changed_deferred``)."""
    ids = sorted({int(i) for i in product_ids if i is not None})
    merchant_ids = sorted({int(i) for i in merchant_ids})
    if page_cache:
        _page_cache_bump(product_ids=ids, merchant_ids=merchant_ids, offers=offers)
    written = 0
    if ids:
        CheapestOfferRefresh.objects.bulk_create(
            [CheapestOfferRefresh(product_id=i) for i in ids], batch_size=1000
        )
        written += len(ids)
    if merchant_ids:
        written += _mark_from(Offer.objects.filter(merchant_id__in=merchant_ids))
    if offers is not None:
        written += _mark_from(Offer.objects.filter(pk__in=offers.order_by().values("pk")))
    return written


def _page_cache_bump(
    *, product_ids: list[int], merchant_ids: list[int], offers: QuerySet[Offer] | None
) -> None:
    """The same writes change cached pages: their versions go on commit."""
    from storefront.caching.versions import cache_versions_bump_on_commit

    if offers is not None:
        product_ids = [*product_ids, *offers.order_by().values_list("product_id", flat=True)]
    # A merchant-wide change (terms, activity) touches every page showing the merchant.
    cache_versions_bump_on_commit(product_ids=product_ids, catalog=True, shared=bool(merchant_ids))


def catalog_cheapest_recompute_request() -> None:
    """Has the pending refreshes recomputed once the current transaction commits.

    Coalesced: one request per transaction however many offers it changed, and (with a
    broker) at most one queued task per process per ``STOREFRONT_CHEAPEST_DEBOUNCE_S``
    (default 2 s); the task runs after that delay and drains everything pending by then.
    """
    if connection.in_atomic_block and any(
        entry[1] is _recompute_enqueue for entry in getattr(connection, "run_on_commit", ())
    ):
        return
    transaction.on_commit(_recompute_enqueue, robust=True)


def _recompute_enqueue() -> None:
    if tasks_run_in_process():
        task_enqueue(RECOMPUTE_TASK)
        return
    debounce = settings.STOREFRONT_CHEAPEST_DEBOUNCE_S
    # The key lives exactly as long as the countdown: a change committed while it exists is
    # committed before the queued task starts, so that task sees it.
    try:
        first = cache.add(_ENQUEUED_KEY, True, timeout=debounce)
    except CacheUnavailable:
        first = True  # nothing to coalesce on: the task drains whatever is pending
    if first:
        # Coalesced: while the broker is down one kept request covers every change.
        task_enqueue(
            RECOMPUTE_TASK,
            countdown=debounce,
            queue=settings.STOREFRONT_CHEAPEST_QUEUE,
            coalesce=True,
        )


# --- recomputing ------------------------------------------------------------------------


def _as_int32_order(values: np.ndarray) -> np.ndarray:
    """The kernel takes int32; prices may reach 10**10 cents and ids may outgrow int32.
    Dense ranks keep the order (and ties) exactly, which is all a minimum needs."""
    if values.size == 0 or (values.min() >= 0 and values.max() <= _INT32_MAX):
        return values.astype(np.int32)
    return np.unique(values, return_inverse=True)[1].astype(np.int32)


def _cheapest(product_ids: np.ndarray, offers: np.ndarray):
    """(offer id or -1, price or -1, buyable count) per product, via the CSR kernel."""
    offsets = np.searchsorted(offers[:, 0], product_ids, side="left").astype(np.int64)
    offsets = np.append(offsets, offers.shape[0])
    count = np.diff(offsets)
    if offers.shape[0] == 0:
        none = np.full(product_ids.size, -1, dtype=np.int64)
        return none, none, count
    result = cheapest_offers(
        offsets, _as_int32_order(offers[:, 2]), _as_int32_order(offers[:, 3]), device=_device()
    )
    found = result.index >= 0
    best = offers[np.maximum(result.index, 0)]
    return np.where(found, best[:, 1], -1), np.where(found, best[:, 3], -1), count


def _lock_chunks() -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_ADVISORY_LOCK_KEY])


def _recompute_chunk(product_ids: np.ndarray) -> CheapestRecomputeResult:
    """One transaction: the refresh rows pending for the products, then their buyable offers
    -> kernel -> stored values; then exactly those refresh rows are deleted."""
    start = time.perf_counter()
    product_ids = np.unique(product_ids)
    io = chunk_io(product_ids)
    refresh_ids = io.refresh_ids()
    offers = io.read_offers()
    offer_id, price, count = _cheapest(product_ids, offers)
    written = io.write(offer_id, price, count, timezone.now())
    io.forget(refresh_ids)
    return CheapestRecomputeResult(
        products=int(product_ids.size),
        written=written,
        offers=int(offers.shape[0]),
        seconds=time.perf_counter() - start,
        device=cheapest_offer_device(_device()),
    )


def _device() -> str:
    return settings.STOREFRONT_CHEAPEST_DEVICE


def _chunk_size() -> int:
    return settings.STOREFRONT_CHEAPEST_CHUNK


def _pending_chunk(chunk: int, never_after: list[int]) -> np.ndarray:
    """The next products to refresh: products with pending refreshes first, then those never
    computed (walked by id from ``never_after[0]``, which it advances)."""
    first = CheapestOfferRefresh.objects.order_by("id").values_list("product_id", flat=True)
    product_ids = np.array(list(first[:chunk]), dtype=np.int64)
    if product_ids.size:
        return product_ids
    never = Product.objects.filter(stored_cheapest__isnull=True, pk__gt=never_after[0])
    ids = np.array(list(never.order_by("id").values_list("id", flat=True)[:chunk]), np.int64)
    if ids.size:
        never_after[0] = int(ids[-1])
    return ids


def _drain_pending(chunk: int) -> CheapestRecomputeResult:
    total = CheapestRecomputeResult()
    deadline = time.monotonic() + settings.STOREFRONT_CHEAPEST_DRAIN_S
    never_after = [0]
    while True:
        with transaction.atomic():
            _lock_chunks()
            product_ids = _pending_chunk(chunk, never_after)
            if product_ids.size == 0:
                return total
            total += _recompute_chunk(product_ids)
        if time.monotonic() > deadline:
            # Writers keep adding work: hand the rest to a fresh task rather than run forever.
            catalog_cheapest_recompute_request()
            return total


def _recompute_ids(ids: np.ndarray, chunk: int) -> CheapestRecomputeResult:
    total = CheapestRecomputeResult()
    for lo in range(0, ids.size, chunk):
        part = ids[lo : lo + chunk]
        with transaction.atomic():
            _lock_chunks()
            total += _recompute_chunk(part)
    return total


def _recompute_all(chunk: int) -> CheapestRecomputeResult:
    total = CheapestRecomputeResult()
    after = 0
    while True:
        ids = np.array(
            list(
                Product.objects.filter(pk__gt=after)
                .order_by("id")
                .values_list("id", flat=True)[:chunk]
            ),
            dtype=np.int64,
        )
        if ids.size == 0:
            return total
        total += _recompute_ids(ids, chunk)
        after = int(ids[-1])


def catalog_cheapest_recompute(
    *, product_ids: Iterable[int] | None = None, all_products: bool = False
) -> CheapestRecomputeResult:
    """Recomputes and stores the cheapest buyable offer of products: the given ones, every
    product (``all_products``), or by default every product with a pending refresh or never
    computed. Idempotent; writes only products whose stored values change (or were unset)."""
    chunk = _chunk_size()
    if product_ids is not None:
        ids = np.unique(np.fromiter((int(i) for i in product_ids), dtype=np.int64))
        result = _recompute_ids(ids, chunk)
    elif all_products:
        result = _recompute_all(chunk)
    else:
        result = _drain_pending(chunk)
    logger.info(
        "cheapest offers: %d products (%d written, %d buyable offers) in %.2f s",
        result.products,
        result.written,
        result.offers,
        result.seconds,
    )
    return result
