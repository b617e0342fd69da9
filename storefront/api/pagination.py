"""The API's page-number pagination, answering ``page`` exactly as the schema documents it."""

from typing import Any

from rest_framework.pagination import PageNumberPagination


class StrictPageNumberPagination(PageNumberPagination):
    """DRF's page numbers, except that a ``page`` that is given must be a page: an empty
    ``page=`` or ``page=last`` is the same 404 (the API's JSON error) as ``page=abc`` or a
    page past the end, instead of the first or last page. Absent, it is the first page."""

    last_page_strings = ()

    def get_page_number(self, request: Any, paginator: Any) -> Any:
        return request.query_params.get(self.page_query_param, 1)
