import pytest
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from storefront.carts.services import cart_line_set_quantity
from storefront.models import CartLine, Offer
from tests.carts import cart_with_choices
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

URL = "/api/v1/cart/optimizations/"


def test_inline_optimize_then_apply_gives_the_suggested_total(alice_api, cart):
    response = alice_api.post(URL, {}, format="json")
    assert response.status_code == 201, response.json()
    run = response.json()
    assert run["status"] == "done"
    assert run["route"] == "inline"
    assert response["Location"] == run["url"]
    assert run["savings"] == run["current_total"] - run["suggested_total"] > 0
    assert run["is_improvement"] is True and run["is_stale"] is False
    assert {line["new_merchant_name"] for line in run["suggestion"]["lines"]} == {"Bundle Shop"}

    applied = alice_api.post(run["apply_url"])
    assert applied.status_code == 200, applied.json()
    assert applied.json()["total"] == run["suggested_total"]
    assert applied.json()["version"] == run["cart_version"] + 1

    again = alice_api.get(run["url"]).json()
    assert again["is_stale"] is True
    assert again["applied_at"] is not None


@override_settings(SMARTCART_INLINE_MAX_MS=0)
def test_queued_optimize_answers_202_and_runs_in_process(
    alice_api, cart, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_api.post(URL, {"budget_ms": 500}, format="json")
    assert response.status_code == 202, response.json()
    body = response.json()
    assert body["status"] == "queued" and body["route"] == "cpu"
    detail = alice_api.get(response["Location"]).json()
    assert detail["status"] == "done"
    assert detail["timings"]["solve_ms"] is not None


def test_stale_apply_is_409_cart_changed(alice_api, cart):
    run = alice_api.post(URL, {}, format="json").json()
    line = CartLine.objects.filter(cart=cart).first()
    cart_line_set_quantity(cart=cart, line_id=line.pk, quantity=2)
    response = alice_api.post(run["apply_url"])
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "cart_changed"
    assert alice_api.get(run["url"]).json()["is_stale"] is True


def test_price_change_apply_is_409_price_changed(alice_api, cart):
    run = alice_api.post(URL, {}, format="json").json()
    Offer.objects.filter(pk=run["suggestion"]["lines"][0]["new_offer_id"]).update(unit_price=1)
    response = alice_api.post(run["apply_url"])
    assert response.status_code == 409
    assert response.json()["error"] == {
        "code": "price_changed",
        "message": response.json()["error"]["message"],
        "field": "lines",
    }


def test_other_users_optimization_is_404(alice_api, client_for):
    bob = UserFactory(username="bob")
    cart_with_choices(owner=bob)
    bob_api = client_for(bob)
    bob_run = bob_api.post(URL, {}, format="json").json()
    for response in (
        alice_api.get(f"{URL}{bob_run['id']}/"),
        alice_api.post(f"{URL}{bob_run['id']}/apply/"),
        alice_api.post(f"{URL}{bob_run['id']}/dismiss/"),
    ):
        assert response.status_code == 404
        assert response.json()["error"]["code"] in {"optimization_not_found", "cart_not_found"}


def test_empty_cart_is_400(alice_api, shopper):
    alice_api.post("/api/v1/cart/")
    response = alice_api.post(URL, {}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "cart_empty"


def test_no_cart_is_404(alice_api):
    response = alice_api.post(URL, {}, format="json")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "cart_not_found"


def test_unavailable_line_is_409(alice_api, cart):
    line = CartLine.objects.filter(cart=cart).first()
    Offer.objects.filter(pk=line.offer_id).update(active=False)
    response = alice_api.post(URL, {}, format="json")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "line_unavailable"


@pytest.mark.parametrize("budget", [0, -5, 10**9, "soon", True])
def test_bad_budget_is_400(alice_api, cart, budget):
    response = alice_api.post(URL, {"budget_ms": budget}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "budget_ms"


def test_dismiss_then_apply_is_409(alice_api, cart):
    run = alice_api.post(URL, {}, format="json").json()
    dismissed = alice_api.post(f"{URL}{run['id']}/dismiss/")
    assert dismissed.status_code == 200
    assert dismissed.json()["dismissed_at"] is not None
    response = alice_api.post(run["apply_url"])
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "dismissed"


def test_apply_twice_is_409_already_applied_or_changed(alice_api, cart):
    run = alice_api.post(URL, {}, format="json").json()
    assert alice_api.post(run["apply_url"]).status_code == 200
    second = alice_api.post(run["apply_url"])
    assert second.status_code == 409
    assert second.json()["error"]["code"] == "already_applied"


def test_list_is_newest_first_and_paginated(alice_api, cart):
    first = alice_api.post(URL, {}, format="json").json()
    line = CartLine.objects.filter(cart=cart).first()
    cart_line_set_quantity(cart=cart, line_id=line.pk, quantity=2)
    second = alice_api.post(URL, {}, format="json").json()
    body = alice_api.get(URL).json()
    assert body["count"] == 2
    assert [run["id"] for run in body["results"]] == [second["id"], first["id"]]


def test_anonymous_is_401(api, cart):
    assert api.post(URL, {}, format="json").status_code == 401
    assert api.get(URL).status_code == 401


def test_optimize_is_throttled(alice_api, cart, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"optimize": "2/min", "token": "1000/min"},
    }
    assert [alice_api.post(URL, {}, format="json").status_code for _ in range(2)] == [201, 201]
    throttled = alice_api.post(URL, {}, format="json")
    assert throttled.status_code == 429
    assert throttled.json()["error"]["code"] == "throttled"
    assert int(throttled["Retry-After"]) > 0
    # Reading runs is not limited by the optimize scope.
    assert alice_api.get(URL).status_code == 200


def test_inline_optimize_reads_three_times_and_writes_once(alice_api, cart):
    with CaptureQueriesContext(connection) as queries:
        response = alice_api.post(URL, {}, format="json")
    assert response.status_code == 201
    statements = [
        query["sql"]
        for query in queries
        if not query["sql"].startswith(("SAVEPOINT", "RELEASE", "SET LOCAL"))
    ]
    # The token (with its user), the caller's cart with its lines in one statement, the
    # candidate offers with their merchants' matching zones, then the run.
    assert [sql.split()[0] for sql in statements] == ["SELECT", "SELECT", "SELECT", "INSERT"]
    assert '"authtoken_token"' in statements[0]
    assert 'FROM "storefront_cart" LEFT OUTER JOIN "storefront_cartline"' in statements[1]
    assert 'FROM "storefront_offer"' in statements[2]
    assert '"smartcart_optimizationrun"' in statements[3]


def test_deeply_nested_json_body_is_400_not_500(alice_api, cart):
    body = "[" * 50_000 + "]" * 50_000
    response = alice_api.post(URL, data=body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "parse_error"
