"""Celery wiring of the catalog: what is enqueued, when (on commit), how often (coalesced),
and that the tasks call the services."""

from unittest import mock

import pytest
from celery.exceptions import Retry
from django.core.cache import cache
from django.core.files.base import ContentFile
from django.db import transaction

from storefront.catalog import cheapest, services
from storefront.catalog.tasks import catalog_cheapest_recompute_task
from storefront.config.celery import app
from storefront.errors import Conflict
from storefront.imports import services as imports
from storefront.imports.tasks import import_job_run_task
from storefront.models import CheapestOfferRefresh, ImportJob, ProductCheapest
from tests.factories import MerchantFactory, OfferFactory, ProductFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def broker():
    """A real-broker configuration (not eager), with the sending mocked."""
    cache.delete(cheapest._ENQUEUED_KEY)
    eager = app.conf.task_always_eager
    app.conf.task_always_eager = False
    try:
        with (
            mock.patch.object(catalog_cheapest_recompute_task, "apply_async") as recompute,
            mock.patch.object(import_job_run_task, "apply_async") as run_import,
        ):
            yield recompute, run_import
    finally:
        app.conf.task_always_eager = eager
        cache.delete(cheapest._ENQUEUED_KEY)


def _recompute_callbacks(callbacks) -> int:
    return sum(callback is cheapest._recompute_enqueue for callback in callbacks)


def test_tasks_are_registered_under_stable_names():
    for task in (catalog_cheapest_recompute_task, import_job_run_task):
        registered = app.tasks[task.name]
        assert registered.acks_late and registered.reject_on_worker_lost
    assert catalog_cheapest_recompute_task.name == "storefront.catalog_cheapest_recompute"
    assert import_job_run_task.name == "storefront.import_job_run"


# Real transactions here: inside a test's own transaction every earlier save (the factories')
# would already hold this transaction's one recompute request.


@pytest.mark.django_db(transaction=True)
def test_offer_changes_request_one_recompute_per_transaction_after_commit(
    django_capture_on_commit_callbacks,
):
    offers = [OfferFactory(unit_price=900) for _ in range(3)]
    with transaction.atomic(), django_capture_on_commit_callbacks() as callbacks:
        for offer in offers:
            services.offer_update(offer=offer, unit_price=100)
        services.offer_create(
            product=offers[0].product, merchant=MerchantFactory(), merchant_sku="X", unit_price=5
        )
        # Nothing runs before the commit.
        assert set(ProductCheapest.objects.values_list("price", flat=True)) == {900}
    assert _recompute_callbacks(callbacks) == 1
    assert sorted(ProductCheapest.objects.values_list("price", flat=True)) == [5, 100, 100]


@pytest.mark.django_db(transaction=True)
def test_without_a_broker_the_recompute_runs_in_process_after_commit():
    offer = OfferFactory(unit_price=900)
    assert ProductCheapest.objects.get(product=offer.product).price == 900
    with transaction.atomic():
        services.offer_update(offer=offer, unit_price=450)
        assert CheapestOfferRefresh.objects.exists()
        assert ProductCheapest.objects.get(product=offer.product).price == 900
    assert not CheapestOfferRefresh.objects.exists()
    assert ProductCheapest.objects.get(product=offer.product).price == 450


def test_with_a_broker_requests_are_debounced_into_one_queued_task(broker, settings):
    recompute, _ = broker
    settings.STOREFRONT_CHEAPEST_DEBOUNCE_S = 5
    settings.STOREFRONT_CHEAPEST_QUEUE = "gpu"
    for _ in range(3):
        cheapest._recompute_enqueue()
    recompute.assert_called_once_with(countdown=5.0, queue="gpu")


def test_an_import_requests_one_recompute_when_it_is_done(
    broker, django_capture_on_commit_callbacks
):
    recompute, _ = broker
    product = ProductFactory()
    job = imports.import_job_create(
        merchant=MerchantFactory(),
        file=ContentFile(f"gtin,merchant_sku,price,stock,active\n{product.gtin},S,1,,\n".encode(),
                         name="f.csv"),
        batch_size=1,
        enqueue=False,
    )  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        imports.import_job_run(job_id=job.pk)
    assert _recompute_callbacks(callbacks) == 1
    assert recompute.call_count == 1


def test_creating_an_import_enqueues_its_task_on_commit(broker, django_capture_on_commit_callbacks):
    _, run_import = broker
    with django_capture_on_commit_callbacks(execute=True):
        job = imports.import_job_create(
            merchant=MerchantFactory(), file=ContentFile(b"gtin\n", name="f.csv")
        )
        run_import.assert_not_called()
    run_import.assert_called_once_with(args=[job.pk], queue="cpu")


def test_without_a_broker_the_import_runs_in_process_on_commit(
    django_capture_on_commit_callbacks,
):
    product = ProductFactory()
    content = f"gtin,merchant_sku,price,stock,active\n{product.gtin},S,2.50,,\n".encode()
    with django_capture_on_commit_callbacks(execute=True):
        job = imports.import_job_create(
            merchant=MerchantFactory(), file=ContentFile(content, name="f.csv")
        )
    job.refresh_from_db()
    assert (job.status, job.offers_created) == (ImportJob.Status.DONE, 1)


def test_the_import_task_retries_later_while_the_merchant_is_busy(monkeypatch):
    def busy(*, job_id):
        raise Conflict("busy", code="import_busy")

    monkeypatch.setattr(imports, "import_job_run", busy)
    import_job_run_task.push_request(is_eager=False, retries=0)
    try:
        with (
            mock.patch.object(import_job_run_task, "retry", side_effect=Retry) as retry,
            pytest.raises(Retry),
        ):
            import_job_run_task.run(1)
        retry.assert_called_once_with(countdown=30)
    finally:
        import_job_run_task.pop_request()


def test_the_recompute_task_calls_the_service():
    offers = [OfferFactory() for _ in range(2)]
    catalog_cheapest_recompute_task.apply(kwargs={"product_ids": [offers[0].product_id]})
    assert list(ProductCheapest.objects.values_list("product_id", flat=True)) == [
        offers[0].product_id
    ]
    catalog_cheapest_recompute_task.apply(kwargs={"all_products": True})
    assert ProductCheapest.objects.count() == 2
