"""The cart page's panel hook: providers named in the setting fill the head, main and side
slots, in order, from a template or ready HTML (escaped unless marked safe)."""

import pytest
from django.test import override_settings
from django.urls import reverse
from django.utils.safestring import mark_safe

from storefront.web.cart_panels import CartPanel
from tests.storefront.web.conftest import add_to_cart

pytestmark = pytest.mark.django_db

seen_state: list[dict] = []


def notice_provider(*, request, cart, summary, state):
    seen_state.append(dict(state))
    return [
        CartPanel(slot="main", html=mark_safe('<p id="notice">Prices watched</p>')),
        CartPanel(slot="side", html="<b>escaped</b>"),
        CartPanel(
            slot="head",
            template_name="smartcart/_improve_head.html",
            context={"improve": {"pending": True}},
        ),
    ]


def second_provider(*, request, cart, summary, state):
    return [CartPanel(slot="main", html=mark_safe(f'<p id="second">{summary.total}</p>'))]


PANELS = [f"{__name__}.notice_provider", f"{__name__}.second_provider"]


@override_settings(STOREFRONT_CART_PANELS=PANELS)
def test_providers_fill_their_slots_in_order(client, market):
    seen_state.clear()
    add_to_cart(client, market.dear_offers[0])
    html = client.get(reverse("cart")).content.decode()
    assert html.index('id="notice"') < html.index('id="second"')
    assert "&lt;b&gt;escaped&lt;/b&gt;" in html
    head = html[: html.index("</head>")]
    assert '<meta http-equiv="refresh"' in head
    assert seen_state == [{}]
    assert 'id="improve-region"' not in html  # smartcart's provider is not in this list


@override_settings(STOREFRONT_CART_PANELS=[])
def test_no_providers_no_panels(client, market):
    add_to_cart(client, market.dear_offers[0])
    html = client.get(reverse("cart")).content.decode()
    assert reverse("cart_improve") not in html
    assert "Your cart" in html


@override_settings(STOREFRONT_CART_PANELS=PANELS)
def test_an_empty_cart_asks_no_provider(client, market):
    seen_state.clear()
    client.get(reverse("cart"))
    assert seen_state == []
