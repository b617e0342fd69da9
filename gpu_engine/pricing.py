"""The one pricing routine of the engine (spec: ``shared/spec/cart-pricing.md``).

:func:`merchant_cost` is the only place where the spec's cost formula is written. It is a
``numba.njit`` function: CPU solvers call it directly and the CUDA kernels call the same object
from inside ``@cuda.jit`` code (numba-cuda compiles CPU dispatchers as device functions), so
every solver computes the same cents.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numba
import numpy as np

from gpu_engine.problem import CartProblem, ProblemError
from gpu_engine.solution import MerchantCost

BP_SCALE = 10_000


@numba.njit(cache=True)
def merchant_cost(subtotal, units, base_fee, per_extra_unit, free_over, disc_min_units, disc_bp):
    """Cost of one merchant's shipment of ``units`` units worth ``subtotal`` cents.

    ``free_over`` < 0 means never free; ``disc_min_units`` == 0 means no discount. The discount
    ``subtotal * bp // 10000`` is computed as ``(s // 10000) * bp + (s % 10000) * bp // 10000``,
    which is equal for non-negative integers and never forms the large product, so int64 (or
    int32 on the GPU, where the host proved the values fit) cannot overflow.
    """
    if units == 0:
        return 0
    goods = subtotal
    if disc_min_units > 0 and units >= disc_min_units:
        goods = subtotal - (
            (subtotal // BP_SCALE) * disc_bp + ((subtotal % BP_SCALE) * disc_bp) // BP_SCALE
        )
    if free_over >= 0 and goods >= free_over:
        return goods
    return goods + base_fee + per_extra_unit * (units - 1)


@numba.njit(cache=True)
def assignment_cost(
    choice, quantity, price, base_fee, per_extra_unit, free_over, disc_min_units, disc_bp
):
    """Total cost of ``choice`` (merchant index per line). Eligibility is the caller's duty."""
    n_merchants = base_fee.shape[0]
    subtotal = np.zeros(n_merchants, dtype=np.int64)
    units = np.zeros(n_merchants, dtype=np.int64)
    for i in range(choice.shape[0]):
        m = choice[i]
        subtotal[m] += quantity[i] * price[i, m]
        units[m] += quantity[i]
    total = 0
    for m in range(n_merchants):
        total += merchant_cost(
            subtotal[m],
            units[m],
            base_fee[m],
            per_extra_unit[m],
            free_over[m],
            disc_min_units[m],
            disc_bp[m],
        )
    return total


# Which form of merchant_cost the CUDA kernels call: the njit dispatcher itself, or its Python
# source compiled by cuda.jit once a numba-cuda has refused the dispatcher (some versions do).
_device_variant = {"name": "njit"}


def device_pricing_variant() -> str:
    """The form CUDA kernels call now (part of every kernel cache key)."""
    return _device_variant["name"]


def device_pricing_fallback() -> bool:
    """Switch the kernels to the ``cuda.jit`` form after a numba-cuda refused the dispatcher;
    False when they already use it (the failure was something else)."""
    if _device_variant["name"] != "njit":
        return False
    _device_variant["name"] = "cuda.jit(py_func)"
    return True


def device_merchant_cost():
    """:func:`merchant_cost` as CUDA kernels call it (see :func:`device_pricing_variant`).
    numba.cuda is imported here, on use, never when this module is imported."""
    if _device_variant["name"] == "njit":
        return merchant_cost
    from numba import cuda

    return cuda.jit(device=True)(merchant_cost.py_func)


def choice_from_assignment(
    problem: CartProblem, assignment: Mapping[str, str] | Sequence[int] | np.ndarray
) -> np.ndarray:
    """A validated merchant-index-per-line vector from a dict (line id -> merchant id) or an
    index array. Raises :class:`ProblemError` for unknown ids, missing lines or ineligible picks."""
    if isinstance(assignment, Mapping):
        unknown = sorted(set(assignment) - set(problem.item_ids))
        if unknown:
            raise ProblemError(f"assignment.{unknown[0]}", unknown[0], "is not a line of the cart")
        merchant_index = {mid: j for j, mid in enumerate(problem.merchant_ids)}
        choice = np.empty(problem.n_items, dtype=np.int64)
        for i, item_id in enumerate(problem.item_ids):
            if item_id not in assignment:
                raise ProblemError(f"assignment.{item_id}", None, "line is not assigned")
            merchant_id = assignment[item_id]
            if merchant_id not in merchant_index:
                raise ProblemError(f"assignment.{item_id}", merchant_id, "is not a merchant")
            choice[i] = merchant_index[merchant_id]
    else:
        choice = np.asarray(assignment)
        if choice.shape != (problem.n_items,) or (choice.size and choice.dtype.kind not in "iu"):
            raise ProblemError("assignment", choice.tolist(), "must be one merchant index a line")
        choice = choice.astype(np.int64)
        bad = np.flatnonzero((choice < 0) | (choice >= problem.n_merchants))
        if bad.size:
            i = int(bad[0])
            raise ProblemError(f"assignment[{i}]", int(choice[i]), "is not a merchant index")
    ineligible = np.flatnonzero(problem.price[np.arange(problem.n_items), choice] < 0)
    if ineligible.size:
        i = int(ineligible[0])
        raise ProblemError(
            f"assignment.{problem.item_ids[i]}",
            problem.merchant_ids[int(choice[i])],
            "merchant has no eligible offer for this line",
        )
    return choice


def price_assignment(
    problem: CartProblem, assignment: Mapping[str, str] | Sequence[int] | np.ndarray
) -> list[MerchantCost]:
    """Per-merchant breakdown of an assignment (merchants that ship nothing are left out),
    in merchant order. The total is ``sum(c.cost for c in breakdown)``."""
    choice = choice_from_assignment(problem, assignment)
    rows = np.arange(problem.n_items)
    line_sub = problem.quantity * problem.price[rows, choice]
    shipped = np.bincount(choice, minlength=problem.n_merchants)
    breakdown = []
    for m in np.flatnonzero(shipped):
        lines = np.flatnonzero(choice == m)
        # Python ints: exact however large the cart.
        subtotal = sum(int(v) for v in line_sub[lines])
        units = sum(int(v) for v in problem.quantity[lines])
        params = [int(p[m]) for p in problem.merchant_params]
        cost = int(merchant_cost(subtotal, units, *params))
        discounted = int(merchant_cost(subtotal, units, 0, 0, -1, *params[3:]))
        breakdown.append(
            MerchantCost(
                merchant=problem.merchant_ids[m],
                lines=tuple(problem.item_ids[i] for i in lines),
                units=units,
                subtotal=subtotal,
                discount=subtotal - discounted,
                shipping=cost - discounted,
                cost=cost,
            )
        )
    return breakdown
