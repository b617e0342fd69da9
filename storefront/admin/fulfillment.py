"""Admin of fulfillment: warehouses with their parcel rates, stock per warehouse, weight tiers.

Catalog admins see every merchant's; merchant staff their own merchant's only
(``storefront.admin.scoping``). Every write goes through ``storefront.fulfillment`` services,
which keep ``Offer.stock`` the total and tell the price watch and the page cache.
"""

from django.contrib import admin, messages
from django.db.models import Count
from django.urls import reverse
from django.utils.html import format_html

from storefront.admin.common import money_column
from storefront.admin.money import MoneyAdminMixin
from storefront.admin.scoping import MerchantScopedAdmin, MerchantScopedInline
from storefront.errors import DomainError
from storefront.fulfillment.services import (
    parcel_rate_create,
    parcel_rate_delete,
    parcel_rate_set,
    parcel_rate_update,
    warehouse_create,
    warehouse_delete,
    warehouse_update,
)
from storefront.fulfillment.stock import warehouse_stock_remove, warehouse_stock_set
from storefront.models import ParcelRate, Warehouse, WarehouseStock, WeightTier
from storefront.money import format_money

_RATE_FIELDS = ("postal_prefix", "base_fee", "per_extra_unit", "per_kg_over")


def _saved(obj, created) -> None:
    """Gives the admin's in-memory object the state of the row a service wrote, so the admin
    goes on (inlines, log entry, redirect) as if it had saved it itself."""
    obj.pk = created.pk
    for field in created._meta.concrete_fields:
        setattr(obj, field.attname, getattr(created, field.attname))
    obj._state.adding = False


def _record(formset, *, new=(), changed=(), deleted=()) -> None:
    # What the admin's change message reads after save_related.
    formset.new_objects, formset.changed_objects, formset.deleted_objects = (
        list(new),
        list(changed),
        list(deleted),
    )


class ParcelRateInline(MerchantScopedInline, MoneyAdminMixin, admin.TabularInline):
    model = ParcelRate
    extra = 0
    fields = ["postal_prefix", "base_fee", "per_extra_unit", "per_kg_over", "tiers_link"]
    readonly_fields = ["tiers_link"]
    verbose_name_plural = "parcel rates (weight tiers: open a rate)"

    @admin.display(description="weight tiers")
    def tiers_link(self, rate: ParcelRate) -> str:
        if rate.pk is None:
            return "-"
        url = reverse("admin:storefront_parcelrate_change", args=[rate.pk])
        tiers = ", ".join(f"≤{t.up_to_g} g" for t in rate.tiers.all()) or "no tiers"
        return format_html('<a href="{}">{}</a>', url, tiers)

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("tiers")


@admin.register(Warehouse)
class WarehouseAdmin(MerchantScopedAdmin):
    list_display = ["name", "merchant", "city", "postal_code", "active", "stock_rows", "rates"]
    list_select_related = ["merchant"]
    list_filter = ["active", ("merchant", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["name", "city", "postal_code", "merchant__name"]
    autocomplete_fields = ["merchant"]
    inlines = [ParcelRateInline]
    fields = ["merchant", "name", "postal_code", "city", "active"]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(_stock_rows=Count("stock_rows", distinct=True))
            .annotate(_rates=Count("parcel_rates", distinct=True))
        )

    def get_readonly_fields(self, request, obj=None):
        # A warehouse stays with its merchant: its stock rows are that merchant's offers.
        return ["merchant"] if obj is not None else []

    @admin.display(description="stock rows", ordering="_stock_rows")
    def stock_rows(self, warehouse) -> str:
        url = reverse("admin:storefront_warehousestock_changelist")
        return format_html(
            '<a href="{}?warehouse__id__exact={}">{}</a>', url, warehouse.pk, warehouse._stock_rows
        )

    @admin.display(description="parcel rates", ordering="_rates")
    def rates(self, warehouse) -> int:
        return warehouse._rates

    def save_model(self, request, obj, form, change):
        values = {name: form.cleaned_data[name] for name in ("name", "postal_code", "city")}
        if change:
            warehouse_update(warehouse=obj, active=form.cleaned_data["active"], **values)
            return
        created = warehouse_create(
            merchant=form.cleaned_data["merchant"], active=form.cleaned_data["active"], **values
        )
        _saved(obj, created)
        if created.active and ParcelRate.objects.filter(warehouse=created).exists():
            self.message_user(
                request,
                "The merchant's first warehouse took over its offers' stock and its shipping "
                "as parcel rates; change them here and in Warehouse stock.",
                messages.INFO,
            )

    def save_formset(self, request, form, formset, change):
        if formset.model is not ParcelRate:
            return super().save_formset(request, form, formset, change)
        new, changed, deleted = [], [], []
        for inline_form in formset.deleted_forms:
            if inline_form.instance.pk is not None:
                parcel_rate_delete(rate=inline_form.instance)
                deleted.append(inline_form.instance)
        for inline_form in formset.forms:
            if inline_form in formset.deleted_forms or not inline_form.has_changed():
                continue
            values = {name: getattr(inline_form.instance, name) for name in _RATE_FIELDS}
            if inline_form.instance.pk is None:
                # A rate typed on a new merchant's first warehouse replaces the one it adopted.
                rate = parcel_rate_set(warehouse=form.instance, **values)
                _saved(inline_form.instance, rate)
                new.append(inline_form.instance)
            else:
                parcel_rate_update(rate=inline_form.instance, **values)
                changed.append((inline_form.instance, inline_form.changed_data))
        _record(formset, new=new, changed=changed, deleted=deleted)

    def delete_model(self, request, obj):
        warehouse_delete(warehouse=obj)

    def delete_queryset(self, request, queryset):
        for warehouse in queryset:
            warehouse_delete(warehouse=warehouse)


class WeightTierInline(MerchantScopedInline, MoneyAdminMixin, admin.TabularInline):
    model = WeightTier
    extra = 1
    fields = ["up_to_g", "fee"]
    verbose_name_plural = (
        "weight tiers: a parcel pays the fee of the first tier its weight fits; above the "
        "last, that fee plus the fee per started kg over"
    )


@admin.register(ParcelRate)
class ParcelRateAdmin(MoneyAdminMixin, MerchantScopedAdmin):
    merchant_lookup = "warehouse__merchant"
    list_display = [
        "warehouse",
        "postal_prefix_display",
        "base_fee_display",
        "per_extra_unit_display",
        "per_kg_over_display",
        "tier_list",
    ]
    list_select_related = ["warehouse__merchant"]
    list_filter = [("warehouse__merchant", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["warehouse__name", "warehouse__merchant__name", "postal_prefix"]
    autocomplete_fields = ["warehouse"]
    fields = ["warehouse", "postal_prefix", "base_fee", "per_extra_unit", "per_kg_over"]
    inlines = [WeightTierInline]

    base_fee_display = money_column("base_fee", "base fee")
    per_extra_unit_display = money_column("per_extra_unit", "per extra unit")
    per_kg_over_display = money_column("per_kg_over", "per kg over")

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("tiers")

    def get_readonly_fields(self, request, obj=None):
        return ["warehouse"] if obj is not None else []

    @admin.display(description="postal prefix", ordering="postal_prefix")
    def postal_prefix_display(self, rate: ParcelRate) -> str:
        return rate.postal_prefix or "everywhere"

    @admin.display(description="weight tiers")
    def tier_list(self, rate: ParcelRate) -> str:
        tiers = rate.tiers.all()
        return ", ".join(f"≤{t.up_to_g} g: {format_money(t.fee)}" for t in tiers) or "-"

    def save_model(self, request, obj, form, change):
        values = {name: getattr(obj, name) for name in _RATE_FIELDS}
        if change:
            parcel_rate_update(rate=obj, **values)
            return
        _saved(obj, parcel_rate_create(warehouse=form.cleaned_data["warehouse"], **values))

    def save_formset(self, request, form, formset, change):
        if formset.model is not WeightTier:
            return super().save_formset(request, form, formset, change)
        kept = [
            inline_form
            for inline_form in formset.forms
            if inline_form not in formset.deleted_forms
            and inline_form.cleaned_data
            and (inline_form.instance.pk is not None or inline_form.has_changed())
        ]
        # The formset checked that no two tiers share a weight: sorted, they increase.
        tiers = sorted((f.cleaned_data["up_to_g"], f.cleaned_data["fee"]) for f in kept)
        parcel_rate_update(rate=form.instance, tiers=tiers)
        _record(
            formset,
            new=[f.instance for f in kept if f.instance.pk is None],
            changed=[
                (f.instance, f.changed_data) for f in kept if f.instance.pk and f.changed_data
            ],
            deleted=[f.instance for f in formset.deleted_forms if f.instance.pk is not None],
        )

    def delete_model(self, request, obj):
        parcel_rate_delete(rate=obj)

    def delete_queryset(self, request, queryset):
        for rate in queryset.select_related("warehouse"):
            parcel_rate_delete(rate=rate)


@admin.register(WarehouseStock)
class WarehouseStockAdmin(MerchantScopedAdmin):
    """An offer's stock at one warehouse; an offer sells from a warehouse only with a row
    here. The offer's own stock shows the total over its merchant's active warehouses."""

    merchant_lookup = "warehouse__merchant"
    list_display = ["offer", "warehouse", "stock", "offer_total", "updated_at"]
    list_select_related = ["offer__product", "offer__merchant", "warehouse__merchant"]
    # Related-only: a plain filter would list every merchant's warehouses to merchant staff.
    list_filter = [
        ("warehouse", admin.RelatedOnlyFieldListFilter),
        ("warehouse__merchant", admin.RelatedOnlyFieldListFilter),
    ]
    list_editable = ["stock"]
    search_fields = ["offer__merchant_sku", "offer__product__name", "=offer__product__gtin"]
    autocomplete_fields = ["offer", "warehouse"]
    fields = ["offer", "warehouse", "stock"]
    show_full_result_count = False

    def get_readonly_fields(self, request, obj=None):
        return ["offer", "warehouse"] if obj is not None else []

    @admin.display(description="offer's total")
    def offer_total(self, row: WarehouseStock) -> str:
        return "unlimited" if row.offer.stock is None else str(row.offer.stock)

    def save_model(self, request, obj, form, change):
        try:
            written = warehouse_stock_set(offer=obj.offer, warehouse=obj.warehouse, stock=obj.stock)
        except DomainError as error:  # the stock moved under a concurrent order: say so
            self.message_user(request, error.message, messages.ERROR)
            return
        _saved(obj, written)

    def delete_model(self, request, obj):
        warehouse_stock_remove(offer=obj.offer, warehouse=obj.warehouse)

    def delete_queryset(self, request, queryset):
        for row in queryset.select_related("offer", "warehouse"):
            warehouse_stock_remove(offer=row.offer, warehouse=row.warehouse)
