import dataclasses
import os
import time
import uuid

import pytest
import redis
from django.test import override_settings

from gpu_engine import CartProblem
from smartcart import routing
from smartcart.errors import ServiceUnavailable
from storefront.config.celery import app


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


def _broker_answers(monkeypatch, *, backlog: int, up: bool = True) -> None:
    monkeypatch.setattr(
        routing, "broker_state", lambda: routing.BrokerState(up=up, gpu_backlog=backlog)
    )


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
    _broker_answers(monkeypatch, backlog=2)
    choice = routing.route_choose(problem=problem(8, offers=5), budget_ms=800)
    assert (choice.route, choice.budget_ms, choice.method) == ("gpu", 800, "gpu-ga")


@override_settings(SMARTCART_INLINE_MAX_MS=0, SMARTCART_GPU_QUEUE=True)
def test_a_cpu_choice_stays_on_the_cpu_queue_even_with_gpus(monkeypatch):
    _planner_prefers(monkeypatch, "cpu-dp")
    _broker_answers(monkeypatch, backlog=0)
    assert routing.route_choose(problem=problem(8, offers=5)).route == "cpu"


@override_settings(
    SMARTCART_INLINE_MAX_MS=0,
    SMARTCART_GPU_QUEUE=True,
    SMARTCART_GPU_QUEUE_MAX=8,
    SMARTCART_CPU_FALLBACK_BUDGET_MS=400,
)
def test_a_busy_gpu_queue_degrades_to_cpu_with_a_budget(monkeypatch):
    _planner_prefers(monkeypatch, "gpu-dp")
    _broker_answers(monkeypatch, backlog=9)
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
    _broker_answers(monkeypatch, backlog=5)
    routing.route_choose(problem=problem(8, offers=5))
    assert [(g.present, g.queue_depth) for g in seen] == [(False, 0), (True, 5)]


@override_settings(SMARTCART_INLINE_MAX_MS=0)
def test_inline_threshold_is_a_setting():
    assert routing.route_choose(problem=problem(1)).route == "cpu"


def test_the_broker_is_up_and_empty_with_in_process_tasks():
    assert routing.broker_state() == routing.BrokerState(up=True, gpu_backlog=0)


@pytest.fixture
def publishing():
    """Routing as in a deployment with a broker (tests run tasks in-process), with no depth
    remembered from an earlier test."""
    eager, app.conf.task_always_eager = app.conf.task_always_eager, False
    routing.broker_state_forget()
    yield
    routing.broker_state_forget()
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
        assert routing.broker_state(broker_url=url) == routing.BrokerState(up=True, gpu_backlog=3)
    finally:
        app.conf.broker_transport_options = saved
        client.delete(f"{prefix}gpu")


def test_the_broker_is_probed_at_most_once_a_second(publishing, monkeypatch):
    reads = []
    state = routing.BrokerState(up=True, gpu_backlog=4)
    monkeypatch.setattr(routing, "_broker_probe", lambda app, url: reads.append(url) or state)
    clock = [1000.0]
    monkeypatch.setattr(routing.time, "monotonic", lambda: clock[0])
    assert [routing.broker_state() for _ in range(3)] == [state] * 3
    clock[0] += routing.BROKER_TTL_S + 0.01
    assert routing.broker_state().gpu_backlog == 4
    assert len(reads) == 2


def test_an_unreachable_broker_costs_one_short_try(publishing, monkeypatch):
    import kombu.utils.functional
    import redis.connection
    import redis.retry

    # Nothing listens on port 9 (discard): Redis down. kombu would retry for ever by default.
    url = "redis://127.0.0.1:9/0"
    down = routing.BrokerState(up=False, gpu_backlog=0)
    sleeps: list[float] = []
    for module in (kombu.utils.functional, redis.retry, time):
        monkeypatch.setattr(module, "sleep", sleeps.append)
    tries: list[float] = []
    real_connect = redis.connection.Connection._connect

    def connect(connection):
        tries.append(connection.socket_connect_timeout)
        return real_connect(connection)

    monkeypatch.setattr(redis.connection.Connection, "_connect", connect)
    assert routing.broker_state(broker_url=url) == down
    assert routing.broker_state(broker_url=url) == down  # remembered: no second try
    # One try with the short timeouts and no sleep: kombu's retry loop would sleep 2 s before
    # its first retry (as the old availability probe, ensure_connection(max_retries=1), did).
    assert tries == [routing.BROKER_TIMEOUT_S] and sleeps == []


@override_settings(
    SMARTCART_INLINE_MAX_MS=0, SMARTCART_GPU_QUEUE=True, SMARTCART_OUTAGE_INLINE_MAX_MS=10_000
)
def test_one_probe_answers_both_the_depth_and_the_outage(publishing, monkeypatch):
    """With GPU workers and the broker down, one probe decides: the cart is solved in the
    request (it is small enough), and the broker is not asked a second time."""
    reads = []
    down = routing.BrokerState(up=False, gpu_backlog=0)
    monkeypatch.setattr(routing, "_broker_probe", lambda app, url: reads.append(url) or down)
    choice = routing.route_choose(problem=problem(8, offers=5))
    assert choice.route == "inline" and choice.reason.startswith("broker down")
    assert len(reads) == 1


@override_settings(SMARTCART_INLINE_MAX_MS=0, SMARTCART_OUTAGE_INLINE_MAX_MS=0)
def test_a_large_cart_with_the_broker_down_is_refused(monkeypatch):
    _broker_answers(monkeypatch, backlog=0, up=False)
    with pytest.raises(ServiceUnavailable) as refused:
        routing.route_choose(problem=problem(8, offers=5))
    assert refused.value.code == "optimizer_unavailable" and refused.value.retry_after > 0


@override_settings(SMARTCART_OUTAGE_INLINE_MAX_MS=0)
def test_an_inline_cart_never_asks_the_broker(monkeypatch):
    monkeypatch.setattr(routing, "broker_state", lambda: pytest.fail("asked the broker"))
    assert routing.route_choose(problem=problem(3)).route == "inline"
