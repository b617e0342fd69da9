"""Admin of the catalog: categories, products (with their offers) and offers."""

from typing import TYPE_CHECKING, TypedDict

from django import forms
from django.contrib import admin
from django.db.models import Count, Min, Q

from storefront.admin.common import make_active, make_inactive, money_column
from storefront.admin.money import MoneyAdminMixin
from storefront.admin.scoping import MerchantScopedAdmin, staff_merchant_id
from storefront.catalog.services import offer_create, offer_update, products_cheapest_refresh
from storefront.fulfillment.services import product_weight_set
from storefront.fulfillment.stock import offer_stock_totals_sync
from storefront.models import Category, Offer, Product, Warehouse
from storefront.money import format_money
from storefront.validators import gtin_normalize

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


class OfferForm(forms.ModelForm):
    """An offer's form everywhere in the admin: a merchant that ships from warehouses keeps
    its stock per warehouse, and the offer's own stock is their total, never typed."""

    def clean(self):
        data = super().clean() or {}
        if "stock" in self.changed_data:
            merchant = data.get("merchant")
            merchant_id = merchant.pk if merchant is not None else self.instance.merchant_id
            if (
                merchant_id is not None
                and Warehouse.objects.filter(merchant_id=merchant_id, active=True).exists()
            ):
                self.add_error(
                    "stock",
                    "This merchant ships from warehouses: set the stock per warehouse "
                    "(Warehouse stock); the offer's stock is their total.",
                )
        return data


class ProductByGtinField(forms.ModelChoiceField):
    """A product picked by its GTIN: how merchant staff, who do not browse the catalog admin,
    name the product they sell."""

    widget = forms.TextInput
    default_error_messages = {"invalid_choice": "No product with this GTIN in the catalog."}

    def __init__(self, **kwargs):
        kwargs.pop("to_field_name", None)
        kwargs.setdefault("help_text", "The product's GTIN (8, 12, 13 or 14 digits).")
        kwargs.setdefault("label", "Product GTIN")
        super().__init__(to_field_name="gtin", **kwargs)

    def to_python(self, value):
        return super().to_python(gtin_normalize(value or "") or None)


def offers_stock_follow_warehouses(offers) -> None:
    """New offers of a merchant with warehouses sell from none until stocked there."""
    offer_stock_totals_sync(offer_ids=[offer.pk for offer in offers if offer.pk is not None])


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
    form = OfferForm
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

    def save_model(self, request, obj, form, change):
        weight = obj.weight_g
        if change and "weight_g" in form.changed_data:
            # The weight goes through its service: it changes what carts cost (price watch).
            obj.weight_g = form.initial.get("weight_g", 0)
            super().save_model(request, obj, form, change)
            product_weight_set(product=obj, weight_g=weight)
            return
        super().save_model(request, obj, form, change)

    def save_formset(self, request, form, formset, change):
        super().save_formset(request, form, formset, change)
        if formset.model is Offer:
            offers_stock_follow_warehouses(formset.new_objects)

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
class OfferAdmin(MoneyAdminMixin, MerchantScopedAdmin):
    """Merchant staff see and change their merchant's offers (prices, stock, active) and
    add offers for it; catalog admins every offer. Writes go through the catalog services."""

    form = OfferForm
    staff_may_delete = False
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

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None and staff_merchant_id(request) is not None:
            fields += ["product", "merchant", "merchant_sku"]
        return fields

    def get_autocomplete_fields(self, request):
        fields = super().get_autocomplete_fields(request)
        if staff_merchant_id(request) is None:
            return fields
        return [name for name in fields if name != "product"]

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "product" and staff_merchant_id(request) is not None:
            return ProductByGtinField(queryset=Product.objects.all(), **kwargs)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def get_changelist_form(self, request, **kwargs):
        kwargs.setdefault("form", OfferForm)
        return super().get_changelist_form(request, **kwargs)

    def save_model(self, request, obj, form, change):
        if not change:
            created = offer_create(
                product=obj.product,
                merchant=obj.merchant,
                merchant_sku=obj.merchant_sku,
                unit_price=obj.unit_price,
                stock=obj.stock,
                active=obj.active,
            )
            obj.pk, obj.created_at, obj.updated_at = (
                created.pk,
                created.created_at,
                created.updated_at,
            )
            obj._state.adding = False
            offers_stock_follow_warehouses([obj])
            return
        if {"product", "merchant", "merchant_sku"} & set(form.changed_data):
            # Moving an offer (catalog admins only): the model receivers tell the caches.
            super().save_model(request, obj, form, change)
            return
        changes = {
            name: getattr(obj, name)
            for name in ("unit_price", "stock", "active")
            if name in form.changed_data
        }
        if changes:
            offer_update(offer=obj, **changes)
