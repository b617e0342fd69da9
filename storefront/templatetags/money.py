"""Template filters for money: ``{% load money %}`` then ``{{ offer.unit_price|money }}``."""

from django import template

from storefront.money import format_basis_points, format_money

register = template.Library()


@register.filter(name="money")
def money(cents: int | str | None, currency: str | None = None) -> str:
    """Integer cents in the deployment currency (or the one given): ``1999|money`` -> ``€19.99``."""
    if cents is None or cents == "":
        return ""
    return format_money(int(cents), currency=currency or None)


@register.filter(name="percent_bp")
def percent_bp(basis_points: int | str | None) -> str:
    """Basis points as a percentage: ``500|percent_bp`` -> ``5%``."""
    if basis_points is None or basis_points == "":
        return ""
    return format_basis_points(int(basis_points))
