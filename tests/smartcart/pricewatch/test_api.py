"""The price-watch e-mail opt-in on the API: signed-in only, read and set, documented."""

import pytest
from rest_framework.test import APIClient

from smartcart.models import PriceWatchEmailOptIn
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

URL = "/api/v1/cart/price-watch/"


@pytest.fixture
def shopper_api():
    user = UserFactory()
    client = APIClient()
    client.force_authenticate(user)
    return user, client


def test_opt_in_and_out(shopper_api):
    user, api = shopper_api
    assert api.get(URL).json() == {"email": False}
    response = api.put(URL, {"email": True}, format="json")
    assert response.status_code == 200 and response.json() == {"email": True}
    opt_in = PriceWatchEmailOptIn.objects.get(user=user)
    assert opt_in.enabled and opt_in.site_url == "http://testserver"
    assert api.get(URL).json() == {"email": True}
    assert api.put(URL, {"email": False}, format="json").json() == {"email": False}
    assert not PriceWatchEmailOptIn.objects.get(user=user).enabled


def test_a_bad_body_is_a_400_and_changes_nothing(shopper_api):
    user, api = shopper_api
    response = api.put(URL, {}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "email"
    assert not PriceWatchEmailOptIn.objects.filter(user=user).exists()


def test_signed_out_callers_are_refused():
    api = APIClient()
    assert api.get(URL).status_code in (401, 403)
    assert api.put(URL, {"email": True}, format="json").status_code in (401, 403)
    assert not PriceWatchEmailOptIn.objects.exists()


def test_the_opt_in_is_in_the_schema():
    schema = APIClient().get("/api/v1/schema/?format=json").json()
    put = schema["paths"][URL]["put"]
    ref = put["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    component = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]
    assert component["properties"]["email"]["type"] == "boolean"
    assert {"200", "400", "401"} <= set(put["responses"])
