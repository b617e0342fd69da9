"""Admin of offer feed imports: upload, follow, download, resume."""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, HttpResponseRedirect
from django.urls import path, reverse
from django.utils.html import format_html
from django.views.decorators.http import require_POST

from storefront.admin.scoping import MerchantScopedAdmin, MerchantScopedInline
from storefront.errors import DomainError
from storefront.imports.services import (
    import_format_detect,
    import_job_create,
    import_job_delete,
    import_job_resume,
)
from storefront.models import ImportJob, ImportJobBatch

# --- offer feed imports ---------------------------------------------------------------------


class ImportJobUploadForm(forms.ModelForm):
    """The add page: a merchant and a file; the format comes from the file name unless
    chosen. Everything else of a job is written by the import itself."""

    format = forms.ChoiceField(
        choices=[("", "Detect from the file name"), *ImportJob.Format.choices],
        required=False,
        help_text="CSV (.csv, .tsv, .txt) or JSON Lines (.jsonl, .ndjson); .gz is fine. "
        "Columns: gtin, merchant_sku, price (or price_cents), stock, active; optional: "
        "warehouse (a warehouse's name: the stock is at that warehouse), weight_g (grams per "
        "unit) and merchant (its slug: rows for another merchant are refused).",
    )

    class Meta:
        model = ImportJob
        fields = ["merchant", "file", "format"]
        help_texts = {"file": "The merchant's offer feed; see the columns below."}

    def clean(self):
        super().clean()
        data = self.cleaned_data
        upload = data.get("file")
        if upload is not None and not data.get("format"):
            try:
                data["format"] = import_format_detect(upload.name)
            except DomainError as error:
                self.add_error("format", error.message)
        return data


class ImportJobBatchInline(MerchantScopedInline, admin.TabularInline):
    model = ImportJobBatch
    extra = 0
    can_delete = False
    fields = readonly_fields = (
        "index",
        "rows",
        "created",
        "updated",
        "unchanged",
        "superseded",
        "seconds",
    )
    verbose_name_plural = "committed batches"

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(ImportJob)
class ImportJobAdmin(MerchantScopedAdmin):
    """Upload a feed (Add), then watch it: the list and the page refresh themselves while a
    job is queued or running. A failed job can be resumed; its error report downloaded.
    Merchant staff upload and follow their own merchant's feeds only."""

    staff_may_delete = False

    form = ImportJobUploadForm
    list_display = [
        "id",
        "merchant",
        "file_name",
        "status_display",
        "progress",
        "rows_valid",
        "rows_failed",
        "changes",
        "created_at",
        "error_report_link",
    ]
    list_select_related = ["merchant"]
    list_filter = ["status", ("merchant", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["merchant__name", "merchant__slug", "file"]
    autocomplete_fields = ["merchant"]
    actions = ["resume_selected"]
    inlines = [ImportJobBatchInline]
    fieldsets = [
        (None, {"fields": ["merchant", "file_link", "format", "created_by", "created_at"]}),
        (
            "Progress",
            {
                "fields": [
                    "status_display",
                    "stage",
                    "progress",
                    "rows_total",
                    "rows_valid",
                    "rows_failed",
                    "batches",
                    "attempts",
                    "started_at",
                    "heartbeat_at",
                    "finished_at",
                ]
            },
        ),
        (
            "Result",
            {
                "fields": [
                    "message",
                    "offers_created",
                    "offers_updated",
                    "offers_unchanged",
                    "offers_superseded",
                    "error_report_link",
                    "timings_display",
                ]
            },
        ),
    ]
    refresh_seconds = 3

    def get_fieldsets(self, request, obj=None):
        if obj is None:
            return [(None, {"fields": ["merchant", "file", "format"]})]
        return self.fieldsets

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return []
        return [field for _, options in self.fieldsets for field in options["fields"]]

    def get_inlines(self, request, obj):
        return self.inlines if obj is not None else []

    def has_change_permission(self, request, obj=None):
        # A job is a record of what happened; it changes only by running (or resuming).
        return False

    def save_model(self, request, obj, form, change):
        job = import_job_create(
            merchant=form.cleaned_data["merchant"],
            file=form.cleaned_data["file"],
            format=form.cleaned_data["format"],
            created_by=request.user,
        )
        obj.pk = job.pk
        obj.file = job.file
        obj.batch_size = job.batch_size
        obj._state.adding = False

    def delete_model(self, request, obj):
        import_job_delete(job=obj)

    def delete_queryset(self, request, queryset):
        for job in queryset:
            import_job_delete(job=job)

    def get_urls(self):
        view = self.admin_site.admin_view
        return [
            path(
                "<int:job_id>/error-report/",
                view(self.error_report_view),
                name="storefront_importjob_error_report",
            ),
            path("<int:job_id>/feed/", view(self.feed_view), name="storefront_importjob_feed"),
            path(
                "<int:job_id>/resume/",
                view(require_POST(self.resume_view)),
                name="storefront_importjob_resume",
            ),
            *super().get_urls(),
        ]

    # --- pages that refresh themselves while work is under way ---------------------------

    def changelist_view(self, request, extra_context=None):
        under_way = ImportJob.objects.filter(
            status__in=[ImportJob.Status.QUEUED, ImportJob.Status.RUNNING]
        )
        busy = any(job.is_busy for job in under_way.only("status", "heartbeat_at")[:50])
        extra = {"refresh_seconds": self.refresh_seconds if busy else None}
        return super().changelist_view(request, {**(extra_context or {}), **extra})

    def change_view(self, request, object_id, form_url="", extra_context=None):
        job = ImportJob.objects.filter(pk=object_id).first() if object_id.isdigit() else None
        busy = job is not None and job.is_busy
        extra = {
            "refresh_seconds": self.refresh_seconds if busy else None,
            "resumable": job is not None and job.is_resumable and self.has_add_permission(request),
        }
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), **extra})

    # --- downloads and resume ------------------------------------------------------------

    def _job_or_404(self, request, job_id: int) -> ImportJob:
        job = ImportJob.objects.filter(pk=job_id).first()
        if job is None:
            raise Http404("No such import.")
        if not self.has_view_permission(request, job):
            raise PermissionDenied
        return job

    def error_report_view(self, request, job_id: int):
        job = self._job_or_404(request, job_id)
        if not job.error_report:
            raise Http404("This import has no error report.")
        return FileResponse(
            job.error_report.open("rb"),
            as_attachment=True,
            filename=f"import-{job.pk}-errors.csv",
            content_type="text/csv",
        )

    def feed_view(self, request, job_id: int):
        job = self._job_or_404(request, job_id)
        return FileResponse(job.file.open("rb"), as_attachment=True, filename=job.file.name or "")

    def resume_view(self, request, job_id: int):
        job = self._job_or_404(request, job_id)
        if not self.has_add_permission(request):
            raise PermissionDenied
        self._resume(request, job)
        return HttpResponseRedirect(reverse("admin:storefront_importjob_change", args=[job.pk]))

    def _resume(self, request, job: ImportJob) -> bool:
        try:
            import_job_resume(job=job)
        except DomainError as error:
            self.message_user(request, error.message, messages.WARNING)
            return False
        self.message_user(request, f"Import {job.pk} resumes after its committed batches.")
        return True

    @admin.action(description="Resume selected failed imports", permissions=["add"])
    def resume_selected(self, request, queryset):
        for job in queryset:
            self._resume(request, job)

    # --- columns -------------------------------------------------------------------------

    @admin.display(description="file")
    def file_name(self, obj: ImportJob) -> str:
        return obj.file.name.rsplit("/", 1)[-1] if obj.file and obj.file.name else "-"

    @admin.display(description="file")
    def file_link(self, obj: ImportJob) -> str:
        if not obj.file:
            return "-"
        url = reverse("admin:storefront_importjob_feed", args=[obj.pk])
        return format_html('<a href="{}">{}</a>', url, self.file_name(obj))

    @admin.display(description="status", ordering="status")
    def status_display(self, obj: ImportJob) -> str:
        colours = {"queued": "#777", "running": "#205493", "done": "#2e7d32", "failed": "#c62828"}
        return format_html(
            '<strong style="color: {}">{}</strong>',
            colours.get(obj.status, "inherit"),
            obj.get_status_display(),
        )

    @admin.display(description="progress")
    def progress(self, obj: ImportJob) -> str:
        percent = obj.progress_percent
        return format_html(
            '<progress max="100" value="{}" style="width: 8em">{}%</progress> {}% ({} / {} rows)',
            percent,
            percent,
            percent,
            f"{obj.rows_processed:,}",
            f"{obj.rows_total:,}",
        )

    @admin.display(description="batches")
    def batches(self, obj: ImportJob) -> str:
        return (
            f"{obj.batches_committed} of {obj.batches_total} committed "
            f"({obj.batch_size:,} rows each)"
        )

    @admin.display(description="offers changed")
    def changes(self, obj: ImportJob) -> str:
        return (
            f"{obj.offers_created:,} new, {obj.offers_updated:,} updated, "
            f"{obj.offers_superseded:,} superseded ({obj.offers_unchanged:,} unchanged)"
        )

    @admin.display(description="error report")
    def error_report_link(self, obj: ImportJob) -> str:
        if not obj.error_report:
            return "-"
        url = reverse("admin:storefront_importjob_error_report", args=[obj.pk])
        return format_html('<a href="{}">{} failed rows (CSV)</a>', url, f"{obj.rows_failed:,}")

    @admin.display(description="seconds per phase")
    def timings_display(self, obj: ImportJob) -> str:
        return ", ".join(f"{phase} {seconds:.2f}" for phase, seconds in obj.timings.items()) or "-"
