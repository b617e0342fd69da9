"""The demo marketplace: a deterministic, realistic catalog generated from a seed.

Everything comes from one ``random.Random(seed)`` consumed in a fixed order, so one seed
always gives the same catalog (``catalog_checksum`` proves it), on any machine and any day.
Rows are written with ``bulk_create`` in one transaction: 2,000 products with ~35,000
offers take seconds on SQLite.
"""

import hashlib
import random
from collections.abc import Iterator
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils.text import slugify

from storefront.catalog.zone_index import zone_index_invalidate
from storefront.demo_images import product_svg
from storefront.models import (
    Cart,
    CartLine,
    Category,
    Merchant,
    Offer,
    Order,
    Product,
    ShippingZone,
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
    shape: str  # a key of storefront.demo_images.SHAPES
    blurb: str  # the description's first sentence


@dataclass(frozen=True)
class Department:
    brands: tuple[str, ...]
    kinds: tuple[Kind, ...]
    variants: tuple[str, ...]
    # Books are named by title; everything else "Brand Kind, Variant".
    name_format: str = "{brand} {noun}, {variant}"
    # Model lines that tell apart products of the same brand, kind and variant.
    series: tuple[str, ...] = ("Plus", "Pro", "Max", "Lite", "II", "S", "X", "Neo", "Air", "One")


K = Kind
CATALOG: dict[str, Department] = {
    "Kitchen": Department(
        ("Culina", "Ferro", "Brava", "Olivia"),
        (
            K("Electric Kettle", 2499, 8999, "kettle", "Boils 1.7 litres in under four minutes "
              "and switches itself off."),
            K("Gooseneck Kettle", 3999, 11999, "kettle", "A slow, precise pour for filter "
              "coffee and green tea, with a thermometer in the lid."),
            K("Stovetop Kettle", 1999, 5999, "kettle", "Whistles when the water boils; works "
              "on gas, electric and induction hobs."),
            K("Toaster", 2499, 7999, "box", "Two wide slots, seven browning levels and a "
              "crumb tray that slides out."),
            K("Cast Iron Skillet", 2499, 7999, "pan", "Pre-seasoned, oven safe and good for "
              "a lifetime of searing."),
            K("Non-Stick Frying Pan", 1999, 6999, "pan", "A ceramic coating that lets eggs "
              "slide off without oil."),
            K("Stand Mixer", 14999, 49999, "box", "A 5 litre bowl, dough hook, whisk and "
              "beater for bread and cakes."),
            K("Kitchen Scale", 1299, 3999, "device", "Weighs up to 5 kg in 1 g steps, with a "
              "tare button."),
        ),
        ("Black", "White", "Silver", "Red", "Cream", "Copper", "24 cm", "28 cm"),
    ),
    "Coffee & Tea": Department(
        ("Roastery No. 5", "Bergkaffee", "Dolce Crema", "Lumen Tea"),
        (
            K("Coffee Beans, 1 kg", 1499, 3499, "bag", "Whole beans roasted in small batches, "
              "notes of chocolate and hazelnut."),
            K("Ground Coffee, 500 g", 699, 1799, "bag", "Medium ground for filter machines and "
              "the French press."),
            K("Espresso Machine", 14999, 59999, "box", "A 15 bar pump and a steam wand for "
              "cappuccino at home."),
            K("Burr Coffee Grinder", 3999, 14999, "bottle", "Forty grind settings from "
              "espresso to cold brew."),
            K("French Press", 1499, 4999, "cup", "Brews four cups of coffee in four minutes; "
              "the glass is heat resistant."),
            K("Green Tea, 100 g", 599, 1999, "bag", "Loose leaf sencha from first harvest "
              "leaves."),
            K("Earl Grey Tea, 50 bags", 399, 1299, "bag", "Black tea with bergamot in "
              "compostable bags."),
            K("Travel Mug", 1299, 3499, "cup", "Keeps drinks hot for six hours and fits car "
              "cup holders."),
        ),
        ("Classic", "Organic", "Decaf", "Black", "Silver", "Green", "Gift Box"),
    ),
    "Audio": Department(
        ("Voltra", "Nexon", "Sonique", "Kestrel"),
        (
            K("Wireless Headphones", 3999, 19999, "headphones", "Over-ear, Bluetooth 5.3 and "
              "40 hours of battery."),
            K("Noise-Cancelling Headphones", 9999, 39999, "headphones", "Active noise "
              "cancelling for trains and open offices."),
            K("Wireless Earbuds", 2999, 17999, "headphones", "In-ear, splash proof, with a "
              "charging case."),
            K("Bluetooth Speaker", 2499, 12999, "speaker", "Room-filling sound, waterproof, "
              "12 hours of play."),
            K("Soundbar", 9999, 39999, "speaker", "Clearer dialogue for the TV over HDMI "
              "ARC."),
            K("Turntable", 12999, 39999, "box", "Belt drive, built-in preamp and a "
              "Bluetooth output."),
        ),
        ("Black", "White", "Navy", "Graphite", "Silver", "Pro", "Mini"),
    ),
    "Electronics": Department(
        ("Voltra", "Ampere", "Lumio", "Nexon"),
        (
            K("USB-C Charger, 65 W", 1999, 5999, "box", "Charges a laptop and a phone at once."),
            K("Power Bank, 20000 mAh", 1999, 5999, "device", "Two full phone charges in your "
              "pocket."),
            K("Wireless Mouse", 999, 5999, "ball", "Silent clicks and a battery that lasts "
              "a year."),
            K("Mechanical Keyboard", 4999, 17999, "device", "Hot-swappable switches and a "
              "detachable cable."),
            K("Webcam, 1080p", 2999, 12999, "device", "Sharp video calls with two "
              "microphones."),
            K("Smart Plug", 999, 2999, "box", "Switch lamps on a schedule from your phone."),
            K("27-inch Monitor", 14999, 44999, "device", "A 1440p IPS panel with USB-C "
              "power delivery."),
        ),
        ("Black", "White", "Graphite", "Silver", "Pro", "Compact"),
    ),
    "Books": Department(
        ("Harbor Press", "Quill & Co", "Northlight Books"),
        (
            K("Weeknight Dinners: A Cookbook", 1499, 3499, "book", "Sixty recipes that take "
              "thirty minutes or less."),
            K("Field Guide to Birds", 1999, 3999, "book", "Every European species, with maps "
              "and songs described."),
            K("Learning Python", 2999, 5999, "book", "Programming from the first line to "
              "working projects."),
            K("World Atlas", 2499, 6999, "book", "Up-to-date maps of every country and "
              "ocean."),
            K("The Lighthouse Mystery", 899, 2299, "book", "A crime novel set on a stormy "
              "island."),
            K("Bedtime Stories Picture Book", 799, 1999, "book", "Ten gentle stories for "
              "ages three to six."),
        ),
        ("Hardcover", "Paperback", "2nd Edition", "Illustrated", "Large Print"),
        name_format="{noun} ({variant})",
        series=("Vol. 2", "Revised", "Pocket Edition", "Anniversary Edition", "Vol. 3"),
    ),
    "Home & Living": Department(
        ("Casa Nova", "Hygge Home", "Linnea"),
        (
            K("Table Lamp", 2499, 8999, "lamp", "Warm light with a linen shade and a dimmer."),
            K("Scented Candle", 799, 2999, "bottle", "Soy wax, cotton wick, 40 hours of "
              "burning."),
            K("Throw Blanket", 1999, 6999, "box", "Soft cotton knit for the sofa."),
            K("Bath Towel", 999, 3499, "box", "Heavy cotton towel that dries quickly."),
            K("Wall Clock", 1499, 4999, "ball", "A silent movement, no ticking at night."),
        ),
        ("Sage", "Charcoal", "Cream", "Grey", "Walnut", "Navy"),
    ),
    "Office": Department(
        ("Scriba", "Deskline", "Papyra"),
        (
            K("Desk Lamp", 1999, 7999, "lamp", "An adjustable arm and a warm to cool LED."),
            K("Notebook, A5 Dotted", 499, 2499, "book", "Thick paper that fountain pens do "
              "not bleed through."),
            K("Gel Pens, 10 Pack", 499, 1499, "tool", "Smooth, quick-drying ink in ten "
              "colours."),
            K("Monitor Stand", 2499, 6999, "box", "Raises the screen to eye level, with a "
              "drawer."),
            K("Office Chair", 9999, 34999, "box", "Lumbar support and adjustable armrests."),
        ),
        ("Black", "Blue", "Grey", "Walnut", "Recycled"),
    ),
    "Sports & Outdoors": Department(
        ("Summit", "Ridgeway", "Pacer", "Aqualine"),
        (
            K("Yoga Mat", 1499, 5999, "box", "Non-slip, 6 mm thick, with a carry strap."),
            K("Insulated Water Bottle, 750 ml", 1499, 3999, "bottle", "Cold for 24 hours, "
              "hot for 12."),
            K("Camping Lantern", 1499, 4999, "lamp", "Rechargeable, three brightness "
              "levels."),
            K("Football", 999, 3999, "ball", "Size 5, machine stitched for grass and "
              "turf."),
            K("Trekking Poles", 2999, 8999, "tool", "Aluminium, adjustable, with cork "
              "grips."),
        ),
        ("Blue", "Black", "Orange", "Green", "Lightweight"),
    ),
    "Garden": Department(
        ("Greenfield", "Terra", "Bloomwell"),
        (
            K("Garden Hose, 25 m", 1999, 5999, "tool", "Kink-free with a seven-pattern "
              "spray gun."),
            K("Pruning Shears", 1299, 4499, "tool", "Bypass blades for clean cuts up to "
              "2 cm."),
            K("Watering Can, 10 l", 999, 2999, "kettle", "A long spout and a fine rose for "
              "seedlings."),
            K("Herb Planter", 1499, 4999, "plant", "Three pots on a windowsill tray."),
            K("Solar Path Lights, 6 Pack", 1999, 4999, "lamp", "Charge by day, glow all "
              "evening."),
        ),
        ("Green", "Grey", "Large", "Compact", "Terracotta"),
    ),
    "Toys & Games": Department(
        ("Playwell", "Brickton", "Nimbus Toys"),
        (
            K("Building Blocks Set", 1999, 9999, "box", "500 pieces that fit every major "
              "brand."),
            K("Board Game", 1999, 5999, "box", "Two to six players, about an hour a game."),
            K("Jigsaw Puzzle, 1000 Pieces", 999, 2999, "box", "A landscape that takes a "
              "weekend."),
            K("Teddy Bear", 999, 3499, "bear", "Soft plush, safe from birth, machine "
              "washable."),
            K("Remote Control Car", 2999, 8999, "box", "Four-wheel drive, 20 km/h, with a "
              "spare battery."),
        ),
        ("Classic", "Deluxe", "Travel Edition", "Junior", "Family"),
    ),
    "Beauty": Department(
        ("Lumea", "Pure Grove", "Solis"),
        (
            K("Electric Toothbrush", 2999, 12999, "bottle", "Two-minute timer and a travel "
              "case."),
            K("Hair Dryer", 2499, 9999, "tool", "2000 W with a cool shot and a diffuser."),
            K("Face Cream, 50 ml", 999, 4999, "bottle", "Light daily moisturiser for every "
              "skin type."),
            K("Shampoo, 300 ml", 499, 1999, "bottle", "Gentle formula for daily washing."),
        ),
        ("Sensitive", "Fragrance Free", "Travel Size", "White", "Mint"),
    ),
    "Tools & DIY": Department(
        ("Forgeline", "Boltmaster", "Tecto"),
        (
            K("Cordless Drill", 4999, 19999, "tool", "18 V, two batteries and a charger."),
            K("Screwdriver Set", 1499, 4999, "tool", "Magnetic tips in a roll-up case."),
            K("Tape Measure, 5 m", 599, 1999, "box", "A locking blade with a belt clip."),
            K("Spirit Level", 999, 3999, "tool", "Three vials, accurate to 0.5 mm per "
              "metre."),
        ),
        ("18 V", "12 V", "Pro", "Compact", "Orange"),
    ),
}  # fmt: skip

MERCHANT_WORDS = (
    ["Blue", "Nordic", "Urban", "Swift", "Bright", "Harbor", "Maple", "Cedar", "Silver",
     "Golden", "Metro", "Prime", "Alpine", "Coastal", "Rapid", "Green", "Sunny", "Royal"],
    ["Market", "Store", "Supply", "Depot", "Outlet", "Trading", "Goods", "Emporium", "Shop",
     "Bazaar", "Warehouse", "Direct"],
)  # fmt: skip

# (prefix, name): German postal regions, so the demo destination 10115 (Berlin) matters.
ZONES = [
    ("1", "Berlin and Brandenburg"),
    ("10", "Berlin centre"),
    ("2", "North"),
    ("18", "Baltic coast and islands"),
    ("25", "North Sea islands"),
    ("8", "Bavaria south"),
    ("0", "Saxony"),
    ("5", "Rhineland"),
]


@dataclass(frozen=True)
class SeedResult:
    categories: int
    merchants: int
    zones: int
    products: int
    offers: int
    checksum: str


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
        )
        yield product, base_price


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
    Offer.objects.bulk_create(offer_rows, batch_size=1000)
    return SeedResult(
        categories=len(categories),
        merchants=len(merchant_rows),
        zones=len(zone_rows),
        products=len(product_rows),
        offers=len(offer_rows),
        checksum=catalog_checksum(),
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
            "gtin", "name", "slug", "brand", "category__slug", "description", "image_svg"
        )
    )
    feed(
        Offer.objects.order_by("product__gtin", "merchant__slug").values_list(
            "product__gtin", "merchant__slug", "merchant_sku", "unit_price", "stock", "active"
        )
    )
    return digest.hexdigest()
