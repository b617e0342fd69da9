"""Demo data of checkout: a merchant staff login and a couple of past orders of the demo
shopper, placed and paid through the real services (so they add up like any order)."""

from django.contrib.auth import get_user_model
from django.db import transaction

from storefront.carts.pricing_summary import cart_pricing_summary
from storefront.carts.services import cart_get_or_create, cart_line_add
from storefront.catalog.selectors import offer_buyable_q
from storefront.checkout.address import ShippingAddress
from storefront.checkout.review import review_token_make
from storefront.checkout.services import order_place
from storefront.demo.catalog import DEMO_DESTINATION, DEMO_SHOPPER
from storefront.models import Merchant, MerchantStaff, Offer, Order
from storefront.orders.services import merchant_order_transition
from storefront.payments.services import order_payment_for

DEMO_MERCHANT_STAFF = ("merchant", "demo-merchant-pass")


def demo_merchant_staff_ensure() -> Merchant:
    """The demo merchant login: staff of the first merchant by name that sells something
    with unlimited stock (the past orders then leave the seeded catalog as it was).
    Idempotent."""
    unlimited = Offer.objects.filter(offer_buyable_q(), stock__isnull=True)
    merchant = (
        Merchant.objects.filter(active=True, pk__in=unlimited.values("merchant_id"))
        .order_by("name", "pk")
        .first()
    ) or Merchant.objects.order_by("name", "pk").first()
    if merchant is None:
        raise ValueError("Seed the catalog first: there is no merchant to work for.")
    user, _ = get_user_model().objects.get_or_create(username=DEMO_MERCHANT_STAFF[0])
    user.set_password(DEMO_MERCHANT_STAFF[1])
    user.email = "merchant@example.com"
    user.is_staff, user.is_superuser = True, False
    user.save()
    MerchantStaff.objects.update_or_create(user=user, defaults={"merchant": merchant})
    return merchant


def _demo_address(shopper) -> ShippingAddress:
    return ShippingAddress(
        email=shopper.email or "demo@example.com",
        full_name="Demo Shopper",
        address_line="Invalidenstr. 116",
        city="Berlin",
        postal_code=DEMO_DESTINATION,
        country="DE",
    )


@transaction.atomic
def demo_orders_seed(*, merchant: Merchant) -> list[Order]:
    """Two paid past orders of the demo shopper, each with a package from ``merchant`` (one
    of them already shipped by the demo merchant login) and one from another merchant.
    Nothing when the shopper has orders already."""
    shopper = get_user_model().objects.get(username=DEMO_SHOPPER[0])
    if Order.objects.filter(owner=shopper).exists():
        return []
    staff = MerchantStaff.objects.get(merchant=merchant).user
    # Unlimited stock only: the seeded catalog (and its checksum) stays as seeded.
    buyable = Offer.objects.filter(offer_buyable_q(), stock__isnull=True).order_by("pk")
    own = list(buyable.filter(merchant=merchant)[:2])
    # Merchants with warehouses are the split cart's (storefront.demo.fulfillment): the past
    # orders leave their stock as seeded too.
    others = list(
        buyable.exclude(merchant=merchant).exclude(merchant__warehouses__isnull=False)[:2]
    )
    orders = []
    for index, (mine, other) in enumerate(zip(own, others, strict=False)):
        cart = cart_get_or_create(user=shopper)
        cart_line_add(cart=cart, offer=mine, quantity=1)
        if other.product_id != mine.product_id:
            cart_line_add(cart=cart, offer=other, quantity=2)
        token = review_token_make(cart_pricing_summary(cart=cart))
        order = order_place(
            cart=cart,
            user=shopper,
            address=_demo_address(shopper),
            review_token=token,
            idempotency_key=f"demo-order-{index}",
        )
        order_payment_for(order=order).change_status("confirmed")
        if index == 0:
            package = order.merchant_orders.get(merchant=merchant)
            merchant_order_transition(package=package, action="accept", user=staff)
            merchant_order_transition(
                package=package, action="ship", user=staff, tracking_reference="DEMO-TRACK-1"
            )
        orders.append(order)
    return orders
