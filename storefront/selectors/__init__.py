"""Reads of the marketplace, one module per concern: ``catalog`` (products, offers,
categories, merchants), ``shipping`` (terms and rules for a destination), ``carts`` and
``pricing`` (the cart's pricing summary).

Every selector runs a bounded number of queries whatever the size of its result (no N+1);
the tests pin the counts. The public names are re-exported here, so
``from storefront.selectors import X`` keeps working; patch a name in the module that
defines it.
"""

from storefront.selectors.carts import cart_find, cart_get, cart_line_list
from storefront.selectors.catalog import (
    PRODUCT_ORDERINGS,
    category_list,
    merchant_get,
    merchant_list,
    offer_buyable_q,
    offer_get,
    price_range_get,
    product_cheapest_offer,
    product_get,
    product_list,
    product_match_list,
    product_offer_list,
    product_offers_read,
    product_ships_free_q,
    product_with_best_price_list,
)
from storefront.selectors.pricing import (
    CartPricingSummary,
    LinePricing,
    MerchantGroup,
    cart_pricing_summaries,
    cart_pricing_summary,
    cart_pricing_summary_via_sql,
    line_unavailable_reason,
)
from storefront.selectors.shipping import (
    MerchantDestination,
    MerchantTerms,
    merchant_terms_build,
    merchant_terms_for_destination,
    merchant_terms_for_merchants,
    shipping_rule_for_destination,
    shipping_rules_for_destination,
    shipping_rules_for_destinations,
    shipping_rules_for_pairs,
)

__all__ = [
    "PRODUCT_ORDERINGS",
    "CartPricingSummary",
    "LinePricing",
    "MerchantDestination",
    "MerchantGroup",
    "MerchantTerms",
    "cart_find",
    "cart_get",
    "cart_line_list",
    "cart_pricing_summaries",
    "cart_pricing_summary",
    "cart_pricing_summary_via_sql",
    "category_list",
    "line_unavailable_reason",
    "merchant_get",
    "merchant_list",
    "merchant_terms_build",
    "merchant_terms_for_destination",
    "merchant_terms_for_merchants",
    "offer_buyable_q",
    "offer_get",
    "price_range_get",
    "product_cheapest_offer",
    "product_get",
    "product_list",
    "product_match_list",
    "product_offer_list",
    "product_offers_read",
    "product_ships_free_q",
    "product_with_best_price_list",
    "shipping_rule_for_destination",
    "shipping_rules_for_destination",
    "shipping_rules_for_destinations",
    "shipping_rules_for_pairs",
]
