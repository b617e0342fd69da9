"""A paginator told its count: the catalog's facets already count the listed products in
their grouped query, so the list need not run its own ``COUNT(*)``."""

from django.core.paginator import Paginator
from django.utils.functional import cached_property


class CountedPaginator(Paginator):
    def __init__(self, object_list, per_page, *, count: int, **kwargs):
        super().__init__(object_list, per_page, **kwargs)
        self._known_count = count

    @cached_property
    def count(self) -> int:
        return self._known_count
