"""Offer feed import: every row-level failure, the rules across rows, re-runs, crashes and
resumes, CSV and JSON Lines, header and file errors. Runs on SQLite (the ORM writer) and, with
DATABASE_URL, on PostgreSQL (the COPY writer); both must give the same results."""

import csv
import gzip
import io
from contextlib import contextmanager
from datetime import timedelta

import pytest
from django.core.files.base import ContentFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from storefront.caching.versions import CATALOG, product_version_name
from storefront.catalog.offer_changes import DeferredChanges
from storefront.errors import Conflict, ValidationFailed
from storefront.imports import batches, resolve, services, writers
from storefront.imports.services import (
    import_format_detect,
    import_job_create,
    import_job_resume,
    import_job_run,
)
from storefront.models import CheapestOfferRefresh, ImportJob, Offer
from storefront.validators import gtin_check_digit
from tests.factories import MerchantFactory, OfferFactory, ProductFactory

pytestmark = pytest.mark.django_db

HEADER = "gtin,merchant_sku,price,stock,active"


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.SHOP_CURRENCY = "EUR"


@pytest.fixture
def merchant():
    return MerchantFactory(slug="acme")


@pytest.fixture
def products():
    return [ProductFactory() for _ in range(6)]


def gtin(payload: str) -> str:
    return payload + str(gtin_check_digit(payload))


def csv_feed(*rows: str, header: str = HEADER) -> str:
    return "\n".join([header, *rows]) + "\n"


def run(content, *, merchant, name="feed.csv", batch_size=2, format=""):
    data = content.encode() if isinstance(content, str) else content
    job = import_job_create(
        merchant=merchant,
        file=ContentFile(data, name=name),
        format=format,
        batch_size=batch_size,
        enqueue=False,
    )
    return import_job_run(job_id=job.pk)


def report(job: ImportJob) -> list[dict]:
    if not job.error_report:
        return []
    with job.error_report.open("rb") as handle:
        return list(csv.DictReader(io.StringIO(handle.read().decode())))


def offers(merchant) -> dict[str, tuple]:
    return {
        offer.merchant_sku: (offer.product_id, offer.unit_price, offer.stock, offer.active)
        for offer in Offer.objects.filter(merchant=merchant)
    }


# --- the happy path -------------------------------------------------------------------------


def test_csv_creates_offers_in_exact_cents_with_stock_and_flags(merchant, products):
    p = products
    job = run(
        csv_feed(
            f"{p[0].gtin},A-1,12.99,,true",
            f"{p[1].gtin},A-2,0.50,7,FALSE",
            f"{p[2].gtin},A-3,100,0,yes",
            f"{p[3].gtin},A-4,19.9,3,",
        ),
        merchant=merchant,
    )
    assert job.status == ImportJob.Status.DONE, job.message
    assert offers(merchant) == {
        "A-1": (p[0].pk, 1299, None, True),
        "A-2": (p[1].pk, 50, 7, False),
        "A-3": (p[2].pk, 10000, 0, True),
        "A-4": (p[3].pk, 1990, 3, True),
    }
    assert (job.rows_total, job.rows_valid, job.rows_failed) == (4, 4, 0)
    assert (job.offers_created, job.offers_updated, job.offers_unchanged) == (4, 0, 0)
    assert (job.batches_total, job.batches_committed, job.rows_processed) == (2, 2, 4)
    assert job.progress_percent == 100
    assert not job.error_report
    assert "4 offers created" in job.message


@pytest.mark.parametrize(
    ("column", "text", "cents"),
    [
        ("price", "12.99", 1299),
        ("price", "12.9", 1290),
        ("price", "12", 1200),
        ("price", " 7.05 ", 705),
        ("price", "007.10", 710),
        ("price", "0", 0),
        ("price", "100000000.00", 10**10),
        ("price_cents", "1299", 1299),
        ("price_cents", "0", 0),
    ],
)
def test_prices_become_integer_cents_without_floats(merchant, products, column, text, cents):
    header = HEADER.replace("price", column)
    job = run(csv_feed(f'{products[0].gtin},S,"{text}",,true', header=header), merchant=merchant)
    assert job.rows_failed == 0, report(job)
    assert Offer.objects.get(merchant=merchant).unit_price == cents


# --- every kind of bad row ------------------------------------------------------------------


BAD_ROWS = [
    # (gtin, sku, price, stock, active) -> field, part of the message
    pytest.param(("{bad_check}", "B", "1.00", "", "true"), "gtin", "wrong check digit", id="check"),
    pytest.param(("40012345X789", "B", "1.00", "", "true"), "gtin", "digits only", id="letters"),
    pytest.param(("12345678901", "B", "1.00", "", "true"), "gtin", "has 11 digits", id="length"),
    pytest.param(("{unknown}", "B", "1.00", "", "true"), "gtin", "No product", id="unknown"),
    pytest.param(("", "B", "1.00", "", "true"), "gtin", "missing", id="no-gtin"),
    pytest.param(("{gtin}", "B", "-1.00", "", "true"), "price", "negative", id="neg-price"),
    pytest.param(("{gtin}", "B", "12,99", "", "true"), "price", "like 12.99", id="comma"),
    pytest.param(("{gtin}", "B", "€12", "", "true"), "price", "like 12.99", id="symbol"),
    pytest.param(("{gtin}", "B", "1e3", "", "true"), "price", "like 12.99", id="exponent"),
    pytest.param(("{gtin}", "B", "12.", "", "true"), "price", "like 12.99", id="dot"),
    pytest.param(("{gtin}", "B", "12.999", "", "true"), "price", "more than 2", id="decimals"),
    pytest.param(("{gtin}", "B", "100000000.01", "", "true"), "price", "maximum", id="huge"),
    pytest.param(("{gtin}", "B", "", "", "true"), "price", "missing", id="no-price"),
    pytest.param(("{gtin}", "B", "1.00", "-3", "true"), "stock", "negative", id="neg-stock"),
    pytest.param(("{gtin}", "B", "1.00", "1.5", "true"), "stock", "whole", id="frac-stock"),
    pytest.param(("{gtin}", "B", "1.00", "many", "true"), "stock", "whole", id="word-stock"),
    pytest.param(("{gtin}", "B", "1.00", "9999999999", "true"), "stock", "too large", id="big"),
    pytest.param(("{gtin}", "B", "1.00", "", "maybe"), "active", "not a flag", id="flag"),
    pytest.param(("{gtin}", "", "1.00", "", "true"), "merchant_sku", "missing", id="no-sku"),
    pytest.param(("{gtin}", "X" * 65, "1.00", "", "true"), "merchant_sku", "64", id="long-sku"),
]


@pytest.mark.parametrize(("row", "field", "message"), BAD_ROWS)
def test_a_bad_row_is_reported_and_the_good_rows_still_land(
    merchant, products, row, field, message
):
    values = {
        "gtin": products[1].gtin,
        "bad_check": products[1].gtin[:-1] + str((int(products[1].gtin[-1]) + 1) % 10),
        "unknown": gtin("499999999999"),
    }
    cells = [cell.format(**values) for cell in row]
    bad = ",".join(f'"{cell}"' if "," in cell else cell for cell in cells)
    job = run(csv_feed(f"{products[0].gtin},GOOD,1.00,,true", bad), merchant=merchant)
    assert job.status == ImportJob.Status.DONE
    assert set(offers(merchant)) == {"GOOD"}
    assert (job.rows_valid, job.rows_failed) == (1, 1)
    (line,) = report(job)
    assert (line["row"], line["sku"], line["field"]) == ("3", row[1], field)
    assert message in line["message"]


def test_nul_characters_never_pass_for_a_value(merchant, products):
    job = run(
        csv_feed(f"{products[0].gtin},A\0B,1.00,,true", f"{products[1].gtin},C,1.00,5\0,true"),
        merchant=merchant,
    )
    sku, stock = report(job)
    assert sku["field"] == "merchant_sku" and "control characters" in sku["message"]
    # The report shows the NUL rather than carrying it into a spreadsheet.
    assert stock["field"] == "stock" and "'5\\0' is not a whole number" in stock["message"]
    assert not Offer.objects.exists()


def test_a_row_failing_several_ways_gets_a_report_line_for_each(merchant, products):
    job = run(csv_feed(f"{products[0].gtin},S,-1,lots,perhaps"), merchant=merchant)
    assert job.rows_failed == 1
    assert sorted(line["field"] for line in report(job)) == ["active", "price", "stock"]


def test_every_occurrence_of_a_duplicate_sku_is_refused(merchant, products):
    OfferFactory(merchant=merchant, product=products[0], merchant_sku="DUP", unit_price=500)
    job = run(
        csv_feed(
            f"{products[0].gtin},DUP,1.00,,true",
            f"{products[1].gtin},OK,2.00,,true",
            f"{products[2].gtin},DUP,3.00,,false",
        ),
        merchant=merchant,
    )
    lines = report(job)
    assert [(line["row"], line["field"]) for line in lines] == [
        ("2", "merchant_sku"),
        ("4", "merchant_sku"),
    ]
    assert "lines 2, 4" in lines[0]["message"]
    # The existing offer keeps its price: neither duplicate row is believed.
    assert offers(merchant)["DUP"][1] == 500
    assert set(offers(merchant)) == {"DUP", "OK"}


def test_two_active_skus_for_one_product_are_refused_but_an_inactive_one_is_fine(
    merchant, products
):
    job = run(
        csv_feed(
            f"{products[0].gtin},A,1.00,,true",
            f"{products[0].gtin},B,2.00,,true",
            f"{products[1].gtin},C,3.00,,true",
            f"{products[1].gtin},D,4.00,,false",
        ),
        merchant=merchant,
    )
    assert [line["row"] for line in report(job)] == ["2", "3"]
    assert "several active SKUs" in report(job)[0]["message"]
    assert offers(merchant) == {
        "C": (products[1].pk, 300, None, True),
        "D": (products[1].pk, 400, None, False),
    }


def test_a_new_active_sku_supersedes_the_merchants_old_offer_for_the_product(merchant, products):
    old = OfferFactory(merchant=merchant, product=products[0], merchant_sku="OLD")
    other = OfferFactory(product=products[0], merchant_sku="OLD")  # another merchant's
    job = run(csv_feed(f"{products[0].gtin},NEW,9.99,,true"), merchant=merchant)
    assert (job.offers_created, job.offers_superseded) == (1, 1)
    old.refresh_from_db()
    other.refresh_from_db()
    assert not old.active and other.active
    assert offers(merchant)["NEW"] == (products[0].pk, 999, None, True)


def test_the_old_sku_listed_inactive_in_the_same_feed_is_consistent(merchant, products):
    OfferFactory(merchant=merchant, product=products[0], merchant_sku="OLD", unit_price=100)
    job = run(
        csv_feed(f"{products[0].gtin},NEW,2.00,,true", f"{products[0].gtin},OLD,1.00,,false"),
        merchant=merchant,
        batch_size=1,
    )
    assert job.rows_failed == 0
    assert offers(merchant) == {
        "NEW": (products[0].pk, 200, None, True),
        "OLD": (products[0].pk, 100, None, False),
    }
    assert (job.offers_created, job.offers_superseded, job.offers_unchanged) == (1, 1, 1)


def test_a_sku_cannot_move_to_another_product(merchant, products):
    OfferFactory(merchant=merchant, product=products[0], merchant_sku="S1", unit_price=100)
    job = run(csv_feed(f"{products[1].gtin},S1,2.00,,true"), merchant=merchant)
    (line,) = report(job)
    assert line["field"] == "gtin"
    assert f"for GTIN {products[0].gtin}" in line["message"]
    assert offers(merchant) == {"S1": (products[0].pk, 100, None, True)}


# --- re-runs --------------------------------------------------------------------------------


def test_importing_the_same_file_again_changes_nothing(merchant, products):
    feed = csv_feed(*(f"{p.gtin},S{i},{i}.25,{i},true" for i, p in enumerate(products)), "x,y,z,,")
    first = run(feed, merchant=merchant)
    stamps = dict(Offer.objects.values_list("merchant_sku", "updated_at"))
    CheapestOfferRefresh.objects.all().delete()
    again = run(feed, merchant=merchant)
    assert again.status == ImportJob.Status.DONE
    assert (again.offers_created, again.offers_updated, again.offers_superseded) == (0, 0, 0)
    assert again.offers_unchanged == first.offers_created == 6
    assert dict(Offer.objects.values_list("merchant_sku", "updated_at")) == stamps
    assert not CheapestOfferRefresh.objects.exists()
    assert report(again) == report(first)


def test_a_changed_price_updates_that_offer_only(merchant, products):
    rows = [f"{p.gtin},S{i},1.00,,true" for i, p in enumerate(products[:3])]
    run(csv_feed(*rows), merchant=merchant)
    before = dict(Offer.objects.values_list("merchant_sku", "updated_at"))
    rows[1] = rows[1].replace("1.00", "1.01")
    job = run(csv_feed(*rows), merchant=merchant)
    assert (job.offers_updated, job.offers_unchanged) == (1, 2)
    after = dict(Offer.objects.values_list("merchant_sku", "updated_at"))
    assert [sku for sku in before if before[sku] != after[sku]] == ["S1"]
    assert offers(merchant)["S1"][1] == 101
    assert set(CheapestOfferRefresh.objects.values_list("product_id", flat=True)) >= {
        products[1].pk
    }


def test_offers_missing_from_the_feed_are_left_alone(merchant, products):
    kept = OfferFactory(merchant=merchant, product=products[5], merchant_sku="KEEP")
    run(csv_feed(f"{products[0].gtin},S,1.00,,true"), merchant=merchant)
    kept.refresh_from_db()
    assert kept.active and kept.unit_price == 1999


# --- crashes and resumes --------------------------------------------------------------------


def _crash_on_batch(monkeypatch, failing: int) -> list[int]:
    """Makes the writer raise on batch ``failing`` (once); returns the batches written."""
    written: list[int] = []
    real = writers.offer_writer_for

    def writer_for(**kwargs):
        writer = real(**kwargs)
        write_batch = writer.write_batch

        def flaky(lo, hi):
            index = lo // 2
            counts = write_batch(lo, hi)
            if index == failing and failing not in written:
                written.append(failing)
                raise RuntimeError("power cut")
            written.append(index)
            return counts

        writer.write_batch = flaky
        return writer

    monkeypatch.setattr(services, "offer_writer_for", writer_for)
    return written


def test_a_crash_midway_leaves_whole_batches_and_a_resume_finishes(merchant, products, monkeypatch):
    feed = csv_feed(*(f"{p.gtin},S{i},{i + 1}.00,,true" for i, p in enumerate(products[:5])))
    _crash_on_batch(monkeypatch, failing=1)
    job = run(feed, merchant=merchant, batch_size=2)
    assert job.status == ImportJob.Status.FAILED
    assert "Stopped after 1 of 3 batches" in job.message and "power cut" in job.message
    # Batch 1 wrote its rows and then failed: its transaction rolled back with it.
    assert set(offers(merchant)) == {"S0", "S1"}
    assert (job.batches_committed, job.rows_processed, job.offers_created) == (1, 2, 2)
    assert list(job.batches.values_list("index", flat=True)) == [0]

    job = import_job_resume(job=job, enqueue=False)
    assert job.status == ImportJob.Status.QUEUED
    job = import_job_run(job_id=job.pk)
    assert job.status == ImportJob.Status.DONE, job.message
    assert set(offers(merchant)) == {f"S{i}" for i in range(5)}
    assert (job.offers_created, job.offers_unchanged, job.batches_committed) == (5, 0, 3)
    assert job.attempts == 2
    assert list(job.batches.values_list("index", flat=True)) == [0, 1, 2]


def test_a_job_whose_worker_died_is_resumed_only_once_its_heartbeat_is_stale(
    merchant, products, settings
):
    job = import_job_create(
        merchant=merchant,
        file=ContentFile(csv_feed(f"{products[0].gtin},S,1.00,,true").encode(), name="f.csv"),
        enqueue=False,
    )
    ImportJob.objects.filter(pk=job.pk).update(
        status=ImportJob.Status.RUNNING, heartbeat_at=timezone.now()
    )
    with pytest.raises(Conflict):
        import_job_resume(job=job, enqueue=False)
    with pytest.raises(Conflict) as busy:
        import_job_run(job_id=job.pk)
    assert busy.value.code == "import_busy"
    settings.OFFER_IMPORT_STALE_AFTER_S = 60
    ImportJob.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=2))
    # A redelivered task may simply run it again; so may a resume.
    assert import_job_run(job_id=job.pk).status == ImportJob.Status.DONE


def test_a_resume_refuses_a_feed_file_that_changed(merchant, products, monkeypatch):
    feed = csv_feed(*(f"{p.gtin},S{i},1.00,,true" for i, p in enumerate(products[:3])))
    _crash_on_batch(monkeypatch, failing=1)
    job = run(feed, merchant=merchant)
    with job.file.open("wb") as handle:
        handle.write(feed.replace("1.00", "2.00").encode())
    job = import_job_run(job_id=import_job_resume(job=job, enqueue=False).pk)
    assert job.status == ImportJob.Status.FAILED
    assert "changed since this import started" in job.message


def test_only_one_import_per_merchant_runs_at_a_time(merchant, products):
    first = import_job_create(
        merchant=merchant,
        file=ContentFile(csv_feed(f"{products[0].gtin},S,1.00,,true").encode(), name="a.csv"),
        enqueue=False,
    )
    second = import_job_create(
        merchant=merchant,
        file=ContentFile(csv_feed(f"{products[1].gtin},T,1.00,,true").encode(), name="b.csv"),
        enqueue=False,
    )
    ImportJob.objects.filter(pk=first.pk).update(
        status=ImportJob.Status.RUNNING, heartbeat_at=timezone.now()
    )
    with pytest.raises(Conflict, match="another import of this merchant"):
        import_job_run(job_id=second.pk)
    ImportJob.objects.filter(pk=first.pk).update(status=ImportJob.Status.DONE)
    assert import_job_run(job_id=second.pk).status == ImportJob.Status.DONE


def test_running_a_done_job_again_does_nothing(merchant, products):
    job = run(csv_feed(f"{products[0].gtin},S,1.00,,true"), merchant=merchant)
    again = import_job_run(job_id=job.pk)
    assert (again.status, again.attempts, again.offers_created) == ("done", 1, 1)


# --- JSON Lines -----------------------------------------------------------------------------


def test_jsonl_reads_numbers_exactly_and_nulls_as_defaults(merchant, products):
    p = products
    lines = [
        f'{{"gtin": "{p[0].gtin}", "merchant_sku": "J1", "price": 12.99, "stock": null}}',
        f'{{"gtin": "{p[1].gtin}", "merchant_sku": "J2", "price": "0.10", "stock": 4, '
        '"active": false}',
        "",
        f'{{"gtin": "{p[2].gtin}", "merchant_sku": "J3", "price_cents": 1999, "active": 1}}',
        f'{{"gtin": "{p[3].gtin}", "merchant_sku": "J4", "price": 0.1}}',
    ]
    job = run("\n".join(lines) + "\n", merchant=merchant, name="feed.jsonl")
    assert job.format == ImportJob.Format.JSONL
    assert job.rows_failed == 0, report(job)
    assert offers(merchant) == {
        "J1": (p[0].pk, 1299, None, True),
        "J2": (p[1].pk, 10, 4, False),
        "J3": (p[2].pk, 1999, None, True),
        "J4": (p[3].pk, 10, None, True),
    }


def test_jsonl_rows_of_the_wrong_shape_are_reported_with_their_lines(merchant, products):
    g = products[0].gtin
    lines = [
        f'{{"gtin": "{g}", "merchant_sku": "OK", "price": "1.00"}}',
        '{"gtin": "oops"',
        "[1, 2, 3]",
        f'{{"gtin": "{g}", "merchant_sku": "K", "price": "1.00", "colour": "red"}}',
        f'{{"gtin": "{g}", "merchant_sku": "N", "price": {{"amount": 1}}}}',
        f'{{"gtin": "{g}", "merchant_sku": "P", "price": "1.00", "price_cents": 100}}',
        f'{{"gtin": "{g}", "merchant_sku": "Q", "price": 1.5e2}}',
    ]
    job = run("\n".join(lines), merchant=merchant, name="feed.ndjson")
    got = [(line["row"], line["sku"], line["field"]) for line in report(job)]
    assert got == [
        ("2", "", "row"),
        ("3", "", "row"),
        ("4", "K", "colour"),
        ("5", "N", "price"),
        ("6", "P", "price"),
        ("7", "Q", "price"),
    ]
    assert (job.rows_total, job.rows_failed) == (7, 6)
    assert set(offers(merchant)) == {"OK"}


# --- whole-file problems --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("feed.csv", "", "empty"),
        ("feed.csv", "  \n\n", "empty"),
        ("feed.jsonl", "", "empty"),
        ("feed.jsonl", "\n \n", "empty"),
        ("feed.csv", b"gtin,merchant_sku,price,stock,active\n\xff\xfe,1,2,,\n", "not UTF-8"),
        ("feed.csv.gz", b"\x1f\x8bnot really gzip", "gzipped"),
    ],
)
def test_an_empty_or_unreadable_file_fails_the_job(merchant, name, content, message):
    job = run(content, merchant=merchant, name=name)
    assert job.status == ImportJob.Status.FAILED
    assert message in job.message
    assert not Offer.objects.exists()


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ("gtin,merchant_sku,prce,stock,active", "Unknown column(s) prce"),
        ("gtin,merchant_sku,price,active", "lacks column(s) stock"),
        ("gtin,merchant_sku,stock,active", "lacks column(s) price (or price_cents)"),
        ("gtin,merchant_sku,price,stock,active,gtin", "repeats column(s) gtin"),
        ("gtin,merchant_sku,price,price_cents,stock,active", "both price and price_cents"),
        (",,,", "empty"),
    ],
)
def test_header_errors_fail_the_job_before_any_change(merchant, products, header, message):
    job = run(csv_feed(f"{products[0].gtin},S,1.00,,true", header=header), merchant=merchant)
    assert job.status == ImportJob.Status.FAILED
    assert message in job.message
    assert not Offer.objects.exists()


def test_a_header_only_feed_is_done_with_nothing_to_do(merchant):
    job = run(HEADER + "\n", merchant=merchant)
    assert job.status == ImportJob.Status.DONE
    assert (job.rows_total, job.batches_total, job.progress_percent) == (0, 0, 100)


def test_csv_dialects_semicolons_bom_crlf_any_column_order_and_case(merchant, products):
    content = (
        "\ufeffActive;Price;GTIN;Merchant_SKU;Stock\r\n"
        f"yes;1.50;{products[0].gtin};S1;\r\n"
        "\r\n"
        f"no;2.50;{products[1].gtin};S2;5\r\n"
    )
    job = run(content.encode("utf-8"), merchant=merchant)
    assert job.rows_failed == 0, report(job)
    assert offers(merchant) == {
        "S1": (products[0].pk, 150, None, True),
        "S2": (products[1].pk, 250, 5, False),
    }


def test_quoted_csv_fields_and_line_numbers_after_a_multiline_record(merchant, products):
    content = csv_feed(
        f'{products[0].gtin},"A,1","1.00","",true',
        f'{products[1].gtin},"B\nC",1.00,,true',
        f"{products[2].gtin},D,oops,,true",
    )
    job = run(content, merchant=merchant)
    assert set(offers(merchant)) == {"A,1"}
    assert [(line["row"], line["field"]) for line in report(job)] == [
        ("3", "merchant_sku"),
        ("5", "price"),
    ]


def test_a_tab_separated_gzipped_feed(merchant, products):
    content = "gtin\tmerchant_sku\tprice\tstock\tactive\n" + f"{products[0].gtin}\tT\t3.10\t\t1\n"
    job = run(gzip.compress(content.encode()), merchant=merchant, name="feed.tsv.gz")
    assert job.format == ImportJob.Format.CSV
    assert offers(merchant) == {"T": (products[0].pk, 310, None, True)}


def test_a_row_with_the_wrong_number_of_fields(merchant, products):
    job = run(
        csv_feed(f"{products[0].gtin},S,1.00,,true", f"{products[1].gtin},T,1.00"),
        merchant=merchant,
    )
    (line,) = report(job)
    assert (line["row"], line["field"], line["message"]) == (
        "3",
        "row",
        "Expected 5 fields, found 3.",
    )


# --- GTINs ----------------------------------------------------------------------------------


def test_gtins_match_with_leading_zeros_spaces_and_dashes(merchant):
    upc = gtin("01234567890")  # 12 digits
    product = ProductFactory(gtin="0" + upc)  # stored as its EAN-13
    spaced = f"{upc[:4]} {upc[4:8]}-{upc[8:]}"
    job = run(
        csv_feed(f"{upc},A,1.00,,true", f"00{upc},B,1.00,,false", f"{spaced},C,1.00,,false"),
        merchant=merchant,
    )
    assert job.rows_failed == 0, report(job)
    assert {row[0] for row in offers(merchant).values()} == {product.pk}


def test_a_gtin_two_products_share_is_refused_as_ambiguous(merchant):
    upc = gtin("01234567890")
    ProductFactory(gtin=upc)
    ProductFactory(gtin="0" + upc)
    job = run(csv_feed(f"{upc},A,1.00,,true"), merchant=merchant)
    (line,) = report(job)
    assert "matches several catalog products" in line["message"]


def test_gtins_are_resolved_in_one_batched_lookup_whatever_the_feed_size(merchant, monkeypatch):
    calls = []
    real = resolve.radix_tree_lookup

    def counting(tree, queries):
        calls.append(len(queries))
        return real(tree, queries)

    monkeypatch.setattr(resolve, "radix_tree_lookup", counting)
    catalog = [ProductFactory() for _ in range(30)]

    def queries_for(count: int, prefix: str) -> int:
        feed = csv_feed(
            *(f"{p.gtin},{prefix}{i},1.00,,false" for i, p in enumerate(catalog[:count]))
        )
        with CaptureQueriesContext(connection) as captured:
            run(feed, merchant=merchant, batch_size=100)
        return len(captured)

    small, large = queries_for(3, "a"), queries_for(30, "b")
    assert calls == [3, 30]
    # The ORM writer issues a few statements per batch, never one per row.
    assert large <= small + 4


# --- the error report -----------------------------------------------------------------------


def test_the_error_report_is_a_sorted_csv_that_defuses_spreadsheet_formulas(merchant, products):
    job = run(
        csv_feed(
            f"{products[0].gtin},=HYPERLINK(1),oops,,true",
            f"{products[1].gtin},OK,1.00,,true",
            "1,@SUM,1.00,,true",
        ),
        merchant=merchant,
    )
    with job.error_report.open("rb") as handle:
        text = handle.read().decode()
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["row", "sku", "field", "message"]
    assert [(row[0], row[2]) for row in rows[1:]] == [("2", "price"), ("4", "gtin")]
    assert (rows[1][1], rows[2][1]) == ("'=HYPERLINK(1)", "'@SUM")


# --- stored cheapest offers -----------------------------------------------------------------


def test_changed_products_get_a_pending_refresh_and_one_recompute_request(
    merchant, products, monkeypatch
):
    requests = []
    monkeypatch.setattr(services, "catalog_cheapest_recompute_request", lambda: requests.append(1))
    run(csv_feed(f"{products[0].gtin},S,1.00,,true", f"{products[1].gtin},T,1.00,,true"),
        merchant=merchant)  # fmt: skip
    assert set(CheapestOfferRefresh.objects.values_list("product_id", flat=True)) == {
        products[0].pk,
        products[1].pk,
    }
    assert requests == [1]


# --- formats --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "format"),
    [
        ("offers.csv", "csv"),
        ("OFFERS.CSV", "csv"),
        ("offers.tsv.gz", "csv"),
        ("offers.jsonl", "jsonl"),
        ("offers.ndjson.gz", "jsonl"),
    ],
)
def test_the_format_comes_from_the_file_name(name, format):
    assert import_format_detect(name) == format


def test_an_unknown_file_name_needs_an_explicit_format(merchant):
    with pytest.raises(ValidationFailed) as error:
        import_job_create(merchant=merchant, file=ContentFile(b"x", name="feed.xlsx"))
    assert error.value.field == "format"


def test_a_file_over_the_size_limit_is_refused(merchant, settings):
    settings.OFFER_IMPORT_MAX_BYTES = 10
    with pytest.raises(ValidationFailed, match="limit"):
        import_job_create(merchant=merchant, file=ContentFile(b"x" * 11, name="f.csv"))


# --- several writers on PostgreSQL ----------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_two_connections_write_batches_on_postgresql(settings, tmp_path):
    if connection.vendor != "postgresql":
        pytest.skip("parallel batch writers are a PostgreSQL feature")
    settings.OFFER_IMPORT_WRITERS = 2
    merchant = MerchantFactory()
    catalog = [ProductFactory() for _ in range(9)]
    feed = csv_feed(*(f"{p.gtin},S{i},{i}.00,,true" for i, p in enumerate(catalog)))
    job = run(feed, merchant=merchant, batch_size=2)
    assert job.status == ImportJob.Status.DONE, job.message
    assert sorted(job.batches.values_list("index", flat=True)) == [0, 1, 2, 3, 4]
    assert (job.offers_created, job.rows_processed) == (9, 9)
    assert offers(merchant) == {f"S{i}": (p.pk, i * 100, None, True) for i, p in enumerate(catalog)}


def test_an_import_tells_offers_changed_once_which_products_its_batches_changed(
    merchant, products, django_capture_on_commit_callbacks
):
    from storefront.catalog.offer_changes import offers_changed

    rows = [f"{p.gtin},S{i},1.00,,true" for i, p in enumerate(products[:4])]
    run(csv_feed(*rows), merchant=merchant)
    rows[1] = rows[1].replace("1.00", "1.01")
    rows[3] = rows[3].replace("1.00", "0.99")
    sent = []

    def receiver(sender, product_ids, merchant_ids, **kwargs):
        sent.append(set(product_ids))

    offers_changed.connect(receiver, dispatch_uid="test_import_offers_changed")
    try:
        with django_capture_on_commit_callbacks(execute=True):
            run(csv_feed(*rows), merchant=merchant, batch_size=2)
    finally:
        offers_changed.disconnect(dispatch_uid="test_import_offers_changed")
    # Two batches, one signal at the end (one price-watch run per import, not per batch).
    assert sent == [{products[1].pk, products[3].pk}]


# --- the page cache ---------------------------------------------------------------------------


def test_an_import_bumps_the_page_versions_once_and_its_prices_show_at_once(
    client, merchant, products, bumps, django_capture_on_commit_callbacks
):
    """Once per import, at its end (both writers; the COPY writer marks in SQL), not once per
    batch and again at the end: the pages cached meanwhile are orphaned by that one bump."""
    rows = [f"{p.gtin},S{i},1.00,,true" for i, p in enumerate(products[:4])]
    run(csv_feed(*rows), merchant=merchant)
    product = products[3]
    price = '<span class="price">{}</span>'
    assert price.format("€1.00") in client.get(f"/products/{product.slug}/").content.decode()
    bumps.clear()
    rows[1] = rows[1].replace("1.00", "1.01")
    rows[3] = rows[3].replace("1.00", "0.99")
    with django_capture_on_commit_callbacks(execute=True):
        job = run(csv_feed(*rows), merchant=merchant, batch_size=2)
    assert job.batches_total == 2
    changed = {product_version_name(products[1].pk), product_version_name(product.pk)}
    assert bumps == [{CATALOG, *changed}]
    html = client.get(f"/products/{product.slug}/").content.decode()
    assert price.format("€0.99") in html and price.format("€1.00") not in html


def test_an_import_that_fails_midway_still_bumps_what_its_batches_committed(
    merchant, products, monkeypatch, bumps, django_capture_on_commit_callbacks
):
    feed = csv_feed(*(f"{p.gtin},S{i},{i + 1}.00,,true" for i, p in enumerate(products[:5])))
    _crash_on_batch(monkeypatch, failing=1)
    with django_capture_on_commit_callbacks(execute=True):
        job = run(feed, merchant=merchant, batch_size=2)
    assert job.status == ImportJob.Status.FAILED
    assert bumps == [{CATALOG, *(product_version_name(p.pk) for p in products[:2])}]


def test_a_resume_tells_what_a_killed_run_committed(
    merchant, products, monkeypatch, bumps, django_capture_on_commit_callbacks
):
    """A run killed after a batch committed never reaches its end (no bump, no offers_changed):
    the resumed run's one bump covers that batch's products too."""

    @contextmanager
    def killed():  # the process dies: the end of the import never runs
        yield DeferredChanges()

    feed = csv_feed(*(f"{p.gtin},S{i},{i + 1}.00,,true" for i, p in enumerate(products[:5])))
    _crash_on_batch(monkeypatch, failing=1)
    with monkeypatch.context() as dying, django_capture_on_commit_callbacks(execute=True):
        dying.setattr(batches, "offers_changed_deferred", killed)
        job = run(feed, merchant=merchant, batch_size=2)
    assert job.batches_committed == 1 and bumps == []
    job = import_job_resume(job=job, enqueue=False)
    with django_capture_on_commit_callbacks(execute=True):
        job = import_job_run(job_id=job.pk)
    assert job.status == ImportJob.Status.DONE, job.message
    assert bumps == [{CATALOG, *(product_version_name(p.pk) for p in products[:5])}]
