"""Writes to the catalog: products, offers, and merchants or offers switched on and off in bulk.

Errors are ``storefront.errors`` domain errors (``ValidationFailed``, ``Conflict``).
"""

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum, auto

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.utils.text import slugify

from storefront.catalog.cheapest import (
    catalog_cheapest_mark_stale,
    catalog_cheapest_recompute_request,
)
from storefront.catalog.offer_changes import offers_changed_notify
from storefront.errors import validation_failed_from
from storefront.models import Category, Merchant, Offer, Product
from storefront.validators import gtin_normalize


def _full_clean_or_fail(instance) -> None:
    """Model validation (fields, ``clean()``, constraints) as one domain error."""
    try:
        instance.full_clean()
    except ValidationError as error:
        raise validation_failed_from(error) from error


@dataclass(frozen=True, slots=True)
class OfferInput:
    merchant: Merchant
    merchant_sku: str
    unit_price: int
    stock: int | None = None
    active: bool = True


def product_slug(*, name: str, gtin: str) -> str:
    """Readable and unique: the GTIN is unique, so the name part may repeat."""
    return f"{slugify(name)[:200].strip('-')}-{gtin}"


@transaction.atomic
def product_create(
    *,
    gtin: str,
    name: str,
    category: Category,
    description: str = "",
    offers: Iterable[OfferInput] = (),
) -> Product:
    """Creates a product and its first offers together: if any of them is invalid, nothing
    is written and the error names the field at fault."""
    product = Product(
        gtin=gtin_normalize(gtin), name=name.strip(), category=category, description=description
    )
    product.slug = product_slug(name=product.name, gtin=product.gtin)
    _full_clean_or_fail(product)
    product.save()
    for offer in offers:
        offer_create(
            product=product,
            merchant=offer.merchant,
            merchant_sku=offer.merchant_sku,
            unit_price=offer.unit_price,
            stock=offer.stock,
            active=offer.active,
        )
    return product


@transaction.atomic
def offer_create(
    *,
    product: Product,
    merchant: Merchant,
    merchant_sku: str,
    unit_price: int,
    stock: int | None = None,
    active: bool = True,
) -> Offer:
    offer = Offer(
        product=product,
        merchant=merchant,
        merchant_sku=merchant_sku.strip(),
        unit_price=unit_price,
        stock=stock,
        active=active,
    )
    _full_clean_or_fail(offer)
    offer.save()
    return offer


class _Unset(Enum):
    """Marks an argument left out (``None`` means something: unlimited stock)."""

    UNSET = auto()


_UNSET = _Unset.UNSET


@transaction.atomic
def offer_update(
    *,
    offer: Offer,
    unit_price: int | _Unset = _UNSET,
    stock: int | _Unset | None = _UNSET,
    active: bool | _Unset = _UNSET,
) -> Offer:
    """Changes price, stock (``None``: unlimited) or state. Carts keep their snapshots, so
    shoppers see the change."""
    changes = {
        name: value
        for name, value in (("unit_price", unit_price), ("stock", stock), ("active", active))
        if value is not _UNSET
    }
    for name, value in changes.items():
        setattr(offer, name, value)
    _full_clean_or_fail(offer)
    offer.save(update_fields=[*changes, "updated_at"])
    return offer


def offers_active_set(*, offers: QuerySet[Offer], active: bool) -> int:
    """Activates or deactivates ``offers`` in one UPDATE and returns how many rows changed.
    ``QuerySet.update`` sends no signals: the products whose cheapest offer may change are
    marked in the same transaction, and a recompute is asked for after it."""
    with transaction.atomic():
        # Read once: the stale marks, the page cache and the price watch all want these ids.
        product_ids = list(offers.order_by().values_list("product_id", flat=True))
        catalog_cheapest_mark_stale(product_ids=product_ids)
        offers_changed_notify(product_ids=product_ids)
        updated = offers.update(active=active)
        catalog_cheapest_recompute_request()
    return updated


def merchants_active_set(*, merchants: QuerySet[Merchant], active: bool) -> int:
    """``offers_active_set`` for whole merchants: every product they sell may change its
    cheapest offer."""
    with transaction.atomic():
        merchant_ids = list(merchants.values_list("pk", flat=True))
        catalog_cheapest_mark_stale(merchant_ids=merchant_ids)
        offers_changed_notify(merchant_ids=merchant_ids)
        updated = merchants.update(active=active)
        catalog_cheapest_recompute_request()
    return updated


def products_cheapest_refresh(*, products: QuerySet[Product]) -> int:
    """Marks ``products``' stored cheapest offer for a refresh and asks for a recompute;
    returns the rows marked."""
    with transaction.atomic():
        marked = catalog_cheapest_mark_stale(product_ids=products.values_list("pk", flat=True))
        catalog_cheapest_recompute_request()
    return marked
