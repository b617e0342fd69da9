"""Reads for improve-cart: the engine problem of a cart, its current total, and runs.

``cart_problem_build`` is the bridge between the database and ``gpu_engine``: two queries
whatever the size of the cart (the tests pin the count). Whether a run is already in flight
for the cart's version is not read here: the database's unique constraint answers that when
a queued run is inserted (``services._create_queued``), so the inline path never pays for it.
"""

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import FilteredRelation, Q, QuerySet
from django.utils import timezone

from gpu_engine import CartProblem, ProblemError, price_assignment
from gpu_engine.solution import MerchantCost
from smartcart.models import OptimizationRun
from storefront.errors import Conflict, NotFound, ValidationFailed
from storefront.models import Cart, CartLine, Merchant, Offer, ShippingZone
from storefront.selectors import MerchantTerms
from storefront.shipping import postal_prefix_candidates, shipping_rule_resolve


@dataclass(frozen=True, slots=True)
class LineSnapshot:
    line_id: int
    product_id: int
    product_name: str
    quantity: int
    offer_id: int
    merchant_id: int


@dataclass(frozen=True, slots=True)
class OfferSnapshot:
    offer_id: int
    merchant_id: int
    unit_price: int
    stock: int | None


@dataclass(frozen=True)
class CartProblemBuild:
    """A cart read once: the engine problem and the way back from its ids to the database.

    Problem ids are strings of database ids: items are cart line ids, merchants merchant ids.
    ``offers[(line_id, merchant_id)]`` is the offer behind each pair. ``cart_version`` was
    read in the same statement as the lines, so it is the version of exactly these lines.
    """

    cart_id: int
    cart_version: int
    postal_code: str
    problem: CartProblem
    lines: tuple[LineSnapshot, ...]
    offers: dict[tuple[int, int], OfferSnapshot]
    merchants: dict[int, MerchantTerms]

    @property
    def current_assignment(self) -> dict[str, str]:
        return {str(line.line_id): str(line.merchant_id) for line in self.lines}

    @property
    def size(self) -> dict[str, int | str]:
        # Complexity overflows JavaScript's integers (and bigint) on big carts: a string.
        return {
            "lines": self.problem.n_items,
            "merchants": self.problem.n_merchants,
            "offers": len(self.offers),
            "complexity": str(self.problem.complexity),
        }


@dataclass(frozen=True, slots=True)
class _LineRow:
    """One cart line as read, with the state of its own offer."""

    snapshot: LineSnapshot
    offer_active: bool
    merchant_active: bool
    stock: int | None

    @property
    def unavailable_reason(self) -> str | None:
        if not self.offer_active or not self.merchant_active:
            return "no longer sold by this merchant"
        if self.stock is not None and self.stock < self.snapshot.quantity:
            return f"only {self.stock} in stock"
        return None


def _check_lines(rows: list[_LineRow]) -> None:
    unavailable = [
        f"{row.snapshot.product_name} ({reason})"
        for row in rows
        if (reason := row.unavailable_reason) is not None
    ]
    if unavailable:
        raise Conflict(
            "Some lines cannot be bought as they are: "
            + "; ".join(unavailable)
            + ". Change or remove them first.",
            code="line_unavailable",
            field="lines",
        )


_LINE_COLUMNS = (
    "id",
    "quantity",
    "product_id",
    "product__name",
    "offer_id",
    "offer__active",
    "offer__stock",
    "offer__merchant_id",
    "offer__merchant__active",
    "cart__version",
    "cart__postal_code",
)


@dataclass(frozen=True, slots=True)
class _CartRead:
    version: int
    postal_code: str
    lines: list[_LineRow]


def _read_lines(cart: Cart) -> _CartRead:
    """The cart's version, destination and lines in ONE statement: PostgreSQL reads them from
    one snapshot, so the version always belongs to exactly these lines."""
    rows = list(
        CartLine.objects.filter(cart_id=cart.pk)
        .order_by("created_at", "id")
        .values_list(*_LINE_COLUMNS)
    )
    if not rows:
        if not Cart.objects.filter(pk=cart.pk).exists():
            raise NotFound("No such cart.", code="cart_not_found", field="cart")
        raise ValidationFailed("The cart is empty.", code="cart_empty", field="cart")
    lines = [
        _LineRow(
            snapshot=LineSnapshot(
                line_id=row[0],
                product_id=row[2],
                product_name=row[3],
                quantity=row[1],
                offer_id=row[4],
                merchant_id=row[7],
            ),
            offer_active=row[5],
            merchant_active=row[8],
            stock=row[6],
        )
        for row in rows
    ]
    first = rows[0]
    return _CartRead(version=first[9], postal_code=first[10], lines=lines)


_MERCHANT_COLUMNS = (
    "name",
    "base_fee",
    "per_extra_unit",
    "free_over",
    "discount_min_units",
    "discount_basis_points",
)


_ZONE_COLUMNS = ("postal_prefix", "base_fee", "per_extra_unit", "free_over")


@dataclass(frozen=True, slots=True)
class _OffersRead:
    offers: dict[tuple[int, int], OfferSnapshot]
    merchants: dict[int, Merchant]
    zones: dict[int, list[ShippingZone]]


def _read_offers(lines: tuple[LineSnapshot, ...], postal_code: str) -> _OffersRead:
    """Every buyable-state offer of the lines' products, with its merchant's terms and the
    merchant's shipping zones that can match ``postal_code``, in ONE query (the zones are a
    filtered LEFT JOIN: an offer row per matching zone, usually none or one).

    ``offers[(line_id, merchant_id)]``; merchants and zones are unsaved model instances of
    the columns read, so the models' own rules (default shipping rule, discount, zone rule)
    apply to them without another query."""
    lines_by_product: dict[int, list[LineSnapshot]] = defaultdict(list)
    for line in lines:
        lines_by_product[line.product_id].append(line)
    candidates = postal_prefix_candidates(postal_code)
    rows = (
        Offer.objects.filter(product_id__in=lines_by_product, active=True, merchant__active=True)
        .annotate(
            zone=FilteredRelation(
                "merchant__zones", condition=Q(merchant__zones__postal_prefix__in=candidates)
            )
        )
        .order_by()
        .values_list(
            "id",
            "product_id",
            "merchant_id",
            "unit_price",
            "stock",
            *(f"merchant__{column}" for column in _MERCHANT_COLUMNS),
            *(f"zone__{column}" for column in _ZONE_COLUMNS),
        )
    )
    read = _OffersRead(offers={}, merchants={}, zones=defaultdict(list))
    n_merchant = len(_MERCHANT_COLUMNS)
    for offer_id, product_id, merchant_id, unit_price, stock, *terms in rows:
        merchant_columns, zone_columns = terms[:n_merchant], terms[n_merchant:]
        if merchant_id not in read.merchants:
            read.merchants[merchant_id] = Merchant(
                id=merchant_id,
                active=True,
                **dict(zip(_MERCHANT_COLUMNS, merchant_columns, strict=True)),
            )
        prefix = zone_columns[0]
        zones = read.zones[merchant_id]
        if prefix is not None and all(zone.postal_prefix != prefix for zone in zones):
            zones.append(
                ShippingZone(
                    merchant_id=merchant_id, **dict(zip(_ZONE_COLUMNS, zone_columns, strict=True))
                )
            )
        for line in lines_by_product[product_id]:
            read.offers[(line.line_id, merchant_id)] = OfferSnapshot(
                offer_id=offer_id, merchant_id=merchant_id, unit_price=unit_price, stock=stock
            )
    return read


def _merchant_terms(read: _OffersRead, postal_code: str) -> dict[int, MerchantTerms]:
    """Each merchant's terms for the destination, resolved as ``storefront.selectors.
    merchant_terms_for_destination`` does (longest matching zone prefix, else the defaults,
    through ``storefront.shipping.shipping_rule_resolve``), over rows already read with the
    offers. (That selector reads merchants and zones itself: two queries more.)"""
    return {
        merchant_id: MerchantTerms(
            merchant_id=merchant_id,
            name=merchant.name,
            active=merchant.active,
            shipping=shipping_rule_resolve(
                default=merchant.default_shipping_rule(),
                zones=[zone.shipping_rule() for zone in read.zones.get(merchant_id, ())],
                postal_code=postal_code,
            ),
            discount=merchant.discount,
        )
        for merchant_id, merchant in read.merchants.items()
    }


def _problem(
    lines: tuple[LineSnapshot, ...],
    offers: dict[tuple[int, int], OfferSnapshot],
    merchants: dict[int, MerchantTerms],
) -> CartProblem:
    line_index = {line.line_id: i for i, line in enumerate(lines)}
    merchant_ids = sorted(merchants)
    merchant_index = {merchant_id: j for j, merchant_id in enumerate(merchant_ids)}
    terms = [merchants[merchant_id] for merchant_id in merchant_ids]
    pairs = list(offers)
    return CartProblem.from_arrays(
        item_ids=[str(line.line_id) for line in lines],
        quantities=[line.quantity for line in lines],
        merchant_ids=[str(merchant_id) for merchant_id in merchant_ids],
        base_fee=[t.shipping.base_fee for t in terms],
        per_extra_unit=[t.shipping.per_extra_unit for t in terms],
        free_over=[-1 if t.shipping.free_over is None else t.shipping.free_over for t in terms],
        disc_min_units=[t.discount.min_units if t.discount else 0 for t in terms],
        disc_bp=[t.discount.basis_points if t.discount else 0 for t in terms],
        offer_item=[line_index[line_id] for line_id, _ in pairs],
        offer_merchant=[merchant_index[merchant_id] for _, merchant_id in pairs],
        offer_price=[offers[pair].unit_price for pair in pairs],
        offer_stock=[-1 if offers[pair].stock is None else offers[pair].stock for pair in pairs],
    )


def cart_problem_build(*, cart: Cart) -> CartProblemBuild:
    """The engine problem of ``cart`` as it stands in the database, in two queries whatever
    the size of the cart: the lines (with the cart's version and destination), then the
    candidate offers with their merchants' terms and the zones that match the destination.

    Every active offer (of an active merchant) of each line's product is a candidate; the
    engine itself leaves out offers short of stock for a line's quantity. Shipping is each
    merchant's rule for the cart's destination (longest matching postal prefix).

    Raises ``ValidationFailed`` (``cart_empty``) for an empty cart and ``Conflict``
    (``line_unavailable``) when a line's own offer can no longer be bought as it is, so the
    current total is a price the shopper could pay now.
    """
    read = _read_lines(cart)
    _check_lines(read.lines)
    lines = tuple(row.snapshot for row in read.lines)
    offers_read = _read_offers(lines, read.postal_code)
    offers = offers_read.offers
    merchants = _merchant_terms(offers_read, read.postal_code)
    try:
        problem = _problem(lines, offers, merchants)
    except ProblemError as error:
        raise ValidationFailed(
            f"This cart cannot be optimised: {error}", code="cart_problem_invalid", field="cart"
        ) from error
    return CartProblemBuild(
        cart_id=cart.pk,
        cart_version=read.version,
        postal_code=read.postal_code,
        problem=problem,
        lines=lines,
        offers=offers,
        merchants=merchants,
    )


def cart_current_breakdown(*, build: CartProblemBuild) -> list[MerchantCost]:
    """The cart's current offers priced by the contract (``gpu_engine.price_assignment``)."""
    return price_assignment(build.problem, build.current_assignment)


def cart_current_total(*, cart: Cart) -> int:
    """What the cart costs now with its current offers, shipping and discounts, in cents."""
    build = cart_problem_build(cart=cart)
    return sum(cost.cost for cost in cart_current_breakdown(build=build))


def optimization_run_get(*, run_id: int, cart: Cart) -> OptimizationRun:
    """One of ``cart``'s runs; another cart's run is ``NotFound`` (never revealed)."""
    try:
        return OptimizationRun.objects.select_related("cart").get(pk=run_id, cart_id=cart.pk)
    except (OptimizationRun.DoesNotExist, ValueError, TypeError):
        raise NotFound(
            "No such optimization for your cart.", code="optimization_not_found", field="run_id"
        ) from None


def optimization_run_latest(
    *, cart: Cart, include_dismissed: bool = False
) -> OptimizationRun | None:
    """The cart's most recent run (not dismissed unless asked), or ``None``."""
    runs = OptimizationRun.objects.select_related("cart").filter(cart_id=cart.pk)
    if not include_dismissed:
        runs = runs.filter(dismissed_at__isnull=True)
    return runs.order_by("-created_at", "-id").first()


def optimization_run_list(*, cart: Cart) -> QuerySet[OptimizationRun]:
    """The cart's runs, newest first, each with ``cart`` set (``is_stale`` costs no query)."""
    return OptimizationRun.objects.select_related("cart").filter(cart_id=cart.pk)


def optimization_run_stale_q(*, now: datetime) -> Q:
    """Runs a lost worker left behind: ``running`` past the task's hard time limit plus
    ``SMARTCART_REAPER_GRACE_S`` (Celery killed it, or its worker died without redelivery),
    or ``queued`` past ``SMARTCART_QUEUED_MAX_S`` (its message was lost)."""
    running_s = settings.CELERY_TASK_TIME_LIMIT + settings.SMARTCART_REAPER_GRACE_S
    return Q(
        status=OptimizationRun.Status.RUNNING, started_at__lt=now - timedelta(seconds=running_s)
    ) | Q(
        status=OptimizationRun.Status.QUEUED,
        created_at__lt=now - timedelta(seconds=settings.SMARTCART_QUEUED_MAX_S),
    )


def optimization_run_in_flight(
    *, cart: Cart, cart_version: int, now: datetime | None = None
) -> OptimizationRun | None:
    """The run queued or running for this version of ``cart`` that can still finish (not
    dismissed, not left behind by a lost worker), or ``None``."""
    return (
        OptimizationRun.objects.select_related("cart")
        .filter(
            cart_id=cart.pk,
            cart_version=cart_version,
            status__in=[OptimizationRun.Status.QUEUED, OptimizationRun.Status.RUNNING],
            dismissed_at__isnull=True,
        )
        .exclude(optimization_run_stale_q(now=now or timezone.now()))
        .order_by("-created_at", "-id")
        .first()
    )
