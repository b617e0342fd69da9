"""The API's JSON parser, bounded in size and nesting.

DRF's ``JSONParser`` reads the request stream directly, so ``DATA_UPLOAD_MAX_MEMORY_SIZE``
(which Django checks only in ``request.body`` / ``request.POST``) never applied to JSON, and a
deeply nested document made ``json.loads`` raise ``RecursionError``: a 500. Here the body is
read up to the limit (413 beyond it), a ``RecursionError`` is a parse error, and documents
nested deeper than ``API_JSON_MAX_DEPTH`` are refused (400) before any serializer recurses
into them.
"""

import codecs
import json
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from rest_framework import exceptions, status
from rest_framework.parsers import JSONParser


class RequestTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "request_too_large"


def json_depth(value: Any) -> int:
    """Nesting depth of a parsed JSON value (a scalar is 0, ``[]`` is 1), without recursion."""
    deepest = 0
    stack = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        children: Iterable[Any]
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            deepest = max(deepest, depth)
            continue
        deepest = max(deepest, depth + 1)
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _read_bounded(stream, limit: int | None) -> bytes:
    if limit is None:
        return stream.read()
    body = stream.read(limit + 1)
    if len(body) > limit:
        raise RequestTooLarge(f"The request body is larger than {limit} bytes.")
    return body


class BoundedJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        parser_context = parser_context or {}
        encoding = parser_context.get("encoding", settings.DEFAULT_CHARSET)
        body = _read_bounded(stream, settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
        try:
            text = codecs.decode(body, encoding)
            data = json.loads(text, parse_constant=_refuse_constant)
        except RecursionError as exc:
            raise exceptions.ParseError("JSON parse error - nesting too deep.") from exc
        except ValueError as exc:
            raise exceptions.ParseError(f"JSON parse error - {exc}") from exc
        if json_depth(data) > settings.API_JSON_MAX_DEPTH:
            raise exceptions.ParseError(
                f"JSON parse error - nested deeper than {settings.API_JSON_MAX_DEPTH} levels."
            )
        return data


def _refuse_constant(name: str):
    # NaN and Infinity are not JSON (DRF's strict mode refuses them too).
    raise ValueError(f"{name} is not valid JSON")
