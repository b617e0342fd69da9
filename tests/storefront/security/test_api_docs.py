"""The API docs work offline: Swagger UI's assets come from the app's static files."""

import re

import pytest
from django.contrib.staticfiles import finders

pytestmark = pytest.mark.django_db


def test_swagger_ui_loads_no_asset_from_another_host(client):
    page = client.get("/api/v1/docs/").content.decode()
    sources = re.findall(r'(?:src|href)="([^"]+)"', page)
    assets = [s for s in sources if s.endswith((".js", ".css"))]
    assert assets, page[:500]
    for asset in assets:
        assert asset.startswith("/static/"), asset
        assert finders.find(asset.removeprefix("/static/")), f"{asset} is not a static file"
    assert "cdn" not in page.lower()
