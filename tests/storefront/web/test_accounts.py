import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from storefront.carts.services import cart_get_or_create, cart_line_add
from storefront.models import Cart, CartLine
from tests.factories import TEST_PASSWORD
from tests.storefront.web.conftest import add_to_cart

pytestmark = pytest.mark.django_db


def login(client, username, password=TEST_PASSWORD, **extra):
    return client.post(reverse("login"), {"username": username, "password": password, **extra})


def test_login_page_says_the_cart_is_kept(client, market):
    add_to_cart(client, market.dear_offers[0], 2)
    html = client.get(reverse("login")).content.decode()
    assert 'for="id_username"' in html and 'for="id_password"' in html
    assert "The 2 items in your cart will be kept when you sign in." in html


def test_login_redirects_to_the_catalog_and_greets(client, shopper):
    response = login(client, "alice")
    assert response.status_code == 302
    assert response["Location"] == reverse("catalog")
    assert "Welcome back, alice." in client.get(reverse("catalog")).content.decode()


def test_login_follows_next(client, shopper):
    response = login(client, "alice", next=reverse("cart"))
    assert response["Location"] == reverse("cart")


def test_wrong_password_shows_an_error(client, shopper):
    response = login(client, "alice", "nope")
    assert response.status_code == 200
    assert "Please enter a correct username and password" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_anonymous_cart_is_merged_into_the_users_cart_at_login(client, market, shopper):
    theirs = cart_get_or_create(user=shopper)
    cart_line_add(cart=theirs, offer=market.bundle_offers[1], quantity=1)
    cart_line_add(cart=theirs, offer=market.bundle_offers[0], quantity=5)
    add_to_cart(client, market.dear_offers[0], 2)
    client.post(reverse("cart_destination"), {"postal_code": "10115"})
    anonymous = Cart.objects.get(owner__isnull=True)

    login(client, "alice")

    assert not Cart.objects.filter(pk=anonymous.pk).exists()
    lines = {line.product_id: line for line in CartLine.objects.filter(cart=theirs)}
    assert set(lines) == {market.products[0].pk, market.products[1].pk}
    # The line chosen last, while anonymous, wins over the account's older one.
    assert (lines[market.products[0].pk].offer, lines[market.products[0].pk].quantity) == (
        market.dear_offers[0],
        2,
    )
    theirs.refresh_from_db()
    assert theirs.postal_code == "10115"
    html = client.get(reverse("cart")).content.decode()
    assert "Voltra Widget" in html and "Nexon Gizmo" in html


def test_login_without_an_anonymous_cart_leaves_the_users_cart_alone(client, market, shopper):
    theirs = cart_get_or_create(user=shopper)
    cart_line_add(cart=theirs, offer=market.bundle_offers[1], quantity=1)
    version = Cart.objects.get(pk=theirs.pk).version
    login(client, "alice")
    assert Cart.objects.get(pk=theirs.pk).version == version
    assert Cart.objects.count() == 1


def test_logout_is_a_post_and_keeps_the_users_cart(client, market, shopper):
    client.force_login(shopper)
    add_to_cart(client, market.dear_offers[0])
    assert client.get(reverse("logout")).status_code == 405
    response = client.post(reverse("logout"))
    assert response.status_code == 302
    assert response["Location"] == reverse("catalog")
    html = client.get(reverse("catalog")).content.decode()
    assert "You are signed out." in html
    assert "Sign in" in html
    assert CartLine.objects.filter(cart__owner=shopper).count() == 1


def test_signup_creates_the_account_signs_in_and_keeps_the_cart(client, market):
    add_to_cart(client, market.dear_offers[0], 3)
    assert "The 3 items in your cart will move" in client.get(reverse("signup")).content.decode()
    response = client.post(
        reverse("signup"),
        {
            "username": "bob",
            "email": "bob@example.com",
            "password1": "a-long-Passphrase-42",
            "password2": "a-long-Passphrase-42",
        },
    )
    assert response.status_code == 302
    user = get_user_model().objects.get(username="bob")
    assert client.session["_auth_user_id"] == str(user.pk)
    assert CartLine.objects.get().cart.owner == user
    assert not Cart.objects.filter(owner__isnull=True).exists()


def test_signup_with_bad_input_shows_errors(client, shopper):
    response = client.post(
        reverse("signup"),
        {"username": "alice", "password1": "short", "password2": "other"},
    )
    html = response.content.decode()
    assert response.status_code == 400
    assert "A user with that username already exists." in html
    assert "The two password fields didn’t match." in html  # noqa: RUF001
    assert 'aria-invalid="true"' in html


def test_signed_in_users_skip_the_login_and_signup_pages(client, shopper):
    client.force_login(shopper)
    assert client.get(reverse("login"))["Location"] == reverse("catalog")
    assert client.get(reverse("signup"))["Location"] == reverse("catalog")
