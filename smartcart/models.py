"""Improve-cart runs: one request to find the cheapest way to buy a cart, and its answer.

A run is computed for one version of its cart. The cart moving on (a line added, a quantity
changed, a new destination) makes the run stale: it can still be shown, never applied.

Life cycle: ``queued`` -> ``running`` -> ``done`` or ``failed``. Runs solved inline in the
request are created ``done``. Applying or dismissing a done run does not change its status;
``applied_at`` / ``dismissed_at`` record it, so the answer the shopper saw stays intact.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q

from storefront.models import Cart
from storefront.models.fields import MoneyField


class OptimizationRun(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    class Route(models.TextChoices):
        INLINE = "inline", "Inline (in the request)"
        CPU = "cpu", "CPU queue"
        GPU = "gpu", "GPU queue"

    class Source(models.TextChoices):
        IMPROVE = "improve", "Improve cart (the shopper asked)"
        PRICE_WATCH = "price_watch", "Price watch (prices moved)"
        CHECKOUT = "checkout", "Checkout review (its last look for a cheaper cart)"

    cart = models.ForeignKey(Cart, on_delete=models.CASCADE, related_name="optimization_runs")
    cart_version = models.PositiveBigIntegerField(
        help_text="The cart version the answer was computed for."
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="optimization_runs",
    )
    route = models.CharField(
        max_length=10,
        choices=Route.choices,
        default=Route.CPU,
        help_text="Where the job ran: in the request, or on the cpu or gpu Celery queue.",
    )
    route_reason = models.CharField(max_length=200, blank=True)
    source = models.CharField(
        max_length=12,
        choices=Source.choices,
        default=Source.IMPROVE,
        help_text="Who asked: the shopper, the price watch after offers changed, or the "
        "checkout review.",
    )
    price_increase = models.BigIntegerField(
        null=True,
        blank=True,
        help_text="Price watch: what the cart's lines cost more now than when added, in cents "
        "(today's total minus the total at the added prices; only a rise is recorded).",
    )
    price_watch_run = models.ForeignKey(
        "smartcart.PriceWatchRun",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="suggestions",
    )
    superseded_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Price watch: a later check of the same cart replaced or withdrew this notice.",
    )
    budget_ms = models.PositiveIntegerField(
        null=True, blank=True, help_text="Time budget handed to the solver, in milliseconds."
    )
    attempts = models.PositiveSmallIntegerField(
        default=0, help_text="Times a worker started this run (more than 1: a worker was lost)."
    )

    # The answer.
    algorithm = models.CharField(max_length=40, blank=True)
    optimal = models.BooleanField(default=False, help_text="The total is proven minimal.")
    device = models.CharField(max_length=80, blank=True)
    current_total = MoneyField(null=True, blank=True, help_text="The cart as it stands, in cents.")
    suggested_total = MoneyField(null=True, blank=True, help_text="With the suggestion, in cents.")
    savings = models.BigIntegerField(null=True, blank=True, help_text="In cents; 0: no better.")
    suggestion = models.JSONField(
        default=dict,
        blank=True,
        help_text="Per line the current and the suggested offer; per merchant the breakdown.",
    )
    plan = models.JSONField(
        null=True, blank=True, help_text="Why the solver was chosen: features, predictions."
    )
    problem_size = models.JSONField(
        default=dict, blank=True, help_text="Lines, merchants, offers and complexity."
    )
    error = models.TextField(blank=True)

    # Timings in milliseconds: reading the cart from the database, waiting in the queue,
    # the solver itself, and request-to-answer in all.
    build_ms = models.FloatField(null=True, blank=True)
    queue_wait_ms = models.FloatField(null=True, blank=True)
    solve_ms = models.FloatField(null=True, blank=True)
    elapsed_ms = models.FloatField(null=True, blank=True)

    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    lease_expires_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="While running: its worker renews this from a heartbeat; once it lapses the "
        "worker is taken for dead (smartcart.lease).",
    )
    finished_at = models.DateTimeField(null=True, blank=True)
    applied_at = models.DateTimeField(null=True, blank=True)
    applied_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    dismissed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["cart", "-created_at"], name="optrun_cart_created_idx"),
            # The price watch reads each checked cart's current notices.
            models.Index(
                fields=["cart", "cart_version"],
                name="optrun_price_watch_idx",
                condition=Q(source="price_watch", superseded_at__isnull=True),
            ),
            # The reaper looks for runs stuck in running or queued.
            models.Index(
                fields=["status", "started_at"],
                name="optrun_unfinished_idx",
                condition=Q(status__in=["queued", "running"]),
            ),
            # The lease check (reaper, polls, clicks) reads only running runs' leases.
            models.Index(
                fields=["lease_expires_at"],
                name="optrun_lease_idx",
                condition=Q(status="running"),
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(savings__isnull=True) | Q(savings__gte=0),
                name="optrun_savings_non_negative",
                violation_error_message="A suggestion never costs more than the cart.",
            ),
            models.CheckConstraint(
                condition=~Q(status="done")
                | Q(suggested_total__isnull=False, current_total__isnull=False),
                name="optrun_done_has_totals",
                violation_error_message="A finished run has both totals.",
            ),
            # Two concurrent clicks must start one job: the second insert fails and
            # optimization_run_create returns the first run.
            models.UniqueConstraint(
                fields=["cart", "cart_version"],
                condition=Q(status__in=["queued", "running"], dismissed_at__isnull=True),
                name="optrun_one_in_flight_per_version",
                violation_error_message="This cart version is being improved already.",
            ),
        ]

    # Not a column: set in the creating process when the broker refused the run's job.
    enqueue_failed: bool = False

    def __str__(self) -> str:
        return f"Optimization {self.pk} of cart {self.cart_id} v{self.cart_version} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED)

    @property
    def is_improvement(self) -> bool:
        return self.status == self.Status.DONE and (self.savings or 0) > 0

    @property
    def savings_percent(self) -> float | None:
        """Savings as a percentage of the current total, one decimal (for display only)."""
        if self.savings is None or not self.current_total:
            return None
        return round(100 * self.savings / self.current_total, 1)

    @property
    def is_stale(self) -> bool:
        """The cart changed since this run's version (reads ``cart``; select it along)."""
        return self.cart.version != self.cart_version

    @property
    def is_applied(self) -> bool:
        return self.applied_at is not None

    @property
    def is_dismissed(self) -> bool:
        return self.dismissed_at is not None

    @property
    def changed_lines(self) -> list[dict]:
        return [line for line in self.suggestion.get("lines", []) if line.get("changed")]


class PriceWatchChange(models.Model):
    """A product or merchant whose offers changed and whose open carts the price watch has
    not checked since (the dirty set). Plain ids, no foreign keys: a row must never block
    deleting a product or merchant, and it is deleted once a run handled it."""

    product_id = models.BigIntegerField(null=True, blank=True)
    merchant_id = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(product_id__isnull=False) | Q(merchant_id__isnull=False),
                name="pricewatch_change_names_something",
            )
        ]

    def __str__(self) -> str:
        if self.product_id is not None:
            return f"Product {self.product_id} changed"
        return f"Merchant {self.merchant_id} changed"


class PriceWatchRun(models.Model):
    """One price-watch job: the open carts affected by a burst of offer changes, re-optimised
    in one batch. At most one runs at a time (the partial unique constraint)."""

    class Status(models.TextChoices):
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING)
    route = models.CharField(
        max_length=10, choices=OptimizationRun.Route.choices, default=OptimizationRun.Route.CPU
    )
    device = models.CharField(max_length=80, blank=True, help_text="Where the batch was solved.")
    changes_upto = models.BigIntegerField(
        default=0, help_text="The last PriceWatchChange id this run covers."
    )
    products_changed = models.PositiveIntegerField(default=0)
    merchants_changed = models.PositiveIntegerField(default=0)
    carts_checked = models.PositiveIntegerField(default=0)
    carts_skipped = models.PositiveIntegerField(
        default=0, help_text="Empty carts, or carts with a line that cannot be bought as it is."
    )
    carts_improvable = models.PositiveIntegerField(default=0)
    carts_price_up = models.PositiveIntegerField(default=0)
    carts_notified = models.PositiveIntegerField(
        default=0, help_text="Carts given a new notice by this run."
    )
    emails_queued = models.PositiveIntegerField(default=0)
    queries = models.PositiveIntegerField(default=0, help_text="Database statements in all.")
    db_ms = models.FloatField(null=True, blank=True, help_text="Reading and writing, in ms.")
    solve_ms = models.FloatField(null=True, blank=True, help_text="The batch solver, in ms.")
    duration_ms = models.FloatField(null=True, blank=True, help_text="The whole job, in ms.")
    error = models.TextField(blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-started_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["status"],
                condition=Q(status="running"),
                name="pricewatch_one_running",
                violation_error_message="A price-watch run is running already.",
            )
        ]

    def __str__(self) -> str:
        return f"Price watch {self.pk} ({self.status}, {self.carts_checked} carts)"


class PriceWatchEmailOptIn(models.Model):
    """A signed-in shopper who wants an e-mail when the price watch finds a saving."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="price_watch_email"
    )
    enabled = models.BooleanField(default=True)
    site_url = models.URLField(
        max_length=200,
        blank=True,
        help_text="Where the shopper opted in (scheme and host): the e-mail's links point there.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"Price-watch e-mail for user {self.user_id}: {'on' if self.enabled else 'off'}"


class PriceWatchEmail(models.Model):
    """One price-watch e-mail sent about a cart. The unique day makes "at most one a day per
    cart" the database's rule, whatever the number of workers."""

    cart = models.ForeignKey(Cart, on_delete=models.CASCADE, related_name="+")
    run = models.ForeignKey(OptimizationRun, on_delete=models.CASCADE, related_name="+")
    sent_on = models.DateField()
    sent_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["cart", "sent_on"], name="pricewatch_email_daily")
        ]

    def __str__(self) -> str:
        return f"Price-watch e-mail about cart {self.cart_id} on {self.sent_on}"
