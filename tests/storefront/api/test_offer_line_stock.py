"""The offers API says how many units one cart line can have: a merchant with warehouses
ships a line from one of them (``max_quantity``: the most one that ships to ``deliver_to``
holds), next to the offer's total stock; ``product_cheapest_offer`` applies the same rule."""

import pytest

from storefront.carts.pricing_summary import cart_pricing_summary
from storefront.catalog.selectors import product_cheapest_offer
from storefront.fulfillment.services import parcel_rate_create, warehouse_create
from storefront.fulfillment.stock import warehouse_stock_set
from tests.factories import CartFactory, CartLineFactory, OfferFactory
from tests.storefront.carts.v2_market import v2_market

pytestmark = pytest.mark.django_db


@pytest.fixture
def market():
    market = v2_market()
    # Berlin ships only to postal codes starting with 1, and holds 7 kettles.
    berlin = warehouse_create(merchant=market.acme, name="Berlin", adopt=False)
    parcel_rate_create(warehouse=berlin, postal_prefix="1", base_fee=299)
    warehouse_stock_set(offer=market.kettle, warehouse=berlin, stock=7)
    market.kettle.refresh_from_db()
    market.berlin = berlin
    return market


def _offers(api, market, query: str = "") -> dict[str, dict]:
    response = api.get(f"/api/v1/products/{market.kettle.product_id}/offers/{query}")
    assert response.status_code == 200, response.content
    return {offer["merchant"]["name"]: offer for offer in response.json()}


def test_a_warehouse_merchant_quotes_one_warehouse_next_to_its_total(api, market):
    offers = _offers(api, market, "?deliver_to=10115")
    acme = offers["Acme"]
    assert acme["stock"] == 13  # 5 + 1 + 7, kept as the offer's total
    assert acme["max_quantity"] == 7  # Berlin ships to 10115
    assert sorted(
        (w["name"], w["stock"], w["ships_to_destination"]) for w in acme["warehouses"]
    ) == [("Berlin", 7, True), ("Hamburg", 5, True), ("Munich", 1, True)]
    # Bolt has no warehouses: its line has the offer's stock (unlimited here).
    assert offers["Bolt"]["max_quantity"] is None and offers["Bolt"]["warehouses"] is None


def test_only_warehouses_that_ship_to_the_destination_count(api, market):
    acme = _offers(api, market, "?deliver_to=80331")["Acme"]
    assert acme["stock"] == 13
    assert acme["max_quantity"] == 5  # Hamburg: Berlin does not ship to 80331
    berlin = next(w for w in acme["warehouses"] if w["name"] == "Berlin")
    assert berlin == {
        "id": market.berlin.pk,
        "name": "Berlin",
        "stock": 7,
        "ships_to_destination": False,
    }


def test_without_a_destination_every_active_warehouse_counts(api, market):
    acme = _offers(api, market)["Acme"]
    assert acme["max_quantity"] == 7
    assert {w["ships_to_destination"] for w in acme["warehouses"]} == {None}
    market.berlin.active = False
    market.berlin.save(update_fields=["active"])
    acme = _offers(api, market)["Acme"]
    assert acme["max_quantity"] == 5
    assert "Berlin" not in {w["name"] for w in acme["warehouses"]}


def test_unlimited_at_one_warehouse_is_unlimited_and_none_held_is_zero(api, market):
    warehouse_stock_set(offer=market.kettle, warehouse=market.munich, stock=None)
    assert _offers(api, market, "?deliver_to=80331")["Acme"]["max_quantity"] is None
    monitor = api.get(f"/api/v1/products/{market.monitor.product_id}/offers/?deliver_to=80331")
    (offer,) = monitor.json()
    assert (offer["stock"], offer["max_quantity"]) == (2, 2)
    # A merchant with warehouses that stocks the offer nowhere: nothing for a line.
    bare = OfferFactory(merchant=market.acme, stock=4)
    (offer,) = api.get(f"/api/v1/products/{bare.product_id}/offers/").json()
    assert (offer["stock"], offer["max_quantity"], offer["warehouses"]) == (4, 0, [])


def test_the_api_quotes_what_the_cart_allows(api, market):
    """The same figure as the cart's line for the same destination."""
    for postal_code, expected in (("10115", 7), ("80331", 5)):
        cart = CartFactory(postal_code=postal_code)
        CartLineFactory(cart=cart, offer=market.kettle)
        (line,) = [line for g in cart_pricing_summary(cart=cart).groups for line in g.lines]
        api_figure = _offers(api, market, f"?deliver_to={postal_code}")["Acme"]["max_quantity"]
        assert line.max_quantity == api_figure == expected


def test_query_count_is_bounded(api, market, django_assert_max_num_queries):
    # product (2, compiled once) + offers + warehouses + stock + nodes and rates (2).
    with django_assert_max_num_queries(7):
        _offers(api, market, "?deliver_to=10115")


def test_a_v1_only_product_costs_one_extra_query(api, django_assert_num_queries):
    offer = OfferFactory(stock=3)
    api.get(f"/api/v1/products/{offer.product_id}/offers/")  # compiles the shaped SQL
    with django_assert_num_queries(4):  # product (2), offers, warehouses
        (body,) = api.get(f"/api/v1/products/{offer.product_id}/offers/?deliver_to=10115").json()
    assert (body["stock"], body["max_quantity"], body["warehouses"]) == (3, 3, None)


def test_deliver_to_is_checked(api, market):
    response = api.get(f"/api/v1/products/{market.kettle.product_id}/offers/?deliver_to={'1' * 11}")
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "deliver_to"


def test_the_schema_documents_the_line_stock(api):
    schema = api.get("/api/v1/schema/?format=json").json()
    operation = schema["paths"]["/api/v1/products/{product_id}/offers/"]["get"]
    assert "deliver_to" in {parameter["name"] for parameter in operation["parameters"]}
    offer = schema["components"]["schemas"]["Offer"]["properties"]
    assert {"max_quantity", "warehouses"} <= set(offer)
    assert "one warehouse" in offer["max_quantity"]["description"]


class TestProductCheapestOffer:
    def test_one_warehouse_must_hold_the_quantity(self, market):
        # Acme's kettle (20.00) beats Bolt's (21.00) while one warehouse holds the quantity.
        assert product_cheapest_offer(product=market.kettle.product, quantity=7) == market.kettle
        assert (
            product_cheapest_offer(product=market.kettle.product, quantity=8) == market.kettle_bolt
        )  # 13 in all, but no one warehouse has 8

    def test_a_destination_counts_only_warehouses_that_ship_there(
        self, market, django_assert_num_queries
    ):
        product = market.kettle.product
        with django_assert_num_queries(1):
            found = product_cheapest_offer(product=product, quantity=6, postal_code="10115")
        assert found == market.kettle  # Berlin
        found = product_cheapest_offer(product=product, quantity=6, postal_code="80331")
        assert found == market.kettle_bolt  # Berlin does not ship there, Hamburg has 5

    def test_a_v1_merchant_still_needs_its_offer_stock(self, market):
        market.kettle_bolt.stock = 8
        market.kettle_bolt.save(update_fields=["stock"])
        assert product_cheapest_offer(product=market.kettle.product, quantity=9) is None
