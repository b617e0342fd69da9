"""The demo marketplace: a deterministic, realistic catalog generated from a seed.

What it draws from (departments, brands, kinds of product, merchant names, shipping zones)
is data, in ``catalog.json`` beside this module.

Everything comes from one ``random.Random(seed)`` consumed in a fixed order, so one seed
always gives the same catalog (``catalog_checksum`` proves it), on any machine and any day.
Rows are written with ``bulk_create`` in one transaction: 2,000 products with ~35,000
offers take seconds on SQLite.
"""

import hashlib
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils.text import slugify

from storefront.catalog.zone_index import zone_index_invalidate
from storefront.demo.fulfillment import fulfillment_seed, fulfillment_stock_seed
from storefront.demo.images import product_svg
from storefront.models import (
    Cart,
    CartLine,
    Category,
    Merchant,
    Offer,
    Order,
    ParcelRate,
    Product,
    ShippingZone,
    Warehouse,
    WarehouseStock,
    WeightTier,
)
from storefront.validators import gtin_check_digit

DEMO_SHOPPER = ("demo", "demo-shopper-pass")
DEMO_ADMIN = ("admin", "demo-admin-pass")
DEMO_DESTINATION = "10115"
MIN_OFFERS, MAX_OFFERS = 5, 30


@dataclass(frozen=True)
class Kind:
    """A kind of product a shopper would search for, and how the demo draws it."""

    noun: str
    low: int  # base price range, cents
    high: int
    shape: str  # a key of storefront.demo.images.SHAPES
    blurb: str  # the description's first sentence
    weight_g: int = 0  # grams per unit, from catalog.json's "weights_g"


@dataclass(frozen=True)
class Department:
    brands: tuple[str, ...]
    kinds: tuple[Kind, ...]
    variants: tuple[str, ...]
    # Books are named by title; everything else "Brand Kind, Variant".
    name_format: str = "{brand} {noun}, {variant}"
    # Model lines that tell apart products of the same brand, kind and variant.
    series: tuple[str, ...] = ("Plus", "Pro", "Max", "Lite", "II", "S", "X", "Neo", "Air", "One")


def _department(entry: dict[str, Any], weights: dict[str, int]) -> Department:
    defaults_replaced: dict[str, Any] = {}
    if "name_format" in entry:
        defaults_replaced["name_format"] = entry["name_format"]
    if "series" in entry:
        defaults_replaced["series"] = tuple(entry["series"])
    return Department(
        tuple(entry["brands"]),
        tuple(
            Kind(noun, low, high, shape, blurb, weight_g=weights[noun])
            for noun, low, high, shape, blurb in entry["kinds"]
        ),
        tuple(entry["variants"]),
        **defaults_replaced,
    )


def _catalog_load() -> tuple[
    dict[str, Department], tuple[list[str], ...], list[tuple[str, str]], list[dict[str, Any]]
]:
    """The departments, merchant name words, shipping zones and warehouses of
    ``catalog.json``. A kind is ``[noun, low, high, shape, blurb]`` (its weight in
    ``weights_g``); a department leaves out ``name_format`` and ``series`` where it uses the
    defaults; ``fulfillment`` lists the warehouses and rates of the merchants that have them."""
    data = json.loads((Path(__file__).with_name("catalog.json")).read_text(encoding="utf-8"))
    weights = data["weights_g"]
    catalog = {name: _department(entry, weights) for name, entry in data["departments"].items()}
    words = tuple(list(group) for group in data["merchant_words"])
    # (prefix, name): German postal regions, so the demo destination 10115 (Berlin) matters.
    zones = [(prefix, name) for prefix, name in data["zones"]]
    return catalog, words, zones, data["fulfillment"]


CATALOG, MERCHANT_WORDS, ZONES, FULFILLMENT = _catalog_load()


@dataclass(frozen=True)
class SeedResult:
    categories: int
    merchants: int
    zones: int
    products: int
    offers: int
    checksum: str
    warehouses: int = 0


def catalog_is_empty() -> bool:
    return not (Product.objects.exists() or Merchant.objects.exists() or Category.objects.exists())


def catalog_counts() -> dict[str, int]:
    return {
        "categories": Category.objects.count(),
        "merchants": Merchant.objects.count(),
        "products": Product.objects.count(),
        "offers": Offer.objects.count(),
    }


def catalog_reset() -> None:
    """Deletes orders, carts and the whole catalog, children first (packages protect
    merchants, cart lines protect offers)."""
    Order.objects.all().delete()
    CartLine.objects.all().delete()
    Cart.objects.all().delete()
    for model in (Offer, ShippingZone, Product, Category, Merchant):
        model.objects.all().delete()


def _price_9(cents: float) -> int:
    """Shop-style prices: rounded to 10 cents, ending in 9 (1234.6 -> 1239)."""
    return max(99, round(cents / 10.0) * 10 - 1)


def _gtin13(rng: random.Random, used: set[str]) -> str:
    while True:
        # 400-440: GS1 Germany prefixes, then a company and item reference.
        payload = f"{rng.randint(400, 440)}{rng.randrange(10**9):09d}"
        gtin = payload + str(gtin_check_digit(payload))
        if gtin not in used:
            used.add(gtin)
            return gtin


def _merchants(rng: random.Random, count: int) -> list[Merchant]:
    first_words, second_words = MERCHANT_WORDS
    names = [f"{first} {second}" for first in first_words for second in second_words]
    rng.shuffle(names)
    merchants = []
    for index in range(count):
        # Past the word combinations, number them so any --merchants count works.
        name = names[index] if index < len(names) else f"{names[index % len(names)]} {index}"
        style = rng.choice(["flat", "flat_free_over", "per_unit", "per_unit_free_over", "free"])
        base_fee = 0 if style == "free" else rng.choice([299, 349, 399, 449, 495, 549, 599, 690])
        per_extra = rng.choice([50, 75, 100, 150, 200]) if style.startswith("per_unit") else 0
        free_over = rng.choice([2500, 3900, 4900, 5000, 7500]) if "free_over" in style else None
        has_discount = rng.random() < 0.3
        merchants.append(
            Merchant(
                name=name,
                slug=slugify(name),
                active=rng.random() > 0.03,
                base_fee=base_fee,
                per_extra_unit=per_extra,
                free_over=free_over,
                discount_min_units=rng.choice([2, 3, 4, 5]) if has_discount else None,
                discount_basis_points=rng.choice([300, 500, 750, 1000, 1500])
                if has_discount
                else None,
            )
        )
    return merchants


def _zones(rng: random.Random, merchants: list[Merchant]) -> list[ShippingZone]:
    zones = []
    for merchant in merchants:
        if rng.random() >= 0.35:
            continue
        for prefix, name in rng.sample(ZONES, rng.randint(1, 3)):
            islands = prefix in ("18", "25")
            base = (
                merchant.base_fee + rng.choice([300, 500, 800])
                if islands
                else rng.choice([0, 199, 249, 299])
            )
            zones.append(
                ShippingZone(
                    merchant=merchant,
                    postal_prefix=prefix,
                    name=name,
                    base_fee=base,
                    per_extra_unit=merchant.per_extra_unit,
                    free_over=None if islands else merchant.free_over,
                )
            )
    return zones


def _unique_name(
    department: Department, kind: Kind, brand: str, variant: str, used: set[str]
) -> str:
    """ "Brand Kind, Variant", or with a model line ("Brand Kind Pro, Variant") when taken."""
    nouns = [kind.noun, *(f"{kind.noun.split(',')[0]} {s}" for s in department.series)]
    for number, noun in enumerate(nouns * 100):
        if number >= len(nouns):
            noun = f"{noun} {number // len(nouns) + 1}"
        name = department.name_format.format(brand=brand, noun=noun, variant=variant)
        if name not in used:
            used.add(name)
            return name
    raise ValueError("More products than model names; add series to the department.")


def _products(
    rng: random.Random, count: int, categories: dict[str, Category]
) -> Iterator[tuple[Product, int]]:
    """Yields each product with its base price (cents) from which offers spread."""
    used_gtins: set[str] = set()
    used_names: set[str] = set()
    category_names = list(CATALOG)
    for _ in range(count):
        category_name = rng.choice(category_names)
        department = CATALOG[category_name]
        kind = rng.choice(department.kinds)
        brand = rng.choice(department.brands)
        variant = rng.choice(department.variants)
        name = _unique_name(department, kind, brand, variant, used_names)
        gtin = _gtin13(rng, used_gtins)
        base_price = rng.randint(kind.low, kind.high)
        description = f"{kind.blurb} {variant} {kind.noun.split(',')[0].lower()} by {brand}."
        product = Product(
            gtin=gtin,
            name=name,
            slug=f"{slugify(name)}-{gtin}",
            brand=brand,
            category=categories[category_name],
            description=description,
            image_svg=product_svg(
                shape=kind.shape, category=category_name, variant=variant, label=name
            ),
            weight_g=_weight(kind, gtin),
        )
        yield product, base_price


def _weight(kind: Kind, gtin: str) -> int:
    """The kind's weight give or take 5%, from the GTIN (the seed's random draws stay as they
    were before products had weights), in 10 g steps."""
    spread = int(gtin[-4:-1]) % 11 - 5  # -5 .. +5 percent
    return max(10, round(kind.weight_g * (100 + spread) / 1000) * 10)


def _stock(rng: random.Random) -> int | None:
    roll = rng.random()
    if roll < 0.25:
        return None
    if roll < 0.30:
        return 0
    if roll < 0.42:
        return rng.randint(1, 3)
    return rng.randint(5, 250)


def _offers(
    rng: random.Random,
    product: Product,
    base_price: int,
    merchants: list[Merchant],
    price_levels: list[float],
) -> list[dict]:
    """Offer fields without ``product_id``: products get their ids only once written."""
    count = rng.randint(min(MIN_OFFERS, len(merchants)), min(MAX_OFFERS, len(merchants)))
    offers = []
    for index in sorted(rng.sample(range(len(merchants)), count)):
        merchant = merchants[index]
        factor = price_levels[index] * (1 + rng.gauss(0, 0.05))
        if rng.random() < 0.05:
            factor *= rng.uniform(1.2, 1.5)  # the odd overpriced listing
        factor = min(max(factor, 0.82), 1.6)
        offers.append(
            {
                "merchant_id": merchant.pk,
                "merchant_sku": f"{merchant.slug[:4].upper()}-{product.gtin}",
                "unit_price": _price_9(base_price * factor),
                "stock": _stock(rng),
                "active": rng.random() > 0.03,
            }
        )
    return offers


@transaction.atomic
def catalog_seed(*, seed: int, merchants: int, products: int) -> SeedResult:
    """Writes the demo catalog for ``seed`` into an empty catalog; returns counts and checksum."""
    rng = random.Random(seed)
    categories = {
        name: Category(name=name, slug=slugify(name.replace("&", "and"))) for name in CATALOG
    }
    Category.objects.bulk_create(categories.values())
    merchant_rows = _merchants(rng, merchants)
    Merchant.objects.bulk_create(merchant_rows)
    zone_rows = _zones(rng, merchant_rows)
    ShippingZone.objects.bulk_create(zone_rows)
    # bulk_create sends no signals: tell every process's zone index itself.
    transaction.on_commit(zone_index_invalidate)
    # Some merchants are discounters, some premium: their prices lean the same way.
    price_levels = [rng.uniform(0.9, 1.12) for _ in merchant_rows]
    product_rows: list[Product] = []
    offer_specs: list[list[dict]] = []
    for product, base_price in _products(rng, products, categories):
        product_rows.append(product)
        offer_specs.append(_offers(rng, product, base_price, merchant_rows, price_levels))
    Product.objects.bulk_create(product_rows, batch_size=500)
    # Plain ids, not model instances, keep 35,000 offers cheap to build.
    offer_rows = [
        Offer(product_id=product.pk, **spec)
        for product, specs in zip(product_rows, offer_specs, strict=True)
        for spec in specs
    ]
    warehouses, shipping_from_warehouses = fulfillment_seed(
        seed=seed,
        data=FULFILLMENT,
        merchants=merchant_rows,
        products=product_rows,
        offers=offer_rows,
    )
    Offer.objects.bulk_create(offer_rows, batch_size=1000)
    fulfillment_stock_seed(
        seed=seed,
        warehouses=warehouses,
        chosen=shipping_from_warehouses,
        products=product_rows,
        offers=offer_rows,
    )
    return SeedResult(
        categories=len(categories),
        merchants=len(merchant_rows),
        zones=len(zone_rows),
        products=len(product_rows),
        offers=len(offer_rows),
        checksum=catalog_checksum(),
        warehouses=len(warehouses),
    )


def demo_accounts_ensure() -> None:
    """The demo shopper (with an empty cart shipping to Berlin) and the demo superuser.

    Idempotent: existing accounts get their demo passwords and roles back.
    """
    user_model = get_user_model()
    shopper, _ = user_model.objects.get_or_create(username=DEMO_SHOPPER[0])
    shopper.set_password(DEMO_SHOPPER[1])
    # An address, so that the password-reset flow can be tried on the demo (the console
    # backend prints the mail in DEBUG).
    shopper.email = "demo@example.com"
    shopper.is_staff = shopper.is_superuser = False
    shopper.save()
    admin, _ = user_model.objects.get_or_create(username=DEMO_ADMIN[0])
    admin.set_password(DEMO_ADMIN[1])
    admin.email = "admin@example.com"
    admin.is_staff = admin.is_superuser = True
    admin.save()
    cart = Cart.objects.filter(owner=shopper).first()
    if cart is None:
        Cart.objects.create(owner=shopper, postal_code=DEMO_DESTINATION)


def catalog_checksum() -> str:
    """SHA-256 over every catalog row that a seed determines (ids and timestamps excluded),
    in a stable order: equal checksums mean equal catalogs."""
    digest = hashlib.sha256()

    def feed(rows) -> None:
        for row in rows:
            digest.update(repr(tuple(row)).encode())
            digest.update(b"\n")

    feed(Category.objects.order_by("slug").values_list("slug", "name"))
    merchant_fields = [
        "slug",
        "name",
        "active",
        "base_fee",
        "per_extra_unit",
        "free_over",
        "discount_min_units",
        "discount_basis_points",
    ]
    feed(Merchant.objects.order_by("slug").values_list(*merchant_fields))
    feed(
        ShippingZone.objects.order_by("merchant__slug", "postal_prefix").values_list(
            "merchant__slug", "postal_prefix", "name", "base_fee", "per_extra_unit", "free_over"
        )
    )
    feed(
        Product.objects.order_by("gtin").values_list(
            "gtin",
            "name",
            "slug",
            "brand",
            "category__slug",
            "description",
            "image_svg",
            "weight_g",
        )
    )
    feed(
        Warehouse.objects.order_by("merchant__slug", "name").values_list(
            "merchant__slug", "name", "postal_code", "city", "active"
        )
    )
    feed(
        ParcelRate.objects.order_by(
            "warehouse__merchant__slug", "warehouse__name", "postal_prefix"
        ).values_list(
            "warehouse__merchant__slug",
            "warehouse__name",
            "postal_prefix",
            "base_fee",
            "per_extra_unit",
            "per_kg_over",
        )
    )
    feed(
        WeightTier.objects.order_by(
            "rate__warehouse__merchant__slug",
            "rate__warehouse__name",
            "rate__postal_prefix",
            "up_to_g",
        ).values_list("rate__warehouse__name", "rate__postal_prefix", "up_to_g", "fee")
    )
    feed(
        WarehouseStock.objects.order_by(
            "offer__merchant__slug", "offer__merchant_sku", "warehouse__name"
        ).values_list("offer__merchant__slug", "offer__merchant_sku", "warehouse__name", "stock")
    )
    feed(
        Offer.objects.order_by("product__gtin", "merchant__slug").values_list(
            "product__gtin", "merchant__slug", "merchant_sku", "unit_price", "stock", "active"
        )
    )
    return digest.hexdigest()
