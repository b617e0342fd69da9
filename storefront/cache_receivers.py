"""Replaces the page cache's versions (``storefront.cache_versions``) after every ORM write
that changes what a cached page or API list shows: products, offers, merchants, their shipping
zones, categories. Writes that bypass ``save()`` (the admin's bulk actions, the feed import,
stock moved by ``QuerySet.update``) go through ``catalog_cheapest_mark_stale``, which bumps the
same versions.

``storefront.offer_changes.offers_changed`` (the price watch's signal, sent after the commit
by every offer, terms and zone writer) replaces the same versions too, so a writer that only
notifies it still reaches the page cache.

Imported by ``storefront.receivers``, so connected whenever the models are.
"""

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from storefront.cache_versions import (
    CATALOG,
    SHARED,
    cache_versions_bump,
    cache_versions_bump_on_commit,
    product_version_name,
)
from storefront.offer_changes import offers_changed


@receiver(post_save, sender="storefront.Offer", dispatch_uid="page_cache.offer_saved")
@receiver(post_delete, sender="storefront.Offer", dispatch_uid="page_cache.offer_deleted")
def offer_changed(sender, instance, **kwargs) -> None:
    # An offer moved to another product in the admin changes the page it left, too.
    previous = getattr(instance, "_cheapest_previous_product_id", None)
    cache_versions_bump_on_commit(product_ids=[instance.product_id, previous])


@receiver(post_save, sender="storefront.Product", dispatch_uid="page_cache.product_saved")
@receiver(post_delete, sender="storefront.Product", dispatch_uid="page_cache.product_deleted")
def product_changed(sender, instance, **kwargs) -> None:
    cache_versions_bump_on_commit(product_ids=[instance.pk])


@receiver(post_save, sender="storefront.Merchant", dispatch_uid="page_cache.merchant_saved")
@receiver(post_delete, sender="storefront.Merchant", dispatch_uid="page_cache.merchant_deleted")
@receiver(post_save, sender="storefront.Category", dispatch_uid="page_cache.category_saved")
@receiver(post_delete, sender="storefront.Category", dispatch_uid="page_cache.category_deleted")
def listing_terms_changed(sender, instance, **kwargs) -> None:
    """A merchant's name, terms or activity, or a category: every page may show them."""
    cache_versions_bump_on_commit(catalog=True, shared=True)


@receiver(post_save, sender="storefront.ShippingZone", dispatch_uid="page_cache.zone_saved")
@receiver(post_delete, sender="storefront.ShippingZone", dispatch_uid="page_cache.zone_deleted")
def zone_changed(sender, instance, **kwargs) -> None:
    # Zones show only on product pages (a postal code's shipping) and the merchant API.
    cache_versions_bump_on_commit(catalog=True, shared=True)


@receiver(offers_changed, dispatch_uid="page_cache.offers_changed")
def offers_changed_received(sender, product_ids, merchant_ids, **kwargs) -> None:
    names = {CATALOG, *(product_version_name(i) for i in product_ids)}
    if merchant_ids:
        names.add(SHARED)
    cache_versions_bump(names=names)
