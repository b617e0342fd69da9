"""Product search: full text with typo tolerance, exact codes first, and the catalog's facets.

``product_search`` picks the database's engine: PostgreSQL's full-text search with trigram
similarity for typos (``postgres``), or a plain word match with the same results on the
demo's queries for the embedded SQLite (``fallback``). Both annotate ``search_rank`` (higher
is better) so that callers order by it the same way.
"""

from storefront.search.query import (
    SEARCH_ORDERING,
    PreparedSearch,
    product_search,
    search_prepare,
)

__all__ = ["SEARCH_ORDERING", "PreparedSearch", "product_search", "search_prepare"]
