"""Formatting integer cents for people. Amounts are never floats, not even for display."""

from django.conf import settings

# Symbols for the currencies a deployment is likely to pick; others show their ISO code.
CURRENCY_SYMBOLS = {"EUR": "€", "USD": "$", "GBP": "£", "JPY": "¥", "CHF": "CHF "}
# Minor units per ISO 4217; everything not listed has two decimals.
CURRENCY_DECIMALS = {"JPY": 0, "KRW": 0, "ISK": 0, "HUF": 2, "BHD": 3, "KWD": 3}


def currency_decimals(currency: str) -> int:
    return CURRENCY_DECIMALS.get(currency.upper(), 2)


def format_amount(cents: int, *, currency: str | None = None) -> str:
    """``123456`` -> ``"1,234.56"``: grouped major units and exact minor units, no symbol."""
    currency = currency or settings.SHOP_CURRENCY
    decimals = currency_decimals(currency)
    sign = "-" if cents < 0 else ""
    major, minor = divmod(abs(int(cents)), 10**decimals)
    text = f"{major:,}"
    if decimals:
        text += f".{minor:0{decimals}d}"
    return sign + text


def format_money(cents: int | None, *, currency: str | None = None) -> str:
    """``1999`` -> ``"€19.99"`` in the deployment currency; ``None`` -> ``""``."""
    if cents is None:
        return ""
    currency = (currency or settings.SHOP_CURRENCY).upper()
    symbol = CURRENCY_SYMBOLS.get(currency)
    amount = format_amount(cents, currency=currency)
    if symbol is None:
        return f"{amount} {currency}"
    if amount.startswith("-"):
        return f"-{symbol}{amount[1:]}"
    return f"{symbol}{amount}"


def format_basis_points(basis_points: int) -> str:
    """``500`` -> ``"5%"``, ``1250`` -> ``"12.5%"``: exact, trailing zeros dropped."""
    whole, rest = divmod(int(basis_points), 100)
    if rest == 0:
        return f"{whole}%"
    return f"{whole}.{rest:02d}".rstrip("0") + "%"
