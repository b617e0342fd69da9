"""The catalog's delivered price: what one unit of a product costs delivered to the shopper's
postal code when it is bought on its own, from the offer where that is least (item price,
less a discount one unit already unlocks, plus the merchant's shipping for the destination
unless that unit alone reaches its free-shipping threshold): the product page's "cheapest"
for an empty cart (``storefront.carts.delivered``), in SQL.

Each merchant's terms for the destination are constants of the request, so a unit's
delivered cost is a function of its offer's merchant and unit price alone: one ``CASE`` over
the merchant groups with the same terms, evaluated per offer in the database. The product's
figure is the least of its buyable offers', a correlated subquery over the (product, active,
unit_price) index, so sorting and filtering stay set-based whatever the catalog's size.
"""

from collections import defaultdict
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from django.db.models import (
    Case,
    ExpressionWrapper,
    F,
    Min,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.lookups import LessThanOrEqual

from storefront.catalog.shipping import Discount, ShippingRule
from storefront.catalog.shipping_selectors import merchant_terms_for_merchants
from storefront.catalog.sql_shapes import Slots, shaped_list
from storefront.fulfillment.selectors import (
    FulfillmentNode,
    merchant_ids_with_warehouses,
    merchant_nodes_for_destination,
)
from storefront.models import Merchant, MoneyField, Offer, WarehouseStock
from storefront.search.free_shipping import free_from_price
from storefront.search.prices import PRICE_RANGES, PriceRange, PriceRangeIndex

# What "never ships free" compares against: above any unit price an offer can have.
_NEVER = 2**62
_BASIS = 10_000


@dataclass(frozen=True)
class TermsGroup:
    """Merchants whose one unit costs the same delivered at every price: for a unit price
    ``p``, ``p - p * basis_points // 10000`` (a discount one unit unlocks, else 0 points),
    plus ``base_fee`` unless ``p >= free_from``."""

    merchant_ids: tuple[int, ...]
    basis_points: int
    free_from: int  # ``_NEVER``: never free
    base_fee: int

    @property
    def form(self) -> tuple[bool, str]:
        """What the group's SQL writes: whether a discount comes off, and the shipping:
        ``"free"`` (none), ``"fee"`` (always ``base_fee``) or ``"threshold"`` (a CASE on the
        price). Less to evaluate for each of the catalog's offers than the general form."""
        if self.base_fee == 0 or self.free_from == 0:
            shipping = "free"
        elif self.free_from == _NEVER:
            shipping = "fee"
        else:
            shipping = "threshold"
        return self.basis_points > 0, shipping

    def cost(self, unit_price: int) -> int:
        """The group's delivered cost in Python (the SQL's twin, for tests and checks)."""
        goods = unit_price - unit_price * self.basis_points // _BASIS
        return goods + (0 if unit_price >= self.free_from else self.base_fee)


@dataclass(frozen=True)
class WarehouseTerms:
    """A version 2 merchant (it ships from warehouses): one unit costs ``p - p *
    basis_points // 10000`` plus, unless ``p >= free_from``, the least parcel fee for the
    product's weight among its ``nodes`` (for the destination) that hold the offer's stock;
    nothing when none does (it cannot ship there)."""

    merchant_id: int
    basis_points: int
    free_from: int  # ``_NEVER``: never free
    nodes: tuple[FulfillmentNode, ...]


@dataclass(frozen=True)
class DeliveredTerms:
    """Every active merchant's single-unit terms for one destination (``""``: each
    merchant's standard rate), grouped by equal terms."""

    postal_code: str
    groups: tuple[TermsGroup, ...]
    # The groups' forms, taken from the real values (sentinels would change them).
    forms: tuple[tuple[bool, str], ...] = ()
    warehouses: tuple[WarehouseTerms, ...] = ()

    def __post_init__(self) -> None:
        if not self.forms:
            object.__setattr__(self, "forms", tuple(group.form for group in self.groups))

    @property
    def shape(self) -> Hashable:
        """What the SQL's text depends on: the groups' sizes and forms, and for each version 2
        merchant whether a discount comes off and its nodes' numbers of weight tiers."""
        sizes = tuple(len(group.merchant_ids) for group in self.groups)
        warehouses = tuple(
            (merchant.basis_points > 0, tuple(len(node.tiers) for node in merchant.nodes))
            for merchant in self.warehouses
        )
        return sizes, self.forms, warehouses

    def with_sentinels(self, slots: Slots) -> "DeliveredTerms":
        """These terms with every value their SQL writes a sentinel of ``slots``, in a fixed
        order (values their forms leave out stay as they are)."""
        groups = []
        for group, (discounted, shipping) in zip(self.groups, self.forms, strict=True):
            merchant_ids = slots.numbers(group.merchant_ids)
            basis_points = slots.number(group.basis_points) if discounted else 0
            free_from = group.free_from
            if shipping == "threshold":
                free_from = slots.number(free_from)
            base_fee = group.base_fee
            if shipping != "free":
                base_fee = slots.number(base_fee)
            groups.append(TermsGroup(merchant_ids, basis_points, free_from, base_fee))
        warehouses = tuple(
            WarehouseTerms(
                merchant_id=slots.number(merchant.merchant_id),
                basis_points=slots.number(merchant.basis_points) if merchant.basis_points else 0,
                free_from=slots.number(merchant.free_from),
                nodes=tuple(_node_with_sentinels(node, slots) for node in merchant.nodes),
            )
            for merchant in self.warehouses
        )
        return DeliveredTerms(
            postal_code=self.postal_code,
            groups=tuple(groups),
            forms=self.forms,
            warehouses=warehouses,
        )


def _node_with_sentinels(node: FulfillmentNode, slots: Slots) -> FulfillmentNode:
    """A node with a sentinel for each value the SQL writes (``_least_parcel_fee``)."""
    warehouse_id = slots.number(node.warehouse_id)
    base_fee = slots.number(node.base_fee)
    tiers = tuple((slots.number(up), slots.number(fee)) for up, fee in node.tiers)
    per_kg_over = slots.number(node.per_kg_over) if node.tiers else node.per_kg_over
    return FulfillmentNode(
        warehouse_id=warehouse_id,
        name=node.name,
        base_fee=base_fee,
        per_extra_unit=node.per_extra_unit,
        tiers=tiers,
        per_kg_over=per_kg_over,
        postal_prefix=node.postal_prefix,
    )


def _active_merchants() -> list[Merchant]:
    """Every active merchant's row, from SQL compiled once."""

    def query() -> QuerySet[Merchant]:
        return Merchant.objects.filter(active=True).order_by("pk")

    return shaped_list(
        key="delivered_merchants", slots=Slots(), build=lambda _: query(), plain=query
    )


def delivered_terms_read(*, postal_code: str) -> DeliveredTerms:
    """The active merchants' terms for ``postal_code``, grouped: one query for the merchants,
    their shipping rules from the zone index (none while it is fresh)."""
    merchants = _active_merchants()
    terms = merchant_terms_for_merchants(merchants=merchants, postal_code=postal_code)
    v2 = merchant_ids_with_warehouses(merchant_ids=terms)
    nodes = merchant_nodes_for_destination(merchant_ids=v2, postal_code=postal_code)
    by_id = {merchant.pk: merchant for merchant in merchants}
    warehouses = []
    for merchant_id in sorted(v2):
        discount = by_id[merchant_id].discount
        # Only the merchant's own threshold counts (the fees are its warehouses').
        rule = ShippingRule(base_fee=1, per_extra_unit=0, free_over=by_id[merchant_id].free_over)
        free_from = free_from_price(merchant_id, rule, discount)
        warehouses.append(
            WarehouseTerms(
                merchant_id=merchant_id,
                basis_points=_one_unit_points(discount),
                free_from=_NEVER if free_from is None else free_from,
                nodes=nodes.get(merchant_id, ()),
            )
        )
    grouped: dict[tuple[int, int, int], list[int]] = defaultdict(list)
    for merchant_id, term in terms.items():
        if merchant_id in v2:
            continue
        discount = term.discount
        basis_points = _one_unit_points(discount)
        free_from = free_from_price(merchant_id, term.shipping, discount)
        base_fee = term.shipping.base_fee
        if free_from == 0 or base_fee == 0:
            free_from, base_fee = 0, 0  # ships free whatever the price
        key = (basis_points, _NEVER if free_from is None else free_from, base_fee)
        grouped[key].append(merchant_id)
    return DeliveredTerms(
        postal_code=postal_code,
        groups=tuple(
            TermsGroup(
                merchant_ids=tuple(sorted(ids)),
                basis_points=basis_points,
                free_from=free_from,
                base_fee=base_fee,
            )
            for (basis_points, free_from, base_fee), ids in sorted(grouped.items())
        ),
        warehouses=tuple(warehouses),
    )


def _one_unit_points(discount: Discount | None) -> int:
    """Only a discount that one unit unlocks changes a single unit's price."""
    return discount.basis_points if discount and discount.min_units <= 1 else 0


def _weight_fee(node: FulfillmentNode, weight: Any) -> Any:
    """The contract's ``weight_fee`` of one unit of ``weight`` grams at ``node``."""
    if not node.tiers:
        return Value(0)
    last_up, last_fee = node.tiers[-1]
    over = ExpressionWrapper(
        Value(last_fee)
        + Value(node.per_kg_over) * ((weight - Value(last_up) + Value(999)) / Value(1000)),
        output_field=MoneyField(),
    )
    return Case(
        *(When(LessThanOrEqual(weight, Value(up)), then=Value(fee)) for up, fee in node.tiers),
        default=over,
        output_field=MoneyField(),
    )


def _least_parcel_fee(merchant: WarehouseTerms) -> Subquery:
    """The least fee of one unit's parcel among the merchant's nodes holding the offer's
    stock (NULL: none): the product's weight is the outermost query's ``weight_g``."""
    weight = OuterRef(OuterRef("weight_g"))
    fees = Case(
        *(
            When(
                warehouse_id=node.warehouse_id,
                then=Value(node.base_fee) + _weight_fee(node, weight),
            )
            for node in merchant.nodes
        ),
        default=Value(None),
        output_field=MoneyField(),
    )
    rows = (
        WarehouseStock.objects.filter(
            Q(stock__isnull=True) | Q(stock__gt=0),
            offer=OuterRef("pk"),
            warehouse_id__in=[node.warehouse_id for node in merchant.nodes],
        )
        .annotate(fee=fees)
        .order_by()
        .values("offer")
        .annotate(least=Min("fee"))
        .values("least")
    )
    return Subquery(rows[:1], output_field=MoneyField())


def offer_delivered_expression(terms: DeliveredTerms, prefix: str = "") -> Case:
    """One unit of an offer delivered under ``terms`` (NULL for a merchant not in them: an
    inactive one), from its ``unit_price`` and ``merchant_id`` (under ``prefix``)."""
    price = F(f"{prefix}unit_price")
    whens = []
    for group, (discounted, shipping) in zip(terms.groups, terms.forms, strict=True):
        cost: Any = price
        if discounted:
            cost = cost - ExpressionWrapper(
                price * Value(group.basis_points) / Value(_BASIS), output_field=MoneyField()
            )
        if shipping == "fee":
            cost = cost + Value(group.base_fee)
        elif shipping == "threshold":
            cost = cost + Case(
                When(Q(**{f"{prefix}unit_price__gte": group.free_from}), then=Value(0)),
                default=Value(group.base_fee),
                output_field=MoneyField(),
            )
        whens.append(
            When(
                Q(**{f"{prefix}merchant_id__in": group.merchant_ids}),
                then=ExpressionWrapper(cost, output_field=MoneyField()),
            )
        )
    for merchant in terms.warehouses:
        if not merchant.nodes:
            continue  # ships nowhere near the destination: NULL
        goods: Any = price
        if merchant.basis_points:
            goods = goods - ExpressionWrapper(
                price * Value(merchant.basis_points) / Value(_BASIS), output_field=MoneyField()
            )
        # The fee times 0 once the unit reaches free shipping: NULL (no warehouse) stays NULL.
        charged = Case(
            When(Q(**{f"{prefix}unit_price__gte": merchant.free_from}), then=Value(0)),
            default=Value(1),
            output_field=MoneyField(),
        )
        whens.append(
            When(
                Q(**{f"{prefix}merchant_id": merchant.merchant_id}),
                then=ExpressionWrapper(
                    goods + _least_parcel_fee(merchant) * charged, output_field=MoneyField()
                ),
            )
        )
    if not whens:
        return Case(default=Value(None), output_field=MoneyField())
    return Case(*whens, default=Value(None), output_field=MoneyField())


def _buyable_offers(terms: DeliveredTerms) -> QuerySet[Offer]:
    """Offers one unit can be bought from (active, in stock or unlimited; a version 2
    merchant's stock is its warehouses', which the delivered expression reads); whether the
    merchant is active is the delivered expression's NULL."""
    in_stock = Q(stock__isnull=True) | Q(stock__gt=0)
    if terms.warehouses:
        in_stock |= Q(merchant_id__in=[merchant.merchant_id for merchant in terms.warehouses])
    return Offer.objects.filter(in_stock, active=True, product=OuterRef("pk"))


def product_delivered_price(terms: DeliveredTerms) -> Subquery:
    """The least delivered cost of one unit over a product's buyable offers (NULL: none)."""
    costs = (
        _buyable_offers(terms)
        .annotate(delivered=offer_delivered_expression(terms))
        .order_by()
        .values("product")
        .annotate(least=Min("delivered"))
        .values("least")
    )
    return Subquery(costs[:1], output_field=MoneyField())


def products_with_delivered_price(products: QuerySet, terms: DeliveredTerms) -> "QuerySet":
    """``products`` annotated with ``delivered_price`` under ``terms``."""
    return products.annotate(delivered_price=product_delivered_price(terms))


def delivered_price_filter(
    products: QuerySet, *, available_only: bool, price_range: PriceRange | None
) -> QuerySet:
    """``products`` (annotated ``delivered_price``) that can be bought, or whose delivered
    price is in ``price_range``: one condition on the price's range index, which reads the
    correlated subquery once per row (PostgreSQL repeats a subquery for each comparison that
    names it: "in stock" and a range's two bounds cost three runs of it)."""
    if price_range is None and not available_only:
        return products
    products = products.alias(delivered_range=PriceRangeIndex("delivered_price"))
    if price_range is None:
        return products.filter(delivered_range__isnull=False)
    return products.filter(delivered_range=PRICE_RANGES.index(price_range))


# Products nobody sells go last in both price orders, as in the item-price orders.
DELIVERED_ORDERINGS: dict[str, tuple] = {
    "price": (F("delivered_price").asc(nulls_last=True), "name", "id"),
    "-price": (F("delivered_price").desc(nulls_last=True), "name", "id"),
}


__all__ = [
    "DELIVERED_ORDERINGS",
    "DeliveredTerms",
    "TermsGroup",
    "delivered_price_filter",
    "delivered_terms_read",
    "offer_delivered_expression",
    "product_delivered_price",
    "products_with_delivered_price",
]
