"""Ranking and typo tolerance of product search, on whichever database the tests run."""

import pytest

from storefront.catalog.selectors import product_list
from storefront.search.terms import search_terms, word_pattern
from tests.factories import OfferFactory, ProductFactory, valid_gtin13
from tests.storefront.search.conftest import postgres_only, sqlite_only

pytestmark = pytest.mark.django_db


def names(query: str) -> list[str]:
    return list(product_list(query=query).values_list("name", flat=True))


def test_exact_gtin_then_name_then_brand_then_description():
    code = valid_gtin13(424242)
    ProductFactory(name="Unrelated Lamp")
    ProductFactory(name="Fits the Steel Kettle", description="A spare lid.", gtin=valid_gtin13(1))
    ProductFactory(name="Mug", description=f"Matches kettle {code} in colour.")
    ProductFactory(name=f"Lid for {code}", description="Spare part.")
    ProductFactory(name="Plain Box", gtin=code)
    assert names(code) == ["Plain Box", f"Lid for {code}", "Mug"]


def test_name_match_ranks_above_brand_and_description():
    ProductFactory(name="Tea Towel", description="Dries a kettle.")
    ProductFactory(name="Steel Kettle", description="Boils water.")
    ProductFactory(name="Trivet", brand="Kettle & Co", description="Cork.")
    assert names("kettle") == ["Steel Kettle", "Trivet", "Tea Towel"]


def test_merchant_sku_is_an_exact_hit_first():
    wanted = ProductFactory(name="Gadget")
    OfferFactory(product=wanted, merchant_sku="XY-1000")
    ProductFactory(name="XY 1000 compatible cable")
    assert names("xy-1000")[0] == "Gadget"


def test_plural_and_singular_and_stop_words_match_alike():
    ProductFactory(name="Brava Electric Kettle, Black")
    ProductFactory(name="Two Kettles for the Price of One")
    ProductFactory(name="Kettlebell, 8 kg")
    assert (
        sorted(names("kettles"))
        == sorted(names("kettle"))
        == [
            "Brava Electric Kettle, Black",
            "Two Kettles for the Price of One",
        ]
    )
    assert names("the black kettle for") == ["Brava Electric Kettle, Black"]  # stop words


def test_a_category_name_lists_its_products():
    kettle = ProductFactory(name="Steel Kettle", category__name="Kitchen Things")
    ProductFactory(name="Desk Lamp")
    assert list(product_list(query="kitchen")) == [kettle]


def test_nothing_to_search_finds_nothing():
    ProductFactory(name="Steel Kettle")
    assert names("the of and") == []
    assert names("   ") == ["Steel Kettle"]  # blank: no search, the whole catalog


def test_word_pattern_matches_whole_words_singular_or_plural():
    import re

    pattern = re.compile(word_pattern("headphones"))
    assert pattern.search("wireless headphone, black")
    assert pattern.search("noise-cancelling headphones")
    assert not pattern.search("headphonestand")
    assert search_terms("4006381333931").gtin == "4006381333931"
    assert search_terms("4006-3813 33931").gtin == "4006381333931"
    assert search_terms("kettle black").code is None


class TestTypos:
    @pytest.fixture(autouse=True)
    def catalog(self, db):
        ProductFactory(name="Brava Electric Kettle, Black")
        ProductFactory(name="Voltra Wireless Headphones, White")
        ProductFactory(name="Scriba Desk Lamp, Walnut")

    @postgres_only
    def test_postgres_finds_misspelt_words_by_trigram_similarity(self):
        assert names("ketle") == ["Brava Electric Kettle, Black"]
        assert names("hedphones") == ["Voltra Wireless Headphones, White"]
        assert names("wireles headphnes") == ["Voltra Wireless Headphones, White"]
        assert names("xylophone") == []

    @postgres_only
    def test_postgres_uses_both_indexes(self):
        from django.db import connection

        from storefront.search import postgres

        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_seqscan = off")
            plan = product_list(query="kettle").explain()
            similar = product_list(query="ketle").explain()
        assert postgres.FULL_TEXT_INDEX in plan
        assert postgres.TRIGRAM_INDEX in similar

    @sqlite_only
    def test_sqlite_fallback_corrects_a_misspelt_word(self):
        assert names("ketle") == ["Brava Electric Kettle, Black"]
        assert names("hedphones") == ["Voltra Wireless Headphones, White"]
        assert names("wireles headphnes") == ["Voltra Wireless Headphones, White"]
        assert names("xylophone") == []


@postgres_only
def test_the_stored_document_follows_every_kind_of_write():
    from storefront.models import Product

    product = ProductFactory(name="Steel Kettle")
    Product.objects.bulk_create([Product(name="Copper Kettle", gtin=valid_gtin13(9), slug="c",
                                         category=product.category)])  # fmt: skip
    assert sorted(names("kettle")) == ["Copper Kettle", "Steel Kettle"]
    Product.objects.filter(pk=product.pk).update(name="Steel Teapot")
    assert names("kettle") == ["Copper Kettle"]
    assert names("teapot") == ["Steel Teapot"]
