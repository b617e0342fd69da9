"""Production (DEBUG off, manifest storage) before ``collectstatic`` has run: pages render and
their styles load, and the log names the command to run; they were all 500s."""

import pytest
from django.contrib.staticfiles.storage import staticfiles_storage

pytestmark = pytest.mark.django_db


@pytest.fixture
def no_collectstatic(settings, tmp_path):
    settings.STATIC_ROOT = tmp_path / "staticfiles"
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {
            "BACKEND": "storefront.config.staticstorage.ForgivingManifestStaticFilesStorage"
        },
    }
    yield
    staticfiles_storage._wrapped = None  # the next test builds the storage of its settings


def test_pages_render_before_collectstatic(client, no_collectstatic, caplog):
    from storefront.config.staticstorage import ForgivingManifestStaticFilesStorage

    ForgivingManifestStaticFilesStorage._warned = False
    response = client.get("/")
    assert response.status_code == 200
    assert '/static/web/shop.css"' in response.content.decode()
    assert "collectstatic" in caplog.text


@pytest.mark.slow
def test_a_production_server_serves_pages_and_styles_without_collectstatic(tmp_path):
    import re

    import requests

    from tests.live_server import free_port, gunicorn, manage, serve, server_env

    env = server_env(database_url=f"sqlite:///{tmp_path / 'db.sqlite3'}")
    manage(env, "migrate", "--noinput")
    port = free_port()
    with serve(env, gunicorn(port, workers=1), port=port) as base:
        page = requests.get(f"{base}/", timeout=30)
        assert page.status_code == 200
        css = re.search(r'href="(/static/[^"]+\.css)"', page.text).group(1)
        assert requests.get(f"{base}{css}", timeout=30).status_code == 200
