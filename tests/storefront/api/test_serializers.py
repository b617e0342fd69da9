import pytest
from rest_framework import serializers

from storefront.catalog.apis import ProductSerializer
from storefront.catalog.selectors import product_list
from tests.factories import OfferFactory, ProductFactory

pytestmark = pytest.mark.django_db


def test_product_serializer_writes_what_its_declared_fields_would():
    """``to_representation`` is written out for speed; DRF's own walk of the declared fields
    must give the same shape and values (sold, unsold, no brand)."""
    sold = ProductFactory(name="Claw Hammer")
    OfferFactory(product=sold, unit_price=1500)
    OfferFactory(product=sold, unit_price=1200, stock=3)
    ProductFactory(name="Unsold", brand="")
    products = list(product_list())
    assert len(products) == 2
    for product in products:
        declared = serializers.Serializer.to_representation(ProductSerializer(), product)
        declared["offer_count"] = declared["offer_count"] or 0
        written = ProductSerializer(product).data
        assert list(written) == list(declared)
        assert dict(written) == dict(declared)
