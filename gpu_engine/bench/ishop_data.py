"""The public ISHOP-U instances (AASantiago/ISHOP-U-Instances) as cart problems.

An ISHOP-U instance is a CSV file of five ``#``-headed sections: the product and store counts;
each product's quantity to buy; each store's delivery price; and two store x product matrices,
unit prices (0.0 where the store does not sell the product) and units in stock. Money is in
dollars with two decimals.

The conversion (the engine's version 1 format): one line per product, one merchant per store
with ``base_fee`` its delivery price in cents, ``per_extra_unit`` 0, no ``free_over`` and no
discount; an offer wherever the store has the product in stock, at its unit price in cents with
that stock. ISHOP-U may split a product's units over stores; a cart line is bought whole from
one offer, eligible only where the stock covers the quantity. So each line's quantity is capped
at the largest stock of its product, which keeps at least that store's offer eligible on every
line (:func:`convert` checks it).

``python -m gpu_engine.bench.ishop_data GIT_DIR`` rewrites ``data/ishop_u/`` from a clone of the
source repository (read with ``git show``: a bare clone is enough).
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).parent / "data" / "ishop_u"
SOURCE_REPO = "AASantiago/ISHOP-U-Instances"
FAMILIES = ("Gaussian", "Uniform")
SIZES = {"S": "Small", "M": "Medium", "L": "Large"}
# The 30 instances: GaussianS1 .. UniformL5, by family, then size, then number.
NAMES = tuple(f"{family}{size}{k}" for family in FAMILIES for size in SIZES for k in range(1, 6))


def source_path(name: str) -> str:
    """The instance's path in the source repository, e.g. ``Gaussian/Small/GaussianS1.csv``."""
    family, size = name[:-2], name[-2]
    return f"{family}/{SIZES[size]}/{name}.csv"


def _cents(text: str) -> int:
    cents = Decimal(text) * 100
    if cents != cents.to_integral_value():
        raise ValueError(f"{text!r} is not a whole number of cents")
    return int(cents)


def parse_csv(text: str) -> dict[str, Any]:
    """The instance's sections: ``quantity`` per product, ``fee`` per store (cents), and
    ``price`` (cents) and ``stock`` as store x product lists."""
    sections: list[list[list[str]]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            sections.append([])
        else:
            sections[-1].append(line.rstrip(",").split(","))
    if len(sections) != 5:
        raise ValueError(f"expected 5 sections, found {len(sections)}")
    sizes, quantities, fees, prices, stocks = sections
    n_products, n_stores = (int(v) for v in sizes[0])
    quantity = [int(q) for _, q in sorted((int(p), q) for p, q in quantities)]
    fee = [_cents(f) for _, f in sorted((int(s), f) for s, f in fees)]
    price = [[_cents(v) for v in row] for row in prices]
    stock = [[int(v) for v in row] for row in stocks]
    if len(quantity) != n_products or len(fee) != n_stores:
        raise ValueError("product or store count disagrees with the header")
    for matrix in (price, stock):
        if len(matrix) != n_stores or any(len(row) != n_products for row in matrix):
            raise ValueError("a matrix is not stores x products")
    return {"quantity": quantity, "fee": fee, "price": price, "stock": stock}


def convert(instance: dict[str, Any]) -> dict[str, Any]:
    """The cart problem (spec version 1 JSON dict) of a parsed instance (see the module
    docstring). Raises ValueError where a store sells a product out of stock or in stock at
    no price, or a product no store has."""
    quantity, fee, price, stock = (instance[k] for k in ("quantity", "fee", "price", "stock"))
    n_stores, n_products = len(fee), len(quantity)
    items: list[dict[str, Any]] = []
    offers: list[dict[str, Any]] = []
    for p in range(n_products):
        sold = [s for s in range(n_stores) if stock[s][p] > 0]
        if [s for s in range(n_stores) if price[s][p] > 0] != sold:
            raise ValueError(f"product {p}: prices and stock disagree on who sells it")
        if not sold:
            raise ValueError(f"product {p}: no store has it")
        item_id = f"p{p:02d}"
        # The cap: the largest store's offer is eligible (stock >= quantity) on every line.
        items.append({"id": item_id, "quantity": min(quantity[p], max(stock[s][p] for s in sold))})
        offers.extend(
            {"item": item_id, "merchant": f"s{s:03d}", "price": price[s][p], "stock": stock[s][p]}
            for s in sold
        )
    merchants = [
        {"id": f"s{s:03d}", "shipping": {"base_fee": fee[s], "per_extra_unit": 0}}
        for s in range(n_stores)
    ]
    return {"items": items, "merchants": merchants, "offers": offers}


def load(name: str) -> dict[str, Any]:
    """The converted instance ``name`` (e.g. ``"UniformM3"``) from ``data/ishop_u/``."""
    with gzip.open(DATA_DIR / f"{name}.json.gz", "rt", encoding="utf-8") as f:
        return json.load(f)


def write_all(git_dir: str) -> list[Path]:
    """Convert the 30 instances at the clone's HEAD into ``data/ishop_u/``."""
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    written = []
    for name in NAMES:
        text = subprocess.run(
            ["git", "--git-dir", git_dir, "show", f"HEAD:{source_path(name)}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        path = DATA_DIR / f"{name}.json.gz"
        body = json.dumps(convert(parse_csv(text)), separators=(",", ":")).encode()
        # mtime=0: the same instance always gives the same bytes.
        with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
            f.write(body)
        written.append(path)
    return written


if __name__ == "__main__":
    for written_path in write_all(sys.argv[1]):
        print(written_path)
