"""Writes of fulfillment: warehouses, their parcel rates and weight tiers, product weights.

Every write tells ``offers_changed`` (after the commit: the price watch, the zone index's
stamp, the page cache's versions) which merchants or products changed, as the catalog's
services do. Stock per warehouse is written in ``storefront.fulfillment.stock``.

Errors are ``storefront.errors`` domain errors (``ValidationFailed``).
"""

from collections.abc import Sequence
from enum import Enum, auto

from django.core.exceptions import ValidationError
from django.db import transaction

from storefront.catalog.offer_changes import offers_changed_notify
from storefront.errors import ValidationFailed
from storefront.fulfillment.stock import offer_stock_totals_sync
from storefront.fulfillment.validation import full_clean_or_fail
from storefront.models import (
    Merchant,
    Offer,
    ParcelRate,
    Product,
    ShippingZone,
    Warehouse,
    WarehouseStock,
    WeightTier,
)
from storefront.validators import postal_prefix_normalize


class _Unset(Enum):
    """Marks an argument left out (``None`` may mean something)."""

    UNSET = auto()


_UNSET = _Unset.UNSET

Tiers = Sequence[tuple[int, int]]


def _merchant_locked(merchant_id: int) -> Merchant:
    # Serialises the writes that decide whether a merchant is version 1 or 2.
    return Merchant.objects.select_for_update().get(pk=merchant_id)


def _has_active_warehouse(merchant_id: int, *, excluding: int | None = None) -> bool:
    warehouses = Warehouse.objects.filter(merchant_id=merchant_id, active=True)
    if excluding is not None:
        warehouses = warehouses.exclude(pk=excluding)
    return warehouses.exists()


def _merchant_stock_resync(merchant_id: int) -> None:
    """``Offer.stock`` of every offer of a merchant whose active warehouses changed, under the
    offers' row locks (taken in id order, as checkout takes them)."""
    offer_ids = list(
        Offer.objects.select_for_update(of=("self",))
        .filter(merchant_id=merchant_id)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    offer_stock_totals_sync(offer_ids=offer_ids)


# --- warehouses ---------------------------------------------------------------------------


@transaction.atomic
def warehouse_create(
    *,
    merchant: Merchant,
    name: str,
    postal_code: str = "",
    city: str = "",
    active: bool = True,
    adopt: bool = True,
) -> Warehouse:
    """Creates a warehouse. With ``adopt``, a merchant's first active warehouse takes over what
    the merchant sold by until then: a stock row per offer with its ``Offer.stock``, and the
    merchant's shipping (defaults and zones) as parcel rates without weight tiers, so the
    merchant's carts cost what they did until its rates are changed (a zone's own free-shipping
    threshold is the one thing version 2 has no place for: the merchant's counts).
    Without it, the merchant's offers are sold from the warehouse only once stocked there."""
    _merchant_locked(merchant.pk)
    first = active and not _has_active_warehouse(merchant.pk)
    warehouse = Warehouse(
        merchant=merchant,
        name=name.strip(),
        postal_code=postal_code.strip(),
        city=city.strip(),
        active=active,
    )
    full_clean_or_fail(warehouse)
    warehouse.save()
    if first and adopt:
        _warehouse_adopt_merchant(warehouse)
    if active:
        _merchant_stock_resync(merchant.pk)
    offers_changed_notify(merchant_ids=[merchant.pk])
    return warehouse


def _warehouse_adopt_merchant(warehouse: Warehouse) -> None:
    merchant = warehouse.merchant
    WarehouseStock.objects.bulk_create(
        [
            WarehouseStock(offer_id=pk, warehouse=warehouse, stock=stock)
            for pk, stock in Offer.objects.filter(merchant=merchant).values_list("pk", "stock")
        ],
        batch_size=1000,
    )
    rates = [
        ParcelRate(
            warehouse=warehouse,
            postal_prefix="",
            base_fee=merchant.base_fee,
            per_extra_unit=merchant.per_extra_unit,
        )
    ]
    rates += [
        ParcelRate(
            warehouse=warehouse,
            postal_prefix=zone.postal_prefix,
            base_fee=zone.base_fee,
            per_extra_unit=zone.per_extra_unit,
        )
        for zone in ShippingZone.objects.filter(merchant=merchant).exclude(postal_prefix="")
    ]
    ParcelRate.objects.bulk_create(rates)


@transaction.atomic
def warehouse_update(
    *,
    warehouse: Warehouse,
    name: str | _Unset = _UNSET,
    postal_code: str | _Unset = _UNSET,
    city: str | _Unset = _UNSET,
    active: bool | _Unset = _UNSET,
) -> Warehouse:
    """Renames, moves or switches a warehouse on or off. Switching changes which offers sell
    where: the merchant's ``Offer.stock`` totals follow (a merchant whose last active warehouse
    goes off sells by version 1 again, with the totals it had)."""
    _merchant_locked(warehouse.merchant_id)
    was_active = Warehouse.objects.values_list("active", flat=True).get(pk=warehouse.pk)
    changes = {
        field: value.strip() if isinstance(value, str) else value
        for field, value in (
            ("name", name),
            ("postal_code", postal_code),
            ("city", city),
            ("active", active),
        )
        if value is not _UNSET
    }
    for field, value in changes.items():
        setattr(warehouse, field, value)
    full_clean_or_fail(warehouse)
    warehouse.save(update_fields=[*changes, "updated_at"])
    if warehouse.active != was_active and _has_active_warehouse(warehouse.merchant_id):
        _merchant_stock_resync(warehouse.merchant_id)
    offers_changed_notify(merchant_ids=[warehouse.merchant_id])
    return warehouse


@transaction.atomic
def warehouse_delete(*, warehouse: Warehouse) -> None:
    """Deletes a warehouse with its stock rows and rates; the totals follow."""
    merchant_id = warehouse.merchant_id
    _merchant_locked(merchant_id)
    offer_ids = list(
        Offer.objects.select_for_update(of=("self",))
        .filter(merchant_id=merchant_id)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    warehouse.delete()
    if _has_active_warehouse(merchant_id):
        offer_stock_totals_sync(offer_ids=offer_ids)
    offers_changed_notify(merchant_ids=[merchant_id])


# --- parcel rates -------------------------------------------------------------------------


def _tiers_validated(tiers: Tiers) -> list[WeightTier]:
    """Weight tiers as unsaved rows: integers, up_to_g strictly increasing (the contract)."""
    rows: list[WeightTier] = []
    previous: int | None = None
    for index, tier in enumerate(tiers):
        up_to_g, fee = tier
        for label, value in (("up_to_g", up_to_g), ("fee", fee)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValidationFailed(
                    f"Tier {index + 1}: {label} must be a whole number of at least 0, "
                    f"not {value!r}.",
                    code="tier_invalid",
                    field="tiers",
                )
        if previous is not None and up_to_g <= previous:
            raise ValidationFailed(
                f"Tier {index + 1}: up to {up_to_g} g must be more than the tier before "
                f"({previous} g).",
                code="tiers_not_increasing",
                field="tiers",
            )
        previous = up_to_g
        row = WeightTier(up_to_g=up_to_g, fee=fee)
        try:
            row.clean_fields(exclude=["rate"])
        except ValidationError as error:  # too large for its column
            raise ValidationFailed(
                f"Tier {index + 1}: {' '.join(error.messages)}", code="tier_invalid", field="tiers"
            ) from error
        rows.append(row)
    return rows


def _tiers_replace(rate: ParcelRate, rows: list[WeightTier]) -> None:
    WeightTier.objects.filter(rate=rate).delete()
    for row in rows:
        row.rate = rate
    WeightTier.objects.bulk_create(rows)


@transaction.atomic
def parcel_rate_create(
    *,
    warehouse: Warehouse,
    postal_prefix: str = "",
    base_fee: int = 0,
    per_extra_unit: int = 0,
    per_kg_over: int = 0,
    tiers: Tiers = (),
) -> ParcelRate:
    """A warehouse's parcel rate for postal codes starting with ``postal_prefix`` (``""``:
    everywhere), with its weight tiers (``(up_to_g, fee)``, strictly increasing)."""
    rows = _tiers_validated(tiers)
    rate = ParcelRate(
        warehouse=warehouse,
        postal_prefix=postal_prefix_normalize(postal_prefix),
        base_fee=base_fee,
        per_extra_unit=per_extra_unit,
        per_kg_over=per_kg_over,
    )
    full_clean_or_fail(rate)
    rate.save()
    _tiers_replace(rate, rows)
    offers_changed_notify(merchant_ids=[warehouse.merchant_id])
    return rate


@transaction.atomic
def parcel_rate_update(
    *,
    rate: ParcelRate,
    postal_prefix: str | _Unset = _UNSET,
    base_fee: int | _Unset = _UNSET,
    per_extra_unit: int | _Unset = _UNSET,
    per_kg_over: int | _Unset = _UNSET,
    tiers: Tiers | _Unset = _UNSET,
) -> ParcelRate:
    """Changes a rate's fields; ``tiers``, when given, replace all of its tiers."""
    rows = None if isinstance(tiers, _Unset) else _tiers_validated(tiers)
    changes = {
        field: value
        for field, value in (
            ("postal_prefix", postal_prefix),
            ("base_fee", base_fee),
            ("per_extra_unit", per_extra_unit),
            ("per_kg_over", per_kg_over),
        )
        if value is not _UNSET
    }
    for field, value in changes.items():
        setattr(rate, field, value)
    full_clean_or_fail(rate)
    rate.save(update_fields=[*changes, "updated_at"])
    if rows is not None:
        _tiers_replace(rate, rows)
    offers_changed_notify(merchant_ids=[rate.warehouse.merchant_id])
    return rate


@transaction.atomic
def parcel_rate_set(
    *,
    warehouse: Warehouse,
    postal_prefix: str = "",
    base_fee: int = 0,
    per_extra_unit: int = 0,
    per_kg_over: int = 0,
    tiers: Tiers = (),
) -> ParcelRate:
    """Creates the warehouse's rate for the prefix, or replaces it (fields and tiers)."""
    existing = (
        ParcelRate.objects.select_for_update()
        .filter(warehouse=warehouse, postal_prefix=postal_prefix_normalize(postal_prefix))
        .first()
    )
    if existing is None:
        return parcel_rate_create(
            warehouse=warehouse,
            postal_prefix=postal_prefix,
            base_fee=base_fee,
            per_extra_unit=per_extra_unit,
            per_kg_over=per_kg_over,
            tiers=tiers,
        )
    existing.warehouse = warehouse
    return parcel_rate_update(
        rate=existing,
        base_fee=base_fee,
        per_extra_unit=per_extra_unit,
        per_kg_over=per_kg_over,
        tiers=tiers,
    )


@transaction.atomic
def parcel_rate_delete(*, rate: ParcelRate) -> None:
    merchant_id = rate.warehouse.merchant_id
    rate.delete()
    offers_changed_notify(merchant_ids=[merchant_id])


# --- products -----------------------------------------------------------------------------


@transaction.atomic
def product_weight_set(*, product: Product, weight_g: int) -> Product:
    """A product's weight per unit in grams: what its parcels weigh at every merchant."""
    if product.weight_g == weight_g and not product._state.adding:
        stored = Product.objects.values_list("weight_g", flat=True).get(pk=product.pk)
        if stored == weight_g:
            return product
    product.weight_g = weight_g
    full_clean_or_fail(product)
    product.save(update_fields=["weight_g", "updated_at"])
    offers_changed_notify(product_ids=[product.pk])
    return product
