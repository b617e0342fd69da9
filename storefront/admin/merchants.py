"""Admin of merchants and their shipping zones."""

from typing import TYPE_CHECKING, TypedDict

from django.contrib import admin
from django.db.models import Count, Q, Subquery

from storefront.admin.catalog import OfferForm
from storefront.admin.common import make_active, make_inactive, money_column
from storefront.admin.money import MoneyAdminMixin
from storefront.models import Merchant, Offer, ShippingZone
from storefront.money import format_basis_points

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

    class _MerchantCounts(TypedDict):
        _offer_count: int
        _zone_count: int

    MerchantRow = WithAnnotations[Merchant, _MerchantCounts]


class ShippingZoneInline(MoneyAdminMixin, admin.TabularInline):
    model = ShippingZone
    extra = 0
    fields = ["postal_prefix", "name", "base_fee", "per_extra_unit", "free_over"]


class MerchantOfferInline(MoneyAdminMixin, admin.TabularInline):
    """The merchant's most recently changed offers, editable in place.

    A merchant sells thousands of products; rendering them all would make the page
    unusable, so the full list lives in the Offer changelist (filter by merchant).
    """

    model = Offer
    form = OfferForm
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
class MerchantAdmin(MoneyAdminMixin, admin.ModelAdmin):
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
        ("Marketplace commission", {"fields": ["commission_bps"]}),
    ]

    base_fee_display = money_column("base_fee", "base fee")
    per_extra_unit_display = money_column("per_extra_unit", "per extra unit")
    free_over_display = money_column("free_over", "free over")

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
    def offer_count(self, obj: "MerchantRow") -> int:
        return obj._offer_count

    @admin.display(description="zones", ordering="_zone_count")
    def zone_count(self, obj: "MerchantRow") -> int:
        return obj._zone_count


@admin.register(ShippingZone)
class ShippingZoneAdmin(MoneyAdminMixin, admin.ModelAdmin):
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

    base_fee_display = money_column("base_fee", "base fee")
    per_extra_unit_display = money_column("per_extra_unit", "per extra unit")
    free_over_display = money_column("free_over", "free over")
