"""The merchant's side as a merchant meets it: which packages are paid, what to do next,
money in euros, and the shopper told once when a package ships."""

import re

import pytest
from django.core import mail
from django.test import Client
from django.urls import reverse

from storefront.errors import Conflict
from storefront.models import MerchantOrder, MerchantStaff
from storefront.money import format_money
from storefront.orders.emails import package_shipped_mail_send
from storefront.orders.services import merchant_order_transition
from storefront.outbox.models import OutboxMessage
from storefront.payments.services import order_payment_for
from tests.factories import CartFactory, CartLineFactory, OfferFactory, UserFactory
from tests.storefront.orders.conftest import POSTAL_CODE, place

pytestmark = pytest.mark.django_db

CHANGELIST = reverse("admin:storefront_merchantorder_changelist")


def _staff_client(merchant) -> tuple[Client, object]:
    user = UserFactory(is_staff=True)
    MerchantStaff.objects.create(user=user, merchant=merchant)
    client = Client()
    client.force_login(user)
    return client, user


@pytest.fixture
def packages(two_merchant_cart):
    """One merchant's two packages: one of a paid order, one of an order awaiting payment."""
    paid = place(two_merchant_cart)
    order_payment_for(order=paid).change_status("confirmed")
    package = paid.merchant_orders.order_by("pk").first()
    cart = CartFactory(postal_code=POSTAL_CODE)
    CartLineFactory(cart=cart, offer=OfferFactory(merchant=package.merchant, unit_price=609))
    cart.refresh_from_db()
    unpaid = place(cart)
    return package, unpaid.merchant_orders.get()


def _rows(html: str) -> list[str]:
    body = html.split('id="result_list"')[1].split("<tbody>")[1].split("</tbody>")[0]
    return re.findall(r"<tr>.*?</tr>", body, re.S)


def test_the_list_says_which_packages_are_paid_and_which_await_payment(packages):
    paid, unpaid = packages
    client, _ = _staff_client(paid.merchant)
    html = client.get(CHANGELIST).content.decode()
    assert len(_rows(html)) == 2
    paid_row = next(row for row in _rows(html) if paid.order.number in row)
    unpaid_row = next(row for row in _rows(html) if unpaid.order.number in row)
    assert "Paid" in paid_row and "Awaiting payment" not in paid_row
    assert "Awaiting payment: do not ship" in unpaid_row


@pytest.mark.parametrize(("value", "expected"), [("paid", 0), ("pending", 1)])
def test_the_payment_filter(packages, value, expected):
    client, _ = _staff_client(packages[0].merchant)
    page = client.get(CHANGELIST, {"payment": value})
    assert [p.pk for p in page.context["cl"].result_list] == [packages[expected].pk]
    assert "By payment" in page.content.decode()


def test_shipping_a_placed_package_says_accept_it_first(packages):
    paid, _ = packages
    client, user = _staff_client(paid.merchant)
    client.post(
        CHANGELIST, {"action": "ship_selected", "_selected_action": [paid.pk], "text": "DHL 1"}
    )
    page = client.get(CHANGELIST).content.decode()
    assert "Accept this package first" in page
    assert MerchantOrder.objects.get(pk=paid.pk).status == "placed"
    with pytest.raises(Conflict) as raised:
        merchant_order_transition(package=paid, action="ship", user=user, tracking_reference="X")
    assert raised.value.code == "accept_first"


def test_the_package_page_shows_money_in_euros_not_cents(packages):
    _, unpaid = packages
    client, _ = _staff_client(unpaid.merchant)
    html = client.get(reverse("admin:storefront_merchantorder_change", args=[unpaid.pk]))
    text = html.content.decode()
    assert format_money(609) in text  # the line's unit price and the items
    assert not re.search(r'<div class="readonly">\s*609\s*</div>', text)
    assert not re.search(r"<td[^>]*>\s*609\s*</td>", text)
    assert "the shopper has not paid yet" in text
    assert "Awaiting payment" in text


def test_the_shopper_is_mailed_the_tracking_number_once(
    packages, django_capture_on_commit_callbacks
):
    paid, _ = packages
    _, user = _staff_client(paid.merchant)
    merchant_order_transition(package=paid, action="accept", user=user)
    with django_capture_on_commit_callbacks(execute=True):
        merchant_order_transition(
            package=paid, action="ship", user=user, tracking_reference="DHL 0042"
        )
    assert OutboxMessage.objects.filter(task_name="storefront.package_shipped_mail_send").exists()
    shipped = [m for m in mail.outbox if "on its way" in m.subject]
    assert len(shipped) == 1
    assert shipped[0].to == [paid.order.email]
    assert "Tracking number: DHL 0042" in shipped[0].body
    assert paid.order.number in shipped[0].subject
    assert "Berlin, Germany" in shipped[0].body
    # A second delivery of the task (at least once) sends nothing more.
    assert package_shipped_mail_send(merchant_order_id=paid.pk) is False
    assert len([m for m in mail.outbox if "on its way" in m.subject]) == 1
    assert MerchantOrder.objects.get(pk=paid.pk).shipped_mail_sent_at is not None


def test_no_shipped_mail_for_a_package_not_shipped(packages):
    _, unpaid = packages
    assert package_shipped_mail_send(merchant_order_id=unpaid.pk) is False
    assert mail.outbox == []
