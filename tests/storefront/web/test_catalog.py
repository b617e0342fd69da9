import pytest
from django.urls import reverse

from storefront.web.views.catalog import PRODUCTS_PER_PAGE
from tests.factories import CategoryFactory, MerchantFactory, OfferFactory, ProductFactory

pytestmark = pytest.mark.django_db


def test_empty_catalog_says_so(client):
    response = client.get(reverse("catalog"))
    assert response.status_code == 200
    assert "The catalog is empty" in response.content.decode()


def test_each_product_shows_its_cheapest_offer_and_offer_count(client, market):
    response = client.get(reverse("catalog"))
    html = response.content.decode()
    assert response.status_code == 200
    assert "Voltra Widget" in html and "Nexon Gizmo" in html
    # Cheapest delivered (the standard rates): the bundle shop's 23.00 + 5.99 beats the cheap
    # shop's 22.00 + 8.99; every amount is in the shop currency.
    assert 'From <span class="price">€28.99</span> delivered at Bundle Shop' in html
    assert "€23.00 + €5.99 shipping · 3 offers" in html


def test_search_by_name_words_in_any_order(client, market):
    response = client.get(reverse("catalog"), {"q": "gizmo nexon"})
    products = list(response.context["page"].object_list)
    assert [product.name for product in products] == ["Nexon Gizmo"]
    assert "for “gizmo nexon”" in response.content.decode()


def test_search_by_gtin(client, market):
    product = market.products[2]
    response = client.get(reverse("catalog"), {"q": product.gtin})
    assert [p.pk for p in response.context["page"].object_list] == [product.pk]


def test_no_match_shows_an_empty_state_with_a_way_back(client, market):
    response = client.get(reverse("catalog"), {"q": "unicorn"})
    html = response.content.decode()
    assert response.status_code == 200
    assert "No products match “unicorn”" in html
    assert "Show all products" in html


def test_category_filter(client, market):
    book = ProductFactory(name="Field Guide", category=market.books)
    OfferFactory(product=book, merchant=market.bundle, unit_price=1500)
    response = client.get(reverse("catalog"), {"category": "books"})
    assert [p.pk for p in response.context["page"].object_list] == [book.pk]
    assert response.context["category"] == market.books


def test_unknown_category_is_ignored_with_a_notice(client, market):
    response = client.get(reverse("catalog"), {"category": "nope"})
    assert response.status_code == 200
    assert len(response.context["page"].object_list) == 3
    assert "It was ignored" in response.content.decode()


def test_sort_by_price(client, market):
    OfferFactory(product=market.products[1], merchant=MerchantFactory(name="Tiny"), unit_price=100)
    response = client.get(reverse("catalog"), {"sort": "price"})
    names = [p.name for p in response.context["page"].object_list]
    assert names[0] == "Nexon Gizmo"


def test_pagination_keeps_the_search_and_clamps_bad_pages(client, db):
    category = CategoryFactory(slug="many")
    for index in range(PRODUCTS_PER_PAGE + 5):
        ProductFactory(name=f"Lamp {index:02d}", category=category)
    first = client.get(reverse("catalog"), {"q": "lamp"})
    html = first.content.decode()
    assert len(first.context["page"].object_list) == PRODUCTS_PER_PAGE
    assert "Page 1 of 2" in html
    assert 'href="?q=lamp&amp;page=2"' in html
    second = client.get(reverse("catalog"), {"q": "lamp", "page": "2"})
    assert len(second.context["page"].object_list) == 5
    beyond = client.get(reverse("catalog"), {"q": "lamp", "page": "99"})
    assert beyond.context["page"].number == 2
    garbage = client.get(reverse("catalog"), {"q": "lamp", "page": "abc"})
    assert garbage.context["page"].number == 1


def test_product_nobody_sells_is_listed_as_unavailable(client, db):
    ProductFactory(name="Ghost Item")
    html = client.get(reverse("catalog")).content.decode()
    assert "Ghost Item" in html
    assert "Currently unavailable" in html
    assert "Add cheapest" not in html


def test_amounts_use_the_deployment_currency(client, market, settings):
    settings.SHOP_CURRENCY = "GBP"
    html = client.get(reverse("catalog")).content.decode()
    assert "£28.99" in html
    assert "€" not in html
    assert "All prices in GBP." in html
