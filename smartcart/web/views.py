"""Improve cart for the web: start a run, poll it, apply or dismiss its suggestion.

Anonymous shoppers have session carts, so these views find the run through the request's
cart; another cart's run is a 404. The REST API offers the same flow to mobile clients.
"""

from contextlib import suppress

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from smartcart.models import OptimizationRun
from smartcart.selectors import optimization_run_get
from smartcart.services import (
    optimization_run_apply_outcome,
    optimization_run_create,
    optimization_run_dismiss,
    optimization_run_poll_check,
)
from smartcart.web.improve import improve_panel
from storefront.errors import Conflict, DomainError, NotFound
from storefront.money import format_money
from storefront.web.carts import request_cart_find
from storefront.web.views.cart import render_cart
from storefront.web.views.common import cart_url, safe_next

PANEL_ANCHOR = "improve"


def _run_or_404(request: HttpRequest, run_id: int) -> OptimizationRun:
    cart = request_cart_find(request)
    if cart is None:
        raise Http404("You have no cart yet.")
    try:
        return optimization_run_get(run_id=run_id, cart=cart)
    except NotFound as error:
        raise Http404(error.message) from error


@require_POST
def improve_start(request: HttpRequest) -> HttpResponse:
    cart = request_cart_find(request)
    if cart is None:
        return render_cart(
            request, status=400, panel_state={"improve_error": "Your cart is empty."}
        )
    try:
        _replace_overdue_run(request, cart=cart)
        optimization_run_create(cart=cart, requested_by=request.user)
    except DomainError as error:
        return render_cart(
            request, status=error.http_status, panel_state={"improve_error": error.message}
        )
    return redirect(cart_url(PANEL_ANCHOR))


def _replace_overdue_run(request: HttpRequest, *, cart) -> None:
    """ "Try again" on a run the page gave up on: that run is dismissed, so a new one can start
    for the same cart version (a late answer of the old one is never shown)."""
    replace = request.POST.get("replace", "")
    if replace.isdigit():
        with suppress(NotFound):
            optimization_run_dismiss(run=optimization_run_get(run_id=int(replace), cart=cart))


@require_GET
def improve_status(request: HttpRequest, run_id: int) -> HttpResponse:
    """The panel as an HTML fragment, for the page's polling script. A person who opens
    the URL itself gets the cart page instead."""
    run = optimization_run_poll_check(run=_run_or_404(request, run_id))
    if request.headers.get("X-Requested-With") != "fetch":
        return redirect(cart_url(PANEL_ANCHOR))
    response = render(request, "smartcart/_improve_panel.html", {"improve": improve_panel(run)})
    response["Cache-Control"] = "no-store"
    return response


@require_POST
def improve_apply(request: HttpRequest, run_id: int) -> HttpResponse:
    run = _run_or_404(request, run_id)
    back = _next(request)
    try:
        applied = optimization_run_apply_outcome(run=run, user=request.user)
    except Conflict as error:
        if back is not None:  # the checkout review shows the cart as it stands now
            messages.error(request, error.message)
            return redirect(back)
        return render_cart(
            request,
            status=409,
            panel_state={"improve_conflict": error.message, "improve_conflict_run": run},
        )
    saved = f": you save {format_money(applied.saved)}" if applied.saved > 0 else ""
    # A run stored before its merchants shipped from warehouses named none: say which was chosen.
    picked = "; ".join(pick.summary for pick in applied.picked)
    picked = f" Chosen now, as the suggestion named no warehouse: {picked}." if picked else ""
    messages.success(
        request,
        f"Suggestion applied{saved}. Your cart now costs {format_money(applied.total)}.{picked}",
    )
    return redirect(back or cart_url())


@require_POST
def improve_dismiss(request: HttpRequest, run_id: int) -> HttpResponse:
    run = _run_or_404(request, run_id)
    optimization_run_dismiss(run=run)
    if run.is_improvement and not run.is_stale:
        messages.info(request, "Kept your cart as it is.")
    return redirect(_next(request) or cart_url())


def _next(request: HttpRequest) -> str | None:
    """Where the form asked to go back to (the checkout review), if it is a page of this
    site; ``None``: the cart page."""
    return safe_next(request, request.POST.get("next"), fallback="") or None
