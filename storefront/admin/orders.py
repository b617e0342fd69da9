"""Orders in the admin. Catalog admins see every order (with its money: the ledger's events,
its refunds, what is due and what the shop holds); merchant staff (``MerchantStaff``)
see only their merchant's packages, with the ship-to address and nothing else of the
customer, and move them on with the list's actions (the box next to the actions takes the
tracking reference or the cancel reason). Every move goes through
``merchant_order_transition``, which records who and when."""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm

from storefront.admin.ledger import PaymentEventInline, RefundInline
from storefront.errors import DomainError
from storefront.models import MerchantOrder, MerchantStaff, Order, OrderEvent, OrderLine
from storefront.money import format_money
from storefront.orders.selectors import merchant_order_list
from storefront.orders.services import merchant_order_transition


def _is_merchant_staff(request) -> bool:
    user = request.user
    return user.is_active and user.is_staff and hasattr(user, "merchant_staff")


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_view_permission(self, request, obj=None) -> bool:
        # Shown inside a package or order the user may already see.
        return _is_merchant_staff(request) or super().has_view_permission(request, obj)


def _money(cents: int, order: Order) -> str:
    return format_money(cents, currency=order.currency)


class OrderLineInline(ReadOnlyInline):
    model = OrderLine
    fields = readonly_fields = (
        "product_name",
        "gtin",
        "merchant_sku",
        "unit_price_display",
        "quantity",
        "line_total_display",
    )

    @admin.display(description="Unit price")
    def unit_price_display(self, line: OrderLine) -> str:
        return _money(line.unit_price, line.merchant_order.order)

    @admin.display(description="Line total")
    def line_total_display(self, line: OrderLine) -> str:
        return _money(line.line_total, line.merchant_order.order)


_PAYMENT_LABELS: dict[str, str] = {
    Order.Status.PAID: "Paid",
    Order.Status.PENDING: "Awaiting payment: do not ship",
    Order.Status.FAILED: "Payment failed: do not ship",
    Order.Status.CANCELLED: "Order cancelled",
}


def package_next_step(*, package: MerchantOrder) -> str:
    """What the merchant does next with ``package``, in the order the actions allow."""
    status = package.status
    if package.order.status == Order.Status.PENDING and status == MerchantOrder.Status.PLACED:
        return "Wait: the shopper has not paid yet. Do not accept or ship it."
    if status == MerchantOrder.Status.PLACED and package.order.status == Order.Status.PAID:
        return "Accept it, then mark it shipped with its tracking reference."
    if status == MerchantOrder.Status.ACCEPTED:
        return "Mark it shipped, with the tracking reference typed in the box by the actions."
    if status == MerchantOrder.Status.SHIPPED:
        return "Mark it delivered once it has arrived."
    return "Nothing: this package is done."


class PaymentFilter(admin.SimpleListFilter):
    """Paid packages are the ones to work on; an unpaid one must not look like them."""

    title = "payment"
    parameter_name = "payment"

    def lookups(self, request, model_admin):
        return [
            (Order.Status.PAID, "Paid"),
            (Order.Status.PENDING, "Awaiting payment"),
            (Order.Status.FAILED, "Payment failed"),
            (Order.Status.CANCELLED, "Order cancelled"),
        ]

    def queryset(self, request, queryset):
        if self.value() in Order.Status.values:
            return queryset.filter(order__status=self.value())
        return queryset


class PackageMoneyColumns:
    """A package's amounts in the order's currency (the model keeps integer cents)."""

    @admin.display(description="Items")
    def subtotal_display(self, package: MerchantOrder) -> str:
        return _money(package.subtotal, package.order)

    @admin.display(description="Discount")
    def discount_display(self, package: MerchantOrder) -> str:
        return _money(package.discount, package.order)

    @admin.display(description="Shipping")
    def shipping_display(self, package: MerchantOrder) -> str:
        return _money(package.shipping, package.order)

    @admin.display(description="Total")
    def cost_display(self, package: MerchantOrder) -> str:
        return _money(package.cost, package.order)


class PackageEventInline(ReadOnlyInline):
    model = OrderEvent
    fk_name = "merchant_order"
    fields = readonly_fields = ("at", "from_status", "to_status", "note", "by")


class MerchantOrderActionForm(ActionForm):
    text = forms.CharField(
        label="Tracking reference / cancel reason", required=False, max_length=300
    )


def _transition(action: str, done: str):
    def run(modeladmin, request, queryset):
        text = request.POST.get("text", "")
        moved = 0
        for package in queryset.order_by("pk"):
            try:
                merchant_order_transition(
                    package=package,
                    action=action,
                    user=request.user,
                    tracking_reference=text,
                    reason=text,
                )
            except DomainError as error:
                modeladmin.message_user(
                    request, f"{package}: {error.message}", level=messages.ERROR
                )
            else:
                moved += 1
        if moved:
            modeladmin.message_user(request, f"{moved} package(s) {done}.", messages.SUCCESS)

    run.__name__ = f"{action}_selected"
    return run


@admin.register(MerchantOrder)
class MerchantOrderAdmin(PackageMoneyColumns, admin.ModelAdmin):
    list_display = (
        "order_number",
        "merchant_name",
        "payment",
        "status",
        "package_total",
        "tracking_reference",
        "placed_at",
    )
    list_filter = (PaymentFilter, "status")
    search_fields = ("order__number", "tracking_reference")
    action_form = MerchantOrderActionForm
    actions = [
        admin.action(description="Accept")(_transition("accept", "accepted")),
        admin.action(description="Mark shipped (tracking reference in the box)")(
            _transition("ship", "shipped")
        ),
        admin.action(description="Mark delivered")(_transition("deliver", "delivered")),
        admin.action(description="Cancel (reason in the box)")(_transition("cancel", "cancelled")),
    ]
    fields = readonly_fields = (
        "order_number",
        "merchant_name",
        "payment",
        "status",
        "next_step",
        "tracking_reference",
        "cancel_reason",
        "ship_to",
        "subtotal_display",
        "discount_display",
        "shipping_display",
        "package_total",
        "placed_at",
    )
    inlines = [OrderLineInline, PackageEventInline]

    class Media:
        css = {"all": ("storefront/admin/merchant_orders.css",)}

    def get_queryset(self, request):
        return merchant_order_list(user=request.user)

    def has_module_permission(self, request) -> bool:
        return _is_merchant_staff(request) or super().has_module_permission(request)

    def has_view_permission(self, request, obj=None) -> bool:
        return _is_merchant_staff(request) or super().has_view_permission(request, obj)

    def has_change_permission(self, request, obj=None) -> bool:
        return _is_merchant_staff(request) or super().has_change_permission(request, obj)

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    @admin.display(description="Order", ordering="order__number")
    def order_number(self, package: MerchantOrder) -> str:
        return package.order.number

    @admin.display(description="Total", ordering="cost")
    def package_total(self, package: MerchantOrder) -> str:
        return _money(package.cost, package.order)

    @admin.display(description="Payment", ordering="order__status")
    def payment(self, package: MerchantOrder) -> str:
        return _PAYMENT_LABELS.get(package.order.status, package.order.get_status_display())

    @admin.display(description="Next step")
    def next_step(self, package: MerchantOrder) -> str:
        return package_next_step(package=package)

    @admin.display(description="Placed", ordering="order__placed_at")
    def placed_at(self, package: MerchantOrder):
        return package.order.placed_at

    @admin.display(description="Ship to")
    def ship_to(self, package: MerchantOrder) -> str:
        order = package.order
        return (
            f"{order.full_name}, {order.address_line}, {order.postal_code} {order.city}, "
            f"{order.country}"
        )


class OrderPackageInline(PackageMoneyColumns, ReadOnlyInline):
    model = MerchantOrder
    fields = readonly_fields = (
        "merchant_name",
        "status",
        "tracking_reference",
        "subtotal_display",
        "discount_display",
        "shipping_display",
        "cost_display",
    )
    show_change_link = True


class OrderEventInline(ReadOnlyInline):
    model = OrderEvent
    fields = readonly_fields = ("at", "merchant_order", "from_status", "to_status", "note", "by")


@admin.register(Order)
class OrderAdmin(admin.ModelAdmin):
    """Catalog admins only (the model permissions): the whole order, read-only."""

    list_display = ("number", "status", "email", "total_display", "net_display", "placed_at")
    list_filter = ("status",)
    search_fields = ("number", "email")
    list_select_related = ("owner",)
    readonly_fields = [
        *(field.name for field in Order._meta.fields),
        "due_display",
        "net_display",
    ]
    inlines = [OrderPackageInline, RefundInline, PaymentEventInline, OrderEventInline]

    @admin.display(description="Total", ordering="total")
    def total_display(self, order: Order) -> str:
        return format_money(order.total, currency=order.currency)

    @admin.display(description="Due now (packages not cancelled)")
    def due_display(self, order: Order) -> str:
        return format_money(order.amount_due, currency=order.currency)

    @admin.display(description="Held (captured - refunded)")
    def net_display(self, order: Order) -> str:
        return format_money(order.amount_net, currency=order.currency)

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        # An order is a record of money taken and given back (its ledger goes with it).
        return False


@admin.register(MerchantStaff)
class MerchantStaffAdmin(admin.ModelAdmin):
    list_display = ("user", "merchant")
    autocomplete_fields = ("merchant",)
    raw_id_fields = ("user",)
