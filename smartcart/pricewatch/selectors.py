"""Reads of the price watch: the open carts a burst of changes affects, and many carts'
engine problems at once.

``carts_problems_build`` is ``smartcart.selectors.cart_problem_build`` for a chunk of carts
in two queries whatever their number: every line of the chunk (with its cart's version and
destination, read in the same statement) and every buyable offer of the chunk's products
with its merchant's name and discount. Shipping comes from the per-process zone index
(``storefront.catalog.shipping_selectors.shipping_rules_for_destinations``: one batched
longest-prefix match, no query while it is fresh), which is what it is for: pricing many carts
at once. The problems are built by the same helpers as the single-cart path, so both read a
cart alike.
"""

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from django.db import connection
from django.db.models import BooleanField, Exists, Q, QuerySet
from django.db.models.expressions import RawSQL

from gpu_engine import ProblemError, assignment_cost
from smartcart.models import OptimizationRun, PriceWatchChange
from smartcart.selectors.live import RunLive, optimization_run_live
from smartcart.selectors.problems import (
    _LINE_FIELDS,
    CartProblemBuild,
    OfferSnapshot,
    _line_row,
    _LineRow,
    _problem,
    cart_current_breakdown,
    cart_problem_build,
)
from storefront.catalog.shipping import Discount, ShippingRule
from storefront.catalog.shipping_selectors import MerchantTerms, shipping_rules_for_destinations
from storefront.catalog.zone_index import zone_index_invalidate
from storefront.errors import DomainError
from storefront.models import Cart, CartLine, Offer

Source = OptimizationRun.Source


@dataclass(frozen=True)
class ChangeSet:
    upto: int
    product_ids: frozenset[int]
    merchant_ids: frozenset[int]

    @property
    def empty(self) -> bool:
        return not self.product_ids and not self.merchant_ids


def price_watch_changes_pending() -> ChangeSet:
    """Every change recorded so far (up to the newest row's id), as two id sets."""
    rows = list(
        PriceWatchChange.objects.order_by("id").values_list("id", "product_id", "merchant_id")
    )
    return ChangeSet(
        upto=rows[-1][0] if rows else 0,
        product_ids=frozenset(p for _, p, _ in rows if p is not None),
        merchant_ids=frozenset(m for _, _, m in rows if m is not None),
    )


def price_watch_carts_affected(*, changes: ChangeSet, active_since: datetime) -> list[int]:
    """Ids of the open carts (changed since ``active_since``) with a line on a changed
    product, or on a product a changed merchant offers, in one query. The changed ids are
    read by a subquery on the dirty set (a feed may change more products than a statement
    can take parameters)."""
    if changes.empty:
        return []
    recorded = PriceWatchChange.objects.filter(id__lte=changes.upto)
    touched = Q(product_id__in=recorded.filter(product_id__isnull=False).values("product_id"))
    if changes.merchant_ids:
        merchants = recorded.filter(merchant_id__isnull=False).values("merchant_id")
        offered = Offer.objects.filter(merchant_id__in=merchants).values("product_id")
        touched |= Q(product_id__in=offered)
    lines = CartLine.objects.filter(touched, cart__updated_at__gte=active_since)
    return list(lines.order_by("cart_id").values_list("cart_id", flat=True).distinct())


@dataclass
class CartRead:
    """One cart of a chunk as read: its build, and what its lines cost when added."""

    build: CartProblemBuild
    owner_id: int | None
    current_total: int
    added_total: int


@dataclass
class ChunkRead:
    carts: list[CartRead] = field(default_factory=list)
    skipped: int = 0


_LINE_COLUMNS = (
    "cart_id",
    "cart__version",
    "cart__postal_code",
    "cart__owner_id",
    *_LINE_FIELDS,
    "unit_price_snapshot",
)
_OFFER_COLUMNS = (
    "id",
    "product_id",
    "merchant_id",
    "unit_price",
    "stock",
    "merchant__name",
    "merchant__discount_min_units",
    "merchant__discount_basis_points",
)


@dataclass
class _CartRows:
    version: int
    postal_code: str
    owner_id: int | None
    rows: list[_LineRow] = field(default_factory=list)
    snapshots: dict[int, int] = field(default_factory=dict)  # line id -> unit price when added


# Where each column sits in a row of ``chunk_line_rows`` / ``chunk_offer_rows``.
LINE_AT = {name: k for k, name in enumerate(_LINE_COLUMNS)}
OFFER_AT = {name: k for k, name in enumerate(_OFFER_COLUMNS)}


def chunk_line_rows(*, cart_ids: Sequence[int]) -> Iterator[tuple]:
    """Every line of these carts, by cart then as added, as ``_LINE_COLUMNS`` tuples (one
    query, streamed): the line with its own offer's state, its cart's version, destination
    and owner, and its unit price when added."""
    return (
        CartLine.objects.filter(cart_id__in=list(cart_ids))
        .order_by("cart_id", "created_at", "id")
        .values_list(*_LINE_COLUMNS)
        .iterator(chunk_size=5000)
    )


def chunk_offer_rows(*, cart_ids: Sequence[int]) -> Iterator[tuple]:
    """Every buyable offer (active, of an active merchant) of these carts' products, as
    ``_OFFER_COLUMNS`` tuples with the merchant's name and discount (one query, streamed)."""
    products = CartLine.objects.filter(cart_id__in=list(cart_ids)).values("product_id")
    return (
        Offer.objects.filter(product_id__in=products, active=True, merchant__active=True)
        .order_by()
        .values_list(*_OFFER_COLUMNS)
        .iterator(chunk_size=5000)
    )


def shipping_rules_known(*, pairs: list[tuple[int, str]]) -> list[ShippingRule | None]:
    """``shipping_rules_for_destinations`` for many (merchant, destination) pairs at once; a
    merchant the index does not know yet (its commit's invalidation not seen by this
    process) rebuilds it once (two queries) rather than leave its carts out."""
    rules = shipping_rules_for_destinations(pairs=pairs)
    if any(rule is None for rule in rules):
        zone_index_invalidate()
        rules = shipping_rules_for_destinations(pairs=pairs)
    return rules


def _lines_read(cart_ids: Sequence[int]) -> dict[int, _CartRows]:
    carts: dict[int, _CartRows] = {}
    for cart_id, version, postal_code, owner_id, *line in chunk_line_rows(cart_ids=cart_ids):
        cart = carts.get(cart_id)
        if cart is None:
            cart = carts[cart_id] = _CartRows(version, postal_code, owner_id)
        *fields, unit_price_snapshot = line
        row = _line_row(tuple(fields))
        cart.rows.append(row)
        cart.snapshots[row.snapshot.line_id] = unit_price_snapshot
    return carts


@dataclass
class _Market:
    """The chunk's offers by product, and each merchant's name and discount."""

    offers: dict[int, list[OfferSnapshot]]
    names: dict[int, str]
    discounts: dict[int, Discount | None]


def _market_read(cart_ids: Sequence[int]) -> _Market:
    market = _Market(offers=defaultdict(list), names={}, discounts={})
    for row in chunk_offer_rows(cart_ids=cart_ids):
        offer_id, product_id, merchant_id, price, stock, name, min_units, bp = row
        market.offers[product_id].append(OfferSnapshot(offer_id, merchant_id, price, stock))
        if merchant_id not in market.names:
            market.names[merchant_id] = name
            market.discounts[merchant_id] = Discount.from_columns(min_units, bp)
    return market


def _shipping(
    carts: dict[int, _CartRows], market: _Market
) -> dict[tuple[int, str], ShippingRule | None]:
    """Every (merchant, destination) the chunk needs, in one batched zone-index match."""
    pairs: dict[tuple[int, str], None] = {}
    for cart in carts.values():
        merchants = {
            offer.merchant_id
            for row in cart.rows
            for offer in market.offers.get(row.snapshot.product_id, ())
        }
        for merchant_id in merchants:
            pairs[(merchant_id, cart.postal_code)] = None
    keys = list(pairs)
    return dict(zip(keys, shipping_rules_known(pairs=keys), strict=True))


def _build(
    cart_id: int, cart: _CartRows, market: _Market, rules: dict
) -> tuple[CartProblemBuild, tuple[int, int]] | None:
    """The cart's build and its totals now and at the lines' added prices; ``None`` for a
    cart that cannot be priced as it stands (a line unavailable, an invalid problem)."""
    if not cart.rows or any(row.unavailable_reason is not None for row in cart.rows):
        return None
    lines = tuple(row.snapshot for row in cart.rows)
    offers: dict[tuple[int, int], OfferSnapshot] = {}
    merchants: dict[int, MerchantTerms] = {}
    for line in lines:
        for offer in market.offers.get(line.product_id, ()):
            rule = rules.get((offer.merchant_id, cart.postal_code))
            if rule is None:
                continue
            offers[(line.line_id, offer.merchant_id)] = offer
            if offer.merchant_id not in merchants:
                merchants[offer.merchant_id] = MerchantTerms(
                    merchant_id=offer.merchant_id,
                    name=market.names[offer.merchant_id],
                    active=True,
                    shipping=rule,
                    discount=market.discounts[offer.merchant_id],
                )
    if any((line.line_id, line.merchant_id) not in offers for line in lines):
        return None
    try:
        problem = _problem(lines, offers, merchants)
    except ProblemError:
        return None
    build = CartProblemBuild(
        cart_id=cart_id,
        cart_version=cart.version,
        postal_code=cart.postal_code,
        problem=problem,
        lines=lines,
        offers=offers,
        merchants=merchants,
    )
    return build, _totals(build, cart.snapshots)


def _current_choice(build: CartProblemBuild) -> np.ndarray:
    index = {merchant_id: j for j, merchant_id in enumerate(build.problem.merchant_ids)}
    return np.fromiter(
        (index[str(line.merchant_id)] for line in build.lines), np.int64, len(build.lines)
    )


def _cost(problem, choice: np.ndarray, price: np.ndarray) -> int:
    return int(assignment_cost(choice, problem.quantity, price, *problem.merchant_params))


def _totals(build: CartProblemBuild, snapshots: dict[int, int]) -> tuple[int, int]:
    """The cart's total now and at the prices its lines were added at (its current offers,
    today's shipping and discounts), by the contract's pricing routine, without building a
    second problem."""
    problem = build.problem
    choice = _current_choice(build)
    current = _cost(problem, choice, problem.price)
    added_prices = np.array([snapshots[line.line_id] for line in build.lines], np.int64)
    rows = np.arange(len(build.lines))
    if np.array_equal(added_prices, problem.price[rows, choice]):
        return current, current
    price = problem.price.copy()
    price[rows, choice] = added_prices
    return current, _cost(problem, choice, price)


def carts_problems_build(*, cart_ids: Sequence[int]) -> ChunkRead:
    """The engine problem of each cart in ``cart_ids`` as it stands, in two queries (plus
    the zone index's when it is rebuilt). Carts that are gone, empty or not buyable as they
    stand are counted in ``skipped``."""
    carts = _lines_read(cart_ids)
    market = _market_read(cart_ids)
    rules = _shipping(carts, market)
    read = ChunkRead(skipped=len(cart_ids) - len(carts))
    for cart_id, cart in carts.items():
        built = _build(cart_id, cart, market, rules)
        if built is None:
            read.skipped += 1
            continue
        build, (current, added) = built
        read.carts.append(
            CartRead(build=build, owner_id=cart.owner_id, current_total=current, added_total=added)
        )
    return read


def carts_v2_build(*, cart_ids: Sequence[int]) -> ChunkRead:
    """Carts a warehouse merchant's offer reaches (pricing contract v2), each through the
    single-cart builder (a column per warehouse; about five queries a cart). Their ``added``
    total is today's: the price-rise signal comes from the packed (version 1) rows only."""
    carts = {cart.pk: cart for cart in Cart.objects.filter(pk__in=cart_ids)}
    read = ChunkRead(skipped=len(set(cart_ids)) - len(carts))
    for cart_id in sorted(carts):
        try:
            build = cart_problem_build(cart=carts[cart_id])
        except DomainError:
            read.skipped += 1
            continue
        total = sum(cost.cost for cost in cart_current_breakdown(build=build))
        owner = carts[cart_id].owner_id
        read.carts.append(
            CartRead(build=build, owner_id=owner, current_total=total, added_total=total)
        )
    return read


def price_watch_notices_current(*, cart_ids: Iterable[int]) -> QuerySet[OptimizationRun]:
    """The price-watch notices of these carts that no later check replaced: the shown ones
    and the dismissed ones (a dismissal holds for its cart version)."""
    ids = list(cart_ids)
    runs = OptimizationRun.objects.filter(source=Source.PRICE_WATCH, superseded_at__isnull=True)
    if connection.vendor == "postgresql":
        # One array parameter: ``cart_id__in`` writes a placeholder per id, and psycopg's
        # parsing of a statement with thousands of them cost more than running it.
        column = f"{connection.ops.quote_name(OptimizationRun._meta.db_table)}.cart_id"
        return runs.filter(RawSQL(f"{column} = ANY(%s)", (ids,), output_field=BooleanField()))
    return runs.filter(cart_id__in=ids)


@dataclass(frozen=True)
class PriceWatchNotice:
    """What the shopper is told about their cart after prices moved, at today's prices: the
    notice's figures come from the price watch's last check, and prices may have moved again
    since (its next check runs a few seconds after a change). ``live`` is the run read against
    the prices now (``None``: not read)."""

    run: OptimizationRun
    live: RunLive | None = None

    @property
    def _moved(self) -> bool:
        return self.live is not None and not self.live.unchanged

    @property
    def checking(self) -> bool:
        """Prices moved again so that the notice's figures no longer hold and no saving can be
        told for sure: the next check will tell."""
        if self.live is None or not self._moved:
            return False
        return not (self.run.savings and self.live.holds and self.live.savings > 0)

    @property
    def savings(self) -> int:
        if self.live is not None and self._moved:
            return 0 if self.checking else self.live.savings
        return self.run.savings or 0

    @property
    def price_increase(self) -> int:
        # The rise since the lines were added moved with the prices: not told until rechecked.
        return 0 if self._moved else self.run.price_increase or 0

    @property
    def current_total(self) -> int:
        return self.live.current_total if self.live is not None else self.run.current_total or 0

    def as_dict(self) -> dict:
        return {
            "optimization_id": self.run.pk,
            "cart_version": self.run.cart_version,
            "current_total": self.current_total,
            "suggested_total": self.run.suggested_total,
            "savings": self.savings,
            "price_increase": self.price_increase,
            "created_at": self.run.created_at,
        }


def _prices_moved_since(cart_id: int) -> Exists:
    """A change the price watch recorded and has not checked yet touches the cart: one of its
    products, or a merchant offering one (shipping, discounts)."""
    products = CartLine.objects.filter(cart_id=cart_id).values("product_id")
    merchants = Offer.objects.filter(product_id__in=products).values("merchant_id")
    return Exists(
        PriceWatchChange.objects.filter(Q(product_id__in=products) | Q(merchant_id__in=merchants))
    )


def price_watch_notice_for_cart(*, cart) -> PriceWatchNotice | None:
    """The cart's price-watch notice for its current version: not withdrawn, dismissed or
    applied, with a saving or a price rise to tell (one query). While a change the watch has
    not checked yet touches the cart (its next check runs a few seconds later), the notice is
    read against today's prices (two more queries)."""
    if cart is None or cart.pk is None:
        return None
    run = (
        OptimizationRun.objects.select_related("cart")
        .annotate(prices_moved=_prices_moved_since(cart.pk))
        .filter(
            cart_id=cart.pk,
            cart_version=cart.version,
            source=Source.PRICE_WATCH,
            superseded_at__isnull=True,
            dismissed_at__isnull=True,
            applied_at__isnull=True,
        )
        .filter(Q(savings__gt=0) | Q(price_increase__gt=0))
        .order_by("-created_at", "-id")
        .first()
    )
    if run is None:
        return None
    if not run.prices_moved:
        return PriceWatchNotice(run=run)
    live = optimization_run_live(run=run)
    if live is None:  # the cart cannot be priced as it stands: nothing to tell for sure
        return None
    return PriceWatchNotice(run=run, live=live)
