"""The feed's fulfillment columns: ``warehouse`` (stock per warehouse), ``weight_g`` (the
product's weight) and ``merchant`` (rows for another merchant refused); old feeds import as
before. Runs on SQLite and, with DATABASE_URL, on PostgreSQL (the COPY writer)."""

import csv
import io

import pytest
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from storefront.fulfillment.services import warehouse_create
from storefront.fulfillment.stock import warehouse_stock_set
from storefront.imports.services import import_job_create, import_job_run
from storefront.models import ImportJob, MerchantStaff, Offer, Product, WarehouseStock
from tests.factories import MerchantFactory, ProductFactory, UserFactory

pytestmark = pytest.mark.django_db

HEADER = "gtin,merchant_sku,price,stock,active,warehouse,weight_g"


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.SHOP_CURRENCY = "EUR"


@pytest.fixture
def merchant():
    merchant = MerchantFactory(slug="acme")
    warehouse_create(merchant=merchant, name="Hamburg", adopt=False)
    warehouse_create(merchant=merchant, name="Munich", adopt=False)
    return merchant


@pytest.fixture
def products():
    return [ProductFactory() for _ in range(4)]


def run(text: str, *, merchant, created_by=None, batch_size=2) -> ImportJob:
    job = import_job_create(
        merchant=merchant,
        file=ContentFile(text.encode(), name="feed.csv"),
        batch_size=batch_size,
        created_by=created_by,
        enqueue=False,
    )
    return import_job_run(job_id=job.pk)


def feed(*rows: str, header: str = HEADER) -> str:
    return "\n".join([header, *rows]) + "\n"


def report(job: ImportJob) -> list[tuple[str, str, str]]:
    if not job.error_report:
        return []
    with job.error_report.open("rb") as handle:
        rows = csv.DictReader(io.StringIO(handle.read().decode()))
        return [(row["row"], row["field"], row["message"]) for row in rows]


def stock_at(merchant) -> dict[tuple[str, str], int | None]:
    return {
        (row.offer.merchant_sku, row.warehouse.name): row.stock
        for row in WarehouseStock.objects.filter(offer__merchant=merchant).select_related(
            "offer", "warehouse"
        )
    }


def totals(merchant) -> dict[str, int | None]:
    return dict(Offer.objects.filter(merchant=merchant).values_list("merchant_sku", "stock"))


def test_one_row_per_warehouse_writes_stock_there_and_the_offer_total(merchant, products):
    p = products
    job = run(
        feed(
            f"{p[0].gtin},MON-1,199.00,3,true,Hamburg,7200",
            f"{p[0].gtin},MON-1,199.00,2,true,Munich,7200",
            f"{p[1].gtin},KET-1,29.99,,true,Munich,1500",
        ),
        merchant=merchant,
    )
    assert job.status == "done", job.message
    assert (job.rows_valid, job.rows_failed, job.offers_created) == (3, 0, 2)
    assert stock_at(merchant) == {
        ("MON-1", "Hamburg"): 3,
        ("MON-1", "Munich"): 2,
        ("KET-1", "Munich"): None,
    }
    assert totals(merchant) == {"MON-1": 5, "KET-1": None}
    weights = dict(Product.objects.filter(pk__in=[p[0].pk, p[1].pk]).values_list("pk", "weight_g"))
    assert weights == {p[0].pk: 7200, p[1].pk: 1500}
    assert "3 warehouse stock rows written, 2 product weights set" in job.message
    # A re-run changes nothing.
    again = run(
        feed(
            f"{p[0].gtin},MON-1,199.00,3,true,Hamburg,7200",
            f"{p[0].gtin},MON-1,199.00,2,true,Munich,7200",
            f"{p[1].gtin},KET-1,29.99,,true,Munich,1500",
        ),
        merchant=merchant,
    )
    assert (again.offers_created, again.offers_updated) == (0, 0)
    assert "warehouse stock" not in again.message and "weights" not in again.message
    # Stock moves between warehouses; the total follows.
    moved = run(
        feed(
            f"{p[0].gtin},MON-1,189.00,0,true,Hamburg,",
            f"{p[0].gtin},MON-1,189.00,9,true,Munich,",
        ),
        merchant=merchant,
    )
    assert (moved.rows_valid, moved.offers_updated) == (2, 1), report(moved)
    assert stock_at(merchant)[("MON-1", "Hamburg")] == 0
    assert totals(merchant)["MON-1"] == 9
    assert Offer.objects.get(merchant_sku="MON-1").unit_price == 18900


def test_old_feeds_import_unchanged_for_a_merchant_without_warehouses(products):
    merchant = MerchantFactory()
    job = run(
        feed(f"{products[0].gtin},A,1.00,4,true", header="gtin,merchant_sku,price,stock,active"),
        merchant=merchant,
    )
    assert job.status == "done" and job.message.endswith("unchanged, 0 superseded.")
    assert totals(merchant) == {"A": 4} and not WarehouseStock.objects.exists()


def test_row_errors_of_the_new_columns(merchant, products):
    p = products
    job = run(
        feed(
            f"{p[0].gtin},A,1.00,1,true,Leipzig,",  # no such warehouse
            f"{p[1].gtin},B,1.00,1,true,,",  # this merchant ships from warehouses
            f"{p[2].gtin},C,1.00,1,true,Hamburg,heavy",
            f"{p[2].gtin},C,1.00,1,true,Munich,100",  # its other row failed
            f"{p[3].gtin},D,1.00,1,true,Hamburg,",
            f"{p[3].gtin},D,2.00,1,true,Munich,",  # rows of one SKU disagree
            f"{p[0].gtin},E,1.00,1,true,Hamburg,",
            f"{p[0].gtin},E,1.00,2,true,Hamburg,",  # twice at one warehouse
        ),
        merchant=merchant,
    )
    assert job.status == "done" and job.rows_valid == 0
    errors = report(job)
    fields = [(row, field) for row, field, _ in errors]
    assert ("2", "warehouse") in fields and ("3", "warehouse") in fields
    assert ("4", "weight_g") in fields and ("5", "merchant_sku") in fields
    messages = " ".join(message for _, _, message in errors)
    assert "No warehouse 'Leipzig' at this merchant; its warehouses are 'Hamburg', 'Munich'" in (
        messages
    )
    assert "ships from its warehouses" in messages
    assert "different price" in messages
    assert "at one warehouse" in messages
    assert not Offer.objects.filter(merchant=merchant).exists()


def test_rows_for_another_merchant_are_refused(merchant, products):
    job = run(
        feed(
            f"{products[0].gtin},A,1.00,1,true,Hamburg,acme",
            f"{products[1].gtin},B,1.00,1,true,Hamburg,globex",
            header="gtin,merchant_sku,price,stock,active,warehouse,merchant",
        ),
        merchant=merchant,
    )
    assert (job.rows_valid, job.rows_failed) == (1, 1)
    assert report(job) == [
        (
            "3",
            "merchant",
            "This row is for merchant 'globex'; this is the feed of 'acme', so it was not "
            "imported.",
        )
    ]
    assert set(totals(merchant)) == {"A"}


def test_merchant_staff_set_weights_only_where_none_is_set(merchant, products):
    staff = UserFactory()
    MerchantStaff.objects.create(user=staff, merchant=merchant)
    heavy, unknown = products[0], products[1]
    Product.objects.filter(pk=heavy.pk).update(weight_g=7000)
    job = run(
        feed(
            f"{heavy.gtin},A,1.00,1,true,Hamburg,100",
            f"{unknown.gtin},B,1.00,1,true,Hamburg,250",
            f"{products[2].gtin},C,1.00,1,true,Hamburg,7000",
        ),
        merchant=merchant,
        created_by=staff,
    )
    assert [(row, field) for row, field, _ in report(job)] == [("2", "weight_g")]
    assert "gives this product 7000 g" in report(job)[0][2]
    assert Product.objects.get(pk=unknown.pk).weight_g == 250
    # A catalog admin's import may correct a weight.
    run(feed(f"{heavy.gtin},A,1.00,1,true,Hamburg,6500"), merchant=merchant)
    assert Product.objects.get(pk=heavy.pk).weight_g == 6500


def test_a_stocked_offer_keeps_its_total_when_a_row_changes_only_its_price(merchant, products):
    run(feed(f"{products[0].gtin},A,1.00,4,true,Hamburg,"), merchant=merchant)
    offer = Offer.objects.get(merchant_sku="A")
    warehouse_stock_set(offer=offer, warehouse=merchant.warehouses.get(name="Munich"), stock=3)
    job = run(feed(f"{products[0].gtin},A,2.00,4,true,Hamburg,"), merchant=merchant)
    assert job.offers_updated == 1
    assert totals(merchant) == {"A": 7}


@pytest.fixture
def staff_a(client, merchant):
    user = UserFactory(username="staff-a", is_staff=True)
    MerchantStaff.objects.create(user=user, merchant=merchant)
    client.force_login(user)
    return client


def test_merchant_staff_upload_their_own_feed_only(
    staff_a, merchant, products, django_capture_on_commit_callbacks
):
    other = MerchantFactory(slug="globex")
    text = feed(
        f"{products[0].gtin},A,1.00,1,true,Hamburg,acme",
        f"{products[1].gtin},B,1.00,1,true,Hamburg,globex",
        header="gtin,merchant_sku,price,stock,active,warehouse,merchant",
    )
    add = reverse("admin:storefront_importjob_add")
    upload = SimpleUploadedFile("offers.csv", text.encode(), content_type="text/csv")
    response = staff_a.post(add, {"merchant": other.pk, "file": upload, "format": ""})
    assert response.status_code == 200 and "Select a valid choice" in response.content.decode()
    assert not ImportJob.objects.exists()
    upload = SimpleUploadedFile("offers.csv", text.encode(), content_type="text/csv")
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_a.post(add, {"merchant": merchant.pk, "file": upload, "format": ""})
    assert response.status_code == 302
    job = ImportJob.objects.get()
    assert (job.status, job.rows_valid, job.rows_failed) == ("done", 1, 1)
    # The same error report the catalog admin gets, downloadable by them.
    report_url = reverse("admin:storefront_importjob_error_report", args=[job.pk])
    body = b"".join(staff_a.get(report_url).streaming_content).decode()
    assert "this is the feed of 'acme'" in body
    # Another merchant's import: not theirs to see.
    theirs = import_job_create(merchant=other, file=ContentFile(b"x", name="f.csv"), enqueue=False)
    assert (
        staff_a.get(reverse("admin:storefront_importjob_change", args=[theirs.pk])).status_code
        == 404
    )
    feed_url = reverse("admin:storefront_importjob_feed", args=[theirs.pk])
    assert staff_a.get(feed_url).status_code == 403
    listed = staff_a.get(reverse("admin:storefront_importjob_changelist"))
    assert [row.pk for row in listed.context["cl"].result_list] == [job.pk]


def test_json_lines_take_the_new_fields_too(merchant, products):
    lines = [
        f'{{"gtin": "{products[0].gtin}", "merchant_sku": "J-1", "price": 5.50, '
        '"stock": 2, "warehouse": "Munich", "weight_g": 480, "merchant": "acme"}',
        f'{{"gtin": "{products[0].gtin}", "merchant_sku": "J-1", "price": 5.50, '
        '"stock": null, "warehouse": "Hamburg", "weight_g": 480}',
    ]
    job = import_job_create(
        merchant=merchant,
        file=ContentFile(("\n".join(lines) + "\n").encode(), name="feed.jsonl"),
        enqueue=False,
    )
    job = import_job_run(job_id=job.pk)
    assert (job.status, job.rows_valid) == ("done", 2), report(job)
    assert stock_at(merchant) == {("J-1", "Munich"): 2, ("J-1", "Hamburg"): None}
    assert totals(merchant) == {"J-1": None}
    assert Product.objects.get(pk=products[0].pk).weight_g == 480
