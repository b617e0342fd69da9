"""Applying a run's suggestion to the cart (all or nothing, under locks) and dismissing it."""

from dataclasses import dataclass

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from smartcart.models import OptimizationRun
from smartcart.selectors import CartProblemBuild, cart_current_breakdown, cart_problem_build
from smartcart.selectors.live import warehouse_pick, warehouse_unnamed
from smartcart.services.common import Status, User, signed_in
from storefront.errors import Conflict, DomainError, NotFound
from storefront.models import Cart, CartLine, Offer, WarehouseStock
from storefront.models.catalog import stock_covers


def _check_appliable(*, run: OptimizationRun, cart: Cart) -> None:
    if run.status != Status.DONE:
        what = "failed" if run.status == Status.FAILED else "not finished yet"
        raise Conflict(f"This optimization is {what}; there is nothing to apply.", code="not_done")
    if run.applied_at is not None:
        raise Conflict("This suggestion was applied already.", code="already_applied")
    if run.dismissed_at is not None:
        raise Conflict("This suggestion was dismissed.", code="dismissed")
    if cart.version != run.cart_version:
        raise Conflict(
            "Your cart changed after this suggestion was computed. Improve it again.",
            code="cart_changed",
            field="cart",
        )


def _check_offers(*, lines: list[dict]) -> None:
    """Every suggested offer must still sell at the suggested price with enough stock; the
    rows are locked so nothing changes them before the cart is rewritten."""
    offer_ids = [line["new_offer_id"] for line in lines]
    offers = {
        offer.pk: offer
        for offer in Offer.objects.select_for_update(of=("self",))
        .select_related("merchant")
        .filter(pk__in=offer_ids)
        .order_by("pk")  # the order checkout locks offers in: no deadlock between them
    }
    for line in lines:
        offer = offers.get(line["new_offer_id"])
        name = line["product_name"]
        if offer is None or not offer.active or not offer.merchant.active:
            raise Conflict(
                f"{name} is no longer sold by {line['new_merchant_name']}. "
                "Improve your cart again.",
                code="offer_unavailable",
                field="lines",
            )
        if offer.unit_price != line["new_unit_price"]:
            raise Conflict(
                f"The price of {name} at {line['new_merchant_name']} changed. "
                "Improve your cart again.",
                code="price_changed",
                field="lines",
            )
        if not offer.can_supply(line["quantity"]):
            raise Conflict(
                f"{line['new_merchant_name']} no longer has {line['quantity']} of {name} in "
                "stock. Improve your cart again.",
                code="stock_changed",
                field="lines",
            )
    _check_warehouses(lines=lines)


def _check_warehouses(*, lines: list[dict]) -> None:
    """A line suggested from a warehouse needs the stock there (one query; the offers'
    locks, taken just before, hold it as checkout takes it)."""
    placed = [line for line in lines if line.get("new_warehouse_id") is not None]
    if not placed:
        return
    stock = {
        (offer_id, warehouse_id): units
        for offer_id, warehouse_id, units in WarehouseStock.objects.filter(
            offer_id__in={line["new_offer_id"] for line in placed},
            warehouse_id__in={line["new_warehouse_id"] for line in placed},
            warehouse__active=True,
        ).values_list("offer_id", "warehouse_id", "stock")
    }
    for line in placed:
        key = (line["new_offer_id"], line["new_warehouse_id"])
        if key not in stock or not stock_covers(stock[key], line["quantity"]):
            raise Conflict(
                f"{line['new_merchant_name']} no longer has {line['quantity']} of "
                f"{line['product_name']} at {line.get('new_warehouse_name') or 'its warehouse'}. "
                "Improve your cart again.",
                code="stock_changed",
                field="lines",
            )


@dataclass(frozen=True)
class PickedWarehouse:
    """A line of a run stored before its merchant shipped from warehouses: the warehouse
    applying chose for it (the suggestion named none)."""

    line_id: int
    product_name: str
    merchant_name: str
    warehouse_name: str

    @property
    def summary(self) -> str:
        """E.g. "Kettle ships from Hamburg (Acme)"."""
        return f"{self.product_name} ships from {self.warehouse_name} ({self.merchant_name})"


@dataclass(frozen=True)
class Applied:
    """The cart after applying, and what applying saved: the cart's total just before it
    (prices may have moved since the run was computed) less the suggested total. ``picked``:
    the warehouses chosen for lines the run named none for."""

    cart: Cart
    saved: int
    total: int
    picked: tuple[PickedWarehouse, ...] = ()


def _check_unnamed_warehouses(*, lines: list[dict], build: CartProblemBuild | None) -> None:
    """A run stored before its merchants shipped from warehouses names none for their lines;
    applying picks one (``warehouse_pick``), and refuses when no warehouse can ship one."""
    if build is None:  # the cart cannot be priced as it stands: the check after writing says
        return
    for line in lines:
        if warehouse_unnamed(line, build) and warehouse_pick(line, build) is None:
            raise Conflict(
                f"No warehouse of {line['new_merchant_name']} can ship {line['quantity']} of "
                f"{line['product_name']} to you. Improve your cart again.",
                code="stock_changed",
                field="lines",
            )


def _unnamed_warehouses_write(
    *, lines: list[dict], build: CartProblemBuild
) -> tuple[PickedWarehouse, ...]:
    """Writes the warehouse the cart ships each line from, for the lines of a run that named
    none (the cart's own choice, ``build.current_warehouses``, made explicit and kept)."""
    picked = []
    for line in lines:
        warehouse_id = build.current_warehouses.get(line["line_id"])
        if not warehouse_unnamed(line, build) or warehouse_id is None:
            continue
        CartLine.objects.filter(pk=line["line_id"]).update(warehouse_id=warehouse_id)
        node = build.nodes.node(line["new_merchant_id"], warehouse_id)
        picked.append(
            PickedWarehouse(
                line_id=line["line_id"],
                product_name=line["product_name"],
                merchant_name=line["new_merchant_name"],
                warehouse_name="" if node is None else node.name,
            )
        )
    return tuple(picked)


def optimization_run_apply(*, run: OptimizationRun, user: User | None = None) -> Cart:
    """``optimization_run_apply_outcome``'s cart."""
    return optimization_run_apply_outcome(run=run, user=user).cart


@transaction.atomic
def optimization_run_apply_outcome(*, run: OptimizationRun, user: User | None = None) -> Applied:
    """Rewrites the cart's lines to the suggested offers and bumps the cart version.

    All or nothing, under locks on the cart, the run and the offers. Refused with a
    ``Conflict`` when the run is not done (``not_done``), was applied or dismissed, the cart
    changed since (``cart_changed``), a suggested offer's price or stock changed
    (``price_changed``, ``stock_changed``, ``offer_unavailable``), or shipping terms changed so
    the cart would not cost the suggested total (``terms_changed``).
    """
    try:
        cart = Cart.objects.select_for_update().get(pk=run.cart_id)
        run = OptimizationRun.objects.select_for_update().get(pk=run.pk)
    except (Cart.DoesNotExist, OptimizationRun.DoesNotExist):
        raise NotFound(
            "No such optimization for your cart.", code="optimization_not_found", field="run_id"
        ) from None
    _check_appliable(run=run, cart=cart)
    lines = run.suggestion.get("lines", [])
    _check_offers(lines=lines)
    build: CartProblemBuild | None = None
    try:
        build = cart_problem_build(cart=cart)
        before = _total(build)
    except DomainError:  # a line's own offer is gone: the run's figure is the last price known
        before = run.current_total or 0
    _check_unnamed_warehouses(lines=lines, build=build)
    now = timezone.now()
    for line in lines:
        if line["changed"]:
            CartLine.objects.filter(pk=line["line_id"], cart_id=cart.pk).update(
                offer_id=line["new_offer_id"],
                unit_price_snapshot=line["new_unit_price"],
                # The suggested node; a run that names none is given the cart's pick below.
                warehouse_id=line.get("new_warehouse_id"),
                updated_at=now,
            )
    Cart.objects.filter(pk=cart.pk).update(version=F("version") + 1, updated_at=now)
    after = cart_problem_build(cart=cart)
    picked = _unnamed_warehouses_write(lines=lines, build=after)
    total = _total(after)
    if total != run.suggested_total:
        raise Conflict(
            "Shipping or discounts changed since this suggestion was computed. "
            "Improve your cart again.",
            code="terms_changed",
        )
    OptimizationRun.objects.filter(pk=run.pk).update(applied_at=now, applied_by=signed_in(user))
    cart.refresh_from_db()
    return Applied(cart=cart, saved=before - total, total=total, picked=picked)


def _total(build: CartProblemBuild) -> int:
    return sum(cost.cost for cost in cart_current_breakdown(build=build))


def optimization_run_dismiss(*, run: OptimizationRun) -> OptimizationRun:
    """Hides the run's suggestion (the shopper said no). Idempotent; an applied run stays
    applied."""
    if run.dismissed_at is None and run.applied_at is None:
        now = timezone.now()
        OptimizationRun.objects.filter(pk=run.pk, dismissed_at__isnull=True).update(
            dismissed_at=now
        )
        run.refresh_from_db()
    return run
