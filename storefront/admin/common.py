"""What the model admins share: money columns and the activate/deactivate actions (writes in
``storefront.services``)."""

from django.contrib import admin
from django.db.models import QuerySet

from storefront.catalog.services import merchants_active_set, offers_active_set
from storefront.models import Merchant, Offer
from storefront.money import format_money


def money_column(field: str, label: str):
    @admin.display(description=label, ordering=field)
    def column(modeladmin, obj):
        return format_money(getattr(obj, field))

    return column


def _active_set(queryset: QuerySet, active: bool) -> int:
    if queryset.model is Offer:
        return offers_active_set(offers=queryset, active=active)
    if queryset.model is Merchant:
        return merchants_active_set(merchants=queryset, active=active)
    raise TypeError(f"No activate/deactivate service for {queryset.model.__name__}.")


@admin.action(description="Activate selected")
def make_active(modeladmin, request, queryset):
    updated = _active_set(queryset, True)
    modeladmin.message_user(request, f"{updated} activated.")


@admin.action(description="Deactivate selected")
def make_inactive(modeladmin, request, queryset):
    updated = _active_set(queryset, False)
    modeladmin.message_user(request, f"{updated} deactivated.")
