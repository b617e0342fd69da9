"""The profiling scripts' shared pick of pages: the product with the most active offers, the
same one ``scripts/bench_pages.sh`` picks."""

from pathlib import Path

import pytest

from scripts.page_paths import busiest_product_slug, page_paths
from tests.factories import OfferFactory, ProductFactory

pytestmark = pytest.mark.django_db

BENCH_PAGES = Path(__file__).resolve().parents[2] / "scripts" / "bench_pages.sh"


def test_the_product_with_the_most_active_offers_wins():
    busy, quiet = ProductFactory(slug="busy"), ProductFactory(slug="quiet")
    OfferFactory.create_batch(2, product=busy)
    # More offers, but only one of them active.
    OfferFactory(product=quiet)
    OfferFactory.create_batch(3, product=quiet, active=False)
    assert busiest_product_slug() == "busy"


def test_a_tie_goes_to_the_lowest_id():
    first, second = ProductFactory(slug="first"), ProductFactory(slug="second")
    for product in (second, first):
        OfferFactory(product=product)
    assert busiest_product_slug() == "first"


def test_an_empty_catalog_is_an_error_not_a_path_to_none():
    with pytest.raises(RuntimeError, match="no products"):
        busiest_product_slug()


def test_the_paths_of_each_page():
    OfferFactory(product=ProductFactory(slug="busy"))
    assert page_paths(search="lamp") == {
        "home": "/",
        "product": "/products/busy/",
        "search": "/api/v1/products/?search=lamp",
        "categories": "/api/v1/categories/",
    }


def test_bench_pages_picks_the_product_the_same_way():
    # Its pick runs inline in `manage.py shell` (it also prints the offer count): the same
    # count of active offers and the same tie-break.
    script = BENCH_PAGES.read_text()
    assert "Count('offers', filter=Q(offers__active=True))" in script
    assert ".order_by('-n', 'id').first()" in script
