"""Starting a run: validate and rate limit, then solve a small cart in the request or insert a
queued run whose job is sent once the transaction commits."""

import logging
import time

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from gpu_engine import json_safe
from smartcart.answers import answer_from_solution, solver_plan
from smartcart.models import OptimizationRun
from smartcart.ratelimit import improve_rate_check
from smartcart.routing import RouteChoice, outage_error, route_choose, route_in_request
from smartcart.selectors import (
    CartLines,
    CartProblemBuild,
    cart_problem_build,
    optimization_run_in_flight,
)
from smartcart.services.common import (
    Status,
    User,
    check_budget,
    failure_message,
    ms_since,
    optimization_run_enqueue,
    run_solve,
    run_write,
    signed_in,
    tasks_run_in_process,
)
from smartcart.services.lease import lapsed_runs_recover, lease_lapsed
from smartcart.services.reaper import stale_runs_fail
from storefront.errors import Conflict
from storefront.models import Cart

logger = logging.getLogger(__name__)


def optimization_run_create(
    *,
    cart: Cart,
    requested_by: User | None = None,
    budget_ms: int | None = None,
    lines: CartLines | None = None,
) -> OptimizationRun:
    """Starts improving ``cart`` as it stands and returns the run. ``lines``: the cart and
    its lines as the caller read them together (``selectors.cart_lines_find``), which saves
    reading the lines again; ``None`` reads them here.

    Rate limited per shopper (per cart when signed out) for the API and the web page alike
    (``Throttled``, 429). Validates first (``cart_empty``, ``line_unavailable``, a bad
    budget); a line only sold out at its merchant is moved to another that has it. A cart
    predicted to solve in a few milliseconds is solved here and the run comes back ``done``;
    otherwise the run is ``queued`` and its job is sent to the ``cpu`` or ``gpu`` queue once
    the surrounding transaction commits. A run already queued or running
    for the same cart version is returned instead of a second one (a double click starts one
    job), unless a lost worker left it behind: that one is failed and a fresh run starts.
    """
    budget_ms = check_budget(budget_ms)
    user = signed_in(requested_by)
    improve_rate_check(ident=f"user:{user.pk}" if user is not None else f"cart:{cart.pk}")
    t0 = time.perf_counter()
    if lines is not None:  # the caller read the cart: building it started then
        t0 -= lines.read_ms / 1000.0
    build = cart_problem_build(cart=cart, lines=lines, sold_out_allowed=True)
    build_ms = ms_since(t0)
    choice = route_choose(problem=build.problem, budget_ms=budget_ms)
    if choice.route == OptimizationRun.Route.INLINE:
        return _create_inline(
            cart=cart, user=user, build=build, build_ms=build_ms, choice=choice, t0=t0
        )
    run = _create_queued(cart=cart, user=user, build=build, choice=choice)
    if run.enqueue_failed:
        # The broker went down between the check and the publish: the run is failed with
        # its reason (a record, nothing a retry doubles) and the client is told to retry.
        raise outage_error()
    if tasks_run_in_process() and not transaction.get_connection().in_atomic_block:
        # With no broker the job ran inside on_commit just now; show its outcome.
        run.refresh_from_db()
    return run


def optimization_run_solve_now(
    *,
    cart: Cart,
    budget_ms: int,
    requested_by: User | None = None,
    build: CartProblemBuild | None = None,
    build_ms: float = 0.0,
    source: str = OptimizationRun.Source.IMPROVE,
) -> OptimizationRun:
    """Solves ``cart`` in this process within ``budget_ms`` and returns the finished run
    (``done``, or ``failed`` when the solver broke), appliable like any other run.
    ``source``: who asked (the checkout review's own look is never shown on the cart page).

    No queue and no rate limit: for a caller that must answer inside its own request
    (``smartcart.optimizer.cart_cheaper_assignment``). Raises like ``optimization_run_create``
    for a bad budget, an empty cart or a line out of stock. ``build`` is the cart's problem
    as the caller just built it (``build_ms`` long), so the cart is not read twice.
    """
    checked_budget = check_budget(budget_ms)
    assert checked_budget is not None  # an int was given, and check_budget keeps it
    if build is None:
        t0 = time.perf_counter()
        build = cart_problem_build(cart=cart)
        build_ms = ms_since(t0)
    else:
        if build.cart_id != cart.pk:
            raise ValueError(f"the problem of cart {build.cart_id} given for cart {cart.pk}")
        t0 = time.perf_counter() - build_ms / 1000.0
    choice = route_in_request(problem=build.problem, budget_ms=checked_budget)
    return _create_inline(
        cart=cart,
        user=signed_in(requested_by),
        build=build,
        build_ms=build_ms,
        choice=choice,
        t0=t0,
        source=source,
    )


def _create_queued(
    *, cart: Cart, user: AbstractBaseUser | None, build: CartProblemBuild, choice: RouteChoice
) -> OptimizationRun:
    """The queued run of this cart version: a new one, else the one already in flight.

    The partial unique constraint ``optrun_one_in_flight_per_version`` allows one queued or
    running run per cart version, so the insert itself asks whether one is in flight (no
    read before it). A refused insert means a double click or a concurrent request (its
    run is returned), or a run a lost worker left behind still holding the version: this
    cart's such runs are failed (celery beat's reaper covers the rest) and the insert tried
    once more, so a lost job never blocks the button, with or without beat.
    """
    fields = {
        "cart": cart,
        "cart_version": build.cart_version,
        "requested_by": user,
        "route": choice.route,
        "route_reason": choice.reason[:200],
        "budget_ms": choice.budget_ms,
        "status": Status.QUEUED,
        "problem_size": build.size,
        "plan": {"routing": json_safe(choice.plan)},
    }
    run = _insert_or_in_flight(fields=fields)
    if run is not None and lease_lapsed(run=run):
        # Its worker died: the click recovers it (queued once more, or failed).
        lapsed_runs_recover(runs=OptimizationRun.objects.filter(pk=run.pk))
        run.refresh_from_db()
        run = None if run.is_finished else run
    if run is None:
        with run_write():
            stale_runs_fail(OptimizationRun.objects.filter(cart_id=cart.pk), now=timezone.now())
        run = _insert_or_in_flight(fields=fields)
    if run is None:  # refused again, and the run that held the version finished meanwhile
        raise Conflict(
            "Your cart is being improved already. Try again in a moment.",
            code="optimization_in_flight",
        )
    return run


def _insert_or_in_flight(*, fields: dict) -> OptimizationRun | None:
    """The new queued run, or when the constraint refuses it the run in flight for that cart
    version; ``None`` when only a run a lost worker left behind holds the version."""
    try:
        return _insert_queued(fields=fields)
    except IntegrityError:
        return optimization_run_in_flight(cart=fields["cart"], cart_version=fields["cart_version"])


def _insert_queued(*, fields: dict) -> OptimizationRun:
    with run_write():
        run = OptimizationRun.objects.create(**fields)
        transaction.on_commit(lambda: optimization_run_enqueue(run=run))
    return run


def _create_inline(
    *,
    cart: Cart,
    user: AbstractBaseUser | None,
    build: CartProblemBuild,
    build_ms: float,
    choice: RouteChoice,
    t0: float,
    source: str = OptimizationRun.Source.IMPROVE,
) -> OptimizationRun:
    now = timezone.now()
    common = {
        "cart": cart,
        "source": source,
        "cart_version": build.cart_version,
        "requested_by": user,
        "route": OptimizationRun.Route.INLINE,
        "route_reason": choice.reason[:200],
        "budget_ms": choice.budget_ms,
        "attempts": 1,
        "build_ms": build_ms,
        "queue_wait_ms": 0.0,
        "started_at": now,
        "problem_size": build.size,
    }
    try:
        solution, solve_ms = run_solve(build=build, budget_ms=choice.budget_ms, allow_gpu=False)
        fields = answer_from_solution(
            build=build, solution=solution, plan=solver_plan(solution=solution, routing=choice.plan)
        )
    except Exception as error:  # the shopper gets a failed run to look at, never a 500
        logger.exception("Inline optimization of cart %s failed", cart.pk)
        with run_write():
            return OptimizationRun.objects.create(
                **common,
                status=Status.FAILED,
                error=failure_message(error),
                elapsed_ms=ms_since(t0),
                finished_at=timezone.now(),
            )
    with run_write():
        return OptimizationRun.objects.create(
            **{**common, **fields},
            status=Status.DONE,
            solve_ms=solve_ms,
            elapsed_ms=ms_since(t0),
            finished_at=timezone.now(),
        )
