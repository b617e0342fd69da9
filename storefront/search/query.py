"""The entry point: filters products by a query and annotates ``search_rank``."""

from django.db import connections
from django.db.models import Exists, FloatField, OuterRef, Q, QuerySet, Value

from storefront.models import Offer, Product
from storefront.search import fallback, postgres
from storefront.search.terms import SearchTerms, search_terms

# Relevance order: exact codes, then the engine's rank, then by name for stable pages.
SEARCH_ORDERING = ("-search_rank", "name", "id")
# Any text match ranks below an exact GTIN or SKU (text ranks stay far below this).
CODE_RANK = 1000.0


def code_q(terms: SearchTerms) -> Q:
    """Products whose GTIN or one of whose merchant SKUs is exactly the query."""
    condition = Q(pk__in=[])
    if terms.gtin:
        condition |= Q(gtin=terms.gtin)
    if terms.code:
        skus = {terms.code, terms.code.upper()}
        condition |= Exists(Offer.objects.filter(product=OuterRef("pk"), merchant_sku__in=skus))
    return condition


def nothing(products: QuerySet[Product]) -> QuerySet[Product]:
    """No products, with the annotation that relevance ordering needs."""
    return products.none().annotate(search_rank=Value(0.0, output_field=FloatField()))


def product_search(products: QuerySet[Product], *, query: str) -> QuerySet[Product]:
    """``products`` matching ``query``, annotated with ``search_rank`` (order by
    ``SEARCH_ORDERING``). When no product matches the words as typed, the words are taken
    as misspelt and similar ones match instead (one extra query decides that)."""
    terms = search_terms(query)
    if terms.empty:
        return nothing(products)
    engine = postgres if connections[products.db].vendor == "postgresql" else fallback
    matches = engine.search(products, terms=terms, code=code_q(terms), code_rank=CODE_RANK)
    if terms.words and not engine.any_match(matches):
        return engine.search_similar(products, terms=terms)
    return matches
