"""A chunk of carts read straight into the batch solver's packed input, with NumPy.

``carts_problems_build`` builds one ``CartProblem`` per cart (about 0.8 ms each).
``carts_packed_read`` reads the chunk as columns (``columns.chunk_columns_read``: two
statements and the run's offer book, no Python object per line), the shipping rules of its
(merchant, destination) pairs (``OfferBook.shipping_rules``) and builds the
``gpu_engine.batch.PackedBatch`` of the whole chunk at once, as ``pack_problems`` would pack
the same carts' problems: the lines in their order, each line's eligible offers (an active
offer of an active merchant whose shipping rule is known, with the stock for the line's
quantity) by unit price then merchant id, cart-local merchants numbered in merchant id order.
The merchants' pricing rows are shared: one row per (merchant, destination) of the chunk.

Carts that the single-cart path would refuse (a line not buyable as it stands, by the rule
of ``line_unavailable_reason``, its own offer without a rule) are ``skipped``. Carts with a
merchant that ships from warehouses (pricing contract version 2) are not packed here (these
rows know one node per merchant): they are listed in ``v2`` for the single-cart builder,
never priced as version 1. Carts whose money bound needs the exact check go to ``fallback``
(the ``CartProblem`` path decides them), as do carts too large for the batch after solving
and carts with a line whose offer the run's book does not hold.
Suggestion rows, and the product and merchant names they show, are built only for the carts
that get a notice: as JSON text from these arrays (``notice_text.suggestions_text``), the text
of the rows ``smartcart.answers`` builds for every other stored answer.
"""

from dataclasses import dataclass, field

import numpy as np

from gpu_engine import MONEY_LIMIT
from gpu_engine.batch import PackedBatch, pack_carts, price_choice
from smartcart.pricewatch.columns import (
    LINE_FIELDS,
    ChunkColumns,
    ChunkRows,
    chunk_columns_read,
)
from smartcart.pricewatch.offer_book import Names, OfferBook

# Carts whose float bound comes near the engine's money limit get its exact (Python int)
# check on the CartProblem path.
_BOUND_CHECK = float(MONEY_LIMIT) / 4
_NONE = np.zeros(0, np.int64)


@dataclass
class PackedChunk:
    """The packed carts of a chunk and what turns an answer back into database ids.

    Per packed cart ``c``: ``cart_ids[c]``, ``versions[c]``, ``owners[c]`` (-1: none),
    ``current[c]`` and ``added[c]`` (the total now, and at the unit prices the lines were
    added at), ``sizes[:, c]`` (problem merchants and offers, ineligible ones included, as
    ``CartProblemBuild.size`` counts them). Per packed line: ``line_ids``, ``product_ids``,
    ``own`` (its own offer's packed index) and ``current_choice`` (its own merchant,
    cart-local). Per packed offer: ``offer_ids``, ``offer_merchants`` (database ids),
    ``offer_prices``. Per packed merchant: ``merchant_ids``, ``free_over`` (-1: never free).
    Names are read on the first answer (``OfferBook.names_for``), for notices only."""

    batch: PackedBatch
    cart_ids: np.ndarray = field(default_factory=lambda: _NONE)
    versions: np.ndarray = field(default_factory=lambda: _NONE)
    owners: np.ndarray = field(default_factory=lambda: _NONE)
    current: np.ndarray = field(default_factory=lambda: _NONE)
    added: np.ndarray = field(default_factory=lambda: _NONE)
    current_choice: np.ndarray = field(default_factory=lambda: _NONE)
    current_parts: np.ndarray = field(default_factory=lambda: np.zeros((5, 0), np.int64))
    line_ids: np.ndarray = field(default_factory=lambda: _NONE)
    product_ids: np.ndarray = field(default_factory=lambda: _NONE)
    own: np.ndarray = field(default_factory=lambda: _NONE)
    offer_ids: np.ndarray = field(default_factory=lambda: _NONE)
    offer_merchants: np.ndarray = field(default_factory=lambda: _NONE)
    offer_prices: np.ndarray = field(default_factory=lambda: _NONE)
    merchant_ids: np.ndarray = field(default_factory=lambda: _NONE)
    free_over: np.ndarray = field(default_factory=lambda: _NONE)
    sizes: np.ndarray = field(default_factory=lambda: np.zeros((2, 0), np.int64))
    skipped: int = 0
    # Carts a warehouse merchant's offer reaches (pricing v2): built one at a time.
    v2: list[int] = field(default_factory=list)
    fallback: list[int] = field(default_factory=list)
    names: Names | None = None
    book: OfferBook | None = None

    @property
    def n_carts(self) -> int:
        return int(self.cart_ids.size)

    def owner(self, c: int) -> int | None:
        owner = int(self.owners[c])
        return None if owner < 0 else owner

    def names_for_notices(self) -> Names:
        """The names the chunk's notices show, read on the first notice (those the run's
        book has not read yet: one statement)."""
        if self.names is None:
            book = OfferBook() if self.book is None else self.book
            self.names = book.names_for(
                product_ids=self.product_ids.tolist(), merchant_ids=self.merchant_ids.tolist()
            )
        return self.names


@dataclass(frozen=True)
class _Lines:
    """The chunk's cart lines as read (in cart order): per line, the position of its cart
    among the chunk's carts, its id, product, quantity, own merchant, price when added."""

    cart: np.ndarray
    ids: np.ndarray
    product: np.ndarray
    qty: np.ndarray
    merchant: np.ndarray
    snapshot: np.ndarray


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


def _postal_index(postal_of: list) -> tuple[list, np.ndarray]:
    """The chunk's destinations (sorted, None last) and each cart's index among them."""
    codes = sorted(set(postal_of), key=lambda p: (p is None, p or ""))
    index = {p: i for i, p in enumerate(codes)}
    return codes, np.fromiter((index[p] for p in postal_of), np.int64, len(postal_of))


def carts_packed_read(
    *, cart_ids: list[int], book: OfferBook | None = None, rows: ChunkRows | None = None
) -> PackedChunk:
    """The packed batch of the carts of ``cart_ids`` as they stand (see the module
    docstring), their offers from the run's ``book`` (a new one without): two statements
    (none when their ``rows`` were read already), one more for products the book has not
    met, plus the zone index's when it is rebuilt."""
    book = OfferBook() if book is None else book
    cols = chunk_columns_read(cart_ids=cart_ids, book=book, rows=rows)
    chunk = _packed(cols, n_asked=len(set(cart_ids)), book=book)
    chunk.book = book
    return chunk


def _packed(cols: ChunkColumns, *, n_asked: int, book: OfferBook) -> PackedChunk:
    carts = cols.cart_ids
    l_cpos = np.searchsorted(carts, cols.line("cart"))
    # A line whose cart went between the statements (deleted meanwhile) is dropped.
    found = np.zeros(l_cpos.size, bool)
    if carts.size:
        found = carts[np.minimum(l_cpos, carts.size - 1)] == cols.line("cart")
    lines_cols = cols.lines[:, found]
    l_cpos = l_cpos[found]
    n_lines = l_cpos.size
    n_carts = carts.size
    has_line = np.bincount(l_cpos, minlength=n_carts) > 0
    postal_codes, cart_postal = _postal_index(cols.postal_codes)
    col = {name: lines_cols[k] for k, name in enumerate(LINE_FIELDS)}
    l_qty, l_product, l_merchant = col["qty"], col["product"], col["merchant"]
    # ``line_unavailable_reason``'s rule, on the columns: the offer and its merchant active,
    # the stock (-1: unlimited) covering the quantity. A line whose offer the run's book does
    # not hold leaves its cart to the single-cart path.
    known = col["known"] == 1
    unknown = np.zeros(n_carts, bool)
    unknown[l_cpos[~known]] = True
    stock = col["stock"]
    bad_line = known & ((col["offer_active"] == 0) | ((stock >= 0) & (stock < l_qty)))
    bad = ~has_line
    bad[l_cpos[bad_line]] = True

    # Every (line, offer of its product): the product's offers by a sorted index.
    o_id, o_product, o_merchant, o_price, o_stock, o_dmin, o_dbp, o_v2 = cols.offers
    order = np.argsort(o_product, kind="stable")
    lo = np.searchsorted(o_product[order], l_product, "left")
    hi = np.searchsorted(o_product[order], l_product, "right")
    per_line = hi - lo
    p_line = np.repeat(np.arange(n_lines), per_line)
    starts = np.repeat(np.cumsum(per_line) - per_line, per_line)
    p_offer = order[np.repeat(lo, per_line) + np.arange(p_line.size) - starts]
    p_cart = l_cpos[p_line]
    p_merchant = o_merchant[p_offer]

    # Version 2 merchants (warehouses): their carts are not the batch's.
    v2 = np.zeros(n_carts, bool)
    v2[p_cart[o_v2[p_offer] == 1]] = True
    v2[l_cpos[col["merchant_v2"] == 1]] = True

    # Shipping: one rule per (merchant, destination): the shared pricing rows.
    n_postal = max(len(postal_codes), 1)
    rule_keys, p_rule = np.unique(p_merchant * n_postal + cart_postal[p_cart], return_inverse=True)
    p_rule = p_rule.reshape(-1)
    keys = [(int(k // n_postal), postal_codes[int(k % n_postal)]) for k in rule_keys]
    rules = book.shipping_rules(pairs=keys)
    rule_ok = np.array([rule is not None for rule in rules], bool)
    params = _params(rules, rule_keys // n_postal, o_merchant, o_dmin, o_dbp)

    kept = rule_ok[p_rule] if p_rule.size else np.zeros(0, bool)
    own = kept & (p_merchant == l_merchant[p_line])
    has_own = np.bincount(p_line[own], minlength=n_lines) > 0
    bad[l_cpos[~has_own & known]] = True
    eligible = kept & ((o_stock[p_offer] < 0) | (o_stock[p_offer] >= l_qty[p_line]))

    lines = _Lines(
        cart=l_cpos,
        ids=col["line"],
        product=l_product,
        qty=l_qty,
        merchant=l_merchant,
        snapshot=col["snapshot"],
    )
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
    fallback = _bound_suspect(n_carts, lines, pairs, params) | unknown
    good = ~bad & ~fallback & ~v2
    chunk = _pack(good, cols, lines, pairs, o_id, params)
    chunk.skipped = n_asked - n_carts + int((bad & ~v2).sum())
    chunk.v2 = [int(i) for i in carts[v2]]
    chunk.fallback = [int(i) for i in carts[fallback & ~bad & ~v2]]
    return chunk


def _params(rules, rule_merchant, o_merchant, o_dmin, o_dbp) -> np.ndarray:
    """int64[5, R]: base, extra, free_over (-1: never), dmin, dbp (0: no discount) per row."""
    out = np.zeros((5, len(rules)), np.int64)
    if not rules:
        return out
    # Each merchant's discount, as its offers' rows carry it (-1: none).
    merchants, first = np.unique(o_merchant, return_index=True)
    at = np.searchsorted(merchants, rule_merchant)
    dmin, dbp = o_dmin[first][at], o_dbp[first][at]
    has_discount = (dmin >= 0) & (dbp >= 0)
    out[3] = np.where(has_discount, dmin, 0)
    out[4] = np.where(has_discount, dbp, 0)
    for r, rule in enumerate(rules):
        if rule is None:
            out[3:, r] = 0
            continue
        out[0, r] = rule.base_fee
        out[1, r] = rule.per_extra_unit
        out[2, r] = -1 if rule.free_over is None else rule.free_over
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
    cols: ChunkColumns,
    lines: _Lines,
    pairs: _Pairs,
    o_id: np.ndarray,
    params: np.ndarray,
) -> PackedChunk:
    """The chunk's ``good`` carts packed by ``gpu_engine.batch.pack_carts`` from the columns
    read: per line, per (line, offer) pair and per pricing row (``params``)."""
    carts = cols.cart_ids[good]
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
    s_cm = s_cm.reshape(-1)
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
    # Each packed line's own offer and merchant.
    own_mask = s_merchant == lines.merchant[kept_lines][s_line]
    own = np.zeros(kept_lines.size, np.int64)
    own[s_line[own_mask]] = np.flatnonzero(own_mask)
    current_choice = s_local[own].astype(np.int64)
    added_amount = batch.offer_amount.copy()
    added_amount[own] = qty * lines.snapshot[kept_lines]
    current_parts, current = price_choice(batch, current_choice)
    _, added = price_choice(batch, current_choice, added_amount)
    return PackedChunk(
        batch=batch,
        cart_ids=carts,
        versions=cols.versions[good],
        owners=cols.owners[good],
        current=current,
        added=added,
        current_choice=current_choice,
        current_parts=current_parts,
        line_ids=lines.ids[kept_lines],
        product_ids=lines.product[kept_lines],
        own=own,
        offer_ids=o_id[pairs.offer[sel]],
        offer_merchants=s_merchant,
        offer_prices=s_price,
        merchant_ids=cm % span,
        free_over=params[2, merch_row],
        sizes=np.stack([np.diff(problem_ptr), offers_per_cart]),
    )
