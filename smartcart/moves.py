"""Why a suggestion moves each line, in words: the line's price change and what the move does
to shipping and discounts at the merchant it leaves and the one it joins. Read from a run's
stored suggestion, no query; the Improve panel and the checkout review's switch both say it."""

from dataclasses import dataclass

from storefront.money import format_money


@dataclass(frozen=True)
class LineMove:
    """One changed line of a suggestion; the changes are in cents, positive: costs more."""

    product_name: str
    quantity: int
    old_merchant: str
    new_merchant: str
    price_change: int
    shipping_change: int
    discount_change: int  # positive: more discount

    @property
    def reason(self) -> str:
        """E.g. "+€0.50, saves €6.90 shipping" or "€2.00 cheaper"."""
        if self.price_change > 0:
            parts = [f"+{format_money(self.price_change)}"]
        elif self.price_change < 0:
            parts = [f"{format_money(-self.price_change)} cheaper"]
        else:
            parts = ["same price"]
        if self.shipping_change < 0:
            parts.append(f"saves {format_money(-self.shipping_change)} shipping")
        elif self.shipping_change > 0:
            parts.append(f"adds {format_money(self.shipping_change)} shipping")
        if self.discount_change > 0:
            parts.append(f"{format_money(self.discount_change)} more discount")
        elif self.discount_change < 0:
            parts.append(f"{format_money(-self.discount_change)} less discount")
        return ", ".join(parts)

    @property
    def summary(self) -> str:
        """E.g. "Voltra Widget: Dear Shop to Bundle Shop (+€0.50, saves €6.90 shipping)"."""
        return f"{self.product_name}: {self.old_merchant} to {self.new_merchant} ({self.reason})"


def _by_merchant(rows: list[dict], field: str) -> dict[int, int]:
    return {row["merchant_id"]: int(row.get(field) or 0) for row in rows}


def suggestion_line_moves(suggestion: dict) -> dict[int, LineMove]:
    """Each changed line's move, by its ``line_id``. A merchant's shipping and discount change
    is what the whole suggestion does there: a line that empties a merchant saves its
    shipping, one that joins a merchant may add shipping or reach its free-shipping
    threshold or discount."""
    current, suggested = suggestion.get("current_merchants", []), suggestion.get("merchants", [])
    ship_now, ship_then = _by_merchant(current, "shipping"), _by_merchant(suggested, "shipping")
    off_now, off_then = _by_merchant(current, "discount"), _by_merchant(suggested, "discount")
    moves = {}
    for line in suggestion.get("lines", []):
        if not line.get("changed"):
            continue
        merchants = {line["old_merchant_id"], line["new_merchant_id"]}
        moves[line["line_id"]] = LineMove(
            product_name=line["product_name"],
            quantity=line["quantity"],
            old_merchant=line["old_merchant_name"],
            new_merchant=line["new_merchant_name"],
            price_change=line["quantity"] * (line["new_unit_price"] - line["old_unit_price"]),
            shipping_change=sum(ship_then.get(m, 0) - ship_now.get(m, 0) for m in merchants),
            discount_change=sum(off_then.get(m, 0) - off_now.get(m, 0) for m in merchants),
        )
    return moves
