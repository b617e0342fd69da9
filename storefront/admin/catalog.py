"""Admin of the catalog: categories, products (with their offers) and offers."""

from typing import TYPE_CHECKING, TypedDict

from django.contrib import admin
from django.db.models import Count, Min, Q

from storefront.admin.common import make_active, make_inactive, money_column
from storefront.admin.money import MoneyAdminMixin
from storefront.catalog.services import products_cheapest_refresh
from storefront.models import Category, Offer, Product
from storefront.money import format_money

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

    class _CategoryCounts(TypedDict):
        _product_count: int

    class _ProductCounts(TypedDict):
        _offer_count: int
        _cheapest: int | None

    CategoryRow = WithAnnotations[Category, _CategoryCounts]
    ProductRow = WithAnnotations[Product, _ProductCounts]


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
        value = self.value()
        condition = conditions.get(value) if value is not None else None
        return queryset if condition is None else queryset.filter(condition)


@admin.register(Category)
class CategoryAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "product_count"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_product_count=Count("products"))

    @admin.display(description="products", ordering="_product_count")
    def product_count(self, obj: "CategoryRow") -> int:
        return obj._product_count


class ProductOfferInline(MoneyAdminMixin, admin.TabularInline):
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
    search_fields = ["name", "brand", "=gtin", "slug"]
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
    def active_offer_count(self, obj: "ProductRow") -> int:
        return obj._offer_count

    @admin.display(description="cheapest", ordering="_cheapest")
    def cheapest(self, obj: "ProductRow") -> str:
        return format_money(obj._cheapest) or "-"

    @admin.action(description="Recompute the stored cheapest offer")
    def recompute_cheapest(self, request, queryset):
        marked = products_cheapest_refresh(products=queryset)
        self.message_user(request, f"{marked} products queued for a cheapest-offer refresh.")


@admin.register(Offer)
class OfferAdmin(MoneyAdminMixin, admin.ModelAdmin):
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

    unit_price_display = money_column("unit_price", "unit price")

    def get_queryset(self, request):
        # __str__ names product and merchant (autocomplete, cart line admin): select them.
        return super().get_queryset(request).select_related("product", "merchant")
