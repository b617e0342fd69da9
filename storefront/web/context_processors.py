"""The shop-wide template context: the currency every price is shown in."""

from django.conf import settings
from django.http import HttpRequest


def shop(request: HttpRequest) -> dict:
    return {"SHOP_CURRENCY": settings.SHOP_CURRENCY}
