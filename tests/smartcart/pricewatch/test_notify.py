"""The price-watch e-mail: opt in and out, once a day per cart, the unsubscribe link."""

import re

import pytest
from django.core import mail
from django.urls import reverse

from smartcart.models import OptimizationRun, PriceWatchEmailOptIn
from smartcart.pricewatch.notify import (
    price_watch_email_send,
    price_watch_email_set,
    unsubscribe_token,
)
from tests.smartcart.pricewatch.test_services import two_shops

pytestmark = pytest.mark.django_db


def latest_notice(cart):
    return OptimizationRun.objects.filter(cart=cart, source="price_watch").latest("id")


def test_no_email_unless_opted_in(change_prices):
    _, _, offer_there = two_shops()
    change_prices((offer_there, 700))
    assert mail.outbox == []


def test_an_opted_in_shopper_gets_one_email_a_day_per_cart(change_prices):
    cart, _, offer_there = two_shops()
    price_watch_email_set(user=cart.owner, enabled=True, site_url="https://shop.example/")
    change_prices((offer_there, 700))
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == [cart.owner.email]
    assert message.subject == "Prices changed: your cart can now cost €3.00 less"
    assert "https://shop.example/cart/#improve" in message.body
    assert message.extra_headers["List-Unsubscribe"].startswith(
        "<https://shop.example/price-watch/unsubscribe/"
    )
    change_prices((offer_there, 500))  # a new, bigger saving the same day
    assert len(mail.outbox) == 1
    assert price_watch_email_send(run_id=latest_notice(cart).pk) is False


def test_opting_out_stops_the_email(change_prices):
    cart, _, offer_there = two_shops()
    price_watch_email_set(user=cart.owner, enabled=True)
    price_watch_email_set(user=cart.owner, enabled=False)
    change_prices((offer_there, 700))
    assert mail.outbox == []


def test_a_withdrawn_notice_sends_nothing(change_prices):
    cart, _, offer_there = two_shops()
    change_prices((offer_there, 700))
    notice = latest_notice(cart)
    change_prices((offer_there, 1000))  # the saving is gone
    price_watch_email_set(user=cart.owner, enabled=True)
    assert price_watch_email_send(run_id=notice.pk) is False


def test_the_unsubscribe_link_works_without_signing_in(client, change_prices):
    cart, _, offer_there = two_shops()
    price_watch_email_set(user=cart.owner, enabled=True)
    change_prices((offer_there, 700))
    url = re.search(r"http://\S+/price-watch/unsubscribe/\S+/", mail.outbox[0].body).group(0)
    path = url.split("http://127.0.0.1:8000", 1)[1]
    page = client.get(path)
    assert page.status_code == 200 and b"Stop the e-mails" in page.content
    assert PriceWatchEmailOptIn.objects.get(user=cart.owner).enabled  # a GET changes nothing
    done = client.post(path)
    assert done.status_code == 200 and b"no more price alerts" in done.content
    assert not PriceWatchEmailOptIn.objects.get(user=cart.owner).enabled


def test_a_tampered_unsubscribe_link_is_refused(client):
    token = unsubscribe_token(user_id=1)
    response = client.post(reverse("price_watch_unsubscribe", args=[token[:-2] + "xx"]))
    assert response.status_code == 400


def test_the_cart_page_toggles_the_email(client, change_prices):
    cart, _, _ = two_shops()
    client.force_login(cart.owner)
    page = client.get(reverse("cart"))
    assert b"E-mail me when my cart can cost less" in page.content
    client.post(reverse("price_watch_email"), {"enabled": "1"})
    opt_in = PriceWatchEmailOptIn.objects.get(user=cart.owner)
    assert opt_in.enabled and opt_in.site_url == "http://testserver"
    assert b"Stop e-mails" in client.get(reverse("cart")).content
    client.post(reverse("price_watch_email"), {"enabled": "0"})
    assert not PriceWatchEmailOptIn.objects.get(user=cart.owner).enabled


def test_signed_out_shoppers_cannot_opt_in(client):
    response = client.post(reverse("price_watch_email"), {"enabled": "1"})
    assert response.status_code == 302 and not PriceWatchEmailOptIn.objects.exists()
