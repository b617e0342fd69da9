"""From the batch's raw answers (a merchant per line) to :class:`Solution` objects.

Every answer is re-priced here by the pricing routine (one njit pass over the whole batch, per
cart and merchant: subtotal, units, discount, shipping, cost), and a cart whose re-priced total
differs from the kernel's raises :class:`SolverInconsistency`, as :func:`make_solution` does for
the per-cart solvers: a kernel bug cannot reach a shopper as a wrong price. Doing it for the
batch at once keeps the per-cart Python work to building the objects.
"""

from __future__ import annotations

from collections.abc import Sequence

import numba
import numpy as np

from gpu_engine.batch.pack import METHOD_NAMES, TOO_LARGE, PackedBatch
from gpu_engine.planning import rates
from gpu_engine.pricing import merchant_cost
from gpu_engine.problem import CartProblem
from gpu_engine.results import SolverInconsistency, make_solution
from gpu_engine.solution import MerchantCost, Parcel, Solution

PROOFS = ("exact: every assignment priced", "exact: merchant-by-merchant subset DP")


@numba.njit(cache=True)
def _reprice(
    line_ptr,
    line_qty,
    offer_ptr,
    offer_merchant,
    offer_amount,
    merch_ptr,
    merch_row,
    params,
    choice,
):
    """Per packed merchant (subtotal, units, discount, shipping, cost) of the chosen lines, and
    per cart the total."""
    base, extra, free_over, dmin, dbp = params
    n_merch = merch_row.size
    out = np.zeros((5, n_merch), dtype=np.int64)
    totals = np.zeros(line_ptr.size - 1, dtype=np.int64)
    for c in range(line_ptr.size - 1):
        m0 = merch_ptr[c]
        for line in range(line_ptr[c], line_ptr[c + 1]):
            m = choice[line]
            for o in range(offer_ptr[line], offer_ptr[line + 1]):
                if offer_merchant[o] == m:
                    out[0, m0 + m] += offer_amount[o]
            out[1, m0 + m] += line_qty[line]
        for j in range(m0, merch_ptr[c + 1]):
            sub = out[0, j]
            units = out[1, j]
            g = merch_row[j]
            cost = merchant_cost(sub, units, base[g], extra[g], free_over[g], dmin[g], dbp[g])
            goods = merchant_cost(sub, units, 0, 0, -1, dmin[g], dbp[g])
            out[2, j] = sub - goods
            out[3, j] = cost - goods
            out[4, j] = cost
            totals[c] += cost
    return out, totals


def price_choice(batch: PackedBatch, choice: np.ndarray, offer_amount: np.ndarray | None = None):
    """The pricing routine over a whole packed batch: ``choice`` gives each packed line its
    cart-local merchant; ``offer_amount`` (default the batch's) may replace the amounts, e.g.
    to price lines at other unit prices. Returns (parts int64[5, M]: per packed merchant
    subtotal, units, discount, shipping, cost of its chosen lines; totals int64[C])."""
    return _reprice(
        batch.line_ptr,
        batch.line_qty,
        batch.offer_ptr,
        batch.offer_merchant,
        batch.offer_amount if offer_amount is None else offer_amount,
        batch.merch_ptr,
        batch.merch_row,
        batch.params,
        np.ascontiguousarray(choice, dtype=np.int64),
    )


def build_solutions(
    problems: Sequence[CartProblem],
    batch: PackedBatch,
    method: np.ndarray,
    total: np.ndarray,
    choice: np.ndarray,
    *,
    device: str,
    batch_ms: float,
) -> list[Solution | None]:
    """One Solution per problem (None where the plan said TOO_LARGE)."""
    solved = (method != TOO_LARGE)[np.repeat(np.arange(batch.n_carts), np.diff(batch.line_ptr))]
    safe_choice = np.where(solved, choice, 0)
    parts, priced = price_choice(batch, safe_choice)
    wrong = np.flatnonzero((method != TOO_LARGE) & (priced != total))
    if wrong.size:
        c = int(wrong[0])
        raise SolverInconsistency(
            f"batch: cart {c} total {int(total[c])} != priced total {int(priced[c])} "
            f"for {problems[c]!r}"
        )
    # Python lists once: per-element NumPy indexing would cost more than the objects built.
    rows = parts.T.tolist()
    cpu_rate, gpu_rate = rates.cpu_full_rate(), rates.gpu_full_rate()
    stats_common = {"batch_size": len(problems), "batch_ms": round(batch_ms, 3)}
    out: list[Solution | None] = []
    for c, problem in enumerate(problems):
        kind = int(method[c])
        if kind == TOO_LARGE:
            out.append(None)
            continue
        l0, m0, m1 = int(batch.line_ptr[c]), int(batch.merch_ptr[c]), int(batch.merch_ptr[c + 1])
        local = choice[l0 : l0 + problem.n_items].tolist()
        columns = batch.merchant_index[m0:m1].tolist()
        merchant_ids = [problem.merchant_ids[j] for j in columns]
        node_ids = [problem.fulfillment.node_ids[j] for j in columns]
        out.append(
            Solution(
                total=int(priced[c]),
                assignment={
                    item: merchant_ids[m] for item, m in zip(problem.item_ids, local, strict=True)
                },
                breakdown=_breakdown(problem, local, merchant_ids, node_ids, rows, m0),
                optimal=True,
                algorithm=METHOD_NAMES[kind],
                device=device,
                elapsed_ms=batch_ms / len(problems),
                complexity=problem.complexity,
                estimates={
                    "cpu_full_search_s": problem.complexity / cpu_rate,
                    "gpu_full_search_s": problem.complexity / gpu_rate,
                    "cpu_rate": cpu_rate,
                    "gpu_rate": gpu_rate,
                },
                gap=0.0,
                stats={**stats_common, "proof": PROOFS[kind]},
                nodes={item: node_ids[m] for item, m in zip(problem.item_ids, local, strict=True)},
            )
        )
    return out


def build_v2_solutions(
    problems: Sequence[CartProblem],
    line_ptr: np.ndarray,
    method: np.ndarray,
    total: np.ndarray,
    choice: np.ndarray,
    *,
    device: str,
    batch_ms: float,
    batch_size: int,
) -> list[Solution | None]:
    """One Solution per version 2 problem (None where planned TOO_LARGE): ``choice`` gives
    each packed line its problem column. :func:`make_solution` re-prices every answer with
    :func:`gpu_engine.pricing.price_assignment` (per merchant, a parcel per node that ships)
    and raises :class:`SolverInconsistency` where the search's total differs."""
    out: list[Solution | None] = []
    stats = {"batch_size": batch_size, "batch_ms": round(batch_ms, 3), "proof": PROOFS[0]}
    for c, problem in enumerate(problems):
        if int(method[c]) == TOO_LARGE:
            out.append(None)
            continue
        l0 = int(line_ptr[c])
        out.append(
            make_solution(
                problem,
                choice[l0 : l0 + problem.n_items],
                total=int(total[c]),
                optimal=True,
                algorithm=METHOD_NAMES[int(method[c])],
                device=device,
                elapsed_ms=batch_ms / batch_size,
                gap=0.0,
                stats=stats,
            )
        )
    return out


def _breakdown(
    problem: CartProblem,
    local: list[int],
    merchant_ids: list[str],
    node_ids: list[str],
    parts: list,
    m0: int,
) -> list[MerchantCost]:
    """Per merchant, one parcel: the batch takes simple carts only (one node a merchant)."""
    lines: dict[int, list[str]] = {}
    grams: dict[int, int] = {}
    weights = problem.fulfillment.weight.tolist()
    quantities = problem.quantity.tolist()
    for i, (item, m) in enumerate(zip(problem.item_ids, local, strict=True)):
        lines.setdefault(m, []).append(item)
        grams[m] = grams.get(m, 0) + quantities[i] * weights[i]
    out: list[MerchantCost] = []
    for m in sorted(lines):
        sub, units, discount, shipping, cost = parts[m0 + m]
        parcel = Parcel(node_ids[m], tuple(lines[m]), units, grams[m], shipping)
        out.append(
            MerchantCost(
                merchant=merchant_ids[m],
                lines=tuple(lines[m]),
                units=units,
                subtotal=sub,
                discount=discount,
                shipping=shipping,
                cost=cost,
                parcels=(parcel,),
            )
        )
    return out
