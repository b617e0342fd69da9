"""The catalog cards' prices: each product's cheapest offer delivered, one unit bought on its
own, by the product page's own ranking (``storefront.carts.delivered`` for an empty cart), for
a page of products at a time."""

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from django.db.models import F, QuerySet

from storefront.carts.delivered import (
    CartBasis,
    DeliveredCost,
    delivered_cheapest,
    delivered_nodes_read,
    offers_delivered_cost,
)
from storefront.carts.fulfillment import CartNodes
from storefront.catalog.shipping_selectors import merchant_terms_for_merchants
from storefront.catalog.sql_shapes import Slots, shaped_list
from storefront.fulfillment.selectors import FulfillmentNode
from storefront.models import Offer, WarehouseStock


@dataclass(frozen=True, slots=True)
class ListedCheapest:
    """What a catalog card says of a product: its cheapest offer delivered, one unit bought
    on its own (an empty cart's ranking), and how many offers can sell it now."""

    cost: DeliveredCost
    merchant_name: str
    offer_count: int


def _warehouse_stock(offer_ids: Iterable[int]) -> dict[int, dict[int, int | None]]:
    """``offer_stock_by_warehouse``'s stock rows, from SQL compiled once per number of offers
    (a catalog page's)."""
    ids = tuple(sorted(set(offer_ids)))
    if not ids:
        return {}

    def query(wanted: tuple[int, ...]) -> QuerySet:
        return (
            WarehouseStock.objects.filter(offer_id__in=wanted, warehouse__active=True)
            .order_by("offer_id", "warehouse_id")
            .values_list("offer_id", "warehouse_id", "stock")
        )

    slots = Slots()
    slots.numbers(ids)
    rows = shaped_list(
        key=("page_warehouse_stock", len(ids)),
        slots=slots,
        build=lambda sentinels: query(sentinels.numbers(ids)),
        plain=lambda: query(ids),
    )
    found: dict[int, dict[int, int | None]] = defaultdict(dict)
    for offer_id, warehouse_id, stock in rows:
        found[offer_id][warehouse_id] = stock
    return dict(found)


def products_cheapest_delivered(
    *,
    product_ids: Sequence[int],
    postal_code: str,
    warehouses: Mapping[int, tuple[FulfillmentNode, ...]] | None = None,
) -> dict[int, ListedCheapest]:
    """``{product_id: ListedCheapest}`` for a page of products (those nobody can sell now are
    left out): the product page's ranking for an empty cart delivered to ``postal_code``, for
    each. One query for every product's offers (the merchants' shipping from the zone index),
    one for which merchants ship from warehouses (three more when some do); ``warehouses``,
    every version 2 merchant's nodes for ``postal_code`` when the caller has read them (the
    listing's terms), leaves only their stock to read."""
    if not product_ids:
        return {}
    ids = tuple(sorted(set(product_ids)))

    def query(wanted: tuple[int, ...]) -> QuerySet[Offer]:
        return (
            Offer.objects.filter(product_id__in=wanted, active=True, merchant__active=True)
            .select_related("merchant")
            .annotate(product_weight_g=F("product__weight_g"))
            .order_by("unit_price", "merchant_id", "id")
        )

    slots = Slots()
    slots.numbers(ids)
    offers = shaped_list(
        key=("page_offers", len(ids)),
        slots=slots,
        build=lambda sentinels: query(sentinels.numbers(ids)),
        plain=lambda: query(ids),
    )
    by_product: dict[int, list[Offer]] = defaultdict(list)
    for offer in offers:
        by_product[offer.product_id].append(offer)
    terms = merchant_terms_for_merchants(
        merchants=[offer.merchant for offer in offers], postal_code=postal_code
    )
    empty = CartBasis(groups={}, product_line=None)
    if warehouses is None:
        nodes = delivered_nodes_read(offers=offers, basis=empty, postal_code=postal_code)
    else:
        v2 = {offer.merchant_id for offer in offers} & set(warehouses)
        stock = _warehouse_stock(offer.pk for offer in offers if offer.merchant_id in v2)
        nodes = CartNodes(nodes={m: warehouses[m] for m in v2}, stock=stock)
    found = {}
    for product_id, product_offers in by_product.items():
        costs = offers_delivered_cost(
            offers=product_offers,
            terms=terms,
            basis=empty,
            nodes=nodes,
            weight_g=product_offers[0].product_weight_g,  # type: ignore[attr-defined]
        )
        best = delivered_cheapest(costs)
        if best is None:
            continue
        merchant = next(o.merchant for o in product_offers if o.pk == best.offer_id)
        found[product_id] = ListedCheapest(
            cost=best,
            merchant_name=merchant.name,
            offer_count=sum(cost.eligible for cost in costs),
        )
    return found
