"""The demo's ordinary queries find the same products on PostgreSQL and on the SQLite
fallback: both are compared with one plain-Python reading of the rule (every word, singular
or plural, as a whole word of the name, brand or description; or all of them in the
category's name). CI runs this module on both databases."""

import re

import pytest

from storefront.catalog.selectors import product_list
from storefront.models import Product
from storefront.search.terms import search_terms, word_pattern

pytestmark = pytest.mark.django_db

DEMO_QUERIES = [
    "kettle",
    "kettles",
    "headphones",
    "wireless headphones",
    "coffee",
    "coffee beans",
    "tea",
    "books",
    "book",
    "desk lamp",
    "yoga mat",
    "bluetooth speaker",
    "kitchen",
    "Voltra",
    "black",
]


def expected(query: str) -> set[str]:
    words = search_terms(query).words
    patterns = [re.compile(word_pattern(word), re.IGNORECASE) for word in words]
    found = set()
    for product in Product.objects.select_related("category"):
        fields = (product.name, product.brand, product.description)
        if all(any(p.search(f) for f in fields) for p in patterns) or all(
            p.search(product.category.name) for p in patterns
        ):
            found.add(product.gtin)
    return found


@pytest.mark.slow
@pytest.mark.parametrize("query", DEMO_QUERIES)
def test_demo_query_finds_exactly_the_products_with_its_words(demo, query):
    found = set(product_list(query=query).values_list("gtin", flat=True))
    assert found, f"{query!r} should find something in the demo"
    assert found == expected(query)


@pytest.mark.slow
def test_ordinary_words_find_their_products_by_name_first(demo):
    for query, noun in [("kettle", "kettle"), ("headphones", "headphones"), ("coffee", "coffee")]:
        first = product_list(query=query).first()
        assert noun in first.name.lower()
