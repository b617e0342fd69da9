"""The price watch's e-mail: opting in and out, the once-a-day send, the unsubscribe link.

A signed-in shopper opts in on the cart page; each new saving notice of their cart queues
``price_watch_email_send`` (a ``cpu`` task, on commit). The send re-checks that the notice is
still the one to show and inserts a ``PriceWatchEmail`` row for (cart, today) in the same
transaction as sending: the unique day is the once-per-cart-per-day rule, and a failed send
rolls the row back so a retry may send. The unsubscribe link carries the user id signed with
the project's secret key (``django.core.signing``), so it works without signing in.
"""

import logging

from django.core import signing
from django.core.mail import EmailMessage
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from smartcart.models import OptimizationRun, PriceWatchEmail, PriceWatchEmailOptIn

logger = logging.getLogger(__name__)

_UNSUBSCRIBE_SALT = "smartcart.price-watch.unsubscribe"


def price_watch_email_set(*, user, enabled: bool, site_url: str = "") -> PriceWatchEmailOptIn:
    """Turns the signed-in ``user``'s price-watch e-mail on or off."""
    defaults: dict[str, bool | str] = {"enabled": enabled}
    if site_url:
        defaults["site_url"] = site_url.rstrip("/")
    opt_in, _ = PriceWatchEmailOptIn.objects.update_or_create(user=user, defaults=defaults)
    return opt_in


def price_watch_email_enabled(*, user) -> bool:
    if user is None or not user.is_authenticated:
        return False
    return PriceWatchEmailOptIn.objects.filter(user=user, enabled=True).exists()


def unsubscribe_token(*, user_id: int) -> str:
    return signing.dumps({"u": user_id}, salt=_UNSUBSCRIBE_SALT, compress=True)


def price_watch_unsubscribe(*, token: str) -> bool:
    """Turns the e-mail off for the user the token names; ``False`` for a bad token."""
    try:
        user_id = int(signing.loads(token, salt=_UNSUBSCRIBE_SALT)["u"])
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        return False
    PriceWatchEmailOptIn.objects.filter(user_id=user_id).update(
        enabled=False, updated_at=timezone.now()
    )
    return True


def _still_news(run: OptimizationRun) -> bool:
    return (
        run.is_improvement
        and run.superseded_at is None
        and run.dismissed_at is None
        and run.applied_at is None
        and run.cart.version == run.cart_version
    )


def price_watch_email_send(*, run_id: int) -> bool:
    """Sends the saving e-mail of price-watch notice ``run_id`` when its cart's owner still
    wants it, the notice is still current and no e-mail about the cart went out today.
    Returns whether one was sent. Safe to call again (a redelivered task sends nothing)."""
    run = (
        OptimizationRun.objects.select_related("cart__owner")
        .filter(pk=run_id, source=OptimizationRun.Source.PRICE_WATCH)
        .first()
    )
    if run is None:
        return False
    owner = run.cart.owner
    if owner is None or not owner.email or not _still_news(run):
        return False
    opt_in = PriceWatchEmailOptIn.objects.filter(user=owner, enabled=True).first()
    if opt_in is None:
        return False
    try:
        with transaction.atomic():
            PriceWatchEmail.objects.create(cart=run.cart, run=run, sent_on=timezone.localdate())
            _message(run=run, opt_in=opt_in, to=owner.email).send()
    except IntegrityError:
        return False  # one went out today
    return True


def _message(*, run: OptimizationRun, opt_in: PriceWatchEmailOptIn, to: str) -> EmailMessage:
    site = opt_in.site_url or "http://127.0.0.1:8000"
    unsubscribe = site + reverse(
        "price_watch_unsubscribe", args=[unsubscribe_token(user_id=opt_in.user_id)]
    )
    context = {
        "run": run,
        "cart_url": site + reverse("cart") + "#improve",
        "unsubscribe_url": unsubscribe,
    }
    return EmailMessage(
        subject=render_to_string("smartcart/price_watch_email_subject.txt", context).strip(),
        body=render_to_string("smartcart/price_watch_email.txt", context),
        to=[to],
        headers={"List-Unsubscribe": f"<{unsubscribe}>"},
    )
