"""Reads of optimisation runs: one of a cart's, its latest, the one checkout may reuse, the
ones in flight or left behind by a lost worker."""

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q, QuerySet
from django.utils import timezone

from smartcart.models import OptimizationRun
from storefront.errors import NotFound
from storefront.models import Cart


def optimization_run_get(*, run_id: int, cart: Cart) -> OptimizationRun:
    """One of ``cart``'s runs; another cart's run is ``NotFound`` (never revealed)."""
    try:
        return OptimizationRun.objects.select_related("cart").get(pk=run_id, cart_id=cart.pk)
    except (OptimizationRun.DoesNotExist, ValueError, TypeError):
        raise NotFound(
            "No such optimization for your cart.", code="optimization_not_found", field="run_id"
        ) from None


def optimization_run_latest(
    *, cart: Cart, include_dismissed: bool = False
) -> OptimizationRun | None:
    """The cart's most recent run (not dismissed unless asked; never a price-watch notice
    a later check withdrew), or ``None``."""
    runs = OptimizationRun.objects.select_related("cart").filter(
        cart_id=cart.pk, superseded_at__isnull=True
    )
    if not include_dismissed:
        runs = runs.filter(dismissed_at__isnull=True)
    return runs.order_by("-created_at", "-id").first()


def optimization_run_for_cart_panel(*, cart: Cart) -> OptimizationRun | None:
    """The run the cart page shows: the newest one made for the cart as it is now (its
    version), asked for by the shopper or the price watch, not applied, dismissed or
    withdrawn; ``None`` otherwise. A run of an earlier version (the last order's, before a
    line changed) and the checkout review's own look are never shown there."""
    return (
        OptimizationRun.objects.select_related("cart")
        .filter(
            cart_id=cart.pk,
            cart_version=cart.version,
            source__in=[OptimizationRun.Source.IMPROVE, OptimizationRun.Source.PRICE_WATCH],
            superseded_at__isnull=True,
            dismissed_at__isnull=True,
            applied_at__isnull=True,
        )
        .order_by("-created_at", "-id")
        .first()
    )


def optimization_run_for_checkout(
    *, cart: Cart, max_age_s: int, now: datetime | None = None
) -> tuple[bool, OptimizationRun | None]:
    """``(dismissed, run)`` for the cart's current version: whether the shopper dismissed a
    suggestion for this version, and the newest done run of it (not applied, not dismissed)
    finished within ``max_age_s``. The caller still checks that the run's current total is
    what the cart costs now (prices and terms move without the cart's version)."""
    runs = OptimizationRun.objects.select_related("cart").filter(
        cart_id=cart.pk, cart_version=cart.version
    )
    if runs.filter(dismissed_at__isnull=False).exists():
        return True, None
    cutoff = (now or timezone.now()) - timedelta(seconds=max_age_s)
    run = (
        runs.filter(
            status=OptimizationRun.Status.DONE,
            applied_at__isnull=True,
            finished_at__gte=cutoff,
        )
        .order_by("-finished_at", "-id")
        .first()
    )
    return False, run


def optimization_run_list(*, cart: Cart) -> QuerySet[OptimizationRun]:
    """The cart's runs, newest first, each with ``cart`` set (``is_stale`` costs no query)."""
    return OptimizationRun.objects.select_related("cart").filter(cart_id=cart.pk)


def optimization_run_unclaimed_q(*, now: datetime) -> Q:
    """Runs ``queued`` past their pickup deadline: no worker started them within
    ``SMARTCART_QUEUED_MAX_S`` of their creation, or of being queued again after a lapsed
    lease (``lease_expires_at`` holds that deadline then)."""
    queued = OptimizationRun.Status.QUEUED
    created_before = now - timedelta(seconds=settings.SMARTCART_QUEUED_MAX_S)
    return Q(status=queued, lease_expires_at__isnull=True, created_at__lt=created_before) | Q(
        status=queued, lease_expires_at__lt=now
    )


def optimization_run_stale_q(*, now: datetime) -> Q:
    """Runs a lost worker left behind: ``running`` past the task's hard time limit plus
    ``SMARTCART_REAPER_GRACE_S`` (Celery killed it, or its worker died without redelivery),
    or ``queued`` past its pickup deadline (no worker serves its queue, or its message was
    lost)."""
    running_s = settings.CELERY_TASK_TIME_LIMIT + settings.SMARTCART_REAPER_GRACE_S
    return Q(
        status=OptimizationRun.Status.RUNNING, started_at__lt=now - timedelta(seconds=running_s)
    ) | optimization_run_unclaimed_q(now=now)


def optimization_run_in_flight(
    *, cart: Cart, cart_version: int, now: datetime | None = None
) -> OptimizationRun | None:
    """The run queued or running for this version of ``cart`` that can still finish (not
    dismissed, not left behind by a lost worker), or ``None``."""
    return (
        OptimizationRun.objects.select_related("cart")
        .filter(
            cart_id=cart.pk,
            cart_version=cart_version,
            status__in=[OptimizationRun.Status.QUEUED, OptimizationRun.Status.RUNNING],
            dismissed_at__isnull=True,
        )
        .exclude(optimization_run_stale_q(now=now or timezone.now()))
        .order_by("-created_at", "-id")
        .first()
    )
