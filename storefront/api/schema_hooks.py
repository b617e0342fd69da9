"""drf-spectacular post-processing: responses the views do not declare one by one.

A ``page`` past the end (or not a number) is a 404 with the API's error body; it is added
to each operation that takes ``page``.

A request line (method, path and query string) longer than gunicorn's ``limit_request_line``
(4094 bytes by default) is answered 414 by gunicorn itself, before the app runs: the body is
gunicorn's HTML page, not the API's JSON error. Any operation can get it (any URL can carry
a long query string), so it is added to every operation.

DRF refuses a NUL character in any text field (``ProhibitNullCharactersValidator``, a 400),
so every free-text string the API takes, in the query or in a request body, says so with a
pattern; schema-driven clients and tests then know such a value is not valid input.
"""

INVALID_PAGE = {
    "description": "No such page (`page` past the last one, or not a positive number).",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
}

URI_TOO_LONG = {
    "description": (
        "The request line (path and query string) is over the web server's limit (gunicorn's "
        "`limit_request_line`, 4094 bytes by default). Answered by the web server before the "
        "API runs, so the body is an HTML page, not the API's JSON error."
    ),
    "content": {"text/html": {"schema": {"type": "string"}}},
}


def _operations(result):
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if isinstance(operation, dict):
                yield operation


def paginated_lists_document_invalid_page(result, generator, request, public):
    for operation in _operations(result):
        params = operation.get("parameters", [])
        if any(p.get("in") == "query" and p.get("name") == "page" for p in params):
            operation.setdefault("responses", {}).setdefault("404", INVALID_PAGE)
    return result


def every_operation_documents_uri_too_long(result, generator, request, public):
    for operation in _operations(result):
        operation.setdefault("responses", {}).setdefault("414", URI_TOO_LONG)
    return result


NO_NULL_CHARACTERS = "^[^\\x00]*$"


def _free_text(schema: dict) -> bool:
    return schema.get("type") == "string" and not (
        {"enum", "pattern", "format", "$ref"} & schema.keys()
    )


def _request_components(result) -> set[str]:
    names = set()
    for operation in _operations(result):
        for media in operation.get("requestBody", {}).get("content", {}).values():
            ref = media.get("schema", {}).get("$ref", "")
            if ref.startswith("#/components/schemas/"):
                names.add(ref.rsplit("/", 1)[1])
    return names


def text_inputs_document_no_null_characters(result, generator, request, public):
    for operation in _operations(result):
        for parameter in operation.get("parameters", []):
            schema = parameter.get("schema", {})
            if parameter.get("in") in ("query", "path") and _free_text(schema):
                schema["pattern"] = NO_NULL_CHARACTERS
    components = result.get("components", {}).get("schemas", {})
    for name in _request_components(result):
        for prop in components.get(name, {}).get("properties", {}).values():
            if _free_text(prop) and not prop.get("readOnly"):
                prop["pattern"] = NO_NULL_CHARACTERS
    return result
