"""Money in the admin: typed and shown in currency units ("19.99"), stored as integer cents.

``MoneyFormField`` parses without floats (``Decimal``) and refuses more decimals than the
shop currency has, so every amount round-trips to the cent. ``MoneyAdminMixin`` makes every
``MoneyField`` of a model admin or inline use it with ``MoneyInput``.
"""

import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db.models import Field
from django.utils.html import format_html

from storefront.models import MAX_MONEY_CENTS, MoneyField
from storefront.money import currency_decimals, format_money

_AMOUNT_RE = re.compile(r"^-?\d+(\.\d*)?$|^-?\.\d+$")
_GROUPING_RE = re.compile(r"^\d{1,3}([,.\s']\d{3})+$")


def cents_to_units(cents: int, *, currency: str | None = None) -> str:
    """``1999`` -> ``"19.99"``: exact, no grouping, as typed back into the form."""
    decimals = currency_decimals(currency or settings.SHOP_CURRENCY)
    sign = "-" if cents < 0 else ""
    major, minor = divmod(abs(int(cents)), 10**decimals)
    return f"{sign}{major}.{minor:0{decimals}d}" if decimals else f"{sign}{major}"


def _normalise(text: str, decimals: int) -> str:
    """People type "1,234.50", "1.234,50", "19,99" or "1 234": keep one decimal point."""
    text = text.strip().replace(" ", "").replace("\u00a0", "").replace("'", "")
    if "," in text and "." in text:
        decimal_mark = "," if text.rfind(",") > text.rfind(".") else "."
        grouping = "." if decimal_mark == "," else ","
        return text.replace(grouping, "").replace(decimal_mark, ".")
    for mark in (",", "."):
        if text.count(mark) > 1 or (mark == "," and _GROUPING_RE.match(text) and decimals != 3):
            return text.replace(mark, "")
    return text.replace(",", ".")


def units_to_cents(text: str, *, currency: str | None = None) -> int:
    """``"19.99"`` -> ``1999``; ``ValidationError`` for anything that is not an exact amount."""
    decimals = currency_decimals(currency or settings.SHOP_CURRENCY)
    normalised = _normalise(text, decimals)
    if not _AMOUNT_RE.match(normalised):
        raise ValidationError("Enter an amount such as 19.99.", code="invalid")
    try:
        amount = Decimal(normalised)
    except InvalidOperation:
        raise ValidationError("Enter an amount such as 19.99.", code="invalid") from None
    if not amount.is_finite():
        raise ValidationError("Enter an amount such as 19.99.", code="invalid")
    cents = amount.scaleb(decimals)
    if cents != cents.to_integral_value():
        raise ValidationError(
            f"Use at most {decimals} decimal{'s' if decimals != 1 else ''}.", code="precision"
        )
    return int(cents)


class MoneyInput(forms.TextInput):
    """A text box in currency units with the currency after it."""

    def __init__(self, attrs=None):
        super().__init__({"inputmode": "decimal", "class": "money-input", **(attrs or {})})

    def format_value(self, value):
        if isinstance(value, int):
            return cents_to_units(value)
        return super().format_value(value)

    def render(self, name, value, attrs=None, renderer=None):
        html = super().render(name, value, attrs, renderer)
        return format_html(
            '{} <span class="money-currency">{}</span>', html, settings.SHOP_CURRENCY
        )


class MoneyFormField(forms.Field):
    widget = MoneyInput

    def __init__(self, *, min_value: int | None = 0, max_value: int | None = None, **kwargs):
        # The model field passes its limits in cents; they are checked (and told) in money.
        kwargs.pop("step_size", None)
        limit = MAX_MONEY_CENTS if max_value is None else min(max_value, MAX_MONEY_CENTS)
        self.min_value, self.max_value = min_value, limit
        super().__init__(**kwargs)

    def prepare_value(self, value):
        return cents_to_units(value) if isinstance(value, int) else value

    def to_python(self, value) -> int | None:
        if value in self.empty_values:
            return None
        if isinstance(value, int):
            return value
        return units_to_cents(str(value))

    def validate(self, value) -> None:
        super().validate(value)
        if value is None:
            return
        if self.min_value is not None and value < self.min_value:
            raise ValidationError(
                f"Enter at least {format_money(self.min_value)}.", code="min_value"
            )
        if self.max_value is not None and value > self.max_value:
            raise ValidationError(
                f"Enter at most {format_money(self.max_value)}.", code="max_value"
            )


MONEY_FORMFIELD_OVERRIDES: "dict[type[Field[Any, Any]], Mapping[str, Any]]" = {
    MoneyField: {"form_class": MoneyFormField, "widget": MoneyInput}
}


class MoneyAdminMixin:
    """For ``ModelAdmin`` and inlines: money fields in currency units."""

    # Quoted: Django's Field is generic only to the type checker.
    formfield_overrides: "ClassVar[Mapping[type[Field[Any, Any]], Mapping[str, Any]]]" = (
        MONEY_FORMFIELD_OVERRIDES
    )
