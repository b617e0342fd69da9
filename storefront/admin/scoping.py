"""Merchant self-service in the admin: merchant staff (``MerchantStaff``) see and change only
their own merchant's rows.

A scoped admin filters its queryset to the staff member's merchant, limits every foreign-key
choice to that merchant's rows (so posting another merchant's id is a form error, not a row
for them), answers 404 for another merchant's object and checks the object's merchant in every
permission. Catalog admins (anyone who is not merchant staff) keep the plain model permissions.
"""

from django.contrib import admin
from django.http import Http404

from storefront.models import Merchant, Offer, ParcelRate, Warehouse


def staff_merchant_id(request) -> int | None:
    """The merchant an active staff user works for; ``None`` for everyone else (catalog
    admins keep their model permissions, shoppers never reach the admin)."""
    cached = getattr(request, "_staff_merchant_id", False)
    if cached is not False:
        return cached
    user = request.user
    staff = getattr(user, "merchant_staff", None) if user.is_active and user.is_staff else None
    merchant_id = staff.merchant_id if staff is not None else None
    request._staff_merchant_id = merchant_id
    return merchant_id


def scoped_choices(model, merchant_id: int):
    """The rows of ``model`` a merchant's staff may pick in a form, ``None`` if unscoped."""
    if model is Merchant:
        return Merchant.objects.filter(pk=merchant_id)
    if model is Warehouse:
        return Warehouse.objects.filter(merchant_id=merchant_id)
    if model is Offer:
        return Offer.objects.filter(merchant_id=merchant_id).select_related("product", "merchant")
    if model is ParcelRate:
        return ParcelRate.objects.filter(warehouse__merchant_id=merchant_id)
    return None


def _merchant_of(obj, lookup: str) -> int | None:
    *path, last = lookup.split("__")
    target = obj
    for name in path:
        target = getattr(target, name, None)
        if target is None:
            return None
    return getattr(target, f"{last}_id", None)


class _ScopedFormFields:
    """Foreign-key choices limited to the staff member's merchant; no autocomplete towards
    admins merchant staff cannot open (merchants)."""

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        merchant_id = staff_merchant_id(request)
        if merchant_id is not None:
            choices = scoped_choices(db_field.remote_field.model, merchant_id)
            if choices is not None:
                kwargs["queryset"] = choices
        return super().formfield_for_foreignkey(db_field, request, **kwargs)  # type: ignore[misc]

    def get_autocomplete_fields(self, request):
        fields = super().get_autocomplete_fields(request)  # type: ignore[misc]
        if staff_merchant_id(request) is None:
            return fields
        model = self.model  # type: ignore[attr-defined]
        return [
            name
            for name in fields
            if model._meta.get_field(name).remote_field.model is not Merchant
        ]


class MerchantScopedAdmin(_ScopedFormFields, admin.ModelAdmin):
    """``merchant_lookup``: the path from the model to its merchant (``"merchant"``,
    ``"warehouse__merchant"``, ...)."""

    merchant_lookup = "merchant"
    staff_may_add = True
    staff_may_delete = True

    def get_queryset(self, request):
        rows = super().get_queryset(request)
        merchant_id = staff_merchant_id(request)
        if merchant_id is None:
            return rows
        return rows.filter(**{self.merchant_lookup: merchant_id})

    def get_object(self, request, object_id, from_field=None):
        obj = super().get_object(request, object_id, from_field)
        if obj is None and staff_merchant_id(request) is not None:
            # Another merchant's object (or none): the same answer, so ids reveal nothing.
            raise Http404("No such object.")
        return obj

    def get_changeform_initial_data(self, request):
        initial = super().get_changeform_initial_data(request)
        merchant_id = staff_merchant_id(request)
        if merchant_id is not None and self.merchant_lookup == "merchant":
            initial.setdefault("merchant", str(merchant_id))
        return initial

    def _owns(self, request, obj) -> bool:
        return obj is None or _merchant_of(obj, self.merchant_lookup) == staff_merchant_id(request)

    def has_module_permission(self, request):
        return staff_merchant_id(request) is not None or super().has_module_permission(request)

    def has_view_permission(self, request, obj=None):
        if staff_merchant_id(request) is not None:
            return self._owns(request, obj)
        return super().has_view_permission(request, obj)

    def has_change_permission(self, request, obj=None):
        if staff_merchant_id(request) is not None:
            return self._owns(request, obj)
        return super().has_change_permission(request, obj)

    def has_add_permission(self, request):
        if staff_merchant_id(request) is not None:
            return self.staff_may_add
        return super().has_add_permission(request)

    def has_delete_permission(self, request, obj=None):
        if staff_merchant_id(request) is not None:
            return self.staff_may_delete and self._owns(request, obj)
        return super().has_delete_permission(request, obj)


class MerchantScopedInline(_ScopedFormFields):
    """An inline of a scoped admin's page: the page's object is the staff member's already
    (its admin checked), so staff may edit its rows."""

    def has_view_permission(self, request, obj=None):
        if staff_merchant_id(request) is not None:
            return True
        return super().has_view_permission(request, obj)  # type: ignore[misc]

    def has_change_permission(self, request, obj=None):
        if staff_merchant_id(request) is not None:
            return True
        return super().has_change_permission(request, obj)  # type: ignore[misc]

    def has_add_permission(self, request, obj=None):
        if staff_merchant_id(request) is not None:
            return True
        return super().has_add_permission(request, obj)  # type: ignore[misc]

    def has_delete_permission(self, request, obj=None):
        if staff_merchant_id(request) is not None:
            return True
        return super().has_delete_permission(request, obj)  # type: ignore[misc]
