"""``Idempotency-Key`` for the API's non-idempotent POSTs: the first successful answer to a
(user, key) is stored in the database with a fingerprint of the request, and a retry with the
same key gets that answer again (header ``Idempotent-Replayed: true``) instead of doing the
work twice: a line added once, one optimisation started.

Decorate an ``APIView`` method with ``@idempotent`` (cart lines, optimizations, placing an
order); it documents the ``Idempotent-Replayed`` response header in the OpenAPI schema. Rules:

- The key is optional; 1 to 255 printable ASCII characters, scoped to the signed-in user.
- The request runs in one transaction with the stored answer, so a request that fails (an
  error answer, a crash, a lost race with its own twin) leaves neither its writes nor its key
  behind, and its retry runs again. Only successful (2xx) answers are stored.
- The same key with a different method, path or body answers 422
  (``idempotency_key_reused``) and does nothing, the body compared as canonical JSON (key
  order and whitespace do not matter) through the row's ``fingerprint``; two concurrent
  requests with one key run once: the second waits for the first's row and replays it (PostgreSQL).
- Keys expire after ``IDEMPOTENCY_KEY_TTL_S`` (default 24 h); ``manage.py
  purge_idempotency_keys`` and celery beat's ``storefront.idempotency_keys_purge`` delete them.
"""

import functools
import hashlib
import json
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from storefront.errors import DomainError, ValidationFailed
from storefront.models import IdempotencyKey

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
MAX_KEY_LENGTH = 255


def _kept_for() -> str:
    hours = settings.IDEMPOTENCY_KEY_TTL_S / 3600
    return f"{hours:g} h" if hours >= 1 else f"{settings.IDEMPOTENCY_KEY_TTL_S} s"


def idempotency_key_parameter(
    *,
    required: bool = False,
    rule: str = "",
    min_length: int = 1,
    max_length: int = MAX_KEY_LENGTH,
    pattern: str = "^[\\x20-\\x7e]+$",
) -> OpenApiParameter:
    """The ``Idempotency-Key`` request header as OpenAPI documents it; ``rule`` (in words) and
    ``min_length``/``max_length``/``pattern`` (in the schema, so that clients and schema-driven
    tests know a key the endpoint refuses) state the endpoint's own limits when it has stricter
    ones than 1 to 255 printable ASCII characters."""
    rule = rule or f"1 to {MAX_KEY_LENGTH} printable ASCII characters"
    schema = {"type": "string", "minLength": min_length, "maxLength": max_length}
    return OpenApiParameter(
        name=HEADER,
        type=schema | {"pattern": pattern},
        location=OpenApiParameter.HEADER,
        required=required,
        description=f"{'Required' if required else 'Optional'}: {rule}, one per request you "
        "mean, scoped to your account. A retry with the same key and the same JSON body (key "
        "order and whitespace do not matter) gets the first successful answer again, status "
        f"and body, with `{REPLAYED_HEADER}: true`, instead of doing it twice; the same key "
        "with a different body (or on another endpoint) is a 422 `idempotency_key_reused` "
        "and does nothing. Only successful (2xx) answers are kept: after an error, retry with "
        f"the same key. Keys are kept {_kept_for()} (`IDEMPOTENCY_KEY_TTL_S`), then deleted "
        "(`manage.py purge_idempotency_keys`, hourly) and the key is new again.",
    )


IDEMPOTENT_REPLAYED_PARAMETER = OpenApiParameter(
    name=REPLAYED_HEADER,
    type=OpenApiTypes.STR,
    location=OpenApiParameter.HEADER,
    response=[200, 201, 202],
    enum=["true"],
    description=f"`true` when this answer is the stored answer to an earlier request with the "
    f"same `{HEADER}`; absent on a first answer.",
)

IDEMPOTENCY_KEY_PARAMETER = idempotency_key_parameter()


class IdempotencyKeyReused(DomainError):
    """The key was used for a different request (422)."""

    http_status = 422
    default_code = "idempotency_key_reused"


class _Answered(Exception):
    """Rolls back a request that did not succeed, carrying its answer out."""

    def __init__(self, response: Response) -> None:
        self.response = response


class _Duplicate(Exception):
    """A concurrent request with the same key committed first."""


def idempotent(method):
    """Makes an ``APIView`` method honour ``Idempotency-Key`` (see the module docstring)."""

    @extend_schema(parameters=[IDEMPOTENCY_KEY_PARAMETER, IDEMPOTENT_REPLAYED_PARAMETER])
    @functools.wraps(method)
    def wrapper(view, request, *args, **kwargs):
        key = request.headers.get(HEADER)
        if key is None or not request.user.is_authenticated:
            return method(view, request, *args, **kwargs)
        _check_key(key)
        fingerprint = request_fingerprint(request)
        stored = _stored(user=request.user, key=key)
        if stored is not None:
            return _replay(stored, fingerprint=fingerprint)
        try:
            with transaction.atomic():
                response = _answer(view, method, request, args, kwargs)
                _store(request=request, key=key, fingerprint=fingerprint, response=response)
        except _Answered as answered:
            return answered.response
        except _Duplicate:
            twin = _stored(user=request.user, key=key)
            if twin is None:  # the twin's key expired in between: this one is a new request
                return wrapper(view, request, *args, **kwargs)
            return _replay(twin, fingerprint=fingerprint)
        return response

    return wrapper


def _check_key(key: str) -> None:
    if not 0 < len(key) <= MAX_KEY_LENGTH or not key.isascii() or not key.isprintable():
        raise ValidationFailed(
            f"{HEADER} must be 1 to {MAX_KEY_LENGTH} printable ASCII characters.",
            code="idempotency_key_invalid",
            field=HEADER,
        )


def request_fingerprint(request) -> str:
    """SHA-256 of the method, the path and the canonical JSON of the parsed body (sorted keys,
    no whitespace), so a retry that serialises the same body differently still matches."""
    body = json.dumps(request.data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(f"{request.method}\n{request.path}\n{body}".encode()).hexdigest()


def _answer(view, method, request, args, kwargs) -> Response:
    try:
        response = method(view, request, *args, **kwargs)
    except Exception as error:
        # The API's exception handler answers it (or re-raises a bug: a 500, rolled back).
        raise _Answered(view.handle_exception(error)) from error
    if not 200 <= response.status_code < 300:
        raise _Answered(response)
    return response


def _stored(*, user, key: str) -> IdempotencyKey | None:
    return IdempotencyKey.objects.filter(user=user, key=key, expires_at__gt=timezone.now()).first()


def _store(*, request, key: str, fingerprint: str, response: Response) -> None:
    now = timezone.now()
    body = None if response.data is None else json.loads(JSONRenderer().render(response.data))
    try:
        with transaction.atomic():
            IdempotencyKey.objects.filter(user=request.user, key=key, expires_at__lte=now).delete()
            IdempotencyKey.objects.create(
                user=request.user,
                key=key,
                method=request.method,
                path=request.path[:500],
                fingerprint=fingerprint,
                status_code=response.status_code,
                response_body=body,
                location=(response.get("Location") or "")[:500],
                expires_at=now + timedelta(seconds=settings.IDEMPOTENCY_KEY_TTL_S),
            )
    except IntegrityError:
        raise _Duplicate from None


def _replay(stored: IdempotencyKey, *, fingerprint: str) -> Response:
    if stored.fingerprint != fingerprint:
        raise IdempotencyKeyReused(
            f"This {HEADER} was used for a different request ({stored.method} {stored.path}). "
            "Use a new key for a new request.",
            field=HEADER,
        )
    headers = {REPLAYED_HEADER: "true"}
    if stored.location:
        headers["Location"] = stored.location
    return Response(stored.response_body, status=stored.status_code, headers=headers)


def idempotency_keys_purge(*, now: datetime | None = None) -> int:
    """Deletes expired keys; returns how many."""
    deleted, _ = IdempotencyKey.objects.filter(expires_at__lte=now or timezone.now()).delete()
    return deleted
