"""An anonymous shopper's cart survives login: it is merged into the user's cart.

Connected on import; ``storefront.web.urls`` imports this module so that every login that
goes through the site's URLs (our login and sign-up pages, the admin) is covered.
"""

from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver

from storefront.carts.services import cart_get_or_create, cart_merge
from storefront.web.carts import anonymous_cart_pop, request_cart_forget


@receiver(user_logged_in, dispatch_uid="storefront.web.merge_anonymous_cart")
def merge_anonymous_cart(sender, request, user, **kwargs) -> None:
    if request is None or not hasattr(request, "session"):
        return
    source = anonymous_cart_pop(request)
    if source is None:
        return
    cart_merge(source=source, target=cart_get_or_create(user=user))
    request_cart_forget(request)
