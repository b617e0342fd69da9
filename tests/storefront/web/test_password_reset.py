"""Password reset through Django's own views and tokens, in the shop's pages: the mailed link,
the new password, no account enumeration, dead links, the anonymous cart and the rate limit."""

import re
from types import SimpleNamespace

import pytest
from django.core import mail
from django.test import Client
from django.urls import reverse

from storefront.accounts import services as accounts
from storefront.models import Cart, CartLine
from storefront.security import ratelimit
from tests.factories import TEST_PASSWORD, UserFactory
from tests.storefront.web.conftest import add_to_cart

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a-fresh-Passphrase-77"
LINK = re.compile(r"^(https?://\S+/accounts/password/reset/\S+/\S+/)$", re.MULTILINE)


@pytest.fixture(autouse=True)
def _mail_task_runs_on_commit(client, django_capture_on_commit_callbacks):
    # The view enqueues the mail task on commit; tests run inside a transaction that never
    # commits, so request_reset runs the captured callbacks (the task, eager here) itself.
    client.run_on_commit = django_capture_on_commit_callbacks


def request_reset(client, email, **extra):
    with client.run_on_commit(execute=True):
        return client.post(reverse("password_reset"), {"email": email}, **extra)


def mailed_link() -> str:
    (message,) = mail.outbox
    (link,) = LINK.findall(message.body)
    return link


def set_new_password(client, link, password=NEW_PASSWORD, confirmation=None):
    """Follows the mailed link (Django swaps the token for a session value) and submits."""
    opened = client.get(link)
    assert opened.status_code == 302
    form_url = opened["Location"]
    data = {"new_password1": password, "new_password2": confirmation or password}
    return form_url, client.post(form_url, data)


def can_log_in(client, username, password) -> bool:
    client.logout()
    client.post(reverse("login"), {"username": username, "password": password})
    return "_auth_user_id" in client.session


def test_login_page_links_to_the_reset(client):
    html = client.get(reverse("login")).content.decode()
    assert f'href="{reverse("password_reset")}">Forgot your password?</a>' in html


def test_reset_page_asks_for_the_email(client):
    html = client.get(reverse("password_reset")).content.decode()
    assert 'for="id_email"' in html and 'autocomplete="email"' in html
    assert "Send reset link" in html


def test_known_address_gets_one_mail_and_the_new_password_works(client, shopper):
    response = request_reset(client, "alice@example.com")
    assert response.status_code == 302
    assert response["Location"] == reverse("password_reset_done")
    assert "Check your inbox" in client.get(response["Location"]).content.decode()

    (message,) = mail.outbox
    assert message.to == ["alice@example.com"]
    assert message.subject == "Reset your Smart Cart password"
    assert "Hello alice," in message.body and "Smart Cart" in message.body
    assert "The link works once, for 3 days." in message.body
    link = mailed_link()
    assert link.startswith("http://testserver/accounts/password/reset/")

    form_page = client.get(client.get(link)["Location"])
    html = form_page.content.decode()
    assert "Choose a new password" in html and 'for="id_new_password1"' in html
    assert 'autocomplete="username"' in html and 'value="alice"' in html

    _, response = set_new_password(client, link)
    assert response.status_code == 302
    assert response["Location"] == reverse("password_reset_complete")
    # Signed in straight away, as the complete page says.
    assert client.session["_auth_user_id"] == str(shopper.pk)
    html = client.get(reverse("password_reset_complete")).content.decode()
    assert "You are signed in as <strong>alice</strong>" in html

    assert can_log_in(client, "alice", NEW_PASSWORD)
    assert not can_log_in(client, "alice", TEST_PASSWORD)


def test_the_reset_signs_out_the_accounts_other_browsers(client, shopper):
    other_browser = Client()
    other_browser.force_login(shopper)
    assert other_browser.get(reverse("catalog")).context["user"] == shopper
    request_reset(client, "alice@example.com")
    set_new_password(client, mailed_link())
    assert not other_browser.get(reverse("catalog")).context["user"].is_authenticated


def test_the_reset_revokes_the_accounts_api_tokens(client, shopper):
    from rest_framework.authtoken.models import Token

    token = Token.objects.create(user=shopper)
    api = Client(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert api.get(reverse("api:cart")).status_code != 401  # signed in (no cart yet: 404)
    request_reset(client, "alice@example.com")
    set_new_password(client, mailed_link())
    assert not Token.objects.filter(user=shopper).exists()
    assert api.get(reverse("api:cart")).status_code == 401


def test_the_link_has_the_requests_scheme_and_host(client, shopper):
    request_reset(client, "alice@example.com", secure=True, HTTP_HOST="shop.example.com")
    assert mailed_link().startswith("https://shop.example.com/accounts/password/reset/")


def test_the_request_only_enqueues_the_mail(client, shopper, django_capture_on_commit_callbacks):
    """Known and unknown addresses cost the request the same: a worker looks the address up
    and sends the mail, so the response time cannot tell whether an account exists."""
    for email in ("alice@example.com", "nobody@example.com"):
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            response = client.post(reverse("password_reset"), {"email": email})
        assert response.status_code == 302 and len(callbacks) == 1
    assert mail.outbox == []


def test_the_mail_task_takes_no_secret(client, shopper, monkeypatch):
    from storefront.accounts import tasks

    sent = []
    monkeypatch.setattr(tasks.password_reset_mail_send_task, "delay", lambda *a: sent.append(a))
    request_reset(client, "alice@example.com")
    (args,) = sent
    assert args[:3] == ("alice@example.com", "testserver", False)
    assert all("token" not in str(arg).lower() for arg in args)


def test_unknown_address_gets_the_same_page_and_no_mail(client, shopper):
    known = request_reset(client, "alice@example.com")
    mail.outbox.clear()
    unknown = request_reset(client, "nobody@example.com")
    assert (unknown.status_code, unknown["Location"]) == (known.status_code, known["Location"])
    assert mail.outbox == []
    html = client.get(unknown["Location"]).content.decode()
    assert "If an account uses the address you entered" in html


def test_used_link_shows_the_error_with_a_way_to_ask_again(client, shopper):
    request_reset(client, "alice@example.com")
    link = mailed_link()
    set_new_password(client, link)
    client.logout()

    response = client.get(link)
    html = response.content.decode()
    assert response.status_code == 200
    assert "This reset link cannot be used" in html
    assert f'href="{reverse("password_reset")}">Request a new link</a>' in html
    assert 'name="new_password1"' not in html


@pytest.mark.parametrize("tamper", ["token", "uid"])
def test_tampered_link_shows_the_error(client, shopper, tamper):
    request_reset(client, "alice@example.com")
    uidb64, token = mailed_link().rstrip("/").split("/")[-2:]
    if tamper == "token":
        token = token[:-1] + ("a" if token[-1] != "a" else "b")
    else:
        uidb64 = "MTIzNDU2"  # base64 of a user id that does not exist
    url = reverse("password_reset_confirm", kwargs={"uidb64": uidb64, "token": token})

    html = client.get(url).content.decode()
    assert "This reset link cannot be used" in html
    # The token-free form URL does not open without a valid token in the session either.
    set_password_url = url.replace(token, "set-password")
    response = client.post(
        set_password_url, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}
    )
    assert "This reset link cannot be used" in response.content.decode()
    assert can_log_in(client, "alice", TEST_PASSWORD)


def test_mismatched_passwords_show_errors_and_change_nothing(client, shopper):
    request_reset(client, "alice@example.com")
    form_url, response = set_new_password(
        client, mailed_link(), confirmation="something-else-entirely-9"
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert "The two password fields didn’t match." in html  # noqa: RUF001
    assert 'aria-invalid="true"' in html
    # The link still works for a second try.
    response = client.post(form_url, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert response["Location"] == reverse("password_reset_complete")


def test_the_anonymous_cart_is_merged_when_the_reset_signs_in(client, market, shopper):
    request_reset(client, "alice@example.com")
    link = mailed_link()
    add_to_cart(client, market.dear_offers[0], 2)
    assert Cart.objects.filter(owner__isnull=True).count() == 1

    set_new_password(client, link)

    assert not Cart.objects.filter(owner__isnull=True).exists()
    line = CartLine.objects.get()
    assert (line.cart.owner, line.offer, line.quantity) == (shopper, market.dear_offers[0], 2)
    assert "Voltra Widget" in client.get(reverse("cart")).content.decode()


def test_an_address_shared_by_two_accounts_mails_each_its_own_link(client):
    UserFactory(username="alice", email="family@example.com")
    UserFactory(username="bob", email="Family@Example.com")
    request_reset(client, "FAMILY@example.com")
    assert sorted(m.body.split(",")[0] for m in mail.outbox) == ["Hello alice", "Hello bob"]


@pytest.fixture
def clock(monkeypatch):
    """A fixed wall clock for the rate limit, so a window cannot end in the middle of a test."""
    fake = SimpleNamespace(now=1_800_000_000.0)
    fake.time = lambda: fake.now
    monkeypatch.setattr(ratelimit, "time", fake)
    return fake


def test_one_address_gets_at_most_three_links_per_window(client, shopper, clock):
    for _ in range(3):
        assert request_reset(client, "alice@example.com").status_code == 302
    refused = request_reset(client, "alice@example.com")
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 15 * 60
    assert "Too many reset requests. Please try again in 15 minutes." in refused.content.decode()
    assert len(mail.outbox) == 3
    # Unknown addresses are limited the same way: the refusal reveals no account.
    for _ in range(3):
        request_reset(client, "nobody@example.com")
    assert request_reset(client, "nobody@example.com").status_code == 429

    clock.now += 15 * 60
    assert request_reset(client, "alice@example.com").status_code == 302
    assert len(mail.outbox) == 4


def test_one_client_is_limited_across_addresses(client, shopper, clock, monkeypatch):
    monkeypatch.setattr(accounts, "RESET_LIMIT_PER_CLIENT", (2, 600))
    assert request_reset(client, "a@example.com").status_code == 302
    assert request_reset(client, "b@example.com").status_code == 302
    assert request_reset(client, "alice@example.com").status_code == 429
    assert mail.outbox == []
    # Another client address has its own budget.
    other = request_reset(client, "alice@example.com", REMOTE_ADDR="203.0.113.9")
    assert other.status_code == 302
    assert len(mail.outbox) == 1
