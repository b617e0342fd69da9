import pytest
from django.test import Client
from django.urls import reverse

from storefront.carts.services import cart_get_or_create, cart_line_add
from storefront.models import Cart, CartLine
from tests.storefront.web.conftest import add_to_cart

pytestmark = pytest.mark.django_db


def cart_of(client) -> Cart:
    return Cart.objects.get(session_key=client.session.session_key)


# --- empty states -------------------------------------------------------------------------


def test_no_cart_yet_shows_the_empty_state_and_creates_nothing(client, db):
    response = client.get(reverse("cart"))
    assert response.status_code == 200
    assert "Your cart is empty" in response.content.decode()
    assert not Cart.objects.exists()


def test_signed_in_user_with_an_empty_cart(client, shopper):
    cart_get_or_create(user=shopper)
    client.force_login(shopper)
    html = client.get(reverse("cart")).content.decode()
    assert "Your cart is empty" in html
    assert reverse("cart_improve") not in html


# --- adding -------------------------------------------------------------------------------


def test_add_an_offer_redirects_back_with_a_message(client, market):
    offer = market.dear_offers[0]
    response = add_to_cart(client, offer, 2)
    assert response.status_code == 302
    assert response["Location"] == reverse("product", args=[offer.product.slug])
    line = CartLine.objects.get()
    assert (line.offer_id, line.quantity, line.unit_price_snapshot) == (offer.pk, 2, 2500)
    assert line.cart.session_key == client.session.session_key
    page = client.get(response["Location"]).content.decode()
    assert "Added Voltra Widget from Dear Shop to your cart (2 in your cart now)." in page


def test_add_cheapest_picks_the_cheapest_offer_with_enough_stock(client, market):
    product = market.products[0]
    client.post(reverse("cart_add"), {"product": product.pk, "quantity": 1})
    # Delivered: the bundle shop's 23.00 + 5.99 beats the cheap shop's 22.00 + 8.99.
    assert CartLine.objects.get().offer == market.bundle_offers[0]
    # The cheap shop has 3; for 4 the cheapest that can supply them is the bundle shop.
    other = market.products[1]
    client.post(reverse("cart_add"), {"product": other.pk, "quantity": 4})
    assert CartLine.objects.get(product=other).offer == market.bundle_offers[1]


def test_add_follows_a_local_next_but_never_an_external_one(client, market):
    offer = market.dear_offers[0]
    local = add_to_cart(client, offer, next="/?q=widget")
    assert local["Location"] == "/?q=widget"
    external = add_to_cart(client, offer, next="https://evil.example/")
    assert external["Location"] == reverse("product", args=[offer.product.slug])


def test_add_quantity_zero_is_refused_on_the_product_page(client, market):
    offer = market.dear_offers[0]
    response = add_to_cart(client, offer, 0)
    html = response.content.decode()
    assert response.status_code == 400
    assert "Not added to your cart." in html
    assert "Quantity must be at least 1" in html
    assert 'aria-invalid="true"' in html
    assert not CartLine.objects.exists()


def test_add_a_non_number_is_refused(client, market):
    response = add_to_cart(client, market.dear_offers[0], "lots")
    assert response.status_code == 400
    assert "Enter a whole number." in response.content.decode()


def test_add_more_than_the_stock_is_a_conflict(client, market):
    response = add_to_cart(client, market.cheap_offers[0], 5)
    assert response.status_code == 409
    assert "Only 3 in stock at Cheap Shop" in response.content.decode()
    assert not CartLine.objects.exists()


def test_add_cheapest_when_nobody_has_enough_is_a_conflict(client, market):
    response = client.post(reverse("cart_add"), {"product": market.products[0].pk, "quantity": 999})
    # Dear and bundle shops have unlimited stock, so pick a product only the cheap shop sells.
    assert response.status_code == 302
    only_cheap = market.cheap_offers[2]
    for offer in (market.dear_offers[2], market.bundle_offers[2]):
        offer.active = False
        offer.save()
    response = client.post(reverse("cart_add"), {"product": only_cheap.product_id, "quantity": 4})
    assert response.status_code == 409
    assert "No merchant has 4 of this product in stock now." in response.content.decode()


def test_add_unknown_offer_or_product_is_404(client, db):
    assert client.post(reverse("cart_add"), {"offer": 999999, "quantity": 1}).status_code == 404
    assert client.post(reverse("cart_add"), {"product": 999999, "quantity": 1}).status_code == 404


def test_add_with_nothing_named_is_400(client, db):
    response = client.post(reverse("cart_add"), {"quantity": 1})
    assert response.status_code == 400
    assert "Nothing to add" in response.content.decode()


def test_add_inactive_offer_is_refused(client, market):
    offer = market.dear_offers[0]
    offer.active = False
    offer.save()
    response = add_to_cart(client, offer)
    assert response.status_code == 409
    assert "no longer available" in response.content.decode()


def test_forms_only_accept_post(client, market):
    assert client.get(reverse("cart_add")).status_code == 405
    assert client.get(reverse("cart_destination")).status_code == 405


def test_csrf_is_enforced(market):
    client = Client(enforce_csrf_checks=True)
    response = add_to_cart(client, market.dear_offers[0])
    assert response.status_code == 403
    assert "That form expired" in response.content.decode()
    assert not CartLine.objects.exists()


# --- the cart page ------------------------------------------------------------------------


def test_lines_grouped_by_merchant_with_totals(client, market):
    add_to_cart(client, market.dear_offers[0], 1)
    add_to_cart(client, market.dear_offers[1], 2)
    add_to_cart(client, market.bundle_offers[2], 1)
    response = client.get(reverse("cart"))
    html = response.content.decode()
    summary = response.context["summary"]
    assert [group.merchant_name for group in summary.groups] == ["Dear Shop", "Bundle Shop"]
    dear, bundle = summary.groups
    # Dear: 25.00 + 2 x 25.01 = 75.02, shipping 4.99 + 2 x 1.00.
    assert (dear.subtotal, dear.shipping, dear.total) == (7502, 699, 8201)
    assert (bundle.subtotal, bundle.shipping, bundle.total) == (2300, 599, 2899)
    assert "€75.02" in html and "€6.99" in html and "€82.01" in html
    # The bundle shop ships free from 50.00: 27.00 more unlocks it.
    assert "Add <strong>€27.00</strong> more from Bundle Shop for free shipping" in html
    assert 'data-testid="cart-total" data-cents="11100">€111.00<' in html
    assert "4 items from 2 merchants" in html
    assert "Improve cart" in html


def test_discount_is_shown_when_reached(client, market):
    add_to_cart(client, market.bundle_offers[0], 3)
    html = client.get(reverse("cart")).content.decode()
    # 3 x 23.00 = 69.00, 5% off = 3.45, goods 65.55 >= 50.00: free shipping.
    assert "Discount (5% off from 3 units)" in html
    assert "−€3.45" in html  # noqa: RUF001
    assert ">Free<" in html
    assert "€65.55" in html


def test_price_change_since_added_is_flagged(client, market):
    offer = market.dear_offers[0]
    add_to_cart(client, offer)
    offer.unit_price = 2700
    offer.save()
    html = client.get(reverse("cart")).content.decode()
    assert "1 price changed" in html
    assert "Price went up from €25.00 to €27.00 since you added it." in html


def test_unavailable_line_is_listed_apart(client, market):
    offer = market.cheap_offers[0]
    add_to_cart(client, offer, 2)
    offer.stock = 1
    offer.save()
    html = client.get(reverse("cart")).content.decode()
    assert "Not available right now" in html
    assert "Only 1 left at Cheap Shop" in html


# --- quantity and removal -----------------------------------------------------------------


def line_of(client) -> CartLine:
    return CartLine.objects.get(cart=cart_of(client))


def test_change_quantity(client, market):
    add_to_cart(client, market.dear_offers[0])
    line = line_of(client)
    response = client.post(reverse("cart_line_update", args=[line.pk]), {"quantity": 4})
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('cart')}#line-{line.pk}"
    line.refresh_from_db()
    assert line.quantity == 4


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0", "Quantity must be at least 1; use Remove to take a product out."),
        ("-2", "Quantity must be at least 1"),
        ("1000", "Quantity must be at most 999."),
        ("two", "Enter a whole number."),
        ("", "Enter a quantity."),
    ],
)
def test_bad_quantity_is_refused_next_to_the_line(client, market, value, message):
    add_to_cart(client, market.dear_offers[0], 2)
    line = line_of(client)
    response = client.post(reverse("cart_line_update", args=[line.pk]), {"quantity": value})
    html = response.content.decode()
    assert response.status_code == 400
    assert message in html
    assert f'aria-describedby="qty-error-{line.pk}"' in html
    line.refresh_from_db()
    assert line.quantity == 2


def test_raising_quantity_past_stock_is_a_conflict(client, market):
    add_to_cart(client, market.cheap_offers[0], 1)
    line = line_of(client)
    response = client.post(reverse("cart_line_update", args=[line.pk]), {"quantity": 9})
    assert response.status_code == 409
    assert "Only 3 in stock at Cheap Shop" in response.content.decode()


def test_remove_a_line(client, market):
    add_to_cart(client, market.dear_offers[0])
    line = line_of(client)
    response = client.post(reverse("cart_line_remove", args=[line.pk]))
    assert response.status_code == 302
    assert not CartLine.objects.exists()
    assert "Removed Voltra Widget from your cart." in client.get(reverse("cart")).content.decode()


def test_another_users_line_is_404_and_untouched(client, market, shopper):
    theirs = cart_get_or_create(user=shopper)
    their_line = cart_line_add(cart=theirs, offer=market.dear_offers[0], quantity=1)
    add_to_cart(client, market.bundle_offers[1])  # the intruder has a cart of their own
    update = client.post(reverse("cart_line_update", args=[their_line.pk]), {"quantity": 5})
    remove = client.post(reverse("cart_line_remove", args=[their_line.pk]))
    assert (update.status_code, remove.status_code) == (404, 404)
    their_line.refresh_from_db()
    assert their_line.quantity == 1


def test_line_actions_without_a_cart_are_404(client, db):
    assert client.post(reverse("cart_line_update", args=[1]), {"quantity": 2}).status_code == 404
    assert client.post(reverse("cart_line_remove", args=[1])).status_code == 404


# --- destination --------------------------------------------------------------------------


def test_destination_is_normalised_and_changes_shipping(client, market):
    add_to_cart(client, market.cheap_offers[0])
    before = client.get(reverse("cart")).context["summary"].shipping
    response = client.post(reverse("cart_destination"), {"postal_code": " 10115 "})
    assert response.status_code == 302
    assert cart_of(client).postal_code == "10115"
    after = client.get(reverse("cart"))
    assert (before, after.context["summary"].shipping) == (899, 199)
    assert "Shipping is calculated for 10115." in after.content.decode()


def test_destination_from_the_product_page_goes_back_there(client, market):
    url = reverse("product", args=[market.products[0].slug])
    response = client.post(reverse("cart_destination"), {"postal_code": "sw1a 1aa", "next": url})
    assert response["Location"] == url
    assert cart_of(client).postal_code == "SW1A 1AA"


@pytest.mark.parametrize("value", ["1!", "ab", "-1234", "12345678901"])
def test_malformed_postal_code_is_refused(client, market, value):
    add_to_cart(client, market.dear_offers[0])
    cart_get_or_create(session_key=client.session.session_key)
    response = client.post(reverse("cart_destination"), {"postal_code": value})
    html = response.content.decode()
    assert response.status_code == 400
    assert 'id="postal-error"' in html
    assert 'aria-invalid="true"' in html
    assert cart_of(client).postal_code == ""


def test_clearing_the_destination(client, market):
    add_to_cart(client, market.dear_offers[0])
    client.post(reverse("cart_destination"), {"postal_code": "10115"})
    client.post(reverse("cart_destination"), {"postal_code": ""})
    assert cart_of(client).postal_code == ""


def test_header_counts_units_in_the_cart(client, market):
    add_to_cart(client, market.dear_offers[0], 2)
    add_to_cart(client, market.bundle_offers[1], 1)
    html = client.get(reverse("catalog")).content.decode()
    assert 'data-testid="cart-units"><span class="visually-hidden">, </span>3<' in html
