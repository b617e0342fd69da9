"""Fuzz carts: spec-format (version 1) carts at the extremes of every pricing rule, deterministic
by ``(seed, index)``.

The bench families (:mod:`gpu_engine.bench.family_carts`) draw realistic carts: ``sku-NNN``
ids, one unlimited offer a line, prices of a few euros. These go where they do not: discounts
of 0, 1, 9999 and 10000 basis points, thresholds of 0 and 1 cent or one cent either side of a
subset's goods, per-unit fees above the base fee, offers one cent apart, merchants that sell
nothing, stock one unit short, money per merchant in HiGHS's shaky 1e6..1e9 cents and up to the
service's int64 limit (and, rarely, one step past it, where the engine must refuse cleanly),
quantities up to 1e9, odd ids. A cart's size class decides how it is checked: ``small`` carts
by brute force, ``medium`` ones by the exact routes agreeing, ``large`` ones only by the
checks that need no optimum (see :mod:`gpu_engine.fuzz.judge`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Cart = dict[str, Any]

# The service's limit (gpu_engine.problem.MONEY_LIMIT), restated: the fuzzer sizes carts against
# it on purpose, so it must not move when the engine's constant does.
MONEY_LIMIT = 2**62
INT64_MAX = 2**63 - 1


@dataclass(frozen=True)
class FuzzCart:
    """One cart of a run: ``key`` names it in reports (``seed:index``, or a file's path)."""

    key: str
    shape: str
    text: str
    cart: Cart | None  # None when the text is not JSON this process can read


def _merchant(rng: random.Random, mid: str, scale: int) -> dict[str, Any]:
    base = rng.choice([0, 1, scale // 10, scale, 3 * scale, rng.randint(0, 2 * scale)])
    per = rng.choice([0, 0, 1, base + 1, 2 * base + scale // 5, rng.randint(0, scale)])
    free_over = rng.choice(
        [None, None, 0, 1, scale, 3 * scale + rng.choice([-1, 0, 1]), rng.randint(0, 8 * scale)]
    )
    discount = None
    if rng.random() < 0.6:
        discount = {
            "min_units": rng.choice([1, 1, 2, 3, rng.randint(1, 8)]),
            "basis_points": rng.choice([0, 1, 5000, 9999, 10000, 10000, rng.randint(0, 10000)]),
        }
    return {
        "id": mid,
        "shipping": {"base_fee": base, "per_extra_unit": per, "free_over": free_over},
        "discount": discount,
    }


def _ids(rng: random.Random, prefix: str, count: int) -> list[str]:
    """Usually plain ids; sometimes odd ones the storefront never makes (unicode, spaces, long,
    names shared between items and merchants)."""
    style = rng.random()
    if style < 0.7:
        return [f"{prefix}{k}" for k in range(count)]
    if style < 0.85:
        return [f"{prefix} ü-{k}/✓" for k in range(count)]
    if style < 0.95:
        return [f"{k:x}" + "x" * rng.randint(0, 200) for k in range(count)]
    return [str(k) for k in range(count)]  # items and merchants both "0", "1", ...


def _quantity(rng: random.Random, big: bool) -> int:
    if big:
        return rng.choice([1, 10**3, 10**6, 10**9, rng.randint(1, 10**9)])
    return rng.choice([1, 1, 1, 2, 3, rng.randint(1, 12)])


def _stock(rng: random.Random, quantity: int) -> int | None:
    return rng.choice([None, None, 0, quantity - 1, quantity, quantity + 1])


def _build(
    rng: random.Random,
    n_lines: int,
    n_merchants: int,
    *,
    scale: int,
    offers_per_line: tuple[int, int],
    big_quantities: bool = False,
    tie_prices: bool = False,
) -> Cart:
    """A cart with every merchant drawn from the extremes; each line keeps at least one
    eligible offer (not always the first, not always unlimited)."""
    item_ids = _ids(rng, "i", n_lines)
    merchant_ids = _ids(rng, "m", n_merchants)
    merchants = [_merchant(rng, mid, scale) for mid in merchant_ids]
    items, offers = [], []
    for item_id in item_ids:
        quantity = _quantity(rng, big_quantities)
        items.append({"id": item_id, "quantity": quantity})
        count = min(n_merchants, rng.randint(*offers_per_line))
        chosen = rng.sample(merchant_ids, count)
        keeper = rng.randrange(count)
        list_price = rng.choice([0, 1, scale, rng.randint(0, 2 * scale)])
        for k, mid in enumerate(chosen):
            if tie_prices:
                price = max(0, list_price + rng.choice([0, 0, 1, -1]))
            else:
                price = rng.choice([list_price, list_price + 1, rng.randint(0, 2 * scale)])
            stock = rng.choice([None, quantity]) if k == keeper else _stock(rng, quantity)
            offers.append({"item": item_id, "merchant": mid, "price": price, "stock": stock})
    if rng.random() < 0.5:
        rng.shuffle(offers)
    return {"items": items, "merchants": merchants, "offers": offers}


def _thresholds_at_subsets(rng: random.Random, cart: Cart) -> None:
    """Move some thresholds to one cent either side of the goods (after discount) of a random
    subset of a merchant's lines: where a solver's threshold test off by one shows."""
    quantity = {item["id"]: item["quantity"] for item in cart["items"]}
    lines: dict[str, list[int]] = {}
    for offer in cart["offers"]:
        lines.setdefault(offer["merchant"], []).append(quantity[offer["item"]] * offer["price"])
    for merchant in cart["merchants"]:
        amounts = lines.get(merchant["id"])
        if not amounts or rng.random() < 0.3:
            continue
        subset = rng.sample(amounts, rng.randint(1, len(amounts)))
        goods = sum(subset)
        rule = merchant["discount"]
        if rule is not None and rng.random() < 0.5:
            goods -= goods * rule["basis_points"] // 10_000
        merchant["shipping"]["free_over"] = max(0, goods + rng.choice([-1, 0, 1]))


def engine_money_bound(cart: Cart) -> int:
    """The worst-case total the engine checks against :data:`MONEY_LIMIT` (the rule of
    ``gpu_engine.problem._check_money_bounds``, from the spec-format cart)."""
    quantity = {item["id"]: item["quantity"] for item in cart["items"]}
    dearest: dict[str, int] = {}
    for offer in cart["offers"]:
        stock, q = offer.get("stock"), quantity[offer["item"]]
        if stock is None or stock >= q:
            dearest[offer["item"]] = max(dearest.get(offer["item"], 0), offer["price"])
    units = sum(quantity.values())
    goods = sum(q * dearest.get(i, 0) for i, q in quantity.items())
    base = max((m["shipping"]["base_fee"] for m in cart["merchants"]), default=0)
    extra = max((m["shipping"]["per_extra_unit"] for m in cart["merchants"]), default=0)
    return goods + len(quantity) * base + extra * units + units


def _scale_money(cart: Cart, factor: int) -> None:
    for offer in cart["offers"]:
        offer["price"] *= factor
    for merchant in cart["merchants"]:
        shipping = merchant["shipping"]
        shipping["base_fee"] *= factor
        shipping["per_extra_unit"] *= factor
        if shipping["free_over"] is not None:  # the engine reads it as an int64
            shipping["free_over"] = min(INT64_MAX, shipping["free_over"] * factor)


def _to_limit(rng: random.Random, cart: Cart, *, over: bool) -> None:
    """Scale every amount so that :func:`engine_money_bound` lands just under the limit (or,
    with ``over``, at or past it)."""
    units = sum(item["quantity"] for item in cart["items"])
    linear = engine_money_bound(cart) - units
    if linear <= 0:
        for offer in cart["offers"]:
            offer["price"] = max(offer["price"], 1)
        linear = engine_money_bound(cart) - units
    if linear <= 0:
        return  # no amount that scales (no offer counts towards the bound): left as it is
    room = MONEY_LIMIT - 1 - units - rng.randint(0, 1000)
    factor = -(-(MONEY_LIMIT - units) // linear) if over else room // linear
    _scale_money(cart, max(1, factor))


# --- shapes: rng -> cart ---------------------------------------------------------------------


def _scale(rng: random.Random) -> int:
    return rng.choice([1, 10, 100, 1000, 10_000])


def extremes(rng: random.Random) -> Cart:
    """Small carts, every merchant rule drawn from its extremes."""
    return _build(
        rng, rng.randint(1, 7), rng.randint(1, 6), scale=_scale(rng), offers_per_line=(1, 5)
    )


def ties(rng: random.Random) -> Cart:
    """Merchants one cent apart: equal shipping up to a cent, prices equal or a cent off."""
    cart = _build(
        rng,
        rng.randint(2, 7),
        rng.randint(2, 5),
        scale=_scale(rng),
        offers_per_line=(2, 5),
        tie_prices=True,
    )
    first = cart["merchants"][0]
    for merchant in cart["merchants"][1:]:
        merchant["shipping"] = {
            key: None if value is None else max(0, value + rng.choice([0, 0, 1, -1]))
            for key, value in first["shipping"].items()
        }
        merchant["discount"] = first["discount"] if rng.random() < 0.7 else merchant["discount"]
    return cart


def zero_money(rng: random.Random) -> Cart:
    """Plateaus: zero prices or fees, thresholds of 0, 100% discounts (totals of 0 abound)."""
    cart = _build(
        rng,
        rng.randint(1, 7),
        rng.randint(1, 5),
        scale=rng.choice([0, 1, 100]),
        offers_per_line=(1, 5),
    )
    for merchant in cart["merchants"]:
        if rng.random() < 0.5:
            merchant["discount"] = {"min_units": rng.randint(1, 3), "basis_points": 10_000}
    return cart


def threshold_edges(rng: random.Random) -> Cart:
    """Thresholds a cent either side of what some of a merchant's lines reach."""
    cart = _build(
        rng, rng.randint(2, 7), rng.randint(1, 5), scale=_scale(rng), offers_per_line=(1, 5)
    )
    _thresholds_at_subsets(rng, cart)
    return cart


def per_unit_heavy(rng: random.Random) -> Cart:
    """Per-unit fees far above the base fee: splitting a merchant's units pays."""
    cart = _build(
        rng, rng.randint(2, 7), rng.randint(2, 5), scale=_scale(rng), offers_per_line=(2, 5)
    )
    for merchant in cart["merchants"]:
        shipping = merchant["shipping"]
        shipping["per_extra_unit"] = shipping["base_fee"] * rng.randint(2, 50) + rng.randint(1, 999)
    return cart


def highs_band(rng: random.Random) -> Cart:
    """Money per merchant row of about 1e6..1e9 cents, where HiGHS's tolerances bite."""
    scale = int(10 ** rng.uniform(4.5, 8.0))
    cart = _build(rng, rng.randint(2, 8), rng.randint(2, 6), scale=scale, offers_per_line=(1, 5))
    _thresholds_at_subsets(rng, cart)
    return cart


def _wide_amount(rng: random.Random) -> int:
    """An amount anywhere from a cent to about 1e7, often a round one give or take a little."""
    round_ = rng.choice([1, 2.5, 3.75, 6.25, 7.75]) * 10 ** rng.randint(0, 6)
    return max(0, int(round_) + rng.choice([0, 0, 1, -1, 250, -250]))


def mixed_magnitudes(rng: random.Random) -> Cart:
    """Cents next to millions in one cart (fees, prices, thresholds each on its own scale),
    quantities up to 50: rows whose coefficients span seven decades, under HiGHS's cap."""
    cart = _build(rng, rng.randint(3, 9), rng.randint(3, 6), scale=1000, offers_per_line=(2, 4))
    for merchant in cart["merchants"]:
        shipping = merchant["shipping"]
        shipping["base_fee"] = _wide_amount(rng)
        shipping["per_extra_unit"] = _wide_amount(rng)
        shipping["free_over"] = rng.choice([None, _wide_amount(rng), 2 * _wide_amount(rng)])
    quantity = {}
    for item in cart["items"]:
        item["quantity"] = quantity[item["id"]] = rng.choice([1, 1, 2, 7, 50])
    for offer in cart["offers"]:
        offer["price"] = _wide_amount(rng)
        if offer["stock"] is not None:
            offer["stock"] = _stock(rng, quantity[offer["item"]])
    for item in cart["items"]:  # the stock redrawn, one offer a line must stay eligible
        offers = [o for o in cart["offers"] if o["item"] == item["id"]]
        rng.choice(offers)["stock"] = None
    if rng.random() < 0.5:
        _thresholds_at_subsets(rng, cart)
    return cart


def huge_quantity(rng: random.Random) -> Cart:
    """Up to 1e9 units a line, stock at, one under or one over the quantity."""
    return _build(
        rng,
        rng.randint(1, 6),
        rng.randint(1, 5),
        scale=rng.choice([1, 10, 1000]),
        offers_per_line=(1, 4),
        big_quantities=True,
    )


def near_limit(rng: random.Random) -> Cart:
    """Amounts scaled up to the service's int64 limit; one in ten just past it (refused)."""
    cart = _build(
        rng, rng.randint(1, 6), rng.randint(1, 4), scale=_scale(rng), offers_per_line=(1, 4)
    )
    _to_limit(rng, cart, over=rng.random() < 0.1)
    if rng.random() < 0.5:
        _thresholds_at_subsets(rng, cart)
    return cart


def single_offer(rng: random.Random) -> Cart:
    """One eligible offer a line (the others short of stock): one assignment, many lines."""
    cart = _build(
        rng, rng.randint(1, 30), rng.randint(1, 8), scale=_scale(rng), offers_per_line=(1, 1)
    )
    quantity = {item["id"]: item["quantity"] for item in cart["items"]}
    for item in cart["items"]:
        if rng.random() < 0.5:
            mid = rng.choice(cart["merchants"])["id"]
            if all((o["item"], o["merchant"]) != (item["id"], mid) for o in cart["offers"]):
                short = rng.choice([0, quantity[item["id"]] - 1])
                cart["offers"].append(
                    {"item": item["id"], "merchant": mid, "price": 0, "stock": short}
                )
    return cart


def many_merchants(rng: random.Random) -> Cart:
    """Few lines, up to 200 merchants (most selling nothing or a line or two)."""
    return _build(
        rng, rng.randint(1, 5), rng.randint(20, 200), scale=_scale(rng), offers_per_line=(1, 6)
    )


def twin_lines(rng: random.Random) -> Cart:
    """The same line several times over (identical offers): symmetric optima."""
    cart = _build(rng, 1, rng.randint(2, 5), scale=_scale(rng), offers_per_line=(2, 5))
    item, offers = cart["items"][0], list(cart["offers"])
    for k in range(1, rng.randint(2, 7)):
        twin = f"{item['id']}#{k}"
        cart["items"].append({"id": twin, "quantity": item["quantity"]})
        cart["offers"] += [dict(o, item=twin) for o in offers]
    return cart


def medium(rng: random.Random) -> Cart:
    """9-15 lines: brute force where it reaches, else the exact routes' agreement."""
    cart = _build(
        rng, rng.randint(9, 15), rng.randint(3, 10), scale=_scale(rng), offers_per_line=(1, 4)
    )
    if rng.random() < 0.5:
        _thresholds_at_subsets(rng, cart)
    if rng.random() < 0.2:
        _scale_money(cart, rng.choice([10**3, 10**5]))
    return cart


def sparse_wide(rng: random.Random) -> Cart:
    """17-40 lines, most with one eligible offer and at most 14 with two or three: too many
    assignments to brute-force, few enough free lines for the exact routes to decide."""
    scale = _scale(rng)
    cart = _build(rng, rng.randint(17, 40), rng.randint(3, 12), scale=scale, offers_per_line=(1, 1))
    merchant_ids = [m["id"] for m in cart["merchants"]]
    for item in rng.sample(cart["items"], min(len(cart["items"]), rng.randint(4, 14))):
        taken = {o["merchant"] for o in cart["offers"] if o["item"] == item["id"]}
        others = [mid for mid in merchant_ids if mid not in taken]
        for mid in rng.sample(others, min(len(others), rng.randint(1, 2))):
            price = rng.choice([0, scale, scale + 1, rng.randint(0, 2 * scale)])
            cart["offers"].append(
                {"item": item["id"], "merchant": mid, "price": price, "stock": None}
            )
    _thresholds_at_subsets(rng, cart)
    return cart


def large(rng: random.Random) -> Cart:
    """Past the exact routes' reach without a budget; checked without an optimum."""
    scale = rng.choice([100, 1000, int(10 ** rng.uniform(5.0, 8.0))])
    cart = _build(rng, rng.randint(25, 80), rng.randint(8, 40), scale=scale, offers_per_line=(1, 6))
    if rng.random() < 0.5:
        _thresholds_at_subsets(rng, cart)
    return cart


Shape = Callable[[random.Random], Cart]
# name -> (shape, weight): most carts are small enough to brute-force.
SHAPES: dict[str, tuple[Shape, int]] = {
    "extremes": (extremes, 10),
    "ties": (ties, 8),
    "zero_money": (zero_money, 4),
    "threshold_edges": (threshold_edges, 10),
    "per_unit_heavy": (per_unit_heavy, 6),
    "highs_band": (highs_band, 8),
    "mixed_magnitudes": (mixed_magnitudes, 10),
    "huge_quantity": (huge_quantity, 5),
    "near_limit": (near_limit, 6),
    "single_offer": (single_offer, 3),
    "many_merchants": (many_merchants, 5),
    "twin_lines": (twin_lines, 4),
    "medium": (medium, 12),
    "sparse_wide": (sparse_wide, 8),
    "large": (large, 6),
}
