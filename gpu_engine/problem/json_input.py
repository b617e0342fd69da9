"""Reading the spec's JSON (version 1 and version 2 merchants, mixed) into columns.

A *column* is one fulfillment node of one merchant: the unit every solver assigns lines to. A
version 1 merchant is one column whose node id is the merchant's id (spec, "Version 1 input").
Every refusal is a :class:`ProblemError` naming the field and the value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gpu_engine.dense import UNLIMITED_STOCK
from gpu_engine.problem.errors import ProblemError

INT64_MAX = 2**63 - 1

_TOP_KEYS = frozenset({"items", "merchants", "offers"})
_ITEM_KEYS = frozenset({"id", "quantity", "weight_g"})
_V1_MERCHANT_KEYS = frozenset({"id", "shipping", "discount"})
_V2_MERCHANT_KEYS = frozenset({"id", "free_over", "discount", "nodes"})
_V1_SHIPPING_KEYS = frozenset({"base_fee", "per_extra_unit", "free_over"})
_NODE_KEYS = frozenset({"id", "shipping"})
_NODE_SHIPPING_KEYS = frozenset({"base_fee", "per_extra_unit", "weight_tiers", "per_kg_over"})
_TIER_KEYS = frozenset({"up_to_g", "fee"})
_DISCOUNT_KEYS = frozenset({"min_units", "basis_points"})
_OFFER_KEYS = frozenset({"item", "merchant", "node", "price", "stock"})


class HugeInteger:
    """A JSON integer of more digits than any field takes (Python refuses to convert more than
    4,300 digits at all): it stands in for the number until validation names its field."""

    def __init__(self, digits: str) -> None:
        self.digits = len(digits.lstrip("-"))
        self.negative = digits.startswith("-")

    def __repr__(self) -> str:
        sign = "-" if self.negative else ""
        return f"<{sign}integer of {self.digits} digits>"


# More digits than any int64 field can hold (19), with room for leading zeros' absence.
_MAX_INT_DIGITS = 40


def parse_int(text: str) -> int | HugeInteger:
    return HugeInteger(text) if len(text) > _MAX_INT_DIGITS else int(text)


def _is_int(value: Any) -> bool:
    # bool is an int subclass in Python, but true/false is not a count or an amount of cents.
    return isinstance(value, int) and not isinstance(value, bool)


def int_field(obj: Mapping, key: str, path: str, *, minimum: int, maximum: int = INT64_MAX) -> int:
    if key not in obj:
        raise ProblemError(f"{path}.{key}", None, "is required")
    value = obj[key]
    if isinstance(value, HugeInteger):
        bound = f">= {minimum}" if value.negative else f"<= {maximum}"
        raise ProblemError(f"{path}.{key}", value, f"must be {bound}")
    if not _is_int(value):
        raise ProblemError(f"{path}.{key}", value, "must be an integer")
    if value < minimum:
        raise ProblemError(f"{path}.{key}", value, f"must be >= {minimum}")
    if value > maximum:
        raise ProblemError(f"{path}.{key}", value, f"must be <= {maximum}")
    return value


def _optional_int(obj: Mapping, key: str, path: str, *, minimum: int, default: int) -> int:
    if obj.get(key) is None:
        return default
    return int_field(obj, key, path, minimum=minimum)


def json_object(value: Any, path: str, allowed: frozenset[str]) -> Mapping:
    if not isinstance(value, Mapping):
        raise ProblemError(path, value, "must be an object")
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise ProblemError(f"{path}.{unknown[0]}", value[unknown[0]], "is not a known field")
    return value


def _list_at(value: Any, path: str) -> list:
    if not isinstance(value, list):
        raise ProblemError(path, value, "must be a list")
    return value


def _id_field(obj: Mapping, key: str, path: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value:
        raise ProblemError(f"{path}.{key}", value, "must be a non-empty string")
    return value


@dataclass
class ParsedColumns:
    """The cart read into parallel lists: lines, merchants (owners), columns (nodes), offers."""

    item_ids: list[str] = field(default_factory=list)
    quantities: list[int] = field(default_factory=list)
    weights: list[int] = field(default_factory=list)
    owner_ids: list[str] = field(default_factory=list)
    free_over: list[int] = field(default_factory=list)
    disc_min_units: list[int] = field(default_factory=list)
    disc_bp: list[int] = field(default_factory=list)
    column_owner: list[int] = field(default_factory=list)
    node_ids: list[str] = field(default_factory=list)
    base_fee: list[int] = field(default_factory=list)
    per_extra_unit: list[int] = field(default_factory=list)
    tiers: list[list[tuple[int, int]]] = field(default_factory=list)
    per_kg_over: list[int] = field(default_factory=list)
    offer_item: list[int] = field(default_factory=list)
    offer_column: list[int] = field(default_factory=list)
    offer_price: list[int] = field(default_factory=list)
    offer_stock: list[int] = field(default_factory=list)


def parse_problem(data: Any) -> ParsedColumns:
    data = json_object(data, "$", _TOP_KEYS)
    parsed = ParsedColumns()
    _parse_items(_list_at(data.get("items"), "items"), parsed)
    if not parsed.item_ids:
        raise ProblemError("items", [], "the cart is empty")
    nodes = _parse_merchants(_list_at(data.get("merchants"), "merchants"), parsed)
    _parse_offers(_list_at(data.get("offers"), "offers"), parsed, nodes)
    return parsed


def _parse_items(items: list, parsed: ParsedColumns) -> None:
    seen: set[str] = set()
    for i, raw in enumerate(items):
        path = f"items[{i}]"
        item = json_object(raw, path, _ITEM_KEYS)
        item_id = _id_field(item, "id", path)
        if item_id in seen:
            raise ProblemError(f"{path}.id", item_id, "duplicate item id")
        seen.add(item_id)
        parsed.item_ids.append(item_id)
        parsed.quantities.append(int_field(item, "quantity", path, minimum=1))
        parsed.weights.append(_optional_int(item, "weight_g", path, minimum=0, default=0))


def _parse_discount(merchant: Mapping, path: str, parsed: ParsedColumns) -> None:
    discount = merchant.get("discount")
    if discount is None:
        parsed.disc_min_units.append(0)
        parsed.disc_bp.append(0)
        return
    dpath = f"{path}.discount"
    discount = json_object(discount, dpath, _DISCOUNT_KEYS)
    parsed.disc_min_units.append(int_field(discount, "min_units", dpath, minimum=1))
    parsed.disc_bp.append(int_field(discount, "basis_points", dpath, minimum=0, maximum=10_000))


def _parse_merchants(merchants: list, parsed: ParsedColumns) -> dict[str, dict[str, int]]:
    """Merchant id -> node id -> column index."""
    nodes: dict[str, dict[str, int]] = {}
    for m, raw in enumerate(merchants):
        path = f"merchants[{m}]"
        if not isinstance(raw, Mapping):
            raise ProblemError(path, raw, "must be an object")
        if "nodes" in raw and "shipping" in raw:
            raise ProblemError(
                f"{path}.shipping", raw["shipping"], "a merchant has nodes or shipping, not both"
            )
        version_2 = "nodes" in raw
        merchant = json_object(raw, path, _V2_MERCHANT_KEYS if version_2 else _V1_MERCHANT_KEYS)
        merchant_id = _id_field(merchant, "id", path)
        if merchant_id in nodes:
            raise ProblemError(f"{path}.id", merchant_id, "duplicate merchant id")
        parsed.owner_ids.append(merchant_id)
        if version_2:
            free_over = _optional_int(merchant, "free_over", path, minimum=0, default=-1)
            nodes[merchant_id] = _parse_nodes(merchant, path, m, parsed)
        else:
            spath = f"{path}.shipping"
            shipping = json_object(merchant.get("shipping"), spath, _V1_SHIPPING_KEYS)
            free_over = _optional_int(shipping, "free_over", spath, minimum=0, default=-1)
            nodes[merchant_id] = {merchant_id: len(parsed.node_ids)}
            _add_column(parsed, m, merchant_id, shipping, spath, tiers=[], per_kg_over=0)
        parsed.free_over.append(free_over)
        _parse_discount(merchant, path, parsed)
    return nodes


def _parse_nodes(merchant: Mapping, path: str, m: int, parsed: ParsedColumns) -> dict[str, int]:
    raw_nodes = _list_at(merchant.get("nodes"), f"{path}.nodes")
    if not raw_nodes:
        raise ProblemError(f"{path}.nodes", [], "a merchant needs at least one node")
    columns: dict[str, int] = {}
    for n, raw in enumerate(raw_nodes):
        npath = f"{path}.nodes[{n}]"
        node = json_object(raw, npath, _NODE_KEYS)
        node_id = _id_field(node, "id", npath)
        if node_id in columns:
            raise ProblemError(f"{npath}.id", node_id, "duplicate node id for this merchant")
        spath = f"{npath}.shipping"
        shipping = json_object(node.get("shipping"), spath, _NODE_SHIPPING_KEYS)
        tiers = _parse_tiers(shipping, spath)
        per_kg = _optional_int(shipping, "per_kg_over", spath, minimum=0, default=0)
        columns[node_id] = len(parsed.node_ids)
        _add_column(parsed, m, node_id, shipping, spath, tiers=tiers, per_kg_over=per_kg)
    return columns


def _parse_tiers(shipping: Mapping, spath: str) -> list[tuple[int, int]]:
    raw_tiers = shipping.get("weight_tiers")
    if raw_tiers is None:
        return []
    tiers: list[tuple[int, int]] = []
    for t, raw in enumerate(_list_at(raw_tiers, f"{spath}.weight_tiers")):
        tpath = f"{spath}.weight_tiers[{t}]"
        tier = json_object(raw, tpath, _TIER_KEYS)
        up_to = int_field(tier, "up_to_g", tpath, minimum=0)
        fee = int_field(tier, "fee", tpath, minimum=0)
        if tiers and up_to <= tiers[-1][0]:
            raise ProblemError(f"{tpath}.up_to_g", up_to, "tiers must have increasing up_to_g")
        tiers.append((up_to, fee))
    return tiers


def _add_column(
    parsed: ParsedColumns,
    owner: int,
    node_id: str,
    shipping: Mapping,
    spath: str,
    *,
    tiers: list[tuple[int, int]],
    per_kg_over: int,
) -> None:
    parsed.column_owner.append(owner)
    parsed.node_ids.append(node_id)
    parsed.base_fee.append(int_field(shipping, "base_fee", spath, minimum=0))
    parsed.per_extra_unit.append(int_field(shipping, "per_extra_unit", spath, minimum=0))
    parsed.tiers.append(tiers)
    parsed.per_kg_over.append(per_kg_over)


def _parse_offers(offers: list, parsed: ParsedColumns, nodes: dict[str, dict[str, int]]) -> None:
    item_index = {v: i for i, v in enumerate(parsed.item_ids)}
    for o, raw in enumerate(offers):
        path = f"offers[{o}]"
        offer = json_object(raw, path, _OFFER_KEYS)
        item_id = offer.get("item")
        if not isinstance(item_id, str) or item_id not in item_index:
            raise ProblemError(f"{path}.item", item_id, "names no item of the cart")
        merchant_id = offer.get("merchant")
        if not isinstance(merchant_id, str) or merchant_id not in nodes:
            raise ProblemError(f"{path}.merchant", merchant_id, "names no merchant of the problem")
        parsed.offer_item.append(item_index[item_id])
        parsed.offer_column.append(_offer_column(offer, path, nodes[merchant_id]))
        parsed.offer_price.append(int_field(offer, "price", path, minimum=0))
        stock = offer.get("stock")
        parsed.offer_stock.append(
            UNLIMITED_STOCK if stock is None else int_field(offer, "stock", path, minimum=0)
        )


def _offer_column(offer: Mapping, path: str, columns: dict[str, int]) -> int:
    if "node" not in offer:
        if len(columns) != 1:
            raise ProblemError(f"{path}.node", None, "is required: the merchant has several nodes")
        return next(iter(columns.values()))
    node_id = offer["node"]
    if not isinstance(node_id, str) or node_id not in columns:
        raise ProblemError(f"{path}.node", node_id, "names no node of the offer's merchant")
    return columns[node_id]
