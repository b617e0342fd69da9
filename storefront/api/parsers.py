"""Request body parsers of the REST API."""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


class BoundedJSONParser(JSONParser):
    """DRF's JSON parser, with a body nested past the decoder's recursion limit answered as
    a parse error (400) instead of a RecursionError (500): no request body of ours is more
    than a few levels deep."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply") from None
