"""The entry point: filters products by a query and annotates ``search_rank``.

A search is prepared once (``search_prepare``: exact GTIN/SKU hits, and whether the words
match as typed or are taken as misspelt) and then applied to as many product querysets as
a page needs (the list and each facet) without asking the database again.
"""

from collections.abc import Hashable
from dataclasses import dataclass, replace
from types import ModuleType

from django.conf import settings
from django.db import connections
from django.db.models import FloatField, QuerySet, Value

from storefront.catalog.sql_shapes import Slots, shaped_count
from storefront.models import Product
from storefront.search import fallback, postgres
from storefront.search.terms import SearchTerms, search_terms

# Relevance order: exact codes, then the engine's rank, then by name for stable pages.
SEARCH_ORDERING = ("-search_rank", "name", "id")


@dataclass(frozen=True)
class PreparedSearch:
    text: str
    terms: SearchTerms
    vendor: str
    mode: str  # "match": the words as typed; "similar": taken as misspelt; "none"
    exact_ids: tuple[int, ...] = ()  # products whose GTIN or a SKU is the query
    category_ids: tuple[int, ...] | None = None  # PostgreSQL: categories matching by name
    words: tuple[str, ...] = ()  # the words to match (the SQLite fallback corrects them)

    def __str__(self) -> str:
        return self.text


def _engine(vendor: str) -> ModuleType:
    return postgres if vendor == "postgresql" else fallback


def search_prepare(query: str, *, using: str = "default") -> PreparedSearch:
    """Reads what a search needs before it can filter: one to three small queries."""
    terms = search_terms(query)
    vendor = connections[using].vendor
    if terms.empty:
        return PreparedSearch(text=query, terms=terms, vendor=vendor, mode="none")
    engine = _engine(vendor)
    exact, categories = engine.lookups(terms, using=using)
    prepared = PreparedSearch(
        text=query,
        terms=terms,
        vendor=vendor,
        mode="match",
        exact_ids=tuple(exact),
        category_ids=None if categories is None else tuple(categories),
        words=terms.words,
    )
    if exact or categories or not terms.words:
        return prepared
    if _matches_any(engine, prepared, using=using):
        return prepared
    return PreparedSearch(
        text=query,
        terms=terms,
        vendor=vendor,
        mode="similar",
        words=engine.similar_words(terms, using=using),
    )


def _unique(ids: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(dict.fromkeys(ids))  # an IN list drops repeats when compiled


def search_shape(prepared: PreparedSearch, slots: Slots) -> tuple[Hashable, PreparedSearch]:
    """The prepared search's shape (what decides the SQL's text), and the search with
    sentinels from ``slots`` for its values (see ``storefront.catalog.sql_shapes``). Every value a
    search engine may put into SQL gets a slot: the text, each word (a similar-words search takes
    them joined, as one value), the exact hits and the matching categories."""
    words: tuple[str, ...]
    if prepared.mode == "similar":
        words = (slots.text(" ".join(prepared.words)),) if prepared.words else ()
    else:
        words = tuple(slots.text(word) for word in prepared.words)
    text = slots.text(prepared.terms.text)
    exact_ids = slots.numbers(_unique(prepared.exact_ids))
    categories = prepared.category_ids
    category_ids = None if categories is None else slots.numbers(_unique(categories))
    key = (
        prepared.vendor,
        settings.SEARCH_CONFIG,  # written into the SQL's text
        prepared.mode,
        len(prepared.words),
        len(exact_ids),
        None if category_ids is None else len(category_ids),
    )
    sentinel = replace(
        prepared,
        text=text,
        terms=SearchTerms(text=text, words=words, gtin=None, code=None),
        exact_ids=exact_ids,
        category_ids=category_ids,
        words=words,
    )
    return key, sentinel


def _matches_any(engine: ModuleType, prepared: PreparedSearch, *, using: str) -> bool:
    """Whether the words match as typed, counted through SQL compiled once per shape where
    the engine's match has one (PostgreSQL's), else the engine's own test."""

    def matches(search: PreparedSearch):
        return engine.match(Product.objects.using(using), search, CODE_RANK)

    slots = Slots()
    key, _ = search_shape(prepared, slots)
    count = shaped_count(
        key=("search_matches", key),
        slots=slots,
        build=lambda sentinels: matches(search_shape(prepared, sentinels)[1]),
        using=using,
    )
    return engine.any_match(matches(prepared)) if count is None else count > 0


# Any text match ranks below an exact GTIN or SKU (text ranks stay far below this).
CODE_RANK = 1000.0


def product_search(
    products: QuerySet[Product], *, query: "str | PreparedSearch"
) -> QuerySet[Product]:
    """``products`` matching ``query``, annotated with ``search_rank`` (order by
    ``SEARCH_ORDERING``). When no product matches the words as typed, the words are taken
    as misspelt and similar ones match instead. Pass a ``PreparedSearch`` to reuse one
    preparation for several querysets."""
    prepared = (
        query if isinstance(query, PreparedSearch) else search_prepare(query, using=products.db)
    )
    if prepared.mode == "none" or (prepared.mode == "similar" and not prepared.words):
        return products.none().annotate(search_rank=Value(0.0, output_field=FloatField()))
    engine = _engine(prepared.vendor)
    if prepared.mode == "similar":
        return engine.similar(products, prepared)
    return engine.match(products, prepared, CODE_RANK)
