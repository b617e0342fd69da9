"""How a solved suggestion becomes a run's stored answer: the fields of a done
``OptimizationRun`` (totals, the suggestion's line and merchant rows, the plan).

One shape for every path that stores an answer: a single cart's solve
(``smartcart.services``), the price watch's carts solved as problems and its packed batch
(``smartcart.pricewatch``), so the Improve panel, the API and the apply path read them alike.
``answer_from_solution`` takes a ``CartProblemBuild`` and a ``Solution``; the packed batch,
which has neither, builds the same rows from its arrays with ``suggestion_line_row``,
``suggestion_merchant_row`` and ``answer_fields``.
"""

from typing import Any, NamedTuple

from gpu_engine import MerchantCost, Solution, json_safe
from smartcart.selectors import CartProblemBuild, OfferSnapshot, cart_current_breakdown
from storefront.carts.pricing import missing_for_free_shipping


def answer_keeps_current(*, suggested_total: int, current_total: int, keep: bool = False) -> bool:
    """Whether the stored suggestion is the cart as it stands: when the caller says so (the
    price watch, for a saving under its floors) or when nothing cheaper was found (an
    approximate solver out of time may even answer dearer). A suggestion is never worse
    than what the shopper has, and never a reshuffle that saves nothing."""
    return keep or suggested_total >= current_total


class LineOffer(NamedTuple):
    """An offer as a suggestion's line names it, with the warehouse it ships from (version 2
    merchants; ``None`` for version 1)."""

    offer_id: int
    merchant_id: int
    merchant_name: str
    unit_price: int
    warehouse_id: int | None = None
    warehouse_name: str = ""


def suggestion_line_row(
    *,
    line_id: int,
    product_id: int,
    product_name: str,
    quantity: int,
    old: LineOffer,
    new: LineOffer,
) -> dict:
    """One cart line of a suggestion: its offer now (``old``) and the suggested one."""
    return {
        "line_id": line_id,
        "product_id": product_id,
        "product_name": product_name,
        "quantity": quantity,
        "old_offer_id": old.offer_id,
        "old_merchant_id": old.merchant_id,
        "old_merchant_name": old.merchant_name,
        "old_unit_price": old.unit_price,
        "new_offer_id": new.offer_id,
        "new_merchant_id": new.merchant_id,
        "new_merchant_name": new.merchant_name,
        "new_unit_price": new.unit_price,
        "old_warehouse_id": old.warehouse_id,
        "old_warehouse_name": old.warehouse_name,
        "new_warehouse_id": new.warehouse_id,
        "new_warehouse_name": new.warehouse_name,
        # Moving a line to another warehouse of its merchant is a change applying makes.
        "changed": (new.offer_id, new.warehouse_id) != (old.offer_id, old.warehouse_id),
    }


def suggestion_merchant_row(
    *,
    merchant_id: int,
    merchant_name: str,
    line_ids: list[int],
    units: int,
    subtotal: int,
    discount: int,
    shipping: int,
    cost: int,
    free_over: int | None,
    parcels: list[dict] | None = None,
) -> dict:
    """One merchant's shipment of a suggestion (or of the cart as it stands), in cents, with
    its parcels (``parcel_row``)."""
    return {
        "merchant_id": merchant_id,
        "merchant_name": merchant_name,
        "line_ids": line_ids,
        "units": units,
        "subtotal": subtotal,
        "discount": discount,
        "shipping": shipping,
        "cost": cost,
        "free_over": free_over,
        "missing_for_free_shipping": missing_for_free_shipping(
            goods=subtotal - discount, shipping=shipping, free_over=free_over
        ),
        "parcels": parcels or [],
    }


def parcel_row(
    *,
    node: str,
    warehouse_id: int | None,
    warehouse_name: str,
    line_ids: list[int],
    units: int,
    weight_g: int,
    fee: int,
) -> dict:
    """One parcel of a merchant's shipment: the node (a warehouse id, or the merchant's id
    for a version 1 merchant), its lines, units, grams and fee in cents."""
    return {
        "node": node,
        "warehouse_id": warehouse_id,
        "warehouse_name": warehouse_name,
        "line_ids": line_ids,
        "units": units,
        "weight_g": weight_g,
        "fee": fee,
    }


def answer_fields(
    *,
    cart_version: int,
    algorithm: str,
    optimal: bool,
    device: str,
    current_total: int,
    suggested_total: int,
    lines: list[dict],
    merchants: list[dict],
    current_merchants: list[dict],
    kept_current: bool,
    plan: dict,
    problem_size: dict,
) -> dict:
    """The fields a done run stores for its answer."""
    return {
        "cart_version": cart_version,
        "algorithm": algorithm,
        "optimal": optimal,
        "device": device,
        "current_total": current_total,
        "suggested_total": suggested_total,
        "savings": current_total - suggested_total,
        "suggestion": {
            "lines": lines,
            "merchants": merchants,
            "current_merchants": current_merchants,
            "kept_current": kept_current,
        },
        "plan": plan,
        "problem_size": problem_size,
    }


def solver_plan(*, solution: Solution, routing: dict | None) -> dict:
    """The planner's record of a solve: its plan, estimates, gap and stats, and the route."""
    plan = dict(solution.plan or {})
    plan.setdefault("estimates", solution.estimates)
    plan["gap"] = solution.gap
    plan["stats"] = solution.to_dict()["stats"]
    plan["routing"] = routing
    return json_safe(plan)


def answer_from_solution(
    *, build: CartProblemBuild, solution: Solution, plan: dict, keep: bool = False
) -> dict:
    """The fields a done run stores for ``solution`` of ``build`` (``answer_keeps_current``
    decides whether the suggestion is the solver's assignment or the cart as it stands)."""
    # A sold-out line cannot stay where it is: "the cart as it stands" is the cart with only
    # those lines moved, where the solver put them, so the suggestion always moves them and
    # saves what it saves beyond that.
    moved = [str(line_id) for line_id in build.sold_out]
    current_assignment = {
        **build.current_assignment,
        **{line_id: solution.assignment[line_id] for line_id in moved},
    }
    solution_nodes = build.pairs(solution.assignment, solution.nodes)
    current_nodes = {
        **build.current_nodes,
        **{line_id: solution_nodes[line_id][1] for line_id in moved},
    }
    current = cart_current_breakdown(
        build=build, assignment=current_assignment, nodes=current_nodes
    )
    current_total = sum(cost.cost for cost in current)
    total = int(solution.total)
    kept = answer_keeps_current(suggested_total=total, current_total=current_total, keep=keep)
    assignment, breakdown = solution.assignment, solution.breakdown
    nodes = {line_id: pair[1] for line_id, pair in solution_nodes.items()}
    if kept:
        assignment, breakdown, total = current_assignment, current, current_total
        nodes = current_nodes
    fields = answer_fields(
        cart_version=build.cart_version,
        algorithm=solution.algorithm,
        optimal=bool(solution.optimal),
        device=solution.device,
        current_total=current_total,
        suggested_total=total,
        lines=_line_rows(build=build, assignment=assignment, nodes=nodes),
        merchants=_merchant_rows(build=build, breakdown=breakdown),
        current_merchants=_merchant_rows(build=build, breakdown=current),
        kept_current=kept,
        plan=plan,
        problem_size=build.size,
    )
    if build.sold_out:
        fields["suggestion"]["sold_out_line_ids"] = sorted(build.sold_out)
    return fields


def _merchant_rows(*, build: CartProblemBuild, breakdown: list[MerchantCost]) -> list[dict]:
    rows = []
    for cost in breakdown:
        merchant_id = int(cost.merchant)
        terms = build.merchants[merchant_id]
        rows.append(
            suggestion_merchant_row(
                merchant_id=merchant_id,
                merchant_name=terms.name,
                line_ids=[int(line_id) for line_id in cost.lines],
                units=cost.units,
                subtotal=cost.subtotal,
                discount=cost.discount,
                shipping=cost.shipping,
                cost=cost.cost,
                free_over=terms.shipping.free_over,
                parcels=[_parcel_row(build, merchant_id, parcel) for parcel in cost.parcels],
            )
        )
    return rows


def _parcel_row(build: CartProblemBuild, merchant_id: int, parcel: Any) -> dict:
    # ``parcel`` is a ``MerchantCost.parcels`` item (the engine does not export its type).
    warehouse_id = build.warehouse_of(merchant_id, parcel.node)
    node = None if warehouse_id is None else build.nodes.node(merchant_id, warehouse_id)
    return parcel_row(
        node=parcel.node,
        warehouse_id=warehouse_id,
        warehouse_name="" if node is None else node.name,
        line_ids=[int(line_id) for line_id in parcel.lines],
        units=parcel.units,
        weight_g=parcel.weight_g,
        fee=parcel.fee,
    )


def _line_rows(
    *, build: CartProblemBuild, assignment: dict[str, str], nodes: dict[str, str]
) -> list[dict]:
    rows = []
    current = build.current_nodes
    for line in build.lines:
        key = str(line.line_id)
        old = build.offers[(line.line_id, line.merchant_id)]
        new = build.offers[(line.line_id, int(assignment[key]))]
        old_warehouse = build.current_warehouses.get(line.line_id)
        if line.line_id in build.sold_out:
            old_warehouse = build.warehouse_of(line.merchant_id, current[key])
        rows.append(
            suggestion_line_row(
                line_id=line.line_id,
                product_id=line.product_id,
                product_name=line.product_name,
                quantity=line.quantity,
                old=_line_offer(build, old, old_warehouse),
                new=_line_offer(build, new, build.warehouse_of(new.merchant_id, nodes.get(key))),
            )
        )
    return rows


def _line_offer(
    build: CartProblemBuild, offer: OfferSnapshot, warehouse_id: int | None
) -> LineOffer:
    name = build.merchants[offer.merchant_id].name
    node = None if warehouse_id is None else build.nodes.node(offer.merchant_id, warehouse_id)
    return LineOffer(
        offer.offer_id,
        offer.merchant_id,
        name,
        offer.unit_price,
        warehouse_id,
        "" if node is None else node.name,
    )
