"""The catalog admin's offer feed import: upload, progress that refreshes itself, the error
report and feed downloads, resume, and the import_offers command (same code path)."""

import csv
import io
import os

import pytest
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from storefront.imports.services import import_job_create, import_job_run
from storefront.models import ImportJob, Offer
from tests.factories import ImportJobFactory, MerchantFactory, ProductFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def staff_client(client):
    client.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    return client


@pytest.fixture
def feed():
    products = [ProductFactory() for _ in range(3)]
    return (
        "gtin,merchant_sku,price,stock,active\n"
        f"{products[0].gtin},A,1.00,,true\n"
        f"{products[1].gtin},B,oops,,true\n"
        f"{products[2].gtin},C,3.00,2,false\n"
    )


def url(view: str, *args) -> str:
    return reverse(f"admin:storefront_importjob_{view}", args=args)


def test_uploading_a_feed_creates_a_job_that_runs_after_commit(
    staff_client, feed, django_capture_on_commit_callbacks
):
    merchant = MerchantFactory()
    upload = SimpleUploadedFile("offers.csv", feed.encode(), content_type="text/csv")
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(
            url("add"), {"merchant": merchant.pk, "file": upload, "format": ""}
        )
    assert response.status_code == 302
    job = ImportJob.objects.get()
    assert (job.merchant, job.format, job.created_by.username) == (merchant, "csv", "root")
    assert job.file.name.endswith(".csv")
    # No broker in tests: the task ran in-process once the upload committed.
    assert (job.status, job.offers_created, job.rows_failed) == ("done", 2, 1)
    assert set(Offer.objects.values_list("merchant_sku", flat=True)) == {"A", "C"}


def test_the_add_page_explains_the_format_and_prefills_the_merchant(staff_client):
    merchant = MerchantFactory()
    page = staff_client.get(url("add"), {"merchant": merchant.pk}).content.decode()
    assert "price_cents" in page and "merchant_sku" in page
    assert f'value="{merchant.pk}" selected' in page


def test_a_file_name_without_a_known_format_is_refused_by_the_form(staff_client):
    upload = SimpleUploadedFile("offers.xlsx", b"x")
    response = staff_client.post(url("add"), {"merchant": MerchantFactory().pk, "file": upload})
    assert response.status_code == 200
    assert "Cannot tell the format" in response.content.decode()
    assert not ImportJob.objects.exists()


def test_the_list_shows_progress_and_refreshes_only_while_work_is_under_way(staff_client):
    job = ImportJobFactory(
        status=ImportJob.Status.RUNNING,
        heartbeat_at=timezone.now(),
        rows_total=200,
        rows_processed=50,
    )
    page = staff_client.get(url("changelist")).content.decode()
    assert '<progress max="100" value="25"' in page and "50 / 200 rows" in page
    assert 'http-equiv="refresh"' in page
    assert 'http-equiv="refresh"' in staff_client.get(url("change", job.pk)).content.decode()
    # Its worker died: nothing will move, so stop refreshing and offer to resume.
    ImportJob.objects.filter(pk=job.pk).update(heartbeat_at=None)
    page = staff_client.get(url("changelist")).content.decode()
    assert 'http-equiv="refresh"' not in page
    assert "Resume import" in staff_client.get(url("change", job.pk)).content.decode()
    ImportJob.objects.filter(pk=job.pk).update(status=ImportJob.Status.DONE)
    page = staff_client.get(url("change", job.pk)).content.decode()
    assert 'http-equiv="refresh"' not in page and "Resume import" not in page


def test_a_job_page_is_read_only_and_links_the_downloads(staff_client, feed):
    job = import_job_create(
        merchant=MerchantFactory(), file=ContentFile(feed.encode(), name="f.csv"), enqueue=False
    )
    job = import_job_run(job_id=job.pk)
    page = staff_client.get(url("change", job.pk)).content.decode()
    assert url("error_report", job.pk) in page and url("feed", job.pk) in page
    assert 'name="_save"' not in page
    assert "Committed batches" in page

    report = staff_client.get(url("error_report", job.pk))
    assert report["Content-Disposition"].startswith("attachment")
    rows = list(csv.reader(io.StringIO(b"".join(report.streaming_content).decode())))
    assert rows[0] == ["row", "sku", "field", "message"]
    assert rows[1][:3] == ["3", "B", "price"]

    download = staff_client.get(url("feed", job.pk))
    assert b"".join(download.streaming_content).decode() == feed


def test_downloads_need_admin_rights(client, feed):
    job = ImportJobFactory()
    client.force_login(UserFactory(username="shopper"))
    assert client.get(url("feed", job.pk)).status_code == 302  # to the admin login
    assert client.get(url("error_report", 10**9)).status_code == 302


def test_a_failed_job_can_be_resumed_from_its_page_and_from_the_list(
    staff_client, django_capture_on_commit_callbacks
):
    job = ImportJobFactory(status=ImportJob.Status.FAILED, message="Stopped.")
    page = staff_client.get(url("change", job.pk)).content.decode()
    assert "Resume import" in page
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(url("resume", job.pk))
    assert response.status_code == 302
    job.refresh_from_db()
    assert job.status == ImportJob.Status.DONE  # an empty feed: nothing to do

    response = staff_client.post(
        url("changelist"), {"action": "resume_selected", "_selected_action": [job.pk]}
    )
    assert response.status_code == 302
    messages = [m.message for m in response.wsgi_request._messages]
    assert any("only a failed import" in message for message in messages)


def test_a_running_job_cannot_be_deleted_but_a_finished_one_goes_with_its_files(staff_client):
    running = ImportJobFactory(status=ImportJob.Status.RUNNING, heartbeat_at=timezone.now())
    done = ImportJobFactory(status=ImportJob.Status.DONE)
    path = done.file.path
    staff_client.post(url("delete", done.pk), {"post": "yes"})
    assert not ImportJob.objects.filter(pk=done.pk).exists()
    assert not os.path.exists(path)
    with pytest.raises(Exception, match="running"):
        staff_client.post(url("delete", running.pk), {"post": "yes"})


def test_the_merchant_page_links_to_its_imports(staff_client):
    merchant = MerchantFactory()
    page = staff_client.get(
        reverse("admin:storefront_merchant_change", args=[merchant.pk])
    ).content.decode()
    assert f"{url('add')}?merchant={merchant.pk}" in page


# --- the command ----------------------------------------------------------------------------


def test_the_command_imports_synchronously_with_progress(tmp_path, feed, capsys):
    merchant = MerchantFactory(slug="acme")
    path = tmp_path / "offers.csv"
    path.write_text(feed)
    call_command("import_offers", str(path), merchant="acme", batch_size=1)
    out = capsys.readouterr().out
    assert "3/3 rows (100%), valid 2, failed 1, batch 3/3" in out
    assert "2 offers created" in out and "Error report:" in out
    assert Offer.objects.filter(merchant=merchant).count() == 2
    job = ImportJob.objects.get()
    assert (job.status, job.created_by) == ("done", None)


def test_the_command_refuses_bad_arguments(tmp_path):
    MerchantFactory(slug="acme")
    with pytest.raises(CommandError, match="No merchant"):
        call_command("import_offers", str(tmp_path / "x.csv"), merchant="nobody")
    with pytest.raises(CommandError, match="No such file"):
        call_command("import_offers", str(tmp_path / "x.csv"), merchant="acme")
    with pytest.raises(CommandError, match="Give a FILE"):
        call_command("import_offers")
    with pytest.raises(CommandError, match="No import"):
        call_command("import_offers", resume=10**9)


def test_the_command_reports_a_failed_job_and_resumes_it(tmp_path, capsys):
    MerchantFactory(slug="acme")
    path = tmp_path / "offers.csv"
    path.write_text("sku,price\n")
    with pytest.raises(CommandError, match="failed: Unknown column"):
        call_command("import_offers", str(path), merchant="acme")
    job = ImportJob.objects.get()
    with pytest.raises(CommandError, match="failed: Unknown column"):
        call_command("import_offers", resume=job.pk)
    assert ImportJob.objects.get().attempts == 2
