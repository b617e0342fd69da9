"""PostgreSQL: a weighted full-text vector (name A, brand B, description C) under a GIN
expression index, categories matched by name, trigram word similarity for typos."""

from django.conf import settings
from django.contrib.postgres.search import (
    SearchQuery,
    SearchRank,
    SearchVector,
    TrigramWordSimilarity,
)
from django.db.models import Case, F, FloatField, Q, QuerySet, Value, When

from storefront.models import Category, Product
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


def search(
    products: QuerySet[Product], *, terms: SearchTerms, code: Q, code_rank: float
) -> QuerySet[Product]:
    config = settings.SEARCH_CONFIG
    query = SearchQuery(terms.text, config=config, search_type="websearch")
    categories = Category.objects.annotate(document=SearchVector("name", config=config)).filter(
        document=query
    )
    return (
        products.annotate(document=search_vector(config))
        .filter(Q(document=query) | Q(category__in=categories.values("pk")) | code)
        .annotate(
            search_rank=Case(
                When(code, then=Value(code_rank)),
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
