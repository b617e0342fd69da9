"""A fuzz run: carts in, tasks to the pool, outcomes judged cart by cart, a tally out.

Per cart: the brute force when the cart is small enough, and every route at every budget,
except unbudgeted exhaustive searches on carts past their reach (``skipped``: they would only
time out). Carts are drawn lazily and judged as soon as their last task is back, so a long run
holds a handful of carts in memory, not all of them.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from gpu_engine.fuzz.carts import FuzzCart
from gpu_engine.fuzz.draw import fuzz_cart
from gpu_engine.fuzz.judge import FAILURES, Verdict, judge_cart
from gpu_engine.fuzz.reference import eligible_merchants, is_v2
from gpu_engine.fuzz.report import Tally
from gpu_engine.fuzz.routes import FULL_SEARCH, SUBSET_DP
from gpu_engine.fuzz.supervisor import Outcome, Task, run_tasks

DEFAULT_BUDGETS: tuple[float | None, ...] = (None, 200.0, 10.0)


@dataclass
class FuzzConfig:
    """What to run. ``max_lines``/``max_assignments``: the brute force's reach;
    ``full_max``/``dp_max_free_lines``: the reach of unbudgeted full searches and subset DPs
    (lines with a choice: the DP's tables have ``2^k`` entries);
    ``timeout_s``: a task's limit without a budget (with one: 15 s + 5 budgets, at most this);
    ``shapes``: the cart shapes drawn (None: version 1's)."""

    carts: int = 100
    seed: int = 0
    first: int = 0
    workers: int = 2
    routes: list[str] = field(default_factory=list)
    budgets_ms: list[float | None] = field(default_factory=lambda: list(DEFAULT_BUDGETS))
    max_lines: int = 16
    max_assignments: int = 20_000
    full_max: int = 50_000_000
    full_max_v2: int = 5_000_000  # a version 2 assignment costs a parcel walk, not a sum
    dp_max_free_lines: int = 16
    timeout_s: float = 60.0
    shapes: tuple[str, ...] | None = None
    files: list[Path] = field(default_factory=list)
    save_failures: Path | None = None
    progress_every: int = 0  # carts between progress lines on stderr (0: none)
    time_limit_s: float | None = None  # draw no new cart past this (open ones still finish)


@dataclass
class FuzzResult:
    tally: Tally
    wall_s: float
    restarts: int

    @property
    def failed(self) -> bool:
        return self.tally.failures() > 0


def file_cart(path: Path) -> FuzzCart:
    """A cart from a file, as is: text this process cannot parse still goes to the routes."""
    text = path.read_text(encoding="utf-8")
    try:
        cart = json.loads(text)
    except ValueError:  # not JSON, or integers past Python's digit limit
        cart = None
    return FuzzCart(key=str(path), shape="file", text=text, cart=cart)


def carts_of(config: FuzzConfig) -> Iterator[FuzzCart]:
    for path in config.files:
        yield file_cart(path)
    for index in range(config.first, config.first + config.carts):
        yield fuzz_cart(config.seed, index, config.shapes)


def _timeout(config: FuzzConfig, budget_ms: float | None) -> float:
    if budget_ms is None:
        return config.timeout_s
    return min(config.timeout_s, 15.0 + 5 * budget_ms / 1e3)


@dataclass(frozen=True)
class Reach:
    """A cart's size as the routes feel it: lines, lines with a choice (the subset DP's
    ``2^k``), assignments (the full search's and the brute force's)."""

    lines: int
    free_lines: int
    assignments: int
    v2: bool = False


def reach(cart: FuzzCart) -> Reach | None:
    """The cart's :class:`Reach`, None when this process cannot read the cart."""
    if cart.cart is None:
        return None
    try:
        # One entry per eligible offer: a merchant's nodes count apart, as the engine's do.
        eligible = eligible_merchants(cart.cart)
        v2 = is_v2(cart.cart)
    except (KeyError, TypeError, AttributeError):
        return None
    counts = [len(ms) for ms in eligible.values()]
    return Reach(len(counts), sum(c > 1 for c in counts), math.prod(counts), v2)


def plan_cart(
    config: FuzzConfig, cart: FuzzCart, solver_seed: int
) -> tuple[Task | None, list[Task], list[tuple[str, float | None]]]:
    """(brute-force task or None, route tasks, skipped (route, budget) pairs)."""
    size = reach(cart)
    reference = None
    if (
        size is not None
        and 0 < size.assignments <= config.max_assignments
        and size.lines <= config.max_lines
    ):
        reference = Task(cart.key, "reference", cart.text, timeout_s=config.timeout_s)
    tasks: list[Task] = []
    skipped: list[tuple[str, float | None]] = []
    for budget in config.budgets_ms:
        for route in config.routes:
            if budget is None and size is not None and _out_of_reach(config, route, size):
                skipped.append((route, budget))
                continue
            tasks.append(
                Task(
                    cart.key,
                    "solve",
                    cart.text,
                    route=route,
                    budget_ms=budget,
                    seed=solver_seed,
                    timeout_s=_timeout(config, budget),
                )
            )
    return reference, tasks, skipped


def _out_of_reach(config: FuzzConfig, route: str, size: Reach) -> bool:
    if route in FULL_SEARCH:
        return size.assignments > (config.full_max_v2 if size.v2 else config.full_max)
    if route in SUBSET_DP:
        return size.free_lines > config.dp_max_free_lines
    return False


@dataclass
class _Open:
    cart: FuzzCart
    waiting: int
    skipped: list[tuple[str, float | None]]
    reference: Outcome | None = None
    runs: list[Outcome] = field(default_factory=list)


def run_fuzz(config: FuzzConfig) -> FuzzResult:
    """Run ``config`` to the end and return its tally."""
    tally = Tally()
    open_carts: dict[str, _Open] = {}
    started = time.perf_counter()

    def close(state: _Open) -> None:
        oracle, verdicts, findings = judge_cart(state.cart, state.reference, state.runs)
        verdicts += [Verdict(route, budget, "skipped") for route, budget in state.skipped]
        tally.add_cart(state.cart.key, state.cart.shape, oracle, verdicts, findings)
        if config.save_failures is not None and any(f.kind in FAILURES for f in findings):
            config.save_failures.mkdir(parents=True, exist_ok=True)
            name = state.cart.key.replace("/", "_").replace(":", "-")
            (config.save_failures / f"{name}.json").write_text(state.cart.text)
        del open_carts[state.cart.key]
        if config.progress_every and tally.carts % config.progress_every == 0:
            elapsed = time.perf_counter() - started
            print(
                f"fuzz: {tally.carts} carts, {tally.failures()} defects, {elapsed:.0f} s",
                file=sys.stderr,
                flush=True,
            )

    def tasks() -> Iterator[Task]:
        for n, cart in enumerate(carts_of(config)):
            if (
                config.time_limit_s is not None
                and time.perf_counter() - started > config.time_limit_s
            ):
                return
            reference, runs, skipped = plan_cart(config, cart, (config.seed + n) % 2**31)
            todo = ([reference] if reference else []) + runs
            state = open_carts[cart.key] = _Open(cart, len(todo), skipped)
            if not todo:
                close(state)
            yield from todo

    def on_outcome(outcome: Outcome) -> None:
        state = open_carts[outcome.task.cart_key]
        if outcome.task.kind == "reference":
            state.reference = outcome
        else:
            state.runs.append(outcome)
        state.waiting -= 1
        if state.waiting == 0:
            close(state)

    restarts = run_tasks(tasks(), workers=config.workers, on_outcome=on_outcome)
    return FuzzResult(tally=tally, wall_s=time.perf_counter() - started, restarts=restarts)
