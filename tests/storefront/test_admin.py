import pytest
from django.urls import reverse

from storefront.models import Cart, CartLine, Category, Merchant, Offer, Product, ShippingZone
from tests.factories import (
    CartLineFactory,
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
