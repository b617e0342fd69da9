"""The warehouse a new cart line of a version 2 merchant ships from: the one the engine's
pricing finds cheapest delivered with the merchant's other lines in the cart (a second parcel
or a heavier one both count), the warehouse its other lines ship from on a tie, else the
lowest id."""

from django.utils.text import capfirst

from storefront.carts.fulfillment import cart_nodes_read, short_of_stock_note
from storefront.carts.pricing import PricedLine, Shipment, shipments_price
from storefront.catalog.shipping import ShippingRule
from storefront.errors import Conflict
from storefront.models import Cart, CartLine, Offer


def cart_line_warehouse_pick(*, cart: Cart, offer: Offer, quantity: int) -> int | None:
    """The warehouse for ``quantity`` of ``offer`` in ``cart`` (the cart's line of the same
    product, if any, is left out of the merchant's other lines); ``None`` for a version 1
    merchant.

    The caller read ``offer`` with its merchant and product, annotated ``_v2``
    (``storefront.carts.fulfillment.merchant_has_warehouse``): four queries for a version 2
    merchant (its other lines, nodes, rates and stock), none for a version 1 merchant; ``Conflict``
    (``insufficient_stock``) when no warehouse of the merchant that ships to the cart's
    destination has the quantity.
    """
    merchant = offer.merchant
    if not getattr(offer, "_v2", None):
        return None
    others = list(
        CartLine.objects.filter(cart_id=cart.pk, offer__merchant_id=merchant.pk)
        .exclude(product_id=offer.product_id)
        .values_list(
            "pk", "offer_id", "quantity", "warehouse_id", "offer__unit_price", "product__weight_g"
        )
    )
    nodes = cart_nodes_read(
        merchant_ids=[merchant.pk],
        offer_ids=[offer.pk, *(row[1] for row in others)],
        postal_code=cart.postal_code,
    )
    eligible = nodes.eligible(merchant_id=merchant.pk, offer_id=offer.pk, quantity=quantity)
    if not eligible:
        note = short_of_stock_note(
            merchant_name=merchant.name,
            most=nodes.ships_at_most(merchant_id=merchant.pk, offer_id=offer.pk),
            from_warehouses=True,
            total=offer.stock,
        )
        raise Conflict(
            f"{capfirst(note)}; you asked for {quantity}.",
            code="insufficient_stock",
            field="quantity",
        )
    placed = []
    for pk, offer_id, units, warehouse_id, price, weight in others:
        node = nodes.line_node(
            merchant_id=merchant.pk, offer_id=offer_id, quantity=units, warehouse_id=warehouse_id
        )
        if node is not None:
            placed.append(PricedLine(pk, units, price, weight, node.warehouse_id))
    used = {line.warehouse_id for line in placed}
    by_id = {node.warehouse_id: node for node in nodes.nodes[merchant.pk]}
    rule = ShippingRule(base_fee=0, per_extra_unit=0, free_over=merchant.free_over)

    def cost(warehouse_id: int) -> tuple[int, bool, int]:
        # The new line's id only has to differ from the others' (it is never stored).
        new = PricedLine(0, quantity, offer.unit_price, offer.product.weight_g, warehouse_id)
        shipment = Shipment(
            merchant_id=merchant.pk,
            shipping=rule,
            discount=merchant.discount,
            lines=(*placed, new),
            nodes=by_id,
        )
        return (
            shipments_price([shipment])[merchant.pk].cost,
            warehouse_id not in used,
            warehouse_id,
        )

    return min((node.warehouse_id for node in eligible), key=cost)
