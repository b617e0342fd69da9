from datetime import timedelta

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from storefront.models.merchants import Merchant


class ImportJob(models.Model):
    """One upload of a merchant's offer feed and the progress of its import.

    The feed is cut into batches of ``batch_size`` data rows; each batch is written in one
    transaction together with its ``ImportJobBatch`` row and the counters below, so they
    always say exactly what reached the catalog. A run (first or resumed) writes the batches
    that have no row yet.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    class Format(models.TextChoices):
        CSV = "csv", "CSV"
        JSONL = "jsonl", "JSON Lines"

    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="import_jobs")
    file = models.FileField(upload_to="offer-feeds/%Y/%m/", max_length=255)
    format = models.CharField(max_length=8, choices=Format.choices)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED)
    stage = models.CharField(max_length=40, blank=True, help_text="What a running job is doing.")
    message = models.TextField(blank=True, help_text="Why the job failed, or a summary.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text="Last sign of life of the run; a stale one may be resumed."
    )
    attempts = models.PositiveIntegerField(default=0)
    file_sha256 = models.CharField(
        max_length=64, blank=True, help_text="A resume refuses a file that changed since."
    )

    batch_size = models.PositiveIntegerField()
    batches_total = models.PositiveIntegerField(default=0)
    batches_committed = models.PositiveIntegerField(default=0)
    rows_total = models.PositiveIntegerField(default=0, help_text="Data rows in the feed.")
    rows_processed = models.PositiveIntegerField(
        default=0, help_text="Data rows of the committed batches."
    )
    rows_valid = models.PositiveIntegerField(default=0)
    rows_failed = models.PositiveIntegerField(default=0)
    offers_created = models.PositiveIntegerField(default=0)
    offers_updated = models.PositiveIntegerField(default=0)
    offers_unchanged = models.PositiveIntegerField(default=0)
    offers_superseded = models.PositiveIntegerField(
        default=0,
        help_text="Other active offers of the merchant for a product that the feed gave a new "
        "active SKU; they were deactivated.",
    )
    error_report = models.FileField(
        upload_to="offer-feeds/errors/%Y/%m/", max_length=255, blank=True
    )
    timings = models.JSONField(default=dict, blank=True, help_text="Seconds per phase.")

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "offer feed import"
        indexes = [models.Index(fields=["merchant", "status"], name="importjob_merchant_status")]
        constraints = [
            models.CheckConstraint(
                condition=Q(batch_size__gte=1), name="importjob_batch_size_positive"
            ),
            models.CheckConstraint(
                condition=Q(batches_committed__lte=F("batches_total")),
                name="importjob_batches_committed_le_total",
            ),
            models.CheckConstraint(
                condition=Q(rows_processed__lte=F("rows_total")),
                name="importjob_rows_processed_le_total",
            ),
        ]

    def __str__(self) -> str:
        return f"Import {self.pk} for {self.merchant.name} ({self.get_status_display()})"

    @property
    def progress_percent(self) -> int:
        if self.status == self.Status.DONE:
            return 100
        if not self.rows_total:
            return 0
        return min(100, self.rows_processed * 100 // self.rows_total)

    @property
    def offers_changed(self) -> int:
        return self.offers_created + self.offers_updated + self.offers_superseded

    @property
    def is_stalled(self) -> bool:
        """Running, but its worker stopped beating (it died): resumable."""
        limit = timedelta(seconds=settings.OFFER_IMPORT_STALE_AFTER_S)
        return self.status == self.Status.RUNNING and (
            self.heartbeat_at is None or self.heartbeat_at < timezone.now() - limit
        )

    @property
    def is_busy(self) -> bool:
        return self.status == self.Status.QUEUED or (
            self.status == self.Status.RUNNING and not self.is_stalled
        )

    @property
    def is_resumable(self) -> bool:
        return bool(self.file) and (self.status == self.Status.FAILED or self.is_stalled)


class ImportJobBatch(models.Model):
    """One committed batch of an import, written in the batch's own transaction: the record
    a resume reads to skip what is done (batches may commit out of order when several
    connections write them)."""

    job = models.ForeignKey(ImportJob, on_delete=models.CASCADE, related_name="batches")
    index = models.PositiveIntegerField(help_text="0-based; covers data rows index*batch_size on.")
    rows = models.PositiveIntegerField(help_text="Data rows in the batch.")
    created = models.PositiveIntegerField(default=0)
    updated = models.PositiveIntegerField(default=0)
    unchanged = models.PositiveIntegerField(default=0)
    superseded = models.PositiveIntegerField(default=0)
    seconds = models.FloatField(default=0.0)
    committed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["job", "index"]
        constraints = [
            models.UniqueConstraint(fields=["job", "index"], name="importjobbatch_once_per_job"),
        ]

    def __str__(self) -> str:
        return f"batch {self.index} of import {self.job_id}"
