"""The demo's fulfillment (pricing contract version 2): two merchants ship from two or three
warehouses with parcel rates by weight, and a cart where a merchant's warehouses decide.

Drawn after the rest of the catalog, from a random generator of its own, so the merchants,
products and offers of a seed stay what they were; only the two merchants' offers change:
their stock is split over their warehouses (the offer's stock stays the total, unlimited stays
unlimited) and they sell the *split cart*'s two products cheapest.

The split cart (``demo_split_cart``): the heaviest product (a monitor, as a rule) and one of
about 1.5 kg (a kettle). The first merchant has the heavy one only in Munich and the other
only in Hamburg, so buying both from it ships two parcels; the second merchant sells both a
little dearer from one warehouse (Berlin), one parcel. Priced per warehouse, the second
merchant's single parcel is cheaper; priced as if each merchant shipped one parcel (version 1),
the first merchant looks cheaper.

The demo's merchant login stays with a merchant without warehouses (``demo_staff_merchant``),
so its past orders do not depend on warehouses.
"""

import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from storefront.models import (
    Merchant,
    Offer,
    ParcelRate,
    Product,
    ShippingZone,
    Warehouse,
    WarehouseStock,
)
from storefront.models import WeightTier as Tier

# A kettle's weight: the light product of the split cart is the one closest to it, among
# those that cost at least this elsewhere.
_LIGHT_TARGET_G = 1500
_LIGHT_MIN_PRICE = 2000
# How much the two merchants undercut the cheapest other offer of the split cart's products,
# and how much dearer the second merchant is than the first.
_UNDERCUT = 0.9
_SECOND_DEARER = (150, 100)
# Where the split cart's products are (first merchant), and the second merchant's warehouse.
_HEAVY_AT, _LIGHT_AT, _SECOND_AT = "Munich", "Hamburg", "Berlin"
_SPLIT_STOCK = 6


@dataclass(frozen=True)
class SplitCart:
    """The demo cart where warehouses decide: ``heavy`` and ``light`` products; ``split`` has
    them at two warehouses, ``joined`` both at one."""

    heavy: Product
    light: Product
    split: Merchant
    joined: Merchant


def _price_9(cents: float) -> int:
    return max(99, round(cents / 10.0) * 10 - 1)


def demo_staff_merchant_pick(merchants: Sequence[Merchant], offers: Sequence[Offer]) -> int | None:
    """The merchant the demo's merchant login works for (``demo_merchant_staff_ensure``'s
    rule, on rows in memory): the first active merchant by name that sells something buyable
    with unlimited stock."""
    active = {merchant.pk for merchant in merchants if merchant.active}
    selling = {
        offer.merchant_id
        for offer in offers
        if offer.active and offer.stock is None and offer.merchant_id in active
    }
    for merchant in sorted(merchants, key=lambda m: (m.name, m.pk)):
        if merchant.pk in selling:
            return merchant.pk
    return None


def _split_products(
    products: Sequence[Product], cheapest_elsewhere: dict[int, int]
) -> tuple[Product, Product] | None:
    """The heaviest product, and the one closest to a kettle's weight that costs at least
    ``_LIGHT_MIN_PRICE`` elsewhere (so undercutting it outweighs a parcel), among products
    other merchants sell (``cheapest_elsewhere``: their cheapest price)."""
    sold = [p for p in products if p.pk in cheapest_elsewhere]
    if len(sold) < 2:
        return None
    heavy = max(sold, key=lambda p: (p.weight_g, p.gtin))
    light = min(
        (p for p in sold if p.pk != heavy.pk),
        key=lambda p: (
            cheapest_elsewhere[p.pk] < _LIGHT_MIN_PRICE,
            abs(p.weight_g - _LIGHT_TARGET_G),
            p.gtin,
        ),
    )
    return heavy, light


def _cheapest_elsewhere(offers: Iterable[Offer], chosen: Sequence[Merchant]) -> dict[int, int]:
    excluded = {merchant.pk for merchant in chosen}
    found: dict[int, int] = {}
    for offer in offers:
        if offer.merchant_id not in excluded:
            price = found.get(offer.product_id)
            found[offer.product_id] = (
                offer.unit_price if price is None else min(price, offer.unit_price)
            )
    return found


def fulfillment_seed(
    *,
    seed: int,
    data: Sequence[dict[str, Any]],
    merchants: Sequence[Merchant],
    products: Sequence[Product],
    offers: list[Offer],
) -> tuple[list[Warehouse], Sequence[Merchant]]:
    """Picks the merchants that ship from warehouses (the active ones with most offers, never
    the demo login's), gives them ``data``'s warehouses and rates, and rewrites ``offers`` in
    memory (before they are written): the split cart's offers, and each offer's stock split
    over warehouses (``fulfillment_stock_seed`` writes the rows once offers have ids)."""
    staff = demo_staff_merchant_pick(merchants, offers)
    counts = Counter(offer.merchant_id for offer in offers)
    chosen = sorted(
        (m for m in merchants if m.active and m.pk != staff),
        key=lambda m: (-counts[m.pk], m.slug),
    )[: len(data)]
    warehouses: list[Warehouse] = []
    rates: list[tuple[ParcelRate, list[list[int]]]] = []
    for merchant, spec in zip(chosen, data, strict=False):
        _terms_set(merchant, spec["terms"])
        for place in spec["warehouses"]:
            warehouse = Warehouse(
                merchant=merchant,
                name=place["name"],
                postal_code=place["postal_code"],
                city=place["city"],
            )
            warehouses.append(warehouse)
            for rate in place["rates"]:
                rates.append(
                    (
                        ParcelRate(
                            warehouse=warehouse,
                            postal_prefix=rate["prefix"],
                            base_fee=rate["base_fee"],
                            per_extra_unit=rate["per_extra_unit"],
                            per_kg_over=rate["per_kg_over"],
                        ),
                        rate["tiers"],
                    )
                )
    Warehouse.objects.bulk_create(warehouses)
    ParcelRate.objects.bulk_create([rate for rate, _ in rates])
    Tier.objects.bulk_create(
        [Tier(rate=rate, up_to_g=up_to, fee=fee) for rate, tiers in rates for up_to, fee in tiers]
    )
    if len(chosen) == 2:
        _split_cart_offers(chosen, products, offers)
    return warehouses, chosen


def _terms_set(merchant: Merchant, terms: dict[str, Any]) -> None:
    """A merchant with warehouses ships by its parcel rates: its own shipping (what version 1
    would charge) matches its everywhere rate, it has no zones, and its threshold is above the
    split cart (which would otherwise ship free whatever the parcels)."""
    for name, value in terms.items():
        setattr(merchant, name, value)
    merchant.discount_min_units = merchant.discount_basis_points = None
    Merchant.objects.filter(pk=merchant.pk).update(
        **terms, discount_min_units=None, discount_basis_points=None
    )
    ShippingZone.objects.filter(merchant=merchant).delete()


def _split_cart_offers(
    chosen: Sequence[Merchant], products: Sequence[Product], offers: list[Offer]
) -> None:
    picked = _split_products(products, _cheapest_elsewhere(offers, chosen))
    if picked is None:
        return
    for product, dearer in zip(picked, _SECOND_DEARER, strict=True):
        others = [
            o.unit_price
            for o in offers
            if o.product_id == product.pk and o.merchant_id not in {m.pk for m in chosen}
        ]
        cheapest = min(others, default=2999)
        # Undercut, but stay within half the dearest offer (offers of a product stay in 2x).
        price = max(_price_9(cheapest * _UNDERCUT), _price_9(max(others, default=0) / 2 + 10))
        for merchant, extra in zip(chosen, (0, dearer), strict=True):
            offer = next(
                (o for o in offers if o.product_id == product.pk and o.merchant_id == merchant.pk),
                None,
            )
            if offer is None:
                offer = Offer(
                    product_id=product.pk,
                    merchant_id=merchant.pk,
                    merchant_sku=f"{merchant.slug[:4].upper()}-{product.gtin}",
                )
                offers.append(offer)
            offer.unit_price, offer.stock, offer.active = price + extra, _SPLIT_STOCK, True


def fulfillment_stock_seed(
    *,
    seed: int,
    warehouses: Sequence[Warehouse],
    chosen: Sequence[Merchant],
    products: Sequence[Product],
    offers: Sequence[Offer],
) -> int:
    """Writes the stock rows of the chosen merchants' offers (which have ids now): each offer
    at one to all of its merchant's warehouses, its stock split there (``None`` stays
    unlimited at the first), the split cart's offers where the module says. Returns the rows."""
    rng = random.Random(f"fulfillment-{seed}")
    places = {m.pk: [w for w in warehouses if w.merchant_id == m.pk] for m in chosen}
    picked = (
        _split_products(products, _cheapest_elsewhere(offers, chosen)) if len(chosen) == 2 else None
    )
    split_cart = {p.pk for p in picked} if picked else set()
    rows: list[WarehouseStock] = []
    for offer in sorted(offers, key=lambda o: o.pk):
        if offer.merchant_id not in places:
            continue
        here = places[offer.merchant_id]
        if offer.product_id in split_cart:
            rows.append(_split_cart_row(offer, here, chosen, picked))
            continue
        at = rng.sample(here, rng.randint(1, len(here)))
        parts = _split(rng, offer.stock, len(at))
        rows += [
            WarehouseStock(offer=offer, warehouse=w, stock=s)
            for w, s in zip(at, parts, strict=True)
        ]
    WarehouseStock.objects.bulk_create(rows, batch_size=1000)
    return len(rows)


def _split_cart_row(offer, here, chosen, picked) -> WarehouseStock:
    heavy = picked[0]
    if offer.merchant_id == chosen[0].pk:
        name = _HEAVY_AT if offer.product_id == heavy.pk else _LIGHT_AT
    else:
        name = _SECOND_AT
    warehouse = next(w for w in here if w.name == name)
    return WarehouseStock(offer=offer, warehouse=warehouse, stock=offer.stock)


def _split(rng: random.Random, stock: int | None, parts: int) -> list[int | None]:
    """``stock`` over ``parts`` warehouses, adding up to it; unlimited stays unlimited at the
    first, with finite stock elsewhere."""
    if stock is None:
        return [None, *(rng.randint(0, 20) for _ in range(parts - 1))]
    cuts = sorted(rng.randint(0, stock) for _ in range(parts - 1))
    bounds = [0, *cuts, stock]
    return [bounds[i + 1] - bounds[i] for i in range(parts)]


def demo_split_cart() -> SplitCart | None:
    """The seeded split cart (see the module), read back from the database."""
    first = Merchant.objects.filter(warehouses__name=_HEAVY_AT).order_by("pk").first()
    second = Merchant.objects.filter(warehouses__name=_SECOND_AT).order_by("pk").first()
    if first is None or second is None:
        return None
    products = list(Product.objects.only("pk", "gtin", "weight_g", "name", "slug"))
    offers = Offer.objects.only("product_id", "merchant_id", "unit_price")
    picked = _split_products(products, _cheapest_elsewhere(offers, [first, second]))
    if picked is None:
        return None
    return SplitCart(heavy=picked[0], light=picked[1], split=first, joined=second)
