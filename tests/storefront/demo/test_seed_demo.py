import io
from collections import Counter

import pytest
from django.contrib.auth import authenticate
from django.core.management import CommandError, call_command

from storefront.demo.catalog import DEMO_ADMIN, DEMO_SHOPPER, catalog_checksum
from storefront.models import Cart, Category, Merchant, Offer, Product, ShippingZone
from tests.factories import CartLineFactory

pytestmark = pytest.mark.django_db

SMALL = ["--merchants", "12", "--products", "80"]


def seed(*args: str) -> str:
    out = io.StringIO()
    call_command("seed_demo", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.mark.slow
def test_same_seed_same_catalog_other_seed_other_catalog():
    output = seed("--seed", "7", *SMALL)
    first = catalog_checksum()
    assert f"Catalog checksum: {first}" in output
    seed("--seed", "7", "--reset", *SMALL)
    assert catalog_checksum() == first
    seed("--seed", "8", "--reset", *SMALL)
    assert catalog_checksum() != first


@pytest.mark.slow
def test_catalog_is_realistic_and_valid():
    seed("--seed", "3", *SMALL)
    assert Category.objects.count() >= 10
    assert Merchant.objects.count() == 12
    assert Product.objects.count() == 80
    per_product = Counter(Offer.objects.values_list("product_id", flat=True))
    assert set(per_product) == set(Product.objects.values_list("pk", flat=True))
    assert all(5 <= count <= 12 for count in per_product.values())
    prices = list(Offer.objects.values_list("unit_price", flat=True))
    assert all(price % 10 == 9 for price in prices)
    stocks = list(Offer.objects.values_list("stock", flat=True))
    assert None in stocks and 0 in stocks and any(s is not None and s <= 3 for s in stocks)
    assert ShippingZone.objects.exists()
    assert Merchant.objects.filter(discount_min_units__isnull=False).exists()
    assert Merchant.objects.filter(free_over__isnull=False).exists()
    assert Merchant.objects.filter(per_extra_unit__gt=0).exists()
    # What bulk_create skipped, full_clean checks: every row passes model validation.
    for model in (Merchant, ShippingZone, Product, Offer):
        for instance in model.objects.all()[:60]:
            instance.full_clean()


def test_price_spread_is_plausible():
    seed("--seed", "5", *SMALL)
    for product in Product.objects.all()[:20]:
        prices = sorted(product.offers.values_list("unit_price", flat=True))
        assert prices[-1] <= prices[0] * 2, "offers of one product stay within 2x of each other"


def test_demo_accounts_work_and_are_printed():
    output = seed(*SMALL)
    shopper = authenticate(username=DEMO_SHOPPER[0], password=DEMO_SHOPPER[1])
    admin = authenticate(username=DEMO_ADMIN[0], password=DEMO_ADMIN[1])
    assert shopper is not None and not shopper.is_staff
    assert admin is not None and admin.is_superuser
    assert "demo / demo-shopper-pass" in output
    assert "admin / demo-admin-pass" in output
    assert "DEMO ONLY" in output
    assert Cart.objects.get(owner=shopper).postal_code == "10115"
    # Addresses, so that the password reset can be tried on the demo.
    assert (shopper.email, admin.email) == ("demo@example.com", "admin@example.com")


def test_refuses_a_non_empty_catalog_without_reset():
    seed(*SMALL)
    before = catalog_checksum()
    with pytest.raises(CommandError, match=r"not empty.*--reset"):
        seed(*SMALL)
    assert catalog_checksum() == before


def test_if_empty_is_quiet_on_an_existing_catalog():
    seed("--seed", "1", *SMALL)
    before = catalog_checksum()
    assert seed("--if-empty", "--seed", "2", *SMALL) == ""
    assert catalog_checksum() == before


def test_if_empty_seeds_an_empty_catalog():
    seed("--if-empty", *SMALL)
    assert Product.objects.count() == 80


@pytest.mark.slow
def test_reset_clears_carts_that_point_at_the_old_catalog():
    seed(*SMALL)
    line = CartLineFactory(offer=Offer.objects.first())
    seed("--reset", *SMALL)
    assert not Cart.objects.filter(pk=line.cart_id).exists()


def test_reset_and_if_empty_exclude_each_other():
    with pytest.raises(CommandError):
        call_command("seed_demo", "--reset", "--if-empty")


def test_fewer_merchants_than_minimum_offers():
    seed("--merchants", "3", "--products", "10")
    counts = Counter(Offer.objects.values_list("product_id", flat=True))
    assert set(counts.values()) == {3}


@pytest.mark.slow
def test_demo_merchant_staff_and_past_orders():
    from storefront.demo.orders import DEMO_MERCHANT_STAFF
    from storefront.models import MerchantStaff, Order

    output = seed(*SMALL)
    staff = authenticate(username=DEMO_MERCHANT_STAFF[0], password=DEMO_MERCHANT_STAFF[1])
    assert staff is not None and staff.is_staff and not staff.is_superuser
    merchant = MerchantStaff.objects.get(user=staff).merchant
    assert "merchant / demo-merchant-pass" in output
    orders = Order.objects.filter(owner__username=DEMO_SHOPPER[0])
    assert orders.count() == 2
    assert set(orders.values_list("status", flat=True)) == {"paid"}
    for order in orders:
        assert order.merchant_orders.filter(merchant=merchant).exists()
        assert sum(order.merchant_orders.values_list("cost", flat=True)) == order.total
    assert orders.filter(merchant_orders__status="shipped").count() == 1
    assert not Cart.objects.get(owner__username=DEMO_SHOPPER[0]).lines.exists()
    seed("--reset", *SMALL)  # orders go with the catalog they point at
    assert Order.objects.filter(owner__username=DEMO_SHOPPER[0]).count() == 2
