"""The catalog admin: built for thousands of products and offers.

Every foreign key is an autocomplete (no 10,000-option selects), every list selects its
related rows in the same query, and the bulk actions go through querysets, not loops.
"""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Count, Min, Q, Subquery
from django.http import FileResponse, Http404, HttpResponseRedirect
from django.urls import path, reverse
from django.utils.html import format_html
from django.views.decorators.http import require_POST

from storefront.cheapest import catalog_cheapest_mark_stale, catalog_cheapest_recompute_request
from storefront.errors import DomainError
from storefront.imports.services import (
    import_format_detect,
    import_job_create,
    import_job_delete,
    import_job_resume,
)
from storefront.models import (
    Cart,
    CartLine,
    Category,
    ImportJob,
    ImportJobBatch,
    Merchant,
    Offer,
    Product,
    ShippingZone,
)
from storefront.money import format_basis_points, format_money
from storefront.offer_changes import offers_changed_notify
from storefront.selectors import CartPricingSummary, cart_pricing_summaries


def _money_column(field: str, label: str):
    @admin.display(description=label, ordering=field)
    def column(modeladmin, obj):
        return format_money(getattr(obj, field))

    return column


def _set_active(queryset, active: bool) -> int:
    """``QuerySet.update`` sends no signals: mark the products whose cheapest offer may
    change ourselves, in the same transaction, and ask for a recompute after it."""
    with transaction.atomic():
        if queryset.model is Offer:
            catalog_cheapest_mark_stale(offers=queryset)
            offers_changed_notify(product_ids=queryset.values_list("product_id", flat=True))
        elif queryset.model is Merchant:
            catalog_cheapest_mark_stale(merchant_ids=queryset.values_list("pk", flat=True))
            offers_changed_notify(merchant_ids=queryset.values_list("pk", flat=True))
        updated = queryset.update(active=active)
        catalog_cheapest_recompute_request()
    return updated


@admin.action(description="Activate selected")
def make_active(modeladmin, request, queryset):
    updated = _set_active(queryset, True)
    modeladmin.message_user(request, f"{updated} activated.")


@admin.action(description="Deactivate selected")
def make_inactive(modeladmin, request, queryset):
    updated = _set_active(queryset, False)
    modeladmin.message_user(request, f"{updated} deactivated.")


class StockFilter(admin.SimpleListFilter):
    title = "stock"
    parameter_name = "stock"

    def lookups(self, request, model_admin):
        return [
            ("unlimited", "Unlimited"),
            ("out", "Sold out"),
            ("low", "Low (1-5)"),
            ("some", "More than 5"),
        ]

    def queryset(self, request, queryset):
        conditions = {
            "unlimited": Q(stock__isnull=True),
            "out": Q(stock=0),
            "low": Q(stock__gte=1, stock__lte=5),
            "some": Q(stock__gt=5),
        }
        condition = conditions.get(self.value())
        return queryset if condition is None else queryset.filter(condition)


class ShippingZoneInline(admin.TabularInline):
    model = ShippingZone
    extra = 0
    fields = ["postal_prefix", "name", "base_fee", "per_extra_unit", "free_over"]


class MerchantOfferInline(admin.TabularInline):
    """The merchant's most recently changed offers, editable in place.

    A merchant sells thousands of products; rendering them all would make the page
    unusable, so the full list lives in the Offer changelist (filter by merchant).
    """

    model = Offer
    extra = 0
    shown = 50
    verbose_name_plural = f"latest {shown} changed offers (all of them: Offers, by merchant)"
    fields = ["product", "merchant_sku", "unit_price", "stock", "active", "updated_at"]
    readonly_fields = ["product", "merchant_sku", "updated_at"]
    show_change_link = True
    can_delete = False

    def has_add_permission(self, request, obj=None):
        # New offers are added on the product page, where the product is chosen.
        return False

    def get_formset(self, request, obj=None, **kwargs):
        # Inline instances are per request, so remembering the merchant here is safe.
        self._merchant = obj
        return super().get_formset(request, obj, **kwargs)

    def get_queryset(self, request):
        offers = super().get_queryset(request).select_related("product")
        merchant = getattr(self, "_merchant", None)
        if merchant is None:
            return offers.none()
        latest = Offer.objects.filter(merchant=merchant).order_by("-updated_at", "-id").values("pk")
        return offers.filter(pk__in=Subquery(latest[: self.shown])).order_by("-updated_at", "-id")


@admin.register(Merchant)
class MerchantAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "slug",
        "active",
        "base_fee_display",
        "per_extra_unit_display",
        "free_over_display",
        "discount_display",
        "offer_count",
        "zone_count",
    ]
    list_filter = ["active"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    actions = [make_active, make_inactive]
    inlines = [ShippingZoneInline, MerchantOfferInline]
    fieldsets = [
        (None, {"fields": ["name", "slug", "active"]}),
        ("Default shipping", {"fields": ["base_fee", "per_extra_unit", "free_over"]}),
        (
            "Multi-item discount",
            {"fields": ["discount_min_units", "discount_basis_points"]},
        ),
    ]

    base_fee_display = _money_column("base_fee", "base fee")
    per_extra_unit_display = _money_column("per_extra_unit", "per extra unit")
    free_over_display = _money_column("free_over", "free over")

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                _offer_count=Count("offers", filter=Q(offers__active=True), distinct=True),
                _zone_count=Count("zones", distinct=True),
            )
        )

    @admin.display(description="discount")
    def discount_display(self, obj: Merchant) -> str:
        if obj.discount is None:
            return "-"
        basis_points = format_basis_points(obj.discount.basis_points)
        return f"{basis_points} from {obj.discount.min_units} units"

    @admin.display(description="active offers", ordering="_offer_count")
    def offer_count(self, obj: Merchant) -> int:
        return obj._offer_count

    @admin.display(description="zones", ordering="_zone_count")
    def zone_count(self, obj: Merchant) -> int:
        return obj._zone_count


@admin.register(ShippingZone)
class ShippingZoneAdmin(admin.ModelAdmin):
    list_display = [
        "merchant",
        "postal_prefix",
        "name",
        "base_fee_display",
        "per_extra_unit_display",
        "free_over_display",
    ]
    list_select_related = ["merchant"]
    list_filter = [("merchant", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["postal_prefix", "name", "merchant__name"]
    autocomplete_fields = ["merchant"]

    base_fee_display = _money_column("base_fee", "base fee")
    per_extra_unit_display = _money_column("per_extra_unit", "per extra unit")
    free_over_display = _money_column("free_over", "free over")


@admin.register(Category)
class CategoryAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "product_count"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_product_count=Count("products"))

    @admin.display(description="products", ordering="_product_count")
    def product_count(self, obj: Category) -> int:
        return obj._product_count


class ProductOfferInline(admin.TabularInline):
    model = Offer
    extra = 0
    fields = ["merchant", "merchant_sku", "unit_price", "stock", "active", "updated_at"]
    readonly_fields = ["updated_at"]
    autocomplete_fields = ["merchant"]
    show_change_link = True

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("merchant")


@admin.register(Product)
class ProductAdmin(admin.ModelAdmin):
    list_display = ["name", "gtin", "category", "active_offer_count", "cheapest", "updated_at"]
    list_select_related = ["category"]
    list_filter = ["category"]
    search_fields = ["name", "=gtin", "slug"]
    autocomplete_fields = ["category"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [ProductOfferInline]
    show_full_result_count = False
    actions = ["recompute_cheapest"]

    def get_queryset(self, request):
        active = Q(offers__active=True)
        return (
            super()
            .get_queryset(request)
            .annotate(
                _offer_count=Count("offers", filter=active),
                _cheapest=Min("offers__unit_price", filter=active),
            )
        )

    @admin.display(description="active offers", ordering="_offer_count")
    def active_offer_count(self, obj: Product) -> int:
        return obj._offer_count

    @admin.display(description="cheapest", ordering="_cheapest")
    def cheapest(self, obj: Product) -> str:
        return format_money(obj._cheapest) or "-"

    @admin.action(description="Recompute the stored cheapest offer")
    def recompute_cheapest(self, request, queryset):
        with transaction.atomic():
            marked = catalog_cheapest_mark_stale(product_ids=queryset.values_list("pk", flat=True))
            catalog_cheapest_recompute_request()
        self.message_user(request, f"{marked} products queued for a cheapest-offer refresh.")


@admin.register(Offer)
class OfferAdmin(admin.ModelAdmin):
    list_display = [
        "product",
        "merchant",
        "merchant_sku",
        "unit_price_display",
        "stock",
        "active",
        "updated_at",
    ]
    list_select_related = ["product", "merchant"]
    list_filter = ["active", StockFilter, ("merchant", admin.RelatedOnlyFieldListFilter)]
    list_editable = ["stock", "active"]
    search_fields = ["merchant_sku", "product__name", "=product__gtin", "merchant__name"]
    autocomplete_fields = ["product", "merchant"]
    readonly_fields = ["created_at", "updated_at"]
    actions = [make_active, make_inactive]
    show_full_result_count = False

    unit_price_display = _money_column("unit_price", "unit price")

    def get_queryset(self, request):
        # __str__ names product and merchant (autocomplete, cart line admin): select them.
        return super().get_queryset(request).select_related("product", "merchant")


class ReadOnlyAdminMixin:
    """Carts change only through the services, which check stock and bump the version;
    the admin is a support tool that can look and delete, not edit."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class CartLineInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = CartLine
    extra = 0
    fields = ["product", "offer", "quantity", "unit_price_snapshot", "updated_at"]
    readonly_fields = fields
    can_delete = False

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("product", "offer__product", "offer__merchant")
        )


class CartChangeList(ChangeList):
    """Prices the page's carts together (``cart_pricing_summaries``: one query for all their
    lines, one batched zone-index match for every merchant and destination), so the pricing
    columns cost no query per row."""

    def get_results(self, request):
        super().get_results(request)
        self.result_list = list(self.result_list)
        summaries = cart_pricing_summaries(carts=self.result_list)
        for cart, summary in zip(self.result_list, summaries, strict=True):
            cart.pricing = summary


@admin.register(Cart)
class CartAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = [
        "id",
        "owner",
        "session_display",
        "postal_code",
        "version",
        "line_count",
        "shipping_display",
        "total_display",
        "updated_at",
    ]
    list_select_related = ["owner"]
    list_filter = [("owner", admin.EmptyFieldListFilter)]
    search_fields = ["owner__username", "owner__email", "=session_key", "postal_code"]
    inlines = [CartLineInline]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_line_count=Count("lines"))

    @admin.display(description="session")
    def session_display(self, obj: Cart) -> str:
        return format_html("<code>{}…</code>", obj.session_key[:8]) if obj.session_key else "-"

    @admin.display(description="lines", ordering="_line_count")
    def line_count(self, obj: Cart) -> int:
        return obj._line_count

    def get_changelist(self, request, **kwargs):
        return CartChangeList

    @admin.display(description="shipping now")
    def shipping_display(self, obj: Cart) -> str:
        summary: CartPricingSummary = obj.pricing
        return format_money(summary.shipping) if summary.groups else "-"

    @admin.display(description="total now, with shipping")
    def total_display(self, obj: Cart) -> str:
        summary: CartPricingSummary = obj.pricing
        total = format_money(summary.total) if summary.groups else "-"
        if summary.unavailable:
            count = len(summary.unavailable)
            return f"{total} ({count} unavailable line{'s' if count != 1 else ''} left out)"
        return total


@admin.register(CartLine)
class CartLineAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = [
        "id",
        "cart",
        "product",
        "offer",
        "quantity",
        "unit_price_snapshot",
        "updated_at",
    ]
    list_select_related = ["cart", "product", "offer__product", "offer__merchant"]
    search_fields = ["product__name", "=product__gtin", "offer__merchant_sku"]
    list_filter = [("offer__merchant", admin.RelatedOnlyFieldListFilter)]


# --- offer feed imports ---------------------------------------------------------------------


class ImportJobUploadForm(forms.ModelForm):
    """The add page: a merchant and a file; the format comes from the file name unless
    chosen. Everything else of a job is written by the import itself."""

    format = forms.ChoiceField(
        choices=[("", "Detect from the file name"), *ImportJob.Format.choices],
        required=False,
        help_text="CSV (.csv, .tsv, .txt) or JSON Lines (.jsonl, .ndjson); .gz is fine. "
        "Columns: gtin, merchant_sku, price (or price_cents), stock, active.",
    )

    class Meta:
        model = ImportJob
        fields = ["merchant", "file", "format"]
        help_texts = {"file": "The merchant's offer feed; see the columns below."}

    def clean(self):
        data = super().clean()
        upload = data.get("file")
        if upload is not None and not data.get("format"):
            try:
                data["format"] = import_format_detect(upload.name)
            except DomainError as error:
                self.add_error("format", error.message)
        return data


class ImportJobBatchInline(admin.TabularInline):
    model = ImportJobBatch
    extra = 0
    can_delete = False
    fields = ["index", "rows", "created", "updated", "unchanged", "superseded", "seconds"]
    readonly_fields = fields
    verbose_name_plural = "committed batches"

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    """Upload a feed (Add), then watch it: the list and the page refresh themselves while a
    job is queued or running. A failed job can be resumed; its error report downloaded."""

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
        return FileResponse(job.file.open("rb"), as_attachment=True, filename=job.file.name)

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
        return obj.file.name.rsplit("/", 1)[-1] if obj.file else "-"

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
