"""``Idempotency-Key`` on the API's POSTs (``storefront.security.idempotency``): replayed on retry,
refused for a different body, failed requests leave nothing, expired keys are purged."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from storefront.models import CartLine, IdempotencyKey
from storefront.security.idempotency import idempotency_keys_purge
from tests.factories import OfferFactory, UserFactory

pytestmark = pytest.mark.django_db

LINES = "/api/v1/cart/lines/"


@pytest.fixture
def user():
    return UserFactory()


@pytest.fixture
def api(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def test_a_retried_line_post_is_replayed_not_doubled(api, user):
    offer = OfferFactory(stock=50)
    body = {"offer_id": offer.pk, "quantity": 2}
    first = api.post(LINES, body, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    again = api.post(LINES, body, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true"
    assert CartLine.objects.get(offer=offer).quantity == 2
    # Without a key (or with a new one) the POST is a new request: the quantity grows.
    api.post(LINES, body, format="json", HTTP_IDEMPOTENCY_KEY="k-2")
    assert CartLine.objects.get(offer=offer).quantity == 4


def test_the_same_key_with_another_body_is_422(api):
    offer = OfferFactory(stock=50)
    api.post(LINES, {"offer_id": offer.pk, "quantity": 1}, format="json", HTTP_IDEMPOTENCY_KEY="k")
    reused = api.post(
        LINES, {"offer_id": offer.pk, "quantity": 3}, format="json", HTTP_IDEMPOTENCY_KEY="k"
    )
    assert reused.status_code == 422
    assert reused.json()["error"]["code"] == "idempotency_key_reused"
    assert CartLine.objects.get(offer=offer).quantity == 1


def test_keys_are_per_user(api, user):
    offer = OfferFactory(stock=50)
    body = {"offer_id": offer.pk, "quantity": 1}
    api.post(LINES, body, format="json", HTTP_IDEMPOTENCY_KEY="shared")
    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=UserFactory()).key}")
    response = other.post(LINES, body, format="json", HTTP_IDEMPOTENCY_KEY="shared")
    assert response.status_code == 201
    assert "Idempotent-Replayed" not in response
    assert CartLine.objects.filter(offer=offer).count() == 2


def test_a_failed_request_keeps_no_key_and_its_retry_runs(api):
    offer = OfferFactory(stock=1)
    refused = api.post(
        LINES, {"offer_id": offer.pk, "quantity": 5}, format="json", HTTP_IDEMPOTENCY_KEY="k"
    )
    assert refused.status_code == 409
    assert not IdempotencyKey.objects.exists()
    offer.stock = 10
    offer.save()
    retried = api.post(
        LINES, {"offer_id": offer.pk, "quantity": 5}, format="json", HTTP_IDEMPOTENCY_KEY="k"
    )
    assert retried.status_code == 201


def test_a_bad_key_is_400(api):
    offer = OfferFactory()
    response = api.post(
        LINES, {"offer_id": offer.pk, "quantity": 1}, format="json", HTTP_IDEMPOTENCY_KEY="x" * 256
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "idempotency_key_invalid"


def test_expired_keys_are_purged_and_no_longer_replayed(api, user):
    offer = OfferFactory(stock=50)
    body = {"offer_id": offer.pk, "quantity": 1}
    api.post(LINES, body, format="json", HTTP_IDEMPOTENCY_KEY="old")
    IdempotencyKey.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    fresh = api.post(LINES, body, format="json", HTTP_IDEMPOTENCY_KEY="old")
    assert "Idempotent-Replayed" not in fresh
    assert CartLine.objects.get(offer=offer).quantity == 2
    IdempotencyKey.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    assert idempotency_keys_purge() == 1
    api.post(LINES, body, format="json", HTTP_IDEMPOTENCY_KEY="new")
    IdempotencyKey.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    call_command("purge_idempotency_keys")
    assert not IdempotencyKey.objects.exists()


def test_the_body_is_compared_in_canonical_form_key_order_and_whitespace_do_not_matter(api):
    offer = OfferFactory(stock=50)
    first = api.post(
        LINES,
        f'{{"offer_id": {offer.pk}, "quantity": 2}}',
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY="canon",
    )
    again = api.post(
        LINES,
        f'{{\n  "quantity" :2,\n\t"offer_id":{offer.pk}\n}}',
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY="canon",
    )
    assert first.status_code == again.status_code == 201
    assert again["Idempotent-Replayed"] == "true" and again.json() == first.json()
    assert CartLine.objects.get(offer=offer).quantity == 2
    assert len(IdempotencyKey.objects.get().fingerprint) == 64


def test_every_idempotent_post_documents_both_headers_and_the_limits(api):
    schema = api.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    for path in ("/api/v1/cart/lines/", "/api/v1/cart/optimizations/", "/api/v1/orders/"):
        post = schema["paths"][path]["post"]
        (key,) = [p for p in post["parameters"] if p["name"] == "Idempotency-Key"]
        assert key["in"] == "header" and "purge_idempotency_keys" in key["description"]
        assert "IDEMPOTENCY_KEY_TTL_S" in key["description"]
        successes = [code for code in post["responses"] if code.startswith("2")]
        for code in successes:
            assert "Idempotent-Replayed" in post["responses"][code]["headers"], (path, code)
        assert "422" in post["responses"], path
