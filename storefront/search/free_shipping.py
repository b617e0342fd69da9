"""The "ships free to my postal code" filter: an offer whose merchant charges no shipping
for this one unit to that destination, by the pricing contract (the shipping rule for the
destination, after the merchant's discount when one unit already unlocks it)."""

from collections.abc import Mapping
from functools import reduce
from operator import or_

from django.db.models import Q

from storefront.carts.pricing import PricedLine, Shipment, shipments_price
from storefront.catalog.shipping import Discount, ShippingRule
from storefront.models.fields import MAX_MONEY_CENTS


def _ships_free(price: int, merchant_id: int, rule: ShippingRule, discount) -> bool:
    line = PricedLine(line_id=1, quantity=1, unit_price=price)
    shipment = Shipment(merchant_id=merchant_id, shipping=rule, discount=discount, lines=(line,))
    return shipments_price([shipment])[merchant_id].shipping == 0


def free_from_price(merchant_id: int, rule: ShippingRule, discount: Discount | None) -> int | None:
    """The lowest unit price that one unit ships free at: 0 when shipping is free anyway,
    None when it never is. Shipping falls to 0 once goods reach ``free_over`` and goods grow
    with the price, so the threshold is found by bisection on the contract's own pricing."""
    if rule.base_fee == 0:
        return 0
    if rule.free_over is None:
        return None
    if discount is None or discount.min_units > 1:
        return rule.free_over
    low, high = rule.free_over, MAX_MONEY_CENTS
    if not _ships_free(high, merchant_id, rule, discount):
        return None
    while low < high:
        middle = (low + high) // 2
        if _ships_free(middle, merchant_id, rule, discount):
            high = middle
        else:
            low = middle + 1
    return low


def ships_free_offer_q(terms: Mapping[int, tuple[ShippingRule, Discount | None]]) -> Q:
    """Offers (of the merchants in ``terms``, ``{merchant_id: (rule, discount)}`` for the
    destination) that ship free on their own."""
    conditions = []
    for merchant_id, (rule, discount) in sorted(terms.items()):
        threshold = free_from_price(merchant_id, rule, discount)
        if threshold == 0:
            conditions.append(Q(merchant_id=merchant_id))
        elif threshold is not None:
            conditions.append(Q(merchant_id=merchant_id, unit_price__gte=threshold))
    return reduce(or_, conditions, Q(pk__in=[]))
