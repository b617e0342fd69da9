"""The merchants of a cart's problem: their terms as read with the offers (one row per offer),
resolved for the cart's destination."""

from dataclasses import dataclass

from storefront.catalog.shipping import Discount, ShippingRule, shipping_rule_resolve
from storefront.catalog.shipping_selectors import MerchantTerms


@dataclass
class MerchantRead:
    name: str
    discount: Discount | None
    default: ShippingRule
    zones: dict[str, ShippingRule]


def merchant_read(
    name: str,
    min_units: int | None,
    basis_points: int | None,
    base_fee: int,
    per_extra_unit: int,
    free_over: int | None,
) -> MerchantRead:
    # ``Merchant.discount`` and ``Merchant.default_shipping_rule`` on the columns read (no
    # model instance per row).
    default = ShippingRule(base_fee=base_fee, per_extra_unit=per_extra_unit, free_over=free_over)
    discount = Discount.from_columns(min_units, basis_points)
    return MerchantRead(name=name, discount=discount, default=default, zones={})


def merchant_terms(
    merchants: dict[int, MerchantRead], postal_code: str, v2: frozenset[int] = frozenset()
) -> dict[int, MerchantTerms]:
    """Each merchant's terms for the destination, resolved as ``storefront.selectors.
    merchant_terms_for_destination`` does (longest matching zone prefix, else the defaults,
    through ``storefront.catalog.shipping.shipping_rule_resolve``; the tests hold the two together),
    over the rows read with the offers. A version 2 merchant (``v2``) ships by its
    warehouses' rates: its rule holds only its own free-shipping threshold."""
    return {
        merchant_id: MerchantTerms(
            merchant_id=merchant_id,
            name=merchant.name,
            active=True,
            shipping=ShippingRule(
                base_fee=0, per_extra_unit=0, free_over=merchant.default.free_over
            )
            if merchant_id in v2
            else shipping_rule_resolve(
                default=merchant.default, zones=merchant.zones.values(), postal_code=postal_code
            ),
            discount=merchant.discount,
        )
        for merchant_id, merchant in merchants.items()
    }
