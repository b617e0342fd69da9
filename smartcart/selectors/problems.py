"""The engine problem of a cart and its current total.

``cart_problem_build`` is the bridge between the database and ``gpu_engine``: two queries
whatever the size of the cart, the cart with its lines and the candidate offers with their
merchants' terms and matching zones (one when the caller read the cart with its lines, as the
API does; the tests pin the count). Both are compiled once per process
(``smartcart.prepared``). Whether a run is already in flight for the cart's version is not
read here: the database's unique constraint answers that when a queued run is inserted
(``smartcart.services.create``), so the inline path never pays for it.

Shipping is resolved here from the zones read with the offers, not with the process's zone
index (``storefront.catalog.shipping_selectors.shipping_rules_for_destinations``): for one
cart's few dozen merchants the index's version-stamp read and batched match cost more than the
join, and SQL never reads a stale rule. The index is for pricing
many carts at once.
"""

import decimal
import time
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from django.db import router
from django.db.models import FilteredRelation, Q, QuerySet

from gpu_engine import CartProblem, MerchantCost, ProblemError, price_assignment
from smartcart.prepared import PreparedQuery
from smartcart.selectors.line_checks import (
    NOT_AT_A_WAREHOUSE,
    check_other_sellers,
    current_warehouses,
    refuse,
)
from smartcart.selectors.nodes import node_id_of, offers_at_nodes, problem_v2
from smartcart.selectors.terms import MerchantRead, merchant_read, merchant_terms
from storefront.carts.fulfillment import CartNodes, cart_nodes_read, merchant_has_warehouse
from storefront.carts.pricing_summary import line_unavailable_reason
from storefront.catalog.shipping import (
    ShippingRule,
    postal_prefix_candidates,
)
from storefront.catalog.shipping_selectors import MerchantTerms
from storefront.errors import NotFound, ValidationFailed
from storefront.models import Cart, Offer


@dataclass(frozen=True, slots=True)
class LineSnapshot:
    line_id: int
    product_id: int
    product_name: str
    quantity: int
    offer_id: int
    merchant_id: int
    # Grams per unit, and the warehouse the line remembers (version 2 merchants).
    weight_g: int = 0
    warehouse_id: int | None = None


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
    # Lines whose own offer is short of stock, built for another merchant to supply them.
    sold_out: frozenset[int] = frozenset()
    # The warehouses of version 2 merchants (their nodes are warehouse ids), and the one each
    # of their lines ships from now (``storefront.carts.fulfillment``).
    nodes: CartNodes = field(default_factory=CartNodes)
    current_warehouses: Mapping[int, int] = field(default_factory=dict)

    @property
    def current_assignment(self) -> dict[str, str]:
        return {str(line.line_id): str(line.merchant_id) for line in self.lines}

    @property
    def current_nodes(self) -> dict[str, str]:
        """Line id -> the node its line ships from now (the merchant's id for version 1)."""
        return {
            str(line.line_id): node_id_of(
                line.merchant_id, self.current_warehouses.get(line.line_id)
            )
            for line in self.lines
        }

    def warehouse_of(self, merchant_id: int, node_id: str | None) -> int | None:
        """The warehouse behind a node of this problem (``None``: version 1)."""
        if node_id is None or not self.nodes.is_v2(merchant_id):
            return None
        return int(node_id)

    def pairs(
        self, assignment: Mapping[str, str], nodes: Mapping[str, str] | None = None
    ) -> dict[str, list[str]]:
        """``assignment`` (line -> merchant id) with each line's node (``nodes``, else the
        line's current node when its merchant is unchanged, else the merchant's one node), as
        ``gpu_engine.price_assignment`` reads a version 2 assignment."""
        current = self.current_nodes
        merchants = self.current_assignment
        pairs = {}
        for line_id, merchant in assignment.items():
            node = (nodes or {}).get(line_id)
            if node is None:
                node = current[line_id] if merchants.get(line_id) == merchant else merchant
            pairs[line_id] = [merchant, node]
        return pairs

    @property
    def size(self) -> dict[str, int | str]:
        return problem_size(
            lines=self.problem.n_items,
            merchants=self.problem.n_merchants,
            offers=len(self.offers),
            complexity=self.problem.complexity,
        )


def problem_size(
    *, lines: int, merchants: int, offers: int, complexity: int
) -> dict[str, int | str]:
    """A problem's size as a run stores it (``problem_size``)."""
    # Complexity overflows JavaScript's integers (and bigint) on big carts: a string, through
    # ``decimal`` (``str`` refuses ints of more than 4,300 digits).
    digits = str(decimal.Decimal(complexity))
    return {"lines": lines, "merchants": merchants, "offers": offers, "complexity": digits}


@dataclass(frozen=True, slots=True)
class _LineRow:
    """One cart line as read, with the state of its own offer."""

    snapshot: LineSnapshot
    offer_active: bool
    merchant_active: bool
    stock: int | None

    @property
    def sold_out(self) -> bool:
        """Its offer is still sold, only short of stock for the line's quantity."""
        return self.offer_active and self.merchant_active and self.unavailable_reason is not None

    @property
    def unavailable_reason(self) -> str | None:
        reason = line_unavailable_reason(
            offer_active=self.offer_active,
            merchant_active=self.merchant_active,
            stock=self.stock,
            quantity=self.snapshot.quantity,
        )
        if reason == "insufficient_stock":
            return f"only {self.stock} in stock"
        return None if reason is None else "no longer sold by this merchant"


def _check_lines(rows: tuple[_LineRow, ...], *, sold_out_allowed: bool = False) -> frozenset[int]:
    """Refuses lines that cannot be bought as they are (``line_unavailable``); with
    ``sold_out_allowed``, a line only short of stock at its merchant is let through (another
    merchant may supply it) and its id returned."""
    allowed = [row for row in rows if sold_out_allowed and row.sold_out]
    unavailable = [
        f"{row.snapshot.product_name} ({reason})"
        for row in rows
        if (reason := row.unavailable_reason) is not None and row not in allowed
    ]
    refuse(unavailable)
    return frozenset(row.snapshot.line_id for row in allowed)


_CART_FIELDS = tuple(column.attname for column in Cart._meta.concrete_fields)
# A cart line's columns as ``_line_row`` reads them, named from ``CartLine`` (the price watch
# reads lines directly); ``_LINE_COLUMNS`` reaches them from ``Cart``.
_LINE_FIELDS = (
    "id",
    "quantity",
    "product_id",
    "product__name",
    "offer_id",
    "offer__active",
    "offer__stock",
    "offer__merchant_id",
    "offer__merchant__active",
)
# Version 2's columns, read after ``_LINE_FIELDS`` by this module only.
_LINE_V2_FIELDS = ("warehouse_id", "product__weight_g")
_LINE_COLUMNS = tuple(f"lines__{column}" for column in (*_LINE_FIELDS, *_LINE_V2_FIELDS))


def _line_row(row: tuple) -> _LineRow:
    line_id, quantity, product_id, product_name, offer_id, *offer = row
    offer_active, stock, merchant_id, merchant_active = offer
    return _LineRow(
        snapshot=LineSnapshot(
            line_id=line_id,
            product_id=product_id,
            product_name=product_name,
            quantity=quantity,
            offer_id=offer_id,
            merchant_id=merchant_id,
        ),
        offer_active=offer_active,
        merchant_active=merchant_active,
        stock=stock,
    )


def _line_row_v2(row: tuple, v2: tuple) -> _LineRow:
    found = _line_row(row)
    warehouse_id, weight_g = v2
    snapshot = replace(found.snapshot, weight_g=weight_g or 0, warehouse_id=warehouse_id)
    return replace(found, snapshot=snapshot)


@dataclass(frozen=True)
class CartLines:
    """A cart and its lines (each with its own offer's state) as read in ONE statement:
    PostgreSQL reads them from one snapshot, so ``cart.version`` is the version of exactly
    these lines."""

    cart: Cart
    rows: tuple[_LineRow, ...]
    # How long the read took: a run's ``build_ms`` covers it when the caller read the cart.
    read_ms: float = field(default=0.0, compare=False)


def _cart_lines_query(**cart_filter) -> QuerySet:
    """The carts matching ``cart_filter`` LEFT JOINed to their lines, a row per line in the
    order they were added (one row of NULL lines for an empty cart)."""
    return (
        Cart.objects.filter(**cart_filter)
        .order_by("lines__created_at", "lines__id")
        .values_list(*_CART_FIELDS, *_LINE_COLUMNS)
    )


# Compiled once per process: building these queries costs more than running them.
_CART_LINES_BY_ID = PreparedQuery(Cart, lambda cart_id: _cart_lines_query(pk=cart_id))
_CART_LINES_BY_OWNER = PreparedQuery(Cart, lambda user_id: _cart_lines_query(owner_id=user_id))


def _cart_lines(query: PreparedQuery, key: int) -> CartLines | None:
    start = time.perf_counter()
    rows = query.rows(key)
    if not rows:
        return None
    n_cart = len(_CART_FIELDS)
    cart = Cart.from_db(router.db_for_read(Cart), _CART_FIELDS, rows[0][:n_cart])
    n_line = len(_LINE_FIELDS)
    lines = tuple(
        _line_row_v2(row[n_cart : n_cart + n_line], row[n_cart + n_line :])
        for row in rows
        if row[n_cart] is not None
    )
    return CartLines(cart=cart, rows=lines, read_ms=(time.perf_counter() - start) * 1000.0)


def cart_lines_read(*, cart: Cart) -> CartLines:
    """``cart`` as it stands now, with its lines, in one query (``NotFound`` when deleted or
    never saved)."""
    found = None if cart.pk is None else _cart_lines(_CART_LINES_BY_ID, cart.pk)
    if found is None:
        raise NotFound("No such cart.", code="cart_not_found", field="cart")
    return found


def cart_lines_find(*, user) -> CartLines | None:
    """The signed-in ``user``'s cart (their only one) with its lines, in one query; ``None``
    when they have none. Finding the cart and reading its lines in one statement saves the
    improve-cart request a round trip."""
    if user is None or not user.is_authenticated:
        return None
    return _cart_lines(_CART_LINES_BY_OWNER, user.pk)


_OFFER_COLUMNS = (
    "id",
    "product_id",
    "merchant_id",
    "unit_price",
    "stock",
    "merchant__name",
    "merchant__discount_min_units",
    "merchant__discount_basis_points",
    "merchant__base_fee",
    "merchant__per_extra_unit",
    "merchant__free_over",
    "zone__postal_prefix",
    "zone__base_fee",
    "zone__per_extra_unit",
    "zone__free_over",
)


def _offers_query(product_ids: list[int], prefixes: list[str]) -> QuerySet:
    """Buyable-state offers of ``product_ids`` with their merchant's terms and the merchant's
    shipping zones whose prefix is one of ``prefixes``: a filtered LEFT JOIN, an offer row per
    matching zone (usually none or one)."""
    zones = FilteredRelation(
        "merchant__zones", condition=Q(merchant__zones__postal_prefix__in=prefixes)
    )
    return (
        Offer.objects.filter(product_id__in=product_ids, active=True, merchant__active=True)
        .annotate(zone=zones, _v2=merchant_has_warehouse())
        .order_by()
        .values_list(*_OFFER_COLUMNS, "_v2")
    )


_OFFERS = PreparedQuery(Offer, _offers_query)


def _read_offers(
    lines: tuple[LineSnapshot, ...], postal_code: str
) -> tuple[dict[tuple[int, int], OfferSnapshot], dict[int, MerchantRead], set[int]]:
    """Every buyable-state offer of the lines' products, with its merchant's terms and the
    merchant's zones that can match ``postal_code`` (``postal_prefix_candidates``: at most
    11), in ONE query, as plain values: ``offers[(line_id, merchant_id)]``, each merchant
    as read and the version 2 merchants (those with an active warehouse)."""
    lines_by_product: dict[int, list[LineSnapshot]] = defaultdict(list)
    for line in lines:
        lines_by_product[line.product_id].append(line)
    rows = _OFFERS.rows(list(lines_by_product), tuple(postal_prefix_candidates(postal_code)))
    offers: dict[tuple[int, int], OfferSnapshot] = {}
    merchants: dict[int, MerchantRead] = {}
    v2: set[int] = set()
    for offer_id, product_id, merchant_id, unit_price, stock, *terms, has_warehouse in rows:
        if has_warehouse:
            v2.add(merchant_id)
        merchant = merchants.get(merchant_id)
        if merchant is None:
            merchant = merchants[merchant_id] = merchant_read(*terms[:6])
        prefix, base_fee, per_extra_unit, free_over = terms[6:]
        if prefix is not None:
            merchant.zones[prefix] = ShippingRule(
                base_fee=base_fee,
                per_extra_unit=per_extra_unit,
                free_over=free_over,
                zone_prefix=prefix,
            )
        snapshot = OfferSnapshot(
            offer_id=offer_id, merchant_id=merchant_id, unit_price=unit_price, stock=stock
        )
        for line in lines_by_product[product_id]:
            offers[(line.line_id, merchant_id)] = snapshot
    return offers, merchants, v2


def _problem(
    lines: tuple[LineSnapshot, ...],
    offers: dict[tuple[int, int], OfferSnapshot],
    merchants: dict[int, MerchantTerms],
    nodes: CartNodes | None = None,
) -> CartProblem:
    """The engine problem: version 1's arrays while no merchant has warehouses (the price
    watch calls it so), else a column per warehouse (``smartcart.selectors.nodes``)."""
    if nodes is not None and any(nodes.is_v2(merchant_id) for merchant_id in merchants):
        return problem_v2(lines, offers, merchants, nodes)
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
        offer_stock=[-1 if (stock := offers[pair].stock) is None else stock for pair in pairs],
    )


def cart_problem_build(
    *, cart: Cart, lines: CartLines | None = None, sold_out_allowed: bool = False
) -> CartProblemBuild:
    """The engine problem of ``cart`` as it stands in the database, in two queries whatever
    the size of the cart: the cart with its lines (none when ``lines``, the cart and its
    lines as the caller read them with ``cart_lines_find``, is given), then the candidate
    offers with their merchants' terms and the zones that match the destination.

    Every active offer (of an active merchant) of each line's product is a candidate; the
    engine itself leaves out offers short of stock for a line's quantity. Shipping is each
    merchant's rule for the cart's destination (longest matching postal prefix).

    Raises ``NotFound`` for a deleted cart, ``ValidationFailed`` (``cart_empty``) for an
    empty one and ``Conflict`` (``line_unavailable``) when a line's own offer can no longer
    be bought as it is, so the current total is a price the shopper could pay now.
    ``sold_out_allowed`` (Improve cart): a line whose offer is only short of stock is kept
    when another merchant can supply it (``sold_out``), for the solver to move it there.
    """
    if lines is None:
        lines = cart_lines_read(cart=cart)
    elif lines.cart.pk != cart.pk:
        raise ValueError(f"lines of cart {lines.cart.pk} given for cart {cart.pk}")
    if not lines.rows:
        raise ValidationFailed("The cart is empty.", code="cart_empty", field="cart")
    sold_out = _check_lines(lines.rows, sold_out_allowed=sold_out_allowed)
    snapshots = tuple(row.snapshot for row in lines.rows)
    postal_code = lines.cart.postal_code
    offers, merchant_reads, v2 = _read_offers(snapshots, postal_code)
    nodes = cart_nodes_read(
        merchant_ids=v2,
        offer_ids={offer.offer_id for (_, m), offer in offers.items() if m in v2},
        postal_code=postal_code,
    )
    offers = offers_at_nodes(offers, nodes)
    warehouses, short = current_warehouses(lines.rows, nodes, sold_out)
    if short and not sold_out_allowed:
        refuse([f"{row.snapshot.product_name} ({NOT_AT_A_WAREHOUSE})" for row in short])
    sold_out = sold_out | {row.snapshot.line_id for row in short}
    check_other_sellers(lines.rows, sold_out, offers)
    merchants = merchant_terms(
        {m: read for m, read in merchant_reads.items() if m in {k[1] for k in offers}},
        postal_code,
        frozenset(nodes.nodes),
    )
    try:
        problem = _problem(snapshots, offers, merchants, nodes)
    except ProblemError as error:
        raise ValidationFailed(
            f"This cart cannot be optimised: {error}", code="cart_problem_invalid", field="cart"
        ) from error
    return CartProblemBuild(
        cart_id=cart.pk,
        cart_version=lines.cart.version,
        postal_code=postal_code,
        problem=problem,
        lines=snapshots,
        offers=offers,
        merchants=merchants,
        sold_out=sold_out,
        nodes=nodes,
        current_warehouses=warehouses,
    )


def cart_current_breakdown(
    *,
    build: CartProblemBuild,
    assignment: dict[str, str] | None = None,
    nodes: dict[str, str] | None = None,
) -> list[MerchantCost]:
    """The cart's current offers priced by the contract (``gpu_engine.price_assignment``);
    ``assignment``: another assignment of the same problem (a cart with its sold-out lines
    moved), with ``nodes`` the node of each moved line (``CartProblemBuild.pairs``)."""
    return price_assignment(
        build.problem, build.pairs(assignment or build.current_assignment, nodes)
    )


def cart_current_total(*, cart: Cart) -> int:
    """What the cart costs now with its current offers, shipping and discounts, in cents."""
    build = cart_problem_build(cart=cart)
    return sum(cost.cost for cost in cart_current_breakdown(build=build))
