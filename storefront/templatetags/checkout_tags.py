"""Filters of the checkout and order pages."""

from django import template
from payments.dummy.forms import DummyForm

from storefront.checkout.countries import country_name as _country_name

register = template.Library()


@register.filter
def country_name(code: str) -> str:
    """``"DE"`` -> ``"Germany"``; an unknown code as it is."""
    return _country_name(code)


@register.filter
def is_test_payment_form(form) -> bool:
    """The demo's provider (django-payments' dummy): its form is gateway switches for
    developers, so the page offers two labelled test outcomes through it instead."""
    return isinstance(form, DummyForm)
