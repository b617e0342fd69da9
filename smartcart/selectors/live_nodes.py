"""``optimization_run_live`` for carts with version 2 merchants: a suggestion's lines name a
warehouse (``new_warehouse_id``), so its total is priced at (merchant, node) pairs.

``smartcart.selectors.live._suggestion_holds`` prices ``{line: merchant}``, which the engine
cannot place for a merchant with two warehouses; until it uses ``suggestion_pairs`` the panel
calls ``optimization_run_live_nodes``.
"""

from gpu_engine import ProblemError, price_assignment
from smartcart.models import OptimizationRun
from smartcart.selectors.live import RunLive
from smartcart.selectors.problems import (
    CartProblemBuild,
    cart_current_breakdown,
    cart_problem_build,
)
from storefront.errors import DomainError


def suggestion_pairs(lines: list[dict], build: CartProblemBuild) -> dict[str, list[str]] | None:
    """The suggestion's assignment as ``[merchant, node]`` per line, or ``None`` when a
    suggested offer no longer sells at its suggested price."""
    merchants, nodes = {}, {}
    for line in lines:
        offer = build.offers.get((line["line_id"], line["new_merchant_id"]))
        if offer is None or (offer.offer_id, offer.unit_price) != (
            line["new_offer_id"],
            line["new_unit_price"],
        ):
            return None
        key = str(line["line_id"])
        merchants[key] = str(line["new_merchant_id"])
        warehouse_id = line.get("new_warehouse_id")
        if warehouse_id is not None:
            nodes[key] = str(warehouse_id)
    return build.pairs(merchants, nodes)


def _holds(run: OptimizationRun, build: CartProblemBuild) -> bool:
    lines = (run.suggestion or {}).get("lines", [])
    if {line["line_id"] for line in lines} != {line.line_id for line in build.lines}:
        return False
    pairs = suggestion_pairs(lines, build)
    if pairs is None:
        return False
    try:
        suggested = sum(cost.cost for cost in price_assignment(build.problem, pairs))
    except ProblemError:  # a suggested warehouse no longer ships it here
        return False
    return suggested == run.suggested_total


def optimization_run_live_nodes(*, run: OptimizationRun) -> RunLive | None:
    """``smartcart.selectors.optimization_run_live`` with the suggestion priced at its
    warehouses (two queries, five with warehouses)."""
    if run.cart.version != run.cart_version:
        return None
    try:
        build = cart_problem_build(cart=run.cart)
    except DomainError:
        return None
    if build.cart_version != run.cart_version:
        return None
    return RunLive(
        run=run,
        current_total=sum(cost.cost for cost in cart_current_breakdown(build=build)),
        holds=_holds(run, build),
    )
