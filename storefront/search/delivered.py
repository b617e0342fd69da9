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

from storefront.catalog.shipping_selectors import merchant_terms_for_merchants
from storefront.catalog.sql_shapes import Slots, shaped_list
from storefront.models import Merchant, MoneyField, Offer
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
class DeliveredTerms:
    """Every active merchant's single-unit terms for one destination (``""``: each
    merchant's standard rate), grouped by equal terms."""

    postal_code: str
    groups: tuple[TermsGroup, ...]
    # The groups' forms, taken from the real values (sentinels would change them).
    forms: tuple[tuple[bool, str], ...] = ()

    def __post_init__(self) -> None:
        if not self.forms:
            object.__setattr__(self, "forms", tuple(group.form for group in self.groups))

    @property
    def shape(self) -> Hashable:
        """What the SQL's text depends on: the groups' sizes and forms."""
        sizes = tuple(len(group.merchant_ids) for group in self.groups)
        return sizes, self.forms

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
        return DeliveredTerms(postal_code=self.postal_code, groups=tuple(groups), forms=self.forms)


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
    grouped: dict[tuple[int, int, int], list[int]] = defaultdict(list)
    for merchant_id, term in terms.items():
        discount = term.discount
        # Only a discount that one unit unlocks changes a single unit's price.
        basis_points = discount.basis_points if discount and discount.min_units <= 1 else 0
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
    )


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
    if not whens:
        return Case(default=Value(None), output_field=MoneyField())
    return Case(*whens, default=Value(None), output_field=MoneyField())


def _buyable_offers() -> QuerySet[Offer]:
    """Offers one unit can be bought from (active, in stock or unlimited); whether the
    merchant is active is the delivered expression's NULL."""
    return Offer.objects.filter(
        Q(stock__isnull=True) | Q(stock__gt=0), active=True, product=OuterRef("pk")
    )


def product_delivered_price(terms: DeliveredTerms) -> Subquery:
    """The least delivered cost of one unit over a product's buyable offers (NULL: none)."""
    costs = (
        _buyable_offers()
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
