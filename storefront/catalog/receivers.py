"""Keeps the stored cheapest offers honest whatever writes the offers: services, the admin's
forms, a shell, a factory. Every ORM ``save()``/``delete()`` of an offer, and every change of a
merchant's ``active`` flag, marks the affected products stale in the same transaction and asks
for a recompute once it commits (see ``storefront.catalog.cheapest``).

``QuerySet.update()`` and raw SQL send no signals: code that writes offers that way calls
``catalog_cheapest_mark_stale`` itself (the admin's bulk actions and the feed import do).

The same receivers tell ``storefront.catalog.offer_changes`` which products and merchants changed
(offers, a merchant's terms, its shipping zones), for ``offers_changed`` after the commit.

Imported by ``storefront.models`` so that the receivers are connected whenever the models are.
"""

import threading
import weakref

from django.db import transaction
from django.db.models.signals import post_delete, post_save, pre_delete, pre_save
from django.dispatch import receiver

from storefront.caching.versions import cache_versions_bump_on_commit
from storefront.catalog.offer_changes import offers_changed_notify

_OFFER = "storefront.Offer"
_MERCHANT = "storefront.Merchant"
_seen = threading.local()


def _mark(**targets) -> None:
    from storefront.catalog.cheapest import (
        catalog_cheapest_mark_stale,
        catalog_cheapest_recompute_request,
    )

    if catalog_cheapest_mark_stale(**targets):
        catalog_cheapest_recompute_request()


def _fields_touched(update_fields, *names: str) -> bool:
    return update_fields is None or any(name in update_fields for name in names)


@receiver(pre_save, sender=_OFFER, dispatch_uid="storefront.catalog.cheapest.offer_pre_save")
def offer_remember_product(sender, instance, update_fields=None, **kwargs) -> None:
    # An admin may move an offer to another product: both products need a refresh.
    instance._cheapest_previous_product_id = None
    if instance._state.adding or not _fields_touched(update_fields, "product", "product_id"):
        return
    instance._cheapest_previous_product_id = (
        sender.objects.filter(pk=instance.pk).values_list("product_id", flat=True).first()
    )


@receiver(post_save, sender=_OFFER, dispatch_uid="storefront.catalog.cheapest.offer_post_save")
def offer_saved(sender, instance, **kwargs) -> None:
    previous = getattr(instance, "_cheapest_previous_product_id", None)
    # One transaction even for a save in autocommit: the stale mark and the notice record the
    # same page-cache versions, replaced once when it commits.
    using = kwargs.get("using")
    with transaction.atomic(using=using, savepoint=False):
        _mark(product_ids=[instance.product_id, previous])
        offers_changed_notify(product_ids=[instance.product_id, previous], using=using)


@receiver(pre_delete, sender=_OFFER, dispatch_uid="storefront.catalog.cheapest.offer_pre_delete")
def offer_deleting(sender, instance, origin=None, **kwargs) -> None:
    """Django sends this once per offer before deleting any; the products are marked in one
    statement per deletion (its ``origin``), not one per offer."""
    from storefront.models import Merchant, Offer, Product

    offers_changed_notify(product_ids=[instance.product_id])
    if origin is not None and getattr(_seen, "origin", lambda: None)() is origin:
        return
    if origin is not None:
        _seen.origin = weakref.ref(origin)
    model = getattr(origin, "model", type(origin))
    if model is Product:
        return  # the products go too
    if isinstance(origin, Merchant):
        _mark(merchant_ids=[origin.pk])
    elif model is Merchant:
        _mark(merchant_ids=list(origin.values_list("pk", flat=True)))
    elif model is Offer and not isinstance(origin, Offer):
        _mark(offers=origin)
    else:
        _mark(product_ids=[instance.product_id])
        _seen.origin = lambda: None


@receiver(pre_save, sender=_MERCHANT, dispatch_uid="storefront.catalog.cheapest.merchant_pre_save")
def merchant_remember_active(sender, instance, update_fields=None, **kwargs) -> None:
    instance._cheapest_was_active = None
    if instance._state.adding or not _fields_touched(update_fields, "active"):
        return
    instance._cheapest_was_active = (
        sender.objects.filter(pk=instance.pk).values_list("active", flat=True).first()
    )


# What a merchant's carts cost: shipping, discount and whether it sells at all.
_MERCHANT_TERMS = (
    "active",
    "base_fee",
    "per_extra_unit",
    "free_over",
    "discount_min_units",
    "discount_basis_points",
)


@receiver(
    pre_save, sender=_MERCHANT, dispatch_uid="storefront.catalog.offer_changes.merchant_pre_save"
)
def merchant_remember_terms(sender, instance, update_fields=None, **kwargs) -> None:
    instance._offer_changes_terms = None
    if instance._state.adding or not _fields_touched(update_fields, *_MERCHANT_TERMS):
        return
    instance._offer_changes_terms = (
        sender.objects.filter(pk=instance.pk).values_list(*_MERCHANT_TERMS).first()
    )


@receiver(post_save, sender=_MERCHANT, dispatch_uid="storefront.merchant_saved")
def merchant_saved(sender, instance, created=False, **kwargs) -> None:
    """Every consequence of a merchant's save in one transaction (even in autocommit), so the
    page cache's versions are replaced once: its activity marks its products' cheapest offers
    stale, its terms tell ``offers_changed`` (which records the page versions), and anything
    else (its name, a new merchant) changes what the pages show all the same."""
    using = kwargs.get("using")
    was_active = getattr(instance, "_cheapest_was_active", None)
    before = getattr(instance, "_offer_changes_terms", None)
    after = tuple(getattr(instance, name) for name in _MERCHANT_TERMS)
    with transaction.atomic(using=using, savepoint=False):
        if not created and was_active is not None and was_active != instance.active:
            _mark(merchant_ids=[instance.pk])
        if not created and before is not None and before != after:
            offers_changed_notify(merchant_ids=[instance.pk], using=using)
        else:
            cache_versions_bump_on_commit(catalog=True, shared=True, using=using)


@receiver(post_save, sender="storefront.ShippingZone", dispatch_uid="offer_changes.zone_saved")
@receiver(post_delete, sender="storefront.ShippingZone", dispatch_uid="offer_changes.zone_gone")
def shipping_zone_changed(sender, instance, **kwargs) -> None:
    # Also the zone index's stamp and the page cache's versions, once (offer_changes).
    offers_changed_notify(merchant_ids=[instance.merchant_id], using=kwargs.get("using"))


# Connect the page cache's receivers (the zone index's merchant receiver lives in
# offer_changes, imported above).
from storefront.caching import receivers as cache_receivers  # noqa: E402, F401
