from decimal import Decimal

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core import mail

from storefront.carts.pricing_summary import cart_pricing_summary
from storefront.carts.services import cart_get_or_create, cart_line_set_quantity, cart_merge
from storefront.catalog.services import offer_update
from storefront.checkout.review import CheckoutChanged
from storefront.errors import Conflict, NotFound, ValidationFailed
from storefront.models import CartLine, MerchantOrder, Offer, Order, OrderEvent, Payment
from storefront.orders.services import merchant_order_transition
from storefront.payments.services import order_payment_for
from tests.factories import CartFactory, CartLineFactory, UserFactory
from tests.storefront.orders.conftest import POSTAL_CODE, new_key, place, review_token

pytestmark = pytest.mark.django_db


def _pay(order, status: str) -> None:
    payment = order_payment_for(order=order)
    payment.change_status(status)


def test_place_splits_the_cart_into_one_package_per_merchant_priced_as_the_cart(
    two_merchant_cart,
):
    summary = cart_pricing_summary(cart=two_merchant_cart)
    order = place(two_merchant_cart)
    packages = list(order.merchant_orders.order_by("pk"))
    assert order.status == Order.Status.PENDING
    assert order.total == summary.total
    assert [(p.subtotal, p.discount, p.shipping, p.cost) for p in packages] == [
        (g.subtotal, g.discount, g.shipping, g.total) for g in summary.groups
    ]
    assert sum(p.cost for p in packages) == order.total
    assert packages[0].discount == 250  # 10% of 2 x 12.50
    lines = [line for p in packages for line in p.lines.all()]
    assert [(line.quantity, line.unit_price) for line in lines] == [(2, 1250), (1, 799)]
    assert lines[0].gtin and lines[0].merchant_sku
    assert Payment.objects.get(order=order).total == Decimal(order.total) / 100


def test_place_takes_the_stock_and_empties_the_cart(two_merchant_cart):
    limited = two_merchant_cart.lines.get(quantity=2).offer
    version = two_merchant_cart.version
    place(two_merchant_cart)
    assert Offer.objects.get(pk=limited.pk).stock == 3
    assert not CartLine.objects.filter(cart=two_merchant_cart).exists()
    two_merchant_cart.refresh_from_db()
    assert two_merchant_cart.version == version + 1


def test_the_same_key_twice_places_one_order(two_merchant_cart):
    token, key = review_token(two_merchant_cart), new_key()
    first = place(two_merchant_cart, token=token, key=key)
    again = place(two_merchant_cart, token=token, key=key)
    assert again.pk == first.pk
    assert Order.objects.count() == 1
    assert Offer.objects.filter(stock=3).count() == 1


def test_a_price_change_after_the_review_is_a_409_with_the_new_total_and_nothing_written(
    two_merchant_cart,
):
    token = review_token(two_merchant_cart)
    offer = two_merchant_cart.lines.get(quantity=2).offer
    offer_update(offer=offer, unit_price=1300)
    with pytest.raises(CheckoutChanged) as raised:
        place(two_merchant_cart, token=token)
    new_total = cart_pricing_summary(cart=two_merchant_cart).total
    assert raised.value.http_status == 409
    assert raised.value.total == new_total
    codes = {change["code"] for change in raised.value.changes}
    assert {"price_changed", "total_changed"} <= codes
    assert Order.objects.count() == 0
    assert Offer.objects.get(pk=offer.pk).stock == 5
    assert two_merchant_cart.lines.count() == 2


def test_a_quantity_change_after_the_review_is_a_409(two_merchant_cart):
    token = review_token(two_merchant_cart)
    line = two_merchant_cart.lines.get(quantity=2)
    cart_line_set_quantity(cart=two_merchant_cart, line_id=line.pk, quantity=1)
    with pytest.raises(CheckoutChanged):
        place(two_merchant_cart, token=token)
    assert Order.objects.count() == 0


def test_stock_gone_after_the_review_is_a_409_naming_the_line(two_merchant_cart):
    token = review_token(two_merchant_cart)
    offer = two_merchant_cart.lines.get(quantity=2).offer
    offer_update(offer=offer, stock=1)
    with pytest.raises(CheckoutChanged) as raised:
        place(two_merchant_cart, token=token)
    assert "insufficient_stock" in {change["code"] for change in raised.value.changes}
    assert Offer.objects.get(pk=offer.pk).stock == 1
    assert Order.objects.count() == 0


def test_an_address_in_another_postal_code_than_the_priced_cart_is_refused(two_merchant_cart):
    with pytest.raises(CheckoutChanged):
        place(two_merchant_cart, postal_code="80331")
    assert Order.objects.count() == 0


@pytest.mark.parametrize(
    ("token", "key", "code"),
    [
        ("", None, "review_token_missing"),
        ("forged:token", None, "review_token_invalid"),
        (None, "short", "idempotency_key_invalid"),
        (None, "has spaces in it", "idempotency_key_invalid"),
    ],
)
def test_bad_tokens_and_keys_are_400_and_write_nothing(two_merchant_cart, token, key, code):
    with pytest.raises(ValidationFailed) as raised:
        place(two_merchant_cart, token=token, key=key)
    assert raised.value.code == code
    assert Order.objects.count() == 0


def test_a_review_of_another_cart_is_refused(two_merchant_cart):
    other = CartLineFactory(cart=CartFactory(postal_code=POSTAL_CODE)).cart
    with pytest.raises(ValidationFailed):
        place(two_merchant_cart, token=review_token(other))


def test_a_review_of_a_guest_cart_merged_at_sign_in_is_a_409_to_review_again(
    two_merchant_cart,
):
    guest = CartFactory(owner=None, session_key="guest", postal_code=POSTAL_CODE)
    CartLineFactory(cart=guest)
    token = review_token(guest)
    cart_merge(source=guest, target=two_merchant_cart)
    with pytest.raises(Conflict) as refused:
        place(two_merchant_cart, token=token)
    assert refused.value.code == "review_cart_merged"
    assert not Order.objects.exists()


def test_an_empty_cart_cannot_be_placed(db):
    cart = CartFactory(postal_code=POSTAL_CODE)
    token = review_token(cart)
    with pytest.raises(Conflict) as raised:
        place(cart, token=token)
    assert raised.value.code == "cart_empty"


def test_paid_order_is_confirmed_by_mail_once(
    two_merchant_cart, django_capture_on_commit_callbacks
):
    order = place(two_merchant_cart)
    with django_capture_on_commit_callbacks(execute=True):
        _pay(order, "confirmed")
    with django_capture_on_commit_callbacks(execute=True):
        _pay(order, "confirmed")
    order.refresh_from_db()
    assert order.status == Order.Status.PAID
    assert order.confirmation_sent_at is not None
    assert len(mail.outbox) == 1
    assert order.number in mail.outbox[0].subject
    assert mail.outbox[0].to == ["ada@example.com"]


def test_failed_payment_releases_the_stock_and_cancels_the_packages(two_merchant_cart):
    offer = two_merchant_cart.lines.get(quantity=2).offer
    order = place(two_merchant_cart)
    assert Offer.objects.get(pk=offer.pk).stock == 3
    _pay(order, "rejected")
    order.refresh_from_db()
    assert order.status == Order.Status.FAILED
    assert Offer.objects.get(pk=offer.pk).stock == 5
    assert set(order.merchant_orders.values_list("status", flat=True)) == {"cancelled"}
    _pay(order, "rejected")  # seen before: nothing given back twice
    assert Offer.objects.get(pk=offer.pk).stock == 5


def _lines(cart) -> set[tuple[int, int]]:
    return set(CartLine.objects.filter(cart=cart).values_list("offer_id", "quantity"))


def test_failed_payment_puts_the_lines_back_into_the_cart_to_try_again(two_merchant_cart):
    before = _lines(two_merchant_cart)
    order = place(two_merchant_cart)
    two_merchant_cart.refresh_from_db()
    emptied_version = two_merchant_cart.version
    assert _lines(two_merchant_cart) == set()
    _pay(order, "rejected")
    assert _lines(two_merchant_cart) == before
    two_merchant_cart.refresh_from_db()
    assert two_merchant_cart.version == emptied_version + 1
    _pay(order, "error")  # settled already: nothing put back twice
    assert CartLine.objects.filter(cart=two_merchant_cart).count() == len(before)
    again = place(two_merchant_cart)
    assert again.pk != order.pk and again.total == order.total


def test_a_guests_failed_payment_restores_the_guest_cart(db):
    cart = CartFactory(owner=None, session_key="guest-session", postal_code=POSTAL_CODE)
    CartLineFactory(cart=cart, quantity=3)
    before = _lines(cart)
    order = place(cart, user=AnonymousUser())
    assert order.owner is None and _lines(cart) == set()
    _pay(order, "rejected")
    assert _lines(cart) == before


def _expire(order) -> None:
    from datetime import timedelta

    from django.conf import settings
    from django.utils import timezone

    from storefront.orders.expiry import orders_unpaid_expire

    later = timezone.now() + timedelta(seconds=settings.ORDER_PAYMENT_TIMEOUT_S + 1)
    assert orders_unpaid_expire(now=later) == 1


@pytest.mark.parametrize(
    "fail",
    [lambda order: _pay(order, "rejected"), lambda order: _pay(order, "error"), _expire],
    ids=["rejected", "error", "not-paid-in-time"],
)
@pytest.mark.parametrize("account_had_a_cart", [False, True])
def test_a_guest_who_signs_in_after_placing_gets_the_lines_back_in_the_account_cart(
    db, fail, account_had_a_cart
):
    guest = CartFactory(owner=None, session_key="guest-session", postal_code=POSTAL_CODE)
    CartLineFactory(cart=guest, quantity=3)
    CartLineFactory(cart=guest, quantity=1)
    before = _lines(guest)
    order = place(guest, user=AnonymousUser())
    user = UserFactory()
    kept = CartLineFactory(cart=CartFactory(owner=user)) if account_had_a_cart else None
    account = cart_get_or_create(user=user)
    cart_merge(source=guest, target=account)  # what signing in does with the guest cart
    account.refresh_from_db()
    merged_version = account.version

    fail(order)

    order.refresh_from_db()
    assert order.status == Order.Status.FAILED and order.owner is None
    extra = {(kept.offer_id, kept.quantity)} if kept else set()
    assert _lines(account) == before | extra
    account.refresh_from_db()
    assert account.version == merged_version + 1  # a review of the merged cart is stale


def test_an_order_remembers_the_cart_its_lines_go_back_to(two_merchant_cart):
    order = place(two_merchant_cart)
    assert order.cart_id == two_merchant_cart.pk


def test_a_product_added_again_meanwhile_keeps_the_newer_line(two_merchant_cart):
    line = two_merchant_cart.lines.get(quantity=2)
    order = place(two_merchant_cart)
    CartLineFactory(cart=two_merchant_cart, offer=line.offer, quantity=1)
    _pay(order, "rejected")
    restored = CartLine.objects.filter(cart=two_merchant_cart)
    assert restored.count() == 2
    assert restored.get(product=line.product).quantity == 1


def test_waiting_payment_keeps_the_order_pending(two_merchant_cart):
    order = place(two_merchant_cart)
    _pay(order, "input")
    order.refresh_from_db()
    assert order.status == Order.Status.PENDING


@pytest.fixture
def paid_order(two_merchant_cart):
    order = place(two_merchant_cart)
    _pay(order, "confirmed")
    order.refresh_from_db()
    return order


def _staff_of(package):
    from storefront.models import MerchantStaff

    user = UserFactory(is_staff=True)
    MerchantStaff.objects.create(user=user, merchant=package.merchant)
    return user


def test_merchant_staff_accept_ship_deliver_with_history(paid_order):
    package = paid_order.merchant_orders.first()
    staff = _staff_of(package)
    merchant_order_transition(package=package, action="accept", user=staff)
    merchant_order_transition(
        package=package, action="ship", user=staff, tracking_reference="DHL-123"
    )
    merchant_order_transition(package=package, action="deliver", user=staff)
    package.refresh_from_db()
    assert package.status == MerchantOrder.Status.DELIVERED
    assert package.tracking_reference == "DHL-123"
    events = list(OrderEvent.objects.filter(merchant_order=package))
    assert [(e.from_status, e.to_status) for e in events] == [
        ("placed", "accepted"),
        ("accepted", "shipped"),
        ("shipped", "delivered"),
    ]
    assert {e.by_id for e in events} == {staff.pk}


def test_staff_of_another_merchant_cannot_see_or_act(paid_order):
    mine, theirs = paid_order.merchant_orders.order_by("pk")
    staff = _staff_of(mine)
    with pytest.raises(NotFound):
        merchant_order_transition(package=theirs, action="accept", user=staff)
    assert MerchantOrder.objects.get(pk=theirs.pk).status == "placed"


def test_a_shopper_cannot_act_on_packages(paid_order):
    package = paid_order.merchant_orders.first()
    with pytest.raises(NotFound):
        merchant_order_transition(package=package, action="accept", user=paid_order.owner)


def test_shipping_needs_a_tracking_reference_and_an_accepted_package(paid_order):
    package = paid_order.merchant_orders.first()
    staff = _staff_of(package)
    with pytest.raises(Conflict):
        merchant_order_transition(
            package=package, action="ship", user=staff, tracking_reference="X1"
        )
    merchant_order_transition(package=package, action="accept", user=staff)
    with pytest.raises(ValidationFailed):
        merchant_order_transition(
            package=package, action="ship", user=staff, tracking_reference=" "
        )
    with pytest.raises(ValidationFailed):
        merchant_order_transition(package=package, action="fly", user=staff)
    assert MerchantOrder.objects.get(pk=package.pk).status == "accepted"


def test_unpaid_orders_cannot_be_accepted(two_merchant_cart):
    order = place(two_merchant_cart)
    package = order.merchant_orders.first()
    with pytest.raises(Conflict):
        merchant_order_transition(package=package, action="accept", user=_staff_of(package))


def test_cancel_restores_the_stock_and_needs_a_reason(paid_order):
    package = paid_order.merchant_orders.order_by("pk").first()
    offer = package.lines.get().offer
    staff = _staff_of(package)
    with pytest.raises(ValidationFailed):
        merchant_order_transition(package=package, action="cancel", user=staff, reason="")
    assert Offer.objects.get(pk=offer.pk).stock == 3
    merchant_order_transition(package=package, action="cancel", user=staff, reason="Damaged")
    assert Offer.objects.get(pk=offer.pk).stock == 5
    paid_order.refresh_from_db()
    assert paid_order.status == Order.Status.PAID  # the other package still ships
    with pytest.raises(Conflict):
        merchant_order_transition(package=package, action="cancel", user=staff, reason="again")
    assert Offer.objects.get(pk=offer.pk).stock == 5


def test_shipped_packages_cannot_be_cancelled(paid_order):
    package = paid_order.merchant_orders.first()
    staff = _staff_of(package)
    merchant_order_transition(package=package, action="accept", user=staff)
    merchant_order_transition(package=package, action="ship", user=staff, tracking_reference="T")
    with pytest.raises(Conflict):
        merchant_order_transition(package=package, action="cancel", user=staff, reason="late")


def test_catalog_admins_act_on_every_merchant(paid_order):
    admin = UserFactory(is_staff=True, is_superuser=True)
    for package in paid_order.merchant_orders.all():
        merchant_order_transition(package=package, action="accept", user=admin)
    assert set(paid_order.merchant_orders.values_list("status", flat=True)) == {"accepted"}


def test_unlimited_stock_stays_unlimited(db):
    cart = CartLineFactory(cart=CartFactory(postal_code=POSTAL_CODE), quantity=3).cart
    place(cart)
    assert Offer.objects.get().stock is None


def test_orders_unpaid_in_time_fail_and_give_the_stock_back(two_merchant_cart, settings):
    from datetime import timedelta

    from django.utils import timezone

    from storefront.orders.expiry import orders_unpaid_expire

    settings.ORDER_PAYMENT_TIMEOUT_S = 600
    offer = two_merchant_cart.lines.get(quantity=2).offer
    order = place(two_merchant_cart)
    assert orders_unpaid_expire() == 0  # placed just now
    later = timezone.now() + timedelta(seconds=601)
    assert orders_unpaid_expire(now=later) == 1
    order.refresh_from_db()
    assert order.status == Order.Status.FAILED
    assert Offer.objects.get(pk=offer.pk).stock == 5
    assert order_payment_for(order=order).status == "cancelled"
    assert two_merchant_cart.lines.get(offer=offer).quantity == 2  # back in the cart
    assert orders_unpaid_expire(now=later) == 0
    assert two_merchant_cart.lines.count() == 2


def test_paid_orders_never_expire(paid_order):
    from datetime import timedelta

    from django.utils import timezone

    from storefront.orders.expiry import orders_unpaid_expire

    assert orders_unpaid_expire(now=timezone.now() + timedelta(days=30)) == 0


def test_cancelling_a_paid_package_refunds_its_cost_once(
    paid_order, django_capture_on_commit_callbacks
):
    from storefront.models import Refund
    from storefront.payments.services import merchant_order_refund

    package = paid_order.merchant_orders.order_by("pk").first()
    with django_capture_on_commit_callbacks(execute=True):
        merchant_order_transition(
            package=package, action="cancel", user=_staff_of(package), reason="Out of stock"
        )
    refund = Refund.objects.get(merchant_order=package)
    assert (refund.status, refund.amount) == (Refund.Status.SUCCEEDED, package.cost)
    package.refresh_from_db()
    assert package.refunded_at is not None
    assert merchant_order_refund(merchant_order_id=package.pk) is False
    paid_order.refresh_from_db()
    assert paid_order.amount_refunded == package.cost
    assert paid_order.amount_net == paid_order.total - package.cost
    assert paid_order.status == Order.Status.PAID
