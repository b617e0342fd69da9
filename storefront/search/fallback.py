"""The embedded SQLite's search: every word, singular or plural, as a whole word of the name,
brand or description (or all of them in the category's name), ranked name > brand >
description; misspelt words are replaced by the closest word of the catalog's names.

It matches what PostgreSQL's english full-text search finds for the shop's ordinary
queries (tests/storefront/search compares both on the demo catalog). Regular expressions
run in Python on SQLite, which is fine for a demo catalog, not for a large one.
"""

import difflib
import re
from functools import reduce
from operator import and_
from typing import Any

from django.db.models import Case, FloatField, Q, QuerySet, Value, When

from storefront.models import Offer, Product
from storefront.search.terms import SearchTerms, word_pattern

SIMILAR_CUTOFF = 0.75
_WORD_RE = re.compile(r"[0-9a-zà-ÿ]+")


def _all_words(field: str, words: tuple[str, ...]) -> Q:
    return reduce(and_, (Q(**{f"{field}__iregex": word_pattern(word)}) for word in words), Q())


def _each_word_anywhere(words: tuple[str, ...]) -> Q:
    fields = ("name", "brand", "description")
    return reduce(
        and_,
        (
            reduce(lambda a, b: a | b, (Q(**{f"{f}__iregex": word_pattern(w)}) for f in fields))
            for w in words
        ),
        Q(),
    )


def _exact_ids(terms: SearchTerms, *, using: str) -> list[int]:
    """Products whose GTIN, or one of whose merchant SKUs, is exactly the query."""
    parts: list[QuerySet[Any, tuple[int]]] = []
    if terms.gtin:
        parts.append(
            Product.objects.using(using).filter(gtin=terms.gtin).order_by().values_list("pk")
        )
    if terms.code:
        skus = {terms.code, terms.code.upper()}
        offers = Offer.objects.using(using).filter(merchant_sku__in=skus)
        parts.append(offers.order_by().values_list("product_id"))
    if not parts:
        return []
    rows = parts[0].union(*parts[1:]) if len(parts) > 1 else parts[0]
    return [pk for (pk,) in rows]


def lookups(terms: SearchTerms, *, using: str) -> tuple[list[int], None]:
    """Exact GTIN/SKU hits; categories are matched in the query itself."""
    return _exact_ids(terms, using=using), None


def match(products: QuerySet[Product], prepared, code_rank: float) -> QuerySet[Product]:
    words = prepared.words
    code = Q(pk__in=prepared.exact_ids)
    ranks = [When(code, then=Value(code_rank))]
    text = Q(pk__in=[])
    if words:
        text = _each_word_anywhere(words) | _all_words("category__name", words)
        in_name_or_brand = reduce(
            and_,
            (Q(name__iregex=word_pattern(w)) | Q(brand__iregex=word_pattern(w)) for w in words),
        )
        ranks += [
            When(_all_words("name", words), then=Value(3.0)),
            When(in_name_or_brand, then=Value(2.0)),
        ]
    return products.filter(text | code).annotate(
        search_rank=Case(*ranks, default=Value(1.0), output_field=FloatField())
    )


def any_match(matches: QuerySet[Product]) -> bool:
    return matches.exists()


def _vocabulary(using: str) -> set[str]:
    words: set[str] = set()
    rows = Product.objects.using(using).values_list("name", "brand")
    for name, brand in rows.iterator(chunk_size=2000):
        words.update(_WORD_RE.findall(f"{name} {brand}".lower()))
    return words


def similar_words(terms: SearchTerms, *, using: str) -> tuple[str, ...]:
    """Each unknown word replaced by the most similar word of the catalog's names and brands
    (difflib's ratio of at least ``SIMILAR_CUTOFF``); nothing when a word has none."""
    vocabulary = _vocabulary(using)
    known = sorted(vocabulary)
    corrected = []
    for word in terms.words:
        if word in vocabulary:
            corrected.append(word)
            continue
        close = difflib.get_close_matches(word, known, n=1, cutoff=SIMILAR_CUTOFF)
        if not close:
            return ()
        corrected.append(close[0])
    return tuple(corrected)


def similar(products: QuerySet[Product], prepared) -> QuerySet[Product]:
    return match(products, prepared, 0.0)
