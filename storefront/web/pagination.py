"""A paginator told its count: the catalog's facets already count the listed products in
their grouped query, so the list need not run its own ``COUNT(*)``."""

from django.core.paginator import Paginator
from django.utils.functional import cached_property


class CountedPaginator(Paginator):
    known_count = 0

    def __init__(self, object_list, per_page, *, count: int | None = None, **kwargs):
        super().__init__(object_list, per_page, **kwargs)
        if count is not None:
            self.known_count = count

    @cached_property
    def count(self) -> int:
        return self.known_count


def counted_paginator_class(count: int) -> type[Paginator]:
    """``CountedPaginator`` told ``count``, for code that builds the paginator itself from a
    class (DRF's ``django_paginator_class``)."""
    return type("CountedPaginator", (CountedPaginator,), {"known_count": count})
