"""One merchant's share of a cart, priced exactly as ``shared/spec/cart-pricing.md`` says.

Pure integer arithmetic, no database. The storefront uses it to show the cart as it is;
the solvers in ``gpu_engine`` implement the same formula for their search, and the
tests hold both to the contract's examples.
"""

from dataclasses import dataclass

from storefront.shipping import Discount, ShippingRule

BASIS_POINTS_DENOMINATOR = 10_000


@dataclass(frozen=True, slots=True)
class MerchantCost:
    subtotal: int
    units: int
    discount: int
    goods: int
    shipping: int
    cost: int
    # Goods still to add for free shipping: None when the merchant never ships free,
    # 0 when shipping already costs nothing.
    missing_for_free_shipping: int | None


def merchant_cost(
    *, subtotal: int, units: int, shipping: ShippingRule, discount: Discount | None
) -> MerchantCost:
    """Prices the lines one merchant ships: ``subtotal`` is sum(quantity * price), ``units``
    sum(quantity). A merchant that ships nothing (``units == 0``) costs 0."""
    if subtotal < 0 or units < 0:
        raise ValueError(f"subtotal and units must be non-negative, got {subtotal}, {units}")
    if units == 0:
        return MerchantCost(0, 0, 0, 0, 0, 0, None if shipping.free_over is None else 0)
    reduction = 0
    if discount is not None and units >= discount.min_units:
        reduction = subtotal * discount.basis_points // BASIS_POINTS_DENOMINATOR
    goods = subtotal - reduction
    free = shipping.free_over is not None and goods >= shipping.free_over
    fee = 0 if free else shipping.base_fee + shipping.per_extra_unit * (units - 1)
    if shipping.free_over is None:
        missing = None
    elif fee == 0:
        missing = 0
    else:
        missing = shipping.free_over - goods
    return MerchantCost(
        subtotal=subtotal,
        units=units,
        discount=reduction,
        goods=goods,
        shipping=fee,
        cost=goods + fee,
        missing_for_free_shipping=missing,
    )
