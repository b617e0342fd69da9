from django.contrib import admin

from smartcart.models import OptimizationRun


@admin.register(OptimizationRun)
class OptimizationRunAdmin(admin.ModelAdmin):
    """Read-only: runs are written by the optimizer, admins look at them to answer shoppers
    and to watch routing and timings."""

    list_display = (
        "id",
        "cart",
        "cart_version",
        "status",
        "route",
        "algorithm",
        "optimal",
        "current_total",
        "suggested_total",
        "savings",
        "elapsed_ms",
        "created_at",
    )
    list_filter = ("status", "route", "algorithm", "optimal")
    list_select_related = ("cart",)
    search_fields = ("=id", "=cart__id", "requested_by__username")
    date_hierarchy = "created_at"
    ordering = ("-created_at", "-id")

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
