"""Reading a request's input through a serializer: its validated data, or the API's 400."""

from typing import Any

from rest_framework import serializers

from storefront.bounds import DB_INT_MAX, db_id


def validated(serializer_class: type[serializers.Serializer], data: Any) -> dict:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class IdField(serializers.IntegerField):
    """A row id in a query string or body: 1 to the database's largest integer, so a huge
    value is a 400 rather than the database's overflow."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", DB_INT_MAX)
        super().__init__(**kwargs)


class TextField(serializers.CharField):
    """Text a request sends: a JSON string only. DRF's CharField turns a number or a boolean
    into its text ("123"), which the schema (``type: string``) calls invalid input."""

    default_error_messages = {"not_text": "Must be text (a JSON string)."}

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("not_text")
        return super().to_internal_value(data)


def id_or_slug(value: str) -> str | int:
    """A parameter that is an id when it is all digits, else a slug: the id as an int, or
    the API's 400 when the digits are not an id the database can hold."""
    if not value.isdigit():
        return value
    number = db_id(value)
    if number is None:
        raise serializers.ValidationError(
            f"Ensure this id is between 1 and {DB_INT_MAX}.", code="max_value"
        )
    return number


def json_body(serializer: Any) -> dict[str, Any]:
    """``extend_schema(request=...)`` for a JSON body: what the API documents and its clients
    send. The form parsers stay installed for the browsable API, but a form has no types
    (no null, no false for a missing box), so the schema does not offer it."""
    return {"application/json": serializer}
