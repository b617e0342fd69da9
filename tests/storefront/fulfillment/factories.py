"""factory_boy factories of the fulfillment models (version 2 merchants)."""

import factory

from storefront.models import ParcelRate, Warehouse, WarehouseStock, WeightTier
from tests.factories import MerchantFactory, OfferFactory


class WarehouseFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Warehouse

    merchant = factory.SubFactory(MerchantFactory)
    name = factory.Sequence(lambda n: f"Warehouse {n}")
    postal_code = "20095"
    city = "Hamburg"
    active = True


class WarehouseStockFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = WarehouseStock

    warehouse = factory.SubFactory(WarehouseFactory)
    offer = factory.SubFactory(OfferFactory, merchant=factory.SelfAttribute("..warehouse.merchant"))
    stock = None


class ParcelRateFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ParcelRate

    warehouse = factory.SubFactory(WarehouseFactory)
    postal_prefix = ""
    base_fee = 499
    per_extra_unit = 100
    per_kg_over = 0


class WeightTierFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = WeightTier

    rate = factory.SubFactory(ParcelRateFactory)
    up_to_g = 2000
    fee = 0
