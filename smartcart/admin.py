from django.contrib import admin

from smartcart.models import OptimizationRun, PriceWatchRun


@admin.register(OptimizationRun)
class OptimizationRunAdmin(admin.ModelAdmin):
    """Read-only: runs are written by the optimizer, admins look at them to answer shoppers
    and to watch routing and timings."""

    list_display = (
        "id",
        "cart",
        "cart_version",
        "status",
        "source",
        "route",
        "algorithm",
        "optimal",
        "current_total",
        "suggested_total",
        "savings",
        "elapsed_ms",
        "created_at",
    )
    list_filter = ("status", "source", "route", "algorithm", "optimal")
    list_select_related = ("cart",)
    search_fields = ("=id", "=cart__id", "requested_by__username")
    date_hierarchy = "created_at"
    ordering = ("-created_at", "-id")

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(PriceWatchRun)
class PriceWatchRunAdmin(admin.ModelAdmin):
    """Read-only: what each price-watch run checked and found, how long it took and where
    it ran."""

    list_display = (
        "id",
        "status",
        "started_at",
        "route",
        "device",
        "products_changed",
        "merchants_changed",
        "carts_checked",
        "carts_improvable",
        "carts_price_up",
        "carts_notified",
        "emails_queued",
        "queries",
        "db_ms",
        "solve_ms",
        "duration_ms",
    )
    list_filter = ("status", "route", "device")
    date_hierarchy = "started_at"
    ordering = ("-started_at", "-id")

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
