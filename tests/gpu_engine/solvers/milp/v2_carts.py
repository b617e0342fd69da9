"""Small hand-built version 2 carts for the MILP's tests: each one hinges on one rule of the
spec's parcel pricing (a tier boundary, a started kilogram, a threshold two nodes reach)."""

from __future__ import annotations

from typing import Any

from gpu_engine import CartProblem
from gpu_engine.reference import reference_brute_force_v2, reference_cost_v2
from gpu_engine.solvers.milp.runner import solve_milp


def node(nid: str, base: int, per: int = 0, tiers=None, per_kg: int = 0) -> dict[str, Any]:
    shipping: dict[str, Any] = {"base_fee": base, "per_extra_unit": per}
    if tiers is not None:
        shipping["weight_tiers"] = [{"up_to_g": up, "fee": fee} for up, fee in tiers]
        shipping["per_kg_over"] = per_kg
    return {"id": nid, "shipping": shipping}


def merchant(mid: str, nodes, free_over=None, discount=None) -> dict[str, Any]:
    out: dict[str, Any] = {"id": mid, "nodes": nodes, "free_over": free_over}
    if discount is not None:
        out["discount"] = {"min_units": discount[0], "basis_points": discount[1]}
    return out


def offer(item: str, mid: str, nid: str, price: int, stock=None) -> dict[str, Any]:
    return {"item": item, "merchant": mid, "node": nid, "price": price, "stock": stock}


def item(iid: str, quantity: int = 1, weight: int = 0) -> dict[str, Any]:
    return {"id": iid, "quantity": quantity, "weight_g": weight}


def assert_milp_exact(cart: dict[str, Any], **kwargs):
    """HiGHS proves the brute force's optimum, and its assignment prices so by the reference."""
    best, _ = reference_brute_force_v2(cart)
    problem = CartProblem.from_dict(cart)
    assert not problem.simple
    solution = solve_milp(problem, **kwargs)
    assert solution.optimal, solution.stats
    assert solution.total == best
    assert reference_cost_v2(cart, solution_picks(solution)) == best
    return solution


def solution_picks(solution) -> dict[str, tuple[str, str]]:
    """Line id -> (merchant id, node id) of an answer."""
    return {line: (m, solution.nodes[line]) for line, m in solution.assignment.items()}
