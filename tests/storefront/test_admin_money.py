"""Money in the admin: typed and shown in currency units, stored in cents, to the cent."""

import pytest
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.test import override_settings
from django.urls import reverse
from hypothesis import given
from hypothesis import strategies as st

from storefront.admin.money import MoneyFormField, MoneyInput, cents_to_units, units_to_cents
from storefront.models import MAX_MONEY_CENTS, Merchant, MoneyField, Offer
from tests.factories import MerchantFactory, OfferFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client):
    client.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    return client


@given(st.integers(min_value=0, max_value=MAX_MONEY_CENTS))
def test_every_amount_round_trips_to_the_cent(cents):
    assert units_to_cents(cents_to_units(cents)) == cents


@pytest.mark.parametrize(
    ("typed", "cents"),
    [
        ("19.99", 1999),
        ("19,99", 1999),
        ("0.1", 10),
        ("7", 700),
        ("1,234.50", 123450),
        ("1.234,50", 123450),
        ("1 234.5", 123450),
        ("1,234", 123400),
        (" 0.01 ", 1),
    ],
)
def test_what_people_type(typed, cents):
    assert units_to_cents(typed) == cents


@pytest.mark.parametrize("typed", ["19.999", "abc", "1e3", "NaN", "--1", "0.001"])
def test_inexact_or_garbage_amounts_are_refused(typed):
    with pytest.raises(ValidationError):
        units_to_cents(typed)


@override_settings(SHOP_CURRENCY="JPY")
def test_a_currency_without_decimals():
    assert cents_to_units(1999) == "1999"
    assert units_to_cents("1999") == 1999
    with pytest.raises(ValidationError):
        units_to_cents("19.99")


def test_form_field_limits_are_told_in_money():
    field = MoneyFormField(min_value=0, max_value=MAX_MONEY_CENTS, required=False)
    assert field.clean("") is None
    with pytest.raises(ValidationError, match="at most"):
        field.clean("100000001")
    with pytest.raises(ValidationError, match="at least"):
        field.clean("-1")
    assert MoneyInput().format_value(1999) == "19.99"


def _money_fields(model_admin) -> list[str]:
    return [f.name for f in model_admin.model._meta.fields if isinstance(f, MoneyField)]


def test_every_editable_money_field_in_the_admin_uses_the_money_field(rf):
    request = rf.get("/")
    request.user = UserFactory(is_staff=True, is_superuser=True)
    checked = 0
    for model_admin in admin.site._registry.values():
        admins = [model_admin, *model_admin.get_inline_instances(request)]
        for each in admins:
            if not each.has_change_permission(request):
                continue  # read-only admins show money with format_money
            form = (
                each.get_formset(request).form if hasattr(each, "get_formset") else None
            ) or each.get_form(request)
            for name in _money_fields(each):
                if name in form.base_fields:
                    assert isinstance(form.base_fields[name], MoneyFormField), (each, name)
                    checked += 1
    assert checked >= 8  # merchant and zone shipping (x2 with inlines), offer prices


def test_offer_price_round_trips_through_the_admin_form(staff_client):
    offer = OfferFactory(unit_price=1999)
    url = reverse("admin:storefront_offer_change", args=[offer.pk])
    page = staff_client.get(url).content.decode()
    assert 'value="19.99"' in page
    data = {
        "product": offer.product_id,
        "merchant": offer.merchant_id,
        "merchant_sku": offer.merchant_sku,
        "unit_price": "24.05",
        "stock": "",
        "active": "on",
    }
    response = staff_client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:3000]
    offer.refresh_from_db()
    assert offer.unit_price == 2405
    assert 'value="24.05"' in staff_client.get(url).content.decode()


def test_merchant_shipping_round_trips_with_its_inlines(staff_client):
    merchant = MerchantFactory(base_fee=499, per_extra_unit=0, free_over=None)
    url = reverse("admin:storefront_merchant_change", args=[merchant.pk])
    page = staff_client.get(url).content.decode()
    assert 'name="base_fee" value="4.99"' in page
    data = {
        "name": merchant.name,
        "slug": merchant.slug,
        "active": "on",
        "base_fee": "3,95",
        "per_extra_unit": "0.50",
        "free_over": "49",
        "discount_min_units": "",
        "discount_basis_points": "",
        "zones-TOTAL_FORMS": "1",
        "zones-INITIAL_FORMS": "0",
        "zones-0-postal_prefix": "18",
        "zones-0-name": "Islands",
        "zones-0-base_fee": "9.90",
        "zones-0-per_extra_unit": "1",
        "zones-0-free_over": "",
        "offers-TOTAL_FORMS": "0",
        "offers-INITIAL_FORMS": "0",
    }
    response = staff_client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:3000]
    merchant = Merchant.objects.get(pk=merchant.pk)
    assert (merchant.base_fee, merchant.per_extra_unit, merchant.free_over) == (395, 50, 4900)
    zone = merchant.zones.get()
    assert (zone.base_fee, zone.per_extra_unit, zone.free_over) == (990, 100, None)
    assert Offer.objects.filter(merchant=merchant).count() == 0
