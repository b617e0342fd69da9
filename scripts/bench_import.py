#!/usr/bin/env python
"""Times the offer feed import and the cheapest-offer refresh on a generated catalog.

    createdb -h 127.0.0.1 -U postgres import_bench
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/import_bench \\
        .venv/bin/python scripts/bench_import.py --rows 1000000

Runs, in order, each through ``import_job_run`` (the code the admin's task and the
``import_offers`` command run):

1. fresh: a feed of --rows offers for a merchant that has none (every row is a new offer),
   into a catalog whose stored cheapest offers are all computed (so every product the feed
   touches must be marked for a refresh, as in production);
2. re-run: the same file again (must change nothing);
3. changes: the same feed with --change-rate of the prices moved;

and times ``catalog_cheapest_recompute`` (the refresh an import requests) on its own: first
for the whole catalog, then after runs 1 and 3, since in production it runs on a worker after
the import. The catalog is made to
hold --products generated products first (COPY, not timed); the bench merchant's previous
offers are removed before run 1. Prints a Markdown table (and --json writes the numbers).
"""

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent))

import make_feed


def _reset_merchant(slug: str):
    """The bench merchant without offers, and no stored cheapest offers or pending refreshes."""
    from django.db import connection

    from storefront.models import CheapestOfferRefresh, Merchant, Offer, ProductCheapest

    merchant, _ = Merchant.objects.get_or_create(slug=slug, defaults={"name": "Bench Feed"})
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {quote(Offer._meta.db_table)} WHERE merchant_id = %s", [merchant.pk]
        )
        cursor.execute(f"DELETE FROM {quote(CheapestOfferRefresh._meta.db_table)}")
        cursor.execute(f"DELETE FROM {quote(ProductCheapest._meta.db_table)}")
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            for model in (Offer, CheapestOfferRefresh, ProductCheapest):
                cursor.execute(f"VACUUM ANALYZE {quote(model._meta.db_table)}")
    return merchant


def _changed_rows(rows, *, rate: float, seed: int):
    """The same feed with ``rate`` of the prices moved by a cent or more."""
    import numpy as np

    rng = np.random.default_rng(seed)
    for gtin, sku, price, stock, active in rows:
        if rng.random() < rate:
            major, minor = price.split(".")
            cents = int(major) * 100 + int(minor) + int(rng.integers(1, 500))
            price = f"{cents // 100}.{cents % 100:02d}"
        yield gtin, sku, price, stock, active


def _run(path: Path, merchant, fmt: str, batch_size: int | None) -> dict:
    from django.core.files import File

    from storefront.imports import services

    with path.open("rb") as handle:
        job = services.import_job_create(
            merchant=merchant,
            file=File(handle, name=path.name),
            format=fmt,
            batch_size=batch_size,
            enqueue=False,
        )
    # The refresh is timed on its own below; in production a worker runs it afterwards.
    with mock.patch.object(services, "catalog_cheapest_recompute_request"):
        start = time.perf_counter()
        job = services.import_job_run(job_id=job.pk)
        seconds = time.perf_counter() - start
    if job.status != job.Status.DONE:
        sys.exit(f"import {job.pk} failed: {job.message}")
    return {
        "job": job.pk,
        "rows": job.rows_total,
        "seconds": round(seconds, 2),
        "rows_per_s": round(job.rows_total / seconds),
        "created": job.offers_created,
        "updated": job.offers_updated,
        "unchanged": job.offers_unchanged,
        "superseded": job.offers_superseded,
        "failed": job.rows_failed,
        "phases": job.timings,
    }


def _refresh() -> dict:
    from storefront.catalog.cheapest import catalog_cheapest_recompute

    start = time.perf_counter()
    result = catalog_cheapest_recompute()
    seconds = time.perf_counter() - start
    return {
        "products": result.products,
        "written": result.written,
        "offers": result.offers,
        "seconds": round(seconds, 2),
        "device": result.device,
    }


def _table(results: dict) -> str:
    lines = [
        "| run | rows | seconds | rows/s | created | updated | unchanged | superseded | failed "
        "| phases (s) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name in ("fresh", "rerun", "changes"):
        r = results[name]
        phases = ", ".join(f"{k} {v:.2f}" for k, v in r["phases"].items())
        lines.append(
            f"| {name} | {r['rows']:,} | {r['seconds']:.2f} | {r['rows_per_s']:,} | "
            f"{r['created']:,} | {r['updated']:,} | {r['unchanged']:,} | {r['superseded']:,} | "
            f"{r['failed']:,} | {phases} |"
        )
    lines += ["", "| refresh after | products | written | buyable offers | seconds | device |"]
    lines.append("|---|---:|---:|---:|---:|---|")
    for name in ("refresh_initial", "refresh_fresh", "refresh_changes"):
        r = results[name]
        lines.append(
            f"| {name.removeprefix('refresh_')} | {r['products']:,} | {r['written']:,} | "
            f"{r['offers']:,} | {r['seconds']:.2f} | {r['device']} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--products", type=int, default=None, help="Default: --rows.")
    parser.add_argument("--format", choices=["csv", "jsonl"], default="csv")
    parser.add_argument("--batch-size", type=int, default=None)
    parser.add_argument("--error-rate", type=float, default=0.001)
    parser.add_argument("--change-rate", type=float, default=0.1)
    parser.add_argument("--writers", type=int, default=None, help="OFFER_IMPORT_WRITERS.")
    parser.add_argument("--json", type=Path, help="Also write the numbers here.")
    args = parser.parse_args()
    make_feed.django_setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    from storefront.imports.services import import_batch_size

    if args.writers:
        settings.OFFER_IMPORT_WRITERS = args.writers
    call_command("migrate", verbosity=0)
    products = args.products or args.rows
    print(f"catalog: {make_feed.products_generate(products):,} products added", flush=True)
    merchant = _reset_merchant(make_feed.BENCH_MERCHANT)
    gtins = make_feed.catalog_gtins(generated_only=True)[:products]
    results = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "database": connection.vendor,
        "server": connection.cursor().connection.info.server_version
        if connection.vendor == "postgresql"
        else "",
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "load_before": os.getloadavg(),
        "rows": args.rows,
        "format": args.format,
        "batch_size": args.batch_size or import_batch_size(),
        "writers": getattr(settings, "OFFER_IMPORT_WRITERS", 2),
    }
    with tempfile.TemporaryDirectory() as tmp:
        settings.MEDIA_ROOT = Path(tmp) / "media"
        feed = Path(tmp) / f"feed.{args.format}"
        rows = list(
            make_feed.feed_rows(
                gtins, args.rows, seed=42, error_rate=args.error_rate, sku_prefix="BENCH-"
            )
        )
        make_feed.feed_write(feed, rows, fmt=args.format)
        changed = Path(tmp) / f"changed.{args.format}"
        make_feed.feed_write(changed, _changed_rows(rows, rate=args.change_rate, seed=7),
                             fmt=args.format)  # fmt: skip
        del rows
        print("initial refresh ...", flush=True)
        results["refresh_initial"] = _refresh()
        for name, path in (("fresh", feed), ("rerun", feed)):
            print(f"{name} ...", flush=True)
            results[name] = _run(path, merchant, args.format, args.batch_size)
            if name == "fresh":
                print("refresh ...", flush=True)
                results["refresh_fresh"] = _refresh()
        print("changes ...", flush=True)
        results["changes"] = _run(changed, merchant, args.format, args.batch_size)
        results["refresh_changes"] = _refresh()
    results["load_after"] = os.getloadavg()
    print()
    print(
        f"{results['date']} · {results['database']} {results['server']} · "
        f"{results['cpus']} CPUs · load {results['load_before']} -> {results['load_after']}"
    )
    print(_table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, default=str))


if __name__ == "__main__":
    main()
