"""The catalog API's lists: served from the shared cache, changed at once by a write, and
answered 304 to a conditional request that still matches."""

import pytest
from django.test import override_settings
from django.urls import reverse

from tests.factories import CategoryFactory, MerchantFactory, OfferFactory, ProductFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def speaker(db):
    category = CategoryFactory(name="Audio", slug="audio")
    product = ProductFactory(name="Bluetooth Speaker", slug="bt-speaker", category=category)
    return OfferFactory(product=product, merchant=MerchantFactory(), unit_price=2999)


def search(api, **headers):
    return api.get(reverse("api:product-list") + "?search=speaker", **headers)


def test_if_none_match_answers_304_until_the_list_changes(
    api, speaker, django_capture_on_commit_callbacks
):
    first = search(api)
    assert first.status_code == 200
    etag = first["ETag"]
    assert first.json()["results"][0]["cheapest_offer"]["unit_price"] == 2999
    assert first["Last-Modified"]
    again = search(api, HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304
    assert again["ETag"] == etag
    assert again.content == b""
    with django_capture_on_commit_callbacks(execute=True):
        speaker.unit_price = 2599
        speaker.save()
    changed = search(api, HTTP_IF_NONE_MATCH=etag)
    assert changed.status_code == 200
    assert changed["ETag"] != etag
    assert changed.json()["results"][0]["cheapest_offer"]["unit_price"] == 2599


def test_if_modified_since(api, speaker):
    first = search(api)
    assert search(api, HTTP_IF_MODIFIED_SINCE=first["Last-Modified"]).status_code == 304
    old = "Mon, 01 Jan 2001 00:00:00 GMT"
    assert search(api, HTTP_IF_MODIFIED_SINCE=old).status_code == 200


@override_settings(PAGE_CACHE=False)
def test_conditional_requests_without_the_cache(api, speaker):
    etag = search(api)["ETag"]
    assert search(api, HTTP_IF_NONE_MATCH=etag).status_code == 304


def test_categories_follow_product_counts(api, speaker, django_capture_on_commit_callbacks):
    url = reverse("api:category-list")
    etag = api.get(url)["ETag"]
    assert api.get(url, HTTP_IF_NONE_MATCH=etag).status_code == 304
    with django_capture_on_commit_callbacks(execute=True):
        ProductFactory(category=speaker.product.category)
    answer = api.get(url, HTTP_IF_NONE_MATCH=etag)
    assert answer.status_code == 200
    assert answer.json()["results"][0]["product_count"] == 2


def test_bad_filters_are_not_cached(api, speaker):
    url = reverse("api:product-list") + "?ordering=bogus"
    assert api.get(url).status_code == 400
    assert api.get(url).status_code == 400


def test_the_browsable_api_still_renders(api, speaker):
    answer = search(api, HTTP_ACCEPT="text/html")
    assert answer.status_code == 200
    assert b"Bluetooth Speaker" in answer.content


def test_a_cached_list_runs_no_query(api, speaker, django_assert_max_num_queries):
    search(api)
    with django_assert_max_num_queries(0):
        assert search(api).status_code == 200
