"""What the Improve cart panel shows, computed from a run: its state, the per-line and
per-merchant comparison, and words for the solver. No writes, no HTML."""

from collections.abc import Mapping
from dataclasses import dataclass

from smartcart.models import OptimizationRun
from smartcart.moves import LineMove, suggestion_line_moves
from smartcart.selectors import RunLive, optimization_run_for_cart_panel, optimization_run_live
from storefront.carts.pricing import ParcelCost
from storefront.models import Cart

ALGORITHM_LABELS = {
    "cpu-full": "exhaustive search",
    "gpu-full": "exhaustive search on the GPU",
    "dp": "dynamic programming",
    "milp": "integer programming",
    "ga": "genetic search",
}


@dataclass(frozen=True)
class LineChange:
    product_id: int
    product_name: str
    quantity: int
    old_merchant: str
    old_unit_price: int
    new_merchant: str
    new_unit_price: int
    changed: bool
    move: LineMove | None = None  # a changed line: why it moves
    sold_out: bool = False  # its merchant ran out: the suggestion must move it
    # The warehouses it ships from now and suggested (version 2 merchants; "" otherwise).
    old_warehouse: str = ""
    new_warehouse: str = ""
    # The run named no warehouse (stored before its merchant shipped from them): applying
    # ships it from ``new_warehouse``, chosen now.
    warehouse_picked: bool = False

    @property
    def old_total(self) -> int:
        return self.quantity * self.old_unit_price

    @property
    def new_total(self) -> int:
        return self.quantity * self.new_unit_price

    @property
    def price_change(self) -> int:
        """What the line costs more (positive) or less at the suggested merchant."""
        return self.new_total - self.old_total

    @property
    def unit_price_change(self) -> int:
        return self.new_unit_price - self.old_unit_price

    @property
    def reason(self) -> str:
        if self.move is None:
            if self.changed and self.old_warehouse != self.new_warehouse:
                return f"ships from {self.new_warehouse} instead of {self.old_warehouse}"
            return ""
        if self.sold_out:
            return f"sold out at {self.old_merchant}, {self.move.reason}"
        return self.move.reason


@dataclass(frozen=True)
class MerchantShipment:
    """One merchant in the suggestion, next to what the cart pays that merchant today."""

    name: str
    units: int
    goods: int
    discount: int
    shipping: int
    cost: int
    missing_for_free_shipping: int | None
    old_shipping: int | None  # None: the cart buys nothing there today
    # A version 2 merchant's parcels with the suggestion, one a warehouse.
    parcels: tuple[ParcelCost, ...] = ()

    @property
    def shipping_change(self) -> int:
        return self.shipping - (self.old_shipping or 0)


@dataclass(frozen=True)
class DroppedMerchant:
    name: str
    shipping_saved: int


@dataclass(frozen=True)
class ImprovePanel:
    run: OptimizationRun
    state: str  # pending, failed, saving, replace (a sold-out line moves), optimal, stale
    lines: tuple[LineChange, ...]
    merchants: tuple[MerchantShipment, ...]
    dropped: tuple[DroppedMerchant, ...]
    conflict: str = ""
    live: RunLive | None = None  # a saving's figures at today's prices

    @property
    def savings(self) -> int:
        return self.live.savings if self.live else self.run.savings or 0

    @property
    def current_total(self) -> int:
        return self.live.current_total if self.live else self.run.current_total or 0

    @property
    def savings_percent(self) -> float:
        return self.live.savings_percent if self.live else self.run.savings_percent or 0.0

    @property
    def pending(self) -> bool:
        return self.state == "pending"

    @property
    def deadline_ms(self) -> int:
        """Epoch ms after which the page stops polling and offers "Try again"."""
        from smartcart.services import optimization_run_deadline

        return int(optimization_run_deadline(run=self.run).timestamp() * 1000)

    @property
    def sold_out_lines(self) -> tuple[LineChange, ...]:
        return tuple(line for line in self.lines if line.sold_out)

    @property
    def changed_count(self) -> int:
        return sum(1 for line in self.lines if line.changed)

    @property
    def move_summary(self) -> str:
        """What the changed lines do: "2 of 3 lines move to another merchant", "1 of 2 lines
        ships from another warehouse of the same merchant", or both, counted."""
        changed = [line for line in self.lines if line.changed]
        merchant = sum(1 for line in changed if line.old_merchant != line.new_merchant)
        warehouse = len(changed) - merchant
        of = f"{len(changed)} of {len(self.lines)} line{'' if len(self.lines) == 1 else 's'}"
        to_merchant = "to another merchant"
        to_warehouse = "from another warehouse of the same merchant"
        if not warehouse:
            return f"{of} {'moves' if len(changed) == 1 else 'move'} {to_merchant}"
        if not merchant:
            return f"{of} {'ships' if len(changed) == 1 else 'ship'} {to_warehouse}"
        moves = f"{merchant} {'moves' if merchant == 1 else 'move'} {to_merchant}"
        ships = f"{warehouse} {'ships' if warehouse == 1 else 'ship'} {to_warehouse}"
        return f"{of} change: {moves}, {ships}"

    @property
    def algorithm_label(self) -> str:
        return ALGORITHM_LABELS.get(self.run.algorithm, self.run.algorithm)

    @property
    def lines_count(self) -> int:
        return int(self.run.problem_size.get("lines") or 0)

    @property
    def merchants_count(self) -> int:
        return int(self.run.problem_size.get("merchants") or 0)

    @property
    def complexity(self) -> str | None:
        """The count of assignments as its decimal digits (it can have thousands)."""
        value = self.run.problem_size.get("complexity")
        return str(value) if value not in (None, "") else None


def _state(run: OptimizationRun, conflict: str) -> str:
    if run.status in (OptimizationRun.Status.QUEUED, OptimizationRun.Status.RUNNING):
        return "pending"
    if run.status == OptimizationRun.Status.FAILED:
        return "failed"
    if conflict or run.is_stale:
        return "stale"
    if (run.suggestion or {}).get("sold_out_line_ids"):
        return "replace"
    return "saving" if run.is_improvement else "optimal"


def _line_changes(
    suggestion: dict, picked: Mapping[int, str] | None = None
) -> tuple[LineChange, ...]:
    """The suggestion's lines; ``picked``: the warehouse applying chooses for a line the run
    named none for (``RunLive.picked``)."""
    picked = picked or {}
    moves = suggestion_line_moves(suggestion)
    sold_out = set(suggestion.get("sold_out_line_ids", ()))
    return tuple(
        LineChange(
            product_id=line["product_id"],
            product_name=line["product_name"],
            quantity=line["quantity"],
            old_merchant=line["old_merchant_name"],
            old_unit_price=line["old_unit_price"],
            new_merchant=line["new_merchant_name"],
            new_unit_price=line["new_unit_price"],
            changed=bool(line["changed"]),
            move=moves.get(line.get("line_id")),
            sold_out=line.get("line_id") in sold_out,
            old_warehouse=line.get("old_warehouse_name") or "",
            new_warehouse=line.get("new_warehouse_name") or picked.get(line.get("line_id"), ""),
            warehouse_picked=line.get("line_id") in picked,
        )
        for line in suggestion.get("lines", [])
    )


def _merchant_shipments(
    suggestion: dict,
) -> tuple[tuple[MerchantShipment, ...], tuple[DroppedMerchant, ...]]:
    current = {row["merchant_id"]: row for row in suggestion.get("current_merchants", [])}
    suggested = suggestion.get("merchants", [])
    shipments = tuple(
        MerchantShipment(
            name=row["merchant_name"],
            units=row["units"],
            goods=row["subtotal"] - row["discount"],
            discount=row["discount"],
            shipping=row["shipping"],
            cost=row["cost"],
            missing_for_free_shipping=row.get("missing_for_free_shipping"),
            old_shipping=current[row["merchant_id"]]["shipping"]
            if row["merchant_id"] in current
            else None,
            parcels=_parcels(row),
        )
        for row in suggested
    )
    kept = {row["merchant_id"] for row in suggested}
    dropped = tuple(
        DroppedMerchant(name=row["merchant_name"], shipping_saved=row["shipping"])
        for merchant_id, row in current.items()
        if merchant_id not in kept
    )
    return shipments, dropped


def _parcels(row: dict) -> tuple[ParcelCost, ...]:
    """A merchant row's parcels at warehouses (runs stored before version 2 have none)."""
    return tuple(
        ParcelCost(
            warehouse_id=parcel["warehouse_id"],
            warehouse_name=parcel["warehouse_name"],
            line_ids=tuple(parcel["line_ids"]),
            units=parcel["units"],
            weight_g=parcel["weight_g"],
            fee=parcel["fee"],
        )
        for parcel in row.get("parcels", ())
        if parcel.get("warehouse_id") is not None
    )


PRICES_MOVED = (
    "Prices changed after this suggestion was computed, so it no longer saves what it did. "
    "Recompute it for today's prices."
)
BEFORE_WAREHOUSES = (
    "This suggestion was computed before some of its merchants shipped from warehouses, so "
    "it no longer costs what it did. Recompute it for your cart now."
)


def improve_panel(run: OptimizationRun, *, conflict: str = "") -> ImprovePanel:
    """The panel of ``run``. A saving is shown at today's prices (two queries): a saving that
    no longer holds as suggested (a suggested offer's price or the terms moved, or nothing is
    saved any more) is shown as out of date instead of with the run's old figures."""
    suggestion = run.suggestion or {}
    merchants, dropped = _merchant_shipments(suggestion)
    state = _state(run, conflict)
    live = None
    if state == "saving":
        live = optimization_run_live(run=run)
        if live is None or not live.holds or live.savings <= 0:
            before_warehouses = live is not None and bool(live.picked or live.unplaced)
            conflict = BEFORE_WAREHOUSES if before_warehouses else PRICES_MOVED
            state, live = "stale", None
    return ImprovePanel(
        run=run,
        state=state,
        lines=_line_changes(suggestion, live.picked if live else None),
        merchants=merchants,
        dropped=dropped,
        conflict=conflict,
        live=live,
    )


def improve_panel_for_cart(
    *, cart: Cart, conflict: str = "", conflict_run: OptimizationRun | None = None
) -> ImprovePanel | None:
    """The panel of the run made for the cart as it is now (``optimization_run_for_cart_panel``).
    ``conflict_run``: a run whose Apply was just refused with ``conflict``; it is shown, out
    of date, with the reason, whatever version it was made for."""
    if conflict_run is not None and conflict_run.cart_id == cart.pk:
        return improve_panel(conflict_run, conflict=conflict)
    run = optimization_run_for_cart_panel(cart=cart)
    if run is None:
        return None
    return improve_panel(run, conflict=conflict)
