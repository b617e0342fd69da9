import csv
import io

import pytest
from django.urls import reverse

from storefront.statements.selectors import commission_of
from tests.factories import UserFactory
from tests.storefront.statements.conftest import placed, staff_of

pytestmark = pytest.mark.django_db

URL = "admin:storefront_merchant_statement"


@pytest.fixture
def history(two_merchant_cart, clock, paid, cancelled):
    """November: one order paid, then A's package cancelled and refunded."""
    order, first, second = placed(two_merchant_cart, bps=(1000, 500))
    paid(order)
    clock.set(2026, 11, 12, 9, 0)
    cancelled(first)
    return order, first, second


def _get(client, user, **query):
    client.force_login(user)
    return client.get(reverse(URL), query)


def test_merchant_staff_see_their_statement_with_sales_refunds_commission_and_payout(
    client, history
):
    order, first, _ = history
    response = _get(client, staff_of(first.merchant), month="2026-11")
    assert response.status_code == 200
    statement = response.context["statement"]
    assert (statement.sales, statement.refunds, statement.payout_due) == (first.cost, first.cost, 0)
    html = response.content.decode()
    assert 'data-testid="statement-refunds"' in html
    assert html.count('data-testid="statement-line"') == 2
    assert order.number in html
    # One merchant to choose from: no merchant list shown.
    assert 'id="id_merchant"' not in html


def test_merchant_staff_never_read_another_merchants_statement(client, history):
    _, first, second = history
    staff = staff_of(first.merchant)
    for query in (
        {"merchant": second.merchant_id},
        {"merchant": second.merchant_id, "format": "csv"},
    ):
        assert _get(client, staff, month="2026-11", **query).status_code == 404
    assert _get(client, staff, merchant="x").status_code == 404
    # Without a merchant chosen, their own.
    response = _get(client, staff, month="2026-11")
    assert response.context["statement"].merchant_id == first.merchant_id


def test_catalog_admins_choose_any_merchant(client, history):
    _, _, second = history
    admin = UserFactory(is_staff=True, is_superuser=True)
    response = _get(
        client, admin, merchant=second.merchant_id, first_day="2026-11-01", last_day="2026-11-30"
    )
    assert response.status_code == 200
    statement = response.context["statement"]
    assert (statement.merchant_id, statement.sales) == (second.merchant_id, second.cost)
    assert statement.commission == commission_of(amount=second.cost, bps=500)
    assert 'id="id_merchant"' in response.content.decode()


def test_staff_without_orders_access_and_shoppers_are_refused(client, history):
    assert _get(client, UserFactory(is_staff=True)).status_code == 403
    client.force_login(UserFactory())
    assert client.get(reverse(URL)).status_code == 302  # to the admin login


def test_the_csv_download(client, history):
    order, first, _ = history
    response = _get(client, staff_of(first.merchant), month="2026-11", format="csv")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert 'filename="statement-' in response["Content-Disposition"]
    assert "2026-11-01-2026-11-30.csv" in response["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert [row[1] for row in rows[1:]] == [
        "sale",
        "refund",
        "total sales",
        "total refunds",
        "payout due",
    ]
    assert {row[2] for row in rows[1:3]} == {order.number}


@pytest.mark.parametrize(
    "query",
    [
        {"month": "2026-13"},
        {"month": "november"},
        {"first_day": "2026-11-05"},
        {"first_day": "2026-11-05", "last_day": "2026-11-01"},
    ],
)
def test_a_bad_period_is_explained_not_computed(client, history, query):
    _, first, _ = history
    response = _get(client, staff_of(first.merchant), **query)
    assert response.status_code == 200
    assert response.context["statement"] is None
    assert 'class="errorlist"' in response.content.decode()


def test_the_packages_list_links_to_the_statement(client, history):
    _, first, _ = history
    client.force_login(staff_of(first.merchant))
    html = client.get(reverse("admin:storefront_merchantorder_changelist")).content.decode()
    assert reverse(URL) in html


def test_the_merchants_list_links_to_the_statements_for_catalog_admins(client, history):
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    response = client.get(reverse("admin:storefront_merchant_changelist"))
    assert response.status_code == 200
    assert reverse(URL) in response.content.decode()


def test_with_no_period_chosen_the_current_month_is_shown(client, history):
    _, first, _ = history
    response = _get(client, staff_of(first.merchant))
    assert response.context["statement"].period.label == "November 2026"
    assert 'value="2026-11"' in response.content.decode()
