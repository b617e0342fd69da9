"""A page that does not exist is the shop's own 404 page, with DEBUG too (the demo): never
Django's technical page listing every URL. The API keeps its JSON error."""

import pytest
from django.test import override_settings

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path", ["/no-such-page/", "/products/no-such-product/"])
@pytest.mark.parametrize("debug", [True, False], ids=["debug", "production"])
def test_a_missing_page_is_the_shops_404(client, path, debug):
    with override_settings(DEBUG=debug):
        response = client.get(path)
    assert response.status_code == 404
    body = response.content.decode()
    assert "find that page" in body
    assert "Using the URLconf" not in body and "urlpatterns" not in body


def test_the_api_keeps_its_json_404(client):
    with override_settings(DEBUG=True):
        response = client.get("/api/v1/nothing-here/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
