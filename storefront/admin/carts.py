"""Admin of carts and their lines: read-only, priced together per page."""

from typing import TYPE_CHECKING, TypedDict

from django.contrib import admin
from django.contrib.admin.views.main import ChangeList
from django.db.models import Count
from django.utils.html import format_html

from storefront.admin.common import money_column
from storefront.carts.pricing_summary import CartPricingSummary, cart_pricing_summaries
from storefront.models import Cart, CartLine
from storefront.money import format_money

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

    class _CartRow(TypedDict):
        _line_count: int  # CartAdmin.get_queryset
        pricing: CartPricingSummary  # CartChangeList.get_results

    CartRow = WithAnnotations[Cart, _CartRow]


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
    fields = readonly_fields = (
        "product",
        "offer",
        "quantity",
        "unit_price_snapshot_display",
        "updated_at",
    )
    unit_price_snapshot_display = money_column("unit_price_snapshot", "unit price when added")
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
    def line_count(self, obj: "CartRow") -> int:
        return obj._line_count

    def get_changelist(self, request, **kwargs):
        return CartChangeList

    @admin.display(description="shipping now")
    def shipping_display(self, obj: "CartRow") -> str:
        summary: CartPricingSummary = obj.pricing
        return format_money(summary.shipping) if summary.groups else "-"

    @admin.display(description="total now, with shipping")
    def total_display(self, obj: "CartRow") -> str:
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
        "unit_price_snapshot_display",
        "updated_at",
    ]
    list_select_related = ["cart", "product", "offer__product", "offer__merchant"]
    unit_price_snapshot_display = money_column("unit_price_snapshot", "unit price when added")
    search_fields = ["product__name", "=product__gtin", "offer__merchant_sku"]
    list_filter = [("offer__merchant", admin.RelatedOnlyFieldListFilter)]
