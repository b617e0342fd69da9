"""PostgreSQL: a weighted full-text vector (name A, brand B, description C) under a GIN
expression index, categories matched by name, trigram word similarity for typos."""

from django.conf import settings
from django.contrib.postgres.search import (
    SearchQuery,
    SearchRank,
    SearchVector,
    TrigramWordSimilarity,
)
from django.db.models import Case, CharField, F, FloatField, Q, QuerySet, Value, When

from storefront.models import Category, Offer, Product
from storefront.search.terms import SearchTerms

FULL_TEXT_INDEX = "product_search_vector_idx"
TRIGRAM_INDEX = "product_name_trgm_idx"


def search_vector(config: str | None = None) -> SearchVector:
    """The product's document. The GIN index is built on exactly this expression (see the
    migration), so queries must build it the same way to use the index."""
    config = config or settings.SEARCH_CONFIG
    return (
        SearchVector("name", weight="A", config=config)
        + SearchVector("brand", weight="B", config=config)
        + SearchVector("description", weight="C", config=config)
    )


def _codes_and_categories(terms: SearchTerms, query: SearchQuery) -> tuple[list[int], list[int]]:
    """Products whose GTIN or a merchant SKU is the query, and categories whose name matches,
    in one small query up front: as literal ids they join the full-text condition in one
    bitmap OR of indexes, where subqueries would force a scan of every product."""
    kind = {"output_field": CharField()}
    parts = [
        Category.objects.annotate(document=SearchVector("name", config=query.config))
        .filter(document=query)
        .annotate(kind=Value("category", **kind))
        .values_list("kind", "pk")
    ]
    if terms.gtin:
        parts.append(
            Product.objects.filter(gtin=terms.gtin)
            .annotate(kind=Value("product", **kind))
            .values_list("kind", "pk")
        )
    if terms.code:
        parts.append(
            Offer.objects.filter(merchant_sku__in={terms.code, terms.code.upper()})
            .annotate(kind=Value("product", **kind))
            .values_list("kind", "product_id")
        )
    rows = parts[0].union(*parts[1:], all=True) if len(parts) > 1 else parts[0]
    products, categories = [], []
    for row_kind, pk in rows:
        (products if row_kind == "product" else categories).append(pk)
    return products, categories


def search(
    products: QuerySet[Product], *, terms: SearchTerms, code: Q, code_rank: float
) -> QuerySet[Product]:
    """``code`` (the portable condition) is not used here: the exact hits are read first."""
    config = settings.SEARCH_CONFIG
    query = SearchQuery(terms.text, config=config, search_type="websearch")
    code_ids, category_ids = _codes_and_categories(terms, query)
    exact = Q(pk__in=code_ids)
    return (
        products.annotate(document=search_vector(config))
        .filter(Q(document=query) | exact | Q(category_id__in=category_ids))
        .annotate(
            search_rank=Case(
                When(exact, then=Value(code_rank)),
                default=SearchRank(F("document"), query),
                output_field=FloatField(),
            )
        )
    )


def search_similar(products: QuerySet[Product], *, terms: SearchTerms) -> QuerySet[Product]:
    """Names with a word similar to the query ("ketle" finds kettles): pg_trgm's
    ``%>`` (word similarity above ``pg_trgm.word_similarity_threshold``, 0.6 by default),
    served by the trigram index on the name."""
    text = " ".join(terms.words)
    return products.filter(name__trigram_word_similar=text).annotate(
        search_rank=TrigramWordSimilarity(text, "name")
    )
