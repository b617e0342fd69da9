"""The cart's pricing summary: every line priced, grouped by merchant with discount and
shipping, one cart or many in a bounded number of queries."""

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from django.conf import settings
from django.db.models import F, Q, QuerySet

from storefront.carts.fulfillment import (
    CartNodes,
    cart_nodes_read,
    line_merchant_has_warehouse,
    short_of_stock_note,
)
from storefront.carts.pricing import (
    MerchantCost,
    ParcelCost,
    PricedLine,
    Shipment,
    shipments_price,
)
from storefront.carts.selectors import cart_line_list
from storefront.catalog.shipping import Discount, ShippingRule
from storefront.catalog.shipping_selectors import (
    MerchantDestination,
    MerchantTerms,
    merchant_terms_build,
    merchant_terms_for_destination,
    shipping_rules_for_pairs,
)
from storefront.catalog.sql_shapes import Slots, shaped_list
from storefront.models import Cart, CartLine, Merchant, Offer
from storefront.models.catalog import stock_covers


@dataclass(frozen=True)
class LinePricing:
    line_id: int
    product_id: int
    offer_id: int
    merchant_id: int
    quantity: int
    unit_price: int
    unit_price_snapshot: int
    line_total: int
    # None when buyable; else "offer_inactive", "merchant_inactive" or "insufficient_stock".
    problem: str | None
    line: CartLine = field(repr=False, compare=False)
    # Grams per unit, and the warehouse the line ships from (version 2 merchants only; see
    # ``storefront.carts.fulfillment``).
    weight_g: int = 0
    warehouse_id: int | None = None
    warehouse_name: str = ""
    # The most units the line can have now (None: unlimited): the offer's stock, or for a
    # merchant with warehouses (``from_warehouses``) the most one of them that ships to the
    # cart's destination holds, never their sum: a line ships whole from one.
    max_quantity: int | None = None
    from_warehouses: bool = False

    @property
    def available(self) -> bool:
        return self.problem is None

    @property
    def stock_note(self) -> str:
        """Why the quantity cannot be had ("only 2 can ship from one warehouse of Acme")."""
        return short_of_stock_note(
            merchant_name=self.line.offer.merchant.name,
            most=self.max_quantity,
            from_warehouses=self.from_warehouses,
            total=self.line.offer.stock,
        )

    @property
    def price_changed(self) -> bool:
        return self.unit_price != self.unit_price_snapshot

    @property
    def price_change(self) -> int:
        """Current minus snapshot unit price, in cents (negative: it got cheaper)."""
        return self.unit_price - self.unit_price_snapshot


@dataclass(frozen=True)
class MerchantGroup:
    merchant_id: int
    merchant_name: str
    lines: tuple[LinePricing, ...]
    shipping_rule: ShippingRule
    discount_rule: Discount | None
    cost: MerchantCost

    # Flattened for templates and serializers.
    @property
    def subtotal(self) -> int:
        return self.cost.subtotal

    @property
    def units(self) -> int:
        return self.cost.units

    @property
    def discount(self) -> int:
        return self.cost.discount

    @property
    def shipping(self) -> int:
        return self.cost.shipping

    @property
    def total(self) -> int:
        return self.cost.cost

    @property
    def missing_for_free_shipping(self) -> int | None:
        return self.cost.missing_for_free_shipping

    @property
    def parcels(self) -> tuple[ParcelCost, ...]:
        return self.cost.parcels

    @property
    def ships_from_warehouses(self) -> bool:
        return self.cost.ships_from_warehouses


@dataclass(frozen=True)
class CartPricingSummary:
    """The cart as it stands, priced by the contract: one group per merchant that ships
    something, in order of each merchant's first line. Lines that cannot be bought now
    (``unavailable``) are listed apart and are not in any total."""

    cart_id: int
    version: int
    postal_code: str
    currency: str
    groups: tuple[MerchantGroup, ...]
    unavailable: tuple[LinePricing, ...]

    @property
    def subtotal(self) -> int:
        return sum(group.subtotal for group in self.groups)

    @property
    def discount(self) -> int:
        return sum(group.discount for group in self.groups)

    @property
    def shipping(self) -> int:
        return sum(group.shipping for group in self.groups)

    @property
    def total(self) -> int:
        return sum(group.total for group in self.groups)

    @property
    def units(self) -> int:
        return sum(group.units for group in self.groups)

    @property
    def parcel_count(self) -> int:
        """Parcels of every merchant (one without warehouses ships one), as the API lists them."""
        return sum(len(group.parcels) for group in self.groups)

    @property
    def unavailable_units(self) -> int:
        return sum(line.quantity for line in self.unavailable)

    @property
    def all_units(self) -> int:
        """Every unit in the cart, buyable now or not: what the header's cart badge counts."""
        return self.units + self.unavailable_units

    @property
    def line_count(self) -> int:
        return sum(len(group.lines) for group in self.groups) + len(self.unavailable)

    @property
    def is_empty(self) -> bool:
        return self.line_count == 0

    @property
    def price_changes(self) -> tuple[LinePricing, ...]:
        lines = [line for group in self.groups for line in group.lines]
        return tuple(line for line in [*lines, *self.unavailable] if line.price_changed)


def line_unavailable_reason(
    *, offer_active: bool, merchant_active: bool, stock: int | None, quantity: int
) -> str | None:
    """Why a cart line cannot be bought as it stands (``"offer_inactive"``,
    ``"merchant_inactive"``, ``"insufficient_stock"``), or None: the one rule the cart page
    and Improve cart both apply (``stock`` None is unlimited)."""
    if not offer_active:
        return "offer_inactive"
    if not merchant_active:
        return "merchant_inactive"
    if not stock_covers(stock, quantity):
        return "insufficient_stock"
    return None


def _line_problem(line: CartLine) -> str | None:
    return line_unavailable_reason(
        offer_active=line.offer.active,
        merchant_active=line.offer.merchant.active,
        stock=line.offer.stock,
        quantity=line.quantity,
    )


def _line_pricing(line: CartLine) -> LinePricing:
    weight = getattr(line, "_weight_g", None)
    return LinePricing(
        weight_g=line.product.weight_g if weight is None else weight,
        line_id=line.pk,
        product_id=line.product_id,
        offer_id=line.offer_id,
        merchant_id=line.offer.merchant_id,
        quantity=line.quantity,
        unit_price=line.offer.unit_price,
        unit_price_snapshot=line.unit_price_snapshot,
        line_total=line.quantity * line.offer.unit_price,
        problem=_line_problem(line),
        line=line,
        max_quantity=line.offer.stock,
    )


def lines_with_fulfillment(lines: QuerySet[CartLine]) -> QuerySet[CartLine]:
    """Cart lines annotated with what version 2 pricing needs, in the same query: the
    product's weight and whether the line's merchant ships from warehouses."""
    return lines.annotate(_weight_g=F("product__weight_g"), _v2=line_merchant_has_warehouse())


def _line_nodes_apply(lines: Sequence[LinePricing], nodes: CartNodes) -> list[LinePricing]:
    """The lines of version 2 merchants with the warehouse they ship from (or short of stock
    when no warehouse of the merchant can ship them to the destination), and the most one
    warehouse can ship: their stock is judged per warehouse, never by the offer's total."""
    placed = []
    for line in lines:
        if line.problem not in (None, "insufficient_stock") or not nodes.is_v2(line.merchant_id):
            placed.append(line)
            continue
        most = nodes.ships_at_most(merchant_id=line.merchant_id, offer_id=line.offer_id)
        line = replace(line, max_quantity=most, from_warehouses=True)
        node = nodes.line_node(
            merchant_id=line.merchant_id,
            offer_id=line.offer_id,
            quantity=line.quantity,
            warehouse_id=line.line.warehouse_id,
        )
        if node is None:
            placed.append(replace(line, problem="insufficient_stock"))
        else:
            placed.append(
                replace(
                    line, problem=None, warehouse_id=node.warehouse_id, warehouse_name=node.name
                )
            )
    return placed


def _v2_lines(lines: Iterable[LinePricing]) -> list[LinePricing]:
    return [line for line in lines if getattr(line.line, "_v2", False)]


def _nodes_for(lines: Sequence[LinePricing], postal_code: str) -> CartNodes:
    """The nodes of the version 2 merchants of ``lines`` (none: no query)."""
    v2 = _v2_lines(lines)
    return cart_nodes_read(
        merchant_ids={line.merchant_id for line in v2},
        offer_ids={line.offer_id for line in v2},
        postal_code=postal_code,
    )


def _cart_lines_priced(*, cart_ids: Iterable[int]) -> dict[int, list[LinePricing]]:
    """The lines of every cart, priced as they stand, in one query (each cart's lines in the
    order ``cart_line_list`` gives)."""
    lines = lines_with_fulfillment(
        CartLine.objects.filter(cart_id__in=set(cart_ids))
        .select_related("offer__merchant", "product__category")
        .order_by("cart_id", "created_at", "id")
    )
    priced: dict[int, list[LinePricing]] = defaultdict(list)
    for line in lines:
        priced[line.cart_id].append(_line_pricing(line))
    return priced


def _lines_for_product(
    *,
    cart_id: int,
    line_cart_id: int,
    product_id: int,
    seller_product_id: int,
    line_product_id: int,
) -> QuerySet[CartLine]:
    """A cart's lines bought from a merchant with an active offer of the product (an active
    merchant), from the merchant of the product's own line, and that line; with their offers
    and merchants only. Each value is its own argument: one slot each in the shaped SQL."""
    sellers = Offer.objects.filter(product_id=seller_product_id, active=True, merchant__active=True)
    product_line = CartLine.objects.filter(cart_id=line_cart_id, product_id=line_product_id)
    return lines_with_fulfillment(
        CartLine.objects.filter(cart_id=cart_id)
        .filter(
            Q(offer__merchant_id__in=sellers.values("merchant_id"))
            | Q(offer__merchant_id__in=product_line.values("offer__merchant_id"))
            | Q(product_id=product_id)
        )
        .select_related("offer__merchant")
        .order_by("created_at", "id")
    )


def _v2_rule(merchant: Merchant, nodes: CartNodes) -> ShippingRule:
    """A version 2 merchant's rule as the pages show it: its own free-shipping threshold (its
    warehouses' rates are shown per parcel); the fees are its first node's."""
    first = next(iter(nodes.nodes.get(merchant.pk, ())), None)
    return ShippingRule(
        base_fee=0 if first is None else first.base_fee,
        per_extra_unit=0 if first is None else first.per_extra_unit,
        free_over=merchant.free_over,
    )


def _cart_summary_build(
    *,
    cart: Cart,
    priced: Sequence[LinePricing],
    terms: Mapping[int, MerchantTerms],
    nodes: CartNodes | None = None,
) -> CartPricingSummary:
    """Groups the buyable lines by merchant (``terms`` holds each one's terms for the cart's
    destination, ``nodes`` the warehouses of version 2 merchants) and prices them through the
    engine's pricing routine."""
    nodes = nodes or CartNodes()
    by_merchant: dict[int, list[LinePricing]] = {}
    for line in priced:
        if line.available:
            by_merchant.setdefault(line.merchant_id, []).append(line)
    rules = {
        merchant_id: _v2_rule(lines[0].line.offer.merchant, nodes)
        if nodes.is_v2(merchant_id)
        else terms[merchant_id].shipping
        for merchant_id, lines in by_merchant.items()
    }
    shipments = [
        Shipment(
            merchant_id=merchant_id,
            shipping=rules[merchant_id],
            discount=terms[merchant_id].discount,
            lines=tuple(
                PricedLine(
                    line_id=line.line_id,
                    quantity=line.quantity,
                    unit_price=line.unit_price,
                    weight_g=line.weight_g,
                    warehouse_id=line.warehouse_id,
                )
                for line in lines
            ),
            nodes={node.warehouse_id: node for node in nodes.nodes[merchant_id]}
            if nodes.is_v2(merchant_id)
            else None,
        )
        for merchant_id, lines in by_merchant.items()
    ]
    costs = shipments_price(shipments)
    groups = tuple(
        MerchantGroup(
            merchant_id=merchant_id,
            merchant_name=terms[merchant_id].name,
            lines=tuple(lines),
            shipping_rule=rules[merchant_id],
            discount_rule=terms[merchant_id].discount,
            cost=costs[merchant_id],
        )
        for merchant_id, lines in by_merchant.items()
    )
    return CartPricingSummary(
        cart_id=cart.pk,
        version=cart.version,
        postal_code=cart.postal_code,
        currency=settings.SHOP_CURRENCY,
        groups=groups,
        unavailable=tuple(line for line in priced if not line.available),
    )


def cart_pricing_summaries(*, carts: Iterable[Cart]) -> list[CartPricingSummary]:
    """``cart_pricing_summary`` of each cart, in order, for a whole page or batch of carts:
    one query for the lines of every cart (with their offers and merchants), then the shipping
    rule of every (merchant, cart destination) in one batched match of the zone index: no
    query while it is fresh, two when a zone or merchant changed since this process built it,
    one more when a line's merchant is newer than the index. Never one query per cart.
    """
    carts = list(carts)
    return _summaries_build(carts, _cart_lines_priced(cart_ids=[cart.pk for cart in carts]))


def _nodes_by_destination(
    carts: Sequence[Cart], priced: Mapping[int, list[LinePricing]]
) -> dict[str, CartNodes]:
    """The ``CartNodes`` of each destination with version 2 lines: three queries a
    destination (carts of one shopper share one), none for carts of version 1 merchants."""
    by_code: dict[str, list[LinePricing]] = defaultdict(list)
    for cart in carts:
        by_code[cart.postal_code].extend(_v2_lines(priced.get(cart.pk, ())))
    return {code: _nodes_for(lines, code) for code, lines in by_code.items() if lines}


def _summaries_build(
    carts: Sequence[Cart], priced: Mapping[int, list[LinePricing]]
) -> list[CartPricingSummary]:
    nodes = _nodes_by_destination(carts, priced)
    codes = {cart.pk: cart.postal_code for cart in carts}
    priced = {
        cart_id: _line_nodes_apply(lines, nodes[codes[cart_id]])
        if codes.get(cart_id) in nodes
        else lines
        for cart_id, lines in priced.items()
    }
    merchants: dict[int, Merchant] = {}
    pairs: list[MerchantDestination] = []
    for cart in carts:
        for line in priced.get(cart.pk, ()):
            if line.available:
                merchants.setdefault(line.merchant_id, line.line.offer.merchant)
                pairs.append((line.merchant_id, cart.postal_code))
    rules = shipping_rules_for_pairs(pairs=pairs, merchants=merchants)
    terms = {
        (merchant_id, code): merchant_terms_build(merchants[merchant_id], rule)
        for (merchant_id, code), rule in rules.items()
    }
    summaries = []
    for cart in carts:
        lines = priced.get(cart.pk, [])
        cart_terms = {
            line.merchant_id: terms[(line.merchant_id, cart.postal_code)]
            for line in lines
            if line.available
        }
        summaries.append(
            _cart_summary_build(
                cart=cart, priced=lines, terms=cart_terms, nodes=nodes.get(cart.postal_code)
            )
        )
    return summaries


def cart_pricing_summary(*, cart: Cart) -> CartPricingSummary:
    """Prices the cart's current lines at their offers' current prices, grouped by merchant,
    with each merchant's shipping resolved for the cart's destination, through the engine's
    pricing routine (``storefront.carts.pricing``). The batch path for one cart (see
    ``cart_pricing_summaries``): one query while the zone index is fresh; no writes."""
    (summary,) = cart_pricing_summaries(carts=[cart])
    return summary


def cart_pricing_summary_for_product(*, cart: Cart, product_id: int) -> CartPricingSummary:
    """``cart_pricing_summary`` of the part of the cart that adding ``product_id`` can change:
    the lines bought from merchants with an active offer of it (active merchants), from the
    merchant of the product's own line, and that line. Each such merchant's group is whole (a
    merchant's cost depends on its own lines only), so each is priced exactly as in the whole
    cart; the totals are not the cart's. One query, as ``cart_pricing_summary``."""
    slots = Slots()
    values = (cart.pk, cart.pk, product_id, product_id, product_id)
    names = ("cart_id", "line_cart_id", "product_id", "seller_product_id", "line_product_id")
    for value in values:
        slots.number(value)
    # Compiled once per process (storefront.catalog.sql_shapes): building and compiling this
    # query with its two subqueries cost more than running it, on every product page.
    lines = shaped_list(
        key="cart_lines_for_product",
        slots=slots,
        build=lambda sentinels: _lines_for_product(
            **dict(zip(names, sentinels.numbers(values), strict=True))
        ),
        plain=lambda: _lines_for_product(**dict(zip(names, values, strict=True))),
    )
    (summary,) = _summaries_build([cart], {cart.pk: [_line_pricing(line) for line in lines]})
    return summary


def cart_pricing_summary_via_sql(*, cart: Cart) -> CartPricingSummary:
    """``cart_pricing_summary`` with each merchant's terms read and its zone resolved in SQL
    (``merchant_terms_for_destination``), three queries per cart: the path the zone index
    replaced, kept as the reference its parity tests and ``bench_cart_pricing`` measure."""
    priced = [_line_pricing(line) for line in lines_with_fulfillment(cart_line_list(cart=cart))]
    nodes = _nodes_for(priced, cart.postal_code)
    priced = _line_nodes_apply(priced, nodes)
    terms = merchant_terms_for_destination(
        merchant_ids={line.merchant_id for line in priced if line.available},
        postal_code=cart.postal_code,
    )
    return _cart_summary_build(cart=cart, priced=priced, terms=terms, nodes=nodes)
