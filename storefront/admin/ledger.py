"""The payment ledger in the admin, for catalog admins (the model permissions): every order's
money events, read-only, and the refunds with their attempts and errors; a refund pending or
failed is asked of the provider again with "Retry now" (``refund_retry_now``)."""

from django.contrib import admin, messages
from django.db.models import QuerySet

from storefront.errors import DomainError
from storefront.models import PaymentEvent, Refund
from storefront.money import format_money
from storefront.payments.refunds import refund_retry_now


class _ReadOnly:
    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class RefundInline(_ReadOnly, admin.TabularInline):
    model = Refund
    extra = 0
    fields = readonly_fields = (
        "merchant_order",
        "reason",
        "amount_display",
        "status",
        "attempts",
        "last_error",
        "next_attempt_at",
        "succeeded_at",
    )
    show_change_link = True

    @admin.display(description="Amount")
    def amount_display(self, refund: Refund) -> str:
        return format_money(refund.amount, currency=refund.currency)


class PaymentEventInline(_ReadOnly, admin.TabularInline):
    model = PaymentEvent
    extra = 0
    fields = readonly_fields = (
        "at",
        "kind",
        "amount_display",
        "merchant_order",
        "refund",
        "provider_reference",
        "note",
    )

    @admin.display(description="Amount")
    def amount_display(self, event: PaymentEvent) -> str:
        return format_money(event.amount, currency=event.currency)


@admin.action(description="Retry now (ask the provider again)")
def retry_now(modeladmin, request, queryset: QuerySet[Refund]) -> None:
    queued = 0
    for refund_id in queryset.order_by("pk").values_list("pk", flat=True):
        try:
            refund_retry_now(refund_id=refund_id)
        except DomainError as error:
            modeladmin.message_user(request, f"Refund {refund_id}: {error.message}", messages.ERROR)
        else:
            queued += 1
    if queued:
        modeladmin.message_user(request, f"{queued} refund(s) sent to the provider again.")


@admin.register(Refund)
class RefundAdmin(_ReadOnly, admin.ModelAdmin):
    list_display = (
        "pk",
        "order_number",
        "merchant_order",
        "reason",
        "amount_display",
        "status",
        "attempts",
        "error_short",
        "next_attempt_at",
        "created_at",
    )
    list_filter = ("status", "reason")
    search_fields = ("order__number", "provider_reference")
    list_select_related = ("order", "merchant_order")
    actions = [retry_now]
    fields = readonly_fields = (
        "order",
        "merchant_order",
        "payment",
        "reason",
        "amount_display",
        "status",
        "attempts",
        "last_error",
        "next_attempt_at",
        "provider_reference",
        "idempotency_key",
        "created_at",
        "succeeded_at",
    )
    inlines = [PaymentEventInline]

    def has_change_permission(self, request, obj=None) -> bool:
        # The list's action needs it; every field stays read-only.
        return request.user.has_perm("storefront.change_refund")

    @admin.display(description="Order", ordering="order__number")
    def order_number(self, refund: Refund) -> str:
        return refund.order.number

    @admin.display(description="Amount", ordering="amount")
    def amount_display(self, refund: Refund) -> str:
        return format_money(refund.amount, currency=refund.currency)

    @admin.display(description="Last error")
    def error_short(self, refund: Refund) -> str:
        return refund.last_error[:80]


@admin.register(PaymentEvent)
class PaymentEventAdmin(_ReadOnly, admin.ModelAdmin):
    list_display = ("at", "order_number", "kind", "amount_display", "provider_reference")
    list_filter = ("kind",)
    search_fields = ("order__number", "provider_reference", "idempotency_key")
    list_select_related = ("order",)
    fields = readonly_fields = (
        "at",
        "order",
        "payment",
        "merchant_order",
        "refund",
        "kind",
        "amount_display",
        "currency",
        "provider_reference",
        "idempotency_key",
        "note",
    )

    @admin.display(description="Order", ordering="order__number")
    def order_number(self, event: PaymentEvent) -> str:
        return event.order.number

    @admin.display(description="Amount", ordering="amount")
    def amount_display(self, event: PaymentEvent) -> str:
        return format_money(event.amount, currency=event.currency)
