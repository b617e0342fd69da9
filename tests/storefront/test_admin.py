import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from storefront.carts.pricing_summary import cart_pricing_summary
from storefront.models import Cart, CartLine, Category, Merchant, Offer, Product, ShippingZone
from storefront.money import format_money
from tests.factories import (
    CartLineFactory,
    MerchantFactory,
    OfferFactory,
    ProductFactory,
    ShippingZoneFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

MODELS = [Merchant, ShippingZone, Category, Product, Offer, Cart, CartLine]


@pytest.fixture
def staff_client(client):
    client.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    return client


@pytest.fixture
def catalog():
    line = CartLineFactory()
    ShippingZoneFactory(merchant=line.offer.merchant)
    for _ in range(5):
        OfferFactory.create_batch(2, product=ProductFactory())
    return line


def url(model, view: str, *args) -> str:
    return reverse(f"admin:storefront_{model._meta.model_name}_{view}", args=args)


@pytest.mark.parametrize("model", MODELS)
def test_every_model_has_a_working_changelist_with_search(staff_client, catalog, model):
    assert staff_client.get(url(model, "changelist")).status_code == 200
    assert staff_client.get(url(model, "changelist"), {"q": "1"}).status_code == 200


@pytest.mark.parametrize("model", MODELS)
def test_every_object_page_renders(staff_client, catalog, model):
    instance = model.objects.first()
    assert staff_client.get(url(model, "change", instance.pk)).status_code == 200


def test_changelists_do_not_query_per_row(staff_client, catalog, django_assert_max_num_queries):
    for _ in range(20):
        OfferFactory.create_batch(2, product=ProductFactory())
    for model in (Product, Offer, Merchant, CartLine):
        with django_assert_max_num_queries(12):
            assert staff_client.get(url(model, "changelist")).status_code == 200


def test_offer_autocomplete_finds_by_product_name(staff_client, catalog):
    offer = Offer.objects.select_related("product").first()
    response = staff_client.get(
        reverse("admin:autocomplete"),
        {
            "app_label": "storefront",
            "model_name": "cartline",
            "field_name": "offer",
            "term": offer.product.name,
        },
    )
    assert response.status_code == 200
    assert str(offer.pk) in {row["id"] for row in response.json()["results"]}


def test_carts_are_read_only_in_the_admin(staff_client, catalog):
    cart = catalog.cart
    response = staff_client.post(url(Cart, "change", cart.pk), {"postal_code": "99999"})
    assert response.status_code == 403
    assert staff_client.get(url(Cart, "add")).status_code == 403


def test_bulk_deactivate_offers(staff_client, catalog):
    ids = list(Offer.objects.values_list("pk", flat=True)[:3])
    staff_client.post(
        url(Offer, "changelist"),
        {"action": "make_inactive", "_selected_action": ids},
    )
    assert not Offer.objects.filter(pk__in=ids, active=True).exists()


def test_invalid_product_form_shows_the_gtin_error(staff_client, catalog):
    category = Category.objects.first()
    response = staff_client.post(
        url(Product, "add"),
        {
            "gtin": "4006381333932",
            "name": "Pen",
            "slug": "pen",
            "category": category.pk,
            "description": "",
            "offers-TOTAL_FORMS": "0",
            "offers-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 200
    assert "expected 1" in response.content.decode()
    assert not Product.objects.filter(slug="pen").exists()


def _carts_with_lines(count: int) -> list[Cart]:
    merchant = MerchantFactory(base_fee=499, per_extra_unit=100)
    ShippingZoneFactory(merchant=merchant, postal_prefix="10", base_fee=199, per_extra_unit=0)
    carts = []
    for index in range(count):
        line = CartLineFactory(
            cart__postal_code=["10115", "80331"][index % 2],
            offer=OfferFactory(merchant=merchant, unit_price=1000 + index),
            quantity=2,
        )
        carts.append(line.cart)
    return carts


def test_cart_changelist_shows_each_carts_total_with_shipping(staff_client, catalog):
    berlin, munich = _carts_with_lines(2)
    unavailable = CartLineFactory(offer=OfferFactory(merchant__active=False)).cart
    html = staff_client.get(url(Cart, "changelist")).content.decode()
    assert "Total now, with shipping" in html
    for cart in (berlin, munich, catalog.cart):
        assert format_money(cart_pricing_summary(cart=cart).total) in html
    # Zone 10 ships 2 units for 1.99; Munich pays 4.99 + 1.00 by default.
    assert format_money(2 * 1000 + 199) in html
    assert format_money(2 * 1001 + 599) in html
    assert cart_pricing_summary(cart=unavailable).groups == ()
    assert "1 unavailable line left out" in html


def test_cart_changelist_prices_the_page_in_one_batch(
    staff_client, catalog, django_assert_num_queries, django_capture_on_commit_callbacks
):
    _carts_with_lines(2)
    staff_client.get(url(Cart, "changelist"))  # the zone index is built once, not per page
    with CaptureQueriesContext(connection) as captured:
        staff_client.get(url(Cart, "changelist"))
    few = len(captured)
    # Committed, the new merchant replaces the index's stamp; the next page rebuilds it once.
    with django_capture_on_commit_callbacks(execute=True):
        _carts_with_lines(15)
    staff_client.get(url(Cart, "changelist"))
    with django_assert_num_queries(few):
        response = staff_client.get(url(Cart, "changelist"))
    assert response.status_code == 200
    assert len(response.context["cl"].result_list) == 18
