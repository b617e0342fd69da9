"""Every integer in an API query string (and the catalog's path ids) answers a 4xx with the
API's error body, never the database's overflow (SQLite's OverflowError: a 500)."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from storefront.bounds import DB_INT_MAX, db_id

pytestmark = pytest.mark.django_db

HUGE = "86814030363318621176856576"
BAD_VALUES = [HUGE, str(DB_INT_MAX + 1), f"-{HUGE}", "-1", "0", "abc", "1.5", "²", "9" * 5000]

# (URL, integer parameter, statuses that are a clear answer for a bad value)
QUERY_PARAMS = [
    ("/api/v1/products/", "merchant", {400}),
    ("/api/v1/products/", "category", {200, 400}),  # not digits: a slug that matches nothing
    ("/api/v1/products/", "page", {404}),  # DRF's "Invalid page."
    ("/api/v1/merchants/", "page", {404}),
    ("/api/v1/categories/", "page", {404}),
]


def _error(response) -> dict:
    return response.json()["error"]


def test_product_list_with_a_merchant_past_the_databases_integers_is_a_400(api):
    response = api.get(f"/api/v1/products/?merchant={HUGE}")
    assert response.status_code == 400
    assert _error(response)["field"] == "merchant"
    assert _error(response)["code"] == "max_value"


def test_product_list_with_a_category_id_past_the_databases_integers_is_a_400(api):
    for value in (HUGE, "²"):
        response = api.get("/api/v1/products/", {"category": value})
        assert response.status_code == 400
        assert _error(response)["field"] == "category"


def test_the_largest_id_is_still_accepted(api):
    for param in ("merchant", "category"):
        response = api.get("/api/v1/products/", {param: str(DB_INT_MAX)})
        assert response.status_code == 200
        assert response.json()["count"] == 0


@pytest.mark.parametrize(("url", "param", "statuses"), QUERY_PARAMS)
@pytest.mark.parametrize("value", BAD_VALUES)
def test_bad_integer_query_params_never_500(api, url, param, statuses, value):
    response = api.get(url, {param: value})
    assert response.status_code in statuses
    if response.status_code != 200:
        assert set(_error(response)) >= {"code", "message", "field"}


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    value=st.one_of(st.integers(), st.text(max_size=40)),
    param=st.sampled_from(["merchant", "category", "page"]),
)
def test_any_value_of_the_product_lists_integer_params_is_never_a_500(api, value, param):
    response = api.get("/api/v1/products/", {param: str(value)})
    assert response.status_code < 500


@pytest.mark.parametrize(
    "url",
    [
        f"/api/v1/products/{HUGE}/",
        f"/api/v1/products/{HUGE}/offers/",
        f"/api/v1/merchants/{HUGE}/",
    ],
)
def test_catalog_path_ids_past_the_databases_integers_are_a_404(api, url):
    response = api.get(url)
    assert response.status_code == 404
    assert _error(response)["code"] in ("product_not_found", "merchant_not_found")


def test_optimization_path_ids_past_the_databases_integers_are_a_404(alice_api, cart):
    response = alice_api.get(f"/api/v1/cart/optimizations/{HUGE}/")
    assert response.status_code == 404
    assert _error(response)["code"] == "optimization_not_found"


def test_optimization_list_with_a_bad_page_is_not_a_500(alice_api, cart):
    assert alice_api.get("/api/v1/cart/optimizations/").status_code == 200
    for value in (HUGE, "-1", "abc"):
        response = alice_api.get("/api/v1/cart/optimizations/", {"page": value})
        assert response.status_code == 404
        assert _error(response)["code"] == "not_found"


@given(st.one_of(st.integers(), st.text(max_size=30)))
def test_db_id_accepts_only_the_databases_positive_integers(value):
    number = db_id(value)
    assert number is None or (
        1 <= number <= DB_INT_MAX and str(number) == str(value).strip().lstrip("0")
    )
