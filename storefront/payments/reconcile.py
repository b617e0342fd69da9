"""The ledger's invariant, checked where no database constraint can hold it.

For every order: the sums kept on the order equal the sums of its events; and once its money
is settled (no refund still being asked of the provider), captured - refunded equals the cost
of its packages not cancelled. A paid order has money captured or authorised.
"""

from dataclasses import dataclass

from django.db import transaction
from django.db.models import (
    Exists,
    F,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
)
from django.db.models.functions import Coalesce

from storefront.models import MerchantOrder, Order, PaymentEvent, Refund
from storefront.payments.ledger import order_money_settle

Kind = PaymentEvent.Kind


@dataclass(frozen=True)
class Mismatch:
    order_number: str
    code: str
    message: str


def _sum_of(queryset: QuerySet, field: str) -> Coalesce:
    summed = queryset.order_by().values("order_id").annotate(total=Sum(field)).values("total")
    return Coalesce(Subquery(summed, output_field=IntegerField()), Value(0))


def _events(kind: str) -> Coalesce:
    return _sum_of(PaymentEvent.objects.filter(order_id=OuterRef("pk"), kind=kind), "amount")


def orders_with_ledger() -> QuerySet[Order]:
    """Orders with their event sums, the amount due and whether a refund is still open."""
    live = MerchantOrder.objects.filter(order_id=OuterRef("pk")).exclude(
        status=MerchantOrder.Status.CANCELLED
    )
    return Order.objects.annotate(
        ledger_authorized=_events(Kind.AUTHORIZATION),
        ledger_captured=_events(Kind.CAPTURE),
        ledger_refunded=_events(Kind.REFUND_SUCCEEDED),
        due=_sum_of(live, "cost"),
        refund_open=Exists(
            Refund.objects.filter(order_id=OuterRef("pk"), status=Refund.Status.PENDING)
        ),
    )


def _suspect_q() -> Q:
    """The orders ``_order_mismatches`` finds something wrong with, as one SQL filter, so a
    healthy shop's check reads no order into Python."""
    sums_differ = (
        ~Q(amount_authorized=F("ledger_authorized"))
        | ~Q(amount_captured=F("ledger_captured"))
        | ~Q(amount_refunded=F("ledger_refunded"))
    )
    paid_without_capture = Q(status=Order.Status.PAID, ledger_captured=0, ledger_authorized=0)
    settled = Q(refund_open=False) & (Q(ledger_captured__gt=0) | ~Q(status=Order.Status.PENDING))
    only_authorized = Q(ledger_captured=0, ledger_authorized__gt=0)
    net_differs = ~Q(due=F("ledger_captured") - F("ledger_refunded"))
    return sums_differ | paid_without_capture | (settled & ~only_authorized & net_differs)


def payment_mismatches(*, orders: QuerySet[Order] | None = None) -> list[Mismatch]:
    """Every order that breaks the invariant, with what is wrong, oldest first."""
    rows = (orders if orders is not None else orders_with_ledger()).filter(_suspect_q())
    found: list[Mismatch] = []
    for order in rows.order_by("pk").iterator(chunk_size=2000):
        found.extend(_order_mismatches(order))
    return found


def payment_mismatch_count() -> int:
    """How many orders break the invariant (one query: the /metrics gauge)."""
    return orders_with_ledger().filter(_suspect_q()).count()


def _only_authorized(order) -> bool:
    # Money held but not taken yet: nothing is settled until it is captured.
    return order.ledger_captured == 0 and order.ledger_authorized > 0


def _order_mismatches(order) -> list[Mismatch]:
    found = []
    for field, summed in (
        ("amount_authorized", order.ledger_authorized),
        ("amount_captured", order.ledger_captured),
        ("amount_refunded", order.ledger_refunded),
    ):
        if getattr(order, field) != summed:
            found.append(
                Mismatch(
                    order.number,
                    "sums_differ",
                    f"{field} is {getattr(order, field)} but its events add up to {summed}",
                )
            )
    net = order.ledger_captured - order.ledger_refunded
    settled = not order.refund_open and (
        order.ledger_captured > 0 or order.status != Order.Status.PENDING
    )
    if order.status == Order.Status.PAID and not (order.ledger_captured or order.ledger_authorized):
        found.append(Mismatch(order.number, "paid_without_capture", "paid, but nothing captured"))
    elif settled and not _only_authorized(order) and net != order.due:
        found.append(
            Mismatch(
                order.number,
                "net_differs",
                f"captured - refunded = {net}, but the live packages cost {order.due}",
            )
        )
    return found


@transaction.atomic
def order_settle_by_number(*, number: str) -> Refund | None:
    """Refunds what the order holds beyond what is due (``ledger.order_money_settle``)."""
    order = Order.objects.select_for_update().get(number=number)
    return order_money_settle(order=order)
