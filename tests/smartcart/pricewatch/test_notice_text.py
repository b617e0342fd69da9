"""The notices' JSON text written straight from a packed chunk's arrays against the rows
``smartcart.answers`` builds (``answer_fields`` with its line, merchant and parcel rows), on
random chunks: random carts, offers, prices, free-shipping thresholds, the solver's choice or
the cart as it stands, and names with quotes, backslashes, control characters and non-ASCII
letters."""

import json
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_engine.batch import pack_carts, price_choice
from smartcart.answers import (
    LineOffer,
    answer_fields,
    parcel_row,
    suggestion_line_row,
    suggestion_merchant_row,
)
from smartcart.pricewatch.notice_text import suggestions_text
from smartcart.pricewatch.offer_book import Names
from smartcart.pricewatch.packed import PackedChunk
from smartcart.selectors import problem_size

_MERCHANTS = list(range(101, 109))
_PRODUCTS = list(range(501, 513))


def _chunk(rng: np.random.Generator, names: Names) -> PackedChunk:
    """A packed chunk as ``packed._pack`` lays one out: per cart its lines, each line's offers
    in candidate order (unit price, then merchant), cart-local merchants in id order."""
    line_counts: list[int] = []
    line_qty: list[int] = []
    offer_counts: list[int] = []
    offer_local: list[int] = []
    offer_price: list[int] = []
    merchant_counts: list[int] = []
    merchant_ids: list[int] = []
    offer_merchants: list[int] = []
    offer_ids: list[int] = []
    own: list[int] = []
    products: list[int] = []
    line_ids: list[int] = []
    for _ in range(int(rng.integers(1, 6))):
        n_lines = int(rng.integers(1, 6))
        lines = []
        for _ in range(n_lines):
            k = int(rng.integers(1, 5))
            sellers = sorted(rng.choice(_MERCHANTS, size=k, replace=False).tolist())
            prices = rng.choice([0, 250, 500, 500, 999, 4000], size=k).tolist()
            lines.append(sorted(zip(prices, sellers, strict=True)))
        local = sorted({m for line in lines for _, m in line})
        merchant_counts.append(len(local))
        merchant_ids += local
        line_counts.append(n_lines)
        for line in lines:
            line_ids.append(len(line_ids) + 1)
            products.append(int(rng.choice(_PRODUCTS)))
            line_qty.append(int(rng.integers(1, 4)))
            offer_counts.append(len(line))
            own.append(len(offer_ids) + int(rng.integers(0, len(line))))
            for price, merchant in line:
                offer_ids.append(9000 + len(offer_ids))
                offer_local.append(local.index(merchant))
                offer_price.append(price)
                offer_merchants.append(merchant)
    n_rows = len(merchant_ids)
    free_over = rng.choice([-1, 0, 1000, 3000], size=n_rows)
    params = np.stack(
        [
            rng.choice([0, 199, 499], size=n_rows),
            rng.choice([0, 50], size=n_rows),
            free_over,
            np.where(rng.random(n_rows) < 0.3, 2, 0),
            np.where(rng.random(n_rows) < 0.3, 500, 0),
        ]
    )
    merch_ptr = np.concatenate([[0], np.cumsum(merchant_counts)])
    batch = pack_carts(
        line_counts=np.array(line_counts),
        line_qty=np.array(line_qty),
        offer_counts=np.array(offer_counts),
        offer_merchant=np.array(offer_local),
        offer_price=np.array(offer_price),
        merchant_counts=np.array(merchant_counts),
        merchant_row=np.arange(n_rows),
        merchant_index=np.arange(n_rows) - np.repeat(merch_ptr[:-1], merchant_counts),
        params=params,
    )
    own_arr = np.array(own, np.int64)
    current_choice = batch.offer_merchant[own_arr].astype(np.int64)
    current_parts, current = price_choice(batch, current_choice)
    n_carts = len(line_counts)
    return PackedChunk(
        batch=batch,
        cart_ids=np.arange(1, n_carts + 1),
        versions=rng.integers(1, 9, size=n_carts),
        owners=np.full(n_carts, -1),
        current=current,
        added=current,
        current_choice=current_choice,
        current_parts=current_parts,
        line_ids=np.array(line_ids, np.int64),
        product_ids=np.array(products, np.int64),
        own=own_arr,
        offer_ids=np.array(offer_ids, np.int64),
        offer_merchants=np.array(offer_merchants, np.int64),
        offer_prices=np.array(offer_price, np.int64),
        merchant_ids=np.array(merchant_ids, np.int64),
        free_over=free_over.astype(np.int64),
        sizes=np.stack([rng.integers(1, 9, size=n_carts), rng.integers(1, 30, size=n_carts)]),
        names=names,
    )


def _reference(chunk: PackedChunk, c: int, choice: np.ndarray, parts: np.ndarray, kept: bool):
    """The answer ``answers.answer_fields`` stores for packed cart ``c`` (its rows built by
    ``suggestion_line_row``, ``suggestion_merchant_row`` and ``parcel_row``)."""
    b, names = chunk.batch, chunk.names
    assert names is not None
    l0, l1 = int(b.line_ptr[c]), int(b.line_ptr[c + 1])

    def offer(o: int) -> LineOffer:
        merchant = int(chunk.offer_merchants[o])
        return LineOffer(
            int(chunk.offer_ids[o]),
            merchant,
            names.merchants[merchant],
            int(chunk.offer_prices[o]),
        )

    def chosen(line: int, local: int) -> int:
        offers = range(int(b.offer_ptr[line]), int(b.offer_ptr[line + 1]))
        return next(o for o in offers if b.offer_merchant[o] == local)

    def merchant_rows(local: list[int], priced: np.ndarray) -> list[dict]:
        lines: dict[int, list[int]] = {}
        for i, m in enumerate(local):
            lines.setdefault(m, []).append(int(chunk.line_ids[l0 + i]))
        rows = []
        for m in sorted(lines):
            j = int(b.merch_ptr[c]) + m
            sub, units, discount, shipping, cost = (int(v) for v in priced[:, j])
            merchant = int(chunk.merchant_ids[j])
            free_over = int(chunk.free_over[j])
            rows.append(
                suggestion_merchant_row(
                    merchant_id=merchant,
                    merchant_name=names.merchants[merchant],
                    line_ids=lines[m],
                    units=units,
                    subtotal=sub,
                    discount=discount,
                    shipping=shipping,
                    cost=cost,
                    free_over=None if free_over < 0 else free_over,
                    parcels=[
                        parcel_row(
                            node=str(merchant),
                            warehouse_id=None,
                            warehouse_name="",
                            line_ids=lines[m],
                            units=units,
                            weight_g=0,
                            fee=shipping,
                        )
                    ],
                )
            )
        return rows

    now = chunk.current_choice[l0:l1].tolist()
    local = now if kept else choice[l0:l1].tolist()
    return answer_fields(
        cart_version=1,
        algorithm="",
        optimal=True,
        device="cpu",
        current_total=0,
        suggested_total=0,
        lines=[
            suggestion_line_row(
                line_id=int(chunk.line_ids[line]),
                product_id=int(chunk.product_ids[line]),
                product_name=names.products[int(chunk.product_ids[line])],
                quantity=int(b.line_qty[line]),
                old=offer(int(chunk.own[line])),
                new=offer(chosen(line, m)),
            )
            for line, m in zip(range(l0, l1), local, strict=True)
        ],
        merchants=merchant_rows(local, chunk.current_parts if kept else parts),
        current_merchants=merchant_rows(now, chunk.current_parts),
        kept_current=kept,
        plan={},
        problem_size=problem_size(
            lines=l1 - l0,
            merchants=int(chunk.sizes[0, c]),
            offers=int(chunk.sizes[1, c]),
            complexity=math.prod(int(n) for n in np.diff(b.offer_ptr)[l0:l1]),
        ),
    )


# Any character a name can hold (the codec leaves out lone surrogates).
_NAME = st.text(alphabet=st.characters(codec="utf-8"), min_size=0, max_size=12)


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    product_names=st.lists(_NAME, min_size=len(_PRODUCTS), max_size=len(_PRODUCTS)),
    merchant_names=st.lists(_NAME, min_size=len(_MERCHANTS), max_size=len(_MERCHANTS)),
)
def test_the_text_is_the_answer_rows_of_the_same_assignment(seed, product_names, merchant_names):
    rng = np.random.default_rng(seed)
    names = Names(
        products=dict(zip(_PRODUCTS, product_names, strict=True)),
        merchants=dict(zip(_MERCHANTS, merchant_names, strict=True)),
    )
    chunk = _chunk(rng, names)
    b = chunk.batch
    # Any assignment the solver could answer: each line at one of its offers' merchants.
    choice = np.array(
        [
            b.offer_merchant[rng.integers(b.offer_ptr[line], b.offer_ptr[line + 1])]
            for line in range(b.line_qty.size)
        ],
        np.int64,
    )
    parts, _ = price_choice(b, choice)
    carts = rng.permutation(chunk.n_carts)[: int(rng.integers(1, chunk.n_carts + 1))]
    kept = rng.random(carts.size) < 0.4
    texts = suggestions_text(chunk, carts=carts, kept=kept, choice=choice, parts=parts)
    assert len(texts) == carts.size
    for c, keep, text in zip(carts.tolist(), kept.tolist(), texts, strict=True):
        want = _reference(chunk, c, choice, parts, keep)
        assert json.loads(text.suggestion) == want["suggestion"]
        assert json.loads(text.problem_size) == want["problem_size"]


def test_complexity_past_int64_is_exact():
    """A cart whose lines' offer counts multiply past 2**63 still stores its exact count."""
    rng = np.random.default_rng(7)
    names = Names(
        products={p: f"P{p}" for p in _PRODUCTS}, merchants={m: f"M{m}" for m in _MERCHANTS}
    )
    n_lines, k = 40, 4  # 4**40 = 2**80
    offers = n_lines * k
    batch = pack_carts(
        line_counts=np.array([n_lines]),
        line_qty=np.ones(n_lines, np.int64),
        offer_counts=np.full(n_lines, k),
        offer_merchant=np.tile(np.arange(k), n_lines),
        offer_price=np.full(offers, 100),
        merchant_counts=np.array([k]),
        merchant_row=np.arange(k),
        merchant_index=np.arange(k),
        params=np.zeros((5, k), np.int64),
    )
    own = np.arange(0, offers, k)
    current_choice = np.zeros(n_lines, np.int64)
    current_parts, current = price_choice(batch, current_choice)
    chunk = PackedChunk(
        batch=batch,
        cart_ids=np.array([1]),
        versions=np.array([1]),
        owners=np.array([-1]),
        current=current,
        added=current,
        current_choice=current_choice,
        current_parts=current_parts,
        line_ids=np.arange(1, n_lines + 1),
        product_ids=rng.choice(_PRODUCTS, size=n_lines),
        own=own,
        offer_ids=np.arange(offers),
        offer_merchants=np.tile(np.array(_MERCHANTS[:k]), n_lines),
        offer_prices=np.full(offers, 100),
        merchant_ids=np.array(_MERCHANTS[:k]),
        free_over=np.full(k, -1),
        sizes=np.array([[k], [offers]]),
        names=names,
    )
    (text,) = suggestions_text(
        chunk,
        carts=np.array([0]),
        kept=np.array([True]),
        choice=current_choice,
        parts=current_parts,
    )
    assert json.loads(text.problem_size)["complexity"] == str(4**40)
