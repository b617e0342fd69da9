import pytest
from django.template import Context, Template

from storefront.money import format_amount, format_basis_points, format_money


@pytest.mark.parametrize(
    ("cents", "currency", "text"),
    [
        (1999, "EUR", "€19.99"),
        (0, "EUR", "€0.00"),
        (5, "USD", "$0.05"),
        (123456789, "GBP", "£1,234,567.89"),
        (-250, "EUR", "-€2.50"),
        (1500, "JPY", "¥1,500"),
        (1999, "SEK", "19.99 SEK"),
    ],
)
def test_format_money(cents, currency, text):
    assert format_money(cents, currency=currency) == text


def test_format_money_uses_the_deployment_currency(settings):
    settings.SHOP_CURRENCY = "USD"
    assert format_money(1000) == "$10.00"
    assert format_amount(1000) == "10.00"
    assert format_money(None) == ""


@pytest.mark.parametrize(
    ("basis_points", "text"), [(500, "5%"), (1250, "12.5%"), (1, "0.01%"), (10_000, "100%")]
)
def test_format_basis_points(basis_points, text):
    assert format_basis_points(basis_points) == text


def test_template_filters(settings):
    settings.SHOP_CURRENCY = "EUR"
    template = Template(
        "{% load money %}{{ price|money }} {{ price|money:'USD' }} {{ missing|money }}"
        " {{ bp|percent_bp }}"
    )
    rendered = template.render(Context({"price": 1999, "missing": None, "bp": 750}))
    assert rendered == "€19.99 $19.99  7.5%"
