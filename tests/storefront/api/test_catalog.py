import pytest

from tests.factories import (
    CategoryFactory,
    MerchantFactory,
    OfferFactory,
    ProductFactory,
    ShippingZoneFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def catalog():
    tools = CategoryFactory(name="Tools", slug="tools")
    books = CategoryFactory(name="Books", slug="books")
    acme = MerchantFactory(name="Acme", free_over=5000, with_discount=True)
    bolt = MerchantFactory(name="Bolt")
    hammer = ProductFactory(name="Claw Hammer", category=tools)
    OfferFactory(product=hammer, merchant=acme, unit_price=1500)
    OfferFactory(product=hammer, merchant=bolt, unit_price=1200, stock=3)
    atlas = ProductFactory(name="World Atlas", category=books)
    OfferFactory(product=atlas, merchant=acme, unit_price=2500)
    ghost = ProductFactory(name="Ghost Product", category=books)
    OfferFactory(product=ghost, merchant=bolt, unit_price=100, active=False)
    ShippingZoneFactory(merchant=acme, postal_prefix="9", base_fee=999)
    return {"acme": acme, "bolt": bolt, "hammer": hammer, "atlas": atlas, "ghost": ghost}


def test_products_are_public_paginated_with_cheapest_offer(api, catalog):
    body = api.get("/api/v1/products/").json()
    assert body["count"] == 3
    hammer = next(p for p in body["results"] if p["name"] == "Claw Hammer")
    assert hammer["cheapest_offer"]["unit_price"] == 1200
    assert hammer["cheapest_offer"]["merchant_name"] == "Bolt"
    assert hammer["offer_count"] == 2
    ghost = next(p for p in body["results"] if p["name"] == "Ghost Product")
    assert ghost["cheapest_offer"] is None and ghost["offer_count"] == 0


def test_product_search_and_filters(api, catalog):
    def names(query):
        return [p["name"] for p in api.get(f"/api/v1/products/?{query}").json()["results"]]

    assert names("search=hammer") == ["Claw Hammer"]
    assert names(f"search={catalog['atlas'].gtin}") == ["World Atlas"]
    assert names("category=books") == ["Ghost Product", "World Atlas"]
    assert names(f"category={catalog['hammer'].category_id}") == ["Claw Hammer"]
    assert names(f"merchant={catalog['acme'].pk}") == ["Claw Hammer", "World Atlas"]
    assert names("available=true&ordering=-price") == ["World Atlas", "Claw Hammer"]


@pytest.mark.slow
def test_product_list_has_facets_whose_counts_match_the_filtered_lists(api, catalog):
    def get(query):
        return api.get(f"/api/v1/products/?{query}").json()

    facets = get("")["facets"]
    assert {v["key"]: v["count"] for v in facets["category"]} == {"books": 2, "tools": 1}
    for base in ["", "available=true", "search=hammer"]:
        facets = get(base)["facets"]
        for facet, parameter in [("category", "category"), ("merchant", "merchant")]:
            for value in facets[facet]:
                assert get(f"{base}&{parameter}={value['key']}")["count"] == value["count"]
        for value in facets["price_range"]:
            assert get(f"{base}&price_range={value['key']}")["count"] == value["count"]
        assert get(f"{base}&available=true")["count"] == facets["available"]["count"]
        assert facets["ships_free"] is None  # no destination asked about
    # Acme ships free from 50.00 and Bolt charges its base fee: nothing ships free alone.
    body = get("ships_free_to=10115")
    assert body["count"] == body["facets"]["ships_free"]["count"] == 0
    assert [p["name"] for p in get("price_range=10-25")["results"]] == ["Claw Hammer"]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("merchant=abc", "merchant"),
        ("ordering=cheapest", "ordering"),
        ("price_range=1-2", "price_range"),
    ],
)
def test_product_bad_filters_are_400(api, catalog, query, field):
    response = api.get(f"/api/v1/products/?{query}")
    assert response.status_code == 400
    assert response.json()["error"]["field"] == field


def test_product_detail_offers_and_404(api, catalog):
    hammer = catalog["hammer"]
    assert api.get(f"/api/v1/products/{hammer.pk}/").json()["name"] == "Claw Hammer"
    offers = api.get(f"/api/v1/products/{hammer.pk}/offers/").json()
    assert [offer["unit_price"] for offer in offers] == [1200, 1500]
    assert offers[0]["merchant"]["name"] == "Bolt" and offers[0]["stock"] == 3
    missing = api.get("/api/v1/products/999999/")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "product_not_found"
    assert api.get("/api/v1/products/999999/offers/").status_code == 404


def test_merchants_and_categories(api, catalog):
    merchants = api.get("/api/v1/merchants/").json()["results"]
    acme = next(m for m in merchants if m["name"] == "Acme")
    assert acme["shipping"] == {"base_fee": 499, "per_extra_unit": 100, "free_over": 5000}
    assert acme["discount"] == {"min_units": 3, "basis_points": 500}
    detail = api.get(f"/api/v1/merchants/{catalog['acme'].pk}/").json()
    assert detail["zones"][0]["postal_prefix"] == "9"
    assert api.get("/api/v1/merchants/424242/").status_code == 404
    categories = api.get("/api/v1/categories/").json()["results"]
    assert {(c["slug"], c["product_count"]) for c in categories} == {("books", 2), ("tools", 1)}


def test_catalog_is_read_only(alice_api, catalog):
    response = alice_api.post("/api/v1/products/", {"name": "x"}, format="json")
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"


def test_unknown_api_path_is_json_404(api):
    response = api.get("/api/v1/nothing/here/")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "endpoint_not_found"


def test_missing_trailing_slash_gets_a_hint(api):
    response = api.get("/api/v1/products")
    assert response.status_code == 404
    assert "/api/v1/products/" in response.json()["error"]["message"]
