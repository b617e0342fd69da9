import pytest
from django.test import RequestFactory

from storefront.security.client_ip import client_ip


def _request(remote: str, forwarded: str | None = None):
    extra = {"REMOTE_ADDR": remote}
    if forwarded is not None:
        extra["HTTP_X_FORWARDED_FOR"] = forwarded
    return RequestFactory().get("/", **extra)


def test_forwarded_for_is_ignored_from_an_untrusted_peer(settings):
    settings.TRUSTED_PROXIES = ["10.0.0.1"]
    assert client_ip(_request("203.0.113.9", "198.51.100.1")) == "203.0.113.9"


@pytest.mark.parametrize(
    ("forwarded", "expected"),
    [
        ("198.51.100.7", "198.51.100.7"),
        # What the client wrote itself sits left of what the proxy appended: never reached.
        ("1.2.3.4, 198.51.100.7", "198.51.100.7"),
        ("1.2.3.4, 198.51.100.7, 10.0.0.2", "198.51.100.7"),
        ("not-an-address, 10.0.0.2", "10.0.0.1"),
        ("", "10.0.0.1"),
    ],
)
def test_forwarded_for_is_read_from_the_right_behind_trusted_proxies(settings, forwarded, expected):
    settings.TRUSTED_PROXIES = ["10.0.0.0/24"]
    assert client_ip(_request("10.0.0.1", forwarded)) == expected
