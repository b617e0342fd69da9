import json

import numpy as np
import pytest
from hypothesis import given, settings

from gpu_engine import CartProblem, ProblemError
from tests.gpu_engine.strategies import carts

BASE = {
    "items": [{"id": "sku-7", "quantity": 2}, {"id": "sku-8", "quantity": 1}],
    "merchants": [
        {
            "id": "m-3",
            "shipping": {"base_fee": 499, "per_extra_unit": 100, "free_over": 5000},
            "discount": {"min_units": 3, "basis_points": 500},
        },
        {"id": "m-4", "shipping": {"base_fee": 0, "per_extra_unit": 0, "free_over": None}},
    ],
    "offers": [
        {"item": "sku-7", "merchant": "m-3", "price": 1999, "stock": 10},
        {"item": "sku-7", "merchant": "m-4", "price": 2100, "stock": None},
        {"item": "sku-8", "merchant": "m-4", "price": 500, "stock": 1},
        {"item": "sku-8", "merchant": "m-3", "price": 400, "stock": 0},
    ],
}


def _copy():
    return json.loads(json.dumps(BASE))


def test_compiles_dense_arrays():
    p = CartProblem.from_dict(BASE)
    assert p.item_ids == ("sku-7", "sku-8")
    assert p.merchant_ids == ("m-3", "m-4")
    assert p.quantity.tolist() == [2, 1]
    # sku-8 at m-3 has stock 0 < quantity: not eligible.
    assert p.price.tolist() == [[1999, 2100], [-1, 500]]
    assert p.free_over.tolist() == [5000, -1]
    assert p.disc_min_units.tolist() == [3, 0]
    assert p.disc_bp.tolist() == [500, 0]
    assert p.cand_merchant.tolist() == [[0, 1], [1, -1]]
    assert p.cand_count.tolist() == [2, 1]
    assert p.complexity == 2
    assert (p.n_items, p.n_merchants) == (2, 2)
    assert p.price.dtype == np.int64 and p.cand_merchant.dtype == np.int32


def test_is_immutable():
    p = CartProblem.from_dict(BASE)
    with pytest.raises(ValueError):
        p.price[0, 0] = 1
    with pytest.raises(AttributeError):
        p.complexity = 3


def test_round_trips_through_dict_and_json():
    p = CartProblem.from_dict(BASE)
    again = CartProblem.from_json(p.to_json())
    assert again.to_dict() == p.to_dict()
    assert sorted(map(json.dumps, p.to_dict()["offers"])) == sorted(map(json.dumps, BASE["offers"]))


@settings(max_examples=30, deadline=None)
@given(carts())
def test_random_carts_round_trip(cart):
    p = CartProblem.from_dict(cart)
    assert CartProblem.from_dict(p.to_dict()).to_dict() == p.to_dict()


def test_complexity_is_exact_python_int():
    cart = {
        "items": [{"id": f"i{i}", "quantity": 1} for i in range(30)],
        "merchants": [
            {"id": f"m{m}", "shipping": {"base_fee": 1, "per_extra_unit": 0, "free_over": None}}
            for m in range(10)
        ],
        "offers": [
            {"item": f"i{i}", "merchant": f"m{m}", "price": 1, "stock": None}
            for i in range(30)
            for m in range(10)
        ],
    }
    assert CartProblem.from_dict(cart).complexity == 10**30


def test_from_arrays_matches_from_dict():
    p = CartProblem.from_arrays(
        item_ids=["sku-7", "sku-8"],
        quantities=np.array([2, 1]),
        merchant_ids=["m-3", "m-4"],
        base_fee=[499, 0],
        per_extra_unit=[100, 0],
        free_over=[5000, -1],
        disc_min_units=[3, 0],
        disc_bp=[500, 0],
        offer_item=np.array([0, 0, 1, 1], dtype=np.int32),
        offer_merchant=[0, 1, 1, 0],
        offer_price=[1999, 2100, 500, 400],
        offer_stock=[10, -1, 1, 0],
    )
    assert p.to_dict() == CartProblem.from_dict(BASE).to_dict()


def _mutated(path, value):
    data = _copy()
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return data


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        (("items", 0, "quantity"), 0, "items[0].quantity"),
        (("items", 0, "quantity"), 1.5, "items[0].quantity"),
        (("items", 0, "quantity"), True, "items[0].quantity"),
        (("items", 0, "quantity"), "2", "items[0].quantity"),
        (("items", 1, "id"), "sku-7", "items[1].id"),
        (("items", 1, "id"), "", "items[1].id"),
        (("merchants", 1, "id"), "m-3", "merchants[1].id"),
        (("merchants", 0, "shipping", "base_fee"), -1, "merchants[0].shipping.base_fee"),
        (
            ("merchants", 0, "shipping", "per_extra_unit"),
            9.5,
            "merchants[0].shipping.per_extra_unit",
        ),
        (("merchants", 0, "shipping", "free_over"), -5, "merchants[0].shipping.free_over"),
        (("merchants", 0, "discount", "min_units"), 0, "merchants[0].discount.min_units"),
        (("merchants", 0, "discount", "basis_points"), 10001, "merchants[0].discount.basis_points"),
        (("merchants", 0, "shipping"), None, "merchants[0].shipping"),
        (("merchants", 0, "colour"), "red", "merchants[0].colour"),
        (("offers", 0, "price"), -1, "offers[0].price"),
        (("offers", 0, "price"), 19.99, "offers[0].price"),
        (("offers", 0, "stock"), -1, "offers[0].stock"),
        (("offers", 0, "item"), "nope", "offers[0].item"),
        (("offers", 0, "merchant"), "nope", "offers[0].merchant"),
        (("offers",), "x", "offers"),
        (("items",), [], "items"),
    ],
)
def test_bad_input_names_field_and_value(path, value, field):
    with pytest.raises(ProblemError) as info:
        CartProblem.from_dict(_mutated(path, value))
    assert info.value.field == field
    assert field in str(info.value)
    if value not in ("x", []) and value is not None:
        assert repr(value) in str(info.value) or repr(info.value.value) in str(info.value)


def test_duplicate_offer_pair_is_refused():
    data = _copy()
    data["offers"].append({"item": "sku-7", "merchant": "m-3", "price": 1, "stock": None})
    with pytest.raises(ProblemError) as info:
        CartProblem.from_dict(data)
    assert info.value.field == "offers[4]"
    assert "sku-7" in str(info.value) and "m-3" in str(info.value)


def test_every_infeasible_line_is_listed_in_one_error():
    data = _copy()
    data["items"].append({"id": "sku-9", "quantity": 5})
    data["items"].append({"id": "sku-10", "quantity": 1})
    data["offers"].append({"item": "sku-9", "merchant": "m-3", "price": 100, "stock": 4})
    with pytest.raises(ProblemError) as info:
        CartProblem.from_dict(data)
    assert info.value.field == "items"
    assert info.value.value == ["sku-9", "sku-10"]
    assert "sku-9" in str(info.value) and "sku-10" in str(info.value)


def test_bad_json_and_non_object():
    with pytest.raises(ProblemError) as info:
        CartProblem.from_json("{nope")
    assert info.value.field == "$"
    with pytest.raises(ProblemError):
        CartProblem.from_dict([1, 2])


def test_overflowing_cart_is_refused():
    data = _mutated(("offers", 0, "price"), 2**62)
    with pytest.raises(ProblemError) as info:
        CartProblem.from_dict(data)
    assert info.value.field == "items"
    with pytest.raises(ProblemError) as info:
        CartProblem.from_dict(_mutated(("offers", 0, "price"), 2**64))
    assert info.value.field == "offers[0].price"


def test_from_arrays_validates():
    kwargs = {
        "item_ids": ["a"],
        "quantities": [1],
        "merchant_ids": ["m"],
        "base_fee": [0],
        "per_extra_unit": [0],
        "free_over": [-1],
        "disc_min_units": [0],
        "disc_bp": [0],
        "offer_item": [0],
        "offer_merchant": [0],
        "offer_price": [5],
        "offer_stock": [-1],
    }
    assert CartProblem.from_arrays(**kwargs).complexity == 1
    for key, bad, field in [
        ("offer_merchant", [3], "offer_merchant[0]"),
        ("quantities", [0], "quantities[0]"),
        ("disc_bp", [20000], "disc_bp[0]"),
        ("offer_price", [1.5], "offer_price"),
        ("merchant_ids", ["m", "m"], "merchants[1]"),
        ("base_fee", [1, 2], "base_fee"),
    ]:
        with pytest.raises(ProblemError) as info:
            CartProblem.from_arrays(**{**kwargs, key: bad})
        assert info.value.field == field, key
