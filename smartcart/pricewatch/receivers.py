"""Connects the price watch to ``storefront.catalog.offer_changes.offers_changed`` (sent after the
commit of every transaction that changed offers, terms or zones)."""

from django.dispatch import receiver

from storefront.catalog.offer_changes import offers_changed


@receiver(offers_changed, dispatch_uid="smartcart.price_watch.offers_changed")
def offers_changed_received(sender, product_ids, merchant_ids, **kwargs) -> None:
    from smartcart.pricewatch.services import price_watch_offers_changed

    price_watch_offers_changed(product_ids=sorted(product_ids), merchant_ids=sorted(merchant_ids))
