"""The suggestion of many packed carts as JSON text, straight from the chunk's arrays.

A notice stores ``smartcart.answers.answer_fields``' ``suggestion`` (line rows, merchant rows
with their parcels, the cart's merchant rows as it stands) and ``problem_size``. Building
those as dicts and encoding them was most of the price watch's time (a few hundred objects a
notice), so the packed path writes the same JSON text with string templates: the fixed
structure is in the templates, the per-row figures come from the arrays gathered for every
notice of the chunk at once, and a row's text is one ``%`` format. ``json.loads`` of the text
equals what ``answers`` builds for the same assignment (a property test holds them together);
only the names, read from the database, are encoded by ``json.dumps``.
"""

import json
import math
from typing import NamedTuple

import numpy as np

from smartcart.pricewatch.offer_book import Names
from smartcart.pricewatch.packed import PackedChunk

# Version 1 rows: a line ships from its merchant's one node, no warehouse; a merchant row has
# one parcel, from the merchant's node, weighed at 0 g as the engine weighs version 1 lines.
_LINE = (
    '{"line_id": %d, "product_id": %d, "product_name": %s, "quantity": %d, '
    '"old_offer_id": %d, "old_merchant_id": %d, "old_merchant_name": %s, "old_unit_price": %d, '
    '"new_offer_id": %d, "new_merchant_id": %d, "new_merchant_name": %s, "new_unit_price": %d, '
    '"old_warehouse_id": null, "old_warehouse_name": "", '
    '"new_warehouse_id": null, "new_warehouse_name": "", "changed": %s}'
)
_MERCHANT = (
    '{"merchant_id": %d, "merchant_name": %s, "line_ids": [%s], "units": %d, "subtotal": %d, '
    '"discount": %d, "shipping": %d, "cost": %d, "free_over": %s, '
    '"missing_for_free_shipping": %s, "parcels": [{"node": "%d", "warehouse_id": null, '
    '"warehouse_name": "", "line_ids": [%s], "units": %d, "weight_g": 0, "fee": %d}]}'
)
_SUGGESTION = '{"lines": [%s], "merchants": [%s], "current_merchants": [%s], "kept_current": %s}'
_SIZE = '{"lines": %d, "merchants": %d, "offers": %d, "complexity": "%d"}'
_BOOL = ("false", "true")


class SuggestionText(NamedTuple):
    """One notice's ``suggestion`` and ``problem_size`` as JSON text, and its ``lines`` array
    alone (compared with a notice the cart holds)."""

    suggestion: str
    lines: str
    problem_size: str


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The concatenated ranges ``starts[k] .. starts[k] + counts[k]``."""
    total = int(counts.sum())
    offsets = np.repeat(np.cumsum(counts) - counts, counts)
    return np.repeat(starts, counts) + np.arange(total) - offsets


def _json_names(names: dict[int, str], encoded: dict[int, str], ids: np.ndarray) -> list[str]:
    """The JSON string of each id's name (each name encoded once, kept in ``encoded``)."""
    ids_list = ids.tolist()
    new = set(ids_list) - encoded.keys()
    encoded.update((i, json.dumps(names[i])) for i in new)
    return [encoded[i] for i in ids_list]


def _null_or(values: np.ndarray) -> list[str]:
    # -1 stands for JSON null (a merchant never shipping free).
    return ["null" if v < 0 else str(v) for v in values.tolist()]


class _Rows(NamedTuple):
    """Merchant rows of many notices: the text of each, where each notice's rows start
    (int64[N + 1]), and per row its (notice, cart-local merchant) key and its line count."""

    text: list[str]
    ptr: np.ndarray
    keys: np.ndarray
    sizes: np.ndarray


def _merchant_rows(
    chunk: PackedChunk,
    *,
    line_cart: np.ndarray,
    local: np.ndarray,
    span: int,
    carts: np.ndarray,
    row_parts: np.ndarray,
    line_id_text: list[str],
    names: Names,
    like: "tuple[_Rows, np.ndarray] | None" = None,
) -> _Rows:
    """The merchant rows of every notice (``answers.suggestion_merchant_row``: the merchants
    holding a line, in cart-local order, each with its lines in cart order), priced by
    ``row_parts`` (over the chunk's packed merchants). ``like``: rows already written (the
    cart as it stands) and per line whether it kept its merchant: a row with the same
    merchant, lines and parts as one of them is that row's text (most merchants of a
    suggestion are as they were)."""
    key = line_cart * span + local
    order = np.argsort(key, kind="stable")
    groups, first, sizes = np.unique(key[order], return_index=True, return_counts=True)
    group_cart = groups // span
    rows = chunk.batch.merch_ptr[carts[group_cart]] + groups % span
    text: list[str | None] = [None] * groups.size
    todo = np.ones(groups.size, bool)
    if like is not None and groups.size:
        before, same_line = like
        at = np.minimum(np.searchsorted(before.keys, groups), max(before.keys.size - 1, 0))
        same = (before.keys[at] == groups) & (before.sizes[at] == sizes)
        same &= np.logical_and.reduceat(same_line[order], first)
        same &= (row_parts[:, rows] == chunk.current_parts[:, rows]).all(axis=0)
        for g, k in zip(np.flatnonzero(same).tolist(), at[same].tolist(), strict=True):
            text[g] = before.text[k]
        todo = ~same
    ids_sorted = [line_id_text[i] for i in order.tolist()]
    line_lists = [
        ", ".join(ids_sorted[a : a + n])
        for a, n in zip(first[todo].tolist(), sizes[todo].tolist(), strict=True)
    ]
    rows_todo = rows[todo]
    sub, units, discount, shipping, cost = row_parts[:, rows_todo]
    free_over = chunk.free_over[rows_todo]
    missing = np.where(shipping == 0, 0, np.maximum(free_over - (sub - discount), 0))
    missing = np.where(free_over < 0, -1, missing)
    merchant_ids = chunk.merchant_ids[rows_todo]
    written = [
        _MERCHANT % (m, name, ids, u, s, d, sh, co, fo, mi, m, ids, u, sh)
        for m, name, ids, u, s, d, sh, co, fo, mi in zip(
            merchant_ids.tolist(),
            _json_names(names.merchants, names.merchants_json, merchant_ids),
            line_lists,
            units.tolist(),
            sub.tolist(),
            discount.tolist(),
            shipping.tolist(),
            cost.tolist(),
            _null_or(free_over),
            _null_or(missing),
            strict=True,
        )
    ]
    for g, row in zip(np.flatnonzero(todo).tolist(), written, strict=True):
        text[g] = row
    ptr = np.zeros(carts.size + 1, np.int64)
    np.cumsum(np.bincount(group_cart, minlength=carts.size), out=ptr[1:])
    return _Rows([t for t in text if t is not None], ptr, groups, sizes)


def _complexity(chunk: PackedChunk, carts: np.ndarray) -> list[int]:
    """Per cart the product of its lines' eligible offer counts (``CartProblem.complexity``),
    as Python ints: exact whatever the cart's size."""
    b = chunk.batch
    counts = np.diff(b.offer_ptr)
    n_lines = b.line_ptr[carts + 1] - b.line_ptr[carts]
    lines = _ranges(b.line_ptr[carts], n_lines)
    per_line = counts[lines]
    starts = np.cumsum(n_lines) - n_lines
    # Within int64 (2**62 leaves room) the product is taken by NumPy; past it, exactly. A
    # packed cart has a line, and a line an offer (its own).
    log = np.add.reduceat(np.log2(per_line), starts)
    out = np.multiply.reduceat(per_line, starts).tolist()
    for k in np.flatnonzero(log >= 62).tolist():
        a = int(starts[k])
        out[k] = math.prod(per_line[a : a + int(n_lines[k])].tolist())
    return out


def suggestions_text(
    chunk: PackedChunk,
    *,
    carts: np.ndarray,
    kept: np.ndarray,
    choice: np.ndarray,
    parts: np.ndarray,
) -> list[SuggestionText]:
    """The stored suggestion of each packed cart of ``carts`` (positions in ``chunk``): the
    solver's ``choice`` (cart-local merchant per packed line) priced in ``parts``
    (``price_choice``), or, where ``kept``, the cart as it stands (``current_choice`` priced
    in ``current_parts``). The text ``PackedChunk``'s arrays give for the rows that
    ``answers.answer_fields`` builds for the same carts."""
    carts = np.asarray(carts, np.int64)
    kept = np.asarray(kept, bool)
    if not carts.size:
        return []
    b = chunk.batch
    n_lines = b.line_ptr[carts + 1] - b.line_ptr[carts]
    lines = _ranges(b.line_ptr[carts], n_lines)
    line_cart = np.repeat(np.arange(carts.size), n_lines)
    current = chunk.current_choice[lines]
    local = np.where(kept[line_cart], current, choice[lines])

    # Each line's offer at its chosen merchant: the first of its offers from that merchant.
    n_offers = b.offer_ptr[lines + 1] - b.offer_ptr[lines]
    offers = _ranges(b.offer_ptr[lines], n_offers)
    offer_line = np.repeat(np.arange(lines.size), n_offers)
    hit = np.flatnonzero(b.offer_merchant[offers] == local[offer_line])
    found, first = np.unique(offer_line[hit], return_index=True)
    if found.size != lines.size:
        missing = int(lines[np.setdiff1d(np.arange(lines.size), found)[0]])
        raise LookupError(f"packed line {missing} has no offer of its chosen merchant")
    new = offers[hit[first]]
    old = chunk.own[lines]

    names = chunk.names_for_notices()
    product_ids = chunk.product_ids[lines]
    line_ids = chunk.line_ids[lines]
    new_ids, old_ids = chunk.offer_ids[new], chunk.offer_ids[old]
    new_merchants, old_merchants = chunk.offer_merchants[new], chunk.offer_merchants[old]
    line_text = [
        _LINE % row
        for row in zip(
            line_ids.tolist(),
            product_ids.tolist(),
            _json_names(names.products, names.products_json, product_ids),
            b.line_qty[lines].tolist(),
            old_ids.tolist(),
            old_merchants.tolist(),
            _json_names(names.merchants, names.merchants_json, old_merchants),
            chunk.offer_prices[old].tolist(),
            new_ids.tolist(),
            new_merchants.tolist(),
            _json_names(names.merchants, names.merchants_json, new_merchants),
            chunk.offer_prices[new].tolist(),
            [_BOOL[k] for k in (new_ids != old_ids).tolist()],
            strict=True,
        )
    ]

    line_id_text = [str(i) for i in line_ids.tolist()]
    span = int(max(local.max(initial=0), current.max(initial=0))) + 1
    as_is = _merchant_rows(
        chunk,
        line_cart=line_cart,
        local=current,
        span=span,
        carts=carts,
        row_parts=chunk.current_parts,
        line_id_text=line_id_text,
        names=names,
    )
    suggested = _merchant_rows(
        chunk,
        line_cart=line_cart,
        local=local,
        span=span,
        carts=carts,
        row_parts=_row_parts(chunk, parts, kept, carts),
        line_id_text=line_id_text,
        names=names,
        like=(as_is, local == current),
    )
    s_ptr, c_ptr = suggested.ptr, as_is.ptr

    l_ptr = np.zeros(carts.size + 1, np.int64)
    np.cumsum(n_lines, out=l_ptr[1:])
    sizes = chunk.sizes[:, carts]
    out = []
    for la, lb, sa, sb, ca, cb, kc, nl, nm, no, cx in zip(
        l_ptr[:-1].tolist(),
        l_ptr[1:].tolist(),
        s_ptr[:-1].tolist(),
        s_ptr[1:].tolist(),
        c_ptr[:-1].tolist(),
        c_ptr[1:].tolist(),
        kept.tolist(),
        n_lines.tolist(),
        sizes[0].tolist(),
        sizes[1].tolist(),
        _complexity(chunk, carts),
        strict=True,
    ):
        rows = ", ".join(line_text[la:lb])
        out.append(
            SuggestionText(
                suggestion=_SUGGESTION
                % (
                    rows,
                    ", ".join(suggested.text[sa:sb]),
                    ", ".join(as_is.text[ca:cb]),
                    _BOOL[kc],
                ),
                lines=f"[{rows}]",
                problem_size=_SIZE % (nl, nm, no, cx),
            )
        )
    return out


def _row_parts(chunk: PackedChunk, parts: np.ndarray, kept: np.ndarray, carts: np.ndarray):
    """The parts each merchant row is priced by: ``current_parts`` in the kept carts' rows,
    ``parts`` elsewhere (both int64[5, M] over the chunk's packed merchants)."""
    if not kept.any():
        return parts
    mixed = parts.copy()
    ptr = chunk.batch.merch_ptr
    rows = _ranges(ptr[carts[kept]], ptr[carts[kept] + 1] - ptr[carts[kept]])
    mixed[:, rows] = chunk.current_parts[:, rows]
    return mixed
