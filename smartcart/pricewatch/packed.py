"""A chunk of carts read straight into the batch solver's packed input, with NumPy.

``carts_problems_build`` builds one ``CartProblem`` per cart (about 0.8 ms each, most of a
run's time). ``carts_packed_read`` reads the same two queries (``chunk_line_rows``,
``chunk_offer_rows``) and the same shipping rules (``shipping_rules_known``) and builds the
``gpu_engine.batch.PackedBatch`` of the whole chunk at once, as ``pack_problems`` would pack
those problems: the lines in their order, each line's eligible offers (an active offer of an
active merchant whose shipping rule is known, with the stock for the line's quantity) by unit
price then merchant id, cart-local merchants numbered in merchant id order. The merchants'
pricing rows are shared: one row per (merchant, destination) of the chunk.

Carts that the single-cart path would refuse (a line not buyable as it stands, by
``line_unavailable_reason``, its own offer without a rule) are ``skipped``; carts whose money
bound needs the exact check go to ``fallback`` (the ``CartProblem`` path decides them), as
do carts too large for the batch after solving. Suggestion rows are built only for the carts
that get a notice (``PackedChunk.answer_fields``), by ``smartcart.answers`` like every stored
answer.
"""

import math
from dataclasses import dataclass, field

import numpy as np

from gpu_engine import MONEY_LIMIT
from gpu_engine.batch import PackedBatch, pack_carts, price_choice
from smartcart.answers import LineOffer, answer_fields, suggestion_line_row, suggestion_merchant_row
from smartcart.pricewatch.selectors import (
    LINE_AT,
    OFFER_AT,
    chunk_line_rows,
    chunk_offer_rows,
    shipping_rules_known,
)
from smartcart.selectors import problem_size
from storefront.carts.pricing_summary import line_unavailable_reason

# Carts whose float bound comes near the engine's money limit get its exact (Python int)
# check on the CartProblem path.
_BOUND_CHECK = float(MONEY_LIMIT) / 4

# Columns of the rows read (``chunk_line_rows``, ``chunk_offer_rows``).
_L_CART = LINE_AT["cart_id"]
_L_VERSION = LINE_AT["cart__version"]
_L_POSTAL = LINE_AT["cart__postal_code"]
_L_OWNER = LINE_AT["cart__owner_id"]
_L_ID = LINE_AT["id"]
_L_QTY = LINE_AT["quantity"]
_L_PRODUCT = LINE_AT["product_id"]
_L_NAME = LINE_AT["product__name"]
_L_OFFER_ACTIVE = LINE_AT["offer__active"]
_L_STOCK = LINE_AT["offer__stock"]
_L_MERCHANT = LINE_AT["offer__merchant_id"]
_L_MERCHANT_ACTIVE = LINE_AT["offer__merchant__active"]
_L_SNAPSHOT = LINE_AT["unit_price_snapshot"]
_O_ID = OFFER_AT["id"]
_O_PRODUCT = OFFER_AT["product_id"]
_O_MERCHANT = OFFER_AT["merchant_id"]
_O_PRICE = OFFER_AT["unit_price"]
_O_STOCK = OFFER_AT["stock"]
_O_NAME = OFFER_AT["merchant__name"]
_O_MIN_UNITS = OFFER_AT["merchant__discount_min_units"]
_O_BP = OFFER_AT["merchant__discount_basis_points"]


@dataclass
class PackedChunk:
    """The packed carts of a chunk and what turns an answer back into database ids.

    Per packed cart ``c``: ``cart_ids[c]``, ``versions[c]``, ``owners[c]``, ``current[c]``
    and ``added[c]`` (the total now, and at the unit prices the lines were added at). Per
    packed line: ``line_ids``, ``product_ids``, ``names``, ``own`` (its own offer's packed
    index) and ``current_choice`` (its own merchant, cart-local). Per packed offer:
    ``offer_ids``, ``offer_merchants`` (database ids), ``offer_prices``. Per packed merchant:
    ``merchant_ids``, ``free_over`` (None: never free). ``sizes[c]``: problem merchants and
    offers (ineligible ones included, as ``CartProblemBuild.size`` counts them)."""

    batch: PackedBatch
    cart_ids: list[int] = field(default_factory=list)
    versions: list[int] = field(default_factory=list)
    owners: list[int | None] = field(default_factory=list)
    current: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    added: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    current_choice: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    current_parts: np.ndarray = field(default_factory=lambda: np.zeros((5, 0), np.int64))
    line_ids: list[int] = field(default_factory=list)
    product_ids: list[int] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    own: list[int] = field(default_factory=list)
    offer_ids: list[int] = field(default_factory=list)
    offer_merchants: list[int] = field(default_factory=list)
    offer_prices: list[int] = field(default_factory=list)
    merchant_ids: list[int] = field(default_factory=list)
    merchant_names: dict[int, str] = field(default_factory=dict)
    free_over: list[int | None] = field(default_factory=list)
    sizes: list[tuple[int, int]] = field(default_factory=list)
    skipped: int = 0
    fallback: list[int] = field(default_factory=list)

    @property
    def n_carts(self) -> int:
        return len(self.cart_ids)

    def answer_fields(
        self,
        c: int,
        *,
        choice: np.ndarray,
        parts: np.ndarray,
        total: int,
        kept_current: bool,
        algorithm: str,
        device: str,
        plan: dict,
    ) -> dict:
        """The done run's answer fields of packed cart ``c`` for the cart-local merchant per
        line ``choice`` (priced in ``parts``, see ``price_choice``): ``answers.answer_fields``
        with the rows a ``Solution`` of the same assignment gives."""
        batch = self.batch
        l0, l1 = int(batch.line_ptr[c]), int(batch.line_ptr[c + 1])
        local = [int(m) for m in choice[l0:l1]]
        current = [int(m) for m in self.current_choice[l0:l1]]
        counts = np.diff(batch.offer_ptr[l0 : l1 + 1])
        return answer_fields(
            cart_version=self.versions[c],
            algorithm=algorithm,
            optimal=True,
            device=device,
            current_total=int(self.current[c]),
            suggested_total=total,
            lines=[self._line_row(l0 + i, m) for i, m in enumerate(local)],
            merchants=self._merchant_rows(c, local, parts),
            current_merchants=self._merchant_rows(c, current, self.current_parts),
            kept_current=kept_current,
            plan=plan,
            problem_size=problem_size(
                lines=l1 - l0,
                merchants=self.sizes[c][0],
                offers=self.sizes[c][1],
                complexity=math.prod(int(k) for k in counts),
            ),
        )

    def _offer_of(self, line: int, local: int) -> int:
        batch = self.batch
        for o in range(int(batch.offer_ptr[line]), int(batch.offer_ptr[line + 1])):
            if int(batch.offer_merchant[o]) == local:
                return o
        raise LookupError(f"packed line {line} has no offer of local merchant {local}")

    def _line_offer(self, o: int) -> LineOffer:
        merchant_id = self.offer_merchants[o]
        return LineOffer(
            self.offer_ids[o], merchant_id, self.merchant_names[merchant_id], self.offer_prices[o]
        )

    def _line_row(self, line: int, local: int) -> dict:
        return suggestion_line_row(
            line_id=self.line_ids[line],
            product_id=self.product_ids[line],
            product_name=self.names[line],
            quantity=int(self.batch.line_qty[line]),
            old=self._line_offer(self.own[line]),
            new=self._line_offer(self._offer_of(line, local)),
        )

    def _merchant_rows(self, c: int, local: list[int], parts: np.ndarray) -> list[dict]:
        l0, m0 = int(self.batch.line_ptr[c]), int(self.batch.merch_ptr[c])
        lines: dict[int, list[int]] = {}
        for i, m in enumerate(local):
            lines.setdefault(m, []).append(self.line_ids[l0 + i])
        rows = []
        for m in sorted(lines):
            j = m0 + m
            sub, units, discount, shipping, cost = (int(v) for v in parts[:, j])
            merchant_id = self.merchant_ids[j]
            rows.append(
                suggestion_merchant_row(
                    merchant_id=merchant_id,
                    merchant_name=self.merchant_names[merchant_id],
                    line_ids=lines[m],
                    units=units,
                    subtotal=sub,
                    discount=discount,
                    shipping=shipping,
                    cost=cost,
                    free_over=self.free_over[j],
                )
            )
        return rows


def _read(cart_ids: list[int]) -> tuple[list[tuple], list[tuple]]:
    return list(chunk_line_rows(cart_ids=cart_ids)), list(chunk_offer_rows(cart_ids=cart_ids))


def _col(rows: list[tuple], k: int, dtype=np.int64) -> np.ndarray:
    return np.fromiter((row[k] for row in rows), dtype, len(rows))


@dataclass(frozen=True)
class _Lines:
    """The chunk's cart lines as read (``chunk_line_rows``, in cart order): per line, the
    position of its cart among the chunk's carts, its quantity and its own offer's merchant."""

    rows: list[tuple]
    cart: np.ndarray
    qty: np.ndarray
    merchant: np.ndarray


@dataclass(frozen=True)
class _Pairs:
    """Every (line, offer of the line's product) pair: its line, cart position, offer row,
    merchant, unit price and pricing row; ``kept`` when the merchant ships to the cart (its
    rule is known), ``eligible`` when kept and the offer's stock covers the line."""

    line: np.ndarray
    cart: np.ndarray
    offer: np.ndarray
    merchant: np.ndarray
    price: np.ndarray
    rule: np.ndarray
    kept: np.ndarray
    eligible: np.ndarray


def carts_packed_read(*, cart_ids: list[int]) -> PackedChunk:
    """The packed batch of the carts of ``cart_ids`` as they stand, in two queries (plus the
    zone index's when it is rebuilt); see the module docstring."""
    line_rows, offer_rows = _read(list(cart_ids))
    n_lines = len(line_rows)
    l_cart = _col(line_rows, _L_CART)
    carts, l_cpos = np.unique(l_cart, return_inverse=True)
    n_carts = carts.size
    first = np.searchsorted(l_cart, carts)
    postal_of = [line_rows[int(i)][_L_POSTAL] for i in first]
    postal_codes = sorted(set(postal_of), key=lambda p: (p is None, p or ""))
    postal_index = {p: i for i, p in enumerate(postal_codes)}
    cart_postal = np.array([postal_index[p] for p in postal_of], np.int64)
    l_qty = _col(line_rows, _L_QTY)
    l_product = _col(line_rows, _L_PRODUCT)
    l_merchant = _col(line_rows, _L_MERCHANT)
    bad_line = np.fromiter(
        (
            line_unavailable_reason(
                offer_active=row[_L_OFFER_ACTIVE],
                merchant_active=row[_L_MERCHANT_ACTIVE],
                stock=row[_L_STOCK],
                quantity=row[_L_QTY],
            )
            is not None
            for row in line_rows
        ),
        bool,
        n_lines,
    )
    bad = np.zeros(n_carts, bool)
    bad[l_cpos[bad_line]] = True

    # Every (line, offer of its product): the product's offers by a sorted index.
    o_product = _col(offer_rows, _O_PRODUCT)
    o_merchant = _col(offer_rows, _O_MERCHANT)
    o_price = _col(offer_rows, _O_PRICE)
    o_stock = np.fromiter(
        (-1 if (stock := r[_O_STOCK]) is None else stock for r in offer_rows), np.int64
    )
    order = np.argsort(o_product, kind="stable")
    lo = np.searchsorted(o_product[order], l_product, "left")
    hi = np.searchsorted(o_product[order], l_product, "right")
    per_line = hi - lo
    p_line = np.repeat(np.arange(n_lines), per_line)
    starts = np.repeat(np.cumsum(per_line) - per_line, per_line)
    p_offer = order[np.repeat(lo, per_line) + np.arange(p_line.size) - starts]
    p_cart = l_cpos[p_line]
    p_merchant = o_merchant[p_offer]

    # Shipping: one rule per (merchant, destination): the shared pricing rows.
    n_postal = max(len(postal_codes), 1)
    rule_keys, p_rule = np.unique(p_merchant * n_postal + cart_postal[p_cart], return_inverse=True)
    keys = [(int(k // n_postal), postal_codes[int(k % n_postal)]) for k in rule_keys]
    rules = shipping_rules_known(pairs=keys)
    discounts = {r[_O_MERCHANT]: (r[_O_MIN_UNITS], r[_O_BP]) for r in offer_rows}
    rule_ok = np.array([rule is not None for rule in rules], bool)
    params = _params(keys, rules, discounts)

    kept = rule_ok[p_rule] if p_rule.size else np.zeros(0, bool)
    own = kept & (p_merchant == l_merchant[p_line])
    has_own = np.bincount(p_line[own], minlength=n_lines) > 0
    bad[l_cpos[~has_own]] = True
    eligible = kept & ((o_stock[p_offer] < 0) | (o_stock[p_offer] >= l_qty[p_line]))

    lines = _Lines(rows=line_rows, cart=l_cpos, qty=l_qty, merchant=l_merchant)
    pairs = _Pairs(
        line=p_line,
        cart=p_cart,
        offer=p_offer,
        merchant=p_merchant,
        price=o_price[p_offer],
        rule=p_rule,
        kept=kept,
        eligible=eligible,
    )
    fallback = _bound_suspect(n_carts, lines, pairs, params)
    good = ~bad & ~fallback
    chunk = _pack(good, carts, lines, pairs, offer_rows, params, rules)
    chunk.skipped = len(set(cart_ids)) - n_carts + int(bad.sum())
    chunk.fallback = [int(i) for i in carts[fallback & ~bad]]
    chunk.merchant_names = {r[_O_MERCHANT]: r[_O_NAME] for r in offer_rows}
    return chunk


def _params(keys, rules, discounts) -> np.ndarray:
    """int64[5, R]: base, extra, free_over (-1: never), dmin, dbp (0: no discount) per row."""
    out = np.zeros((5, len(keys)), np.int64)
    for r, ((merchant_id, _), rule) in enumerate(zip(keys, rules, strict=True)):
        if rule is None:
            continue
        min_units, bp = discounts[merchant_id]
        has_discount = min_units is not None and bp is not None
        out[:, r] = (
            rule.base_fee,
            rule.per_extra_unit,
            -1 if rule.free_over is None else rule.free_over,
            min_units if has_discount else 0,
            bp if has_discount else 0,
        )
    return out


def _bound_suspect(n_carts: int, lines: _Lines, pairs: _Pairs, params: np.ndarray) -> np.ndarray:
    """Carts whose worst-case total (as ``CartProblem`` bounds it) may come near int64."""
    eligible, kept = pairs.eligible, pairs.kept
    dearest = np.zeros(lines.qty.size)
    np.maximum.at(dearest, pairs.line[eligible], pairs.price[eligible].astype(float))
    goods = np.bincount(lines.cart, weights=lines.qty * dearest, minlength=n_carts)
    units = np.bincount(lines.cart, weights=lines.qty.astype(float), minlength=n_carts)
    n_lines = np.bincount(lines.cart, minlength=n_carts).astype(float)
    base = np.zeros(n_carts)
    extra = np.zeros(n_carts)
    np.maximum.at(base, pairs.cart[kept], params[0, pairs.rule[kept]].astype(float))
    np.maximum.at(extra, pairs.cart[kept], params[1, pairs.rule[kept]].astype(float))
    return goods + n_lines * base + extra * units + units >= _BOUND_CHECK


def _pack(
    good: np.ndarray,
    carts: np.ndarray,
    lines: _Lines,
    pairs: _Pairs,
    offer_rows: list[tuple],
    params: np.ndarray,
    rules: list,
) -> PackedChunk:
    """The chunk's ``good`` carts packed by ``gpu_engine.batch.pack_carts`` from the columns
    read: per line, per (line, offer) pair and per pricing row (``params``, ``rules``)."""
    carts = carts[good]
    cart_new = np.cumsum(good) - 1  # old cart position -> packed position
    line_keep = good[lines.cart]
    kept_lines = np.flatnonzero(line_keep)
    line_new = np.cumsum(line_keep) - 1
    p_keep = pairs.eligible & good[pairs.cart]
    # Offers by packed line, unit price, merchant id (the problem's candidate order).
    sel = np.flatnonzero(p_keep)
    price = pairs.price[sel]
    merchant = pairs.merchant[sel]
    sel = sel[np.lexsort((merchant, price, pairs.line[sel]))]
    s_line = line_new[pairs.line[sel]]
    s_cart = cart_new[pairs.cart[sel]]
    s_merchant = pairs.merchant[sel]
    span = int(pairs.merchant.max(initial=0)) + 1
    cm, s_cm = np.unique(s_cart * span + s_merchant, return_inverse=True)
    cm_cart = cm // span
    n = carts.size
    merchant_counts = np.bincount(cm_cart, minlength=n)
    merch_ptr = np.zeros(n + 1, np.int64)
    np.cumsum(merchant_counts, out=merch_ptr[1:])
    s_local = s_cm - merch_ptr[s_cart]
    merch_row = np.zeros(cm.size, np.int32)
    merch_row[s_cm] = pairs.rule[sel]
    # The problem's merchants: every merchant with a rule, eligible for a line or not.
    k_sel = np.flatnonzero(pairs.kept & good[pairs.cart])
    problem_cm = np.unique(cart_new[pairs.cart[k_sel]] * span + pairs.merchant[k_sel])
    problem_ptr = np.searchsorted(problem_cm, np.arange(n + 1) * span)
    offers_per_cart = np.bincount(cart_new[pairs.cart[k_sel]], minlength=n)

    s_price = pairs.price[sel]
    batch = pack_carts(
        line_counts=np.bincount(cart_new[lines.cart[kept_lines]], minlength=n),
        line_qty=lines.qty[kept_lines],
        offer_counts=np.bincount(s_line, minlength=kept_lines.size),
        offer_merchant=s_local,
        offer_price=s_price,
        merchant_counts=merchant_counts,
        merchant_row=merch_row,
        merchant_index=np.searchsorted(problem_cm, cm) - problem_ptr[cm_cart],
        params=params,
    )
    qty = batch.line_qty
    line_ptr = batch.line_ptr
    # Each packed line's own offer and merchant.
    own_mask = s_merchant == lines.merchant[kept_lines][s_line]
    own = np.zeros(kept_lines.size, np.int64)
    own[s_line[own_mask]] = np.flatnonzero(own_mask)
    current_choice = s_local[own].astype(np.int64)
    snapshot = np.fromiter(
        (lines.rows[int(i)][_L_SNAPSHOT] for i in kept_lines), np.int64, kept_lines.size
    )
    added_amount = batch.offer_amount.copy()
    added_amount[own] = qty * snapshot
    current_parts, current = price_choice(batch, current_choice)
    _, added = price_choice(batch, current_choice, added_amount)
    s_offer = pairs.offer[sel]
    return PackedChunk(
        batch=batch,
        cart_ids=[int(c) for c in carts],
        versions=[lines.rows[int(kept_lines[int(p)])][_L_VERSION] for p in line_ptr[:-1]],
        owners=[lines.rows[int(kept_lines[int(p)])][_L_OWNER] for p in line_ptr[:-1]],
        current=current,
        added=added,
        current_choice=current_choice,
        current_parts=current_parts,
        line_ids=[lines.rows[int(i)][_L_ID] for i in kept_lines],
        product_ids=[lines.rows[int(i)][_L_PRODUCT] for i in kept_lines],
        names=[lines.rows[int(i)][_L_NAME] for i in kept_lines],
        own=own.tolist(),
        offer_ids=[offer_rows[int(o)][_O_ID] for o in s_offer],
        offer_merchants=s_merchant.tolist(),
        offer_prices=s_price.tolist(),
        merchant_ids=(cm % span).tolist(),
        free_over=[rules[int(r)].free_over for r in merch_row],
        sizes=[
            (int(problem_ptr[c + 1] - problem_ptr[c]), int(offers_per_cart[c])) for c in range(n)
        ],
    )
