"""The cart problem of ``shared/spec/cart-pricing.md``: validation and dense compilation.

A :class:`CartProblem` is built once (from the spec's JSON, or from arrays the storefront
already holds) and compiled into dense int64 NumPy arrays that every solver reuses, CPU or GPU
(:mod:`gpu_engine.dense`). Validation refuses bad input with a :class:`ProblemError` naming the
field and the value.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpu_engine.dense import NO_OFFER, UNLIMITED_STOCK, candidate_order, eligibility, readonly

# Totals must fit int64 with headroom: solvers add a few partial totals before comparing, and the
# DP solvers use 2**62 as "infeasible".
MONEY_LIMIT = 2**62
INT64_MAX = 2**63 - 1

_ITEM_KEYS = frozenset({"id", "quantity"})
_MERCHANT_KEYS = frozenset({"id", "shipping", "discount"})
_SHIPPING_KEYS = frozenset({"base_fee", "per_extra_unit", "free_over"})
_DISCOUNT_KEYS = frozenset({"min_units", "basis_points"})
_OFFER_KEYS = frozenset({"item", "merchant", "price", "stock"})
_TOP_KEYS = frozenset({"items", "merchants", "offers"})


class ProblemError(ValueError):
    """Bad cart input. ``field`` is a path such as ``offers[3].price``; ``value`` the bad value."""

    def __init__(self, field: str, value: Any, reason: str) -> None:
        self.field = field
        self.value = value
        self.reason = reason
        super().__init__(f"{field}: {reason} (got {value!r})")


class CapacityError(ProblemError):
    """A valid cart that is too large for the chosen algorithm (memory, int64 numbering)."""


class BudgetError(CapacityError, RuntimeError):
    """A valid cart that the chosen algorithm cannot answer within its budget: refused before
    it starts (its predicted time is far over) or nothing found in time. ``field`` is
    ``budget_ms``. Also a RuntimeError: callers that fall back on a run-time failure (the
    planner) treat it as one."""


class DeviceUnavailable(CapacityError):
    """A GPU algorithm asked for where no CUDA GPU (nor the simulator) is available. ``field``
    is ``algorithm``."""


# --- JSON-level validation -------------------------------------------------------------------


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


def _parse_int(text: str) -> int | HugeInteger:
    return HugeInteger(text) if len(text) > _MAX_INT_DIGITS else int(text)


def _is_int(value: Any) -> bool:
    # bool is an int subclass in Python, but true/false is not a count or an amount of cents.
    return isinstance(value, int) and not isinstance(value, bool)


def _int_field(obj: Mapping, key: str, path: str, *, minimum: int, maximum: int = INT64_MAX) -> int:
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


def _optional_int_field(obj: Mapping, key: str, path: str, *, minimum: int) -> int | None:
    if obj.get(key) is None:
        return None
    return _int_field(obj, key, path, minimum=minimum)


def _object(value: Any, path: str, allowed: frozenset[str]) -> Mapping:
    if not isinstance(value, Mapping):
        raise ProblemError(path, value, "must be an object")
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise ProblemError(f"{path}.{unknown[0]}", value[unknown[0]], "is not a known field")
    return value


def _list(obj: Mapping, key: str) -> list:
    value = obj.get(key)
    if not isinstance(value, list):
        raise ProblemError(key, value, "must be a list")
    return value


def _id_field(obj: Mapping, key: str, path: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value:
        raise ProblemError(f"{path}.{key}", value, "must be a non-empty string")
    return value


def _parse_items(data: Mapping) -> tuple[list[str], list[int]]:
    ids: list[str] = []
    quantities: list[int] = []
    seen: set[str] = set()
    for i, raw in enumerate(_list(data, "items")):
        path = f"items[{i}]"
        item = _object(raw, path, _ITEM_KEYS)
        item_id = _id_field(item, "id", path)
        if item_id in seen:
            raise ProblemError(f"{path}.id", item_id, "duplicate item id")
        seen.add(item_id)
        ids.append(item_id)
        quantities.append(_int_field(item, "quantity", path, minimum=1))
    return ids, quantities


def _parse_merchants(data: Mapping) -> dict[str, list]:
    cols: dict[str, list] = {
        k: []
        for k in ("ids", "base_fee", "per_extra_unit", "free_over", "disc_min_units", "disc_bp")
    }
    seen: set[str] = set()
    for m, raw in enumerate(_list(data, "merchants")):
        path = f"merchants[{m}]"
        merchant = _object(raw, path, _MERCHANT_KEYS)
        merchant_id = _id_field(merchant, "id", path)
        if merchant_id in seen:
            raise ProblemError(f"{path}.id", merchant_id, "duplicate merchant id")
        seen.add(merchant_id)
        shipping = _object(merchant.get("shipping"), f"{path}.shipping", _SHIPPING_KEYS)
        spath = f"{path}.shipping"
        cols["ids"].append(merchant_id)
        cols["base_fee"].append(_int_field(shipping, "base_fee", spath, minimum=0))
        cols["per_extra_unit"].append(_int_field(shipping, "per_extra_unit", spath, minimum=0))
        free_over = _optional_int_field(shipping, "free_over", spath, minimum=0)
        cols["free_over"].append(-1 if free_over is None else free_over)
        discount = merchant.get("discount")
        if discount is None:
            cols["disc_min_units"].append(0)
            cols["disc_bp"].append(0)
            continue
        dpath = f"{path}.discount"
        discount = _object(discount, dpath, _DISCOUNT_KEYS)
        cols["disc_min_units"].append(_int_field(discount, "min_units", dpath, minimum=1))
        cols["disc_bp"].append(
            _int_field(discount, "basis_points", dpath, minimum=0, maximum=10_000)
        )
    return cols


def _parse_offers(
    data: Mapping, item_index: dict[str, int], merchant_index: dict[str, int]
) -> dict[str, list[int]]:
    cols: dict[str, list[int]] = {"item": [], "merchant": [], "price": [], "stock": []}
    for o, raw in enumerate(_list(data, "offers")):
        path = f"offers[{o}]"
        offer = _object(raw, path, _OFFER_KEYS)
        item_id = offer.get("item")
        if not isinstance(item_id, str) or item_id not in item_index:
            raise ProblemError(f"{path}.item", item_id, "names no item of the cart")
        merchant_id = offer.get("merchant")
        if not isinstance(merchant_id, str) or merchant_id not in merchant_index:
            raise ProblemError(f"{path}.merchant", merchant_id, "names no merchant of the problem")
        cols["item"].append(item_index[item_id])
        cols["merchant"].append(merchant_index[merchant_id])
        cols["price"].append(_int_field(offer, "price", path, minimum=0))
        stock = _optional_int_field(offer, "stock", path, minimum=0)
        cols["stock"].append(UNLIMITED_STOCK if stock is None else stock)
    return cols


# --- array-level validation and compilation --------------------------------------------------


def _int_array(name: str, values: Any, length: int | None = None) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1:
        raise ProblemError(name, array.shape, "must be a one-dimensional array")
    if array.size and array.dtype.kind not in "iu":
        raise ProblemError(name, str(array.dtype), "must hold integers")
    if length is not None and array.size != length:
        raise ProblemError(name, array.size, f"must have length {length}")
    if array.dtype.kind == "u" and array.size and int(array.max()) > INT64_MAX:
        raise ProblemError(name, int(array.max()), "does not fit int64")
    return array.astype(np.int64)


def _check_min(name: str, array: np.ndarray, minimum: int) -> None:
    bad = np.flatnonzero(array < minimum)
    if bad.size:
        i = int(bad[0])
        raise ProblemError(f"{name}[{i}]", int(array[i]), f"must be >= {minimum}")


def _check_ids(name: str, ids: Sequence[Any]) -> tuple[str, ...]:
    seen: set[str] = set()
    for i, value in enumerate(ids):
        if not isinstance(value, str) or not value:
            raise ProblemError(f"{name}[{i}]", value, "must be a non-empty string")
        if value in seen:
            raise ProblemError(f"{name}[{i}]", value, f"duplicate {name[:-1]}")
        seen.add(value)
    return tuple(ids)


@dataclass(frozen=True, eq=False)
class CartProblem:
    """An immutable, validated cart problem compiled to dense arrays.

    Arrays (all read-only): ``quantity`` int64[n_items]; ``price`` int64[n_items, n_merchants],
    the unit price of the line's *eligible* offer or -1; ``base_fee``, ``per_extra_unit``,
    ``free_over`` (-1 = never free), ``disc_min_units`` (0 = no discount), ``disc_bp``
    int64[n_merchants]; ``cand_merchant`` int32[n_items, max_cands], each line's eligible
    merchants by ascending unit price (ties by merchant index), padded with -1; ``cand_count``
    int32[n_items]. ``offer_price``/``offer_stock`` keep every offer, eligible or not, so that
    :meth:`to_dict` round-trips.
    """

    item_ids: tuple[str, ...]
    merchant_ids: tuple[str, ...]
    quantity: np.ndarray
    price: np.ndarray
    base_fee: np.ndarray
    per_extra_unit: np.ndarray
    free_over: np.ndarray
    disc_min_units: np.ndarray
    disc_bp: np.ndarray
    cand_merchant: np.ndarray
    cand_count: np.ndarray
    offer_price: np.ndarray
    offer_stock: np.ndarray
    complexity: int

    @property
    def n_items(self) -> int:
        return len(self.item_ids)

    @property
    def n_merchants(self) -> int:
        return len(self.merchant_ids)

    @property
    def merchant_params(self) -> tuple[np.ndarray, ...]:
        """The per-merchant arrays in the argument order of the njit pricing routines."""
        return (
            self.base_fee,
            self.per_extra_unit,
            self.free_over,
            self.disc_min_units,
            self.disc_bp,
        )

    # --- constructors ---

    @classmethod
    def from_json(cls, text: str | bytes) -> CartProblem:
        """The problem of a JSON text (UTF-8 bytes or str; a leading byte-order mark is
        allowed). Integers too long for any field are kept as :class:`HugeInteger`, so that
        the field that holds one is named in the refusal."""
        if isinstance(text, bytes | bytearray):
            try:
                text = bytes(text).decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ProblemError("$", f"byte {exc.start}", "is not valid UTF-8") from None
        try:
            data = json.loads(text.removeprefix("\ufeff"), parse_int=_parse_int)
        except json.JSONDecodeError as exc:
            raise ProblemError("$", str(exc), "is not valid JSON") from None
        except RecursionError:
            # A cart is three levels deep; CPython's decoder recurses per level.
            raise ProblemError("$", "deeply nested JSON", "is nested too deeply") from None
        return cls.from_dict(data)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CartProblem:
        data = _object(data, "$", _TOP_KEYS)
        item_ids, quantities = _parse_items(data)
        if not item_ids:
            raise ProblemError("items", [], "the cart is empty")
        merchants = _parse_merchants(data)
        offers = _parse_offers(
            data,
            {v: i for i, v in enumerate(item_ids)},
            {v: j for j, v in enumerate(merchants["ids"])},
        )
        return cls.from_arrays(
            item_ids=item_ids,
            quantities=quantities,
            merchant_ids=merchants["ids"],
            base_fee=merchants["base_fee"],
            per_extra_unit=merchants["per_extra_unit"],
            free_over=merchants["free_over"],
            disc_min_units=merchants["disc_min_units"],
            disc_bp=merchants["disc_bp"],
            offer_item=offers["item"],
            offer_merchant=offers["merchant"],
            offer_price=offers["price"],
            offer_stock=offers["stock"],
        )

    @classmethod
    def from_arrays(
        cls,
        *,
        item_ids: Sequence[str],
        quantities: Sequence[int] | np.ndarray,
        merchant_ids: Sequence[str],
        base_fee: Sequence[int] | np.ndarray,
        per_extra_unit: Sequence[int] | np.ndarray,
        free_over: Sequence[int] | np.ndarray,
        disc_min_units: Sequence[int] | np.ndarray,
        disc_bp: Sequence[int] | np.ndarray,
        offer_item: Sequence[int] | np.ndarray,
        offer_merchant: Sequence[int] | np.ndarray,
        offer_price: Sequence[int] | np.ndarray,
        offer_stock: Sequence[int] | np.ndarray,
    ) -> CartProblem:
        """Build from columns. ``free_over`` -1 = never free; ``disc_min_units`` 0 = no
        discount; offers are parallel arrays of (item index, merchant index, unit price, stock)
        with stock -1 = unlimited."""
        items = _check_ids("items", list(item_ids))
        merchants = _check_ids("merchants", list(merchant_ids))
        if not items:
            raise ProblemError("items", [], "the cart is empty")
        n, m = len(items), len(merchants)
        qty = _int_array("quantities", quantities, n)
        _check_min("quantities", qty, 1)
        mcols = {
            "base_fee": _int_array("base_fee", base_fee, m),
            "per_extra_unit": _int_array("per_extra_unit", per_extra_unit, m),
            "free_over": _int_array("free_over", free_over, m),
            "disc_min_units": _int_array("disc_min_units", disc_min_units, m),
            "disc_bp": _int_array("disc_bp", disc_bp, m),
        }
        for name, minimum in (("base_fee", 0), ("per_extra_unit", 0), ("free_over", -1)):
            _check_min(name, mcols[name], minimum)
        _check_min("disc_min_units", mcols["disc_min_units"], 0)
        _check_min("disc_bp", mcols["disc_bp"], 0)
        _check_max("disc_bp", mcols["disc_bp"], 10_000)
        o_item = _int_array("offer_item", offer_item)
        k = o_item.size
        o_merchant = _int_array("offer_merchant", offer_merchant, k)
        o_price = _int_array("offer_price", offer_price, k)
        o_stock = _int_array("offer_stock", offer_stock, k)
        _check_range("offer_item", o_item, n)
        _check_range("offer_merchant", o_merchant, m)
        _check_min("offer_price", o_price, 0)
        _check_min("offer_stock", o_stock, -1)
        grid_price = np.full((n, m), NO_OFFER, dtype=np.int64)
        grid_stock = np.full((n, m), UNLIMITED_STOCK, dtype=np.int64)
        for o in range(k):
            i, j = int(o_item[o]), int(o_merchant[o])
            if grid_price[i, j] != NO_OFFER:
                raise ProblemError(
                    f"offers[{o}]", (items[i], merchants[j]), "second offer for (item, merchant)"
                )
            grid_price[i, j] = o_price[o]
            grid_stock[i, j] = o_stock[o]
        return cls._compile(items, merchants, qty, mcols, grid_price, grid_stock)

    @classmethod
    def _compile(
        cls,
        items: tuple[str, ...],
        merchants: tuple[str, ...],
        qty: np.ndarray,
        mcols: dict[str, np.ndarray],
        grid_price: np.ndarray,
        grid_stock: np.ndarray,
    ) -> CartProblem:
        eligible, price = eligibility(grid_price, grid_stock, qty)
        counts = eligible.sum(axis=1)
        missing = [items[i] for i in np.flatnonzero(counts == 0)]
        if missing:
            raise ProblemError("items", missing, "no eligible offer (price and stock) for lines")
        _check_money_bounds(qty, price, mcols)
        cand = candidate_order(eligible, price, int(counts.max()))
        return cls(
            item_ids=items,
            merchant_ids=merchants,
            quantity=readonly(qty),
            price=readonly(price),
            cand_merchant=readonly(cand),
            cand_count=readonly(counts.astype(np.int32)),
            offer_price=readonly(grid_price),
            offer_stock=readonly(grid_stock),
            complexity=math.prod(int(c) for c in counts),
            **{name: readonly(arr) for name, arr in mcols.items()},
        )

    # --- serialisation ---

    def to_dict(self) -> dict[str, Any]:
        items = [
            {"id": item_id, "quantity": int(q)}
            for item_id, q in zip(self.item_ids, self.quantity, strict=True)
        ]
        merchants = [self._merchant_dict(j) for j in range(self.n_merchants)]
        offers = []
        for i, j in zip(*np.nonzero(self.offer_price != NO_OFFER), strict=True):
            stock = int(self.offer_stock[i, j])
            offers.append(
                {
                    "item": self.item_ids[i],
                    "merchant": self.merchant_ids[j],
                    "price": int(self.offer_price[i, j]),
                    "stock": None if stock == UNLIMITED_STOCK else stock,
                }
            )
        return {"items": items, "merchants": merchants, "offers": offers}

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    def _merchant_dict(self, j: int) -> dict[str, Any]:
        free_over = int(self.free_over[j])
        min_units = int(self.disc_min_units[j])
        return {
            "id": self.merchant_ids[j],
            "shipping": {
                "base_fee": int(self.base_fee[j]),
                "per_extra_unit": int(self.per_extra_unit[j]),
                "free_over": None if free_over < 0 else free_over,
            },
            "discount": None
            if min_units == 0
            else {"min_units": min_units, "basis_points": int(self.disc_bp[j])},
        }

    def __repr__(self) -> str:
        return (
            f"CartProblem(n_items={self.n_items}, n_merchants={self.n_merchants}, "
            f"complexity={self.complexity})"
        )


def _check_max(name: str, array: np.ndarray, maximum: int) -> None:
    bad = np.flatnonzero(array > maximum)
    if bad.size:
        i = int(bad[0])
        raise ProblemError(f"{name}[{i}]", int(array[i]), f"must be <= {maximum}")


def _check_range(name: str, array: np.ndarray, size: int) -> None:
    bad = np.flatnonzero((array < 0) | (array >= size))
    if bad.size:
        i = int(bad[0])
        raise ProblemError(f"{name}[{i}]", int(array[i]), f"must be an index in 0..{size - 1}")


def _check_money_bounds(qty: np.ndarray, price: np.ndarray, mcols: dict[str, np.ndarray]) -> None:
    """Refuse carts whose worst-case total (every part of every solver) could leave int64.

    The bound covers the dearest eligible offer per line, a shipment per line at the highest
    base fee (the relaxed DP may price that many) and extra units at the highest per-unit fee.
    Python ints, so the check itself cannot overflow.
    """
    units = sum(int(q) for q in qty)
    goods = sum(int(q) * int(p) for q, p in zip(qty, price.max(axis=1), strict=True))
    base = max((int(b) for b in mcols["base_fee"]), default=0)
    extra = max((int(e) for e in mcols["per_extra_unit"]), default=0)
    bound = goods + len(qty) * base + extra * units + units
    if bound >= MONEY_LIMIT:
        raise ProblemError("items", bound, f"worst-case cart total must stay below {MONEY_LIMIT}")
