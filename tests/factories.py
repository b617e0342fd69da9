"""factory_boy factories for every storefront model, shared by all test packages.

Defaults build valid, buyable objects: an active merchant with simple shipping, a product
with a valid GTIN-13, an active offer with unlimited stock, a cart owned by a user.
"""

import factory
from django.contrib.auth import get_user_model

from storefront.models import (
    Cart,
    CartLine,
    Category,
    ImportJob,
    Merchant,
    Offer,
    Product,
    ShippingZone,
)
from storefront.validators import gtin_check_digit

TEST_PASSWORD = "test-pass-123"


def valid_gtin13(n: int) -> str:
    payload = f"400{n:09d}"
    return payload + str(gtin_check_digit(payload))


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"shopper{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.com")
    password = factory.django.Password(TEST_PASSWORD)


class CategoryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Category
        django_get_or_create = ("slug",)

    name = factory.Sequence(lambda n: f"Category {n}")
    slug = factory.Sequence(lambda n: f"category-{n}")


class MerchantFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Merchant

    name = factory.Sequence(lambda n: f"Merchant {n}")
    slug = factory.Sequence(lambda n: f"merchant-{n}")
    active = True
    base_fee = 499
    per_extra_unit = 100
    free_over = None
    discount_min_units = None
    discount_basis_points = None

    class Params:
        with_discount = factory.Trait(discount_min_units=3, discount_basis_points=500)


class ShippingZoneFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ShippingZone

    merchant = factory.SubFactory(MerchantFactory)
    postal_prefix = factory.Sequence(lambda n: f"{n % 10}")
    name = factory.LazyAttribute(lambda zone: f"Zone {zone.postal_prefix or 'everywhere'}")
    base_fee = 299
    per_extra_unit = 50
    free_over = None


class ProductFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Product

    gtin = factory.Sequence(valid_gtin13)
    name = factory.Sequence(lambda n: f"Product {n}")
    slug = factory.LazyAttribute(lambda product: f"product-{product.gtin}")
    category = factory.SubFactory(CategoryFactory)
    description = "A product made for tests."


class OfferFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Offer

    product = factory.SubFactory(ProductFactory)
    merchant = factory.SubFactory(MerchantFactory)
    merchant_sku = factory.Sequence(lambda n: f"SKU-{n:06d}")
    unit_price = 1999
    stock = None
    active = True


class CartFactory(factory.django.DjangoModelFactory):
    """A user's cart; ``CartFactory(owner=None, session_key="abc")`` for an anonymous one."""

    class Meta:
        model = Cart

    owner = factory.SubFactory(UserFactory)
    session_key = ""
    postal_code = ""


class CartLineFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = CartLine

    cart = factory.SubFactory(CartFactory)
    offer = factory.SubFactory(OfferFactory)
    product = factory.SelfAttribute("offer.product")
    quantity = 1
    unit_price_snapshot = factory.SelfAttribute("offer.unit_price")


class ImportJobFactory(factory.django.DjangoModelFactory):
    """A queued offer feed import of a one-row CSV (set MEDIA_ROOT to a temporary folder)."""

    class Meta:
        model = ImportJob

    merchant = factory.SubFactory(MerchantFactory)
    file = factory.django.FileField(
        filename="feed.csv", data=b"gtin,merchant_sku,price,stock,active\n"
    )
    format = ImportJob.Format.CSV
    batch_size = 1000
