"""Hypothesis strategies for random spec-format carts, shared by the gpu_engine tests.

Values are drawn to hit the spec's edges often: zero prices, ``per_extra_unit > base_fee``,
thresholds near typical subtotals, discounts of 0 or 10000 basis points, stock equal to quantity.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st


@st.composite
def carts(
    draw: st.DrawFn,
    *,
    max_items: int = 4,
    max_merchants: int = 4,
    max_quantity: int = 3,
) -> dict[str, Any]:
    """A valid cart: every line has at least one eligible offer."""
    n_items = draw(st.integers(1, max_items))
    n_merchants = draw(st.integers(1, max_merchants))
    items = [
        {"id": f"i{i}", "quantity": draw(st.integers(1, max_quantity))} for i in range(n_items)
    ]
    merchants = [draw(_merchant(f"m{m}")) for m in range(n_merchants)]
    offers = []
    for item in items:
        chosen = draw(
            st.lists(st.integers(0, n_merchants - 1), min_size=1, max_size=n_merchants, unique=True)
        )
        for k, m in enumerate(chosen):
            q = item["quantity"]
            # The first offer is always eligible; the others may be short of stock.
            stock = draw(st.one_of(st.none(), st.sampled_from([q, q + 5]))) if k == 0 else None
            if k and draw(st.booleans()):
                stock = draw(st.sampled_from([None, 0, q - 1, q, q + 1]))
            offers.append(
                {
                    "item": item["id"],
                    "merchant": f"m{m}",
                    "price": draw(st.one_of(st.just(0), st.integers(0, 3000))),
                    "stock": stock,
                }
            )
    return {"items": items, "merchants": merchants, "offers": offers}


@st.composite
def _merchant(draw: st.DrawFn, merchant_id: str) -> dict[str, Any]:
    shipping = {
        "base_fee": draw(st.sampled_from([0, 299, 499, 800])),
        "per_extra_unit": draw(st.sampled_from([0, 50, 100, 900])),
        "free_over": draw(st.one_of(st.none(), st.just(0), st.integers(1000, 8000))),
    }
    discount = draw(
        st.one_of(
            st.none(),
            st.fixed_dictionaries(
                {
                    "min_units": st.integers(1, 5),
                    "basis_points": st.one_of(st.sampled_from([0, 10000]), st.integers(1, 3000)),
                }
            ),
        )
    )
    return {"id": merchant_id, "shipping": shipping, "discount": discount}
