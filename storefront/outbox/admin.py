"""Admin of the outbox: what was sent, what waits for a retry and why, and "retry now"."""

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from storefront.outbox.models import OutboxMessage
from storefront.outbox.services import outbox_messages_retry


class HasErrorFilter(admin.SimpleListFilter):
    title = "last attempt"
    parameter_name = "error"

    def lookups(self, request, model_admin):
        return [("yes", "Failed (retrying or given up)"), ("no", "No error")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.exclude(last_error="").exclude(status=OutboxMessage.Status.DELIVERED)
        if self.value() == "no":
            return queryset.filter(last_error="")
        return queryset


@admin.register(OutboxMessage)
class OutboxMessageAdmin(admin.ModelAdmin):
    list_display = (
        "pk",
        "task_name",
        "status",
        "attempts",
        "next_attempt_at",
        "created_at",
        "delivered_at",
        "short_error",
    )
    list_filter = ("status", HasErrorFilter, "task_name")
    search_fields = ("task_name", "last_error")
    date_hierarchy = "created_at"
    actions = ["retry_now"]
    readonly_fields = [field.name for field in OutboxMessage._meta.fields]

    @admin.display(description="last error")
    def short_error(self, message: OutboxMessage) -> str:
        return message.last_error[:120]

    @admin.action(description="Retry the selected messages now")
    def retry_now(self, request: HttpRequest, queryset: QuerySet[OutboxMessage]) -> None:
        result = outbox_messages_retry(message_ids=list(queryset.values_list("pk", flat=True)))
        level = messages.WARNING if result.failed else messages.SUCCESS
        self.message_user(
            request, f"{result.delivered} delivered, {result.failed} failed again.", level
        )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
