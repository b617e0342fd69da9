"""Replaces the page cache's versions (``storefront.caching.versions``) after ORM writes that
change what a cached page or API list shows and that ``offers_changed`` does not cover:
products, categories, a merchant's name, new and deleted merchants.

Offers, a merchant's terms and shipping zones are recorded by ``offers_changed_notify``
(``storefront.catalog.offer_changes``), which every writer of them calls (the model receivers in
``storefront.catalog.receivers``, the admin's bulk actions, the feed import); writes that bypass
``save()`` also go through ``catalog_cheapest_mark_stale``, which records the same versions.
Every one of them records into the transaction's one pending bump, so a transaction replaces
each version once, however many of these paths it took.

Imported by ``storefront.catalog.receivers``, so connected whenever the models are; a
merchant's saves are handled there, in one receiver (its terms, activity and the rest).
"""

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from storefront.caching.versions import cache_versions_bump_on_commit


@receiver(post_save, sender="storefront.Product", dispatch_uid="page_cache.product_saved")
@receiver(post_delete, sender="storefront.Product", dispatch_uid="page_cache.product_deleted")
def product_changed(sender, instance, **kwargs) -> None:
    cache_versions_bump_on_commit(product_ids=[instance.pk], using=kwargs.get("using"))


@receiver(post_delete, sender="storefront.Merchant", dispatch_uid="page_cache.merchant_deleted")
@receiver(post_save, sender="storefront.Category", dispatch_uid="page_cache.category_saved")
@receiver(post_delete, sender="storefront.Category", dispatch_uid="page_cache.category_deleted")
def listing_terms_changed(sender, instance, **kwargs) -> None:
    """A merchant gone, or a category: every page may show them."""
    cache_versions_bump_on_commit(catalog=True, shared=True, using=kwargs.get("using"))
