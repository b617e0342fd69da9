"""A finished run's figures against the cart's prices now.

A run stores the totals it was computed with; prices move without the cart's version (a
merchant edit, a feed, the price watch's next check a few seconds later). Whatever shows a
saving reads it here, so the figure is the one applying would give now.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field

from gpu_engine import ProblemError, price_assignment
from smartcart.models import OptimizationRun
from smartcart.selectors.problems import (
    CartProblemBuild,
    cart_current_breakdown,
    cart_problem_build,
)
from storefront.errors import DomainError
from storefront.fulfillment.selectors import FulfillmentNode


@dataclass(frozen=True)
class RunLive:
    """``current_total``: what the cart costs now. ``holds``: every suggested offer still sells
    at its suggested price and the suggestion still costs the run's ``suggested_total`` (the
    terms applying checks). ``picked``: for a run stored before its merchants shipped from
    warehouses (its lines name none), the warehouse applying ships each such line from, by
    line id; ``unplaced``: such lines no warehouse of their merchant can ship here."""

    run: OptimizationRun
    current_total: int
    holds: bool
    picked: Mapping[int, str] = field(default_factory=dict)
    unplaced: frozenset[int] = frozenset()

    @property
    def savings(self) -> int:
        return self.current_total - (self.run.suggested_total or 0)

    @property
    def savings_percent(self) -> float:
        return 100.0 * self.savings / self.current_total if self.current_total else 0.0

    @property
    def unchanged(self) -> bool:
        """The run's own figures are still true."""
        return self.holds and self.current_total == self.run.current_total


def warehouse_unnamed(line: dict, build: CartProblemBuild) -> bool:
    """A changed line of a run stored before version 2 (its rows name no warehouse) whose
    suggested merchant ships from warehouses now: applying picks the warehouse."""
    return (
        bool(line.get("changed"))
        and line.get("new_warehouse_id") is None
        and build.nodes.is_v2(line["new_merchant_id"])
    )


def warehouse_pick(line: dict, build: CartProblemBuild) -> FulfillmentNode | None:
    """Where such a line ships from (``warehouse_unnamed``): the cart's own rule for a line
    with no warehouse yet, its merchant's first warehouse that ships the quantity to the
    cart's destination (``CartNodes.line_node``); ``None``: none can."""
    return build.nodes.line_node(
        merchant_id=line["new_merchant_id"],
        offer_id=line["new_offer_id"],
        quantity=line["quantity"],
        warehouse_id=None,
    )


def suggestion_pairs(lines: list[dict], build: CartProblemBuild) -> dict[str, list[str]] | None:
    """The suggestion's assignment as ``[merchant, node]`` per line (a line of a merchant with
    warehouses names one: ``new_warehouse_id``; for a run that names none, the one applying
    picks, ``warehouse_pick``), or ``None`` when a suggested offer no longer sells at its
    suggested price or a line no warehouse can ship."""
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
        if warehouse_unnamed(line, build):
            node = warehouse_pick(line, build)
            if node is None:
                return None
            warehouse_id = node.warehouse_id
        if warehouse_id is not None:
            nodes[key] = str(warehouse_id)
    return build.pairs(merchants, nodes)


def _picks(lines: list[dict], build: CartProblemBuild) -> tuple[dict[int, str], frozenset[int]]:
    picked, unplaced = {}, set()
    for line in lines:
        if warehouse_unnamed(line, build):
            node = warehouse_pick(line, build)
            if node is None:
                unplaced.add(line["line_id"])
            else:
                picked[line["line_id"]] = node.name
    return picked, frozenset(unplaced)


def _suggestion_holds(run: OptimizationRun, build: CartProblemBuild) -> bool:
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


def optimization_run_live(*, run: OptimizationRun) -> RunLive | None:
    """``run``'s saving at today's prices (two queries), or ``None`` when the cart changed
    since the run (another version) or cannot be priced as it stands."""
    if run.cart.version != run.cart_version:
        return None
    try:
        build = cart_problem_build(cart=run.cart)
    except DomainError:
        return None
    if build.cart_version != run.cart_version:
        return None
    picked, unplaced = _picks((run.suggestion or {}).get("lines", []), build)
    return RunLive(
        run=run,
        current_total=sum(cost.cost for cost in cart_current_breakdown(build=build)),
        holds=_suggestion_holds(run, build),
        picked=picked,
        unplaced=unplaced,
    )
