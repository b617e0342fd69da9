import sys
import time
from pathlib import Path

from django.core.files import File
from django.core.management.base import BaseCommand, CommandError, CommandParser

from storefront.errors import DomainError
from storefront.imports.services import import_job_create, import_job_resume, import_job_run
from storefront.models import ImportJob, Merchant


def _progress_line(job: ImportJob) -> str:
    return (
        f"import {job.pk}: {job.rows_processed:,}/{job.rows_total:,} rows "
        f"({job.progress_percent}%), valid {job.rows_valid:,}, failed {job.rows_failed:,}, "
        f"batch {job.batches_committed}/{job.batches_total}"
    )


class Command(BaseCommand):
    help = (
        "Imports a merchant's offer feed (CSV or JSON Lines, optionally .gz) synchronously, "
        "through the same code as the admin's upload: python manage.py import_offers FILE "
        "--merchant SLUG. See storefront/imports/__init__.py for the columns."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", nargs="?", help="The feed file (not with --resume).")
        parser.add_argument("--merchant", help="Slug of the merchant whose offers these are.")
        parser.add_argument("--format", choices=ImportJob.Format.values, default="")
        parser.add_argument("--batch-size", type=int, default=None)
        parser.add_argument(
            "--resume", type=int, metavar="JOB_ID", help="Continue a failed or crashed import."
        )

    def handle(self, *args, file, merchant, format, batch_size, resume, **options) -> None:
        try:
            job = self._job(
                file=file, slug=merchant, format=format, batch_size=batch_size, resume=resume
            )
            start = time.perf_counter()
            job = import_job_run(job_id=job.pk, progress=self._show)
        except DomainError as error:
            raise CommandError(error.message) from None
        total = time.perf_counter() - start
        self.stdout.write("")
        if job.status != ImportJob.Status.DONE:
            raise CommandError(f"Import {job.pk} failed: {job.message}")
        self.stdout.write(self.style.SUCCESS(f"Import {job.pk}: {job.message}"))
        timings = ", ".join(f"{phase} {seconds:.2f}s" for phase, seconds in job.timings.items())
        self.stdout.write(f"Phases: {timings}. Wall time including refresh: {total:.2f}s.")
        if job.error_report:
            self.stdout.write(f"Error report: {job.error_report.path}")

    def _job(self, *, file, slug, format, batch_size, resume) -> ImportJob:
        if resume is not None:
            if file or slug:
                raise CommandError("--resume takes no FILE or --merchant; the job knows them.")
            job = ImportJob.objects.filter(pk=resume).first()
            if job is None:
                raise CommandError(f"No import {resume}.")
            return import_job_resume(job=job, enqueue=False)
        if not file or not slug:
            raise CommandError("Give a FILE and --merchant SLUG (or --resume JOB_ID).")
        merchant = Merchant.objects.filter(slug=slug).first()
        if merchant is None:
            raise CommandError(f"No merchant with slug {slug!r}.")
        path = Path(file)
        if not path.is_file():
            raise CommandError(f"No such file: {file}")
        with path.open("rb") as handle:
            return import_job_create(
                merchant=merchant,
                file=File(handle, name=path.name),
                format=format,
                batch_size=batch_size,
                enqueue=False,
            )

    def _show(self, job: ImportJob) -> None:
        line = _progress_line(job)
        if sys.stdout.isatty():
            self.stdout.write(f"\r{line}", ending="")
        else:
            self.stdout.write(line)
        self.stdout.flush()
