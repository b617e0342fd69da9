"""Failed logins lock the client out (django-axes) on the web login, the admin and the API
token endpoint alike, counted per real client address: a rotating X-Forwarded-For from an
untrusted peer changes nothing."""

import pytest

from tests.factories import TEST_PASSWORD, UserFactory

pytestmark = pytest.mark.django_db

TOKEN_URL = "/api/v1/auth/token/"


@pytest.fixture(autouse=True)
def _small_limit(settings):
    settings.AXES_FAILURE_LIMIT = 3


@pytest.fixture
def alice(db):
    return UserFactory(username="alice", is_staff=True)


def _token_attempt(client, n: int, password: str = "wrong"):
    return client.post(
        TOKEN_URL,
        {"username": "alice", "password": password},
        content_type="application/json",
        HTTP_X_FORWARDED_FOR=f"198.51.100.{n}",
    )


def test_token_endpoint_locks_out_despite_rotating_forwarded_for(client, alice):
    codes = [_token_attempt(client, n).status_code for n in range(5)]
    assert codes == [400, 400, 429, 429, 429]
    locked = _token_attempt(client, 99, password=TEST_PASSWORD)
    assert locked.status_code == 429
    assert locked.json()["error"]["code"] == "login_locked"
    assert int(locked["Retry-After"]) == 900


def test_a_trusted_proxy_separates_its_clients(client, alice, settings):
    settings.TRUSTED_PROXIES = ["127.0.0.1"]
    for _ in range(3):
        _token_attempt(client, 1)
    assert _token_attempt(client, 1).status_code == 429
    assert _token_attempt(client, 2, password=TEST_PASSWORD).status_code == 200


@pytest.mark.parametrize(
    ("url", "fields"),
    [
        ("/accounts/login/", {"username": "alice"}),
        ("/admin/login/", {"username": "alice", "next": "/admin/"}),
    ],
)
def test_web_and_admin_logins_lock_out_with_a_page(client, alice, url, fields):
    responses = [
        client.post(url, {**fields, "password": "wrong"}, HTTP_X_FORWARDED_FOR=f"192.0.2.{n}")
        for n in range(4)
    ]
    assert [r.status_code for r in responses] == [200, 200, 429, 429]
    locked = client.post(url, {**fields, "password": TEST_PASSWORD})
    assert locked.status_code == 429
    assert int(locked["Retry-After"]) == 900
    assert "Too many sign-in attempts" in locked.content.decode()
    assert "_auth_user_id" not in client.session


def test_a_success_before_the_limit_resets_the_count(client, alice):
    for n in range(2):
        _token_attempt(client, n)
    assert _token_attempt(client, 0, password=TEST_PASSWORD).status_code == 200
    assert [_token_attempt(client, n).status_code for n in range(3)] == [400, 400, 429]
