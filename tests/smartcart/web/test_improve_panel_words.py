"""The saving suggestion says honestly what each move does: a line that costs more where it
moves is not shown green with its old price struck through, each moved line says why it
moves, and Apply comes right after the headline saving, before the detail."""

import re

import pytest
from django.urls import reverse

from smartcart.moves import LineMove, suggestion_line_moves
from storefront.checkout.services import checkout_review_prepare
from storefront.models import Cart
from tests.smartcart.web.test_improve import latest_run, start
from tests.storefront.web.conftest import add_to_cart

pytestmark = pytest.mark.django_db


@pytest.fixture
def rising_cart(client, market):
    """Voltra Widget at the cheap shop (22.00 + 8.99 shipping), the other two at the bundle
    shop (46.00 + 5.99: under its free-shipping 50.00 and its 3-unit discount). Moving the
    widget to the bundle shop costs 1.00 more and saves both shipping fees and earns 5%."""
    add_to_cart(client, market.cheap_offers[0])
    add_to_cart(client, market.bundle_offers[1])
    add_to_cart(client, market.bundle_offers[2])
    start(client)
    return client.get(reverse("cart")).content.decode()


def _row(html: str, product: str) -> str:
    row = rf'<tr class="changed-row[^"]*"[^>]*>\s*<th scope="row">1 \S {product}.*?</tr>'
    match = re.search(row, html, re.S)
    assert match, f"no moved line for {product}"
    return match.group(0)


def test_a_dearer_line_says_why_it_moves_and_is_not_shown_as_a_saving(rising_cart):
    run = latest_run()
    assert (run.current_total, run.suggested_total) == (8298, 6555)
    row = _row(rising_cart, "Voltra Widget")
    assert (
        '<span class="cell__sub move-reason" data-testid="move-reason">'
        "+€1.00, saves €14.98 shipping, €3.45 more discount</span>" in row
    )
    assert '<span class="cell new">' not in row  # the green "better" style
    assert '<tr class="changed-row changed-row--dearer"' in row  # a hook for a neutral marker
    assert "€23.00 each, €1.00 more" in row
    assert 'class="old"' not in row.split('data-label="Line total"')[1]  # 22.00 not struck
    assert "+€1.00</span>" in row.split('data-label="Line total"')[1]


def test_a_cheaper_line_keeps_the_old_total_struck_through(client, market):
    for offer in market.dear_offers:
        add_to_cart(client, offer)
    start(client)
    row = _row(client.get(reverse("cart")).content.decode(), "Voltra Widget")
    assert "€2.00 cheaper, saves €6.99 shipping" in row  # 25.00 -> 23.00, the dear shop left
    assert '<span class="cell new">' in row
    assert '<span class="old"><span class="visually-hidden">was </span>€25.00</span>' in row


def test_apply_comes_right_after_the_headline_saving(rising_cart):
    headline = rising_cart.index("You can save €17.43")
    apply = rising_cart.index("Apply and save €17.43")
    first_table = rising_cart.index('<table class="compare compare--lines">')
    assert headline < apply < first_table


def test_moves_are_read_from_the_stored_suggestion_without_a_query(
    rising_cart, django_assert_num_queries
):
    run = latest_run()
    with django_assert_num_queries(0):
        moves = suggestion_line_moves(run.suggestion)
    assert [move.summary for move in moves.values()] == [
        "Voltra Widget: Cheap Shop to Bundle Shop (+€1.00, saves €14.98 shipping, "
        "€3.45 more discount)"
    ]


@pytest.mark.parametrize(
    ("price", "shipping", "discount", "words"),
    [
        (50, -690, 0, "+€0.50, saves €6.90 shipping"),
        (-200, 0, 0, "€2.00 cheaper"),
        (0, 495, -100, "same price, adds €4.95 shipping, €1.00 less discount"),
    ],
)
def test_move_reason_words(price, shipping, discount, words):
    move = LineMove("W", 1, "A", "B", price, shipping, discount)
    assert move.reason == words


def test_the_review_switch_says_what_changes(client, market):
    for offer in market.dear_offers:
        add_to_cart(client, offer)
    cart = Cart.objects.get(session_key=client.session.session_key)
    cheaper = checkout_review_prepare(cart=cart).cheaper
    assert cheaper is not None
    assert cheaper.moves == (
        "Voltra Widget: Dear Shop to Bundle Shop (€2.00 cheaper, saves €6.99 shipping, "
        "€3.45 more discount)",
        "Nexon Gizmo: Dear Shop to Bundle Shop (€2.01 cheaper, saves €6.99 shipping, "
        "€3.45 more discount)",
        "Ampere Doohickey: Dear Shop to Bundle Shop (€2.02 cheaper, saves €6.99 shipping, "
        "€3.45 more discount)",
    )
