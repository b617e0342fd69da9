"""Shipping reads: a merchant's terms and shipping rule for a destination, one at a time or
batched over many (merchant, destination) pairs."""

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from storefront.catalog.shipping import (
    Discount,
    ShippingRule,
    postal_prefix_candidates,
    shipping_rule_resolve,
)
from storefront.models import Merchant, ShippingZone


@dataclass(frozen=True, slots=True)
class MerchantTerms:
    """What the pricing contract needs of one merchant for one destination."""

    merchant_id: int
    name: str
    active: bool
    shipping: ShippingRule
    discount: Discount | None


def merchant_terms_for_destination(
    *, merchant_ids: Iterable[int], postal_code: str | None
) -> dict[int, MerchantTerms]:
    """Shipping rule (longest matching zone, else defaults) and discount of many merchants.

    Two queries whatever the number of merchants: the merchants, then only the zones whose
    prefix matches the destination (an ``IN`` over its at most 11 prefixes; not read when none
    of the ids exists). Unknown ids are left out of the result.
    """
    ids = set(merchant_ids)
    if not ids:
        return {}
    merchants = Merchant.objects.filter(pk__in=ids).only(
        "id",
        "name",
        "active",
        "base_fee",
        "per_extra_unit",
        "free_over",
        "discount_min_units",
        "discount_basis_points",
    )
    by_id = {merchant.pk: merchant for merchant in merchants}
    rules = _shipping_rules_via_sql(
        pairs=[(merchant_id, postal_code) for merchant_id in by_id], merchants=by_id
    )
    return {
        merchant_id: merchant_terms_build(merchant, rules[(merchant_id, postal_code)])
        for merchant_id, merchant in by_id.items()
    }


def shipping_rules_for_destination(
    *, merchant_ids: Iterable[int], postal_code: str | None
) -> dict[int, ShippingRule]:
    """``{merchant_id: ShippingRule}`` for one destination, in two queries (see above)."""
    terms = merchant_terms_for_destination(merchant_ids=merchant_ids, postal_code=postal_code)
    return {merchant_id: term.shipping for merchant_id, term in terms.items()}


def shipping_rule_for_destination(*, merchant: Merchant, postal_code: str | None) -> ShippingRule:
    """One merchant's rule for a destination (one query, for the zones)."""
    pair = (merchant.pk, postal_code)
    return _shipping_rules_via_sql(pairs=[pair], merchants={merchant.pk: merchant})[pair]


def shipping_rules_for_destinations(
    *, pairs: Sequence[tuple[int, str | None]]
) -> list[ShippingRule | None]:
    """The rule of each (merchant id, postal code), in order, e.g. every merchant of every
    open cart when pricing many carts: the same rules as ``shipping_rules_for_destination``
    (longest matching zone, ``""`` matches everywhere, else the merchant's defaults; inactive
    merchants resolved too), ``None`` where it would leave the merchant out (unknown id).

    One batched longest-prefix match over the per-process zone index
    (``storefront.catalog.zone_index``); no query while the index is fresh, two when it is rebuilt.
    """
    from storefront.caching.cache import CacheUnavailable
    from storefront.catalog.zone_index import zone_index_current

    try:
        return zone_index_current().resolve(pairs=pairs)
    except CacheUnavailable:
        # The index's freshness stamp lives in the shared cache: without it an index may be
        # stale, so every pair is left to the exact SQL resolution (a query, never a 500).
        return [None] * len(pairs)


MerchantDestination = tuple[int, str | None]


def shipping_rules_for_pairs(
    *, pairs: Iterable[MerchantDestination], merchants: Mapping[int, Merchant]
) -> dict[MerchantDestination, ShippingRule]:
    """The rule of each distinct (merchant id, postal code) in one batched index match.

    A merchant the index does not know (created in this still open transaction, or written
    without signals and without ``zone_index_invalidate``) is resolved in SQL from its row in
    ``merchants`` and its zones: one query more, the same rule.
    """
    pairs = list(dict.fromkeys(pairs))
    if not pairs:
        return {}
    found = dict(zip(pairs, shipping_rules_for_destinations(pairs=pairs), strict=True))
    rules = {pair: rule for pair, rule in found.items() if rule is not None}
    unknown = [pair for pair, rule in found.items() if rule is None]
    if unknown:
        rules.update(_shipping_rules_via_sql(pairs=unknown, merchants=merchants))
    return rules


def _shipping_rules_via_sql(
    *, pairs: Sequence[MerchantDestination], merchants: Mapping[int, Merchant]
) -> dict[MerchantDestination, ShippingRule]:
    """The rule of each (merchant id, postal code) from ``merchants``' rows and the zones that
    can match any of the codes, read in one query (none for no pairs)."""
    if not pairs:
        return {}
    candidates = {prefix for _, code in pairs for prefix in postal_prefix_candidates(code)}
    zones: dict[int, list[ShippingRule]] = defaultdict(list)
    for zone in ShippingZone.objects.filter(
        merchant_id__in={merchant_id for merchant_id, _ in pairs}, postal_prefix__in=candidates
    ).only("merchant_id", "postal_prefix", "base_fee", "per_extra_unit", "free_over"):
        zones[zone.merchant_id].append(zone.shipping_rule())
    return {
        (merchant_id, code): shipping_rule_resolve(
            default=merchants[merchant_id].default_shipping_rule(),
            zones=zones.get(merchant_id, ()),
            postal_code=code,
        )
        for merchant_id, code in pairs
    }


def merchant_terms_build(merchant: Merchant, shipping: ShippingRule) -> MerchantTerms:
    return MerchantTerms(
        merchant_id=merchant.pk,
        name=merchant.name,
        active=merchant.active,
        shipping=shipping,
        discount=merchant.discount,
    )


def merchant_terms_for_merchants(
    *, merchants: Iterable[Merchant], postal_code: str | None
) -> dict[int, MerchantTerms]:
    """``merchant_terms_for_destination`` for merchants already read (e.g. with a product's
    offers): the same terms, with the shipping rules from the zone index in one batched match,
    so no query while the index is fresh (that selector reads merchants and zones: two)."""
    by_id = {merchant.pk: merchant for merchant in merchants}
    rules = shipping_rules_for_pairs(
        pairs=[(merchant_id, postal_code) for merchant_id in by_id], merchants=by_id
    )
    return {
        merchant_id: merchant_terms_build(merchant, rules[(merchant_id, postal_code)])
        for merchant_id, merchant in by_id.items()
    }
