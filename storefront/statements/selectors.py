"""A merchant's statement for a period, computed from its packages and the payment ledger.

All amounts are integer cents of one currency (the shop's, ``SHOP_CURRENCY``); a period is
``[start, end)`` in the shop's time zone (``storefront.statements.periods``).

- **Sale**: a package of the merchant whose order's money was first captured (the order's
  first ``capture`` ledger event) in the period, and that was not cancelled before that
  capture (a package cancelled before payment was never charged). Amount: the package's
  ``cost`` (goods less discount plus shipping).
- **Refund**: a refund of one of the merchant's packages (``Refund.merchant_order``) that the
  provider confirmed (``succeeded_at``) in the period. Amount: the refund's. A refund of an
  order charged above what was due (no package) is no merchant's sale and is on no
  statement; refunds still pending or failed are listed apart and not counted.
- **Commission** on a line: its amount times the package's own rate (``commission_bps``,
  recorded when it was placed) over 10,000, rounded half up to the cent, per line. A refund
  gives back commission at the same rate, so a package refunded in full gives back exactly
  what was taken on it. Commission = taken on sales - given back on refunds.
- **Payout due** = sales - refunds - commission (negative when refunds outweigh sales).

A sale and its refund each count in the period in which they happened.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import cast

from django.conf import settings
from django.db.models import F, OuterRef, Q, QuerySet, Subquery

from storefront.errors import NotFound
from storefront.models import Merchant, MerchantOrder, OrderEvent, PaymentEvent, Refund
from storefront.statements.periods import Period

BPS_DENOMINATOR = 10_000


def commission_of(*, amount: int, bps: int) -> int:
    """``amount`` cents at ``bps`` basis points, rounded half up (away from zero) to the cent."""
    sign = -1 if amount < 0 else 1
    return sign * ((abs(amount) * bps + BPS_DENOMINATOR // 2) // BPS_DENOMINATOR)


@dataclass(frozen=True)
class StatementLine:
    """A sale (amounts positive) or a refund (amounts negative): ``payout = amount -
    commission``."""

    kind: str  # "sale" or "refund"
    at: datetime
    order_number: str
    package_id: int
    amount: int
    commission_bps: int
    commission: int

    @property
    def payout(self) -> int:
        return self.amount - self.commission


@dataclass(frozen=True)
class OpenRefund:
    order_number: str
    package_id: int
    amount: int
    status: str
    created_at: datetime


@dataclass(frozen=True)
class Statement:
    merchant_id: int
    merchant_name: str
    currency: str
    period: Period
    lines: tuple[StatementLine, ...]
    open_refunds: tuple[OpenRefund, ...]

    @property
    def sales(self) -> int:
        return sum(line.amount for line in self.lines if line.kind == "sale")

    @property
    def refunds(self) -> int:
        return -sum(line.amount for line in self.lines if line.kind == "refund")

    @property
    def commission_on_sales(self) -> int:
        return sum(line.commission for line in self.lines if line.kind == "sale")

    @property
    def commission_returned(self) -> int:
        return -sum(line.commission for line in self.lines if line.kind == "refund")

    @property
    def commission(self) -> int:
        return self.commission_on_sales - self.commission_returned

    @property
    def payout_due(self) -> int:
        return self.sales - self.refunds - self.commission


def statement_merchants(*, user) -> QuerySet[Merchant]:
    """The merchants whose statements ``user`` may read: merchant staff their own merchant
    only, catalog admins (who may view every package) all, anyone else none."""
    merchants = Merchant.objects.order_by("name", "pk")
    if user is None or not user.is_authenticated or not user.is_active:
        return merchants.none()
    staff = getattr(user, "merchant_staff", None)
    if staff is not None:
        return merchants.filter(pk=staff.merchant_id)
    if user.is_staff and user.has_perm("storefront.view_merchantorder"):
        return merchants
    return merchants.none()


def _sales(*, merchant_id: int, period: Period, currency: str) -> list[StatementLine]:
    first_capture = (
        PaymentEvent.objects.filter(order_id=OuterRef("order_id"), kind=PaymentEvent.Kind.CAPTURE)
        .order_by("at", "pk")
        .values("at")[:1]
    )
    cancelled = (
        OrderEvent.objects.filter(
            merchant_order_id=OuterRef("pk"), to_status=MerchantOrder.Status.CANCELLED
        )
        .order_by("at", "pk")
        .values("at")[:1]
    )
    captured_in_period = PaymentEvent.objects.filter(
        kind=PaymentEvent.Kind.CAPTURE, at__gte=period.start, at__lt=period.end
    ).values("order_id")
    packages = (
        MerchantOrder.objects.filter(
            merchant_id=merchant_id,
            order__currency=currency,
            order_id__in=Subquery(captured_in_period),
        )
        .annotate(captured_at=Subquery(first_capture), cancelled_at=Subquery(cancelled))
        .filter(captured_at__gte=period.start, captured_at__lt=period.end)
        .filter(~Q(status=MerchantOrder.Status.CANCELLED) | Q(cancelled_at__gte=F("captured_at")))
        .order_by("captured_at", "pk")
        .values_list("pk", "order__number", "cost", "commission_bps", "captured_at")
    )
    return [
        StatementLine(
            kind="sale",
            at=captured_at,
            order_number=number,
            package_id=package_id,
            amount=cost,
            commission_bps=bps,
            commission=commission_of(amount=cost, bps=bps),
        )
        for package_id, number, cost, bps, captured_at in packages
    ]


def _refunds(*, merchant_id: int, period: Period, currency: str) -> list[StatementLine]:
    refunds = (
        Refund.objects.filter(
            merchant_order__merchant_id=merchant_id,
            currency=currency,
            status=Refund.Status.SUCCEEDED,
            succeeded_at__gte=period.start,
            succeeded_at__lt=period.end,
        )
        .order_by("succeeded_at", "pk")
        .values_list(
            "merchant_order_id",
            "order__number",
            "amount",
            "merchant_order__commission_bps",
            "succeeded_at",
        )
    )
    return [
        StatementLine(
            kind="refund",
            at=cast(datetime, succeeded_at),  # the filter keeps succeeded refunds only
            order_number=number,
            package_id=package_id,
            amount=-amount,
            commission_bps=bps,
            commission=-commission_of(amount=amount, bps=bps),
        )
        for package_id, number, amount, bps, succeeded_at in refunds
    ]


def _open_refunds(*, merchant_id: int, period: Period, currency: str) -> list[OpenRefund]:
    refunds = (
        Refund.objects.filter(
            merchant_order__merchant_id=merchant_id,
            currency=currency,
            created_at__lt=period.end,
        )
        .exclude(status=Refund.Status.SUCCEEDED)
        .order_by("created_at", "pk")
        .values_list("order__number", "merchant_order_id", "amount", "status", "created_at")
    )
    return [
        OpenRefund(
            order_number=number,
            package_id=package_id,
            amount=amount,
            status=status,
            created_at=created_at,
        )
        for number, package_id, amount, status, created_at in refunds
    ]


def merchant_statement(
    *, user, merchant_id: int, period: Period, currency: str | None = None
) -> Statement:
    """``merchant_id``'s statement for ``period`` (see the module's definitions), if ``user``
    may read it; ``NotFound`` otherwise, as for a merchant that does not exist."""
    merchant = statement_merchants(user=user).filter(pk=merchant_id).first()
    if merchant is None:
        raise NotFound("No such merchant.", code="merchant_not_found", field="merchant")
    currency = (currency or settings.SHOP_CURRENCY).upper()
    lines = [
        *_sales(merchant_id=merchant.pk, period=period, currency=currency),
        *_refunds(merchant_id=merchant.pk, period=period, currency=currency),
    ]
    lines.sort(key=lambda line: (line.at, line.kind != "sale", line.package_id))
    open_refunds = _open_refunds(merchant_id=merchant.pk, period=period, currency=currency)
    return Statement(
        merchant_id=merchant.pk,
        merchant_name=merchant.name,
        currency=currency,
        period=period,
        lines=tuple(lines),
        open_refunds=tuple(open_refunds),
    )
