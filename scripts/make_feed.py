#!/usr/bin/env python
"""Writes an offer feed (CSV or JSON Lines) for the catalog in the database.

    python scripts/make_feed.py feed.csv --rows 1000000 --generate-products 1000000
    python scripts/make_feed.py feed.jsonl --rows 5000          # the demo catalog (seed_demo)

``--generate-products N`` first makes sure the catalog holds N generated products (category
``bench``, GTIN-13s starting with 2, the GS1 in-store range, so they never clash with the demo
catalog's), inserted with PostgreSQL COPY (or bulk_create elsewhere). The feed then gives each
product at most one active SKU (later rows of the same product are inactive history, as a
merchant switching SKUs would send), a price with two decimals, unlimited stock for about a
third, and optionally ``--error-rate`` of broken rows (bad check digit, negative price,
malformed stock, unknown GTIN) so the error path is measured too. Deterministic per --seed.
Settings come from the environment like manage.py (DATABASE_URL selects PostgreSQL).
"""

import argparse
import csv
import json
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BENCH_CATEGORY = "bench"
BENCH_MERCHANT = "bench-feed"


def django_setup() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "storefront.config.settings.base")
    # A benchmark never serves requests; a throwaway key keeps the settings' guard quiet.
    os.environ.setdefault("SECRET_KEY", "benchmark-only-not-a-secret")
    import django

    django.setup()


def gtin13(payloads: np.ndarray) -> np.ndarray:
    """GTIN-13 strings for 12-digit integer payloads (check digit by the GS1 rule)."""
    digits = (payloads[:, None] // 10 ** np.arange(11, -1, -1)) % 10
    weights = np.where(np.arange(12) % 2 == 0, 1, 3)
    check = (10 - (digits * weights).sum(axis=1) % 10) % 10
    return np.char.add(np.char.zfill(payloads.astype(str), 12), check.astype(str))


def products_generate(count: int) -> int:
    """Makes the catalog hold ``count`` generated products; returns how many were added."""
    from django.db import connection, transaction
    from django.utils import timezone

    from storefront.models import Category, Product

    category, _ = Category.objects.get_or_create(
        slug=BENCH_CATEGORY, defaults={"name": "Benchmark products"}
    )
    have = Product.objects.filter(category=category).count()
    if have >= count:
        return 0
    gtins = gtin13(np.arange(have, count, dtype=np.int64) + 200_000_000_000)
    now = timezone.now()
    if connection.vendor != "postgresql":
        Product.objects.bulk_create(
            [
                Product(gtin=g, name=f"Bench product {g}", slug=f"bench-{g}", category=category)
                for g in gtins.tolist()
            ],
            batch_size=2000,
        )
        return len(gtins)
    table = connection.ops.quote_name(Product._meta.db_table)
    columns = "gtin, name, slug, category_id, description, created_at, updated_at, "
    columns += "buyable_offer_count"
    with transaction.atomic(), connection.cursor() as cursor:
        with cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
            for gtin in gtins.tolist():
                copy.write_row(
                    (gtin, f"Bench product {gtin}", f"bench-{gtin}", category.pk, "", now, now, 0)
                )
        cursor.execute(f"ANALYZE {table}")
    return len(gtins)


def feed_rows(gtins: list[str], rows: int, *, seed: int, error_rate: float, sku_prefix: str):
    """Yields (gtin, sku, price, stock, active) text tuples."""
    rng = np.random.default_rng(seed)
    product = np.arange(rows) % len(gtins)
    first_of_product = np.arange(rows) < len(gtins)
    cents = rng.integers(100, 100_000, size=rows)
    stock = np.where(rng.random(rows) < 0.33, -1, rng.integers(0, 500, size=rows))
    active = first_of_product & (rng.random(rows) < 0.97)
    broken = rng.random(rows) < error_rate
    kinds = rng.integers(0, 4, size=rows)
    # A well-formed GTIN (valid check digit) that no catalog product has.
    unknown = str(gtin13(np.array([299_999_999_999]))[0])
    for i in range(rows):
        gtin = gtins[product[i]]
        price = f"{cents[i] // 100}.{cents[i] % 100:02d}"
        stock_text = "" if stock[i] < 0 else str(stock[i])
        if broken[i]:
            if kinds[i] == 0:
                gtin = gtin[:-1] + str((int(gtin[-1]) + 1) % 10)
            elif kinds[i] == 1:
                price = "-" + price
            elif kinds[i] == 2:
                stock_text = "lots"
            else:
                gtin = unknown
        yield gtin, f"{sku_prefix}{i:08d}", price, stock_text, "true" if active[i] else "false"


def feed_write(path: Path, rows, *, fmt: str) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        if fmt == "csv":
            writer = csv.writer(handle)
            writer.writerow(["gtin", "merchant_sku", "price", "stock", "active"])
            writer.writerows(rows)
            return
        for gtin, sku, price, stock, active in rows:
            record = {"gtin": gtin, "merchant_sku": sku, "price": price, "active": active}
            if stock:
                record["stock"] = int(stock) if stock.isdigit() else stock
            handle.write(json.dumps(record) + "\n")


def catalog_gtins(*, generated_only: bool) -> list[str]:
    from storefront.models import Product

    products = Product.objects.order_by("id")
    if generated_only:
        products = products.filter(category__slug=BENCH_CATEGORY)
    return list(products.values_list("gtin", flat=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--format", choices=["csv", "jsonl"], default=None)
    parser.add_argument("--generate-products", type=int, default=0, metavar="N")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--error-rate", type=float, default=0.0)
    parser.add_argument("--sku-prefix", default="SKU-")
    args = parser.parse_args()
    django_setup()
    if args.generate_products:
        added = products_generate(args.generate_products)
        print(f"catalog: {added:,} generated products added")
    gtins = catalog_gtins(generated_only=bool(args.generate_products))
    if not gtins:
        sys.exit("The catalog is empty: run manage.py seed_demo or pass --generate-products.")
    fmt = args.format or ("jsonl" if args.out.suffix in (".jsonl", ".ndjson") else "csv")
    rows = feed_rows(
        gtins, args.rows, seed=args.seed, error_rate=args.error_rate, sku_prefix=args.sku_prefix
    )
    feed_write(args.out, rows, fmt=fmt)
    print(f"{args.out}: {args.rows:,} rows ({fmt}) over {len(gtins):,} products")


if __name__ == "__main__":
    main()
