"""One run per burst of changes, in-process and with a broker; one run at a time."""

import pytest
from django.core.cache import cache
from django.db import transaction

from smartcart.models import PriceWatchChange, PriceWatchRun
from smartcart.pricewatch import services, tasks
from smartcart.pricewatch.services import PriceWatchBusy, price_watch_run
from storefront.catalog.services import offer_update
from tests.factories import OfferFactory

pytestmark = pytest.mark.django_db


def test_in_process_one_transaction_is_one_run(change_prices):
    offers = [OfferFactory() for _ in range(5)]
    PriceWatchRun.objects.all().delete()
    change_prices(*[(offer, 123) for offer in offers])
    run = PriceWatchRun.objects.get()
    assert run.products_changed == 5


def test_nothing_runs_when_turned_off(change_prices, settings):
    settings.SMARTCART_PRICE_WATCH = False
    offer = OfferFactory()
    change_prices((offer, 123))
    assert not PriceWatchRun.objects.exists()
    assert not PriceWatchChange.objects.exists()


@pytest.fixture
def broker(settings, monkeypatch):
    """Tasks sent to a broker (recorded, not run), as with REDIS_URL set."""
    sent = []
    conf = tasks.price_watch_run_task.app.conf
    eager = conf.task_always_eager
    conf.task_always_eager = False
    monkeypatch.setattr(
        tasks.price_watch_run_task, "apply_async", lambda **kwargs: sent.append(kwargs)
    )
    settings.SMARTCART_PRICE_WATCH_COUNTDOWN_S = 5
    cache.clear()
    yield sent
    conf.task_always_eager = eager


def test_with_a_broker_a_burst_of_transactions_schedules_one_task(
    broker, settings, django_capture_on_commit_callbacks
):
    settings.SMARTCART_GPU_QUEUE = True
    offers = [OfferFactory() for _ in range(3)]
    for offer in offers:  # three separate commits within the countdown
        with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
            offer_update(offer=offer, unit_price=321)
    assert broker == [{"kwargs": {"route": "gpu"}, "countdown": 5, "queue": "gpu"}]
    assert set(PriceWatchChange.objects.values_list("product_id", flat=True)) >= {
        offer.product_id for offer in offers
    }
    cache.clear()  # the countdown passed: the next change schedules the next run
    with django_capture_on_commit_callbacks(execute=True):
        offer_update(offer=offers[0], unit_price=322)
    assert len(broker) == 2


def test_without_gpu_workers_the_run_goes_to_cpu(
    broker, settings, django_capture_on_commit_callbacks
):
    settings.SMARTCART_GPU_QUEUE = False
    offer = OfferFactory()
    with django_capture_on_commit_callbacks(execute=True):
        offer_update(offer=offer, unit_price=321)
    assert broker[0]["queue"] == "cpu"


def test_one_run_at_a_time_and_a_lost_one_is_taken_over(settings):
    PriceWatchRun.objects.create()
    with pytest.raises(PriceWatchBusy):
        price_watch_run()
    PriceWatchRun.objects.update(started_at="2000-01-01T00:00:00Z")
    assert price_watch_run().status == "done"
    assert PriceWatchRun.objects.filter(status="failed").count() == 1


def test_a_busy_task_retries_on_a_worker_and_returns_in_process(monkeypatch):
    PriceWatchRun.objects.create()
    tasks.price_watch_run_task.apply(kwargs={"route": "cpu"})  # in-process: no error
    assert PriceWatchRun.objects.count() == 1
    assert PriceWatchBusy in tasks.price_watch_run_task.autoretry_for


def test_changes_recorded_during_a_run_wait_for_the_next(monkeypatch):
    offer = OfferFactory()
    services.price_watch_changes_record(product_ids=[offer.product_id], merchant_ids=[])
    real = services.price_watch_carts_affected

    def meanwhile(**kwargs):
        services.price_watch_changes_record(product_ids=[999_999], merchant_ids=[])
        return real(**kwargs)

    monkeypatch.setattr(services, "price_watch_carts_affected", meanwhile)
    price_watch_run()
    assert list(PriceWatchChange.objects.values_list("product_id", flat=True)) == [999_999]


def test_a_cache_outage_still_schedules_the_run(
    broker, monkeypatch, django_capture_on_commit_callbacks
):
    from storefront.caching.cache import CacheUnavailable

    def down(*args, **kwargs):
        raise CacheUnavailable("cache is down")

    monkeypatch.setattr(services.cache, "add", down)
    offer = OfferFactory()
    with django_capture_on_commit_callbacks(execute=True):
        offer_update(offer=offer, unit_price=321)
    assert len(broker) == 1


def test_in_process_a_multi_batch_feed_import_is_one_run(
    settings, tmp_path, django_capture_on_commit_callbacks
):
    from django.core.files.base import ContentFile

    from storefront.imports.services import import_job_create, import_job_run
    from tests.factories import CartFactory, CartLineFactory, MerchantFactory

    settings.MEDIA_ROOT = tmp_path / "media"
    feed_merchant = MerchantFactory(slug="feed")
    offers = [OfferFactory(unit_price=2000) for _ in range(6)]
    cart = CartFactory()
    for offer in offers:
        CartLineFactory(cart=cart, offer=offer)
    rows = [f"{o.product.gtin},F-{n},5.00,9,1" for n, o in enumerate(offers)]
    feed = "gtin,merchant_sku,price,stock,active\n" + "\n".join(rows) + "\n"
    job = import_job_create(
        merchant=feed_merchant,
        file=ContentFile(feed.encode(), name="feed.csv"),
        format="",
        batch_size=2,
        enqueue=False,
    )
    with django_capture_on_commit_callbacks(execute=True):
        job = import_job_run(job_id=job.pk)
    assert job.batches_committed == 3
    run = PriceWatchRun.objects.get()
    assert (run.products_changed, run.carts_checked) == (6, 1)
