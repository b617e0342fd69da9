"""drf-spectacular post-processing: what every paginated list answers besides its page.

A ``page`` past the end (or not a number) is a 404 with the API's error body; the views do
not declare it one by one, so it is added here to each operation that takes ``page``.
"""

INVALID_PAGE = {
    "description": "No such page (`page` past the last one, or not a positive number).",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
}


def paginated_lists_document_invalid_page(result, generator, request, public):
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict):
                continue
            params = operation.get("parameters", [])
            if any(p.get("in") == "query" and p.get("name") == "page" for p in params):
                operation.setdefault("responses", {}).setdefault("404", INVALID_PAGE)
    return result
