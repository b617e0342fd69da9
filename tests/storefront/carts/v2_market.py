"""A small version 2 market for the shopper-side tests: Acme ships from Hamburg (weight tiers)
and Munich (flat), Bolt is a version 1 merchant. Built through the fulfillment services, so
``Offer.stock`` is the warehouses' total as in production."""

from dataclasses import dataclass

from storefront.fulfillment.services import parcel_rate_create, parcel_rate_set, warehouse_create
from storefront.fulfillment.stock import warehouse_stock_set
from storefront.models import Cart, Merchant, Offer, Warehouse, WarehouseStock
from tests.factories import CartFactory, MerchantFactory, OfferFactory, ProductFactory

POSTAL_CODE = "10115"


@dataclass
class Market:
    acme: Merchant
    bolt: Merchant
    hamburg: Warehouse
    munich: Warehouse
    monitor: Offer  # Acme, 5 kg, 150.00, Hamburg 2
    kettle: Offer  # Acme, 1.2 kg, 20.00, Hamburg 5 / Munich 1
    mug: Offer  # Acme, 0.3 kg, 5.00, Munich 10
    kettle_bolt: Offer  # Bolt (v1), 21.00, unlimited

    def cart(self, **fields) -> Cart:
        return CartFactory(postal_code=POSTAL_CODE, **fields)


def v2_market() -> Market:
    acme = MerchantFactory(name="Acme", base_fee=999, per_extra_unit=0)
    bolt = MerchantFactory(name="Bolt", base_fee=499, per_extra_unit=100)
    hamburg = warehouse_create(merchant=acme, name="Hamburg", adopt=False)
    munich = warehouse_create(merchant=acme, name="Munich", adopt=False)
    parcel_rate_create(
        warehouse=hamburg,
        base_fee=499,
        per_extra_unit=0,
        per_kg_over=150,
        tiers=[(2000, 0), (10000, 300)],
    )
    parcel_rate_create(warehouse=munich, base_fee=399, per_extra_unit=0)
    monitor = OfferFactory(
        merchant=acme, unit_price=15000, product=ProductFactory(name="Monitor", weight_g=5000)
    )
    kettle = OfferFactory(
        merchant=acme, unit_price=2000, product=ProductFactory(name="Kettle", weight_g=1200)
    )
    mug = OfferFactory(
        merchant=acme, unit_price=500, product=ProductFactory(name="Mug", weight_g=300)
    )
    kettle_bolt = OfferFactory(merchant=bolt, unit_price=2100, product=kettle.product)
    for offer, warehouse, stock in (
        (monitor, hamburg, 2),
        (kettle, hamburg, 5),
        (kettle, munich, 1),
        (mug, munich, 10),
    ):
        warehouse_stock_set(offer=offer, warehouse=warehouse, stock=stock)
    for offer in (monitor, kettle, mug):
        offer.refresh_from_db()
    return Market(acme, bolt, hamburg, munich, monitor, kettle, mug, kettle_bolt)


def stock_at(offer: Offer, warehouse: Warehouse) -> int | None:
    """The offer's stock at the warehouse as stored now (``None``: unlimited)."""
    return WarehouseStock.objects.get(offer=offer, warehouse=warehouse).stock


def hamburg_costs_as_munich(market: Market) -> None:
    """Hamburg's rate lowered so a kettle alone ships for 3.99 from either warehouse (Hamburg
    keeps its weight tiers): a line moved between them changes no total."""
    parcel_rate_set(
        warehouse=market.hamburg,
        base_fee=399,
        per_extra_unit=0,
        per_kg_over=150,
        tiers=[(2000, 0), (10000, 300)],
    )
