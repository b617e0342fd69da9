"""A bench market for a million carts, written with COPY (PostgreSQL only): ``bench_price_watch
--fast-setup``.

``benchmark.market_create`` writes its rows with ``bulk_create`` (about 2.5 minutes for 100k
carts on the shared 2-core VM): a million carts would take most of an hour. This writes the
same shape of market from NumPy draws: merchants and products as ``market_create`` does,
then offers, carts and lines with one COPY each. The draws differ from ``market_create``'s
(NumPy's generator, not ``random.Random``), so a run of each is not the same market; the
shape is the same: 2 to ``max_offers`` offers a product at distinct merchants (unit price
3.00-90.00 €, unlimited stock), 2 to ``max_lines`` lines a cart on distinct products (a cart
drawing a product twice keeps one line), each line at its product's cheapest offer seven
times in ten, else at a random one of its offers, quantities 1, 1, 1, 2, 3.
"""

import random

import numpy as np
from django.db import connection
from django.utils import timezone

from smartcart.pricewatch.benchmark import DESTINATIONS, PREFIX, Market, _gtin
from storefront.models import Cart, CartLine, Category, Merchant, Offer, Product, ShippingZone


def _copy(model, columns: list[str], rows) -> None:
    quote = connection.ops.quote_name
    names = ", ".join(quote(c) for c in columns)
    with (
        connection.cursor() as cursor,
        cursor.copy(f"COPY {quote(model._meta.db_table)} ({names}) FROM STDIN") as copy,
    ):
        for row in rows:
            copy.write_row(row)


def market_create_copy(
    *, carts: int, products: int, merchants: int, max_lines: int, max_offers: int, seed: int
) -> Market:
    if connection.vendor != "postgresql":
        raise RuntimeError("--fast-setup writes with COPY: PostgreSQL only")
    rng = random.Random(seed)
    draw = np.random.default_rng(seed)
    shops = Merchant.objects.bulk_create(
        [
            Merchant(
                name=f"Bench shop {i}",
                slug=f"{PREFIX}{i}",
                base_fee=rng.choice((0, 299, 399, 499, 599)),
                per_extra_unit=rng.choice((0, 50, 100)),
                free_over=rng.choice((None, 2900, 4900, 9900)),
                discount_min_units=3 if i % 4 == 0 else None,
                discount_basis_points=500 if i % 4 == 0 else None,
            )
            for i in range(merchants)
        ]
    )
    ShippingZone.objects.bulk_create(
        [
            ShippingZone(merchant=shop, postal_prefix=prefix, base_fee=199, per_extra_unit=50)
            for shop in shops[::3]
            for prefix in ("1", "80")
        ]
    )
    category, _ = Category.objects.get_or_create(slug=f"{PREFIX}products", name="Bench products")
    items = Product.objects.bulk_create(
        [
            Product(
                gtin=_gtin(i), name=f"Bench product {i}", slug=f"{PREFIX}{i}", category=category
            )
            for i in range(products)
        ],
        batch_size=5000,
    )
    now = timezone.now()
    shop_ids = np.array([s.pk for s in shops], np.int64)
    product_ids = np.array([p.pk for p in items], np.int64)
    # Offers: the first k of a random order of the merchants, per product.
    k = draw.integers(2, min(max_offers, len(shops)) + 1, size=products)
    order = np.argsort(draw.random((products, len(shops))), axis=1)
    take = np.arange(len(shops))[None, :] < k[:, None]
    o_product = np.repeat(product_ids, k)
    o_merchant = shop_ids[order[take]]
    o_price = draw.integers(300, 9001, size=o_product.size)
    _copy(
        Offer,
        [
            "product_id",
            "merchant_id",
            "merchant_sku",
            "unit_price",
            "active",
            "created_at",
            "updated_at",
        ],
        (
            (int(p), int(m), f"{PREFIX}{int(p)}", int(c), True, now, now)
            for p, m, c in zip(o_product, o_merchant, o_price, strict=True)
        ),
    )
    offers = np.array(
        list(
            Offer.objects.filter(merchant_sku__startswith=PREFIX)
            .order_by("product_id", "id")
            .values_list("id", "product_id", "unit_price")
        ),
        np.int64,
    ).T
    o_id, o_prod, o_cost = offers
    first = np.searchsorted(o_prod, product_ids)
    count = np.searchsorted(o_prod, product_ids, "right") - first
    # Each product's cheapest offer (the first by price, then id).
    by_price = np.lexsort((o_id, o_cost, o_prod))
    cheapest = by_price[np.searchsorted(o_prod[by_price], product_ids)]

    postal = draw.integers(0, len(DESTINATIONS), size=carts)
    _copy(
        Cart,
        ["session_key", "postal_code", "version", "created_at", "updated_at"],
        ((f"{PREFIX}{i}", DESTINATIONS[int(postal[i])], 1, now, now) for i in range(carts)),
    )
    cart_ids = np.array(
        list(
            Cart.objects.filter(session_key__startswith=PREFIX)
            .order_by("id")
            .values_list("id", flat=True)
        ),
        np.int64,
    )
    n_lines = draw.integers(2, max_lines + 1, size=carts)
    l_cart = np.repeat(cart_ids, n_lines)
    l_product = draw.integers(0, products, size=l_cart.size)
    keep = np.unique(l_cart * products + l_product, return_index=True)[1]
    keep.sort()
    l_cart, l_product = l_cart[keep], l_product[keep]
    pick = first[l_product] + (draw.random(l_cart.size) * count[l_product]).astype(np.int64)
    l_offer = np.where(draw.random(l_cart.size) < 0.7, cheapest[l_product], pick)
    l_qty = np.array((1, 1, 1, 2, 3))[draw.integers(0, 5, size=l_cart.size)]
    _copy(
        CartLine,
        [
            "cart_id",
            "product_id",
            "offer_id",
            "quantity",
            "unit_price_snapshot",
            "created_at",
            "updated_at",
        ],
        (
            (int(c), int(product_ids[p]), int(o_id[o]), int(q), int(o_cost[o]), now, now)
            for c, p, o, q in zip(l_cart, l_product, l_offer, l_qty, strict=True)
        ),
    )
    with connection.cursor() as cursor:
        for model in (Merchant, ShippingZone, Product, Offer, Cart, CartLine):
            cursor.execute(f"ANALYZE {model._meta.db_table}")
    return Market(len(shops), len(items), int(o_id.size), int(cart_ids.size), int(l_cart.size))
