"""The catalog admin: built for thousands of products and offers.

Every foreign key is an autocomplete (no 10,000-option selects), every list selects its
related rows in the same query, and the bulk actions go through querysets, not loops.
"""

from django.contrib import admin
from django.db.models import Count, Min, Q, Subquery
from django.utils.html import format_html

from storefront.models import Cart, CartLine, Category, Merchant, Offer, Product, ShippingZone
from storefront.money import format_basis_points, format_money


def _money_column(field: str, label: str):
    @admin.display(description=label, ordering=field)
    def column(modeladmin, obj):
        return format_money(getattr(obj, field))

    return column


@admin.action(description="Activate selected")
def make_active(modeladmin, request, queryset):
    updated = queryset.update(active=True)
    modeladmin.message_user(request, f"{updated} activated.")


@admin.action(description="Deactivate selected")
def make_inactive(modeladmin, request, queryset):
    updated = queryset.update(active=False)
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


@admin.register(Cart)
class CartAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = [
        "id",
        "owner",
        "session_display",
        "postal_code",
        "version",
        "line_count",
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
