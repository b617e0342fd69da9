"""Writes for improve-cart: create a run, execute it (in the request or on a worker), apply
or dismiss its suggestion, and fail runs that a lost worker left behind.

Errors are ``storefront.errors`` domain errors, mapped to HTTP by the API's one handler:
``ValidationFailed`` (400), ``NotFound`` (404), ``Conflict`` (409, with a stable ``code``),
``Throttled`` (429, with ``retry_after``), and smartcart's ``ServiceUnavailable`` (503, with
``retry_after``: the broker is down and the cart too large to solve in the request, decided by
``routing.route_choose`` before anything is written).
"""

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db import IntegrityError, InterfaceError, OperationalError, connection, transaction
from django.db.models import Case, F, QuerySet, Value, When
from django.utils import timezone

from gpu_engine import ProblemError, Solution, solve
from gpu_engine.solution import json_safe
from smartcart.answers import answer_from_solution, solver_plan
from smartcart.lease import lapsed_runs_recover, lease_heartbeat, lease_lapsed, lease_renew
from smartcart.models import OptimizationRun
from smartcart.ratelimit import improve_rate_check
from smartcart.routing import (
    RouteChoice,
    outage_error,
    rate_profile,
    route_choose,
    route_in_request,
)
from smartcart.selectors import (
    CartLines,
    CartProblemBuild,
    cart_current_breakdown,
    cart_problem_build,
    optimization_run_in_flight,
    optimization_run_stale_q,
)
from storefront.errors import Conflict, NotFound, ValidationFailed
from storefront.models import Cart, CartLine, Offer

logger = logging.getLogger(__name__)

Status = OptimizationRun.Status
MAX_BUDGET_MS = 60_000

User = AbstractBaseUser | AnonymousUser


def _ms_since(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


@contextmanager
def _run_write() -> Iterator[None]:
    """A transaction for writing a run row without waiting for the WAL flush (PostgreSQL's
    ``synchronous_commit = off``, for this transaction only).

    Runs are derived data that can be computed again: a database crash can lose at most the
    last fraction of a second of run writes (a run then looks queued, the reaper fails it,
    the shopper presses the button again), and never corrupts anything. Cart changes
    (``optimization_run_apply``) keep full durability. Saves an fsync per write: several
    milliseconds on a busy disk, on every improve-cart request.
    """
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL synchronous_commit TO OFF")
        yield


def _solve(
    *, build: CartProblemBuild, budget_ms: int | None, allow_gpu: bool
) -> tuple[Solution, float]:
    """The planner picks the solver; ``allow_gpu`` only on the ``gpu`` queue's workers (a
    forked CPU worker or the web process must never open a CUDA context)."""
    start = time.perf_counter()
    solution = solve(
        build.problem, budget_ms=budget_ms, allow_gpu=allow_gpu, profile=rate_profile()
    )
    return solution, _ms_since(start)


# --- create -----------------------------------------------------------------------------


def _check_budget(budget_ms: object) -> int | None:
    if budget_ms is None:
        return None
    if isinstance(budget_ms, bool) or not isinstance(budget_ms, int) or budget_ms < 1:
        raise ValidationFailed(
            f"The budget must be a whole number of milliseconds >= 1, got {budget_ms!r}.",
            code="budget_invalid",
            field="budget_ms",
        )
    if budget_ms > MAX_BUDGET_MS:
        raise ValidationFailed(
            f"The budget must be at most {MAX_BUDGET_MS} ms, got {budget_ms}.",
            code="budget_too_large",
            field="budget_ms",
        )
    return budget_ms


def _signed_in(user: User | None) -> AbstractBaseUser | None:
    return user if user is not None and user.is_authenticated else None


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
    budget). A cart predicted to solve in a few milliseconds is solved here and the run comes
    back ``done``; otherwise the run is ``queued`` and its job is sent to the ``cpu`` or
    ``gpu`` queue once the surrounding transaction commits. A run already queued or running
    for the same cart version is returned instead of a second one (a double click starts one
    job), unless a lost worker left it behind: that one is failed and a fresh run starts.
    """
    budget_ms = _check_budget(budget_ms)
    user = _signed_in(requested_by)
    improve_rate_check(ident=f"user:{user.pk}" if user is not None else f"cart:{cart.pk}")
    t0 = time.perf_counter()
    if lines is not None:  # the caller read the cart: building it started then
        t0 -= lines.read_ms / 1000.0
    build = cart_problem_build(cart=cart, lines=lines)
    build_ms = _ms_since(t0)
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
    if _tasks_run_in_process() and not transaction.get_connection().in_atomic_block:
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
) -> OptimizationRun:
    """Solves ``cart`` in this process within ``budget_ms`` and returns the finished run
    (``done``, or ``failed`` when the solver broke), appliable like any other run.

    No queue and no rate limit: for a caller that must answer inside its own request
    (``smartcart.optimizer.cart_cheaper_assignment``). Raises like ``optimization_run_create``
    for a bad budget, an empty cart or a line out of stock. ``build`` is the cart's problem
    as the caller just built it (``build_ms`` long), so the cart is not read twice.
    """
    checked_budget = _check_budget(budget_ms)
    assert checked_budget is not None  # an int was given, and _check_budget keeps it
    if build is None:
        t0 = time.perf_counter()
        build = cart_problem_build(cart=cart)
        build_ms = _ms_since(t0)
    else:
        if build.cart_id != cart.pk:
            raise ValueError(f"the problem of cart {build.cart_id} given for cart {cart.pk}")
        t0 = time.perf_counter() - build_ms / 1000.0
    choice = route_in_request(problem=build.problem, budget_ms=checked_budget)
    return _create_inline(
        cart=cart,
        user=_signed_in(requested_by),
        build=build,
        build_ms=build_ms,
        choice=choice,
        t0=t0,
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
        with _run_write():
            _reap(OptimizationRun.objects.filter(cart_id=cart.pk), now=timezone.now())
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
    with _run_write():
        run = OptimizationRun.objects.create(**fields)
        transaction.on_commit(lambda: optimization_run_enqueue(run=run))
    return run


def _tasks_run_in_process() -> bool:
    from storefront.celery import app

    return bool(app.conf.task_always_eager)


def _create_inline(
    *,
    cart: Cart,
    user: AbstractBaseUser | None,
    build: CartProblemBuild,
    build_ms: float,
    choice: RouteChoice,
    t0: float,
) -> OptimizationRun:
    now = timezone.now()
    common = {
        "cart": cart,
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
        solution, solve_ms = _solve(build=build, budget_ms=choice.budget_ms, allow_gpu=False)
        fields = answer_from_solution(
            build=build, solution=solution, plan=solver_plan(solution=solution, routing=choice.plan)
        )
    except Exception as error:  # the shopper gets a failed run to look at, never a 500
        logger.exception("Inline optimization of cart %s failed", cart.pk)
        with _run_write():
            return OptimizationRun.objects.create(
                **common,
                status=Status.FAILED,
                error=_failure_message(error),
                elapsed_ms=_ms_since(t0),
                finished_at=timezone.now(),
            )
    with _run_write():
        return OptimizationRun.objects.create(
            **{**common, **fields},
            status=Status.DONE,
            solve_ms=solve_ms,
            elapsed_ms=_ms_since(t0),
            finished_at=timezone.now(),
        )


def optimization_run_enqueue(*, run: OptimizationRun) -> None:
    """Sends the run's job to its queue (``run.route``). Called on commit, never before, so
    the worker always finds the row."""
    from smartcart.tasks import optimization_run_execute_task

    try:
        # Celery takes any sequence of args (its stubs say tuple); a list is what the tests pin.
        optimization_run_execute_task.apply_async(args=[run.pk], queue=str(run.route))  # type: ignore[arg-type]
    except Exception:
        # The broker is down (or, in-process, the job itself raised a database error after
        # its retries): fail the run now rather than leave it queued with no message, which
        # would block the button until the reaper came by.
        logger.exception("Could not start optimization run %s", run.pk)
        run.enqueue_failed = True
        optimization_run_fail(
            run_id=run.pk, reason="The optimizer could not be started. Please try again."
        )


# --- execute ----------------------------------------------------------------------------


EXPECTED_FAILURES = (ValidationFailed, Conflict, NotFound, ProblemError, SoftTimeLimitExceeded)


def _failure_message(error: BaseException) -> str:
    if isinstance(error, SoftTimeLimitExceeded):
        return "Stopped: the optimizer ran out of time. Please try again."
    if isinstance(error, ValidationFailed | Conflict | NotFound):
        return error.message
    if isinstance(error, ProblemError):
        return f"The cart could not be optimised: {error}"
    return f"The optimiser failed ({type(error).__name__}). Please try again."


def _run_start(*, run_id: int) -> tuple[OptimizationRun, bool]:
    """Marks the run running and counts the attempt; ``(run, False)`` when it is finished
    already (a duplicate or redelivered message) or has used up its attempts.

    One conditional UPDATE claims the run (no lock held while solving); a redelivered
    message finds it ``running`` and runs it again, since its first worker died.
    """
    max_attempts = settings.SMARTCART_MAX_ATTEMPTS
    with _run_write():
        claimed = OptimizationRun.objects.filter(
            pk=run_id, status__in=[Status.QUEUED, Status.RUNNING], attempts__lt=max_attempts
        ).update(status=Status.RUNNING, attempts=F("attempts") + 1, started_at=timezone.now())
    try:
        run = OptimizationRun.objects.get(pk=run_id)
    except OptimizationRun.DoesNotExist:
        raise NotFound(
            "No such optimization.", code="optimization_not_found", field="run_id"
        ) from None
    if claimed:
        assert run.started_at is not None  # the claiming UPDATE set it
        lease_renew(run=run)
        if run.attempts == 1:
            run.queue_wait_ms = (run.started_at - run.created_at).total_seconds() * 1000.0
        return run, True
    if not run.is_finished:
        _finish_failed(
            run=run,
            message=f"Stopped after {run.attempts} attempts: each was interrupted (a lost "
            "worker or a database error). Please try again.",
        )
    return run, False


def _finish(*, run: OptimizationRun, fields: dict) -> OptimizationRun:
    """Writes the outcome only while the run is still running: a late duplicate, or a worker
    the reaper gave up on, cannot overwrite an outcome already recorded."""
    now = timezone.now()
    fields = {
        **fields,
        "finished_at": now,
        "elapsed_ms": (now - run.created_at).total_seconds() * 1000.0,
        "queue_wait_ms": run.queue_wait_ms,
    }
    with _run_write():
        updated = OptimizationRun.objects.filter(pk=run.pk, status=Status.RUNNING).update(**fields)
    if not updated:
        logger.info("Run %s was finished elsewhere; this outcome is dropped", run.pk)
        run.refresh_from_db()
        return run
    for name, value in fields.items():
        setattr(run, name, value)
    return run


def _finish_failed(*, run: OptimizationRun, message: str) -> OptimizationRun:
    now = timezone.now()
    with _run_write():
        OptimizationRun.objects.filter(
            pk=run.pk, status__in=[Status.QUEUED, Status.RUNNING]
        ).update(
            status=Status.FAILED,
            error=message,
            finished_at=now,
            elapsed_ms=(now - run.created_at).total_seconds() * 1000.0,
            queue_wait_ms=run.queue_wait_ms,
        )
    run.refresh_from_db()
    return run


def optimization_run_execute(*, run_id: int, heartbeat: bool = False) -> OptimizationRun:
    """Solves a queued run and stores the answer; safe to call any number of times.

    The cart is read again here, so the answer is for the cart as it is when the job runs
    (``cart_version`` and ``current_total`` are updated to it). A cart that became empty or
    unbuyable meanwhile fails the run with the reason; so does a solver error. A database
    error (``OperationalError``, ``InterfaceError``) is raised instead: the run stays
    ``running`` and the task's autoretry runs it again (``SMARTCART_MAX_ATTEMPTS`` caps it).
    ``heartbeat``: renew the run's lease from a thread while solving (on a worker,
    ``smartcart.lease``).
    """
    run, started = _run_start(run_id=run_id)
    if not started:
        return run
    t0 = time.perf_counter()
    try:
        # Only the id is needed: no query for the cart row itself.
        build = cart_problem_build(cart=Cart(pk=run.cart_id))
        build_ms = _ms_since(t0)
        with lease_heartbeat(run=run, enabled=heartbeat):
            solution, solve_ms = _solve(
                build=build,
                budget_ms=run.budget_ms,
                allow_gpu=run.route == OptimizationRun.Route.GPU,
            )
        routing = (run.plan or {}).get("routing")
        fields = answer_from_solution(
            build=build, solution=solution, plan=solver_plan(solution=solution, routing=routing)
        )
    except (OperationalError, InterfaceError):
        raise
    except Exception as error:
        if not isinstance(error, EXPECTED_FAILURES):
            logger.exception("Optimization run %s failed", run.pk)
        return _finish_failed(run=run, message=_failure_message(error))
    return _finish(
        run=run,
        fields={**fields, "status": Status.DONE, "build_ms": build_ms, "solve_ms": solve_ms},
    )


def optimization_run_fail(*, run_id: int, reason: str) -> OptimizationRun | None:
    """Marks an unfinished run failed (a task out of time or out of retries)."""
    run = OptimizationRun.objects.filter(pk=run_id).first()
    return None if run is None else _finish_failed(run=run, message=reason)


# --- apply and dismiss ------------------------------------------------------------------


def _check_appliable(*, run: OptimizationRun, cart: Cart) -> None:
    if run.status != Status.DONE:
        what = "failed" if run.status == Status.FAILED else "not finished yet"
        raise Conflict(f"This optimization is {what}; there is nothing to apply.", code="not_done")
    if run.applied_at is not None:
        raise Conflict("This suggestion was applied already.", code="already_applied")
    if run.dismissed_at is not None:
        raise Conflict("This suggestion was dismissed.", code="dismissed")
    if cart.version != run.cart_version:
        raise Conflict(
            "Your cart changed after this suggestion was computed. Improve it again.",
            code="cart_changed",
            field="cart",
        )


def _check_offers(*, lines: list[dict]) -> None:
    """Every suggested offer must still sell at the suggested price with enough stock; the
    rows are locked so nothing changes them before the cart is rewritten."""
    offer_ids = [line["new_offer_id"] for line in lines]
    offers = {
        offer.pk: offer
        for offer in Offer.objects.select_for_update(of=("self",))
        .select_related("merchant")
        .filter(pk__in=offer_ids)
        .order_by("pk")  # the order checkout locks offers in: no deadlock between them
    }
    for line in lines:
        offer = offers.get(line["new_offer_id"])
        name = line["product_name"]
        if offer is None or not offer.active or not offer.merchant.active:
            raise Conflict(
                f"{name} is no longer sold by {line['new_merchant_name']}. "
                "Improve your cart again.",
                code="offer_unavailable",
                field="lines",
            )
        if offer.unit_price != line["new_unit_price"]:
            raise Conflict(
                f"The price of {name} at {line['new_merchant_name']} changed. "
                "Improve your cart again.",
                code="price_changed",
                field="lines",
            )
        if not offer.can_supply(line["quantity"]):
            raise Conflict(
                f"{line['new_merchant_name']} no longer has {line['quantity']} of {name} in "
                "stock. Improve your cart again.",
                code="stock_changed",
                field="lines",
            )


@transaction.atomic
def optimization_run_apply(*, run: OptimizationRun, user: User | None = None) -> Cart:
    """Rewrites the cart's lines to the suggested offers and bumps the cart version.

    All or nothing, under locks on the cart, the run and the offers. Refused with a
    ``Conflict`` when the run is not done (``not_done``), was applied or dismissed, the cart
    changed since (``cart_changed``), a suggested offer's price or stock changed
    (``price_changed``, ``stock_changed``, ``offer_unavailable``), or shipping terms changed so
    the cart would not cost the suggested total (``terms_changed``).
    """
    try:
        cart = Cart.objects.select_for_update().get(pk=run.cart_id)
        run = OptimizationRun.objects.select_for_update().get(pk=run.pk)
    except (Cart.DoesNotExist, OptimizationRun.DoesNotExist):
        raise NotFound(
            "No such optimization for your cart.", code="optimization_not_found", field="run_id"
        ) from None
    _check_appliable(run=run, cart=cart)
    lines = run.suggestion.get("lines", [])
    _check_offers(lines=lines)
    now = timezone.now()
    for line in lines:
        if line["changed"]:
            CartLine.objects.filter(pk=line["line_id"], cart_id=cart.pk).update(
                offer_id=line["new_offer_id"],
                unit_price_snapshot=line["new_unit_price"],
                updated_at=now,
            )
    Cart.objects.filter(pk=cart.pk).update(version=F("version") + 1, updated_at=now)
    total = sum(cost.cost for cost in cart_current_breakdown(build=cart_problem_build(cart=cart)))
    if total != run.suggested_total:
        raise Conflict(
            "Shipping or discounts changed since this suggestion was computed. "
            "Improve your cart again.",
            code="terms_changed",
        )
    OptimizationRun.objects.filter(pk=run.pk).update(applied_at=now, applied_by=_signed_in(user))
    cart.refresh_from_db()
    return cart


def optimization_run_dismiss(*, run: OptimizationRun) -> OptimizationRun:
    """Hides the run's suggestion (the shopper said no). Idempotent; an applied run stays
    applied."""
    if run.dismissed_at is None and run.applied_at is None:
        now = timezone.now()
        OptimizationRun.objects.filter(pk=run.pk, dismissed_at__isnull=True).update(
            dismissed_at=now
        )
        run.refresh_from_db()
    return run


# --- the reaper -------------------------------------------------------------------------


def _reap(runs: QuerySet[OptimizationRun], *, now: datetime) -> int:
    limit_s = settings.CELERY_TASK_TIME_LIMIT
    queued_max_s = settings.SMARTCART_QUEUED_MAX_S
    return runs.filter(optimization_run_stale_q(now=now)).update(
        status=Status.FAILED,
        finished_at=now,
        error=Case(
            When(
                status=Status.RUNNING,
                then=Value(
                    f"Stopped: still running after the {limit_s} s time limit "
                    "(the worker was lost or killed). Please try again."
                ),
            ),
            default=Value(
                f"Stopped: no worker picked this job up within {queued_max_s} s. Please try again."
            ),
        ),
    )


def optimization_runs_reap(*, now: datetime | None = None) -> int:
    """Fails runs a lost worker left behind; returns how many.

    A run ``running`` for longer than the task's hard time limit (plus
    ``SMARTCART_REAPER_GRACE_S``) cannot still be alive: Celery killed it or its worker died
    without redelivery. A run ``queued`` past ``SMARTCART_QUEUED_MAX_S`` lost its message.
    Celery beat runs this every minute; ``optimization_run_create`` also reaps the cart it
    is asked about, so Improve cart never depends on beat running.
    """
    now = now or timezone.now()
    lapsed_runs_recover(runs=OptimizationRun.objects.all(), now=now)
    reaped = _reap(OptimizationRun.objects.all(), now=now)
    if reaped:
        logger.warning("Reaped %s stuck optimization runs", reaped)
    return reaped
