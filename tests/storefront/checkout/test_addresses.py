"""Saved addresses: the last used fills the next checkout; choose another or enter a new one."""

import pytest
from django.urls import reverse

from storefront.checkout.addresses import ADDRESSES_KEPT, address_list, address_remember
from storefront.models import Address, Cart
from tests.factories import TEST_PASSWORD, UserFactory
from tests.storefront.orders.conftest import POSTAL_CODE, address
from tests.storefront.web.conftest import add_to_cart, market  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db

FORM = {
    "email": "ada@example.com",
    "full_name": "Ada Lovelace",
    "address_line": "Invalidenstr. 1",
    "city": "Berlin",
    "postal_code": POSTAL_CODE,
    "country": "DE",
}


def test_the_same_place_again_is_one_address_the_last_used_first(db):
    user = UserFactory()
    home = address_remember(user=user, address=address())
    work = address_remember(user=user, address=address(address_line="Work 5"))
    again = address_remember(user=user, address=address(email="new@example.com"))
    assert again is not None and home is not None and work is not None
    assert again.pk == home.pk and again.email == "new@example.com"
    assert [a.pk for a in address_list(user=user)] == [home.pk, work.pk]


def test_only_the_most_recent_are_kept_and_guests_keep_none(db):
    user = UserFactory()
    for number in range(ADDRESSES_KEPT + 2):
        address_remember(user=user, address=address(address_line=f"Street {number}"))
    kept = Address.objects.filter(owner=user)
    assert kept.count() == ADDRESSES_KEPT
    assert "Street 0" not in {a.address_line for a in kept}
    guest = type("Guest", (), {"is_authenticated": False})()
    assert address_remember(user=guest, address=address()) is None


@pytest.fixture
def shopper(client, market):  # noqa: F811
    user = UserFactory(email="ada@example.com")
    client.login(username=user.username, password=TEST_PASSWORD)
    add_to_cart(client, market.dear_offers[0])
    return user


def _value(html: str, name: str) -> str:
    marker = f'name="{name}"'
    tag = html[html.index(marker) - 200 : html.index(marker) + 300]
    return tag.split('value="')[1].split('"')[0] if 'value="' in tag else ""


def test_a_signed_in_shoppers_checkout_is_filled_with_the_address_used_last(client, shopper):
    assert client.get(reverse("checkout")).context["saved_addresses"].count() == 0
    client.post(reverse("checkout"), {**FORM, "address_line": "Old Street 9"})
    client.post(reverse("checkout"), FORM)
    session = client.session  # a later checkout: this one's address is gone
    session.pop("checkout_address", None)
    session.save()
    page = client.get(reverse("checkout"))
    html = page.content.decode()
    assert page.context["form"].initial["address_line"] == "Invalidenstr. 1"
    assert html.count('data-testid="saved-address"') == 2
    assert "Use this address" in html and 'href="?address=new"' in html


def test_choose_another_saved_address_or_a_new_one(client, shopper):
    client.post(reverse("checkout"), {**FORM, "address_line": "Old Street 9"})
    client.post(reverse("checkout"), FORM)
    old = Address.objects.get(address_line="Old Street 9")
    page = client.get(reverse("checkout"), {"address": old.pk})
    assert page.context["form"].initial["address_line"] == "Old Street 9"
    assert page.context["chosen_address_id"] == old.pk
    new = client.get(reverse("checkout"), {"address": "new"})
    assert "address_line" not in new.context["form"].initial
    assert new.context["form"].initial["email"] == "ada@example.com"


def test_another_shoppers_address_is_never_offered(client, shopper):
    other = address_remember(user=UserFactory(), address=address(address_line="Secret 1"))
    assert other is not None
    page = client.get(reverse("checkout"), {"address": other.pk})
    assert "Secret 1" not in page.content.decode()


def test_a_guest_gets_no_saved_addresses(client, market):  # noqa: F811
    add_to_cart(client, market.dear_offers[0])
    client.post(reverse("checkout"), FORM)
    assert not Address.objects.exists()
    assert Cart.objects.count() == 1
