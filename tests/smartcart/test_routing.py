import dataclasses
import os
import time
import uuid

import pytest
import redis
from django.test import override_settings

from gpu_engine import CartProblem
from smartcart import routing
from storefront.celery import app


def problem(lines: int, offers: int = 3) -> CartProblem:
    merchants = [f"m{j}" for j in range(offers)]
    return CartProblem.from_dict(
        {
            "items": [{"id": f"l{i}", "quantity": 1} for i in range(lines)],
            "merchants": [
                {"id": m, "shipping": {"base_fee": 499, "per_extra_unit": 0, "free_over": None}}
                for m in merchants
            ],
            "offers": [
                {"item": f"l{i}", "merchant": m, "price": 1000 + j, "stock": None}
                for i in range(lines)
                for j, m in enumerate(merchants)
            ],
        }
    )


def test_tiny_carts_are_solved_inline():
    choice = routing.route_choose(problem=problem(3))
    assert choice.route == "inline"
    assert choice.predicted_ms < 5
    assert choice.method in {"cpu-full", "cpu-dp"}
    assert choice.plan["method"] == choice.method


@override_settings(SMARTCART_INLINE_MAX_MS=0, SMARTCART_GPU_QUEUE=False)
def test_without_gpu_workers_queued_carts_go_to_cpu():
    choice = routing.route_choose(problem=problem(8, offers=5), budget_ms=700)
    assert (choice.route, choice.budget_ms) == ("cpu", 700)
    assert "no GPU workers" in choice.reason


def _planner_prefers(monkeypatch, method_with_gpu: str) -> None:
    """The planner picks ``method_with_gpu`` when told a GPU is present (and the CPU DP
    otherwise), whatever the rates of this machine."""
    real = routing.make_plan

    def make_plan(problem, *, budget_ms, profile, gpu):
        plan = real(problem, budget_ms=budget_ms, profile=profile, gpu=gpu)
        if gpu.present:
            return dataclasses.replace(plan, method=method_with_gpu)
        return plan

    monkeypatch.setattr(routing, "make_plan", make_plan)


@override_settings(SMARTCART_INLINE_MAX_MS=0, SMARTCART_GPU_QUEUE=True, SMARTCART_GPU_QUEUE_MAX=8)
def test_the_planners_gpu_choice_goes_to_the_gpu_queue(monkeypatch):
    _planner_prefers(monkeypatch, "gpu-ga")
    monkeypatch.setattr(routing, "gpu_queue_backlog", lambda: 2)
    choice = routing.route_choose(problem=problem(8, offers=5), budget_ms=800)
    assert (choice.route, choice.budget_ms, choice.method) == ("gpu", 800, "gpu-ga")


@override_settings(SMARTCART_INLINE_MAX_MS=0, SMARTCART_GPU_QUEUE=True)
def test_a_cpu_choice_stays_on_the_cpu_queue_even_with_gpus(monkeypatch):
    _planner_prefers(monkeypatch, "cpu-dp")
    monkeypatch.setattr(routing, "gpu_queue_backlog", lambda: 0)
    assert routing.route_choose(problem=problem(8, offers=5)).route == "cpu"


@override_settings(
    SMARTCART_INLINE_MAX_MS=0,
    SMARTCART_GPU_QUEUE=True,
    SMARTCART_GPU_QUEUE_MAX=8,
    SMARTCART_CPU_FALLBACK_BUDGET_MS=400,
)
def test_a_busy_gpu_queue_degrades_to_cpu_with_a_budget(monkeypatch):
    _planner_prefers(monkeypatch, "gpu-dp")
    monkeypatch.setattr(routing, "gpu_queue_backlog", lambda: 9)
    choice = routing.route_choose(problem=problem(8, offers=5), budget_ms=3000)
    assert (choice.route, choice.budget_ms) == ("cpu", 400)
    assert "busy" in choice.reason and "gpu-dp" in choice.reason


def test_the_gpu_queue_depth_reaches_the_planner(monkeypatch, settings):
    settings.SMARTCART_INLINE_MAX_MS = 0
    settings.SMARTCART_GPU_QUEUE = True
    seen = []
    real = routing.make_plan

    def make_plan(problem, *, budget_ms, profile, gpu):
        seen.append(gpu)
        return real(problem, budget_ms=budget_ms, profile=profile, gpu=gpu)

    monkeypatch.setattr(routing, "make_plan", make_plan)
    monkeypatch.setattr(routing, "gpu_queue_backlog", lambda: 5)
    routing.route_choose(problem=problem(8, offers=5))
    assert [(g.present, g.queue_depth) for g in seen] == [(False, 0), (True, 5)]


@override_settings(SMARTCART_INLINE_MAX_MS=0)
def test_inline_threshold_is_a_setting():
    assert routing.route_choose(problem=problem(1)).route == "cpu"


def test_backlog_is_zero_with_in_process_tasks():
    assert routing.gpu_queue_backlog() == 0


@pytest.fixture
def publishing():
    """Routing as in a deployment with a broker (tests run tasks in-process), with no depth
    remembered from an earlier test."""
    eager, app.conf.task_always_eager = app.conf.task_always_eager, False
    routing.gpu_queue_backlog_forget()
    yield
    routing.gpu_queue_backlog_forget()
    app.conf.task_always_eager = eager


@pytest.mark.integration
def test_backlog_counts_the_redis_gpu_list(publishing):
    if not os.environ.get("REDIS_URL", "").startswith("redis"):
        pytest.skip("needs REDIS_URL (a real Redis broker)")
    # Keys of this test run only (kombu's global_keyprefix): the shared broker's queues, and
    # concurrent test runs on the same Redis, are never touched.
    prefix = f"test-routing-{uuid.uuid4().hex}:"
    url = os.environ["REDIS_URL"]
    client = redis.Redis.from_url(url)
    saved = app.conf.broker_transport_options
    app.conf.broker_transport_options = {**saved, "global_keyprefix": prefix}
    try:
        client.rpush(f"{prefix}gpu", b"{}", b"{}", b"{}")
        assert routing.gpu_queue_backlog(broker_url=url) == 3
    finally:
        app.conf.broker_transport_options = saved
        client.delete(f"{prefix}gpu")


def test_backlog_is_read_at_most_once_a_second(publishing, monkeypatch):
    reads = []
    monkeypatch.setattr(routing, "_broker_gpu_depth", lambda app, url: reads.append(url) or 4)
    clock = [1000.0]
    monkeypatch.setattr(routing.time, "monotonic", lambda: clock[0])
    assert [routing.gpu_queue_backlog() for _ in range(3)] == [4, 4, 4]
    clock[0] += routing.BACKLOG_TTL_S + 0.01
    assert routing.gpu_queue_backlog() == 4
    assert len(reads) == 2


def test_an_unreachable_broker_costs_one_short_try(publishing):
    # Nothing listens on port 9 (discard): Redis down. kombu would retry for ever by default.
    url = "redis://127.0.0.1:9/0"
    start = time.monotonic()
    assert routing.gpu_queue_backlog(broker_url=url) == 0
    assert routing.gpu_queue_backlog(broker_url=url) == 0  # remembered: no second try
    assert time.monotonic() - start < 2 * routing.BROKER_TIMEOUT_S + 1
