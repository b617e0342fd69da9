from storefront.models.addresses import Address
from storefront.models.carts import MAX_CART_LINES, MAX_LINE_QUANTITY, Cart, CartLine
from storefront.models.catalog import (
    MAX_WEIGHT_G,
    Category,
    CheapestOfferRefresh,
    Offer,
    Product,
    ProductCheapest,
)
from storefront.models.fields import MAX_MONEY_CENTS, MoneyField
from storefront.models.fulfillment import (
    MAX_PER_KG_OVER_CENTS,
    ParcelRate,
    Warehouse,
    WarehouseStock,
    WeightTier,
)
from storefront.models.idempotency import IdempotencyKey
from storefront.models.imports import ImportJob, ImportJobBatch
from storefront.models.ledger import PaymentEvent, Refund
from storefront.models.merchants import MAX_BASIS_POINTS, Merchant, ShippingZone
from storefront.models.orders import (
    MerchantOrder,
    MerchantStaff,
    Order,
    OrderEvent,
    OrderLine,
    Payment,
)

__all__ = [
    "MAX_BASIS_POINTS",
    "MAX_CART_LINES",
    "MAX_LINE_QUANTITY",
    "MAX_MONEY_CENTS",
    "MAX_PER_KG_OVER_CENTS",
    "MAX_WEIGHT_G",
    "Address",
    "Cart",
    "CartLine",
    "Category",
    "CheapestOfferRefresh",
    "IdempotencyKey",
    "ImportJob",
    "ImportJobBatch",
    "Merchant",
    "MerchantOrder",
    "MerchantStaff",
    "MoneyField",
    "Offer",
    "Order",
    "OrderEvent",
    "OrderLine",
    "ParcelRate",
    "Payment",
    "PaymentEvent",
    "Product",
    "ProductCheapest",
    "Refund",
    "ShippingZone",
    "Warehouse",
    "WarehouseStock",
    "WeightTier",
]
