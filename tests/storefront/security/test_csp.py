"""Every page carries a Content-Security-Policy (django-csp): scripts and style elements from
this site only; Swagger UI's inline start-up script and style run by their per-request nonce."""

import re

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def _directives(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    return {
        name: values
        for name, *values in (part.split() for part in header.split(";") if part.strip())
    }


def test_shop_pages_allow_only_this_sites_scripts(client):
    for url in (reverse("catalog"), reverse("login"), reverse("signup"), "/admin/login/"):
        policy = _directives(client.get(url))
        assert policy["default-src"] == ["'self'"], url
        assert policy["script-src"] == ["'self'"], url
        assert policy["style-src"] == ["'self'"], url
        assert policy["object-src"] == ["'none'"]
        assert policy["frame-ancestors"] == ["'none'"]


def test_cached_catalog_pages_carry_the_policy_too(client, settings):
    settings.PAGE_CACHE = True
    first, second = client.get(reverse("catalog")), client.get(reverse("catalog"))
    assert first["Content-Security-Policy"] == second["Content-Security-Policy"]


def test_swagger_ui_runs_its_inline_script_by_nonce(client):
    response = client.get(reverse("api:docs"))
    assert response.status_code == 200
    policy = _directives(response)
    (nonce,) = (v for v in policy["script-src"] if v.startswith("'nonce-"))
    assert "'unsafe-inline'" not in policy["script-src"]
    html = response.content.decode()
    value = nonce.removeprefix("'nonce-").removesuffix("'")
    inline = re.findall(r"<script(?![^>]*\bsrc=)([^>]*)>", html)
    assert inline and all(f'nonce="{value}"' in attrs for attrs in inline)
    # Another request gets another nonce.
    assert _directives(client.get(reverse("api:docs")))["script-src"] != policy["script-src"]
