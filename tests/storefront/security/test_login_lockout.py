"""Failed logins lock an account out (django-axes) on the web login, the admin and the API
token endpoint alike, counted per account and per account and real client address: neither a
rotating X-Forwarded-For from an untrusted peer nor real rotating addresses behind a trusted
proxy help a guesser, and one address does not lock the other accounts behind it out."""

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


def test_one_address_does_not_lock_out_other_accounts_behind_it(client, alice, settings):
    settings.TRUSTED_PROXIES = ["127.0.0.1"]
    UserFactory(username="bob")
    for _ in range(3):
        _token_attempt(client, 1)
    assert _token_attempt(client, 1).status_code == 429
    bob = client.post(
        TOKEN_URL,
        {"username": "bob", "password": TEST_PASSWORD},
        content_type="application/json",
        HTTP_X_FORWARDED_FOR="198.51.100.1",
    )
    assert bob.status_code == 200


LOGINS = [
    ("/accounts/login/", {}),
    ("/admin/login/", {"next": "/admin/"}),
    (TOKEN_URL, None),
]


def _login(client, url, fields, *, username, password, address):
    if fields is None:
        return client.post(
            url,
            {"username": username, "password": password},
            content_type="application/json",
            HTTP_X_FORWARDED_FOR=address,
        )
    data = {**fields, "username": username, "password": password}
    return client.post(url, data, HTTP_X_FORWARDED_FOR=address)


def _signed_in(response) -> bool:
    if response.status_code == 302:  # the web and admin logins redirect
        return True
    return response.status_code == 200 and "token" in response.json()


@pytest.mark.parametrize(("url", "fields"), LOGINS)
def test_forty_addresses_behind_a_trusted_proxy_lock_the_account(
    client, alice, settings, url, fields
):
    settings.TRUSTED_PROXIES = ["127.0.0.1"]
    settings.AXES_FAILURE_LIMIT = 10
    codes = [
        _login(
            client, url, fields, username="alice", password="wrong", address=f"203.0.113.{n}"
        ).status_code
        for n in range(40)
    ]
    wrong = 400 if fields is None else 200
    assert codes == [wrong] * 9 + [429] * 31
    # The right password from yet another address waits out the cool-off too.
    right = _login(
        client, url, fields, username="alice", password=TEST_PASSWORD, address="203.0.113.99"
    )
    assert right.status_code == 429
    assert int(right["Retry-After"]) == 900
    assert "_auth_user_id" not in client.session


@pytest.mark.parametrize(("url", "fields"), LOGINS)
def test_an_attacker_behind_a_nat_does_not_lock_out_its_neighbours(
    client, alice, settings, url, fields
):
    settings.TRUSTED_PROXIES = ["127.0.0.1"]
    UserFactory(username="bob", is_staff=True)
    nat = "192.0.2.7"
    for _ in range(4):
        _login(client, url, fields, username="alice", password="wrong", address=nat)
    assert (
        _login(client, url, fields, username="alice", password="wrong", address=nat).status_code
        == 429
    )
    neighbour = _login(client, url, fields, username="bob", password=TEST_PASSWORD, address=nat)
    assert _signed_in(neighbour)


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
