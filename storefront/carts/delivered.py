"""Delivered cost: what buying an offer adds to a cart's total, shipping and discounts included.

"Cheapest" in the shop means the smallest such increment for the cart's destination, never
the lowest item price alone: an offer from a merchant the cart already buys from may add no
shipping, reach that merchant's free-shipping threshold or multi-unit discount, while a lower
price elsewhere opens a parcel of its own. The increment is priced by the cart's own routine
(``storefront.carts.pricing.shipments_price``, the contract's ``gpu_engine.price_assignment``),
so the figure a product page shows is what the cart total grows by, to the cent.

Adding an offer does what ``cart_line_add`` does: the product's line (if the cart has one)
grows by the quantity and moves to that offer. So only two merchants' costs change, the
offer's and the one the line leaves; every other merchant's cost stays as it is.
"""

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from storefront.carts.fulfillment import CartNodes, cart_nodes_read
from storefront.carts.pricing import PricedLine, Shipment, shipments_price
from storefront.carts.pricing_summary import (
    CartPricingSummary,
    LinePricing,
    MerchantGroup,
    cart_pricing_summary_for_product,
)
from storefront.catalog.selectors import product_offers_read
from storefront.catalog.shipping import Discount, ShippingRule
from storefront.catalog.shipping_selectors import MerchantTerms, merchant_terms_for_merchants
from storefront.fulfillment.selectors import FulfillmentNode, merchant_ids_with_warehouses
from storefront.models import Cart, Offer, Product
from storefront.models.catalog import stock_covers


@dataclass(frozen=True, slots=True)
class DeliveredCost:
    """One offer's delivered cost for ``quantity`` more units of its product."""

    offer_id: int
    merchant_id: int
    unit_price: int
    quantity: int
    # What the cart total grows by when the offer is added (items, shipping, discounts).
    increment: int
    # The cart can take it: the offer has the stock for the line's quantity after the add.
    eligible: bool
    # The merchant already ships something in the cart (the offer joins that parcel).
    joins_cart: bool
    # How the cart's shipping and discounts change with the add (parts of ``increment``).
    shipping_change: int = 0
    discount_change: int = 0
    # The add brings the merchant's order, which paid shipping, to free shipping.
    unlocks_free_shipping: bool = False

    @property
    def items(self) -> int:
        return self.unit_price * self.quantity

    @property
    def extra(self) -> int:
        """Increment beyond the items: shipping it adds, less any shipping or discount the add
        unlocks on the merchant's other lines (negative then)."""
        return self.increment - self.items


@dataclass(frozen=True, slots=True)
class CartBasis:
    """What of a cart the increments depend on: its merchant groups as priced now (available
    lines only, as in the cart's total) and the product's own line, if any."""

    groups: Mapping[int, MerchantGroup]
    product_line: LinePricing | None

    @classmethod
    def from_summary(cls, summary: CartPricingSummary | None, *, product_id: int) -> "CartBasis":
        if summary is None:
            return cls(groups={}, product_line=None)
        every_line = [*(line for g in summary.groups for line in g.lines), *summary.unavailable]
        return cls(
            groups={group.merchant_id: group for group in summary.groups},
            product_line=next((line for line in every_line if line.product_id == product_id), None),
        )

    def vary(self) -> str:
        """A key for what the increments depend on in the cart (the merchants' terms and the
        product's offers are versioned by the page cache already): equal for carts whose
        rankings are equal, e.g. every empty cart. A merchant's cost depends on its lines only
        through their subtotal and units."""
        parts = [
            f"{merchant_id}:{group.subtotal}:{group.units}"
            for merchant_id, group in sorted(self.groups.items())
        ]
        line = self.product_line
        if line is not None:
            parts.append(
                f"line:{line.offer_id}:{line.quantity}:{line.unit_price}:{int(line.available)}"
            )
        return ",".join(parts)

    def lines_without_product(self, merchant_id: int) -> list[LinePricing]:
        group = self.groups.get(merchant_id)
        if group is None:
            return []
        line = self.product_line
        return [other for other in group.lines if line is None or other.line_id != line.line_id]


# (quantity, unit price, grams per unit, warehouse id or None) of one priced line.
_Line = tuple[int, int, int, int | None]


class _Problem:
    """Shipments of one pricing call: each scenario is a merchant of its own (merchants' costs
    are independent in the contract), its lines numbered apart."""

    def __init__(self) -> None:
        self.shipments: list[Shipment] = []
        self._line_ids = 0

    def add(
        self,
        *,
        shipping: ShippingRule,
        discount: Discount | None,
        lines: Iterable[_Line],
        nodes: Mapping[int, FulfillmentNode] | None = None,
    ) -> int:
        """Adds a scenario of lines (``nodes``: a version 2 merchant's warehouses, which the
        lines name); returns its key."""
        priced = []
        for quantity, unit_price, weight_g, warehouse_id in lines:
            self._line_ids += 1
            priced.append(
                PricedLine(
                    line_id=self._line_ids,
                    quantity=quantity,
                    unit_price=unit_price,
                    weight_g=weight_g,
                    warehouse_id=warehouse_id if nodes is not None else None,
                )
            )
        key = len(self.shipments) + 1
        self.shipments.append(
            Shipment(
                merchant_id=key,
                shipping=shipping,
                discount=discount,
                lines=tuple(priced),
                nodes=nodes,
            )
        )
        return key


def _line(line: LinePricing) -> _Line:
    return (line.quantity, line.unit_price, line.weight_g, line.warehouse_id)


def delivered_nodes_read(
    *, offers: Iterable[Offer], basis: CartBasis, postal_code: str | None
) -> CartNodes:
    """The warehouses (for ``postal_code``) of the version 2 merchants among the offers' and
    the cart's, with the stock of their offers there: one query when none ships from
    warehouses, four otherwise."""
    offers = list(offers)
    merchant_ids = {offer.merchant_id for offer in offers} | set(basis.groups)
    v2 = merchant_ids_with_warehouses(merchant_ids=merchant_ids)
    if not v2:
        return CartNodes()
    offer_ids = {offer.pk for offer in offers if offer.merchant_id in v2}
    for group in basis.groups.values():
        if group.merchant_id in v2:
            offer_ids |= {line.offer_id for line in group.lines}
    return cart_nodes_read(merchant_ids=v2, offer_ids=offer_ids, postal_code=postal_code)


def _warehouses(nodes: CartNodes, merchant_id: int) -> dict[int, FulfillmentNode] | None:
    if not nodes.is_v2(merchant_id):
        return None
    return {node.warehouse_id: node for node in nodes.nodes[merchant_id]}


def offers_delivered_cost(
    *,
    offers: Sequence[Offer],
    terms: Mapping[int, MerchantTerms],
    basis: CartBasis,
    quantity: int = 1,
    nodes: CartNodes | None = None,
    weight_g: int = 0,
) -> list[DeliveredCost]:
    """Each offer's delivered cost for ``quantity`` more units (``terms``: each offer merchant's
    terms for the cart's destination), cheapest first: offers that can take the line's quantity
    by increment, then unit price and merchant id (the product page's order for equal prices);
    the others after them in the same order. Offers whose merchant has no terms are left out.
    One pricing call for all of them.

    A version 2 merchant (in ``nodes``, from ``delivered_nodes_read``) ships the line from the
    warehouse that adds least, as ``cart_line_add`` places it (``weight_g``: the product's
    grams per unit); its offer can take the line only where a warehouse that ships to the
    destination has the stock."""
    nodes = nodes if nodes is not None else CartNodes()
    line = basis.product_line
    after_quantity = quantity + (line.quantity if line is not None else 0)
    problem = _Problem()
    # The merchant the line leaves when it moves to another merchant's offer.
    leaves = basis.groups.get(line.merchant_id) if line is not None and line.available else None
    leaves_key = None
    if leaves is not None:
        remaining = basis.lines_without_product(leaves.merchant_id)
        if remaining:
            leaves_key = problem.add(
                shipping=leaves.shipping_rule,
                discount=leaves.discount_rule,
                lines=[_line(other) for other in remaining],
                nodes=_warehouses(nodes, leaves.merchant_id),
            )
    # Per offer: its scenarios (one per warehouse it may ship from), whether it joins a
    # merchant the cart buys from, the warehouses the merchant's other lines use, eligibility.
    scenarios: list[tuple[Offer, list[tuple[int, int | None]], bool, set[int | None], bool]] = []
    for offer in offers:
        merchant_terms = terms.get(offer.merchant_id)
        if merchant_terms is None:
            continue
        kept = basis.lines_without_product(offer.merchant_id)
        kept_lines = [_line(other) for other in kept]
        warehouses = _warehouses(nodes, offer.merchant_id)
        if warehouses is None:
            key = problem.add(
                shipping=merchant_terms.shipping,
                discount=merchant_terms.discount,
                lines=[*kept_lines, (after_quantity, offer.unit_price, weight_g, None)],
            )
            eligible = stock_covers(offer.stock, after_quantity)
            scenarios.append((offer, [(key, None)], bool(kept), set(), eligible))
            continue
        # Version 2: the threshold is the merchant's own; the fees are its warehouses'.
        rule = ShippingRule(base_fee=0, per_extra_unit=0, free_over=offer.merchant.free_over)
        places = nodes.eligible(
            merchant_id=offer.merchant_id, offer_id=offer.pk, quantity=after_quantity
        )
        keys: list[tuple[int, int | None]] = []
        for node in places:
            new = (after_quantity, offer.unit_price, weight_g, node.warehouse_id)
            keys.append(
                (
                    problem.add(
                        shipping=rule,
                        discount=merchant_terms.discount,
                        lines=[*kept_lines, new],
                        nodes=warehouses,
                    ),
                    node.warehouse_id,
                )
            )
        if not keys:
            # No warehouse can ship it there: priced without shipping, never the cheapest.
            key = problem.add(
                shipping=rule,
                discount=merchant_terms.discount,
                lines=[*kept_lines, (after_quantity, offer.unit_price, weight_g, None)],
            )
            keys.append((key, None))
        used: set[int | None] = {other.warehouse_id for other in kept}
        scenarios.append((offer, keys, bool(kept), used, bool(places)))
    if not scenarios:
        return []
    costs = shipments_price(problem.shipments)
    # (cost, shipping, discount) changes of the merchant the line leaves.
    leaver_change = (0, 0, 0)
    if leaves is not None:
        left = costs.get(leaves_key) if leaves_key is not None else None
        leaver_change = (
            (left.cost if left else 0) - leaves.total,
            (left.shipping if left else 0) - leaves.shipping,
            (left.discount if left else 0) - leaves.discount,
        )
    results = []
    for offer, keys, joins, used, eligible in scenarios:
        # The warehouse that adds least; on a tie one the merchant's lines use, then the
        # lowest id (``storefront.carts.placement``).
        key, _ = min(
            keys,
            key=lambda place: (costs[place[0]].cost, place[1] not in used, place[1] or 0),
        )
        after, before = costs[key], basis.groups.get(offer.merchant_id)
        increment = after.cost - (before.total if before else 0)
        shipping = after.shipping - (before.shipping if before else 0)
        discount = after.discount - (before.discount if before else 0)
        if leaves is not None and leaves.merchant_id != offer.merchant_id:
            increment += leaver_change[0]
            shipping += leaver_change[1]
            discount += leaver_change[2]
        results.append(
            DeliveredCost(
                offer_id=offer.pk,
                merchant_id=offer.merchant_id,
                unit_price=offer.unit_price,
                quantity=quantity,
                increment=increment,
                eligible=eligible,
                joins_cart=joins,
                shipping_change=shipping,
                discount_change=discount,
                unlocks_free_shipping=bool(before and before.shipping and not after.shipping),
            )
        )
    results.sort(key=lambda c: (not c.eligible, c.increment, c.unit_price, c.merchant_id))
    return results


def delivered_cheapest(costs: Sequence[DeliveredCost]) -> DeliveredCost | None:
    """The cheapest eligible cost of ``offers_delivered_cost``'s list, else ``None``."""
    return costs[0] if costs and costs[0].eligible else None


def product_cheapest_delivered_offer(
    *, product: Product | int, cart: Cart | None, postal_code: str, quantity: int
) -> Offer | None:
    """The offer of ``product`` whose ``quantity`` adds least to ``cart``'s total delivered to
    ``postal_code`` (an empty cart without one: each merchant's standard rate), among those
    that can supply the line; ``None`` when none can. What "Add cheapest" adds."""
    offers = product_offers_read(product=product)
    terms = merchant_terms_for_merchants(
        merchants=[offer.merchant for offer in offers], postal_code=postal_code
    )
    product_id = product.pk if isinstance(product, Product) else int(product)
    summary = None
    if cart is not None:
        summary = cart_pricing_summary_for_product(cart=cart, product_id=product_id)
    basis = CartBasis.from_summary(summary, product_id=product_id)
    if isinstance(product, Product):
        weight_g = product.weight_g
    else:
        weight_g = Product.objects.values_list("weight_g", flat=True).get(pk=product_id)
    nodes = delivered_nodes_read(offers=offers, basis=basis, postal_code=postal_code)
    best = delivered_cheapest(
        offers_delivered_cost(
            offers=offers,
            terms=terms,
            basis=basis,
            quantity=quantity,
            nodes=nodes,
            weight_g=weight_g,
        )
    )
    if best is None:
        return None
    return next(offer for offer in offers if offer.pk == best.offer_id)


@dataclass(frozen=True, slots=True)
class LineAlternative:
    """Another seller for a cart line that cannot be bought as it stands."""

    offer: Offer
    # What the cart total changes by when the whole line moves to ``offer``.
    cost: DeliveredCost
    # Offers other than the line's own that can supply its quantity.
    sellers: int


def cart_unavailable_alternatives(*, summary: CartPricingSummary) -> dict[int, LineAlternative]:
    """``{line_id: LineAlternative}`` for each unavailable line (sold out, short of stock, offer
    or merchant gone) that another offer can supply: the one whose move adds least to the cart
    delivered to its postal code. One query for every such line's offers; none without any."""
    if not summary.unavailable:
        return {}
    offers = (
        Offer.objects.filter(
            product_id__in={line.product_id for line in summary.unavailable},
            active=True,
            merchant__active=True,
        )
        .select_related("merchant")
        .order_by("unit_price", "merchant_id", "id")
    )
    by_product: dict[int, list[Offer]] = defaultdict(list)
    for offer in offers:
        by_product[offer.product_id].append(offer)
    terms = merchant_terms_for_merchants(
        merchants=[offer.merchant for offer in offers], postal_code=summary.postal_code
    )
    cart_groups = CartBasis(groups={g.merchant_id: g for g in summary.groups}, product_line=None)
    nodes = delivered_nodes_read(offers=offers, basis=cart_groups, postal_code=summary.postal_code)
    found = {}
    for line in summary.unavailable:
        others = [offer for offer in by_product[line.product_id] if offer.pk != line.offer_id]
        basis = CartBasis.from_summary(summary, product_id=line.product_id)
        # Quantity 0 more: the line moves with the units it has.
        costs = offers_delivered_cost(
            offers=others,
            terms=terms,
            basis=basis,
            quantity=0,
            nodes=nodes,
            weight_g=line.weight_g,
        )
        eligible = [cost for cost in costs if cost.eligible]
        if eligible:
            offer = next(offer for offer in others if offer.pk == eligible[0].offer_id)
            found[line.line_id] = LineAlternative(
                offer=offer, cost=eligible[0], sellers=len(eligible)
            )
    return found
