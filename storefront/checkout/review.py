"""The checkout review: the cart priced as the shopper saw it, sealed in a signed token.

Placing an order re-prices the cart with its offers locked and compares with the token: any
difference (price, stock, terms, cart version, destination) refuses the order with a list of
what changed and the new total, so the shopper is never charged a total they did not see.
The token is signed (``django.core.signing``), so a client cannot edit the expected prices.

It records where each line ships from and the parcels the page showed (a merchant with
warehouses: "Ships from Hamburg · 2 items · 6.2 kg · €7.99"): another warehouse is a change the
shopper confirms, even at the same total. Tokens made before warehouses were recorded place as
they did (their warehouses are not compared).
"""

from dataclasses import dataclass

from django.core import signing

from storefront.carts.pricing_summary import CartPricingSummary
from storefront.errors import Conflict, ValidationFailed
from storefront.models import Cart, Warehouse
from storefront.money import format_money

_SALT = "storefront.checkout.review"
REVIEW_MAX_AGE_S = 3600


class CheckoutChanged(Conflict):
    """The cart no longer costs what the review showed (409): ``changes`` says what moved,
    ``total`` is the new total."""

    default_code = "checkout_changed"

    def __init__(self, message: str, *, changes: list[dict], total: int | None) -> None:
        super().__init__(message, field="review_token")
        self.changes = changes
        self.total = total

    @property
    def details(self) -> dict:
        return {"changes": self.changes, "total": self.total}


class ReviewCartMerged(Conflict):
    """The review was of a guest cart that signing in merged into the account's cart (409):
    review the merged cart again."""

    default_code = "review_cart_merged"


@dataclass(frozen=True)
class ReviewSnapshot:
    cart_id: int
    version: int
    postal_code: str
    total: int
    # line id -> (offer id, quantity, unit price, product name)
    lines: dict[int, tuple[int, int, int, str]]
    # merchant id -> (discount, shipping, cost, merchant name)
    merchants: dict[int, tuple[int, int, int, str]]
    # line id -> the warehouse it ships from (None: its merchant has no warehouses), and
    # warehouse id -> (fee, weight in kg as shown) of each parcel of a merchant with warehouses.
    # Both None: a token made before they were recorded, nothing to compare.
    warehouses: dict[int, int | None] | None = None
    parcels: dict[int, tuple[int, str]] | None = None


def review_snapshot(summary: CartPricingSummary) -> ReviewSnapshot:
    lines = [line for group in summary.groups for line in group.lines]
    return ReviewSnapshot(
        cart_id=summary.cart_id,
        version=summary.version,
        postal_code=summary.postal_code,
        total=summary.total,
        lines={
            line.line_id: (line.offer_id, line.quantity, line.unit_price, line.line.product.name)
            for line in lines
        },
        merchants={
            group.merchant_id: (group.discount, group.shipping, group.total, group.merchant_name)
            for group in summary.groups
        },
        warehouses={line.line_id: line.warehouse_id for line in lines},
        parcels={
            parcel.warehouse_id: (parcel.fee, parcel.weight_kg)
            for group in summary.groups
            for parcel in group.parcels
            if parcel.warehouse_id is not None
        },
    )


def review_token_make(summary: CartPricingSummary) -> str:
    snap = review_snapshot(summary)
    payload = {
        "c": snap.cart_id,
        "v": snap.version,
        "p": snap.postal_code,
        "t": snap.total,
        "l": [[line_id, *values[:3]] for line_id, values in snap.lines.items()],
        "m": [[merchant_id, *values[:3]] for merchant_id, values in snap.merchants.items()],
        # In the order of "l" (no line ids again: the token must stay under the forms' 4,000
        # characters for a full cart). Parcel units follow from the lines, so are not kept.
        "w": [(snap.warehouses or {}).get(line_id) for line_id in snap.lines],
        "wp": [[warehouse_id, *shown] for warehouse_id, shown in (snap.parcels or {}).items()],
    }
    return signing.dumps(payload, salt=_SALT, compress=True)


def review_token_read(token: object, *, cart_id: int) -> ReviewSnapshot:
    """The snapshot in ``token``. A token that is not ours or is for another cart is bad
    input (400); an old one, or one for a guest cart merged into the account's cart at
    sign-in (``ReviewCartMerged``), is a conflict (409): review again."""
    if not isinstance(token, str) or not token:
        raise ValidationFailed(
            "The review token is missing: review your order first.",
            code="review_token_missing",
            field="review_token",
        )
    try:
        payload = signing.loads(token, salt=_SALT, max_age=REVIEW_MAX_AGE_S)
    except signing.SignatureExpired:
        raise Conflict(
            "Your review is more than an hour old. Review your order again.",
            code="review_expired",
            field="review_token",
        ) from None
    except signing.BadSignature:
        raise ValidationFailed(
            "The review token is not valid.", code="review_token_invalid", field="review_token"
        ) from None
    if payload.get("c") != cart_id and not Cart.objects.filter(pk=payload.get("c")).exists():
        # Our own token for a cart that is gone: a guest cart merged at sign-in.
        raise ReviewCartMerged(
            "Signing in added your cart to your account's cart, so your order changed. "
            "Review it again before placing it.",
            field="review_token",
        )
    if payload.get("c") != cart_id:
        raise ValidationFailed(
            "The review token is for another cart.",
            code="review_token_invalid",
            field="review_token",
        )
    warehouses, parcels = None, None
    if "w" in payload:
        warehouses = dict(zip((row[0] for row in payload["l"]), payload["w"], strict=True))
        parcels = {row[0]: (row[1], row[2]) for row in payload["wp"]}
    return ReviewSnapshot(
        cart_id=payload["c"],
        version=payload["v"],
        postal_code=payload["p"],
        total=payload["t"],
        lines={row[0]: (row[1], row[2], row[3], "") for row in payload["l"]},
        merchants={row[0]: (row[1], row[2], row[3], "") for row in payload["m"]},
        warehouses=warehouses,
        parcels=parcels,
    )


def _line_changes(before: ReviewSnapshot, now: ReviewSnapshot, unavailable: set[int]) -> list[dict]:
    changes = []
    for line_id, (offer_id, quantity, price, name) in now.lines.items():
        old = before.lines.get(line_id)
        if old is None or old[0] != offer_id or old[1] != quantity:
            changes.append(
                {"code": "line_changed", "line_id": line_id, "message": f"{name} changed."}
            )
        elif old[2] != price:
            changes.append(
                {
                    "code": "price_changed",
                    "line_id": line_id,
                    "old": old[2],
                    "new": price,
                    "message": f"{name} now costs {format_money(price)} "
                    f"(was {format_money(old[2])}).",
                }
            )
    for line_id in before.lines.keys() - now.lines.keys() - unavailable:
        changes.append(
            {
                "code": "line_unavailable",
                "line_id": line_id,
                "message": "A line is no longer in your cart or no longer available.",
            }
        )
    return changes


def _merchant_changes(before: ReviewSnapshot, now: ReviewSnapshot) -> list[dict]:
    changes = []
    for merchant_id, (discount, shipping, cost, name) in now.merchants.items():
        old = before.merchants.get(merchant_id)
        if old is not None and (old[0], old[1]) != (discount, shipping):
            changes.append(
                {
                    "code": "terms_changed",
                    "merchant_id": merchant_id,
                    "old": old[2],
                    "new": cost,
                    "message": f"Shipping or discount at {name} changed: "
                    f"{format_money(cost)} (was {format_money(old[2])}).",
                }
            )
    return changes


def _warehouse_names(summary: CartPricingSummary, ids: set[int]) -> dict[int, str]:
    """Names of the warehouses ``ids``: those the cart ships from now, then the others (one
    query, made only when a line's warehouse changed)."""
    names = {
        line.warehouse_id: line.warehouse_name
        for group in summary.groups
        for line in group.lines
        if line.warehouse_id is not None
    }
    missing = ids - names.keys()
    if missing:
        names.update(Warehouse.objects.filter(pk__in=missing).values_list("pk", "name"))
    return names


def _warehouse_changes(before: ReviewSnapshot, summary: CartPricingSummary) -> list[dict]:
    """A line that ships from another warehouse than the review showed: the parcel ("ships
    from Hamburg") is part of what the shopper agreed to, so it is a change even at the same
    price (a line whose offer or quantity changed is named as that already)."""
    if before.warehouses is None:
        return []
    moved = []
    for group in summary.groups:
        for line in group.lines:
            old = before.lines.get(line.line_id)
            if old is None or (old[0], old[1]) != (line.offer_id, line.quantity):
                continue
            was = before.warehouses.get(line.line_id)
            if was != line.warehouse_id:
                moved.append((line, group.merchant_name, was))
    if not moved:
        return []
    names = _warehouse_names(summary, {was for _, _, was in moved if was is not None})
    changes = []
    for line, merchant_name, was in moved:
        name = line.line.product.name
        old_name = "" if was is None else names.get(was, "another warehouse")
        if line.warehouse_id is None:
            message = f"{name} no longer ships from {old_name}; {merchant_name} ships it directly."
        elif was is None:
            message = f"{name} now ships from {merchant_name}'s {line.warehouse_name}."
        else:
            message = f"{name} now ships from {line.warehouse_name} (was {old_name})."
        changes.append(
            {
                "code": "warehouse_changed",
                "line_id": line.line_id,
                "old": was,
                "new": line.warehouse_id,
                "old_name": old_name,
                "new_name": line.warehouse_name,
                "message": message,
            }
        )
    return changes


def _parcel_changes(
    before: ReviewSnapshot, summary: CartPricingSummary, named: set[int]
) -> list[dict]:
    """Parcels of a warehouse that ships both then and now whose fee or weight differs from
    what the review showed, for merchants whose change is not named already (``named``): a
    parcel that appears or goes comes with a line that moved, was added or went."""
    if before.parcels is None:
        return []
    changes = []
    for group in summary.groups:
        if group.merchant_id in named:
            continue
        differ = []
        for parcel in group.parcels:
            if parcel.warehouse_id is None:
                continue  # a merchant without warehouses: its one parcel is its shipping
            old = before.parcels.get(parcel.warehouse_id)
            if old is None or old == (parcel.fee, parcel.weight_kg):
                continue
            fee, weight = old
            parts = []
            if fee != parcel.fee:
                parts.append(f"costs {format_money(parcel.fee)} (was {format_money(fee)})")
            if weight != parcel.weight_kg:
                parts.append(f"weighs {parcel.weight_kg} kg (was {weight} kg)")
            differ.append(
                f"{group.merchant_name}'s parcel from {parcel.warehouse_name} now "
                + " and ".join(parts)
            )
        if differ:
            changes.append(
                {
                    "code": "parcels_changed",
                    "merchant_id": group.merchant_id,
                    "message": "; ".join(differ) + ".",
                }
            )
    return changes


def review_changes(
    *, before: ReviewSnapshot, summary: CartPricingSummary, postal_code: str
) -> list[dict]:
    """What differs between the review and the cart priced now (empty: place it)."""
    now = review_snapshot(summary)
    unavailable = {line.line_id for line in summary.unavailable}
    changes = _line_changes(before, now, unavailable) + _merchant_changes(before, now)
    moved = _warehouse_changes(before, summary)
    merchant_of = {line.line_id: g.merchant_id for g in summary.groups for line in g.lines}
    named = {change["merchant_id"] for change in changes if "merchant_id" in change}
    named |= {merchant_of[change["line_id"]] for change in moved}
    changes += moved + _parcel_changes(before, summary, named)
    for line in summary.unavailable:
        message = f"{line.line.product.name}: not available in that quantity any more."
        change = {"code": line.problem, "line_id": line.line_id, "message": message}
        if line.problem == "insufficient_stock":
            # The most it can have now: one warehouse's stock for a merchant with warehouses.
            change["max_quantity"] = line.max_quantity
        changes.append(change)
    if postal_code != before.postal_code:
        changes.append(
            {
                "code": "destination_changed",
                "message": f"The cart now ships to {postal_code or 'no postal code'}.",
            }
        )
    if not changes and now.version != before.version:
        changes.append({"code": "cart_changed", "message": "Your cart changed since the review."})
    if now.total != before.total:
        changes.append(
            {
                "code": "total_changed",
                "old": before.total,
                "new": now.total,
                "message": f"The total is now {format_money(now.total)} "
                f"(was {format_money(before.total)}).",
            }
        )
    return changes
