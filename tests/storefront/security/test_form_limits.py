"""Sign-up and the guest order lookup are limited per client address (and the lookup per order
number too): 70 accounts from one address, or 30 guesses at orders, are refused with 429."""

from types import SimpleNamespace

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from storefront.security import ratelimit

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _clock(monkeypatch):
    """Seconds into an hour-long window, so that no test's window ends halfway through."""
    monkeypatch.setattr(ratelimit, "time", SimpleNamespace(time=lambda: 1_800_000_000.0 + 1))


@pytest.fixture(autouse=True)
def _rates(settings):
    settings.SIGNUP_RATE = "10/hour"
    settings.ORDER_LOOKUP_RATE = "20/hour"
    settings.ORDER_LOOKUP_NUMBER_RATE = "10/hour"


def _sign_up(n: int, **extra):
    password = "a-long-Passphrase-42"
    data = {"username": f"bot{n}", "email": f"bot{n}@example.com"}
    data |= {"password1": password, "password2": password}
    # A fresh client each time: a signed-in client is sent away before the form.
    return Client().post(reverse("signup"), data, **extra)


def test_seventy_signups_from_one_address_stop_at_the_limit():
    codes = [_sign_up(n).status_code for n in range(70)]
    assert codes == [302] * 10 + [429] * 60
    assert get_user_model().objects.count() == 10
    refused = _sign_up(99)
    assert 0 < int(refused["Retry-After"]) <= 3600
    assert "Too many accounts were created from your connection" in refused.content.decode()


def test_signup_limit_is_per_client_address_behind_a_trusted_proxy(settings):
    settings.TRUSTED_PROXIES = ["127.0.0.1"]
    for n in range(10):
        _sign_up(n, HTTP_X_FORWARDED_FOR="203.0.113.1")
    assert _sign_up(10, HTTP_X_FORWARDED_FOR="203.0.113.1").status_code == 429
    assert _sign_up(11, HTTP_X_FORWARDED_FOR="203.0.113.2").status_code == 302


def test_signup_page_itself_is_not_counted():
    client = Client()
    assert [client.get(reverse("signup")).status_code for _ in range(15)] == [200] * 15


def _look_up(number: str, **extra):
    data = {"number": number, "email": "guess@example.com"}
    return Client().post(reverse("order_lookup"), data, **extra)


def test_thirty_wrong_lookups_from_one_address_are_refused():
    codes = [_look_up(f"SC-{n:06d}").status_code for n in range(30)]
    assert codes == [404] * 20 + [429] * 10
    refused = _look_up("SC-999999")
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) > 0
    assert "Too many order searches" in refused.content.decode()


def test_guesses_at_one_order_number_from_many_addresses_are_refused(settings):
    settings.TRUSTED_PROXIES = ["127.0.0.1"]
    codes = [
        _look_up("SC-000042", HTTP_X_FORWARDED_FOR=f"198.51.100.{n}").status_code for n in range(30)
    ]
    assert codes == [404] * 10 + [429] * 20
    # Another order number from a fresh address is still looked up.
    assert _look_up("SC-000043", HTTP_X_FORWARDED_FOR="198.51.100.200").status_code == 404


@pytest.mark.parametrize("url", ["/accounts/login/", "/admin/login/"])
def test_one_address_trying_passwords_across_accounts_is_slowed_down(url, settings):
    settings.LOGIN_RATE = "30/minute"
    codes = [
        Client().post(url, {"username": f"user{n}", "password": "guess"}).status_code
        for n in range(35)
    ]
    assert codes == [200] * 30 + [429] * 5
    refused = Client().post(url, {"username": "user99", "password": "guess"})
    assert 0 < int(refused["Retry-After"]) <= 60
    assert "Too many sign-in attempts from your connection" in refused.content.decode()
    assert Client().get(url).status_code == 200
