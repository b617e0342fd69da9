import os

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


@override_settings(SMARTCART_GPU_QUEUE=False)
def test_larger_carts_queue_on_cpu_without_gpu_workers():
    choice = routing.route_choose(problem=problem(20, offers=5))
    assert choice.route == "cpu"
    assert choice.budget_ms == 2000
    assert "no GPU workers" in choice.reason


@override_settings(SMARTCART_GPU_QUEUE=True, SMARTCART_GPU_MIN_LINES=16)
def test_large_carts_go_to_the_gpu_queue(monkeypatch):
    monkeypatch.setattr(routing, "gpu_queue_backlog", lambda: 2)
    assert routing.route_choose(problem=problem(20, offers=5), budget_ms=800).route == "gpu"
    # Below the line threshold the CPU is as good and the GPU stays free for big carts.
    assert routing.route_choose(problem=problem(12, offers=5)).route == "cpu"


@override_settings(
    SMARTCART_GPU_QUEUE=True, SMARTCART_GPU_QUEUE_MAX=8, SMARTCART_CPU_FALLBACK_BUDGET_MS=400
)
def test_a_busy_gpu_queue_degrades_to_cpu_with_a_budget(monkeypatch):
    monkeypatch.setattr(routing, "gpu_queue_backlog", lambda: 9)
    choice = routing.route_choose(problem=problem(20, offers=5), budget_ms=3000)
    assert choice.route == "cpu"
    assert choice.budget_ms == 400
    assert "busy" in choice.reason


@override_settings(SMARTCART_INLINE_MAX_MS=0)
def test_inline_threshold_is_a_setting():
    assert routing.route_choose(problem=problem(1)).route == "cpu"


def test_backlog_is_zero_with_in_process_tasks():
    assert routing.gpu_queue_backlog() == 0


@pytest.mark.integration
def test_backlog_counts_the_redis_gpu_list():
    if not os.environ.get("REDIS_URL", "").startswith("redis"):
        pytest.skip("needs REDIS_URL (a real Redis broker)")
    # A database of its own, so the shared broker's real gpu queue is never touched.
    url = os.environ["REDIS_URL"].rsplit("/", 1)[0] + "/15"
    client = redis.Redis.from_url(url)
    client.delete("gpu")
    try:
        client.rpush("gpu", b"{}", b"{}", b"{}")
        eager, app.conf.task_always_eager = app.conf.task_always_eager, False
        try:
            assert routing.gpu_queue_backlog(broker_url=url) == 3
        finally:
            app.conf.task_always_eager = eager
    finally:
        client.delete("gpu")
