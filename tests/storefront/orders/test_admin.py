import pytest
from django.test import Client
from django.urls import reverse

from storefront.models import MerchantOrder, MerchantStaff, OrderEvent
from storefront.payments.services import order_payment_for
from tests.factories import UserFactory
from tests.storefront.orders.conftest import place

pytestmark = pytest.mark.django_db

CHANGELIST = reverse("admin:storefront_merchantorder_changelist")


@pytest.fixture
def paid_packages(two_merchant_cart):
    order = place(two_merchant_cart)
    order_payment_for(order=order).change_status("confirmed")
    return list(order.merchant_orders.order_by("pk"))


def _staff_client(merchant) -> tuple[Client, object]:
    user = UserFactory(is_staff=True)
    MerchantStaff.objects.create(user=user, merchant=merchant)
    client = Client()
    client.force_login(user)
    return client, user


def _act(client, action, packages, text=""):
    return client.post(
        CHANGELIST,
        {"action": action, "_selected_action": [p.pk for p in packages], "text": text},
    )


def test_merchant_staff_see_only_their_packages(paid_packages):
    mine, theirs = paid_packages
    client, _ = _staff_client(mine.merchant)
    page = client.get(CHANGELIST)
    assert page.status_code == 200
    assert [p.pk for p in page.context["cl"].result_list] == [mine.pk]
    assert (
        client.get(reverse("admin:storefront_merchantorder_change", args=[mine.pk])).status_code
        == 200
    )
    other = client.get(reverse("admin:storefront_merchantorder_change", args=[theirs.pk]))
    assert other.status_code in (302, 404)
    assert client.get(reverse("admin:storefront_order_changelist")).status_code == 403
    assert client.get(reverse("admin:storefront_product_changelist")).status_code == 403


def test_merchant_staff_accept_and_ship_with_tracking(paid_packages):
    mine, theirs = paid_packages
    client, user = _staff_client(mine.merchant)
    _act(client, "accept_selected", [mine, theirs])
    _act(client, "ship_selected", [mine], text="DHL 0042")
    mine.refresh_from_db()
    theirs.refresh_from_db()
    assert (mine.status, mine.tracking_reference) == ("shipped", "DHL 0042")
    assert theirs.status == "placed"  # not in their list: never touched
    assert list(OrderEvent.objects.filter(merchant_order=mine).values_list("by", flat=True)) == [
        user.pk,
        user.pk,
    ]


def test_shipping_without_a_tracking_reference_is_refused_with_a_message(paid_packages):
    mine, _ = paid_packages
    client, _ = _staff_client(mine.merchant)
    _act(client, "accept_selected", [mine])
    response = _act(client, "ship_selected", [mine], text="")
    assert response.status_code == 302
    assert MerchantOrder.objects.get(pk=mine.pk).status == "accepted"
    page = client.get(CHANGELIST)
    assert "required" in page.content.decode()


def test_catalog_admins_see_every_package_and_order(paid_packages):
    client = Client()
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    page = client.get(CHANGELIST)
    assert len(page.context["cl"].result_list) == 2
    assert client.get(reverse("admin:storefront_order_changelist")).status_code == 200


def test_shoppers_do_not_get_into_the_admin(paid_packages):
    client = Client()
    client.force_login(paid_packages[0].order.owner)
    assert client.get(CHANGELIST).status_code == 302


def test_change_pages_show_lines_history_and_ship_to(paid_packages):
    mine, _ = paid_packages
    admin = Client()
    admin.force_login(UserFactory(is_staff=True, is_superuser=True))
    order_page = admin.get(reverse("admin:storefront_order_change", args=[mine.order_id]))
    assert order_page.status_code == 200
    client, _ = _staff_client(mine.merchant)
    page = client.get(reverse("admin:storefront_merchantorder_change", args=[mine.pk]))
    html = page.content.decode()
    assert page.status_code == 200
    assert "Invalidenstr. 1" in html and mine.lines.get().product_name in html
    assert mine.order.email not in html  # the customer beyond what shipping needs stays hidden
